//! Time the engine alone on int64 column files: `cargo run --release --no-default-features
//! --example replay -- PREFIX MACHINE_SIZE` reads PREFIX.{id,submit,run,requested,procs,user}.bin.
//! Optional environment: REPS (best of), ALGORITHM, POLICY, BACKFILL, SEMANTICS (default: both
//! semantics of EASY-FCFS).
use lakehouse_native::engine::*;
use std::time::Instant;

mod common;
use common::column;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (prefix, m) = (&args[1], args[2].parse().unwrap());
    let cols: Vec<Vec<i64>> = ["id", "submit", "run", "requested", "procs", "user"]
        .iter()
        .map(|n| column(prefix, n))
        .collect();
    let w = Workload {
        id: &cols[0],
        submit: &cols[1],
        run: &cols[2],
        requested: &cols[3],
        procs: &cols[4],
        user: &cols[5],
        prediction: None,
        extra: Vec::new(),
    };
    let chosen = |name: &str| std::env::var(name).ok();
    let semantics: Vec<Compat> = match chosen("SEMANTICS") {
        Some(s) => vec![s.parse().unwrap()],
        None => vec![Compat::Canonical, Compat::Pyss],
    };
    for semantics in semantics {
        let mut c = Config {
            compat: semantics,
            ..Config::easy(m)
        };
        if let Some(a) = chosen("ALGORITHM") {
            c.algorithm = a.parse().unwrap();
        }
        if let Some(p) = chosen("POLICY") {
            c.policy = p.parse().unwrap();
        }
        if let Some(b) = chosen("BACKFILL") {
            c.backfill = b.parse().unwrap();
        }
        let reps: usize = std::env::var("REPS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(1);
        let t = Instant::now();
        let mut out = simulate(&w, &c).unwrap();
        for _ in 1..reps {
            out = simulate(&w, &c).unwrap();
        }
        println!(
            "{semantics:?}: {} jobs in {:.1} ms (checksum {})",
            w.id.len(),
            t.elapsed().as_secs_f64() * 1e3 / reps as f64,
            out.start.iter().sum::<i64>()
        );
    }
}
