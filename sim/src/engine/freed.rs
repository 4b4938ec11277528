//! Conservative backfilling without re-planning every waiting job at every pass.
//!
//! A waiting job holds the earliest slot that fitted when it was last planned.  An earlier slot can
//! only have opened since if capacity was freed before its slot, somewhere the job fits: a window
//! `[t, t + length)` with `t < slot` that did not fit then and fits now must contain an instant
//! `x < slot` whose free count rose to at least the job's processors (inside its own slot the window
//! always fitted).  So the plan keeps a log of where capacity was freed (a job ending before its
//! planned end; a job moving to an earlier slot, which frees the old one) with, for each freed
//! interval, the running maximum of the free count over it when it was freed.  Later reservations only
//! lower free counts, and a later freeing is a later entry of its own, so these maxima stay upper
//! bounds.  A job none of whose newer entries reaches its processors before its slot keeps its slot
//! without a search: exactly what re-planning it would have given, at a fraction of the cost.

use super::profile::Profile;

struct Entry {
    /// Order of the freeing; a job planned at `seq` cares about entries after it.
    seq: u64,
    from: i64,
    to: i64,
    /// Range of `maxima` for this entry: (instant, highest free count over [from, instant]).
    maxima: std::ops::Range<usize>,
}

#[derive(Default)]
pub struct Freed {
    seq: u64,
    entries: Vec<Entry>,
    maxima: Vec<(i64, i64)>,
}

impl Freed {
    /// The current position in the log (a job planned now has seen every entry up to it).
    pub fn now(&self) -> u64 {
        self.seq
    }

    /// Record that capacity was freed over [from, to) (call after the profile holds the change).
    pub fn record(&mut self, profile: &Profile, from: i64, to: i64) {
        if from >= to {
            return;
        }
        self.seq += 1;
        let start = self.maxima.len();
        let mut highest = i64::MIN;
        for (at, free) in profile.steps_over(from, to) {
            highest = highest.max(free);
            self.maxima.push((at, highest));
        }
        self.entries.push(Entry {
            seq: self.seq,
            from,
            to,
            maxima: start..self.maxima.len(),
        });
    }

    /// Could a job of `procs` processors, planned at `seen` with its slot at `slot`, now start
    /// earlier?  False only when no capacity freed since then reached `procs` before `slot`.
    pub fn may_move(&self, seen: u64, slot: i64, procs: i64) -> bool {
        let first = self.entries.partition_point(|e| e.seq <= seen);
        self.entries[first..].iter().any(|e| {
            if e.from >= slot {
                return false;
            }
            let end = e.to.min(slot);
            let maxima = &self.maxima[e.maxima.clone()];
            // The last step starting before `end` carries the maximum over [from, end).
            let last = maxima.partition_point(|&(at, _)| at < end) - 1;
            maxima[last].1 >= procs
        })
    }

    /// Drop entries every waiting job has seen (all were planned at or after `seen`).
    pub fn forget_seen_by_all(&mut self, seen: u64) {
        let keep = self.entries.partition_point(|e| e.seq <= seen);
        if keep == 0 {
            return;
        }
        self.entries.drain(..keep);
        let offset = self
            .entries
            .first()
            .map_or(self.maxima.len(), |e| e.maxima.start);
        self.maxima.drain(..offset);
        for e in &mut self.entries {
            e.maxima = e.maxima.start - offset..e.maxima.end - offset;
        }
    }

    /// A new plan (after a correction): everybody is planned afresh, the log is moot.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.maxima.clear();
    }
}
