//! Address offsets: an address computed as `base + constant` is read as `[base+constant]`.
//!
//! PTX code computes addresses with separate adds (`add.s64 %rd3, %rd1, 16; ld.global.f32
//! %f1, [%rd3]`; Triton computes dozens of `%rd1 + k` at the top of a kernel and loads from
//! them later). Lowered one instruction at a time, each such address is a register pair of
//! its own (`IADD3 R4, P0, R2, 0x10, RZ; IADD3.X R5, R3, RZ, RZ, P0, !PT`) that lives until
//! its last access. ptxas folds the constant into the access (`LDG.E R0, [R2.64+0x10]`),
//! which saves the adds and, more importantly, the registers. So does this pass:
//!
//! * A forward data flow records, per virtual register, that it holds another register plus
//!   a constant: a 64-bit value from the carry pair `IADD3 d.0, P, b.0, lo, RZ` +
//!   `IADD3.X d.1, b.1, hi, RZ, P, !PT` (`hi` the constant's high word, `RZ` or an
//!   immediate), a 32-bit value from `IADD3 d, b, k, RZ`. A fact holds where every path to
//!   the point passes its definition with no write of `d`, of `b` (or of the carry between
//!   the two halves) since; guarded writes make no fact.
//! * Every memory operand `[d+o]` whose address register has a fact `d = b + k` becomes
//!   `[b+o+k]` when the instruction encodes that offset (asked of the SASS tables,
//!   [`Forms`]); the adds become dead and [`crate::dce`] removes them.
//!
//! The hardware forms the address as the register plus the sign-extended offset, modulo
//! 2^64 for a 64-bit address, exactly what the pair of adds computes. For a 32-bit address
//! (shared, local) the sum is the same while it does not wrap around 2^32, which no address
//! inside a shared or local window does.

use ir::{Class, Func, Inst, Operand, Reg, VReg, op};
use rustc_hash::FxHashMap;

use crate::facts::plain;
use crate::forms::Forms;

/// `d = base + offset` (the whole of `d`, 1 or 2 words, from the same words of `base`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fact {
    base: VReg,
    offset: i64,
}

/// The low half of a 64-bit add whose high half has not been seen yet, keyed by its carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Low {
    dst: VReg,
    base: VReg,
    lo: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct State {
    facts: FxHashMap<VReg, Fact>,
    lows: FxHashMap<VReg, Low>,
}

impl State {
    /// Forgets what a write of `v` invalidates.
    fn kill(&mut self, v: VReg) {
        self.facts.remove(&v);
        self.facts.retain(|_, x| x.base != v);
        self.lows.remove(&v);
        self.lows.retain(|_, l| l.dst != v && l.base != v);
    }

    fn meet(&mut self, other: &State) {
        self.facts.retain(|k, x| other.facts.get(k) == Some(x));
        self.lows.retain(|k, l| other.lows.get(k) == Some(l));
    }
}

/// Whole virtual register `v` of `width` words, read or written as such (part 0).
fn whole(f: &Func, r: &Reg, width: u8) -> Option<VReg> {
    match *r {
        Reg::Virt {
            vreg,
            part: 0,
            width: w,
        } if w == width && f.vregs[vreg].width == width && f.vregs[vreg].class == Class::R => {
            Some(vreg)
        }
        _ => None,
    }
}

/// Word `part` of a two-word R register.
fn word_of(f: &Func, o: &Operand, part: u8) -> Option<VReg> {
    match plain(o)? {
        Reg::Virt {
            vreg,
            part: p,
            width: 1,
        } if p == part && f.vregs[vreg].width == 2 && f.vregs[vreg].class == Class::R => Some(vreg),
        _ => None,
    }
}

/// An immediate addend: `RZ` or an integer.
fn addend(o: &Operand) -> Option<i64> {
    match o {
        Operand::Imm(k) => Some(*k),
        o if plain(o) == Some(Reg::Zero(Class::R)) => Some(0),
        _ => None,
    }
}

fn is_pt(o: &Operand, not: bool) -> bool {
    matches!(o, Operand::Reg { reg: Reg::Zero(Class::P), not: n, neg: false, abs: false, sel: ir::Sel::None } if *n == not)
}

/// Applies `i` to the state: kills for its writes, then the fact or half-fact it makes.
fn transfer(f: &Func, s: &mut State, i: &Inst) {
    let mut gen_fact = made_by(f, s, i);
    // Chains compose: `d = b + k` where `b = c + j` holds is `d = c + (j + k)`.
    if let Some(Gen::Fact(_, x)) = &mut gen_fact
        && let Some(y) = s.facts.get(&x.base)
    {
        *x = Fact {
            base: y.base,
            offset: x.offset.wrapping_add(y.offset),
        };
    }
    for r in i.def_regs() {
        if let Reg::Virt { vreg, .. } = r {
            s.kill(vreg);
        }
    }
    match gen_fact {
        Some(Gen::Fact(d, x)) if d != x.base => {
            s.facts.insert(d, x);
        }
        Some(Gen::Low(p, l)) if l.dst != l.base => {
            s.lows.insert(p, l);
        }
        _ => {}
    }
}

enum Gen {
    Fact(VReg, Fact),
    Low(VReg, Low),
}

/// What an unguarded add makes, judged on the state before it.
fn made_by(f: &Func, s: &State, i: &Inst) -> Option<Gen> {
    if i.guard.is_some() || !i.implicit_uses.is_empty() {
        return None;
    }
    let ops = &i.operands;
    if i.op == op!("IADD3") && i.defs == [0] && ops.len() == 4 {
        // `IADD3 d, b, k, RZ` (either order of b and k).
        let d = whole(f, &plain(&ops[0])?, 1)?;
        let (b, k) = one_register(f, &ops[1..], 1)?;
        return Some(Gen::Fact(
            d,
            Fact {
                base: b,
                offset: i64::from(k as i32),
            },
        ));
    }
    if i.op == op!("IADD3") && i.defs == [0, 1] && ops.len() == 5 {
        // `IADD3 d.0, P, b.0, lo, RZ`.
        let d = word_of(f, &ops[0], 0)?;
        let Reg::Virt { vreg: p, .. } = plain(&ops[1])? else {
            return None;
        };
        let mut base = None;
        let mut lo: i64 = 0;
        for o in &ops[2..] {
            if let Some(b) = word_of(f, o, 0) {
                if base.replace(b).is_some() {
                    return None;
                }
            } else {
                lo = lo.checked_add(addend(o)?)?;
            }
        }
        return Some(Gen::Low(
            p,
            Low {
                dst: d,
                base: base?,
                lo: lo as u32,
            },
        ));
    }
    if i.op == op!("IADD3.X") && i.defs == [0] && ops.len() == 6 && is_pt(&ops[5], true) {
        // `IADD3.X d.1, b.1, hi, RZ, P, !PT` after the low half.
        let d = word_of(f, &ops[0], 1)?;
        let Reg::Virt { vreg: p, .. } = plain(&ops[4])? else {
            return None;
        };
        let low = s.lows.get(&p)?;
        let mut base = None;
        let mut hi: i64 = 0;
        for o in &ops[1..4] {
            if let Some(b) = word_of(f, o, 1) {
                if base.replace(b).is_some() {
                    return None;
                }
            } else {
                hi = hi.checked_add(addend(o)?)?;
            }
        }
        if low.dst != d || Some(low.base) != base {
            return None;
        }
        let offset = ((hi as u64) << 32 | u64::from(low.lo)) as i64;
        return Some(Gen::Fact(
            d,
            Fact {
                base: low.base,
                offset,
            },
        ));
    }
    None
}

/// The one register operand (a whole `width`-word R register) among `ops` and the sum of
/// the others, which must be immediates or `RZ`.
fn one_register(f: &Func, ops: &[Operand], width: u8) -> Option<(VReg, i64)> {
    let mut base = None;
    let mut k: i64 = 0;
    for o in ops {
        match plain(o).and_then(|r| whole(f, &r, width)) {
            Some(b) => {
                if base.replace(b).is_some() {
                    return None;
                }
            }
            None => k = k.checked_add(addend(o)?)?,
        }
    }
    Some((base?, k))
}

/// Folds address constants into memory operands (module doc); whether anything changed.
pub fn fold(f: &mut Func, forms: &mut Forms) -> bool {
    let n = f.order.len();
    if n == 0 {
        return false;
    }
    let succ: Vec<Vec<usize>> = (0..n).map(|k| f.successors(k)).collect();
    let mut preds = vec![Vec::new(); n];
    for (k, s) in succ.iter().enumerate() {
        for &t in s {
            preds[t].push(k);
        }
    }
    let entry_state = |out: &[Option<State>], k: usize| -> Option<State> {
        if k == 0 {
            return Some(State::default());
        }
        let mut it = preds[k].iter().filter_map(|p| out[*p].as_ref());
        let mut m = it.next()?.clone();
        for o in it {
            m.meet(o);
        }
        Some(m)
    };
    // Forward data flow to a fixpoint; `None` = not reached yet (top).
    let mut out: Vec<Option<State>> = vec![None; n];
    let mut changed = true;
    while changed {
        changed = false;
        for k in 0..n {
            let Some(mut s) = entry_state(&out, k) else {
                continue;
            };
            for i in &f.blocks[f.order[k]].insts {
                transfer(f, &mut s, i);
            }
            if out[k].as_ref() != Some(&s) {
                out[k] = Some(s);
                changed = true;
            }
        }
    }
    let mut folded = false;
    for k in 0..n {
        let Some(mut s) = entry_state(&out, k) else {
            continue;
        };
        let b = f.order[k];
        let mut insts = std::mem::take(&mut f.blocks[b].insts);
        for i in &mut insts {
            if !s.facts.is_empty() {
                folded |= rewrite(f, &s, i, forms);
            }
            transfer(f, &mut s, i);
        }
        f.blocks[b].insts = insts;
    }
    folded
}

/// Rewrites the memory operands of `i` whose address has a fact, where the result encodes.
fn rewrite(f: &Func, s: &State, i: &mut Inst, forms: &mut Forms) -> bool {
    let mut changed = false;
    for k in 0..i.operands.len() {
        let Operand::Mem { base, offset, desc } = i.operands[k] else {
            continue;
        };
        let Reg::Virt {
            vreg,
            part: 0,
            width,
        } = base
        else {
            continue;
        };
        if f.vregs[vreg].width != width {
            continue;
        }
        // An address read whole elsewhere in the instruction (a pair printed as its low
        // register) stays.
        if i.implicit_uses
            .iter()
            .any(|r| matches!(r, Reg::Virt { vreg: v, .. } if *v == vreg))
        {
            continue;
        }
        let Some(x) = s.facts.get(&vreg) else {
            continue;
        };
        let Some(sum) = i64::from(offset).checked_add(x.offset) else {
            continue;
        };
        let Ok(sum) = i32::try_from(sum) else {
            continue;
        };
        let old = i.operands[k].clone();
        i.operands[k] = Operand::Mem {
            base: Reg::Virt {
                vreg: x.base,
                part: 0,
                width,
            },
            offset: sum,
            desc,
        };
        if forms.encodable(f, i) {
            changed = true;
        } else {
            i.operands[k] = old;
        }
    }
    changed
}
