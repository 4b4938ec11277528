//! EASY backfilling: one reservation, for the first job of the queue that does not fit.

use super::state::Sim;
use super::Backfill;

impl Sim<'_> {
    pub(super) fn easy_pass(&mut self, queue: &[usize], now: i64) {
        let mut free = self.free_now(now);
        // Start from the head while jobs fit.
        let mut head = 0;
        while head < queue.len() && self.w.procs[queue[head]] <= free {
            free -= self.w.procs[queue[head]];
            self.start(queue[head], now, false);
            head += 1;
        }
        let Some(&blocked) = queue.get(head) else {
            return;
        };
        let mut reservation = None;
        if self.config.record_reservations {
            let r = self.shadow(blocked, now, free);
            self.note_reservation(blocked, r.0);
            reservation = Some(r);
        }
        let rest = &queue[head + 1..];
        let sorted;
        let candidates = match self.config.backfill {
            Backfill::Queue => rest,
            Backfill::Sjbf => {
                let mut by_prediction = rest.to_vec();
                by_prediction.sort_by_key(|&j| self.predicted[j]); // stable: queue order among equals
                sorted = by_prediction;
                &sorted
            }
        };
        for &job in candidates {
            if free == 0 {
                break;
            }
            let procs = self.w.procs[job];
            if procs > free {
                continue;
            }
            // The reservation is only needed once some job fits now, which skips most passes.
            let (shadow, extra) =
                reservation.get_or_insert_with(|| self.shadow(blocked, now, free));
            if now + self.predicted[job] <= *shadow {
                free -= procs;
                self.start(job, now, true);
            } else if procs <= *extra {
                *extra -= procs;
                free -= procs;
                self.start(job, now, true);
            }
        }
    }

    /// Shadow time of `job` (the earliest predicted end at which enough processors are free) and the
    /// extra processors (free then beyond what it needs), given `free` processors now.  A prediction
    /// already exceeded (no correction) counts as ending now.
    fn shadow(&self, job: usize, now: i64, free: i64) -> (i64, i64) {
        let needed = self.w.procs[job];
        let mut available = free;
        let mut shadow = None;
        for &(predicted_end, other) in self.running.range(self.counted_free_before(now)..) {
            // Every job ending at the shadow time frees its processors then, not only the first one.
            if shadow.is_some_and(|t| t < predicted_end) {
                break;
            }
            available += self.w.procs[other];
            if shadow.is_none() && available >= needed {
                shadow = Some(predicted_end);
            }
        }
        let shadow = shadow
            .unwrap_or_else(|| unreachable!("job {} is wider than the machine", self.w.id[job]));
        (shadow.max(now), available - needed)
    }
}
