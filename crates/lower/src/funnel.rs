//! `slct` (select by the sign of a third operand), `shf` (funnel shift) and `prmt` (byte
//! permute).
//!
//! SASS forms are ptxas 13.0.88's (checked with `cuobjdump -sass` on sm_80 and sm_90):
//! * `slct.T.s32 d, a, b, c` → `ISETP.GE.AND P, PT, c, RZ, PT` + `SEL d, a, b, P`;
//!   `slct.T.f32` → `FSETP.GE.AND` (a NaN `c` selects `b`; `.ftz` → `FSETP.GE.FTZ.AND`);
//! * `shf.l.clamp.b32 d, a, b, c` → `SHF.L.U32.HI d, a, c, b` (the high word of `b:a << c`),
//!   `shf.r.clamp` → `SHF.R.U32 d, a, c, b` (the low word of `b:a >> c`); the shift is
//!   clamped to 32. `.wrap` shifts by `c & 31`: ptxas uses the `.W` forms, kiln masks the
//!   amount (`LOP3`) and uses the clamped forms (`SHF.R.W.U32` is not in kiln's sm_90
//!   table);
//! * `prmt.b32 d, a, b, c` → `PRMT d, a, c, b` (selector in the middle); the `.f4e`, `.b4e`,
//!   `.rc8`, `.ecl`, `.ecr`, `.rc16` modes are refused.

use ir::{Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::{Cx, LowerError, malformed, unsupported};

impl Cx {
    pub(crate) fn slct(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        if ops.len() != 4 {
            return Err(malformed(node, "slct takes 4 operands"));
        }
        let ftz = mods.iter().any(|m| m == ".ftz");
        let types: Vec<&str> = mods
            .iter()
            .map(String::as_str)
            .filter(|m| *m != ".ftz")
            .collect();
        let (dty, cty) = match types.as_slice() {
            [d, c] => (*d, *c),
            _ => return Err(malformed(node, "slct takes two types")),
        };
        if !matches!(dty, ".b32" | ".u32" | ".s32" | ".f32") {
            return Err(unsupported(node, format!("slct of type {dty}")));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let c = self.reg_src(&ops[3], 1)?;
        let p = Reg::v(self.ptmp(), 1);
        let cmp = match cty {
            ".s32" => op!("ISETP.GE.AND"),
            ".f32" if ftz => op!("FSETP.GE.FTZ.AND"),
            ".f32" => op!("FSETP.GE.AND"),
            _ => return Err(malformed(node, "slct's last type is .s32 or .f32")),
        };
        self.push(Inst::new(
            cmp,
            vec![
                Operand::r(p),
                Operand::pt(),
                Operand::r(c),
                Operand::rz(),
                Operand::pt(),
            ],
            vec![0],
        ));
        let d = self.dst(&ops[0], 1)?;
        self.push(Inst::new(
            op!("SEL"),
            vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::r(p)],
            vec![0],
        ));
        Ok(())
    }

    pub(crate) fn shf(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        if ops.len() != 4 {
            return Err(malformed(node, "shf takes 4 operands"));
        }
        let has = |m: &str| mods.iter().any(|x| x == m);
        let left = has(".l");
        if !left && !has(".r") {
            return Err(malformed(node, "shf without .l or .r"));
        }
        let wrap = has(".wrap");
        if !wrap && !has(".clamp") {
            return Err(malformed(node, "shf without .clamp or .wrap"));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let mut c = self.reg_src(&ops[3], 1)?;
        if wrap {
            let m = Reg::v(self.tmp(1), 1);
            self.mov_imm(m, 31);
            let t = Reg::v(self.tmp(1), 1);
            self.lop3(t, c, m, 0xc0);
            c = t;
        }
        let d = self.dst(&ops[0], 1)?;
        let op = if left {
            op!("SHF.L.U32.HI")
        } else {
            op!("SHF.R.U32")
        };
        self.push(Inst::new(
            op,
            vec![Operand::r(d), Operand::r(a), Operand::r(c), Operand::r(b)],
            vec![0],
        ));
        Ok(())
    }
}

impl Cx {
    pub(crate) fn prmt(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        if ops.len() != 4 {
            return Err(malformed(node, "prmt takes 4 operands"));
        }
        if mods.iter().any(|m| m != ".b32") {
            return Err(unsupported(node, "prmt modes"));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let c = self.reg_src(&ops[3], 1)?;
        let d = self.dst(&ops[0], 1)?;
        self.push(Inst::new(
            op!("PRMT"),
            vec![Operand::r(d), Operand::r(a), Operand::r(c), Operand::r(b)],
            vec![0],
        ));
        Ok(())
    }
}
