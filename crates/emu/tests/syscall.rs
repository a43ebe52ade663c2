//! System calls (`vprintf`, `__assertfail`): `LEPC` and `CALL.ABS.NOINC` through the address
//! the loader gives an undefined function, the register ABI, the poisoned registers, and the
//! harness comparing the emulator's device-runtime log with the interpreter's.
//!
//! The hand-written snippets' expectations follow from the ABI (arguments from R4, result in
//! R4, return to R20:R21) and the CUDA printf buffer layout; the ptxas tests compile
//! `test-data/devrt/printf.ptx` (nvcc's code for `printf.cu`) with the oracle and skip with a
//! printed reason when it is not installed.

use emu::load::{EXTERN_WINDOW, Program, program_from_text};
use emu::{EmuError, Launch};
use harness::{Config, Verdict};
use interp::{DeviceLog, Memory, PrintfArg};

/// The externs of the hand-written programs, in bank-4 order: `c[0x4][0x0]`, `[0x8]`,
/// `[0x10]`.
const EXTERNS: [&str; 3] = ["vprintf", "__assertfail", "malloc"];

/// A program from sm_80 text with `EXTERNS` resolved as the loader resolves them.
fn program(lines: &[String], param_bytes: u32) -> Program {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut p = program_from_text(80, &refs, param_bytes).expect("snippet parses");
    p.externs = EXTERNS.iter().map(|s| s.to_string()).collect();
    let bank: Vec<u8> = (0..EXTERNS.len() as u64)
        .flat_map(|i| (EXTERN_WINDOW + 16 * i).to_le_bytes())
        .collect();
    p.banks.insert(4, bank);
    p
}

fn launch(threads: u32, params: Vec<u8>) -> Launch {
    Launch {
        grid: [1, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared: 0,
        params,
        step_limit: 10_000,
    }
}

/// Which way the return address is formed.
#[derive(Clone, Copy)]
enum Lepc {
    /// sm_90: `LEPC R20, target`.
    Target,
    /// sm_80: `LEPC R14` (its own address), plus the distance to the return point.
    OwnAddress,
}

/// `vprintf("t=%d x=%f\n", tid, 2.5)` as ptxas calls it (the buffer at the stack pointer in
/// local memory), `guard` on the call; then the thread's 64-byte slot of the output gets R4,
/// R5, R16, P0 (as 0/1), R20, R21.
fn vprintf_snippet(lepc: Lepc, guard: &str) -> Vec<String> {
    let mut l: Vec<String> = [
        "S2R R10, SR_TID.X",
        "IMAD.MOV.U32 R2, RZ, RZ, c[0x0][0x160]",
        "IMAD.MOV.U32 R3, RZ, RZ, c[0x0][0x164]",
        "IMAD.WIDE.U32 R2, R10, 0x40, R2",
        "IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]",
        "IADD3 R1, R1, -0x10, RZ",
        "STL [R1], R10",
        "IMAD.MOV.U32 R12, RZ, RZ, RZ",
        "IMAD.MOV.U32 R13, RZ, RZ, 0x40040000",
        "STL.64 [R1+0x8], R12",
        "IADD3 R6, P1, R1, c[0x0][0x20], RZ",
        "IMAD.X R7, RZ, RZ, c[0x0][0x24], P1",
        "IMAD.MOV.U32 R4, RZ, RZ, c[0x0][0x168]",
        "IMAD.MOV.U32 R5, RZ, RZ, c[0x0][0x16c]",
        "LDC.64 R8, c[0x4][0x0]",
        "IMAD.MOV.U32 R16, RZ, RZ, 0x1234",
        "ISETP.NE.AND P0, PT, R10, RZ, PT",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let lepc_at = 16 * l.len() as u64;
    match lepc {
        Lepc::Target => {
            let ret = lepc_at + 32;
            l.push(format!("LEPC R20, `(@{ret:#x})"));
        }
        Lepc::OwnAddress => {
            let ret = lepc_at + 16 * 8;
            l.push("LEPC R14".into());
            l.push(format!("MOV R11, {ret:#x}"));
            l.push(format!("MOV R20, {lepc_at:#x}"));
            l.push("MOV R21, 0x0".into());
            l.push("MOV R0, 0x0".into());
            l.push("IADD3 R20, P2, P3, -R20, R11, R14".into());
            l.push("IADD3.X R21, ~R0, R21, R15, P2, P3".into());
        }
    }
    l.push(format!("{guard}CALL.ABS.NOINC R8"));
    l.push("SEL R17, RZ, 0x1, !P0".into());
    for (i, r) in ["R4", "R5", "R16", "R17", "R20", "R21"].iter().enumerate() {
        l.push(format!("STG.E [R2.64+{:#x}], {r}", 4 * i));
    }
    l.push("EXIT".into());
    l
}

/// Runs the vprintf snippet on `threads` threads: per thread the six output words, and the log.
fn run_vprintf(lepc: Lepc, guard: &str, threads: u32) -> (Vec<Vec<u32>>, DeviceLog) {
    let prog = program(&vprintf_snippet(lepc, guard), 16);
    let mut mem = Memory::new();
    let out = mem.alloc("out", vec![0; 64 * threads as usize]);
    let fmt = mem.alloc("format", b"t=%d x=%f\n\0".to_vec());
    let mut params = out.to_le_bytes().to_vec();
    params.extend_from_slice(&fmt.to_le_bytes());
    emu::run(&prog, &mut mem, "k", &launch(threads, params)).expect("runs");
    let data = &mem.buffer(out).expect("out").data;
    let words = (0..threads as usize)
        .map(|t| {
            (0..6)
                .map(|i| u32::from_le_bytes(data[t * 64 + 4 * i..][..4].try_into().unwrap()))
                .collect()
        })
        .collect();
    (words, mem.device_log().clone())
}

#[test]
fn vprintf_returns_its_argument_count_and_poisons_what_the_callee_may_change() {
    for lepc in [Lepc::Target, Lepc::OwnAddress] {
        let (out, log) = run_vprintf(lepc, "", 3);
        for (t, w) in out.iter().enumerate() {
            // R4 = 2 arguments; R5, R20, R21 poisoned; R16 kept; P0 (tid != 0) inverted.
            assert_eq!(
                w,
                &[
                    2,
                    0xdead_be05,
                    0x1234,
                    u32::from(t == 0),
                    0xdead_be14,
                    0xdead_be15
                ],
                "thread {t}"
            );
        }
        assert_eq!(log.printf.len(), 3);
        for (t, r) in log.sorted_printf().iter().enumerate() {
            assert_eq!((r.ctaid, r.tid, r.seq), ([0; 3], [t as u32, 0, 0], 0));
            assert_eq!(r.format, b"t=%d x=%f\n");
            assert_eq!(
                r.args,
                [
                    PrintfArg::Int {
                        size: 4,
                        bits: t as u64
                    },
                    PrintfArg::Double(2.5f64.to_bits())
                ]
            );
        }
    }
}

#[test]
fn only_the_lanes_the_guard_selects_call() {
    let (out, log) = run_vprintf(Lepc::Target, "@P0 ", 3);
    // Thread 0 skips the call: R4:R5 still hold the format pointer's words, P0 is false.
    assert_eq!(out[0][2..4], [0x1234, 0]);
    assert_ne!(out[0][1], 0xdead_be05);
    for w in &out[1..] {
        assert_eq!(w[..4], [2, 0xdead_be05, 0x1234, 0]);
    }
    let tids: Vec<u32> = log.sorted_printf().iter().map(|r| r.tid[0]).collect();
    assert_eq!(tids, [1, 2]);
}

/// `__assertfail(message, file, 22, function, 1)` for every thread, the strings from the
/// parameters at 0x168, 0x170, 0x178.
fn assert_snippet(target: &str) -> Vec<String> {
    let mut l: Vec<String> = [
        "IMAD.MOV.U32 R4, RZ, RZ, c[0x0][0x168]",
        "IMAD.MOV.U32 R5, RZ, RZ, c[0x0][0x16c]",
        "IMAD.MOV.U32 R6, RZ, RZ, c[0x0][0x170]",
        "IMAD.MOV.U32 R7, RZ, RZ, c[0x0][0x174]",
        "IMAD.MOV.U32 R8, RZ, RZ, 0x16",
        "IMAD.MOV.U32 R10, RZ, RZ, c[0x0][0x178]",
        "IMAD.MOV.U32 R11, RZ, RZ, c[0x0][0x17c]",
        "IMAD.MOV.U32 R12, RZ, RZ, 0x1",
        "IMAD.MOV.U32 R13, RZ, RZ, RZ",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    l.push(target.to_string());
    let ret = 16 * (l.len() as u64 + 2);
    l.push(format!("LEPC R20, `(@{ret:#x})"));
    l.push("CALL.ABS.NOINC R2".into());
    l.push("EXIT".into());
    l
}

fn run_assert(target: &str) -> (Result<emu::Stats, EmuError>, DeviceLog) {
    let prog = program(&assert_snippet(target), 32);
    let mut mem = Memory::new();
    let out = mem.alloc("out", vec![0; 64]);
    let mut params = out.to_le_bytes().to_vec();
    for s in [&b"x > 0\0"[..], b"f.cu\0", b"void k()\0"] {
        params.extend_from_slice(&mem.alloc("string", s.to_vec()).to_le_bytes());
    }
    let r = emu::run(&prog, &mut mem, "k", &launch(4, params));
    (r, mem.device_log().clone())
}

#[test]
fn assertfail_records_the_assertion_and_traps() {
    let (r, log) = run_assert("LDC.64 R2, c[0x4][0x8]");
    let Err(EmuError::Trap {
        message,
        thread,
        cta,
        ..
    }) = r
    else {
        panic!("expected a trap, got {r:?}");
    };
    assert_eq!((thread, cta), ([0; 3], [0; 3]));
    assert_eq!(
        message,
        "f.cu:22: void k(): block: [0,0,0], thread: [0,0,0] Assertion `x > 0` failed."
    );
    // Lane 0 calls first and its trap ends the run.
    assert_eq!(log.asserts.len(), 1);
    assert!(log.printf.is_empty());
}

#[test]
fn other_call_targets_are_unsupported() {
    let (r, log) = run_assert("LDC.64 R2, c[0x4][0x10]");
    assert!(
        matches!(&r, Err(EmuError::Unsupported { reason, .. }) if reason.contains("`malloc`")),
        "{r:?}"
    );
    let (r, _) = run_assert("IMAD.MOV.U32 R2, RZ, RZ, 0x1234");
    assert!(
        matches!(&r, Err(EmuError::Unsupported { reason, .. }) if reason.contains("CALL.ABS to 0x1234")),
        "{r:?}"
    );
    assert!(log.asserts.is_empty());
    // An indirect call (`CALL.REL.NOINC R10 `(kernel)`, virtual functions) is no system call.
    let prog = program(
        &[
            "IMAD.MOV.U32 R10, RZ, RZ, 0x20".to_string(),
            "CALL.REL.NOINC R10 `(@0x0)".to_string(),
            "EXIT".to_string(),
        ],
        0,
    );
    let r = emu::run(&prog, &mut Memory::new(), "k", &launch(1, Vec::new()));
    assert!(
        matches!(&r, Err(EmuError::Unsupported { reason, .. }) if reason.contains("indirect call")),
        "{r:?}"
    );
}

#[test]
fn a_return_address_outside_the_code_traps() {
    let mut lines = vprintf_snippet(Lepc::Target, "");
    let lepc = lines.iter().position(|l| l.starts_with("LEPC")).unwrap();
    lines[lepc] = "MOV R20, 0x40".into();
    let prog = program(&lines, 16);
    let mut mem = Memory::new();
    let out = mem.alloc("out", vec![0; 64]);
    let fmt = mem.alloc("format", b"t=%d x=%f\n\0".to_vec());
    let mut params = out.to_le_bytes().to_vec();
    params.extend_from_slice(&fmt.to_le_bytes());
    let r = emu::run(&prog, &mut mem, "k", &launch(1, params));
    assert!(
        matches!(&r, Err(EmuError::Trap { message, .. }) if message.contains("not a code address")),
        "{r:?}"
    );
}

// ---- ptxas's code for test-data/devrt/printf.cu, against the interpreter -----------------

const PRINT: &str = "_Z5printPif";
const CHECK: &str = "_Z5checkPi";

fn ptx() -> String {
    let p = test_support::workspace_root().join("test-data/devrt/printf.ptx");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"))
}

/// ptxas's cubin of the test PTX for `arch`, or `None` (after printing why) without ptxas.
fn ptxas_cubin(arch: &str) -> Option<Vec<u8>> {
    let src = test_support::workspace_root().join("test-data/devrt/printf.ptx");
    test_support::ptxas_cubin(&src, arch, &[])
}

/// The logs of one harness-shaped launch of `kernel`: (interpreter, emulator).
fn logs(ptx: &str, cubin: &[u8], kernel: &str, cfg: &Config) -> (DeviceLog, DeviceLog) {
    let mut prog = interp::Program::from_text(ptx).unwrap();
    let image = emu::load::decode(cubin).unwrap();
    prog.set_shared_layout(interp::SharedLayout::for_sm(image.sm()));
    let k = prog.kernel(kernel).unwrap();
    let inp = harness::inputs(
        prog.params(k),
        prog.param_size(k) as usize,
        &prog.texture_uses(k),
        cfg,
    );
    let mut imem = Memory::new();
    let (iparams, _) = harness::place(&inp, &mut imem);
    prog.load(&mut imem);
    let ilaunch = interp::Launch {
        grid: cfg.grid,
        block: cfg.block,
        dynamic_shared: cfg.dynamic_shared,
        params: iparams,
        step_limit: cfg.step_limit,
    };
    let _ = prog.run(&mut imem, k, &ilaunch);
    let mut emem = Memory::new();
    let (eparams, _) = harness::place(&inp, &mut emem);
    let eprog = image.instantiate(&mut emem).unwrap();
    let elaunch = Launch {
        grid: cfg.grid,
        block: cfg.block,
        dynamic_shared: cfg.dynamic_shared,
        params: eparams,
        step_limit: cfg.step_limit,
    };
    let _ = emu::run(&eprog, &mut emem, kernel, &elaunch);
    (imem.device_log().clone(), emem.device_log().clone())
}

/// A configuration whose generated buffer holds a 7 among the elements the grid reads, so
/// that `check` fails its assertion.
fn config_with_a_seven(ptx: &str) -> Config {
    let prog = interp::Program::from_text(ptx).unwrap();
    let k = prog.kernel(CHECK).unwrap();
    (1u64..)
        .map(|seed| Config {
            seed,
            ..Config::default()
        })
        .find(|cfg| {
            let inp = harness::inputs(
                prog.params(k),
                prog.param_size(k) as usize,
                &prog.texture_uses(k),
                cfg,
            );
            let threads = (cfg.grid[0] * cfg.block[0]) as usize;
            inp.buffers[0].2[..4 * threads]
                .chunks(4)
                .any(|w| w == 7u32.to_le_bytes())
        })
        .expect("a seed")
}

#[test]
fn printing_kernels_of_ptxas_match_the_interpreter() {
    let ptx = ptx();
    for arch in ["sm_80", "sm_90"] {
        let Some(cubin) = ptxas_cubin(arch) else {
            return;
        };
        let cfg = Config::default();
        assert_eq!(
            harness::compare(&ptx, &cubin, PRINT, &cfg),
            Verdict::Equal,
            "{arch}"
        );
        let (i, e) = logs(&ptx, &cubin, PRINT, &cfg);
        // Every printing thread calls three times: the first call has 11 arguments.
        assert!(i.printf.len() >= 30, "{arch}: {} records", i.printf.len());
        assert_eq!(i.printf.len() % 3, 0);
        assert_eq!(i.sorted_printf(), e.sorted_printf(), "{arch}");
        assert!(
            i.sorted_printf()
                .iter()
                .all(|r| r.args.len() == 11 || r.args.len() == 3)
        );

        let cfg = config_with_a_seven(&ptx);
        assert_eq!(
            harness::compare(&ptx, &cubin, CHECK, &cfg),
            Verdict::Equal,
            "{arch}"
        );
        let (i, e) = logs(&ptx, &cubin, CHECK, &cfg);
        assert_eq!(i.asserts.len(), 1, "{arch}");
        assert_eq!(i.asserts, e.asserts, "{arch}");
        assert_eq!(i.asserts[0].line, 22);
    }
}

/// Renames the destination register `R{from}` of the last instruction before the first
/// `CALL.ABS.NOINC` of `kernel` that writes it to `R{to}` (re-encoded, control bits kept):
/// the call's argument then sits in a register the callee does not read.
fn misplace_argument(cubin: &[u8], kernel: &str, from: u8, to: u8) -> Vec<u8> {
    let mut c = cubin::read(cubin).unwrap();
    let table = sass::table(&format!("sm_{}", c.header.sm())).unwrap();
    let name = format!(".text.{kernel}");
    let s = c.sections.iter_mut().find(|s| s.name == name).unwrap();
    let cubin::SectionData::Bytes(data) = &mut s.data else {
        panic!("{name} holds bytes");
    };
    let words = sass::words(data);
    let texts: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            table
                .decode(*w, 16 * i as u64)
                .map(|d| d.text(&|t| Some(format!("{t:#x}"))))
                .unwrap_or_default()
        })
        .collect();
    let call = texts
        .iter()
        .position(|t| t.starts_with("CALL.ABS.NOINC"))
        .expect("a system call");
    let dest = format!("R{from},");
    let at = (0..call)
        .rev()
        .find(|&i| {
            texts[i]
                .split_once(' ')
                .is_some_and(|(_, ops)| ops.starts_with(&dest))
        })
        .unwrap_or_else(|| panic!("no write of R{from} before the call in {kernel}"));
    let text = texts[at].replacen(&dest, &format!("R{to},"), 1);
    let w = sass::encode::assemble_line(table, &text, 16 * at as u64, &|_| None)
        .unwrap_or_else(|e| panic!("`{text}`: {e}"));
    let mask = sass::control::CONTROL_MASK;
    let w = (w & !mask) | (words[at] & mask);
    data[16 * at..16 * at + 16].copy_from_slice(&w.to_le_bytes());
    cubin::write(&c)
}

#[test]
fn an_argument_in_the_wrong_register_differs() {
    let ptx = ptx();
    for arch in ["sm_80", "sm_90"] {
        let Some(cubin) = ptxas_cubin(arch) else {
            return;
        };
        // vprintf's argument buffer (high word, R7) left in R9: the emulator reads the
        // arguments from elsewhere.
        let bad = misplace_argument(&cubin, PRINT, 7, 9);
        let v = harness::compare(&ptx, &bad, PRINT, &Config::default());
        assert!(matches!(v, Verdict::Differ(_)), "{arch}: {v:?}");
        // __assertfail's line (R8) left in R9: both trap, at different lines.
        let bad = misplace_argument(&cubin, CHECK, 8, 9);
        let v = harness::compare(&ptx, &bad, CHECK, &config_with_a_seven(&ptx));
        assert!(
            matches!(&v, Verdict::Differ(d) if d.contains("failed assertion differs")),
            "{arch}: {v:?}"
        );
        // Two cubins against each other (kiln's against ptxas's) compare the logs too.
        let v = harness::compare_cubins(&ptx, &bad, &cubin, CHECK, &config_with_a_seven(&ptx));
        assert!(
            matches!(&v, Verdict::Differ(d) if d.contains("failed assertion differs")),
            "{arch}: {v:?}"
        );
        // The unchanged cubin through the same paths is equal.
        let v = harness::compare(&ptx, &cubin, CHECK, &config_with_a_seven(&ptx));
        assert_eq!(v, Verdict::Equal, "{arch}");
        let v = harness::compare_cubins(&ptx, &cubin, &cubin, PRINT, &Config::default());
        assert_eq!(v, Verdict::Equal, "{arch}");
    }
}
