//! `testp.{finite,infinite,number,notanumber,normal,subnormal}.{f32,f64}`: integer tests on the
//! magnitude bits, as ptxas 13.0.88 does them on sm_80 and sm_90 (`LOP3.LUT abs, x, 0x7fffffff`
//! then unsigned `ISETP`s against the exponent field's bounds; the f64 forms test the high
//! word and, where the class depends on the mantissa, the low word). `.normal` is true for ±0,
//! as the PTX ISA specifies and ptxas computes.

use ir::{Class, Inst, Opcode, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::{Cx, LowerError, malformed, unsupported};

/// IEEE binary32 / binary64 (high word) bounds on the magnitude bits.
const F32_INF: u32 = 0x7f80_0000;
const F32_MIN_NORMAL: u32 = 0x0080_0000;
const F64_HI_INF: u32 = 0x7ff0_0000;
const F64_HI_MIN_NORMAL: u32 = 0x0010_0000;

/// The right-hand side of an unsigned comparison ([`Cx::cmp`]).
enum Rhs {
    Imm(u32),
    Zero,
}

impl Cx {
    pub(crate) fn testp(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        if self.guard.is_some() {
            // ptxas 13.0.88 drops the guard of a `testp` and always writes the predicate
            // (`@%p4 testp.notanumber.f32 %p1, %f1` becomes an unguarded ISETP; found by
            // `cargo xtask fuzz codegen --ptxas`). Kiln refuses rather than compute another
            // answer than ptxas's, or than PTX's.
            return Err(unsupported(
                node,
                "guarded testp (ptxas 13.0.88 ignores the guard and always writes the predicate)",
            ));
        }
        let (class, ty) = match mods {
            [c, t] => (c.as_str(), t.as_str()),
            _ => return Err(malformed(node, "testp needs a class and a type")),
        };
        let wide = match ty {
            ".f32" => false,
            ".f64" => true,
            _ => return Err(malformed(node, "testp of a type other than .f32/.f64")),
        };
        let words = if wide { 2 } else { 1 };
        let x = self.reg_src(&ops[1], words)?;
        let d = self.pred_dst(&ops[0])?;
        let Reg::Virt { vreg: xv, .. } = x else {
            return Err(malformed(node, "testp of a register it cannot name"));
        };
        let hi = if wide { Reg::part(xv, 1) } else { x };
        let abs = Reg::v(self.tmp(1), 1);
        self.push(Inst::new(
            op!("LOP3.LUT"),
            vec![
                Operand::r(abs),
                Operand::r(hi),
                Operand::Hex(0x7fff_ffff),
                Operand::rz(),
                Operand::Hex(0xc0),
                Operand::not(Reg::Zero(Class::P)),
            ],
            vec![0],
        ));
        if !wide {
            match class {
                ".finite" => self.cmp(d, op!("ISETP.LT.U32.AND"), abs, Rhs::Imm(F32_INF), None),
                ".infinite" => self.cmp(d, op!("ISETP.EQ.U32.AND"), abs, Rhs::Imm(F32_INF), None),
                ".number" => self.cmp(d, op!("ISETP.LE.U32.AND"), abs, Rhs::Imm(F32_INF), None),
                ".notanumber" => self.cmp(d, op!("ISETP.GT.U32.AND"), abs, Rhs::Imm(F32_INF), None),
                ".normal" => {
                    // PTX counts ±0 as normal (ptxas: `ISETP.EQ.U32.OR P0, PT, abs, RZ, P0`).
                    let z = self.ptemp();
                    self.cmp(z, op!("ISETP.EQ.U32.AND"), abs, Rhs::Zero, None);
                    let t = self.ptemp();
                    self.cmp(
                        t,
                        op!("ISETP.GE.U32.OR"),
                        abs,
                        Rhs::Imm(F32_MIN_NORMAL),
                        Some(z),
                    );
                    self.cmp(d, op!("ISETP.LT.U32.AND"), abs, Rhs::Imm(F32_INF), Some(t));
                }
                ".subnormal" => {
                    let t = self.ptemp();
                    self.cmp(
                        t,
                        op!("ISETP.LT.U32.AND"),
                        abs,
                        Rhs::Imm(F32_MIN_NORMAL),
                        None,
                    );
                    self.cmp(d, op!("ISETP.NE.U32.AND"), abs, Rhs::Zero, Some(t));
                }
                other => return Err(malformed(node, format!("testp class {other}"))),
            }
            return Ok(());
        }
        let lo = Reg::part(xv, 0);
        match class {
            ".finite" => self.cmp(d, op!("ISETP.LT.U32.AND"), abs, Rhs::Imm(F64_HI_INF), None),
            ".infinite" => {
                let t = self.ptemp();
                self.cmp(t, op!("ISETP.EQ.U32.AND"), abs, Rhs::Imm(F64_HI_INF), None);
                self.cmp(d, op!("ISETP.EQ.U32.AND"), lo, Rhs::Zero, Some(t));
            }
            ".number" => {
                // |x| < inf, or |x| == inf exactly (low word zero).
                let t = self.ptemp();
                self.cmp(t, op!("ISETP.EQ.U32.AND"), lo, Rhs::Zero, None);
                let u = self.ptemp();
                self.cmp(
                    u,
                    op!("ISETP.LE.U32.AND"),
                    abs,
                    Rhs::Imm(F64_HI_INF),
                    Some(t),
                );
                self.cmp(
                    d,
                    op!("ISETP.LT.U32.OR"),
                    abs,
                    Rhs::Imm(F64_HI_INF),
                    Some(u),
                );
            }
            ".notanumber" => {
                // High word above inf's, or inf's with a nonzero low word.
                let t = self.ptemp();
                self.cmp(t, op!("ISETP.NE.U32.AND"), lo, Rhs::Zero, None);
                let u = self.ptemp();
                self.cmp(
                    u,
                    op!("ISETP.GE.U32.AND"),
                    abs,
                    Rhs::Imm(F64_HI_INF),
                    Some(t),
                );
                self.cmp(
                    d,
                    op!("ISETP.GT.U32.OR"),
                    abs,
                    Rhs::Imm(F64_HI_INF),
                    Some(u),
                );
            }
            ".normal" => {
                // ±0 counts as normal: both words zero.
                let z = self.ptemp();
                self.cmp(z, op!("ISETP.EQ.U32.AND"), lo, Rhs::Zero, None);
                let zz = self.ptemp();
                self.cmp(zz, op!("ISETP.EQ.U32.AND"), abs, Rhs::Zero, Some(z));
                let t = self.ptemp();
                self.cmp(
                    t,
                    op!("ISETP.GE.U32.OR"),
                    abs,
                    Rhs::Imm(F64_HI_MIN_NORMAL),
                    Some(zz),
                );
                self.cmp(
                    d,
                    op!("ISETP.LT.U32.AND"),
                    abs,
                    Rhs::Imm(F64_HI_INF),
                    Some(t),
                );
            }
            ".subnormal" => {
                // Exponent zero and not both words zero.
                let t = self.ptemp();
                self.cmp(t, op!("ISETP.NE.U32.AND"), lo, Rhs::Zero, None);
                let u = self.ptemp();
                self.cmp(u, op!("ISETP.NE.U32.OR"), abs, Rhs::Zero, Some(t));
                self.cmp(
                    d,
                    op!("ISETP.LT.U32.AND"),
                    abs,
                    Rhs::Imm(F64_HI_MIN_NORMAL),
                    Some(u),
                );
            }
            other => return Err(malformed(node, format!("testp class {other}"))),
        }
        Ok(())
    }

    fn ptemp(&mut self) -> Reg {
        Reg::v(self.ptmp(), 1)
    }

    /// `isetp d, PT, a, rhs, chain` (`PT` without a chain), `isetp` an `ISETP.<cmp>.U32.<bool>`.
    fn cmp(&mut self, d: Reg, isetp: Opcode, a: Reg, rhs: Rhs, chain: Option<Reg>) {
        let b = match rhs {
            Rhs::Imm(v) => Operand::Hex(v),
            Rhs::Zero => Operand::rz(),
        };
        self.push(Inst::new(
            isetp,
            vec![
                Operand::r(d),
                Operand::pt(),
                Operand::r(a),
                b,
                chain.map_or_else(Operand::pt, Operand::r),
            ],
            vec![0],
        ));
    }
}
