//! The compiled hot loops of lakehouse: the backfilling simulator, the SWF tokenizer, the packing
//! heuristics and the passes of the workload HMM.
//! Pure Rust (tested with `cargo test --no-default-features`); `python.rs` is the thin PyO3 layer.
pub mod engine;
pub mod hmm;
pub mod packing;
#[cfg(feature = "python")]
mod python;
pub mod swf;
