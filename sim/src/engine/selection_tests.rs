//! Policy selection (selector.rs): hand-computed periods, and properties on random workloads.

use super::tests::{config, jobs, random_jobs, Jobs, POLICIES, PREDICTORS};
use super::*;

const DAY: i64 = 100;

/// One processor, periods of 100 s from t = 0.
///
/// Period 1: A (0 s, runs 50), B (1 s, 40), C (2 s, 5).  Replayed alone, FCFS runs A, B, C: waits
/// 0 + 49 + 88 = 137; LCFS runs C before B at 50: waits 0 + 54 + 48 = 102.
/// Period 2: A' (100 s, 60), B' (101 s, 10), C' (102 s, 40).  FCFS: A', B' at 160, C' at 170:
/// 0 + 59 + 68 = 127; LCFS: C' at 160, B' at 200: 0 + 58 + 99 = 157.
/// Period 3: D (250 s, 1).
fn three_periods() -> Jobs {
    jobs(&[
        (0, 50, 50, 1),
        (1, 40, 40, 1),
        (2, 5, 5, 1),
        (100, 60, 60, 1),
        (101, 10, 10, 1),
        (102, 40, 40, 1),
        (250, 1, 1, 1),
    ])
}

fn selecting(selector: Selector, policies: &[Policy], decay: f64) -> Config {
    Config {
        selection: Some(Selection {
            selector,
            policies: policies.to_vec(),
            period: DAY,
            decay,
            seed: 0,
        }),
        ..config(1)
    }
}

const FULL: Selector = Selector::Full { noisy: false };
const FCFS_LCFS: [Policy; 2] = [Policy::Fcfs, Policy::Lcfs];

#[test]
fn full_feedback_picks_the_policy_with_the_least_replayed_wait() {
    // Period 1 runs the first candidate (no past).  Period 2: LCFS (102 < 137).  Period 3, decay 1:
    // FCFS 137 + 127 = 264, LCFS 102 + 157 = 259: LCFS again.  In the replay itself period 2 runs
    // LCFS: C' at 160, B' at 200.
    let j = three_periods();
    let out = simulate(&j.workload(), &selecting(FULL, &FCFS_LCFS, 1.0)).unwrap();
    assert_eq!(out.periods, vec![0, 1, 1]);
    assert_eq!(out.start, vec![0, 50, 90, 100, 200, 160, 250]);
    assert_eq!(out.policy, vec![0, 0, 0, 1, 1, 1, 1]);
}

#[test]
fn the_decay_weighs_the_last_period_most() {
    // Decay 0: period 3 sees period 2 alone, where FCFS wins (127 < 157).  Decay 0.5: FCFS
    // 68.5 + 127 = 195.5, LCFS 51 + 157 = 208: FCFS.  Decay 0.9: FCFS 250.3, LCFS 248.8: LCFS.
    let j = three_periods();
    for (decay, third) in [(0.0, 0), (0.5, 0), (0.9, 1), (1.0, 1)] {
        let out = simulate(&j.workload(), &selecting(FULL, &FCFS_LCFS, decay)).unwrap();
        assert_eq!(out.periods, vec![0, 1, third], "decay {decay}");
    }
}

#[test]
fn ties_go_to_the_policy_listed_first() {
    // SQF and LQF order one-processor jobs alike (then by arrival, as FCFS): every period ties.
    let j = three_periods();
    let out = simulate(
        &j.workload(),
        &selecting(FULL, &[Policy::Lqf, Policy::Sqf], 1.0),
    )
    .unwrap();
    assert_eq!(out.periods, vec![0, 0, 0]);
}

#[test]
fn the_threshold_overrides_the_chosen_policy() {
    // Θ = 55 s: nothing starves in period 1 (waits below 55 under both policies), so period 2 runs
    // LCFS as before; but at 160 B' (59 s) and C' (58 s) both starve and go in submit order.
    let j = three_periods();
    let c = Config {
        threshold: Some(55),
        ..selecting(FULL, &FCFS_LCFS, 1.0)
    };
    let out = simulate(&j.workload(), &c).unwrap();
    assert_eq!(out.periods[1], 1);
    assert_eq!(out.start[3..6], [100, 160, 170]);
}

#[test]
fn epsilon_greedy_exploits_untried_policies_first_then_the_lowest_mean_wait() {
    // ε = 0.  Period 1: FCFS (untried, first).  Period 2: LCFS (untried).  The jobs that finished
    // during period 1 waited 0, 49, 88 (mean 45.67).  During period 2, under LCFS, only A' (wait 0)
    // finished (at 160; C' ends at 200, in period 3): mean 0.  Period 3: LCFS.
    let j = three_periods();
    let c = selecting(
        Selector::Egreedy {
            epsilon: 0.0,
            charge: Charge::Finished,
        },
        &FCFS_LCFS,
        1.0,
    );
    let out = simulate(&j.workload(), &c).unwrap();
    assert_eq!(out.periods, vec![0, 1, 1]);
}

#[test]
fn a_bandit_charges_the_jobs_finished_or_the_jobs_started_in_a_period() {
    // ε = 0, one processor.  Period 1 (FCFS, untried): A (0 s, runs 95) starts at 0, B (1 s, 10) at
    // 95 (wait 94) and ends at 105.  Period 2 (LCFS, untried): C (150 s, 10) starts at once.
    // Charged with the jobs that finished: FCFS A (0), LCFS B and C (94 + 0): mean 0 < 47, FCFS.
    // Charged with the jobs that started: FCFS A and B (0 + 94), LCFS C (0): mean 0 < 47, LCFS.
    let j = jobs(&[
        (0, 95, 95, 1),
        (1, 10, 10, 1),
        (150, 10, 10, 1),
        (250, 1, 1, 1),
    ]);
    for (charge, third) in [(Charge::Finished, 0), (Charge::Started, 1)] {
        let c = selecting(
            Selector::Egreedy {
                epsilon: 0.0,
                charge,
            },
            &FCFS_LCFS,
            1.0,
        );
        let out = simulate(&j.workload(), &c).unwrap();
        assert_eq!(out.periods, vec![0, 1, third], "{charge:?}");
    }
}

#[test]
fn epsilon_one_explores_uniformly() {
    // One short job per period for 3,000 periods: each of three policies about a third of them.
    let rows: Vec<(i64, i64, i64, i64)> = (0..3000).map(|k| (k * DAY, 1, 1, 1)).collect();
    let j = jobs(&rows);
    let c = selecting(
        Selector::Egreedy {
            epsilon: 1.0,
            charge: Charge::Finished,
        },
        &[Policy::Fcfs, Policy::Spf, Policy::Lqf],
        1.0,
    );
    let out = simulate(&j.workload(), &c).unwrap();
    assert_eq!(out.periods.len(), 3000);
    for policy in 0..3u8 {
        let share = out.periods.iter().filter(|&&p| p == policy).count();
        assert!((900..1100).contains(&share), "policy {policy}: {share}");
    }
}

#[test]
fn bad_selections_are_refused() {
    let j = three_periods();
    let w = j.workload();
    let bad = |edit: &dyn Fn(&mut Selection)| {
        let mut c = selecting(FULL, &FCFS_LCFS, 1.0);
        edit(c.selection.as_mut().unwrap());
        simulate(&w, &c).unwrap_err().to_string()
    };
    assert!(bad(&|s| s.policies.clear()).contains("at least one"));
    assert!(bad(&|s| s.policies.push(Policy::Fcfs)).contains("listed twice"));
    assert!(bad(&|s| s.period = 0).contains("period must be positive"));
    assert!(bad(&|s| s.decay = 1.5).contains("decay"));
    assert!(bad(&|s| s.selector = Selector::Egreedy {
        epsilon: -0.1,
        charge: Charge::Finished,
    })
    .contains("epsilon"));
    let c = Config {
        algorithm: Algorithm::Conservative,
        ..selecting(FULL, &FCFS_LCFS, 1.0)
    };
    assert!(simulate(&w, &c).unwrap_err().to_string().contains("EASY"));
}

/// Every job starts once, not before its submission, and the busy processors never exceed the
/// machine.
fn check_schedule(j: &Jobs, out: &Outcome, machine: i64, what: &str) {
    let mut changes: Vec<(i64, i64)> = Vec::new();
    for i in 0..j.id.len() {
        assert!(out.start[i] >= j.submit[i], "{what}: job {i} starts early");
        let run = j.run[i].min(j.requested[i]);
        assert_eq!(out.end[i], out.start[i] + run, "{what}: job {i}");
        changes.push((out.start[i], j.procs[i]));
        changes.push((out.end[i], -j.procs[i]));
    }
    // Ends before starts at one instant.
    changes.sort_by_key(|&(t, delta)| (t, delta));
    let mut busy = 0;
    for (t, delta) in changes {
        busy += delta;
        assert!(busy <= machine, "{what}: {busy} busy at {t}");
    }
}

#[test]
fn switching_policies_keeps_every_job_and_the_machine_sound() {
    // On 500 random workloads with periods short enough to switch often: the schedule is sound;
    // keeping the queue in order across switches gives the schedule that sorting at every pass
    // gives; and a single candidate equals the plain replay of that policy.
    let selectors = [
        Selector::Full { noisy: false },
        Selector::Full { noisy: true },
        Selector::Egreedy {
            epsilon: 0.3,
            charge: Charge::Finished,
        },
        Selector::Egreedy {
            epsilon: 0.3,
            charge: Charge::Started,
        },
    ];
    let mut switches = 0;
    for seed in 0..500u64 {
        let machine = [4, 16, 64][seed as usize % 3];
        let j = random_jobs(9000 + seed, 120, machine);
        let w = j.workload();
        let case = seed as usize;
        let candidates: Vec<Policy> = (0..2 + case % 4)
            .map(|k| POLICIES[(case * 5 + k * 7) % 12])
            .collect();
        let mut candidates_once = candidates.clone();
        candidates_once.dedup();
        let c = Config {
            backfill: [Backfill::Queue, Backfill::Sjbf][case % 2],
            predictor: PREDICTORS[case / 2 % 3],
            correction: [Correction::Requested, Correction::Incremental][case / 6 % 2],
            threshold: case.is_multiple_of(5).then_some(300),
            selection: Some(Selection {
                selector: selectors[case % 3],
                policies: candidates_once.clone(),
                period: [150, 400, 1000][case / 3 % 3],
                decay: [1.0, 0.5][case / 9 % 2],
                seed,
            }),
            ..config(machine)
        };
        let what = format!("seed {seed}, {c:?}");
        let kept = state::Sim::new(&w, &c).run();
        check_schedule(&j, &kept, machine, &what);
        switches += kept.periods.windows(2).filter(|p| p[0] != p[1]).count();
        let mut sorting = state::Sim::new(&w, &c);
        sorting.always_sort = true;
        sorting.keeps_order = false;
        sorting.by_prediction = None;
        let sorted = sorting.run();
        assert_eq!(kept.start, sorted.start, "{what}");
        assert_eq!(kept.backfilled, sorted.backfilled, "{what}");

        let policy = candidates_once[0];
        let mut alone = c.clone();
        alone.selection.as_mut().unwrap().policies = vec![policy];
        let plain = Config {
            policy,
            selection: None,
            ..c.clone()
        };
        let (a, b) = (simulate(&w, &alone).unwrap(), simulate(&w, &plain).unwrap());
        assert_eq!(a.start, b.start, "{what}");
        assert_eq!(a.backfilled, b.backfilled, "{what}");
    }
    assert!(
        switches > 2000,
        "too few policy switches exercised: {switches}"
    );
}

#[test]
fn a_switch_at_a_quiet_boundary_starts_what_the_new_order_allows() {
    // 2 processors.  X (1 proc) runs 0..1000; W (2 procs) waits behind it from 10; N (1 proc,
    // requests 2000 s, runs 500) from 20 cannot backfill under FCFS (it would delay W).  Replayed
    // alone, FCFS waits 990 + 990 s (N after W), SQF 990 + 0 (N at 20, done by 1000), so period 2
    // runs SQF: N heads the queue and starts at the boundary, 100, though nothing else happens then.
    let j = jobs(&[(0, 1000, 1000, 1), (10, 10, 10, 2), (20, 500, 2000, 1)]);
    let c = Config {
        selection: Some(Selection {
            selector: FULL,
            policies: vec![Policy::Fcfs, Policy::Sqf],
            period: DAY,
            decay: 1.0,
            seed: 0,
        }),
        ..config(2)
    };
    let out = simulate(&j.workload(), &c).unwrap();
    assert_eq!(out.periods[..2], [0, 1]);
    assert_eq!(out.start, vec![0, 1000, 100]);
}
