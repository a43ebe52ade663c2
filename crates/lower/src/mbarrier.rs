//! `mbarrier` (PTX ISA 9.0 section 9.7.13.15) on sm_90, as ptxas 13.0.88 writes it
//! (`test-data/sass-probe/ptx/probe_mbarrier.sm_90.ptx`, `docs/arch/codegen.md`, "mbarrier"):
//!
//! * `init [a], n` → `SYNCS.EXCH.64 URZ, [UR+o], URv` with `URv = (0x100000 - n) << 1` and
//!   `URv+1 = (0x100000 - n) << 11`. The instruction takes only uniform operands: for a
//!   shared variable's address and a literal count they are the shared window base (UR6)
//!   and two `UMOV`s; otherwise an `ELECT` loop hands the lanes one at a time to `R2UR`s of
//!   their address and count (ptxas loops over the distinct addresses with `R2UR P, UR, R`
//!   and `BRA.U.ANY`; one lane per turn gives the same stores). The exchange is a uniform
//!   instruction, run once for the lanes that reach it and never under a lane guard: a
//!   guarded init branches around it;
//! * `arrive{_drop}[.expect_tx] state|_, [a]{, count|tx}` →
//!   `SYNCS.ARRIVE.TRANS64[.OPTOUT].{A1T0|ART0|}` (no suffix: one arrival plus `tx` bytes),
//!   the state in a register pair (RZ for `_`);
//! * `expect_tx`/`complete_tx [a], tx` → `SYNCS.ARRIVE.TRANS64.RED.A0TR`/`.A0TX RZ, [a], tx`;
//! * `test_wait`/`try_wait p, [a], state` → `SYNCS.PHASECHK.TRANS64[.TRYWAIT] P, [a], hi(state)`;
//!   `.parity` forms compare with `parity << 31`. `try_wait`'s time hint is dropped (ptxas's
//!   code for it is a never-executed `@!PT NANOSLEEP.SYNCS`): a try may return false sooner;
//! * `inval [a]` → `SYNCS.CCTL.IV [a]`.
//!
//! Other addresses than a shared variable are `[R+URZ+o]`. `.release`/`.acquire` at CTA scope
//! need nothing more (ptxas writes no fence). Refused, each with its reason: the objects of
//! sm_80 (plain shared words and `ATOMS.ARRIVE.64`), `.cluster` scope and `.shared::cluster`
//! or generic addresses, `.noComplete`, `pending_count` (its value is the hardware's encoding
//! of a state, unconfirmed without a GPU).

use super::*;

/// Where an mbarrier object is: a shared variable (offset in the CTA's window) or a register
/// holding a shared-window address, each plus a byte offset.
enum ObjectAddr {
    Var(u32),
    Reg(Reg, i32),
}

/// The operation, parsed from the modifiers.
#[derive(PartialEq, Eq)]
enum Kind {
    Init,
    Arrive { drop: bool, expect_tx: bool },
    ExpectTx,
    CompleteTx,
    Wait { try_wait: bool, parity: bool },
    Inval,
}

impl Cx {
    pub(crate) fn mbarrier(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        if !self.target.forms.mbarrier_syncs {
            return Err(unsupported(
                node,
                "mbarrier before sm_90 (ptxas's objects there are shared-memory words updated \
                 by ATOMS.ARRIVE.64, not built)",
            ));
        }
        let mut kind = None;
        let (mut expect_tx, mut parity, mut shared) = (false, false, false);
        for m in mods {
            match m.as_str() {
                ".init" => kind = Some(Kind::Init),
                ".arrive" | ".arrive_drop" => {
                    kind = Some(Kind::Arrive {
                        drop: m == ".arrive_drop",
                        expect_tx: false,
                    })
                }
                ".expect_tx" => expect_tx = true,
                ".complete_tx" => kind = Some(Kind::CompleteTx),
                ".test_wait" | ".try_wait" => {
                    kind = Some(Kind::Wait {
                        try_wait: m == ".try_wait",
                        parity: false,
                    })
                }
                ".parity" => parity = true,
                ".inval" => kind = Some(Kind::Inval),
                ".shared" | ".shared::cta" => shared = true,
                ".b64" | ".cta" | ".release" | ".acquire" | ".relaxed" => {}
                ".cluster" => {
                    return Err(unsupported(node, "mbarrier with .cluster scope"));
                }
                ".shared::cluster" => {
                    return Err(unsupported(node, "mbarrier on a .shared::cluster address"));
                }
                other => return Err(unsupported(node, format!("mbarrier{other}"))),
            }
        }
        let kind = match (kind, expect_tx, parity) {
            (Some(Kind::Arrive { drop, .. }), e, false) => Kind::Arrive { drop, expect_tx: e },
            (None, true, false) => Kind::ExpectTx,
            (Some(Kind::Wait { try_wait, .. }), false, p) => Kind::Wait {
                try_wait,
                parity: p,
            },
            (Some(k), false, false) => k,
            _ => return Err(unsupported(node, format!("mbarrier{}", mods.concat()))),
        };
        if !shared {
            return Err(unsupported(node, "mbarrier on a generic address"));
        }
        match kind {
            Kind::Init => {
                Self::need(node, ops, 2)?;
                let at = self.object_addr(&ops[0])?;
                self.mbarrier_init(node, at, &ops[1])
            }
            Kind::Inval => {
                Self::need(node, ops, 1)?;
                let at = self.object_addr(&ops[0])?;
                let mem = self.object_mem(&at);
                self.push(Inst::new(op!("SYNCS.CCTL.IV"), vec![mem], vec![]));
                Ok(())
            }
            Kind::ExpectTx | Kind::CompleteTx => {
                Self::need(node, ops, 2)?;
                let at = self.object_addr(&ops[0])?;
                let tx = self.reg_src(&ops[1], 1)?;
                let mem = self.object_mem(&at);
                let op = if kind == Kind::ExpectTx {
                    op!("SYNCS.ARRIVE.TRANS64.RED.A0TR")
                } else {
                    op!("SYNCS.ARRIVE.TRANS64.RED.A0TX")
                };
                self.push(Inst::new(
                    op,
                    vec![Operand::rz(), mem, Operand::r(tx)],
                    vec![],
                ));
                Ok(())
            }
            Kind::Arrive { drop, expect_tx } => {
                if ops.len() != 2 && ops.len() != 3 {
                    Self::need(node, ops, 3)?;
                }
                if expect_tx && ops.len() != 3 {
                    return Err(malformed(node, "arrive.expect_tx takes a byte count"));
                }
                let state = match &ops[0] {
                    ast::Operand::Name(n) if n.is_sink() => None,
                    o => Some(self.dst(o, 2)?),
                };
                let at = self.object_addr(&ops[1])?;
                let operand = match ops.get(2) {
                    Some(o) => Operand::r(self.reg_src(o, 1)?),
                    None => Operand::rz(),
                };
                let mem = self.object_mem(&at);
                let op = match (drop, expect_tx, ops.len() == 3) {
                    (false, true, _) => op!("SYNCS.ARRIVE.TRANS64"),
                    (true, true, _) => op!("SYNCS.ARRIVE.TRANS64.OPTOUT"),
                    (false, false, true) => op!("SYNCS.ARRIVE.TRANS64.ART0"),
                    (true, false, true) => op!("SYNCS.ARRIVE.TRANS64.OPTOUT.ART0"),
                    (false, false, false) => op!("SYNCS.ARRIVE.TRANS64.A1T0"),
                    (true, false, false) => op!("SYNCS.ARRIVE.TRANS64.OPTOUT.A1T0"),
                };
                let (d, defs) = match state {
                    Some(d) => (d, vec![0]),
                    None => (Reg::Zero(Class::R), vec![]),
                };
                self.push(Inst::new(op, vec![Operand::r(d), mem, operand], defs));
                Ok(())
            }
            Kind::Wait { try_wait, parity } => {
                // try_wait's optional suspend-time hint is the fourth operand.
                if ops.len() != 3 && !(try_wait && ops.len() == 4) {
                    Self::need(node, ops, 3)?;
                }
                let p = self.pred_dst(&ops[0])?;
                let at = self.object_addr(&ops[1])?;
                let phase = if parity {
                    let t = Reg::v(self.tmp(1), 1);
                    match self.src(&ops[2])? {
                        Src::Imm(v) => self.mov_imm(t, ((v & 1) as u32) << 31),
                        _ => {
                            let r = self.reg_src(&ops[2], 1)?;
                            self.push(Inst::new(
                                op!("SHF.L.U32"),
                                vec![
                                    Operand::r(t),
                                    Operand::r(r),
                                    Operand::Imm(0x1f),
                                    Operand::rz(),
                                ],
                                vec![0],
                            ));
                        }
                    }
                    t
                } else {
                    // The phase is the state's bit 63: its high word.
                    sub(self.reg_src(&ops[2], 2)?, 1)
                };
                let mem = self.object_mem(&at);
                let op = if try_wait {
                    op!("SYNCS.PHASECHK.TRANS64.TRYWAIT")
                } else {
                    op!("SYNCS.PHASECHK.TRANS64")
                };
                self.push(Inst::new(
                    op,
                    vec![Operand::r(p), mem, Operand::r(phase)],
                    vec![0],
                ));
                Ok(())
            }
        }
    }

    /// The object of an address operand `[var+o]` or `[reg+o]`.
    fn object_addr(&self, o: &ast::Operand) -> Result<ObjectAddr, LowerError> {
        let (name, off) = self.address_name(o)?;
        let offset = i32::try_from(off)
            .ok()
            .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
            .ok_or_else(|| unsupported(o.syntax(), "address offset out of range"))?;
        if let Some(&at) = self.shared.get(&name) {
            let at = i64::from(at) + i64::from(offset);
            return u32::try_from(at)
                .map(ObjectAddr::Var)
                .map_err(|_| unsupported(o.syntax(), "address before the shared window"));
        }
        let (r, ty) = *self
            .regs
            .get(&name)
            .ok_or_else(|| unsupported(o.syntax(), format!("address of `{name}`")))?;
        if ty == Ty::Pred || ty == Ty::F32 {
            return Err(unsupported(o.syntax(), "shared address register type"));
        }
        Ok(ObjectAddr::Reg(Reg::part(r, 0), offset))
    }

    /// The memory operand of an object: `[UR6+o]` (the shared window base plus a variable's
    /// offset: ptxas's form) or `[R+URZ+o]`.
    fn object_mem(&mut self, at: &ObjectAddr) -> Operand {
        match *at {
            ObjectAddr::Var(at) => {
                self.needs_shared_base = true;
                Operand::Mem {
                    base: shared_base_ur(),
                    offset: at as i32,
                    desc: None,
                }
            }
            ObjectAddr::Reg(base, offset) => Operand::MemUr {
                base,
                ur: Reg::Zero(Class::UR),
                offset,
            },
        }
    }

    /// `mbarrier.init`: `SYNCS.EXCH.64` of ptxas's initial words, all operands uniform.
    fn mbarrier_init(
        &mut self,
        node: &SyntaxNode,
        at: ObjectAddr,
        count: &ast::Operand,
    ) -> Result<(), LowerError> {
        let value = self.f.new_vreg(Class::UR, 2, "");
        let words = |n: u32| {
            let base = 0x10_0000u32.wrapping_sub(n);
            (base << 1, base << 11)
        };
        // The exchange runs on the uniform datapath, once for the lanes that reach it: it
        // takes no lane guard, so a guarded init branches around it.
        let guard = self.guard.take();
        let skip = guard.map(|g| self.skip_unless(g));
        if let (ObjectAddr::Var(_), Src::Imm(n)) = (&at, self.src(count)?) {
            let (lo, hi) = words(n as u32);
            for (k, v) in [(0u8, lo), (1, hi)] {
                self.push(Inst::new(
                    op!("UMOV"),
                    vec![Operand::r(Reg::part(value, k)), Operand::Imm(i64::from(v))],
                    vec![0],
                ));
            }
            let mem = self.object_mem(&at);
            self.push(Inst::new(
                op!("SYNCS.EXCH.64"),
                vec![
                    Operand::r(Reg::Zero(Class::UR)),
                    mem,
                    Operand::r(Reg::v(value, 2)),
                ],
                vec![],
            ));
            if let Some(end) = skip {
                self.start_block(end);
            }
            return Ok(());
        }
        // One lane a turn: the elected lane's address and count in uniform registers.
        let count_reg = match self.src(count)? {
            Src::Imm(_) => None,
            _ => Some(self.reg_src(count, 1)?),
        };
        let imm = match self.src(count)? {
            Src::Imm(n) => Some(n as u32),
            _ => None,
        };
        let head = self.f.new_block();
        self.start_block(head);
        let elected = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            op!("ELECT"),
            vec![
                Operand::r(elected),
                Operand::r(Reg::Zero(Class::UR)),
                Operand::pt(),
            ],
            vec![0],
        ));
        let on_elected = |mut i: Inst| {
            i.guard = Some(Guard {
                pred: elected,
                negated: false,
            });
            i
        };
        let mem = match at {
            ObjectAddr::Var(_) => self.object_mem(&at),
            ObjectAddr::Reg(base, offset) => {
                let u = Reg::v(self.f.new_vreg(Class::UR, 1, ""), 1);
                self.push(on_elected(Inst::new(
                    op!("R2UR"),
                    vec![Operand::r(u), Operand::r(base)],
                    vec![0],
                )));
                Operand::Mem {
                    base: u,
                    offset,
                    desc: None,
                }
            }
        };
        match (imm, count_reg) {
            (Some(n), _) => {
                let (lo, hi) = words(n);
                for (k, v) in [(0u8, lo), (1, hi)] {
                    self.push(Inst::new(
                        op!("UMOV"),
                        vec![Operand::r(Reg::part(value, k)), Operand::Imm(i64::from(v))],
                        vec![0],
                    ));
                }
            }
            (None, Some(c)) => {
                let uc = Reg::v(self.f.new_vreg(Class::UR, 1, ""), 1);
                self.push(on_elected(Inst::new(
                    op!("R2UR"),
                    vec![Operand::r(uc), Operand::r(c)],
                    vec![0],
                )));
                let base = Reg::v(self.f.new_vreg(Class::UR, 1, ""), 1);
                let mut neg = Operand::r(uc);
                if let Operand::Reg { neg: n, .. } = &mut neg {
                    *n = true;
                }
                self.push(Inst::new(
                    op!("UIADD3"),
                    vec![
                        Operand::r(base),
                        neg,
                        Operand::Imm(0x10_0000),
                        Operand::r(Reg::Zero(Class::UR)),
                    ],
                    vec![0],
                ));
                for (k, shift) in [(1u8, 0xb), (0, 0x1)] {
                    self.push(Inst::new(
                        op!("USHF.L.U32"),
                        vec![
                            Operand::r(Reg::part(value, k)),
                            Operand::r(base),
                            Operand::Imm(shift),
                            Operand::r(Reg::Zero(Class::UR)),
                        ],
                        vec![0],
                    ));
                }
            }
            (None, None) => return Err(unsupported(node, "this mbarrier.init count")),
        }
        // Unguarded: the uniform operands are the elected lane's.
        self.push(Inst::new(
            op!("SYNCS.EXCH.64"),
            vec![
                Operand::r(Reg::Zero(Class::UR)),
                mem,
                Operand::r(Reg::v(value, 2)),
            ],
            vec![],
        ));
        let mut back = Inst::new(op!("BRA"), vec![Operand::Label(head)], vec![]);
        back.guard = Some(Guard {
            pred: elected,
            negated: true,
        });
        self.push(back);
        let after = self.f.new_block();
        self.start_block(after);
        if let Some(end) = skip {
            self.start_block(end);
        }
        Ok(())
    }
}

/// UR6: the shared window base (`Cx::shared_addr`).
fn shared_base_ur() -> Reg {
    Reg::Phys {
        class: Class::UR,
        index: SHARED_BASE_UR,
        width: 1,
    }
}
