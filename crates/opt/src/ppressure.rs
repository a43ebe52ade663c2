//! Predicate pressure: SASS has 7 allocatable predicate registers (P0–P6). A kernel that
//! keeps more predicates live at once (nvcc reuses a `setp` result hundreds of instructions
//! later) has some of them kept in an R register instead, as ptxas does with `P2R`/`R2P` or
//! re-materialized compares:
//!
//! * after every write of the predicate `p`, `SEL r, RZ, 0x1, !p` keeps its value in `r`
//!   (`0x1` when `p` is true; `SEL d, a, b, p` is `p ? a : b`);
//! * every read of `p` reads a fresh predicate `t` set just before it by
//!   `ISETP.NE.U32.AND t, PT, r, RZ, PT`.
//!
//! The value of `p` and of `r != 0` are the same at every point, so the rewrite is exact; `p`
//! itself then lives only from its write to the `SEL`, and each `t` only up to its reader.
//!
//! A system call (`CALL.ABS.NOINC`) may change every predicate register (`ir::abi`): a
//! predicate live across one is kept in an R register the same way.

use ir::liveness::{Liveness, VSet, transfer, vindex};
use ir::{Class, Func, Inst, Operand, Reg, VReg, op};

/// Allocatable predicate registers.
const PREDICATES: usize = 7;

/// Per predicate register: how many instruction points it is live across, at the points
/// where more than [`PREDICATES`] predicates are live or written; and the largest number.
fn pressure(f: &Func) -> (usize, Vec<usize>) {
    let nv = f.vregs.len();
    let is_p: Vec<bool> = f.vregs.iter().map(|(_, d)| d.class == Class::P).collect();
    let mut preds = VSet::new(nv);
    for (x, _) in is_p.iter().enumerate().filter(|(_, p)| **p) {
        preds.insert(x);
    }
    let live = Liveness::compute(f);
    let mut cover = vec![ir::liveness::Cover::default(); nv];
    let mut worst = 0usize;
    let mut blame = vec![0usize; nv];
    for (k, b) in f.order.iter().enumerate() {
        let insts = &f.blocks[*b].insts;
        let mut l: VSet = live.live_out[k].clone();
        let mut touched = Vec::new();
        for i in insts.iter().rev() {
            // Counted first: most points are far below the limit.
            let mut new_defs: Vec<usize> = i
                .def_regs()
                .filter_map(|r| match r {
                    Reg::Virt { vreg, .. } if is_p[vindex(vreg)] && !l.contains(vindex(vreg)) => {
                        Some(vindex(vreg))
                    }
                    _ => None,
                })
                .collect();
            new_defs.dedup();
            let written = new_defs.len();
            let live_preds = l.count_common(&preds);
            if live_preds + written <= PREDICATES {
                worst = worst.max(live_preds + written);
                transfer(f, i, &mut l, &mut cover, &mut touched);
                continue;
            }
            let mut at: Vec<usize> = l.iter().filter(|x| is_p[*x]).collect();
            for r in i.def_regs() {
                if let Reg::Virt { vreg, .. } = r {
                    let x = vindex(vreg);
                    if is_p[x] && !at.contains(&x) {
                        at.push(x);
                    }
                }
            }
            worst = worst.max(at.len());
            if at.len() > PREDICATES {
                for x in at {
                    blame[x] += 1;
                }
            }
            transfer(f, i, &mut l, &mut cover, &mut touched);
        }
        for x in touched.drain(..) {
            cover[x] = ir::liveness::Cover::default();
        }
    }
    (worst, blame)
}

fn uses_pred(i: &Inst, p: VReg) -> bool {
    i.use_regs()
        .any(|r| matches!(r, Reg::Virt { vreg, .. } if vreg == p))
}

fn defs_pred(i: &Inst, p: VReg) -> bool {
    i.def_regs()
        .any(|r| matches!(r, Reg::Virt { vreg, .. } if vreg == p))
}

/// Replaces the predicate `p` by its copy in an R register (module docs).
fn spill(f: &mut Func, p: VReg) {
    let r = f.new_vreg(Class::R, 1, format!("{}.r", f.vregs[p].name));
    for b in f.order.clone() {
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len() + 4);
        for mut i in insts {
            if uses_pred(&i, p) {
                let t = f.new_vreg(Class::P, 1, "");
                out.push(Inst::new(
                    op!("ISETP.NE.U32.AND"),
                    vec![
                        Operand::r(Reg::v(t, 1)),
                        Operand::pt(),
                        Operand::r(Reg::v(r, 1)),
                        Operand::rz(),
                        Operand::pt(),
                    ],
                    vec![0],
                ));
                let swap = |reg: &mut Reg| {
                    if let Reg::Virt { vreg, .. } = reg
                        && *vreg == p
                    {
                        *reg = Reg::v(t, 1);
                    }
                };
                if let Some(g) = &mut i.guard {
                    swap(&mut g.pred);
                }
                for (k, o) in i.operands.iter_mut().enumerate() {
                    if i.defs.contains(&k) {
                        continue;
                    }
                    if let Operand::Reg { reg, .. } = o {
                        swap(reg);
                    }
                }
            }
            let writes = defs_pred(&i, p);
            let terminator = i.is_terminator();
            out.push(i);
            if writes && !terminator {
                out.push(Inst::new(
                    op!("SEL"),
                    vec![
                        Operand::r(Reg::v(r, 1)),
                        Operand::rz(),
                        Operand::Imm(1),
                        Operand::not(Reg::v(p, 1)),
                    ],
                    vec![0],
                ));
            }
        }
        f.blocks[b].insts = out;
    }
}

/// The predicates live across a system call.
fn live_across_calls(f: &Func) -> Vec<VReg> {
    if !f.insts().any(Inst::is_system_call) {
        return Vec::new();
    }
    let live = Liveness::compute(f);
    let mut cover = vec![ir::liveness::Cover::default(); f.vregs.len()];
    let mut across = VSet::new(f.vregs.len());
    for (k, b) in f.order.iter().enumerate() {
        let insts = &f.blocks[*b].insts;
        let mut l: VSet = live.live_out[k].clone();
        let mut touched = Vec::new();
        for i in insts.iter().rev() {
            if i.is_system_call() {
                across.union_with(&l);
            }
            transfer(f, i, &mut l, &mut cover, &mut touched);
        }
        for x in touched.drain(..) {
            cover[x] = ir::liveness::Cover::default();
        }
    }
    f.vregs
        .iter()
        .map(|(v, _)| v)
        .filter(|v| f.vregs[*v].class == Class::P && across.contains(vindex(*v)))
        .collect()
}

/// Moves predicates to R registers until at most 7 are live anywhere and none is live across
/// a system call; whether any moved.
pub fn relieve(f: &mut Func) -> bool {
    let mut spilled: Vec<VReg> = live_across_calls(f);
    for &p in &spilled {
        spill(f, p);
    }
    loop {
        let (worst, blame) = pressure(f);
        if worst <= PREDICATES {
            return !spilled.is_empty();
        }
        // The predicate live across most of the crowded points, not one made by a spill.
        let victim = f
            .vregs
            .iter()
            .map(|(v, _)| v)
            .filter(|v| {
                blame[vindex(*v)] > 0 && !spilled.contains(v) && !f.vregs[*v].name.is_empty()
            })
            .max_by_key(|v| blame[vindex(*v)]);
        let Some(v) = victim else {
            return !spilled.is_empty();
        };
        spill(f, v);
        spilled.push(v);
    }
}
