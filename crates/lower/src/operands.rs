//! Operands: PTX operands as machine-IR sources and destinations, predicates, copies and the
//! logic-op helpers built on them.

use super::*;

impl Cx {
    /// Resolves a source operand.
    pub(crate) fn src(&self, o: &ast::Operand) -> Result<Src, LowerError> {
        match o {
            ast::Operand::Name(n) => {
                let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
                if let Some(ty) = self.unsupported_regs.get(&name) {
                    return Err(unsupported(n.syntax(), format!("{ty} registers")));
                }
                if self.param_vars.contains_key(&name) {
                    return Err(unsupported(
                        n.syntax(),
                        format!("the address of the .param variable `{name}`"),
                    ));
                }
                if let Some(&at) = self.shared.get(&name) {
                    // The variable's address in the shared window.
                    return Ok(Src::Shared(at));
                }
                if let Some(&at) = self.locals.get(&name) {
                    return Ok(Src::Local(at));
                }
                if let Some((r, ty)) = self.regs.get(&name) {
                    if n.components().next().is_some() {
                        return Err(unsupported(n.syntax(), "vector components"));
                    }
                    return Ok(Src::Reg(*r, ty.words()));
                }
                if let Some(&slot) = self.globals.get(&name) {
                    return Ok(Src::Global(slot));
                }
                if let Some(&at) = self.consts.get(&name) {
                    return Ok(Src::Const(at));
                }
                if name == "WARP_SZ" {
                    return Ok(Src::Imm(32));
                }
                let comp = n.components().next().map(|t| t.text().to_string());
                if comp.is_none()
                    && let Some(r) = rsmem::ReservedReg::from_name(&name)
                {
                    return Ok(Src::Special(Sreg::Reserved(r)));
                }
                let axis = |c: &Option<String>| match c.as_deref() {
                    Some(".x") => Some(0u32),
                    Some(".y") => Some(1),
                    Some(".z") => Some(2),
                    _ => None,
                };
                let s = match (name.as_str(), axis(&comp)) {
                    ("%tid", Some(a)) => {
                        Sreg::S2r(["SR_TID.X", "SR_TID.Y", "SR_TID.Z"][a as usize])
                    }
                    ("%ctaid", Some(a)) => {
                        Sreg::S2r(["SR_CTAID.X", "SR_CTAID.Y", "SR_CTAID.Z"][a as usize])
                    }
                    ("%ntid", Some(a)) => Sreg::Cbank(4 * a),
                    ("%nctaid", Some(a)) => Sreg::Cbank(0xc + 4 * a),
                    ("%laneid", None) => Sreg::S2r("SR_LANEID"),
                    ("%lanemask_eq", None) => Sreg::S2r("SR_EQMASK"),
                    ("%lanemask_lt", None) => Sreg::S2r("SR_LTMASK"),
                    ("%lanemask_le", None) => Sreg::S2r("SR_LEMASK"),
                    ("%lanemask_gt", None) => Sreg::S2r("SR_GTMASK"),
                    ("%lanemask_ge", None) => Sreg::S2r("SR_GEMASK"),
                    ("%clock", None) => Sreg::Clock {
                        wide: false,
                        timer: false,
                    },
                    ("%clock64", None) => Sreg::Clock {
                        wide: true,
                        timer: false,
                    },
                    ("%globaltimer_lo", None) => Sreg::Clock {
                        wide: false,
                        timer: true,
                    },
                    ("%globaltimer", None) => Sreg::Clock {
                        wide: true,
                        timer: true,
                    },
                    (e, None)
                        if let Some(k) = e
                            .strip_prefix("%envreg")
                            .and_then(|k| k.parse::<u32>().ok())
                            .filter(|k| *k < 32) =>
                    {
                        Sreg::Cbank(self.target.driver.envreg0 + 4 * k)
                    }
                    _ => {
                        return Err(unsupported(
                            n.syntax(),
                            format!("operand `{}`", n.syntax().text()),
                        ));
                    }
                };
                Ok(Src::Special(s))
            }
            _ => match o.as_int() {
                Some(v) => Ok(Src::Imm(v)),
                None => match o {
                    ast::Operand::Immediate(l) => match l.value() {
                        Some(LiteralValue::F32Bits(b)) => Ok(Src::Imm(u64::from(b))),
                        Some(LiteralValue::F64Bits(b)) => Ok(Src::Imm(b)),
                        _ => Err(unsupported(o.syntax(), "this literal form")),
                    },
                    _ => Err(unsupported(
                        o.syntax(),
                        format!("operand `{}`", o.syntax().text()),
                    )),
                },
            },
        }
    }

    /// A destination register of `words` words.
    pub(crate) fn dst(&self, o: &ast::Operand, words: u8) -> Result<Reg, LowerError> {
        match self.src(o)? {
            Src::Reg(r, w) if w == words => Ok(Reg::v(r, w)),
            Src::Reg(..) => Err(unsupported(o.syntax(), "operand of another width")),
            _ => Err(malformed(o.syntax(), "destination is not a register")),
        }
    }

    pub(crate) fn pred_dst(&self, o: &ast::Operand) -> Result<Reg, LowerError> {
        match self.src(o)? {
            Src::Reg(r, 1) if self.f.vregs[r].class == Class::P => Ok(Reg::v(r, 1)),
            _ => Err(unsupported(o.syntax(), "predicate destination form")),
        }
    }

    /// A source operand in registers (immediates and special registers are materialized).
    pub(crate) fn reg_src(&mut self, o: &ast::Operand, words: u8) -> Result<Reg, LowerError> {
        match self.src(o)? {
            Src::Reg(r, w) if w == words && self.f.vregs[r].class == Class::R => Ok(Reg::v(r, w)),
            Src::Reg(..) => Err(unsupported(o.syntax(), "operand of another width or class")),
            Src::Imm(v) => {
                let t = self.tmp(words);
                for w in 0..words {
                    let word = (v >> (32 * w)) as u32;
                    self.mov_imm(Reg::part(t, w), word);
                }
                Ok(Reg::v(t, words))
            }
            Src::Shared(at) => {
                let t = self.tmp(words);
                self.shared_addr(Reg::part(t, 0), at);
                if words == 2 {
                    self.mov_imm(Reg::part(t, 1), 0);
                }
                Ok(Reg::v(t, words))
            }
            Src::Local(at) => {
                let t = self.tmp(words);
                self.local_addr(Reg::part(t, 0), at);
                if words == 2 {
                    self.mov_imm(Reg::part(t, 1), 0);
                }
                Ok(Reg::v(t, words))
            }
            Src::Global(slot) => {
                if words != 2 {
                    return Err(unsupported(o.syntax(), "32-bit global addresses"));
                }
                Ok(Reg::v(self.global_addr(slot), 2))
            }
            Src::Const(at) => {
                let t = self.tmp(words);
                self.mov_imm(Reg::part(t, 0), at);
                if words == 2 {
                    self.mov_imm(Reg::part(t, 1), 0);
                }
                Ok(Reg::v(t, words))
            }
            Src::Special(s @ Sreg::Clock { wide: true, .. }) if words == 2 => {
                let t = self.tmp(2);
                self.special(Reg::v(t, 2), s);
                Ok(Reg::v(t, 2))
            }
            Src::Special(s) => {
                if words != 1 || matches!(s, Sreg::Clock { wide: true, .. }) {
                    return Err(unsupported(o.syntax(), "64-bit special registers"));
                }
                let t = self.tmp(1);
                self.special(Reg::v(t, 1), s);
                Ok(Reg::v(t, 1))
            }
        }
    }

    pub(crate) fn pred_src(&self, o: &ast::Operand) -> Result<Operand, LowerError> {
        let (inner, negated) = match o {
            ast::Operand::Prefix(p) if p.op().is_some_and(|t| t.text() == "!") => (
                p.expr()
                    .ok_or_else(|| malformed(o.syntax(), "`!` without operand"))?,
                true,
            ),
            _ => (o.clone(), false),
        };
        match self.src(&inner)? {
            Src::Reg(r, 1) if self.f.vregs[r].class == Class::P => Ok(if negated {
                Operand::not(Reg::v(r, 1))
            } else {
                Operand::r(Reg::v(r, 1))
            }),
            // A literal (`xor.pred %p, %q, -1`): 0 is false, anything else true.
            Src::Imm(v) => Ok(if (v != 0) != negated {
                Operand::pt()
            } else {
                Operand::not(Reg::Zero(Class::P))
            }),
            _ => Err(unsupported(o.syntax(), "predicate operand form")),
        }
    }

    /// The width in words of a register operand, if it is one.
    pub(crate) fn reg_width(&self, o: &ast::Operand) -> Option<u8> {
        match self.src(o).ok()? {
            Src::Reg(_, w) => Some(w),
            _ => None,
        }
    }

    /// Writes the high word of the 64-bit `d` from its low word: sign or zero extension.
    pub(crate) fn extend_high(&mut self, d: Reg, signed: bool) {
        if signed {
            let s = self.tmp(1);
            self.mov_imm(Reg::v(s, 1), 31);
            self.push(Inst::new(
                "SHF.R.S32.HI",
                vec![
                    Operand::r(sub(d, 1)),
                    Operand::rz(),
                    Operand::r(Reg::v(s, 1)),
                    Operand::r(sub(d, 0)),
                ],
                vec![0],
            ));
        } else {
            self.mov_imm(sub(d, 1), 0);
        }
    }

    pub(crate) fn copy(
        &mut self,
        node: &SyntaxNode,
        d: Reg,
        src: &ast::Operand,
        w: u8,
    ) -> Result<(), LowerError> {
        match self.src(src)? {
            Src::Reg(r, sw) if sw == w && self.f.vregs[r].class == Class::R => {
                for k in 0..w {
                    self.push(Inst::new(
                        "MOV",
                        vec![Operand::r(sub(d, k)), Operand::r(Reg::part(r, k))],
                        vec![0],
                    ));
                }
                Ok(())
            }
            Src::Reg(..) => Err(unsupported(
                node,
                "mov between registers of different widths",
            )),
            Src::Imm(v) => {
                for k in 0..w {
                    self.mov_imm(sub(d, k), (v >> (32 * k)) as u32);
                }
                Ok(())
            }
            Src::Special(s @ Sreg::Clock { wide: true, .. }) if w == 2 => {
                self.special(d, s);
                Ok(())
            }
            Src::Special(Sreg::Clock { wide: true, .. }) => Err(unsupported(
                node,
                "a 64-bit clock (%clock64, %globaltimer) into a 32-bit register",
            )),
            Src::Special(s) if w == 1 => {
                self.special(d, s);
                Ok(())
            }
            Src::Shared(at) => {
                self.shared_addr(sub(d, 0), at);
                if w == 2 {
                    self.mov_imm(sub(d, 1), 0);
                }
                Ok(())
            }
            Src::Local(at) => {
                self.local_addr(sub(d, 0), at);
                if w == 2 {
                    self.mov_imm(sub(d, 1), 0);
                }
                Ok(())
            }
            Src::Global(slot) if w == 2 => {
                self.const_load_in(Operand::r(d), modvar::ADDRESS_TABLE_BANK, 8 * slot, 2);
                Ok(())
            }
            Src::Global(_) => Err(unsupported(node, "32-bit global addresses")),
            Src::Const(at) => {
                self.mov_imm(sub(d, 0), at);
                if w == 2 {
                    self.mov_imm(sub(d, 1), 0);
                }
                Ok(())
            }
            Src::Special(_) => Err(unsupported(node, "64-bit special registers")),
        }
    }

    /// `d = lut(a, b, PT)` on predicates (LUT inputs a = 0xf0, b = 0xcc, c = 0xaa), the
    /// second destination unused (PT, LUT 0).
    pub(crate) fn plop3(&mut self, d: Reg, a: Operand, b: Operand, lut: u32) {
        self.push(Inst::new(
            "PLOP3.LUT",
            vec![
                Operand::r(d),
                Operand::pt(),
                a,
                b,
                Operand::pt(),
                Operand::Hex(lut),
                Operand::Hex(0),
            ],
            vec![0],
        ));
    }

    pub(crate) fn lop3(&mut self, d: Reg, a: Reg, b: Reg, lut: u32) {
        self.push(Inst::new(
            "LOP3.LUT",
            vec![
                Operand::r(d),
                Operand::r(a),
                Operand::r(b),
                Operand::rz(),
                Operand::Hex(lut),
                Operand::not(Reg::Zero(Class::P)),
            ],
            vec![0],
        ));
    }

    pub(crate) fn guarded(&mut self, mut i: Inst, p: Reg) {
        i.guard = Some(Guard {
            pred: p,
            negated: false,
        });
        self.push(i);
    }
}
