//! `kiln disasm` against `nvdisasm -c` on cubins ptxas makes from test PTX: every instruction
//! line and every label line must be the same (column spacing aside). Skips with a printed
//! reason without the oracle.

use std::path::PathBuf;
use std::process::Command;

fn oracle(tool: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("KILN_ORACLE_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/kiln-oracle/13.0.88"))
        })?;
    let p = dir.join("bin").join(tool);
    p.is_file().then_some(p)
}

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

#[test]
fn indirect_branches_and_labels_match_nvdisasm() {
    let (Some(ptxas), Some(nvdisasm)) = (oracle("ptxas"), oracle("nvdisasm")) else {
        println!("skipping: no ptxas/nvdisasm oracle (run `cargo xtask oracle`)");
        return;
    };
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../test-data/sass-probe/ptx/probe_brx.ptx");
    let dir = std::env::temp_dir().join(format!("kiln-disasm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for arch in ["sm_80", "sm_90"] {
        let cubin = dir.join(format!("brx.{arch}.cubin"));
        let st = Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&src)
            .arg("-o")
            .arg(&cubin)
            .status()
            .unwrap();
        assert!(st.success());
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
        assert!(
            ours.status.success(),
            "{}",
            String::from_utf8_lossy(&ours.stderr)
        );
        let (t, o) = (
            lines(&String::from_utf8_lossy(&theirs.stdout)),
            lines(&String::from_utf8_lossy(&ours.stdout)),
        );
        assert!(
            t.iter().filter(|l| l.contains("BRANCH_TARGETS")).count() == 2,
            "{arch}: the test needs two indirect branches: {t:#?}"
        );
        assert_eq!(o, t, "{arch}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Device-debug code (`ptxas -g`) calls through relocated absolute addresses: `MOV R20,
/// 32@lo((f + .L_x_0@srel))` builds the return address and `CALL.ABS.NOINC `(callee)``
/// jumps. The instruction lines must equal nvdisasm's, relocations and label numbers
/// included, and every label an instruction names must be defined where nvdisasm defines
/// it (nvdisasm also defines labels at addresses from the debug sections, which kiln does
/// not print).
#[test]
fn relocated_operands_of_debug_code_match_nvdisasm() {
    let (Some(ptxas), Some(nvdisasm)) = (oracle("ptxas"), oracle("nvdisasm")) else {
        println!("skipping: no ptxas/nvdisasm oracle (run `cargo xtask oracle`)");
        return;
    };
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test-data/debug/calls.ptx");
    let dir = std::env::temp_dir().join(format!("kiln-disasm-g-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cubin = dir.join("calls.sm_90.cubin");
    let st = Command::new(&ptxas)
        .args(["-arch=sm_90", "-g"])
        .arg(&src)
        .arg("-o")
        .arg(&cubin)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
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
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let (t, o) = (
        lines(&String::from_utf8_lossy(&theirs.stdout)),
        lines(&String::from_utf8_lossy(&ours.stdout)),
    );
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
    let _ = std::fs::remove_dir_all(dir);
}
