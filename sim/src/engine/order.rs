//! Queue order: the primary policy, the starvation threshold and the backfill order.

use super::formula::{self, Formula, Var};
use super::queue::Queue;
use super::usage::Usage;
use std::cell::{Cell, RefCell};

/// Primary queue order.  "Requested" is the user's requested time; ties go by submit time, then job id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Fcfs,
    Lcfs,
    /// Smallest requested time first.
    Spf,
    Lpf,
    /// Fewest processors first.
    Sqf,
    Lqf,
    /// Largest expansion factor (wait + requested) / requested first.
    Lexp,
    Sexp,
    /// Largest requested / procs first.
    Lrf,
    Srf,
    /// Largest area requested × procs first.
    Laf,
    Saf,
    /// A formula the user wrote (`min:EXPR` / `max:EXPR`, or a preset): its index in
    /// `Config::formulas`.
    Formula(u8),
    /// Keys computed by the caller's hook (a Python function) for the waiting queue at each pass.
    Hook,
}

/// What a hook is asked at a pass: the waiting jobs (indices into the workload), each job's
/// prediction at its submission (indexed by job), and the time of the pass.
pub struct HookCall<'c> {
    pub jobs: &'c [usize],
    pub predicted: &'c [i64],
    pub now: i64,
}

/// A caller's queue order: one key per waiting job, smallest first, or why it could not give them.
pub type OrderHook<'h> = &'h (dyn Fn(&HookCall) -> Result<Vec<f64>, String> + Sync);

/// Order in which the jobs behind the reserved one are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backfill {
    Queue,
    /// Shortest predicted runtime first (stable with respect to the queue order).
    Sjbf,
}

/// What the ordering needs to know about one job.
#[derive(Clone, Copy)]
pub struct Facts<'a> {
    pub submit: &'a [i64],
    pub requested: &'a [i64],
    pub procs: &'a [i64],
    /// Rank of each job in (submit, tie-break) order: job id in canonical mode, input line in pyss mode.
    pub arrival: &'a [u32],
    /// What only formulas read.
    pub formulas: Option<FormulaFacts<'a>>,
}

/// What a formula may read beyond the job's own columns, and where it notes a key that was not a
/// finite number.
#[derive(Clone, Copy)]
pub struct FormulaFacts<'a> {
    pub formulas: &'a [Formula],
    pub id: &'a [i64],
    /// Each job's prediction at its submission.
    pub predicted: &'a [i64],
    /// Each job's user as a dense index, and each user's running and waiting jobs (empty unless a
    /// formula reads them).
    pub user_slot: &'a [u32],
    pub user_running: &'a [u32],
    pub user_waiting: &'a [u32],
    /// Each user's decayed usage (empty unless a formula reads it), every user's, and the half-life.
    pub user_usage: &'a [Usage],
    pub all_usage: &'a Usage,
    pub usage_half_life: f64,
    /// Jobs whose key was once NaN or infinite (they went last).
    pub not_finite: &'a [Cell<bool>],
    /// The columns of a batch of keys, kept from pass to pass.
    pub scratch: &'a RefCell<Vec<Vec<f64>>>,
    /// Each formula's columns of the jobs (`Formula::columns`, from `Workload::extra`).
    pub columns: &'a [Vec<&'a [f64]>],
    /// The caller's hook (`Policy::Hook`), and what went wrong in it (the replay then stops).
    pub hook: Option<OrderHook<'a>>,
    pub hook_error: &'a RefCell<Option<String>>,
}

impl<'a> Facts<'a> {
    /// A formula's key for `job` at `now`; a value that is not a finite number sorts last (ties by
    /// arrival among such jobs) and the job is noted.
    #[inline]
    fn formula_key(&self, index: u8, job: usize, now: i64) -> f64 {
        let facts = self
            .formulas
            .as_ref()
            .expect("a formula policy comes with its facts");
        let columns = &facts.columns[index as usize];
        let key =
            facts.formulas[index as usize].key_with(|var| self.variable(columns, var, job, now));
        self.finite_or_last(key, job)
    }

    /// A formula's variable for `job` at `now` (`columns`: the formula's columns of the jobs).
    #[inline(always)]
    fn variable(&self, columns: &[&[f64]], var: Var, job: usize, now: i64) -> f64 {
        let facts = self.formulas.as_ref().expect("formula facts");
        let per_user = |counts: &[u32]| match counts.is_empty() {
            true => 0.0,
            false => f64::from(counts[facts.user_slot[job] as usize]),
        };
        match var {
            Var::Wait => (now - self.submit[job]) as f64,
            Var::Requested => self.requested[job] as f64,
            Var::Predicted => facts.predicted[job] as f64,
            Var::Procs => self.procs[job] as f64,
            Var::Submit => self.submit[job] as f64,
            Var::Now => now as f64,
            Var::Arrival => f64::from(self.arrival[job]),
            Var::Id => facts.id[job] as f64,
            Var::UserRunning => per_user(facts.user_running),
            Var::UserWaiting => per_user(facts.user_waiting),
            Var::UserUsage => {
                facts.user_usage[facts.user_slot[job] as usize].at(now, facts.usage_half_life)
            }
            Var::UsageShare => {
                let all = facts.all_usage.at(now, facts.usage_half_life);
                let mine =
                    facts.user_usage[facts.user_slot[job] as usize].at(now, facts.usage_half_life);
                if all > 0.0 {
                    mine / all
                } else {
                    0.0
                }
            }
            Var::Column(k) => columns[usize::from(k)][job],
        }
    }

    /// A key that is not a finite number sorts last (ties by arrival among such jobs); the job is noted.
    #[inline(always)]
    fn finite_or_last(&self, key: f64, job: usize) -> f64 {
        if key.is_finite() {
            // -0 and +0 are one value to a user (the sort's total order would put -0 first).
            return key + 0.0;
        }
        if let Some(facts) = &self.formulas {
            facts.not_finite[job].set(true);
        }
        f64::INFINITY
    }

    /// The hook's keys for `jobs` at `now` (non-finite ones last, as a formula's).  A failed hook, or
    /// one that gives another number of keys, is noted for the replay to stop; arrival order stands
    /// in until it does.
    fn hook_keys(&self, jobs: &[usize], now: i64) -> Vec<f64> {
        let facts = self.formulas.as_ref().expect("hook facts");
        let hook = facts.hook.expect("a hook policy comes with its hook");
        let call = HookCall {
            jobs,
            predicted: facts.predicted,
            now,
        };
        let keys = hook(&call).and_then(|keys| {
            if keys.len() == jobs.len() {
                Ok(keys)
            } else {
                Err(format!(
                    "the order function returned {} keys for a queue of {} jobs (one key per waiting job)",
                    keys.len(),
                    jobs.len()
                ))
            }
        });
        match keys {
            Ok(keys) => keys
                .into_iter()
                .zip(jobs)
                .map(|(key, &job)| self.finite_or_last(key, job))
                .collect(),
            Err(why) => {
                facts.hook_error.borrow_mut().get_or_insert(why);
                jobs.iter()
                    .map(|&job| f64::from(self.arrival[job]))
                    .collect()
            }
        }
    }

    /// A formula's keys for `jobs` at `now`, computed as a batch (`Formula::keys_batch`).
    fn formula_keys(&self, index: u8, jobs: &[usize], now: i64) -> Vec<f64> {
        let facts = self.formulas.as_ref().expect("formula facts");
        let mut scratch = facts.scratch.borrow_mut();
        let mut keys = Vec::with_capacity(jobs.len());
        let columns = &facts.columns[index as usize];
        facts.formulas[index as usize].keys_batch(
            &mut keys,
            jobs.len(),
            &mut scratch,
            |var, column| {
                // One loop per variable (the match outside the loop: each loop is a plain gather).
                let mut fill = |value: &dyn Fn(usize) -> f64| {
                    for (slot, &job) in column.iter_mut().zip(jobs) {
                        *slot = value(job);
                    }
                };
                match var {
                    Var::Wait => fill(&|job| (now - self.submit[job]) as f64),
                    Var::Requested => fill(&|job| self.requested[job] as f64),
                    Var::Procs => fill(&|job| self.procs[job] as f64),
                    Var::Submit => fill(&|job| self.submit[job] as f64),
                    Var::Column(k) => fill(&|job| columns[usize::from(k)][job]),
                    _ => fill(&|job| self.variable(columns, var, job, now)),
                }
            },
        );
        for (key, &job) in keys.iter_mut().zip(jobs) {
            *key = self.finite_or_last(*key, job);
        }
        keys
    }
}

impl Policy {
    /// Sort key, smallest first.  It depends on `now` only for LEXP and SEXP; queues kept in order
    /// (`order_is_kept`) compute it once, at arrival.
    #[inline(always)]
    fn key(self, f: &Facts, job: usize, now: i64) -> f64 {
        let req = f.requested[job] as f64;
        let procs = f.procs[job] as f64;
        let expansion = || ((now - f.submit[job]) as f64 + req) / req.max(1.0);
        match self {
            Policy::Fcfs => f.arrival[job] as f64,
            Policy::Lcfs => -(f.arrival[job] as f64),
            Policy::Spf => req,
            Policy::Lpf => -req,
            Policy::Sqf => procs,
            Policy::Lqf => -procs,
            Policy::Lexp => -expansion(),
            Policy::Sexp => expansion(),
            Policy::Lrf => -(req / procs),
            Policy::Srf => req / procs,
            Policy::Laf => -(req * procs),
            Policy::Saf => req * procs,
            Policy::Formula(index) => f.formula_key(index, job, now),
            // A hook orders whole queues (`order_queue`); a queue under it is never kept in order.
            Policy::Hook => f64::from(f.arrival[job]),
        }
    }
}

/// A job's place in a queue whose order does not move with the clock: its policy key (in the total
/// order of `f64::total_cmp`), then its arrival.
#[derive(Clone, Copy, Debug)]
pub struct QueueKey(f64, u32);

impl PartialEq for QueueKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for QueueKey {}

impl PartialOrd for QueueKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for QueueKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// Whether the queue can be kept in policy order as jobs arrive, rather than sorted at every pass:
/// the policy's key does not depend on the clock (LEXP and SEXP grow with the wait) and no threshold
/// moves starving jobs ahead (under FCFS they are the oldest, first already).  Sorting a queue of
/// hundreds of jobs at every event cost CEA-Curie's SPF replay 4 s.
pub fn order_is_kept(policy: Policy, threshold: Option<i64>, formulas: &[Formula]) -> bool {
    let moves = match policy {
        Policy::Lexp | Policy::Sexp => true,
        Policy::Formula(index) => formulas[index as usize].moves,
        Policy::Hook => true,
        _ => false,
    };
    policy == Policy::Fcfs || (!moves && threshold.is_none())
}

/// The queue order `text` names: a built-in policy, a preset (`wfp3`, ...) or `min:EXPR` /
/// `max:EXPR`; a formula is added to `formulas` (once: the same text twice is one formula).
pub fn parse_policy(text: &str, formulas: &mut Vec<Formula>) -> Result<Policy, String> {
    if let Ok(policy) = text.parse::<Policy>() {
        return Ok(policy);
    }
    if text.eq_ignore_ascii_case(PYTHON) {
        return Ok(Policy::Hook);
    }
    let spelled = formula::preset(text).unwrap_or(text);
    if !(spelled.starts_with("min:") || spelled.starts_with("max:")) {
        let presets: Vec<&str> = formula::PRESETS.iter().map(|(name, _, _)| *name).collect();
        return Err(format!(
            "unknown policy '{text}'; expected one of: {}, a preset ({}), or a formula min:EXPR / max:EXPR",
            BUILT_IN.join(", "),
            presets.join(", ")
        ));
    }
    let parsed = formula::parse_order(spelled)?;
    if let Some(index) = formulas
        .iter()
        .position(|f| f.spelled() == parsed.spelled())
    {
        return Ok(Policy::Formula(index as u8));
    }
    if formulas.len() >= usize::from(u8::MAX) {
        return Err("at most 255 formulas in one replay".into());
    }
    formulas.push(parsed);
    Ok(Policy::Formula((formulas.len() - 1) as u8))
}

/// The policy of a replay ordered by the caller's function (`Policy::Hook`).
pub const PYTHON: &str = "python";

/// The built-in policies' names, in their order.
pub const BUILT_IN: [&str; 12] = [
    "fcfs", "lcfs", "spf", "lpf", "sqf", "lqf", "lexp", "sexp", "lrf", "srf", "laf", "saf",
];

/// The key of a queue kept in order (`order_is_kept`).
pub fn queue_key<'k>(policy: Policy, f: Facts<'k>) -> impl Fn(usize) -> QueueKey + 'k {
    move |job| QueueKey(policy.key(&f, job, 0), f.arrival[job])
}

/// Sort `queue` into policy order at time `now` (orders that are not kept as jobs arrive): starving
/// jobs first in submit order, then by policy key, ties by arrival.  Each job's key is computed once
/// per sort, not at every comparison.
pub fn order_queue(queue: &mut Queue, policy: Policy, threshold: Option<i64>, f: &Facts, now: i64) {
    queue.compact_all();
    let keys = match policy {
        Policy::Formula(index) => Some(f.formula_keys(index, queue.jobs(), now)),
        Policy::Hook => Some(f.hook_keys(queue.jobs(), now)),
        _ => None,
    };
    if let Some(keys) = keys {
        let packed = queue
            .jobs()
            .iter()
            .zip(keys)
            .map(|(&job, key)| {
                let starving = threshold.is_some_and(|t| now - f.submit[job] > t);
                packed_key(!starving, if starving { 0.0 } else { key }, f.arrival[job])
            })
            .collect();
        queue.sort_by_keys(packed);
        return;
    }
    queue.sort_by_key(|job| {
        let starving = threshold.is_some_and(|t| now - f.submit[job] > t);
        let key = if starving {
            0.0
        } else {
            policy.key(f, job, now)
        };
        packed_key(!starving, key, f.arrival[job])
    });
}

/// (not starving, key in `f64::total_cmp` order, arrival) as one integer with the same order: one
/// comparison per step of the sort instead of three.
fn packed_key(not_starving: bool, key: f64, arrival: u32) -> u128 {
    let bits = key.to_bits() as i64;
    // The usual total order of floats as integers: negative values have their magnitude bits
    // flipped, then the sign bit is flipped so that the unsigned order is the signed one.
    let ordered = (bits ^ (((bits >> 63) as u64) >> 1) as i64) as u64 ^ (1 << 63);
    (u128::from(not_starving) << 96) | (u128::from(ordered) << 32) | u128::from(arrival)
}

#[cfg(test)]
mod tests {
    use super::{packed_key, QueueKey};

    #[test]
    fn packed_keys_order_as_the_tuples() {
        let keys = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            1e-300,
            1.0,
            2.5,
            1e300,
            f64::INFINITY,
        ];
        let mut cases = Vec::new();
        for starving in [false, true] {
            for &key in &keys {
                for arrival in [0, 7, u32::MAX] {
                    cases.push((!starving, QueueKey(key, arrival)));
                }
            }
        }
        for a in &cases {
            for b in &cases {
                let packed = packed_key(a.0, a.1 .0, a.1 .1).cmp(&packed_key(b.0, b.1 .0, b.1 .1));
                assert_eq!(packed, a.cmp(b), "{a:?} vs {b:?}");
            }
        }
    }
}
