//! Runtime predictions used for reservations and backfilling, and their corrections when a running
//! job outlives its prediction.

use super::eloss::Loss;
use super::hmm_online::HmmParams;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Predictor {
    /// The user's requested time (classic EASY).
    Requested,
    /// The actual runtime.
    Clairvoyant,
    /// Mean of the user's two most recently completed runtimes, capped at the request (Tsafrir et al.).
    Ave2,
    /// A column supplied by the caller.
    Column,
    /// Learned online during the replay with an E-Loss (see `eloss.rs`, `learner.rs`).
    Eloss(Loss),
    /// Run-time distributions from a workload HMM trained online (see `hmm_online.rs`), for EASY
    /// backfilling with a confidence (see `distribution.rs`); reservations use the requests.
    Hmm(HmmParams),
    /// Every job's law is one event at its request: EASY's own assumption written as distributions
    /// (the control of a confidence study; it schedules exactly as EASY).
    RequestedLaw,
}

impl Predictor {
    /// Whether jobs are backfilled by the probability that they delay the head (`distribution.rs`).
    pub fn uses_distributions(self) -> bool {
        matches!(self, Predictor::Hmm(_) | Predictor::RequestedLaw)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Correction {
    /// Keep the expired prediction (the scheduler then treats the job as ending now).
    None,
    /// Jump to the requested time.
    Requested,
    /// Initial prediction + 1 min, 5 min, 15 min, ... 100 h in turn, capped at the request.
    Incremental,
    /// Double the prediction (capped at the request in canonical mode, uncapped in pyss mode).
    Doubling,
}

/// Steps of the incremental correction (Tsafrir, Etsion and Feitelson 2007), in seconds.
const INCREMENTS: [i64; 11] = [
    60, 300, 900, 1800, 3600, 7200, 18_000, 36_000, 72_000, 180_000, 360_000,
];

/// The two most recently completed runtimes of one user: (last, the one before).
#[derive(Clone, Copy, Default)]
pub struct History {
    last: Option<i64>,
    before: Option<i64>,
}

impl History {
    pub fn completed(&mut self, run: i64) {
        self.before = self.last;
        self.last = Some(run);
    }
}

impl Predictor {
    pub fn initial(
        self,
        requested: i64,
        run: i64,
        column: Option<i64>,
        history: Option<&History>,
    ) -> i64 {
        match self {
            Predictor::Requested | Predictor::Hmm(_) | Predictor::RequestedLaw => requested,
            Predictor::Clairvoyant => run,
            Predictor::Column => column.unwrap_or(requested),
            Predictor::Eloss(_) => unreachable!("the learner predicts"),
            Predictor::Ave2 => match history {
                Some(History {
                    last: Some(a),
                    before: Some(b),
                }) => ((a + b) / 2).min(requested),
                _ => requested,
            },
        }
    }
}

impl Correction {
    /// The next prediction for a job still running at the end of `current`, after `done` corrections.
    /// Always longer than `current`, so a job is corrected finitely often.
    pub fn next(self, current: i64, initial: i64, requested: i64, done: i64, capped: bool) -> i64 {
        let proposed = match self {
            Correction::None => return current,
            Correction::Requested => requested,
            Correction::Incremental => INCREMENTS
                .get(done as usize)
                .map_or(requested, |step| (initial + step).min(requested)),
            Correction::Doubling => {
                let doubled = (2 * current).max(1);
                if capped {
                    doubled.min(requested)
                } else {
                    doubled
                }
            }
        };
        proposed.max(current + 1)
    }
}
