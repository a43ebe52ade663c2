//! Instruction forms checked by execution: the kernels of `test-data/emu-forms/*.ptx` are
//! compiled by the real ptxas and must run in the emulator exactly like the PTX interpreter
//! runs them (`harness::compare`, several input seeds). Each file says which SASS forms
//! ptxas makes of it; the test also checks that those opcodes are in ptxas's code, so that a
//! kernel cannot pass without exercising them. Skips with a printed reason without the oracle.

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

/// (file, arches, opcodes ptxas must emit for it on every arch).
const FILES: &[(&str, &[&str], &[&str])] = &[
    (
        "packed.ptx",
        &["sm_80", "sm_90"],
        &["HMNMX2", "HSET2", "HSETP2", "I2IP", "IDP", "F2FP", "PLOP3"],
    ),
    (
        "sm90.ptx",
        &["sm_90"],
        &["F2FP", "VIMNMX", "HSET2", "HSETP2"],
    ),
    (
        "mma.ptx",
        &["sm_80", "sm_90"],
        &["HMMA", "IMMA", "DMMA", "LDSM"],
    ),
    ("surface.ptx", &["sm_80", "sm_90"], &["SUST", "SULD"]),
];

#[test]
fn instruction_forms_match_the_interpreter() {
    let (Some(ptxas), Some(nvdisasm)) = (oracle("ptxas"), oracle("nvdisasm")) else {
        println!(
            "skipping: no ptxas/nvdisasm oracle (run `cargo xtask oracle` or set $KILN_ORACLE_DIR)"
        );
        return;
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test-data/emu-forms/ptx");
    let tmp = std::env::temp_dir().join(format!("kiln-emu-forms-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut checked = 0;
    let mut expected = 0;
    let mut failures = Vec::new();
    for (file, arches, opcodes) in FILES {
        let src = dir.join(file);
        let ptx = std::fs::read_to_string(&src).unwrap();
        let prog = interp::Program::from_text(&ptx).expect("the interpreter lowers the file");
        assert!(!prog.kernels().is_empty(), "{file} has no kernels");
        expected += 3 * arches.len() * prog.kernels().len();
        for arch in *arches {
            let out = tmp.join(format!("{file}.{arch}.cubin"));
            let st = Command::new(&ptxas)
                .arg(format!("-arch={arch}"))
                .arg(&src)
                .arg("-o")
                .arg(&out)
                .status()
                .expect("ptxas runs");
            assert!(st.success(), "ptxas failed on {file} for {arch}");
            let listing = Command::new(&nvdisasm)
                .arg("-c")
                .arg(&out)
                .output()
                .unwrap();
            let listing = String::from_utf8_lossy(&listing.stdout);
            for op in *opcodes {
                assert!(
                    listing.contains(&format!(" {op}")),
                    "ptxas's {arch} code for {file} has no {op}: the test would not exercise it"
                );
            }
            let cubin = std::fs::read(&out).unwrap();
            for kernel in prog.kernels() {
                for seed in [1, 2, 3] {
                    let cfg = harness::Config {
                        seed,
                        ..harness::Config::default()
                    };
                    let v = harness::compare(&ptx, &cubin, kernel, &cfg);
                    if v != harness::Verdict::Equal {
                        failures.push(format!("{file} {kernel} on {arch}, seed {seed}: {v:?}"));
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, expected);
    let _ = std::fs::remove_dir_all(&tmp);
}
