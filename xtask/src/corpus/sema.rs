//! `cargo xtask corpus sema`: parse + semantic checks (`syntax` + `hir`) on every corpus file,
//! compared with ptxas's verdict: files under `ptx/` must get no error, files under `rejected/`
//! must get one, on ptxas's line where `rejected.tsv` names one.
//!
//! Last line: `RESULT sema files=<n> accepted_ok=<n> rejected_ok=<n> false_errors=<n>
//! missed_errors=<n> panics=<n>` (plus `line_ok=<n>/<m>`: rejected files where our first
//! error is on ptxas's line, out of those where ptxas names a line).
//!
//! Files where ptxas has no verdict because it crashed (`rejected.tsv` says `ptxas crashed
//! (signal N)`) are neither accepted nor rejected: they are listed as `CRASH` with our verdict
//! and counted in `oracle_crashes=<n>`, appended to the RESULT line. The one such corpus file,
//! `implicit_param.ptx`, reads a kernel-body `.param` variable with `ld.param`; ptxas 13.0.88
//! segfaults on that, and `hir` warns about it (docs/arch/hir.md says why it is a warning and
//! not an error).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{
    CorpusArgs, GroupCounts, catch, group_of, is_accepted, par_map, quiet_panics, read_text,
};

/// Our verdict on one file: the first error (line, message), if any.
pub fn first_error(text: &str) -> Option<(usize, String)> {
    let line_of = |off: usize| text[..off.min(text.len())].matches('\n').count() + 1;
    let parse = syntax::parse(text);
    let mut errs: Vec<(usize, String)> = parse
        .errors()
        .iter()
        .map(|e| {
            (
                line_of(usize::from(e.range.start())),
                format!("syntax: {}", e.message),
            )
        })
        .collect();
    for d in hir::check_module(&parse.tree()) {
        if d.severity == hir::Severity::Error {
            errs.push((line_of(usize::from(d.range.start())), d.message));
        }
    }
    errs.sort_by_key(|e| e.0);
    errs.into_iter().next()
}

/// Whether `syntax` + `hir` give any warning.
pub fn has_warning(text: &str) -> bool {
    let parse = syntax::parse(text);
    hir::check_module(&parse.tree())
        .iter()
        .any(|d| d.severity == hir::Severity::Warning)
}

/// Files on which ptxas warned (the `warnings` column of `ptxas_results.tsv`, any arch), and
/// the files listed there at all.
fn ptxas_warned(
    dir: &Path,
) -> (
    std::collections::HashSet<PathBuf>,
    std::collections::HashSet<PathBuf>,
) {
    let mut warned = std::collections::HashSet::new();
    let mut listed = std::collections::HashSet::new();
    let Ok(text) = std::fs::read_to_string(dir.join("ptxas_results.tsv")) else {
        return (warned, listed);
    };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let Some(col) = header.iter().position(|h| *h == "warnings") else {
        return (warned, listed);
    };
    for l in lines {
        let cols: Vec<&str> = l.split('\t').collect();
        let file = PathBuf::from(cols[0]);
        listed.insert(file.clone());
        if cols
            .get(col)
            .and_then(|c| c.parse::<u32>().ok())
            .is_some_and(|n| n > 0)
        {
            warned.insert(file);
        }
    }
    (warned, listed)
}

/// ptxas's message per rejected file, from `rejected.tsv`.
fn ptxas_messages(dir: &Path) -> HashMap<PathBuf, String> {
    let mut out = HashMap::new();
    let Ok(text) = std::fs::read_to_string(dir.join("rejected.tsv")) else {
        return out;
    };
    for l in text.lines().skip(1) {
        let Some((file, msg)) = l.split_once('\t') else {
            continue;
        };
        out.insert(PathBuf::from(file), msg.to_string());
    }
    out
}

/// The line a ptxas message names (`..., line N; error : ...`), if any.
fn message_line(msg: &str) -> Option<usize> {
    msg.split("line ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .and_then(|n| n.trim().parse().ok())
}

pub fn run(args: &CorpusArgs) -> Result<(), String> {
    let files = args.ptx_files();
    if files.is_empty() {
        return Err(format!("no .ptx files under {}", args.dir.display()));
    }
    let messages = ptxas_messages(&args.dir);
    quiet_panics();
    let results = par_map("sema", &files, |rel| {
        let text = read_text(&args.dir.join(rel));
        match text {
            Ok(t) => catch(|| (first_error(&t), is_accepted(rel) && has_warning(&t))),
            Err(e) => Err(e),
        }
    });
    let (warned, listed) = ptxas_warned(&args.dir);
    let (mut warn_both, mut warn_missed, mut warn_extra) = (0, 0, 0);
    for (rel, r) in files.iter().zip(&results) {
        let Ok((_, ours)) = r else { continue };
        if !listed.contains(rel) {
            continue;
        }
        match (warned.contains(rel), *ours) {
            (true, true) => warn_both += 1,
            (true, false) => {
                warn_missed += 1;
                println!("WARN-MISSED {}", rel.display());
            }
            (false, true) => {
                warn_extra += 1;
                println!("WARN-EXTRA  {}", rel.display());
            }
            _ => {}
        }
    }
    let results: Vec<Result<Option<(usize, String)>, String>> =
        results.into_iter().map(|r| r.map(|(e, _)| e)).collect();
    let mut groups = GroupCounts::default();
    let (mut acc_ok, mut rej_ok, mut false_err, mut missed, mut panics) = (0, 0, 0, 0, 0);
    let mut crashes = 0;
    let (mut line_ok, mut line_named) = (0, 0);
    for (rel, r) in files.iter().zip(&results) {
        let accepted = is_accepted(rel);
        let g = group_of(rel);
        // ptxas's "verdict" when it crashed: `ptxas crashed (signal N)`.
        let crash = (!accepted)
            .then(|| messages.get(rel))
            .flatten()
            .filter(|m| super::crash_signal(m).is_some())
            .cloned();
        let warned_here = crash.is_some()
            && read_text(&args.dir.join(rel)).is_ok_and(|t| catch(|| has_warning(&t)) == Ok(true));
        match r {
            Err(p) => {
                panics += 1;
                println!("PANIC   {}: {p}", rel.display());
                groups.add(&g, &[0, 0, 0, 0, 1, 0]);
            }
            Ok(None) if accepted => {
                acc_ok += 1;
                groups.add(&g, &[1, 0, 0, 0, 0, 0]);
            }
            Ok(Some((line, msg))) if accepted => {
                false_err += 1;
                println!("FALSE   {}:{line}: {msg}", rel.display());
                groups.add(&g, &[0, 0, 1, 0, 0, 0]);
            }
            Ok(ours) if crash.is_some() => {
                crashes += 1;
                let ours = match ours {
                    Some((line, msg)) => format!("we reject (line {line}: {msg})"),
                    None if warned_here => "we accept with a warning".to_string(),
                    None => "we accept".to_string(),
                };
                println!(
                    "CRASH   {}: no verdict, {}; {ours}",
                    rel.display(),
                    crash.as_deref().unwrap_or("")
                );
                groups.add(&g, &[0, 0, 0, 0, 0, 1]);
            }
            Ok(Some((line, msg))) => {
                rej_ok += 1;
                groups.add(&g, &[0, 1, 0, 0, 0, 0]);
                if let Some(want) = messages.get(rel).and_then(|m| message_line(m)) {
                    line_named += 1;
                    if want == *line {
                        line_ok += 1;
                    } else {
                        println!(
                            "LINE    {}: ours {line} ({msg}), ptxas {want}",
                            rel.display()
                        );
                    }
                }
            }
            Ok(None) => {
                missed += 1;
                println!("MISSED  {}", rel.display());
                groups.add(&g, &[0, 0, 0, 1, 0, 0]);
            }
        }
    }
    groups.print(&["acc_ok", "rej_ok", "false_err", "missed", "panics", "crash"]);
    println!("rejected files where our first error is on ptxas's line: {line_ok}/{line_named}");
    println!(
        "warnings: ptxas warns on {} accepted files; we warn on {warn_both} of them, miss {warn_missed}, and warn on {warn_extra} others",
        warn_both + warn_missed
    );
    println!(
        "RESULT sema files={} accepted_ok={acc_ok} rejected_ok={rej_ok} false_errors={false_err} missed_errors={missed} panics={panics} oracle_crashes={crashes}",
        files.len()
    );
    Ok(())
}
