//! Input checks.  Every rejection names the offending job ids, so a user can find them in the lake.

use super::{Algorithm, Config, Correction, Predictor, Semantics, Workload};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
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

fn plain(what: String) -> InputError {
    InputError {
        what,
        job_ids: Vec::new(),
        count: 0,
    }
}

/// Fails with the ids of the jobs for which `bad(i)` holds, if any.
fn check(w: &Workload, what: &str, bad: impl Fn(usize) -> bool) -> Result<(), InputError> {
    let offenders: Vec<usize> = (0..w.id.len()).filter(|&i| bad(i)).collect();
    if offenders.is_empty() {
        return Ok(());
    }
    Err(InputError {
        what: what.to_string(),
        job_ids: offenders.iter().take(SHOWN).map(|&i| w.id[i]).collect(),
        count: offenders.len(),
    })
}

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
        return Err(plain("input columns differ in length".into()));
    }
    if n >= 1 << 28 {
        return Err(plain(format!(
            "{n} jobs: the engine replays at most 2^28 jobs at once"
        )));
    }
    let m = config.machine_size;
    if m <= 0 {
        return Err(plain(format!("machine size must be positive, got {m}")));
    }
    if m >= i64::from(i32::MAX) {
        return Err(plain(format!(
            "machine size {m} is too large (at most {})",
            i32::MAX - 1
        )));
    }
    if config.threshold.is_some_and(|t| t < 0) {
        return Err(plain(
            "the starvation threshold must not be negative".into(),
        ));
    }
    if let Some(selection) = &config.selection {
        if let Some(problem) = selection.problem() {
            return Err(plain(problem));
        }
        if config.algorithm != Algorithm::Easy || config.semantics != Semantics::Canonical {
            return Err(plain(
                "policy selection replays EASY backfilling in canonical semantics only".into(),
            ));
        }
    }
    check(w, "jobs need at least one processor", |i| w.procs[i] <= 0)?;
    check(
        w,
        &format!("jobs wider than the machine ({m} processors)"),
        |i| w.procs[i] > m,
    )?;
    check(w, "negative runtimes", |i| w.run[i] < 0)?;
    check(w, "negative requested times", |i| w.requested[i] < 0)?;
    if config.predictor.uses_distributions() {
        if config.algorithm != Algorithm::Easy || config.semantics != Semantics::Canonical {
            return Err(plain(
                "distribution predictors (hmm, requested-law) replay EASY backfilling in canonical semantics only"
                    .into(),
            ));
        }
        if !(config.confidence > 0.0 && config.confidence < 1.0) {
            return Err(plain(format!(
                "the backfill confidence must be in (0, 1), not {}",
                config.confidence
            )));
        }
        check(
            w,
            "distribution predictors need requested times of at least 1 s",
            |i| w.requested[i] < 1,
        )?;
    }
    if matches!(config.predictor, Predictor::Eloss(_)) {
        // The learner's features and its [1 s, request] bounds need a request.
        check(
            w,
            "the eloss predictor needs requested times of at least 1 s",
            |i| w.requested[i] < 1,
        )?;
    }
    check(
        w,
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
            what: "duplicate job ids".into(),
            job_ids: dups,
            count,
        });
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
            "conservative backfilling with predictions that can be exceeded needs a correction rule".into(),
        ));
    }
    match (config.predictor, w.prediction) {
        (Predictor::Column, None) => Err(plain(
            "the column predictor needs a prediction column".into(),
        )),
        (Predictor::Column, Some(p)) => check(w, "negative predicted runtimes", |i| p[i] < 0),
        _ => Ok(()),
    }
}
