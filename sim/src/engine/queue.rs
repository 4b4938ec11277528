//! The waiting queue, as parallel columns (job, processors, predicted runtime).
//!
//! Why this shape: on a congested log thousands of jobs wait while few processors are free, and
//! every event scans the queue for a job that may start (CEA-Curie: ~10^8 visits and ~3·10^7
//! narrow-but-long candidates per replay).  With the two tested values contiguous, the scan tests a
//! block of jobs per instruction and never touches the per-job tables of the jobs it skips.

/// Processors of a job that left the queue during the current pass.  Processors are stored as i32
/// (machines are far below 2^31 processors) so that the baseline x86-64 target compares four per
/// instruction.
const STARTED: i32 = i32::MAX;
const BLOCK: usize = 16;

#[derive(Default)]
pub struct Queue {
    jobs: Vec<usize>,
    procs: Vec<i32>,
    /// Predicted runtimes, saturated to i32 (a prediction of 68 years is never "short").
    predicted: Vec<i32>,
    /// Physical index of logical position 0: jobs started from the head are dropped by moving it.
    begin: usize,
    started: usize,
}

impl Queue {
    pub fn len(&self) -> usize {
        self.jobs.len() - self.begin
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn push(&mut self, job: usize, procs: i64, predicted: i64) {
        self.jobs.push(job);
        self.procs
            .push(i32::try_from(procs).expect("machine sizes are checked to fit in i32"));
        self.predicted.push(saturate(predicted));
    }

    /// Insert a job into a queue kept sorted by `key` (keys are distinct).
    pub fn insert_by<K: Ord>(
        &mut self,
        job: usize,
        procs: i64,
        predicted: i64,
        key: impl Fn(usize) -> K,
    ) {
        let k = key(job);
        let at = self.begin + self.jobs[self.begin..].partition_point(|&other| key(other) < k);
        self.jobs.insert(at, job);
        self.procs.insert(
            at,
            i32::try_from(procs).expect("machine sizes are checked to fit in i32"),
        );
        self.predicted.insert(at, saturate(predicted));
    }

    /// Mark `job` started in a queue kept sorted by `key` (started jobs keep their place until
    /// compacted, so the order holds).
    pub fn mark_job_started<K: Ord>(&mut self, job: usize, key: impl Fn(usize) -> K) {
        let k = key(job);
        let position = self.jobs[self.begin..]
            .binary_search_by(|&other| key(other).cmp(&k))
            .expect("the job is queued");
        self.mark_started(position);
    }

    pub fn job(&self, position: usize) -> usize {
        self.jobs[self.begin + position]
    }

    pub fn jobs(&self) -> &[usize] {
        &self.jobs[self.begin..]
    }

    /// Processors of the job at `position` (`i64::MAX` once it started).
    pub fn procs(&self, position: usize) -> i64 {
        i64::from(self.procs[self.begin + position])
    }

    pub fn mark_started(&mut self, position: usize) {
        self.procs[self.begin + position] = STARTED;
        self.started += 1;
    }

    /// Forget the jobs that started during the pass.  Under FCFS most start from the head: those
    /// only move `begin`.  Backfilled jobs leave tombstones behind (scans skip them: they never fit)
    /// until they are a quarter of the queue; shifting the queue at every backfill would cost a
    /// full pass over it each time.
    pub fn compact(&mut self) {
        while self.begin < self.jobs.len() && self.procs[self.begin] == STARTED {
            self.begin += 1;
            self.started -= 1;
        }
        if self.started * 4 > self.len() || self.begin > self.jobs.len() / 2 {
            self.rebuild();
        }
    }

    /// Drop every started job now (positions count from `begin`, so a queue without tombstones is
    /// left as it is: passes that sort the queue call this every time).
    pub fn compact_all(&mut self) {
        if self.started > 0 {
            self.rebuild();
        }
    }

    /// Drop the started jobs and the room before `begin`.
    fn rebuild(&mut self) {
        let mut kept = 0;
        for i in self.begin..self.jobs.len() {
            if self.procs[i] != STARTED {
                self.jobs[kept] = self.jobs[i];
                self.procs[kept] = self.procs[i];
                self.predicted[kept] = self.predicted[i];
                kept += 1;
            }
        }
        self.jobs.truncate(kept);
        self.procs.truncate(kept);
        self.predicted.truncate(kept);
        self.begin = 0;
        self.started = 0;
    }

    pub fn is_started(&self, position: usize) -> bool {
        self.procs[self.begin + position] == STARTED
    }

    /// First position >= `from` whose job needs at most `free` processors.
    pub fn next_fitting(&self, from: usize, free: i64) -> Option<usize> {
        let free = saturate(free);
        self.first_from(from, |procs, _| procs <= free)
    }

    /// First position >= `from` of a job that may backfill: at most `free` processors, and either at
    /// most `extra` processors or a predicted runtime of at most `short`.
    pub fn next_backfill(&self, from: usize, free: i64, extra: i64, short: i64) -> Option<usize> {
        let (within_extra, free, short) =
            (saturate(extra.min(free)), saturate(free), saturate(short));
        self.first_from(from, |procs, predicted| {
            (procs <= within_extra) | ((procs <= free) & (predicted <= short))
        })
    }

    fn first_from(&self, from: usize, test: impl Fn(i32, i32) -> bool) -> Option<usize> {
        // A started job (i32::MAX processors) never passes: tests compare with values below it.
        let (procs, predicted) = (&self.procs[self.begin..], &self.predicted[self.begin..]);
        let mut i = from;
        // Whole blocks first, with a branch-free test per block (the compiler vectorizes it).
        while i + BLOCK <= procs.len() {
            let hit = procs[i..i + BLOCK]
                .iter()
                .zip(&predicted[i..i + BLOCK])
                .fold(false, |any, (&p, &q)| any | test(p, q));
            if hit {
                break;
            }
            i += BLOCK;
        }
        (i..procs.len()).find(|&k| test(procs[k], predicted[k]))
    }

    /// Reorder the queue by `key` of job indices (keys are distinct; each computed once).
    ///
    /// By insertion, moving the columns along: the queue comes sorted from the previous pass and
    /// the orders sorted here (LEXP, SEXP, starvation thresholds) drift little between two events,
    /// so this is linear in practice, where a general sort of every column cost CEA-Curie's LEXP
    /// replay 2.6 s.  Past a budget of moves it falls back to a general sort.
    pub fn sort_by_key<K: Ord + Copy>(&mut self, key: impl Fn(usize) -> K) {
        let keys: Vec<K> = self.jobs[self.begin..]
            .iter()
            .map(|&job| key(job))
            .collect();
        self.sort_by_keys(keys);
    }

    /// `sort_by_key` with the keys given, one per position (computed together: a formula's batch).
    pub fn sort_by_keys<K: Ord + Copy>(&mut self, mut keys: Vec<K>) {
        let from = self.begin;
        debug_assert_eq!(keys.len(), self.jobs.len() - from);
        let (jobs, procs, predicted) = (
            &mut self.jobs[from..],
            &mut self.procs[from..],
            &mut self.predicted[from..],
        );
        let mut budget = 8 * keys.len() + 64;
        for i in 1..keys.len() {
            if keys[i - 1] <= keys[i] {
                continue;
            }
            let (k, job, p, q) = (keys[i], jobs[i], procs[i], predicted[i]);
            let mut at = i;
            while at > 0 && keys[at - 1] > k {
                keys[at] = keys[at - 1];
                jobs[at] = jobs[at - 1];
                procs[at] = procs[at - 1];
                predicted[at] = predicted[at - 1];
                at -= 1;
            }
            (keys[at], jobs[at], procs[at], predicted[at]) = (k, job, p, q);
            budget = budget.saturating_sub(i - at);
            if budget == 0 {
                let mut order: Vec<(K, usize, i32, i32)> = (0..keys.len())
                    .map(|i| (keys[i], jobs[i], procs[i], predicted[i]))
                    .collect();
                order.sort_unstable_by_key(|entry| entry.0);
                for (i, &(_, job, p, q)) in order.iter().enumerate() {
                    (jobs[i], procs[i], predicted[i]) = (job, p, q);
                }
                return;
            }
        }
    }
}

/// Below STARTED, so that a started job never passes a test.
fn saturate(value: i64) -> i32 {
    value.clamp(i64::from(i32::MIN), i64::from(STARTED) - 1) as i32
}

#[cfg(test)]
mod tests {
    use super::Queue;

    #[test]
    fn finds_fitting_jobs_across_blocks_and_forgets_started_ones() {
        let mut q = Queue::default();
        for (job, procs) in (0..40).map(|j| (j, if j == 37 { 2 } else { 8 })) {
            q.push(job, procs, 100 + job as i64);
        }
        assert_eq!(q.next_fitting(0, 4), Some(37));
        assert_eq!(q.next_fitting(0, 8), Some(0));
        // 8 free, 2 extra: job 37 (2 procs) fits in the extra; a short one fits anywhere.
        assert_eq!(q.next_backfill(0, 8, 2, 50), Some(37));
        assert_eq!(q.next_backfill(0, 8, 2, 120), Some(0));
        assert_eq!(q.next_backfill(1, 8, 0, 101), Some(1));
        assert_eq!(q.next_backfill(2, 8, 0, 101), None);
        q.mark_started(37);
        assert_eq!(q.next_fitting(0, 4), None);
        // One tombstone in 40 is kept (the scans skip it) ...
        q.compact();
        assert_eq!(q.len(), 40);
        assert!(q.is_started(37));
        // ... the started head is dropped by moving the start ...
        q.mark_started(0);
        q.mark_started(1);
        q.compact();
        assert_eq!((q.len(), q.job(0)), (38, 2));
        // ... and compact_all drops everything that started.
        q.compact_all();
        assert_eq!((q.len(), q.job(0), q.job(35)), (37, 2, 38));
        q.sort_by_key(std::cmp::Reverse);
        assert_eq!(q.job(0), 39);
    }

    /// Nearly sorted (insertion) and reversed (past the budget: the general sort), each column
    /// moving with its job.
    #[test]
    fn sorting_moves_every_column_with_its_job() {
        for shuffled in [
            vec![0, 1, 3, 2, 4, 5, 7, 6, 8, 9],
            (0..300).rev().collect::<Vec<usize>>(),
        ] {
            let mut q = Queue::default();
            for &job in &shuffled {
                q.push(job, job as i64 + 1, 10 * job as i64);
            }
            q.sort_by_key(|job| job);
            for position in 0..q.len() {
                assert_eq!(q.job(position), position);
                assert_eq!(q.procs(position), position as i64 + 1);
                assert_eq!(q.predicted[position], 10 * position as i32);
            }
        }
    }
}
