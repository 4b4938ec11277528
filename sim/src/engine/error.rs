//! Input checks.  Every rejection names the offending job ids, so a user can find them in the lake.

use super::{Algorithm, Compat, Config, Correction, Predictor, Workload};
use crate::swf::MAX_SECONDS;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// What kind of problem, for callers to branch on (never on `what`'s text): `machine_size`,
    /// `wider_than_machine`, `no_processors`, `negative_runtime`, ... (see `KINDS`).
    pub kind: &'static str,
    pub what: String,
    pub job_ids: Vec<i64>,
    pub count: usize,
}

const SHOWN: usize = 10;

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.what)?;
        if self.count > 0 {
            let ids: Vec<String> = self.job_ids.iter().map(i64::to_string).collect();
            write!(f, ": job id {}", ids.join(", "))?;
            if self.count > ids.len() {
                write!(f, " and {} more", self.count - ids.len())?;
            }
            write!(
                f,
                " ({} job{})",
                self.count,
                if self.count == 1 { "" } else { "s" }
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

fn plain(kind: &'static str, what: String) -> InputError {
    InputError {
        kind,
        what,
        job_ids: Vec::new(),
        count: 0,
    }
}

/// Fails with the ids of the jobs for which `bad(i)` holds, if any.
fn check(
    w: &Workload,
    kind: &'static str,
    what: &str,
    bad: impl Fn(usize) -> bool,
) -> Result<(), InputError> {
    let offenders: Vec<usize> = (0..w.id.len()).filter(|&i| bad(i)).collect();
    if offenders.is_empty() {
        return Ok(());
    }
    Err(InputError {
        kind,
        what: what.to_string(),
        job_ids: offenders.iter().take(SHOWN).map(|&i| w.id[i]).collect(),
        count: offenders.len(),
    })
}

/// The largest machine the engine replays: it counts processors in 32 bits, and one above the
/// machine's size must still fit (the free count of a pass that has not yet taken a job back).
pub const MAX_MACHINE_SIZE: i64 = i32::MAX as i64 - 1;

/// Every kind an `InputError` can have.
pub const KINDS: [&str; 16] = [
    "columns",
    "too_many_jobs",
    "machine_size",
    "threshold",
    "selection",
    "combination",
    "confidence",
    "no_processors",
    "wider_than_machine",
    "negative_runtime",
    "negative_requested",
    "needs_request",
    "unsorted",
    "duplicate_ids",
    "prediction",
    "order",
];

/// What is wrong with a machine size, if anything: the one place its range is checked (ingest,
/// campaigns, the nightly configuration and every replay ask here).
pub fn machine_size_problem(m: i64) -> Option<String> {
    if !(1..=MAX_MACHINE_SIZE).contains(&m) {
        return Some(format!(
            "machine size must be from 1 to {MAX_MACHINE_SIZE} processors, got {m}"
        ));
    }
    None
}

/// The checks of a configuration that need no jobs: every setting's range and the combinations the
/// engine replays.  Callers validate settings here before any jobs are read.
pub fn check_config(config: &Config) -> Result<(), InputError> {
    if let Some(problem) = machine_size_problem(config.machine_size) {
        return Err(plain("machine_size", problem));
    }
    if let Some(t) = config.threshold {
        if !(0..=MAX_SECONDS).contains(&t) {
            return Err(plain(
                "threshold",
                format!("threshold must be from 0 to {MAX_SECONDS} seconds, got {t}"),
            ));
        }
    }
    if let Some(selection) = &config.selection {
        if let Some(problem) = selection.problem() {
            return Err(plain("selection", problem));
        }
        if config.algorithm != Algorithm::Easy || config.compat != Compat::Canonical {
            return Err(plain(
                "combination",
                "policy selection replays EASY backfilling in canonical semantics only".into(),
            ));
        }
    }
    let easy_canonical = config.algorithm == Algorithm::Easy && config.compat == Compat::Canonical;
    if config.predictor.uses_distributions() && !easy_canonical {
        return Err(plain(
            "combination",
            "distribution predictors (hmm, requested-law) replay EASY backfilling in canonical semantics only"
                .into(),
        ));
    }
    if !(config.usage_half_life.is_finite() && config.usage_half_life > 0.0) {
        return Err(plain(
            "setting",
            format!(
                "the usage half-life must be a positive number of seconds, got {}",
                config.usage_half_life
            ),
        ));
    }
    // Checked whatever the predictor, so that a setting that means nothing here is still refused
    // when it is wrong (it would mean something to the next predictor tried).
    if !(config.confidence > 0.0 && config.confidence < 1.0) {
        return Err(plain(
            "confidence",
            format!(
                "the backfill confidence must be a number in (0, 1), got {}",
                config.confidence
            ),
        ));
    }
    let may_underpredict = matches!(
        config.predictor,
        Predictor::Ave2 | Predictor::Column | Predictor::Eloss(_)
    );
    if config.algorithm == Algorithm::Conservative
        && config.correction == Correction::None
        && may_underpredict
    {
        // A reservation behind a job that outlived its prediction would wait for an instant at
        // which nothing happens; the plan needs a new prediction instead.
        return Err(plain(
            "combination",
            "conservative backfilling with predictions that can be exceeded needs a correction rule".into(),
        ));
    }
    Ok(())
}

/// Every check of a replay: the configuration's, then the jobs'.  Each rejection names the first
/// offending job ids.
pub fn validate(w: &Workload, config: &Config) -> Result<(), InputError> {
    let n = w.id.len();
    let columns = [
        w.submit.len(),
        w.run.len(),
        w.requested.len(),
        w.procs.len(),
        w.user.len(),
    ];
    if columns.iter().any(|&len| len != n) || w.prediction.is_some_and(|p| p.len() != n) {
        return Err(plain("columns", "input columns differ in length".into()));
    }
    if n >= 1 << 28 {
        return Err(plain(
            "too_many_jobs",
            format!("{n} jobs: the engine replays at most 2^28 jobs at once"),
        ));
    }
    check_config(config)?;
    for formula in &config.formulas {
        for column in &formula.columns {
            match w.extra.iter().find(|(name, _)| name == column) {
                None => {
                    return Err(plain(
                        "order",
                        format!(
                            "the formula {} reads {column:?}, which is neither a variable nor a column \
                             given with the jobs",
                            formula.spelled()
                        ),
                    ))
                }
                Some((_, values)) if values.len() != n => {
                    return Err(plain("columns", "input columns differ in length".into()))
                }
                Some(_) => {}
            }
        }
    }
    let m = config.machine_size;
    check(
        w,
        "no_processors",
        "jobs need at least one processor",
        |i| w.procs[i] <= 0,
    )?;
    check(
        w,
        "wider_than_machine",
        &format!("jobs wider than the machine ({m} processors)"),
        |i| w.procs[i] > m,
    )?;
    check(w, "negative_runtime", "negative runtimes", |i| w.run[i] < 0)?;
    check(w, "negative_requested", "negative requested times", |i| {
        w.requested[i] < 0
    })?;
    if config.predictor.uses_distributions() {
        check(
            w,
            "needs_request",
            "distribution predictors need requested times of at least 1 s",
            |i| w.requested[i] < 1,
        )?;
    }
    if matches!(config.predictor, Predictor::Eloss(_)) {
        // The learner's features and its [1 s, request] bounds need a request.
        check(
            w,
            "needs_request",
            "the eloss predictor needs requested times of at least 1 s",
            |i| w.requested[i] < 1,
        )?;
    }
    check(
        w,
        "unsorted",
        "input not sorted by submit time (first job submitted earlier than its predecessor)",
        |i| i > 0 && w.submit[i] < w.submit[i - 1],
    )?;
    // Sorting a copy is much cheaper than hashing every id, and logs are often sorted already.
    let mut ids = w.id.to_vec();
    if !ids.windows(2).all(|pair| pair[0] < pair[1]) {
        ids.sort_unstable();
    }
    let mut dups: Vec<i64> = ids
        .windows(2)
        .filter(|pair| pair[0] == pair[1])
        .map(|pair| pair[0])
        .collect();
    if !dups.is_empty() {
        dups.sort_unstable();
        dups.dedup();
        let count = dups.len();
        dups.truncate(SHOWN);
        return Err(InputError {
            kind: "duplicate_ids",
            what: "duplicate job ids".into(),
            job_ids: dups,
            count,
        });
    }
    match (config.predictor, w.prediction) {
        (Predictor::Column, None) => Err(plain(
            "prediction",
            "the column predictor needs a prediction column".into(),
        )),
        (Predictor::Column, Some(p)) => {
            check(w, "prediction", "negative predicted runtimes", |i| p[i] < 0)
        }
        _ => Ok(()),
    }
}
