//! The learned predictor inside a replay: each job's features at its submission, from the simulated
//! state (its user's completed and running jobs), a prediction from the model, and a step of the
//! model when the job completes.  Features are those of the published SC'15 predictor;
//! docs/predictions.md lists them, with the published quirks that only `pyss` replays keep.

use super::eloss::{Loss, Nag};

/// 19 base features (a constant first), the 120 products of features 1-16 two by two and the
/// squares of features 1-18.
const BASE: usize = 19;
const PAIRED: usize = 16;
pub const DIM: usize = BASE + PAIRED * (PAIRED - 1) / 2 + (BASE - 1);
// `Nag::fit` keeps one scratch value per feature on the stack, sized for the largest model.
const _: () = assert!(DIM <= super::eloss::MAX_DIM);

#[derive(Clone, Default)]
struct User {
    /// The user's last three completed jobs, latest first: (submit, runtime).
    last: [Option<(i64, i64)>; 3],
    completed: f64,
    sum_runtimes: f64,
    sum_procs: f64,
    last_end: Option<i64>,
    /// The user's jobs running now.
    running: Vec<usize>,
}

pub struct Learner {
    loss: Loss,
    /// Reproduce the published predictor's quirks (see `features`).
    pyss: bool,
    model: Nag,
    users: Vec<User>,
    /// Each job's features from its submission until it completes.
    x: Vec<Option<Box<[f64; DIM]>>>,
}

/// What the learner reads of the replay.
pub struct Job {
    pub index: usize,
    /// The job's user, as a dense index (the replay's own numbering of users).
    pub user: usize,
    pub submit: i64,
    pub requested: i64,
    pub procs: i64,
}

impl Learner {
    pub fn new(loss: Loss, pyss: bool, jobs: usize, users: usize) -> Self {
        Learner {
            loss,
            pyss,
            model: Nag::new(DIM),
            users: vec![User::default(); users],
            x: vec![None; jobs],
        }
    }

    /// The prediction for a job submitted now, in whole seconds within [1, requested].
    pub fn predict(&mut self, job: &Job, now: i64, start: &[i64], procs: &[i64]) -> i64 {
        let x = self.features(job, now, start, procs);
        let raw = self.model.predict(&x[..]);
        // The published predictor takes |w.x| (a negative prediction becomes a positive one).
        let raw = if self.pyss { raw.abs() } else { raw };
        self.x[job.index] = Some(x);
        // `as` truncates toward zero and saturates, as int() of a float does within i64.
        (raw as i64).max(1).min(job.requested)
    }

    pub fn started(&mut self, job: &Job) {
        self.users[job.user].running.push(job.index);
    }

    /// A job completed at `now` after running `run` seconds: the user's history, then a step of
    /// the model on the features it had at submission.
    pub fn completed(&mut self, job: &Job, now: i64, run: i64) {
        let user = &mut self.users[job.user];
        let at = user.running.iter().position(|&j| j == job.index);
        user.running
            .swap_remove(at.expect("a completed job was running"));
        user.last = [Some((job.submit, run)), user.last[0], user.last[1]];
        user.completed += 1.0;
        user.sum_runtimes += run as f64;
        user.sum_procs += job.procs as f64;
        user.last_end = Some(now);
        let x = self.x[job.index]
            .take()
            .expect("features stored at submission");
        let weight = self.loss.weight_of(job.procs, run);
        // One NaN or infinity would poison every weight of the model for the rest of the replay;
        // the weights and features are built finite, and this keeps it so whatever the input.
        if weight.is_finite() && x.iter().all(|v| v.is_finite()) {
            self.model.fit(&self.loss, &x[..], run as f64, weight);
        }
    }

    fn features(&self, job: &Job, now: i64, start: &[i64], procs: &[i64]) -> Box<[f64; DIM]> {
        let user = &self.users[job.user];
        let requested = job.requested as f64;
        let mut x = Box::new([0.0; DIM]);
        x[0] = 1.0;
        // The last three runtimes.  pyss: a completed job whose submit + runtime is not after now
        // counts as now - submit (time since its submission, not its runtime), and no job counts
        // as the request.  Canonical: the runtime, and 0 for none.  Both capped at the request.
        for k in 0..3 {
            let last = match (user.last[k], self.pyss) {
                (Some((submit, run)), true) if submit + run <= now => now - submit,
                (Some((_, run)), _) => run,
                (None, true) => job.requested,
                (None, false) => 0,
            };
            x[1 + k] = last.min(job.requested) as f64;
        }
        x[4] = requested;
        // AVE2 and AVE3.  pyss: 0.33 for a third, and the request when there is no history.
        let known = user.last.iter().filter(|l| l.is_some()).count();
        if self.pyss {
            (x[5], x[6]) = match known {
                3 => (0.5 * (x[1] + x[2]), 0.33 * (x[1] + x[2] + x[3])),
                2 => (0.5 * (x[1] + x[2]), 0.5 * (x[1] + x[2])),
                1 => (x[1], x[1]),
                _ => (requested, requested),
            };
        } else {
            (x[5], x[6]) = (0.5 * (x[1] + x[2]), (x[1] + x[2] + x[3]) / 3.0);
        }
        if user.completed != 0.0 {
            x[7] = user.sum_runtimes / user.completed;
        }
        // Time since the user's last completion (pyss: a completion at time 0 counts as none).
        x[8] = match user.last_end {
            Some(end) if !(self.pyss && end == 0) => (now - end) as f64,
            _ => 0.0,
        };
        if user.completed != 0.0 {
            let mean_procs = user.sum_procs / user.completed;
            x[9] = job.procs as f64 / mean_procs;
        }
        // The user's running jobs.  Jobs started at this very instant are not counted: in pyss
        // they start after the submissions of the instant; in canonical replays none has yet.
        let (mut count, mut busy, mut elapsed, mut longest) = (0i64, 0i64, 0i64, 0i64);
        for &j in user.running.iter().filter(|&&j| start[j] < now) {
            count += 1;
            busy += procs[j];
            elapsed += now - start[j];
            longest = longest.max(now - start[j]);
        }
        (x[10], x[11], x[12], x[13]) = (busy as f64, elapsed as f64, count as f64, longest as f64);
        let day = 2.0 * std::f64::consts::PI * (job.submit.rem_euclid(86_400) as f64) / 86_400.0;
        let week = 2.0 * std::f64::consts::PI * (job.submit.rem_euclid(604_800) as f64) / 604_800.0;
        (x[14], x[15], x[16], x[17]) = (day.cos(), day.sin(), week.cos(), week.sin());
        x[18] = job.procs as f64;
        let mut i = BASE;
        for a in 1..=PAIRED {
            for b in a + 1..=PAIRED {
                x[i] = x[a] * x[b];
                i += 1;
            }
        }
        for k in 1..BASE {
            x[i] = x[k] * x[k];
            i += 1;
        }
        debug_assert_eq!(i, DIM);
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(index: usize, submit: i64, requested: i64, procs: i64) -> Job {
        Job {
            index,
            user: 0,
            submit,
            requested,
            procs,
        }
    }

    /// One user: job 0 (2 procs) runs from 10 and ends at 60 after 50 s; job 1 (4 procs) is
    /// submitted at 50 while job 0 runs; job 2 (1 proc, 1000 s requested) at 100.
    fn replay(pyss: bool) -> Vec<[f64; DIM]> {
        let procs = [2, 4, 1];
        let mut start = [-1, -1, -1];
        let mut l = Learner::new(Loss::default(), pyss, 3, 1);
        let mut seen = Vec::new();
        let j0 = job(0, 0, 100, 2);
        seen.push(*l.features(&j0, 0, &start, &procs));
        l.predict(&j0, 0, &start, &procs);
        start[0] = 10;
        l.started(&j0);
        let j1 = job(1, 50, 200, 4);
        seen.push(*l.features(&j1, 50, &start, &procs));
        l.predict(&j1, 50, &start, &procs);
        l.completed(&j0, 60, 50);
        let j2 = job(2, 100, 1000, 1);
        seen.push(*l.features(&j2, 100, &start, &procs));
        seen
    }

    #[test]
    fn features_by_hand_canonical() {
        let x = replay(false);
        // Job 0: nothing known; its own request, processors and the time of day of second 0.
        let first: Vec<f64> = x[0][..19].to_vec();
        let mut expected = vec![0.0; 19];
        (
            expected[0],
            expected[4],
            expected[14],
            expected[16],
            expected[18],
        ) = (1.0, 100.0, 1.0, 1.0, 2.0);
        assert_eq!(first, expected);
        // Job 1: job 0 runs (since 10): 2 processors busy, 40 s elapsed, 1 job, longest 40 s.
        assert_eq!(&x[1][10..14], &[2.0, 40.0, 1.0, 40.0]);
        // Job 2: job 0 completed after 50 s, at 60.
        let j2 = &x[2];
        assert_eq!(
            &j2[1..10],
            &[50.0, 0.0, 0.0, 1000.0, 25.0, 50.0 / 3.0, 50.0, 40.0, 0.5]
        );
        assert_eq!(&j2[10..14], &[0.0, 0.0, 0.0, 0.0], "job 1 never started");
        let day = 2.0 * std::f64::consts::PI * 100.0 / 86_400.0;
        assert_eq!((j2[14], j2[15]), (day.cos(), day.sin()));
        // Products: x1 x2 first, then the squares, x18^2 last.
        assert_eq!(j2[19], 50.0 * 0.0);
        assert_eq!(j2[20], 50.0 * 0.0);
        assert_eq!(j2[19 + 2], 50.0 * 1000.0, "x1 x4");
        assert_eq!(j2[DIM - 18], 50.0 * 50.0, "x1^2");
        assert_eq!(j2[DIM - 1], 1.0, "x18^2");
    }

    #[test]
    fn features_by_hand_pyss_quirks() {
        let x = replay(true);
        // No history: the request stands for the last runtimes and their means.
        assert_eq!(&x[0][1..7], &[100.0, 100.0, 100.0, 100.0, 100.0, 100.0]);
        // Job 2: job 0 (submitted at 0, ran 50 s) counts as 100 - 0 = 100 s (time since its
        // submission); the two missing runtimes are the request; one known job: both means = x1.
        assert_eq!(&x[2][1..7], &[100.0, 1000.0, 1000.0, 1000.0, 100.0, 100.0]);
    }

    #[test]
    fn jobs_started_this_instant_do_not_count_as_running() {
        let procs = [3, 1];
        let start = [20, -1];
        let mut l = Learner::new(Loss::default(), true, 2, 1);
        l.started(&job(0, 0, 50, 3));
        let x = l.features(&job(1, 20, 50, 1), 20, &start, &procs);
        assert_eq!(&x[10..14], &[0.0, 0.0, 0.0, 0.0]);
        let x = l.features(&job(1, 21, 50, 1), 21, &start, &procs);
        assert_eq!(&x[10..14], &[3.0, 1.0, 1.0, 1.0]);
    }
}
