//! The compilation both `kiln build` and the ptxas-compatible entry point (`kiln ptxas`) run:
//! PTX bytes and a [`db::Target`] in, a cubin (or diagnostics) out, with ptxas's `-v`
//! resource report.

use std::io::Write;
use std::time::Instant;

use crate::render;

/// Where and how the resource report is printed.
#[derive(Clone, Copy, Debug)]
pub struct Report {
    /// The prefix of each line: `kiln` or `ptxas` (ptxas's own format is `ptxas info    : `).
    pub tool: &'static str,
    /// Print to standard error (as ptxas does) rather than standard output.
    pub to_stderr: bool,
    /// Also print the module's `N bytes gmem` line and each kernel's `Compile time` line,
    /// as ptxas does, and nothing ptxas does not print (otherwise each kernel's occupancy).
    pub ptxas_lines: bool,
}

/// One compilation request.
pub struct Request<'a> {
    /// The name diagnostics use for the input.
    pub path: &'a str,
    pub bytes: &'a [u8],
    pub target: db::Target,
    /// `-v`: the resource report.
    pub report: Option<Report>,
    /// Print each kernel's SASS listing to standard output.
    pub sass: bool,
    /// With `sass`: each instruction's control field before it.
    pub control_codes: bool,
    /// Print warnings (`-w` turns them off).
    pub warnings: bool,
    /// Treat warnings as errors (`-Werror`).
    pub warnings_as_errors: bool,
}

/// The outcome: the cubin when there was no error, and how many errors were printed.
pub struct Outcome {
    pub cubin: Option<Vec<u8>>,
    pub errors: usize,
    /// Per kernel statistics, in source order (for the callers' own warnings).
    pub stats: Vec<db::KernelStats>,
}

/// Compiles `req`, printing diagnostics (and the report) as it goes.
pub fn compile(req: &Request<'_>) -> Outcome {
    let mut db = db::RootDatabase::default();
    let file = db.add_file(req.path, req.bytes);
    db.stamp_source_files(file);
    let color = render::stderr_color();
    let arch = req.target.sm;
    let mut diagnostics = db::diagnostics(&db, file).clone();
    diagnostics.extend(db::target_diagnostics(&db, file, arch));
    let mut cubin = None;
    let mut stats = Vec::new();
    if diagnostics
        .iter()
        .all(|d| d.severity != db::Severity::Error)
    {
        // Compile the kernels first, in parallel, each timed on its own; the `cubin` query then
        // reuses the memoized results.
        let durations = compile_kernels(&db, file, &req.target);
        let times: Vec<_> = db::kernel_targets(&db, file, &req.target)
            .into_iter()
            .zip(durations)
            .collect();
        let ft = db::FileTarget::new(&db, file, req.target.clone());
        let out = db::cubin(&db, ft);
        diagnostics.extend(out.diagnostics.iter().cloned());
        for (kt, _) in &times {
            if let Ok(s) = db::kernel_stats(&db, *kt) {
                stats.push(s.clone());
            }
        }
        if let Some(bytes) = &out.bytes {
            if let Some(report) = req.report {
                let gmem = db::module_data(&db, file)
                    .as_ref()
                    .map(|d| d.globals.iter().map(|g| g.size).sum::<u64>())
                    .unwrap_or(0);
                print_report(report, arch, gmem, &db, &times);
            }
            if req.sass {
                for (kt, _) in &times {
                    if let Ok(text) = db::sass_text_with(&db, *kt, req.control_codes) {
                        print!("{text}");
                    }
                }
            }
            cubin = Some(bytes.clone());
        }
    }
    if !req.warnings {
        diagnostics.retain(|d| d.severity == db::Severity::Error);
    }
    let mut errors = 0;
    for d in &diagnostics {
        let is_error = d.severity == db::Severity::Error || req.warnings_as_errors;
        errors += usize::from(is_error);
        eprint!("{}", render::render(req.path, file.text(&db), d, color));
    }
    if errors > 0 {
        cubin = None;
    }
    Outcome {
        cubin,
        errors,
        stats,
    }
}

/// Threads compiling the kernels of a module: `KILN_JOBS` if set (1 compiles serially),
/// else the machine's parallelism; under a make jobserver, no more than the jobs it grants
/// (`jobserver`).
fn jobs() -> usize {
    std::env::var("KILN_JOBS")
        .ok()
        .and_then(|j| j.parse::<usize>().ok())
        .filter(|&j| j > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Compiles every kernel of `file` for `target` (their `kernel_stats` query and everything
/// below it), spread over [`jobs`] threads, each on a clone of the database (salsa shares the
/// memoized results); returns each kernel's compile time, in source order. The results do
/// not depend on which thread computed them: the cubin is the same as a serial build's.
fn compile_kernels(
    db: &db::RootDatabase,
    file: db::SourceFile,
    target: &db::Target,
) -> Vec<std::time::Duration> {
    let n = db::kernel_targets(db, file, target).len();
    let mut threads = jobs().min(n).max(1);
    // Held until the kernels are compiled, then given back to make.
    let tokens = crate::jobserver::acquire(threads - 1);
    if let Some(t) = &tokens {
        threads = 1 + t.extra();
    }
    let mut durations = vec![std::time::Duration::ZERO; n];
    if threads == 1 {
        for (k, kt) in db::kernel_targets(db, file, target).into_iter().enumerate() {
            let start = Instant::now();
            let _ = db::kernel_stats(db, kt);
            durations[k] = start.elapsed();
        }
        return durations;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Vec<(usize, std::time::Duration)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let db = db.clone();
                let next = &next;
                s.spawn(move || {
                    let kts = db::kernel_targets(&db, file, target);
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&kt) = kts.get(k) else { break };
                        let start = Instant::now();
                        let _ = db::kernel_stats(&db, kt);
                        mine.push((k, start.elapsed()));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect()
    });
    for (k, d) in results.into_iter().flatten() {
        durations[k] = d;
    }
    durations
}

/// `Occupancy 100% at 256 threads: 8 blocks, 64 of 64 warps per SM, limited by warps, blocks`.
fn occupancy_line(s: &db::KernelStats) -> String {
    let o = &s.occupancy;
    let summary = s.occupancy_summary();
    let limiters: Vec<&str> = o.limiters.iter().map(|l| l.name()).collect();
    format!(
        "O{}: {} blocks, {} of {} warps per SM, limited by {}",
        &summary[1..],
        o.blocks,
        o.warps,
        o.max_warps,
        limiters.join(", ")
    )
}

/// `Model: 1147 cycles, 79 issue slots per warp (static estimate; loops counted 8 times)`.
fn model_line(m: &db::perfmodel::Estimate) -> String {
    format!(
        "Model: {:.0} cycles, {:.0} issue slots per warp (static estimate; loops counted {} times)",
        m.cycles,
        m.issue_slots,
        db::perfmodel::TRIP_COUNT
    )
}

/// Prints ptxas's `-v` resource report (format checked against ptxas 13.0.88's output).
fn print_report(
    report: Report,
    arch: db::Sm,
    gmem: u64,
    db: &db::RootDatabase,
    kernels: &[(db::KernelTarget<'_>, std::time::Duration)],
) {
    let mut text = String::new();
    let tool = report.tool;
    let info = format!("{tool} info    : ");
    if report.ptxas_lines {
        text.push_str(&format!("{info}{gmem} bytes gmem\n"));
    }
    for (kt, time) in kernels {
        let Ok(s) = db::kernel_stats(db, *kt) else {
            continue;
        };
        let name = &s.name;
        text.push_str(&format!(
            "{info}Compiling entry function '{name}' for '{arch}'\n"
        ));
        text.push_str(&format!("{info}Function properties for {name}\n"));
        text.push_str(&format!(
            "    {} bytes stack frame, {} bytes spill stores, {} bytes spill loads\n",
            s.stack_frame, s.spill_stores, s.spill_loads
        ));
        let smem = if s.shared_bytes > 0 {
            format!(", {} bytes smem", s.shared_bytes)
        } else {
            String::new()
        };
        // ptxas lists cmem[0] only below sm_90 (`target::CubinLayout::reports_cmem0`).
        let cmem = if arch.profile().is_some_and(|p| p.cubin.reports_cmem0) {
            format!(", {} bytes cmem[0]", s.cmem0)
        } else {
            String::new()
        };
        // ptxas names the stack only when there is one.
        let stack = if s.stack_frame > 0 {
            format!(", {} bytes cumulative stack size", s.stack_frame)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "{info}Used {} registers, used {} barriers{stack}{smem}{cmem}\n",
            s.registers, s.barriers
        ));
        // kiln's own line (ptxas prints no occupancy: `kiln ptxas -v` stays byte-compatible).
        if !report.ptxas_lines {
            text.push_str(&format!("{info}{}\n", occupancy_line(s)));
            if let Some(m) = db::kernel_model(db, *kt) {
                text.push_str(&format!("{info}{}\n", model_line(&m)));
            }
        }
        if report.ptxas_lines {
            text.push_str(&format!(
                "{info}Compile time = {:.3} ms\n",
                time.as_secs_f64() * 1e3
            ));
        }
    }
    // A closed pipe (e.g. `| head`) is not an error worth a panic.
    let _ = if report.to_stderr {
        std::io::stderr().write_all(text.as_bytes())
    } else {
        std::io::stdout().write_all(text.as_bytes())
    };
}
