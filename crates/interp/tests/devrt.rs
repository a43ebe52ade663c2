//! `vprintf` and `__assertfail` in the interpreter, on nvcc's code for
//! `test-data/devrt/printf.cu`: the expected records and results are computed from the CUDA
//! source (which conversions, which values), not copied from the interpreter's output.

use interp::{DeviceLog, Launch, Memory, PrintfArg, Program, RunError};

fn program() -> Program {
    let path = test_support::workspace_root().join("test-data/devrt/printf.ptx");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    Program::from_text(&text).unwrap_or_else(|e| panic!("lowering: {e}"))
}

/// Runs `kernel` over 2 CTAs of 32 threads on `a` (parameter 0) and the bytes `rest` of the
/// other parameters; returns `a` afterwards, the log and the run's outcome.
fn run(kernel: &str, a: &[u32], rest: &[u8]) -> (Vec<u32>, DeviceLog, Result<(), RunError>) {
    let mut p = program();
    let k = p.kernel(kernel).expect("kernel");
    let mut mem = Memory::new();
    p.load(&mut mem);
    let bytes: Vec<u8> = a.iter().flat_map(|w| w.to_le_bytes()).collect();
    let buf = mem.alloc("a", bytes);
    let mut params = buf.to_le_bytes().to_vec();
    params.extend_from_slice(rest);
    params.resize(p.param_size(k) as usize, 0);
    let launch = Launch {
        grid: [2, 1, 1],
        block: [32, 1, 1],
        dynamic_shared: 0,
        params,
        step_limit: 1_000_000,
    };
    let r = p.run(&mut mem, k, &launch).map(|_| ());
    let out = mem
        .buffer(buf)
        .expect("buffer")
        .data
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (out, mem.device_log().clone(), r)
}

fn int(v: i64) -> PrintfArg {
    PrintfArg::Int {
        size: 4,
        bits: u64::from(v as u32),
    }
}

fn long(v: i64) -> PrintfArg {
    PrintfArg::Int {
        size: 8,
        bits: v as u64,
    }
}

fn double(v: f64) -> PrintfArg {
    PrintfArg::Double(v.to_bits())
}

fn string(s: &str) -> PrintfArg {
    PrintfArg::Str(Some(s.as_bytes().to_vec()))
}

#[test]
fn printf_records_every_argument_and_returns_their_count() {
    // Element i of the 64 holds i; threads with an element above 20 print three times.
    let a: Vec<u32> = (0..64).collect();
    let f = 1.5f32;
    let (out, log, r) = run("_Z5printPif", &a, &f.to_le_bytes());
    r.expect("runs");
    let printing: Vec<i64> = (21..64).collect();
    assert_eq!(log.printf.len(), 3 * printing.len());
    assert!(log.asserts.is_empty());
    let recs = log.sorted_printf();
    for (n, &i) in printing.iter().enumerate() {
        let v = i; // a[i] == i
        let (cta, tid) = ([(i / 32) as u32, 0, 0], [(i % 32) as u32, 0, 0]);
        let first = recs[3 * n];
        assert_eq!((first.ctaid, first.tid, first.seq), (cta, tid, 0));
        assert_eq!(
            first.format,
            b"%d: a=%d f=%f l=%ld %s %c|%5.2f|%*d|%s|%p %%\n"
        );
        let local = format!("xy{}", (b'0' + (v & 7) as u8) as char);
        assert_eq!(
            first.args,
            [
                int(i),
                int(v),
                double(1.5),
                long(v * 100_000_000_000),
                string("str"),
                int(i64::from(b'A') + (v & 15)),
                double(1.5 * v as f64),
                int(3),
                int(v & 7),
                string(&local),
                PrintfArg::Pointer,
            ],
            "thread {i}"
        );
        for j in 0..2 {
            let r = recs[3 * n + 1 + j];
            assert_eq!((r.ctaid, r.tid, r.seq), (cta, tid, 1 + j as u32));
            assert_eq!(r.format, b"j=%d %lld %hd\n");
            assert_eq!(r.args, [int(j as i64), long(v << j), int(v)]);
        }
    }
    // r = 11 arguments + 2 * 3; a[i] = r * 1000 + v.
    for (i, w) in out.iter().enumerate() {
        let v = i as u32;
        assert_eq!(*w, if v > 20 { 17 * 1000 + v } else { v }, "a[{i}]");
    }
}

#[test]
fn a_failed_assertion_is_recorded_and_traps() {
    // Elements are i % 8: lane 7 of the first warp is the first thread to fail.
    let a: Vec<u32> = (0..64).map(|i| i % 8).collect();
    let (_, log, r) = run("_Z5checkPi", &a, &[]);
    let Err(RunError::Trap {
        message,
        thread,
        cta,
        ..
    }) = r
    else {
        panic!("expected a trap, got {r:?}");
    };
    assert_eq!((thread, cta), ([7, 0, 0], [0, 0, 0]));
    assert_eq!(
        message,
        "printf.cu:22: void check(int *): block: [0,0,0], thread: [7,0,0] Assertion `a[i] != 7` failed."
    );
    assert_eq!(log.asserts.len(), 1);
    let rec = &log.asserts[0];
    assert_eq!(
        (&rec.message[..], &rec.file[..], rec.line, &rec.function[..]),
        (
            &b"a[i] != 7"[..],
            &b"printf.cu"[..],
            22,
            &b"void check(int *)"[..]
        )
    );
    assert!(log.printf.is_empty());
}

#[test]
fn no_failed_assertion_no_trap() {
    let a: Vec<u32> = (0..64).map(|i| i % 7).collect();
    let (out, log, r) = run("_Z5checkPi", &a, &[]);
    r.expect("no element is 7");
    assert!(log.asserts.is_empty());
    assert_eq!(out, (0..64).map(|i| i % 7 + 1).collect::<Vec<u32>>());
}

#[test]
fn other_external_functions_stay_unsupported() {
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .extern .func (.param .b32 r) malloc_like(.param .b64 n);\n\
        .visible .entry k() {\n\t.param .b64 p;\n\t.param .b32 r;\n\tst.param.b64 [p], 8;\n\
        \tcall.uni (r), malloc_like, (p);\n\tret;\n}\n";
    let p = Program::from_text(text).expect("lowers");
    let mut mem = Memory::new();
    let launch = Launch {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_shared: 0,
        params: Vec::new(),
        step_limit: 100,
    };
    let r = p.run(&mut mem, p.kernel("k").unwrap(), &launch);
    assert!(
        matches!(&r, Err(RunError::Unsupported { reason, .. }) if reason.contains("malloc_like")),
        "{r:?}"
    );
}

/// `cudaGraphSetConditional(handle, value)` (test-data/devrt/graph_conditional.ptx): threads
/// with an odd element record (handle, element + tid); the others none.
#[test]
fn graph_set_conditional_records_handle_and_value() {
    let path = test_support::workspace_root().join("test-data/devrt/graph_conditional.ptx");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut p = Program::from_text(&text).unwrap_or_else(|e| panic!("lowering: {e}"));
    let k = p.kernel("set_conditional").expect("kernel");
    let mut mem = Memory::new();
    p.load(&mut mem);
    let a: Vec<u32> = (0..32).map(|i| i * 7 % 10).collect();
    let buf = mem.alloc("a", a.iter().flat_map(|w| w.to_le_bytes()).collect());
    let handle = 0x1234_5678_9abc_u64;
    let mut params = buf.to_le_bytes().to_vec();
    params.extend_from_slice(&handle.to_le_bytes());
    let launch = Launch {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared: 0,
        params,
        step_limit: 1_000_000,
    };
    p.run(&mut mem, k, &launch).expect("runs");
    let mut got: Vec<(u32, u64, u32)> = mem
        .device_log()
        .conditionals
        .iter()
        .map(|c| (c.tid[0], c.handle, c.value))
        .collect();
    got.sort();
    let want: Vec<(u32, u64, u32)> = (0..32u32)
        .filter(|&t| a[t as usize] % 2 == 1)
        .map(|t| (t, handle, a[t as usize] + t))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}
