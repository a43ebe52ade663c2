//! Web renaming: a virtual register written in several places becomes one virtual register
//! per *web*, the definitions and uses connected by reaching definitions.
//!
//! Lowering gives every PTX register one virtual register, so a PTX register reused for
//! unrelated values (`shfl ... result; st [a], result; shfl ... result; st [a+256], result`)
//! is one live range, and register allocation gives every value of it the same register:
//! the second value waits for the first one's last read, and the scheduler cannot overlap
//! them. ptxas allocates each value on its own (`SHFL.BFLY P1, R7, ...; SHFL.BFLY P2, R9,
//! ...`). After renaming, each web is allocated on its own; the allocator may still give
//! two webs one register where they do not interfere.
//!
//! A definition *kills* the earlier values of its register when it writes every component
//! for every lane: unguarded, the whole register, no half selector. Any other definition
//! (guarded, partial) keeps the old value where it does not write, so it joins the web of
//! the definitions reaching it, as a use would. A use joins every definition that reaches it
//! into one web; a use reached by none (an undefined read) joins the register's *entry*
//! web, which keeps the register's own name.

use ir::cfg;
use ir::liveness::{VSet, vindex};
use ir::{Func, Inst, Reg, Sel, VReg};

/// Above this many (definition × block) bits the analysis is not run (its sets would cost
/// more memory than the kernel's code is worth).
const MAX_BITS: usize = 1 << 26;

/// Renames the webs of every virtual register written more than once. Returns whether any
/// register was split.
pub fn rename_webs(f: &mut Func) -> bool {
    let Some(defs) = Defs::collect(f) else {
        return false;
    };
    let n = defs.count();
    if n.saturating_mul(f.order.len()) > MAX_BITS {
        return false;
    }
    let reach_in = defs.reaching(f);
    let mut uf = UnionFind::new(n);
    // Per candidate: whether its entry value (nothing written yet) is read.
    let candidates = defs.vreg_of.len();
    let mut entry_used = vec![false; candidates];
    walk(f, &defs, &reach_in, &mut |event| {
        let (first, rest) = match event {
            Event::Use { reaching, .. } => (reaching[0], reaching),
            Event::Def { id, merged, .. } => (id, merged),
        };
        for &d in rest {
            if (d as usize) < candidates {
                entry_used[d as usize] = true;
            }
            uf.union(first, d);
        }
    });
    // A name per web: the entry web (or, without one, the first web met) keeps the register.
    let mut name: Vec<Option<VReg>> = vec![None; n];
    let mut split = false;
    for (v, ids) in defs.by_vreg.iter().enumerate() {
        let vreg = defs.vreg_of[v];

        let entry = uf.find(ids[0]);
        let mut kept = entry_used[v];
        // New webs are named after the register, `~1`, `~2`, ... (for printed IR).
        let mut webs = 0;
        if kept {
            name[entry as usize] = Some(vreg);
        }
        for &d in &ids[1..] {
            let r = uf.find(d) as usize;
            if name[r].is_some() {
                continue;
            }
            if kept {
                let data = f.vregs[vreg].clone();
                webs += 1;
                let label = format!("{}~{webs}", data.name);
                name[r] = Some(f.new_vreg(data.class, data.width, label));
                split = true;
            } else {
                name[r] = Some(vreg);
                kept = true;
            }
        }
    }
    if !split {
        return false;
    }
    let mut renames: Vec<(usize, usize, Rename)> = Vec::new();
    walk(f, &defs, &reach_in, &mut |event| match event {
        Event::Use { at, vreg, reaching } => {
            let to = name[uf.find(reaching[0]) as usize].expect("every web is named");
            if to != vreg {
                renames.push((at.0, at.1, Rename::Uses(vreg, to)));
            }
        }
        Event::Def { at, vreg, id, .. } => {
            let to = name[uf.find(id) as usize].expect("every web is named");
            if to != vreg {
                renames.push((at.0, at.1, Rename::Defs(vreg, to)));
            }
        }
    });
    for (pos, index, r) in renames {
        let b = f.order[pos];
        rename(&mut f.blocks[b].insts[index], r);
    }
    true
}

#[derive(Clone, Copy)]
enum Rename {
    Uses(VReg, VReg),
    Defs(VReg, VReg),
}

fn rename(i: &mut Inst, r: Rename) {
    let swap = |reg: &mut Reg, from: VReg, to: VReg| {
        if let Reg::Virt { vreg, .. } = reg
            && *vreg == from
        {
            *vreg = to;
        }
    };
    match r {
        Rename::Uses(from, to) => {
            for (k, o) in i.operands.iter_mut().enumerate() {
                if !i.defs.contains(&k) {
                    for reg in o.regs_mut() {
                        swap(reg, from, to);
                    }
                }
            }
            if let Some(g) = &mut i.guard {
                swap(&mut g.pred, from, to);
            }
            for reg in &mut i.implicit_uses {
                swap(reg, from, to);
            }
        }
        Rename::Defs(from, to) => {
            for &k in &i.defs {
                for reg in i.operands[k].regs_mut() {
                    swap(reg, from, to);
                }
            }
        }
    }
}

/// The definitions of the registers written more than once, numbered: per such register
/// first an entry pseudo-definition, then its real ones in layout order.
struct Defs {
    /// Candidate index -> the register.
    vreg_of: Vec<VReg>,
    /// Register arena index -> candidate index.
    candidate: Vec<Option<usize>>,
    /// Candidate -> its definition ids (entry first).
    by_vreg: Vec<Vec<u32>>,
    /// Definition id -> (candidate, kills).
    info: Vec<(usize, bool)>,
}

/// Virtual registers an instruction writes, each once, with whether the write kills.
fn written(f: &Func, i: &Inst) -> Vec<(VReg, bool)> {
    let mut out: Vec<(VReg, u8, bool)> = Vec::new();
    for &k in &i.defs {
        let sel_none = match &i.operands[k] {
            ir::Operand::Reg { sel, .. } => *sel == Sel::None,
            _ => false,
        };
        for r in i.operands[k].regs() {
            if let Reg::Virt { vreg, part, width } = r {
                let bits = (((1u16 << width) - 1) << part) as u8;
                match out.iter_mut().find(|(v, ..)| *v == vreg) {
                    Some((_, mask, plain)) => {
                        *mask |= bits;
                        *plain &= sel_none;
                    }
                    None => out.push((vreg, bits, sel_none)),
                }
            }
        }
    }
    out.into_iter()
        .map(|(v, mask, plain)| {
            let full = ((1u16 << f.vregs[v].width) - 1) as u8;
            (v, plain && mask == full && i.guard.is_none())
        })
        .collect()
}

impl Defs {
    fn collect(f: &Func) -> Option<Defs> {
        let nv = f.vregs.len();
        let mut writes = vec![0u32; nv];
        for b in &f.order {
            for i in &f.blocks[*b].insts {
                for (v, _) in written(f, i) {
                    writes[vindex(v)] += 1;
                }
            }
        }
        let mut candidate = vec![None; nv];
        let mut vreg_of = Vec::new();
        for (v, _) in f.vregs.iter() {
            if writes[vindex(v)] >= 2 {
                candidate[vindex(v)] = Some(vreg_of.len());
                vreg_of.push(v);
            }
        }
        if vreg_of.is_empty() {
            return None;
        }
        let mut info: Vec<(usize, bool)> = (0..vreg_of.len()).map(|c| (c, true)).collect();
        let mut by_vreg: Vec<Vec<u32>> = (0..vreg_of.len()).map(|c| vec![c as u32]).collect();
        for b in &f.order {
            for i in &f.blocks[*b].insts {
                for (v, kills) in written(f, i) {
                    if let Some(c) = candidate[vindex(v)] {
                        let id = info.len() as u32;
                        info.push((c, kills));
                        by_vreg[c].push(id);
                    }
                }
            }
        }
        Some(Defs {
            vreg_of,
            candidate,
            by_vreg,
            info,
        })
    }

    fn count(&self) -> usize {
        self.info.len()
    }

    fn ids(&self, c: usize) -> &[u32] {
        &self.by_vreg[c]
    }

    /// Reaching definitions at each block's entry (by layout position).
    fn reaching(&self, f: &Func) -> Vec<VSet> {
        let n = self.count();
        let blocks = f.order.len();
        let mut gen_ = vec![VSet::new(n); blocks];
        let mut kill = vec![VSet::new(n); blocks];
        let mut next = self.vreg_of.len() as u32;
        for (pos, b) in f.order.iter().enumerate() {
            for i in &f.blocks[*b].insts {
                for (v, kills) in written(f, i) {
                    let Some(c) = self.candidate[vindex(v)] else {
                        continue;
                    };
                    let id = next;
                    next += 1;
                    if kills {
                        for &d in self.ids(c) {
                            gen_[pos].remove(d as usize);
                            kill[pos].insert(d as usize);
                        }
                    }
                    gen_[pos].insert(id as usize);
                }
            }
        }
        let preds = cfg::predecessors(&cfg::successors(f));
        let mut entry_defs = VSet::new(n);
        for c in 0..self.vreg_of.len() {
            entry_defs.insert(c);
        }
        let mut reach_in = vec![VSet::new(n); blocks];
        let mut out = vec![VSet::new(n); blocks];
        let mut changed = true;
        while changed {
            changed = false;
            for pos in 0..blocks {
                let mut inn = if pos == 0 {
                    entry_defs.clone()
                } else {
                    VSet::new(n)
                };
                for &p in &preds[pos] {
                    inn.union_with(&out[p]);
                }
                let mut o = inn.clone();
                for d in kill[pos].iter() {
                    o.remove(d);
                }
                o.union_with(&gen_[pos]);
                if o != out[pos] {
                    out[pos] = o;
                    changed = true;
                }
                reach_in[pos] = inn;
            }
        }
        reach_in
    }
}

enum Event<'a> {
    /// A read of `vreg` at (layout position, index), reached by `reaching` (non-empty: the
    /// entry pseudo-definition when nothing else reaches).
    Use {
        at: (usize, usize),
        vreg: VReg,
        reaching: &'a [u32],
    },
    /// Definition `id` of `vreg`; `merged`: the definitions it keeps alive (a non-killing
    /// write).
    Def {
        at: (usize, usize),
        vreg: VReg,
        id: u32,
        merged: &'a [u32],
    },
}

/// Walks every block forward from its reaching definitions, reporting each read and write
/// of a candidate register.
fn walk(f: &Func, defs: &Defs, reach_in: &[VSet], visit: &mut dyn FnMut(Event<'_>)) {
    let mut next = defs.vreg_of.len() as u32;
    let mut reaching: Vec<u32> = Vec::new();
    for (pos, b) in f.order.iter().enumerate() {
        let mut cur = reach_in[pos].clone();
        for (index, i) in f.blocks[*b].insts.iter().enumerate() {
            let mut used: Vec<VReg> = Vec::new();
            for r in i.use_regs() {
                if let Reg::Virt { vreg, .. } = r
                    && defs.candidate[vindex(vreg)].is_some()
                    && !used.contains(&vreg)
                {
                    used.push(vreg);
                }
            }
            for vreg in used {
                let c = defs.candidate[vindex(vreg)].expect("candidate");
                reaching.clear();
                reaching.extend(defs.ids(c).iter().filter(|d| cur.contains(**d as usize)));
                if reaching.is_empty() {
                    reaching.push(c as u32);
                }
                visit(Event::Use {
                    at: (pos, index),
                    vreg,
                    reaching: &reaching,
                });
            }
            for (vreg, kills) in written(f, i) {
                let Some(c) = defs.candidate[vindex(vreg)] else {
                    continue;
                };
                let id = next;
                next += 1;
                reaching.clear();
                reaching.extend(defs.ids(c).iter().filter(|d| cur.contains(**d as usize)));
                if kills {
                    for &d in &reaching {
                        cur.remove(d as usize);
                    }
                    reaching.clear();
                } else if reaching.is_empty() {
                    reaching.push(c as u32);
                }
                cur.insert(id as usize);
                visit(Event::Def {
                    at: (pos, index),
                    vreg,
                    id,
                    merged: &reaching,
                });
            }
        }
    }
}

/// Union-find over definition ids.
struct UnionFind {
    parent: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n as u32).collect(),
        }
    }
    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            // The smaller id (an entry pseudo-definition first) stays the root.
            let (lo, hi) = if a < b { (a, b) } else { (b, a) };
            self.parent[hi as usize] = lo;
        }
    }
}
