//! `cargo xtask sm-forms --base sm_XX --arch sm_YY [--dir DIR] [--shard K/N]`: which
//! instruction forms ptxas 13.0.88 writes for one SM and not for another, on the same PTX.
//!
//! Every corpus file that both SMs compile (as the corpus stages select them for `--arch`) is
//! compiled by ptxas for both; each kernel's words are decoded with kiln's SASS tables and
//! reduced to their mnemonics with modifiers (`I2FP.F32.S32`, `HFMA2.MMA`). A mnemonic that
//! one SM's code for a file uses and the other's does not counts once for that file. The
//! report lists the mnemonics by how many files show them on one side only: a form that moves
//! wholesale (every file that has `I2F` on the base has `I2FP.F32.S32` on the other) is an
//! instruction-form choice of the SM (`target::Forms`); a few files either way are scheduling
//! and register-allocation differences. This is how the forms of `sm_86` and `sm_89` were
//! told apart from `sm_80`'s.

use std::collections::{BTreeMap, BTreeSet};

use crate::corpus::{self, CorpusArgs, PtxasOutcome};

const USAGE: &str =
    "usage: cargo xtask sm-forms --base sm_XX --arch sm_YY [--dir DIR] [--shard K/N] [--top N]";

/// The mnemonics (with modifiers) of every instruction in the code sections of ptxas's cubin
/// for `text` on `arch` (`None` when ptxas rejects it or the cubin does not read).
fn forms(text: &str, arch: &str) -> Option<BTreeSet<String>> {
    let Ok(PtxasOutcome::Ok { cubin, .. }) = corpus::ptxas_cubin(text, arch, &[]) else {
        return None;
    };
    let table = sass::table(arch)?;
    let mut out = BTreeSet::new();
    for (_, code) in corpus::disasm::text_sections(&cubin).ok()? {
        for (k, w) in sass::words(&code).into_iter().enumerate() {
            let text = table.print(w, k as u64 * 16, &|_| None);
            let mut parts = text.split_whitespace();
            let mut op = parts.next().unwrap_or("");
            if op.starts_with('@') {
                op = parts.next().unwrap_or("");
            }
            let op = op.trim_end_matches(';');
            if !op.is_empty() {
                out.insert(op.to_string());
            }
        }
    }
    Some(out)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut base = None;
    let mut top = 40usize;
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--base" => base = Some(it.next().ok_or(USAGE)?.clone()),
            "--top" => {
                top = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| USAGE.to_string())?
            }
            _ => rest.push(a.clone()),
        }
    }
    let base = base.ok_or(USAGE)?;
    let args = CorpusArgs::parse_stage(&rest)?;
    let arch = args.require_arch("sm-forms")?.to_string();
    // Files both SMs compile: those selected for the newer of the two.
    let files = args.files_for_arch(&arch);
    let per_file = corpus::par_map("sm-forms", &files, |(_, _, text)| {
        Some((forms(text, &base)?, forms(text, &arch)?))
    });
    let mut only_base: BTreeMap<String, usize> = BTreeMap::new();
    let mut only_arch: BTreeMap<String, usize> = BTreeMap::new();
    let mut compared = 0;
    for (b, a) in per_file.into_iter().flatten() {
        compared += 1;
        for m in b.difference(&a) {
            *only_base.entry(m.clone()).or_default() += 1;
        }
        for m in a.difference(&b) {
            *only_arch.entry(m.clone()).or_default() += 1;
        }
    }
    let mut rows: Vec<(usize, String, &str)> = only_base
        .iter()
        .map(|(m, n)| (*n, m.clone(), base.as_str()))
        .chain(
            only_arch
                .iter()
                .map(|(m, n)| (*n, m.clone(), arch.as_str())),
        )
        .collect();
    rows.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    println!("files\tonly in\tmnemonic");
    for (n, m, side) in rows.iter().take(top) {
        println!("{n}\t{side}\t{m}");
    }
    println!(
        "RESULT sm-forms base={base} arch={arch} files={compared} only_base={} only_arch={}",
        only_base.len(),
        only_arch.len()
    );
    Ok(())
}
