//! Queue order: the primary policy, the starvation threshold and the backfill order.

use super::queue::Queue;
use super::Workload;

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
}

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
}

impl<'a> Facts<'a> {
    pub fn of(w: &Workload<'a>, arrival: &'a [u32]) -> Facts<'a> {
        Facts {
            submit: w.submit,
            requested: w.requested,
            procs: w.procs,
            arrival,
        }
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
pub fn order_is_kept(policy: Policy, threshold: Option<i64>) -> bool {
    policy == Policy::Fcfs
        || (!matches!(policy, Policy::Lexp | Policy::Sexp) && threshold.is_none())
}

/// The key of a queue kept in order (`order_is_kept`).
pub fn queue_key<'k>(policy: Policy, f: Facts<'k>) -> impl Fn(usize) -> QueueKey + 'k {
    move |job| QueueKey(policy.key(&f, job, 0), f.arrival[job])
}

/// Sort `queue` into policy order at time `now` (orders that are not kept as jobs arrive): starving
/// jobs first in submit order, then by policy key, ties by arrival.  Each job's key is computed once
/// per sort, not at every comparison.
pub fn order_queue(queue: &mut Queue, policy: Policy, threshold: Option<i64>, f: &Facts, now: i64) {
    queue.compact_all();
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
