//! Loads issued early, before register allocation.
//!
//! The scheduler (`crates/sched`) reorders a block after allocation, where every register the
//! allocator reused is a dependence: in an unrolled loop whose body is `LDG a; LDG b; FFMA
//! acc, a, b` the allocator gives each pair of loads the same two registers, so no load can
//! pass the `FFMA` before it and every pair waits for memory in turn. ptxas issues the loads
//! of such a block together, first. Here each weak load (`LDG`, `LDS`, `LD`, `LDL` without a
//! strong or `.MMIO` ordering) in a loop moves up its block, past arithmetic, until it meets
//! an instruction that defines a register it reads, reads or writes a register it writes, or
//! is anything else (another load, a store, atomic, barrier, fence, branch, `EXIT`, special
//! register read, ...: the loads keep their order, memory order and control flow stay as
//! they were), or has moved 16 instructions. Code outside loops is left to the scheduler.
//!
//! A hoisted load keeps its destination live across the instructions it passes, so it moves
//! only while that keeps the R words live across each of them at or below the block's
//! highest count before the pass. The allocator does not always fit the result in as few
//! registers (docs/arch/opt.md has the corpus figures: a few kernels gain one to four
//! registers, as many lose some).

use ir::liveness::vindex;
use ir::{Class, Func, Inst, Mnemonic, Operand, Reg};

/// How many instructions a load may move up at most.
const MAX_DISTANCE: usize = 16;

/// Moves weak loads up their blocks (see the module docs); whether anything moved.
pub fn hoist_loads(f: &mut Func) -> bool {
    let width = r_words(f);
    let mut pressure = r_pressure(f);
    let in_loop = loop_blocks(f);
    let mut moved = false;
    for (k, b) in f.order.clone().into_iter().enumerate() {
        if !in_loop[k] {
            continue;
        }
        let insts = &mut f.blocks[b].insts;
        let p = &mut pressure[k];
        let ceiling = p.iter().copied().max().unwrap_or(0);
        for j in 0..insts.len() {
            if !is_weak_load(&insts[j]) {
                continue;
            }
            let words: u32 = insts[j]
                .def_regs()
                .filter_map(|r| match r {
                    Reg::Virt { vreg, .. } => Some(width[vindex(vreg)]),
                    _ => None,
                })
                .sum();
            let mut i = j;
            while i > 0
                && j - i < MAX_DISTANCE
                && may_pass(&insts[i - 1], &insts[j])
                && p[i - 1] + words <= ceiling
            {
                i -= 1;
            }
            if i == j {
                continue;
            }
            let load = insts.remove(j);
            insts.insert(i, load);
            let across = p.remove(j);
            p.insert(i, across);
            for q in &mut p[i + 1..=j] {
                *q += words;
            }
            moved = true;
        }
    }
    moved
}

/// Per block (layout position): whether it is in a natural loop.
fn loop_blocks(f: &Func) -> Vec<bool> {
    let succs = ir::cfg::successors(f);
    let mut in_loop = vec![false; succs.len()];
    if succs.is_empty() {
        return in_loop;
    }
    let idom = ir::cfg::immediate_dominators(&succs, 0);
    for l in ir::cfg::natural_loops(&succs, 0, &idom).0 {
        for (k, m) in l.body.iter().enumerate() {
            in_loop[k] |= *m;
        }
    }
    in_loop
}

/// A load that may pass arithmetic and other weak loads.
fn is_weak_load(i: &Inst) -> bool {
    matches!(
        i.mnemonic(),
        Mnemonic::LDG | Mnemonic::LDS | Mnemonic::LD | Mnemonic::LDL
    ) && !ir::kind::is_strongly_ordered(i)
        && !ir::kind::never_runs(i)
        && !i.operands.iter().any(|o| matches!(o, Operand::Label(_)))
}

/// Whether `load` may move above `before`: `before` only computes on registers and shares
/// no register dependence with it.
fn may_pass(before: &Inst, load: &Inst) -> bool {
    let m = before.mnemonic();
    // Not past another load: loads keep their order (ptxas's too), only arithmetic moves
    // below them.
    let free = ir::kind::is_lane_arithmetic(m)
        || ir::kind::is_uniform_arithmetic(m)
        || matches!(m, Mnemonic::ULDC | Mnemonic::R2UR);
    if !free
        || before.is_terminator()
        || before
            .operands
            .iter()
            .any(|o| matches!(o, Operand::Label(_)))
    {
        return false;
    }
    let load_defs: Vec<Reg> = load.def_regs().collect();
    let load_uses: Vec<Reg> = load.use_regs().collect();
    let meets = |x: Reg, set: &[Reg]| set.iter().any(|y| same_register(x, *y));
    !before
        .def_regs()
        .any(|x| meets(x, &load_uses) || meets(x, &load_defs))
        && !before.use_regs().any(|x| meets(x, &load_defs))
}

/// Whether two register operands may name the same storage (a virtual register as a whole;
/// `RZ`/`PT` name none).
fn same_register(a: Reg, b: Reg) -> bool {
    match (a, b) {
        (Reg::Zero(_), _) | (_, Reg::Zero(_)) => false,
        (Reg::Virt { vreg: x, .. }, Reg::Virt { vreg: y, .. }) => x == y,
        (Reg::Virt { .. }, _) | (_, Reg::Virt { .. }) => false,
        _ => a == b,
    }
}

/// Per virtual register (arena index): its 32-bit R words (0 for the other classes).
fn r_words(f: &Func) -> Vec<u32> {
    f.vregs
        .iter()
        .map(|(_, d)| {
            if d.class == Class::R {
                u32::from(d.width.max(1))
            } else {
                0
            }
        })
        .collect()
}

/// Per block (layout position), per instruction: the R words live across it
/// ([`ir::liveness::walk_r_pressure`]).
pub(crate) fn r_pressure(f: &Func) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = f
        .order
        .iter()
        .map(|b| vec![0; f.blocks[*b].insts.len()])
        .collect();
    ir::liveness::walk_r_pressure(f, |k, idx, words, _| out[k][idx] = words);
    out
}
