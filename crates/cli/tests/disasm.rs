//! `kiln disasm` against `nvdisasm -c` on cubins ptxas makes from test PTX: every instruction
//! line and every label line must be the same (column spacing aside). Skips with a printed
//! reason without the oracle.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Instruction texts (without address and ` ;`) and `.L_x_N:` label lines of a listing, with
/// runs of spaces collapsed; labels after a function's last instruction (nvdisasm's `.size`
/// end labels) are not compared.
fn lines(listing: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    for l in listing.lines() {
        let t = l.trim();
        if t.starts_with(".text.") {
            pending.clear();
            out.push(t.to_string());
        } else if t.starts_with(".L_x_") && t.ends_with(':') {
            pending.push(t.to_string());
        } else if let Some(rest) = t.strip_prefix("/*")
            && let Some((_, text)) = rest.split_once("*/")
        {
            out.append(&mut pending);
            let text = text.trim().trim_end_matches(';').trim_end();
            out.push(text.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    out
}

/// (nvdisasm's, kiln's) listing lines ([`lines`]) of ptxas's cubin of `src` for `arch` with
/// `flags`, or `None` (after printing why) without the oracle.
fn both_listings(src: &Path, arch: &str, flags: &[&str]) -> Option<(Vec<String>, Vec<String>)> {
    let nvdisasm = test_support::oracle_tool_or_skip("nvdisasm")?;
    let bytes = test_support::ptxas_cubin(src, arch, flags)?;
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let cubin = std::env::temp_dir().join(format!("kiln-disasm-{}-{n}.cubin", std::process::id()));
    std::fs::write(&cubin, bytes).unwrap();
    let theirs = Command::new(&nvdisasm)
        .arg("-c")
        .arg(&cubin)
        .output()
        .unwrap();
    let ours = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("disasm")
        .arg(&cubin)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&cubin);
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    Some((
        lines(&String::from_utf8_lossy(&theirs.stdout)),
        lines(&String::from_utf8_lossy(&ours.stdout)),
    ))
}

#[test]
fn indirect_branches_and_labels_match_nvdisasm() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../test-data/sass-probe/ptx/probe_brx.ptx");
    for arch in ["sm_80", "sm_90"] {
        let Some((t, o)) = both_listings(&src, arch, &[]) else {
            return;
        };
        assert!(
            t.iter().filter(|l| l.contains("BRANCH_TARGETS")).count() == 2,
            "{arch}: the test needs two indirect branches: {t:#?}"
        );
        assert_eq!(o, t, "{arch}");
    }
}

/// Device-debug code (`ptxas -g`) calls through relocated absolute addresses: `MOV R20,
/// 32@lo((f + .L_x_0@srel))` builds the return address and `CALL.ABS.NOINC `(callee)``
/// jumps. The instruction lines must equal nvdisasm's, relocations and label numbers
/// included, and every label an instruction names must be defined where nvdisasm defines
/// it (nvdisasm also defines labels at addresses from the debug sections, which kiln does
/// not print).
#[test]
fn relocated_operands_of_debug_code_match_nvdisasm() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test-data/debug/calls.ptx");
    let Some((t, o)) = both_listings(&src, "sm_90", &["-g"]) else {
        return;
    };
    assert!(
        t.iter().any(|l| l.contains("32@lo(("))
            && t.iter().any(|l| l.contains("CALL.ABS.NOINC `(")),
        "the test needs relocated MOVs and CALLs: {t:#?}"
    );
    // Keep the label lines some instruction names.
    let named = |l: &String, all: &[String]| {
        let Some(n) = l.strip_suffix(':') else {
            return true;
        };
        all.iter()
            .any(|x| x.contains(&format!("{n}@")) || x.contains(&format!("({n})")))
    };
    let t: Vec<String> = t.iter().filter(|l| named(l, &t)).cloned().collect();
    let o: Vec<String> = o.iter().filter(|l| named(l, &o)).cloned().collect();
    assert_eq!(o, t);
}
