//! Operands of the video instructions: selectors (`a.b1`, `b.h0`, `d.h10`, `a.b3210`) and
//! `vmad`'s negations (`-a`), kept in [`VideoMods`] beside plain register operands.

use super::*;
use crate::video::Sel;

impl FnCx<'_> {
    pub(crate) fn video(
        &mut self,
        mut inst: Inst,
        ops: &[ast::Operand],
        line: u32,
        idx: usize,
    ) -> Result<Inst, LowerError> {
        let Some(mut vm) = inst.mods.video else {
            return Ok(inst);
        };
        let lanes = vm.video.lanes;
        for (k, o) in ops.iter().enumerate() {
            let mut o = o.clone();
            if let ast::Operand::Prefix(p) = &o
                && p.op()
                    .is_some_and(|t| t.kind() == syntax::SyntaxKind::MINUS)
                && vm.video.op == crate::video::VideoOp::Mad
                && (1..=3).contains(&k)
                && let Some(inner) = p.expr()
            {
                vm.negate[k - 1] = true;
                o = inner;
            }
            let lowered = match &o {
                ast::Operand::Name(n) if n.components().next().is_some() => {
                    let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
                    let comps: Vec<String> = n.components().map(|t| t.text().to_string()).collect();
                    let slot = match self.lookup(&name) {
                        Some(Sym::Reg { slot, width: 1 }) => slot,
                        _ => {
                            return Err(err(
                                line,
                                format!("`{name}` with a selector is not a scalar register"),
                            ));
                        }
                    };
                    let which = match k {
                        0 => 2,
                        1 | 2 => k - 1,
                        _ => usize::MAX,
                    };
                    let sel = (comps.len() == 1 && which != usize::MAX)
                        .then(|| Sel::parse(&comps[0], lanes, k == 0))
                        .flatten()
                        .ok_or_else(|| {
                            err(
                                line,
                                format!("bad selector `{}` on operand {k}", comps.join("")),
                            )
                        })?;
                    vm.sel[which] = sel;
                    Operand::Reg(slot)
                }
                _ => self.operand(&o, line, &mut vec![k], idx, false)?,
            };
            inst.args.push(lowered);
        }
        if vm.video.lanes == 1 && matches!(vm.sel[2], Sel::Byte(_) | Sel::Half(_)) {
            // A scalar merge (`vmax d.h1, a, b, c`): ptxas 13.0.88's code neither follows the
            // ISA (the result's low part written into the selected part of `c`) nor one rule
            // of its own (with `.sat` the other parts are not `c`'s; `vmax` writes the
            // result's own high half into `.h1`; its cubins in the emulator): no model.
            inst.op = Op::Unsupported;
            inst.unsupported = Some(
                "a scalar video instruction with a destination selector (ptxas 13.0.88's code does not merge its result into `c` as the ISA says)".into(),
            );
            inst.args.clear();
            return Ok(inst);
        }
        inst.mods.video = Some(vm);
        Ok(inst)
    }
}
