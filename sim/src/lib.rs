//! The compiled hot loops of lakehouse: the backfilling simulator, the SWF tokenizer and the packing
//! heuristics.
//! Pure Rust (tested with `cargo test --no-default-features`); `python.rs` is the thin PyO3 layer.
pub mod engine;
pub mod packing;
#[cfg(feature = "python")]
mod python;
pub mod swf;
