//! Extended-precision integer arithmetic: the carry flag `CC.CF` of `add.cc`, `addc`,
//! `sub.cc`, `subc`, `mad.cc` and `madc`.
//!
//! As ptxas 13.0.88 writes it (checked with nvdisasm on sm_90): the flag is a predicate
//! register, written as the carry out of `IADD3` (`add.cc`: `IADD3 d, P0, a, b, RZ`;
//! `sub.cc`: `IADD3 d, P0, a, -b, RZ`) and read as the carry in of `IADD3.X` (`addc.cc`:
//! `IADD3.X d, P0, a, b, RZ, P0, !PT`; `subc`: `a + ~b + CF`). After a subtraction the flag
//! is the carry of `a + ~b + 1`, the inverted borrow, as the hardware keeps it (the
//! interpreter models the same, checked against ZLUDA's hardware-recorded results). A 64-bit
//! form chains its two words through a second predicate. `mad.lo.cc`/`madc.{lo,hi}[.cc]` of
//! 32-bit integers: the product's word (`IMAD`, or the high word of `IMAD.WIDE[.U32]`), then
//! the addition with the flag (ptxas sometimes fuses a `mad.lo.cc`/`madc.hi` pair into one
//! `IMAD.WIDE.U32` with a carry out; kiln does not).

use ir::{Class, Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::LoweredType;
use crate::{Cx, LowerError, Ty, sub, unsupported};

impl Cx {
    /// The carry flag's predicate (one per kernel, shared with inlined callees).
    fn carry_flag(&mut self) -> Reg {
        let v = match self.carry {
            Some(v) => v,
            None => {
                let v = self.ptmp();
                self.carry = Some(v);
                v
            }
        };
        Reg::v(v, 1)
    }

    /// `add.cc`/`sub.cc` (`carry_in` false) and `addc`/`subc` (`carry_in` true), with or
    /// without `.cc`, of `.u32`/`.s32`/`.u64`/`.s64`.
    pub(crate) fn add_carry(
        &mut self,
        node: &SyntaxNode,
        is_sub: bool,
        carry_in: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let (carry_out, ty) = Self::carry_mods(node, mods)?;
        let w = ty.words();
        let a = self.reg_src(&ops[1], w)?;
        let b = self.reg_src(&ops[2], w)?;
        let d = self.dst(&ops[0], w)?;
        self.add_words(d, a, b, w, is_sub, carry_in, carry_out);
        Ok(())
    }

    /// `mad.lo.cc`, `mad.hi.cc` (`carry_in` false) and `madc.lo`/`madc.hi` with or without
    /// `.cc` (`carry_in` true), of `.u32`/`.s32`.
    pub(crate) fn mad_carry(
        &mut self,
        node: &SyntaxNode,
        carry_in: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 4)?;
        let hi = match mods.first().map(String::as_str) {
            Some(".lo") => false,
            Some(".hi") => true,
            _ => return Err(unsupported(node, "this mad form")),
        };
        let (carry_out, ty) = Self::carry_mods(node, &mods[1..])?;
        if ty.words() != 1 {
            return Err(unsupported(node, "64-bit mad with carry"));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let c = self.reg_src(&ops[3], 1)?;
        let product = if hi {
            let t = self.tmp(2);
            self.imad_wide(Reg::v(t, 2), a, b, ty.signed(), None);
            Reg::part(t, 1)
        } else {
            let t = Reg::v(self.tmp(1), 1);
            self.push(Inst::new(
                op!("IMAD"),
                vec![Operand::r(t), Operand::r(a), Operand::r(b), Operand::rz()],
                vec![0],
            ));
            t
        };
        let d = self.dst(&ops[0], 1)?;
        self.add_words(d, product, c, 1, false, carry_in, carry_out);
        Ok(())
    }

    /// Whether `.cc` is among `mods`, and the integer type the others name (refused: other
    /// modifiers, `.sat`, other types).
    fn carry_mods(node: &SyntaxNode, mods: &[String]) -> Result<(bool, Ty), LowerError> {
        let carry_out = mods.iter().any(|m| m == ".cc");
        let rest: Vec<&String> = mods.iter().filter(|m| *m != ".cc").collect();
        let ty = match rest.as_slice() {
            [t] => Ty::lowered(t),
            _ => None,
        };
        match ty {
            Some(ty @ (Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64)) => Ok((carry_out, ty)),
            _ => Err(unsupported(
                node,
                "this add/sub form with carry (modifiers or type)",
            )),
        }
    }

    /// `d = a ± b [+ CF]` over `words` words, the carry out of the last word into the flag
    /// when `carry_out`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_words(
        &mut self,
        d: Reg,
        a: Reg,
        b: Reg,
        words: u8,
        is_sub: bool,
        carry_in: bool,
        carry_out: bool,
    ) {
        let flag = (carry_in || carry_out).then(|| self.carry_flag());
        let mut carry: Option<Reg> = if carry_in { flag } else { None };
        for k in 0..words {
            let last = k + 1 == words;
            let out = if last {
                carry_out.then(|| flag.expect("made above"))
            } else {
                Some(Reg::v(self.ptmp(), 1))
            };
            let mut operands = vec![Operand::r(sub(d, k))];
            let mut defs = vec![0];
            if let Some(p) = out {
                operands.push(Operand::r(p));
                defs.push(1);
            }
            operands.push(Operand::r(sub(a, k)));
            match carry {
                // The first word of a chain without a carry in: `-b` is `~b + 1`.
                None => {
                    operands.push(if is_sub {
                        Operand::neg(sub(b, k))
                    } else {
                        Operand::r(sub(b, k))
                    });
                    operands.push(Operand::rz());
                    self.push(Inst::new(op!("IADD3"), operands, defs));
                }
                Some(cin) => {
                    operands.push(if is_sub {
                        Operand::not(sub(b, k))
                    } else {
                        Operand::r(sub(b, k))
                    });
                    operands.push(Operand::rz());
                    operands.push(Operand::r(cin));
                    operands.push(Operand::not(Reg::Zero(Class::P)));
                    self.push(Inst::new(op!("IADD3.X"), operands, defs));
                }
            }
            carry = out;
        }
    }
}
