//! The harness's texture inputs: a texture-object parameter gets a texture and its handle, a
//! texture reference gets a texture bound to its name, and every memory placed from the same
//! inputs holds the same textures under the same handles (what the interpreter and the
//! emulator runs rely on).

use harness::{Config, TextureInput};
use interp::texture::{AddressMode, Filter, TexFormat, TexShape};
use interp::{Launch, Memory, Program, TextureSource};

const PTX: &str = ".version 8.0
.target sm_80
.address_size 64
.global .texref vol;
.visible .entry k(.param .u64 out, .param .u64 img, .param .u32 n)
{
  .reg .u32 t, xi, yi, r0, r1, r2, r3;
  .reg .f32 x, y, c0, c1, c2, c3;
  .reg .u64 a, h, off;
  ld.param.u64 a, [out];
  ld.param.u64 h, [img];
  mov.u32 t, %tid.x;
  and.b32 xi, t, 7;
  shr.u32 yi, t, 3;
  cvt.rn.f32.u32 x, xi;
  cvt.rn.f32.u32 y, yi;
  add.f32 x, x, 0f3F000000;
  add.f32 y, y, 0f3F000000;
  tex.2d.v4.f32.f32 {c0, c1, c2, c3}, [h, {x, y}];
  tex.3d.v4.u32.s32 {r0, r1, r2, r3}, [vol, {xi, yi, t, t}];
  mul.wide.u32 off, t, 8;
  add.u64 a, a, off;
  st.global.f32 [a], c2;
  st.global.u32 [a+4], r3;
  ret;
}";

#[test]
fn texture_params_and_references_get_textures_with_the_same_handles_everywhere() {
    let mut prog = Program::from_text(PTX).unwrap();
    let k = prog.kernel("k").unwrap();
    let uses = prog.texture_uses(k);
    let cfg = Config::default();
    let inp = harness::inputs(prog.params(k), prog.param_size(k) as usize, &uses, &cfg);

    // Only `out` is a buffer; `img` and `vol` are textures, in the order the kernel uses them.
    assert_eq!(inp.buffers.len(), 1);
    assert_eq!(inp.buffers[0].0, 0);
    let [img, vol]: &[TextureInput; 2] = inp.textures.as_slice().try_into().unwrap();
    assert_eq!(img.source, TextureSource::Param(1));
    assert_eq!(img.offset, Some(8));
    assert_eq!(vol.source, TextureSource::Texref("vol".into()));
    assert_eq!(vol.offset, None);
    let t = &img.texture;
    assert_eq!(
        (t.shape, [t.width, t.height, t.depth], t.format, t.filter),
        (TexShape::D2, [64, 64, 1], TexFormat::F32, Filter::Linear)
    );
    assert_eq!((t.address, t.normalized), (AddressMode::Clamp, false));
    assert!(t.texels.iter().flatten().all(|&w| {
        let x = f32::from_bits(w);
        (-8.0..8.0).contains(&x) && (x * 8.0).fract() == 0.0
    }));
    let v = &vol.texture;
    assert_eq!(
        (v.shape, [v.width, v.height, v.depth], v.format, v.filter),
        (TexShape::D3, [16, 16, 16], TexFormat::U32, Filter::Point)
    );
    assert!(v.texels.iter().flatten().all(|&w| w < 32));

    // Deterministic from the seed.
    let again = harness::inputs(prog.params(k), prog.param_size(k) as usize, &uses, &cfg);
    assert_eq!(again.textures, inp.textures);
    let other = Config {
        seed: cfg.seed + 1,
        ..Config::default()
    };
    let other = harness::inputs(prog.params(k), prog.param_size(k) as usize, &uses, &other);
    assert_ne!(other.textures[0].texture.texels, img.texture.texels);

    // Two memories (the interpreter's and the emulator's) see the same handles and textures.
    let mut m1 = Memory::new();
    let mut m2 = Memory::new();
    let (p1, a1) = harness::place(&inp, &mut m1);
    let (p2, a2) = harness::place(&inp, &mut m2);
    assert_eq!((&p1, &a1), (&p2, &a2));
    let handle = u64::from_le_bytes(p1[8..16].try_into().unwrap());
    assert_eq!(handle, 1, "the first texture's handle, in the low 32 bits");
    for m in [&m1, &m2] {
        assert_eq!(m.textures().get(handle), Some(&img.texture));
        let bound = m.textures().bound("vol").expect("vol bound");
        assert_eq!(bound, 2);
        assert_eq!(m.textures().get(u64::from(bound)), Some(&vol.texture));
    }

    // The interpreter fetches from them: texel centres of the linear 2D texture read the
    // texel itself; the 3D integer fetch reads texel (x, y, t) directly, t clamped to
    // the depth.
    prog.load(&mut m1);
    let launch = Launch {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared: 0,
        params: p1,
        step_limit: 100_000,
    };
    prog.run(&mut m1, k, &launch).unwrap();
    let out = &m1.buffer(a1[0]).unwrap().data;
    for t in 0..32usize {
        let (x, y) = (t % 8, t / 8);
        let word = |i: usize| u32::from_le_bytes(out[i..i + 4].try_into().unwrap());
        assert_eq!(word(t * 8), img.texture.texels[y * 64 + x][2], "thread {t}");
        assert_eq!(
            word(t * 8 + 4),
            vol.texture.texels[(t.min(15) * 16 + y) * 16 + x][3],
            "thread {t}"
        );
    }
}

#[test]
fn kernels_without_textures_keep_their_inputs() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
.visible .entry k(.param .u64 out, .param .u32 n)\n{\n  ret;\n}";
    let prog = Program::from_text(ptx).unwrap();
    let k = prog.kernel("k").unwrap();
    assert!(prog.texture_uses(k).is_empty());
    let cfg = Config::default();
    let inp = harness::inputs(prog.params(k), prog.param_size(k) as usize, &[], &cfg);
    assert_eq!(inp.buffers.len(), 1);
    assert!(inp.textures.is_empty());
    let mut m = Memory::new();
    harness::place(&inp, &mut m);
    assert!(m.textures().get(1).is_none());
}
