//! `cargo xtask sass-probe --arch sm_XX [--collect] [--dir DIR]`: learns the SASS encoding
//! table of one SM from NVIDIA's nvdisasm and writes `crates/sass/tables/<sm>.txt`.
//!
//! Inputs: `crates/sass/tables/<sm>.seeds`, a committed list of instruction words (taken from
//! ptxas output for the corpus). For every seed the probe decodes, in one nvdisasm batch, the
//! seed itself, the seed at a second address (finds pc-relative operands), the seed with each
//! of bits 12..=104 flipped, and the seed with each reuse flag set; a second batch flips pairs
//! of neighbouring bits where a single flip only hit a special value (an omitted `+0x0`).
//! From the texts it infers one [`sass::Encoding`]: fixed bits, per-operand bit fields with
//! weights, float fields, guard and reuse positions (see `learn`).
//!
//! `--collect` first (re)builds the seeds: it compiles the corpus with ptxas for the SM,
//! decodes every distinct word with the current table and with nvdisasm, and adds words the
//! table gets wrong as seeds, round after round, until the table explains the corpus or stops
//! improving.

mod compose;
mod learn;
pub mod nvdisasm;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::corpus::{self, CorpusArgs};

const USAGE: &str = "usage: cargo xtask sass-probe --arch sm_XX [--collect|--report|--compose] [--seeds-from sm_YY] [--dir DIR] [--also DIR]...";

/// Version of the learning method; part of the staleness hash in the table header.
pub const GENERATOR_VERSION: u32 = 8;

pub fn run(args: &[String]) -> Result<(), String> {
    let collect = args.iter().any(|a| a == "--collect");
    let report = args.iter().any(|a| a == "--report");
    let compose_only = args.iter().any(|a| a == "--compose");
    let rest: Vec<String> = args
        .iter()
        .filter(|a| *a != "--collect" && *a != "--report" && *a != "--compose")
        .cloned()
        .collect();
    let arch = {
        let mut it = rest.iter();
        let mut arch = None;
        while let Some(a) = it.next() {
            if a == "--arch" {
                arch = it.next().cloned();
            } else if let Some(v) = a.strip_prefix("--arch=") {
                arch = Some(v.to_string());
            }
        }
        arch.ok_or(USAGE)?
    };
    let sm = sass::normalize_sm(&arch).ok_or_else(|| format!("bad --arch `{arch}`"))?;
    let seeds_path = tables_dir().join(format!("{sm}.seeds"));
    let mut seeds = if seeds_path.is_file() {
        read_seeds(&seeds_path)?
    } else {
        Vec::new()
    };
    // `--seeds-from sm_YY`: start from another SM's seeds (same instruction set family:
    // sm_86/sm_89 from sm_80); words this SM's nvdisasm calls illegal are simply skipped.
    if let Some(from) = flag_value(&rest, "--seeds-from") {
        let from = sass::normalize_sm(&from).ok_or_else(|| format!("bad --seeds-from `{from}`"))?;
        let mut s: BTreeSet<u128> = seeds.into_iter().collect();
        s.extend(read_seeds(&tables_dir().join(format!("{from}.seeds")))?);
        seeds = s.into_iter().collect();
        write_seeds(&seeds_path, &seeds)?;
    }
    if compose_only {
        // Modifier flags for the committed table (the learned encodings stay as they are).
        let out = tables_dir().join(format!("{sm}.txt"));
        let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut table = sass::Table::parse(&sm, &text)?;
        let (flags, encs) = compose::compose(&sm, &mut table)?;
        std::fs::write(&out, table.to_text()).map_err(|e| format!("{}: {e}", out.display()))?;
        println!(
            "wrote {} ({flags} modifier flags on {encs} encodings)",
            out.display()
        );
        return Ok(());
    }
    if report {
        let cargs = CorpusArgs::parse(&rest)?;
        return report_table(&cargs, &sm);
    }
    let collect_args = if collect {
        let cargs = CorpusArgs::parse(&rest)?;
        seeds = collect_seeds(&cargs, &sm, seeds)?;
        write_seeds(&seeds_path, &seeds)?;
        Some(cargs)
    } else {
        None
    };
    if seeds.is_empty() {
        return Err(format!(
            "no seeds in {} (run with --collect)",
            seeds_path.display()
        ));
    }
    let out = tables_dir().join(format!("{sm}.txt"));
    for check in 0.. {
        let mut table = learn::learn(&sm, &seeds)?;
        std::fs::write(&out, table.to_text()).map_err(|e| format!("{}: {e}", out.display()))?;
        println!(
            "wrote {} ({} encodings from {} seeds)",
            out.display(),
            table.encodings.len(),
            seeds.len()
        );
        // Then the modifier flags (written again with them; the learned table stays written
        // if this fails, and `--compose` redoes only this step).
        let (flags, encs) = compose::compose(&sm, &mut table)?;
        std::fs::write(&out, table.to_text()).map_err(|e| format!("{}: {e}", out.display()))?;
        println!(
            "wrote {} ({flags} modifier flags on {encs} encodings)",
            out.display()
        );
        // With `--collect`, the new table is checked on the corpus again: learning from more
        // seeds can lose a form the old table printed right (validation samples random
        // operand values; composition is learned from test words), and the seeds a collect
        // round adds are chosen with the old table. Words it now gets wrong become seeds and
        // the table is learned again, up to `$KILN_PROBE_FINAL_CHECKS` (default 1) times.
        let Some(cargs) = &collect_args else { break };
        let (words, truth): (Vec<u128>, Vec<Option<String>>) =
            corpus_truth(cargs, &sm)?.into_iter().unzip();
        let (n_wrong, wrong) = wrong_words(&sm, &table, &words, &truth);
        let known: BTreeSet<u128> = seeds.iter().copied().collect();
        let fresh: Vec<u128> = wrong.into_values().filter(|w| !known.contains(w)).collect();
        eprintln!(
            "final check {check}: {n_wrong}/{} words wrong, {} new seeds",
            words.len(),
            fresh.len()
        );
        if fresh.is_empty() || check >= final_checks() {
            break;
        }
        seeds.extend(fresh);
        seeds.sort_unstable();
        write_seeds(&seeds_path, &seeds)?;
    }
    Ok(())
}

/// The value after `--name` (or `--name=value`).
fn flag_value(args: &[String], name: &str) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == name {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix(name).and_then(|v| v.strip_prefix('=')) {
            return Some(v.to_string());
        }
    }
    None
}

/// `crates/sass/tables`.
pub fn tables_dir() -> PathBuf {
    corpus::workspace_root().join("crates/sass/tables")
}

/// The nvdisasm `--binary` name of an SM: `sm_90` -> `SM90`.
pub fn binary_name(sm: &str) -> String {
    sm.replace("sm_", "SM").to_ascii_uppercase()
}

/// Staleness key of a table: FNV-1a of the generator version, the SM and the seeds text.
pub fn seeds_hash(sm: &str, seeds_text: &str) -> u64 {
    corpus::fnv1a64(&[
        GENERATOR_VERSION.to_string().as_bytes(),
        sm.as_bytes(),
        crate::oracle::DISASM_VERSION.as_bytes(),
        seeds_text.as_bytes(),
    ])
}

fn read_seeds(path: &std::path::Path) -> Result<Vec<u128>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            u128::from_str_radix(l.trim(), 16)
                .map_err(|e| format!("{}: `{l}`: {e}", path.display()))
        })
        .collect()
}

fn write_seeds(path: &std::path::Path, seeds: &[u128]) -> Result<(), String> {
    let mut s = String::from(
        "# Probe seeds: instruction words from ptxas output for the corpus, chosen by\n\
         # `cargo xtask sass-probe --collect` or copied by `--seeds-from` (input of the table\n\
         # generator).\n",
    );
    for w in seeds {
        s.push_str(&format!("{w:032x}\n"));
    }
    std::fs::write(path, s).map_err(|e| format!("{}: {e}", path.display()))
}

/// The folders whose `ptx/` files the probe compiles: `--dir` (default: the corpus) and each
/// `--also DIR` (e.g. `test-data/unseen`, `test-data/emu-forms`: forms the corpus never makes
/// ptxas emit).
fn probe_dirs(args: &CorpusArgs) -> Vec<PathBuf> {
    let mut dirs = vec![args.dir.clone()];
    let mut it = args.rest.iter();
    while let Some(a) = it.next() {
        if a == "--also" {
            dirs.extend(it.next().map(PathBuf::from));
        } else if let Some(v) = a.strip_prefix("--also=") {
            dirs.push(PathBuf::from(v));
        }
    }
    dirs
}

/// Every distinct instruction word ptxas emits for the corpus (and the `--also` folders) on
/// this SM.
pub fn corpus_words(args: &CorpusArgs, sm: &str) -> Result<Vec<u128>, String> {
    let files: Vec<PathBuf> = probe_dirs(args)
        .iter()
        .flat_map(|d| {
            corpus::ptx_files(d)
                .into_iter()
                .filter(|f| corpus::is_accepted(f))
                .map(|f| d.join(f))
        })
        .collect();
    let per_file = corpus::par_map("ptxas", &files, |path| -> Vec<u128> {
        let Ok(text) = corpus::read_text(path) else {
            return Vec::new();
        };
        let Some(arch) = corpus::arch_for_file(&corpus::scan_targets(&text), sm) else {
            return Vec::new();
        };
        match corpus::ptxas_cubin(&text, &arch, &probe_flags(&text)) {
            Ok(corpus::PtxasOutcome::Ok { cubin, .. }) => corpus::disasm::text_sections(&cubin)
                .map(|secs| {
                    secs.into_iter()
                        .flat_map(|(_, b)| sass::words(&b))
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    });
    let set: BTreeSet<u128> = per_file.into_iter().flatten().collect();
    Ok(set.into_iter().collect())
}

/// Extra ptxas flags a probe file asks for in a `// ptxas-flags: ...` line among its first
/// lines (`-g` for device-debug code, whose calls use absolute-address forms), else none.
fn probe_flags(text: &str) -> Vec<&str> {
    text.lines()
        .take(8)
        .find_map(|l| l.trim().strip_prefix("// ptxas-flags:"))
        .map(|f| f.split_whitespace().collect())
        .unwrap_or_default()
}

/// Every distinct word of the corpus for `sm` with its nvdisasm text, cached in
/// `target/kiln-cache/sass-probe/truth-<sm>-<hash>.txt` (keyed by the word set).
pub fn corpus_truth(args: &CorpusArgs, sm: &str) -> Result<Vec<(u128, Option<String>)>, String> {
    let words = corpus_words(args, sm)?;
    let key: String = words.iter().map(|w| format!("{w:032x}\n")).collect();
    let h = corpus::fnv1a64(&[
        sm.as_bytes(),
        crate::oracle::DISASM_VERSION.as_bytes(),
        key.as_bytes(),
    ]);
    let path = corpus::cache_dir("sass-probe").join(format!("truth-{sm}-{h:016x}.txt"));
    if let Ok(text) = std::fs::read_to_string(&path) {
        let v: Vec<(u128, Option<String>)> = text
            .lines()
            .filter_map(|l| {
                let (w, t) = l.split_once(' ')?;
                let w = u128::from_str_radix(w, 16).ok()?;
                Some((w, (t != "-").then(|| t.to_string())))
            })
            .collect();
        if v.len() == words.len() {
            return Ok(v);
        }
    }
    let truth = nvdisasm::texts(sm, &words)?;
    let mut s = String::new();
    for (w, t) in words.iter().zip(&truth) {
        s.push_str(&format!("{w:032x} {}\n", t.as_deref().unwrap_or("-")));
    }
    std::fs::create_dir_all(path.parent().expect("parent")).map_err(|e| e.to_string())?;
    std::fs::write(&path, s).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(words.into_iter().zip(truth).collect())
}

/// `--report`: how the committed table decodes the corpus's distinct words (by address 16*i,
/// branch targets as hex), per nvdisasm mnemonic: unknown and wrong counts with examples.
/// Every wrong word goes to `target/kiln-cache/sass-probe/report-<sm>.txt`.
fn report_table(args: &CorpusArgs, sm: &str) -> Result<(), String> {
    let truth = corpus_truth(args, sm)?;
    // The table file as it is now (not the one compiled into this binary).
    let tpath = tables_dir().join(format!("{sm}.txt"));
    let ttext = std::fs::read_to_string(&tpath).map_err(|e| format!("{}: {e}", tpath.display()))?;
    let table = &sass::Table::parse(sm, &ttext)?;
    let mut by_op: BTreeMap<String, (usize, usize, String)> = BTreeMap::new();
    let mut all = String::new();
    let (mut unknown, mut wrong, mut reenc_bad) = (0usize, 0usize, 0usize);
    for (i, (w, t)) in truth.iter().enumerate() {
        let Some(t) = t else { continue };
        let pc = (i * 16) as u64;
        let ours = table.print(*w, pc, &|_| None);
        let tn = normalize(t);
        let on = normalize(&ours);
        if tn == on {
            if let Some(d) = table.decode(*w, pc) {
                let text = format!(
                    "{} {}",
                    table.full_control(&d, pc).to_text(),
                    d.text(&|_| None)
                );
                if sass::encode::assemble_line(table, &text, pc, &|_| None) != Ok(*w) {
                    reenc_bad += 1;
                    all.push_str(&format!("REENC {w:032x} {tn}\n"));
                }
            }
            continue;
        }
        let op = {
            let x = if tn.starts_with('@') {
                tn.split_once(' ').map_or(tn.as_str(), |x| x.1)
            } else {
                tn.as_str()
            };
            x.split(' ').next().unwrap_or("").to_string()
        };
        let known = table.lookup(*w).is_some();
        let e = by_op.entry(op).or_default();
        if known {
            wrong += 1;
            e.1 += 1;
            all.push_str(&format!("WRONG {w:032x} {tn}  ||  {on}\n"));
        } else {
            unknown += 1;
            e.0 += 1;
            all.push_str(&format!("UNKNOWN {w:032x} {tn}\n"));
        }
        if e.2.is_empty() {
            e.2 = format!("{w:032x} `{tn}` ours `{on}`");
        }
    }
    let mut v: Vec<_> = by_op.into_iter().collect();
    v.sort_by_key(|(_, (u, w, _))| std::cmp::Reverse(u + w));
    for (op, (u, w, ex)) in v.iter().take(60) {
        println!("{u:>6} unknown {w:>6} wrong  {op:<24} {ex}");
    }
    let path = corpus::cache_dir("sass-probe").join(format!("report-{sm}.txt"));
    std::fs::write(&path, all).map_err(|e| e.to_string())?;
    println!(
        "REPORT {sm} distinct={} unknown={unknown} wrong={wrong} reencode_bad={reenc_bad} (details: {})",
        truth.len(),
        path.display()
    );
    Ok(())
}

fn collect_seeds(args: &CorpusArgs, sm: &str, mut seeds: Vec<u128>) -> Result<Vec<u128>, String> {
    let (words, truth): (Vec<u128>, Vec<Option<String>>) =
        corpus_truth(args, sm)?.into_iter().unzip();
    eprintln!("{} distinct words in the corpus for {sm}", words.len());
    for round in 0..rounds() {
        // The committed table is learn(seeds) when its input hash matches: reuse it for the
        // first round instead of learning again. A stale one (older generator or seeds) is
        // reused too: the first round only looks for the words a table gets wrong, and the
        // seeds it adds are learned from scratch with the others at the end.
        let committed = (round == 0).then(|| committed_table(sm, &seeds)).flatten();
        let stale = if round == 0 && committed.is_none() {
            any_committed_table(sm)
        } else {
            None
        };
        let table = match (committed, stale) {
            (Some(t), _) => {
                eprintln!("round 0: using the committed {sm} table (fresh for these seeds)");
                t
            }
            (None, Some(t)) => {
                eprintln!("round 0: using the committed {sm} table (stale) to find wrong words");
                t
            }
            (None, None) => learn::learn(sm, &seeds)?,
        };
        let (n_wrong, wrong) = wrong_words(sm, &table, &words, &truth);
        eprintln!(
            "round {round}: {} encodings, {n_wrong}/{} words wrong, {} new seeds",
            table.encodings.len(),
            words.len(),
            wrong.len()
        );
        let before = seeds.len();
        let known: BTreeSet<u128> = seeds.iter().copied().collect();
        seeds.extend(wrong.into_values().filter(|w| !known.contains(w)));
        if seeds.len() == before {
            break;
        }
    }
    seeds.sort_unstable();
    seeds.dedup();
    Ok(seeds)
}

/// The words `table` prints differently from nvdisasm: their count, and one of them per
/// distinct nvdisasm template (with its immediates: encodings may be pinned to an immediate
/// that decides an alias, e.g. IMAD.SHL.U32 for powers of two), to become seeds.
fn wrong_words(
    sm: &str,
    table: &sass::Table,
    words: &[u128],
    truth: &[Option<String>],
) -> (usize, BTreeMap<String, u128>) {
    let mut wrong: BTreeMap<String, u128> = BTreeMap::new();
    let mut n_wrong = 0usize;
    for (i, (w, t)) in words.iter().zip(truth).enumerate() {
        let Some(t) = t else { continue };
        let pc = (i * 16) as u64;
        let ours = table.print(*w, pc, &|_| None);
        if normalize(&ours) != normalize(t) {
            n_wrong += 1;
            let sp = sass::text::split_for(sm, t);
            let mut key = sp.template;
            for sl in sp
                .slots
                .iter()
                .filter(|s| s.kind == sass::text::SlotKind::Hex)
            {
                key.push_str(&format!(" {:x}", sl.value));
            }
            if std::env::var_os("KILN_PROBE_DEBUG").is_some() && !wrong.contains_key(&key) {
                eprintln!("  {w:032x}\n    ours     {ours}\n    nvdisasm {t}");
            }
            wrong.entry(key).or_insert(*w);
        }
    }
    (n_wrong, wrong)
}

/// The table file of `sm` as committed, whatever its inputs.
fn any_committed_table(sm: &str) -> Option<sass::Table> {
    let text = std::fs::read_to_string(tables_dir().join(format!("{sm}.txt"))).ok()?;
    sass::Table::parse(sm, &text).ok()
}

/// The table file of `sm` if its header's inputs-hash is that of `seeds` with this generator.
fn committed_table(sm: &str, seeds: &[u128]) -> Option<sass::Table> {
    let text = std::fs::read_to_string(tables_dir().join(format!("{sm}.txt"))).ok()?;
    let t = sass::Table::parse(sm, &text).ok()?;
    let seeds_text: String = seeds.iter().map(|w| format!("{w:032x}\n")).collect();
    let want = format!("inputs-hash {:016x}", seeds_hash(sm, &seeds_text));
    t.header.contains(&want).then_some(t)
}

/// Collapses runs of spaces (nvdisasm pads the guard column) and trims ` ;`.
pub fn normalize(t: &str) -> String {
    let t = t.trim();
    let t = t.strip_suffix(';').unwrap_or(t).trim_end();
    let mut out = String::with_capacity(t.len());
    let mut prev_space = false;
    for c in t.chars() {
        if c == ' ' {
            if !prev_space {
                out.push(c);
            }
            prev_space = true;
        } else {
            out.push(c);
            prev_space = false;
        }
    }
    out
}

/// Times a collected table is learned again for words it gets wrong
/// (`$KILN_PROBE_FINAL_CHECKS`, default 1).
fn final_checks() -> usize {
    std::env::var("KILN_PROBE_FINAL_CHECKS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1)
}

/// Collection rounds (`$KILN_PROBE_ROUNDS`, default 12).
fn rounds() -> usize {
    std::env::var("KILN_PROBE_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(12)
}
