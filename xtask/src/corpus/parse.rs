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
//! no longer measure the parser. (The `dev` profile optimizes the `syntax` crate, so plain
//! `cargo xtask` gives a meaningful figure.) Fails unless every file is
//! lossless, nothing panicked, and no accepted file has a syntax error.

use std::path::PathBuf;
use std::time::Instant;

use super::{CorpusArgs, GroupCounts, catch, group_of, is_accepted, quiet_panics};

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
    /// The line of each syntax error.
    error_lines: Vec<usize>,
}

/// Byte offsets of line starts, for turning error offsets into `line:col` in O(log n).
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

fn line_col(starts: &[usize], offset: usize) -> (usize, usize) {
    let line = starts.partition_point(|&s| s <= offset).max(1);
    (line, offset - starts[line - 1] + 1)
}

fn parse_one(bytes: &[u8]) -> (Parsed, f64) {
    let start = Instant::now();
    let (text, parse) = syntax::parse_bytes(bytes);
    let seconds = start.elapsed().as_secs_f64();
    let lossless = parse.syntax_node().to_string() == text;
    let starts = line_starts(&text);
    let mut errors = Vec::new();
    let mut error_lines = Vec::new();
    for e in parse.errors() {
        let (l, c) = line_col(&starts, usize::from(e.range.start()));
        errors.push(format!("{l}:{c}: {}", e.message));
        error_lines.push(l);
    }
    (
        Parsed {
            lossless,
            errors,
            error_lines,
        },
        seconds,
    )
}

pub fn run(args: &CorpusArgs) -> Result<(), String> {
    let mut show_all = false;
    for a in &args.rest {
        match a.as_str() {
            "--errors" => show_all = true,
            other => return Err(format!("corpus parse: unknown option `{other}`")),
        }
    }
    let files = args.ptx_files();
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
    compare_with_ptxas(&args.dir, &results);
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

/// The line of a ptxas "Parsing error" message
/// (`ptxas x.ptx, line 36; fatal   : Parsing error near ')': syntax error`).
fn ptxas_parse_error_line(message: &str) -> Option<usize> {
    if !message.contains("Parsing error") {
        return None;
    }
    let rest = &message[message.find(", line ")? + ", line ".len()..];
    rest[..rest.find(';')?].trim().parse().ok()
}

/// Compares our syntax errors on rejected files with ptxas's first error from
/// `rejected.tsv` (when the corpus has it): for every file ptxas rejects with a parse error,
/// do we report a syntax error on the same line? Informational (ptxas's grammar is stricter in
/// places that are `hir`'s job here), so it does not affect the exit status.
fn compare_with_ptxas(dir: &std::path::Path, results: &[FileResult]) {
    let Ok(tsv) = std::fs::read_to_string(dir.join("rejected.tsv")) else {
        println!(
            "skipping ptxas comparison: no rejected.tsv in {}",
            dir.display()
        );
        return;
    };
    let (mut total, mut agree) = (0, 0);
    for row in tsv.lines().skip(1) {
        let Some((file, message)) = row.split_once('\t') else {
            continue;
        };
        let Some(line) = ptxas_parse_error_line(message) else {
            continue;
        };
        let Some(r) = results.iter().find(|r| r.rel == std::path::Path::new(file)) else {
            continue;
        };
        total += 1;
        match &r.outcome {
            Ok(p) if p.error_lines.contains(&line) => agree += 1,
            Ok(p) => println!(
                "ptxas: {file}: parse error on line {line}; ours: {}",
                if p.errors.is_empty() {
                    "none".to_string()
                } else {
                    p.errors.join("; ")
                }
            ),
            Err(e) => println!("ptxas: {file}: parse error on line {line}; ours: {e}"),
        }
    }
    println!(
        "rejected files with a ptxas parse error: {total}; with our syntax error on the same line: {agree}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_messages() {
        let m = "ptxas ptx/a.ptx, line 36; fatal   : Parsing error near ')': syntax error";
        assert_eq!(ptxas_parse_error_line(m), Some(36));
        assert_eq!(
            ptxas_parse_error_line("ptxas a.ptx, line 9; error   : Arguments mismatch"),
            None
        );
    }

    #[test]
    fn line_columns() {
        let starts = line_starts("ab\ncd\n\nx");
        assert_eq!(line_col(&starts, 0), (1, 1));
        assert_eq!(line_col(&starts, 2), (1, 3));
        assert_eq!(line_col(&starts, 3), (2, 1));
        assert_eq!(line_col(&starts, 6), (3, 1));
        assert_eq!(line_col(&starts, 7), (4, 1));
        assert_eq!(line_col(&starts, 8), (4, 2));
    }
}
