//! Hand-computed scenarios for the core; the full golden set is in tests/test_sim_golden.py.

use super::*;

pub(super) struct Jobs {
    pub(super) id: Vec<i64>,
    pub(super) submit: Vec<i64>,
    pub(super) run: Vec<i64>,
    pub(super) requested: Vec<i64>,
    pub(super) procs: Vec<i64>,
    pub(super) user: Vec<i64>,
}

/// (submit, run, requested, procs) per job; ids 1..n, one user.
pub(super) fn jobs(rows: &[(i64, i64, i64, i64)]) -> Jobs {
    Jobs {
        id: (1..=rows.len() as i64).collect(),
        submit: rows.iter().map(|r| r.0).collect(),
        run: rows.iter().map(|r| r.1).collect(),
        requested: rows.iter().map(|r| r.2).collect(),
        procs: rows.iter().map(|r| r.3).collect(),
        user: vec![1; rows.len()],
    }
}

pub(super) fn config(m: i64) -> Config {
    Config {
        record_reservations: true,
        ..Config::easy(m)
    }
}

impl Jobs {
    pub(super) fn workload(&self) -> Workload<'_> {
        Workload {
            id: &self.id,
            submit: &self.submit,
            run: &self.run,
            requested: &self.requested,
            procs: &self.procs,
            user: &self.user,
            prediction: None,
            extra: Vec::new(),
        }
    }
}

fn starts(j: &Jobs, c: &Config) -> Vec<i64> {
    simulate(&j.workload(), c).expect("valid input").start
}

#[test]
fn backfill_by_shadow_time_and_by_extra_procs() {
    // 4 procs. A: 3 procs 0..100. B: 4 procs at 1, blocked, shadow 100, extra 0. C: 1 proc, 50 s at 2:
    // ends 52 <= 100, backfilled. D: 1 proc, 200 s at 3: nothing free. At 52 C ends: D would end after
    // 100 and extra is 0, so it waits. At 100 B starts; D starts at B's end, 110.
    let j = jobs(&[
        (0, 100, 100, 3),
        (1, 10, 10, 4),
        (2, 50, 50, 1),
        (3, 200, 200, 1),
    ]);
    assert_eq!(starts(&j, &config(4)), vec![0, 100, 2, 110]);
    // 5 procs: B needs 4 of the 5 free at 100, extra 1, so D (1 proc) backfills at 3.
    assert_eq!(starts(&j, &config(5)), vec![0, 100, 2, 3]);
}

#[test]
fn completions_before_submissions_at_the_same_instant() {
    // 1 proc. A 0..10; B submitted at 10 starts at 10.
    let j = jobs(&[(0, 10, 10, 1), (10, 1, 1, 1)]);
    assert_eq!(starts(&j, &config(1)), vec![0, 10]);
}

#[test]
fn zero_length_jobs_run_at_their_instant() {
    // 1 proc. A runs 0 s at 0, B at 0: A starts and ends at 0, then B starts at 0 in a second pass.
    let j = jobs(&[(0, 0, 5, 1), (0, 3, 5, 1)]);
    assert_eq!(starts(&j, &config(1)), vec![0, 0]);
}

#[test]
fn bad_input_names_the_jobs() {
    let j = jobs(&[(0, 10, 10, 5), (1, 10, 10, 2), (2, -1, 10, 9)]);
    let w = j.workload();
    let e = simulate(&w, &config(4)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "jobs wider than the machine (4 processors): job id 1, 3 (2 jobs)"
    );
    assert!(simulate(&w, &config(0))
        .unwrap_err()
        .to_string()
        .contains("machine size must be from 1 to"));
    assert_eq!(
        simulate(&w, &config(4)).unwrap_err().kind,
        "wider_than_machine"
    );
}

#[test]
fn pyss_a_zero_length_job_started_in_the_pass_counts_for_the_shadow_time() {
    // 4 procs, pyss events, clairvoyant.  A (4 procs) runs 0..10.  B (2 procs, 0 s) at 1, C (3
    // procs, 5 s) at 2, D (1 proc, 2 s) at 3 wait.  At 10 A ends: the pass starts B (ending at 10,
    // its termination still pending) and C blocks (3 > 2 free).  D fits now: C's shadow time is 10,
    // when B's 2 processors come back (4 >= 3, one extra), so D backfills on the extra processor.
    // B's termination then gives a pass that starts C at 10.  (pyss itself never sees a 0 s job: its
    // input repairs make it 1 s; the engine must still not lose B's processors.)
    let j = jobs(&[(0, 10, 10, 4), (1, 0, 5, 2), (2, 5, 5, 3), (3, 2, 5, 1)]);
    let c = Config {
        compat: Compat::Pyss,
        predictor: Predictor::Clairvoyant,
        ..config(4)
    };
    let out = simulate(&j.workload(), &c).expect("valid input");
    assert_eq!(out.start, vec![0, 10, 10, 10]);
    assert_eq!(out.backfilled, vec![false, false, false, true]);
    assert_eq!(out.reservation[2], 10);
}

pub(super) const PREDICTORS: [Predictor; 3] = [
    Predictor::Requested,
    Predictor::Clairvoyant,
    Predictor::Ave2,
];

/// Every correction; `none` last (conservative backfilling refuses it where predictions can be exceeded).
const CORRECTIONS: [Correction; 4] = [
    Correction::Requested,
    Correction::Incremental,
    Correction::Doubling,
    Correction::None,
];

pub(super) const POLICIES: [Policy; 12] = [
    Policy::Fcfs,
    Policy::Lcfs,
    Policy::Spf,
    Policy::Lpf,
    Policy::Sqf,
    Policy::Lqf,
    Policy::Lrf,
    Policy::Srf,
    Policy::Laf,
    Policy::Saf,
    Policy::Lexp,
    Policy::Sexp,
];

/// A small random workload (a linear congruential generator: the crate has no dependencies): many
/// same-instant arrivals, users of few jobs, runtimes often above or below the request.
pub(super) fn random_jobs(seed: u64, n: usize, machine: i64) -> Jobs {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = |bound: i64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % bound as u64) as i64
    };
    let mut submit = 0;
    let rows: Vec<(i64, i64, i64, i64)> = (0..n)
        .map(|_| {
            submit += next(4) * next(30);
            let requested = 1 + next(200);
            (submit, next(260), requested, 1 + next(machine))
        })
        .collect();
    let mut j = jobs(&rows);
    j.user = (0..n).map(|_| next(4)).collect();
    j
}

#[test]
fn queues_kept_in_order_schedule_exactly_as_sorting_at_every_pass() {
    // Where the queue order does not move with the clock, the engine keeps the queue (and, for SJBF,
    // the backfill order) sorted as jobs arrive and start (state.rs: `keeps_order`,
    // `by_prediction`); switched off, it sorts at every pass.  Both must start every job at the same
    // instant, backfilled or not.  Every policy, algorithm and backfill order on each workload, with
    // the predictor, correction, semantics and threshold turning over from case to case.
    let (mut kept, mut backfilled) = (0, 0);
    for seed in 0..24u64 {
        let j = random_jobs(seed, 120, 16);
        let w = j.workload();
        let mut case = seed as usize;
        for policy in POLICIES {
            for algorithm in [Algorithm::Easy, Algorithm::Conservative] {
                for backfill in [Backfill::Queue, Backfill::Sjbf] {
                    case += 1;
                    let c = Config {
                        algorithm,
                        policy,
                        backfill,
                        predictor: PREDICTORS[case % 3],
                        correction: CORRECTIONS[case / 3 % 4],
                        compat: [Compat::Canonical, Compat::Pyss][case / 12 % 2],
                        threshold: case.is_multiple_of(5).then_some(300),
                        ..config(16)
                    };
                    if error::validate(&w, &c).is_err() {
                        continue; // conservative refuses predictions exceeded without correction
                    }
                    let ordered = state::Sim::new(&w, &c);
                    kept += usize::from(ordered.keeps_order);
                    let mut sorting = state::Sim::new(&w, &c);
                    sorting.keeps_order = false;
                    sorting.by_prediction = None;
                    let (a, b) = (ordered.run(), sorting.run());
                    assert_eq!(a.start, b.start, "seed {seed}, {c:?}");
                    assert_eq!(a.backfilled, b.backfilled, "seed {seed}, {c:?}");
                    assert_eq!(a.corrections, b.corrections, "seed {seed}, {c:?}");
                    backfilled += a.backfilled.iter().filter(|&&x| x).count();
                }
            }
        }
    }
    assert!(
        kept > 700 && backfilled > 30_000,
        "too little compared: {kept} kept-order cases, {backfilled} backfills"
    );
}

// A waiting job asks for an earlier slot without giving its own back, and searches share lower
// bounds (fits.rs).  Switched off, every waiting job gives its slot back and is searched again from
// now at every pass, the plain way.  Both must give the same schedules and the same first
// reservations, on 600 random workloads with every policy and the predictors, corrections, semantics
// and thresholds turning over (early completions and corrections included).  The workloads are two
// tests of 300, which the test harness runs at once (one took 12 s of the suite's wall time alone).
fn conservative_keeps_slots_as_replanning_everyone_on(seeds: std::ops::Range<u64>) {
    let mut moved_or_kept = 0;
    for seed in seeds {
        let machine = [4, 16, 64][seed as usize % 3];
        let j = random_jobs(1000 + seed, 150, machine);
        let w = j.workload();
        for (i, policy) in POLICIES.into_iter().enumerate() {
            let case = seed as usize + i;
            let c = Config {
                algorithm: Algorithm::Conservative,
                policy,
                backfill: [Backfill::Queue, Backfill::Sjbf][case % 2],
                predictor: PREDICTORS[case / 2 % 3],
                correction: CORRECTIONS[case / 6 % 3],
                compat: [Compat::Canonical, Compat::Pyss][case / 18 % 2],
                threshold: case.is_multiple_of(7).then_some(200),
                ..config(machine)
            };
            let mut everyone = state::Sim::new(&w, &c);
            everyone.replan_everyone = true;
            let (fast, slow) = (state::Sim::new(&w, &c).run(), everyone.run());
            assert_eq!(fast.start, slow.start, "seed {seed}, {c:?}");
            assert_eq!(fast.backfilled, slow.backfilled, "seed {seed}, {c:?}");
            assert_eq!(fast.reservation, slow.reservation, "seed {seed}, {c:?}");
            moved_or_kept += fast.reservation.iter().filter(|&&r| r >= 0).count();
        }
    }
    assert!(
        moved_or_kept > 250_000,
        "too few reservations compared: {moved_or_kept}"
    );
}

#[test]
fn conservative_keeps_slots_exactly_as_replanning_everyone() {
    conservative_keeps_slots_as_replanning_everyone_on(0..300);
}

#[test]
fn conservative_keeps_slots_exactly_as_replanning_everyone_on_300_more_workloads() {
    conservative_keeps_slots_as_replanning_everyone_on(300..600);
}

#[test]
fn learned_predictions_stay_within_bounds_and_never_look_ahead() {
    // On random workloads, every E-Loss variant, both semantics and both algorithms: each initial
    // prediction is within [1 s, request], and it depends on nothing submitted after its job (the
    // replay of the first k jobs alone gives their predictions the same values).
    let variants = [
        "",
        "under=linear",
        "over=linear,weight=one",
        "weight=log-area,eta=10",
        "weight=log-inverse-area,threshold=60,lambda=0",
        "weight=log-run-procs,over-factor=1",
    ];
    let mut compared = 0;
    for seed in 0..120u64 {
        let machine = [4, 16, 64][seed as usize % 3];
        let j = random_jobs(5000 + seed, 120, machine);
        let loss: Loss = variants[seed as usize % variants.len()].parse().unwrap();
        let c = Config {
            algorithm: [Algorithm::Easy, Algorithm::Conservative][seed as usize / 3 % 2],
            backfill: Backfill::Sjbf,
            predictor: Predictor::Eloss(loss),
            correction: [Correction::Requested, Correction::Incremental][seed as usize / 6 % 2],
            compat: [Compat::Canonical, Compat::Pyss][seed as usize / 12 % 2],
            ..config(machine)
        };
        let full = simulate(&j.workload(), &c).expect("valid input");
        for (i, &p) in full.initial_prediction.iter().enumerate() {
            assert!(
                1 <= p && p <= j.requested[i],
                "seed {seed}: job {i} predicted {p}"
            );
        }
        let k = 40 + seed as usize % 60;
        let prefix = Jobs {
            id: j.id[..k].to_vec(),
            submit: j.submit[..k].to_vec(),
            run: j.run[..k].to_vec(),
            requested: j.requested[..k].to_vec(),
            procs: j.procs[..k].to_vec(),
            user: j.user[..k].to_vec(),
        };
        let head = simulate(&prefix.workload(), &c).expect("valid input");
        // Jobs submitted at the k-th job's second may see each other in either semantics' order.
        let last = j.submit[k - 1];
        let before = (0..k).filter(|&i| j.submit[i] < last).count();
        assert_eq!(
            head.initial_prediction[..before],
            full.initial_prediction[..before],
            "seed {seed}, {c:?}"
        );
        compared += before;
    }
    assert!(compared > 4000, "too few predictions compared: {compared}");
}

#[test]
fn one_event_at_each_request_schedules_exactly_as_easy() {
    // The distribution rule with every law a point at the job's request is EASY's rule (see
    // distribution.rs): the same starts and backfills on random workloads, every policy and both
    // backfill orders, whatever the confidence in (0, 1).
    let mut backfilled = 0;
    for seed in 0..300u64 {
        let machine = [4, 16, 64][seed as usize % 3];
        let j = random_jobs(7000 + seed, 150, machine);
        let mut rows = j.requested.clone();
        rows.iter_mut().for_each(|r| *r = (*r).max(1));
        let j = Jobs {
            requested: rows,
            ..j
        };
        let w = j.workload();
        let policy = POLICIES[seed as usize % POLICIES.len()];
        let backfill = [Backfill::Queue, Backfill::Sjbf][seed as usize / 12 % 2];
        let easy = Config {
            policy,
            backfill,
            record_reservations: false,
            ..config(machine)
        };
        let laws = Config {
            predictor: Predictor::RequestedLaw,
            confidence: [0.05, 0.5, 0.999][seed as usize % 3],
            ..easy.clone()
        };
        let (a, b) = (simulate(&w, &easy).unwrap(), simulate(&w, &laws).unwrap());
        assert_eq!(a.start, b.start, "seed {seed}, {laws:?}");
        assert_eq!(a.backfilled, b.backfilled, "seed {seed}, {laws:?}");
        backfilled += a.backfilled.iter().filter(|&&x| x).count();
    }
    assert!(
        backfilled > 5_000,
        "too few backfills compared: {backfilled}"
    );
}

#[test]
fn hmm_replays_keep_capacity_and_order_and_use_the_model() {
    // Long enough for several daily updates: every job starts once, after its submission, without
    // exceeding the machine; a strict confidence backfills less than a loose one.
    let mut rows = Vec::new();
    let mut state = 42u64;
    let mut next = |bound: i64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % bound as u64) as i64
    };
    let mut submit = 0;
    for _ in 0..3000 {
        submit += next(600);
        let requested = 60 + next(20_000);
        let run = if (submit / 86_400) % 2 == 0 {
            next(120)
        } else {
            next(requested)
        };
        rows.push((submit, run, requested, 1 + next(32)));
    }
    let j = jobs(&rows);
    let w = j.workload();
    let params: HmmParams = "states=2,update=21600".parse().unwrap();
    let mut counts = Vec::new();
    for confidence in [0.01, 0.5] {
        let c = Config {
            predictor: Predictor::Hmm(params),
            confidence,
            record_reservations: false,
            ..config(64)
        };
        let out = simulate(&w, &c).unwrap();
        let mut events: Vec<(i64, i64)> = Vec::new();
        for i in 0..rows.len() {
            assert!(out.start[i] >= j.submit[i]);
            events.push((out.start[i], j.procs[i]));
            events.push((out.end[i], -j.procs[i]));
        }
        events.sort_by_key(|&(t, d)| (t, d));
        let mut used = 0;
        for (_, d) in events {
            used += d;
            assert!(used <= 64);
        }
        counts.push(out.backfilled.iter().filter(|&&b| b).count());
    }
    assert!(
        counts[0] < counts[1],
        "backfills at tau 0.01 and 0.5: {counts:?}"
    );
}

#[test]
fn distribution_predictors_refuse_what_they_cannot_replay() {
    let j = jobs(&[(0, 10, 10, 1)]);
    let w = j.workload();
    for c in [
        Config {
            predictor: Predictor::RequestedLaw,
            confidence: 1.0,
            ..config(4)
        },
        Config {
            predictor: Predictor::RequestedLaw,
            confidence: 0.0,
            ..config(4)
        },
        Config {
            predictor: Predictor::RequestedLaw,
            algorithm: Algorithm::Conservative,
            ..config(4)
        },
        Config {
            predictor: Predictor::RequestedLaw,
            compat: Compat::Pyss,
            ..config(4)
        },
    ] {
        assert!(simulate(&w, &c).is_err(), "{c:?}");
    }
}

/// Each built-in order written as a formula.  LCFS and FCFS read the arrival rank `a`, which is
/// their key (ties by submit time, then job id, as every order's).
const AS_FORMULAS: [(Policy, &str); 12] = [
    (Policy::Fcfs, "min:a"),
    (Policy::Lcfs, "max:a"),
    (Policy::Spf, "min:r"),
    (Policy::Lpf, "max:r"),
    (Policy::Sqf, "min:n"),
    (Policy::Lqf, "max:n"),
    (Policy::Lrf, "max:r/n"),
    (Policy::Srf, "min:r/n"),
    (Policy::Laf, "max:r*n"),
    (Policy::Saf, "min:r*n"),
    (Policy::Lexp, "max:(w+r)/max(r,1)"),
    (Policy::Sexp, "min:(w + r) / max(r, 1)"),
];

#[test]
fn every_built_in_order_written_as_a_formula_schedules_the_same() {
    // Both algorithms, both semantics, both backfill orders, thresholds and predictors turning
    // over; a formula's queue is kept in order or sorted at every pass as the built-in's is, and the
    // sorting path (keys computed as a batch) is compared with the kept one too.
    let mut compared = 0;
    for seed in 0..40u64 {
        let machine = [4, 16, 64][seed as usize % 3];
        let j = random_jobs(5000 + seed, 150, machine);
        let w = j.workload();
        for (i, (policy, text)) in AS_FORMULAS.into_iter().enumerate() {
            let case = seed as usize + i;
            let built_in = Config {
                algorithm: [Algorithm::Easy, Algorithm::Conservative][case % 2],
                policy,
                backfill: [Backfill::Queue, Backfill::Sjbf][case / 2 % 2],
                predictor: PREDICTORS[case / 4 % 3],
                compat: [Compat::Canonical, Compat::Pyss][case / 12 % 2],
                threshold: case.is_multiple_of(5).then_some(300),
                ..config(machine)
            };
            let mut formulas = Vec::new();
            let formula = Config {
                policy: super::parse_policy(text, &mut formulas).unwrap(),
                formulas,
                ..built_in.clone()
            };
            let expected = state::Sim::new(&w, &built_in).run();
            let mut sorting = state::Sim::new(&w, &formula);
            sorting.keeps_order = false;
            sorting.by_prediction = None;
            for got in [state::Sim::new(&w, &formula).run(), sorting.run()] {
                assert_eq!(
                    got.start, expected.start,
                    "seed {seed}, {text}, {built_in:?}"
                );
                assert_eq!(got.backfilled, expected.backfilled, "seed {seed}, {text}");
                assert!(got.key_not_finite.iter().all(|&x| !x));
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 40 * 12 * 2);
}

#[test]
fn a_key_that_is_not_a_number_goes_last_and_is_counted() {
    // One processor: whoever is first in the queue runs next.  Jobs 1 and 2 arrive while job 0
    // runs; `1/(r-5)` is infinite for job 1 (r = 5): it goes after job 2 although its key would be
    // the largest, and it is noted.
    let j = jobs(&[(0, 10, 10, 1), (1, 5, 5, 1), (2, 5, 7, 1)]);
    let mut formulas = Vec::new();
    let c = Config {
        policy: super::parse_policy("max:1/(r-5)", &mut formulas).unwrap(),
        formulas,
        ..config(1)
    };
    let out = super::simulate(&j.workload(), &c).unwrap();
    assert_eq!(out.start, vec![0, 15, 10]);
    assert_eq!(out.key_not_finite, vec![false, true, false]);
}

#[test]
fn the_user_counts_a_formula_reads_follow_the_replay() {
    // uw counts the user's waiting jobs at the pass (this one included), ur the running ones.
    // User 7 has one job running and two waiting; user 8 one waiting: `min:uw` puts user 8 first.
    let mut j = jobs(&[(0, 10, 10, 1), (1, 5, 5, 1), (2, 5, 5, 1), (3, 5, 5, 1)]);
    j.user = vec![7, 7, 7, 8];
    let mut formulas = Vec::new();
    let c = Config {
        policy: super::parse_policy("min:uw + 10*ur", &mut formulas).unwrap(),
        formulas,
        ..config(1)
    };
    let out = super::simulate(&j.workload(), &c).unwrap();
    // At 10: user 7 has 2 waiting, 0 running (its job just ended) -> 2; user 8: 1 -> job 3 first.
    assert_eq!(out.start, vec![0, 15, 20, 10]);
}

#[test]
fn a_hook_computing_a_built_in_orders_keys_schedules_as_it() {
    for seed in 0..20u64 {
        let j = random_jobs(9000 + seed, 120, 16);
        let w = j.workload();
        let spf = |call: &super::HookCall| -> Result<Vec<f64>, String> {
            Ok(call
                .jobs
                .iter()
                .map(|&job| w.requested[job] as f64)
                .collect())
        };
        let built_in = Config {
            policy: Policy::Spf,
            compat: [Compat::Canonical, Compat::Pyss][seed as usize % 2],
            ..config(16)
        };
        let hooked = Config {
            policy: Policy::Hook,
            ..built_in.clone()
        };
        let expected = super::simulate(&w, &built_in).unwrap();
        let got = super::simulate_with_hook(&w, &hooked, Some(&spf), &mut || false)
            .unwrap()
            .unwrap();
        assert_eq!(got.start, expected.start, "seed {seed}");
    }
}

#[test]
fn a_failing_hook_stops_the_replay_with_its_message() {
    let j = random_jobs(1, 200, 4);
    let w = j.workload();
    let c = Config {
        policy: Policy::Hook,
        ..config(4)
    };
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let failing = |call: &super::HookCall| -> Result<Vec<f64>, String> {
        if calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 3 {
            return Err("my rule broke".into());
        }
        Ok(vec![0.0; call.jobs.len()])
    };
    let failed = super::simulate_with_hook(&w, &c, Some(&failing), &mut || false).unwrap_err();
    assert!(matches!(failed, super::Failed::Hook(ref why) if why == "my rule broke"));
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::Relaxed),
        4,
        "no call after the failure"
    );
    let short = |_: &super::HookCall| -> Result<Vec<f64>, String> { Ok(vec![1.0]) };
    let failed = super::simulate_with_hook(&w, &c, Some(&short), &mut || false).unwrap_err();
    assert!(
        matches!(failed, super::Failed::Hook(ref why) if why.contains("one key per waiting job"))
    );
    assert!(super::simulate_with_hook(&w, &c, None, &mut || false).is_err());
}
