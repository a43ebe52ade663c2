//! nvdisasm over many cubins' code at once (the corpus compile stages, the codegen tests).
//!
//! nvdisasm spends 0.2–0.35 s building its tables before it reads a word, so running it once
//! per compiled cubin cost the corpus compile stage about a third of its time and the codegen
//! test most of its. Here the code of many cubins is disassembled in one raw-binary run
//! (`nvdisasm -b SM90 code.bin`), and each cubin is checked in two steps:
//!
//! 1. in-process, [`listing_matches_words`]: kiln's listing of each kernel is the text kiln's
//!    decoder prints for the encoded words (at kernel-relative addresses), each label standing
//!    for one branch target;
//! 2. in the batch, [`check_batch`]: nvdisasm's raw-mode text of every word equals kiln's
//!    decoder text at the word's address in the batch.
//!
//! Together they say what nvdisasm on the cubin says of the code: nvdisasm reads each word as
//! the instruction kiln's listing shows. What raw mode cannot see is the caller's to check on
//! the ELF: a listing with relocated operands or callees (text nvdisasm prints only from the
//! ELF; [`listing_matches_words`] refuses it), a batch that fails (rerun each cubin alone),
//! and the container itself (`cuobjdump -elf`). The decoder is passed in as `print` (kiln's
//! `sass::Table::print`), so that this crate depends on nothing of kiln's.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// A word's text at an address, as kiln's decoder prints it (`sass::Table::print` with no
/// labels: branch targets as addresses).
pub type Print<'a> = &'a dyn Fn(u128, u64) -> String;

/// The 128-bit words of a code section.
fn words(code: &[u8]) -> impl Iterator<Item = u128> + '_ {
    code.chunks_exact(16)
        .map(|c| u128::from_le_bytes(c.try_into().expect("16 bytes")))
}

/// One kernel's encoded code and kiln's listing of it.
pub struct KernelCode {
    pub code: Vec<u8>,
    pub listing: Vec<String>,
}

/// The instruction text of a listing line, without the address comment, the `;` and the
/// control-code comment, whitespace collapsed.
pub fn instruction_text(line: &str) -> String {
    let l = line.trim();
    let l = match l.strip_prefix("/*").and_then(|r| r.split_once("*/")) {
        Some((addr, rest)) if addr.chars().all(|c| c.is_ascii_hexdigit()) => rest,
        _ => l,
    };
    let body = l.split(';').next().unwrap_or(l);
    body.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a cubin's kernels can go into a raw batch: one code section (`.text.*`, of the
/// cubin's `sections`) per kernel, so no callee's code is left out, and every kernel's listing
/// passes [`listing_matches_words`]. Err: why the cubin needs the per-file check.
pub fn batchable<'s>(
    sections: impl IntoIterator<Item = &'s str>,
    print: Print<'_>,
    kernels: &[KernelCode],
) -> Result<(), String> {
    let texts = sections
        .into_iter()
        .filter(|s| s.starts_with(".text."))
        .count();
    if texts != kernels.len() {
        return Err(format!(
            "{texts} code sections for {} kernels",
            kernels.len()
        ));
    }
    kernels
        .iter()
        .try_for_each(|k| listing_matches_words(print, k))
}

/// Checks that kiln's listing of a kernel is its decoder's text of the kernel's words, each
/// label standing for one target address. Err: why the kernel needs the per-file check.
pub fn listing_matches_words(print: Print<'_>, k: &KernelCode) -> Result<(), String> {
    let n = k.code.len() / 16;
    if n != k.listing.len() || !k.code.len().is_multiple_of(16) {
        return Err(format!(
            "listing has {} lines for {} bytes of code",
            k.listing.len(),
            k.code.len()
        ));
    }
    let mut labels: HashMap<String, String> = HashMap::new();
    for (i, (w, line)) in words(&k.code).zip(&k.listing).enumerate() {
        let ours = instruction_text(line);
        let decoded = instruction_text(&print(w, i as u64 * 16));
        if decoded.starts_with(".unknown") {
            return Err(format!("word {i} does not decode: `{ours}`"));
        }
        match_with_labels(&ours, &decoded, &mut labels)
            .map_err(|e| format!("line {i}: kiln `{ours}` decodes as `{decoded}`: {e}"))?;
    }
    Ok(())
}

/// `ours` with each `` `(.L_x_N) `` standing for a hex address in `decoded`; other backquoted
/// or relocated operands cannot be compared without the ELF.
fn match_with_labels(
    ours: &str,
    decoded: &str,
    labels: &mut HashMap<String, String>,
) -> Result<(), String> {
    const OPEN: &str = "`(.L_x_";
    let mut rest_ours = ours;
    let mut rest_dec = decoded;
    while let Some(at) = rest_ours.find(OPEN) {
        let (lit, tail) = rest_ours.split_at(at);
        rest_dec = rest_dec
            .strip_prefix(lit)
            .ok_or_else(|| "text differs".to_string())?;
        let close = tail.find(')').ok_or("unclosed label")?;
        let label = &tail[OPEN.len()..close];
        let hex_len = rest_dec
            .strip_prefix("0x")
            .map(|h| h.chars().take_while(char::is_ascii_hexdigit).count())
            .filter(|n| *n > 0)
            .ok_or("a label where the decoder prints no address")?;
        let target = &rest_dec[..2 + hex_len];
        match labels.get(label) {
            Some(t) if t != target => {
                return Err(format!("label .L_x_{label} stands for {t} and {target}"));
            }
            Some(_) => {}
            None => {
                labels.insert(label.to_string(), target.to_string());
            }
        }
        rest_dec = &rest_dec[2 + hex_len..];
        rest_ours = &tail[close + 1..];
    }
    if rest_ours.contains('`') || rest_ours.contains("@lo(") || rest_ours.contains("@hi(") {
        return Err("relocated operand".into());
    }
    if rest_ours != rest_dec {
        return Err("text differs".into());
    }
    Ok(())
}

/// nvdisasm's `--binary` name of a target (`sm_90a` → `SM90a`).
pub fn binary_arch(target: &str) -> Option<String> {
    let n = target.strip_prefix("sm_")?;
    Some(format!("SM{n}"))
}

/// One batch entry: its kernels' code, laid out one after another.
pub struct Entry<'a> {
    pub kernels: &'a [KernelCode],
}

/// Disassembles the entries' code in one raw-binary nvdisasm run and compares every word's
/// text with kiln's decoder at its address in the batch. Returns, per entry, `None` when
/// nvdisasm agreed and `Some(reason)` otherwise (every entry when nvdisasm failed).
pub fn check_batch(
    nvdisasm: &Path,
    print: Print<'_>,
    arch: &str,
    entries: &[Entry<'_>],
    dir: &Path,
    name: &str,
) -> Vec<Option<String>> {
    let mut bytes = Vec::new();
    // Per word: the entry it belongs to and kiln's decoder text at its batch address.
    let mut expected: Vec<(usize, String)> = Vec::new();
    for (e, entry) in entries.iter().enumerate() {
        for k in entry.kernels {
            for w in words(&k.code) {
                let pc = bytes.len() as u64;
                expected.push((e, instruction_text(&print(w, pc))));
                bytes.extend_from_slice(&w.to_le_bytes());
            }
        }
    }
    let fail_all = |why: String| vec![Some(why); entries.len()];
    let Some(flag) = binary_arch(arch) else {
        return fail_all(format!("no nvdisasm --binary name for {arch}"));
    };
    let path = dir.join(format!("{name}.bin"));
    if let Err(e) = std::fs::write(&path, &bytes) {
        return fail_all(format!("writing {}: {e}", path.display()));
    }
    let out = Command::new(nvdisasm)
        .args(["-b", &flag])
        .arg(&path)
        .output()
        .map_err(|e| e.to_string());
    let _ = std::fs::remove_file(&path);
    let out = match out {
        Ok(o) => o,
        Err(e) => return fail_all(format!("nvdisasm: {e}")),
    };
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !err.trim().is_empty() {
        return fail_all(format!("nvdisasm (raw batch): {}", err.trim()));
    }
    let theirs: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("/*")?;
            let (addr, _) = rest.split_once("*/")?;
            (!addr.is_empty() && addr.chars().all(|c| c.is_ascii_hexdigit()))
                .then(|| instruction_text(l))
        })
        .collect();
    if theirs.len() != expected.len() {
        return fail_all(format!(
            "nvdisasm (raw batch) printed {} instructions for {} words",
            theirs.len(),
            expected.len()
        ));
    }
    let mut verdicts: Vec<Option<String>> = vec![None; entries.len()];
    for (i, ((e, ours), t)) in expected.iter().zip(&theirs).enumerate() {
        if ours != t && verdicts[*e].is_none() {
            verdicts[*e] = Some(format!(
                "nvdisasm (raw) at batch word {i}: nvdisasm `{t}` kiln `{ours}`"
            ));
        }
    }
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_stand_for_one_address_each() {
        let mut l = HashMap::new();
        assert!(match_with_labels("@P0 BRA `(.L_x_0)", "@P0 BRA 0x330", &mut l).is_ok());
        assert!(match_with_labels("BRA `(.L_x_0)", "BRA 0x330", &mut l).is_ok());
        assert!(match_with_labels("BRA `(.L_x_0)", "BRA 0x340", &mut l).is_err());
        assert!(match_with_labels("BSSY B0, `(.L_x_1)", "BSSY B0, 0x40", &mut l).is_ok());
        assert!(match_with_labels("BSSY B1, `(.L_x_1)", "BSSY B0, 0x40", &mut l).is_err());
        assert!(
            match_with_labels("IADD3 R0, R1, 0x1, RZ", "IADD3 R0, R1, 0x2, RZ", &mut l).is_err()
        );
        assert_eq!(
            match_with_labels("CALL.REL.NOINC `(f)", "CALL.REL.NOINC 0x40", &mut l),
            Err("relocated operand".to_string())
        );
        assert_eq!(
            match_with_labels("MOV R2, 32@lo(g)", "MOV R2, 0x0", &mut l),
            Err("relocated operand".to_string())
        );
    }

    #[test]
    fn instruction_text_drops_address_and_control_comment() {
        assert_eq!(
            instruction_text("        /*0140*/ @P0  BRA `(.L_x_0) ;  /* 0x000 */"),
            "@P0 BRA `(.L_x_0)"
        );
        assert_eq!(instruction_text("/*10140*/ EXIT ;"), "EXIT");
    }
}
