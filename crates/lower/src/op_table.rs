//! Value instructions lowered from `data/ops.tsv`: ptxas 13.0.88's own SASS for the forms of
//! the PTX ISA that instruction selection has no family code for, learned per SM by `cargo
//! xtask isa-forms --learn` and written as templates in the sequence syntax of `seq.rs`
//! (`%a`, `%b`, ... the sources in order, `%d` the result, `$d` a predicate result; a
//! predicate source is passed as a word, 1 where it holds and 0 elsewhere, as ptxas's probe
//! loaded it).
//!
//! Instruction selection asks the table only after its own families refused an instruction
//! (`Cx::select_or_learned`), so every form that had family code keeps it. Each template was
//! verified by `cargo xtask isa-forms` (the form's probe compiled by kiln through the template
//! runs in the emulator equal to the interpreter); the learner only writes templates whose
//! instructions have a latency class the hazard tables know, with the scheduling class
//! `sched` gives them.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use ir::{Reg, op};
use syntax::ast::{self, AstNode};

use crate::learned::Table;
use crate::{Cx, LowerError};

/// How one operand is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// 8 or 16 bits in the low half of a register.
    Half,
    Word,
    Pair,
    Pred,
}

impl Shape {
    fn parse(c: char) -> Option<Shape> {
        Some(match c {
            'h' => Shape::Half,
            'w' => Shape::Word,
            'q' => Shape::Pair,
            'p' => Shape::Pred,
            _ => return None,
        })
    }
}

/// A row's operand shapes (the table's second field, `ww>w`).
struct Shapes {
    srcs: Vec<Shape>,
    dst: Shape,
}

/// Whether selection may fall back on the table (see [`disable_learned_ops`]).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns the table off for the rest of the process: for the learner, which must see what
/// instruction selection's families refuse on their own.
pub fn disable_learned_ops() {
    ENABLED.store(false, Ordering::Relaxed);
}

/// The sources' names in templates, in operand order.
const SOURCES: [&str; 5] = ["%a", "%b", "%c", "%e", "%f"];

fn table() -> &'static Table<Shapes> {
    static T: OnceLock<Table<Shapes>> = OnceLock::new();
    T.get_or_init(|| {
        let shapes = |f: &[&str]| {
            let (srcs, dst) = f[0].split_once('>')?;
            let srcs = srcs.chars().map(Shape::parse).collect::<Option<Vec<_>>>()?;
            let dst = Shape::parse(dst.chars().next()?)?;
            Some(Shapes { srcs, dst })
        };
        Table::parse(include_str!("../data/ops.tsv"), 1, shapes, |_| true)
    })
}

/// `opcode` with `mods` in the order of its ISA form's groups (the order the table's keys
/// use; PTX accepts several), or `None` when no form fits.
fn canonical(opcode: &str, mods: &[String]) -> Option<String> {
    let refs: Vec<&str> = mods.iter().map(String::as_str).collect();
    let forms = ptx::isa().lookup(opcode, &refs);
    let form = forms.first()?;
    let rank = |m: &str| {
        form.groups
            .iter()
            .position(|g| g.accepts(m))
            .unwrap_or(usize::MAX)
    };
    let mut sorted = refs.clone();
    // Two modifiers of one group keep their order (a type group may take two types).
    sorted.sort_by_key(|m| rank(m));
    Some(format!("{opcode}{}", sorted.concat()))
}

impl Cx {
    /// Lowers the instruction from the learned table; `Ok(false)` when the table has no
    /// template for it on this SM (or its operands do not have the learned shapes).
    pub(crate) fn op_from_table(
        &mut self,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<bool, LowerError> {
        if !ENABLED.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let Some(key) = canonical(opcode, mods) else {
            return Ok(false);
        };
        let Some((row, text)) = table().get(&key, self.target.profile.number) else {
            return Ok(false);
        };
        if ops.len() != row.srcs.len() + 1 {
            return Ok(false);
        }
        if let Some(lanes) = crate::video_sel::video_lanes(opcode)
            && let Some(sel) = self.video_selected(&ops[0].syntax().clone(), lanes, mods, ops)?
        {
            let mut binds: Vec<(&str, Reg)> = vec![("%a", sel.srcs[0]), ("%b", sel.srcs[1])];
            let c = match ops.get(3) {
                Some(o) if row.srcs.len() == 3 => Some(self.reg_src(o, 1)?),
                _ => None,
            };
            if let Some(c) = c {
                binds.push(("%c", c));
            }
            let out = match (sel.mask, c) {
                (Some(_), Some(_)) => Reg::v(self.tmp(1), 1),
                (Some(_), None) => return Ok(false),
                (None, _) => sel.dst,
            };
            binds.push(("%d", out));
            self.emit_seq(text, &binds);
            if let (Some(mask), Some(c)) = (sel.mask, c) {
                self.video_merge(sel.dst, out, mask, c);
            }
            return Ok(true);
        }
        let mut binds: Vec<(&str, Reg)> = Vec::new();
        for (i, s) in row.srcs.iter().enumerate() {
            let r = match s {
                // The template tests a word against zero (ptxas's probe loaded the predicate
                // as one): 1 where the predicate holds, 0 elsewhere, as `SEL t, RZ, 0x1, !p`
                // (SEL's first source is a register; its second takes the immediate).
                Shape::Pred => {
                    // pred_src gives a predicate register (PT for a literal), negated below.
                    let mut p = self.pred_src(&ops[i + 1])?;
                    if let ir::Operand::Reg { not, .. } = &mut p {
                        *not = !*not;
                    }
                    let t = Reg::v(self.tmp(1), 1);
                    let guard = self.guard.take();
                    self.push(ir::Inst::new(
                        op!("SEL"),
                        vec![ir::Operand::r(t), ir::Operand::rz(), ir::Operand::Imm(1), p],
                        vec![0],
                    ));
                    self.guard = guard;
                    t
                }
                Shape::Pair => self.reg_src(&ops[i + 1], 2)?,
                _ => self.reg_src(&ops[i + 1], 1)?,
            };
            binds.push((SOURCES[i], r));
        }
        match row.dst {
            Shape::Pred => binds.push(("$d", self.pred_dst(&ops[0])?)),
            s => {
                let words = if s == Shape::Pair { 2 } else { 1 };
                binds.push(("%d", self.dst(&ops[0], words)?));
            }
        }
        // Templates copy their sources in first and their result out last, so `%d` may be
        // one of the sources.
        self.emit_seq(text, &binds);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_forms_group_order() {
        let mods = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            canonical("max", &mods(&[".NaN", ".ftz", ".f32"])).as_deref(),
            Some("max.ftz.NaN.f32")
        );
        assert_eq!(
            canonical("set", &mods(&[".eq", ".u32", ".b16"])).as_deref(),
            Some("set.eq.u32.b16")
        );
    }

    #[test]
    fn every_row_parses() {
        let text = include_str!("../data/ops.tsv");
        let rows = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .count();
        assert_eq!(table().rows().len(), rows);
    }
}
