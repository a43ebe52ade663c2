//! `cargo xtask bench compile --arch sm_XX [--dir DIR] [--runs N] [--kiln PATH]`: kiln against
//! ptxas, whole process, cold, on the same inputs. `--kiln` times another kiln binary (an
//! earlier build kept for a before/after figure) instead of building this one.
//!
//! The inputs are the corpus files (for the arch, as the corpus stages select them) that kiln
//! compiles completely — the only ones on which the comparison is like for like. Each file is
//! compiled by `ptxas -arch=<arch> FILE -o OUT` and by `kiln ptxas -arch=<arch> FILE -o OUT`
//! (the release build, which this command builds first), each `--runs` times (default 3),
//! alternating; the best wall time of each is kept. With `/usr/bin/time` present, the peak
//! resident memory of each process is measured too. Prints per-file rows for the slowest files
//! and `RESULT bench-compile <arch> files=<n> kiln_s=<f> ptxas_s=<f> speedup=<f>
//! kiln_max_rss_mb=<f> ptxas_max_rss_mb=<f> median_file_speedup=<f>`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::corpus;

const USAGE: &str =
    "usage: cargo xtask bench compile --arch sm_XX [--dir DIR] [--runs N] [--kiln PATH]";

pub fn run(args: &[String]) -> Result<(), String> {
    let Some((what, rest)) = args.split_first() else {
        return Err(USAGE.into());
    };
    if what != "compile" {
        return Err(format!("unknown benchmark `{what}`\n{USAGE}"));
    }
    let mut arch = None;
    let mut dir = corpus::default_dir();
    let mut runs = 3usize;
    let mut kiln_path: Option<PathBuf> = None;
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs a value"))
        };
        match a.as_str() {
            "--arch" => arch = Some(value()?),
            "--dir" => dir = Some(PathBuf::from(value()?)),
            "--runs" => runs = value()?.parse().map_err(|_| "bad --runs".to_string())?,
            "--kiln" => kiln_path = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let arch = arch.ok_or(USAGE)?;
    let dir = dir.ok_or("bench: no corpus (../shared/corpus or KILN_CORPUS)")?;
    let ptxas = crate::oracle::tool("ptxas")?;
    let kiln = match kiln_path {
        Some(k) => k,
        None => {
            let root = corpus::workspace_root();
            let status = Command::new(env!("CARGO"))
                .args(["build", "--release", "-q", "-p", "kiln-cli"])
                .current_dir(&root)
                .status()
                .map_err(|e| e.to_string())?;
            if !status.success() {
                return Err("bench: building kiln (release) failed".into());
            }
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join("target"))
                .join("release/kiln")
        }
    };
    let time_tool = Path::new("/usr/bin/time");
    let measure_rss = time_tool.is_file();
    let tmp = corpus::cache_dir("bench");
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let out = tmp.join("out.cubin");
    let rss_file = tmp.join("rss.txt");

    // One timed run: (wall seconds, peak RSS in KiB if measured, success).
    let timed = |program: &Path, pre: &[&str], file: &Path| -> (f64, Option<u64>, bool) {
        let mut cmd = if measure_rss {
            let mut c = Command::new(time_tool);
            c.arg("-f").arg("%M").arg("-o").arg(&rss_file).arg(program);
            c
        } else {
            Command::new(program)
        };
        cmd.args(pre)
            .arg(format!("-arch={arch}"))
            .arg(file)
            .arg("-o")
            .arg(&out);
        let start = Instant::now();
        let ok = cmd.output().map(|o| o.status.success()).unwrap_or(false);
        let secs = start.elapsed().as_secs_f64();
        let rss = measure_rss
            .then(|| std::fs::read_to_string(&rss_file).ok())
            .flatten()
            .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()));
        (secs, rss, ok)
    };

    let mut rows = Vec::new();
    for (path, rel, _) in corpus::files_for_arch(&dir, &arch) {
        // Only files kiln compiles completely.
        if !timed(&kiln, &["ptxas"], &path).2 {
            continue;
        }
        let (mut best_k, mut best_p) = (f64::MAX, f64::MAX);
        let (mut rss_k, mut rss_p) = (0u64, 0u64);
        let mut ok = true;
        for _ in 0..runs {
            let (p, pr, pok) = timed(&ptxas, &[], &path);
            let (k, kr, kok) = timed(&kiln, &["ptxas"], &path);
            ok &= pok && kok;
            best_p = best_p.min(p);
            best_k = best_k.min(k);
            rss_p = rss_p.max(pr.unwrap_or(0));
            rss_k = rss_k.max(kr.unwrap_or(0));
        }
        if ok {
            rows.push((rel, best_k, best_p, rss_k, rss_p));
        }
    }
    if rows.is_empty() {
        return Err(format!(
            "bench: kiln compiles no {arch} file of {}",
            dir.display()
        ));
    }
    rows.sort_by(|a, b| b.2.total_cmp(&a.2));
    println!(
        "{:<70} {:>9} {:>9} {:>8}",
        "slowest files for ptxas", "kiln ms", "ptxas ms", "speedup"
    );
    for (f, k, p, _, _) in rows.iter().take(10) {
        println!("{f:<70} {:>9.1} {:>9.1} {:>7.1}x", k * 1e3, p * 1e3, p / k);
    }
    // The slowest files relative to ptxas, and where kiln's peak memory exceeds ptxas's most.
    let mut by_speedup: Vec<_> = rows.iter().collect();
    by_speedup.sort_by(|a, b| (a.2 / a.1).total_cmp(&(b.2 / b.1)));
    println!(
        "{:<70} {:>9} {:>9} {:>8}",
        "lowest speedups", "kiln ms", "ptxas ms", "speedup"
    );
    for (f, k, p, _, _) in by_speedup.iter().take(10) {
        println!("{f:<70} {:>9.1} {:>9.1} {:>7.2}x", k * 1e3, p * 1e3, p / k);
    }
    if measure_rss {
        let mut by_rss: Vec<_> = rows.iter().filter(|r| r.3 > r.4).collect();
        by_rss.sort_by(|a, b| (b.3 as f64 / b.4 as f64).total_cmp(&(a.3 as f64 / a.4 as f64)));
        println!(
            "{} files where kiln's peak RSS exceeds ptxas's; the largest ratios:",
            by_rss.len()
        );
        for (f, _, _, rk, rp) in by_rss.iter().take(10) {
            println!(
                "{f:<70} {:>7.1} MB {:>7.1} MB",
                *rk as f64 / 1024.0,
                *rp as f64 / 1024.0
            );
        }
    }
    // Every row, for analysis: file, kiln s, ptxas s, kiln KiB, ptxas KiB.
    let tsv = tmp.join(format!("compile-{arch}.tsv"));
    let text: String = rows
        .iter()
        .map(|(f, k, p, rk, rp)| format!("{f}\t{k:.6}\t{p:.6}\t{rk}\t{rp}\n"))
        .collect();
    std::fs::write(&tsv, text).map_err(|e| e.to_string())?;
    println!("per-file rows: {}", tsv.display());
    let kiln_s: f64 = rows.iter().map(|r| r.1).sum();
    let ptxas_s: f64 = rows.iter().map(|r| r.2).sum();
    let mut speedups: Vec<f64> = rows.iter().map(|r| r.2 / r.1).collect();
    speedups.sort_by(f64::total_cmp);
    let median = speedups[speedups.len() / 2];
    let pct = |p: usize| speedups[(speedups.len() - 1) * p / 100];
    println!(
        "per-file speedup (ptxas time / kiln time) percentiles: p10={:.2} p25={:.2} p50={:.2} p75={:.2} p90={:.2}; files kiln is slower on: {}",
        pct(10),
        pct(25),
        pct(50),
        pct(75),
        pct(90),
        speedups.iter().filter(|&&x| x < 1.0).count()
    );
    let mb = |kib: u64| kib as f64 / 1024.0;
    let (rss_k, rss_p) = if measure_rss {
        (
            format!("{:.1}", mb(rows.iter().map(|r| r.3).max().unwrap_or(0))),
            format!("{:.1}", mb(rows.iter().map(|r| r.4).max().unwrap_or(0))),
        )
    } else {
        ("n/a".into(), "n/a".into())
    };
    println!(
        "RESULT bench-compile {arch} files={} kiln_s={kiln_s:.2} ptxas_s={ptxas_s:.2} speedup={:.2} kiln_max_rss_mb={rss_k} ptxas_max_rss_mb={rss_p} median_file_speedup={median:.2}",
        rows.len(),
        ptxas_s / kiln_s
    );
    Ok(())
}
