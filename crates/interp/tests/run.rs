//! Execution tests: each expected value is derived independently of the interpreter (by the
//! arithmetic the kernel describes, or by IEEE rules), not copied from its output.

use interp::{Launch, Memory, Program, RunError};

/// Runs `kernel` of `text` with `block` threads and one u64 parameter pointing at an output
/// buffer of `out_len` zeroed bytes; returns the buffer or the error.
fn run(text: &str, kernel: &str, block: u32, out_len: usize) -> Result<Vec<u8>, RunError> {
    run_stats(text, kernel, block, out_len).map(|(out, _)| out)
}

/// [`run`], also returning the run's statistics.
fn run_stats(
    text: &str,
    kernel: &str,
    block: u32,
    out_len: usize,
) -> Result<(Vec<u8>, interp::RunStats), RunError> {
    let mut p = Program::from_text(text).unwrap_or_else(|e| panic!("lowering: {e}"));
    let k = p.kernel(kernel).expect("kernel");
    let mut mem = Memory::new();
    p.load(&mut mem);
    let out = mem.alloc("out", vec![0; out_len]);
    let mut params = vec![0u8; p.param_size(k) as usize];
    params[..8].copy_from_slice(&out.to_le_bytes());
    let launch = Launch {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        dynamic_shared: 0,
        params,
        step_limit: 1_000_000,
    };
    let stats = p.run(&mut mem, k, &launch)?;
    Ok((mem.buffer(out).expect("buffer").data.clone(), stats))
}

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

#[test]
fn divergence_reconverges_before_a_collective() {
    // Odd lanes compute tid*2, even lanes tid+100; after the branches join, every lane of the
    // warp takes part in the ballot of x > 50.
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .reg .u32 t, x, b;
  .reg .u64 a, off;
  .reg .pred odd, big;
  ld.param.u64 a, [o];
  mov.u32 t, %tid.x;
  and.b32 x, t, 1;
  setp.ne.u32 odd, x, 0;
  @odd bra ODD;
  add.u32 x, t, 100;
  bra JOIN;
ODD:
  mul.lo.u32 x, t, 2;
JOIN:
  setp.gt.u32 big, x, 50;
  vote.sync.ballot.b32 b, big, 0xffffffff;
  mul.wide.u32 off, t, 4;
  add.u64 a, a, off;
  st.global.u32 [a], b;
  ret;
}}"
    );
    let got = words(&run(&text, "k", 64, 256).unwrap());
    for warp in 0..2u32 {
        let mut want = 0u32;
        for lane in 0..32u32 {
            let t = warp * 32 + lane;
            let x = if t % 2 == 1 { t * 2 } else { t + 100 };
            if x > 50 {
                want |= 1 << lane;
            }
        }
        for lane in 0..32 {
            assert_eq!(
                got[(warp * 32 + lane) as usize],
                want,
                "warp {warp} lane {lane}"
            );
        }
    }
}

#[test]
fn barrier_orders_shared_memory_across_warps() {
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .shared .u32 s[64];
  .reg .u32 t, v, sum, i, addr;
  .reg .u64 a;
  .reg .pred p, done;
  ld.param.u64 a, [o];
  mov.u32 t, %tid.x;
  shl.b32 addr, t, 2;
  st.shared.u32 [addr], t;
  bar.sync 0;
  setp.ne.u32 p, t, 0;
  @p bra END;
  mov.u32 sum, 0;
  mov.u32 i, 0;
LOOP:
  shl.b32 addr, i, 2;
  ld.shared.u32 v, [addr];
  add.u32 sum, sum, v;
  add.u32 i, i, 1;
  setp.lt.u32 done, i, 64;
  @done bra LOOP;
  st.global.u32 [a], sum;
END:
  ret;
}}"
    );
    let got = words(&run(&text, "k", 64, 4).unwrap());
    assert_eq!(got[0], (0..64).sum::<u32>());
}

#[test]
fn shuffle_butterfly_reduction() {
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .reg .u32 t, v, w;
  .reg .u64 a, off;
  ld.param.u64 a, [o];
  mov.u32 t, %tid.x;
  mov.u32 v, t;
  shfl.sync.bfly.b32 w, v, 16, 31, 0xffffffff; add.u32 v, v, w;
  shfl.sync.bfly.b32 w, v, 8, 31, 0xffffffff; add.u32 v, v, w;
  shfl.sync.bfly.b32 w, v, 4, 31, 0xffffffff; add.u32 v, v, w;
  shfl.sync.bfly.b32 w, v, 2, 31, 0xffffffff; add.u32 v, v, w;
  shfl.sync.bfly.b32 w, v, 1, 31, 0xffffffff; add.u32 v, v, w;
  mul.wide.u32 off, t, 4;
  add.u64 a, a, off;
  st.global.u32 [a], v;
  ret;
}}"
    );
    let got = words(&run(&text, "k", 32, 128).unwrap());
    assert!(got.iter().all(|&v| v == (0..32).sum::<u32>()), "{got:?}");
}

#[test]
fn atomics_from_every_thread() {
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .reg .u32 old;
  .reg .u64 a;
  ld.param.u64 a, [o];
  atom.global.add.u32 old, [a], 1;
  atom.global.inc.u32 old, [a+4], 9;
  atom.global.max.s32 old, [a+8], -5;
  ret;
}}"
    );
    let got = words(&run(&text, "k", 64, 12).unwrap());
    // 64 increments; inc wraps to 0 after 9 (64 mod 10 = 4); max(0, -5) stays 0.
    assert_eq!(got, vec![64, 4, 0]);
}

#[test]
fn directed_rounding_modes() {
    // 1 + 2^-30 is not representable in f32: .rm gives 1, .rp the next float up.
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .reg .f32 x, y, d;
  .reg .u64 a;
  ld.param.u64 a, [o];
  mov.f32 x, 0f3F800000;
  mov.f32 y, 0f30800000;
  add.rm.f32 d, x, y;
  st.global.f32 [a], d;
  add.rp.f32 d, x, y;
  st.global.f32 [a+4], d;
  add.rn.f32 d, x, y;
  st.global.f32 [a+8], d;
  ret;
}}"
    );
    let got = words(&run(&text, "k", 1, 12).unwrap());
    assert_eq!(f32::from_bits(0x3080_0000), 2f32.powi(-30));
    assert_eq!(got[0], 1f32.to_bits());
    assert_eq!(got[1], 1f32.next_up().to_bits());
    assert_eq!(got[2], 1f32.to_bits());
}

#[test]
fn calls_pass_parameters() {
    let text = format!(
        "{HEAD}.func (.param .u32 r) twice(.param .u32 x)
{{
  .reg .u32 v;
  ld.param.u32 v, [x];
  add.u32 v, v, v;
  st.param.u32 [r], v;
  ret;
}}
.visible .entry k(.param .u64 o)
{{
  .reg .u32 v;
  .reg .u64 a;
  .param .u32 arg;
  .param .u32 res;
  ld.param.u64 a, [o];
  st.param.u32 [arg], 21;
  call (res), twice, (arg);
  ld.param.u32 v, [res];
  st.global.u32 [a], v;
  ret;
}}"
    );
    assert_eq!(words(&run(&text, "k", 1, 4).unwrap()), vec![42]);
}

#[test]
fn out_of_bounds_access_traps() {
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .reg .u32 v;
  .reg .u64 a;
  ld.param.u64 a, [o];
  st.global.u32 [a+4], 7;
  ret;
}}"
    );
    match run(&text, "k", 1, 4) {
        Err(RunError::Trap { message, line, .. }) => {
            assert!(message.contains("out-of-bounds"), "{message}");
            // HEAD is 3 lines; the store is line 9.
            assert_eq!(line, 9);
        }
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn unsupported_instructions_are_reported_not_skipped() {
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  wgmma.fence.sync.aligned;
  ret;
}}"
    );
    match run(&text, "k", 32, 4) {
        Err(RunError::Unsupported { reason, .. }) => {
            assert!(reason.contains("wgmma"), "{reason}")
        }
        other => panic!("expected unsupported, got {other:?}"),
    }
}

#[test]
fn barrier_deadlock_is_reported() {
    // A barrier expecting 128 threads in a CTA of 64 can never complete.
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  bar.sync 0, 128;
  ret;
}}"
    );
    assert!(matches!(
        run(&text, "k", 64, 4),
        Err(RunError::Deadlock { .. })
    ));
}

#[test]
fn cp_async_copies_zero_fills_and_ignores_the_source() {
    // The PTX ISA's `cp.async`: `cp-size` bytes to shared memory; with `src-size`, bytes
    // past it are zeros; with a true `ignore-src` predicate, all are zeros. The output
    // buffer's first 16 bytes are the source (written first), the shared copies go to bytes
    // 16.. of it.
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .reg .b64 %rd<3>; .reg .b32 %r<12>; .reg .pred %p<2>;
  .shared .align 16 .b8 sm[64];
  ld.param.u64 %rd1, [o];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.v4.u32 [%rd2], {{0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff01}};
  mov.u32 %r1, sm;
  st.shared.u32 [%r1+32], 0xffffffff;
  cp.async.cg.shared.global [%r1], [%rd2], 16;
  mov.u32 %r2, 13;
  cp.async.cg.shared.global.L2::128B [%r1+16], [%rd2], 16, %r2;
  setp.eq.u32 %p1, %r2, 13;
  cp.async.ca.shared.global [%r1+32], [%rd2], 4, %p1;
  cp.async.ca.shared.global [%r1+36], [%rd2], 8, 3;
  cp.async.commit_group;
  cp.async.wait_group 0;
  cp.async.wait_all;
  ld.shared.v4.u32 {{%r4, %r5, %r6, %r7}}, [%r1];
  st.global.v4.u32 [%rd2+16], {{%r4, %r5, %r6, %r7}};
  ld.shared.v4.u32 {{%r4, %r5, %r6, %r7}}, [%r1+16];
  st.global.v4.u32 [%rd2+32], {{%r4, %r5, %r6, %r7}};
  ld.shared.v4.u32 {{%r4, %r5, %r6, %r7}}, [%r1+32];
  st.global.v4.u32 [%rd2+48], {{%r4, %r5, %r6, %r7}};
  ret;
}}"
    );
    let out = words(&run(&text, "k", 1, 64).expect("runs"));
    let src = [0x1122_3344, 0x5566_7788, 0x99aa_bbcc, 0xddee_ff01];
    assert_eq!(out[4..8], src);
    // 13 of 16 bytes: the last word keeps its low byte.
    assert_eq!(out[8..12], [src[0], src[1], src[2], 0x0000_0001]);
    // ignore-src: zeros; 3 of 8 bytes: the low three bytes of the first word.
    assert_eq!(out[12..16], [0, 0x0022_3344, 0, 0]);
}

#[test]
fn shared_accesses_outside_their_array_are_counted() {
    // Two 16-byte shared arrays; thread t stores to `a + 4*t` (through a register derived
    // from `a` by adds) and loads `b[t]` directly: with 8 threads, threads 4..7 store past
    // `a`'s 16 bytes (undefined in PTX: what lies there is the layout's choice), and every
    // load stays inside `b`. A pointer that may come from either array is not followed.
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .pred %p<2>;
  .shared .align 4 .b8 a[16];
  .shared .align 4 .b8 b[16];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd1, %r1, 4;
  mov.u64 %rd2, a;
  add.u64 %rd3, %rd2, %rd1;
  st.shared.u32 [%rd3], %r1;
  and.b32 %r2, %r1, 3;
  mul.wide.u32 %rd4, %r2, 4;
  mov.u64 %rd5, b;
  add.u64 %rd6, %rd4, %rd5;
  ld.shared.u32 %r3, [%rd6];
  setp.eq.u32 %p1, %r1, 0;
  selp.b64 %rd7, %rd2, %rd5, %p1;
  st.shared.u32 [%rd7+64], %r3;
  ret;
}}"
    );
    let (_, st) = run_stats(&text, "k", 8, 8).expect("runs");
    assert_eq!(st.outside_array, 4);
}

#[test]
fn misaligned_local_accesses_are_counted() {
    // A 16-byte `.local` array aligned to 16: a `v2.u32` store at offset 8 is aligned, one
    // at offset 4 (thread 1 only) is not, nor is the `u32` load through a generic address at
    // offset 2; the interpreter executes them and counts the two misaligned ones.
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<2>;
  .local .align 16 .b8 buf[16];
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, buf;
  st.local.v2.u32 [%rd1+8], {{%r1, %r1}};
  setp.eq.u32 %p1, %r1, 1;
  @%p1 st.local.v2.u32 [%rd1+4], {{%r1, %r1}};
  cvta.local.u64 %rd2, %rd1;
  @%p1 ld.u32 %r2, [%rd2+2];
  ret;
}}"
    );
    let (_, st) = run_stats(&text, "k", 2, 8).expect("runs");
    assert_eq!(st.misaligned_local, 2);
}

#[test]
fn vabsdiff4_packs_or_sums_byte_differences() {
    // PTX ISA: per byte |a_i - b_i| (bytes sign-extended for .s32 sources); the SIMD form packs
    // them, `.add` sums them and adds c.
    let (a, b, c) = (0x10_80_ff_05u32, 0x20_7f_01_09u32, 1000u32);
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o)
{{
  .reg .u32 a, b, c, d<4>;
  .reg .u64 p;
  ld.param.u64 p, [o];
  mov.u32 a, {a};
  mov.u32 b, {b};
  mov.u32 c, {c};
  vabsdiff4.u32.u32.u32 d0, a, b, c;
  vabsdiff4.u32.u32.u32.add d1, a, b, c;
  vabsdiff4.s32.s32.s32 d2, a, b, c;
  vabsdiff4.s32.s32.s32.add d3, a, b, c;
  st.global.v4.u32 [p], {{d0, d1, d2, d3}};
  ret;
}}"
    );
    let bytes = |v: u32| v.to_le_bytes();
    let unsigned: Vec<u32> = (0..4)
        .map(|i| u32::from(bytes(a)[i].abs_diff(bytes(b)[i])))
        .collect();
    let signed: Vec<u32> = (0..4)
        .map(|i| u32::from((bytes(a)[i] as i8).abs_diff(bytes(b)[i] as i8)))
        .collect();
    let pack = |d: &[u32]| d.iter().enumerate().fold(0, |r, (i, x)| r | x << (8 * i));
    let out = words(&run(&text, "k", 1, 16).expect("runs"));
    assert_eq!(
        out,
        vec![
            pack(&unsigned),
            c + unsigned.iter().sum::<u32>(),
            pack(&signed),
            c + signed.iter().sum::<u32>()
        ]
    );
}
