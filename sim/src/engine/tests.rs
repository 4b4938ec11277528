//! Hand-computed scenarios for the core; the full golden set is in tests/test_sim_golden.py.

use super::*;

struct Jobs {
    id: Vec<i64>,
    submit: Vec<i64>,
    run: Vec<i64>,
    requested: Vec<i64>,
    procs: Vec<i64>,
    user: Vec<i64>,
}

/// (submit, run, requested, procs) per job; ids 1..n, one user.
fn jobs(rows: &[(i64, i64, i64, i64)]) -> Jobs {
    Jobs {
        id: (1..=rows.len() as i64).collect(),
        submit: rows.iter().map(|r| r.0).collect(),
        run: rows.iter().map(|r| r.1).collect(),
        requested: rows.iter().map(|r| r.2).collect(),
        procs: rows.iter().map(|r| r.3).collect(),
        user: vec![1; rows.len()],
    }
}

fn config(m: i64) -> Config {
    Config {
        record_reservations: true,
        ..Config::easy(m)
    }
}

impl Jobs {
    fn workload(&self) -> Workload<'_> {
        Workload {
            id: &self.id,
            submit: &self.submit,
            run: &self.run,
            requested: &self.requested,
            procs: &self.procs,
            user: &self.user,
            prediction: None,
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
        .contains("machine size must be positive"));
}
