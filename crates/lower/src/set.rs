//! `set.CmpOp[.BoolOp][.ftz].dtype.stype d, a, b[, {!}c]`: a comparison into a register.
//!
//! The comparison is lowered exactly as `setp` (same SASS `ISETP`/`FSETP`/`DSETP` forms) into
//! a fresh predicate, then `SEL d, RZ, <true>, !P` — ptxas's form (`SEL R13, RZ, 0xffffffff,
//! !P0` for an integer destination); the true value is all ones for `.u32`/`.s32`/`.b32`
//! destinations and 1.0 for `.f32`.

use ir::{Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::LoweredType;
use crate::{Cx, LowerError, Ty, unsupported};

impl Cx {
    pub(crate) fn set(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        // The destination type is the first type word, the source type the last.
        let Some(di) = mods.iter().position(|m| ast::TYPES.contains(&m.as_str())) else {
            return Err(unsupported(node, "set without a destination type"));
        };
        let truth = match Ty::lowered(&mods[di]) {
            Some(Ty::U32 | Ty::S32 | Ty::B32) => 0xffff_ffffu32,
            Some(Ty::F32) => 0x3f80_0000,
            _ => return Err(unsupported(node, format!("set to type {}", mods[di]))),
        };
        let rest: Vec<String> = mods
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != di)
            .map(|(_, m)| m.clone())
            .collect();
        if !rest.iter().any(|m| ast::TYPES.contains(&m.as_str())) {
            return Err(unsupported(node, "set without a source type"));
        }
        let d = self.dst(&ops[0], 1)?;
        let p = Reg::v(self.ptmp(), 1);
        self.setp(node, &rest, ops, Some(p))?;
        let t = self.tmp(1);
        self.push(Inst::new(
            op!("SEL"),
            vec![
                Operand::r(Reg::v(t, 1)),
                Operand::rz(),
                Operand::Imm(i64::from(truth)),
                Operand::not(p),
            ],
            vec![0],
        ));
        self.copy_words(d, t, 1);
        Ok(())
    }
}
