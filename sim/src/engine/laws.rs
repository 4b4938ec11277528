//! The run-time laws of a replay with a distribution predictor: where each waiting job's comes from,
//! and the law each running job started with (conditioned on its elapsed time when it is used).

use super::distribution::{Law, Outlook, RunningJob};
use super::hmm_online::{HmmParams, Known, OnlineHmm};
use super::running::Running;
use super::Workload;

pub struct Laws {
    hmm: Option<OnlineHmm>,
    running: Vec<Option<Law>>,
    /// The longest request: no candidate's end lies further ahead.
    horizon: i64,
    ratio: f64,
    /// The probability rule decides every candidate (`HmmParams::every`).
    pub every: bool,
}

impl Laws {
    /// `hmm`: the online model's parameters, or None for one event at each request.
    pub fn new(w: &Workload, hmm: Option<HmmParams>) -> Laws {
        let n = w.id.len();
        let horizon = w.requested.iter().copied().max().unwrap_or(1).max(1);
        let first = w.submit.first().copied().unwrap_or(0);
        Laws {
            ratio: hmm.map_or(2.0, |p| p.ratio),
            every: hmm.is_some_and(|p| p.every),
            hmm: hmm.map(|p| OnlineHmm::new(p, n, horizon, first)),
            running: vec![None; n],
            horizon,
        }
    }

    /// Before a pass at `now`: train if an update is due.
    pub fn before_pass(&mut self, now: i64, w: &Workload, start: &[i64]) {
        if let Some(hmm) = &mut self.hmm {
            hmm.maybe_update(
                now,
                &Known {
                    submit: w.submit,
                    start,
                },
            );
        }
    }

    /// The law of `job` now (waiting).
    pub fn law(&self, job: usize, w: &Workload) -> Law {
        match &self.hmm {
            Some(hmm) => hmm.law(w.submit[job], w.requested[job]),
            None => Law::Point(w.requested[job]),
        }
    }

    /// `job` starts now with this law (already computed by the backfilling rule).
    pub fn starts_with(&mut self, job: usize, law: Law) {
        self.running[job] = Some(law);
    }

    /// `job` started: it keeps its law (computed now unless `starts_with` gave it).
    pub fn started(&mut self, job: usize, w: &Workload) {
        if self.running[job].is_none() {
            self.running[job] = Some(self.law(job, w));
        }
    }

    pub fn completed(&mut self, job: usize, run: i64) {
        self.running[job] = None;
        if let Some(hmm) = &mut self.hmm {
            hmm.completed(job, run);
        }
    }

    /// The outlook of the running jobs at `now`, for counts up to `cap` in multiples of `unit`.
    pub fn outlook(
        &self,
        now: i64,
        running: &Running,
        start: &[i64],
        cap: i64,
        unit: i64,
    ) -> Outlook {
        let jobs: Vec<RunningJob> = running
            .iter()
            .map(|&(_, job, procs)| RunningJob {
                start: start[job],
                procs,
                law: self.running[job].as_ref().expect("a running job has a law"),
            })
            .collect();
        Outlook::new(
            now,
            &jobs,
            cap,
            unit,
            (now + self.horizon) as f64 + 1.0,
            self.ratio,
        )
    }
}
