//! `shl` and `shr` (32 and 64 bits).

use super::*;

impl Cx {
    pub(crate) fn shift(
        &mut self,
        node: &SyntaxNode,
        left: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let ty = Self::ty_of(node, mods)?;
        if ty == Ty::F32 || ty == Ty::Pred || ty == Ty::F64 {
            return Err(unsupported(node, "shift type"));
        }
        let w = ty.words();
        let d = self.dst(&ops[0], w)?;
        let a = self.reg_src(&ops[1], w)?;
        if w == 1 {
            let s = self.reg_src(&ops[2], 1)?;
            // SHF clamps the shift amount to 32 like PTX's shl/shr.
            let inst = if left {
                Inst::new(
                    op!("SHF.L.U32"),
                    vec![Operand::r(d), Operand::r(a), Operand::r(s), Operand::rz()],
                    vec![0],
                )
            } else {
                let op = if ty.signed() {
                    op!("SHF.R.S32.HI")
                } else {
                    op!("SHF.R.U32.HI")
                };
                Inst::new(
                    op,
                    vec![Operand::r(d), Operand::rz(), Operand::r(s), Operand::r(a)],
                    vec![0],
                )
            };
            self.push(inst);
            return Ok(());
        }
        // 64-bit shifts: ptxas's funnel-shift pairs (`SHF.L.U64.HI` + `SHF.L.U32`,
        // `SHF.R.U64`/`.S64` + `SHF.R.U32.HI`/`.S32.HI`), which clamp the amount like PTX
        // (64 or more gives 0 or all sign bits; ptxas uses the same pair for register amounts).
        let s = match ops[2].as_int() {
            Some(k) => {
                let s = self.tmp(1);
                self.mov_imm(Reg::v(s, 1), k.clamp(0, 64) as u32);
                Reg::v(s, 1)
            }
            None => self.reg_src(&ops[2], 1)?,
        };
        // Write into a temporary pair: the two halves read both source words.
        let t = self.tmp(2);
        let (lo, hi) = (Reg::part(t, 0), Reg::part(t, 1));
        if left {
            self.push(Inst::new(
                op!("SHF.L.U64.HI"),
                vec![
                    Operand::r(hi),
                    Operand::r(sub(a, 0)),
                    Operand::r(s),
                    Operand::r(sub(a, 1)),
                ],
                vec![0],
            ));
            self.push(Inst::new(
                op!("SHF.L.U32"),
                vec![
                    Operand::r(lo),
                    Operand::r(sub(a, 0)),
                    Operand::r(s),
                    Operand::rz(),
                ],
                vec![0],
            ));
        } else {
            self.push(Inst::new(
                if ty.signed() {
                    op!("SHF.R.S64")
                } else {
                    op!("SHF.R.U64")
                },
                vec![
                    Operand::r(lo),
                    Operand::r(sub(a, 0)),
                    Operand::r(s),
                    Operand::r(sub(a, 1)),
                ],
                vec![0],
            ));
            let op = if ty.signed() {
                op!("SHF.R.S32.HI")
            } else {
                op!("SHF.R.U32.HI")
            };
            self.push(Inst::new(
                op,
                vec![
                    Operand::r(hi),
                    Operand::rz(),
                    Operand::r(s),
                    Operand::r(sub(a, 1)),
                ],
                vec![0],
            ));
        }
        for k in 0..2 {
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(sub(d, k)), Operand::r(Reg::part(t, k))],
                vec![0],
            ));
        }
        Ok(())
    }
}
