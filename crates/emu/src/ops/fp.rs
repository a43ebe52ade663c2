//! Floating-point instructions: comparisons, min/max, `FFMA`, `MUFU`, conversions (`F2I`,
//! `I2F`, `F2F`) and half-precision pairs.

use super::*;

pub(crate) fn fsetp(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize, dbl: bool) -> R<()> {
    if dbl && (inst.has_mod("MAX") || inst.has_mod("MIN")) {
        return dsetp_minmax(ctx, w, inst, l);
    }
    let (p, q) = float_compare(ctx, w, inst, l, 2, &["FTZ"])?;
    wp(w, l, op_at(inst, 0)?, p)?;
    wp(w, l, op_at(inst, 1)?, q)
}

/// The `FSETP`/`DSETP`/`FSET` comparison: `(a cmp b) bop c` and `!(a cmp b) bop c`, with `a`,
/// `b`, `c` the operands from `first` on (f64 for `DSETP`); `extra` are the modifiers allowed
/// besides comparisons and combinations.
pub(crate) fn float_compare(
    ctx: &Ctx<'_>,
    w: &Warp,
    inst: &Inst,
    l: usize,
    first: usize,
    extra: &[&str],
) -> R<(bool, bool)> {
    check_mods_in(inst, &[CMPS, BOPS, extra])?;
    let cmp = find_mod(inst, CMPS).ok_or_else(|| {
        Fault::Unsupported(format!("{} without a comparison", base_name(&inst.opcode)))
    })?;
    let bop = find_mod(inst, BOPS).unwrap_or("AND");
    let ftz = inst.has_mod("FTZ");
    let (a, b) = if base_name(&inst.opcode) == "DSETP" {
        (
            f64src(ctx, w, l, op_at(inst, first)?)?,
            f64src(ctx, w, l, op_at(inst, first + 1)?)?,
        )
    } else {
        (
            f32src(ctx, w, l, op_at(inst, first)?, ftz)?,
            f32src(ctx, w, l, op_at(inst, first + 1)?, ftz)?,
        )
    };
    let c = pred(w, l, op_at(inst, first + 2)?)?;
    let r = fcmp(cmp, a, b)?;
    Ok((bool_op(bop, r, c)?, bool_op(bop, !r, c)?))
}

/// `DSETP.MAX/MIN.AND p, q, a, b, c`: `p` = "the result is `a`", `q` = "both are NaN".
/// ptxas lowers `max.f64`/`min.f64` to this, then selects the words with `p` and, under `q`,
/// quiets `b`'s high word; so `p` must pick the non-NaN operand (the maximum, +0 over -0 for
/// MAX, -0 over +0 for MIN) and `q` hold only when both are NaN.
pub(crate) fn dsetp_minmax(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["MAX", "MIN", "AND"])?;
    let is_max = inst.has_mod("MAX");
    let (pd, pq) = (op_at(inst, 0)?, op_at(inst, 1)?);
    let a = f64src(ctx, w, l, op_at(inst, 2)?)?;
    let b = f64src(ctx, w, l, op_at(inst, 3)?)?;
    let c = pred(w, l, op_at(inst, 4)?)?;
    let pick_a = if a.is_nan() {
        false
    } else if b.is_nan() {
        true
    } else if a == b {
        is_max != a.is_sign_negative()
    } else if is_max {
        a > b
    } else {
        a < b
    };
    wp(w, l, pd, pick_a && c)?;
    wp(w, l, pq, a.is_nan() && b.is_nan() && c)
}

/// min (`p`) or max of two floats: a NaN operand yields the other one (both NaN: NaN), and
/// -0 orders below +0; with `.NAN` any NaN operand yields NaN.
pub(crate) fn fminmax(a: f64, b: f64, p: bool, nan: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        if nan || (a.is_nan() && b.is_nan()) {
            return f64::NAN;
        }
        return if a.is_nan() { b } else { a };
    }
    if a == b && a == 0.0 {
        let neg = if p {
            a.is_sign_negative() || b.is_sign_negative()
        } else {
            a.is_sign_negative() && b.is_sign_negative()
        };
        return if neg { -0.0 } else { 0.0 };
    }
    if p { a.min(b) } else { a.max(b) }
}

/// `FCHK P, a, b`: whether `a / b` needs ptxas's slow path. The exact hardware condition is
/// not public; this is the conservative one (set whenever an operand is zero, infinite, NaN
/// or subnormal, or the exponents could make the fast path's reciprocal or quotient leave the
/// normal range). Both paths compute the correctly rounded quotient, so a conservative answer
/// changes which code runs, not the result.
pub(crate) fn fchk(a: f32, b: f32) -> bool {
    // A zero dividend too: the fast path's `FFMA q, y, a, RZ` adds +0 and would lose the
    // sign of a negative zero quotient, which the slow path gets right.
    if !a.is_normal() || !b.is_normal() {
        return true;
    }
    let ea = ((a.to_bits() >> 23) & 0xff) as i32 - 127;
    let eb = ((b.to_bits() >> 23) & 0xff) as i32 - 127;
    let q = ea - eb;
    !(-100..=100).contains(&q) || !(-120..=120).contains(&eb) || ea <= -100
}

/// Applies `f` to each `lane_bits`-wide lane of `a` and `b` (the result truncated to the lane).
pub(crate) fn lanewise(a: u32, b: u32, lane_bits: u32, f: impl Fn(u32, u32) -> u32) -> u32 {
    let mask = (1u32 << lane_bits) - 1;
    (0..32 / lane_bits).fold(0, |r, i| {
        let sh = i * lane_bits;
        r | (f(a >> sh & mask, b >> sh & mask) & mask) << sh
    })
}

/// `IMNMX`/`VIADDMNMX`'s choice: the minimum when `p` (`PT`), else the maximum; signed
/// unless `unsigned` (`.U32`).
pub(crate) fn min_max(a: u32, b: u32, p: bool, unsigned: bool) -> u32 {
    match (unsigned, p) {
        (true, true) => a.min(b),
        (true, false) => a.max(b),
        (false, true) => (a as i32).min(b as i32) as u32,
        (false, false) => (a as i32).max(b as i32) as u32,
    }
}

pub(crate) fn ffma(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let is_mul = base_name(&inst.opcode) == "FMUL";
    check_mods_by(inst, |m| {
        ["FTZ", "SAT", "RN", "RZ", "RM", "RP"].contains(&m)
            || (is_mul && FMUL_SCALES.iter().any(|(s, _)| *s == m))
    })?;
    let ftz = inst.has_mod("FTZ");
    let mode = rnd(inst);
    let d = op_at(inst, 0)?;
    let scale = FMUL_SCALES
        .iter()
        .find(|(m, _)| inst.has_mod(m))
        .map_or(1.0, |(_, k)| *k);
    // Exact in f64: a 24-bit significand times a power of two.
    let a = f32src(ctx, w, l, op_at(inst, 1)?, ftz)? * scale;
    let b = f32src(ctx, w, l, op_at(inst, 2)?, ftz)?;
    let r = match base_name(&inst.opcode) {
        "FADD" => float::add(a, b, mode, F32),
        "FMUL" => float::mul(a, b, mode, F32),
        _ => {
            let c = f32src(ctx, w, l, op_at(inst, 3)?, ftz)?;
            float::fma(a, b, c, mode, F32)
        }
    };
    wr(w, l, d, f32fin(r, ftz, inst.has_mod("SAT")))
}

/// A subnormal f64 as the zero of its sign.
pub(crate) fn flush_f64(x: f64) -> f64 {
    if x.is_subnormal() {
        0.0f64.copysign(x)
    } else {
        x
    }
}

pub(crate) fn mufu(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let f = inst.mods.first().map(String::as_str).unwrap_or("");
    check_mods(inst, &[f])?;
    let d = op_at(inst, 0)?;
    let s = op_at(inst, 1)?;
    if f == "RCP64H" || f == "RSQ64H" {
        // The high word of a double's approximate reciprocal (square root): computed from the
        // operand as the high word of a double with a zero low word, truncated to the high
        // word. ptxas refines it with Newton steps in DFMA.
        let mut hi = raw32(ctx, w, l, s)?;
        if s.abs {
            hi &= 0x7fff_ffff;
        }
        if s.neg {
            hi ^= 0x8000_0000;
        }
        // Flush-to-zero like the other MUFU functions (and as PTX specifies for
        // `rcp.approx.ftz.f64`, which is this instruction alone): a subnormal operand is a
        // signed zero, a subnormal result a signed zero.
        let x = flush_f64(f64::from_bits(u64::from(hi) << 32));
        let r = if f == "RCP64H" {
            1.0 / x
        } else {
            1.0 / x.sqrt()
        };
        return wr(w, l, d, (flush_f64(r).to_bits() >> 32) as u32);
    }
    // f32 functions: inputs flushed (MUFU is flush-to-zero), results rounded from f64.
    let x = f32src(ctx, w, l, s, true)?;
    let r = match f {
        "RCP" => float::div(1.0, x, Rnd::Ne, F32),
        "SQRT" => float::sqrt(x, Rnd::Ne, F32),
        "RSQ" => float::round(
            1.0 / x.sqrt(),
            std::cmp::Ordering::Equal,
            Rnd::Ne,
            F32,
            false,
        ),
        "EX2" => float::round(x.exp2(), std::cmp::Ordering::Equal, Rnd::Ne, F32, false),
        "LG2" => float::round(x.log2(), std::cmp::Ordering::Equal, Rnd::Ne, F32, false),
        // MUFU.SIN/COS take the angle in revolutions (ptxas pre-multiplies by 1/2pi).
        "SIN" => float::round(
            (x * std::f64::consts::TAU).sin(),
            std::cmp::Ordering::Equal,
            Rnd::Ne,
            F32,
            false,
        ),
        "COS" => float::round(
            (x * std::f64::consts::TAU).cos(),
            std::cmp::Ordering::Equal,
            Rnd::Ne,
            F32,
            false,
        ),
        "TANH" => float::round(x.tanh(), std::cmp::Ordering::Equal, Rnd::Ne, F32, false),
        o => return unsupported(format!("MUFU.{o}")),
    };
    wr(w, l, d, F32.ftz(u64::from(r as u32)) as u32)
}

pub(crate) fn f2i(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods_in(
        inst,
        &[
            INT_TYS,
            FLT_TYS,
            &["FTZ", "TRUNC", "FLOOR", "CEIL", "NTZ", "RN"],
        ],
    )?;
    let dty = find_mod(inst, INT_TYS).unwrap_or("S32");
    let sty = find_mod(inst, FLT_TYS).unwrap_or("F32");
    let src = op_at(inst, 1)?;
    let x = match sty {
        "F64" => f64src(ctx, w, l, src)?,
        "F32" => f32src(ctx, w, l, src, inst.has_mod("FTZ"))?,
        t => {
            let b = raw32(ctx, w, l, src)? & 0xffff;
            fbits_to_f64(t, u64::from(b))
        }
    };
    let r = if inst.has_mod("TRUNC") {
        x.trunc()
    } else if inst.has_mod("FLOOR") {
        x.floor()
    } else if inst.has_mod("CEIL") {
        x.ceil()
    } else {
        x.round_ties_even()
    };
    let (lo, hi) = int_range(dty);
    let v: i128 = if r.is_nan() {
        0
    } else if r <= lo as f64 {
        lo
    } else if r >= hi as f64 {
        hi
    } else {
        r as i128
    };
    let d = op_at(inst, 0)?;
    if matches!(dty, "U64" | "S64") {
        wr64(w, l, d, v as u64)
    } else {
        wr(w, l, d, v as u32)
    }
}

pub(crate) fn i2f(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods_in(inst, &[INT_TYS, FLT_TYS, &["RN", "RZ", "RM", "RP"]])?;
    let dty = find_mod(inst, FLT_TYS).unwrap_or("F32");
    let sty = find_mod(inst, INT_TYS).unwrap_or("S32");
    let src = op_at(inst, 1)?;
    let raw = if matches!(sty, "U64" | "S64") {
        raw64(ctx, w, l, src)?
    } else if src.has_suffix("H1") {
        u64::from(raw32(ctx, w, l, src)? >> 16)
    } else {
        u64::from(raw32(ctx, w, l, src)?)
    };
    let x = int_of(sty, raw);
    let r = float::from_int(x, rnd(inst), fmt_of(dty));
    let d = op_at(inst, 0)?;
    if dty == "F64" {
        wr64(w, l, d, r)
    } else {
        wr(w, l, d, r as u32)
    }
}

pub(crate) fn f2f(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(
        inst,
        &[
            "F16", "F32", "F64", "BF16", "FTZ", "RN", "RZ", "RM", "RP", "SAT",
        ],
    )?;
    let tys: Vec<&str> = inst
        .mods
        .iter()
        .map(String::as_str)
        .filter(|m| FLT_TYS.contains(m))
        .collect();
    let (dty, sty) = match tys.as_slice() {
        [d, s] => (*d, *s),
        _ => return unsupported(format!("F2F.{}", inst.mods.join("."))),
    };
    let src = op_at(inst, 1)?;
    let ftz = inst.has_mod("FTZ");
    let x = match sty {
        "F64" => f64src(ctx, w, l, src)?,
        "F32" => f32src(ctx, w, l, src, ftz)?,
        t => {
            let mut b = raw32(ctx, w, l, src)?;
            if src.has_suffix("H1") {
                b >>= 16;
            }
            fbits_to_f64(t, u64::from(b & 0xffff))
        }
    };
    let mut r = float::round(x, std::cmp::Ordering::Equal, rnd(inst), fmt_of(dty), false);
    if dty == "F64" && sty == "F32" && x.is_nan() {
        // A widened NaN keeps its payload, quieted: ptxas folds `cvt.f64.f32` of a NaN
        // constant that way, and the interpreter widens so (not yet checked on a GPU).
        let b = raw32(ctx, w, l, src)?;
        r = (u64::from(b & 0x8000_0000) << 32)
            | 0x7ff8_0000_0000_0000
            | (u64::from(b & 0x3f_ffff) << 29);
    }
    let d = op_at(inst, 0)?;
    match dty {
        "F64" => wr64(w, l, d, r),
        "F32" => {
            if ftz {
                r = F32.ftz(u64::from(r as u32));
            }
            wr(w, l, d, f32fin(r, false, inst.has_mod("SAT")))
        }
        _ => wr(w, l, d, r as u32 & 0xffff),
    }
}

/// Reads a packed pair of halves (`lo`, `hi`) as f64s: a register with an optional swizzle
/// (`.H0_H0`, `.H1_H1`, `.F32`), or two f16 immediates (consumed from `ops`).
pub(crate) fn half_src(
    ctx: &Ctx<'_>,
    w: &Warp,
    l: usize,
    ops: &[Operand],
    i: &mut usize,
    fmt: Fmt,
) -> R<(f64, f64)> {
    let op = ops
        .get(*i)
        .ok_or_else(|| Fault::Unsupported("missing half2 operand".into()))?;
    if let OperandKind::Float { .. } = op.kind {
        let op2 = ops
            .get(*i + 1)
            .ok_or_else(|| Fault::Unsupported("half2 immediate without its pair".into()))?;
        // nvdisasm prints the high half first. A half the table holds as a fixed value (an
        // encoding whose half is constant: no raw bits) is that value in the instruction's
        // format, not an f32's bits.
        let bits = |o: &Operand| -> R<u32> {
            match &o.kind {
                OperandKind::Float {
                    bits: None, value, ..
                } => {
                    Ok(float::round(*value, std::cmp::Ordering::Equal, Rnd::Ne, fmt, false) as u32)
                }
                _ => raw32(ctx, w, l, o),
            }
        };
        let hi = bits(op)?;
        let lo = bits(op2)?;
        *i += 2;
        return Ok((
            fmt.to_f64(u64::from(lo & 0xffff)),
            fmt.to_f64(u64::from(hi & 0xffff)),
        ));
    }
    *i += 1;
    let v = raw32(ctx, w, l, op)?;
    let (mut lo, mut hi) = (v & 0xffff, v >> 16);
    let mut f32v = None;
    for s in &op.suffixes {
        match s.as_str() {
            "H0_H0" => hi = lo,
            "H1_H1" => lo = hi,
            "H1_H0" | "reuse" => {}
            "F32" => f32v = Some(f64::from(f32::from_bits(v))),
            o => return unsupported(format!("half2 operand suffix .{o}")),
        }
    }
    let (mut a, mut b) = match f32v {
        Some(x) => (x, x),
        None => (fmt.to_f64(u64::from(lo)), fmt.to_f64(u64::from(hi))),
    };
    if op.abs {
        a = a.abs();
        b = b.abs();
    }
    if op.neg {
        a = -a;
        b = -b;
    }
    Ok((a, b))
}

pub(crate) fn half2(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["MMA", "F32", "FTZ", "SAT", "BF16_V2", "RN"])?;
    if inst.has_mod("FTZ") || (inst.has_mod("SAT") && inst.has_mod("F32")) {
        return unsupported(format!("{}.{}", inst.opcode, inst.mods.join(".")));
    }
    let fmt = if inst.has_mod("BF16_V2") { BF16 } else { F16 };
    let sat = inst.has_mod("SAT");
    let d = op_at(inst, 0)?;
    let mut i = 1;
    let a = half_src(ctx, w, l, &inst.operands, &mut i, fmt)?;
    let b = half_src(ctx, w, l, &inst.operands, &mut i, fmt)?;
    let op = inst.opcode.as_str();
    let c = if op == "HFMA2" {
        Some(half_src(ctx, w, l, &inst.operands, &mut i, fmt)?)
    } else {
        None
    };
    let one = |x: f64, y: f64, z: Option<f64>, f: Fmt| -> u64 {
        match (op, z) {
            ("HADD2", _) => float::add(x, y, Rnd::Ne, f),
            ("HMUL2", _) => float::mul(x, y, Rnd::Ne, f),
            (_, Some(z)) => float::fma(x, y, z, Rnd::Ne, f),
            _ => float::mul(x, y, Rnd::Ne, f),
        }
    };
    if inst.has_mod("F32") {
        // One f32 result from the low halves.
        let r = one(a.0, b.0, c.map(|c| c.0), F32);
        return wr(w, l, d, r as u32);
    }
    let fin = |r: u64| (if sat { saturate(r, fmt) } else { r }) as u32 & 0xffff;
    let lo = fin(one(a.0, b.0, c.map(|c| c.0), fmt));
    let hi = fin(one(a.1, b.1, c.map(|c| c.1), fmt));
    wr(w, l, d, (hi << 16) | lo)
}

/// `.SAT` on a rounded half result: clamped to [0.0, 1.0], a NaN result flushed to +0.0, and a
/// negative zero to +0.0. The last is an assumption not yet checked on a GPU: ptxas writes
/// `cvt.sat.f16.f16` as `HADD2.SAT d, x, -RZ`, which gives the PTX result the interpreter
/// computes (`cvt.sat` of -0 is +0, as ptxas's `FADD.SAT d, RZ, x` gives for f32) only if the
/// saturation flushes -0; kiln emits ptxas's own template, so on hardware both agree either
/// way (docs/arch/emu.md).
fn saturate(bits: u64, fmt: Fmt) -> u64 {
    let v = fmt.to_f64(bits);
    if v.is_nan() || v <= 0.0 {
        0
    } else if v > 1.0 {
        float::round(1.0, std::cmp::Ordering::Equal, Rnd::Ne, fmt, false)
    } else {
        bits
    }
}
