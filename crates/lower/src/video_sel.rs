//! Operand selectors of the video instructions around their learned templates: a source
//! selector (`a.b1`, `b.h0`; SIMD `a.h21`, `b.b7654`) is a `PRMT` into a temporary that the
//! template then reads as a whole word, and a SIMD destination mask (`d.h0`, `d.b31`) a
//! `LOP3` that takes the lanes outside the mask from `c`.
//!
//! That a selected source may be extracted first holds in the semantics of every video
//! instruction: a scalar source is the selected part sign- or zero-extended by its type, which
//! is the whole extended word's value again; a SIMD lane reads its part of `{b, a}`, which the
//! `PRMT` puts in the lane's own place. Checked like the templates: kiln's code for
//! `test-data/codegen/video_selectors.ptx` runs in the emulator like the interpreter, whose
//! model of selectors runs like ptxas's code for the same file.
//!
//! Refused: a scalar destination selector (ptxas 13.0.88's code does not merge the result into
//! `c` as the ISA says; the interpreter has no model of it), a mask with `.add`, and `vmad`'s
//! negated operands (templates exist only for the plain forms).

use ir::{Operand, Reg, op};
use ptx::video::{Sel, Video};
use syntax::ast;

use crate::{Cx, LowerError, unsupported};

/// The lanes of a video instruction (1 for the scalar forms), `None` for other opcodes.
pub(crate) fn video_lanes(opcode: &str) -> Option<u8> {
    Video::decode(opcode).map(|v| v.lanes)
}

/// How the operands of a video instruction with selectors are read and written.
pub(crate) struct Selected {
    /// The sources `a`, `b` as the template reads them.
    pub srcs: [Reg; 2],
    /// The destination register and, for a SIMD mask, the mask's bytes (`0x0000ffff` for
    /// `.h0`).
    pub dst: Reg,
    pub mask: Option<u32>,
}

/// The name and selector of a register operand (`%r1.b2` → (`%r1`, `.b2`)), `None` without
/// one.
fn selector(o: &ast::Operand) -> Option<(String, String)> {
    let ast::Operand::Name(n) = o else {
        return None;
    };
    let comps: Vec<String> = n.components().map(|t| t.text().to_string()).collect();
    let [c] = comps.as_slice() else {
        return None;
    };
    Some((n.name()?.text().to_string(), c.clone()))
}

impl Cx {
    /// The registers of a video instruction's `a`, `b` and `d` when any of them carries a
    /// selector (`Ok(None)` when none does), with the `PRMT`s that extract the sources.
    pub(crate) fn video_selected(
        &mut self,
        node: &syntax::SyntaxNode,
        lanes: u8,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<Option<Selected>, LowerError> {
        let negated = ops.iter().any(|o| matches!(o, ast::Operand::Prefix(_)));
        if negated {
            return Err(unsupported(
                node,
                "a video instruction with a negated operand",
            ));
        }
        let sels: Vec<Option<(String, String)>> = ops.iter().take(3).map(selector).collect();
        if sels.iter().all(Option::is_none) {
            return Ok(None);
        }
        let bad = |why: &str| Err(unsupported(node, format!("video operand selectors: {why}")));
        let signed = |k: usize| {
            // `.dtype.atype.btype`, or `vset`'s `.atype.btype`.
            let types: Vec<&String> = mods
                .iter()
                .filter(|m| *m == ".s32" || *m == ".u32")
                .collect();
            let off = types.len().saturating_sub(2);
            types.get(off + k).is_some_and(|t| *t == ".s32")
        };
        // The plain registers, then the extractions.
        let mut base = Vec::new();
        for (k, o) in ops.iter().take(3).enumerate() {
            let r = match &sels[k] {
                Some((name, _)) => match self.regs.get(name) {
                    Some((r, ty)) if crate::LoweredType::words(*ty) == 1 => Reg::v(*r, 1),
                    _ => return bad("a selector on something other than a 32-bit register"),
                },
                None if k == 0 => self.dst(o, 1)?,
                None => self.reg_src(o, 1)?,
            };
            base.push(r);
        }
        let guard = self.guard.take();
        let mut srcs = [base[1], base[2]];
        for k in 0..2 {
            let Some((_, sel)) = &sels[k + 1] else {
                continue;
            };
            // PRMT numbers bytes 0-3 of its first source and 4-7 of its second.
            let (ctl, other) = match Sel::parse(sel, lanes, false) {
                Some(Sel::Byte(b)) if lanes == 1 => {
                    let f = if signed(k) { 8 | b } else { 4 };
                    let f = u32::from(f);
                    (u32::from(b) | f << 4 | f << 8 | f << 12, None)
                }
                Some(Sel::Half(h)) if lanes == 1 => {
                    let (lo, hi) = (2 * h, 2 * h + 1);
                    let f = u32::from(if signed(k) { 8 | hi } else { 4 });
                    (u32::from(lo) | u32::from(hi) << 4 | f << 8 | f << 12, None)
                }
                // One part of `{b, a}` per lane: bytes 0-3 of `a`, 4-7 of `b`.
                Some(Sel::Lanes(parts)) => {
                    let mut ctl = 0u32;
                    for (lane, &p) in parts.iter().take(usize::from(lanes)).enumerate() {
                        if lanes == 2 {
                            ctl |= u32::from(2 * p) << (8 * lane);
                            ctl |= u32::from(2 * p + 1) << (8 * lane + 4);
                        } else {
                            ctl |= u32::from(p) << (4 * lane);
                        }
                    }
                    (ctl, Some(base[2]))
                }
                _ if lanes == 1 => return bad("not a scalar source selector"),
                _ => return bad("not a SIMD source selector"),
            };
            let from = if other.is_some() {
                base[1]
            } else {
                base[k + 1]
            };
            let t = Reg::v(self.tmp(1), 1);
            self.push(ir::Inst::new(
                op!("PRMT"),
                vec![
                    Operand::r(t),
                    Operand::r(from),
                    Operand::Hex(ctl),
                    other.map_or_else(Operand::rz, Operand::r),
                ],
                vec![0],
            ));
            srcs[k] = t;
        }
        self.guard = guard;
        let mask = match &sels[0] {
            None => None,
            Some(_) if lanes == 1 => {
                return bad(
                    "a scalar destination selector (ptxas 13.0.88's code does not merge its result into `c` as the ISA says)",
                );
            }
            Some(_) if mods.iter().any(|m| m == ".add") => {
                return bad("a destination mask with `.add`");
            }
            Some((_, sel)) => {
                let Some(Sel::Mask(lanes_written)) = Sel::parse(sel, lanes, true) else {
                    return bad("not a SIMD destination mask");
                };
                let width = 32 / u32::from(lanes);
                let lane_bits = ((1u64 << width) - 1) as u32;
                Some((0..u32::from(lanes)).fold(0u32, |m, p| {
                    if lanes_written >> p & 1 == 1 {
                        m | lane_bits << (width * p)
                    } else {
                        m
                    }
                }))
            }
        };
        Ok(Some(Selected {
            srcs,
            dst: base[0],
            mask,
        }))
    }

    /// `d = mask ? t : c`, lane by lane: a SIMD destination mask after its template.
    pub(crate) fn video_merge(&mut self, d: Reg, t: Reg, mask: u32, c: Reg) {
        self.push(ir::Inst::new(
            op!("LOP3.LUT"),
            vec![
                Operand::r(d),
                Operand::r(t),
                Operand::Imm(i64::from(mask)),
                Operand::r(c),
                Operand::Hex(0xe2),
                Operand::not(Reg::Zero(ir::Class::P)),
            ],
            vec![0],
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn video_opcodes() {
        assert_eq!(video_lanes("vadd"), Some(1));
        assert_eq!(video_lanes("vavrg4"), Some(4));
        assert_eq!(video_lanes("vset2"), Some(2));
        assert_eq!(video_lanes("vmad"), Some(1));
        assert_eq!(video_lanes("vmad2"), None);
        assert_eq!(video_lanes("vavrg"), None);
        assert_eq!(video_lanes("add"), None);
    }
}
