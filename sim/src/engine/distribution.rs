//! EASY backfilling with run-time *distributions*: the head of the queue keeps EASY's reservation by
//! the requests, and a waiting job EASY would refuse is backfilled all the same if the probability that
//! it delays the head is below a confidence τ.
//!
//! Each job has a law of its run time (`Law`).  With c0 the processors the blocked head still needs
//! released (its width minus the processors free now) and c those it needs if the candidate runs too
//! (c0 plus the candidate's width), M_t[c] = P(the running jobs have released at least c processors by
//! t) and D(t) = M_t[c0] - M_t[c] is the probability that at t the head could start without the
//! candidate but not with it.  The candidate delays the head with probability
//!
//! ```text
//! Σ_atoms P(the candidate ends at t_e) · max_{t < t_e} D(t)
//! ```
//!
//! (after t_e it has given its processors back).  M_t comes from a dynamic program over the running
//! jobs, each releasing its processors by t with the probability its law gives, conditioned on the time
//! it has already run.  When every law is one event at the job's estimate, M_t is 0 or 1, the
//! probability is 1 for every job EASY refuses, and the schedule is EASY's (tested against the engine).

/// The law of a job's run time.
#[derive(Clone, Debug, PartialEq)]
pub enum Law {
    /// It runs exactly this many seconds.
    Point(i64),
    /// Probabilities per run-time bin (bin 0: [0, ratio); bin k: [ratio^k, ratio^(k+1)), log-uniform
    /// inside), capped at the requested time: a job is killed there, so the mass at or beyond it is
    /// one event at `requested`.  Built by `Law::binned`, which also keeps the cumulative sums.
    Binned {
        probs: Vec<f64>,
        /// below[k] = Σ_{i < k} probs[i]
        below: Vec<f64>,
        ratio: f64,
        requested: i64,
    },
}

/// Lower and upper end of run-time bin `k`.
pub fn bin_edges(k: usize, ratio: f64) -> (f64, f64) {
    if k == 0 {
        (0.0, ratio)
    } else {
        (ratio.powi(k as i32), ratio.powi(k as i32 + 1))
    }
}

impl Law {
    pub fn binned(probs: Vec<f64>, ratio: f64, requested: i64) -> Law {
        let mut below = Vec::with_capacity(probs.len() + 1);
        let mut total = 0.0;
        below.push(0.0);
        for &p in &probs {
            total += p;
            below.push(total);
        }
        Law::Binned {
            probs,
            below,
            ratio,
            requested,
        }
    }

    /// P(run time <= x).
    pub fn cdf(&self, x: f64) -> f64 {
        match self {
            Law::Point(d) => f64::from(u8::from(x >= *d as f64)),
            Law::Binned {
                probs,
                below,
                ratio,
                requested,
            } => {
                if x >= *requested as f64 {
                    return 1.0;
                }
                if x <= 0.0 {
                    return 0.0;
                }
                // The bin of x and how far into it x is: in bin 0 linearly, above it in log scale,
                // where both come from one logarithm (the fractional part of log_ratio(x)).
                let (k, share) = if x < *ratio {
                    (0, x / ratio)
                } else {
                    let position = x.ln() / ratio.ln();
                    let k = position.floor();
                    (k as usize, position - k)
                };
                match probs.get(k) {
                    Some(p) => (below[k] + p * share).min(1.0),
                    None => below[probs.len()].min(1.0),
                }
            }
        }
    }

    /// P(run time <= x | it has run `elapsed` seconds).  A binned law with no mass left beyond
    /// `elapsed` (the job outlived what the model expected) is spread log-uniformly between `elapsed`
    /// and the requested time.
    pub fn cdf_given(&self, x: f64, elapsed: f64) -> f64 {
        if x <= elapsed {
            return 0.0;
        }
        match self {
            Law::Point(d) => f64::from(u8::from(x >= *d as f64 || elapsed >= *d as f64)),
            Law::Binned { requested, .. } => {
                let requested = *requested as f64;
                if x >= requested {
                    return 1.0;
                }
                let before = self.cdf(elapsed);
                let left = 1.0 - before;
                if left > 1e-12 {
                    ((self.cdf(x) - before) / left).clamp(0.0, 1.0)
                } else {
                    let from = elapsed.max(1.0);
                    ((x.ln() - from.ln()) / (requested.ln() - from.ln())).clamp(0.0, 1.0)
                }
            }
        }
    }

    /// The candidate's possible ends as (latest run time, probability): each bin below the requested
    /// time at its upper end (a delay anywhere in the bin counts), the rest at the requested time.
    pub fn ends(&self) -> Vec<(f64, f64)> {
        match self {
            Law::Point(d) => vec![(*d as f64, 1.0)],
            Law::Binned {
                probs,
                ratio,
                requested,
                ..
            } => {
                let requested = *requested as f64;
                let mut ends = Vec::new();
                let mut below = 0.0;
                for (k, &p) in probs.iter().enumerate() {
                    let (_, hi) = bin_edges(k, *ratio);
                    if hi > requested {
                        break;
                    }
                    if p > 0.0 {
                        ends.push((hi, p));
                        below += p;
                    }
                }
                if below < 1.0 {
                    ends.push((requested, 1.0 - below));
                }
                ends
            }
        }
    }

    /// The run time where the CDF jumps (the point, or the request): where the outlook must look.
    fn jump(&self) -> f64 {
        match self {
            Law::Point(d) => *d as f64,
            Law::Binned { requested, .. } => *requested as f64,
        }
    }
}

/// M[c] = P(at least c processors released) for c in 0..=cap (the last entry: at least `cap`), when
/// each job (probability q, processors p) releases its p processors with probability q, independently.
pub fn at_least(jobs: &[(f64, i64)], cap: usize) -> Vec<f64> {
    let mut dist = vec![0.0; cap + 1];
    // Releases that are certain only shift the distribution: start it there (with point laws every
    // release is certain or impossible, and the program costs one pass over the jobs).
    let certain: i64 = jobs
        .iter()
        .filter(|&&(q, p)| q >= 1.0 && p > 0)
        .map(|&(_, p)| p)
        .sum();
    let base = (certain.max(0) as usize).min(cap);
    dist[base] = 1.0;
    let mut reach = base; // highest index with mass
    for &(q, p) in jobs {
        if q <= 0.0 || q >= 1.0 || p <= 0 {
            continue;
        }
        let p = p as usize;
        let new_reach = (reach + p).min(cap);
        // Descending, so each source is read before anything lands on it; the sources whose
        // release reaches the cap pour into its bucket, the others move up by p (two branch-free
        // loops: this is the replay's innermost loop).
        let split = cap.saturating_sub(p).max(base);
        let mut into_cap = 0.0;
        for cell in dist.iter_mut().take(reach + 1).skip(split) {
            into_cap += *cell * q;
            *cell *= 1.0 - q;
        }
        dist[cap] += into_cap;
        for c in (base..split.min(reach + 1)).rev() {
            let mass = dist[c];
            dist[c + p] += mass * q;
            dist[c] = mass * (1.0 - q);
        }
        reach = new_reach;
    }
    // Suffix sums: P(released >= c).
    let mut m = vec![0.0; cap + 1];
    let mut total = 0.0;
    for c in (0..=cap).rev() {
        total += dist[c];
        m[c] = total.min(1.0);
    }
    m
}

/// A running job as the outlook sees it.
pub struct RunningJob<'a> {
    pub start: i64,
    pub procs: i64,
    pub law: &'a Law,
}

/// M_t at the instants of a pass that matter, in units of `unit` processors, computed as far ahead
/// as the candidates ask (most are refused or accepted on their earliest ends).
pub struct Outlook {
    now: i64,
    /// Absolute instants t, increasing.
    times: Vec<f64>,
    /// M_t of the first `rows.len()` instants (entries 0..=cap).
    rows: Vec<Vec<f64>>,
    /// (start, processors in units, law) of each running job.
    running: Vec<(i64, i64, Law)>,
    cap: usize,
    unit: i64,
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

impl Outlook {
    /// The outlook of `running` from `now` to `horizon` for counts up to `cap` processors.  Every
    /// count it will be asked about must be a multiple of `unit` (the processors of every running job,
    /// the head's need and the candidates' widths share it, which shrinks the dynamic program; on
    /// machines allocated by whole nodes it is the node size).
    pub fn new(
        now: i64,
        running: &[RunningJob],
        cap: i64,
        unit: i64,
        horizon: f64,
        ratio: f64,
    ) -> Outlook {
        let unit = unit.max(1);
        let mut times: Vec<f64> = vec![now as f64];
        for job in running {
            let at = job.start as f64 + job.law.jump();
            if at > now as f64 && at < horizon {
                times.push(at);
            }
        }
        // Between jumps the binned laws grow continuously: look at half-bin steps from now.
        if running.iter().any(|j| matches!(j.law, Law::Binned { .. })) {
            let step = ratio.sqrt();
            let mut d = 1.0;
            while (now as f64) + d < horizon {
                times.push(now as f64 + d);
                d *= step;
            }
        }
        times.sort_by(f64::total_cmp);
        times.dedup();
        Outlook {
            now,
            times,
            rows: Vec::new(),
            running: running
                .iter()
                .map(|j| (j.start, j.procs / unit, j.law.clone()))
                .collect(),
            cap: (cap / unit).max(0) as usize,
            unit,
        }
    }

    /// M_t at `t` from scratch.
    fn compute(&self, t: f64) -> Vec<f64> {
        let now = self.now as f64;
        let jobs: Vec<(f64, i64)> = self
            .running
            .iter()
            .map(|(start, procs, law)| {
                let start = *start as f64;
                (law.cdf_given(t - start, now - start), *procs)
            })
            .collect();
        at_least(&jobs, self.cap)
    }

    /// M_t of instant `index` (computing the rows before it first).
    fn row(&mut self, index: usize) -> &[f64] {
        while self.rows.len() <= index {
            let row = self.compute(self.times[self.rows.len()]);
            self.rows.push(row);
        }
        &self.rows[index]
    }

    /// A job started now joins the running jobs: each row computed so far takes it in with one step of
    /// the dynamic program, M'[c] = (1 - q) M[c] + q M[c - p] (M[c - p] = 1 below p), instead of being
    /// computed again; the instant its law jumps (its end by request) joins the grid.  `procs` must be
    /// a multiple of the unit.
    pub fn add(&mut self, procs: i64, law: &Law) {
        let p = (procs / self.unit) as usize;
        let now = self.now as f64;
        for (row, &t) in self.rows.iter_mut().zip(&self.times) {
            let q = law.cdf_given(t - now, 0.0);
            if q <= 0.0 {
                continue;
            }
            for c in (0..row.len()).rev() {
                let shifted = if c >= p { row[c - p] } else { 1.0 };
                row[c] = (1.0 - q) * row[c] + q * shifted;
            }
        }
        self.running.push((self.now, p as i64, law.clone()));
        let at = now + law.jump();
        let index = self.times.partition_point(|&t| t < at);
        if self.times.get(index) != Some(&at) {
            self.times.insert(index, at);
            if index < self.rows.len() {
                let row = self.compute(at);
                self.rows.insert(index, row);
            }
        }
    }

    /// The unit a set of processor counts shares.
    pub fn unit_of(counts: impl IntoIterator<Item = i64>) -> i64 {
        counts.into_iter().fold(0, gcd).max(1)
    }

    pub fn unit(&self) -> i64 {
        self.unit
    }

    /// P(a candidate whose ends are `ends` delays the head), c0 and c in processors; stops adding once
    /// the sum reaches `stop_at`.
    pub fn delay(&mut self, c0: i64, c: i64, ends: &[(f64, f64)], stop_at: f64) -> f64 {
        let (c0, c) = ((c0 / self.unit) as usize, (c / self.unit) as usize);
        let at = |m: &[f64], k: usize| m.get(k).copied().unwrap_or(0.0);
        let mut total = 0.0;
        let mut worst = 0.0f64;
        let mut next = 0;
        let mut sorted: Vec<(f64, f64)> = ends.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (run, p) in sorted {
            let end = self.now as f64 + run;
            while next < self.times.len() && self.times[next] < end {
                let m = self.row(next);
                worst = worst.max(at(m, c0) - at(m, c));
                next += 1;
            }
            total += p * worst;
            if total >= stop_at {
                break;
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift generator (the crate has no dependencies).
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Call `f` with every combination of one index per list (lists of the given lengths).
    fn for_each_combination(lengths: &[usize], mut f: impl FnMut(&[usize])) {
        let mut index = vec![0usize; lengths.len()];
        loop {
            f(&index);
            let mut j = 0;
            loop {
                if j == lengths.len() {
                    return;
                }
                index[j] += 1;
                if index[j] < lengths[j] {
                    break;
                }
                index[j] = 0;
                j += 1;
            }
        }
    }

    #[test]
    fn at_least_by_hand_with_three_jobs() {
        // Jobs of 2, 3 and 4 processors ending with probabilities 0.5, 0.25 and 0.8.
        let m = at_least(&[(0.5, 2), (0.25, 3), (0.8, 4)], 9);
        // Released totals: 0 (0.5*0.75*0.2 = 0.075), 2 (0.075), 3 (0.025), 4 (0.3), 5 (0.025),
        // 6 (0.3), 7 (0.1), 9 (0.1).
        let dist = [0.075, 0.0, 0.075, 0.025, 0.3, 0.025, 0.3, 0.1, 0.0, 0.1];
        for c in 0..=9 {
            let expected: f64 = dist[c..].iter().sum();
            assert!(
                (m[c] - expected).abs() < 1e-12,
                "c = {c}: {} vs {expected}",
                m[c]
            );
        }
        // Capped at 5: the last entry is P(at least 5).
        let capped = at_least(&[(0.5, 2), (0.25, 3), (0.8, 4)], 5);
        assert!((capped[5] - (0.025 + 0.3 + 0.1 + 0.1)).abs() < 1e-12);
        assert!((capped[4] - m[4]).abs() < 1e-12);
    }

    #[test]
    fn at_least_with_two_jobs_by_hand() {
        let m = at_least(&[(0.3, 1), (0.6, 1)], 2);
        assert!((m[0] - 1.0).abs() < 1e-12);
        assert!((m[1] - (1.0 - 0.7 * 0.4)).abs() < 1e-12);
        assert!((m[2] - 0.18).abs() < 1e-12);
    }

    #[test]
    fn at_least_equals_the_enumeration_of_every_termination_combination() {
        let mut rand = xorshift(987_654_321);
        for _ in 0..500 {
            let n = 1 + (rand() % 6) as usize;
            let jobs: Vec<(f64, i64)> = (0..n)
                .map(|_| ((rand() % 1001) as f64 / 1000.0, 1 + (rand() % 7) as i64))
                .collect();
            let cap = (rand() % 30) as usize;
            let m = at_least(&jobs, cap);
            for c in 0..=cap {
                let mut expected = 0.0;
                for mask in 0..1u32 << n {
                    let mut p = 1.0;
                    let mut released = 0;
                    for (j, &(q, procs)) in jobs.iter().enumerate() {
                        if mask >> j & 1 == 1 {
                            p *= q;
                            released += procs;
                        } else {
                            p *= 1.0 - q;
                        }
                    }
                    if released >= c as i64 {
                        expected += p;
                    }
                }
                assert!(
                    (m[c] - expected).abs() < 1e-12,
                    "{jobs:?} c {c}: {} vs {expected}",
                    m[c]
                );
            }
        }
    }

    #[test]
    fn binned_cdf_interpolates_log_uniformly_and_stops_at_the_request() {
        let law = Law::binned(vec![0.0, 0.0, 0.5, 0.5], 10.0, 5000);
        // Bin 2 is [100, 1000): half its mass by sqrt(100 * 1000).
        assert!((law.cdf(1000f64.sqrt() * 10.0) - 0.25).abs() < 1e-12);
        assert!((law.cdf(1000.0) - 0.5).abs() < 1e-12);
        assert!(law.cdf(4999.0) < 1.0 && law.cdf(5000.0) == 1.0);
        // Bin 3 is [1000, 10000): the request cuts it; its upper part is one event at 5000.
        let ends = law.ends();
        assert_eq!(ends, vec![(1000.0, 0.5), (5000.0, 0.5)]);
        // Having run 1000 s, half the remaining mass is below sqrt(1000 * 10000) = 3162 s.
        assert!((law.cdf_given(10000f64.sqrt() * 10f64.sqrt() * 10.0, 1000.0) - 0.5).abs() < 1e-9);
    }

    /// P(delay) by enumerating every combination of running jobs' end times (each law with a few
    /// point masses): for each combination, the head can start at the first time the released
    /// processors reach c0; the candidate, ending at e, delays it iff at some t < e the released
    /// processors are in [c0, c).
    fn brute_force(
        running: &[(i64, Vec<(i64, f64)>)],
        c0: i64,
        c: i64,
        cand: &[(i64, f64)],
    ) -> f64 {
        let lengths: Vec<usize> = running.iter().map(|r| r.1.len()).collect();
        let mut total = 0.0;
        for_each_combination(&lengths, |index| {
            let mut p = 1.0;
            let mut ends: Vec<(i64, i64)> = Vec::new();
            for (j, (procs, law)) in running.iter().enumerate() {
                let (end, q) = law[index[j]];
                p *= q;
                ends.push((end, *procs));
            }
            for &(e, pc) in cand {
                // Released processors just before e, at every instant where it changes.
                let delayed = ends.iter().any(|&(t, _)| {
                    t < e && {
                        let released: i64 =
                            ends.iter().filter(|&&(u, _)| u <= t).map(|&(_, q)| q).sum();
                        released >= c0 && released < c
                    }
                });
                if delayed {
                    total += p * pc;
                }
            }
        });
        total
    }

    #[test]
    fn delay_equals_brute_force_enumeration_on_small_cases() {
        // Laws with a few point masses, written as binned laws whose bins are single instants would
        // be awkward; a mixture of point laws is what the enumeration needs, so the outlook is built
        // per combination's marginals: each running job's CDF at every instant is its mixture's.
        let mut rand = xorshift(12_345);
        for _ in 0..300 {
            let jobs = 1 + (rand() % 3) as usize;
            let running: Vec<(i64, Vec<(i64, f64)>)> = (0..jobs)
                .map(|_| {
                    let procs = 1 + (rand() % 4) as i64;
                    let atoms = 1 + (rand() % 3) as usize;
                    let mut weights: Vec<f64> =
                        (0..atoms).map(|_| 1.0 + (rand() % 5) as f64).collect();
                    let sum: f64 = weights.iter().sum();
                    weights.iter_mut().for_each(|w| *w /= sum);
                    let law = weights
                        .into_iter()
                        .map(|w| (1 + (rand() % 20) as i64, w))
                        .collect();
                    (procs, law)
                })
                .collect();
            let total_procs: i64 = running.iter().map(|r| r.0).sum();
            let c0 = 1 + (rand() % total_procs as u64) as i64;
            let c = c0 + 1 + (rand() % 3) as i64;
            let cand: Vec<(i64, f64)> = vec![
                (1 + (rand() % 25) as i64, 0.4),
                (1 + (rand() % 25) as i64, 0.6),
            ];
            let expected = brute_force(&running, c0, c, &cand);
            // The outlook: M_t from each job's marginal CDF at t, at every atom instant.
            let mut times: Vec<i64> = running
                .iter()
                .flat_map(|r| r.1.iter().map(|a| a.0))
                .collect();
            times.push(0);
            times.sort_unstable();
            times.dedup();
            let grid: Vec<(f64, Vec<f64>)> = times
                .iter()
                .map(|&t| {
                    let jobs: Vec<(f64, i64)> = running
                        .iter()
                        .map(|(procs, law)| {
                            (law.iter().filter(|a| a.0 <= t).map(|a| a.1).sum(), *procs)
                        })
                        .collect();
                    (t as f64, at_least(&jobs, c as usize))
                })
                .collect();
            let mut outlook = Outlook {
                now: 0,
                times: grid.iter().map(|g| g.0).collect(),
                rows: grid.into_iter().map(|g| g.1).collect(),
                running: Vec::new(),
                cap: c as usize,
                unit: 1,
            };
            let ends: Vec<(f64, f64)> = cand.iter().map(|&(e, p)| (e as f64, p)).collect();
            let got = outlook.delay(c0, c, &ends, f64::INFINITY);
            // max_t D(t) bounds the probability that *some* t has released in [c0, c): equal when the
            // released count passes [c0, c) at one instant only, which holds for a single running job;
            // with more, the maximum is a lower bound of the union (the published rule).
            // The rule itself by enumeration: D(t) = P(c0 <= released by t < c) over every
            // combination of end times, its maximum before each end of the candidate, weighted.
            let lengths: Vec<usize> = running.iter().map(|r| r.1.len()).collect();
            let d_at = |t: i64| -> f64 {
                let mut total = 0.0;
                for_each_combination(&lengths, |index| {
                    let mut p = 1.0;
                    let mut released = 0;
                    for (j, (procs, law)) in running.iter().enumerate() {
                        let (end, q) = law[index[j]];
                        p *= q;
                        if end <= t {
                            released += procs;
                        }
                    }
                    if released >= c0 && released < c {
                        total += p;
                    }
                });
                total
            };
            let rule: f64 = cand
                .iter()
                .map(|&(e, p)| p * (0..e).map(d_at).fold(0.0, f64::max))
                .sum();
            assert!(
                (got - rule).abs() < 1e-12,
                "{running:?} c0 {c0} c {c} {cand:?}: {got} vs {rule}"
            );
            if jobs == 1 {
                assert!(
                    (got - expected).abs() < 1e-12,
                    "{running:?} c0 {c0} c {c} {cand:?}: {got} vs {expected}"
                );
            } else {
                assert!(
                    got <= expected + 1e-12,
                    "{running:?} c0 {c0} c {c} {cand:?}: {got} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn point_laws_give_easy_answers() {
        // Two running jobs of 2 processors ending at 10 and 20; the head needs 3 more (c0 = 3).
        let (a, b) = (Law::Point(10), Law::Point(20));
        let running = [
            RunningJob {
                start: 0,
                procs: 2,
                law: &a,
            },
            RunningJob {
                start: 0,
                procs: 2,
                law: &b,
            },
        ];
        let mut outlook = Outlook::new(0, &running, 5, 1, 1e9, 2.0);
        // Shadow time 20 (4 released, one extra): a 1-processor candidate never delays it.
        assert_eq!(outlook.delay(3, 4, &[(50.0, 1.0)], 1.0), 0.0);
        // A 2-processor candidate ending by 20 does not, one ending at 21 does.
        assert_eq!(outlook.delay(3, 5, &[(20.0, 1.0)], 1.0), 0.0);
        assert_eq!(outlook.delay(3, 5, &[(21.0, 1.0)], 1.0), 1.0);
    }
}
