//! `mbarrier` objects: hand-offs between warps through arrivals and phase waits, transaction
//! bytes, and misuse (an uninitialised object, more arrivals than pending) reported as
//! undefined instead of computed. The expectations follow from the PTX ISA (a phase completes
//! when its pending arrivals and its transaction count reach zero), not from the
//! interpreter's output.

use interp::{FindingKind, Launch, Memory, Program, RunError, RunOptions, Schedule};

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Runs kernel `k` with 64 threads and a zeroed 1 KiB buffer parameter, sanitizing, in
/// `schedule`: the findings' kinds, or the run error, and the buffer's first 64 words.
fn run(text: &str, schedule: Schedule) -> Result<(Vec<FindingKind>, Vec<u32>), RunError> {
    let mut p = Program::from_text(text).unwrap_or_else(|e| panic!("lowering: {e}"));
    let k = p.kernel("k").expect("kernel");
    let mut mem = Memory::new();
    p.load(&mut mem);
    let out = mem.alloc("out", vec![0; 1024]);
    let mut params = vec![0u8; p.param_size(k) as usize];
    params[..8].copy_from_slice(&out.to_le_bytes());
    let launch = Launch {
        grid: [1, 1, 1],
        block: [64, 1, 1],
        dynamic_shared: 0,
        params,
        step_limit: 200_000,
    };
    let options = RunOptions {
        schedule,
        sanitize: true,
        ..RunOptions::default()
    };
    let stats = p.run_with(&mut mem, k, &launch, &options)?;
    let words = mem.buffer(out).expect("buffer").data[..256]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    Ok((stats.findings.iter().map(|f| f.kind).collect(), words))
}

/// Thread 0 initialises `bar` with `count` (after `init`, a `bar.sync`); warp 0 stores
/// `100 + lane` to `s[lane]` then runs `producer`; warp 1 runs `consumer`, then reads
/// `s[lane]` into `out[32 + lane]`.
fn handoff(count: u32, producer: &str, consumer: &str) -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u64 p)
{{
  .reg .pred %q<3>;
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  .shared .align 4 .b32 s[32];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %q1, %r1, 0;
  @%q1 mbarrier.init.shared.b64 [bar], {count};
  bar.sync 0;
  and.b32 %r2, %r1, 31;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, s;
  add.u32 %r4, %r4, %r3;
  ld.param.u64 %rd1, [p];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  setp.ge.u32 %q1, %r1, 32;
  @%q1 bra CONSUMER;
  add.u32 %r5, %r2, 100;
  st.shared.u32 [%r4], %r5;
  {producer}
  ret;
CONSUMER:
  {consumer}
  ld.shared.u32 %r6, [%r4];
  st.global.u32 [%rd1], %r6;
  ret;
}}
"
    )
}

const WAIT: &str = "WAIT:\n  mbarrier.try_wait.parity.shared.b64 %q2, [bar], 0;\n  @!%q2 bra WAIT;";

fn handed_off(words: &[u32]) -> bool {
    (0..32).all(|l| words[32 + l] == 100 + l as u32)
}

#[test]
fn arrivals_hand_data_to_the_waiting_warp() {
    let text = handoff(32, "mbarrier.arrive.shared.b64 %rd3, [bar];", WAIT);
    for schedule in [Schedule::RoundRobin, Schedule::Interleaved] {
        let (findings, words) = run(&text, schedule).unwrap();
        assert!(findings.is_empty(), "{findings:?}");
        assert!(handed_off(&words));
    }
}

#[test]
fn a_count_of_arrivals_in_one_operation_completes_the_phase() {
    // Lane 0 arrives for the whole warp (after the warp's stores: the lanes synchronise
    // through `bar.warp.sync` first).
    let text = handoff(
        32,
        "bar.warp.sync -1;\n  setp.eq.u32 %q2, %r2, 0;\n  @%q2 mbarrier.arrive.shared::cta.b64 _, [bar], 32;",
        WAIT,
    );
    let (_, words) = run(&text, Schedule::RoundRobin).unwrap();
    assert!(handed_off(&words));
}

#[test]
fn transaction_bytes_hold_the_phase_until_completed() {
    // Every producer lane expects 4 bytes with its arrival and completes them: the phase
    // completes. Without the completion it never does: the waiting warp spins until the
    // step limit.
    let done = handoff(
        32,
        "mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [bar], 4;\n  mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 4;",
        WAIT,
    );
    let (_, words) = run(&done, Schedule::RoundRobin).unwrap();
    assert!(handed_off(&words));
    let open = handoff(
        32,
        "mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [bar], 4;",
        WAIT,
    );
    assert_eq!(
        run(&open, Schedule::RoundRobin).unwrap_err(),
        RunError::StepLimit
    );
}

#[test]
fn misuse_is_reported_as_undefined() {
    let undefined = |text: &str| match run(text, Schedule::RoundRobin) {
        Err(RunError::Unsupported { reason, .. }) => reason,
        other => panic!("{other:?}"),
    };
    // One arrival operation with a count above the phase's pending arrivals (separate
    // arrivals beyond them would belong to the next phase).
    let over = handoff(
        32,
        "setp.eq.u32 %q2, %r2, 0;\n  @%q2 mbarrier.arrive.shared::cta.b64 _, [bar], 33;",
        WAIT,
    );
    assert!(
        undefined(&over).contains("arrive-on with count 33 when 32"),
        "{}",
        undefined(&over)
    );
    // A barrier nobody initialised (the producers arrive at `s`'s first word pair instead).
    let uninit = handoff(32, "mbarrier.arrive.shared.b64 %rd3, [s];", WAIT);
    assert!(undefined(&uninit).contains("not initialized"));
}
