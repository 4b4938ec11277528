//! The compiled hot loops of lakehouse: the backfilling simulator and the SWF tokenizer.
//! Pure Rust (tested with `cargo test --no-default-features`); `python.rs` is the thin PyO3 layer.
pub mod engine;
#[cfg(feature = "python")]
mod python;
pub mod swf;
