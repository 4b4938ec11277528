//! What compilation alone buys: the in-repo Python EASY-FCFS (`lakehouse.sim.reference`) ported line
//! for line (same heap, sorted list and waiting list), timed on the same int64 column files as the
//! `replay` example: `cargo run --release --no-default-features --example reference_port -- PREFIX M`
//! reads PREFIX.{submit,run,requested,procs}.bin.  A target of 100x the Python implementation (now
//! retired) led here: this port reaches the same 16-30x as the engine on the small logs, which shows the
//! Python reference is already near what its algorithm costs (its heap and bisect run in C).
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

mod common;
use common::column;

/// Start `job` now: it leaves `free`, ends (as it runs) in `ends`, and (as planned) in `running`.
fn launch(job: usize, now: i64, sizes: (i64, i64, i64), state: &mut State) {
    let (procs, planned, actual) = sizes;
    state.free -= procs;
    state.start[job] = now;
    state.ends.push(Reverse((now + actual, job)));
    let key = (now + planned, job);
    let at = state.running.binary_search(&key).unwrap_or_else(|at| at);
    state.running.insert(at, key);
}

struct State {
    free: i64,
    start: Vec<i64>,
    ends: BinaryHeap<Reverse<(i64, usize)>>,
    running: Vec<(i64, usize)>,
}

/// Start times, as `easy_fcfs_starts` computes them (requested times as predictions).
fn easy_fcfs(submit: &[i64], run: &[i64], requested: &[i64], procs: &[i64], m: i64) -> Vec<i64> {
    let n = submit.len();
    let actual: Vec<i64> = (0..n).map(|i| run[i].min(requested[i])).collect();
    let mut s = State {
        free: m,
        start: vec![-1; n],
        ends: BinaryHeap::new(),
        running: Vec::new(),
    };
    let (mut waiting, mut still): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    let mut next = 0;
    while next < n || !s.ends.is_empty() {
        let submission = submit.get(next).copied().unwrap_or(i64::MAX);
        let now = submission.min(s.ends.peek().map_or(i64::MAX, |e| e.0 .0));
        while let Some(&Reverse((end, job))) = s.ends.peek() {
            if end != now {
                break;
            }
            s.ends.pop();
            s.free += procs[job];
            let planned_end = s.start[job] + requested[job];
            let at = s.running.binary_search(&(planned_end, job)).unwrap();
            s.running.remove(at);
        }
        while next < n && submit[next] == now {
            waiting.push(next);
            next += 1;
        }
        let mut head = 0;
        while head < waiting.len() && procs[waiting[head]] <= s.free {
            let job = waiting[head];
            launch(job, now, (procs[job], requested[job], actual[job]), &mut s);
            head += 1;
        }
        waiting.drain(..head);
        if waiting.len() < 2 {
            continue;
        }
        let first = waiting[0];
        let (mut available, mut shadow) = (s.free, None);
        for &(end, job) in &s.running {
            if shadow.is_some_and(|t| end > t) {
                break;
            }
            available += procs[job];
            if shadow.is_none() && available >= procs[first] {
                shadow = Some(end);
            }
        }
        let shadow = shadow.expect("the first job fits the machine");
        let mut extra = available - procs[first];
        still.clear();
        still.push(first);
        for &job in &waiting[1..] {
            let in_time = now + requested[job] <= shadow;
            if procs[job] <= s.free && (in_time || procs[job] <= extra) {
                if !in_time {
                    extra -= procs[job];
                }
                launch(job, now, (procs[job], requested[job], actual[job]), &mut s);
            } else {
                still.push(job);
            }
        }
        std::mem::swap(&mut waiting, &mut still);
    }
    s.start
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (prefix, m) = (&args[1], args[2].parse().unwrap());
    let [submit, run, requested, procs] =
        ["submit", "run", "requested", "procs"].map(|name| column(prefix, name));
    let mut best = f64::INFINITY;
    let mut starts = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        starts = easy_fcfs(&submit, &run, &requested, &procs, m);
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} jobs in {:.1} ms, best of 20 (checksum {})",
        submit.len(),
        best * 1e3,
        starts.iter().sum::<i64>()
    );
}
