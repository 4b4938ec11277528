//! Queue order: the primary policy, the starvation threshold and the backfill order.

use super::queue::Queue;

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
pub struct Facts<'a> {
    pub submit: &'a [i64],
    pub requested: &'a [i64],
    pub procs: &'a [i64],
    /// Rank of each job in (submit, tie-break) order: job id in canonical mode, input line in pyss mode.
    pub arrival: &'a [u32],
}

impl Policy {
    /// Sort key, smallest first (FCFS never sorts: the queue is kept in arrival order).
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

/// Put `queue` in policy order at time `now`.  Other policies sort the whole queue at every pass (LEXP
/// and the threshold depend on `now`); under FCFS the queue stays in arrival order as jobs are
/// appended, so it costs nothing.
pub fn order_queue(queue: &mut Queue, policy: Policy, threshold: Option<i64>, f: &Facts, now: i64) {
    let starving = |job: usize| threshold.is_some_and(|t| now - f.submit[job] > t);
    if policy == Policy::Fcfs {
        // Starving jobs are the oldest ones, already first.
        return;
    }
    queue.compact_all();
    queue.sort_by(0, |a, b| {
        starving(b)
            .cmp(&starving(a))
            .then_with(|| {
                if starving(a) {
                    std::cmp::Ordering::Equal
                } else {
                    let (ka, kb) = (policy.key(f, a, now), policy.key(f, b, now));
                    ka.total_cmp(&kb)
                }
            })
            .then_with(|| f.arrival[a].cmp(&f.arrival[b]))
    });
}
