//! Register allocation for [`ir::Func`] (v1: linear scan over live-range hulls, no spilling).
//!
//! Liveness is the usual backward data-flow over blocks, per virtual register. A definition
//! kills a register only when one unguarded instruction writes all of it; guarded and partial
//! writes keep it live (the old value may survive). Each virtual register then gets one
//! interval, the hull of every position where it is live, and intervals are assigned by a
//! linear scan: the lowest free base index that is a multiple of the register's width (64-bit
//! values on even pairs), never the registers the ABI fixes (R1, the stack pointer). Two
//! intervals that touch the same instruction never share a register, so no instruction's
//! destination overlaps a source of another value (safe for variable-latency instructions).
//!
//! Over budget is an error (`unsupported: register pressure ...`): spilling is not built yet.
//! The register count is reported the way ptxas reports it: highest R index + 1, plus 2
//! (checked on the oracle: saxpy uses R0..R7 and ptxas reports 10).

#![forbid(unsafe_code)]

use ir::{Class, Func, Reg, VReg};
use la_arena::ArenaMap;

/// The result: a physical base index per virtual register and ptxas's register count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub assign: ArenaMap<VReg, u8>,
    /// "Used N registers" as ptxas prints it.
    pub registers: u32,
    /// Highest predicate index used, if any.
    pub max_pred: Option<u8>,
}

impl Allocation {
    pub fn get(&self, v: VReg) -> u8 {
        self.assign.get(v).copied().unwrap_or(0)
    }
}

/// Allocation failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocError(pub String);

/// Registers ptxas adds to the highest used index + 1 in its report.
pub const REPORTED_EXTRA: u32 = 2;
/// Highest register count ptxas allows per thread.
pub const MAX_REGISTERS: u32 = 255;

/// Allocates `f`. `max_registers` is the budget in ptxas's counting (255 without
/// `--maxrregcount`).
pub fn allocate(f: &Func, max_registers: u32) -> Result<Allocation, AllocError> {
    let intervals = live_intervals(f);
    let limit_r = max_registers
        .min(MAX_REGISTERS)
        .saturating_sub(REPORTED_EXTRA + 1);
    let mut assign = ArenaMap::default();
    // Fixed physical registers in the code (R1 and the like) are never handed out.
    let mut fixed_r = Vec::new();
    let mut max_r: Option<u32> = None;
    for i in f.insts() {
        for r in i.def_regs().chain(i.use_regs()) {
            if let Reg::Phys {
                class: Class::R,
                index,
                width,
            } = r
            {
                for k in 0..width {
                    fixed_r.push(u32::from(index + k));
                    max_r = max_r.max(Some(u32::from(index + k)));
                }
            }
        }
    }
    let mut max_pred = None;
    for class in [Class::R, Class::P] {
        let (limit, reserved): (u32, &[u32]) = match class {
            Class::R => (limit_r, &fixed_r),
            _ => (6, &[]),
        };
        let mut list: Vec<(u32, u32, VReg)> = intervals
            .iter()
            .filter(|(v, _)| f.vregs[*v].class == class)
            .map(|(v, (s, e))| (*s, *e, *v))
            .collect();
        list.sort();
        // Active intervals: (end, base, width).
        let mut active: Vec<(u32, u32, u32)> = Vec::new();
        for (start, end, v) in list {
            active.retain(|(e, _, _)| *e >= start);
            let width = u32::from(f.vregs[v].width);
            let busy = |b: u32| {
                reserved.contains(&b)
                    || active
                        .iter()
                        .any(|(_, base, w)| (*base..*base + *w).contains(&b))
            };
            let mut base = 0;
            loop {
                if base + width - 1 > limit {
                    let what = match class {
                        Class::R => format!("{max_registers} registers"),
                        _ => "7 predicate registers".to_string(),
                    };
                    return Err(AllocError(format!(
                        "unsupported: register pressure (kernel `{}` needs more than {what}; spilling is not implemented)",
                        f.name
                    )));
                }
                if (base..base + width).all(|b| !busy(b)) {
                    break;
                }
                base += width;
            }
            active.push((end, base, width));
            assign.insert(v, base as u8);
            match class {
                Class::R => max_r = max_r.max(Some(base + width - 1)),
                _ => max_pred = max_pred.max(Some((base + width - 1) as u8)),
            }
        }
    }
    let registers = max_r.map_or(0, |m| m + 1) + REPORTED_EXTRA;
    Ok(Allocation {
        assign,
        registers,
        max_pred,
    })
}

/// Per virtual register, the hull `[first, last]` of instruction positions where it is live
/// (positions count instructions in layout order).
pub fn live_intervals(f: &Func) -> Vec<(VReg, (u32, u32))> {
    let n = f.order.len();
    let nv = f.vregs.len();
    let idx = |v: VReg| v.into_raw().into_u32() as usize;
    // Block positions.
    let mut starts = Vec::with_capacity(n);
    let mut pos = 0u32;
    for b in &f.order {
        starts.push(pos);
        pos += f.blocks[*b].insts.len() as u32;
    }
    let ends: Vec<u32> = (0..n)
        .map(|k| starts[k] + f.blocks[f.order[k]].insts.len() as u32)
        .collect();
    // gen/kill per block.
    let mut gen_ = vec![vec![false; nv]; n];
    let mut kill = vec![vec![false; nv]; n];
    for (k, b) in f.order.iter().enumerate() {
        for i in &f.blocks[*b].insts {
            for r in i.use_regs() {
                if let Reg::Virt { vreg, .. } = r
                    && !kill[k][idx(vreg)]
                {
                    gen_[k][idx(vreg)] = true;
                }
            }
            if i.guard.is_none() {
                for r in i.def_regs() {
                    if let Reg::Virt { vreg, part, width } = r
                        && part == 0
                        && width == f.vregs[vreg].width
                    {
                        kill[k][idx(vreg)] = true;
                    }
                }
            }
        }
    }
    let succ: Vec<Vec<usize>> = (0..n).map(|k| f.successors(k)).collect();
    let mut live_in = vec![vec![false; nv]; n];
    let mut live_out = vec![vec![false; nv]; n];
    let mut changed = true;
    while changed {
        changed = false;
        for k in (0..n).rev() {
            let mut out = vec![false; nv];
            for &s in &succ[k] {
                for (o, i) in out.iter_mut().zip(&live_in[s]) {
                    *o |= *i;
                }
            }
            let inn: Vec<bool> = (0..nv)
                .map(|v| gen_[k][v] || (out[v] && !kill[k][v]))
                .collect();
            if inn != live_in[k] || out != live_out[k] {
                live_in[k] = inn;
                live_out[k] = out;
                changed = true;
            }
        }
    }
    let mut hull: Vec<Option<(u32, u32)>> = vec![None; nv];
    let mut extend = |v: usize, p: u32| {
        hull[v] = Some(match hull[v] {
            None => (p, p),
            Some((a, b)) => (a.min(p), b.max(p)),
        });
    };
    for (k, b) in f.order.iter().enumerate() {
        for v in 0..nv {
            if live_in[k][v] {
                extend(v, starts[k]);
            }
            if live_out[k][v] {
                extend(v, ends[k].saturating_sub(1).max(starts[k]));
            }
        }
        for (j, i) in f.blocks[*b].insts.iter().enumerate() {
            let p = starts[k] + j as u32;
            for r in i.use_regs().chain(i.def_regs()) {
                if let Reg::Virt { vreg, .. } = r {
                    extend(idx(vreg), p);
                }
            }
        }
    }
    f.vregs
        .iter()
        .filter_map(|(v, _)| hull[idx(v)].map(|h| (v, h)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{Inst, Operand};

    fn mov(d: Reg, s: Operand) -> Inst {
        Inst::new("MOV", vec![Operand::r(d), s], vec![0])
    }

    #[test]
    fn pairs_are_aligned_and_r1_is_reserved() {
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let a = f.new_vreg(Class::R, 1, "a");
        let p = f.new_vreg(Class::R, 2, "p");
        let sp = Reg::Phys {
            class: Class::R,
            index: 1,
            width: 1,
        };
        let insts = vec![
            mov(sp, Operand::Imm(0)),
            mov(Reg::v(a, 1), Operand::Imm(1)),
            mov(Reg::part(p, 0), Operand::r(Reg::v(a, 1))),
            mov(Reg::part(p, 1), Operand::r(Reg::v(a, 1))),
            Inst::new(
                "STG.E",
                vec![
                    Operand::Mem {
                        base: Reg::v(p, 2),
                        offset: 0,
                        desc: None,
                    },
                    Operand::r(Reg::v(a, 1)),
                ],
                vec![],
            ),
        ];
        f.blocks[b].insts = insts;
        let al = allocate(&f, 255).unwrap();
        assert_eq!(al.get(a), 0);
        assert_eq!(al.get(p), 2, "pair skips R1 and starts even");
        assert_eq!(al.registers, 4 + REPORTED_EXTRA);
    }

    #[test]
    fn loop_carried_values_stay_live_around_the_loop() {
        // bb0: x = 1 ; bb1: y = x ; x = y ; @P BRA bb1 ; bb2: use x
        let mut f = Func::new("k");
        let b0 = f.new_block();
        let b1 = f.new_block();
        let b2 = f.new_block();
        f.order = vec![b0, b1, b2];
        let x = f.new_vreg(Class::R, 1, "x");
        let y = f.new_vreg(Class::R, 1, "y");
        let z = f.new_vreg(Class::R, 1, "z");
        let p = f.new_vreg(Class::P, 1, "p");
        f.blocks[b0].insts = vec![mov(Reg::v(x, 1), Operand::Imm(1))];
        let mut bra = Inst::new("BRA", vec![Operand::Label(b1)], vec![]);
        bra.guard = Some(ir::Guard {
            pred: Reg::v(p, 1),
            negated: false,
        });
        f.blocks[b1].insts = vec![
            mov(Reg::v(y, 1), Operand::r(Reg::v(x, 1))),
            mov(Reg::v(z, 1), Operand::Imm(3)),
            mov(Reg::v(x, 1), Operand::r(Reg::v(y, 1))),
            bra,
        ];
        f.blocks[b2].insts = vec![mov(Reg::v(z, 1), Operand::r(Reg::v(x, 1)))];
        let iv: std::collections::HashMap<_, _> = live_intervals(&f).into_iter().collect();
        assert_eq!(
            iv[&x],
            (0, 5),
            "x lives from its def through the loop to its use"
        );
        assert_eq!(iv[&p], (0, 4), "p is live-in (undefined) up to the branch");
        let al = allocate(&f, 255).unwrap();
        assert_ne!(al.get(x), al.get(y));
        assert_ne!(al.get(x), al.get(z));
    }

    #[test]
    fn over_budget_is_unsupported() {
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let vs: Vec<VReg> = (0..8).map(|_| f.new_vreg(Class::R, 1, "")).collect();
        for v in &vs {
            f.blocks[b].insts.push(mov(Reg::v(*v, 1), Operand::Imm(1)));
        }
        for v in &vs {
            f.blocks[b]
                .insts
                .push(mov(Reg::v(vs[0], 1), Operand::r(Reg::v(*v, 1))));
        }
        let e = allocate(&f, 8).unwrap_err();
        assert!(e.0.starts_with("unsupported: register pressure"), "{}", e.0);
        assert!(allocate(&f, 16).is_ok());
    }
}
