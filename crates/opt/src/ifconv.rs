//! If-conversion: a conditional branch around a few instructions becomes those instructions
//! under the branch's predicate, as ptxas writes it (`@!P0 IMAD ...` instead of `@P0 BRA`).
//!
//! Two shapes, in layout order:
//! * *triangle* `X: … @g BRA L` · `T: …` · `L:` — `T` runs under `!g`;
//! * *diamond* `X: … @g BRA E` · `T: … BRA J` · `E: …` · `J:` — `T` under `!g`, `E` under
//!   `g`.
//!
//! `T` and `E` must be entered only from `X`, hold only instructions that take a guard
//! without changing meaning (arithmetic, conversions, memory accesses; no collectives,
//! barriers, control flow, uniform-datapath writes, or instructions already guarded), and
//! not write the branch's predicate. The converted blocks join `X`, so the scheduler sees one
//! block. Sizes follow ptxas 13.0.88 (measured on sm_90 with straight-line `mad.lo` bodies):
//! it predicates a one-sided body of up to 8 instructions and a two-sided one of up to 6 a
//! side, and keeps the branch (with `BSSY`/`BSYNC`) beyond.
//!
//! No region, no barrier: a converted branch needs no convergence barrier either, so this
//! runs before [`crate::reconverge`].

use std::collections::{HashMap, HashSet};

use ir::liveness::{Liveness, VSet, vindex};
use ir::{Block, Class, Func, Guard, Inst, Mnemonic, Operand, Reg};

/// The largest one-sided body predicated.
const MAX_TRIANGLE: usize = 8;
/// The largest side of a two-sided body predicated.
const MAX_DIAMOND_SIDE: usize = 6;

/// Converts every short branch it can; how many.
pub fn if_convert(f: &mut Func) -> usize {
    let mut converted = 0;
    // Inner branches first: an outer body holding a branch converts in a later pass.
    loop {
        let n = convert_pass(f);
        converted += n;
        if n == 0 {
            return converted;
        }
    }
}

/// Predicates the allocator has (P0–P6); a conversion keeps its branch predicate live over
/// the body, so it is made only where few others are live.
const PREDICATES_LIVE_MAX: usize = 4;

/// One pass over the layout; the analyses are those of the layout at its start (a
/// conversion only merges blocks into the branch's block, which no later candidate's checks
/// read).
fn convert_pass(f: &mut Func) -> usize {
    drop_empty_unreachable(f);
    let preds = ir::cfg::predecessors(&ir::cfg::successors(f));
    let live = Liveness::compute(f);
    let mut references: HashMap<Block, usize> = HashMap::new();
    for o in f.insts().flat_map(|i| i.operands.iter()) {
        if let Operand::Label(b) = o {
            *references.entry(*b).or_default() += 1;
        }
    }
    let is_pred: Vec<bool> = f.vregs.iter().map(|(_, d)| d.class == Class::P).collect();
    let positions: Vec<Block> = f.order.clone();
    let mut gone: HashSet<Block> = HashSet::new();
    let mut converted = 0;
    for p in 0..positions.len() {
        let x = positions[p];
        if gone.contains(&x) {
            continue;
        }
        let Some(br) = f.blocks[x].insts.last() else {
            continue;
        };
        let Some(g) = br.guard else {
            continue;
        };
        if br.mnemonic() != Mnemonic::BRA {
            continue;
        }
        let Reg::Virt { vreg: pred, .. } = g.pred else {
            continue;
        };
        let Some(target) = br.operands.iter().find_map(|o| match o {
            Operand::Label(t) => Some(*t),
            _ => None,
        }) else {
            continue;
        };
        let live_preds = live.live_out[p].iter().filter(|&v| is_pred[v]).count();
        if live_preds > PREDICATES_LIVE_MAX {
            continue;
        }
        let only_from_x = |q: usize| preds[q].iter().all(|&r| r == p);
        let untouched = |q: usize| positions.get(q).is_some_and(|b| !gone.contains(b));
        let negated = Guard {
            pred: g.pred,
            negated: !g.negated,
        };
        // Triangle: X · T · L.
        if untouched(p + 1) && untouched(p + 2) && positions[p + 2] == target {
            let t = positions[p + 1];
            let outside = [&live.live_in[p + 1], &live.live_in[p + 2]];
            if only_from_x(p + 1)
                && !references.contains_key(&t)
                && let Some(need) = guards(f, &f.blocks[t].insts, pred, MAX_TRIANGLE, &outside)
            {
                let body = std::mem::take(&mut f.blocks[t].insts);
                let xs = &mut f.blocks[x].insts;
                xs.pop();
                xs.extend(apply(body, &need, negated));
                gone.insert(t);
                converted += 1;
                continue;
            }
        }
        // Diamond: X · T (BRA J) · E · J.
        if untouched(p + 1) && untouched(p + 2) && untouched(p + 3) && positions[p + 2] == target {
            let (t, e, j) = (positions[p + 1], positions[p + 2], positions[p + 3]);
            let t_insts = &f.blocks[t].insts;
            let jumps_to_j = t_insts.last().is_some_and(|i| {
                i.mnemonic() == Mnemonic::BRA
                    && i.guard.is_none()
                    && i.operands == [Operand::Label(j)]
            });
            let outside_t = [
                &live.live_in[p + 1],
                &live.live_in[p + 2],
                &live.live_in[p + 3],
            ];
            let outside_e = [&live.live_in[p + 2], &live.live_in[p + 3]];
            let plan = (jumps_to_j
                && only_from_x(p + 1)
                && only_from_x(p + 2)
                && !references.contains_key(&t)
                && references.get(&e) == Some(&1))
            .then(|| {
                let then = guards(
                    f,
                    &t_insts[..t_insts.len() - 1],
                    pred,
                    MAX_DIAMOND_SIDE,
                    &outside_t,
                )?;
                let other = guards(f, &f.blocks[e].insts, pred, MAX_DIAMOND_SIDE, &outside_e)?;
                Some((then, other))
            })
            .flatten();
            if let Some((need_t, need_e)) = plan {
                let mut then = std::mem::take(&mut f.blocks[t].insts);
                then.pop();
                let other = std::mem::take(&mut f.blocks[e].insts);
                let xs = &mut f.blocks[x].insts;
                xs.pop();
                xs.extend(apply(then, &need_t, negated));
                xs.extend(apply(other, &need_e, g));
                gone.insert(t);
                gone.insert(e);
                converted += 1;
            }
        }
    }
    f.order.retain(|b| !gone.contains(b));
    converted
}

/// Removes the empty blocks nothing enters (lowering leaves one after each unconditional
/// `bra`), so that the shapes above are found in layout order.
fn drop_empty_unreachable(f: &mut Func) {
    let preds = ir::cfg::predecessors(&ir::cfg::successors(f));
    let referenced: HashSet<Block> = f
        .insts()
        .flat_map(|i| i.operands.iter())
        .filter_map(|o| match o {
            Operand::Label(b) => Some(*b),
            _ => None,
        })
        .collect();
    let dead: HashSet<Block> = f
        .order
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(p, b)| {
            f.blocks[**b].insts.is_empty() && preds[*p].is_empty() && !referenced.contains(b)
        })
        .map(|(_, b)| *b)
        .collect();
    f.order.retain(|b| !dead.contains(b));
}

/// `body` with guard `g` on the instructions `need` names.
fn apply(body: Vec<Inst>, need: &[bool], g: Guard) -> impl Iterator<Item = Inst> {
    body.into_iter().zip(need.to_vec()).map(move |(mut i, n)| {
        if n {
            i.guard = Some(g);
        }
        i
    })
}

/// Which instructions of `body` (at most `limit`) need the guard, or `None` when the body
/// cannot run predicated. Memory accesses keep the guard (a load's address may be invalid
/// where the branch skipped it); arithmetic whose results are dead outside the body (not live
/// into the body nor anywhere in `outside`) runs for every lane, as ptxas hoists address
/// arithmetic out of predicated code, unless it reads a value written under the guard;
/// other arithmetic keeps the guard. A guarded write of a
/// predicate, or any write of the branch's own predicate, refuses the body: the first would
/// keep the predicate's old value live across the branch.
fn guards(
    f: &Func,
    body: &[Inst],
    pred: ir::VReg,
    limit: usize,
    outside: &[&VSet],
) -> Option<Vec<bool>> {
    if body.len() > limit {
        return None;
    }
    let mut need = Vec::with_capacity(body.len());
    let mut guarded_defs: HashSet<ir::VReg> = HashSet::new();
    for i in body {
        if i.guard.is_some()
            || !predicable(i)
            || i.operands.iter().any(|o| matches!(o, Operand::Label(_)))
        {
            return None;
        }
        let mut local = true;
        let mut writes_pred = false;
        for r in i.def_regs() {
            match r {
                Reg::Virt { vreg, .. } => {
                    if vreg == pred || !matches!(f.vregs[vreg].class, Class::R | Class::P) {
                        return None;
                    }
                    writes_pred |= f.vregs[vreg].class == Class::P;
                    local &= outside.iter().all(|l| !l.contains(vindex(vreg)));
                }
                Reg::Zero(_) => {}
                Reg::Phys { .. } => return None,
            }
        }
        // Arithmetic reading a value written under the guard in this body takes the guard
        // too, unless it writes a predicate: then the reads are all under the guard, and
        // liveness lets the guarded write start the value's life (an unguarded read would
        // keep it live around any loop the body is in, a register for nothing).
        let reads_guarded = i.use_regs().any(|r| match r {
            Reg::Virt { vreg, .. } => guarded_defs.contains(&vreg),
            _ => false,
        });
        let guarded = touches_memory(i) || !local || (reads_guarded && !writes_pred);
        if guarded && writes_pred {
            return None;
        }
        if guarded {
            guarded_defs.extend(i.def_regs().filter_map(|r| match r {
                Reg::Virt { vreg, .. } => Some(vreg),
                _ => None,
            }));
        }
        need.push(guarded);
    }
    Some(need)
}

/// Accesses whose address the skipped path may not have made valid (a constant-bank read
/// with a register index included).
fn touches_memory(i: &Inst) -> bool {
    ir::kind::is_memory_access(i.mnemonic()) || ir::kind::is_indexed_constant_load(i)
}

/// Instructions whose guarded form means "this, for the lanes whose guard holds": per-lane
/// arithmetic, conversions, constant and special-register reads, and memory accesses.
fn predicable(i: &Inst) -> bool {
    let m = i.mnemonic();
    !i.is_system_call()
        && (ir::kind::is_lane_arithmetic(m)
            || ir::kind::is_memory_access(m)
            || matches!(m, Mnemonic::LDC | Mnemonic::S2R))
}
