//! Memory ordering: `membar.{cta,gl,sys}` and `fence.{sc,acq_rel}.{cta,gpu,sys}`.
//!
//! The sequences are ptxas 13.0.88's (checked with `nvdisasm -c` on sm_80 and sm_90):
//! `MEMBAR.<SC|ALL>.<CTA|GPU|SYS>` (SC for `membar` and `fence.sc`, ALL for
//! `fence.acq_rel`), and beyond the CTA scope `ERRBAR`, on sm_90 `CGAERRBAR`, and
//! `CCTL.IVALL` (invalidate the non-coherent L1 lines); a guarded fence predicates each of
//! them. On sm_90 the `.cluster` scope is the GPU one, `fence.proxy.async` is
//! `FENCE.VIEW.ASYNC` (after a `MEMBAR`), `fence.mbarrier_init` emits nothing;
//! `fence.proxy.alias` is the `.sys` fence; `fence.proxy.tensormap` is refused. Also
//! `griddepcontrol` and the CTA barriers (`bar`/`barrier`).

use ir::{Class, Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::{Cx, LowerError, malformed, sass_op, unsupported};

impl Cx {
    pub(crate) fn fence(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
    ) -> Result<(), LowerError> {
        let m: Vec<&str> = mods.iter().map(String::as_str).collect();
        if opcode == "fence" && m.first() == Some(&".proxy") {
            return self.fence_proxy(node, &m);
        }
        if opcode == "fence" && m.first() == Some(&".mbarrier_init") {
            // `fence.mbarrier_init.release.cluster` (sm_90): ptxas 13.0.88 emits nothing.
            if !self.target.forms.clusters {
                return Err(unsupported(node, "fence.mbarrier_init before sm_90"));
            }
            return Ok(());
        }
        let (order, scope) = match (opcode, m.as_slice()) {
            ("membar", [".cta"]) => ("SC", "CTA"),
            ("membar", [".gl"]) => ("SC", "GPU"),
            ("membar", [".sys"]) => ("SC", "SYS"),
            ("fence", [".sc", s]) | ("fence", [s, ".sc"]) => ("SC", self.scope_name(s)),
            ("fence", [".acq_rel", s]) | ("fence", [s, ".acq_rel"]) => ("ALL", self.scope_name(s)),
            _ => ("", ""),
        };
        if scope.is_empty() {
            return Err(unsupported(node, format!("{opcode}{}", mods.concat())));
        }
        // A guarded fence guards each of its instructions (ptxas branches around them).
        self.push(Inst::new(
            sass_op(node, &format!("MEMBAR.{order}.{scope}"))?,
            vec![],
            vec![],
        ));
        if scope != "CTA" {
            self.push(Inst::new(op!("ERRBAR"), vec![], vec![]));
            if self.target.forms.clusters {
                self.push(Inst::new(op!("CGAERRBAR"), vec![], vec![]));
            }
            self.push(Inst::new(op!("CCTL.IVALL"), vec![], vec![]));
        }
        Ok(())
    }
}

impl Cx {
    /// `griddepcontrol.wait` → `ACQBULK`, `griddepcontrol.launch_dependents` → `PREEXIT`
    /// (ptxas 13.0.88 on sm_90, no EIATTR of their own); a guard guards the instruction.
    /// The scheduler keeps program order, so no memory access moves across them.
    pub(crate) fn griddepcontrol(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
    ) -> Result<(), LowerError> {
        if !self.target.forms.griddepcontrol {
            return Err(unsupported(node, "griddepcontrol before sm_90"));
        }
        let op = match mods.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            [".wait"] => op!("ACQBULK"),
            [".launch_dependents"] => op!("PREEXIT"),
            _ => {
                return Err(malformed(
                    node,
                    "griddepcontrol needs .wait or .launch_dependents",
                ));
            }
        };
        self.push(Inst::new(op, vec![], vec![]));
        Ok(())
    }
}

impl Cx {
    /// The SASS scope of a PTX fence scope (`""` when not handled): `.cluster` is the GPU
    /// scope on sm_90 (ptxas 13.0.88: `fence.acq_rel.cluster` is `MEMBAR.ALL.GPU`, `ERRBAR`,
    /// `CGAERRBAR`, `CCTL.IVALL`).
    fn scope_name(&self, s: &str) -> &'static str {
        match s {
            ".cta" => "CTA",
            ".gpu" => "GPU",
            ".cluster" if self.target.forms.clusters => "GPU",
            ".sys" => "SYS",
            _ => "",
        }
    }

    /// `fence.proxy.async[.global|.shared::cta|.shared::cluster]` (sm_90) → ptxas 13.0.88's
    /// `MEMBAR.ALL.GPU` + `FENCE.VIEW.ASYNC.S` (`.shared::cta`: `MEMBAR.ALL.CTA` first;
    /// `.global`: `FENCE.VIEW.ASYNC.G` alone). `fence.proxy.alias` → the `.sys` fence
    /// (`MEMBAR.SC.SYS`, ...): ptxas chooses between `MEMBAR.SC.SYS` and `MEMBAR.SC.GPU` on a
    /// driver word at run time; the system-scope fence orders at least as much. Other proxy
    /// fences (`.tensormap::generic`) are refused.
    fn fence_proxy(&mut self, node: &SyntaxNode, m: &[&str]) -> Result<(), LowerError> {
        match m {
            [".proxy", ".alias"] => self.fence(node, "membar", &[".sys".to_string()]),
            [".proxy", ".async", rest @ ..] if self.target.forms.clusters => {
                let (membar, view) = match rest {
                    [] | [".shared::cluster"] => {
                        (Some(op!("MEMBAR.ALL.GPU")), op!("FENCE.VIEW.ASYNC.S"))
                    }
                    [".shared::cta"] => (Some(op!("MEMBAR.ALL.CTA")), op!("FENCE.VIEW.ASYNC.S")),
                    [".global"] => (None, op!("FENCE.VIEW.ASYNC.G")),
                    _ => return Err(unsupported(node, format!("fence{}", m.concat()))),
                };
                if let Some(mb) = membar {
                    self.push(Inst::new(mb, vec![], vec![]));
                }
                self.push(Inst::new(view, vec![], vec![]));
                Ok(())
            }
            _ => Err(unsupported(node, format!("fence{}", m.concat()))),
        }
    }
}

impl Cx {
    /// The operands of a CTA barrier: its id and optional thread count, as ptxas 13.0.88
    /// writes them on sm_80 and sm_90 — immediates as immediates (`BAR.SYNC 0x1, 0x40`), one
    /// register alone (`BAR.ARV R0, 0x40`, `BAR.SYNC 0x2, R0`), and an id and a count both in
    /// registers packed into one register given twice, the count in the high half
    /// (`SHF.L.U32 t, count, 0x10, RZ; LOP3.LUT t, t, 0xf, id, 0xf8, !PT; BAR.SYNC t, t`). An
    /// immediate count of 0 is no count (every thread, ptxas's form). Records the barriers
    /// used (the highest id + 1, 16 for an id in a register).
    fn barrier_operands(
        &mut self,
        node: &SyntaxNode,
        id: &ast::Operand,
        count: Option<&ast::Operand>,
    ) -> Result<Vec<Operand>, LowerError> {
        let id = match id.as_int() {
            Some(v) if v < 16 => {
                self.num_barriers = self.num_barriers.max(v as u8 + 1);
                Err(v)
            }
            Some(v) => {
                return Err(malformed(
                    node,
                    format!("barrier {} out of range (0..15)", v as i64),
                ));
            }
            None => {
                self.num_barriers = 16;
                Ok(self.reg_src(id, 1)?)
            }
        };
        let count = match count {
            None => None,
            Some(c) => match c.as_int() {
                Some(0) => None,
                Some(v) if v % 32 == 0 && v <= 1024 => Some(Err(v)),
                Some(_) => {
                    return Err(malformed(
                        node,
                        "a barrier's thread count must be a multiple of the warp size (at most 1024)",
                    ));
                }
                None => Some(Ok(self.reg_src(c, 1)?)),
            },
        };
        let imm = |v: u64| Operand::Imm(v as i64);
        Ok(match (id, count) {
            (Err(i), None) => vec![imm(i)],
            (Ok(r), None) => vec![Operand::r(r)],
            (Err(i), Some(Err(c))) => vec![imm(i), imm(c)],
            (Ok(r), Some(Err(c))) => vec![Operand::r(r), imm(c)],
            (Err(i), Some(Ok(c))) => vec![imm(i), Operand::r(c)],
            (Ok(r), Some(Ok(c))) => {
                let hi = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    op!("SHF.L.U32"),
                    vec![
                        Operand::r(hi),
                        Operand::r(c),
                        Operand::Imm(0x10),
                        Operand::rz(),
                    ],
                    vec![0],
                ));
                let t = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    op!("LOP3.LUT"),
                    vec![
                        Operand::r(t),
                        Operand::r(hi),
                        Operand::Imm(0xf),
                        Operand::r(r),
                        Operand::Hex(0xf8),
                        Operand::not(Reg::Zero(Class::P)),
                    ],
                    vec![0],
                ));
                vec![Operand::r(t), Operand::r(t)]
            }
        })
    }

    /// `bar{.cta}.sync a{, b}`, `barrier{.cta}.sync{.aligned} a{, b}`, `bar{.cta}.arrive a, b`,
    /// `barrier{.cta}.arrive{.aligned} a, b` → `BAR.SYNC.DEFER_BLOCKING` / `BAR.ARV` (sm_80's
    /// `barrier.sync` without `.aligned`: `BAR.SYNC`), ptxas 13.0.88's forms. A guarded
    /// barrier is refused (ptxas branches around it; kiln keeps no such form yet).
    pub(crate) fn barrier(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let has = |m: &str| mods.iter().any(|x| x == m);
        if let Some(m) = mods
            .iter()
            .find(|m| !matches!(m.as_str(), ".sync" | ".arrive" | ".aligned" | ".cta"))
        {
            return Err(unsupported(node, format!("{opcode} modifier {m}")));
        }
        let arrive = has(".arrive");
        // `bar a` (PTX 1.x) is `bar.sync a`.
        let sync = has(".sync") || (opcode == "bar" && mods.is_empty());
        if !arrive && !sync {
            return Err(malformed(node, "barrier without .sync or .arrive"));
        }
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated barriers"));
        }
        if ops.is_empty() || ops.len() > 2 || (arrive && ops.len() != 2) {
            return Err(malformed(node, "a barrier takes an id and a thread count"));
        }
        let operands = self.barrier_operands(node, &ops[0], ops.get(1))?;
        let aligned = opcode == "bar" || has(".aligned");
        let op = if arrive {
            op!("BAR.ARV")
        } else if aligned || self.target.forms.barrier_sync_deferred {
            op!("BAR.SYNC.DEFER_BLOCKING")
        } else {
            op!("BAR.SYNC")
        };
        // The hardware counts each execution of a barrier by a part of a warp as the warp's
        // arrival: the whole warp meets first, as ptxas's code for a barrier it cannot prove
        // convergent (`crates/opt`'s `reconverge` removes it where the warp is converged).
        self.push(self.full_warpsync());
        self.push(Inst::new(op, operands, vec![]));
        Ok(())
    }

    /// `bar{.cta}.red.{popc.u32,and.pred,or.pred} d, a{, b}, {!}p` (and `barrier{.cta}.red`)
    /// → `BAR.RED.{POPC,AND,OR}.DEFER_BLOCKING a{, b}, p` + `B2R.RESULT d` (`B2R.RESULT RZ,
    /// Pd` for the predicate forms), ptxas 13.0.88's forms on sm_80 and sm_90 (the id and
    /// count as in [`Cx::barrier`]).
    pub(crate) fn bar_red(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let has = |m: &str| mods.iter().any(|x| x == m);
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated bar.red"));
        }
        if ops.len() != 3 && ops.len() != 4 {
            return Err(malformed(
                node,
                format!("{opcode}.red takes 3 or 4 operands"),
            ));
        }
        let (op, popc) = if has(".popc") {
            ("POPC", true)
        } else if has(".and") {
            ("AND", false)
        } else if has(".or") {
            ("OR", false)
        } else {
            return Err(malformed(node, "bar.red without .popc, .and or .or"));
        };
        let p = self.pred_src(&ops[ops.len() - 1])?;
        let count = (ops.len() == 4).then(|| &ops[2]);
        let mut operands = self.barrier_operands(node, &ops[1], count)?;
        operands.push(p);
        self.push(self.full_warpsync());
        self.push(Inst::new(
            sass_op(node, &format!("BAR.RED.{op}.DEFER_BLOCKING"))?,
            operands,
            vec![],
        ));
        if popc {
            let d = self.dst(&ops[0], 1)?;
            self.push(Inst::new(op!("B2R.RESULT"), vec![Operand::r(d)], vec![0]));
        } else {
            let d = self.pred_dst(&ops[0])?;
            self.push(Inst::new(
                op!("B2R.RESULT"),
                vec![Operand::rz(), Operand::r(d)],
                vec![1],
            ));
        }
        Ok(())
    }
}
