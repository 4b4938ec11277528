//! Free processors over future time, as a step function: the occupancy plan of conservative
//! backfilling (running jobs until their predicted end, and every reservation).

/// What a search for a window found: the earliest one, if any, and the *shortfall* of the windows it
/// ruled out: the fewest processors that, added to the plan, could have made one of them fit (every
/// window it passed over holds an instant with that many fewer free processors than it needs).  Until
/// at least that many processors have been freed in the plan, none of them can fit: this is what
/// lets conservative backfilling leave a waiting job alone (`conservative.rs`).
pub struct Search {
    pub slot: Option<i64>,
    pub shortfall: i64,
}

pub struct Profile {
    capacity: i64,
    /// (from, free processors from this instant until the next step); the first step starts at
    /// `i64::MIN`, the last one lasts forever.
    steps: Vec<(i64, i64)>,
}

impl Profile {
    pub fn new(capacity: i64) -> Self {
        Profile {
            capacity,
            steps: vec![(i64::MIN, capacity)],
        }
    }

    fn index_at(&self, t: i64) -> usize {
        self.steps.partition_point(|s| s.0 <= t) - 1
    }

    /// `index_at`, looking first next to `hint` (an index found for a nearby instant): successive
    /// jobs of a queue mostly hold nearby slots, and a few steps beat a binary search of the plan.
    fn index_near(&self, t: i64, hint: usize) -> usize {
        let mut i = hint.min(self.steps.len() - 1);
        for _ in 0..4 {
            if self.steps[i].0 > t {
                i -= 1; // the first step starts at i64::MIN: never past it
            } else if i + 1 < self.steps.len() && self.steps[i + 1].0 <= t {
                i += 1;
            } else {
                return i;
            }
        }
        self.index_at(t)
    }

    /// Index of a step starting exactly at `t` (inserted if needed).
    fn split(&mut self, t: i64) -> usize {
        let i = self.index_at(t);
        if self.steps[i].0 == t {
            return i;
        }
        self.steps.insert(i + 1, (t, self.steps[i].1));
        i + 1
    }

    /// Add `delta` free processors over [from, to).
    pub fn add(&mut self, from: i64, to: i64, delta: i64) {
        if from >= to {
            return;
        }
        let a = self.split(from);
        let b = self.split(to);
        for step in &mut self.steps[a..b] {
            step.1 += delta;
        }
    }

    /// Move a block of `procs` processors and `length` seconds from `old` to the earlier `new`, and
    /// return where the processors it hands back begin.
    pub fn shift(&mut self, old: i64, new: i64, length: i64, procs: i64) -> i64 {
        debug_assert!(new < old);
        // Overlapping blocks: [new, old) is taken and [new + length, old + length) handed back;
        // disjoint ones: the whole new block is taken and the whole old one handed back.
        let (taken_until, handed_from) = (old.min(new + length), old.max(new + length));
        self.add(new, taken_until, -procs);
        self.add(handed_from, old + length, procs);
        handed_from
    }

    /// Earliest instant >= `from` at which `procs` processors are free for `duration` (>= 1) seconds,
    /// and the shortfall of the windows before it (see `Search`).
    pub fn earliest_fit(&self, from: i64, procs: i64, duration: i64) -> (i64, i64) {
        debug_assert!(procs <= self.capacity && duration >= 1);
        // The last step lasts forever with every processor free: the search always ends.
        let search = self.earliest_fit_within(from, procs, duration, i64::MAX);
        (search.slot.expect("the plan ends free"), search.shortfall)
    }

    /// Earliest instant in [from, limit) at which `procs` processors are free for `duration` seconds,
    /// if any (the search stops at `limit`).
    pub fn earliest_fit_within(&self, from: i64, procs: i64, duration: i64, limit: i64) -> Search {
        let mut candidate = from;
        let mut i = self.index_at(from);
        let mut shortfall = i64::MAX;
        'search: while candidate < limit {
            let mut j = i;
            while j < self.steps.len() && (j == i || self.steps[j].0 < candidate + duration) {
                if self.steps[j].1 < procs {
                    // Too busy here: the window can only start after this step.
                    shortfall = shortfall.min(procs - self.steps[j].1);
                    candidate = self.steps[j + 1].0;
                    i = j + 1;
                    continue 'search;
                }
                j += 1;
            }
            return Search {
                slot: Some(candidate),
                shortfall,
            };
        }
        Search {
            slot: None,
            shortfall,
        }
    }

    /// Start of the run of steps with at least `procs` free processors that ends at `limit`
    /// (`limit` itself when the instant before it is busy), not earlier than `from`, and how many
    /// processors are free just before that start (meaningless when it is `from`).
    /// `hint` is where the previous call looked, and is updated.
    pub fn room_before(&self, from: i64, procs: i64, limit: i64, hint: &mut usize) -> (i64, i64) {
        let mut i = self.index_near(limit - 1, *hint);
        *hint = i;
        while self.steps[i].1 >= procs {
            if self.steps[i].0 <= from {
                return (from, self.capacity);
            }
            i -= 1;
        }
        let room = self.steps[i + 1].0.max(from).min(limit);
        if room == from {
            return (from, self.capacity);
        }
        (room, self.steps[i].1)
    }

    /// Forget steps that ended before `now` (they can no longer matter).
    pub fn forget_before(&mut self, now: i64) {
        let i = self.index_at(now);
        if i > 0 {
            self.steps.drain(..i);
            self.steps[0].0 = i64::MIN;
        }
    }

    /// Also merges equal neighbours, so the profile stays as short as the plan it describes.
    pub fn compact(&mut self) {
        self.steps.dedup_by(|later, earlier| later.1 == earlier.1);
    }

    #[cfg(test)]
    pub fn free_at(&self, t: i64) -> i64 {
        self.steps[self.index_at(t)].1
    }
}

#[cfg(test)]
mod tests {
    use super::Profile;

    #[test]
    fn earliest_fit_skips_busy_windows() {
        // 4 procs; 3 busy over [0, 10); 4 busy over [20, 30).
        let mut p = Profile::new(4);
        p.add(0, 10, -3);
        p.add(20, 30, -4);
        assert_eq!(p.free_at(5), 1);
        assert_eq!(p.earliest_fit(0, 1, 20).0, 0); // 1 proc fits everywhere but [20, 30)...
        assert_eq!(p.earliest_fit(0, 1, 25), (30, 1)); // ...so a 25 s window must wait for 30.
        assert_eq!(p.earliest_fit(0, 2, 10), (10, 1)); // [10, 20) is free.
        assert_eq!(p.earliest_fit(0, 2, 11), (30, 1));
        assert_eq!(p.earliest_fit(12, 4, 5).0, 12);
        p.add(0, 10, 3);
        p.compact();
        assert_eq!(p.earliest_fit(0, 4, 20).0, 0);
        p.forget_before(25);
        assert_eq!(p.free_at(25), 0);
        assert_eq!(p.earliest_fit(25, 1, 1), (30, 1));
    }

    /// Moving a block equals handing it back and taking the new one, whether the two overlap or not.
    #[test]
    fn shift_moves_a_block() {
        for (old, new, length) in [(50, 40, 30), (50, 10, 30), (50, 20, 30), (50, 49, 1)] {
            let mut moved = Profile::new(8);
            moved.add(0, 100, -2);
            moved.add(old, old + length, -3);
            let handed_from = moved.shift(old, new, length, 3);
            assert_eq!(handed_from, old.max(new + length));
            let mut expected = Profile::new(8);
            expected.add(0, 100, -2);
            expected.add(new, new + length, -3);
            for t in 0..120 {
                assert_eq!(
                    moved.free_at(t),
                    expected.free_at(t),
                    "t = {t}, moved from {old} to {new}"
                );
            }
        }
    }
}
