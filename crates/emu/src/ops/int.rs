//! Integer instructions: special registers (`S2R`), `IMAD`, `IADD3`, `LOP3`, `SHF`, `LEA`,
//! `ISETP` and the byte-shift forms.

use super::*;

pub(crate) fn byte_shift(inst: &Inst) -> u32 {
    if inst.has_mod("B1") {
        8
    } else if inst.has_mod("B2") {
        16
    } else if inst.has_mod("B3") {
        24
    } else {
        0
    }
}

/// A 32-bit selection source: floats keep sign modifiers as bit flips, integers as integer ops.
pub(crate) fn raw32_mod(ctx: &Ctx<'_>, w: &Warp, l: usize, op: &Operand, float: bool) -> R<u32> {
    if float {
        let mut b = raw32(ctx, w, l, op)?;
        if op.abs {
            b &= 0x7fff_ffff;
        }
        if op.neg {
            b ^= 0x8000_0000;
        }
        Ok(b)
    } else {
        int32(ctx, w, l, op)
    }
}

pub(crate) fn s2r(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize, active: u32) -> R<()> {
    let d = op_at(inst, 0)?;
    let s = op_at(inst, 1)?;
    let name = match &s.kind {
        OperandKind::Special(n) => n.as_str(),
        k => return unsupported(format!("S2R source {k:?}")),
    };
    let flat = w.index * 32 + l as u32;
    let [bx, by, _] = ctx.launch.block;
    let tid = [flat % bx, flat / bx % by, flat / (bx * by)];
    let lane = l as u32;
    let v: u64 = match name {
        "SRZ" => 0,
        "SR_TID.X" => u64::from(tid[0]),
        "SR_TID.Y" => u64::from(tid[1]),
        "SR_TID.Z" => u64::from(tid[2]),
        "SR_CTAID.X" => u64::from(ctx.cta.id[0]),
        "SR_CTAID.Y" => u64::from(ctx.cta.id[1]),
        "SR_CTAID.Z" => u64::from(ctx.cta.id[2]),
        "SR_LANEID" => u64::from(lane),
        "SR_EQMASK" => 1u64 << lane,
        "SR_LTMASK" => (1u64 << lane) - 1,
        "SR_LEMASK" => (2u64 << lane) - 1,
        "SR_GTMASK" => u64::from(!(((2u64 << lane) - 1) as u32)),
        "SR_GEMASK" => u64::from(!(((1u64 << lane) - 1) as u32)),
        // The CTA's rank in its cluster (sm_90): one CTA per cluster here.
        "SR_CgaCtaId" => 0,
        "SR_SWINHI" => interp::mem::SHARED_WINDOW >> 32,
        // The CTA's whole shared memory (user part, rounding, reserved block).
        "SR_SMEMSZ" => ctx.cta.shared.len() as u64,
        "SR_WARPID" => u64::from(w.index),
        // The hardware placement registers, as the interpreter models them (one CTA per SM):
        // `%smid` 0, `%warpid` (bits 8..14 of SR_VIRTID) the warp's index in its CTA,
        // `%nwarpid` (bits 8..15 of sm_90's SR_VIRTCFG) the SM's 64 warp slots.
        "SR_VIRTUALSMID" => 0,
        "SR_VIRTID" => u64::from(w.index) << 8,
        "SR_VIRTCFG" => 64 << 8,
        // Performance counters: zero, as in the interpreter.
        "SR_PM0" | "SR_PM1" | "SR_PM2" | "SR_PM3" | "SR_PM4" | "SR_PM5" | "SR_PM6" | "SR_PM7" => 0,
        // The warp's instruction count (monotonic; see `Warp::clock`).
        "SR_CLOCKLO" => w.clock,
        "SR_CLOCKHI" => w.clock >> 32,
        // The global nanosecond timer, modelled by the same monotonic count (a kernel reading
        // it is nondeterministic on the hardware and is compared as such).
        "SR_GLOBALTIMERLO" => w.clock,
        "SR_GLOBALTIMERHI" => w.clock >> 32,
        // The bottom of the stack in the thread's local window: device-debug (`-G`) code
        // checks each lowered stack pointer with `ISETP.GE.U32 P0, PT, R1, <this>` and traps
        // (`BPT.TRAP`) below it. The emulator's local window starts at 0 and the stack pointer
        // at its top (`c[0x0][0x28]`), so the bottom is 0; a frame reaching below it is also
        // an out-of-bounds local access, which traps.
        "SR_LMEMHIOFF" => 0,
        n => return unsupported(format!("special register {n}")),
    };
    let _ = active;
    if inst.opcode == "CS2R" {
        if inst.has_mod("32") {
            return wr(w, l, d, v as u32);
        }
        return wr64(w, l, d, v);
    }
    wr(w, l, d, v as u32)
}

pub(crate) fn imad(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["MOV", "IADD", "SHL", "U32", "WIDE", "HI", "X"])?;
    let ops = &inst.operands;
    let d = op_at(inst, 0)?;
    // Optional carry-out predicate after the destination; carry-in predicate last (.X).
    let mut i = 1;
    let cout = if ops.get(1).is_some_and(is_pred) {
        i = 2;
        Some(&ops[1])
    } else {
        None
    };
    let (a, b, c) = (op_at(inst, i)?, op_at(inst, i + 1)?, op_at(inst, i + 2)?);
    let x = inst.has_mod("X");
    let cin = if x {
        u128::from(pred(w, l, op_at(inst, i + 3)?)?)
    } else {
        0
    };
    let unsigned = inst.has_mod("U32");
    let av = raw32(ctx, w, l, a)?;
    let bv = raw32(ctx, w, l, b)?;
    let (av, bv) = (
        if a.invert { !av } else { av },
        if b.invert { !bv } else { bv },
    );
    // Negated multiplicands negate the product.
    let neg_prod = a.neg != b.neg;
    let prod: i128 = if unsigned {
        i128::from(av) * i128::from(bv)
    } else {
        i128::from(av as i32) * i128::from(bv as i32)
    };
    let prod = if neg_prod { -prod } else { prod };
    if inst.has_mod("WIDE") {
        let cv = raw64(ctx, w, l, c)?;
        let cv = if c.invert { !cv } else { cv };
        let cv = u128::from(if c.neg {
            if x { !cv } else { cv.wrapping_neg() }
        } else {
            cv
        });
        let p = (prod as u128) & u128::from(u64::MAX);
        let s = p + cv + cin;
        wr64(w, l, d, s as u64)?;
        if let Some(co) = cout {
            wp(w, l, co, s >> 64 & 1 == 1)?;
        }
        return Ok(());
    }
    if inst.has_mod("HI") {
        // IMAD.HI adds a 64-bit addend (the register pair at c) to the 64-bit product and
        // returns the high word: ptxas's division sequence `IMAD.HI.U32 R5, R5, R7, R4` with
        // R4 = 0 computes R5 + umulhi(R5, R7) (checked by the ZLUDA `rem` run test, whose
        // expected bytes come from hardware).
        let cv = raw64(ctx, w, l, c)?;
        let cv = if c.invert { !cv } else { cv };
        let cv = if c.neg {
            if x { !cv } else { cv.wrapping_neg() }
        } else {
            cv
        };
        let s = u128::from(prod as u64) + u128::from(cv) + cin;
        wr(w, l, d, (s >> 32) as u32)?;
        if let Some(co) = cout {
            wp(w, l, co, s >> 64 & 1 == 1)?;
        }
        return Ok(());
    }
    let cv = raw32(ctx, w, l, c)?;
    let cv = if c.invert { !cv } else { cv };
    let cv = u64::from(if c.neg {
        if x { !cv } else { cv.wrapping_neg() }
    } else {
        cv
    });
    let p = (prod as u64) & 0xffff_ffff;
    let s = p + cv + cin as u64;
    wr(w, l, d, s as u32)?;
    if let Some(co) = cout {
        wp(w, l, co, s >> 32 & 1 == 1)?;
    }
    Ok(())
}

pub(crate) fn iadd3(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["X", "64"])?;
    if inst.has_mod("64") {
        // UIADD3.64: 64-bit three-input add of register pairs.
        let d = op_at(inst, 0)?;
        let mut s: u64 = 0;
        for op in &inst.operands[1..] {
            let v = raw64(ctx, w, l, op)?;
            s = s.wrapping_add(if op.neg { v.wrapping_neg() } else { v });
        }
        return wr64(w, l, d, s);
    }
    let ops = &inst.operands;
    let d = op_at(inst, 0)?;
    let mut i = 1;
    let mut couts = Vec::new();
    while ops.get(i).is_some_and(is_pred) {
        couts.push(&ops[i]);
        i += 1;
    }
    let x = inst.has_mod("X");
    let mut t = [0u64; 3];
    for (k, op) in ops[i..i + 3].iter().enumerate() {
        let v = raw32(ctx, w, l, op)?;
        let v = if op.invert { !v } else { v };
        // `-x` is `~x + 1` in the adder (so `a - 0` carries out, like a borrow-free
        // subtraction); with `.X` the carry-in supplies the `+ 1`.
        t[k] = if op.neg {
            if x { u64::from(!v) } else { u64::from(!v) + 1 }
        } else {
            u64::from(v)
        };
    }
    let mut cin = 0u64;
    if x {
        for op in &ops[i + 3..] {
            cin += u64::from(pred(w, l, op)?);
        }
    }
    // Two additions: the first carry-out predicate is the carry of `a + b`, the second the
    // carry of adding `c` (and the carry-ins); `.X` consumers add both back.
    let s1 = t[0] + t[1];
    let c1 = s1 >> 32;
    let s2 = (s1 & 0xffff_ffff) + t[2] + cin;
    let c2 = s2 >> 32;
    wr(w, l, d, s2 as u32)?;
    match couts.as_slice() {
        [] => {}
        [p] => wp(w, l, p, (c1 + c2) & 1 == 1)?,
        [p, q, ..] => {
            wp(w, l, p, c1 & 1 == 1)?;
            wp(w, l, q, c2 & 1 == 1)?;
        }
    }
    Ok(())
}

pub(crate) fn lop3(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["LUT"])?;
    let ops = &inst.operands;
    let (pd, i) = if ops.first().is_some_and(is_pred) {
        (Some(&ops[0]), 1)
    } else {
        (None, 0)
    };
    let d = op_at(inst, i)?;
    let a = int32(ctx, w, l, op_at(inst, i + 1)?)?;
    let b = int32(ctx, w, l, op_at(inst, i + 2)?)?;
    let c = int32(ctx, w, l, op_at(inst, i + 3)?)?;
    let lut = raw32(ctx, w, l, op_at(inst, i + 4)?)?;
    let mut r = 0u32;
    for bit in 0..32 {
        let idx = ((a >> bit & 1) << 2) | ((b >> bit & 1) << 1) | (c >> bit & 1);
        r |= (lut >> idx & 1) << bit;
    }
    wr(w, l, d, r)?;
    if let Some(p) = pd {
        let q = op_at(inst, i + 5)?;
        if !(q.not && matches!(&q.kind, OperandKind::Reg(r) if r.is_zero())) {
            return unsupported("LOP3 predicate output combined with a predicate other than !PT");
        }
        wp(w, l, p, r != 0)?;
    }
    Ok(())
}

pub(crate) fn shf(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["L", "R", "U32", "S32", "U64", "S64", "HI", "W"])?;
    let d = op_at(inst, 0)?;
    let lo = raw32(ctx, w, l, op_at(inst, 1)?)?;
    let s = raw32(ctx, w, l, op_at(inst, 2)?)?;
    let hi = raw32(ctx, w, l, op_at(inst, 3)?)?;
    let wide = inst.has_mod("U64") || inst.has_mod("S64");
    let signed = inst.has_mod("S32") || inst.has_mod("S64");
    let s = if inst.has_mod("W") {
        if wide { s & 63 } else { s & 31 }
    } else if wide {
        s.min(64)
    } else {
        s.min(32)
    };
    let v = (u64::from(hi) << 32) | u64::from(lo);
    let r: u64 = if inst.has_mod("L") {
        ((u128::from(v) << s) & u128::from(u64::MAX)) as u64
    } else if signed {
        ((v as i64) >> s.min(63)) as u64
    } else if s >= 64 {
        0
    } else {
        v >> s
    };
    let out = if inst.has_mod("HI") {
        (r >> 32) as u32
    } else {
        r as u32
    };
    wr(w, l, d, out)
}

pub(crate) fn lea(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["HI", "X", "SX32"])?;
    let ops = &inst.operands;
    let d = op_at(inst, 0)?;
    let mut i = 1;
    let cout = if ops.get(1).is_some_and(is_pred) {
        i = 2;
        Some(&ops[1])
    } else {
        None
    };
    let hi = inst.has_mod("HI");
    let x = inst.has_mod("X");
    let sx = inst.has_mod("SX32");
    let a_op = op_at(inst, i)?;
    let b_op = op_at(inst, i + 1)?;
    let mut k = i + 2;
    let a = raw32(ctx, w, l, a_op)?;
    let a = if a_op.invert { !a } else { a };
    let c = if hi && !sx {
        let c = raw32(ctx, w, l, op_at(inst, k)?)?;
        k += 1;
        c
    } else if sx {
        if a & 0x8000_0000 != 0 { u32::MAX } else { 0 }
    } else {
        0
    };
    let s = raw32(ctx, w, l, op_at(inst, k)?)? & 31;
    let cin = if x {
        u64::from(pred(w, l, op_at(inst, k + 1)?)?)
    } else {
        0
    };
    let b = raw32(ctx, w, l, b_op)?;
    let b = if b_op.invert { !b } else { b };
    let a = if a_op.neg { a.wrapping_neg() } else { a };
    // `LEA d, a, -b, s` is `(a << s) - b` (ptxas writes `x * 7` as `LEA R17, R5, -R5, 0x3`);
    // as in IADD3, a negated operand adds `!b + 1` (`!b` with `.X`, whose carry-in supplies
    // the `+ 1`).
    let b = if b_op.neg {
        if x { u64::from(!b) } else { u64::from(!b) + 1 }
    } else {
        u64::from(b)
    };
    let shifted = if hi {
        ((((u64::from(c) << 32) | u64::from(a)) << s) >> 32) as u32
    } else {
        a << s
    };
    let sum = u64::from(shifted) + b + cin;
    wr(w, l, d, sum as u32)?;
    if let Some(co) = cout {
        wp(w, l, co, sum >> 32 & 1 == 1)?;
    }
    Ok(())
}

pub(crate) fn isetp(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods_in(inst, &[CMPS, BOPS, &["U32", "S32", "U64", "S64", "EX"]])?;
    let cmp = find_mod(inst, CMPS)
        .ok_or_else(|| Fault::Unsupported("ISETP without a comparison".into()))?;
    let bop = find_mod(inst, BOPS).unwrap_or("AND");
    let (pd, pq) = (op_at(inst, 0)?, op_at(inst, 1)?);
    let (ao, bo) = (op_at(inst, 2)?, op_at(inst, 3)?);
    let pc = pred(w, l, op_at(inst, 4)?)?;
    let wide = inst.has_mod("U64") || inst.has_mod("S64");
    let signed = !(inst.has_mod("U32") || inst.has_mod("U64"));
    let (a, b): (i128, i128) = if wide {
        let a = raw64(ctx, w, l, ao)?;
        let b = raw64(ctx, w, l, bo)?;
        if signed {
            (i128::from(a as i64), i128::from(b as i64))
        } else {
            (i128::from(a), i128::from(b))
        }
    } else {
        let a = int32(ctx, w, l, ao)?;
        let b = int32(ctx, w, l, bo)?;
        if signed {
            (i128::from(a as i32), i128::from(b as i32))
        } else {
            (i128::from(a), i128::from(b))
        }
    };
    let r = if inst.has_mod("EX") {
        // The high halves of a 64-bit comparison; the last predicate holds the low halves'
        // (unsigned) result of the same comparison.
        let low = pred(w, l, op_at(inst, 5)?)?;
        match cmp {
            "EQ" => a == b && low,
            "NE" => a != b || low,
            "LT" => a < b || (a == b && low),
            "LE" => a < b || (a == b && low),
            "GT" => a > b || (a == b && low),
            "GE" => a > b || (a == b && low),
            c => return unsupported(format!("ISETP.{c}.EX")),
        }
    } else {
        match cmp {
            "EQ" => a == b,
            "NE" => a != b,
            "LT" => a < b,
            "LE" => a <= b,
            "GT" => a > b,
            "GE" => a >= b,
            "T" => true,
            "F" => false,
            c => return unsupported(format!("ISETP.{c}")),
        }
    };
    let v1 = bool_op(bop, r, pc)?;
    let v2 = bool_op(bop, !r, pc)?;
    wp(w, l, pd, v1)?;
    wp(w, l, pq, v2)
}
