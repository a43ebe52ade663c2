//! `cargo xtask corpus parse [--dir DIR] [--errors]`: the syntax stage.
//!
//! Parses every `.ptx` file under DIR with `syntax::parse_bytes` and checks that the tree
//! prints back to the (decoded) input byte for byte, that files ptxas accepts (`ptx/`) have no
//! syntax errors, and that nothing panics (each file runs under `catch_unwind`; a panic is
//! counted and the run goes on). Prints per-group counts, the first syntax errors in accepted
//! files (all errors with `--errors`), and as its last line:
//!
//! `RESULT parse files=N lossless=N accepted_files=N accepted_with_syntax_errors=N panics=N mb_per_s=X`
//!
//! `mb_per_s` is single-thread parse throughput: total bytes (10^6 per MB) divided by the sum
//! of the per-file `parse_bytes` times. Files are parsed one after another on purpose: on a
//! small shared machine, parallel workers slow each other down and the per-file times would
//! no longer measure the parser. Build with `--release` for a meaningful figure (the `dev`
//! profile leaves workspace crates unoptimized). Fails unless every file is
//! lossless, nothing panicked, and no accepted file has a syntax error.

use std::path::PathBuf;
use std::time::Instant;

use super::{CorpusArgs, GroupCounts, catch, group_of, is_accepted, ptx_files, quiet_panics};

/// How many syntax errors in accepted files to print when `--errors` is not given.
const SHOW_ERRORS: usize = 20;

struct FileResult {
    rel: PathBuf,
    bytes: usize,
    seconds: f64,
    outcome: Result<Parsed, String>,
}

struct Parsed {
    lossless: bool,
    /// `line:col: message` for each syntax error.
    errors: Vec<String>,
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

fn parse_one(bytes: &[u8]) -> (Parsed, f64) {
    let start = Instant::now();
    let (text, parse) = syntax::parse_bytes(bytes);
    let seconds = start.elapsed().as_secs_f64();
    let lossless = parse.syntax_node().to_string() == text;
    let errors = parse
        .errors()
        .iter()
        .map(|e| {
            let (l, c) = line_col(&text, usize::from(e.range.start()));
            format!("{l}:{c}: {}", e.message)
        })
        .collect();
    (Parsed { lossless, errors }, seconds)
}

pub fn run(args: &CorpusArgs) -> Result<(), String> {
    let mut show_all = false;
    for a in &args.rest {
        match a.as_str() {
            "--errors" => show_all = true,
            other => return Err(format!("corpus parse: unknown option `{other}`")),
        }
    }
    let files = ptx_files(&args.dir);
    if files.is_empty() {
        return Err(format!("no .ptx files under {}", args.dir.display()));
    }
    quiet_panics();
    let wall = Instant::now();
    let mut last_report = Instant::now();
    let total = files.len();
    let results: Vec<FileResult> = files
        .iter()
        .enumerate()
        .map(|(i, rel)| {
            if last_report.elapsed().as_secs() >= 5 {
                last_report = Instant::now();
                eprintln!(
                    "corpus parse: {i}/{total} ({:.0} s)",
                    wall.elapsed().as_secs_f64()
                );
            }
            let path = args.dir.join(rel);
            match std::fs::read(&path) {
                Err(e) => FileResult {
                    rel: rel.clone(),
                    bytes: 0,
                    seconds: 0.0,
                    outcome: Err(format!("cannot read: {e}")),
                },
                Ok(bytes) => {
                    let (outcome, seconds) = match catch(|| parse_one(&bytes)) {
                        Ok((parsed, s)) => (Ok(parsed), s),
                        Err(panic) => (Err(format!("PANIC: {panic}")), 0.0),
                    };
                    FileResult {
                        rel: rel.clone(),
                        bytes: bytes.len(),
                        seconds,
                        outcome,
                    }
                }
            }
        })
        .collect();
    let wall = wall.elapsed().as_secs_f64();

    let mut groups = GroupCounts::default();
    let (mut lossless, mut accepted, mut accepted_err, mut panics, mut unreadable) =
        (0, 0, 0, 0, 0);
    let (mut bytes, mut seconds) = (0usize, 0f64);
    let mut shown = 0usize;
    let mut messages = Vec::new();
    for r in &results {
        let acc = is_accepted(&r.rel);
        accepted += usize::from(acc);
        bytes += r.bytes;
        seconds += r.seconds;
        let (ok_round_trip, has_errors, panicked) = match &r.outcome {
            Ok(p) => {
                if !p.lossless {
                    messages.push(format!(
                        "{}: tree does not print back to the input",
                        r.rel.display()
                    ));
                }
                if show_all || acc {
                    for e in &p.errors {
                        if show_all || shown < SHOW_ERRORS {
                            messages.push(format!("{}:{e}", r.rel.display()));
                            shown += 1;
                        }
                    }
                }
                (p.lossless, !p.errors.is_empty(), false)
            }
            Err(msg) => {
                messages.push(format!("{}: {msg}", r.rel.display()));
                if msg.starts_with("PANIC") {
                    (false, false, true)
                } else {
                    unreadable += 1;
                    (false, false, false)
                }
            }
        };
        lossless += usize::from(ok_round_trip);
        accepted_err += usize::from(acc && has_errors);
        panics += usize::from(panicked);
        groups.add(
            &group_of(&r.rel),
            &[
                1,
                usize::from(ok_round_trip),
                usize::from(has_errors),
                usize::from(panicked),
            ],
        );
    }
    for m in &messages {
        println!("{m}");
    }
    if !show_all && shown >= SHOW_ERRORS {
        println!("(first {SHOW_ERRORS} syntax errors in accepted files shown; --errors lists all)");
    }
    groups.print(&["files", "lossless", "syn_errors", "panics"]);
    let mb = bytes as f64 / 1e6;
    let mb_per_s = if seconds > 0.0 { mb / seconds } else { 0.0 };
    println!("parsed {mb:.1} MB in {seconds:.2} s of parse time ({wall:.2} s wall in all)");
    println!(
        "RESULT parse files={} lossless={lossless} accepted_files={accepted} \
         accepted_with_syntax_errors={accepted_err} panics={panics} mb_per_s={mb_per_s:.1}",
        results.len()
    );
    if lossless == results.len() && panics == 0 && accepted_err == 0 && unreadable == 0 {
        Ok(())
    } else {
        Err("corpus parse failed (see above)".to_string())
    }
}
