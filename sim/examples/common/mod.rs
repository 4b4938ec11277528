//! What the examples share: reading an int64 column file (PREFIX.<name>.bin, as
//! `benchmarks.bench.dump_columns` writes them).

pub fn column(prefix: &str, name: &str) -> Vec<i64> {
    let bytes = std::fs::read(format!("{prefix}.{name}.bin")).expect("column file");
    bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
