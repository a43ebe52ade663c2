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
//! and `.relaxed` need nothing more (ptxas writes no fence); an arrival `.release.cluster`
//! follows `MEMBAR.ALL.CTA; MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR`, a wait `.acquire.cluster` is
//! followed by `@P CCTL.IVALL` (ptxas's sequences). Refused, each with its reason: the objects
//! of sm_80 (plain shared words and `ATOMS.ARRIVE.64`), `.shared::cluster` or generic
//! addresses (another CTA's barrier), `.noComplete`, `pending_count` (its value is the
//! hardware's encoding of a state, unconfirmed without a GPU).

use super::*;

/// Where an mbarrier object is: a shared variable (offset in the CTA's window) or a register
/// holding a shared-window address, each plus a byte offset.
pub(crate) enum ObjectAddr {
    Var(u32),
    Reg(Reg, i32),
}

/// The operation, parsed from the modifiers.
#[derive(PartialEq, Eq)]
pub(crate) enum Kind {
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
        let mut kind = None;
        let mut no_complete = false;
        let (mut expect_tx, mut parity, mut shared) = (false, false, false);
        let (mut cluster, mut relaxed) = (false, false);
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
                ".b64" | ".cta" | ".release" | ".acquire" => {}
                ".relaxed" => relaxed = true,
                ".noComplete" => no_complete = true,
                ".cluster" => cluster = true,
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
        if !self.target.forms.mbarrier_syncs {
            return self.mbarrier_words(node, kind, no_complete, ops);
        }
        if no_complete {
            return Err(unsupported(
                node,
                "mbarrier .noComplete on sm_90 (ptxas's SYNCS.ARRIVE.TRANS64.TMASK forms are not built)",
            ));
        }
        match kind {
            Kind::Init => {
                Self::need(node, ops, 2)?;
                let at = self.object_addr(&ops[0])?;
                self.mbarrier_init(at, &ops[1])
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
                if cluster && !relaxed {
                    // `.release.cluster` (ptxas): the CTA's and the GPU's memory operations
                    // before it complete first.
                    for op in [
                        op!("MEMBAR.ALL.CTA"),
                        op!("MEMBAR.ALL.GPU"),
                        op!("ERRBAR"),
                        op!("CGAERRBAR"),
                    ] {
                        self.push(Inst::new(op, vec![], vec![]));
                    }
                }
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
                let phase = self.wait_phase(&ops[2], parity)?;
                let mem = self.object_mem(&at);
                let op = if try_wait {
                    op!("SYNCS.PHASECHK.TRANS64.TRYWAIT")
                } else {
                    op!("SYNCS.PHASECHK.TRANS64")
                };
                if cluster && !relaxed && self.guard.is_some() {
                    return Err(unsupported(
                        node,
                        "a guarded mbarrier wait with .acquire.cluster",
                    ));
                }
                self.push(Inst::new(
                    op,
                    vec![Operand::r(p), mem, Operand::r(phase)],
                    vec![0],
                ));
                if cluster && !relaxed {
                    // `.acquire.cluster` (ptxas): where the phase is complete, the
                    // non-coherent L1 lines are dropped so later loads see other CTAs' data.
                    let mut iv = Inst::new(op!("CCTL.IVALL"), vec![], vec![]);
                    iv.guard = Some(Guard {
                        pred: p,
                        negated: false,
                    });
                    self.push(iv);
                }
                Ok(())
            }
        }
    }

    /// The word a phase test compares bit 31 of with the object's phase (on sm_90 bit 63, on
    /// sm_80 bit 31 of the high word): a state's high word, or `parity << 31`.
    pub(crate) fn wait_phase(&mut self, o: &ast::Operand, parity: bool) -> Result<Reg, LowerError> {
        if !parity {
            return Ok(sub(self.reg_src(o, 2)?, 1));
        }
        let t = Reg::v(self.tmp(1), 1);
        match self.src(o)? {
            Src::Imm(v) => self.mov_imm(t, ((v & 1) as u32) << 31),
            _ => {
                let r = self.reg_src(o, 1)?;
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
        Ok(t)
    }

    /// The object of an address operand `[var+o]` or `[reg+o]`.
    pub(crate) fn object_addr(&self, o: &ast::Operand) -> Result<ObjectAddr, LowerError> {
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
    fn mbarrier_init(&mut self, at: ObjectAddr, count: &ast::Operand) -> Result<(), LowerError> {
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
            Src::Imm(n) => Err(n as u32),
            _ => Ok(self.reg_src(count, 1)?),
        };
        self.one_lane_at_a_time(|cx, elected| {
            let mem = cx.uniform_object(&at, elected);
            match count_reg {
                Err(n) => {
                    let (lo, hi) = words(n);
                    for (k, v) in [(0u8, lo), (1, hi)] {
                        cx.push(Inst::new(
                            op!("UMOV"),
                            vec![Operand::r(Reg::part(value, k)), Operand::Imm(i64::from(v))],
                            vec![0],
                        ));
                    }
                }
                Ok(c) => {
                    let uc = Reg::v(cx.f.new_vreg(Class::UR, 1, ""), 1);
                    cx.push(on_lane(
                        Inst::new(op!("R2UR"), vec![Operand::r(uc), Operand::r(c)], vec![0]),
                        elected,
                    ));
                    let base = Reg::v(cx.f.new_vreg(Class::UR, 1, ""), 1);
                    let mut neg = Operand::r(uc);
                    if let Operand::Reg { neg: n, .. } = &mut neg {
                        *n = true;
                    }
                    cx.push(Inst::new(
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
                        cx.push(Inst::new(
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
            }
            // Unguarded: the uniform operands are the elected lane's.
            cx.push(Inst::new(
                op!("SYNCS.EXCH.64"),
                vec![
                    Operand::r(Reg::Zero(Class::UR)),
                    mem,
                    Operand::r(Reg::v(value, 2)),
                ],
                vec![],
            ));
        });
        if let Some(end) = skip {
            self.start_block(end);
        }
        Ok(())
    }

    /// `cp.async.mbarrier.arrive{.noinc}.shared{::cta}.b64 [a]` (ptxas 13.0.88, sm_90): an
    /// arrival when the thread's earlier `cp.async` copies complete, `ARRIVES.LDGSTSBAR.64`
    /// with a uniform address. `.ARVCNT` (`.noinc`) is that arrival; without `.noinc` PTX
    /// raises the pending count by one first, which ptxas writes as one transaction more
    /// (`SYNCS.ARRIVE.TRANS64.RED.A0T1`) that the copies' completion takes back
    /// (`.TRANSCNT`): the phase waits for the copies and counts no arrival. A register address
    /// goes through the same one-lane loop as `init`.
    pub(crate) fn cp_async_mbarrier_arrive(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let mut noinc = false;
        for m in mods {
            match m.as_str() {
                ".async" | ".mbarrier" | ".arrive" | ".shared" | ".shared::cta" | ".b64" => {}
                ".noinc" => noinc = true,
                other => return Err(unsupported(node, format!("cp.async.mbarrier{other}"))),
            }
        }
        if !mods.iter().any(|m| m == ".shared" || m == ".shared::cta") {
            return Err(unsupported(
                node,
                "cp.async.mbarrier.arrive on a generic address",
            ));
        }
        Self::need(node, ops, 1)?;
        let at = self.object_addr(&ops[0])?;
        if !self.target.forms.mbarrier_syncs {
            return self.cp_async_arrive_words(at, noinc);
        }
        let emit = |cx: &mut Cx, mem: Operand, guard: Option<Reg>| {
            let guarded = |i: Inst| match guard {
                Some(p) => on_lane(i, p),
                None => i,
            };
            if !noinc {
                cx.push(guarded(Inst::new(
                    op!("SYNCS.ARRIVE.TRANS64.RED.A0T1"),
                    vec![Operand::rz(), mem.clone(), Operand::rz()],
                    vec![],
                )));
            }
            let op = if noinc {
                op!("ARRIVES.LDGSTSBAR.64.ARVCNT")
            } else {
                op!("ARRIVES.LDGSTSBAR.64.TRANSCNT")
            };
            cx.push(guarded(Inst::new(op, vec![mem], vec![])));
        };
        if let ObjectAddr::Var(_) = at {
            // Every lane arrives for its own copies (the instruction's guard applies).
            let mem = self.uniform_var_object(&at);
            emit(self, mem, None);
            return Ok(());
        }
        let guard = self.guard.take();
        let skip = guard.map(|g| self.skip_unless(g));
        self.one_lane_at_a_time(|cx, elected| {
            let mem = cx.uniform_object(&at, elected);
            emit(cx, mem, Some(elected));
        });
        if let Some(end) = skip {
            self.start_block(end);
        }
        Ok(())
    }

    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{.L2::cache_hint}
    /// [d], [s], n, [a]{, policy}` (sm_90) as ptxas 13.0.88 writes it: `UBLKCP.S.G [URd],
    /// [URs], URn` with `URd` the shared destination and `URd+1` the barrier, `URs` the
    /// 64-bit global source and `URn = n >> 4` (16 bits), one lane a turn (every operand is
    /// uniform; the copy, a uniform instruction, takes no lane guard). The operand roles are
    /// read from ptxas's code, not from a document (docs/arch/codegen.md). The cache policy, a
    /// hint, is dropped; `.multicast::cluster` and other directions are refused.
    pub(crate) fn cp_async_bulk(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let expected = [
            ".async",
            ".bulk",
            ".shared::cluster",
            ".global",
            ".mbarrier::complete_tx::bytes",
        ];
        let hint = mods.iter().any(|m| m == ".L2::cache_hint");
        let plain: Vec<&str> = mods
            .iter()
            .map(String::as_str)
            .filter(|m| *m != ".L2::cache_hint")
            .collect();
        if plain != expected {
            return Err(unsupported(node, format!("cp{}", mods.concat())));
        }
        if !self.target.forms.mbarrier_syncs {
            return Err(unsupported(node, "cp.async.bulk before sm_90"));
        }
        Self::need(node, ops, if hint { 5 } else { 4 })?;
        let dst = self.object_addr(&ops[0])?;
        let (sname, soff) = self.address_name(&ops[1])?;
        let base = self.global_base(&sname, &ops[1])?;
        let src = if soff == 0 {
            Reg::v(base, 2)
        } else {
            let t = self.tmp(2);
            let k = soff as u64;
            self.add64(
                [Reg::part(t, 0), Reg::part(t, 1)],
                [
                    Operand::r(Reg::part(base, 0)),
                    Operand::r(Reg::part(base, 1)),
                ],
                [
                    Operand::Imm(i64::from(k as u32)),
                    Operand::Imm(i64::from((k >> 32) as u32)),
                ],
            );
            Reg::v(t, 2)
        };
        let size = match self.src(&ops[2])? {
            Src::Imm(n) if n % 16 == 0 && n < 1 << 20 => Err(n as u32),
            Src::Imm(n) => {
                return Err(malformed(
                    ops[2].syntax(),
                    format!("cp.async.bulk copies a multiple of 16 bytes (not {n})"),
                ));
            }
            _ => Ok(self.reg_src(&ops[2], 1)?),
        };
        let bar = self.object_addr(&ops[3])?;
        let guard = self.guard.take();
        let skip = guard.map(|g| self.skip_unless(g));
        self.one_lane_at_a_time(|cx, elected| {
            let d = cx.f.new_vreg(Class::UR, 2, "");
            cx.uniform_into(Reg::part(d, 0), &dst, elected);
            cx.uniform_into(Reg::part(d, 1), &bar, elected);
            let s = cx.f.new_vreg(Class::UR, 2, "");
            for k in 0..2 {
                cx.push(on_lane(
                    Inst::new(
                        op!("R2UR"),
                        vec![Operand::r(Reg::part(s, k)), Operand::r(sub(src, k))],
                        vec![0],
                    ),
                    elected,
                ));
            }
            let n = Reg::v(cx.f.new_vreg(Class::UR, 1, ""), 1);
            match size {
                Err(v) => cx.push(Inst::new(
                    op!("UMOV"),
                    vec![Operand::r(n), Operand::Imm(i64::from(v >> 4))],
                    vec![0],
                )),
                Ok(r) => {
                    let u = Reg::v(cx.f.new_vreg(Class::UR, 1, ""), 1);
                    cx.push(on_lane(
                        Inst::new(op!("R2UR"), vec![Operand::r(u), Operand::r(r)], vec![0]),
                        elected,
                    ));
                    let q = Reg::v(cx.f.new_vreg(Class::UR, 1, ""), 1);
                    cx.push(Inst::new(
                        op!("USHF.R.U32.HI"),
                        vec![
                            Operand::r(q),
                            Operand::r(Reg::Zero(Class::UR)),
                            Operand::Imm(4),
                            Operand::r(u),
                        ],
                        vec![0],
                    ));
                    cx.push(Inst::new(
                        op!("UPRMT"),
                        vec![
                            Operand::r(n),
                            Operand::r(q),
                            Operand::Imm(0x5410),
                            Operand::r(Reg::Zero(Class::UR)),
                        ],
                        vec![0],
                    ));
                }
            }
            let mut copy = Inst::new(
                op!("UBLKCP.S.G"),
                vec![
                    Operand::Mem {
                        base: Reg::part(d, 0),
                        offset: 0,
                        desc: None,
                    },
                    Operand::Mem {
                        base: Reg::part(s, 0),
                        offset: 0,
                        desc: None,
                    },
                    Operand::r(n),
                ],
                vec![],
            );
            // The pairs' second registers (the barrier, the source's high word) are read too.
            copy.implicit_uses.push(Reg::v(d, 2));
            copy.implicit_uses.push(Reg::v(s, 2));
            cx.push(copy);
        });
        if let Some(end) = skip {
            self.start_block(end);
        }
        Ok(())
    }

    /// `u` = the object's (or any shared) address: a variable's window address (UR6 plus its
    /// offset) or the elected lane's register plus the offset.
    fn uniform_into(&mut self, u: Reg, at: &ObjectAddr, elected: Reg) {
        let (base, offset) = match *at {
            ObjectAddr::Var(off) => {
                self.needs_shared_base = true;
                (shared_base_ur(), off as i32)
            }
            ObjectAddr::Reg(r, offset) => {
                let t = Reg::v(self.f.new_vreg(Class::UR, 1, ""), 1);
                self.push(on_lane(
                    Inst::new(op!("R2UR"), vec![Operand::r(t), Operand::r(r)], vec![0]),
                    elected,
                ));
                (t, offset)
            }
        };
        self.push(Inst::new(
            op!("UIADD3"),
            vec![
                Operand::r(u),
                Operand::r(base),
                Operand::Imm(i64::from(offset)),
                Operand::r(Reg::Zero(Class::UR)),
            ],
            vec![0],
        ));
    }

    /// Runs `body` once per lane of the lanes that reach it, one lane a turn: `ELECT` (before
    /// sm_90 the highest lane here) picks a lane (`body` gets its predicate), the others branch
    /// back for another turn.
    pub(crate) fn one_lane_at_a_time(&mut self, body: impl FnOnce(&mut Cx, Reg)) {
        let head = self.f.new_block();
        self.start_block(head);
        let elected = Reg::v(self.ptmp(), 1);
        if self.target.forms.elect {
            self.push(Inst::new(
                op!("ELECT"),
                vec![
                    Operand::r(elected),
                    Operand::r(Reg::Zero(Class::UR)),
                    Operand::pt(),
                ],
                vec![0],
            ));
        } else {
            // Before sm_90: the highest lane of those here (`VOTE.ANY`, `FLO`) is elected.
            let here = Reg::v(self.tmp(1), 1);
            self.push(Inst::new(
                op!("VOTE.ANY"),
                vec![Operand::r(here), Operand::pt(), Operand::pt()],
                vec![0],
            ));
            let leader = Reg::v(self.tmp(1), 1);
            self.push(Inst::new(
                op!("FLO.U32"),
                vec![Operand::r(leader), Operand::r(here)],
                vec![0],
            ));
            let lane = Reg::v(self.tmp(1), 1);
            self.special(lane, Sreg::S2r("SR_LANEID"));
            self.push(Inst::new(
                op!("ISETP.EQ.U32.AND"),
                vec![
                    Operand::r(elected),
                    Operand::pt(),
                    Operand::r(lane),
                    Operand::r(leader),
                    Operand::pt(),
                ],
                vec![0],
            ));
        }
        body(self, elected);
        let mut back = Inst::new(op!("BRA"), vec![Operand::Label(head)], vec![]);
        back.guard = Some(Guard {
            pred: elected,
            negated: true,
        });
        self.push(back);
        let after = self.f.new_block();
        self.start_block(after);
    }

    /// The object as a uniform address `[UR]` for the instructions that take only uniform
    /// addresses: a variable's is the window base plus its offset; a register's is the
    /// elected lane's value (`R2UR` under `elected`) plus the offset.
    pub(crate) fn uniform_object(&mut self, at: &ObjectAddr, elected: Reg) -> Operand {
        match *at {
            ObjectAddr::Var(_) => self.uniform_var_object(at),
            ObjectAddr::Reg(base, offset) => {
                let u = Reg::v(self.f.new_vreg(Class::UR, 1, ""), 1);
                self.push(on_lane(
                    Inst::new(op!("R2UR"), vec![Operand::r(u), Operand::r(base)], vec![0]),
                    elected,
                ));
                self.uniform_plus(u, offset)
            }
        }
    }

    /// A variable's object as `[UR]`: UR6 plus its offset in a uniform register of its own
    /// (`ARRIVES` has no offset field).
    fn uniform_var_object(&mut self, at: &ObjectAddr) -> Operand {
        let ObjectAddr::Var(off) = *at else {
            unreachable!("a variable's object")
        };
        self.needs_shared_base = true;
        self.uniform_plus(shared_base_ur(), off as i32)
    }

    /// `[u+offset]` as `[u']` with `u' = u + offset` (`UIADD3`) when the offset is not 0.
    fn uniform_plus(&mut self, u: Reg, offset: i32) -> Operand {
        let base = if offset == 0 {
            u
        } else {
            let t = Reg::v(self.f.new_vreg(Class::UR, 1, ""), 1);
            self.push(Inst::new(
                op!("UIADD3"),
                vec![
                    Operand::r(t),
                    Operand::r(u),
                    Operand::Imm(i64::from(offset)),
                    Operand::r(Reg::Zero(Class::UR)),
                ],
                vec![0],
            ));
            t
        };
        Operand::Mem {
            base,
            offset: 0,
            desc: None,
        }
    }
}

/// `i` under lane predicate `p`.
pub(crate) fn on_lane(mut i: Inst, p: Reg) -> Inst {
    i.guard = Some(Guard {
        pred: p,
        negated: false,
    });
    i
}

/// UR6: the shared window base (`Cx::shared_addr`).
fn shared_base_ur() -> Reg {
    Reg::Phys {
        class: Class::UR,
        index: SHARED_BASE_UR,
        width: 1,
    }
}
