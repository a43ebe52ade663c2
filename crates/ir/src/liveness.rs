//! Liveness of virtual registers, shared by the optimizer (dead code) and the register
//! allocator (interference).
//!
//! A virtual register is live at a point when some path from there reads it before every one
//! of its 32-bit components has been overwritten. The granularity is the whole virtual
//! register, but a definition may be *partial*: a 64-bit value is often written one half at a
//! time (`IADD3 d.0 ...; IADD3.X d.1 ...`). A value whose components are all written, by
//! unguarded instructions and with no read of the register in between, is dead before the
//! first of those writes ("covered"). A guarded write covers nothing (the old value survives
//! where the guard is false) unless the other guard's write follows, or every later read of
//! the value in the block runs under the same guard ([`transfer`]).

use crate::{Func, Inst, Reg, VReg};

/// A fixed-size set of virtual registers (by arena index).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct VSet {
    words: Vec<u64>,
}

impl VSet {
    pub fn new(n: usize) -> VSet {
        VSet {
            words: vec![0; n.div_ceil(64)],
        }
    }
    pub fn insert(&mut self, i: usize) -> bool {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let was = self.words[w] & b != 0;
        self.words[w] |= b;
        !was
    }
    pub fn remove(&mut self, i: usize) {
        self.words[i / 64] &= !(1u64 << (i % 64));
    }
    pub fn contains(&self, i: usize) -> bool {
        self.words[i / 64] & (1u64 << (i % 64)) != 0
    }
    /// `self |= other`; whether anything changed.
    pub fn union_with(&mut self, other: &VSet) -> bool {
        let mut changed = false;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            let n = *a | *b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(k, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(k * 64 + b)
            })
        })
    }
    /// `self &= other`.
    pub fn intersect_with(&mut self, other: &VSet) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }
    /// How many values are in both sets.
    pub fn count_common(&self, other: &VSet) -> usize {
        self.words
            .iter()
            .zip(&other.words)
            .map(|(a, b)| (a & b).count_ones() as usize)
            .sum()
    }
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }
}

/// The arena index of a virtual register.
pub fn vindex(v: VReg) -> usize {
    v.into_raw().into_u32() as usize
}

/// Per virtual register, what the backward walk of a block has seen written since the last
/// read (scratch for [`transfer`]; all default between blocks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cover {
    /// Components written for every lane (unguarded writes, or writes under `@p` and `@!p`).
    all: u8,
    /// Components written under one guard only, waiting for a write under the opposite
    /// guard: (predicate index, negated, the predicate's generation then, components).
    half: Option<(u32, bool, u32, u8)>,
    /// For a predicate: how many times the walk has passed a write of it, so that a guard
    /// read before and after a write of its predicate is not taken for the same value.
    generation: u32,
    /// Whether every read of the value since it became live in this walk runs under one
    /// guard (predicate index, negated, generation), and the components written under that
    /// same guard since the last read: writes under `@p` cover reads under `@p` (the lanes
    /// that read are exactly the lanes that wrote; if-converted code: `@!P0 LDS R7, [R6];
    /// @!P0 FADD R4, R7, R8`).
    same_guard_reads: Option<(u32, bool, u32, u8)>,
}

fn full_mask(f: &Func, v: VReg) -> u8 {
    ((1u16 << f.vregs[v].width) - 1) as u8
}

/// Applies one instruction backward: `live` goes from the set after `i` to the set before
/// it. `cover` holds, per virtual register, the components written since the last read
/// (scratch: every index made non-default is pushed on `touched` so the caller can reset it).
///
/// A value is dead before writes that cover all its components for every lane: unguarded
/// writes, or a write under `@!p` followed by one under `@p` of the same components with no
/// read of the value and no write of `p` between (if-converted code: `@!P0 MOV R2, 0x1;
/// @P0 MOV R2, 0x2`). A write under one guard alone keeps the old value live (it survives
/// where the guard is false), except when every read of the value after it in the block, up
/// to the end of its life there, runs under the same guard (same predicate, same polarity,
/// no write of the predicate between): only lanes that wrote read.
pub fn transfer(
    f: &Func,
    i: &Inst,
    live: &mut VSet,
    cover: &mut [Cover],
    touched: &mut Vec<usize>,
) {
    // A write of a predicate separates the guards read after it from those read before.
    for r in i.def_regs() {
        if let Reg::Virt { vreg, .. } = r
            && f.vregs[vreg].class == crate::Class::P
        {
            let x = vindex(vreg);
            if cover[x] == Cover::default() {
                touched.push(x);
            }
            cover[x].generation += 1;
        }
    }
    let guard = i.guard.and_then(|g| match g.pred {
        Reg::Virt { vreg, .. } => {
            let p = vindex(vreg);
            Some((p as u32, g.negated, cover[p].generation))
        }
        _ => None,
    });
    for r in i.def_regs() {
        let Reg::Virt { vreg, part, width } = r else {
            continue;
        };
        let m = (((1u16 << width) - 1) << part) as u8;
        let x = vindex(vreg);
        if cover[x] == Cover::default() {
            touched.push(x);
        }
        let c = &mut cover[x];
        match (i.guard, guard) {
            (None, _) => c.all |= m,
            (Some(_), Some((p, negated, generation))) => match c.half {
                Some((hp, hneg, hgen, hm)) if hp == p && hneg != negated && hgen == generation => {
                    c.all |= hm & m;
                    c.half = Some((hp, hneg, hgen, hm & !m));
                }
                _ => c.half = Some((p, negated, generation, m)),
            },
            (Some(_), None) => {}
        }
        if let (Some((p, negated, generation)), Some((rp, rneg, rgen, rm))) =
            (guard, c.same_guard_reads)
            && (p, negated, generation) == (rp, rneg, rgen)
        {
            c.same_guard_reads = Some((rp, rneg, rgen, rm | m));
        }
        let full = full_mask(f, vreg);
        let same_guard_full = c.same_guard_reads.is_some_and(|(.., m)| m & full == full);
        if c.all & full == full || same_guard_full {
            live.remove(x);
            c.same_guard_reads = None;
        }
    }
    for r in i.use_regs() {
        if let Reg::Virt { vreg, .. } = r {
            let x = vindex(vreg);
            let was_live = !live.insert(x);
            if cover[x] == Cover::default() {
                touched.push(x);
            }
            let c = &mut cover[x];
            c.all = 0;
            c.half = None;
            c.same_guard_reads = match (guard, c.same_guard_reads) {
                (Some((p, n, g)), None) if !was_live => Some((p, n, g, 0)),
                (Some((p, n, g)), Some((rp, rn, rg, _))) if (p, n, g) == (rp, rn, rg) => {
                    Some((p, n, g, 0))
                }
                _ => None,
            };
        }
    }
}

/// Backward transfer through one block, instruction by instruction.
///
/// `live` holds the live-out set on entry and the live-in set on return; `visit(index,
/// live_after)` is called for every instruction (last first) before it is applied. `cover`
/// is scratch space (one byte per virtual register, all zero on entry and on return).
pub fn walk_block_backward(
    f: &Func,
    insts: &[Inst],
    live: &mut VSet,
    cover: &mut [Cover],
    mut visit: impl FnMut(usize, &VSet),
) {
    let mut touched: Vec<usize> = Vec::new();
    for (k, i) in insts.iter().enumerate().rev() {
        visit(k, live);
        transfer(f, i, live, cover, &mut touched);
    }
    for x in touched {
        cover[x] = Cover::default();
    }
}

/// Walks every instruction of `f` (blocks in layout order, each from its last instruction)
/// with the values live after it that are maybe defined by then (on some path from the
/// entry: `defined` from [`maybe_defined`], or earlier in its block): the values that hold
/// something across it and need a register there. `visit(block_position,
/// instruction_index, values)`, arena indices. The interference graph, the spiller and the
/// optimizer's pressure figures all count from this.
pub fn walk_defined_live(
    f: &Func,
    live: &Liveness,
    defined: &[VSet],
    mut visit: impl FnMut(usize, usize, &[usize]),
) {
    let mut cover = vec![Cover::default(); f.vregs.len()];
    let mut after: Vec<usize> = Vec::new();
    for (k, b) in f.order.iter().enumerate() {
        let insts = &f.blocks[*b].insts;
        let mut first_def: rustc_hash::FxHashMap<usize, usize> = Default::default();
        for (idx, i) in insts.iter().enumerate() {
            for r in i.def_regs() {
                if let Reg::Virt { vreg, .. } = r {
                    first_def.entry(vindex(vreg)).or_insert(idx);
                }
            }
        }
        let entry = &defined[k];
        let mut l = live.live_out[k].clone();
        walk_block_backward(f, insts, &mut l, &mut cover, |idx, live_after| {
            after.clear();
            after.extend(
                live_after
                    .iter()
                    .filter(|&v| entry.contains(v) || first_def.get(&v).is_some_and(|&d| d <= idx)),
            );
            visit(k, idx, &after);
        });
    }
}

/// [`walk_defined_live`] for the R values, as the register allocator counts them: those
/// live across an instruction, and those it writes. `visit(block_position,
/// instruction_index, words, values)`: their 32-bit words and arena indices.
pub fn walk_r_pressure(f: &Func, mut visit: impl FnMut(usize, usize, u32, &[usize])) {
    let live = Liveness::compute(f);
    let defined = maybe_defined(f);
    let width: Vec<u32> = f
        .vregs
        .iter()
        .map(|(_, d)| {
            if d.class == crate::Class::R {
                u32::from(d.width.max(1))
            } else {
                0
            }
        })
        .collect();
    let mut values: Vec<usize> = Vec::new();
    walk_defined_live(f, &live, &defined, |k, idx, after| {
        values.clear();
        values.extend(after.iter().copied().filter(|&v| width[v] > 0));
        for r in f.blocks[f.order[k]].insts[idx].def_regs() {
            if let Reg::Virt { vreg, .. } = r {
                let x = vindex(vreg);
                if width[x] > 0 && !values.contains(&x) {
                    values.push(x);
                }
            }
        }
        let words = values.iter().map(|&v| width[v]).sum();
        visit(k, idx, words, &values);
    });
}

/// Live-in and live-out sets per block, indexed by layout position (`Func::order`).
#[derive(Clone, Debug)]
pub struct Liveness {
    pub live_in: Vec<VSet>,
    pub live_out: Vec<VSet>,
}

impl Liveness {
    /// Live-in and live-out sets of every block: the least fixed point of the backward
    /// transfer ([`transfer`]) over the CFG.
    ///
    /// A block's transfer treats each value on its own: whether a value is live at the
    /// block's entry depends only on whether it is live at its exit (and on the block's
    /// instructions), and monotonically so. So it is `in = gen ∪ (out ∩ keep)`, with `gen`
    /// the entry set of an empty exit set and `keep` that of a full one; each block is walked
    /// twice, once for each, and the fixed point iterates over bit sets alone.
    pub fn compute(f: &Func) -> Liveness {
        let n = f.order.len();
        let nv = f.vregs.len();
        let succ: Vec<Vec<usize>> = (0..n).map(|k| f.successors(k)).collect();
        let mut cover = vec![Cover::default(); nv];
        let mut full = VSet::new(nv);
        for x in 0..nv {
            full.insert(x);
        }
        let mut gen_: Vec<VSet> = Vec::with_capacity(n);
        let mut keep: Vec<VSet> = Vec::with_capacity(n);
        for k in 0..n {
            let insts = &f.blocks[f.order[k]].insts;
            let mut g = VSet::new(nv);
            walk_block_backward(f, insts, &mut g, &mut cover, |_, _| {});
            let mut all = full.clone();
            walk_block_backward(f, insts, &mut all, &mut cover, |_, _| {});
            gen_.push(g);
            keep.push(all);
        }
        let mut live_in = gen_.clone();
        let mut live_out = vec![VSet::new(nv); n];
        let mut changed = true;
        while changed {
            changed = false;
            for k in (0..n).rev() {
                let out = exit_set(&succ[k], &live_in, nv);
                if out != live_out[k] {
                    let mut inn = out.clone();
                    inn.intersect_with(&keep[k]);
                    inn.union_with(&gen_[k]);
                    live_in[k] = inn;
                    live_out[k] = out;
                    changed = true;
                }
            }
        }
        Liveness { live_in, live_out }
    }

    /// [`Liveness::compute`] by walking every block in every round (the definition the
    /// faster form must equal; for tests).
    pub fn compute_by_walks(f: &Func) -> Liveness {
        let n = f.order.len();
        let nv = f.vregs.len();
        let succ: Vec<Vec<usize>> = (0..n).map(|k| f.successors(k)).collect();
        let mut live_in = vec![VSet::new(nv); n];
        let mut live_out = vec![VSet::new(nv); n];
        let mut cover = vec![Cover::default(); nv];
        let mut changed = true;
        while changed {
            changed = false;
            for k in (0..n).rev() {
                let out = exit_set(&succ[k], &live_in, nv);
                let mut inn = out.clone();
                walk_block_backward(
                    f,
                    &f.blocks[f.order[k]].insts,
                    &mut inn,
                    &mut cover,
                    |_, _| {},
                );
                if inn != live_in[k] || out != live_out[k] {
                    live_in[k] = inn;
                    live_out[k] = out;
                    changed = true;
                }
            }
        }
        Liveness { live_in, live_out }
    }
}

/// The union of the successors' live-in sets: a block's live-out set.
fn exit_set(succ: &[usize], live_in: &[VSet], nv: usize) -> VSet {
    let mut out = VSet::new(nv);
    for &s in succ {
        out.union_with(&live_in[s]);
    }
    out
}

/// Per block (layout position), the virtual registers some definition of which reaches the
/// block's entry on some path from the kernel's entry ("maybe defined"). A value live at a
/// point no definition of it reaches holds nothing there (every use it may reach would read
/// an undefined value), so it need not keep a register: the allocator builds interference
/// only among values that are both live and maybe defined.
pub fn maybe_defined(f: &Func) -> Vec<VSet> {
    let n = f.order.len();
    let nv = f.vregs.len();
    let succ: Vec<Vec<usize>> = (0..n).map(|k| f.successors(k)).collect();
    let defs: Vec<VSet> = f
        .order
        .iter()
        .map(|b| {
            let mut d = VSet::new(nv);
            for i in &f.blocks[*b].insts {
                for r in i.def_regs() {
                    if let Reg::Virt { vreg, .. } = r {
                        d.insert(vindex(vreg));
                    }
                }
            }
            d
        })
        .collect();
    let mut entry = vec![VSet::new(nv); n];
    let mut changed = true;
    while changed {
        changed = false;
        for k in 0..n {
            let mut out = entry[k].clone();
            out.union_with(&defs[k]);
            for &s in &succ[k] {
                if entry[s].union_with(&out) {
                    changed = true;
                }
            }
        }
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Class, Operand, op};

    fn mov(d: Reg, s: Operand) -> Inst {
        Inst::new(op!("MOV"), vec![Operand::r(d), s], vec![0])
    }

    #[test]
    fn a_value_written_in_halves_is_dead_before_the_first_half() {
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let a = f.new_vreg(Class::R, 1, "a");
        let d = f.new_vreg(Class::R, 2, "d");
        f.blocks[b].insts = vec![
            mov(Reg::v(a, 1), Operand::Imm(1)),
            mov(Reg::part(d, 0), Operand::r(Reg::v(a, 1))),
            mov(Reg::part(d, 1), Operand::r(Reg::v(a, 1))),
            Inst::new(
                op!("STG.E.64"),
                vec![
                    Operand::Mem {
                        base: Reg::v(d, 2),
                        offset: 0,
                        desc: None,
                    },
                    Operand::r(Reg::v(d, 2)),
                ],
                vec![],
            ),
        ];
        let l = Liveness::compute(&f);
        assert!(l.live_in[0].is_empty(), "nothing is live into the kernel");
        let mut seen = Vec::new();
        let mut live = VSet::new(f.vregs.len());
        let mut cover = vec![Cover::default(); f.vregs.len()];
        walk_block_backward(&f, &f.blocks[b].insts, &mut live, &mut cover, |k, after| {
            seen.push((k, after.contains(vindex(d)), after.contains(vindex(a))));
        });
        seen.reverse();
        assert_eq!(
            seen,
            vec![
                (0, false, true),
                (1, true, true),
                (2, true, false),
                (3, false, false)
            ]
        );
    }

    #[test]
    fn guarded_writes_and_reads_between_halves_keep_the_old_value_live() {
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let d = f.new_vreg(Class::R, 2, "d");
        let p = f.new_vreg(Class::P, 1, "p");
        let x = f.new_vreg(Class::R, 1, "x");
        let mut guarded = mov(Reg::part(d, 0), Operand::Imm(0));
        guarded.guard = Some(crate::Guard {
            pred: Reg::v(p, 1),
            negated: false,
        });
        f.blocks[b].insts = vec![
            guarded,
            mov(Reg::part(d, 1), Operand::Imm(0)),
            mov(Reg::v(x, 1), Operand::r(Reg::v(d, 2))),
        ];
        let l = Liveness::compute(&f);
        assert!(l.live_in[0].contains(vindex(d)), "guarded half: d live in");
        // A read of the register between the two halves keeps it live as well.
        f.blocks[b].insts = vec![
            mov(Reg::part(d, 0), Operand::Imm(0)),
            mov(Reg::v(x, 1), Operand::r(Reg::part(d, 1))),
            mov(Reg::part(d, 1), Operand::Imm(0)),
            mov(Reg::v(x, 1), Operand::r(Reg::v(d, 2))),
        ];
        let l = Liveness::compute(&f);
        assert!(l.live_in[0].contains(vindex(d)));
    }

    /// If-converted code: `@!p x = 1; @p x = 2; use x` writes `x` for every lane, so `x` is
    /// dead before; with a write of `p` between the two, or with one guard only, it is not.
    #[test]
    fn writes_under_opposite_guards_cover_a_value() {
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let x = f.new_vreg(Class::R, 1, "x");
        let y = f.new_vreg(Class::R, 1, "y");
        let p = f.new_vreg(Class::P, 1, "p");
        let under = |negated: bool, k: i64| {
            let mut i = mov(Reg::v(x, 1), Operand::Imm(k));
            i.guard = Some(crate::Guard {
                pred: Reg::v(p, 1),
                negated,
            });
            i
        };
        let setp = Inst::new(
            op!("ISETP.NE.AND"),
            vec![
                Operand::r(Reg::v(p, 1)),
                Operand::pt(),
                Operand::r(Reg::v(y, 1)),
                Operand::rz(),
                Operand::pt(),
            ],
            vec![0],
        );
        let read = mov(Reg::v(y, 1), Operand::r(Reg::v(x, 1)));
        let live_in = |f: &Func| Liveness::compute(f).live_in[0].contains(vindex(x));
        f.blocks[b].insts = vec![under(true, 1), under(false, 2), read.clone()];
        assert!(!live_in(&f), "both guards: x is written for every lane");
        f.blocks[b].insts = vec![under(true, 1), setp, under(false, 2), read.clone()];
        assert!(
            live_in(&f),
            "p rewritten between: the guards may both be false"
        );
        f.blocks[b].insts = vec![under(false, 1), under(false, 2), read];
        assert!(live_in(&f), "the same guard twice");
    }

    /// If-converted code: `@!p x = ld; @!p y = x` reads `x` only in the lanes that wrote it,
    /// so `x` is dead before its guarded write; an unguarded read, a read under the other
    /// guard, a write of `p` between, or a read of a live-out value keeps it live.
    #[test]
    fn reads_under_the_guard_of_the_write_start_the_value_there() {
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let x = f.new_vreg(Class::R, 1, "x");
        let y = f.new_vreg(Class::R, 1, "y");
        let p = f.new_vreg(Class::P, 1, "p");
        let guarded = |mut i: Inst, negated: bool| {
            i.guard = Some(crate::Guard {
                pred: Reg::v(p, 1),
                negated,
            });
            i
        };
        let write = guarded(mov(Reg::v(x, 1), Operand::Imm(1)), true);
        let read = |negated: Option<bool>| {
            let i = mov(Reg::v(y, 1), Operand::r(Reg::v(x, 1)));
            match negated {
                Some(n) => guarded(i, n),
                None => i,
            }
        };
        let setp = Inst::new(
            op!("ISETP.NE.AND"),
            vec![
                Operand::r(Reg::v(p, 1)),
                Operand::pt(),
                Operand::r(Reg::v(y, 1)),
                Operand::rz(),
                Operand::pt(),
            ],
            vec![0],
        );
        let live_in = |f: &Func| Liveness::compute(f).live_in[0].contains(vindex(x));
        f.blocks[b].insts = vec![write.clone(), read(Some(true)), read(Some(true))];
        assert!(!live_in(&f), "every read under the write's guard");
        f.blocks[b].insts = vec![write.clone(), read(Some(true)), read(None)];
        assert!(live_in(&f), "an unguarded read");
        f.blocks[b].insts = vec![write.clone(), read(Some(false))];
        assert!(live_in(&f), "a read under the other guard");
        f.blocks[b].insts = vec![write.clone(), setp, read(Some(true))];
        assert!(live_in(&f), "p rewritten between");
        // x read in a successor: live out, so the guarded write does not start it.
        let c = f.new_block();
        f.order.push(c);
        f.blocks[b].insts = vec![write, read(Some(true))];
        f.blocks[c].insts = vec![read(Some(true))];
        assert!(live_in(&f), "live out of the block");
    }
}
