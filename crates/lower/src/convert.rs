//! `cvt` between integer and floating-point types (the forms not in the learned tables,
//! `cvt_table.rs`).

use super::*;

impl Cx {
    pub(crate) fn cvt(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let types: Vec<&String> = mods
            .iter()
            .filter(|m| ast::TYPES.contains(&m.as_str()))
            .collect();
        let rest: Vec<&String> = mods
            .iter()
            .filter(|m| !ast::TYPES.contains(&m.as_str()))
            .collect();
        if types.len() != 2 {
            return Err(malformed(node, "cvt needs two types"));
        }
        let (Some(dt), Some(st)) = (Ty::lowered(types[0]), Ty::lowered(types[1])) else {
            if self.cvt_from_table(node, mods, ops)? {
                return Ok(());
            }
            return Err(unsupported(node, format!("cvt{}{}", types[0], types[1])));
        };
        let rest: Vec<&str> = rest.iter().map(|s| s.as_str()).collect();
        let int = |t: Ty| matches!(t, Ty::U32 | Ty::S32 | Ty::B32 | Ty::U64 | Ty::S64 | Ty::B64);
        let i2fp = self.target.forms.i2fp;
        if int(dt) && int(st) && rest.is_empty() {
            let d = self.dst(&ops[0], dt.words())?;
            // PTX lets cvt's source register be wider than its type (`cvt.s64.s32 %rd2,
            // %rd1;`): the low word is the value.
            let a = if st.words() == 1 && self.reg_width(&ops[1]) == Some(2) {
                sub(self.reg_src(&ops[1], 2)?, 0)
            } else {
                self.reg_src(&ops[1], st.words())?
            };
            match (dt.words(), st.words()) {
                (1, 1) => self.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(d), Operand::r(a)],
                    vec![0],
                )),
                (1, 2) => self.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(d), Operand::r(sub(a, 0))],
                    vec![0],
                )),
                (2, 1) => {
                    // Write the high word first: `d` may not overlap `a` (different vregs).
                    if st.signed() {
                        let s = self.tmp(1);
                        self.mov_imm(Reg::v(s, 1), 31);
                        self.push(Inst::new(
                            op!("SHF.R.S32.HI"),
                            vec![
                                Operand::r(sub(d, 1)),
                                Operand::rz(),
                                Operand::r(Reg::v(s, 1)),
                                Operand::r(a),
                            ],
                            vec![0],
                        ));
                    } else {
                        self.mov_imm(sub(d, 1), 0);
                    }
                    self.push(Inst::new(
                        op!("MOV"),
                        vec![Operand::r(sub(d, 0)), Operand::r(a)],
                        vec![0],
                    ));
                }
                _ => {
                    for k in 0..2 {
                        self.push(Inst::new(
                            op!("MOV"),
                            vec![Operand::r(sub(d, k)), Operand::r(sub(a, k))],
                            vec![0],
                        ));
                    }
                }
            }
            return Ok(());
        }
        if dt == Ty::F32 && matches!(st, Ty::S32 | Ty::U32) && rest == [".rn"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 1)?;
            let op = match (i2fp, st == Ty::U32) {
                (false, false) => op!("I2F"),
                (false, true) => op!("I2F.U32"),
                (true, false) => op!("I2FP.F32.S32"),
                (true, true) => op!("I2FP.F32.U32"),
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if dt == Ty::F64 && matches!(st, Ty::S32 | Ty::U32) && rest == [".rn"] {
            let d = self.dst(&ops[0], 2)?;
            let a = self.reg_src(&ops[1], 1)?;
            let op = if st == Ty::U32 {
                op!("I2F.F64.U32")
            } else {
                op!("I2F.F64")
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if matches!(dt, Ty::S32 | Ty::U32) && st == Ty::F64 && rest == [".rzi"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 2)?;
            let op = if dt == Ty::U32 {
                op!("F2I.U32.F64.TRUNC")
            } else {
                op!("F2I.F64.TRUNC")
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if dt == Ty::F32 && st == Ty::F64 && rest == [".rn"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 2)?;
            self.push(Inst::new(
                op!("F2F.F32.F64"),
                vec![Operand::r(d), Operand::r(a)],
                vec![0],
            ));
            return Ok(());
        }
        if matches!(dt, Ty::S32 | Ty::U32) && st == Ty::F32 && rest == [".rzi"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 1)?;
            let op = if dt == Ty::U32 {
                op!("F2I.U32.TRUNC.NTZ")
            } else {
                op!("F2I.TRUNC.NTZ")
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if self.cvt_from_table(node, mods, ops)? {
            return Ok(());
        }
        Err(unsupported(
            node,
            format!("cvt{}{}{}", rest.concat(), types[0], types[1]),
        ))
    }
}
