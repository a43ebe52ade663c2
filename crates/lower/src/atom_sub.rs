//! 16-bit atomics on global, shared and generic addresses: `atom.cas.b16` and `atom.add.noftz.f16`/`.bf16`
//! (and the `red` form of the add). The hardware's atomics work on 32-bit words, so ptxas
//! 13.0.88 writes each as a compare-and-swap loop on the aligned word that holds the half
//! (checked with nvdisasm on sm_90): load the word, build the new word with the half replaced,
//! `ATOMG.E.CAS`/`ATOMS.CAS` it, and go again while the word changed under it. ptxas inserts
//! the half with `PRMT` selectors; kiln with a mask (`LOP3.LUT`, the half's 16 bits at its
//! shift): the same words.
//!
//! * add: `new = word with half(word) + b` (`HADD2`, `HADD2.BF16_V2` on sm_90: rounded to
//!   nearest, subnormals kept as `.noftz` asks); again while the `CAS` did not find `word`.
//! * cas: `expected = word with cmp`, `new = word with val`; again while the `CAS` found the
//!   other half changed (the half itself differing from `cmp` ends it, failed).
//!
//! The result is the half of the last word the `CAS` returned.

use ir::{Guard, Inst, Operand, Reg, VReg, op};
use syntax::SyntaxNode;

use crate::{Cx, LowerError, MemSpace, sass_op};

/// What the loop does to its half.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubWord {
    AddF16,
    AddBf16,
    /// Compare with the first value, swap in the second.
    Cas,
}

impl Cx {
    /// The loop on the word holding the half `mem` addresses (`mem`'s base a 64-bit register
    /// for global memory, a 32-bit one for shared). `b` is the addend or the compared value,
    /// `c` the value swapped in; the result holds the old half in its low 16 bits.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sub_word_atom(
        &mut self,
        node: &SyntaxNode,
        kind: SubWord,
        space: MemSpace,
        strong: &str,
        mem: Operand,
        b: Reg,
        c: Option<Reg>,
        implicit: Vec<Reg>,
    ) -> Result<VReg, LowerError> {
        let Operand::Mem { base, offset, .. } = mem else {
            unreachable!("a memory operand")
        };
        // Global and generic addresses take the same loop (`LD.E`, `ATOM.E.CAS` for a generic
        // one, as ptxas writes it).
        let global = space != MemSpace::Shared;
        let generic = space == MemSpace::Generic;
        let guard = self.guard.take();
        let skip = guard.map(|g| self.skip_unless(g));
        // The word's address: the half's with bit 1 cleared (a half is 2-aligned).
        let lo_addr = Reg::v(self.tmp(1), 1);
        let word = if global {
            let a = self.tmp(2);
            self.add64(
                [Reg::part(a, 0), Reg::part(a, 1)],
                [
                    Operand::r(crate::sub(base, 0)),
                    Operand::r(crate::sub(base, 1)),
                ],
                [
                    Operand::Imm(i64::from(offset)),
                    Operand::Imm(i64::from(offset >> 31)),
                ],
            );
            self.mov(lo_addr, Reg::part(a, 0));
            let w = self.tmp(2);
            self.and_imm(Reg::part(w, 0), Reg::part(a, 0), 0xffff_fffd);
            self.mov(Reg::part(w, 1), Reg::part(a, 1));
            Reg::v(w, 2)
        } else {
            let a = Reg::v(self.tmp(1), 1);
            self.push(Inst::new(
                op!("IADD3"),
                vec![
                    Operand::r(a),
                    Operand::r(base),
                    Operand::Imm(i64::from(offset)),
                    Operand::rz(),
                ],
                vec![0],
            ));
            self.mov(lo_addr, a);
            let w = Reg::v(self.tmp(1), 1);
            self.and_imm(w, a, 0xffff_fffd);
            w
        };
        // The half's shift (0 or 16) and mask.
        let shift = Reg::v(self.tmp(1), 1);
        self.and_imm(shift, lo_addr, 2);
        self.push(Inst::new(
            op!("SHF.L.U32"),
            vec![
                Operand::r(shift),
                Operand::r(shift),
                Operand::Imm(3),
                Operand::rz(),
            ],
            vec![0],
        ));
        let ones = Reg::v(self.tmp(1), 1);
        self.mov_imm(ones, 0xffff);
        let mask = self.shl(ones, shift);
        let (cmp_at, val_at) = match (kind, c) {
            (SubWord::Cas, Some(c)) => (Some(self.shl(b, shift)), Some(self.shl(c, shift))),
            _ => (None, None),
        };
        let mem_word = |w: Reg| Operand::Mem {
            base: if global { crate::sub(w, 0) } else { w },
            offset: 0,
            desc: None,
        };
        let old = self.tmp(1);
        // A plain load, as ptxas's: a stale word only makes the first `CAS` fail.
        let load = if global {
            Inst::new(
                if generic { op!("LD.E") } else { op!("LDG.E") },
                vec![
                    Operand::r(Reg::v(old, 1)),
                    Operand::Mem {
                        base: word,
                        offset: 0,
                        desc: self.target.forms.desc_operand.then(crate::desc_reg),
                    },
                ],
                vec![0],
            )
        } else {
            Inst::new(
                op!("LDS"),
                vec![Operand::r(Reg::v(old, 1)), mem_word(word)],
                vec![0],
            )
        };
        let mut load = load;
        if global && !self.target.forms.desc_operand {
            load.implicit_uses.push(crate::desc_reg());
        }
        self.push(load);
        let head = self.f.new_block();
        self.start_block(head);
        let o = Reg::v(old, 1);
        // The expected and new words, an aligned pair as `CAS` reads them.
        let pair = self.tmp(2);
        let (exp, new) = (Reg::part(pair, 0), Reg::part(pair, 1));
        match kind {
            SubWord::AddF16 | SubWord::AddBf16 => {
                self.mov(exp, o);
                let half = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    op!("SHF.R.U32.HI"),
                    vec![
                        Operand::r(half),
                        Operand::rz(),
                        Operand::r(shift),
                        Operand::r(o),
                    ],
                    vec![0],
                ));
                let sum = Reg::v(self.tmp(1), 1);
                let add = if kind == SubWord::AddBf16 {
                    op!("HADD2.BF16_V2")
                } else {
                    op!("HADD2")
                };
                self.push(Inst::new(
                    add,
                    vec![Operand::r(sum), Operand::r(half), Operand::r(b)],
                    vec![0],
                ));
                let placed = self.shl(sum, shift);
                self.insert_half(new, o, placed, mask);
            }
            SubWord::Cas => {
                let (cmp_at, val_at) = (cmp_at.expect("cas"), val_at.expect("cas"));
                self.insert_half(exp, o, cmp_at, mask);
                self.insert_half(new, o, val_at, mask);
            }
        }
        let got = self.tmp(1);
        let g = Reg::v(got, 1);
        let mut cas = if global {
            let name = if generic { "ATOM" } else { "ATOMG" };
            Inst::new(
                sass_op(node, &format!("{name}.E.CAS.STRONG.{strong}"))?,
                vec![
                    Operand::pt(),
                    Operand::r(g),
                    mem_word(word),
                    Operand::r(exp),
                    Operand::r(new),
                ],
                vec![1],
            )
        } else {
            Inst::new(
                op!("ATOMS.CAS"),
                vec![
                    Operand::r(g),
                    mem_word(word),
                    Operand::r(exp),
                    Operand::r(new),
                ],
                vec![0],
            )
        };
        cas.implicit_uses = implicit;
        cas.implicit_uses.push(Reg::v(pair, 2));
        if global {
            cas.implicit_uses.push(word);
        }
        self.push(cas);
        // Again while the word changed under the loop: for add, any change; for cas, a
        // change of the other half (the compared half's own difference is the answer).
        let again = Reg::v(self.ptmp(), 1);
        let (x, y) = match kind {
            SubWord::Cas => {
                let keep_got = Reg::v(self.tmp(1), 1);
                let keep_exp = Reg::v(self.tmp(1), 1);
                self.lop3(keep_got, g, mask, 0x30);
                self.lop3(keep_exp, exp, mask, 0x30);
                (keep_got, keep_exp)
            }
            _ => (g, exp),
        };
        self.push(Inst::new(
            op!("ISETP.NE.U32.AND"),
            vec![
                Operand::r(again),
                Operand::pt(),
                Operand::r(x),
                Operand::r(y),
                Operand::pt(),
            ],
            vec![0],
        ));
        self.mov(o, g);
        let mut back = Inst::new(op!("BRA"), vec![Operand::Label(head)], vec![]);
        back.guard = Some(Guard {
            pred: again,
            negated: false,
        });
        self.push(back);
        let after = self.f.new_block();
        self.start_block(after);
        let result = self.tmp(1);
        self.push(Inst::new(
            op!("SHF.R.U32.HI"),
            vec![
                Operand::r(Reg::v(result, 1)),
                Operand::rz(),
                Operand::r(shift),
                Operand::r(g),
            ],
            vec![0],
        ));
        if let Some(end) = skip {
            self.start_block(end);
        }
        Ok(result)
    }

    /// `d = a & imm`.
    fn and_imm(&mut self, d: Reg, a: Reg, imm: u32) {
        self.push(Inst::new(
            op!("LOP3.LUT"),
            vec![
                Operand::r(d),
                Operand::r(a),
                Operand::Imm(i64::from(imm)),
                Operand::rz(),
                Operand::Hex(0xc0),
                Operand::not(Reg::Zero(ir::Class::P)),
            ],
            vec![0],
        ));
    }

    /// A fresh register holding `a << s` (`s` a register below 32).
    fn shl(&mut self, a: Reg, s: Reg) -> Reg {
        let d = Reg::v(self.tmp(1), 1);
        self.push(Inst::new(
            op!("SHF.L.U32"),
            vec![Operand::r(d), Operand::r(a), Operand::r(s), Operand::rz()],
            vec![0],
        ));
        d
    }

    /// `d = (word & ~mask) | (placed & mask)`.
    fn insert_half(&mut self, d: Reg, word: Reg, placed: Reg, mask: Reg) {
        self.push(Inst::new(
            op!("LOP3.LUT"),
            vec![
                Operand::r(d),
                Operand::r(word),
                Operand::r(placed),
                Operand::r(mask),
                Operand::Hex(0xd8),
                Operand::not(Reg::Zero(ir::Class::P)),
            ],
            vec![0],
        ));
    }
}
