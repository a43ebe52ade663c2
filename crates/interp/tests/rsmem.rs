//! The driver-reserved shared memory block and `%reserved_smem_offset_*`. Expected values are
//! the documented model (`interp::mem::SharedMap`: user shared memory rounded up to 128 bytes,
//! a 1 KiB block after it before sm_90 and before it from sm_90 on, `_1` at +0x100 and `_end`
//! at +0x300 in the block), written out as numbers here.

use interp::{Launch, Memory, Program, RunError, SharedLayout};

const OUT_WORDS: usize = 64 * 8;

/// Runs kernel `k` of `text` with `block` threads, `dynamic` bytes of dynamic shared memory
/// and one u64 parameter pointing at a zeroed output buffer; returns its words.
fn run(
    text: &str,
    block: u32,
    dynamic: u32,
    layout: Option<SharedLayout>,
) -> Result<Vec<u32>, RunError> {
    let mut p = Program::from_text(text).unwrap_or_else(|e| panic!("lowering: {e}"));
    if let Some(l) = layout {
        p.set_shared_layout(l);
    }
    let k = p.kernel("k").expect("kernel");
    let mut mem = Memory::new();
    p.load(&mut mem);
    let out = mem.alloc("out", vec![0; OUT_WORDS * 4]);
    let mut params = vec![0u8; p.param_size(k) as usize];
    params[..8].copy_from_slice(&out.to_le_bytes());
    let launch = Launch {
        grid: [2, 1, 1],
        block: [block, 1, 1],
        dynamic_shared: dynamic,
        params,
        step_limit: 1_000_000,
    };
    p.run(&mut mem, k, &launch)?;
    Ok(mem
        .buffer(out)
        .expect("buffer")
        .data
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

/// A kernel with 100 bytes of static shared memory that stores, from thread 0, the five
/// reserved registers, `%total_smem_size` and the address of its variable.
fn registers_kernel(target: &str) -> String {
    format!(
        ".version 8.0
.target {target}
.address_size 64
.visible .entry k(.param .u64 o)
{{
  .shared .align 4 .b8 v[100];
  .reg .u32 r<8>;
  .reg .u64 a;
  ld.param.u64 a, [o];
  mov.u32 r0, %reserved_smem_offset_0;
  mov.u32 r1, %reserved_smem_offset_1;
  mov.u32 r2, %reserved_smem_offset_begin;
  mov.u32 r3, %reserved_smem_offset_end;
  mov.u32 r4, %reserved_smem_offset_cap;
  mov.u32 r5, %total_smem_size;
  mov.u32 r6, v;
  st.global.v4.u32 [a], {{r0, r1, r2, r3}};
  st.global.v2.u32 [a+16], {{r4, r5}};
  st.global.u32 [a+24], r6;
  ret;
}}"
    )
}

#[test]
fn before_sm_90_the_block_follows_the_user_shared_memory() {
    // 100 static bytes (padded to 112, the dynamic area's 16-byte alignment) + 200 dynamic =
    // 312, rounded up to 384 = 0x180: the block is 0x180..0x580.
    let got = run(&registers_kernel("sm_80"), 32, 200, None).unwrap();
    assert_eq!(
        &got[..7],
        &[0x180, 0x280, 0x180, 0x480, 0x580, 0x180, 0],
        "offset_0, offset_1, begin, end, cap, total_smem_size, &v"
    );
}

#[test]
fn from_sm_90_the_block_comes_first() {
    // The block is 0..0x400; the user's variables start at 0x400.
    let got = run(&registers_kernel("sm_90"), 32, 200, None).unwrap();
    assert_eq!(&got[..7], &[0, 0x100, 0, 0x300, 0x400, 0x180, 0x400]);
}

#[test]
fn the_layout_can_be_chosen_for_the_cubin_sm() {
    // PTX for sm_80 compiled for sm_90: the harness asks for sm_90's layout.
    let got = run(
        &registers_kernel("sm_80"),
        32,
        0,
        Some(SharedLayout::for_sm(90)),
    )
    .unwrap();
    assert_eq!(&got[..7], &[0, 0x100, 0, 0x300, 0x400, 0x80, 0x400]);
    let got = run(
        &registers_kernel("sm_90"),
        32,
        0,
        Some(SharedLayout::for_sm(80)),
    )
    .unwrap();
    assert_eq!(&got[..7], &[0x80, 0x180, 0x80, 0x380, 0x480, 0x80, 0]);
}

/// Thread t stores 1000 + t into the user array and, through a generic pointer, t into word t
/// of the reserved block from `%reserved_smem_offset_1`; after a barrier thread t reads back
/// both from thread 63 - t and the reserved word 64 (never written). Then it reads the shared
/// word at `_cap` + `extra` (one past the block, or inside it).
fn scratch_kernel(target: &str, extra: i32) -> String {
    format!(
        ".version 8.0
.target {target}
.address_size 64
.visible .entry k(.param .u64 o)
{{
  .shared .align 4 .b32 v[64];
  .reg .u32 t, u, x, y, z, w, base, addr, ucap;
  .reg .u64 a, g, off, e;
  ld.param.u64 a, [o];
  mov.u32 t, %tid.x;
  mov.u32 base, v;
  shl.b32 u, t, 2;
  add.u32 addr, base, u;
  add.u32 x, t, 1000;
  st.shared.u32 [addr], x;
  mov.u32 x, %reserved_smem_offset_1;
  cvt.u64.u32 e, x;
  cvta.shared.u64 g, e;
  cvt.u64.u32 off, u;
  add.u64 e, g, off;
  st.u32 [e], t;
  bar.sync 0;
  sub.u32 w, 63, t;
  shl.b32 w, w, 2;
  add.u32 addr, base, w;
  ld.shared.u32 x, [addr];
  cvt.u64.u32 off, w;
  add.u64 e, g, off;
  ld.u32 y, [e];
  ld.u32 z, [g+256];
  mov.u32 ucap, %reserved_smem_offset_cap;
  add.u32 ucap, ucap, {extra};
  ld.shared.u32 w, [ucap];
  mul.wide.u32 off, t, 16;
  add.u64 a, a, off;
  st.global.v4.u32 [a], {{x, y, z, w}};
  ret;
}}"
    )
}

#[test]
fn the_block_is_zeroed_scratch_beside_the_user_variables() {
    for target in ["sm_80", "sm_90"] {
        // `_cap - 4` is the block's last word: inside, zero.
        let got = run(&scratch_kernel(target, -4), 64, 0, None).unwrap();
        for t in 0..64u32 {
            let w = &got[4 * t as usize..4 * t as usize + 4];
            assert_eq!(w, &[1000 + 63 - t, 63 - t, 0, 0], "{target} thread {t}");
        }
    }
}

#[test]
fn shared_memory_ends_at_the_block_or_the_user_area() {
    // Before sm_90 the block is the end of the CTA's shared memory: `_cap` is out of bounds.
    match run(&scratch_kernel("sm_80", 0), 64, 0, None) {
        Err(RunError::Trap { message, .. }) => assert!(message.contains("shared"), "{message}"),
        other => panic!("expected a shared-memory trap, got {other:?}"),
    }
    // From sm_90 the user's 256 bytes follow it: `_cap` is the first user word (thread t
    // stored 1000 + t there, thread 0 first).
    let got = run(&scratch_kernel("sm_90", 0), 64, 0, None).unwrap();
    assert_eq!(got[3], 1000);
}

#[test]
fn a_warp_spinning_on_the_block_lets_the_other_warps_run() {
    // Warp 0 waits for a flag that warp 1 sets after writing a value (release/acquire, as
    // cooperative groups' multi-warp barriers do in the reserved block). Run to completion,
    // warp 0 would spin for ever; warps run in turns.
    let text = ".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 o)
{
  .reg .u32 t, x, r1;
  .reg .u64 a, g, e, off;
  .reg .pred p, q;
  ld.param.u64 a, [o];
  mov.u32 t, %tid.x;
  mov.u32 r1, %reserved_smem_offset_1;
  cvt.u64.u32 e, r1;
  cvta.shared.u64 g, e;
  setp.lt.u32 p, t, 32;
  @p bra WAIT;
  setp.ne.u32 q, t, 32;
  @q bra DONE;
  st.u32 [g+16], 4242;
  st.release.cta.u32 [g+12], 1;
  bra.uni DONE;
WAIT:
  ld.acquire.cta.u32 x, [g+12];
  setp.eq.u32 q, x, 0;
  @q bra WAIT;
  ld.u32 x, [g+16];
  add.u32 x, x, t;
  mul.wide.u32 off, t, 4;
  add.u64 a, a, off;
  st.global.u32 [a], x;
DONE:
  ret;
}";
    let got = run(text, 64, 0, None).unwrap();
    for t in 0..32u32 {
        assert_eq!(got[t as usize], 4242 + t, "thread {t}");
    }
}
