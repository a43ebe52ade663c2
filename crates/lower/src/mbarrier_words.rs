//! `mbarrier` before sm_90 (sm_80, sm_86, sm_89), as ptxas 13.0.88 writes it: the object is
//! two plain shared-memory words (`docs/arch/codegen.md`, "mbarrier"):
//!
//! * `init [a], n` → `STS.64 [a], {0x40000000 - n, 0x80000000 - n}`: the low word keeps the
//!   expected arrivals, the high word counts arrivals up towards `0x80000000`, whose carry
//!   flips bit 31, the phase;
//! * `arrive` → `MEMBAR.ALL.CTA; ATOMS.ARRIVE.64 d, [a+URZ]` (the state: the object before);
//!   `arrive_drop` first lowers the expected count, `ATOMS.POPC.INC.32 RZ, [a+URZ]`;
//! * `arrive.noComplete` with a count → `MEMBAR.ALL.CTA; ATOMS.ADD t, [a+4], count` (the state
//!   is the old high word in both halves); `arrive_drop.noComplete` adds the count to the low
//!   word first (ptxas adds one warp-wide sum per address; a lane's own add is the same sum);
//! * `test_wait{.parity}` → `LDS t, [a+4]; LOP3.LUT P, RZ, t, 0x80000000, phase, 0x48, !PT`
//!   with the state's high word or `parity << 31` (the phase has completed when bit 31
//!   differs);
//! * `inval` writes nothing;
//! * `cp.async.mbarrier.arrive.noinc` → `ARRIVES.LDGSTSBAR.64 [UR]`, one lane a turn; without
//!   `.noinc` each lane first raises the pending count, `ATOMS.ADD RZ, [a+4], -1`. ptxas
//!   13.0.88 adds `-popc(active lanes)` once, at the highest lane's address, which is the same
//!   only when every lane names one barrier (it does so for per-thread barriers too:
//!   docs/arch/codegen.md).

use super::mbarrier::{Kind, ObjectAddr, on_lane};
use super::*;

impl Cx {
    pub(crate) fn mbarrier_words(
        &mut self,
        node: &SyntaxNode,
        kind: Kind,
        no_complete: bool,
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        match kind {
            Kind::Init => {
                Self::need(node, ops, 2)?;
                let (base, offset) = self.object_reg(&ops[0])?;
                let value = self.tmp(2);
                let (lo, hi) = (Reg::part(value, 0), Reg::part(value, 1));
                match self.src(&ops[1])? {
                    Src::Imm(n) => {
                        let n = n as u32;
                        self.mov_imm(lo, 0x4000_0000u32.wrapping_sub(n));
                        self.mov_imm(hi, 0x8000_0000u32.wrapping_sub(n));
                    }
                    _ => {
                        let c = self.reg_src(&ops[1], 1)?;
                        for (d, k) in [(lo, 0x4000_0000i64), (hi, -0x8000_0000)] {
                            self.push(Inst::new(
                                op!("IADD3"),
                                vec![Operand::r(d), negated(c), Operand::Imm(k), Operand::rz()],
                                vec![0],
                            ));
                        }
                    }
                }
                self.push(Inst::new(
                    op!("STS.64"),
                    vec![word_mem(base, offset), Operand::r(Reg::v(value, 2))],
                    vec![],
                ));
                Ok(())
            }
            Kind::Inval => {
                Self::need(node, ops, 1)?;
                self.object_reg(&ops[0])?;
                Ok(())
            }
            Kind::Arrive {
                drop,
                expect_tx: false,
            } => {
                let state = match ops.first() {
                    Some(ast::Operand::Name(n)) if n.is_sink() => None,
                    Some(o) => Some(self.dst(o, 2)?),
                    None => return Err(malformed(node, "mbarrier.arrive needs a state")),
                };
                match (ops.len(), no_complete) {
                    (2, false) => {
                        let (base, offset) = self.object_reg(&ops[1])?;
                        self.membar_cta();
                        if drop {
                            self.push(Inst::new(
                                op!("ATOMS.POPC.INC.32"),
                                vec![Operand::rz(), arrive_mem(base, offset)],
                                vec![],
                            ));
                        }
                        let (d, defs) = match state {
                            Some(d) => (d, vec![0]),
                            None => (Reg::Zero(Class::R), vec![]),
                        };
                        self.push(Inst::new(
                            op!("ATOMS.ARRIVE.64"),
                            vec![Operand::r(d), arrive_mem(base, offset)],
                            defs,
                        ));
                        Ok(())
                    }
                    (3, true) => {
                        let (base, offset) = self.object_reg(&ops[1])?;
                        let count = self.reg_src(&ops[2], 1)?;
                        self.membar_cta();
                        if drop {
                            self.push(Inst::new(
                                op!("ATOMS.ADD"),
                                vec![Operand::rz(), word_mem(base, offset), Operand::r(count)],
                                vec![],
                            ));
                        }
                        let old = match state {
                            Some(d) => sub(d, 1),
                            None => Reg::Zero(Class::R),
                        };
                        self.push(Inst::new(
                            op!("ATOMS.ADD"),
                            vec![
                                Operand::r(old),
                                word_mem(base, offset + 4),
                                Operand::r(count),
                            ],
                            if state.is_some() { vec![0] } else { vec![] },
                        ));
                        if let Some(d) = state {
                            self.push(Inst::new(
                                op!("MOV"),
                                vec![Operand::r(sub(d, 0)), Operand::r(old)],
                                vec![0],
                            ));
                        }
                        Ok(())
                    }
                    _ => Err(unsupported(
                        node,
                        "this mbarrier arrival before sm_90 (a count needs .noComplete)",
                    )),
                }
            }
            Kind::Wait {
                try_wait: false,
                parity,
            } => {
                Self::need(node, ops, 3)?;
                let p = self.pred_dst(&ops[0])?;
                let (base, offset) = self.object_reg(&ops[1])?;
                let phase = self.wait_phase(&ops[2], parity)?;
                let now = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    op!("LDS"),
                    vec![Operand::r(now), word_mem(base, offset + 4)],
                    vec![0],
                ));
                self.push(Inst::new(
                    op!("LOP3.LUT"),
                    vec![
                        Operand::r(p),
                        Operand::rz(),
                        Operand::r(now),
                        Operand::Imm(0x8000_0000),
                        Operand::r(phase),
                        Operand::Hex(0x48),
                        Operand::not(Reg::Zero(Class::P)),
                    ],
                    vec![0],
                ));
                Ok(())
            }
            _ => Err(unsupported(node, "this mbarrier form before sm_90")),
        }
    }

    /// `cp.async.mbarrier.arrive{.noinc}` before sm_90 (see the module comment).
    pub(crate) fn cp_async_arrive_words(
        &mut self,
        at: ObjectAddr,
        noinc: bool,
    ) -> Result<(), LowerError> {
        let (base, offset) = self.object_reg_of(at);
        if !noinc {
            let minus_one = Reg::v(self.tmp(1), 1);
            self.mov_imm(minus_one, u32::MAX);
            self.push(Inst::new(
                op!("ATOMS.ADD"),
                vec![
                    Operand::rz(),
                    word_mem(base, offset + 4),
                    Operand::r(minus_one),
                ],
                vec![],
            ));
        }
        let guard = self.guard.take();
        let skip = guard.map(|g| self.skip_unless(g));
        let at = ObjectAddr::Reg(base, offset);
        self.one_lane_at_a_time(|cx, elected| {
            let mem = cx.uniform_object(&at, elected);
            cx.push(on_lane(
                Inst::new(op!("ARRIVES.LDGSTSBAR.64"), vec![mem], vec![]),
                elected,
            ));
        });
        if let Some(end) = skip {
            self.start_block(end);
        }
        Ok(())
    }

    /// The object's address in a register plus an offset (a variable's window offset moved
    /// into one: before sm_90 it is the address itself).
    fn object_reg(&mut self, o: &ast::Operand) -> Result<(Reg, i32), LowerError> {
        let at = self.object_addr(o)?;
        Ok(self.object_reg_of(at))
    }

    fn object_reg_of(&mut self, at: ObjectAddr) -> (Reg, i32) {
        match at {
            ObjectAddr::Var(at) => {
                let t = Reg::v(self.tmp(1), 1);
                self.shared_addr(t, at);
                (t, 0)
            }
            ObjectAddr::Reg(base, offset) => (base, offset),
        }
    }

    fn membar_cta(&mut self) {
        self.push(Inst::new(op!("MEMBAR.ALL.CTA"), vec![], vec![]));
    }
}

/// `[base+o]`: a word of the object (`STS`, `LDS`, `ATOMS.ADD`).
fn word_mem(base: Reg, offset: i32) -> Operand {
    Operand::Mem {
        base,
        offset,
        desc: None,
    }
}

/// `[base+URZ+o]`: the object for `ATOMS.ARRIVE.64` and `ATOMS.POPC.INC.32` (ptxas's form).
fn arrive_mem(base: Reg, offset: i32) -> Operand {
    Operand::MemUr {
        base,
        ur: Reg::Zero(Class::UR),
        offset,
    }
}

fn negated(r: Reg) -> Operand {
    let mut o = Operand::r(r);
    if let Operand::Reg { neg, .. } = &mut o {
        *neg = true;
    }
    o
}
