//! The interpreter as a sanitizer (`interp::sanitize`): each kernel below has a race or an
//! uninitialized read by construction (or, in its twin, none), so the expected findings follow
//! from the PTX memory model, not from the interpreter's output.

use interp::{FindingKind, Launch, Memory, Program, RunOptions, Schedule};

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// Runs `kernel` with `block` threads and one u64 parameter pointing at a zeroed 1 KiB buffer,
/// sanitizing (or in `schedule`); returns the findings' (kind, line) and the buffer.
fn run(
    text: &str,
    block: u32,
    schedule: Schedule,
    sanitize: bool,
) -> (Vec<(FindingKind, u32)>, Vec<u8>) {
    let mut p = Program::from_text(text).unwrap_or_else(|e| panic!("lowering: {e}"));
    let k = p.kernel("k").expect("kernel");
    let mut mem = Memory::new();
    p.load(&mut mem);
    let out = mem.alloc("out", vec![0; 1024]);
    let mut params = vec![0u8; p.param_size(k) as usize];
    params[..8].copy_from_slice(&out.to_le_bytes());
    let launch = Launch {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        dynamic_shared: 0,
        params,
        step_limit: 1_000_000,
    };
    let options = RunOptions {
        schedule,
        sanitize,
        ..RunOptions::default()
    };
    let stats = p.run_with(&mut mem, k, &launch, &options).expect("runs");
    let findings = stats.findings.iter().map(|f| (f.kind, f.line)).collect();
    (findings, mem.buffer(out).expect("buffer").data.clone())
}

/// Each thread stores its id to `s[tid]`, then (after `sync`, which may be empty) reads
/// `s[tid ^ 32]` (the other warp's word with 64 threads) and writes it to `out[tid]`.
/// Line 16 is the store, line 19 the load.
fn exchange(sync: &str) -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<8>; .reg .b64 %rd<3>;
  .shared .align 4 .b32 s[128];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.u32 %r4, %r3, %r2;
  ld.param.u64 %rd1, [p];
  cvt.u64.u32 %rd2, %r2;
  add.u64 %rd1, %rd1, %rd2;
  xor.b32 %r5, %r2, 128;
  st.shared.u32 [%r4], %r1;
  {sync}
  add.u32 %r6, %r3, %r5;
  ld.shared.u32 %r7, [%r6];
  st.global.u32 [%rd1], %r7;
  ret;
}}
"
    )
}

#[test]
fn a_read_of_another_warps_store_without_a_barrier_is_a_race() {
    let (f, _) = run(&exchange(""), 64, Schedule::RoundRobin, true);
    // Warp 0 reads words warp 1 has not written yet (uninitialized), then warp 1 overwrites
    // words warp 0 read (write after read) and reads words warp 0 wrote (read after write).
    assert!(f.contains(&(FindingKind::UninitializedShared, 19)), "{f:?}");
    assert!(f.contains(&(FindingKind::WriteAfterRead, 16)), "{f:?}");
    assert!(f.contains(&(FindingKind::ReadAfterWrite, 19)), "{f:?}");
}

#[test]
fn a_barrier_between_store_and_load_orders_them() {
    let (f, out) = run(&exchange("bar.sync 0;"), 64, Schedule::RoundRobin, true);
    assert!(f.is_empty(), "{f:?}");
    // out[t] = t ^ 32.
    for t in 0..64u32 {
        let w = u32::from_le_bytes(out[4 * t as usize..4 * t as usize + 4].try_into().unwrap());
        assert_eq!(w, t ^ 32);
    }
}

#[test]
fn words_no_thread_wrote_are_uninitialized() {
    // 32 threads: s[tid ^ 32] lies in the half nobody stores to.
    let (f, _) = run(&exchange("bar.sync 0;"), 32, Schedule::RoundRobin, true);
    assert_eq!(f, vec![(FindingKind::UninitializedShared, 19)]);
}

#[test]
fn atomics_on_one_word_do_not_race_once_it_is_initialized() {
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<4>; .reg .b64 %rd<2>; .reg .pred %q;
  .shared .align 4 .b32 c;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %q, %r1, 0;
  @!%q st.shared.u32 [c], 0;
  bar.sync 0;
  atom.shared.add.u32 %r2, [c], 1;
  bar.sync 0;
  ld.shared.u32 %r3, [c];
  ld.param.u64 %rd1, [p];
  @!%q st.global.u32 [%rd1], %r3;
  ret;
}}
"
    );
    let (f, out) = run(&text, 128, Schedule::RoundRobin, true);
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(&out[..4], &128u32.to_le_bytes());
}

#[test]
fn a_local_read_before_any_write_is_uninitialized() {
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<3>; .reg .b64 %rd<2>;
  .local .align 4 .b32 a[4];
  st.local.u32 [a], 7;
  ld.local.u32 %r1, [a];
  ld.local.u32 %r2, [a+4];
  add.u32 %r1, %r1, %r2;
  ld.param.u64 %rd1, [p];
  st.global.u32 [%rd1], %r1;
  ret;
}}
"
    );
    let (f, _) = run(&text, 1, Schedule::RoundRobin, true);
    assert_eq!(f, vec![(FindingKind::UninitializedLocal, 10)]);
}

#[test]
fn thread_order_changes_only_racy_results() {
    // With the barrier every order computes the same; without it, the finest reverse
    // interleaving lets warp 1 store before warp 0 loads.
    let fenced = exchange("bar.sync 0;");
    let racy = exchange("");
    let a = run(&fenced, 64, Schedule::RoundRobin, false).1;
    let b = run(&fenced, 64, Schedule::Interleaved, false).1;
    assert_eq!(a, b);
    let c = run(&racy, 64, Schedule::RoundRobin, false).1;
    let d = run(&racy, 64, Schedule::Interleaved, false).1;
    assert_ne!(c, d);
}

/// Each thread copies 16 bytes of `p` into its `s[tid]` with `cp.async` (two copies, in two
/// groups when `split`), then does `between` and reads both destinations back.
fn async_copy(split: bool, between: &str) -> String {
    let commit = if split { "cp.async.commit_group;" } else { "" };
    format!(
        "{HEAD}.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<8>; .reg .b64 %rd<3>;
  .shared .align 16 .b8 s[2048];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 4;
  mov.u32 %r3, s;
  add.u32 %r4, %r3, %r2;
  ld.param.u64 %rd1, [p];
  cp.async.ca.shared.global [%r4], [%rd1], 16;
  {commit}
  cp.async.ca.shared.global [%r4+1024], [%rd1], 16;
  {between}
  ld.shared.u32 %r5, [%r4]; // first
  ld.shared.u32 %r6, [%r4+1024]; // second
  add.u32 %r7, %r5, %r6;
  st.global.u32 [%rd1], %r7;
  ret;
}}
"
    )
}

/// The line of `text` holding `marker`.
fn line_of(text: &str, marker: &str) -> u32 {
    1 + text
        .lines()
        .position(|l| l.contains(marker))
        .expect("marker") as u32
}

#[test]
fn reading_a_cp_async_destination_before_waiting_is_reported() {
    let text = async_copy(false, "");
    let (f, _) = run(&text, 32, Schedule::RoundRobin, true);
    let first = line_of(&text, "// first");
    let second = line_of(&text, "// second");
    assert!(
        f.contains(&(FindingKind::UnwaitedAsyncCopy, first)),
        "{f:?}"
    );
    assert!(
        f.contains(&(FindingKind::UnwaitedAsyncCopy, second)),
        "{f:?}"
    );
    // A commit alone waits for nothing.
    let text = async_copy(false, "cp.async.commit_group;");
    let (f, _) = run(&text, 32, Schedule::RoundRobin, true);
    assert!(
        f.contains(&(FindingKind::UnwaitedAsyncCopy, first)),
        "{f:?}"
    );
}

#[test]
fn waiting_for_the_groups_orders_the_copies() {
    for between in [
        "cp.async.wait_all;",
        "cp.async.commit_group; cp.async.wait_group 0;",
    ] {
        let (f, _) = run(&async_copy(true, between), 64, Schedule::RoundRobin, true);
        assert!(f.is_empty(), "{between}: {f:?}");
    }
}

#[test]
fn wait_group_leaves_the_newest_groups_pending() {
    // Two committed groups; `wait_group 1` completes the first only.
    let text = async_copy(true, "cp.async.commit_group; cp.async.wait_group 1;");
    let (f, _) = run(&text, 32, Schedule::RoundRobin, true);
    let second = line_of(&text, "// second");
    assert_eq!(f, vec![(FindingKind::UnwaitedAsyncCopy, second)]);
}
