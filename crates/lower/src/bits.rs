//! Integer negation and absolute value, and the bit-counting instructions: `neg.s32/.s64`,
//! `abs.s32`, `clz`, `brev`, `popc` (`.b32`/`.b64`) and `bfind.u32/.s32`.
//!
//! SASS forms are ptxas 13.0.88's (checked with `nvdisasm -c` on sm_80 and sm_90; ptxas puts
//! the 64-bit forms on the uniform datapath when the operand is uniform, kiln uses the vector
//! forms of the same operations):
//! * `neg.s32` → `IADD3 d, -a, RZ, RZ`; `neg.s64` → `IADD3 lo, P, RZ, -a.lo, RZ` +
//!   `IADD3.X hi, RZ, ~a.hi, RZ, P, !PT`; `abs.s32` → `IABS d, a`;
//! * `clz.b32` → `FLO.U32 t, a` + `IADD3 d, -t, 0x1f, RZ` (FLO of 0 is -1, so clz(0) = 32);
//!   `clz.b64` → the high word's count when it is not zero, else 32 + the low word's
//!   (`ISETP.NE.U32` + `SEL` + `FLO.U32` + `IADD3` 0x1f/0x3f + a predicated select);
//! * `brev.b32` → `BREV`; `brev.b64` → `BREV` of each word, words swapped;
//! * `popc.b32` → `POPC`; `popc.b64` → `POPC` of each word + `IADD3`;
//! * `bfind.u32` → `FLO.U32`, `bfind.s32` → `FLO` (0xffffffff when no bit is found, as PTX);
//!   `.shiftamt` → `FLO.U32.SH` (of `a ^ (a >> 31)` for `.s32`).

use ir::{Inst, Opcode, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::{Cx, LowerError, Ty, sub, unsupported};

impl Cx {
    /// `neg`/`abs` of an integer type; `None` when `ty` is not one this handles.
    pub(crate) fn int_neg_abs(
        &mut self,
        is_neg: bool,
        ty: Ty,
        ops: &[ast::Operand],
    ) -> Option<Result<(), LowerError>> {
        let words = match ty {
            Ty::S32 => 1,
            Ty::S64 if is_neg => 2,
            _ => return None,
        };
        Some((|| {
            let a = self.reg_src(&ops[1], words)?;
            let d = self.dst(&ops[0], words)?;
            if !is_neg {
                self.push(Inst::new(
                    op!("IABS"),
                    vec![Operand::r(d), Operand::r(a)],
                    vec![0],
                ));
            } else if words == 1 {
                self.push(Inst::new(
                    op!("IADD3"),
                    vec![Operand::r(d), Operand::neg(a), Operand::rz(), Operand::rz()],
                    vec![0],
                ));
            } else {
                let t = self.tmp(2);
                let p = Reg::v(self.ptmp(), 1);
                self.push(Inst::new(
                    op!("IADD3"),
                    vec![
                        Operand::r(Reg::part(t, 0)),
                        Operand::r(p),
                        Operand::rz(),
                        Operand::neg(sub(a, 0)),
                        Operand::rz(),
                    ],
                    vec![0, 1],
                ));
                self.push(Inst::new(
                    op!("IADD3.X"),
                    vec![
                        Operand::r(Reg::part(t, 1)),
                        Operand::rz(),
                        Operand::not(sub(a, 1)),
                        Operand::rz(),
                        Operand::r(p),
                        Operand::not(Reg::Zero(ir::Class::P)),
                    ],
                    vec![0],
                ));
                self.copy_words(d, t, 2);
            }
            Ok(())
        })())
    }

    /// `d[k] = t[k]` for each word.
    pub(crate) fn copy_words(&mut self, d: Reg, t: ir::VReg, words: u8) {
        for k in 0..words {
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(sub(d, k)), Operand::r(Reg::part(t, k))],
                vec![0],
            ));
        }
    }

    fn unary(&mut self, op: Opcode, d: Reg, a: Reg) {
        self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
    }

    pub(crate) fn bit_count(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let shiftamt = mods.iter().any(|m| m == ".shiftamt");
        let ty = Self::ty_of(node, mods)?;
        let words = match ty {
            Ty::B32 | Ty::U32 | Ty::S32 => 1,
            Ty::B64 | Ty::U64 | Ty::S64 if opcode != "bfind" => 2,
            _ => return Err(unsupported(node, format!("{opcode} of this type"))),
        };
        let a = self.reg_src(&ops[1], words)?;
        match (opcode, words) {
            ("bfind", _) if shiftamt => {
                // `FLO.U32.SH` counts from the top. The signed form (`FLO.SH`, ptxas's) is
                // not in kiln's SASS tables: flipping negative values first (`a ^ (a >> 31)`)
                // gives the same most significant non-sign bit.
                let d = self.dst(&ops[0], 1)?;
                let x = if ty == Ty::S32 {
                    let sign = Reg::v(self.tmp(1), 1);
                    self.push(Inst::new(
                        op!("SHF.R.S32.HI"),
                        vec![
                            Operand::r(sign),
                            Operand::rz(),
                            Operand::Imm(0x1f),
                            Operand::r(a),
                        ],
                        vec![0],
                    ));
                    let x = Reg::v(self.tmp(1), 1);
                    self.lop3(x, a, sign, 0x3c);
                    x
                } else {
                    a
                };
                let t = self.tmp(1);
                self.unary(op!("FLO.U32.SH"), Reg::v(t, 1), x);
                self.copy_words(d, t, 1);
            }
            ("bfind", _) => {
                let d = self.dst(&ops[0], 1)?;
                let op = if ty == Ty::S32 {
                    op!("FLO")
                } else {
                    op!("FLO.U32")
                };
                let t = self.tmp(1);
                self.unary(op, Reg::v(t, 1), a);
                self.copy_words(d, t, 1);
            }
            ("popc", 1) | ("brev", 1) => {
                let d = self.dst(&ops[0], 1)?;
                let t = self.tmp(1);
                let op = if opcode == "popc" {
                    op!("POPC")
                } else {
                    op!("BREV")
                };
                self.unary(op, Reg::v(t, 1), a);
                self.copy_words(d, t, 1);
            }
            ("popc", _) => {
                let d = self.dst(&ops[0], 1)?;
                let t = self.tmp(2);
                self.unary(op!("POPC"), Reg::part(t, 0), sub(a, 0));
                self.unary(op!("POPC"), Reg::part(t, 1), sub(a, 1));
                self.push(Inst::new(
                    op!("IADD3"),
                    vec![
                        Operand::r(d),
                        Operand::r(Reg::part(t, 0)),
                        Operand::r(Reg::part(t, 1)),
                        Operand::rz(),
                    ],
                    vec![0],
                ));
            }
            ("brev", _) => {
                let d = self.dst(&ops[0], 2)?;
                let t = self.tmp(2);
                self.unary(op!("BREV"), Reg::part(t, 1), sub(a, 0));
                self.unary(op!("BREV"), Reg::part(t, 0), sub(a, 1));
                self.copy_words(d, t, 2);
            }
            ("clz", 1) => {
                let d = self.dst(&ops[0], 1)?;
                let t = self.tmp(1);
                self.unary(op!("FLO.U32"), Reg::v(t, 1), a);
                self.push(Inst::new(
                    op!("IADD3"),
                    vec![
                        Operand::r(d),
                        Operand::neg(Reg::v(t, 1)),
                        Operand::Imm(0x1f),
                        Operand::rz(),
                    ],
                    vec![0],
                ));
            }
            ("clz", _) => {
                let d = self.dst(&ops[0], 1)?;
                let hi_set = Reg::v(self.ptmp(), 1);
                self.push(Inst::new(
                    op!("ISETP.NE.U32.AND"),
                    vec![
                        Operand::r(hi_set),
                        Operand::pt(),
                        Operand::r(sub(a, 1)),
                        Operand::rz(),
                        Operand::pt(),
                    ],
                    vec![0],
                ));
                // The word to count: the high one when it has a bit set.
                let (sel, flo, out) = (self.tmp(1), self.tmp(1), self.tmp(1));
                self.push(Inst::new(
                    op!("SEL"),
                    vec![
                        Operand::r(Reg::v(sel, 1)),
                        Operand::r(sub(a, 0)),
                        Operand::r(sub(a, 1)),
                        Operand::not(hi_set),
                    ],
                    vec![0],
                ));
                self.unary(op!("FLO.U32"), Reg::v(flo, 1), Reg::v(sel, 1));
                self.push(Inst::new(
                    op!("IADD3"),
                    vec![
                        Operand::r(Reg::v(out, 1)),
                        Operand::neg(Reg::v(flo, 1)),
                        Operand::Imm(0x3f),
                        Operand::rz(),
                    ],
                    vec![0],
                ));
                let hi = Inst::new(
                    op!("IADD3"),
                    vec![
                        Operand::r(Reg::v(out, 1)),
                        Operand::neg(Reg::v(flo, 1)),
                        Operand::Imm(0x1f),
                        Operand::rz(),
                    ],
                    vec![0],
                );
                // Under its own guard, into a fresh temporary: safe under an outer guard.
                self.guarded(hi, hi_set);
                self.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(d), Operand::r(Reg::v(out, 1))],
                    vec![0],
                ));
            }
            _ => return Err(unsupported(node, format!("instruction `{opcode}`"))),
        }
        Ok(())
    }
}

impl Cx {
    /// `mul24.lo.s32/.u32 d, a, b`: the low 32 bits of the product of the 24-bit operands.
    /// ptxas extends each operand from 24 bits (`SGXT a, 0x18` signed, `PRMT a, 0x7210, RZ`
    /// unsigned) and multiplies; kiln multiplies with `IMAD.WIDE.U32` and keeps the low word
    /// (the low word of a product does not depend on signedness). `mul24.hi` is refused.
    pub(crate) fn mul24(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let ty = Self::ty_of(node, mods)?;
        if mods.len() != 2 || !mods.iter().any(|m| m == ".lo") || !matches!(ty, Ty::S32 | Ty::U32) {
            return Err(unsupported(node, format!("mul24{}", mods.concat())));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let d = self.dst(&ops[0], 1)?;
        let ext = |cx: &mut Cx, r: Reg| {
            let t = Reg::v(cx.tmp(1), 1);
            let inst = if ty == Ty::S32 {
                Inst::new(
                    op!("SGXT"),
                    vec![Operand::r(t), Operand::r(r), Operand::Hex(0x18)],
                    vec![0],
                )
            } else {
                Inst::new(
                    op!("PRMT"),
                    vec![
                        Operand::r(t),
                        Operand::r(r),
                        Operand::Hex(0x7210),
                        Operand::rz(),
                    ],
                    vec![0],
                )
            };
            cx.push(inst);
            t
        };
        let ea = ext(self, a);
        let eb = ext(self, b);
        let w = self.tmp(2);
        self.imad_wide(Reg::v(w, 2), ea, eb, false, None);
        self.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(d), Operand::r(Reg::part(w, 0))],
            vec![0],
        ));
        Ok(())
    }
}
