//! 16-bit registers (`.b16`, `.u16`, `.s16`) and 8/16-bit integer conversions.
//!
//! A 16-bit PTX register lives in a 32-bit R register whose low 16 bits hold the value and
//! whose upper bits are unspecified — ptxas's own model (checked with `nvdisasm -c`: it
//! computes `add.u16` with a 32-bit `IADD3` and extends only where the upper bits matter).
//! So `mov`, `selp`, `add`, `sub`, `mul.lo`, `and`, `or`, `xor`, `not`, `shl`, and sub-word
//! `ld`/`st` work unchanged on 16-bit types; `setp`, `div`, `rem` and `cvt` extend their 16-bit (or 8-bit)
//! sources first with ptxas's instructions: zero extension `LOP3.LUT d, a, 0xffff|0xff, RZ,
//! 0xc0, !PT`, sign extension `PRMT d, a, 0x9910|0x8880, RZ`; so do `shr` and `mul.wide`
//! (`Cx::small_extending`). Every other instruction on a 16-bit type is refused
//! (`Cx::small_type_refusal`).

use ir::{Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::LoweredType;
use crate::{Cx, LowerError, Ty, sub, unsupported};

/// An integer type of a `cvt`: (bits, signed).
fn int_type(m: &str) -> Option<(u32, bool)> {
    Some(match m {
        ".u8" | ".b8" => (8, false),
        ".s8" => (8, true),
        ".u16" | ".b16" => (16, false),
        ".s16" => (16, true),
        ".u32" | ".b32" => (32, false),
        ".s32" => (32, true),
        ".u64" | ".b64" => (64, false),
        ".s64" => (64, true),
        _ => return None,
    })
}

impl Cx {
    /// `a`'s low `bits` (8 or 16) extended to 32 bits into a fresh register.
    pub(crate) fn extend_small(&mut self, a: Reg, bits: u32, signed: bool) -> Reg {
        let t = Reg::v(self.tmp(1), 1);
        let inst = if signed {
            let sel = if bits == 8 { 0x8880 } else { 0x9910 };
            Inst::new(
                op!("PRMT"),
                vec![
                    Operand::r(t),
                    Operand::r(a),
                    Operand::Hex(sel),
                    Operand::rz(),
                ],
                vec![0],
            )
        } else {
            let mask = if bits == 8 { 0xff } else { 0xffff };
            Inst::new(
                op!("LOP3.LUT"),
                vec![
                    Operand::r(t),
                    Operand::r(a),
                    Operand::Hex(mask),
                    Operand::rz(),
                    Operand::Hex(0xc0),
                    Operand::not(Reg::Zero(ir::Class::P)),
                ],
                vec![0],
            )
        };
        self.push(inst);
        t
    }

    /// 16-bit instructions whose result depends on the upper bits, computed on extended
    /// sources: `shr.u16/.s16 d, a, b` → the 32-bit `SHF.R.U32.HI`/`.S32.HI` of `a` zero- or
    /// sign-extended (a shift of 16 or more leaves zeros or sign bits, as PTX says); and
    /// `mul.wide.u16/.s16 d, a, b` → `IMAD d, a', b', RZ` of the extended sources (32-bit
    /// product). `None`: not one of these.
    pub(crate) fn small_extending(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Option<Result<(), LowerError>> {
        let signed = if mods.iter().any(|m| m == ".s16") {
            true
        } else if mods.iter().any(|m| m == ".u16" || m == ".b16") {
            false
        } else {
            return None;
        };
        let wide = mods.iter().any(|m| m == ".wide");
        let shr = opcode == "shr" && mods.len() == 1;
        let mulwide = opcode == "mul" && wide && mods.len() == 2;
        if !(shr || mulwide) {
            return None;
        }
        Some((|| {
            Self::need(node, ops, 3)?;
            let a = self.reg_src(&ops[1], 1)?;
            let a = self.extend_small(a, 16, signed);
            if shr {
                let s = self.reg_src(&ops[2], 1)?;
                let d = self.dst(&ops[0], 1)?;
                let op = if signed {
                    op!("SHF.R.S32.HI")
                } else {
                    op!("SHF.R.U32.HI")
                };
                self.push(Inst::new(
                    op,
                    vec![Operand::r(d), Operand::rz(), Operand::r(s), Operand::r(a)],
                    vec![0],
                ));
            } else {
                let b = self.reg_src(&ops[2], 1)?;
                let b = self.extend_small(b, 16, signed);
                let d = self.dst(&ops[0], 1)?;
                self.push(Inst::new(
                    op!("IMAD"),
                    vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::rz()],
                    vec![0],
                ));
            }
            Ok(())
        })())
    }

    /// Instructions other than the ones this module's model makes exact refuse 16-bit types.
    pub(crate) fn small_type_refusal(
        &self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
    ) -> Option<LowerError> {
        let small = mods
            .iter()
            .any(|m| matches!(Ty::lowered(m), Some(Ty::U16 | Ty::S16 | Ty::B16)));
        if !small {
            return None;
        }
        let has = |m: &str| mods.iter().any(|x| x == m);
        let ok = match opcode {
            // Loads and stores check their modifiers themselves (cache hints, orders, ...).
            "ld" | "ldu" | "st" => true,
            "mov" | "selp" | "cvt" | "add" | "sub" | "and" | "or" | "xor" | "not" | "shl" => {
                mods.len() <= 3 && !has(".sat") && !has(".cc")
            }
            "mul" => has(".lo"),
            "div" | "rem" => mods.len() == 1,
            "setp" => true,
            // `atom.cas.b16` (`atom_sub.rs`).
            "atom" => has(".cas"),
            // `.b16` is ldmatrix's element type; its registers are 32-bit (`mma.rs`).
            "ldmatrix" | "stmatrix" | "movmatrix" => true,
            // Surface accesses move the low bits of each element (`surface.rs`).
            "suld" | "sust" => true,
            _ => false,
        };
        (!ok).then(|| unsupported(node, format!("{opcode} of a 16-bit type")))
    }

    /// `cvt.sat` between integer types of which one is 8 or 16 bits, from a source of at most
    /// 32 bits: the source extended to 32 bits, clamped to the destination's range with the
    /// 32-bit minimum and maximum of the source's signedness (`IMNMX`, `VIMNMX` on sm_90; a
    /// bound the source's range cannot pass is left out), then written as the unsaturated
    /// form writes it (an 8-bit result extended to 32 bits by the destination's signedness,
    /// which the clamped value already is; a 64-bit one with its high word). ptxas writes `I2I...SAT`, whose scheduling class the learned
    /// tables do not have (no ptxas code in the corpus uses it); the clamp computes the same
    /// value (PTX: the result saturated to the destination type's range).
    fn cvt_small_saturating(
        &mut self,
        (dbits, dsigned): (u32, bool),
        (sbits, ssigned): (u32, bool),
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let a = self.reg_src(&ops[1], 1)?;
        let mut value = sub(a, 0);
        if sbits < 32 {
            value = self.extend_small(value, sbits, ssigned);
        }
        // The destination's range, as 64-bit integers.
        let (lo, hi): (i64, i64) = match (dbits, dsigned) {
            (64, true) => (i64::MIN, i64::MAX),
            (64, false) => (0, i64::MAX),
            (bits, true) => (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1),
            (bits, false) => (0, (1i64 << bits) - 1),
        };
        // The source's range.
        let (smin, smax): (i64, i64) = if ssigned {
            (-(1i64 << (sbits - 1)), (1i64 << (sbits - 1)) - 1)
        } else {
            (0, (1i64 << sbits) - 1)
        };
        let minmax = |cx: &mut Cx, v: Reg, bound: i64, min: bool| -> Reg {
            let t = Reg::v(cx.tmp(1), 1);
            let op = cx.int_minmax_op(!ssigned);
            let sel = if min {
                Operand::pt()
            } else {
                Operand::not(Reg::Zero(ir::Class::P))
            };
            // The bound as the source's 32-bit word (a negative bound only with a signed
            // source, whose range reaches below it).
            cx.push(Inst::new(
                op,
                vec![
                    Operand::r(t),
                    Operand::r(v),
                    Operand::Imm(i64::from(bound as i32)),
                    sel,
                ],
                vec![0],
            ));
            t
        };
        if lo > smin {
            value = minmax(self, value, lo, false);
        }
        if hi < smax {
            value = minmax(self, value, hi, true);
        }
        // An 8-bit result is now the 32-bit extension of itself by the destination's
        // signedness, as the unsaturated form writes it: the clamp left it in range.
        self.write_int_result(&ops[0], dbits, value, dsigned)
    }

    /// Writes an integer `cvt`'s result: `value` (its low word, already extended to 32 bits)
    /// into `d`, and for a 64-bit destination the high word by `value`'s sign when `signed`.
    fn write_int_result(
        &mut self,
        d: &ast::Operand,
        dbits: u32,
        value: Reg,
        signed: bool,
    ) -> Result<(), LowerError> {
        let dwords = if dbits == 64 { 2 } else { 1 };
        let d = self.dst(d, dwords)?;
        self.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(sub(d, 0)), Operand::r(value)],
            vec![0],
        ));
        if dwords == 2 {
            self.extend_high(d, signed);
        }
        Ok(())
    }

    /// `cvt.sat` from a 64-bit integer to any integer type: the value clamped to the
    /// destination's range by 64-bit comparisons of the source's signedness with each bound
    /// the source's range passes (`ISETP` on the low words, `ISETP...EX` on the high words)
    /// and `SEL`s of both words; the result is the clamped value's low word (which, in range,
    /// is an 8-, 16- or 32-bit result extended by its signedness) or both words.
    fn cvt_saturating_from_64(
        &mut self,
        (dbits, dsigned): (u32, bool),
        ssigned: bool,
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let a = self.reg_src(&ops[1], 2)?;
        let mut value = (sub(a, 0), sub(a, 1));
        let range = |bits: u32, signed: bool| -> (i128, i128) {
            if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            }
        };
        let (lo, hi) = range(dbits, dsigned);
        let (smin, smax) = range(64, ssigned);
        // `value` replaced by `bound` where it compares `cmp` (`LT`, `GT`) with it.
        let clamp = |cx: &mut Cx, (vlo, vhi): (Reg, Reg), bound: i128, cmp: &str| -> (Reg, Reg) {
            let word = bound as u64;
            let mut bound_reg = |w: u32| {
                let t = Reg::v(cx.tmp(1), 1);
                cx.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(t), Operand::Imm(i64::from(w))],
                    vec![0],
                ));
                t
            };
            let (blo, bhi) = (bound_reg(word as u32), bound_reg((word >> 32) as u32));
            let low = Reg::v(cx.ptmp(), 1);
            let p = Reg::v(cx.ptmp(), 1);
            let (low_op, high_op) = match (cmp, ssigned) {
                ("LT", true) => (op!("ISETP.LT.U32.AND"), op!("ISETP.LT.AND.EX")),
                ("LT", false) => (op!("ISETP.LT.U32.AND"), op!("ISETP.LT.U32.AND.EX")),
                (_, true) => (op!("ISETP.GT.U32.AND"), op!("ISETP.GT.AND.EX")),
                (_, false) => (op!("ISETP.GT.U32.AND"), op!("ISETP.GT.U32.AND.EX")),
            };
            cx.push(Inst::new(
                low_op,
                vec![
                    Operand::r(low),
                    Operand::pt(),
                    Operand::r(vlo),
                    Operand::r(blo),
                    Operand::pt(),
                ],
                vec![0],
            ));
            cx.push(Inst::new(
                high_op,
                vec![
                    Operand::r(p),
                    Operand::pt(),
                    Operand::r(vhi),
                    Operand::r(bhi),
                    Operand::pt(),
                    Operand::r(low),
                ],
                vec![0],
            ));
            let mut select = |b: Reg, v: Reg| {
                let t = Reg::v(cx.tmp(1), 1);
                cx.push(Inst::new(
                    op!("SEL"),
                    vec![Operand::r(t), Operand::r(b), Operand::r(v), Operand::r(p)],
                    vec![0],
                ));
                t
            };
            (select(blo, vlo), select(bhi, vhi))
        };
        if lo > smin {
            value = clamp(self, value, lo, "LT");
        }
        if hi < smax {
            value = clamp(self, value, hi, "GT");
        }
        let dwords = if dbits == 64 { 2 } else { 1 };
        let d = self.dst(&ops[0], dwords)?;
        self.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(sub(d, 0)), Operand::r(value.0)],
            vec![0],
        ));
        if dwords == 2 {
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(sub(d, 1)), Operand::r(value.1)],
                vec![0],
            ));
        }
        Ok(())
    }

    /// `cvt` between integer types of which one is 8 or 16 bits, and `cvt.sat` from a 64-bit
    /// integer; `None` for other `cvt`s.
    pub(crate) fn cvt_small(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Option<Result<(), LowerError>> {
        let types: Vec<(u32, bool)> = mods.iter().filter_map(|m| int_type(m)).collect();
        let [(dbits, dsigned), (sbits, ssigned)] = types[..] else {
            return None;
        };
        let saturating = mods.len() == 3 && mods.iter().any(|m| m == ".sat");
        if saturating && sbits == 64 && ops.len() == 2 {
            return Some(self.cvt_saturating_from_64((dbits, dsigned), ssigned, ops));
        }
        if dbits > 16 && sbits > 16 {
            return None;
        }
        if saturating && sbits <= 32 && ops.len() == 2 {
            return Some(self.cvt_small_saturating((dbits, dsigned), (sbits, ssigned), ops));
        }
        // Other saturating forms come from ptxas's table (`cvt_table.rs`).
        if mods.len() != 2 && ops.len() == 2 {
            return None;
        }
        Some((|| {
            if mods.len() != 2 || ops.len() != 2 {
                return Err(unsupported(
                    node,
                    format!("cvt{} of small integers", mods.concat()),
                ));
            }
            let swords = if sbits == 64 { 2 } else { 1 };
            let a = self.reg_src(&ops[1], swords)?;
            let lo_src = sub(a, 0);
            // The 32-bit value of the result's low word.
            let value = if dbits <= sbits {
                // Narrowing (or between the signednesses of one width): to 16 bits the upper
                // bits may stay; to 8 bits the register is extended from 8 bits by the
                // destination's signedness (PTX writes the converted value extended to the
                // register's width).
                if dbits == 8 {
                    self.extend_small(lo_src, 8, dsigned)
                } else {
                    lo_src
                }
            } else if sbits < 32 {
                // Widening from 8/16 bits: extend by the source's signedness.
                self.extend_small(lo_src, sbits, ssigned)
            } else {
                lo_src
            };
            // A 64-bit result from an 8/16-bit source: the high word by the source's sign.
            self.write_int_result(&ops[0], dbits, value, ssigned)
        })())
    }
}
