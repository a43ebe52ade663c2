//! CTA barriers with ids and thread counts: producer/consumer hand-offs (`bar.arrive` /
//! `bar.sync`), barriers only some warps reach, and misuse (a barrier that cannot complete,
//! thread counts that disagree) reported instead of hanging. The expectations follow from the
//! PTX ISA (a warp arrives once all its non-exited threads did; a generation completes when
//! the thread count is reached), not from the interpreter's output.

use interp::{FindingKind, Launch, Memory, Program, RunError, RunOptions, Schedule};

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

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
        step_limit: 1_000_000,
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

/// Warp 0 stores `100 + lane` to `s[lane]` then runs `producer`; warp 1 runs `consumer`, then
/// reads `s[lane]` into `out[32 + lane]`.
fn handoff(producer: &str, consumer: &str) -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u64 p)
{{
  .reg .pred %q;
  .reg .b32 %r<8>; .reg .b64 %rd<3>;
  .shared .align 4 .b32 s[32];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, s;
  add.u32 %r4, %r4, %r3;
  ld.param.u64 %rd1, [p];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  setp.ge.u32 %q, %r1, 32;
  @%q bra CONSUMER;
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

#[test]
fn arrive_then_sync_hands_data_to_the_other_warp() {
    for schedule in [Schedule::RoundRobin, Schedule::Interleaved] {
        let (f, out) = run(&handoff("bar.arrive 1, 64;", "bar.sync 1, 64;"), schedule).unwrap();
        assert!(f.is_empty(), "{f:?}");
        assert_eq!(out[32..], (100..132).collect::<Vec<u32>>()[..]);
    }
}

#[test]
fn without_the_producer_arriving_the_handoff_races() {
    // The consumer's barrier counts only itself (32 threads): nothing orders the store.
    let (f, _) = run(&handoff("", "bar.sync 1, 32;"), Schedule::Interleaved).unwrap();
    assert!(
        f.contains(&FindingKind::UninitializedShared) || f.contains(&FindingKind::ReadAfterWrite),
        "{f:?}"
    );
}

#[test]
fn a_barrier_one_warp_reaches_with_its_own_count_completes() {
    let (_, out) = run(
        &handoff(
            "bar.arrive 1, 64;",
            "bar.sync 1, 64;\n  barrier.sync 3, 32;",
        ),
        Schedule::RoundRobin,
    )
    .unwrap();
    assert_eq!(out[32], 100);
}

#[test]
fn a_barrier_that_cannot_complete_is_a_deadlock() {
    // 64 threads expected, only the consumer warp arrives: the hardware would hang.
    match run(&handoff("", "bar.sync 1, 64;"), Schedule::RoundRobin) {
        Err(RunError::Deadlock { .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn thread_counts_that_disagree_are_barrier_misuse() {
    match run(
        &handoff("bar.arrive 1, 64;", "bar.sync 1, 96;"),
        Schedule::RoundRobin,
    ) {
        Err(RunError::Trap { message, .. }) => {
            assert!(message.contains("barrier misuse"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_next_generation_starts_after_completion() {
    // Two rounds on barrier 1: the producer's second arrival belongs to the second round,
    // after the consumer synchronized (and flipped the word) in the first.
    let text = handoff(
        "bar.arrive 1, 64;\n  bar.sync 2, 64;\n  ld.shared.u32 %r5, [%r4];\n  \
         add.u32 %r5, %r5, 1000;\n  st.shared.u32 [%r4], %r5;\n  bar.arrive 1, 64;",
        "bar.sync 1, 64;\n  ld.shared.u32 %r6, [%r4];\n  add.u32 %r6, %r6, 1;\n  \
         st.shared.u32 [%r4], %r6;\n  bar.arrive 2, 64;\n  bar.sync 1, 64;",
    );
    for schedule in [Schedule::RoundRobin, Schedule::Interleaved] {
        let (f, out) = run(&text, schedule).unwrap();
        assert!(f.is_empty(), "{f:?}");
        assert_eq!(out[32..], (1101..1133).collect::<Vec<u32>>()[..]);
    }
}
