//! Divergence analysis: which conditional branches may send the lanes of a warp different
//! ways. A branch on a value every active lane of the warp holds alike (computed from
//! constants, kernel parameters, block indices and other such values by arithmetic) keeps the
//! warp together and needs no convergence barrier; ptxas places none there either.
//!
//! A virtual register is *divergent* when lanes may hold different values in it:
//! * written by an instruction that reads per-thread state (thread and lane indices, memory
//!   other than the constant banks, collectives, clocks) — everything outside the list of
//!   pure arithmetic in [`keeps_uniform`];
//! * written by any instruction with a divergent operand or a divergent guard;
//! * written inside the region of a divergent branch and live where the region ends (its
//!   immediate post-dominator): lanes that took different sides arrive there with values
//!   from different writes ("sync dependence"). When the branch's paths meet only where the
//!   thread may have ended on one of them, every value written on either path and live where
//!   they meet counts.
//!
//! Uniform registers (`UR`, `UP`) hold one value per warp by construction. The analysis is a
//! fixed point that only ever adds divergent registers, so it ends.

use ir::cfg::{self, PostDom};
use ir::liveness::{Liveness, VSet, vindex};
use ir::{Block, Class, Func, Inst, Mnemonic, Operand, Reg};

/// The blocks (by layout position) whose final conditional `BRA` may diverge.
pub fn divergent_branches(f: &Func) -> Vec<bool> {
    let n = f.order.len();
    let nv = f.vregs.len();
    let mut branches = vec![false; n];
    if n == 0 {
        return branches;
    }
    // Lanes that end the thread leave no value behind: paths into blocks that only exit do
    // not meet anything (as in `crate::reconverge`).
    let all = cfg::successors(f);
    let succs =
        crate::reconverge::without_exits(&all, &crate::reconverge::exit_only_blocks(f, &all));
    let pd = PostDom::new(&succs);
    let live = Liveness::compute(f);
    // The virtual registers each block writes.
    let written: Vec<VSet> = f
        .order
        .iter()
        .map(|&b| {
            let mut s = VSet::new(nv);
            for i in &f.blocks[b].insts {
                for r in i.def_regs() {
                    if let Reg::Virt { vreg, .. } = r {
                        s.insert(vindex(vreg));
                    }
                }
            }
            s
        })
        .collect();
    let per_lane: Vec<bool> = f
        .vregs
        .iter()
        .map(|(_, d)| matches!(d.class, Class::R | Class::P))
        .collect();
    let mut div = VSet::new(nv);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &f.order {
            for i in &f.blocks[b].insts {
                if !writes_divergent(f, i, &div) {
                    continue;
                }
                for r in i.def_regs() {
                    if let Reg::Virt { vreg, .. } = r
                        && per_lane[vindex(vreg)]
                    {
                        changed |= div.insert(vindex(vreg));
                    }
                }
            }
        }
        for p in 0..n {
            if branches[p] || !branch_on_divergent(f, f.order[p], &div) || succs[p].len() < 2 {
                continue;
            }
            branches[p] = true;
            changed = true;
            // Sync dependence: values from different sides meeting again.
            let mut join_live = VSet::new(nv);
            let mut region = VSet::new(n);
            match pd.ipdom(p) {
                Some(s) if s != PostDom::EXIT => {
                    join_live.union_with(&live.live_in[s]);
                    // The branch's own block only when the region loops back to it: what it
                    // writes before the branch, every lane writes alike.
                    for &t in &succs[p] {
                        reach(&succs, t, Some(s), &mut region);
                    }
                }
                _ => {
                    let mut sides: Vec<VSet> = Vec::new();
                    for &s in &succs[p] {
                        let mut r = VSet::new(n);
                        reach(&succs, s, None, &mut r);
                        sides.push(r);
                    }
                    for m in 0..n {
                        if sides.iter().all(|r| r.contains(m)) {
                            join_live.union_with(&live.live_in[m]);
                        }
                    }
                    for r in &sides {
                        region.union_with(r);
                    }
                }
            }
            for q in region.iter() {
                for v in written[q].iter() {
                    if join_live.contains(v) && per_lane[v] {
                        div.insert(v);
                    }
                }
            }
        }
    }
    branches
}

/// Blocks reachable from `from` (itself included) without passing `stop`, into `out`.
fn reach(succs: &[Vec<usize>], from: usize, stop: Option<usize>, out: &mut VSet) {
    let mut work = vec![from];
    while let Some(b) = work.pop() {
        if Some(b) == stop || out.contains(b) {
            continue;
        }
        out.insert(b);
        work.extend(succs[b].iter().copied());
    }
}

/// Whether block `b` ends with a conditional branch on a predicate that may be divergent.
fn branch_on_divergent(f: &Func, b: Block, div: &VSet) -> bool {
    let Some(i) = f.blocks[b].insts.last() else {
        return false;
    };
    if i.mnemonic() != Mnemonic::BRA {
        return false;
    }
    match i.guard.map(|g| g.pred) {
        None | Some(Reg::Zero(_)) => false,
        Some(Reg::Virt { vreg, .. }) => {
            f.vregs[vreg].class == Class::P && div.contains(vindex(vreg))
        }
        Some(Reg::Phys { class, .. }) => class == Class::P,
    }
}

/// Whether register `r` may hold different values in different lanes.
fn divergent(f: &Func, r: Reg, div: &VSet) -> bool {
    match r {
        Reg::Zero(_) => false,
        Reg::Phys { .. } => false,
        Reg::Virt { vreg, .. } => {
            matches!(f.vregs[vreg].class, Class::R | Class::P) && div.contains(vindex(vreg))
        }
    }
}

/// Whether `i` may write different values in different lanes.
fn writes_divergent(f: &Func, i: &Inst, div: &VSet) -> bool {
    !keeps_uniform(i) || i.use_regs().any(|r| divergent(f, r, div))
}

/// Instructions whose results are the same in every lane when their operands are: pure
/// arithmetic, constant-bank loads, the block's own indices and the uniform datapath.
fn keeps_uniform(i: &Inst) -> bool {
    use Mnemonic as M;
    match i.mnemonic() {
        m if ir::kind::is_lane_arithmetic(m) || ir::kind::is_uniform_arithmetic(m) => true,
        M::LDC | M::ULDC | M::R2UR | M::S2UR => true,
        // The block's indices are the same in every lane; every other special register
        // (thread and lane indices, masks, clocks) is not.
        M::S2R => i.operands.iter().all(|o| match o {
            Operand::Special(s) => s.starts_with("SR_CTAID") || *s == "SR_CgaCtaId",
            _ => true,
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{Guard, op};

    /// `v = S2R <sr>; p = ISETP v; @p BRA t` → `v = 1; EXIT` or `t: v = 2; EXIT`.
    fn branch_on(sr: &'static str) -> Func {
        let mut f = Func::new("k");
        let v = f.new_vreg(Class::R, 1, "v");
        let p = f.new_vreg(Class::P, 1, "p");
        let b0 = f.new_block();
        let b1 = f.new_block();
        let b2 = f.new_block();
        f.order = vec![b0, b1, b2];
        f.blocks[b0].insts = vec![
            Inst::new(
                op!("S2R"),
                vec![Operand::r(Reg::v(v, 1)), Operand::Special(sr)],
                vec![0],
            ),
            Inst::new(
                op!("ISETP.GE.AND"),
                vec![
                    Operand::r(Reg::v(p, 1)),
                    Operand::pt(),
                    Operand::r(Reg::v(v, 1)),
                    Operand::Imm(4),
                    Operand::pt(),
                ],
                vec![0],
            ),
            Inst {
                guard: Some(Guard {
                    pred: Reg::v(p, 1),
                    negated: false,
                }),
                ..Inst::new(op!("BRA"), vec![Operand::Label(b2)], vec![])
            },
        ];
        for (b, k) in [(b1, 1), (b2, 2)] {
            f.blocks[b].insts = vec![
                Inst::new(
                    op!("MOV"),
                    vec![Operand::r(Reg::v(v, 1)), Operand::Imm(k)],
                    vec![0],
                ),
                Inst::new(op!("EXIT"), vec![], vec![]),
            ];
        }
        f
    }

    #[test]
    fn a_branch_on_the_thread_index_diverges_and_one_on_the_block_index_does_not() {
        assert_eq!(
            divergent_branches(&branch_on("SR_TID.X")),
            vec![true, false, false]
        );
        assert_eq!(
            divergent_branches(&branch_on("SR_CTAID.X")),
            vec![false, false, false]
        );
    }
}
