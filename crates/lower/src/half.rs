//! Packed half-precision arithmetic: `add`, `sub`, `mul` (optionally `.rn`) and `fma.rn` of
//! `.f16x2` and `.bf16x2` (a 32-bit register, the first element in the low half).
//!
//! ptxas 13.0.88 spells them `HADD2`, `HMUL2`, `HFMA2(.MMA)` with `.BF16_V2` for bf16, and
//! trades them for one another to balance its pipes (`add` as `HFMA2.MMA d, a, 1, 1, b`,
//! `mul.rn` as `HFMA2.MMA d, a, b, -RZ`, an f16 fma as `HFMA2` or `HFMA2.MMA`). kiln emits
//! one of ptxas's forms per instruction and SM (nvdisasm syntax):
//!
//! | PTX | sm_80 | sm_90 |
//! |---|---|---|
//! | `add.f16x2` / `sub.f16x2` | `HADD2 d, a, b` / `HADD2 d, a, -b` | the same |
//! | `mul.f16x2` | `HMUL2 d, a, b` | the same |
//! | `fma.rn.f16x2` | `HFMA2.MMA d, a, b, c` | `HFMA2 d, a, b, c` |
//! | `fma.rn.bf16x2` | `HFMA2.BF16_V2 d, a, b, c` | the same |
//! | `add/sub/mul.bf16x2` | refused (PTX: sm_90) | `HADD2.BF16_V2` (`-b`), `HMUL2.BF16_V2` |
//!
//! `.rn` on `add/sub/mul` (no contraction) changes nothing here; `.ftz`, `.sat`, `.relu` are
//! refused. Each half is rounded to nearest even once (an fma exactly), subnormals kept.

use ir::{Inst, Operand, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::{Cx, LowerError, unsupported};

impl Cx {
    /// `add/sub/mul/fma` of `.f16x2`/`.bf16x2`; `None` for any other instruction.
    pub(crate) fn half2_arith(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Option<Result<(), LowerError>> {
        if !matches!(opcode, "add" | "sub" | "mul" | "fma") {
            return None;
        }
        let bf16 = mods.iter().any(|m| m == ".bf16x2");
        if !bf16 && !mods.iter().any(|m| m == ".f16x2") {
            return None;
        }
        Some((|| {
            let ty = if bf16 { ".bf16x2" } else { ".f16x2" };
            // Exactly the type and the optional (for fma, required) `.rn`.
            let rn = mods.iter().any(|m| m == ".rn");
            let plain = mods.len() == 1 + usize::from(rn) && (rn || opcode != "fma");
            if !plain {
                return Err(unsupported(node, format!("{opcode}{}", mods.concat())));
            }
            let forms = self.target.forms;
            if bf16 && opcode != "fma" && !forms.bf16x2_arith {
                // PTX ISA: `add/sub/mul.bf16x2` require sm_90 (ptxas refuses them for sm_80).
                return Err(unsupported(node, format!("{opcode}{ty} before sm_90")));
            }
            let n = if opcode == "fma" { 4 } else { 3 };
            Self::need(node, ops, n)?;
            let a = self.reg_src(&ops[1], 1)?;
            let b = self.reg_src(&ops[2], 1)?;
            let c = if n == 4 {
                Some(self.reg_src(&ops[3], 1)?)
            } else {
                None
            };
            let (op, operands) = match opcode {
                "fma" => {
                    let op = match (bf16, forms.hfma2_plain) {
                        (false, false) => op!("HFMA2.MMA"),
                        (false, true) => op!("HFMA2"),
                        (true, _) => op!("HFMA2.BF16_V2"),
                    };
                    let c = c.expect("three sources");
                    (op, vec![Operand::r(a), Operand::r(b), Operand::r(c)])
                }
                "mul" => {
                    let op = if bf16 {
                        op!("HMUL2.BF16_V2")
                    } else {
                        op!("HMUL2")
                    };
                    (op, vec![Operand::r(a), Operand::r(b)])
                }
                _ => {
                    let b = if opcode == "sub" {
                        Operand::neg(b)
                    } else {
                        Operand::r(b)
                    };
                    let op = if bf16 {
                        op!("HADD2.BF16_V2")
                    } else {
                        op!("HADD2")
                    };
                    (op, vec![Operand::r(a), b])
                }
            };
            let d = self.dst(&ops[0], 1)?;
            let mut all = vec![Operand::r(d)];
            all.extend(operands);
            self.push(Inst::new(op, all, vec![0]));
            Ok(())
        })())
    }
}

impl Cx {
    /// Packed 16-bit integers (sm_90): `add.{u16x2,s16x2}` → `VIADD.16x2 d, a, b`;
    /// `min`/`max[.relu].{u16x2,s16x2}` → `VIMNMX.{U16x2,S16x2}[.RELU] d, a, b, PT` (min) or
    /// `!PT` (max), as ptxas 13.0.88 writes them. Each half wraps (add) or compares on its own.
    pub(crate) fn packed16(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let signed = mods.iter().any(|m| m == ".s16x2");
        let relu = mods.iter().any(|m| m == ".relu");
        if mods.len() != 1 + usize::from(relu) || (relu && (opcode == "add" || !signed)) {
            return Err(unsupported(node, format!("{opcode}{}", mods.concat())));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let d = self.dst(&ops[0], 1)?;
        let (op, mut operands) = if opcode == "add" {
            (
                crate::sass_op(node, "VIADD.16x2")?,
                vec![Operand::r(d), Operand::r(a), Operand::r(b)],
            )
        } else {
            let name = format!(
                "VIMNMX.{}{}",
                if signed { "S16x2" } else { "U16x2" },
                if relu { ".RELU" } else { "" }
            );
            (
                crate::sass_op(node, &name)?,
                vec![Operand::r(d), Operand::r(a), Operand::r(b)],
            )
        };
        if opcode != "add" {
            operands.push(if opcode == "min" {
                Operand::pt()
            } else {
                Operand::not(ir::Reg::Zero(ir::Class::P))
            });
        }
        self.push(Inst::new(op, operands, vec![0]));
        Ok(())
    }
}
