//! Semantic-check throughput over the corpus (parse excluded): MB of PTX per second through
//! `hir::check_module`. Needs `../shared/corpus` (or `$KILN_CORPUS`); skips with a message
//! otherwise. Run: `cargo bench -p hir --bench check`.

use std::path::{Path, PathBuf};
use std::time::Instant;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

fn main() {
    let dir = std::env::var_os("KILN_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    let mut list = Vec::new();
    files(&dir.join("ptx"), &mut list);
    if list.is_empty() {
        println!("skipping: no corpus at {} (set KILN_CORPUS)", dir.display());
        return;
    }
    let texts: Vec<String> = list
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let parses: Vec<_> = texts.iter().map(|t| syntax::parse(t)).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut best = f64::MAX;
    let mut diags = 0;
    for _ in 0..3 {
        let t = Instant::now();
        diags = 0;
        for p in &parses {
            diags += hir::check_module(&p.tree()).len();
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "hir: {} files, {:.1} MB checked in {:.3} s = {:.1} MB/s ({diags} diagnostics)",
        texts.len(),
        bytes as f64 / 1e6,
        best,
        bytes as f64 / 1e6 / best
    );
}
