//! Loop-invariant constants: an immediate moved into a register inside a loop is moved
//! into the loop's preheader.
//!
//! Value propagation ([`crate::facts`]) puts an immediate into a register where no form
//! takes it beside another operand (`MOV R6, 0x4` before `IMAD.WIDE.U32 R6, R4, R6,
//! c[0x0][0x160]`), one per block. In a loop that is one more instruction per iteration;
//! ptxas sets such a register once before the loop. Here `MOV t, imm` moves to the end of
//! the preheader (the loop header's only predecessor outside the loop, whose only successor
//! is the header) when it is unguarded and the only write of `t` in the kernel: `t` then
//! holds the constant on every path through the loop, and reads that came before the write
//! in an iteration read the same constant instead of the previous iteration's copy of it
//! (or, in the first iteration, an undefined register). The moves of one constant in the
//! loop's blocks become one. A loop keeps its constants when the loop's highest register
//! pressure plus one word per constant would exceed the kernel's (the kernel would need more
//! registers). Inner loops go first, so a constant of a nest leaves every loop that has a
//! preheader and room.

use ir::{Class, Func, Inst, Operand, Reg, VReg, op};
use rustc_hash::FxHashMap;

/// Whether `i` is `MOV t, imm` (or `MOV t, RZ`) writing an R register: its `t`.
fn constant_move(f: &Func, i: &Inst) -> Option<VReg> {
    if i.op != op!("MOV") || i.guard.is_some() || i.defs != [0] || i.operands.len() != 2 {
        return None;
    }
    let Operand::Reg {
        reg: Reg::Virt {
            vreg,
            part: 0,
            width: 1,
        },
        ..
    } = i.operands[0]
    else {
        return None;
    };
    let constant = matches!(
        i.operands[1],
        Operand::Imm(_)
            | Operand::Reg {
                reg: Reg::Zero(Class::R),
                ..
            }
    );
    (constant && f.vregs[vreg].class == Class::R && f.vregs[vreg].width == 1).then_some(vreg)
}

/// Moves loop-invariant constant moves to their loops' preheaders; true when one moved.
pub fn hoist_constants(f: &mut Func) -> bool {
    let n = f.order.len();
    if n == 0 {
        return false;
    }
    // Writes per register: only a register written once may move.
    let mut writes: FxHashMap<VReg, u32> = FxHashMap::default();
    for b in &f.order {
        for i in &f.blocks[*b].insts {
            for r in i.def_regs() {
                if let Reg::Virt { vreg, .. } = r {
                    *writes.entry(vreg).or_default() += 1;
                }
            }
        }
    }
    let succs: Vec<Vec<usize>> = (0..n).map(|k| f.successors(k)).collect();
    let preds = ir::cfg::predecessors(&succs);
    let idom = ir::cfg::immediate_dominators(&succs, 0);
    let (mut loops, _) = ir::cfg::natural_loops(&succs, 0, &idom);
    loops.sort_by_key(|l| l.size);
    let mut pressure = crate::hoist::r_pressure(f);
    let mut moved = false;
    for l in &loops {
        let outside: Vec<usize> = preds[l.header]
            .iter()
            .copied()
            .filter(|&p| !l.body[p])
            .collect();
        let ph = match outside.as_slice() {
            [p] if succs[*p] == [l.header] => *p,
            _ => continue,
        };
        let movable =
            |f: &Func, i: &Inst| constant_move(f, i).is_some_and(|t| writes.get(&t) == Some(&1));
        // The constants, one register each: the loop's blocks each made their own.
        let mut first: FxHashMap<Operand, VReg> = FxHashMap::default();
        for (k, b) in f.order.iter().enumerate() {
            if !l.body[k] {
                continue;
            }
            for i in &f.blocks[*b].insts {
                if movable(f, i) {
                    let t = constant_move(f, i).expect("a constant move");
                    first.entry(value_of(i)).or_insert(t);
                }
            }
        }
        if first.is_empty() {
            continue;
        }
        // Within the registers the kernel needs anyway: the loop's highest R pressure plus
        // one word per constant may not exceed the kernel's (ptxas leaves constants in a loop
        // when registers are short; `curand`'s skip-ahead loops hold dozens).
        let kernel_max = pressure.iter().flatten().copied().max().unwrap_or(0);
        let loop_max = (0..n)
            .filter(|&k| l.body[k])
            .flat_map(|k| pressure[k].iter().copied())
            .max()
            .unwrap_or(0);
        if loop_max as usize + first.len() > kernel_max as usize {
            continue;
        }
        let mut hoisted = Vec::new();
        let mut same: FxHashMap<VReg, VReg> = FxHashMap::default();
        for (k, b) in f.order.clone().into_iter().enumerate() {
            if !l.body[k] {
                continue;
            }
            let insts = std::mem::take(&mut f.blocks[b].insts);
            let (go, stay): (Vec<Inst>, Vec<Inst>) = insts.into_iter().partition(|i| movable(f, i));
            f.blocks[b].insts = stay;
            for i in go {
                let t = constant_move(f, &i).expect("a constant move");
                let keep = first[&value_of(&i)];
                if keep == t {
                    hoisted.push(i);
                } else {
                    same.insert(t, keep);
                }
            }
        }
        if !same.is_empty() {
            replace_reads(f, &same);
        }
        moved = true;
        let block = &mut f.blocks[f.order[ph]].insts;
        // Before the preheader's branch, if it ends in one (an unconditional `BRA` to the
        // header); after everything else.
        let at = match block.last() {
            Some(i) if i.is_terminator() => block.len() - 1,
            _ => block.len(),
        };
        block.splice(at..at, hoisted);
        pressure = crate::hoist::r_pressure(f);
    }
    moved
}

/// The constant a constant move writes (`RZ` as 0).
fn value_of(i: &Inst) -> Operand {
    match &i.operands[1] {
        Operand::Reg { .. } => Operand::Imm(0),
        o => o.clone(),
    }
}

/// Rewrites every read of a register in `same` to its replacement (all of width 1).
fn replace_reads(f: &mut Func, same: &FxHashMap<VReg, VReg>) {
    for b in f.order.clone() {
        for i in &mut f.blocks[b].insts {
            for o in &mut i.operands {
                let reg = match o {
                    Operand::Reg { reg, .. } => reg,
                    Operand::Mem { base, .. } => base,
                    Operand::MemUr { base, .. } => base,
                    Operand::ConstIndexed { index, .. } => index,
                    _ => continue,
                };
                if let Reg::Virt {
                    vreg,
                    part: 0,
                    width: 1,
                } = *reg
                    && let Some(&u) = same.get(&vreg)
                {
                    *reg = Reg::v(u, 1);
                }
            }
        }
    }
}
