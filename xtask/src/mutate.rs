//! `cargo xtask mutate [--dir CORPUS] [--count N] [--seed S] [--out DIR] [--check]`: breaks
//! valid corpus PTX in small ways, asks ptxas 13.0.88 for its verdict on each mutant, and
//! compares ours (`syntax` + `hir`).
//!
//! With `--out DIR` (default `test-data/sema-mutations`) the mutants are written as
//! `DIR/NNNN.ptx` plus `DIR/expected.tsv` (`file  source  mutation  verdict  ptxas-message`,
//! verdict `ok`, `error`, `error:LINE`, or `crash` when ptxas died on a signal and so gave no
//! verdict), which the test `crates/hir/tests/mutations.rs` replays without ptxas. `--check`
//! only compares (no files written). Mutants are produced deterministically from the seed.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::corpus::{self, PtxasOutcome};

const USAGE: &str = "usage: cargo xtask mutate [--dir CORPUS] [--count N] [--seed S] [--out DIR] [--check] [--max-bytes N]";

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The instruction lines of a text: (line index, text) of lines that look like instructions.
fn instruction_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start();
            !t.is_empty()
                && !t.starts_with("//")
                && !t.starts_with('.')
                && !t.starts_with('{')
                && !t.starts_with('}')
                && !t.starts_with('$')
                && t.ends_with(';')
                && !t.contains(':')
                && t.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_lowercase() || c == '@')
        })
        .collect()
}

fn replace_line(text: &str, idx: usize, new: &str) -> String {
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        out.push_str(if i == idx { new } else { l });
        out.push('\n');
    }
    out
}

fn pick<'a>(rng: &mut Rng, v: &[(usize, &'a str)]) -> Option<(usize, &'a str)> {
    if v.is_empty() {
        None
    } else {
        Some(v[rng.below(v.len())])
    }
}

/// Picks one of the instruction lines for which `keep` holds.
fn pick_instruction<'a>(
    text: &'a str,
    rng: &mut Rng,
    keep: impl Fn(&str) -> bool,
) -> Option<(usize, &'a str)> {
    let cands: Vec<_> = instruction_lines(text)
        .into_iter()
        .filter(|(_, l)| keep(l))
        .collect();
    pick(rng, &cands)
}

/// Picks one of the lines (of any kind) for which `keep` holds.
fn pick_line<'a>(
    text: &'a str,
    rng: &mut Rng,
    keep: impl Fn(&str) -> bool,
) -> Option<(usize, &'a str)> {
    let cands: Vec<_> = text.lines().enumerate().filter(|(_, l)| keep(l)).collect();
    pick(rng, &cands)
}

/// The first line holding the module directive `name` (`.target`, ...).
fn directive_line<'a>(text: &'a str, name: &str) -> Option<(usize, &'a str)> {
    text.lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with(name))
}

/// The mutant with line `i` replaced by `new`, described as `line N: what`.
fn edit(text: &str, i: usize, new: &str, what: impl std::fmt::Display) -> Option<(String, String)> {
    Some((
        replace_line(text, i, new),
        format!("line {}: {what}", i + 1),
    ))
}

/// Replaces the first of `words` found in `l` (by `has`) with another drawn at random:
/// (new line, old word, new word); `None` when the draw repeats the old word.
fn switch_word<'a>(
    l: &str,
    words: &[&'a str],
    has: impl Fn(&str, &str) -> bool,
    rng: &mut Rng,
) -> Option<(String, &'a str, &'a str)> {
    let from = *words.iter().find(|w| has(l, w))?;
    let to = words[rng.below(words.len())];
    if to == from {
        return None;
    }
    Some((l.replacen(from, to, 1), from, to))
}

/// One mutation operator: text -> (mutant, description).
type Mutator = fn(&str, &mut Rng) -> Option<(String, String)>;

/// Renames one register use to a name that is never declared.
fn undeclared_register(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_instruction(text, rng, |l| l.contains('%'))?;
    let pos: Vec<usize> = l.match_indices('%').map(|p| p.0).collect();
    let p = pos[rng.below(pos.len())];
    let end = l[p + 1..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(l.len(), |e| p + 1 + e);
    let name = &l[p..end];
    if name.starts_with("%tid")
        || name.starts_with("%ntid")
        || name.starts_with("%ctaid")
        || name.len() < 2
    {
        return None;
    }
    let new = format!("{}{}_undef{}", &l[..p], name, &l[end..]);
    edit(
        text,
        i,
        &new,
        format!("rename use of {name} to an undeclared register"),
    )
}

/// Changes an instruction's type modifier to another type (size or class mismatch, or valid).
fn retype(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    const TYPES: &[&str] = &[
        ".u32", ".s32", ".u64", ".s64", ".f32", ".f64", ".b32", ".b64", ".u16", ".b16", ".f16",
        ".pred",
    ];
    // A type modifier is followed by the operands.
    let has = |l: &str, t: &str| l.contains(&format!("{t} ")) || l.contains(&format!("{t}\t"));
    let (i, l) = pick_instruction(text, rng, |l| TYPES.iter().any(|t| has(l, t)))?;
    let (new, from, to) = switch_word(l, TYPES, has, rng)?;
    edit(text, i, &new, format!("change type {from} to {to}"))
}

/// Deletes a register declaration.
fn delete_decl(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_line(text, rng, |l| l.trim_start().starts_with(".reg"))?;
    edit(text, i, "", format!("delete `{}`", l.trim()))
}

/// Duplicates a register declaration.
fn duplicate_decl(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_line(text, rng, |l| l.trim_start().starts_with(".reg"))?;
    edit(
        text,
        i,
        &format!("{l}\n{l}"),
        format!("duplicate `{}`", l.trim()),
    )
}

/// Replaces the opcode with an unknown one.
fn unknown_opcode(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_instruction(text, rng, |_| true)?;
    let start = l.find(|c: char| c.is_ascii_lowercase())?;
    if l[..start].contains('@') && !l[start..].contains(' ') {
        return None;
    }
    let end = start + l[start..].find(|c: char| !c.is_ascii_alphanumeric())?;
    let op = &l[start..end];
    let new = format!("{}{op}x{}", &l[..start], &l[end..]);
    edit(text, i, &new, format!("opcode {op} -> {op}x"))
}

/// Lowers the `.target` (gating of newer instructions).
fn lower_target(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    const T: &[&str] = &[
        "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90",
    ];
    let (i, l) = directive_line(text, ".target")?;
    let to = T[rng.below(T.len())];
    let rest = l.trim_start().trim_start_matches(".target").trim();
    let first = rest.split(|c: char| c == ',' || c.is_whitespace()).next()?;
    if first == to {
        return None;
    }
    edit(
        text,
        i,
        &l.replacen(first, to, 1),
        format!(".target {first} -> {to}"),
    )
}

/// Lowers the `.version`.
fn lower_version(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    const V: &[&str] = &[
        "4.3", "5.0", "6.0", "6.4", "7.0", "7.4", "7.8", "8.0", "8.3",
    ];
    let (i, l) = directive_line(text, ".version")?;
    let to = V[rng.below(V.len())];
    let old = l
        .trim_start()
        .trim_start_matches(".version")
        .trim()
        .to_string();
    if old == to {
        return None;
    }
    edit(
        text,
        i,
        &l.replacen(&old, to, 1),
        format!(".version {old} -> {to}"),
    )
}

/// Removes `.sync` from a warp instruction.
fn drop_sync(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_instruction(text, rng, |l| l.contains(".sync"))?;
    edit(text, i, &l.replacen(".sync", "", 1), "drop .sync")
}

/// Points a branch at a label that does not exist.
fn bad_label(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_instruction(text, rng, |l| l.contains("bra"))?;
    let semi = l.rfind(';')?;
    let new = format!("{}_nolabel{}", &l[..semi], &l[semi..]);
    edit(text, i, &new, "branch to an undefined label")
}

/// Changes a vector width.
fn revector(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    const V: &[&str] = &[".v2", ".v4", ".v8"];
    let (i, l) = pick_instruction(text, rng, |l| V.iter().any(|v| l.contains(v)))?;
    let (new, from, to) = switch_word(l, V, |l, v| l.contains(v), rng)?;
    edit(text, i, &new, format!("{from} -> {to}"))
}

/// Drops the last operand of an instruction.
fn drop_operand(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_instruction(text, rng, |l| {
        l.matches(',').count() >= 1 && !l.contains('{') && !l.contains('(')
    })?;
    let comma = l.rfind(',')?;
    edit(
        text,
        i,
        &format!("{};", &l[..comma]),
        "drop the last operand",
    )
}

/// Declares 32-bit addressing.
fn address_size_32(text: &str, _rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = directive_line(text, ".address_size")?;
    edit(text, i, &l.replace("64", "32"), ".address_size 32")
}

/// Puts an immediate where the destination register is.
fn immediate_destination(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_instruction(text, rng, |l| {
        let t = l.trim_start();
        ["add", "mov", "mul", "sub", "and", "or"]
            .iter()
            .any(|op| t.starts_with(op))
            && t.contains(',')
    })?;
    let t = l.trim_start();
    let sp = t.find(|c: char| c.is_whitespace())?;
    let comma = t.find(',')?;
    let new = format!("{}{} 7{}", &l[..l.len() - t.len()], &t[..sp], &t[comma..]);
    edit(text, i, &new, "immediate as destination")
}

/// Renames a register consistently (the mutant stays valid: tests false errors).
fn rename_consistently(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (_, l) = pick_line(text, rng, |l| {
        l.trim_start().starts_with(".reg") && !l.contains('<')
    })?;
    let name = l
        .trim()
        .trim_end_matches(';')
        .split_whitespace()
        .last()?
        .to_string();
    if name.contains(',') || name.len() < 2 {
        return None;
    }
    // Whole-word replacement.
    let mut out = String::new();
    let b = text.as_bytes();
    let mut k = 0;
    while k < text.len() {
        if text[k..].starts_with(&name) {
            let before = k == 0
                || !(b[k - 1].is_ascii_alphanumeric()
                    || b[k - 1] == b'_'
                    || b[k - 1] == b'%'
                    || b[k - 1] == b'$');
            let after = k + name.len() >= text.len()
                || !(b[k + name.len()].is_ascii_alphanumeric() || b[k + name.len()] == b'_');
            if before && after {
                out.push_str(&format!("{name}_renamed"));
                k += name.len();
                continue;
            }
        }
        let c = text[k..].chars().next().expect("in bounds");
        out.push(c);
        k += c.len_utf8();
    }
    Some((out, format!("rename {name} everywhere (stays valid)")))
}

/// Duplicates a label definition.
fn duplicate_label(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_line(text, rng, |l| {
        let t = l.trim();
        t.ends_with(':') && !t.contains(' ') && t.len() > 1
    })?;
    edit(
        text,
        i,
        &format!("{l}\n{l}"),
        format!("duplicate label `{}`", l.trim()),
    )
}

/// Changes the state space of a load or store.
fn respace(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    const S: &[&str] = &[".global", ".shared", ".local", ".param", ".const"];
    let (i, l) = pick_instruction(text, rng, |l| {
        let t = l.trim_start().trim_start_matches(|c: char| {
            c == '@' || c == '!' || c.is_alphanumeric() || c == '%' || c == '_'
        });
        let t = t.trim_start();
        (l.contains("ld.") || l.contains("st.")) && S.iter().any(|s| l.contains(s)) && !t.is_empty()
    })?;
    let (new, from, to) = switch_word(l, S, |l, s| l.contains(s), rng)?;
    edit(text, i, &new, format!("{from} -> {to}"))
}

/// Removes the `.target` directive.
fn drop_target(text: &str, _rng: &mut Rng) -> Option<(String, String)> {
    let (i, _) = directive_line(text, ".target")?;
    edit(text, i, "", "delete .target")
}

/// Swaps two operands of an instruction (often changes operand types).
fn swap_operands(text: &str, rng: &mut Rng) -> Option<(String, String)> {
    let (i, l) = pick_instruction(text, rng, |l| {
        l.matches(',').count() >= 2 && !l.contains('{') && !l.contains('[') && !l.contains('(')
    })?;
    let t = l.trim_start();
    let sp = t.find(char::is_whitespace)?;
    let (head, ops) = t.split_at(sp);
    let ops = ops.trim().trim_end_matches(';');
    let mut v: Vec<&str> = ops.split(',').map(str::trim).collect();
    let a = rng.below(v.len());
    let b = rng.below(v.len());
    if a == b || v[a] == v[b] {
        return None;
    }
    v.swap(a, b);
    let new = format!("{}{head} {};", &l[..l.len() - t.len()], v.join(", "));
    edit(
        text,
        i,
        &new,
        format!("swap operands {} and {}", a + 1, b + 1),
    )
}

const MUTATORS: &[(&str, Mutator)] = &[
    ("duplicate_label", duplicate_label),
    ("respace", respace),
    ("drop_target", drop_target),
    ("swap_operands", swap_operands),
    ("undeclared_register", undeclared_register),
    ("retype", retype),
    ("delete_decl", delete_decl),
    ("duplicate_decl", duplicate_decl),
    ("unknown_opcode", unknown_opcode),
    ("lower_target", lower_target),
    ("lower_version", lower_version),
    ("drop_sync", drop_sync),
    ("bad_label", bad_label),
    ("revector", revector),
    ("drop_operand", drop_operand),
    ("address_size_32", address_size_32),
    ("immediate_destination", immediate_destination),
    ("rename_consistently", rename_consistently),
];

/// ptxas's verdict: `None` accepted, `Some((line, message))` rejected (the message starts with
/// [`corpus::CRASH_PREFIX`] when ptxas crashed instead).
/// `reloc`: compile with `-c`, as the corpus did for the source (unresolved `.extern`
/// functions are then not an error).
fn ptxas_verdict(text: &str, reloc: bool) -> Result<Option<(Option<usize>, String)>, String> {
    let targets = corpus::scan_targets(text);
    let sm = targets.iter().find_map(|t| corpus::parse_sm(t));
    let arch = match sm {
        Some((n, Some('a'))) => format!("sm_{n}a"),
        Some((n, Some('f'))) => format!("sm_{n}f"),
        Some((n, None)) if n >= 75 => format!("sm_{n}"),
        _ => "sm_75".to_string(),
    };
    let flags: &[&str] = if reloc { &["-c"] } else { &[] };
    match corpus::ptxas_cubin(text, &arch, flags)? {
        PtxasOutcome::Ok { .. } => Ok(None),
        PtxasOutcome::Rejected(msg) if corpus::crash_signal(&msg).is_some() => {
            Ok(Some((None, msg.lines().next().unwrap_or("").to_string())))
        }
        PtxasOutcome::Rejected(msg) => {
            let first = msg
                .lines()
                .find(|l| l.contains("error") || l.contains("fatal"))
                .unwrap_or("")
                .to_string();
            // Drop ptxas's temporary file name: keep `line N; error : message`.
            let first = match (first.find(".ptx.tmp, "), first.find("ptxas ")) {
                (Some(i), _) => first[i + ".ptx.tmp, ".len()..].to_string(),
                _ => first,
            };
            // ... and from messages that quote it (`at start of file '<tmp>'`).
            let first = match (first.find("'/"), first.find(".ptx.tmp'")) {
                (Some(a), Some(b)) if a < b => {
                    format!(
                        "{}'input.ptx'{}",
                        &first[..a],
                        &first[b + ".ptx.tmp'".len()..]
                    )
                }
                _ => first,
            };
            let line = first
                .split("line ")
                .nth(1)
                .and_then(|r| r.split(';').next())
                .and_then(|n| n.trim().parse().ok());
            Ok(Some((line, first)))
        }
    }
}

/// Corpus files that ptxas compiled with `-c` (mode `reloc(-c)` in `ptxas_results.tsv`).
fn reloc_sources(dir: &std::path::Path) -> std::collections::HashSet<String> {
    let text = std::fs::read_to_string(dir.join("ptxas_results.tsv")).unwrap_or_default();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let Some(col) = header.iter().position(|h| *h == "mode") else {
        return Default::default();
    };
    lines
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols.get(col) == Some(&"reloc(-c)")).then(|| cols[0].to_string())
        })
        .collect()
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut dir = corpus::default_dir();
    let mut count = 400usize;
    let mut seed = 0x5eed_u64;
    let mut max_bytes = 3500usize;
    let mut out = Some(corpus::workspace_root().join("test-data/sema-mutations"));
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dir" => dir = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            "--count" => count = it.next().ok_or(USAGE)?.parse().map_err(|_| USAGE)?,
            "--seed" => seed = it.next().ok_or(USAGE)?.parse().map_err(|_| USAGE)?,
            "--out" => out = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            "--check" => out = None,
            "--max-bytes" => max_bytes = it.next().ok_or(USAGE)?.parse().map_err(|_| USAGE)?,
            _ => return Err(USAGE.into()),
        }
    }
    let dir = dir.ok_or("no corpus (pass --dir)")?;
    // Sources: small accepted files, at most `--max-bytes` (the suite stays small and ptxas
    // fast).
    let mut sources: Vec<(PathBuf, String)> = Vec::new();
    for rel in corpus::ptx_files(&dir) {
        if !corpus::is_accepted(&rel) {
            continue;
        }
        let text = corpus::read_text(&dir.join(&rel))?;
        if text.len() <= max_bytes && text.contains(".entry") {
            sources.push((rel, text));
        }
    }
    if sources.is_empty() {
        return Err("no small accepted corpus files to mutate".into());
    }
    let mut rng = Rng(seed | 1);
    let mut mutants: Vec<(String, String, String)> = Vec::new(); // (source, description, text)
    let mut tries = 0;
    while mutants.len() < count && tries < count * 50 {
        tries += 1;
        let (rel, text) = &sources[rng.below(sources.len())];
        let (name, m) = MUTATORS[rng.below(MUTATORS.len())];
        if let Some((mutant, desc)) = m(text, &mut rng)
            && mutant != *text
            && !mutants.iter().any(|x| x.2 == mutant)
        {
            mutants.push((rel.display().to_string(), format!("{name}: {desc}"), mutant));
        }
    }
    corpus::quiet_panics();
    let reloc = reloc_sources(&dir);
    let verdicts = corpus::par_map("ptxas", &mutants, |(src, _, text)| {
        ptxas_verdict(text, reloc.contains(src))
    });
    let (mut agree, mut crashes) = (0, 0);
    let mut rows = String::from("file\tsource\tmutation\tptxas\tptxas_message\n");
    if let Some(o) = &out {
        std::fs::create_dir_all(o).map_err(|e| format!("{}: {e}", o.display()))?;
    }
    for (k, ((src, desc, text), v)) in mutants.iter().zip(&verdicts).enumerate() {
        let v = v.as_ref().map_err(|e| e.clone())?;
        let ours = corpus::sema::first_error(text);
        let theirs_reject = v.is_some();
        let crashed = v
            .as_ref()
            .is_some_and(|(_, m)| corpus::crash_signal(m).is_some());
        if crashed {
            // No verdict from ptxas: recorded as `crash`, counted apart.
            crashes += 1;
            println!(
                "CRASH    {k:04} {desc} [{src}]: {}; ours {}",
                v.as_ref().map_or("", |(_, m)| m.as_str()),
                ours.as_ref()
                    .map_or("accepts".to_string(), |(l, m)| format!("line {l}: {m}"))
            );
        } else if ours.is_some() == theirs_reject {
            agree += 1;
        } else {
            println!(
                "DISAGREE {k:04} {desc} [{src}]: ptxas {}, ours {}",
                v.as_ref().map_or("accepts".to_string(), |(_, m)| m.clone()),
                ours.as_ref()
                    .map_or("accepts".to_string(), |(l, m)| format!("line {l}: {m}"))
            );
        }
        let file = format!("{k:04}.ptx");
        let verdict = match v {
            _ if crashed => "crash".to_string(),
            None => "ok".to_string(),
            Some((Some(l), _)) => format!("error:{l}"),
            Some((None, _)) => "error".to_string(),
        };
        let msg = v
            .as_ref()
            .map_or(String::new(), |(_, m)| m.replace('\t', " "));
        // Descriptions quote PTX text, which may hold tabs: keep the table's five columns.
        let desc = desc.replace('\t', " ");
        let _ = writeln!(rows, "{file}\t{src}\t{desc}\t{verdict}\t{msg}");
        if let Some(o) = &out {
            std::fs::write(o.join(&file), text).map_err(|e| e.to_string())?;
        }
    }
    if let Some(o) = &out {
        std::fs::write(o.join("expected.tsv"), rows).map_err(|e| e.to_string())?;
        println!("wrote {} mutants to {}", mutants.len(), o.display());
    }
    let n = mutants.len() - crashes;
    println!(
        "RESULT mutate cases={n} agree={agree} agreement={:.1}% ptxas_crashes={crashes}",
        100.0 * agree as f64 / n.max(1) as f64
    );
    Ok(())
}
