//! `tex` through the shared texture model: bindless handles from kernel parameters, bound
//! texture references, layered textures, the level-of-detail form, traps and the forms that
//! stay unsupported. Expected values are computed here from the texels the test builds (by
//! the sampling rules written out below), not by calling `Texture::fetch` or copying the
//! interpreter's output.

use interp::texture::{AddressMode, Filter, TexFormat, TexShape, Texture};
use interp::{Launch, Memory, Program, RunError, TextureSource, TextureUse};

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// Runs `kernel` with `block` threads; parameter 0 is an output buffer of `out_len` bytes,
/// parameter 1 (if the kernel has one) is `handle`. `setup` adds textures to the memory.
fn run(
    text: &str,
    kernel: &str,
    block: u32,
    out_len: usize,
    handle: u64,
    setup: impl FnOnce(&mut Memory),
) -> Result<Vec<u32>, RunError> {
    let mut p = Program::from_text(text).unwrap_or_else(|e| panic!("lowering: {e}"));
    let k = p.kernel(kernel).expect("kernel");
    let mut mem = Memory::new();
    setup(&mut mem);
    p.load(&mut mem);
    let out = mem.alloc("out", vec![0; out_len]);
    let mut params = vec![0u8; p.param_size(k) as usize];
    params[..8].copy_from_slice(&out.to_le_bytes());
    if params.len() >= 16 {
        params[8..16].copy_from_slice(&handle.to_le_bytes());
    }
    let launch = Launch {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        dynamic_shared: 0,
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

fn f(x: f32) -> u32 {
    x.to_bits()
}

/// Texels of an 8×4 float texture: channel c of texel (x, y) is `value(x, y, c)`.
fn value(x: u32, y: u32, c: usize) -> f32 {
    let i = (y * 8 + x) as f32;
    [i, 10.0 * i, -i, 0.5][c]
}

#[test]
fn bindless_2d_float_fetch_filters_linearly() {
    // Thread t reads at (t%8 + 0.75, t/8 + 0.5): a quarter of the way from texel t%8 to the
    // next one (clamped at the right edge), exactly on row t/8.
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o, .param .u64 tex)
{{
  .reg .u32 t, xi, yi;
  .reg .f32 x, y, c0, c1, c2, c3;
  .reg .u64 a, h, h2, off;
  ld.param.u64 a, [o];
  ld.param.u64 h2, [tex+0];
  mov.b64 h, h2;
  mov.u32 t, %tid.x;
  and.b32 xi, t, 7;
  shr.u32 yi, t, 3;
  cvt.rn.f32.u32 x, xi;
  cvt.rn.f32.u32 y, yi;
  add.f32 x, x, 0f3F400000;
  add.f32 y, y, 0f3F000000;
  tex.2d.v4.f32.f32 {{c0, c1, c2, c3}}, [h, {{x, y}}];
  mul.wide.u32 off, t, 16;
  add.u64 a, a, off;
  st.global.v4.f32 [a], {{c0, c1, c2, c3}};
  ret;
}}"
    );
    let tex = Texture::new(
        TexShape::D2,
        [8, 4, 1],
        TexFormat::F32,
        Filter::Linear,
        AddressMode::Clamp,
        false,
        |i| {
            let (x, y) = (i as u32 % 8, i as u32 / 8);
            [0, 1, 2, 3].map(|c| f(value(x, y, c)))
        },
    );
    let p = Program::from_text(&text).unwrap();
    assert_eq!(
        p.texture_uses(0),
        vec![TextureUse {
            source: TextureSource::Param(1),
            shape: TexShape::D2,
            format: TexFormat::F32,
        }]
    );
    let mut handle = 0;
    let got = run(&text, "k", 32, 32 * 16, 0xdead_0000_0000 | 1, |m| {
        handle = m.textures_mut().add(tex);
    })
    .unwrap();
    assert_eq!(handle, 1);
    for t in 0..32u32 {
        let (x0, y) = (t % 8, t / 8);
        let x1 = (x0 + 1).min(7);
        for c in 0..4 {
            let want = 0.75 * value(x0, y, c) + 0.25 * value(x1, y, c);
            assert_eq!(got[(t * 4) as usize + c], f(want), "thread {t} channel {c}");
        }
    }
}

#[test]
fn texref_1d_integer_fetch_clamps() {
    // `.global .texref`, integer coordinates t - 8 (clamped to 0..15), `.u32` results; one
    // destination is the sink `_`.
    let text = format!(
        "{HEAD}.global .texref t1;
.visible .entry k(.param .u64 o)
{{
  .reg .u32 t, r0, r1, r3;
  .reg .s32 x;
  .reg .u64 a, off;
  ld.param.u64 a, [o];
  mov.u32 t, %tid.x;
  sub.s32 x, t, 8;
  tex.1d.v4.u32.s32 {{r0, r1, _, r3}}, [t1, {{x}}];
  mul.wide.u32 off, t, 12;
  add.u64 a, a, off;
  st.global.u32 [a], r0;
  st.global.u32 [a+4], r1;
  st.global.u32 [a+8], r3;
  ret;
}}"
    );
    let p = Program::from_text(&text).unwrap();
    assert_eq!(
        p.texture_uses(0),
        vec![TextureUse {
            source: TextureSource::Texref("t1".into()),
            shape: TexShape::D1,
            format: TexFormat::U32,
        }]
    );
    let texel = |i: u32| [i * 3, i + 100, 7, i ^ 5];
    let tex = Texture::new(
        TexShape::D1,
        [16, 1, 1],
        TexFormat::U32,
        Filter::Point,
        AddressMode::Clamp,
        false,
        |i| texel(i as u32),
    );
    let got = run(&text, "k", 32, 32 * 12, 0, |m| {
        let h = m.textures_mut().add(tex);
        m.textures_mut().bind("t1", h);
    })
    .unwrap();
    for t in 0..32i32 {
        let i = (t - 8).clamp(0, 15) as u32;
        let w = texel(i);
        let at = (t * 3) as usize;
        assert_eq!(got[at..at + 3], [w[0], w[1], w[3]], "thread {t}");
    }
}

#[test]
fn old_tex_variable_with_four_coordinates() {
    // gpuocelot-era PTX: `.tex .u64 name;`, `.v4` coordinates for a 1D fetch (an immediate
    // among them), `.f32` destinations in `.u32` registers.
    let text = ".version 2.1\n.target sm_20\n.address_size 64\n.tex .u64 old;
.entry k(.param .u64 o)
{
  .reg .u32 %r<8>;
  .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [o];
  mov.u32 %r1, %tid.x;
  tex.1d.v4.f32.s32 {%r4, %r5, %r6, %r7}, [old, {%r1, %r1, %r1, 0}];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r5;
  ret;
}";
    let tex = Texture::new(
        TexShape::D1,
        [4, 1, 1],
        TexFormat::F32,
        Filter::Linear,
        AddressMode::Clamp,
        false,
        |i| [0, f(i as f32 * 1.5), 0, 0],
    );
    let got = run(text, "k", 8, 32, 0, |m| {
        let h = m.textures_mut().add(tex);
        m.textures_mut().bind("old", h);
    })
    .unwrap();
    for t in 0..8u32 {
        assert_eq!(got[t as usize], f(t.min(3) as f32 * 1.5), "thread {t}");
    }
}

#[test]
fn layered_fetch_reads_the_layer_and_level_is_ignored() {
    // tex.a2d: layer t%3, point sampled at (t%4 + 0.5, (t/4)%4 + 0.9); then tex.level.2d of
    // the same handle (a layered texture read as 2D reads layer 0) at level 3.
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 o, .param .u64 tex)
{{
  .reg .u32 t, l, xi, yi, q;
  .reg .f32 x, y, lod, c0, c1, c2, c3, d0, d1, d2, d3;
  .reg .u64 a, h, off;
  ld.param.u64 a, [o];
  ld.param.u64 h, [tex];
  mov.u32 t, %tid.x;
  rem.u32 l, t, 3;
  and.b32 xi, t, 3;
  shr.u32 yi, t, 2;
  and.b32 yi, yi, 3;
  cvt.rn.f32.u32 x, xi;
  cvt.rn.f32.u32 y, yi;
  add.f32 x, x, 0f3F000000;
  add.f32 y, y, 0f3F666666;
  tex.a2d.v4.f32.f32 {{c0, c1, c2, c3}}, [h, {{l, x, y, y}}];
  mov.f32 lod, 0f40400000;
  tex.level.2d.v4.f32.f32 {{d0, d1, d2, d3}}, [h, {{x, y}}], lod;
  mul.wide.u32 off, t, 8;
  add.u64 a, a, off;
  st.global.f32 [a], c0;
  st.global.f32 [a+4], d0;
  ret;
}}"
    );
    let tex = Texture::new(
        TexShape::Array2D,
        [4, 4, 3],
        TexFormat::F32,
        Filter::Point,
        AddressMode::Clamp,
        false,
        |i| [f(i as f32), 0, 0, 0],
    );
    let got = run(&text, "k", 32, 32 * 8, 1, |m| {
        m.textures_mut().add(tex);
    })
    .unwrap();
    for t in 0..32u32 {
        let (l, x, y) = (t % 3, t % 4, (t / 4) % 4);
        let layered = (l * 4 + y) * 4 + x;
        let flat = y * 4 + x;
        assert_eq!(got[(t * 2) as usize], f(layered as f32), "thread {t} a2d");
        assert_eq!(
            got[(t * 2 + 1) as usize],
            f(flat as f32),
            "thread {t} level"
        );
    }
}

const BINDLESS_1D: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
.visible .entry k(.param .u64 o, .param .u64 tex)
{
  .reg .u32 r0, r1, r2, r3;
  .reg .u64 a, h;
  ld.param.u64 a, [o];
  ld.param.u64 h, [tex];
  tex.1d.v4.u32.s32 {r0, r1, r2, r3}, [h, {2}];
  st.global.u32 [a], r0;
  ret;
}";

fn tiny() -> Texture {
    Texture::new(
        TexShape::D1,
        [4, 1, 1],
        TexFormat::U32,
        Filter::Point,
        AddressMode::Clamp,
        false,
        |i| [i as u32 + 40, 0, 0, 0],
    )
}

#[test]
fn unknown_handles_and_unbound_references_trap() {
    // A known handle works (immediate coordinate 2) ...
    let got = run(BINDLESS_1D, "k", 1, 4, 1, |m| {
        m.textures_mut().add(tiny());
    })
    .unwrap();
    assert_eq!(got[0], 42);
    // ... handle 2 names no texture, neither does 0.
    for h in [2u64, 0] {
        match run(BINDLESS_1D, "k", 1, 4, h, |m| {
            m.textures_mut().add(tiny());
        }) {
            Err(RunError::Trap { message, line, .. }) => {
                assert!(message.contains("names no texture"), "{message}");
                assert_eq!(line, 10, "the `tex` line");
            }
            other => panic!("expected a trap, got {other:?}"),
        }
    }
    // An unbound texture reference.
    let text = format!(
        "{HEAD}.global .texref nobody;
.visible .entry k(.param .u64 o)
{{
  .reg .u32 r0, r1, r2, r3;
  tex.1d.v4.u32.s32 {{r0, r1, r2, r3}}, [nobody, {{0}}];
  ret;
}}"
    );
    match run(&text, "k", 1, 4, 0, |m| {
        m.textures_mut().add(tiny());
    }) {
        Err(RunError::Trap { message, .. }) => {
            assert!(message.contains("`nobody` is not bound"), "{message}")
        }
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn other_texture_and_surface_forms_stay_unsupported() {
    let cases = [
        (
            "tex.cube.v4.f32.f32 {f0, f1, f2, f3}, [h, {f0, f1, f2, f2}];",
            "cube",
        ),
        (
            "tex.2d.v4.f32.f32 {f0, f1, f2, f3}, [t, s, {f0, f1}];",
            "independent mode",
        ),
        (
            "tld4.r.2d.v4.f32.f32 {f0, f1, f2, f3}, [h, {f0, f1}];",
            "tld4",
        ),
        ("txq.width.b32 r, [h];", "txq"),
        // Unformatted surface accesses are implemented (tests/surface.rs); formatted ones
        // and queries are not.
        ("suld.p.2d.v4.b32.trap {r, r, r, r}, [h, {r, r}];", ".p"),
        ("suq.width.b32 r, [h];", "suq"),
        ("tex.2d.v2.f32.f32 {f0, f1}, [h, {f0, f1}];", "tex"),
    ];
    for (inst, why) in cases {
        let text = format!(
            "{HEAD}.global .texref t;
.global .samplerref s;
.visible .entry k(.param .u64 tex)
{{
  .reg .f32 f0, f1, f2, f3;
  .reg .u32 r;
  .reg .u64 h;
  ld.param.u64 h, [tex];
  {inst}
  ret;
}}"
        );
        let p = Program::from_text(&text).unwrap_or_else(|e| panic!("{inst}: {e}"));
        let mut mem = Memory::new();
        let launch = Launch {
            grid: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_shared: 0,
            params: vec![0; 8],
            step_limit: 1000,
        };
        match p.run(&mut mem, 0, &launch) {
            Err(RunError::Unsupported { reason, .. }) => {
                assert!(reason.contains(why), "{inst}: {reason}")
            }
            other => panic!("{inst}: expected unsupported, got {other:?}"),
        }
    }
}

#[test]
fn texture_uses_follow_calls_and_merge_formats() {
    // Parameter 2's handle reaches `tex` through a `mov`; parameter 0's is used as u32 and
    // then as f32 (F32 wins); a device function fetches from a texture reference; a handle
    // loaded from memory cannot be traced.
    let text = format!(
        "{HEAD}.global .texref shared_ref;
.func g()
{{
  .reg .f32 c0, c1, c2, c3;
  tex.3d.v4.f32.s32 {{c0, c1, c2, c3}}, [shared_ref, {{1, 2, 3, 4}}];
  ret;
}}
.visible .entry k(.param .u64 a, .param .u32 n, .param .u64 b, .param .u64 p)
{{
  .reg .u32 r0, r1, r2, r3;
  .reg .f32 c0, c1, c2, c3;
  .reg .u64 ha, hb, hb2, hp, hm;
  ld.param.u64 ha, [a];
  ld.param.u64 hb2, [b];
  mov.u64 hb, hb2;
  ld.param.u64 hp, [p];
  ld.global.u64 hm, [hp];
  tex.2d.v4.u32.f32 {{r0, r1, r2, r3}}, [hb, {{c0, c0}}];
  tex.1d.v4.u32.s32 {{r0, r1, r2, r3}}, [ha, {{r0}}];
  tex.a2d.v4.f32.f32 {{c0, c1, c2, c3}}, [ha, {{r0, c0, c0, c0}}];
  tex.1d.v4.f32.s32 {{c0, c1, c2, c3}}, [hm, {{r0}}];
  call g, ();
  ret;
}}"
    );
    let p = Program::from_text(&text).unwrap();
    let k = p.kernel("k").unwrap();
    assert_eq!(
        p.texture_uses(k),
        vec![
            TextureUse {
                source: TextureSource::Param(2),
                shape: TexShape::D2,
                format: TexFormat::U32,
            },
            TextureUse {
                source: TextureSource::Param(0),
                shape: TexShape::D1,
                format: TexFormat::F32,
            },
            TextureUse {
                source: TextureSource::Texref("shared_ref".into()),
                shape: TexShape::D3,
                format: TexFormat::F32,
            },
        ]
    );
}
