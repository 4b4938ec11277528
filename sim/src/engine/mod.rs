//! Backfilling simulator core: EASY and conservative backfilling with queue policies, runtime
//! predictions and corrections, in two event semantics (canonical, and `pyss`, the published SC'15 simulator), as
//! docs/simulator.md describes them.
//!
//! Why compiled: a replay visits every event and at each one scans the waiting queue and the running
//! jobs; campaigns run thousands of replays of logs with 10^5 jobs, which an interpreted loop cannot do
//! in seconds.  Everything around the loop (reading the lake, metrics, reports) stays in Python.

mod allocation;
mod conservative;
mod distribution;
mod easy;
mod eloss;
mod error;
mod fits;
mod formula;
mod hmm_online;
mod laws;
mod learner;
mod order;
mod parameters;
mod predict;
mod profile;
mod queue;
mod running;
#[cfg(test)]
mod selection_tests;
mod selector;
mod state;
#[cfg(test)]
mod tests;
mod usage;

pub use allocation::{allocate, Allocation};
pub use eloss::{Curve, Loss, Weight};
pub use error::{check_config, machine_size_problem, InputError, KINDS, MAX_MACHINE_SIZE};
pub use formula::{parse_order_with, Formula, MAX_FORMULA_BYTES, PRESETS, VARIABLES};
pub use hmm_online::HmmParams;
pub use order::{parse_policy, Backfill, HookCall, OrderHook, Policy, BUILT_IN};
pub use predict::{Correction, Predictor};
pub use selector::{Charge, Selection, Selector};

use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// One reservation, for the first waiting job; the rest may start if they do not delay it.
    Easy,
    /// Every waiting job holds a reservation that later arrivals never delay.
    Conservative,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compat {
    /// At one instant all completions, then all submissions, then one pass.
    Canonical,
    /// The published simulator: one event at a time in its tie order, a pass after each event.
    Pyss,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub machine_size: i64,
    pub algorithm: Algorithm,
    pub policy: Policy,
    pub backfill: Backfill,
    pub predictor: Predictor,
    pub correction: Correction,
    /// Jobs that have waited longer than this many seconds go to the head, in submit order.
    pub threshold: Option<i64>,
    pub compat: Compat,
    /// Record each job's first reservation (costs a walk over the running jobs per new head).
    pub record_reservations: bool,
    /// Change the queue policy at period boundaries (EASY, canonical semantics); `policy` is then
    /// unused.
    pub selection: Option<Selection>,
    /// With a distribution predictor: a job is backfilled only if the probability that it delays the
    /// head of the queue is below this (τ, in (0, 1)).
    pub confidence: f64,
    /// The formulas that `Policy::Formula` policies (the policy, or a selection's candidates) index.
    pub formulas: Vec<Formula>,
    /// The half-life (s) of users' decayed usage, which formulas read as `uu` and `un`.
    pub usage_half_life: f64,
}

/// Slurm's default `PriorityDecayHalfLife`: 7 days.
pub const USAGE_HALF_LIFE: f64 = 7.0 * 86_400.0;

impl Config {
    /// Classic EASY: FCFS, requested times as predictions, canonical semantics.
    pub fn easy(machine_size: i64) -> Config {
        Config {
            machine_size,
            algorithm: Algorithm::Easy,
            policy: Policy::Fcfs,
            backfill: Backfill::Queue,
            predictor: Predictor::Requested,
            correction: Correction::Requested,
            threshold: None,
            compat: Compat::Canonical,
            record_reservations: false,
            selection: None,
            confidence: 0.05,
            formulas: Vec::new(),
            usage_half_life: USAGE_HALF_LIFE,
        }
    }
}

/// Input columns, one entry per job, sorted by submit time.  `run` is the actual runtime; a job is
/// killed at its requested time, so it occupies its processors for `min(run, requested)` seconds.
pub struct Workload<'a> {
    pub id: &'a [i64],
    pub submit: &'a [i64],
    pub run: &'a [i64],
    pub requested: &'a [i64],
    pub procs: &'a [i64],
    pub user: &'a [i64],
    /// Caller-supplied predicted runtimes (the `column` predictor).
    pub prediction: Option<&'a [i64]>,
    /// Further numeric columns, by name, that formulas read (`Formula::columns`).
    pub extra: Vec<(&'a str, &'a [f64])>,
}

/// Output columns in input order.
#[derive(Debug, Default)]
pub struct Outcome {
    pub start: Vec<i64>,
    pub end: Vec<i64>,
    pub backfilled: Vec<bool>,
    pub corrections: Vec<i64>,
    pub initial_prediction: Vec<i64>,
    /// First reservation the job was given (-1: none, or not recorded).
    pub reservation: Vec<i64>,
    /// Policy in force when the job started (an index into the selection's policies; 0 without one).
    pub policy: Vec<u8>,
    /// With a selection: the policy chosen for each period, from the first submission on.
    pub periods: Vec<u8>,
    /// Under a formula: whether the job's key was ever NaN or infinite (it then went last).
    pub key_not_finite: Vec<bool>,
}

/// Replay `workload` on a machine described by `config`.
pub fn simulate(workload: &Workload, config: &Config) -> Result<Outcome, InputError> {
    Ok(simulate_until(workload, config, &mut || false)?.expect("never stopped"))
}

/// `simulate`, asking `stop` now and then (every few thousand events) whether to give up, in which
/// case it returns `Ok(None)`: how a replay started from Python answers Ctrl-C.
pub fn simulate_until(
    workload: &Workload,
    config: &Config,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Option<Outcome>, InputError> {
    simulate_with_hook(workload, config, None, stop).map_err(|failed| match failed {
        Failed::Input(bad) => bad,
        Failed::Hook(_) => unreachable!("no hook"),
    })
}

/// Why a replay with a hook did not finish.
#[derive(Debug)]
pub enum Failed {
    Input(InputError),
    /// The hook failed (its message); the replay stopped at that pass.
    Hook(String),
}

/// `simulate_until` with the caller's queue order (`Policy::Hook`), called at every pass that sorts
/// the queue.
pub fn simulate_with_hook(
    workload: &Workload,
    config: &Config,
    hook: Option<OrderHook>,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Option<Outcome>, Failed> {
    error::validate(workload, config).map_err(Failed::Input)?;
    let uses_hook = config.policy == Policy::Hook;
    if uses_hook != hook.is_some() {
        return Err(Failed::Input(error::InputError {
            kind: "order",
            what: if uses_hook {
                "the python policy needs an order function".into()
            } else {
                "an order function is given but the policy is not python".into()
            },
            job_ids: Vec::new(),
            count: 0,
        }));
    }
    let mut sim = state::Sim::new(workload, config);
    sim.hook = hook;
    sim.run_reporting(stop).map_err(Failed::Hook)
}

macro_rules! names {
    ($ty:ident { $($text:literal => $variant:ident),+ $(,)? }) => {
        impl $ty {
            /// Every name, in order (exported to Python: its choices and help come from here).
            pub const NAMES: &'static [&'static str] = &[$($text),+];
        }
        impl FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s.to_ascii_lowercase().as_str() {
                    $($text => Ok($ty::$variant),)+
                    _ => Err(format!(
                        "unknown {} {s:?}; expected one of: {}",
                        stringify!($ty).to_ascii_lowercase(),
                        [$($text),+].join(", ")
                    )),
                }
            }
        }
    };
}

names!(Algorithm { "easy" => Easy, "conservative" => Conservative });
names!(Compat { "canonical" => Canonical, "pyss" => Pyss });
names!(Policy {
    "fcfs" => Fcfs, "lcfs" => Lcfs, "spf" => Spf, "lpf" => Lpf, "sqf" => Sqf, "lqf" => Lqf,
    "lexp" => Lexp, "sexp" => Sexp, "lrf" => Lrf, "srf" => Srf, "laf" => Laf, "saf" => Saf,
});
// (Formulas are parsed with `parse_policy`, which needs the replay's table of formulas.)
names!(Backfill { "queue" => Queue, "sjbf" => Sjbf });
/// Every predictor: how it is written, what it predicts, and whether it gives run-time distributions
/// (EASY then backfills by the probability of delaying the head).  The parser's message, Python's help
/// and its list of distribution predictors come from this table.
pub const PREDICTORS: &[(&str, &str, bool)] = &[
    ("requested", "the user's request", false),
    ("clairvoyant", "the actual run time", false),
    ("ave2", "mean of the user's last two runtimes", false),
    ("eloss[:KEY=VALUE,...]", "learned online with an E-Loss; docs/predictions.md", false),
    (
        "hmm[:KEY=VALUE,...]",
        "run-time distributions from a workload HMM trained online, with --backfill-confidence; docs/hmm.md",
        true,
    ),
    ("requested-law", "one event at each request: EASY written as distributions", true),
    ("column:NAME", "a column of the jobs; missing values fall back to the request", false),
];

impl FromStr for Predictor {
    type Err = String;
    /// `requested`, `clairvoyant`, `ave2`, `column`, or `eloss` with optional parameters
    /// (`eloss:under=linear,weight=log-area`).
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, parameters) = s.split_once(':').unwrap_or((s, ""));
        match name.to_ascii_lowercase().as_str() {
            "requested" => Ok(Predictor::Requested),
            "clairvoyant" => Ok(Predictor::Clairvoyant),
            "ave2" => Ok(Predictor::Ave2),
            "column" => Ok(Predictor::Column),
            "eloss" => Ok(Predictor::Eloss(parameters.parse()?)),
            "hmm" => Ok(Predictor::Hmm(parameters.parse()?)),
            "requested-law" if parameters.is_empty() => Ok(Predictor::RequestedLaw),
            _ => {
                let written: Vec<&str> =
                    PREDICTORS.iter().map(|(written, _, _)| *written).collect();
                let (last, others) = written.split_last().expect("predictors");
                Err(format!(
                    "unknown predictor {s:?}; expected {} or {last}",
                    others.join(", ")
                ))
            }
        }
    }
}

impl std::fmt::Display for Predictor {
    /// The canonical spelling (E-Loss parameters only where they differ from the default).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Predictor::Requested => write!(f, "requested"),
            Predictor::Clairvoyant => write!(f, "clairvoyant"),
            Predictor::Ave2 => write!(f, "ave2"),
            Predictor::Column => write!(f, "column"),
            Predictor::Eloss(loss) if *loss == Loss::default() => write!(f, "eloss"),
            Predictor::Eloss(loss) => write!(f, "eloss:{loss}"),
            Predictor::Hmm(params) if *params == HmmParams::default() => write!(f, "hmm"),
            Predictor::Hmm(params) => write!(f, "hmm:{params}"),
            Predictor::RequestedLaw => write!(f, "requested-law"),
        }
    }
}
names!(Correction {
    "none" => None, "requested" => Requested, "incremental" => Incremental, "doubling" => Doubling,
});
