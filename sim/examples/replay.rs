//! Time the engine alone on int64 column files: `cargo run --release --no-default-features
//! --example replay -- PREFIX MACHINE_SIZE` reads PREFIX.{id,submit,run,requested,procs,user}.bin.
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
    };
    for semantics in [Semantics::Canonical, Semantics::Pyss] {
        let c = Config {
            semantics,
            ..Config::easy(m)
        };
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
