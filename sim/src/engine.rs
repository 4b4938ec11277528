//! Backfilling simulator core (canonical semantics of DESIGN section 5): EASY with FCFS queue order.
//!
//! Why compiled: a replay visits every event and, at each, scans the waiting queue; campaigns run
//! thousands of replays of logs with 10^5 jobs, which an interpreted loop cannot do in seconds.
//!
//! This is the first piece of the engine: policies, predictions, corrections, conservative
//! backfilling and the pyss compatibility mode come next (issue 3), on the same event loop.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One rigid job, times in seconds.  `run` is what it actually runs (already capped at its request);
/// `predicted` is the runtime the scheduler plans with (the request for classic EASY).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    pub submit: i64,
    pub run: i64,
    pub predicted: i64,
    pub procs: u32,
}

/// Start time of every job (input order).  Jobs must be sorted by submit time, with
/// `1 <= procs <= machine_size`, `run >= 0` and `predicted >= run` (no correction yet).
pub fn easy_fcfs(jobs: &[Job], machine_size: u32) -> Vec<i64> {
    let mut start = vec![-1i64; jobs.len()];
    let mut free = machine_size;
    let mut next_submit = 0usize;
    let mut ends: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    let mut queue: Vec<usize> = Vec::new();
    // (predicted end, procs) of running jobs, for the shadow time.
    let mut running: Vec<(i64, u32, usize)> = Vec::new();
    loop {
        let t_submit = jobs.get(next_submit).map(|j| j.submit);
        let t_end = ends.peek().map(|Reverse((t, _))| *t);
        let now = match (t_submit, t_end) {
            (None, None) => break,
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (Some(a), Some(b)) => a.min(b),
        };
        // Same instant: all completions, then all submissions, then one pass.
        while let Some(&Reverse((t, idx))) = ends.peek() {
            if t != now {
                break;
            }
            ends.pop();
            free += jobs[idx].procs;
            running.retain(|r| r.2 != idx);
        }
        while next_submit < jobs.len() && jobs[next_submit].submit == now {
            queue.push(next_submit);
            next_submit += 1;
        }
        schedule_pass(
            jobs,
            now,
            &mut free,
            &mut queue,
            &mut running,
            &mut ends,
            &mut start,
        );
    }
    start
}

fn schedule_pass(
    jobs: &[Job],
    now: i64,
    free: &mut u32,
    queue: &mut Vec<usize>,
    running: &mut Vec<(i64, u32, usize)>,
    ends: &mut BinaryHeap<Reverse<(i64, usize)>>,
    start: &mut [i64],
) {
    let mut launch = |idx: usize, free: &mut u32, running: &mut Vec<(i64, u32, usize)>| {
        let job = jobs[idx];
        *free -= job.procs;
        start[idx] = now;
        ends.push(Reverse((now + job.run, idx)));
        running.push((now + job.predicted, job.procs, idx));
    };
    // Start from the head while jobs fit.
    let mut head = 0;
    while head < queue.len() && jobs[queue[head]].procs <= *free {
        launch(queue[head], free, running);
        head += 1;
    }
    queue.drain(..head);
    let Some(&blocked) = queue.first() else {
        return;
    };
    // Reservation of the blocked head: the earliest predicted end at which enough processors are free.
    let needed = jobs[blocked].procs;
    let mut by_end: Vec<(i64, u32)> = running.iter().map(|r| (r.0, r.1)).collect();
    by_end.sort_unstable();
    let mut available = *free;
    let mut shadow_time = i64::MAX;
    let mut extra_procs = 0u32;
    for (end, procs) in by_end {
        available += procs;
        if available >= needed {
            shadow_time = end;
            extra_procs = available - needed;
            break;
        }
    }
    // Backfill: a job may start now if it fits and either ends (as predicted) by the shadow time or
    // only uses processors the reservation does not need (which it then consumes).
    let mut kept = Vec::with_capacity(queue.len());
    kept.push(blocked);
    for &idx in &queue[1..] {
        let job = jobs[idx];
        if job.procs > *free {
            kept.push(idx);
            continue;
        }
        if now + job.predicted <= shadow_time {
            launch(idx, free, running);
        } else if job.procs <= extra_procs {
            extra_procs -= job.procs;
            launch(idx, free, running);
        } else {
            kept.push(idx);
        }
    }
    *queue = kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(submit: i64, run: i64, predicted: i64, procs: u32) -> Job {
        Job {
            submit,
            run,
            predicted,
            procs,
        }
    }

    #[test]
    fn fcfs_without_backfill_opportunity() {
        // 4 procs. A (4 procs, 10 s) at 0; B (2 procs) at 1 waits for A's end at 10.
        let jobs = [job(0, 10, 10, 4), job(1, 5, 5, 2)];
        assert_eq!(easy_fcfs(&jobs, 4), vec![0, 10]);
    }

    #[test]
    fn backfill_by_shadow_time_and_by_extra_procs() {
        // 4 procs. A: 3 procs, predicted 100, runs 100 (0..100). B: 4 procs at 1, blocked, shadow = 100,
        // extra = 0. C: 1 proc, predicted 50 at 2: ends at 52 <= 100 -> backfilled at 2.
        // D: 1 proc, predicted 200 at 3: only 0 free now (C took the last one) -> waits.
        // At 52 C ends: D (ends 252 > 100, extra 0) still waits. At 100 A ends: B starts (100..).
        // D starts when B ends at 100 + 10 = 110.
        let jobs = [
            job(0, 100, 100, 3),
            job(1, 10, 10, 4),
            job(2, 50, 50, 1),
            job(3, 200, 200, 1),
        ];
        assert_eq!(easy_fcfs(&jobs, 4), vec![0, 100, 2, 110]);
        // With 5 procs, B needs 4: at 100, 5 are free -> extra 1, so D (1 proc) backfills at 3.
        assert_eq!(easy_fcfs(&jobs, 5), vec![0, 100, 2, 3]);
    }

    #[test]
    fn a_job_ending_exactly_at_the_shadow_time_is_backfilled() {
        // 2 procs. A: 1 proc, 0..10. B: 2 procs at 0, shadow 10. C: 1 proc, predicted 10 at 0: ends at
        // 10 = shadow -> backfilled at 0; B starts at 10 when both end.
        let jobs = [job(0, 10, 10, 1), job(0, 5, 5, 2), job(0, 10, 10, 1)];
        assert_eq!(easy_fcfs(&jobs, 2), vec![0, 10, 0]);
    }

    #[test]
    fn completions_are_processed_before_submissions_at_the_same_instant() {
        // 1 proc. A 0..10; B submitted at 10 starts at 10 (A's completion frees the processor first).
        let jobs = [job(0, 10, 10, 1), job(10, 1, 1, 1)];
        assert_eq!(easy_fcfs(&jobs, 1), vec![0, 10]);
    }
}
