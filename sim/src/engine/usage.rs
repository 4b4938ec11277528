//! Users' decayed past usage, for the formula variables `uu` and `un` (a fair-share order): the
//! processor-seconds a user's jobs have run, each second counted with weight 2^(-age / half-life), as
//! Slurm's multifactor priority decays usage (`PriorityDecayHalfLife`, 7 days by default).
//!
//! Kept exactly and lazily: between two changes of a user's running processors q, a value U at t0
//! becomes U 2^(-(t - t0)/h) + q h/ln 2 (1 - 2^(-(t - t0)/h)) at t, the integral of q 2^(-(t - s)/h)
//! over [t0, t].

/// One user's (or every user's) usage as of `at`, and the processors running since.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    value: f64,
    at: i64,
    procs: i64,
}

impl Usage {
    /// The decayed usage at `now` (>= the last change), in processor-seconds.
    pub fn at(&self, now: i64, half_life: f64) -> f64 {
        let elapsed = (now - self.at) as f64;
        if elapsed <= 0.0 {
            return self.value;
        }
        let kept = (-elapsed / half_life).exp2();
        self.value * kept + self.procs as f64 * half_life / std::f64::consts::LN_2 * (1.0 - kept)
    }

    /// `procs` more (or fewer) processors running from `now` on.
    pub fn change(&mut self, now: i64, half_life: f64, procs: i64) {
        self.value = self.at(now, half_life);
        self.at = now;
        self.procs += procs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_processor_for_one_half_life_counts_h_over_ln2_times_a_half() {
        // A job on one processor from 0 to 100 s, h = 100 s: the integral of 2^(-(100 - s)/100) over
        // [0, 100] is 100 / ln 2 x (1 - 1/2) = 72.1347520444...
        let mut u = Usage::default();
        u.change(0, 100.0, 1);
        assert!((u.at(100, 100.0) - 72.134_752_044_448_17).abs() < 1e-9);
        u.change(100, 100.0, -1);
        // Then it halves every half-life.
        assert!((u.at(300, 100.0) - 72.134_752_044_448_17 / 4.0).abs() < 1e-9);
        // Lazily or step by step, the same.
        let mut steps = Usage::default();
        steps.change(0, 100.0, 1);
        steps.change(40, 100.0, 0);
        steps.change(100, 100.0, -1);
        assert!((steps.at(300, 100.0) - u.at(300, 100.0)).abs() < 1e-9);
    }
}
