//! `cargo xtask wmma-layouts`: learns where ptxas 13.0.88 keeps each element of a `wmma`
//! fragment (the PTX ISA leaves the layout to the implementation) and writes
//! `crates/target/data/wmma_layouts.txt`, read by the interpreter and by kiln's lowering.
//!
//! For every fragment form (`a`, `b`, `c` × shape × element type × `.row`/`.col`) a probe
//! kernel loads the matrix with `wmma.load` and stores each fragment register of each lane to
//! its own slot; ptxas compiles it for sm_80, sm_86, sm_89 and sm_90, and kiln's SASS
//! emulator runs the cubin twice, once on a matrix whose elements hold their row number and
//! once on one holding the column. Element `e` of lane `l` is then at (row, column). A second
//! probe per accumulator form stores fragment registers holding a code of (lane, element)
//! with `wmma.store.d` and checks that it writes each element where the load read it. The
//! four targets must agree, and each fragment must cover its matrix.

use std::fmt::Write as _;

use interp::mma::{Elem, Frag, WmmaFrag};

use crate::corpus::{self, PtxasOutcome};

const ARCHS: [&str; 4] = ["sm_80", "sm_86", "sm_89", "sm_90"];

/// One fragment form.
#[derive(Debug, Clone, Copy)]
struct Form {
    frag: Frag,
    shape: (u8, u8, u8),
    elem: Elem,
    row: bool,
}

fn forms() -> Vec<Form> {
    let mut v = Vec::new();
    let three = [(16, 16, 16), (32, 8, 16), (8, 32, 16)];
    for row in [true, false] {
        for frag in [Frag::A, Frag::B] {
            for elem in [Elem::F16, Elem::Bf16, Elem::S8, Elem::U8] {
                for shape in three {
                    v.push(Form {
                        frag,
                        shape,
                        elem,
                        row,
                    });
                }
            }
            v.push(Form {
                frag,
                shape: (16, 16, 8),
                elem: Elem::Tf32,
                row,
            });
            v.push(Form {
                frag,
                shape: (8, 8, 4),
                elem: Elem::F64,
                row,
            });
        }
        for elem in [Elem::F16, Elem::F32, Elem::S32] {
            for shape in three {
                v.push(Form {
                    frag: Frag::C,
                    shape,
                    elem,
                    row,
                });
            }
        }
        v.push(Form {
            frag: Frag::C,
            shape: (16, 16, 8),
            elem: Elem::F32,
            row,
        });
        v.push(Form {
            frag: Frag::C,
            shape: (8, 8, 4),
            elem: Elem::F64,
            row,
        });
    }
    v
}

fn frag_name(f: Frag) -> &'static str {
    match f {
        Frag::A => "a",
        Frag::B => "b",
        Frag::C => "c",
    }
}

/// The form's key in the table: `a m16n16k16 f16 row`.
fn key(f: &Form) -> String {
    let (m, n, k) = f.shape;
    format!(
        "{} m{m}n{n}k{k} {} {}",
        frag_name(f.frag),
        f.elem.name(),
        if f.row { "row" } else { "col" }
    )
}

/// The leading dimension of the matrix in memory: its width (`.row`) or height (`.col`).
fn stride(fr: &WmmaFrag, row: bool) -> usize {
    if row { fr.cols } else { fr.rows }
}

/// A probe kernel `k(in, out)`: `wmma.load` of `in`, every register of lane `l` stored to
/// `out[(i·32 + l)]` (slots of the register's width); or, with `store`, every register loaded
/// from those slots of `in` and the fragment written to `out` by `wmma.store.d`.
fn probe(f: &Form, fr: &WmmaFrag, arch: &str, store: bool) -> String {
    let wide = f.elem == Elem::F64;
    let (w, rty, st) = if wide {
        (8, ".f64", ".f64")
    } else if f.elem == Elem::F32 {
        (4, ".f32", ".f32")
    } else {
        (4, ".b32", ".b32")
    };
    let n = fr.regs();
    let regs: Vec<String> = (0..n).map(|i| format!("%x{i}")).collect();
    let (m, nn, k) = f.shape;
    let layout = if f.row { "row" } else { "col" };
    let mut s = String::new();
    let _ = write!(
        s,
        ".version 8.0\n.target {}\n.address_size 64\n.visible .entry k(.param .u64 in, .param .u64 out)\n{{\n  .reg .b64 %rd<8>;\n  .reg .b32 %r<4>;\n  .reg {rty} %x<{n}>;\n  ld.param.u64 %rd1, [in];\n  ld.param.u64 %rd2, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n  cvta.to.global.u64 %rd2, %rd2;\n  mov.u32 %r1, %laneid;\n  mul.wide.u32 %rd3, %r1, {w};\n",
        arch
    );
    let list = format!("{{{}}}", regs.join(", "));
    let ld = if store { "%rd4" } else { "%rd1" };
    if store {
        let _ = writeln!(s, "  add.u64 %rd4, %rd1, %rd3;");
        for (i, r) in regs.iter().enumerate() {
            let _ = writeln!(s, "  ld.global{st} {r}, [{ld}+{}];", i * 32 * w);
        }
        let ty = f.elem.name();
        let _ = writeln!(
            s,
            "  wmma.store.d.sync.aligned.{layout}.m{m}n{nn}k{k}.global.{ty} [%rd2], {list}, {};",
            stride(fr, f.row)
        );
    } else {
        let ty = f.elem.name();
        let _ = writeln!(
            s,
            "  wmma.load.{}.sync.aligned.{layout}.m{m}n{nn}k{k}.global.{ty} {list}, [%rd1], {};",
            frag_name(f.frag),
            stride(fr, f.row)
        );
        let _ = writeln!(s, "  add.u64 %rd4, %rd2, %rd3;");
        for (i, r) in regs.iter().enumerate() {
            let _ = writeln!(s, "  st.global{st} [%rd4+{}], {r};", i * 32 * w);
        }
    }
    s.push_str("  ret;\n}\n");
    s
}

/// An element's bits holding the small integer `v` in type `e`.
fn encode(e: Elem, v: u32) -> u64 {
    match e {
        Elem::F16 => u64::from(half::f16::from_f32(v as f32).to_bits()),
        Elem::Bf16 => u64::from(half::bf16::from_f32(v as f32).to_bits()),
        Elem::Tf32 | Elem::F32 => u64::from((v as f32).to_bits()),
        Elem::F64 => (f64::from(v)).to_bits(),
        Elem::S8 | Elem::U8 | Elem::S32 => u64::from(v),
    }
}

/// The small integer an element's bits hold (the inverse of [`encode`]).
fn decode(e: Elem, bits: u64) -> Option<u32> {
    let v = e.value(bits);
    (v >= 0.0 && v.fract() == 0.0 && v < 4096.0).then_some(v as u32)
}

/// Runs kernel `k` of `cubin` on one warp with buffers `input` and an `out_len`-byte output;
/// the output's bytes.
fn run(cubin: &[u8], input: Vec<u8>, out_len: usize) -> Result<Vec<u8>, String> {
    let mut mem = interp::Memory::new();
    let a = mem.alloc("in", input);
    let b = mem.alloc("out", vec![0; out_len]);
    let prog = emu::load(cubin, &mut mem).map_err(|e| format!("loading the probe: {e}"))?;
    let k = prog.kernel("k").ok_or("no kernel k in the probe")?;
    let mut params = vec![0u8; k.param_block.1 as usize];
    for (p, v) in k.params.iter().zip([a, b]) {
        let at = p.offset as usize;
        params[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    let launch = emu::Launch {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared: 0,
        params,
        step_limit: 100_000,
    };
    emu::run(&prog, &mut mem, "k", &launch).map_err(|e| format!("emulating the probe: {e:?}"))?;
    Ok(mem.buffer(b).expect("allocated").data.clone())
}

fn cubin(ptx: &str, arch: &str) -> Result<Vec<u8>, String> {
    match corpus::ptxas_cubin(ptx, arch, &[])? {
        PtxasOutcome::Ok { cubin, .. } => {
            std::fs::read(&cubin).map_err(|e| format!("reading {}: {e}", cubin.display()))
        }
        PtxasOutcome::Rejected(m) => Err(format!("ptxas rejected the probe: {m}\n{ptx}")),
    }
}

/// Where each element of each lane is: `[lane][element] = (row, col)`.
type Layout = Vec<Vec<(usize, usize)>>;

fn learn_load(f: &Form, arch: &str) -> Result<Layout, String> {
    let fr = WmmaFrag::of(f.frag, f.shape, f.elem).ok_or("no such fragment")?;
    let bytes = (f.elem.bits() / 8) as usize;
    let ld = stride(&fr, f.row);
    let bin = cubin(&probe(f, &fr, arch, false), arch)?;
    let slot = if f.elem == Elem::F64 { 8 } else { 4 };
    let mut coords = Vec::new();
    for which in 0..2 {
        let mut input = vec![0u8; fr.rows * fr.cols * bytes];
        for r in 0..fr.rows {
            for c in 0..fr.cols {
                let at = if f.row { r * ld + c } else { c * ld + r };
                let v = encode(f.elem, if which == 0 { r as u32 } else { c as u32 });
                input[at * bytes..(at + 1) * bytes].copy_from_slice(&v.to_le_bytes()[..bytes]);
            }
        }
        let out = run(&bin, input, fr.regs() * 32 * slot)?;
        let mut lanes = vec![Vec::new(); 32];
        for (lane, got) in lanes.iter_mut().enumerate() {
            let regs: Vec<u64> = (0..fr.regs())
                .map(|i| {
                    let at = (i * 32 + lane) * slot;
                    let mut b = [0u8; 8];
                    b[..slot].copy_from_slice(&out[at..at + slot]);
                    u64::from_le_bytes(b)
                })
                .collect();
            for e in 0..fr.per_lane {
                let per = f.elem.per_reg();
                let r = regs[e / per];
                let bits = if f.elem.bits() >= 32 {
                    r
                } else {
                    r >> ((e % per) as u32 * f.elem.bits())
                };
                let mask = if f.elem.bits() >= 64 {
                    u64::MAX
                } else {
                    (1u64 << f.elem.bits()) - 1
                };
                got.push(decode(f.elem, bits & mask).ok_or_else(|| {
                    format!("{}: lane {lane} element {e} holds {bits:#x}", key(f))
                })?);
            }
        }
        coords.push(lanes);
    }
    let layout: Layout = (0..32)
        .map(|l| {
            (0..fr.per_lane)
                .map(|e| (coords[0][l][e] as usize, coords[1][l][e] as usize))
                .collect()
        })
        .collect();
    let mut seen = vec![false; fr.rows * fr.cols];
    for lane in &layout {
        for &(r, c) in lane {
            if r >= fr.rows || c >= fr.cols {
                return Err(format!("{}: element ({r}, {c}) outside the matrix", key(f)));
            }
            seen[r * fr.cols + c] = true;
        }
    }
    if seen.iter().any(|s| !s) {
        return Err(format!(
            "{}: the fragment does not cover its matrix",
            key(f)
        ));
    }
    Ok(layout)
}

/// Checks that `wmma.store.d` writes element `e` of lane `l` where `layout` says.
fn check_store(f: &Form, arch: &str, layout: &Layout) -> Result<(), String> {
    let fr = WmmaFrag::of(Frag::C, f.shape, f.elem).ok_or("no such fragment")?;
    let bytes = (f.elem.bits() / 8) as usize;
    let ld = stride(&fr, f.row);
    let bin = cubin(&probe(f, &fr, arch, true), arch)?;
    let slot = if f.elem == Elem::F64 { 8 } else { 4 };
    let mut input = vec![0u8; fr.regs() * 32 * slot];
    let per = f.elem.per_reg();
    for lane in 0..32 {
        for e in 0..fr.per_lane {
            let code = encode(f.elem, (lane * fr.per_lane + e) as u32);
            let reg = e / per;
            let at = (reg * 32 + lane) * slot + (e % per) * bytes;
            input[at..at + bytes].copy_from_slice(&code.to_le_bytes()[..bytes]);
        }
    }
    let out = run(&bin, input, fr.rows * fr.cols * bytes)?;
    for (lane, elems) in layout.iter().enumerate() {
        for (e, &(r, c)) in elems.iter().enumerate() {
            let at = if f.row { r * ld + c } else { c * ld + r } * bytes;
            let mut b = [0u8; 8];
            b[..bytes].copy_from_slice(&out[at..at + bytes]);
            let got = decode(f.elem, u64::from_le_bytes(b));
            if got != Some((lane * fr.per_lane + e) as u32) {
                return Err(format!(
                    "{} on {arch}: wmma.store.d wrote ({r}, {c}) with {got:?}, not lane {lane} element {e}",
                    key(f)
                ));
            }
        }
    }
    Ok(())
}

pub fn table_path() -> std::path::PathBuf {
    corpus::workspace_root().join("crates/target/data/wmma_layouts.txt")
}

pub fn run_cmd(_args: &[String]) -> Result<(), String> {
    let mut text = String::from(
        "# wmma fragment layouts of ptxas 13.0.88, the same on sm_80, sm_86, sm_89 and sm_90.\n\
         # Generated by `cargo xtask wmma-layouts` (xtask/src/wmma_layouts.rs): do not edit.\n\
         # One line per fragment form: `frag shape type layout:` then, for lanes 0..31 in order,\n\
         # the (row.col) of each element in register order (low half of a register first),\n\
         # lanes separated by `|`.\n",
    );
    for f in forms() {
        let mut first: Option<Layout> = None;
        for arch in ARCHS {
            let l = learn_load(&f, arch)?;
            if f.frag == Frag::C {
                check_store(&f, arch, &l)?;
            }
            match &first {
                None => first = Some(l),
                Some(p) if *p != l => {
                    return Err(format!("{}: {arch} differs from sm_80", key(&f)));
                }
                Some(_) => {}
            }
        }
        let l = first.expect("four targets");
        let lanes: Vec<String> = l
            .iter()
            .map(|es| {
                es.iter()
                    .map(|(r, c)| format!("{r}.{c}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let _ = writeln!(text, "{}: {}", key(&f), lanes.join(" | "));
        eprintln!("wmma-layouts: {}", key(&f));
    }
    let path = table_path();
    std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}
