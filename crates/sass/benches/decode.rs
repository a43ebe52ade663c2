//! Decoder throughput: decodes and prints every word of the committed sm_90 probe seeds
//! (instruction words from ptxas output) repeatedly and prints instructions per second.

use std::time::Instant;

/// CPU time this thread has run, in seconds (`/proc/thread-self/schedstat`; Linux), so that
/// the figure does not depend on how loaded the shared machine is. `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn main() {
    let table = sass::table("sm_90").expect("sm_90 table");
    let seeds = include_str!("../tables/sm_90.seeds");
    let words: Vec<u128> = seeds
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| u128::from_str_radix(l, 16).expect("hex word"))
        .collect();
    assert!(!words.is_empty(), "no seeds");
    // Warm-up (parses the table).
    let mut known = 0usize;
    for &w in &words {
        known += usize::from(table.decode(w, 0).is_some());
    }
    let target = 20_000_000usize;
    let rounds = target.div_ceil(words.len());
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    let mut n = 0usize;
    for r in 0..rounds {
        for (i, &w) in words.iter().enumerate() {
            if let Some(d) = table.decode(w, (i * 16) as u64) {
                n += d.values.len() + r % 2;
            }
        }
    }
    let dt = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds().zip(cpu0).map(|(a, b)| a - b);
    let decoded = rounds * words.len();
    println!(
        "decode: {decoded} words in {dt:.3} s wall = {:.1} M instructions/s ({known}/{} seeds known, checksum {n})",
        decoded as f64 / dt / 1e6,
        words.len()
    );
    if let Some(cpu) = cpu {
        println!(
            "decode: {cpu:.3} s of CPU time = {:.1} M instructions/s per core",
            decoded as f64 / cpu / 1e6
        );
    }
    let start = Instant::now();
    let mut bytes = 0usize;
    let prounds = rounds / 10 + 1;
    for _ in 0..prounds {
        for (i, &w) in words.iter().enumerate() {
            bytes += table.print(w, (i * 16) as u64, &|_| None).len();
        }
    }
    let dt = start.elapsed().as_secs_f64();
    println!(
        "decode+print: {:.1} M instructions/s ({bytes} bytes of text)",
        (prounds * words.len()) as f64 / dt / 1e6
    );
}
