//! Instructions that execute lane by lane with no state beyond registers and predicates: the
//! dispatch by base name.

use super::*;

/// The uniform twin of an opcode (`UIADD3` -> `IADD3`); the operand files decide where
/// results go, so one implementation serves both.
pub(crate) fn base_name(name: &str) -> &str {
    match name {
        "UIADD3" | "UIMAD" | "ULOP3" | "USHF" | "ULEA" | "UISETP" | "USEL" | "UMOV" | "UPRMT"
        | "UFLO" | "UPOPC" | "UBREV" | "USGXT" | "UBMSK" | "UPLOP3" | "UIMNMX" | "ULDC"
        | "US2R" => &name[1..],
        "UVIMNMX" => "VIMNMX",
        n => n,
    }
}

pub(crate) fn lane_op(
    ctx: &mut Ctx<'_>,
    w: &mut Warp,
    inst: &Inst,
    l: usize,
    active: u32,
) -> R<()> {
    let o = |i: usize| op_at(inst, i);
    match base_name(&inst.opcode) {
        "MOV" => {
            check_mods(inst, &["64"])?;
            if inst.has_mod("64") {
                let v = raw64(ctx, w, l, o(1)?)?;
                return wr64(w, l, o(0)?, v);
            }
            let v = raw32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, v)
        }
        "R2UR" => {
            check_mods(inst, &[])?;
            let v = raw32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, v)
        }
        "S2R" | "S2UR" | "CS2R" => s2r(ctx, w, inst, l, active),
        "IMAD" => imad(ctx, w, inst, l),
        "IADD3" => iadd3(ctx, w, inst, l),
        "IADD" => {
            check_mods(inst, &["64"])?;
            if !inst.has_mod("64") {
                return unsupported("IADD without .64");
            }
            let a = raw64(ctx, w, l, o(1)?)?;
            let b = raw64(ctx, w, l, o(2)?)?;
            let a = if o(1)?.neg { a.wrapping_neg() } else { a };
            let b = if o(2)?.neg { b.wrapping_neg() } else { b };
            wr64(w, l, o(0)?, a.wrapping_add(b))
        }
        "VIADD" => {
            // `.16x2` / `.U8x4`: lane-wise wrapping addition of packed halfwords / bytes (PTX
            // `vadd2`/`vadd4`, `vsub*` with the second operand negated lane by lane).
            check_mods(inst, &["16x2", "U8x4"])?;
            let lane_bits = if inst.has_mod("16x2") {
                16
            } else if inst.has_mod("U8x4") {
                8
            } else {
                let a = int32(ctx, w, l, o(1)?)?;
                let b = int32(ctx, w, l, o(2)?)?;
                return wr(w, l, o(0)?, a.wrapping_add(b));
            };
            let (oa, ob) = (o(1)?, o(2)?);
            if [oa, ob].iter().any(|op| op.invert || op.abs) {
                return unsupported("VIADD packed with `~` or `|..|` operands");
            }
            let packed = |op: &Operand| -> R<u32> {
                let v = raw32(ctx, w, l, op)?;
                Ok(if op.neg {
                    lanewise(v, 0, lane_bits, |x, _| x.wrapping_neg())
                } else {
                    v
                })
            };
            let a = packed(oa)?;
            let b = packed(ob)?;
            wr(w, l, o(0)?, lanewise(a, b, lane_bits, u32::wrapping_add))
        }
        "LOP3" => lop3(ctx, w, inst, l),
        "PLOP3" => {
            check_mods(inst, &["LUT"])?;
            let a = pred(w, l, o(2)?)?;
            let b = pred(w, l, o(3)?)?;
            let c = pred(w, l, o(4)?)?;
            let idx = (u32::from(a) << 2) | (u32::from(b) << 1) | u32::from(c);
            let l1 = raw32(ctx, w, l, o(5)?)?;
            let l2 = raw32(ctx, w, l, o(6)?)?;
            wp(w, l, o(0)?, l1 >> idx & 1 == 1)?;
            wp(w, l, o(1)?, l2 >> idx & 1 == 1)
        }
        "SHF" => shf(ctx, w, inst, l),
        "LEA" => lea(ctx, w, inst, l),
        "PRMT" => {
            check_mods(inst, &[])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            let s = raw32(ctx, w, l, o(2)?)?;
            let b = raw32(ctx, w, l, o(3)?)?;
            let bytes = (u64::from(b) << 32 | u64::from(a)).to_le_bytes();
            let mut r = 0u32;
            for i in 0..4 {
                let n = (s >> (4 * i)) & 0xf;
                let mut v = bytes[(n & 7) as usize];
                if n & 8 != 0 {
                    v = if v & 0x80 != 0 { 0xff } else { 0 };
                }
                r |= u32::from(v) << (8 * i);
            }
            wr(w, l, o(0)?, r)
        }
        "SEL" | "FSEL" => {
            check_mods(inst, &[])?;
            let p = pred(w, l, o(3)?)?;
            let v = if p {
                raw32_mod(ctx, w, l, o(1)?, inst.opcode.ends_with("FSEL"))?
            } else {
                raw32_mod(ctx, w, l, o(2)?, inst.opcode.ends_with("FSEL"))?
            };
            wr(w, l, o(0)?, v)
        }
        "IMNMX" => {
            check_mods(inst, &["U32"])?;
            let a = int32(ctx, w, l, o(1)?)?;
            let b = int32(ctx, w, l, o(2)?)?;
            let p = pred(w, l, o(3)?)?;
            wr(w, l, o(0)?, min_max(a, b, p, inst.has_mod("U32")))
        }
        "VIADDMNMX" => {
            // d = min/max(a + b, c): min with PT, max with !PT; signed unless `.U32`.
            check_mods(inst, &["U32"])?;
            let a = int32(ctx, w, l, o(1)?)?;
            let b = int32(ctx, w, l, o(2)?)?;
            let c = int32(ctx, w, l, o(3)?)?;
            let p = pred(w, l, o(4)?)?;
            wr(
                w,
                l,
                o(0)?,
                min_max(a.wrapping_add(b), c, p, inst.has_mod("U32")),
            )
        }
        "VABSDIFF" => {
            // `sad`: |a - b| + c, the difference of signed (default) or `.U32` values.
            check_mods(inst, &["U32"])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            let b = raw32(ctx, w, l, o(2)?)?;
            let c = raw32(ctx, w, l, o(3)?)?;
            let diff = if inst.has_mod("U32") {
                a.abs_diff(b)
            } else {
                (a as i32).abs_diff(b as i32)
            };
            wr(w, l, o(0)?, diff.wrapping_add(c))
        }
        "VABSDIFF4" => {
            // PTX `vabsdiff4` (CUDA `__vabsdiffu4`, `__vsadu4`): per-byte |a - b| of unsigned
            // (`.U8`) or signed bytes (no modifier: ptxas 13.0.88 writes `VABSDIFF4.ACC` for
            // `vabsdiff4.u32.s32.s32.add`, and no sm_90 encoding prints `.S8`), packed; with
            // `.ACC` (PTX's `.add` mode) their sum plus c. Without `.ACC`, c would be PTX's merge source for unselected bytes,
            // which ptxas's forms here never use (`RZ`): another value is reported.
            check_mods(inst, &["U8", "S8", "ACC"])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            let b = raw32(ctx, w, l, o(2)?)?;
            let c = raw32(ctx, w, l, o(3)?)?;
            let signed = !inst.has_mod("U8");
            let diff = |x: u32, y: u32| {
                if signed {
                    u32::from((x as u8 as i8).abs_diff(y as u8 as i8))
                } else {
                    u32::from((x as u8).abs_diff(y as u8))
                }
            };
            let d = if inst.has_mod("ACC") {
                (0..4).fold(c, |acc, i| {
                    acc.wrapping_add(diff(a >> (8 * i), b >> (8 * i)))
                })
            } else if c == 0 {
                lanewise(a, b, 8, diff)
            } else {
                return unsupported("VABSDIFF4 without .ACC and a non-zero third operand");
            };
            wr(w, l, o(0)?, d)
        }
        "IABS" => {
            check_mods(inst, &[])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, (a as i32).unsigned_abs())
        }
        "POPC" => {
            check_mods(inst, &[])?;
            let a = int32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, a.count_ones())
        }
        "BREV" => {
            check_mods(inst, &[])?;
            let a = int32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, a.reverse_bits())
        }
        "FLO" => {
            check_mods(inst, &["U32", "SH"])?;
            let a = int32(ctx, w, l, o(1)?)?;
            // Signed FLO finds the most significant bit that differs from the sign bit:
            // ptxas compiles PTX's `bfind.s32` ("the most significant non-sign bit") to it.
            let a = if !inst.has_mod("U32") && (a as i32) < 0 {
                !a
            } else {
                a
            };
            let v = if a == 0 {
                u32::MAX
            } else if inst.has_mod("SH") {
                a.leading_zeros()
            } else {
                31 - a.leading_zeros()
            };
            wr(w, l, o(0)?, v)
        }
        "SGXT" => {
            check_mods(inst, &["U32", "W"])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            let mut n = raw32(ctx, w, l, o(2)?)?;
            n = if inst.has_mod("W") { n & 31 } else { n.min(32) };
            let v = if n == 0 {
                0
            } else if n >= 32 {
                a
            } else if inst.has_mod("U32") {
                a & ((1u32 << n) - 1)
            } else {
                (((a << (32 - n)) as i32) >> (32 - n)) as u32
            };
            wr(w, l, o(0)?, v)
        }
        "BMSK" => {
            check_mods(inst, &["W"])?;
            let pos = raw32(ctx, w, l, o(1)?)?;
            let wid = raw32(ctx, w, l, o(2)?)?;
            let (pos, wid) = if inst.has_mod("W") {
                (pos & 31, wid & 31)
            } else {
                (pos.min(32), wid.min(32))
            };
            let m = ((1u64 << wid) - 1) << pos;
            wr(w, l, o(0)?, m as u32)
        }
        "ISETP" => isetp(ctx, w, inst, l),
        "P2R" | "P2UR" => {
            check_mods(inst, &["B1", "B2", "B3"])?;
            let sh = byte_shift(inst);
            let a = raw32(ctx, w, l, o(2)?)?;
            let mask = raw32(ctx, w, l, o(3)?)? << sh;
            let p = match &o(1)?.kind {
                OperandKind::Special(s) if s == "PR" => u32::from(w.p[l]) | 0x80,
                OperandKind::Special(s) if s == "UPR" => u32::from(w.up) | 0x80,
                k => return unsupported(format!("P2R source {k:?}")),
            };
            wr(w, l, o(0)?, (a & !mask) | ((p << sh) & mask))
        }
        "R2P" => {
            check_mods(inst, &["B1", "B2", "B3"])?;
            let sh = byte_shift(inst);
            let a = raw32(ctx, w, l, o(1)?)? >> sh;
            let mask = raw32(ctx, w, l, o(2)?)?;
            for i in 0..7 {
                if mask >> i & 1 == 1 {
                    w.set_pred(l, i, a >> i & 1 == 1);
                }
            }
            Ok(())
        }
        "LDC" => {
            check_mods(inst, &["64", "U8", "S8", "U16", "S16"])?;
            let (bank, addr) = match &o(1)?.kind {
                OperandKind::Const {
                    bank,
                    addr,
                    indirect: false,
                } => (bank, addr),
                k => return unsupported(format!("LDC source {k:?}")),
            };
            let (b, off) = const_addr(w, l, bank, addr)?;
            if inst.has_mod("64") {
                let v = ctx.cread(l, b, off, 8)?;
                return wr64(w, l, o(0)?, v);
            }
            let v = match find_mod(inst, &["U8", "S8", "U16", "S16"]) {
                Some("U8") => ctx.cread(l, b, off, 1)? as u32,
                Some("S8") => ctx.cread(l, b, off, 1)? as u8 as i8 as u32,
                Some("U16") => ctx.cread(l, b, off, 2)? as u32,
                Some("S16") => ctx.cread(l, b, off, 2)? as u16 as i16 as u32,
                _ => ctx.cread(l, b, off, 4)? as u32,
            };
            wr(w, l, o(0)?, v)
        }
        "LDG" | "LD" | "LDS" | "LDL" => load(ctx, w, inst, l),
        "STG" | "ST" | "STS" | "STL" => store(ctx, w, inst, l),
        "LDGSTS" => ldgsts(ctx, w, inst, l),
        "SYNCS" => syncs::syncs(ctx, w, inst, l),
        "ARRIVES" => syncs::arrives(ctx, w, inst, l),
        "ATOMG" | "ATOM" | "ATOMS" | "RED" | "REDG" => atom(ctx, w, inst, l),
        "TEX" | "TLD" => texture(ctx, w, inst, l),
        "SUST" | "SULD" => surface::access(ctx, w, inst, l),
        "QSPC" => {
            check_mods(inst, &["E", "S", "L", "G"])?;
            let a = match &o(2)?.kind {
                OperandKind::Mem { addr, .. } => address(w, l, addr, true)?,
                k => return unsupported(format!("QSPC operand {k:?}")),
            };
            let (sp, _) = crate::exec::classify(a);
            let v = match find_mod(inst, &["S", "L", "G"]) {
                Some("S") => sp == Space::Shared,
                Some("L") => sp == Space::Local,
                _ => sp == Space::Global,
            };
            wp(w, l, o(0)?, v)
        }
        // ---- floating point
        "FADD" | "FMUL" | "FFMA" => ffma(ctx, w, inst, l),
        "FMNMX" => {
            check_mods(inst, &["FTZ", "NAN"])?;
            let ftz = inst.has_mod("FTZ");
            let a = f32src(ctx, w, l, o(1)?, ftz)?;
            let b = f32src(ctx, w, l, o(2)?, ftz)?;
            let p = pred(w, l, o(3)?)?;
            let r = fminmax(a, b, p, inst.has_mod("NAN"));
            let bits = if r.is_nan() {
                0x7fff_ffff
            } else {
                (r as f32).to_bits()
            };
            wr(w, l, o(0)?, bits)
        }
        "FSETP" => fsetp(ctx, w, inst, l, false),
        "FSET" => {
            // `FSET[.BF].cmp.bop d, a, b, c`: d = (a cmp b) bop c as 1.0 (`.BF`) or all ones,
            // else 0.
            let (v, _) = float_compare(ctx, w, inst, l, 1, &["FTZ", "BF"])?;
            let t = if inst.has_mod("BF") {
                1.0f32.to_bits()
            } else {
                u32::MAX
            };
            wr(w, l, o(0)?, if v { t } else { 0 })
        }
        "DSETP" => fsetp(ctx, w, inst, l, true),
        "FCHK" => {
            check_mods(inst, &[])?;
            let a = f32::from_bits(raw32(ctx, w, l, o(1)?)?);
            let b = f32::from_bits(raw32(ctx, w, l, o(2)?)?);
            wp(w, l, o(0)?, fchk(a, b))
        }
        "MUFU" => mufu(ctx, w, inst, l),
        "DADD" | "DMUL" | "DFMA" => {
            check_mods(inst, &["RN", "RZ", "RM", "RP"])?;
            let mode = rnd(inst);
            let a = f64src(ctx, w, l, o(1)?)?;
            let b = f64src(ctx, w, l, o(2)?)?;
            let r = match base_name(&inst.opcode) {
                "DADD" => float::add(a, b, mode, F64),
                "DMUL" => float::mul(a, b, mode, F64),
                _ => float::fma(a, b, f64src(ctx, w, l, o(3)?)?, mode, F64),
            };
            wr64(w, l, o(0)?, r)
        }
        "FRND" => {
            check_mods(
                inst,
                &["F64", "F16", "FTZ", "TRUNC", "FLOOR", "CEIL", "F32"],
            )?;
            let f64t = inst.has_mod("F64");
            let f16t = inst.has_mod("F16");
            let a = if f64t {
                f64src(ctx, w, l, o(1)?)?
            } else if f16t {
                // The low half of the source as f16 (`cvt.r*i.f16.f16`'s template reads a
                // 16-bit register, whose value is the low half).
                let op = o(1)?;
                let mut b = raw32(ctx, w, l, op)? & 0xffff;
                if op.abs {
                    b &= 0x7fff;
                }
                if op.neg {
                    b ^= 0x8000;
                }
                F16.to_f64(u64::from(b))
            } else {
                f32src(ctx, w, l, o(1)?, inst.has_mod("FTZ"))?
            };
            let r = if inst.has_mod("TRUNC") {
                a.trunc()
            } else if inst.has_mod("FLOOR") {
                a.floor()
            } else if inst.has_mod("CEIL") {
                a.ceil()
            } else {
                a.round_ties_even()
            };
            if f64t {
                let b = if r.is_nan() {
                    F64.canonical_nan()
                } else {
                    r.to_bits()
                };
                wr64(w, l, o(0)?, b)
            } else if f16t {
                // An integral f16 value is exact in f16; the result is the low half (the
                // upper half reads as zero: a 16-bit PTX register's upper bits are
                // unspecified, and nothing reads them).
                let b = if r.is_nan() {
                    F16.canonical_nan()
                } else {
                    float::round(r, std::cmp::Ordering::Equal, Rnd::Ne, F16, false)
                };
                wr(w, l, o(0)?, b as u32 & 0xffff)
            } else {
                let b = if r.is_nan() {
                    0x7fff_ffff
                } else {
                    (r as f32).to_bits()
                };
                wr(
                    w,
                    l,
                    o(0)?,
                    f32fin(u64::from(b), inst.has_mod("FTZ"), false),
                )
            }
        }
        "F2I" => f2i(ctx, w, inst, l),
        "I2F" | "I2FP" => i2f(ctx, w, inst, l),
        "F2F" => f2f(ctx, w, inst, l),
        "F2FP" => packed::f2fp(ctx, w, inst, l),
        "HADD2" | "HMUL2" | "HFMA2" => half2(ctx, w, inst, l),
        "HMNMX2" => packed::hmnmx2(ctx, w, inst, l),
        "HSET2" => packed::hset2(ctx, w, inst, l),
        "HSETP2" => packed::hsetp2(ctx, w, inst, l),
        "VIMNMX" => packed::vimnmx(ctx, w, inst, l),
        "VIMNMX3" => packed::vimnmx3(ctx, w, inst, l),
        "I2IP" => packed::i2ip(ctx, w, inst, l),
        "I2I" => packed::i2i(ctx, w, inst, l),
        "IDP" => packed::idp(ctx, w, inst, l),
        _ => unsupported(format!("instruction {}", inst.opcode)),
    }
}
