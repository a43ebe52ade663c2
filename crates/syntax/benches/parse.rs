//! Parse throughput over the PTX corpus.
//!
//! `cargo bench -p syntax --bench parse` reads every `.ptx` file under the corpus
//! (`$KILN_CORPUS`, else `<workspace>/../shared/corpus`), parses each several times and prints
//! the throughput in MB/s (1 MB = 10^6 bytes) over the best round, by wall-clock time and, on
//! Linux, by the CPU time the process used (which stays meaningful when other jobs load the
//! machine). Skips with a message if the corpus is absent.

use std::time::Instant;

/// User + system CPU seconds of this process, from `/proc/self/stat` (fields 14 and 15, in
/// clock ticks of 1/100 s, the value of `getconf CLK_TCK` on Linux x86-64). `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may contain spaces: split after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3, so fields 14 and 15 are at indices 11 and 12.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// A kernel with `n` instructions using `n` distinct registers.
fn distinct_registers(n: usize) -> String {
    let mut text = String::from(".visible .entry k()\n{\n");
    for i in 0..n {
        text.push_str(&format!("\tmov.u32 %r{i}, {i};\n"));
    }
    text.push_str("}\n");
    text
}

/// Throughput on one synthetic file at two sizes: a tree builder that interned with a weak
/// hash went superlinear here (the 160k figure fell far below the 10k one).
fn scaling() {
    for n in [10_000usize, 160_000] {
        let text = distinct_registers(n);
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let start = Instant::now();
            std::hint::black_box(syntax::parse(&text));
            best = best.min(start.elapsed().as_secs_f64());
        }
        println!(
            "scaling: {n} distinct registers ({:.1} MB): {:.1} MB/s",
            text.len() as f64 / 1e6,
            text.len() as f64 / 1e6 / best
        );
    }
}

fn main() {
    scaling();
    let Some(dir) = test_support::corpus_or_skip() else {
        return;
    };
    let files = test_support::ptx_files(&dir);
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
    let mut best_cpu = f64::INFINITY;
    let mut errors = 0usize;
    for _ in 0..rounds {
        let start = Instant::now();
        let cpu_start = cpu_seconds();
        errors = 0;
        for text in &texts {
            let parse = syntax::parse(text);
            errors += parse.errors().len();
            std::hint::black_box(&parse);
        }
        best = best.min(start.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu_start, cpu_seconds()) {
            best_cpu = best_cpu.min(b - a);
        }
    }
    let mb = bytes as f64 / 1e6;
    println!(
        "parse: {} files, {:.1} MB, best of {rounds} rounds {:.3} s, {:.1} MB/s ({errors} syntax errors)",
        texts.len(),
        mb,
        best,
        mb / best
    );
    if best_cpu.is_finite() && best_cpu > 0.0 {
        println!(
            "parse: by CPU time {best_cpu:.2} s, {:.1} MB/s per CPU-second",
            mb / best_cpu
        );
    }
}
