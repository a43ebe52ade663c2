//! `cvta.shared` / `cvta.to.shared`: between shared-window addresses and generic ones.
//!
//! Forms follow ptxas 13.0.88 (checked with `cuobjdump -sass` on sm_80 and sm_90):
//! * sm_80: the driver puts the generic address of the CTA's shared window in
//!   `c[0x0][0x18]` (64 bits): `cvta.shared` adds it, `cvta.to.shared` subtracts it
//!   (ptxas computes only the low word there; kiln the whole 64-bit difference, which is the
//!   zero-extended shared address for generic addresses inside the window);
//! * sm_90: a generic shared address is the shared address with `SR_SWINHI` as its high
//!   word: `cvta.shared` keeps the low word and reads `SR_SWINHI`, `cvta.to.shared` keeps the
//!   low word and clears the high one.
//!
//! Only the 64-bit forms (`.u64`, as nvcc writes them) are lowered.
//!
//! `isspacep.{global,shared,local} p, a` is `QSPC.E.{G,S,L} p, RZ, [a]` (ptxas 13.0.88 also
//! compares the address with the constant window's base `c[0x0][0x50]`/`c[0x0][0xd0]` for
//! `.global`, in a test that is false for every address: `UISETP.GE.U32.AND.EX` of the
//! same operands combined with its own negation).

use ir::{Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::LoweredType;
use crate::{Cx, LowerError, sass_op, sub, unsupported};

/// `c[0x0][0x18]`: the generic address of the shared window (sm_80).
const SHARED_WINDOW_CBANK: u32 = 0x18;

impl Cx {
    /// `isspacep.space p, a` (module docs).
    pub(crate) fn isspacep(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let space = match mods {
            [m] if m == ".global" => "G",
            [m] if m == ".shared" || m == ".shared::cta" => "S",
            [m] if m == ".local" => "L",
            _ => return Err(unsupported(node, format!("isspacep{}", mods.concat()))),
        };
        let a = self.reg_src(&ops[1], 2)?;
        let p = self.pred_dst(&ops[0])?;
        let mut q = Inst::new(
            sass_op(node, &format!("QSPC.E.{space}"))?,
            vec![
                Operand::r(p),
                Operand::rz(),
                // nvdisasm prints the 64-bit address as its low register.
                Operand::Mem {
                    base: sub(a, 0),
                    offset: 0,
                    desc: None,
                },
            ],
            vec![0],
        );
        q.implicit_uses.push(a);
        self.push(q);
        Ok(())
    }

    /// The shared-window address of a generic address `a` that lies in the shared window:
    /// its low word on sm_90, the low word of its distance from the window's base on sm_80
    /// (`cvta.to.shared`'s forms).
    pub(crate) fn shared_of_generic(&mut self, a: Reg) -> Reg {
        if self.target.forms.clusters {
            return sub(a, 0);
        }
        let base = Reg::v(self.tmp(1), 1);
        self.const_load(Operand::r(base), SHARED_WINDOW_CBANK, 1);
        let t = Reg::v(self.tmp(1), 1);
        self.push(Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(t),
                Operand::r(sub(a, 0)),
                Operand::neg(base),
                Operand::rz(),
            ],
            vec![0],
        ));
        t
    }

    pub(crate) fn cvta_shared(
        &mut self,
        node: &SyntaxNode,
        to: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        if Self::ty_of(node, mods)?.words() != 2 {
            return Err(unsupported(node, "32-bit cvta"));
        }
        let a = self.reg_src(&ops[1], 2)?;
        let d = self.dst(&ops[0], 2)?;
        let t = self.tmp(2);
        let (lo, hi) = (Reg::part(t, 0), Reg::part(t, 1));
        if self.target.forms.clusters {
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(lo), Operand::r(sub(a, 0))],
                vec![0],
            ));
            if to {
                self.mov_imm(hi, 0);
            } else {
                self.push(Inst::new(
                    op!("S2R"),
                    vec![Operand::r(hi), Operand::Special("SR_SWINHI")],
                    vec![0],
                ));
            }
        } else {
            let base = self.tmp(2);
            self.const_load(Operand::r(Reg::v(base, 2)), SHARED_WINDOW_CBANK, 2);
            let (blo, bhi) = (Reg::part(base, 0), Reg::part(base, 1));
            let b = if to {
                [Operand::neg(blo), Operand::not(bhi)]
            } else {
                [Operand::r(blo), Operand::r(bhi)]
            };
            self.add64([lo, hi], [Operand::r(sub(a, 0)), Operand::r(sub(a, 1))], b);
        }
        self.copy_words(d, t, 2);
        Ok(())
    }
}
