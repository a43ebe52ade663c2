//! Memory ordering: `membar.{cta,gl,sys}` and `fence.{sc,acq_rel}.{cta,gpu,sys}`.
//!
//! The sequences are ptxas 13.0.88's (checked with `nvdisasm -c` on sm_80 and sm_90):
//! `MEMBAR.<SC|ALL>.<CTA|GPU|SYS>` (SC for `membar` and `fence.sc`, ALL for
//! `fence.acq_rel`), and beyond the CTA scope `ERRBAR`, on sm_90 `CGAERRBAR`, and
//! `CCTL.IVALL` (invalidate the non-coherent L1 lines); a guarded fence predicates each of
//! them. Other fences (`.cluster` scope,
//! `fence.proxy`, `fence.mbarrier_init`) are refused. Also `griddepcontrol`.

use ir::{Inst, Operand};
use syntax::SyntaxNode;
use syntax::ast;

use crate::{Cx, LowerError, malformed, unsupported};

impl Cx {
    pub(crate) fn fence(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
    ) -> Result<(), LowerError> {
        let m: Vec<&str> = mods.iter().map(String::as_str).collect();
        let (order, scope) = match (opcode, m.as_slice()) {
            ("membar", [".cta"]) => ("SC", "CTA"),
            ("membar", [".gl"]) => ("SC", "GPU"),
            ("membar", [".sys"]) => ("SC", "SYS"),
            ("fence", [".sc", s]) | ("fence", [s, ".sc"]) => ("SC", scope_name(s)),
            ("fence", [".acq_rel", s]) | ("fence", [s, ".acq_rel"]) => ("ALL", scope_name(s)),
            _ => ("", ""),
        };
        if scope.is_empty() {
            return Err(unsupported(node, format!("{opcode}{}", mods.concat())));
        }
        // A guarded fence guards each of its instructions (ptxas branches around them).
        self.push(Inst::new(format!("MEMBAR.{order}.{scope}"), vec![], vec![]));
        if scope != "CTA" {
            self.push(Inst::new("ERRBAR", vec![], vec![]));
            if self.target.forms.clusters {
                self.push(Inst::new("CGAERRBAR", vec![], vec![]));
            }
            self.push(Inst::new("CCTL.IVALL", vec![], vec![]));
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
            [".wait"] => "ACQBULK",
            [".launch_dependents"] => "PREEXIT",
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

/// The SASS scope of a PTX fence scope (`""` when not handled).
fn scope_name(s: &str) -> &'static str {
    match s {
        ".cta" => "CTA",
        ".gpu" => "GPU",
        ".sys" => "SYS",
        _ => "",
    }
}

impl Cx {
    /// `bar.red.{popc.u32,and.pred,or.pred} d, 0, {!}p` (barrier 0, every thread of the CTA)
    /// → `BAR.RED.{POPC,AND,OR}.DEFER_BLOCKING 0x0, p` + `B2R.RESULT d` (`B2R.RESULT RZ, Pd`
    /// for the predicate forms), ptxas 13.0.88's forms on sm_80 and sm_90.
    pub(crate) fn bar_red(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let has = |m: &str| mods.iter().any(|x| x == m);
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated bar.red"));
        }
        if ops.len() != 3 || ops[1].as_int() != Some(0) {
            return Err(unsupported(
                node,
                "bar.red other than on barrier 0 with every thread",
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
        let p = self.pred_src(&ops[2])?;
        self.uses_barrier = true;
        self.push(Inst::new(
            format!("BAR.RED.{op}.DEFER_BLOCKING"),
            vec![Operand::Imm(0), p],
            vec![],
        ));
        if popc {
            let d = self.dst(&ops[0], 1)?;
            self.push(Inst::new("B2R.RESULT", vec![Operand::r(d)], vec![0]));
        } else {
            let d = self.pred_dst(&ops[0])?;
            self.push(Inst::new(
                "B2R.RESULT",
                vec![Operand::rz(), Operand::r(d)],
                vec![1],
            ));
        }
        Ok(())
    }
}
