//! Warp-synchronous instructions: `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`,
//! `activemask`.
//!
//! SASS forms are ptxas 13.0.88's (checked with `nvdisasm -c` on sm_80 and sm_90):
//! * `shfl.sync.MODE.b32 d[|p], a, b, c, mask` → `SHFL.MODE Pd|PT, Rd, Ra, b, c` where `b`
//!   (lane/offset, 5 bits) and `c` (clamp and segment mask, 13 bits) are immediates or
//!   registers and an immediate 0 is printed `RZ`, as ptxas does;
//! * `vote.sync.ballot.b32 d, p, mask` → `VOTE.ANY Rd, PT, p`; `vote.sync.any/all/uni.pred`
//!   → `VOTE.ANY Pd, p` / `VOTE.ALL Pd, p` / `VOTE.EQ Pd, p`;
//! * `activemask.b32 d` → `VOTE.ANY Rd, PT, PT` (the ballot of `true` over the executing
//!   threads; ptxas uses the uniform `VOTEU.ANY` when the result is warp-uniform, kiln has no
//!   uniform datapath yet).
//!
//! Convergence: so that the threads named by the member mask execute the collective
//! together, each `.sync` collective is preceded by `WARPSYNC mask` (`WARPSYNC.ALL` on sm_90
//! for a full mask), which is the meaning PTX gives the member mask. `crates/opt`'s
//! `reconverge` pass removes the whole-warp ones where the warp is known to be converged (it
//! places ptxas's `BSSY`/`BSYNC`); a kernel without any predicated branch cannot diverge, and
//! there every collective's `WARPSYNC` is removed here already ([`Cx::drop_collective_syncs`]).

use ir::{Inst, Mnemonic, Modifier, Opcode, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode};

use crate::{Cx, LowerError, Src, Ty, malformed, sass_op, unsupported};

/// The uniform register a `REDUX` result passes through (UR4–UR5 hold the global memory
/// descriptor, UR6–UR7 the sm_90 shared window base).
const REDUX_UR: u8 = 8;

/// A destination written `d|p` (a value and a predicate, as `shfl.sync` and `match.all.sync`
/// allow) split in two; a plain `d` has no predicate.
fn value_and_predicate(
    node: &SyntaxNode,
    o: &ast::Operand,
) -> Result<(ast::Operand, Option<ast::Operand>), LowerError> {
    Ok(match o {
        ast::Operand::Binary(b) if b.op().is_some_and(|t| t.text() == "|") => (
            b.lhs()
                .ok_or_else(|| malformed(node, "destination of a `d|p` pair"))?,
            b.rhs(),
        ),
        o => (o.clone(), None),
    })
}

impl Cx {
    /// `WARPSYNC` of the whole warp in ptxas's form for the SM (`WARPSYNC.ALL` on sm_90,
    /// `WARPSYNC 0xffffffff` before).
    pub(crate) fn full_warpsync(&self) -> Inst {
        if self.target.forms.warpsync_all {
            Inst::new(op!("WARPSYNC.ALL"), vec![], vec![])
        } else {
            Inst::new(op!("WARPSYNC"), vec![Operand::Hex(u32::MAX)], vec![])
        }
    }

    /// `WARPSYNC` for a collective's member mask (an immediate or a register). Returns the
    /// mask register when the mask is not known to be the full warp.
    ///
    /// A register mask is accepted only where `register_mask` says so: `SHFL` reads only the
    /// lanes it names, but `VOTE` and `REDUX` combine every active thread, and after
    /// `WARPSYNC mask` threads outside the mask may be active too (`vote` masks its result
    /// with the returned register; `redux` refuses).
    pub(crate) fn collective_sync(
        &mut self,
        node: &SyntaxNode,
        mask: &ast::Operand,
        register_mask: bool,
    ) -> Result<Option<Reg>, LowerError> {
        // A register holding -1 where the collective reads it (`mov.u32 %r, -1;` as nvcc
        // writes full masks) is the full mask.
        let known = match self.src(mask)? {
            Src::Imm(v) => Some(v as u32),
            Src::Reg(..) => self.mask_constant(node, mask),
            _ => None,
        };
        let (inst, reg) = match known {
            Some(u32::MAX) => (self.full_warpsync(), None),
            // Another constant (a literal, or a register known to hold one): nvcc writes
            // `mov.u32 %r, 15; shfl.sync.down.b32 ..., %r;` in code that launches exactly the
            // mask's threads, but executed by threads outside the mask too (PTX leaves that
            // undefined) a plain `WARPSYNC 0xf` would wait forever for the mask's threads.
            // Only threads inside the mask synchronize: `@p WARPSYNC m` with
            // p = (m & lanemask_eq) != 0, which for every defined execution is the plain
            // `WARPSYNC m`; the collective then treats the mask as a register mask.
            Some(m) => {
                let r = Reg::v(self.tmp(1), 1);
                self.mov_imm(r, m);
                let eq = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    op!("S2R"),
                    vec![Operand::r(eq), Operand::Special("SR_EQMASK")],
                    vec![0],
                ));
                let p = Reg::v(self.ptmp(), 1);
                self.push(Inst::new(
                    op!("LOP3.LUT"),
                    vec![
                        Operand::r(p),
                        Operand::rz(),
                        Operand::r(eq),
                        Operand::r(r),
                        Operand::rz(),
                        Operand::Hex(0xc0),
                        Operand::not(Reg::Zero(ir::Class::P)),
                    ],
                    vec![0, 1],
                ));
                let mut sync = Inst::new(op!("WARPSYNC"), vec![Operand::r(r)], vec![]);
                sync.guard = Some(ir::Guard {
                    pred: p,
                    negated: false,
                });
                (sync, Some(r))
            }
            None if !register_mask => {
                return Err(unsupported(
                    node,
                    "this warp collective with a member mask other than -1",
                ));
            }
            None => {
                let r = self.reg_src(mask, 1)?;
                (
                    Inst::new(op!("WARPSYNC"), vec![Operand::r(r)], vec![]),
                    Some(r),
                )
            }
        };
        // The guarded form's lane test (S2R, LOP3) goes with its WARPSYNC when the kernel
        // cannot diverge.
        let count = if inst.guard.is_some() { 3 } else { 1 };
        self.push(inst);
        let b = self.cur;
        let end = self.f.blocks[b].insts.len();
        self.collective_syncs.push((b, end - count, count));
        Ok(reg)
    }

    /// The constant the mask register of the collective `node` is known to hold there: the
    /// last write to it earlier in the same straight-line run of statements is an unguarded
    /// `mov` of a literal, or (when that run has no write to it) its only write in the whole
    /// kernel is.
    fn mask_constant(&self, node: &SyntaxNode, mask: &ast::Operand) -> Option<u32> {
        let ast::Operand::Name(n) = mask else {
            return None;
        };
        let name = n.name().map(|t| t.text().to_string())?;
        match local_constant(node, &name) {
            Local::Value(v) => Some(v as u32),
            Local::Unknown => None,
            Local::NoWrite => self.constants.get(&name).map(|v| *v as u32),
        }
    }

    /// An operand of SHFL: an immediate below `limit` (0 as `RZ`) or a register.
    fn shfl_operand(&mut self, o: &ast::Operand, limit: u64) -> Result<Operand, LowerError> {
        match self.src(o)? {
            Src::Imm(0) => Ok(Operand::rz()),
            Src::Imm(v) if v < limit => Ok(Operand::Imm(v as i64)),
            Src::Imm(_) => Err(unsupported(
                o.syntax(),
                "shfl lane or clamp immediate out of range",
            )),
            _ => Ok(Operand::r(self.reg_src(o, 1)?)),
        }
    }

    pub(crate) fn shfl(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let has = |m: &str| mods.iter().any(|x| x == m);
        if !has(".sync") || ops.len() != 5 {
            return Err(unsupported(node, "shfl without .sync"));
        }
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated shfl.sync"));
        }
        let mode = [".up", ".down", ".bfly", ".idx"]
            .into_iter()
            .find(|m| has(m))
            .ok_or_else(|| malformed(node, "shfl without a mode"))?;
        let ty = Self::ty_of(node, mods)?;
        if !matches!(ty, Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32) {
            return Err(unsupported(node, "shfl of this type"));
        }
        // `d|p`: the value and the lane-in-range predicate.
        let (d_op, p_op) = value_and_predicate(node, &ops[0])?;
        let d = self.dst(&d_op, 1)?;
        let p = match &p_op {
            Some(p) => Operand::r(self.pred_dst(p)?),
            None => Operand::pt(),
        };
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.shfl_operand(&ops[2], 32)?;
        let c = self.shfl_operand(&ops[3], 0x2000)?;
        self.collective_sync(node, &ops[4], true)?;
        let op = sass_op(node, &format!("SHFL.{}", mode[1..].to_ascii_uppercase()))?;
        // Through a temporary when the result overwrites a source (the SHFL reads all lanes'
        // `a` as it writes `d`; a fresh destination keeps the IR free of such overlaps).
        let t = self.tmp(1);
        self.push(Inst::new(
            op,
            vec![p, Operand::r(Reg::v(t, 1)), Operand::r(a), b, c],
            vec![0, 1],
        ));
        self.copy_words(d, t, 1);
        Ok(())
    }

    /// `match.any.sync.b32/.b64 d, a, mask` → `MATCH.ANY Rd, Ra` / `MATCH.ANY.U64 Rd, Ra`;
    /// `match.all.sync.b32/.b64 d[|p], a, mask` → `MATCH.ALL Pd, Rd, Ra` (ptxas's forms). With
    /// a member mask that may leave out executing threads, the hardware's answer over the
    /// executing threads is narrowed to the mask: `.any` keeps the mask's bits, `.all` holds
    /// when every thread of the mask has the value (`(MATCH.ANY & m) == m`) and then is `m`.
    pub(crate) fn match_sync(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let has = |m: &str| mods.iter().any(|x| x == m);
        if !has(".sync") || ops.len() != 3 {
            return Err(malformed(node, "match takes .sync and 3 operands"));
        }
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated match.sync"));
        }
        let all = if has(".all") {
            true
        } else if has(".any") {
            false
        } else {
            return Err(malformed(node, "match without .any or .all"));
        };
        let w = match Self::ty_of(node, mods)? {
            Ty::B32 => 1,
            Ty::B64 => 2,
            _ => return Err(unsupported(node, "match of this type")),
        };
        let (d_op, p_op) = value_and_predicate(node, &ops[0])?;
        if p_op.is_some() && !all {
            return Err(malformed(node, "match.any has no predicate result"));
        }
        let a = self.reg_src(&ops[1], w)?;
        let mask = self.collective_sync(node, &ops[2], true)?;
        let wide = if w == 2 { ".U64" } else { "" };
        let tv = self.tmp(1);
        let t = Reg::v(tv, 1);
        match (all, mask) {
            (true, None) => {
                let p = Reg::v(self.ptmp(), 1);
                self.push(Inst::new(
                    sass_op(node, &format!("MATCH.ALL{wide}"))?,
                    vec![Operand::r(p), Operand::r(t), Operand::r(a)],
                    vec![0, 1],
                ));
                let d = self.dst(&d_op, 1)?;
                self.copy_words(d, tv, 1);
                if let Some(po) = &p_op {
                    let pd = self.pred_dst(po)?;
                    self.plop3(pd, Operand::r(p), Operand::pt(), 0xf0);
                }
            }
            (false, m) => {
                self.push(Inst::new(
                    sass_op(node, &format!("MATCH.ANY{wide}"))?,
                    vec![Operand::r(t), Operand::r(a)],
                    vec![0],
                ));
                let d = self.dst(&d_op, 1)?;
                match m {
                    None => self.copy_words(d, tv, 1),
                    Some(m) => self.lop3(d, t, m, 0xc0),
                }
            }
            (true, Some(m)) => {
                self.push(Inst::new(
                    sass_op(node, &format!("MATCH.ANY{wide}"))?,
                    vec![Operand::r(t), Operand::r(a)],
                    vec![0],
                ));
                let k = Reg::v(self.tmp(1), 1);
                self.lop3(k, t, m, 0xc0);
                let p = Reg::v(self.ptmp(), 1);
                self.push(Inst::new(
                    op!("ISETP.EQ.U32.AND"),
                    vec![
                        Operand::r(p),
                        Operand::pt(),
                        Operand::r(k),
                        Operand::r(m),
                        Operand::pt(),
                    ],
                    vec![0],
                ));
                let d = self.dst(&d_op, 1)?;
                self.push(Inst::new(
                    op!("SEL"),
                    vec![Operand::r(d), Operand::r(m), Operand::rz(), Operand::r(p)],
                    vec![0],
                ));
                if let Some(po) = &p_op {
                    let pd = self.pred_dst(po)?;
                    self.plop3(pd, Operand::r(p), Operand::pt(), 0xf0);
                }
            }
        }
        Ok(())
    }

    pub(crate) fn vote(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let has = |m: &str| mods.iter().any(|x| x == m);
        // `vote` without `.sync` (PTX before 6.4) combines the threads executing it together,
        // which is what VOTE does without a preceding WARPSYNC.
        let sync = has(".sync");
        if ops.len() != if sync { 3 } else { 2 } {
            return Err(malformed(node, "vote takes 3 operands (2 without .sync)"));
        }
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated vote.sync"));
        }
        let src = self.pred_src(&ops[1])?;
        let mode = if has(".ballot") {
            Vote::Ballot
        } else if has(".any") {
            Vote::Any
        } else if has(".all") {
            Vote::All
        } else if has(".uni") {
            Vote::Uni
        } else {
            return Err(unsupported(node, "this vote mode"));
        };
        let d = if mode == Vote::Ballot {
            self.dst(&ops[0], 1)?
        } else {
            self.pred_dst(&ops[0])?
        };
        let mask = if sync {
            self.collective_sync(node, &ops[2], true)?
        } else {
            None
        };
        match mask {
            None => {
                let (op, operands) = match mode {
                    Vote::Ballot => (op!("VOTE.ANY"), vec![Operand::r(d), Operand::pt(), src]),
                    Vote::Any => (op!("VOTE.ANY"), vec![Operand::r(d), src]),
                    Vote::All => (op!("VOTE.ALL"), vec![Operand::r(d), src]),
                    Vote::Uni => (op!("VOTE.EQ"), vec![Operand::r(d), src]),
                };
                self.push(Inst::new(op, operands, vec![0]));
            }
            Some(m) => self.masked_vote(mode, d, src, m),
        }
        Ok(())
    }

    /// `vote.sync` with a member mask `m` that may leave out active threads: every thread
    /// takes the ballot of the active threads and keeps the bits of its own mask, so threads
    /// with different masks executing together each get their own group's answer.
    /// `.any` = (ballot(p) & m) != 0, `.all` = (ballot(!p) & m) == 0 (exited threads vote
    /// neither way), `.uni` = either of the two ballots restricted to `m` is empty.
    fn masked_vote(&mut self, mode: Vote, d: Reg, src: Operand, m: Reg) {
        let negate = |o: &Operand| match o {
            Operand::Reg { reg, not, .. } => {
                if *not {
                    Operand::r(*reg)
                } else {
                    Operand::not(*reg)
                }
            }
            o => o.clone(),
        };
        let masked_ballot = |cx: &mut Self, p: Operand, into: Option<Reg>| -> Reg {
            let t = Reg::v(cx.tmp(1), 1);
            cx.push(Inst::new(
                op!("VOTE.ANY"),
                vec![Operand::r(t), Operand::pt(), p],
                vec![0],
            ));
            let out = into.unwrap_or_else(|| Reg::v(cx.tmp(1), 1));
            cx.lop3(out, t, m, 0xc0);
            out
        };
        let is_zero = |cx: &mut Self, d: Reg, isetp: Opcode, a: Reg, chain: Operand| {
            cx.push(Inst::new(
                isetp,
                vec![
                    Operand::r(d),
                    Operand::pt(),
                    Operand::r(a),
                    Operand::rz(),
                    chain,
                ],
                vec![0],
            ));
        };
        match mode {
            Vote::Ballot => {
                masked_ballot(self, src, Some(d));
            }
            Vote::Any => {
                let t = masked_ballot(self, src, None);
                is_zero(self, d, op!("ISETP.NE.U32.AND"), t, Operand::pt());
            }
            Vote::All => {
                let t = masked_ballot(self, negate(&src), None);
                is_zero(self, d, op!("ISETP.EQ.U32.AND"), t, Operand::pt());
            }
            Vote::Uni => {
                let yes = masked_ballot(self, src.clone(), None);
                let no = masked_ballot(self, negate(&src), None);
                let p = Reg::v(self.ptmp(), 1);
                is_zero(self, p, op!("ISETP.EQ.U32.AND"), yes, Operand::pt());
                self.push(Inst::new(
                    op!("ISETP.EQ.OR"),
                    vec![
                        Operand::r(d),
                        Operand::pt(),
                        Operand::r(no),
                        Operand::rz(),
                        Operand::r(p),
                    ],
                    vec![0],
                ));
            }
        }
    }

    /// `redux.sync.OP.TYPE d, a, mask` → `REDUX.OP URx, a` + `MOV d, URx` (ptxas's forms:
    /// `.SUM.S32`/`.SUM`, `.MIN`/`.MIN.S32`, `.MAX`/`.MAX.S32`, `REDUX` for and, `.OR`,
    /// `.XOR`). The uniform result lives in the fixed scratch register UR8 only until the
    /// `MOV` that follows (kiln allocates no uniform registers yet).
    pub(crate) fn redux(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let has = |m: &str| mods.iter().any(|x| x == m);
        if !has(".sync") || ops.len() != 3 {
            return Err(malformed(node, "redux without .sync"));
        }
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated redux.sync"));
        }
        let ty = Self::ty_of(node, mods)?;
        let signed = ty == Ty::S32;
        let op = match (
            mods.iter()
                .find(|m| {
                    matches!(
                        m.as_str(),
                        ".add" | ".min" | ".max" | ".and" | ".or" | ".xor"
                    )
                })
                .map(String::as_str),
            ty,
        ) {
            (Some(".add"), Ty::S32) => op!("REDUX.SUM.S32"),
            (Some(".add"), Ty::U32) => op!("REDUX.SUM"),
            (Some(".min"), Ty::S32 | Ty::U32) => {
                if signed {
                    op!("REDUX.MIN.S32")
                } else {
                    op!("REDUX.MIN")
                }
            }
            (Some(".max"), Ty::S32 | Ty::U32) => {
                if signed {
                    op!("REDUX.MAX.S32")
                } else {
                    op!("REDUX.MAX")
                }
            }
            (Some(".and"), Ty::B32) => op!("REDUX"),
            (Some(".or"), Ty::B32) => op!("REDUX.OR"),
            (Some(".xor"), Ty::B32) => op!("REDUX.XOR"),
            _ => return Err(unsupported(node, "this redux form")),
        };
        let a = self.reg_src(&ops[1], 1)?;
        let d = self.dst(&ops[0], 1)?;
        if let Some(m) = self.collective_sync(node, &ops[2], true)? {
            self.masked_redux(op, a, d, m);
            return Ok(());
        }
        let ur = Reg::Phys {
            class: ir::Class::UR,
            index: REDUX_UR,
            width: 1,
        };
        self.push(Inst::new(op, vec![Operand::r(ur), Operand::r(a)], vec![0]));
        self.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(d), Operand::r(ur)],
            vec![0],
        ));
        Ok(())
    }

    /// `redux.sync` with a member mask `m` that may leave out active threads. `REDUX`
    /// combines every active thread, so it is used only when no active thread is outside `m`
    /// (ptxas instead runs it under `WARPSYNC.EXCLUSIVE m`). Otherwise each thread combines
    /// the threads of its own mask itself: 32 `SHFL.IDX` steps, each folding lane `k`'s value
    /// in when `k` is a non-exited member. Exited threads of `m` take no part either way.
    ///
    /// ```text
    ///       VOTE.ANY act, PT, PT ; LOP3 out = act & ~m ; ISETP.NE p, out, RZ
    ///   @p  BRA slow
    ///       REDUX.op UR8, a ; MOV d, UR8 ; BRA done
    /// slow: acc = identity ; k = 0 ; live = m & act
    /// loop: bit = (live >> k) & 1 ; @bit SHFL.IDX v, a, k, 0x1f ; @bit acc = op(acc, v)
    ///       k += 1 ; @(k < 32) BRA loop ; MOV d, acc
    /// done:
    /// ```
    fn masked_redux(&mut self, op: Opcode, a: Reg, d: Reg, m: Reg) {
        let r = |cx: &mut Self| Reg::v(cx.tmp(1), 1);
        let act = r(self);
        self.push(Inst::new(
            op!("VOTE.ANY"),
            vec![Operand::r(act), Operand::pt(), Operand::pt()],
            vec![0],
        ));
        let outside = r(self);
        self.lop3(outside, act, m, 0x30);
        let slow_p = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            op!("ISETP.NE.U32.AND"),
            vec![
                Operand::r(slow_p),
                Operand::pt(),
                Operand::r(outside),
                Operand::rz(),
                Operand::pt(),
            ],
            vec![0],
        ));
        let slow = self.f.new_block();
        let lp = self.f.new_block();
        let done = self.f.new_block();
        let fast = self.f.new_block();
        self.guarded(
            Inst::new(op!("BRA"), vec![Operand::Label(slow)], vec![]),
            slow_p,
        );
        self.start_block(fast);
        let ur = Reg::Phys {
            class: ir::Class::UR,
            index: REDUX_UR,
            width: 1,
        };
        self.push(Inst::new(op, vec![Operand::r(ur), Operand::r(a)], vec![0]));
        self.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(d), Operand::r(ur)],
            vec![0],
        ));
        self.push(Inst::new(op!("BRA"), vec![Operand::Label(done)], vec![]));
        self.start_block(slow);
        let live = r(self);
        self.lop3(live, act, m, 0xc0);
        let signed = op.has(ir::modifier!("S32"));
        let (identity, combine): (u32, &str) = if op.has(Modifier::SUM) {
            (0, "IADD3")
        } else if op.has(Modifier::MIN) {
            if signed {
                (i32::MAX as u32, "MIN.S32")
            } else {
                (u32::MAX, "MIN.U32")
            }
        } else if op.has(Modifier::MAX) {
            if signed {
                (i32::MIN as u32, "MAX.S32")
            } else {
                (0, "MAX.U32")
            }
        } else if op.has(Modifier::OR) {
            (0, "OR")
        } else if op.has(Modifier::XOR) {
            (0, "XOR")
        } else {
            (u32::MAX, "AND")
        };
        let acc = r(self);
        self.mov_imm(acc, identity);
        let k = r(self);
        self.mov_imm(k, 0);
        self.start_block(lp);
        let bits = r(self);
        self.push(Inst::new(
            op!("SHF.R.U32.HI"),
            vec![
                Operand::r(bits),
                Operand::rz(),
                Operand::r(k),
                Operand::r(live),
            ],
            vec![0],
        ));
        let one = r(self);
        self.mov_imm(one, 1);
        let bit = r(self);
        self.lop3(bit, bits, one, 0xc0);
        let member = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            op!("ISETP.NE.U32.AND"),
            vec![
                Operand::r(member),
                Operand::pt(),
                Operand::r(bit),
                Operand::rz(),
                Operand::pt(),
            ],
            vec![0],
        ));
        // Only the threads whose mask holds lane k read it, and lane k is one of them (every
        // thread is in its own mask): no thread reads a lane that does not take part.
        let v = r(self);
        self.guarded(
            Inst::new(
                op!("SHFL.IDX"),
                vec![
                    Operand::pt(),
                    Operand::r(v),
                    Operand::r(a),
                    Operand::r(k),
                    Operand::Imm(0x1f),
                ],
                vec![0, 1],
            ),
            member,
        );
        let step = match combine {
            "IADD3" => Inst::new(
                op!("IADD3"),
                vec![
                    Operand::r(acc),
                    Operand::r(acc),
                    Operand::r(v),
                    Operand::rz(),
                ],
                vec![0],
            ),
            "AND" | "OR" | "XOR" => {
                let lut = match combine {
                    "AND" => 0xc0,
                    "OR" => 0xfc,
                    _ => 0x3c,
                };
                Inst::new(
                    op!("LOP3.LUT"),
                    vec![
                        Operand::r(acc),
                        Operand::r(acc),
                        Operand::r(v),
                        Operand::rz(),
                        Operand::Hex(lut),
                        Operand::not(Reg::Zero(ir::Class::P)),
                    ],
                    vec![0],
                )
            }
            _ => {
                let min = combine.starts_with("MIN");
                let name = self.int_minmax_op(combine.ends_with("U32"));
                let sel = if min {
                    Operand::pt()
                } else {
                    Operand::not(Reg::Zero(ir::Class::P))
                };
                Inst::new(
                    name,
                    vec![Operand::r(acc), Operand::r(acc), Operand::r(v), sel],
                    vec![0],
                )
            }
        };
        self.guarded(step, member);
        self.push(Inst::new(
            op!("IADD3"),
            vec![Operand::r(k), Operand::r(k), Operand::r(one), Operand::rz()],
            vec![0],
        ));
        let more = Reg::v(self.ptmp(), 1);
        let n32 = r(self);
        self.mov_imm(n32, 32);
        self.push(Inst::new(
            op!("ISETP.LT.U32.AND"),
            vec![
                Operand::r(more),
                Operand::pt(),
                Operand::r(k),
                Operand::r(n32),
                Operand::pt(),
            ],
            vec![0],
        ));
        self.guarded(
            Inst::new(op!("BRA"), vec![Operand::Label(lp)], vec![]),
            more,
        );
        let tail = self.f.new_block();
        self.start_block(tail);
        self.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(d), Operand::r(acc)],
            vec![0],
        ));
        self.start_block(done);
    }

    pub(crate) fn activemask(
        &mut self,
        node: &SyntaxNode,
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        if ops.len() != 1 {
            return Err(malformed(node, "activemask takes one operand"));
        }
        let d = self.dst(&ops[0], 1)?;
        self.push(Inst::new(
            op!("VOTE.ANY"),
            vec![Operand::r(d), Operand::pt(), Operand::pt()],
            vec![0],
        ));
        Ok(())
    }

    /// Removes the `WARPSYNC`s placed before collectives when the kernel has no predicated
    /// branch: its threads never diverge, so they execute every collective together.
    pub(crate) fn drop_collective_syncs(&mut self) {
        let divergent = self.f.order.iter().any(|b| {
            self.f.blocks[*b]
                .insts
                .iter()
                .any(|i| i.guard.is_some() && i.mnemonic() == Mnemonic::BRA)
        });
        if divergent {
            return;
        }
        let mut syncs = std::mem::take(&mut self.collective_syncs);
        // Highest index first within a block, so earlier indices stay valid.
        syncs.sort_by_key(|s| std::cmp::Reverse(s.1));
        for (b, i, n) in syncs {
            self.f.blocks[b].insts.drain(i..i + n);
        }
    }
}

/// The `vote.sync` modes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Vote {
    Ballot,
    Any,
    All,
    Uni,
}

/// What the statements before an instruction say about a register's value.
#[derive(Debug, PartialEq, Eq)]
enum Local {
    /// Its last write there is an unguarded `mov` of this integer literal.
    Value(u64),
    /// Its last write there is something else (or may be: a nested block writing it).
    Unknown,
    /// No write to it between the start of the straight-line run and the instruction.
    NoWrite,
}

/// The value register `name` holds at instruction `node`, as far as the statements before
/// it in the same straight-line run (back to the nearest label, through enclosing `{ }`
/// blocks) show. Any instruction naming the register in its first operand counts as a write
/// (PTX writes only there; addresses of stores over-count, which errs on the safe side).
fn local_constant(node: &SyntaxNode, name: &str) -> Local {
    // The statement holding the instruction: the ancestor whose parent is a block.
    let mut stmt = node.clone();
    while let Some(p) = stmt.parent() {
        if ast::Block::can_cast(p.kind()) {
            break;
        }
        stmt = p;
    }
    loop {
        let mut prev = stmt.prev_sibling();
        while let Some(s) = prev {
            if ast::Label::can_cast(s.kind()) {
                return Local::NoWrite;
            }
            if ast::Block::can_cast(s.kind()) {
                if s.descendants()
                    .any(|d| ast::Label::can_cast(d.kind()) || ast::VarDecl::can_cast(d.kind()))
                {
                    // A nested block with labels (control may enter it in the middle) or
                    // with declarations (its names may shadow ours).
                    return Local::Unknown;
                }
                // Straight-line code: its last write in text order reaches the end.
                let last = s
                    .descendants()
                    .filter_map(ast::Instruction::cast)
                    .filter(|i| writes_register(i, name))
                    .last();
                if let Some(i) = last {
                    return literal_mov(&i);
                }
            } else if let Some(i) = ast::Instruction::cast(s.clone())
                && writes_register(&i, name)
            {
                return literal_mov(&i);
            }
            prev = s.prev_sibling();
        }
        // The start of a block: go on before it when it is nested in another one.
        match stmt.parent() {
            Some(b) if b.parent().is_some_and(|g| ast::Block::can_cast(g.kind())) => {
                if b.children().any(|d| ast::VarDecl::can_cast(d.kind())) {
                    // Names declared in this block shadow the ones outside.
                    return Local::Unknown;
                }
                stmt = b;
            }
            _ => return Local::NoWrite,
        }
    }
}

/// `Local::Value(v)` for an unguarded `mov d, v` of an integer literal, else `Unknown`.
fn literal_mov(i: &ast::Instruction) -> Local {
    let ops: Vec<ast::Operand> = i.operands().collect();
    let opcode = i.opcode().map(|t| t.text().to_string()).unwrap_or_default();
    match (opcode == "mov" && i.guard().is_none() && ops.len() == 2)
        .then(|| ops[1].as_int())
        .flatten()
    {
        Some(v) => Local::Value(v),
        None => Local::Unknown,
    }
}

/// Whether instruction `i` names register `name` in its first operand.
fn writes_register(i: &ast::Instruction, name: &str) -> bool {
    i.operands().next().is_some_and(|first| {
        first
            .syntax()
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .any(|t| t.kind() == syntax::SyntaxKind::IDENT && t.text() == name)
    })
}

/// Registers of a kernel body with exactly one defining instruction (any instruction naming
/// them in its first operand counts as one, which over-counts and so errs on the safe side):
/// register → that instruction.
pub(crate) fn single_definitions(
    body: &ast::Block,
) -> rustc_hash::FxHashMap<String, ast::Instruction> {
    let mut defs: rustc_hash::FxHashMap<String, (usize, ast::Instruction)> =
        rustc_hash::FxHashMap::default();
    for node in body.syntax().descendants() {
        let Some(i) = ast::Instruction::cast(node) else {
            continue;
        };
        let Some(first) = i.operands().next() else {
            continue;
        };
        // A surface store's first operand is `[handle, {coordinates}]`: nothing it names is
        // written.
        if i.opcode().is_some_and(|t| t.text() == "sust") {
            continue;
        }
        for n in first
            .syntax()
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| t.kind() == syntax::SyntaxKind::IDENT)
        {
            let e = defs.entry(n.text().to_string()).or_insert((0, i.clone()));
            e.0 += 1;
        }
    }
    defs.into_iter()
        .filter_map(|(n, (count, i))| (count == 1).then_some((n, i)))
        .collect()
}

/// Registers of a kernel body that hold one constant throughout: their only definition
/// ([`single_definitions`]) is `mov` of an integer literal. Used to recognize member masks
/// written `mov.u32 %r, -1; vote.sync.ballot.b32 %r2, %p, %r;`. Values are sign-extended
/// literals (`-1` is `u64::MAX`). A `createpolicy.fractional` with an immediate fraction is
/// a constant too (its folded policy: the cache-policy operand of loads and stores).
pub(crate) fn single_constant_registers(
    defs: &rustc_hash::FxHashMap<String, ast::Instruction>,
) -> rustc_hash::FxHashMap<String, u64> {
    defs.iter()
        .filter_map(|(n, i)| {
            let opcode = i.opcode()?;
            let ops: Vec<ast::Operand> = i.operands().collect();
            if i.guard().is_some() {
                return None;
            }
            if opcode.text() == "createpolicy" {
                let mods: Vec<String> = i.modifiers().map(|t| t.text().to_string()).collect();
                return Some((n.clone(), super::memory::fractional_policy(&mods, &ops)?));
            }
            if opcode.text() != "mov" || ops.len() != 2 {
                return None;
            }
            Some((n.clone(), ops[1].as_int()?))
        })
        .collect()
}

impl Cx {
    /// `elect.sync d|p, membermask` (sm_90) with the full mask → `WARPSYNC.ALL` (like every
    /// collective; dropped where the kernel cannot diverge) + `ELECT Pp, URd, PT` and `MOV d,
    /// URd`, ptxas 13.0.88's form. Other masks (ptxas: `WARPSYNC.EXCLUSIVE` inside a
    /// `BSSY` region) are refused.
    pub(crate) fn elect(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        if !self.target.forms.elect {
            return Err(unsupported(node, "elect.sync before sm_90"));
        }
        if mods.iter().any(|m| m != ".sync") || ops.len() != 2 {
            return Err(malformed(node, "elect.sync d|p, membermask"));
        }
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated elect.sync"));
        }
        let (d, p) = match &ops[0] {
            ast::Operand::Binary(b) if b.op().is_some_and(|t| t.text() == "|") => {
                let (Some(l), Some(r)) = (b.lhs(), b.rhs()) else {
                    return Err(malformed(node, "elect.sync d|p, membermask"));
                };
                let d = match &l {
                    ast::Operand::Name(n) if n.is_sink() => None,
                    _ => Some(self.dst(&l, 1)?),
                };
                (d, self.pred_dst(&r)?)
            }
            _ => return Err(malformed(node, "elect.sync d|p, membermask")),
        };
        if self.collective_sync(node, &ops[1], false)?.is_some() {
            return Err(unsupported(
                node,
                "elect.sync with a member mask other than -1",
            ));
        }
        let u = self.f.new_vreg(ir::Class::UR, 1, "");
        let ur = if d.is_some() {
            Reg::v(u, 1)
        } else {
            Reg::Zero(ir::Class::UR)
        };
        self.push(Inst::new(
            op!("ELECT"),
            vec![Operand::r(p), Operand::r(ur), Operand::pt()],
            vec![0, 1],
        ));
        if let Some(d) = d {
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(d), Operand::r(ur)],
                vec![0],
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use syntax::ast::AstNode;

    fn constants(body: &str) -> Vec<(String, u64)> {
        let text = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n{body}\n}}\n"
        );
        let parse = syntax::parse(&text);
        let file = syntax::ast::SourceFile::cast(parse.syntax_node()).unwrap();
        let f = file
            .syntax()
            .descendants()
            .find_map(syntax::ast::Function::cast)
            .unwrap();
        let defs = super::single_definitions(&f.body().unwrap());
        let mut v: Vec<_> = super::single_constant_registers(&defs)
            .into_iter()
            .collect();
        v.sort();
        v
    }

    #[test]
    fn only_registers_defined_once_by_a_literal_mov_are_constants() {
        let c = constants(
            ".reg .b32 %r<9>; .reg .pred %p<3>;\n\
             mov.u32 %r1, -1;\n\
             mov.u32 %r2, -1; add.u32 %r2, %r2, 1;\n\
             mov.u32 %r3, %r1;\n\
             @%p1 mov.u32 %r4, -1;\n\
             { mov.u32 %r5, 7; }\n\
             shfl.sync.bfly.b32 %r6|%p2, %r1, 1, 31, %r1;\n\
             mov.u32 %r6, -1;",
        );
        assert_eq!(
            c,
            vec![("%r1".to_string(), u64::MAX), ("%r5".to_string(), 7)]
        );
    }

    /// `local_constant` of register `reg` at the `vote` instruction of `body`.
    fn at_vote(body: &str, reg: &str) -> super::Local {
        let text = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n{body}\n}}\n"
        );
        let parse = syntax::parse(&text);
        let file = syntax::ast::SourceFile::cast(parse.syntax_node()).unwrap();
        let vote = file
            .syntax()
            .descendants()
            .filter_map(syntax::ast::Instruction::cast)
            .find(|i| i.opcode().is_some_and(|t| t.text() == "vote"))
            .unwrap();
        super::local_constant(vote.syntax(), reg)
    }

    #[test]
    fn the_last_write_before_a_collective_decides_its_mask() {
        use super::Local::*;
        let decl = ".reg .b32 %r<9>; .reg .pred %p<3>;\n";
        let vote = "vote.sync.ballot.b32 %r2, %p1, %r1;\n";
        let case =
            |before: &str| at_vote(&format!("{decl}{before}{vote}xor.b32 %r1, %r2, 3;"), "%r1");
        // Rewritten later (nvcc reuses mask registers): the write just before counts.
        assert_eq!(case("mov.u32 %r1, -1;\n"), Value(u64::MAX));
        assert_eq!(case("mov.u32 %r1, -1;\nadd.u32 %r1, %r1, 0;\n"), Unknown);
        assert_eq!(case("@%p1 mov.u32 %r1, -1;\n"), Unknown);
        // A label between the write and the collective: other paths may reach it.
        assert_eq!(case("mov.u32 %r1, -1;\nL:\n"), NoWrite);
        // Nested blocks: straight-line ones count, ones declaring names do not.
        assert_eq!(case("{ mov.u32 %r1, 5; }\n"), Value(5));
        assert_eq!(case("{ .reg .b32 %r1; mov.u32 %r1, -1; }\n"), Unknown);
        assert_eq!(
            case("mov.u32 %r1, 7;\n{ add.u32 %r3, %r1, 1; }\n"),
            Value(7)
        );
        // The collective inside a nested block sees the writes before the block.
        assert_eq!(
            at_vote(&format!("{decl}mov.u32 %r1, -1;\n{{ {vote} }}"), "%r1"),
            Value(u64::MAX)
        );
    }
}
