//! Packed and small-format arithmetic: f16x2/bf16x2 min/max and comparisons (`HMNMX2`,
//! `HSET2`, `HSETP2`), 16-bit-pair and three-way integer min/max (`VIMNMX`, `VIMNMX3`),
//! saturating packs (`I2IP`), dot products (`IDP`) and the fp8 forms of `F2FP`.
//!
//! Each form was read from ptxas 13.0.88's code for the PTX instruction it implements
//! (`max.f16`, `set.lt.u32.f16x2`, `setp.lt.f16x2`, `max.s16x2`, `min.s32` of a min,
//! `cvt.pack.sat`, `dp4a`/`dp2a`, `cvt.*.e4m3x2/e5m2x2`); the semantics are the PTX ISA's.

use interp::float::{self, BF16, E4M3, E5M2, F16, Fmt, Rnd};
use sass::model::Inst;

use super::{
    BOPS, CMPS, bool_op, check_mods, check_mods_in, f32src, fcmp, find_mod, fminmax, half_src,
    int32, op_at, pred, raw32, rnd, unsupported, wp, wr,
};
use crate::exec::{Ctx, R, Warp};

/// The half format of an `H*2` instruction: bf16 with `.BF16_V2`, else f16.
fn half_fmt(inst: &Inst) -> Fmt {
    if inst.has_mod("BF16_V2") { BF16 } else { F16 }
}

/// Reads the two halves (low, high) of a half-pair source starting at operand `*i`, flushing
/// subnormals with `.FTZ` (f16 only).
fn halves(ctx: &Ctx<'_>, w: &Warp, l: usize, inst: &Inst, i: &mut usize) -> R<(f64, f64)> {
    let fmt = half_fmt(inst);
    let (lo, hi) = half_src(ctx, w, l, &inst.operands, i, fmt)?;
    if inst.has_mod("FTZ") && fmt == F16 {
        let flush = |x: f64| {
            if x != 0.0 && x.abs() < 2f64.powi(-14) {
                0.0f64.copysign(x)
            } else {
                x
            }
        };
        return Ok((flush(lo), flush(hi)));
    }
    Ok((lo, hi))
}

/// Packs two half results (low, high) of `fmt` into a register value.
fn pack(lo: u64, hi: u64) -> u32 {
    ((hi as u32 & 0xffff) << 16) | (lo as u32 & 0xffff)
}

/// `HMNMX2[.BF16_V2][.FTZ][.NAN] d, a, b, p`: per half, the minimum (`p` true) or maximum;
/// a NaN operand yields the other (both NaN, or any NaN with `.NAN`: the canonical NaN), -0
/// orders below +0 (PTX `min/max.{f16,f16x2,bf16,bf16x2}`).
pub(super) fn hmnmx2(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["BF16_V2", "FTZ", "NAN"])?;
    let fmt = half_fmt(inst);
    let mut i = 1;
    let a = halves(ctx, w, l, inst, &mut i)?;
    let b = halves(ctx, w, l, inst, &mut i)?;
    let p = pred(w, l, op_at(inst, i)?)?;
    let nan = inst.has_mod("NAN");
    let one = |x: f64, y: f64| -> u64 {
        let r = fminmax(x, y, p, nan);
        if r.is_nan() {
            fmt.canonical_nan()
        } else {
            float::round(r, std::cmp::Ordering::Equal, Rnd::Ne, fmt, false)
        }
    };
    wr(w, l, op_at(inst, 0)?, pack(one(a.0, b.0), one(a.1, b.1)))
}

/// The comparison and predicate combination of `HSET2`/`HSETP2`, per half: (low, high).
fn half_compare(ctx: &Ctx<'_>, w: &Warp, inst: &Inst, l: usize, first: usize) -> R<(bool, bool)> {
    check_mods_in(inst, &[CMPS, BOPS, &["FTZ", "BF", "BF16_V2"]])?;
    let cmp = find_mod(inst, CMPS).ok_or_else(|| {
        crate::exec::Fault::Unsupported(format!("{} without a comparison", inst.opcode))
    })?;
    let bop = find_mod(inst, BOPS).unwrap_or("AND");
    let mut i = first;
    let a = halves(ctx, w, l, inst, &mut i)?;
    let b = halves(ctx, w, l, inst, &mut i)?;
    let c = pred(w, l, op_at(inst, i)?)?;
    Ok((
        bool_op(bop, fcmp(cmp, a.0, b.0)?, c)?,
        bool_op(bop, fcmp(cmp, a.1, b.1)?, c)?,
    ))
}

/// `HSET2[.BF16_V2][.BF].cmp[.FTZ].bop d, a, b, c`: per half, all ones (or 1.0 with `.BF`)
/// where `(a cmp b) bop c` holds, else 0 (PTX `set.cmp.{u32,f16x2,bf16x2}.{f16,f16x2,...}`).
pub(super) fn hset2(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let (lo, hi) = half_compare(ctx, w, inst, l, 1)?;
    let t: u64 = match (inst.has_mod("BF"), half_fmt(inst) == BF16) {
        (false, _) => 0xffff,
        (true, false) => 0x3c00,
        (true, true) => 0x3f80,
    };
    let v = |b: bool| if b { t } else { 0 };
    wr(w, l, op_at(inst, 0)?, pack(v(lo), v(hi)))
}

/// `HSETP2.cmp.bop p, q, a, b, c`: `p` = the low halves' `(a cmp b) bop c`, `q` = the high
/// halves' (PTX `setp.cmp.f16x2 p|q, a, b`).
pub(super) fn hsetp2(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    if inst.has_mod("BF") {
        return unsupported("HSETP2 with modifier .BF");
    }
    let (lo, hi) = half_compare(ctx, w, inst, l, 2)?;
    wp(w, l, op_at(inst, 0)?, lo)?;
    wp(w, l, op_at(inst, 1)?, hi)
}

/// `VIMNMX[.U32|.U16x2|.S16x2][.RELU] d, a, b, p`: the minimum (`p` true) or maximum, of
/// each 16-bit half with `x2`; `.RELU` then clamps (signed) results below 0 to 0.
pub(super) fn vimnmx(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["U32", "U16x2", "S16x2", "RELU"])?;
    let a = int32(ctx, w, l, op_at(inst, 1)?)?;
    let b = int32(ctx, w, l, op_at(inst, 2)?)?;
    let p = pred(w, l, op_at(inst, 3)?)?;
    let relu = inst.has_mod("RELU");
    let pick = |x: i64, y: i64| {
        let r = if p { x.min(y) } else { x.max(y) };
        if relu { r.max(0) } else { r }
    };
    let v = match find_mod(inst, &["U32", "U16x2", "S16x2"]) {
        Some("U16x2") | Some("S16x2") => {
            let signed = inst.has_mod("S16x2");
            let half = |v: u32, k: u32| -> i64 {
                let h = (v >> (16 * k)) & 0xffff;
                if signed {
                    i64::from(h as u16 as i16)
                } else {
                    i64::from(h)
                }
            };
            let lo = pick(half(a, 0), half(b, 0)) as u32 & 0xffff;
            let hi = pick(half(a, 1), half(b, 1)) as u32 & 0xffff;
            (hi << 16) | lo
        }
        Some(_) => pick(i64::from(a), i64::from(b)) as u32,
        None => pick(i64::from(a as i32), i64::from(b as i32)) as u32,
    };
    wr(w, l, op_at(inst, 0)?, v)
}

/// `VIMNMX3[.U32][.RELU] d, a, b, c, p`: the minimum (`p` true) or maximum of three values
/// (ptxas's code for a `min`/`max` of a `min`/`max`).
pub(super) fn vimnmx3(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["U32", "RELU"])?;
    let unsigned = inst.has_mod("U32");
    let mut v = [0i64; 3];
    for (k, x) in v.iter_mut().enumerate() {
        let r = int32(ctx, w, l, op_at(inst, 1 + k)?)?;
        *x = if unsigned {
            i64::from(r)
        } else {
            i64::from(r as i32)
        };
    }
    let p = pred(w, l, op_at(inst, 4)?)?;
    let mut r = if p {
        v[0].min(v[1]).min(v[2])
    } else {
        v[0].max(v[1]).max(v[2])
    };
    if inst.has_mod("RELU") {
        r = r.max(0);
    }
    wr(w, l, op_at(inst, 0)?, r as u32)
}

/// `I2IP.{U8,S8,U16,S16}.S32.SAT d, a, b, c`: `a` and `b` saturated to the narrow type and
/// packed, `a` above `b`; the 8-bit forms put `c`'s low half above them (PTX `cvt.pack.sat`).
pub(super) fn i2ip(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["U8", "S8", "U16", "S16", "S32", "SAT"])?;
    if !inst.has_mod("SAT") || !inst.has_mod("S32") {
        return unsupported(format!("I2IP.{}", inst.mods.join(".")));
    }
    let (lo, hi, bits): (i64, i64, u32) = match find_mod(inst, &["U8", "S8", "U16", "S16"]) {
        Some("U8") => (0, 255, 8),
        Some("S8") => (-128, 127, 8),
        Some("U16") => (0, 65535, 16),
        Some("S16") => (-32768, 32767, 16),
        _ => return unsupported(format!("I2IP.{}", inst.mods.join("."))),
    };
    let sat = |v: u32| (i64::from(v as i32).clamp(lo, hi) as u32) & ((1u32 << bits) - 1);
    let a = sat(raw32(ctx, w, l, op_at(inst, 1)?)?);
    let b = sat(raw32(ctx, w, l, op_at(inst, 2)?)?);
    let c = raw32(ctx, w, l, op_at(inst, 3)?)?;
    let v = if bits == 16 {
        (a << 16) | b
    } else {
        (c << 16) | (a << 8) | b
    };
    wr(w, l, op_at(inst, 0)?, v)
}

/// `I2I.{U8,S8,U16,S16}.{S32,U32}.SAT d, a`: `a`, read as its type, clamped to the
/// destination type's range (ptxas's `cvt.sat` between integers narrower than 32 bits). The
/// result's bits above the destination's width are written as zeros: ptxas extends or masks
/// them itself after every `I2I` it writes (`PRMT ..., 0x8880`, `LOP3.LUT ..., 0xff`), and a
/// reader that relied on them would not be ptxas's code.
pub(super) fn i2i(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["U8", "S8", "U16", "S16", "S32", "U32", "SAT"])?;
    let types: Vec<&str> = inst
        .mods
        .iter()
        .map(String::as_str)
        .filter(|m| *m != "SAT")
        .collect();
    let (Some(&dt), Some(&st), true) = (types.first(), types.get(1), inst.has_mod("SAT")) else {
        return unsupported(format!("I2I.{}", inst.mods.join(".")));
    };
    let (lo, hi, bits): (i64, i64, u32) = match dt {
        "U8" => (0, 255, 8),
        "S8" => (-128, 127, 8),
        "U16" => (0, 65535, 16),
        "S16" => (-32768, 32767, 16),
        _ => return unsupported(format!("I2I.{}", inst.mods.join("."))),
    };
    let a = raw32(ctx, w, l, op_at(inst, 1)?)?;
    let v = match st {
        "S32" => i64::from(a as i32),
        "U32" => i64::from(a),
        _ => return unsupported(format!("I2I.{}", inst.mods.join("."))),
    };
    wr(
        w,
        l,
        op_at(inst, 0)?,
        (v.clamp(lo, hi) as u32) & ((1u32 << bits) - 1),
    )
}

/// `IDP.4A.{U8,S8}.{U8,S8} d, a, b, c`: `c` + the sum of the products of the four byte
/// pairs; `IDP.2A.{LO,HI}.{U16,S16}.{U8,S8} d, a, b, c`: `c` + the products of `a`'s two
/// halves with bytes 0–1 (`.LO`) or 2–3 (`.HI`) of `b` (PTX `dp4a`, `dp2a`).
pub(super) fn idp(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["4A", "2A", "LO", "HI", "U8", "S8", "U16", "S16"])?;
    let a = raw32(ctx, w, l, op_at(inst, 1)?)?;
    let b = raw32(ctx, w, l, op_at(inst, 2)?)?;
    let c = raw32(ctx, w, l, op_at(inst, 3)?)?;
    // The type modifiers in order: `a`'s, then `b`'s.
    let types: Vec<&str> = inst
        .mods
        .iter()
        .map(String::as_str)
        .filter(|m| ["U8", "S8", "U16", "S16"].contains(m))
        .collect();
    let [ta, tb] = types[..] else {
        return unsupported(format!("IDP.{}", inst.mods.join(".")));
    };
    let elem = |v: u32, k: u32, ty: &str| -> i64 {
        match ty {
            "U8" => i64::from((v >> (8 * k)) & 0xff),
            "S8" => i64::from((v >> (8 * k)) as u8 as i8),
            "U16" => i64::from((v >> (16 * k)) & 0xffff),
            _ => i64::from((v >> (16 * k)) as u16 as i16),
        }
    };
    let mut acc = i64::from(c);
    if inst.has_mod("4A") {
        if ta.len() != 2 || tb.len() != 2 {
            return unsupported(format!("IDP.{}", inst.mods.join(".")));
        }
        for k in 0..4 {
            acc += elem(a, k, ta) * elem(b, k, tb);
        }
    } else if inst.has_mod("2A") {
        let base = if inst.has_mod("HI") { 2 } else { 0 };
        for k in 0..2 {
            acc += elem(a, k, ta) * elem(b, base + k, tb);
        }
    } else {
        return unsupported(format!("IDP.{}", inst.mods.join(".")));
    }
    wr(w, l, op_at(inst, 0)?, acc as u32)
}

/// Rounds `v` into `fmt` as `cvt.rn[.relu][.satfinite]` does: `.RELU` makes negative values
/// 0 and NaN the canonical NaN; `.SATFINITE` clamps out-of-range values (and infinities) to
/// the largest finite magnitude.
fn convert(v: f64, mode: Rnd, fmt: Fmt, relu: bool, satfinite: bool) -> u64 {
    if relu && v.is_nan() {
        return fmt.canonical_nan();
    }
    let v = if relu && v < 0.0 { 0.0 } else { v };
    float::round(v, std::cmp::Ordering::Equal, mode, fmt, satfinite)
}

/// The 8-bit float format named by `.E4M3` / `.E5M2`.
fn fp8(inst: &Inst) -> Option<Fmt> {
    if inst.has_mod("E4M3") {
        Some(E4M3)
    } else if inst.has_mod("E5M2") {
        Some(E5M2)
    } else {
        None
    }
}

/// `F2FP` (PTX `cvt` to and from packed narrow floats):
/// - `F2FP[.SATFINITE][.RELU].{F16,BF16}[.F32].PACK_AB d, a, b` (sm_80 omits `.F32`): `a`
///   rounded into the high half, `b` into the low;
/// - `F2FP[.SATFINITE][.RELU].{E4M3,E5M2}.F32.PACK_AB_MERGE_C d, a, b, c`: `a` into byte 1,
///   `b` into byte 0, `c`'s low half above them;
/// - `F2FP.SATFINITE[.RELU].{E4M3,E5M2}.F16.UNPACK_B_MERGE_C d, b, c`: the two halves of the
///   f16x2 `b` into bytes 1 and 0, `c`'s low half above;
/// - `F2FP[.RELU].F16.{E4M3,E5M2}.UNPACK_B d, b[.H1]`: the two fp8 bytes of `b`'s low (or,
///   with `.H1`, high) half widened to f16x2.
///
/// MERGE_C's placement of `c` is read from ptxas's code for `mov.b32 r, {h0, h1}` of two
/// conversions (the first conversion is `c` of the second).
pub(super) fn f2fp(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(
        inst,
        &[
            "F16",
            "BF16",
            "F32",
            "E4M3",
            "E5M2",
            "PACK_AB",
            "PACK_AB_MERGE_C",
            "UNPACK_B",
            "UNPACK_B_MERGE_C",
            "SATFINITE",
            "RELU",
            "RN",
            "RZ",
            "RM",
            "RP",
        ],
    )?;
    let relu = inst.has_mod("RELU");
    let satfinite = inst.has_mod("SATFINITE");
    let mode = rnd(inst);
    let d = op_at(inst, 0)?;
    if inst.has_mod("PACK_AB") {
        let fmt = if inst.has_mod("BF16") { BF16 } else { F16 };
        if fp8(inst).is_some() {
            return unsupported(format!("F2FP.{}", inst.mods.join(".")));
        }
        let a = f32src(ctx, w, l, op_at(inst, 1)?, false)?;
        let b = f32src(ctx, w, l, op_at(inst, 2)?, false)?;
        let hi = convert(a, mode, fmt, relu, satfinite);
        let lo = convert(b, mode, fmt, relu, satfinite);
        return wr(w, l, d, pack(lo, hi));
    }
    let Some(f8) = fp8(inst) else {
        return unsupported(format!("F2FP.{}", inst.mods.join(".")));
    };
    if inst.has_mod("PACK_AB_MERGE_C") {
        let a = f32src(ctx, w, l, op_at(inst, 1)?, false)?;
        let b = f32src(ctx, w, l, op_at(inst, 2)?, false)?;
        let c = raw32(ctx, w, l, op_at(inst, 3)?)?;
        let hi = convert(a, mode, f8, relu, satfinite) as u32 & 0xff;
        let lo = convert(b, mode, f8, relu, satfinite) as u32 & 0xff;
        return wr(w, l, d, (c << 16) | (hi << 8) | lo);
    }
    if inst.has_mod("UNPACK_B_MERGE_C") {
        let b = raw32(ctx, w, l, op_at(inst, 1)?)?;
        let c = raw32(ctx, w, l, op_at(inst, 2)?)?;
        let one = |h: u32| {
            convert(F16.to_f64(u64::from(h & 0xffff)), mode, f8, relu, satfinite) as u32 & 0xff
        };
        return wr(w, l, d, (c << 16) | (one(b >> 16) << 8) | one(b));
    }
    if inst.has_mod("UNPACK_B") && inst.has_mod("F16") {
        let op = op_at(inst, 1)?;
        let b = raw32(ctx, w, l, op)?;
        let b = if op.has_suffix("H1") { b >> 16 } else { b };
        let one = |x: u32| convert(f8.to_f64(u64::from(x & 0xff)), Rnd::Ne, F16, relu, false);
        return wr(w, l, d, pack(one(b), one(b >> 8)));
    }
    unsupported(format!("F2FP.{}", inst.mods.join(".")))
}
