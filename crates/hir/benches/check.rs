//! Semantic-check throughput over the corpus (parse excluded): MB of PTX per second through
//! `hir::check_module`. Needs `../shared/corpus` (or `$KILN_CORPUS`); skips with a message
//! otherwise. Run: `cargo bench -p hir --bench check`.

use std::time::Instant;

fn main() {
    let Some(dir) = test_support::corpus_or_skip() else {
        return;
    };
    let list = test_support::ptx_files(&dir.join("ptx"));
    if list.is_empty() {
        println!(
            "skipping: no .ptx files under {}",
            dir.join("ptx").display()
        );
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
