//! The arithmetic of values: integer and floating-point operations with PTX's rounding,
//! flushing and saturation, conversions, byte permutes, atomics' operations.

use super::*;

pub(crate) fn copy_from(src: &[u8], addr: u64, out: &mut [u8]) -> bool {
    let Some(end) = addr.checked_add(out.len() as u64) else {
        return false;
    };
    if end > src.len() as u64 {
        return false;
    }
    out.copy_from_slice(&src[addr as usize..end as usize]);
    true
}

pub(crate) fn copy_to(dst: &mut [u8], addr: u64, bytes: &[u8]) -> bool {
    let Some(end) = addr.checked_add(bytes.len() as u64) else {
        return false;
    };
    if end > dst.len() as u64 {
        return false;
    }
    dst[addr as usize..end as usize].copy_from_slice(bytes);
    true
}

pub(crate) fn space_name(s: Space) -> &'static str {
    match s {
        Space::Generic | Space::Global => "global",
        Space::Shared | Space::SharedCluster => "shared",
        Space::Local => "local",
        Space::Const => "constant",
        Space::Param => "parameter",
    }
}

/// Writes `v` (a value of type `ty`) to a destination operand, extending or truncating to the
/// register's declared width (sign-extending for signed types, as PTX's relaxed `ld`/`cvt`
/// rules say).
pub(crate) fn set(f: &Function, t: &mut Thread, op: &Operand, ty: Ty, v: u64) {
    match op {
        Operand::Reg(r) => {
            let width = f.reg_bits[*r as usize];
            let v = v & ty.mask();
            let v = if width == 1 {
                (v != 0) as u64
            } else if width > ty.bits() && ty.is_signed() {
                let s = 64 - ty.bits();
                (((v << s) as i64) >> s) as u64
            } else {
                v
            };
            let m = if width >= 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            t.frames.last_mut().expect("frame").regs[*r as usize] = v & m;
        }
        Operand::Vec(parts) if parts.len() == 1 => set(f, t, &parts[0], ty, v),
        _ => {}
    }
}

pub(crate) fn bits_ty(bits: u32) -> Ty {
    match bits {
        8 => Ty::B8,
        16 => Ty::B16,
        32 => Ty::B32,
        _ => Ty::B64,
    }
}

/// Sign- or zero-extends a value of type `ty` to i128.
pub(crate) fn ext(v: u64, ty: Ty) -> i128 {
    if ty.is_signed() {
        let s = 64 - ty.bits();
        (((v << s) as i64) >> s) as i128
    } else {
        (v & ty.mask()) as i128
    }
}

pub(crate) fn wide_ty(ty: Ty) -> Ty {
    match ty {
        Ty::U16 => Ty::U32,
        Ty::S16 => Ty::S32,
        Ty::U32 => Ty::U64,
        Ty::S32 => Ty::S64,
        Ty::B16 => Ty::B32,
        Ty::B32 => Ty::B64,
        other => other,
    }
}

pub(crate) fn int_range(ty: Ty) -> (i128, i128) {
    let bits = ty.bits();
    if ty.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// The element format and width in bits of a packed pair type (`.f16x2`, `.bf16x2`,
/// `.e4m3x2`, `.e5m2x2`).
pub(crate) fn packed_elem(ty: Ty) -> (Fmt, u32) {
    match ty {
        Ty::F16x2 => (float::F16, 16),
        Ty::Bf16x2 => (float::BF16, 16),
        Ty::E4m3x2 => (float::E4M3, 8),
        _ => (float::E5M2, 8),
    }
}

/// The bit type holding a packed pair of `w`-bit elements.
pub(crate) fn packed_ty(w: u32) -> Ty {
    if w == 16 { Ty::B32 } else { Ty::B16 }
}

pub(crate) fn fmt_of(ty: Ty) -> Fmt {
    match ty {
        Ty::F16 | Ty::F16x2 => float::F16,
        Ty::Bf16 | Ty::Bf16x2 => float::BF16,
        Ty::F64 => float::F64,
        _ => float::F32,
    }
}

/// Bits of a float type -> f64 (exact).
pub(crate) fn to_f64(ty: Ty, bits: u64) -> f64 {
    match ty {
        Ty::F64 => f64::from_bits(bits),
        Ty::F32 => f32::from_bits(bits as u32) as f64,
        _ => fmt_of(ty).to_f64(bits & 0xffff),
    }
}

pub(crate) fn flush_in(ty: Ty, bits: u64, ftz: bool) -> u64 {
    if !ftz {
        return bits;
    }
    match ty {
        Ty::F32 => float::ftz32(bits as u32) as u64,
        Ty::F16 => float::ftz16(bits as u16) as u64,
        _ => bits,
    }
}

/// Post-processing of a float result: `.sat`, `.relu`, `.ftz` on the output.
pub(crate) fn finish(ty: Ty, m: &Mods, bits: u64) -> u64 {
    let fmt = fmt_of(ty);
    let mut bits = bits;
    if m.sat {
        let v = fmt.to_f64(bits);
        bits = float::round(float::sat(v), Ordering::Equal, Rnd::Ne, fmt, false);
    }
    if m.relu {
        let v = fmt.to_f64(bits);
        if v.is_nan() {
            bits = fmt.canonical_nan();
        } else if v < 0.0 {
            bits = 0;
        }
    }
    flush_in(ty, bits, m.ftz)
}

/// Applies a scalar float operation lane-wise (packed x2 types operate on both halves).
pub(crate) fn packed(ty: Ty, x: u64, y: u64, z: u64, op: &dyn Fn(Ty, u64, u64, u64) -> u64) -> u64 {
    match ty {
        Ty::F16x2 | Ty::Bf16x2 => {
            let h = if ty == Ty::F16x2 { Ty::F16 } else { Ty::Bf16 };
            let lo = op(h, x & 0xffff, y & 0xffff, z & 0xffff) & 0xffff;
            let hi = op(h, x >> 16 & 0xffff, y >> 16 & 0xffff, z >> 16 & 0xffff) & 0xffff;
            (hi << 16) | lo
        }
        _ => op(ty, x, y, z),
    }
}

pub(crate) fn float_bin(
    ty: Ty,
    m: &Mods,
    x: u64,
    y: u64,
    f: &dyn Fn(f64, f64, Rnd, Fmt) -> u64,
) -> u64 {
    let rnd = m.rnd.unwrap_or(Rnd::Ne);
    packed(ty, x, y, 0, &|t, x, y, _| {
        let a = to_f64(t, flush_in(t, x, m.ftz));
        let b = to_f64(t, flush_in(t, y, m.ftz));
        let r = if m.approx && t == Ty::F32 {
            // div.approx/div.full: within 2 ulp per PTX; computed exactly here.
            f(a, b, Rnd::Ne, fmt_of(t))
        } else {
            f(a, b, rnd, fmt_of(t))
        };
        finish(t, m, r)
    })
}

pub(crate) fn float_tern(ty: Ty, m: &Mods, x: u64, y: u64, z: u64) -> u64 {
    let rnd = m.rnd.unwrap_or(Rnd::Ne);
    packed(ty, x, y, z, &|t, x, y, z| {
        let a = to_f64(t, flush_in(t, x, m.ftz));
        let b = to_f64(t, flush_in(t, y, m.ftz));
        let c = to_f64(t, flush_in(t, z, m.ftz));
        finish(t, m, float::fma(a, b, c, rnd, fmt_of(t)))
    })
}

pub(crate) fn float_unary_sign(ty: Ty, m: &Mods, x: u64, neg: bool) -> u64 {
    packed(ty, x, 0, 0, &|t, x, _, _| {
        let bits = t.bits().min(if matches!(t, Ty::F16 | Ty::Bf16) {
            16
        } else {
            64
        });
        let sb = 1u64 << (bits - 1);
        let x = flush_in(t, x, m.ftz);
        // ptxas computes f32 and f64 `abs`/`neg` as an addition of -0 (`FADD |a|, -RZ`,
        // `DADD -RZ, -a`): a NaN comes out canonical (PTX leaves it unspecified).
        if matches!(t, Ty::F32 | Ty::F64) && to_f64(t, x).is_nan() {
            return fmt_of(t).canonical_nan();
        }
        let r = if neg { x ^ sb } else { x & !sb };
        if t == Ty::F32 || t == Ty::F16 {
            flush_in(t, r, m.ftz)
        } else {
            r
        }
    })
}

pub(crate) fn float_minmax(ty: Ty, m: &Mods, x: u64, y: u64, is_max: bool) -> u64 {
    packed(ty, x, y, 0, &|t, x, y, _| {
        let fmt = fmt_of(t);
        let x = flush_in(t, x, m.ftz);
        let y = flush_in(t, y, m.ftz);
        let a = to_f64(t, x);
        let b = to_f64(t, y);
        let r = if a.is_nan() && b.is_nan() && t == Ty::F64 && !m.nan {
            // Two NaNs in f64: ptxas's `max.f64`/`min.f64` (DSETP.MAX/MIN, then selects)
            // returns the second operand quieted.
            y | F64_QUIET_BIT
        } else if (a.is_nan() && b.is_nan()) || ((a.is_nan() || b.is_nan()) && m.nan) {
            fmt.canonical_nan()
        } else if a.is_nan() {
            y
        } else if b.is_nan() {
            x
        } else {
            let pick_a = if a == b {
                // -0 < +0
                let an = a.is_sign_negative();
                if is_max { !an } else { an }
            } else if is_max {
                a > b
            } else {
                a < b
            };
            if pick_a { x } else { y }
        };
        let r = if m.xorsign_abs {
            let bits = if matches!(t, Ty::F16 | Ty::Bf16) {
                16
            } else {
                t.bits()
            };
            let sb = 1u64 << (bits - 1);
            let sign = (x ^ y) & sb;
            let ax = x & !sb;
            let ay = y & !sb;
            let r = float_minmax(
                t,
                &Mods {
                    xorsign_abs: false,
                    ..m.clone()
                },
                ax,
                ay,
                is_max,
            );
            (r & !sb) | sign
        } else {
            r
        };
        finish(
            t,
            &Mods {
                sat: false,
                ..m.clone()
            },
            r,
        )
    })
}

/// The NaN an f64 `div` gives on NVIDIA GPUs, where it is ptxas's software routine
/// (checked in the emulator on ptxas 13.0.88's code, sm_80 and sm_90): a NaN operand comes
/// back quieted (the first one), an invalid division (0/0, inf/inf) gives the negative quiet
/// NaN 0xfff8000000000000. `r` is the division's result otherwise.
pub(crate) fn f64_div_nan(x: u64, y: u64, r: u64) -> u64 {
    let nan = |b: u64| f64::from_bits(b).is_nan();
    if nan(x) {
        x | F64_QUIET_BIT
    } else if nan(y) {
        y | F64_QUIET_BIT
    } else if nan(r) {
        NEG_QUIET_NAN
    } else {
        r
    }
}

/// Approximate and correctly rounded transcendental/unary functions.
pub(crate) fn float_fn(op: Op, ty: Ty, m: &Mods, x: u64) -> u64 {
    packed(ty, x, 0, 0, &|t, x, _, _| {
        let fmt = fmt_of(t);
        let a = to_f64(t, flush_in(t, x, m.ftz));
        let rnd = m.rnd.unwrap_or(Rnd::Ne);
        let r = match op {
            Op::Rcp if !m.approx && t == Ty::F64 => {
                // A NaN comes back quieted (ptxas's routine).
                if a.is_nan() {
                    x | F64_QUIET_BIT
                } else {
                    float::div(1.0, a, rnd, fmt)
                }
            }
            Op::Sqrt if !m.approx && t == Ty::F64 && a < 0.0 => {
                // ptxas's routine: the square root of a negative number (not -0) is
                // 0xfff8000000000000; of a NaN, the canonical NaN (its `DADD a, a`).
                NEG_QUIET_NAN
            }
            Op::Rcp | Op::Rsqrt if m.approx && m.ftz && t == Ty::F64 => {
                // PTX: `rcp.approx.ftz.f64` and `rsqrt.approx.ftz.f64` use only the operand's
                // high 32 bits and give only the result's (the low word is zero); subnormal
                // inputs and results are flushed to signed zero. ptxas writes one MUFU.RCP64H
                // (RSQ64H) on the high word.
                let flush = |v: f64| {
                    if v.is_subnormal() {
                        0.0f64.copysign(v)
                    } else {
                        v
                    }
                };
                let hi = flush(f64::from_bits(x & 0xffff_ffff_0000_0000));
                let r = if op == Op::Rcp {
                    1.0 / hi
                } else {
                    1.0 / hi.sqrt()
                };
                flush(r).to_bits() & 0xffff_ffff_0000_0000
            }
            Op::Rsqrt if t == Ty::F64 && (a.is_nan() || a < 0.0) => {
                // ptxas's rsqrt.approx.f64 routine (its special-case block, also what an H100
                // wrote: h100-2026-11-27 job 2701): a NaN comes back quieted (`DADD a, a`),
                // a negative number (not -0) gives 0xfff8000000000000.
                if a.is_nan() {
                    x | F64_QUIET_BIT
                } else {
                    NEG_QUIET_NAN
                }
            }
            Op::Rcp if !m.approx => float::div(1.0, a, rnd, fmt),
            Op::Sqrt if !m.approx => float::sqrt(a, rnd, fmt),
            Op::Rcp => float::div(1.0, a, Rnd::Ne, fmt),
            Op::Sqrt => float::sqrt(a, Rnd::Ne, fmt),
            Op::Rsqrt => float::round(1.0 / a.sqrt(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Sin => float::round(a.sin(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Cos => float::round(a.cos(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Lg2 => float::round(a.log2(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Ex2 => float::round(a.exp2(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Tanh => float::round(a.tanh(), Ordering::Equal, Rnd::Ne, fmt, false),
            _ => unreachable!("not a float function"),
        };
        finish(t, m, r)
    })
}

pub(crate) fn compare(cmp: Cmp, ty: Ty, x: u64, y: u64, ftz: bool) -> bool {
    if ty.is_float() {
        let a = to_f64(ty, flush_in(ty, x, ftz));
        let b = to_f64(ty, flush_in(ty, y, ftz));
        let un = a.is_nan() || b.is_nan();
        return match cmp {
            Cmp::Eq => !un && a == b,
            Cmp::Ne => !un && a != b,
            Cmp::Lt | Cmp::Lo => !un && a < b,
            Cmp::Le | Cmp::Ls => !un && a <= b,
            Cmp::Gt | Cmp::Hi => !un && a > b,
            Cmp::Ge | Cmp::Hs => !un && a >= b,
            Cmp::Equ => un || a == b,
            Cmp::Neu => un || a != b,
            Cmp::Ltu => un || a < b,
            Cmp::Leu => un || a <= b,
            Cmp::Gtu => un || a > b,
            Cmp::Geu => un || a >= b,
            Cmp::Num => !un,
            Cmp::Nan => un,
        };
    }
    let (sa, sb) = (ext(x, ty), ext(y, ty));
    let (ua, ub) = (x & ty.mask(), y & ty.mask());
    match cmp {
        Cmp::Eq | Cmp::Equ => ua == ub,
        Cmp::Ne | Cmp::Neu => ua != ub,
        Cmp::Lt | Cmp::Ltu => sa < sb,
        Cmp::Le | Cmp::Leu => sa <= sb,
        Cmp::Gt | Cmp::Gtu => sa > sb,
        Cmp::Ge | Cmp::Geu => sa >= sb,
        Cmp::Lo => ua < ub,
        Cmp::Ls => ua <= ub,
        Cmp::Hi => ua > ub,
        Cmp::Hs => ua >= ub,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// The "true" value `set` writes: all ones for integers, 1.0 for floats.
pub(crate) fn set_true(ty: Ty) -> u64 {
    match ty {
        Ty::F32 => 1f32.to_bits() as u64,
        Ty::F16 | Ty::F16x2 => 0x3c00,
        Ty::Bf16 | Ty::Bf16x2 => 0x3f80,
        _ => ty.mask(),
    }
}

pub(crate) fn cvt_float(bits: u64, sty: Ty, fmt: Fmt, m: &Mods) -> u64 {
    let v = to_f64(sty, flush_in(sty, bits, m.ftz));
    let v = if m.relu && v < 0.0 { 0.0 } else { v };
    let rnd = m.rnd.unwrap_or(Rnd::Ne);
    let r = float::round(v, Ordering::Equal, rnd, fmt, m.satfinite);
    if m.relu && v.is_nan() {
        fmt.canonical_nan()
    } else {
        r
    }
}

pub(crate) fn round_integral(v: f64, r: Rnd) -> f64 {
    match r {
        Rnd::Ne => v.round_ties_even(),
        Rnd::Z => v.trunc(),
        Rnd::M => v.floor(),
        Rnd::P => v.ceil(),
    }
}

/// `cvt` between scalar types.
pub(crate) fn cvt(dty: Ty, sty: Ty, x: u64, m: &Mods) -> u64 {
    let dfloat = dty.is_float() || dty == Ty::Tf32;
    match (dfloat, sty.is_float()) {
        (false, false) => {
            let v = ext(x, sty);
            if m.sat {
                let (lo, hi) = int_range(dty);
                (v.clamp(lo, hi) as u64) & dty.mask()
            } else {
                (v as u64) & dty.mask()
            }
        }
        (true, false) => {
            let v = ext(x, sty);
            let r = float::from_int(v, m.rnd.unwrap_or(Rnd::Ne), fmt_of(dty));
            let r = finish(
                dty,
                &Mods {
                    ftz: false,
                    ..m.clone()
                },
                r,
            );
            cvt_sat_zero(dty, m, r)
        }
        (false, true) => {
            let v = to_f64(sty, flush_in(sty, x, m.ftz));
            if v.is_nan() {
                return 0;
            }
            let r = round_integral(v, m.irnd.unwrap_or(Rnd::Z));
            let (lo, hi) = int_range(dty);
            let i = if r <= lo as f64 {
                lo
            } else if r >= hi as f64 {
                hi
            } else {
                r as i128
            };
            (i as u64) & dty.mask()
        }
        (true, true) => {
            if dty == Ty::Tf32 {
                // cvt.rna.tf32.f32: keep 10 mantissa bits, ties away from zero. An infinity
                // or NaN keeps its high bits, as ptxas 13.0.88's code computes it (the PTX ISA
                // does not say which NaN results): `FSETP.GEU |a|, +INF` skips the rounding
                // add, then `LOP3` clears the low 13 bits.
                let b = x as u32;
                let f = f32::from_bits(b);
                let r = if f.is_nan() || f.is_infinite() {
                    b
                } else {
                    b.wrapping_add(0x1000)
                };
                return u64::from(r & 0xffff_e000);
            }
            if sty == Ty::Bf16 && dty == Ty::F32 && m.irnd.is_none() && !m.sat && !m.relu {
                // bf16 -> f32 is the bit pattern shifted up, NaN payloads and signs included
                // (ptxas 13.0.88 writes `SHF.L.U32 d, a, 0x10, RZ` for every rounding).
                return (x & 0xffff) << 16;
            }
            let v = to_f64(sty, flush_in(sty, x, m.ftz && sty == Ty::F32));
            let fmt = fmt_of(dty);
            let r = if let Some(ir) = m.irnd {
                let v = round_integral(v, ir);
                float::round(v, Ordering::Equal, Rnd::Ne, fmt, false)
            } else {
                let r = float::round(
                    v,
                    Ordering::Equal,
                    m.rnd.unwrap_or(Rnd::Ne),
                    fmt,
                    m.satfinite,
                );
                if v.is_nan() && dty == Ty::F64 {
                    // f32 -> f64 keeps the payload (quieted).
                    let b = x as u32;
                    ((b as u64 & 0x8000_0000) << 32)
                        | 0x7ff8_0000_0000_0000
                        | ((b as u64 & 0x3f_ffff) << 29)
                } else {
                    r
                }
            };
            let narrowing_ftz = m.ftz && dty == Ty::F32 && sty == Ty::F64 && m.irnd.is_none();
            let ftz_out = m.ftz && dty == Ty::F32 && !narrowing_ftz;
            let r = finish(
                dty,
                &Mods {
                    ftz: ftz_out,
                    relu: m.relu,
                    sat: m.sat,
                    ..Mods::default()
                },
                r,
            );
            let r = if narrowing_ftz {
                f64_to_f32_flush(x, v, m.rnd.unwrap_or(Rnd::Ne), r)
            } else {
                r
            };
            cvt_sat_zero(dty, m, r)
        }
    }
}

/// `cvt{.rnd}.ftz{.sat}.f32.f64`'s flush of the rounded (and saturated) result `r` to a
/// sign-preserving zero, as ptxas 13.0.88's code decides it on sm_75 to sm_90. The ISA says
/// "subnormal results"; ptxas compares the source with a threshold per rounding mode, which
/// also flushes some sources that round to `FLT_MIN` itself. With M = 2^-126 - 2^-150 (the
/// midpoint of the largest subnormal and `FLT_MIN`): `.rn` flushes where `|a|` is below
/// 0x380fffff_f0000000 (`DSETP.GEU |a|, T`, so `[M, T)` too); `.rm` where `|a| <= M` for a
/// negative source and `|a| < FLT_MIN` for a positive one, `.rp` the other way round
/// (`DSETP.GT T, |a|` with T = 0x380fffff_e0000001 or `FLT_MIN` by the source's top bit);
/// `.rz` where the result is below `FLT_MIN` (`FSETP.GEU |r|`). Checked with edge sources
/// (`test-data/codegen/cvt_ftz_f64.ptx`: ptxas's cubins in the emulator). A NaN source is never
/// flushed. The thresholds: [`ptx::flush`], shared with the code generator.
fn f64_to_f32_flush(src: u64, v: f64, rnd: Rnd, r: u64) -> u64 {
    if v.is_nan() {
        return r;
    }
    let min = f64::from_bits(ptx::flush::FLT_MIN);
    let above_midpoint = f64::from_bits(ptx::flush::ABOVE_MIDPOINT);
    let negative = src >> 63 == 1;
    let a = v.abs();
    let flush = match rnd {
        Rnd::Ne => a < f64::from_bits(ptx::flush::RN_BELOW),
        Rnd::Z => f64::from(f32::from_bits(r as u32)).abs() < min,
        Rnd::M => a < if negative { above_midpoint } else { min },
        Rnd::P => a < if negative { min } else { above_midpoint },
    };
    if flush { r & 0x8000_0000 } else { r }
}

/// `cvt.sat` to a float type gives +0 for a -0 result: ptxas computes it as `FADD.SAT d, RZ,
/// x` (and `RZ + -0 = +0`), on sm_80 and sm_90 alike.
pub(crate) fn cvt_sat_zero(dty: Ty, m: &Mods, bits: u64) -> u64 {
    let sign = match dty {
        Ty::F16 | Ty::Bf16 => 0x8000,
        Ty::F32 => 0x8000_0000,
        Ty::F64 => 0x8000_0000_0000_0000,
        _ => return bits,
    };
    if m.sat && bits == sign { 0 } else { bits }
}

pub(crate) fn prmt(a: u32, b: u32, c: u32, mode: u8) -> u32 {
    let bytes = ((b as u64) << 32 | a as u64).to_le_bytes();
    let sel = |i: u32| -> u8 {
        let s = (c >> (4 * i)) & 0xf;
        let v = bytes[(s & 7) as usize];
        if s & 8 != 0 {
            if v & 0x80 != 0 { 0xff } else { 0 }
        } else {
            v
        }
    };
    let pick = |idx: [u32; 4]| -> u32 {
        idx.iter().enumerate().fold(0u32, |acc, (k, &i)| {
            acc | (bytes[(i & 7) as usize] as u32) << (8 * k)
        })
    };
    let n = c & 3;
    match mode {
        0 => (0..4).fold(0u32, |acc, i| acc | (sel(i) as u32) << (8 * i)),
        1 => pick([n, n + 1, n + 2, n + 3]),
        2 => pick([n, (n + 7) & 7, (n + 6) & 7, (n + 5) & 7]),
        3 => pick([n, n, n, n]),
        4 => ecl(&bytes, n),
        5 => ecr(&bytes, n),
        _ => {
            let s = (n & 1) * 2;
            pick([s, s + 1, s, s + 1])
        }
    }
}

pub(crate) fn ecl(bytes: &[u8; 8], n: u32) -> u32 {
    // Edge clamp left: byte i takes byte max(i, n)... per PTX: {3,2,1,0} -> for n: result bytes
    // k < n take byte k? PTX table: ecl n=0 -> 3 2 1 0; n=1 -> 3 2 1 1; n=2 -> 3 2 2 2; n=3 -> 3 3 3 3.
    let idx = |k: u32| if k < n { n } else { k };
    (0..4).fold(0u32, |acc, k| {
        acc | (bytes[idx(k) as usize] as u32) << (8 * k)
    })
}

pub(crate) fn ecr(bytes: &[u8; 8], n: u32) -> u32 {
    // Edge clamp right: n=0 -> 0 0 0 0; n=1 -> 1 1 1 0; n=2 -> 2 2 1 0; n=3 -> 3 2 1 0.
    let idx = |k: u32| if k > n { n } else { k };
    (0..4).fold(0u32, |acc, k| {
        acc | (bytes[idx(k) as usize] as u32) << (8 * k)
    })
}

pub(crate) fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    let base = base & 31;
    if offset == 0 {
        return if mask >> base & 1 == 1 {
            base
        } else {
            0xffff_ffff
        };
    }
    let mut count = offset.unsigned_abs();
    let mut pos = base as i32;
    let step = if offset > 0 { 1 } else { -1 };
    loop {
        if !(0..32).contains(&pos) {
            return 0xffff_ffff;
        }
        if mask >> pos & 1 == 1 {
            count -= 1;
            if count == 0 {
                return pos as u32;
            }
        }
        pos += step;
    }
}

pub(crate) fn atom_op(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let mask = ty.mask();
    match op {
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if old & mask == b & mask {
                c
            } else {
                old
            }
        }
        AtomOp::Add if ty.is_float() => {
            let m = Mods {
                ftz: ty == Ty::F32,
                ..Mods::default()
            };
            float_bin(ty, &m, old, b, &float::add)
        }
        AtomOp::Add => old.wrapping_add(b) & mask,
        AtomOp::Inc => {
            if old & mask >= b & mask {
                0
            } else {
                (old + 1) & mask
            }
        }
        AtomOp::Dec => {
            if old & mask == 0 || old & mask > b & mask {
                b
            } else {
                (old - 1) & mask
            }
        }
        AtomOp::Min | AtomOp::Max if ty.is_float() => {
            float_minmax(ty, &Mods::default(), old, b, op == AtomOp::Max)
        }
        AtomOp::Min | AtomOp::Max => {
            let (x, y) = (ext(old, ty), ext(b, ty));
            let v = if op == AtomOp::Max {
                x.max(y)
            } else {
                x.min(y)
            };
            v as u64 & mask
        }
    }
}
