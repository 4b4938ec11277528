//! Online policy selection: the queue policy of EASY(P, Θ) changes at period boundaries t0 + kΔ
//! (t0: the first submission), chosen by a selector from what it saw of the past periods
//! (docs/selection.md).
//!
//! - `full`: at the end of each period, the jobs submitted during it are replayed once per
//!   candidate policy, from an empty machine until it is empty again; each policy's score is the
//!   λ-decayed sum of those replays' waits, and the next period runs the lowest score.
//! - `noisy`: the same with each replayed wait multiplied by ρ ~ U[0.85, 1.15].
//! - `egreedy`: no replays; the cost of the policy in force during a period is the sum of the
//!   actual waits of the jobs that finished during it (the published study's Eq. 8).  With
//!   probability 1 − ε the next period runs the lowest mean (policies not yet charged with a job
//!   first), else a policy drawn uniformly.
//! - `egreedy-started`: the same, each period charged with the jobs that *started* during it, as
//!   the study's authors' own simulator does (an experiment of docs/reproductions.md).

use super::order::Policy;
use super::state::Sim;
use super::{Config, Workload};
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Selector {
    /// Simulation feedback; `noisy` perturbs every simulated wait.
    Full { noisy: bool },
    /// ε-greedy bandit on the observed waits.
    Egreedy { epsilon: f64, charge: Charge },
}

/// Which jobs' waits a bandit's period is charged with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    /// Those that finished during the period.
    Finished,
    /// Those that started during the period.
    Started,
}

impl FromStr for Selector {
    type Err = String;
    /// `full`, `noisy`, `egreedy` or `egreedy-started` (with ε = 0.3; set `epsilon` to change it).
    fn from_str(s: &str) -> Result<Self, String> {
        let bandit = |charge| Selector::Egreedy {
            epsilon: 0.3,
            charge,
        };
        match s.to_ascii_lowercase().as_str() {
            "full" => Ok(Selector::Full { noisy: false }),
            "noisy" => Ok(Selector::Full { noisy: true }),
            "egreedy" => Ok(bandit(Charge::Finished)),
            "egreedy-started" => Ok(bandit(Charge::Started)),
            _ => Err(format!(
                "unknown selector {s:?}; expected one of: full, noisy, egreedy, egreedy-started"
            )),
        }
    }
}

/// What a replay with a changing policy needs: the selector, its candidates and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    pub selector: Selector,
    /// Candidates, in the order that breaks ties (at most 255).
    pub policies: Vec<Policy>,
    /// Δ, in seconds.
    pub period: i64,
    /// λ: weight of the period before the last relative to the last one.
    pub decay: f64,
    pub seed: u64,
}

impl Selection {
    /// What is wrong with the parameters, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.policies.is_empty() {
            return Some("policy selection needs at least one candidate policy".into());
        }
        if self.policies.len() > 255 {
            return Some("policy selection takes at most 255 candidate policies".into());
        }
        if self.policies.contains(&Policy::Hook) {
            return Some("an order function cannot be a candidate of a policy selection".into());
        }
        if let Some(twice) =
            (1..self.policies.len()).find(|&i| self.policies[..i].contains(&self.policies[i]))
        {
            return Some(format!(
                "policy {:?} is listed twice among the candidates",
                self.policies[twice]
            ));
        }
        if self.period <= 0 {
            return Some(format!(
                "the selection period must be positive, got {} s",
                self.period
            ));
        }
        if self.period > crate::swf::MAX_SECONDS {
            return Some(format!(
                "the selection period must be at most {} s, got {} s",
                crate::swf::MAX_SECONDS,
                self.period
            ));
        }
        if !(0.0..=1.0).contains(&self.decay) {
            return Some(format!("the decay must be in [0, 1], got {}", self.decay));
        }
        match self.selector {
            Selector::Egreedy { epsilon, .. } if !(0.0..=1.0).contains(&epsilon) => {
                Some(format!("epsilon must be in [0, 1], got {epsilon}"))
            }
            _ => None,
        }
    }
}

/// SplitMix64.  Written out rather than taken from a crate so that a seed gives the same draws on
/// every platform and every version of the project (campaigns store results by seed).
#[derive(Clone, Debug)]
struct Draws(u64);

impl Draws {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..n (n small: the bias of the multiply is below 2^-56).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// The selector's state inside a replay.
pub(super) struct Chooser<'a> {
    selection: &'a Selection,
    /// End of the current period.
    pub(super) boundary: i64,
    /// First job (input index) submitted at or after the current period's start.
    first_job: usize,
    /// Index of the policy in force.
    pub(super) current: usize,
    /// `full`: each policy's decayed sum of replayed waits.  `egreedy`: the decayed sum of the
    /// costs of the periods it ran.
    score: Vec<f64>,
    /// `egreedy`: jobs charged to each policy (finished, or started, while it ran).
    charged: Vec<u64>,
    /// `egreedy`: waits and count of the jobs charged to the current period.
    period_cost: f64,
    period_charged: u64,
    draws: Draws,
    /// The policy chosen for each period so far.
    pub(super) chosen: Vec<u8>,
}

impl<'a> Chooser<'a> {
    pub(super) fn new(selection: &'a Selection, first_submit: i64) -> Self {
        let n = selection.policies.len();
        let mut chooser = Chooser {
            selection,
            boundary: first_submit.saturating_add(selection.period),
            first_job: 0,
            current: 0,
            score: vec![0.0; n],
            charged: vec![0; n],
            period_cost: 0.0,
            period_charged: 0,
            draws: Draws(selection.seed),
            chosen: Vec::new(),
        };
        chooser.current = chooser.choose();
        chooser.chosen.push(chooser.current as u8);
        chooser
    }

    pub(super) fn policy(&self) -> Policy {
        self.selection.policies[self.current]
    }

    /// A job started (`Charge::Started`) or finished (`Charge::Finished`) after waiting `wait`
    /// seconds: the bandit's cost of the current period, if that is what it charges.
    pub(super) fn observed(&mut self, event: Charge, wait: i64) {
        if matches!(self.selection.selector, Selector::Egreedy { charge, .. } if charge == event) {
            self.period_cost += wait as f64;
            self.period_charged += 1;
        }
    }

    /// Close the current period and choose the policy of the next one.
    pub(super) fn cross(&mut self, w: &Workload, config: &Config) {
        let decay = self.selection.decay;
        let end = self.boundary;
        let last_job = self.first_job + w.submit[self.first_job..].partition_point(|&s| s < end);
        for score in &mut self.score {
            *score *= decay;
        }
        match self.selection.selector {
            Selector::Full { noisy } => {
                if last_job > self.first_job {
                    for (i, &policy) in self.selection.policies.iter().enumerate() {
                        let waits = period_waits(w, config, self.first_job..last_job, policy);
                        self.score[i] += if noisy {
                            waits
                                .iter()
                                .map(|&wait| wait as f64 * (0.85 + 0.3 * self.draws.unit()))
                                .sum::<f64>()
                        } else {
                            waits.iter().map(|&wait| wait as f64).sum::<f64>()
                        };
                    }
                }
            }
            Selector::Egreedy { .. } => {
                self.score[self.current] += self.period_cost;
                self.charged[self.current] += self.period_charged;
            }
        }
        self.period_cost = 0.0;
        self.period_charged = 0;
        self.first_job = last_job;
        self.boundary = end.saturating_add(self.selection.period);
        self.current = self.choose();
        self.chosen.push(self.current as u8);
    }

    fn choose(&mut self) -> usize {
        let lowest = |estimate: &dyn Fn(usize) -> f64| {
            (1..self.score.len()).fold(0, |best, i| {
                if estimate(i) < estimate(best) {
                    i
                } else {
                    best
                }
            })
        };
        match self.selection.selector {
            Selector::Full { .. } => lowest(&|i| self.score[i]),
            Selector::Egreedy { epsilon, .. } => {
                // Draw every period, exploring or not, so that ε changes no other draw.
                let explore = self.draws.unit() < epsilon;
                if explore {
                    return self.draws.below(self.score.len());
                }
                if let Some(untried) = self.charged.iter().position(|&n| n == 0) {
                    return untried;
                }
                lowest(&|i| self.score[i] / self.charged[i] as f64)
            }
        }
    }
}

/// Waits of the jobs `range` replayed alone under `policy` (the rest of `config` as it is).
fn period_waits(
    w: &Workload,
    config: &Config,
    range: std::ops::Range<usize>,
    policy: Policy,
) -> Vec<i64> {
    let part = Workload {
        id: &w.id[range.clone()],
        submit: &w.submit[range.clone()],
        run: &w.run[range.clone()],
        requested: &w.requested[range.clone()],
        procs: &w.procs[range.clone()],
        user: &w.user[range.clone()],
        prediction: w.prediction.map(|p| &p[range.clone()]),
        extra: w
            .extra
            .iter()
            .map(|&(name, values)| (name, &values[range.clone()]))
            .collect(),
    };
    let fixed = Config {
        policy,
        selection: None,
        record_reservations: false,
        ..config.clone()
    };
    let out = Sim::new(&part, &fixed)
        .run_until(&mut || false)
        .expect("never stopped");
    out.start
        .iter()
        .zip(part.submit)
        .map(|(start, submit)| start - submit)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Draws;

    #[test]
    fn draws_are_uniform_enough() {
        let mut d = Draws(7);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[d.below(6)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
        let mean = (0..10_000).map(|_| d.unit()).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }
}
