//! Narrowing: a 64-bit value whose high word nobody reads becomes a 32-bit value.
//!
//! PTX computes shared-memory addresses in 64 bits as often as in 32 (`mul.wide.u32 %rd2,
//! %r1, 4; add.s64 %rd3, %rd1, %rd2; st.shared.f32 [%rd3], %f1`), but a shared or local
//! access reads only the address's low word (`STS [R6], R3`). Lowered as written, the
//! address is an `IMAD.WIDE.U32` pair and its base another pair (`MOV R4, RZ; MOV R5, RZ`):
//! four registers where ptxas uses one (`IMAD.SHL.U32 R3, R7, 0x4, RZ; STS [R3], R2`).
//!
//! A virtual register of width 2 qualifies when every read of it reads its low word alone
//! and every write of it is one of: a write of the low word alone, a write of the high word
//! alone, or an `IMAD.WIDE{.U32} d, a, b, c` whose addend `c` is a register pair, `RZ` or
//! a constant-bank pair. It is replaced by a 32-bit register: writes of the low word write
//! it, `IMAD.WIDE` becomes `IMAD d, a, b, c.lo` (the low 32 bits of `a * b + c` depend on
//! `c`'s low word only, signed or not), and writes of the high word go to a fresh register
//! nobody reads, which [`crate::dce`] removes with the instructions that only computed it.
//! Each rewritten `IMAD` is checked encodable first ([`Forms`]); a register with one that is
//! not keeps its width.

use ir::{Class, Func, Inst, Opcode, Operand, Reg, VReg, op};
use rustc_hash::FxHashMap;

use crate::forms::Forms;

/// What one reference to a candidate register is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ref {
    /// A read of the low word alone, or a write of either word alone.
    Word,
    /// The destination of an `IMAD.WIDE` whose addend narrows.
    WideProduct,
    /// Anything else: the register keeps its width.
    Other,
}

/// How `reg` is referenced by operand `o` of `i` (at position `k`).
fn classify(i: &Inst, k: usize, reg: Reg) -> Ref {
    let Reg::Virt { part, width, .. } = reg else {
        return Ref::Other;
    };
    let is_def = i.defs.contains(&k);
    match (part, width, is_def) {
        (0, 1, _) | (1, 1, true) => Ref::Word,
        (0, 2, true) if k == 0 && wide_addend(i).is_some() => Ref::WideProduct,
        _ => Ref::Other,
    }
}

/// `IMAD.WIDE{.U32} d, a, b, c` (one destination, no guard-independent side effects): the
/// 32-bit `IMAD` and the low word of its addend.
fn wide_addend(i: &Inst) -> Option<(Opcode, Operand)> {
    if !(i.op == op!("IMAD.WIDE") || i.op == op!("IMAD.WIDE.U32"))
        || i.defs != [0]
        || i.operands.len() != 4
    {
        return None;
    }
    let c = match &i.operands[3] {
        Operand::Reg {
            reg:
                Reg::Virt {
                    vreg,
                    part,
                    width: 2,
                },
            neg,
            not: false,
            abs: false,
            sel: ir::Sel::None,
        } => Operand::Reg {
            reg: Reg::Virt {
                vreg: *vreg,
                part: *part,
                width: 1,
            },
            neg: *neg,
            not: false,
            abs: false,
            sel: ir::Sel::None,
        },
        o @ Operand::Reg {
            reg: Reg::Zero(Class::R),
            ..
        } => o.clone(),
        Operand::Const { bank, offset } => Operand::Const {
            bank: *bank,
            offset: *offset,
        },
        _ => return None,
    };
    Some((op!("IMAD"), c))
}

/// The 32-bit instruction an `IMAD.WIDE` becomes: `IMAD d, a, b, c.lo`, or `MOV d, c.lo`
/// when a factor is zero (nvdisasm prints `IMAD d, a, RZ, c` as `IMAD.MOV`, a form of
/// its own).
fn narrowed_wide(i: &Inst, d: VReg) -> Inst {
    let (imad, c) = wide_addend(i).expect("classified as a wide product");
    let zero = |o: &Operand| {
        matches!(
            o,
            Operand::Imm(0)
                | Operand::Reg {
                    reg: Reg::Zero(Class::R),
                    ..
                }
        )
    };
    let mut t = i.clone();
    if zero(&i.operands[1]) || zero(&i.operands[2]) {
        t.op = op!("MOV");
        t.operands = vec![Operand::r(Reg::part(d, 0)), c];
    } else {
        t.op = imad;
        t.operands[0] = Operand::r(Reg::part(d, 0));
        t.operands[3] = c;
    }
    t
}

/// Narrows every qualifying 64-bit R register of `f`; true when one was.
pub fn narrow(f: &mut Func, forms: &mut Forms) -> bool {
    // Per candidate: still narrowable.
    let mut ok: FxHashMap<VReg, bool> = f
        .vregs
        .iter()
        .filter(|(_, d)| d.class == Class::R && d.width == 2)
        .map(|(v, _)| (v, true))
        .collect();
    if ok.is_empty() {
        return false;
    }
    for b in &f.order {
        for i in &f.blocks[*b].insts {
            for r in &i.implicit_uses {
                if let Reg::Virt { vreg, .. } = r {
                    ok.insert(*vreg, false);
                }
            }
            for (k, o) in i.operands.iter().enumerate() {
                for r in o.regs() {
                    let Reg::Virt { vreg, .. } = r else { continue };
                    let Some(flag) = ok.get_mut(&vreg) else {
                        continue;
                    };
                    // A memory operand's base names the whole address when it is a pair.
                    let in_place =
                        matches!(o, Operand::Reg { .. }) || matches!(r, Reg::Virt { width: 1, .. });
                    if !in_place || classify(i, k, r) == Ref::Other {
                        *flag = false;
                    }
                }
            }
        }
    }
    // Every rewritten `IMAD` must be encodable.
    for b in f.order.clone() {
        for i in &f.blocks[b].insts {
            let Some(Operand::Reg {
                reg: Reg::Virt { vreg, width: 2, .. },
                ..
            }) = i.operands.first()
            else {
                continue;
            };
            if !ok.get(vreg).copied().unwrap_or(false) || !i.defs.contains(&0) {
                continue;
            }
            let t = narrowed_wide(i, *vreg);
            if !forms.encodable(f, &t) {
                ok.insert(*vreg, false);
            }
        }
    }
    let narrowed: FxHashMap<VReg, VReg> = {
        let mut chosen: Vec<VReg> = ok.iter().filter(|(_, k)| **k).map(|(v, _)| *v).collect();
        chosen.sort_by_key(|v| u32::from(v.into_raw()));
        chosen
            .into_iter()
            .map(|v| {
                let name = f.vregs[v].name.clone();
                (v, f.new_vreg(Class::R, 1, name))
            })
            .collect()
    };
    if narrowed.is_empty() {
        return false;
    }
    // Writes of a high word go to one register nobody reads.
    let junk = f.new_vreg(Class::R, 1, "");
    for b in f.order.clone() {
        for i in &mut f.blocks[b].insts {
            if let Some(Operand::Reg {
                reg: Reg::Virt { vreg, width: 2, .. },
                ..
            }) = i.operands.first()
                && narrowed.contains_key(vreg)
                && i.defs.contains(&0)
            {
                *i = narrowed_wide(i, *vreg);
            }
            for o in &mut i.operands {
                for r in o.regs_mut() {
                    if let Reg::Virt { vreg, part, .. } = *r
                        && let Some(&n) = narrowed.get(&vreg)
                    {
                        *r = Reg::v(if part == 0 { n } else { junk }, 1);
                    }
                }
            }
        }
    }
    true
}
