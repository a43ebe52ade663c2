//! Parse throughput over the PTX corpus.
//!
//! `cargo bench -p syntax --bench parse` reads every `.ptx` file under the corpus
//! (`$KILN_CORPUS`, else `<workspace>/../shared/corpus`), parses each several times and prints
//! the throughput in MB/s (1 MB = 10^6 bytes) over the best round. Skips with a message if the
//! corpus is absent.

use std::path::{Path, PathBuf};
use std::time::Instant;

fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("KILN_CORPUS") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "ptx") {
            out.push(path);
        }
    }
}

fn main() {
    let dir = corpus_dir();
    if !dir.is_dir() {
        println!(
            "skipping: corpus not found at {} (set KILN_CORPUS)",
            dir.display()
        );
        return;
    }
    let mut files = Vec::new();
    collect(&dir, &mut files);
    let texts: Vec<String> = files
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let rounds = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3u32);
    let mut best = f64::INFINITY;
    let mut errors = 0usize;
    for _ in 0..rounds {
        let start = Instant::now();
        errors = 0;
        for text in &texts {
            let parse = syntax::parse(text);
            errors += parse.errors().len();
            std::hint::black_box(&parse);
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    let mb = bytes as f64 / 1e6;
    println!(
        "parse: {} files, {:.1} MB, best of {rounds} rounds {:.3} s, {:.1} MB/s ({errors} syntax errors)",
        texts.len(),
        mb,
        best,
        mb / best
    );
}
