//! Lower bounds on where a job could fit in the plan, shared between the waiting jobs of one
//! conservative pass.
//!
//! During a pass, most waiting jobs keep their slot, and finding that out by walking the plan from
//! now to their slot was the whole cost of a replay.  Where a job of `procs` processors and `length`
//! seconds can fit whole does not depend on which job asks: no window of a larger or longer job
//! can fit before the first window of a smaller and shorter one.  So each search leaves behind the
//! instant before which nothing fits, and a later job that is at least as large and as long starts its
//! own search there (often past its slot, with no search at all).  A job that moves frees its old
//! slot, where windows that did not fit may fit now: a bound then holds only for windows that end
//! before the freed interval begins, which `opened` records.
//!
//! A bound also keeps the shortfall of the windows it rules out (`profile::Search`): a larger job
//! falls short there by at least as much, plus the processors it needs beyond the bound's shape.

#[derive(Clone, Copy)]
struct Bound {
    procs: i64,
    length: i64,
    /// No window of `procs` processors and `length` seconds started before this instant...
    before: i64,
    /// ...except windows reaching the earliest interval freed since the bound was found.
    opened: i64,
    /// The windows ruled out lack at least this many processors somewhere.
    shortfall: i64,
}

/// A few bounds cover the common job shapes of a queue (the oldest go first); more cost more to scan
/// at every visit than they save (measured on CEA-Curie: 4 beat 1, 2, 8, 16 and 32).
const KEPT: usize = 4;

#[derive(Default)]
pub struct Fits {
    bounds: Vec<Bound>,
}

impl Fits {
    /// A new pass: capacity may have been freed anywhere since the last one.
    pub fn clear(&mut self) {
        self.bounds.clear();
    }

    /// The earliest instant, at or after `now`, at which a window of this shape may fit whole, and
    /// the shortfall of the windows before it (`i64::MAX` when there are none).
    pub fn lower_bound(&self, now: i64, procs: i64, length: i64) -> (i64, i64) {
        self.bounds
            .iter()
            .filter(|b| b.procs <= procs && b.length <= length)
            .map(|b| {
                let before = b.before.min(b.opened.saturating_sub(length - 1));
                (before, b.shortfall.saturating_add(procs - b.procs))
            })
            .fold(
                (now, i64::MAX),
                |best, found| {
                    if found.0 > best.0 {
                        found
                    } else {
                        best
                    }
                },
            )
    }

    /// Nothing of this shape fits whole before `before` in the plan as it is now: every window
    /// before it lacks at least `shortfall` processors somewhere.
    pub fn learn(&mut self, procs: i64, length: i64, before: i64, shortfall: i64) {
        // A bound that this one implies (same or larger shape, no later) is dropped.
        self.bounds.retain(|b| {
            !(b.procs >= procs && b.length >= length && b.before <= before && b.opened == i64::MAX)
        });
        if self.bounds.len() == KEPT {
            self.bounds.remove(0);
        }
        self.bounds.push(Bound {
            procs,
            length,
            before,
            opened: i64::MAX,
            shortfall,
        });
    }

    /// Capacity was freed from `from` on: windows reaching it may fit now.
    pub fn freed(&mut self, from: i64) {
        for b in &mut self.bounds {
            b.opened = b.opened.min(from);
        }
    }
}
