//! Device-debug (`ptxas -g`, what `nvcc -G` asks for) code calls functions by absolute
//! address: relocated `MOV R20/R21` pairs build the return address, a relocated
//! `CALL.ABS.NOINC` jumps to the callee, `RET.ABS.NODEC R20` returns, and every frame is
//! checked against `SR_LMEMHIOFF`. The emulator applies those code relocations
//! (`emu::load::apply_code_relocs`); these tests run ptxas's `-g` code for a small call chain
//! against the PTX interpreter (skipping with a printed reason without the oracle), and check
//! that a return to an address outside the code traps.

use emu::load::program_from_text;
use emu::{EmuError, Launch};
use harness::{Config, Verdict};
use interp::Memory;

/// The test PTX: two functions, one calling the other twice, called from the kernel.
fn calls_ptx() -> std::path::PathBuf {
    test_support::workspace_root().join("test-data/debug/calls.ptx")
}

/// The code relocation types of a cubin (so that the test is known to exercise them).
fn code_reloc_types(bytes: &[u8]) -> Vec<u32> {
    let c = cubin::read(bytes).expect("ptxas's cubin reads");
    let mut t: Vec<u32> = c
        .sections
        .iter()
        .filter_map(|s| match &s.data {
            cubin::model::SectionData::Relocs { relocs, .. }
                if c.sections[s.info as usize].name.starts_with(".text.") =>
            {
                Some(relocs.iter().map(|r| r.rtype).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect();
    t.sort_unstable();
    t.dedup();
    t
}

#[test]
fn device_debug_calls_run_like_the_interpreter() {
    // sm_75/sm_80/sm_86/sm_89 call through `R_CUDA_ABS47_34`, sm_90 through
    // `R_CUDA_ABS55_16_34`.
    for (arch, call_type) in [
        ("sm_75", 58),
        ("sm_80", 58),
        ("sm_86", 58),
        ("sm_89", 58),
        ("sm_90", 75),
    ] {
        let Some(cubin) = test_support::ptxas_cubin(&calls_ptx(), arch, &["-g"]) else {
            return;
        };
        assert_eq!(
            code_reloc_types(&cubin),
            vec![56, 57, call_type],
            "{arch}: ptxas -g code relocations"
        );
        let cfg = Config {
            require_no_trap: true,
            ..Config::default()
        };
        let v = harness::compare(
            &std::fs::read_to_string(calls_ptx()).unwrap(),
            &cubin,
            "debug_calls",
            &cfg,
        );
        assert_eq!(v, Verdict::Equal, "{arch}");
    }
}

#[test]
fn a_return_to_an_address_outside_the_code_traps() {
    let lines = [
        "MOV R20, 0x1230",
        "MOV R21, 0x0",
        "RET.ABS.NODEC R20 0x0",
        "EXIT",
    ];
    let prog = program_from_text(80, &lines, 0).expect("snippet parses");
    let launch = Launch {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_shared: 0,
        params: Vec::new(),
        step_limit: 100,
    };
    let r = emu::run(&prog, &mut Memory::new(), "k", &launch);
    assert!(
        matches!(&r, Err(EmuError::Trap { message, .. }) if message.contains("not a code address")),
        "{r:?}"
    );
}
