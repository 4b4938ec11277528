//! The engine's build identity: the crate's version and a digest of its sources
//! (`LAKEHOUSE_ENGINE_DIGEST`).  Stored results name the build that made them, and a campaign
//! replays again the runs another build stored: from outside, nobody can tell whether a change to
//! the engine alters its schedules.  FNV-1a, not std's hasher: the digest of the same sources must
//! be the same on every machine and toolchain.
use std::fs;
use std::path::{Path, PathBuf};

fn sources(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(folder).expect("the crate's src folder is readable") {
        let path = entry.expect("a readable folder entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    let src = Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut hash = 0xcbf2_9ce4_8422_2325;
    for file in &files {
        // The path inside src/ (with / on every system) and the text: a renamed module counts too.
        let name = file.strip_prefix(&src).expect("found under src");
        let name = name.to_string_lossy().replace('\\', "/");
        hash = fnv1a(hash, name.as_bytes());
        hash = fnv1a(hash, &[0]);
        hash = fnv1a(hash, &fs::read(file).expect("a readable source file"));
        hash = fnv1a(hash, &[0]);
    }
    println!("cargo:rustc-env=LAKEHOUSE_ENGINE_DIGEST={hash:016x}");
}
