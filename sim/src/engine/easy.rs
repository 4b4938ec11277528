//! EASY backfilling: one reservation, for the first job of the queue that does not fit.

use super::distribution::Outlook;
use super::order::{queue_key, Facts, FormulaFacts};
use super::queue::Queue;
use super::state::{backfill_key, facts, Sim};
use super::Backfill;

/// What a pass knows while it backfills behind the blocked head of the queue.
struct BackfillPass {
    now: i64,
    /// Processors free now.
    free: i64,
    /// The first waiting job that did not fit: it holds the reservation.
    blocked: usize,
    /// Its shadow time and the extra processors, computed once some job fits now.
    reservation: Option<(i64, i64)>,
    /// Distribution predictors: the running jobs' outlook, computed once some job fits now and
    /// again after each backfilled job (which joins the running jobs).
    outlook: Option<Outlook>,
}

impl Sim<'_> {
    pub(super) fn easy_pass(&mut self, queue: &mut Queue, now: i64) {
        let mut by_prediction = self.by_prediction.take();
        self.easy_pass_with(queue, by_prediction.as_mut(), now);
        if let Some(index) = by_prediction.as_mut() {
            index.compact();
        }
        self.by_prediction = by_prediction;
    }

    /// `by_prediction`: the waiting jobs in SJBF order, where it is kept (see `Sim::by_prediction`).
    fn easy_pass_with(
        &mut self,
        queue: &mut Queue,
        mut by_prediction: Option<&mut Queue>,
        now: i64,
    ) {
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
                let job = queue.job(head);
                self.start(job, now, false);
                queue.mark_started(head);
                if let Some(index) = by_prediction.as_deref_mut() {
                    let key = backfill_key(self.policy, facts!(self), &self.out.initial_prediction);
                    index.mark_job_started(job, key);
                }
            }
            head += 1;
        }
        if head == queue.len() {
            return;
        }
        let blocked = queue.job(head);
        let mut reservation = None;
        if self.config.record_reservations {
            let r = self.shadow(blocked, now);
            self.note_reservation(blocked, r.0);
            reservation = Some(r);
        }
        let mut pass = BackfillPass {
            now,
            free,
            blocked,
            // With distributions a job longer than the shadow time and wider than the extra
            // processors may still backfill: the reservation must not filter the candidates.
            reservation: if self.laws.is_some() {
                None
            } else {
                reservation
            },
            outlook: None,
        };
        match (self.config.backfill, by_prediction) {
            (Backfill::Queue, _) => self.backfill(&mut pass, queue, head + 1, |_| {}),
            (Backfill::Sjbf, Some(index)) => {
                // The blocked head is in the index too, but it does not fit: free only shrinks.
                let mut started = Vec::new();
                self.backfill(&mut pass, index, 0, |job| started.push(job));
                let in_queue = queue_key(self.policy, facts!(self));
                for job in started {
                    queue.mark_job_started(job, &in_queue);
                }
            }
            (Backfill::Sjbf, None) => {
                // The queue was sorted for this pass: sort the waiting jobs by prediction too.
                let mut by_prediction: Vec<usize> = (head + 1..queue.len())
                    .filter(|&p| !queue.is_started(p))
                    .collect();
                // Stable: queue order among equal predictions.
                by_prediction.sort_by_key(|&position| self.predicted[queue.job(position)]);
                for position in by_prediction {
                    if pass.free == 0 {
                        break;
                    }
                    if queue.procs(position) <= pass.free
                        && self.try_backfill(&mut pass, queue.job(position))
                    {
                        queue.mark_started(position);
                    }
                }
            }
        }
    }

    /// Start, in `candidates`' order from `position` on, every job that may backfill; each one
    /// started is marked in `candidates` and handed to `started`.
    fn backfill(
        &mut self,
        pass: &mut BackfillPass,
        candidates: &mut Queue,
        mut position: usize,
        mut started: impl FnMut(usize),
    ) {
        while pass.free > 0 {
            // Skip in bulk the jobs that cannot start: too wide now, or (once the reservation is
            // known) wider than the extra processors and too long; with distributions those may
            // still be backfilled, so only the width counts.
            let next = match pass.reservation.filter(|_| self.laws.is_none()) {
                None => candidates.next_fitting(position, pass.free),
                Some((shadow, extra)) => {
                    candidates.next_backfill(position, pass.free, extra, shadow - pass.now)
                }
            };
            let Some(found) = next else {
                break;
            };
            let job = candidates.job(found);
            if self.try_backfill(pass, job) {
                candidates.mark_started(found);
                started(job);
            }
            position = found + 1;
        }
    }

    /// Start `job` (which fits in `pass.free`) if it ends, as predicted, by the shadow time, or only
    /// uses processors the reservation does not need (which it then consumes).
    fn try_backfill(&mut self, pass: &mut BackfillPass, job: usize) -> bool {
        if self.laws.is_some() {
            return self.try_backfill_by_distribution(pass, job);
        }
        let procs = self.w.procs[job];
        let (now, blocked) = (pass.now, pass.blocked);
        // The reservation is only needed once some job fits now, which skips most passes.
        let (shadow, extra) = pass
            .reservation
            .get_or_insert_with(|| self.shadow(blocked, now));
        let ends_in_time = now + self.predicted[job] <= *shadow;
        if !ends_in_time && procs > *extra {
            return false;
        }
        if !ends_in_time {
            *extra -= procs;
        }
        pass.free -= procs;
        self.start(job, now, true);
        true
    }

    /// Start `job` (which fits in `pass.free`) if EASY would, by the requests (the head's reservation
    /// holds whatever the running jobs do), or else if the probability that it delays the head is
    /// below the confidence (see `distribution.rs`); with `hmm:every=1`, only by that probability.
    fn try_backfill_by_distribution(&mut self, pass: &mut BackfillPass, job: usize) -> bool {
        let procs = self.w.procs[job];
        let (now, blocked) = (pass.now, pass.blocked);
        let (shadow, extra) = *pass
            .reservation
            .get_or_insert_with(|| self.shadow(blocked, now));
        let ends_in_time = now + self.w.requested[job] <= shadow;
        // The candidate's law, computed only where it is needed (most candidates EASY takes need none).
        let law_of = |sim: &Self| {
            sim.laws
                .as_ref()
                .expect("distribution predictor")
                .law(job, sim.w)
        };
        let mut law = None;
        let every = self.laws.as_ref().is_some_and(|l| l.every);
        if (ends_in_time || procs <= extra) && !every {
            if !ends_in_time {
                pass.reservation = Some((shadow, extra - procs));
            }
        } else {
            let head = self.w.procs[blocked];
            // Processors the head still needs released: without the candidate, and with it.
            let c0 = head - self.free;
            let c = c0 + procs;
            if pass.outlook.as_ref().is_none_or(|o| procs % o.unit() != 0) {
                let counts = self
                    .running
                    .iter()
                    .map(|&(_, _, p)| p)
                    .chain([head, self.free, procs]);
                let unit = Outlook::unit_of(counts);
                let laws = self.laws.as_ref().expect("distribution predictor");
                pass.outlook = Some(laws.outlook(now, &self.running, &self.out.start, head, unit));
            }
            let outlook = pass.outlook.as_mut().expect("built");
            let tau = self.config.confidence;
            let candidate = law.insert(law_of(self));
            if outlook.delay(c0, c, &candidate.ends(), tau) >= tau {
                return false;
            }
            // The head's reservation by the requests no longer holds: find it again when needed.
            pass.reservation = None;
        }
        // It joins the running jobs the outlook looks at.
        if let Some(outlook) = pass.outlook.as_mut() {
            if procs % outlook.unit() == 0 {
                outlook.add(procs, law.get_or_insert_with(|| law_of(self)));
            } else {
                pass.outlook = None;
            }
        }
        if let Some(law) = law {
            self.laws
                .as_mut()
                .expect("distribution predictor")
                .starts_with(job, law);
        }
        pass.free -= procs;
        self.start(job, now, true);
        true
    }

    /// Shadow time of `job` (the earliest predicted end at which enough processors are free) and the
    /// extra processors (free then beyond what it needs).  It counts from the processors free on the
    /// machine, not from what the pass may hand out: in pyss mode a job due to end now (its
    /// termination still pending) is counted by the walk as ending now, including a zero-length job
    /// the pass itself started, which the pass's count never held.  A prediction already exceeded
    /// (no correction) also counts as ending now.
    fn shadow(&self, job: usize, now: i64) -> (i64, i64) {
        let needed = self.w.procs[job];
        let mut available = self.free;
        let mut shadow = None;
        for &(predicted_end, _, procs) in self.running.iter() {
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
        (shadow, available - needed)
    }
}
