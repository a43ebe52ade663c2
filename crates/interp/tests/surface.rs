//! `suld.b` / `sust.b` through the shared surface model: byte-addressed x, layered shapes
//! (layer first in PTX), vectors, and the three out-of-bounds modes. Expected bytes are
//! computed here from the addressing rule (offset = ((layer or z) · height + y) · width + x),
//! not taken from the interpreter's output.

use interp::surface::{SurfShape, Surface};
use interp::{Launch, Memory, Program, RunError};

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// Runs `kernel` with `block` threads on a memory holding `surface` (handle in parameter 0)
/// and an output buffer of 1 KiB (parameter 1); returns the surface and the output words.
fn run(body: &str, block: u32, surface: Surface) -> Result<(Surface, Vec<u32>), RunError> {
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 s, .param .u64 out)\n{{\n  .reg .b32 t, x, y, z, v<4>;\n  .reg .b16 h<4>;\n  .reg .b64 rs, ro, off;\n  ld.param.u64 rs, [s];\n  ld.param.u64 ro, [out];\n  mov.u32 t, %tid.x;\n  mul.wide.u32 off, t, 4;\n  add.u64 ro, ro, off;\n{body}\n  ret;\n}}\n"
    );
    let mut p = Program::from_text(&text).unwrap_or_else(|e| panic!("lowering: {e}"));
    let k = p.kernel("k").expect("kernel");
    if !body.contains(".p.") {
        assert_eq!(
            p.surface_uses(k).len(),
            1,
            "the handle traces to parameter 0"
        );
    }
    let mut mem = Memory::new();
    let h = mem.surfaces_mut().add(surface);
    p.load(&mut mem);
    let out = mem.alloc("out", vec![0; 1024]);
    let mut params = vec![0u8; 16];
    params[..8].copy_from_slice(&u64::from(h).to_le_bytes());
    params[8..].copy_from_slice(&out.to_le_bytes());
    let launch = Launch {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        dynamic_shared: 0,
        params,
        step_limit: 100_000,
    };
    p.run(&mut mem, k, &launch)?;
    let words = mem
        .buffer(out)
        .expect("buffer")
        .data
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    Ok((mem.surfaces().get(u64::from(h)).unwrap().clone(), words))
}

#[test]
fn stores_land_at_byte_addressed_x_and_the_layer_given_first() {
    // Layered 2D, 16 bytes × 4 rows × 3 layers: thread t writes t+1 as 4 bytes at x = 4 * (t % 4),
    // row t / 4 % 4, layer t / 16.
    let body = "  and.b32 x, t, 3;\n  shl.b32 x, x, 2;\n  shr.u32 y, t, 2;\n  and.b32 y, y, 3;\n  shr.u32 z, t, 4;\n  add.u32 v0, t, 1;\n  sust.b.a2d.b32.trap [rs, {z, x, y, y}], {v0};";
    let (s, _) = run(body, 48, Surface::new(SurfShape::Array2D, 16, 4, 3)).expect("runs");
    for t in 0u32..48 {
        let (x, y, z) = (4 * (t % 4), t / 4 % 4, t / 16);
        let at = ((z * 4 + y) * 16 + x) as usize;
        assert_eq!(s.data[at..at + 4], (t + 1).to_le_bytes(), "thread {t}");
    }
}

#[test]
fn loads_read_vectors_and_the_modes_apply_out_of_bounds() {
    let mut surf = Surface::new(SurfShape::D2, 8, 2, 1);
    for (i, b) in surf.data.iter_mut().enumerate() {
        *b = i as u8 + 1;
    }
    // Thread 0: .v2.b16 at (2, 1) in bounds; thread 1: clamped from (6, 5) to (4, 1) for
    // 4 bytes; thread 2: zero mode at x = 8 reads 0.
    let body = "  mov.u32 x, 2;\n  mov.u32 y, 1;\n  suld.b.2d.v2.b16.trap {h0, h1}, [rs, {x, y}];\n  mov.b32 v0, {h0, h1};\n  mov.u32 x, 6;\n  mov.u32 y, 5;\n  suld.b.2d.b32.clamp {v1}, [rs, {x, y}];\n  mov.u32 x, 8;\n  mov.u32 y, 0;\n  suld.b.2d.b32.zero {v2}, [rs, {x, y}];\n  st.global.u32 [ro], v0;\n  st.global.u32 [ro+4], v1;\n  st.global.u32 [ro+8], v2;";
    let (_, out) = run(body, 1, surf.clone()).expect("runs");
    let word = |at: usize| u32::from_le_bytes(surf.data[at..at + 4].try_into().unwrap());
    assert_eq!(out[0], word(8 + 2));
    assert_eq!(out[1], word(8 + 4));
    assert_eq!(out[2], 0);
    // Out of bounds in trap mode traps.
    let body = "  mov.u32 x, 6;\n  mov.u32 y, 0;\n  suld.b.2d.b32.trap {v0}, [rs, {x, y}];";
    match run(body, 1, surf) {
        Err(RunError::Trap { message, .. }) => {
            assert!(message.contains("out of bounds"), "{message}")
        }
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn formatted_accesses_are_reported_unsupported() {
    let body = "  mov.u32 x, 0;\n  sust.p.1d.v4.b32.trap [rs, {x}], {x, x, x, x};";
    match run(body, 1, Surface::new(SurfShape::D1, 64, 1, 1)) {
        Err(RunError::Unsupported { reason, .. }) => assert!(reason.contains(".p"), "{reason}"),
        other => panic!("expected unsupported, got {other:?}"),
    }
}
