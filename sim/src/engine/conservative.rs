//! Conservative backfilling: every waiting job holds a reservation in the plan (`Profile`).  At each
//! pass, jobs in queue order give their slot back and take the earliest one that fits, which is never
//! later than the slot they had; jobs whose slot begins now start.  Later arrivals are planned around
//! earlier reservations, so with predictions that are never exceeded no reserved job is delayed.
//! A job that holds a slot asks only whether an earlier one fits, without giving its slot back
//! (`earlier_slot`), and the searches of a pass share what they learnt (`fits.rs`): most jobs keep
//! their slot at most passes, and walking the plan to find that out was the whole cost of a replay.
//!
//! Better still, most waiting jobs need no search at all.  Between two searches for a job's slot,
//! the plan only loses free processors (new reservations, time passing) except where processors are
//! freed: by a job ending before its planned end, or by a waiting job moving to an earlier slot.
//! Each search leaves the *shortfall* of the windows before the slot it found (`profile::Search`);
//! no such window can fit until at least that many processors have been freed in the plan since,
//! so a job is searched again only then (`recheck_at`, against the running total `freed`).  On
//! CEA-Curie, 45 million of the 107 million visits to a waiting job still search.

use super::profile::Profile;
use super::queue::Queue;
use super::state::Sim;

impl Sim<'_> {
    pub(super) fn conservative_pass(&mut self, queue: &mut Queue, now: i64) {
        if self.replan {
            // A correction made a running job longer than planned: rebuild the plan from the running
            // jobs and re-reserve everyone in queue order.
            self.replan = false;
            let mut profile = Profile::new(self.config.machine_size);
            for &(_, job, _) in self.running.iter() {
                let planned_end = (self.out.start[job] + self.planned(job)).max(now + 1);
                profile.add(now, planned_end, -self.w.procs[job]);
                self.block_end[job] = planned_end;
            }
            self.profile = profile;
            for &job in queue.jobs() {
                self.reserved[job] = None;
            }
        }
        self.profile.forget_before(now);
        // Completions since the last pass freed capacity anywhere: bounds start afresh.
        self.fits.clear();
        // Only a job reserved now may start: the earliest reservation says whether to look for one.
        // (A slot given back counts too: a move is to an earlier slot, and a slot in the past only
        // makes the look happen.)
        let mut earliest = i64::MAX;
        for &job in queue.jobs() {
            let (procs, length) = (self.w.procs[job], self.planned(job));
            let held = self.reserved[job];
            if let Some(slot) = held {
                earliest = earliest.min(slot);
            }
            // (`moved`: the slot it leaves, when it moves from one slot to an earlier one.)
            let (slot, shortfall, moved) = match held {
                Some(slot) if slot == now => continue,
                // (A slot in the past belongs to a job that could not start when due, as a running job
                // outlived its prediction: it is planned afresh.)
                Some(slot) if slot > now && !self.replan_everyone => {
                    if self.freed < self.recheck_at[job] {
                        continue; // too little freed since its last search for any window to fit
                    }
                    match self.earlier_slot(now, job, slot) {
                        Ok((found, shortfall)) => (found, shortfall, Some(slot)),
                        Err(shortfall) => {
                            // Re-planning would give the same slot.
                            self.recheck_at[job] = self.freed.saturating_add(shortfall);
                            continue;
                        }
                    }
                }
                _ => {
                    if let Some(slot) = held {
                        self.give_back(slot, job);
                    }
                    let (from, shortfall) = self.fits.lower_bound(now, procs, length);
                    let (slot, found) = self.profile.earliest_fit(from, procs, length);
                    let shortfall = shortfall.min(found);
                    self.fits.learn(procs, length, slot, shortfall);
                    (slot, shortfall, None)
                }
            };
            match moved {
                Some(old) => self.move_reservation(job, old, slot),
                None => self.profile.add(slot, slot + length, -procs),
            }
            earliest = earliest.min(slot);
            self.reserved[job] = Some(slot);
            self.recheck_at[job] = self.freed.saturating_add(shortfall);
            self.note_reservation(job, slot);
        }
        self.profile.compact();
        if earliest > now {
            // (Most passes: a scan of the queue for jobs reserved now would find none.)
            return;
        }
        let mut someone_ahead_waits = false;
        let mut free = self.free_now(now);
        for position in 0..queue.len() {
            let job = queue.job(position);
            // The plan says it may start; the free count is the ground truth (it differs only when a
            // running job outlived its prediction without correction).
            if self.reserved[job] == Some(now) && self.w.procs[job] <= free {
                free -= self.w.procs[job];
                self.reserved[job] = None;
                queue.mark_started(position);
                self.start(job, now, someone_ahead_waits);
            } else {
                someone_ahead_waits = true;
            }
        }
    }

    /// The earliest slot before `slot` where a waiting job that holds `slot` fits, and the shortfall
    /// of the windows before it; or, if there is none, the shortfall of every window before `slot`:
    /// what giving its slot back and searching again would find, without touching the plan.
    fn earlier_slot(&mut self, now: i64, job: usize, slot: i64) -> Result<(i64, i64), i64> {
        let (procs, length) = (self.w.procs[job], self.planned(job));
        // A window starting inside the room just before its slot fits: past the slot, the job's
        // own reservation makes room.  An earlier window must end before that room, whole; the
        // windows in between hold the busy instant just before the room.
        let (room, free_before_room) = self.profile.room_before(now, procs, slot, &mut self.near);
        let mut shortfall = if room > now {
            procs - free_before_room
        } else {
            i64::MAX // no window starts before now
        };
        let before = room - length;
        if before > now {
            let (from, ruled_out) = self.fits.lower_bound(now, procs, length);
            shortfall = shortfall.min(ruled_out);
            if from < before {
                let search = self
                    .profile
                    .earliest_fit_within(from, procs, length, before);
                let ruled_out = ruled_out.min(search.shortfall);
                self.fits
                    .learn(procs, length, search.slot.unwrap_or(before), ruled_out);
                if let Some(whole) = search.slot {
                    return Ok((whole, ruled_out));
                }
                shortfall = shortfall.min(search.shortfall);
            }
        }
        if room < slot {
            Ok((room, shortfall))
        } else {
            Err(shortfall)
        }
    }

    /// Move a waiting job's reservation from `old` to the earlier `new`.  Only the difference
    /// changes in the plan: a job that moves a little keeps most of its long block, and updating
    /// its two short ends touches fewer steps than handing the whole block back and taking it again
    /// (moves cost about a fifth less on CEA-Curie).
    fn move_reservation(&mut self, job: usize, old: i64, new: i64) {
        let (procs, length) = (self.w.procs[job], self.planned(job));
        let freed_from = self.profile.shift(old, new, length, procs);
        self.fits.freed(freed_from);
        self.freed += procs;
    }

    /// Take a waiting job's reservation out of the plan.
    fn give_back(&mut self, slot: i64, job: usize) {
        self.profile
            .add(slot, slot + self.planned(job), self.w.procs[job]);
        self.fits.freed(slot);
        self.freed += self.w.procs[job];
    }
}
