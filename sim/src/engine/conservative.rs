//! Conservative backfilling: every waiting job holds a reservation in the plan (`Profile`).  At each
//! pass, jobs in queue order give their slot back and take the earliest one that fits, which is never
//! later than the slot they had; jobs whose slot begins now start.  Later arrivals are planned around
//! earlier reservations, so with predictions that are never exceeded no reserved job is delayed.
//! A job that provably keeps its slot (see `freed.rs`) is not searched again: most are not, at most
//! passes, and that search was the whole cost of a replay.

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
            }
            self.profile = profile;
            for &job in queue.jobs() {
                self.reserved[job] = None;
            }
            self.freed.clear();
        }
        self.profile.forget_before(now);
        // Every waiting job was planned during the previous pass or later (or is new).
        self.freed.forget_seen_by_all(self.pass_began_at);
        self.pass_began_at = self.freed.now();
        for &job in queue.jobs() {
            let (procs, length) = (self.w.procs[job], self.planned(job));
            let held = self.reserved[job];
            if let Some(slot) = held {
                let keeps = slot == now
                    || (slot > now && !self.freed.may_move(self.planned_at[job], slot, procs));
                if keeps && !self.replan_everyone {
                    self.planned_at[job] = self.freed.now();
                    continue; // re-planning would give the same slot
                }
                self.profile.add(slot, slot + length, procs);
            }
            let slot = self.profile.earliest_fit(now, procs, length);
            self.profile.add(slot, slot + length, -procs);
            if let Some(old) = held.filter(|&old| old != slot) {
                self.freed.record(&self.profile, old, old + length);
            }
            self.reserved[job] = Some(slot);
            self.planned_at[job] = self.freed.now();
            self.note_reservation(job, slot);
        }
        self.profile.compact();
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
}
