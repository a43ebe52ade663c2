//! Memory ordering: `membar.{cta,gl,sys}` and `fence.{sc,acq_rel}.{cta,gpu,sys}`.
//!
//! The sequences are ptxas 13.0.88's (checked with `nvdisasm -c` on sm_80 and sm_90):
//! `MEMBAR.<SC|ALL>.<CTA|GPU|SYS>` (SC for `membar` and `fence.sc`, ALL for
//! `fence.acq_rel`), and beyond the CTA scope `ERRBAR`, on sm_90 `CGAERRBAR`, and
//! `CCTL.IVALL` (invalidate the non-coherent L1 lines). Other fences (`.cluster` scope,
//! `fence.proxy`, `fence.mbarrier_init`) are refused.

use ir::Inst;
use syntax::SyntaxNode;

use crate::{Cx, LowerError, unsupported};

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
        if self.guard.is_some() {
            return Err(unsupported(node, format!("predicated {opcode}")));
        }
        self.push(Inst::new(format!("MEMBAR.{order}.{scope}"), vec![], vec![]));
        if scope != "CTA" {
            self.push(Inst::new("ERRBAR", vec![], vec![]));
            if self.target.sm >= 90 {
                self.push(Inst::new("CGAERRBAR", vec![], vec![]));
            }
            self.push(Inst::new("CCTL.IVALL", vec![], vec![]));
        }
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
