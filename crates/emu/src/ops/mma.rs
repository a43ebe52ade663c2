//! Tensor-core instructions: `HMMA`, `IMMA`, `DMMA` (one warp-wide matrix multiply-accumulate
//! `D = A·B + C`) and `LDSM`/`STSM` (8×8 matrices of 16-bit elements between shared memory and
//! the registers of a warp).
//!
//! ptxas maps each `mma.sync.aligned.mMnNkK` fragment register to the SASS operand's
//! registers in order, so the layouts are the PTX ISA's ("Matrix Fragments for
//! mma.m16n8k16" and its siblings): with `g` = lane / 4 and `t` = lane % 4, element `i` of a
//! lane's fragment sits at the (row, column) given by [`Shape`]. `wmma` kernels, whose
//! fragment layout the PTX ISA leaves open, check the same layouts independently: the
//! interpreter computes their products from whole matrices.
//!
//! Arithmetic: integer products are summed exactly (wrapping to 32 bits, or clamped to the
//! s32 range with `.SAT`); f16/bf16/tf32 products are exact in f64, their sum with `c` is taken exactly
//! and rounded once to f32 (or f16), which is the interpreter's model of `mma` (hardware
//! accumulates in an unspecified order and may differ in the last bit for some inputs); f64
//! (`DMMA`) is a chain of fused multiply-adds in `k` order starting from `c`.

use interp::float::{self, BF16, F16, F32, Fmt, Rnd};
use sass::model::{Inst, OperandKind, RegFile};

use super::{check_mods, lanes};
use crate::exec::{Ctx, Fault, R, Space, Warp, address, unsupported};

/// Element type of an operand matrix.
#[derive(Clone, Copy, PartialEq)]
enum Elem {
    F16,
    Bf16,
    /// tf32: an f32 register of which the low 13 mantissa bits are ignored.
    Tf32,
    F64,
    S8,
    U8,
    F32,
    S32,
}

impl Elem {
    fn bits(self) -> u32 {
        match self {
            Elem::F16 | Elem::Bf16 => 16,
            Elem::S8 | Elem::U8 => 8,
            Elem::Tf32 | Elem::F32 | Elem::S32 => 32,
            Elem::F64 => 64,
        }
    }

    /// Element `i` of a fragment whose registers are `regs`.
    fn get(self, regs: &[u32], i: usize) -> f64 {
        let per = (32 / self.bits().min(32)) as usize;
        if self == Elem::F64 {
            let lo = u64::from(regs[2 * i]);
            let hi = u64::from(regs[2 * i + 1]);
            return f64::from_bits(hi << 32 | lo);
        }
        let r = regs[i / per];
        let sh = (i % per) as u32 * self.bits();
        let x = if self.bits() == 32 { r } else { r >> sh };
        match self {
            Elem::F16 => F16.to_f64(u64::from(x & 0xffff)),
            Elem::Bf16 => BF16.to_f64(u64::from(x & 0xffff)),
            Elem::Tf32 => f64::from(f32::from_bits(x & 0xffff_e000)),
            Elem::F32 => f64::from(f32::from_bits(x)),
            Elem::S8 => f64::from(x as u8 as i8),
            Elem::U8 => f64::from(x & 0xff),
            Elem::S32 => f64::from(x as i32),
            Elem::F64 => unreachable!("handled above"),
        }
    }

    /// Registers a fragment of `n` elements occupies.
    fn regs(self, n: usize) -> usize {
        (n * self.bits() as usize).div_ceil(32)
    }
}

/// One MMA shape and its fragment layouts.
#[derive(Clone, Copy)]
struct Shape {
    m: usize,
    n: usize,
    k: usize,
    /// Elements per lane of A, B and C/D.
    na: usize,
    nb: usize,
    nc: usize,
    a_at: fn(usize, usize, usize) -> (usize, usize),
    b_at: fn(usize, usize, usize) -> (usize, usize),
    c_at: fn(usize, usize, usize) -> (usize, usize),
}

/// C/D of the m16n8 shapes: c0, c1 in row g, c2, c3 in row g + 8; columns 2t, 2t + 1.
fn c16x8(g: usize, t: usize, i: usize) -> (usize, usize) {
    (g + 8 * (i >> 1), 2 * t + (i & 1))
}

const M16N8K16_HALF: Shape = Shape {
    m: 16,
    n: 8,
    k: 16,
    na: 8,
    nb: 4,
    nc: 4,
    a_at: |g, t, i| (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)),
    b_at: |g, t, i| (2 * t + (i & 1) + 8 * (i >> 1), g),
    c_at: c16x8,
};

const M16N8K8_HALF: Shape = Shape {
    m: 16,
    n: 8,
    k: 8,
    na: 4,
    nb: 2,
    nc: 4,
    a_at: |g, t, i| (g + 8 * (i >> 1), 2 * t + (i & 1)),
    b_at: |g, t, i| (2 * t + i, g),
    c_at: c16x8,
};

const M16N8K8_TF32: Shape = Shape {
    m: 16,
    n: 8,
    k: 8,
    na: 4,
    nb: 2,
    nc: 4,
    a_at: |g, t, i| (g + 8 * (i & 1), t + 4 * (i >> 1)),
    b_at: |g, t, i| (t + 4 * i, g),
    c_at: c16x8,
};

const M16N8K4_TF32: Shape = Shape {
    m: 16,
    n: 8,
    k: 4,
    na: 2,
    nb: 1,
    nc: 4,
    a_at: |g, t, i| (g + 8 * i, t),
    b_at: |g, t, _| (t, g),
    c_at: c16x8,
};

const M16N8K16_INT: Shape = Shape {
    m: 16,
    n: 8,
    k: 16,
    na: 8,
    nb: 4,
    nc: 4,
    a_at: |g, t, i| (g + 8 * (i >> 2), 4 * t + (i & 3)),
    b_at: |g, t, i| (4 * t + i, g),
    c_at: c16x8,
};

const M16N8K32_INT: Shape = Shape {
    m: 16,
    n: 8,
    k: 32,
    na: 16,
    nb: 8,
    nc: 4,
    a_at: |g, t, i| (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)),
    b_at: |g, t, i| (4 * t + (i & 3) + 16 * (i >> 2), g),
    c_at: c16x8,
};

const M8N8K4_F64: Shape = Shape {
    m: 8,
    n: 8,
    k: 4,
    na: 1,
    nb: 1,
    nc: 2,
    a_at: |g, t, _| (g, t),
    b_at: |g, t, _| (t, g),
    c_at: |g, t, i| (g, 2 * t + i),
};

/// The shape and element types of an `HMMA`/`IMMA`/`DMMA` from its modifiers:
/// (shape, A, B, C/D).
fn form(inst: &Inst) -> R<(Shape, Elem, Elem, Elem)> {
    let has = |m: &str| inst.has_mod(m);
    let bad = || Fault::Unsupported(format!("{}.{}", inst.opcode, inst.mods.join(".")));
    Ok(match inst.opcode.as_str() {
        "HMMA" => {
            check_mods(
                inst,
                &["16816", "1688", "1684", "F32", "F16", "BF16", "TF32"],
            )?;
            let acc = if has("F32") { Elem::F32 } else { Elem::F16 };
            let (shape, ab) = if has("TF32") {
                if acc != Elem::F32 {
                    return Err(bad());
                }
                if has("1688") {
                    (M16N8K8_TF32, Elem::Tf32)
                } else if has("1684") {
                    (M16N8K4_TF32, Elem::Tf32)
                } else {
                    return Err(bad());
                }
            } else {
                let ab = if has("BF16") { Elem::Bf16 } else { Elem::F16 };
                if has("16816") {
                    (M16N8K16_HALF, ab)
                } else if has("1688") {
                    (M16N8K8_HALF, ab)
                } else {
                    return Err(bad());
                }
            };
            (shape, ab, ab, acc)
        }
        "IMMA" => {
            check_mods(inst, &["16816", "16832", "S8", "U8", "SAT"])?;
            let types: Vec<Elem> = inst
                .mods
                .iter()
                .filter_map(|m| match m.as_str() {
                    "S8" => Some(Elem::S8),
                    "U8" => Some(Elem::U8),
                    _ => None,
                })
                .collect();
            let [ta, tb] = types[..] else {
                return Err(bad());
            };
            let shape = if has("16832") {
                M16N8K32_INT
            } else if has("16816") {
                M16N8K16_INT
            } else {
                return Err(bad());
            };
            (shape, ta, tb, Elem::S32)
        }
        "DMMA" => {
            // sm_80 spells it `DMMA.884`, sm_90 `DMMA.8x8x4`.
            check_mods(inst, &["8x8x4", "884"])?;
            if !has("8x8x4") && !has("884") {
                return Err(bad());
            }
            (M8N8K4_F64, Elem::F64, Elem::F64, Elem::F64)
        }
        _ => return Err(bad()),
    })
}

/// `n` consecutive registers of `lane` from a register operand (`RZ`: zeros).
fn regs_of(w: &Warp, lane: usize, inst: &Inst, i: usize, n: usize) -> R<Vec<u32>> {
    let op = super::op_at(inst, i)?;
    match &op.kind {
        OperandKind::Reg(r) if r.file == RegFile::R => Ok((0..n)
            .map(|k| {
                if r.index == 255 {
                    0
                } else {
                    w.reg(lane, r.index + k as u8)
                }
            })
            .collect()),
        k => unsupported(format!("{} operand {k:?}", inst.opcode)),
    }
}

/// `HMMA`/`IMMA`/`DMMA d, a, b, c`: reads the fragments of every lane of the warp, multiplies,
/// and writes `d` in the executing lanes (PTX requires all of them: `.aligned`).
pub(super) fn mma(w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
    let (s, ta, tb, tc) = form(inst)?;
    let mut a = vec![vec![0f64; s.k]; s.m];
    let mut b = vec![vec![0f64; s.n]; s.k];
    let mut c = vec![vec![0f64; s.n]; s.m];
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        let ra = regs_of(w, lane, inst, 1, ta.regs(s.na))?;
        let rb = regs_of(w, lane, inst, 2, tb.regs(s.nb))?;
        let rc = regs_of(w, lane, inst, 3, tc.regs(s.nc))?;
        for i in 0..s.na {
            let (r, k) = (s.a_at)(g, t, i);
            a[r][k] = ta.get(&ra, i);
        }
        for i in 0..s.nb {
            let (k, n) = (s.b_at)(g, t, i);
            b[k][n] = tb.get(&rb, i);
        }
        for i in 0..s.nc {
            let (r, n) = (s.c_at)(g, t, i);
            c[r][n] = tc.get(&rc, i);
        }
    }
    let d_op = super::op_at(inst, 0)?;
    let OperandKind::Reg(d) = d_op.kind.clone() else {
        return unsupported(format!("{} destination", inst.opcode));
    };
    for lane in lanes(exec) {
        let (g, t) = (lane / 4, lane % 4);
        let mut out: Vec<u32> = vec![0; tc.regs(s.nc)];
        for i in 0..s.nc {
            let (r, n) = (s.c_at)(g, t, i);
            match tc {
                Elem::S32 => {
                    let sum: i64 = (0..s.k).map(|k| a[r][k] as i64 * b[k][n] as i64).sum();
                    let sum = sum + c[r][n] as i64;
                    // `.SAT` (PTX `.satfinite`): clamped to the s32 range.
                    out[i] = if inst.has_mod("SAT") {
                        sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
                    } else {
                        sum as u32
                    };
                }
                Elem::F64 => {
                    let mut acc = c[r][n];
                    for k in 0..s.k {
                        acc = a[r][k].mul_add(b[k][n], acc);
                    }
                    let bits = if acc.is_nan() {
                        float::F64.canonical_nan()
                    } else {
                        acc.to_bits()
                    };
                    out[2 * i] = bits as u32;
                    out[2 * i + 1] = (bits >> 32) as u32;
                }
                Elem::F32 | Elem::F16 => {
                    let fmt: Fmt = if tc == Elem::F32 { F32 } else { F16 };
                    let sum: f64 = (0..s.k).map(|k| a[r][k] * b[k][n]).sum::<f64>() + c[r][n];
                    let bits = if sum.is_nan() {
                        fmt.canonical_nan()
                    } else {
                        float::round(sum, std::cmp::Ordering::Equal, Rnd::Ne, fmt, false)
                    };
                    if tc == Elem::F32 {
                        out[i] = bits as u32;
                    } else {
                        out[i / 2] |= (bits as u32 & 0xffff) << (16 * (i % 2));
                    }
                }
                _ => return unsupported(format!("{} accumulator", inst.opcode)),
            }
        }
        if d.index != 255 {
            for (k, v) in out.iter().enumerate() {
                w.set_reg(lane, d.index + k as u8, *v);
            }
        }
    }
    Ok(())
}

/// The number of 8×8 matrices of an `LDSM`/`STSM` (`.2`, `.4`; none: 1) and whether they
/// are transposed (`MT88`).
fn matrices(inst: &Inst) -> R<(usize, bool)> {
    check_mods(inst, &["16", "M88", "MT88", "2", "4"])?;
    if !inst.has_mod("16") || !(inst.has_mod("M88") || inst.has_mod("MT88")) {
        return unsupported(format!("{}.{}", inst.opcode, inst.mods.join(".")));
    }
    let n = if inst.has_mod("4") {
        4
    } else if inst.has_mod("2") {
        2
    } else {
        1
    };
    Ok((n, inst.has_mod("MT88")))
}

/// The shared-memory address of lane `l` in `LDSM`/`STSM`'s memory operand.
fn row_address(w: &Warp, inst: &Inst, l: usize) -> R<u64> {
    let addr = inst
        .operands
        .iter()
        .find_map(|o| match &o.kind {
            OperandKind::Mem { addr, .. } => Some(addr),
            _ => None,
        })
        .ok_or_else(|| Fault::Unsupported(format!("{} without an address", inst.opcode)))?;
    address(w, l, addr, false)
}

/// `LDSM.16.{M88,MT88}[.2|.4] d, [a]` (PTX `ldmatrix.sync.aligned.m8n8[.x2|.x4][.trans]
/// .b16`): lanes 8i..8i+7 give the addresses of the eight 16-byte rows of matrix `i`; each
/// lane receives, in register `d + i`, the two elements (row g, columns 2t, 2t + 1) of matrix
/// `i`, or (rows 2t, 2t + 1, column g) with `.MT88`.
pub(super) fn ldsm(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
    let (n, trans) = matrices(inst)?;
    let mut rows = vec![[0u16; 8]; 8 * n];
    for (r, row) in rows.iter_mut().enumerate() {
        let a = row_address(w, inst, r)?;
        let mut b = [0u8; 16];
        ctx.load(w, r, Space::Shared, a, &mut b)?;
        for (k, e) in row.iter_mut().enumerate() {
            *e = u16::from_le_bytes([b[2 * k], b[2 * k + 1]]);
        }
    }
    let d = match &super::op_at(inst, 0)?.kind {
        OperandKind::Reg(r) if r.file == RegFile::R => *r,
        k => return unsupported(format!("LDSM destination {k:?}")),
    };
    for l in lanes(exec) {
        let (g, t) = (l / 4, l % 4);
        for i in 0..n {
            let m = &rows[8 * i..8 * i + 8];
            let (lo, hi) = if trans {
                (m[2 * t][g], m[2 * t + 1][g])
            } else {
                (m[g][2 * t], m[g][2 * t + 1])
            };
            if d.index != 255 {
                w.set_reg(l, d.index + i as u8, u32::from(hi) << 16 | u32::from(lo));
            }
        }
    }
    Ok(())
}

/// `STSM.16.{M88,MT88}[.2|.4] [a], s` (PTX `stmatrix`): the inverse of [`ldsm`]; lane `l`'s
/// register `s + i` holds its two elements of matrix `i`, lanes 8i..8i+7 give the row
/// addresses.
pub(super) fn stsm(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
    let (n, trans) = matrices(inst)?;
    let s = match &inst.operands.get(1).map(|o| &o.kind) {
        Some(OperandKind::Reg(r)) if r.file == RegFile::R => *r,
        k => return unsupported(format!("STSM source {k:?}")),
    };
    let mut rows = vec![[0u16; 8]; 8 * n];
    for l in 0..32 {
        let (g, t) = (l / 4, l % 4);
        for i in 0..n {
            let v = if s.index == 255 {
                0
            } else {
                w.reg(l, s.index + i as u8)
            };
            let (lo, hi) = (v as u16, (v >> 16) as u16);
            let m = &mut rows[8 * i..8 * i + 8];
            if trans {
                m[2 * t][g] = lo;
                m[2 * t + 1][g] = hi;
            } else {
                m[g][2 * t] = lo;
                m[g][2 * t + 1] = hi;
            }
        }
    }
    for (r, row) in rows.iter().enumerate() {
        if exec >> r & 1 == 0 {
            continue;
        }
        let a = row_address(w, inst, r)?;
        let bytes: Vec<u8> = row.iter().flat_map(|e| e.to_le_bytes()).collect();
        ctx.store(w, r, Space::Shared, a, &bytes)?;
    }
    Ok(())
}

/// `MOVM.16.MT88 d, a` (PTX `movmatrix.sync.aligned.m8n8.trans.b16`): the 8×8 matrix of
/// 16-bit elements held by the warp in the `LDSM` layout (lane `l` holds row g, columns 2t
/// and 2t + 1 in `a`) is transposed: `d` gets the elements at (row g, columns 2t, 2t + 1) of
/// the transpose.
pub(super) fn movm(w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
    check_mods(inst, &["16", "MT88"])?;
    if !inst.has_mod("16") || !inst.has_mod("MT88") {
        return unsupported(format!("MOVM.{}", inst.mods.join(".")));
    }
    let src = regs_of_all(w, inst, 1)?;
    let mut m = [[0u16; 8]; 8];
    for (l, v) in src.iter().enumerate() {
        let (g, t) = (l / 4, l % 4);
        m[g][2 * t] = *v as u16;
        m[g][2 * t + 1] = (*v >> 16) as u16;
    }
    let d = match &super::op_at(inst, 0)?.kind {
        OperandKind::Reg(r) if r.file == RegFile::R => *r,
        k => return unsupported(format!("MOVM destination {k:?}")),
    };
    for l in lanes(exec) {
        let (g, t) = (l / 4, l % 4);
        if d.index != 255 {
            w.set_reg(
                l,
                d.index,
                u32::from(m[2 * t + 1][g]) << 16 | u32::from(m[2 * t][g]),
            );
        }
    }
    Ok(())
}

/// The value of register operand `i` in every lane of the warp.
fn regs_of_all(w: &Warp, inst: &Inst, i: usize) -> R<Vec<u32>> {
    (0..32)
        .map(|l| regs_of(w, l, inst, i, 1).map(|v| v[0]))
        .collect()
}
