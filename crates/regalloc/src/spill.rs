//! Spilling: when the R registers do not suffice, values go to the thread's stack frame.
//!
//! [`allocate_spilling`] first tries [`crate::allocate`]. When general registers run out, it
//! first brings the register pressure down to the budget where it is far above it
//! ([`relieve_pressure`]: at every instruction where more words are live than the budget
//! less a margin, values live there are spilled, chosen greedily by the excess they relieve
//! per reference), so that kernels needing hundreds of registers more than the budget (large
//! Triton kernels) compile in a few rounds. Then, while general registers still run out (as
//! many values per round as found no register, 4 to 8, at most 32 rounds), it picks values
//! to spill — the R values with the longest span in layout order per
//! reference (Chaitin's cost over degree, with the span standing for the degree), never a
//! value made by spilling — and rewrites every instruction that references one: the
//! instruction reads and writes a fresh short-lived register instead, loaded just before it
//! (`LDL`, `LDL.64`, `LDL.128` from `[R1+slot]`) when it reads the value and stored just
//! after it (`STL`, under the instruction's own guard) for each part it writes. Slots sit
//! above the kernel's own `.local` variables; the frame the entry block opens
//! (`IADD3 R1, R1, -frame, RZ`, `lower`'s `local.rs`) grows to cover them (rounded to a multiple of
//! the largest slot and of the variables' alignment, at least 8 bytes). Then allocation runs again. ptxas spills less (it rematerializes, splits live
//! ranges and spills to uniform registers first); kiln's spill code is plain but
//! correct, which is what the execution checks test.

use ir::liveness::vindex;
use ir::{Class, Func, Inst, Opcode, Operand, Reg, VReg, op};
use rustc_hash::FxHashSet;

use crate::{AllocError, Allocation, allocate_counting};

/// Rounds of spilling before giving up.
const MAX_ROUNDS: usize = 32;
/// Words of the budget [`relieve_pressure`] leaves free at every instruction: room for the
/// spill code's own short-lived registers and for the alignment of pairs and quads.
const PRESSURE_MARGIN: u32 = 8;
/// Passes of [`relieve_pressure`] (each recomputes liveness on the rewritten kernel).
const PRESSURE_PASSES: usize = 4;

/// The rewritten kernel and its frame when values were spilled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spill {
    /// The kernel with spill code, to schedule and encode instead of the input.
    pub func: Func,
    /// Bytes of the stack frame, the kernel's `.local` variables and the spill slots.
    pub frame_size: u32,
    /// Bytes stored and loaded by the spill code (ptxas's `-v` "bytes spill stores/loads",
    /// counted per instruction as written).
    pub store_bytes: u32,
    pub load_bytes: u32,
}

fn stack_pointer() -> Reg {
    Reg::Phys {
        class: Class::R,
        index: 1,
        width: 1,
    }
}

/// The local load and store of `width` words.
fn local_access(width: u8) -> (Opcode, Opcode) {
    match width {
        2 => (op!("LDL.64"), op!("STL.64")),
        4 => (op!("LDL.128"), op!("STL.128")),
        _ => (op!("LDL"), op!("STL")),
    }
}

/// Allocates `f` within `max_registers`, spilling R values to the stack frame when needed.
/// `frame_size` is the frame the lowering opened (0 for none), `frame_align` the alignment
/// its variables need from the stack pointer.
pub fn allocate_spilling(
    f: &Func,
    max_registers: u32,
    frame_size: u32,
    frame_align: u32,
) -> Result<Allocation, AllocError> {
    let (first, mut failed) = match allocate_counting(f, max_registers) {
        Ok(a) => return Ok(a),
        Err((e, n)) if e.is_general_pressure() => (e, n),
        Err((e, _)) => return Err(e),
    };
    let mut s = Spiller {
        g: f.clone(),
        spilled: FxHashSet::default(),
        temps: FxHashSet::default(),
        frame: frame_size,
        align: frame_align.max(8),
        store_bytes: 0,
        load_bytes: 0,
    };
    let target = crate::highest_r(max_registers).saturating_sub(PRESSURE_MARGIN);
    for _ in 0..PRESSURE_PASSES {
        let victims = relieve_pressure(&s.g, target, &s.spilled, &s.temps);
        if victims.is_empty() {
            break;
        }
        s.spill(victims);
    }
    if !s.spilled.is_empty() {
        match allocate_counting(&s.g, max_registers) {
            Ok(a) => return Ok(s.finish(a)),
            Err((e, n)) if e.is_general_pressure() => failed = n,
            Err((e, _)) => return Err(e),
        }
    }
    for _ in 0..MAX_ROUNDS {
        // As many values as found no register, 4 to 8 per round. (Spilling every failed value
        // at once ended, on `pressure.ptx` under 24 registers, with all values spilled and the
        // allocation still failing; a cause is not established — small rounds succeed.)
        let victims = choose(&s.g, &s.spilled, &s.temps, failed.clamp(4, 8));
        if victims.is_empty() {
            return Err(gave_up(first, s.spilled.len()));
        }
        s.spill(victims);
        match allocate_counting(&s.g, max_registers) {
            Ok(a) => return Ok(s.finish(a)),
            Err((e, n)) if e.is_general_pressure() => failed = n,
            Err((e, _)) => return Err(e),
        }
    }
    Err(gave_up(first, s.spilled.len()))
}

/// The kernel being rewritten with spill code, and what the rewriting has used so far.
struct Spiller {
    g: Func,
    spilled: FxHashSet<VReg>,
    /// The short-lived registers spill code reads and writes (never spilled themselves).
    temps: FxHashSet<VReg>,
    /// The frame's end: the lowering's `.local` variables, then the slots given out.
    frame: u32,
    /// The stack pointer's alignment the frame must keep: the lowering's variables' and
    /// the largest slot's (`STL.128` needs a 16-byte aligned address), at least 8.
    align: u32,
    store_bytes: u32,
    load_bytes: u32,
}

impl Spiller {
    /// Gives each of `victims` a slot and rewrites its references through it.
    fn spill(&mut self, victims: Vec<VReg>) {
        let mut slots = Vec::with_capacity(victims.len());
        for &v in &victims {
            let size = 4 * u32::from(self.g.vregs[v].width.max(1));
            let slot = self.frame.div_ceil(size) * size;
            self.frame = slot + size;
            self.align = self.align.max(size);
            slots.push((v, slot));
        }
        let (stored, loaded) = rewrite(&mut self.g, &slots, &mut self.temps);
        self.store_bytes += stored;
        self.load_bytes += loaded;
        self.spilled.extend(victims);
    }

    /// The frame to open: the stack pointer moves down by it, so it is a multiple of every
    /// alignment an address above it needs.
    fn frame_bytes(&self) -> u32 {
        self.frame.div_ceil(self.align) * self.align
    }

    /// The allocation of the rewritten kernel, with the frame opened for its slots.
    fn finish(mut self, mut a: Allocation) -> Allocation {
        let frame = self.frame_bytes();
        open_frame(&mut self.g, frame);
        a.spill = Some(Box::new(Spill {
            func: self.g,
            frame_size: frame,
            store_bytes: self.store_bytes,
            load_bytes: self.load_bytes,
        }));
        a
    }
}

fn gave_up(first: AllocError, spilled: usize) -> AllocError {
    let m = first.0.trim_end_matches(')');
    AllocError(format!("{m}, even with {spilled} values spilled)"))
}

/// The values to spill this round: R values (not spilled yet, not spill temporaries) by
/// span per reference, longest first.
fn choose(f: &Func, spilled: &FxHashSet<VReg>, temps: &FxHashSet<VReg>, count: usize) -> Vec<VReg> {
    let References { first, last, refs } = references(f);
    let mut cands: Vec<(u64, VReg)> = f
        .vregs
        .iter()
        .filter(|(v, d)| {
            d.class == Class::R
                && !spilled.contains(v)
                && !temps.contains(v)
                && first[vindex(*v)] != u32::MAX
        })
        .map(|(v, _)| {
            let x = vindex(v);
            let span = u64::from(last[x] - first[x]);
            (span * 16 / u64::from(refs[x].max(1)), v)
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    cands.sort_by(|a, b| b.0.cmp(&a.0).then(vindex(a.1).cmp(&vindex(b.1))));
    cands.into_iter().take(count).map(|(_, v)| v).collect()
}

/// Per value (arena index): the first and last instruction referencing it, in layout order
/// (`u32::MAX` and 0 for none), and how many instructions reference it.
struct References {
    first: Vec<u32>,
    last: Vec<u32>,
    refs: Vec<u32>,
}

fn references(f: &Func) -> References {
    let n = f.vregs.len();
    let mut r = References {
        first: vec![u32::MAX; n],
        last: vec![0; n],
        refs: vec![0; n],
    };
    for (pos, i) in f.insts().enumerate() {
        let pos = pos as u32;
        let mut seen: Vec<usize> = Vec::new();
        for reg in i.def_regs().chain(i.use_regs()) {
            if let Reg::Virt { vreg, .. } = reg {
                let x = vindex(vreg);
                r.first[x] = r.first[x].min(pos);
                r.last[x] = r.last[x].max(pos);
                if !seen.contains(&x) {
                    seen.push(x);
                    r.refs[x] += 1;
                }
            }
        }
    }
    r
}

/// Replaces `v` in `r` by `t`.
fn subst(r: Reg, v: VReg, t: VReg) -> Reg {
    match r {
        Reg::Virt { vreg, part, width } if vreg == v => Reg::Virt {
            vreg: t,
            part,
            width,
        },
        other => other,
    }
}

fn subst_operand(o: &mut Operand, v: VReg, t: VReg) {
    match o {
        Operand::Reg { reg, .. } => *reg = subst(*reg, v, t),
        Operand::Mem { base, desc, .. } => {
            *base = subst(*base, v, t);
            if let Some(d) = desc {
                *d = subst(*d, v, t);
            }
        }
        Operand::MemUr { base, ur, .. } => {
            *base = subst(*base, v, t);
            *ur = subst(*ur, v, t);
        }
        Operand::ConstIndexed { index, .. } => *index = subst(*index, v, t),
        _ => {}
    }
}

/// Rewrites every instruction referencing a value of `victims` (each with its slot) to use a
/// fresh register loaded from / stored to `[R1+slot]`; the bytes stored and loaded.
///
/// One pass over the kernel for all victims. The code equals rewriting the victims one after
/// another in their order: around an instruction, the loads in victim order, then the
/// instruction, then the stores in reverse victim order; each victim's fresh registers are made
/// together, in layout order.
fn rewrite(f: &mut Func, victims: &[(VReg, u32)], temps: &mut FxHashSet<VReg>) -> (u32, u32) {
    let index: rustc_hash::FxHashMap<VReg, usize> = victims
        .iter()
        .enumerate()
        .map(|(k, &(v, _))| (v, k))
        .collect();
    let victim_of = |r: &Reg| match r {
        Reg::Virt { vreg, .. } => index.get(vreg).copied(),
        _ => None,
    };
    // Per instruction in layout order, the victims it references (ascending victim order).
    let mut referencing: Vec<Vec<usize>> = Vec::new();
    let mut count = vec![0usize; victims.len()];
    for i in f.insts() {
        let mut ks: Vec<usize> = i
            .use_regs()
            .chain(i.def_regs())
            .filter_map(|r| victim_of(&r))
            .collect();
        ks.sort_unstable();
        ks.dedup();
        for &k in &ks {
            count[k] += 1;
        }
        referencing.push(ks);
    }
    // The fresh registers, victim by victim: `fresh[k]` in layout order of its references.
    let mut fresh: Vec<std::vec::IntoIter<VReg>> = Vec::with_capacity(victims.len());
    for (k, &(v, _)) in victims.iter().enumerate() {
        let width = f.vregs[v].width.max(1);
        let name = format!("{}.spill", f.vregs[v].name);
        let ts: Vec<VReg> = (0..count[k])
            .map(|_| f.new_vreg(Class::R, width, name.clone()))
            .collect();
        temps.extend(ts.iter().copied());
        fresh.push(ts.into_iter());
    }
    let (mut stored, mut loaded) = (0u32, 0u32);
    let mem = |offset: u32| Operand::Mem {
        base: stack_pointer(),
        offset: offset as i32,
        desc: None,
    };
    let mut referencing = referencing.into_iter();
    for b in f.order.clone() {
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len());
        for mut i in insts {
            let ks = referencing.next().expect("one entry per instruction");
            if ks.is_empty() {
                out.push(i);
                continue;
            }
            let mut loads = Vec::new();
            let mut stores: Vec<Vec<Inst>> = Vec::new();
            for &k in &ks {
                let (v, slot) = victims[k];
                let width = f.vregs[v].width.max(1);
                let is = |r: &Reg| matches!(r, Reg::Virt { vreg, .. } if *vreg == v);
                let reads = i.use_regs().any(|r| is(&r));
                let writes: Vec<(u8, u8)> = i
                    .def_regs()
                    .filter_map(|r| match r {
                        Reg::Virt { vreg, part, width } if vreg == v => Some((part, width)),
                        _ => None,
                    })
                    .collect();
                let t = fresh[k].next().expect("counted");
                for o in &mut i.operands {
                    subst_operand(o, v, t);
                }
                for r in &mut i.implicit_uses {
                    *r = subst(*r, v, t);
                }
                if reads {
                    loads.push(Inst::new(
                        local_access(width).0,
                        vec![Operand::r(Reg::v(t, width)), mem(slot)],
                        vec![0],
                    ));
                    loaded += 4 * u32::from(width);
                }
                let mut st = Vec::new();
                for (part, w) in writes {
                    let mut s = Inst::new(
                        local_access(w).1,
                        vec![
                            mem(slot + 4 * u32::from(part)),
                            Operand::r(Reg::Virt {
                                vreg: t,
                                part,
                                width: w,
                            }),
                        ],
                        vec![],
                    );
                    s.guard = i.guard;
                    st.push(s);
                    stored += 4 * u32::from(w);
                }
                stores.push(st);
            }
            out.extend(loads);
            out.push(i);
            out.extend(stores.into_iter().rev().flatten());
        }
        f.blocks[b].insts = out;
    }
    (stored, loaded)
}

/// Sets the frame the entry block opens to `frame` bytes: the existing
/// `IADD3 R1, R1, -frame, RZ`, or a new one after the instruction that loads `R1`.
fn open_frame(f: &mut Func, frame: u32) {
    let sp = stack_pointer();
    let entry = f.order[0];
    let insts = &mut f.blocks[entry].insts;
    let adjust = Inst::new(
        op!("IADD3"),
        vec![
            Operand::r(sp),
            Operand::r(sp),
            Operand::Imm(-i64::from(frame)),
            Operand::rz(),
        ],
        vec![0],
    );
    if let Some(k) = insts.iter().position(|i| {
        i.op == op!("IADD3")
            && i.operands.first() == Some(&Operand::r(sp))
            && i.operands.get(1) == Some(&Operand::r(sp))
    }) {
        insts[k] = adjust;
        return;
    }
    let at = insts
        .iter()
        .position(|i| i.def_regs().any(|r| r == sp))
        .map_or(0, |k| k + 1);
    insts.insert(at, adjust);
}

/// Values to spill so that no instruction has more than `target` R words live across it
/// (live after it, or written by it): greedy set cover of the excess words at the crowded
/// instructions, each value scored by the excess it relieves per instruction referencing it
/// (every reference becomes a local load or store). Lazy greedy: a score only falls as
/// values are chosen, so a popped value whose recomputed score still beats the next
/// candidate's stale one is the best. Empty when nothing is crowded.
fn relieve_pressure(
    f: &Func,
    target: u32,
    spilled: &FxHashSet<VReg>,
    temps: &FxHashSet<VReg>,
) -> Vec<VReg> {
    let crowded = crowded_points(f, target);
    if crowded.is_empty() {
        return Vec::new();
    }
    let n = f.vregs.len();
    let width: Vec<u32> = f
        .vregs
        .iter()
        .map(|(_, d)| u32::from(d.width.max(1)))
        .collect();
    let refs = references(f).refs;
    let vreg_of: Vec<VReg> = f.vregs.iter().map(|(v, _)| v).collect();
    let eligible: Vec<bool> = vreg_of
        .iter()
        .map(|v| !spilled.contains(v) && !temps.contains(v))
        .collect();
    // Excess words per crowded point, and the crowded points each value is live at.
    let mut excess: Vec<u32> = crowded.iter().map(|(w, _)| w - target).collect();
    let mut points_of: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (p, (_, live)) in crowded.iter().enumerate() {
        for &v in live {
            if eligible[v] {
                points_of[v].push(p as u32);
            }
        }
    }
    let score = |v: usize, excess: &[u32]| -> u64 {
        let relieved: u64 = points_of[v]
            .iter()
            .map(|&p| u64::from(excess[p as usize].min(width[v])))
            .sum();
        relieved * 1024 / u64::from(refs[v] + 1)
    };
    let mut heap: std::collections::BinaryHeap<(u64, std::cmp::Reverse<usize>)> = (0..n)
        .filter(|&v| !points_of[v].is_empty())
        .map(|v| (score(v, &excess), std::cmp::Reverse(v)))
        .collect();
    let mut left: u64 = excess.iter().map(|&e| u64::from(e)).sum();
    let mut victims = Vec::new();
    while left > 0 {
        let Some((stale, std::cmp::Reverse(v))) = heap.pop() else {
            break;
        };
        let now = score(v, &excess);
        if now == 0 {
            continue;
        }
        if now < stale && heap.peek().is_some_and(|(next, _)| *next > now) {
            heap.push((now, std::cmp::Reverse(v)));
            continue;
        }
        for &p in &points_of[v] {
            let e = &mut excess[p as usize];
            let cut = (*e).min(width[v]);
            *e -= cut;
            left -= u64::from(cut);
        }
        victims.push(vreg_of[v]);
    }
    victims
}

/// The instructions (in layout order) with more than `target` R words live across them —
/// live after the instruction and maybe defined there, or written by it — each with its
/// word count and the values (arena indices) live across it.
fn crowded_points(f: &Func, target: u32) -> Vec<(u32, Vec<usize>)> {
    let mut out = Vec::new();
    ir::liveness::walk_r_pressure(f, |_, _, words, values| {
        if words > target {
            out.push((words, values.to_vec()));
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(d: Reg, a: Reg, b: Reg) -> Inst {
        Inst::new(
            op!("IADD3"),
            vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::rz()],
            vec![0],
        )
    }

    /// A spiller for `g` whose lowering opened an 8-byte frame aligned to 8.
    fn spiller(g: Func) -> Spiller {
        Spiller {
            g,
            spilled: FxHashSet::default(),
            temps: FxHashSet::default(),
            frame: 8,
            align: 8,
            store_bytes: 0,
            load_bytes: 0,
        }
    }

    #[test]
    fn the_frame_keeps_its_largest_slot_aligned() {
        // A kernel whose `.local` variables take 8 bytes (aligned to 8) spills a quad and a
        // word: the quad's slot is at 16, the word's at 32, and the frame (36 bytes of slots)
        // opens as 48 so that `R1 + 16` stays 16-byte aligned for `STL.128`.
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let quad = f.new_vreg(Class::R, 4, "quad");
        let word = f.new_vreg(Class::R, 1, "word");
        let mut s = spiller(f);
        s.spill(vec![quad, word]);
        assert_eq!(s.frame, 36);
        assert_eq!(s.frame_bytes(), 48);
        // Without a quad the frame rounds to 8 bytes, as before.
        let mut g = Func::new("k");
        let w = g.new_vreg(Class::R, 1, "w");
        let mut t = spiller(g);
        t.spill(vec![w]);
        assert_eq!(t.frame_bytes(), 16);
    }

    #[test]
    fn spilling_several_values_at_once_equals_spilling_them_one_by_one() {
        // Values referenced alone, together in one instruction (read and written), and a pair
        // written part by part under a guard.
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let x = f.new_vreg(Class::R, 1, "x");
        let y = f.new_vreg(Class::R, 1, "y");
        let z = f.new_vreg(Class::R, 1, "z");
        let p = f.new_vreg(Class::R, 2, "p");
        let q = f.new_vreg(Class::P, 1, "q");
        let v = |r: VReg| Reg::v(r, 1);
        let mut guarded = add(Reg::part(p, 1), v(x), v(y));
        guarded.guard = Some(ir::Guard {
            pred: Reg::v(q, 1),
            negated: true,
        });
        f.blocks[b].insts = vec![
            add(v(x), v(z), v(z)),
            add(v(y), v(x), v(z)),
            add(v(x), v(x), v(y)),
            // One instruction writing two victims (as `IMAD.WIDE`'s pair or a carry-out).
            Inst::new(
                op!("IADD3"),
                vec![
                    Operand::r(v(y)),
                    Operand::r(v(x)),
                    Operand::r(v(z)),
                    Operand::rz(),
                ],
                vec![0, 1],
            ),
            add(Reg::part(p, 0), v(y), v(x)),
            guarded,
            Inst::new(
                op!("STG.E.64"),
                vec![
                    Operand::Mem {
                        base: Reg::v(p, 2),
                        offset: 0,
                        desc: None,
                    },
                    Operand::r(Reg::v(p, 2)),
                ],
                vec![],
            ),
        ];
        let victims = [(y, 0), (p, 8), (x, 16)];
        let mut together = f.clone();
        let mut temps_together = FxHashSet::default();
        let bytes_together = rewrite(&mut together, &victims, &mut temps_together);
        let mut alone = f.clone();
        let mut temps_alone = FxHashSet::default();
        let mut bytes_alone = (0, 0);
        for victim in victims {
            let (s, l) = rewrite(&mut alone, &[victim], &mut temps_alone);
            bytes_alone = (bytes_alone.0 + s, bytes_alone.1 + l);
        }
        assert_eq!(together, alone);
        assert_eq!(temps_together, temps_alone);
        assert_eq!(bytes_together, bytes_alone);
        assert!(together.insts().count() > 2 * f.insts().count());
    }
}
