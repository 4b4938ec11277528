//! The event loop shared by both algorithms and both semantics.

use super::fits::Fits;
use super::laws::Laws;
use super::learner::{self, Learner};
use super::order::{
    order_is_kept, order_queue, queue_key, Facts, FormulaFacts, OrderHook, QueueKey,
};
use super::predict::{Correction, History};
use super::profile::Profile;
use super::queue::Queue;
use super::running::Running;
use super::selector::{Charge, Chooser};
use super::usage::Usage;
use super::{Algorithm, Backfill, Compat, Config, Outcome, Policy, Predictor, Workload};
use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The ordering's facts of a `Sim`, field by field (a method would borrow the whole `Sim`, where
/// the callers change its queue at the same time).
macro_rules! facts {
    ($sim:expr) => {
        Facts {
            submit: $sim.w.submit,
            requested: $sim.w.requested,
            procs: $sim.w.procs,
            arrival: &$sim.arrival,
            formulas: (!$sim.config.formulas.is_empty() || $sim.hook.is_some()).then(|| {
                FormulaFacts {
                    formulas: &$sim.config.formulas,
                    id: $sim.w.id,
                    predicted: &$sim.out.initial_prediction,
                    user_slot: &$sim.user_slot,
                    user_running: &$sim.user_running,
                    user_waiting: &$sim.user_waiting,
                    user_usage: &$sim.user_usage,
                    all_usage: &$sim.all_usage,
                    usage_half_life: $sim.config.usage_half_life,
                    not_finite: &$sim.not_finite,
                    scratch: &$sim.formula_scratch,
                    columns: &$sim.formula_columns,
                    hook: $sim.hook,
                    hook_error: &$sim.hook_error,
                }
            }),
        }
    };
}
pub(super) use facts;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A running job reached its predicted end but is still running.
    PredictionOver,
    Submission,
    Termination,
}

/// Events are handled in (time, rank, counter) order; the rank of each kind depends on the semantics.
/// All of it, and the job, is packed in one u128 so that the heap moves and compares 16 bytes:
/// time (sign-flipped, 64 bits) | rank (2) | counter (30) | job (32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u128);

/// Counters and job indices must fit their fields (checked with the input: at most 2^28 jobs).
const COUNTER_BITS: u32 = 30;

impl Key {
    fn new(time: i64, rank: u8, counter: u64, job: usize) -> Key {
        debug_assert!(counter < 1 << COUNTER_BITS && rank < 4);
        let time = (time as u64) ^ (1 << 63);
        let tail = (u64::from(rank) << 62) | (counter << 32) | job as u64;
        Key((u128::from(time) << 64) | u128::from(tail))
    }

    fn time(self) -> i64 {
        (((self.0 >> 64) as u64) ^ (1 << 63)) as i64
    }

    fn rank(self) -> u8 {
        ((self.0 >> 62) & 3) as u8
    }

    fn job(self) -> usize {
        (self.0 as u32) as usize
    }
}

const NOT_YET: i64 = -1;
/// How often (in instants or events) a replay asks whether to stop; the asker keeps it cheap (the
/// Python binding looks at the clock and takes the interpreter's lock only every 50 ms).
const STOP_CHECK_EVERY: u32 = 64;

pub struct Sim<'a> {
    pub(super) w: &'a Workload<'a>,
    pub(super) config: &'a Config,
    /// What each job actually runs: min(runtime, requested).
    pub(super) run: Vec<i64>,
    pub(super) arrival: Vec<u32>,
    /// Current prediction (duration) of each job.
    pub(super) predicted: Vec<i64>,
    pub(super) out: Outcome,
    pub(super) free: i64,
    /// The waiting jobs in policy order; kept in order as they arrive where `order_is_kept`, else
    /// sorted at each pass.
    pub(super) queue: Queue,
    /// The queue policy in force (the configured one, or the selector's choice for this period).
    pub(super) policy: Policy,
    chooser: Option<Chooser<'a>>,
    pub(super) keeps_order: bool,
    /// EASY-SJBF on a queue kept in order: the waiting jobs again, in backfill order (predicted
    /// runtime, then queue order).  A waiting job's prediction never changes, so this order too is
    /// kept as jobs arrive and start instead of sorting the queue at every pass (which cost
    /// CEA-Curie's EASY++ replay 10 s).
    pub(super) by_prediction: Option<Queue>,
    /// Running jobs by predicted end.
    pub(super) running: Running,
    events: BinaryHeap<Reverse<Key>>,
    counter: u64,
    next_submission: usize,
    /// AVE2, E-Loss and formulas that read users: each job's user as a dense index into `history`
    /// and the per-user counts.
    pub(super) user_slot: Vec<u32>,
    history: Vec<History>,
    /// Formulas reading `ur` / `uw`: each user's running and waiting jobs (else empty).
    pub(super) user_running: Vec<u32>,
    pub(super) user_waiting: Vec<u32>,
    /// Formulas reading `uu` / `un`: each user's decayed usage (else empty), and every user's.
    pub(super) user_usage: Vec<Usage>,
    pub(super) all_usage: Usage,
    /// Formulas: the jobs whose key was once not a finite number, and the columns of their keys.
    pub(super) not_finite: Vec<Cell<bool>>,
    pub(super) formula_scratch: RefCell<Vec<Vec<f64>>>,
    /// Each formula's columns of the jobs (checked present by `validate`).
    pub(super) formula_columns: Vec<Vec<&'a [f64]>>,
    /// The caller's queue order (`Policy::Hook`), and why it failed if it did (the replay stops).
    pub(super) hook: Option<OrderHook<'a>>,
    pub(super) hook_error: RefCell<Option<String>>,
    /// The E-Loss predictor's model and features.
    learner: Option<Learner>,
    /// Distribution predictors: the laws of the waiting and running jobs.
    pub(super) laws: Option<Laws>,
    /// Conservative backfilling: the plan, and each waiting job's current reservation.
    pub(super) profile: Profile,
    pub(super) reserved: Vec<Option<i64>>,
    pub(super) replan: bool,
    /// Processors handed back to the plan so far (summed over every interval freed), and the total
    /// at which each waiting job's slot may have become improvable (see `conservative.rs`).
    pub(super) freed: i64,
    pub(super) recheck_at: Vec<i64>,
    /// Where each running job's block ends in the conservative plan: its start + planned length, or,
    /// after a re-plan, at least the instant after it (an overdue job holds its processors for one
    /// more second).  Its termination gives back exactly what the plan holds.
    pub(super) block_end: Vec<i64>,
    /// Where nothing fits, learnt by the searches of the current pass.
    pub(super) fits: Fits,
    /// Where in the plan the previous waiting job's slot was (see `Profile::index_near`).
    pub(super) near: usize,
    /// Never keep the queue in order, sort it at every pass (even after a policy switch): the plain
    /// way, which the tests compare.
    pub(super) always_sort: bool,
    /// Give back and search again every waiting job's slot at every pass, the plain way to do it
    /// (the tests compare).
    pub(super) replan_everyone: bool,
}

impl<'a> Sim<'a> {
    pub fn new(w: &'a Workload<'a>, config: &'a Config) -> Self {
        let n = w.id.len();
        let run: Vec<i64> = (0..n).map(|i| w.run[i].min(w.requested[i])).collect();
        // Tie-break among equal submit times: job id (canonical) or input order (pyss: file order).
        let mut by_arrival: Vec<usize> = (0..n).collect();
        let in_order = (1..n).all(|i| (w.submit[i - 1], w.id[i - 1]) < (w.submit[i], w.id[i]));
        if config.compat == Compat::Canonical && !in_order {
            by_arrival.sort_by_key(|&i| (w.submit[i], w.id[i]));
        }
        let chooser = config
            .selection
            .as_ref()
            .map(|s| Chooser::new(s, w.submit.first().copied().unwrap_or(0)));
        let policy = chooser.as_ref().map_or(config.policy, Chooser::policy);
        let keeps_order = order_is_kept(policy, config.threshold, &config.formulas);
        let mut arrival = vec![0u32; n];
        for (rank, &i) in by_arrival.iter().enumerate() {
            arrival[i] = rank as u32;
        }
        let counts_users = config.formulas.iter().any(|f| f.reads_users);
        let (user_slot, users) = match config.predictor {
            Predictor::Ave2 | Predictor::Eloss(_) => dense_users(w.user),
            _ if counts_users => dense_users(w.user),
            _ => (Vec::new(), 0),
        };
        let per_user = || vec![0u32; if counts_users { users } else { 0 }];
        let keeps_usage = config.formulas.iter().any(|f| f.reads_usage);
        let learner = match config.predictor {
            Predictor::Eloss(loss) => {
                let pyss = config.compat == Compat::Pyss;
                Some(Learner::new(loss, pyss, n, users))
            }
            _ => None,
        };
        let laws = match config.predictor {
            Predictor::Hmm(params) => Some(Laws::new(w, Some(params))),
            Predictor::RequestedLaw => Some(Laws::new(w, None)),
            _ => None,
        };
        Sim {
            w,
            config,
            laws,
            run,
            arrival,
            predicted: vec![0; n],
            out: Outcome {
                start: vec![NOT_YET; n],
                end: vec![NOT_YET; n],
                backfilled: vec![false; n],
                corrections: vec![0; n],
                initial_prediction: vec![0; n],
                reservation: vec![NOT_YET; n],
                policy: vec![0; n],
                periods: Vec::new(),
                key_not_finite: Vec::new(),
            },
            free: config.machine_size,
            queue: Queue::default(),
            policy,
            chooser,
            keeps_order,
            by_prediction: (config.algorithm == Algorithm::Easy
                && config.backfill == Backfill::Sjbf
                && keeps_order)
                .then(Queue::default),
            running: Running::default(),
            events: BinaryHeap::new(),
            counter: n as u64,
            next_submission: 0,
            user_slot,
            history: vec![History::default(); users],
            user_running: per_user(),
            user_waiting: per_user(),
            user_usage: vec![Usage::default(); if keeps_usage { users } else { 0 }],
            all_usage: Usage::default(),
            not_finite: (0..n).map(|_| Cell::new(false)).collect(),
            formula_scratch: RefCell::default(),
            formula_columns: config
                .formulas
                .iter()
                .map(|f| {
                    f.columns
                        .iter()
                        .map(|name| {
                            w.extra
                                .iter()
                                .find(|(n, _)| n == name)
                                .map_or(&[][..], |&(_, values)| values)
                        })
                        .collect()
                })
                .collect(),
            hook: None,
            hook_error: RefCell::default(),
            learner,
            profile: Profile::new(config.machine_size),
            reserved: vec![None; n],
            freed: 0,
            recheck_at: vec![0; n],
            block_end: vec![0; n],

            replan: false,
            fits: Fits::default(),
            near: 0,
            replan_everyone: false,
            always_sort: false,
        }
    }

    fn rank(&self, kind: Kind) -> u8 {
        // pyss: PredictionIsOver < Submission < Termination at equal times.  Canonical: completions
        // first (so submissions at t see them, e.g. in AVE2), then submissions; corrections anywhere
        // before the single pass.
        match (self.config.compat, kind) {
            (Compat::Pyss, Kind::PredictionOver) | (Compat::Canonical, Kind::Termination) => 0,
            (_, Kind::Submission) => 1,
            _ => 2,
        }
    }

    fn kind_of(&self, rank: u8) -> Kind {
        match (self.config.compat, rank) {
            (_, 1) => Kind::Submission,
            (Compat::Pyss, 0) | (Compat::Canonical, 2) => Kind::PredictionOver,
            _ => Kind::Termination,
        }
    }

    fn push(&mut self, time: i64, kind: Kind, job: usize) {
        let key = Key::new(time, self.rank(kind), self.counter, job);
        self.counter += 1;
        self.events.push(Reverse(key));
    }

    /// The next event: the earlier of the heap's top and the next submission (submissions are not
    /// queued; pyss creates them first, so their counters are their input positions).
    fn next_event(&self) -> Option<Key> {
        let queued = self.events.peek().map(|&Reverse(key)| key);
        let i = self.next_submission;
        let submission = (i < self.w.id.len())
            .then(|| Key::new(self.w.submit[i], self.rank(Kind::Submission), i as u64, i));
        match (queued, submission) {
            (Some(q), Some(s)) => Some(q.min(s)),
            (q, s) => q.or(s),
        }
    }

    fn pop_event(&mut self) -> Option<(Key, Kind, usize)> {
        let next = self.next_event()?;
        let kind = self.kind_of(next.rank());
        if kind == Kind::Submission {
            self.next_submission += 1;
        } else {
            self.events.pop();
        }
        Some((next, kind, next.job()))
    }

    #[cfg(test)]
    pub fn run(self) -> Outcome {
        self.run_until(&mut || false).expect("never stopped")
    }

    /// The replay, asking `stop` every `STOP_CHECK_EVERY` instants whether to give up (None then).
    pub fn run_until(self, stop: &mut dyn FnMut() -> bool) -> Option<Outcome> {
        self.run_reporting(stop).unwrap_or(None)
    }

    /// `run_until`, or why the hook failed (the replay stops at the pass where it did).
    pub fn run_reporting(
        mut self,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<Option<Outcome>, String> {
        let finished = match self.config.compat {
            Compat::Pyss => self.run_per_event(stop),
            Compat::Canonical => self.run_per_instant(stop),
        };
        if let Some(why) = self.hook_error.take() {
            return Err(why);
        }
        if let Some(chooser) = self.chooser.take() {
            self.out.periods = chooser.chosen;
        }
        self.out.key_not_finite = std::mem::take(&mut self.not_finite)
            .into_iter()
            .map(Cell::into_inner)
            .collect();
        Ok(finished.then_some(self.out))
    }

    /// Canonical: every event at one instant, then one pass.  False if stopped.
    fn run_per_instant(&mut self, stop: &mut dyn FnMut() -> bool) -> bool {
        let mut instants = 0u32;
        while let Some(first) = self.next_event() {
            instants = instants.wrapping_add(1);
            if (instants.is_multiple_of(STOP_CHECK_EVERY) && stop()) || self.hook_failed() {
                return false;
            }
            let now = first.time();
            if let Some(boundary) = self.chooser.as_ref().map(|c| c.boundary) {
                if boundary <= now {
                    let changed = self.cross_boundary();
                    if boundary < now {
                        // Nothing happens at the boundary itself but the order may have changed:
                        // a pass then, as at any instant, and on to the next boundary or event.
                        if changed {
                            self.pass(boundary);
                        }
                        continue;
                    }
                }
            }
            // Same-instant arrivals take their places by arrival rank (job id): as they enter a
            // queue kept in order, or when the pass sorts the queue.
            while self.next_event().is_some_and(|e| e.time() == now) {
                let (_, kind, job) = self.pop_event().expect("peeked");
                self.handle(kind, job, now);
            }
            self.pass(now);
        }
        true
    }

    /// pyss: one event at a time; a pass after each submission and termination, none after a
    /// correction.  Its EASY scheduler skips the pass at a submission when the new job does not fit
    /// now (its SJBF / EASY++ schedulers do not), which matters once corrections exist.
    fn run_per_event(&mut self, stop: &mut dyn FnMut() -> bool) -> bool {
        let mut events = 0u32;
        while let Some((key, kind, job)) = self.pop_event() {
            events = events.wrapping_add(1);
            if (events.is_multiple_of(STOP_CHECK_EVERY) && stop()) || self.hook_failed() {
                return false;
            }
            let now = key.time();
            self.handle(kind, job, now);
            let pass = match kind {
                Kind::PredictionOver => false,
                Kind::Termination => true,
                Kind::Submission => {
                    self.config.backfill == Backfill::Sjbf
                        || self.config.algorithm == Algorithm::Conservative
                        || self.w.procs[job] <= self.free
                }
            };
            if pass {
                self.pass(now);
            }
        }
        true
    }

    fn hook_failed(&self) -> bool {
        self.hook.is_some() && self.hook_error.borrow().is_some()
    }

    fn handle(&mut self, kind: Kind, job: usize, now: i64) {
        match kind {
            Kind::Submission => {
                let column = self.w.prediction.map(|p| p[job]);
                let history = self
                    .user_slot
                    .get(job)
                    .map(|&slot| &self.history[slot as usize]);
                let p = match &mut self.learner {
                    Some(learner) => {
                        let facts = learner_job(self.w, &self.user_slot, job);
                        learner.predict(&facts, now, &self.out.start, self.w.procs)
                    }
                    None => self.config.predictor.initial(
                        self.w.requested[job],
                        self.run[job],
                        column,
                        history,
                    ),
                };
                self.predicted[job] = p;
                self.out.initial_prediction[job] = p;
                if !self.user_waiting.is_empty() {
                    self.user_waiting[self.user_slot[job] as usize] += 1;
                }
                let procs = self.w.procs[job];
                if self.keeps_order {
                    let in_queue = queue_key(self.policy, facts!(self));
                    self.queue.insert_by(job, procs, p, in_queue);
                } else {
                    self.queue.push(job, procs, p);
                }
                if let Some(index) = &mut self.by_prediction {
                    let key = backfill_key(self.policy, facts!(self), &self.out.initial_prediction);
                    index.insert_by(job, procs, p, key);
                }
            }
            Kind::Termination => {
                self.free += self.w.procs[job];
                if !self.user_running.is_empty() {
                    self.user_running[self.user_slot[job] as usize] -= 1;
                }
                self.used(job, now, -self.w.procs[job]);
                if let Some(chooser) = &mut self.chooser {
                    chooser.observed(Charge::Finished, self.out.start[job] - self.w.submit[job]);
                }
                let predicted_end = self.out.start[job] + self.predicted[job];
                self.running.remove(predicted_end, job);
                if let Some(&slot) = self.user_slot.get(job) {
                    self.history[slot as usize].completed(self.run[job]);
                }
                if let Some(learner) = &mut self.learner {
                    let facts = learner_job(self.w, &self.user_slot, job);
                    learner.completed(&facts, now, self.run[job]);
                }
                if let Some(laws) = &mut self.laws {
                    laws.completed(job, self.run[job]);
                }
                if self.config.algorithm == Algorithm::Conservative && !self.replan {
                    // It ended before the end of its block in the plan: give the rest back.  (Not
                    // start + planned length: a re-plan may have held an overdue job a second
                    // longer, and a second left blocked is an instant no event visits, where a job
                    // reserved just after it would wait for ever.)
                    self.profile
                        .add(now, self.block_end[job], self.w.procs[job]);
                    self.freed += self.w.procs[job];
                }
            }
            Kind::PredictionOver => {
                let start = self.out.start[job];
                if start + self.predicted[job] != now || self.out.end[job] <= now {
                    return; // stale
                }
                let old = self.predicted[job];
                let capped = self.config.compat == Compat::Canonical;
                let new = self.config.correction.next(
                    old,
                    self.out.initial_prediction[job],
                    self.w.requested[job],
                    self.out.corrections[job],
                    capped,
                );
                self.out.corrections[job] += 1;
                self.predicted[job] = new;
                self.running.remove(start + old, job);
                self.running.insert(start + new, job, self.w.procs[job]);
                if self.run[job] > new {
                    self.push(start + new, Kind::PredictionOver, job);
                }
                // A longer running job may collide with reservations: plan again at the next pass.
                self.replan = true;
            }
        }
    }

    /// Length of a job's slot in the conservative plan (a zero-length job still holds its
    /// processors for the instant it starts).
    pub(super) fn planned(&self, job: usize) -> i64 {
        self.predicted[job].max(1)
    }

    pub(super) fn facts(&self) -> Facts<'_> {
        facts!(self)
    }

    fn pass(&mut self, now: i64) {
        if let Some(laws) = &mut self.laws {
            laws.before_pass(now, self.w, &self.out.start);
        }
        if self.queue.is_empty() {
            return;
        }
        if self.config.algorithm == Algorithm::Easy
            && !self.keeps_order
            && !self.config.record_reservations
            && self.queue.next_fitting(0, self.free_now(now)).is_none()
        {
            // No waiting job fits in the free processors: an EASY pass would start nothing (heads
            // and backfilled jobs must all fit now), so the queue need not be sorted for it.
            return;
        }
        let mut queue = std::mem::take(&mut self.queue);
        if !self.keeps_order {
            order_queue(
                &mut queue,
                self.policy,
                self.config.threshold,
                &self.facts(),
                now,
            );
        }
        match self.config.algorithm {
            Algorithm::Easy => self.easy_pass(&mut queue, now),
            Algorithm::Conservative => {
                queue.compact_all();
                self.conservative_pass(&mut queue, now)
            }
        }
        queue.compact();
        self.queue = queue;
    }

    /// Processors a pass may hand out now.  pyss plans with predicted ends: a job predicted (and due)
    /// to end now counts as free even before its termination event, which comes later at this
    /// instant.  Canonical mode has handled every event of the instant already.
    pub(super) fn free_now(&self, now: i64) -> i64 {
        if self.config.compat == Compat::Canonical {
            return self.free;
        }
        let due: i64 = self
            .running
            .ending_by(now)
            .iter()
            .filter(|&&(_, job, _)| self.due_now(job, now))
            .map(|&(_, _, procs)| procs)
            .sum();
        self.free + due
    }

    /// pyss: a running job whose predicted and actual ends are both now (its termination is pending).
    pub(super) fn due_now(&self, job: usize, now: i64) -> bool {
        self.config.compat == Compat::Pyss && self.out.end[job] <= now
    }

    pub(super) fn start(&mut self, job: usize, now: i64, backfilled: bool) {
        let procs = self.w.procs[job];
        self.free -= procs;
        // In pyss mode processors of jobs ending at this instant may be handed out before their
        // termination event is handled, so the count dips below zero until then.
        assert!(
            self.free >= 0 || self.config.compat == Compat::Pyss,
            "capacity exceeded starting job {}",
            self.w.id[job]
        );
        if !self.user_running.is_empty() {
            let slot = self.user_slot[job] as usize;
            self.user_waiting[slot] -= 1;
            self.user_running[slot] += 1;
        }
        self.used(job, now, procs);
        self.out.start[job] = now;
        self.out.end[job] = now + self.run[job];
        self.block_end[job] = now + self.planned(job);
        self.out.backfilled[job] = backfilled;
        if let Some(chooser) = &mut self.chooser {
            self.out.policy[job] = chooser.current as u8;
            chooser.observed(Charge::Started, now - self.w.submit[job]);
        }
        if let Some(learner) = &mut self.learner {
            learner.started(&learner_job(self.w, &self.user_slot, job));
        }
        if let Some(laws) = &mut self.laws {
            laws.started(job, self.w);
        }
        self.running.insert(now + self.predicted[job], job, procs);
        self.push(now + self.run[job], Kind::Termination, job);
        if self.config.correction != Correction::None && self.run[job] > self.predicted[job] {
            self.push(now + self.predicted[job], Kind::PredictionOver, job);
        }
    }

    /// `job`'s user runs `procs` more (or fewer) processors from `now` on (formulas reading `uu`/`un`).
    fn used(&mut self, job: usize, now: i64, procs: i64) {
        if let Some(usage) = self
            .user_usage
            .get_mut(self.user_slot.get(job).copied().unwrap_or(0) as usize)
        {
            let half_life = self.config.usage_half_life;
            usage.change(now, half_life, procs);
            self.all_usage.change(now, half_life, procs);
        }
    }

    /// End the current period; the selector chooses the next one's policy.  True if it changed:
    /// the queue is then put in the new order (and the SJBF index rebuilt for it).
    fn cross_boundary(&mut self) -> bool {
        let chooser = self.chooser.as_mut().expect("a selection");
        chooser.cross(self.w, self.config);
        let policy = chooser.policy();
        if policy == self.policy {
            return false;
        }
        self.policy = policy;
        self.keeps_order = !self.always_sort
            && order_is_kept(policy, self.config.threshold, &self.config.formulas);
        self.queue.compact_all();
        if self.keeps_order {
            self.queue.sort_by_key(queue_key(policy, facts!(self)));
        }
        if self.config.backfill == Backfill::Sjbf {
            // (Selections replay EASY only, where SJBF keeps this index whenever the order is kept.)
            self.by_prediction = self.keeps_order.then(|| {
                let key = backfill_key(policy, facts!(self), &self.out.initial_prediction);
                let mut waiting = self.queue.jobs().to_vec();
                waiting.sort_by_key(|&job| key(job));
                let mut index = Queue::default();
                for job in waiting {
                    index.push(job, self.w.procs[job], self.predicted[job]);
                }
                index
            });
        }
        true
    }

    pub(super) fn note_reservation(&mut self, job: usize, at: i64) {
        if self.out.reservation[job] == NOT_YET {
            self.out.reservation[job] = at;
        }
    }
}

/// Order of the SJBF index: prediction at submission (a started job keeps its place as a tombstone
/// until compaction, while corrections change its current prediction), then queue order.
pub(super) fn backfill_key<'k>(
    policy: Policy,
    facts: Facts<'k>,
    initial_prediction: &'k [i64],
) -> impl Fn(usize) -> (i64, QueueKey) + 'k {
    let in_queue = queue_key(policy, facts);
    move |j| (initial_prediction[j], in_queue(j))
}

/// Dense user indices (0..users) for the per-user history of AVE2.
fn dense_users(user: &[i64]) -> (Vec<u32>, usize) {
    let mut distinct = user.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let slots = user
        .iter()
        .map(|u| distinct.binary_search(u).expect("present") as u32)
        .collect();
    (slots, distinct.len())
}

/// What the learner reads of a job (users are numbered densely whenever there is a learner).
fn learner_job(w: &Workload, user_slot: &[u32], job: usize) -> learner::Job {
    learner::Job {
        index: job,
        user: user_slot[job] as usize,
        submit: w.submit[job],
        requested: w.requested[job],
        procs: w.procs[job],
    }
}
