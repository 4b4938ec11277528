//! EASY backfilling: one reservation, for the first job of the queue that does not fit.

use super::queue::Queue;
use super::state::Sim;
use super::Backfill;

impl Sim<'_> {
    pub(super) fn easy_pass(&mut self, queue: &mut Queue, now: i64) {
        let mut free = self.free_now(now);
        // Start from the head while jobs fit.
        let mut head = 0;
        while head < queue.len() {
            // Jobs backfilled at an earlier pass may still sit in the queue as tombstones.
            if !queue.is_started(head) {
                if queue.procs(head) > free {
                    break;
                }
                free -= queue.procs(head);
                self.start(queue.job(head), now, false);
                queue.mark_started(head);
            }
            head += 1;
        }
        if head == queue.len() {
            return;
        }
        let blocked = queue.job(head);
        let mut reservation = None;
        if self.config.record_reservations {
            let r = self.shadow(blocked, now, free);
            self.note_reservation(blocked, r.0);
            reservation = Some(r);
        }
        match self.config.backfill {
            Backfill::Queue => {
                let mut from = head + 1;
                while free > 0 {
                    // Skip in bulk the jobs that cannot start: too wide now, or (once the
                    // reservation is known) wider than the extra processors and too long.
                    let next = match reservation {
                        None => queue.next_fitting(from, free),
                        Some((shadow, extra)) => {
                            queue.next_backfill(from, free, extra, shadow - now)
                        }
                    };
                    let Some(position) = next else {
                        break;
                    };
                    if self.try_backfill(
                        queue.job(position),
                        now,
                        &mut free,
                        blocked,
                        &mut reservation,
                    ) {
                        queue.mark_started(position);
                    }
                    from = position + 1;
                }
            }
            Backfill::Sjbf => {
                let mut by_prediction: Vec<usize> = (head + 1..queue.len())
                    .filter(|&p| !queue.is_started(p))
                    .collect();
                // Stable: queue order among equal predictions.
                by_prediction.sort_by_key(|&position| self.predicted[queue.job(position)]);
                for position in by_prediction {
                    if free == 0 {
                        break;
                    }
                    if queue.procs(position) <= free
                        && self.try_backfill(
                            queue.job(position),
                            now,
                            &mut free,
                            blocked,
                            &mut reservation,
                        )
                    {
                        queue.mark_started(position);
                    }
                }
            }
        }
    }

    /// Start `job` (which fits in `free`) if it ends, as predicted, by the shadow time, or only uses
    /// processors the reservation does not need (which it then consumes).
    fn try_backfill(
        &mut self,
        job: usize,
        now: i64,
        free: &mut i64,
        blocked: usize,
        reservation: &mut Option<(i64, i64)>,
    ) -> bool {
        let procs = self.w.procs[job];
        // The reservation is only needed once some job fits now, which skips most passes.
        let (shadow, extra) = reservation.get_or_insert_with(|| self.shadow(blocked, now, *free));
        let ends_in_time = now + self.predicted[job] <= *shadow;
        if !ends_in_time && procs > *extra {
            return false;
        }
        if !ends_in_time {
            *extra -= procs;
        }
        *free -= procs;
        self.start(job, now, true);
        true
    }

    /// Shadow time of `job` (the earliest predicted end at which enough processors are free) and the
    /// extra processors (free then beyond what it needs), given `free` processors now.  A prediction
    /// already exceeded (no correction) counts as ending now.
    fn shadow(&self, job: usize, now: i64, free: i64) -> (i64, i64) {
        let needed = self.w.procs[job];
        let mut available = free;
        let mut shadow = None;
        for &(predicted_end, other, procs) in self.running.iter() {
            if predicted_end <= now && self.due_now(other, now) {
                continue; // already counted in `free`
            }
            let predicted_end = predicted_end.max(now);
            // Every job ending at the shadow time frees its processors then, not only the first one.
            if shadow.is_some_and(|t| t < predicted_end) {
                break;
            }
            available += procs;
            if shadow.is_none() && available >= needed {
                shadow = Some(predicted_end);
            }
        }
        let shadow = shadow
            .unwrap_or_else(|| unreachable!("job {} is wider than the machine", self.w.id[job]));
        (shadow.max(now), available - needed)
    }
}
