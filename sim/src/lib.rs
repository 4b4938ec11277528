//! The compiled hot loops of lakehouse: the backfilling simulator and the SWF tokenizer.
//! Pure Rust (tested with `cargo test --no-default-features`); `python.rs` is the thin PyO3 layer.
pub mod engine;
pub mod swf;
#[cfg(feature = "python")]
mod python;
