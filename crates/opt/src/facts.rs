//! Value propagation: copies, immediates and constant-bank values.
//!
//! A forward data-flow analysis ("available values") records, per 32-bit component of a
//! virtual register, what it is known to hold: a copy of another register's component
//! (`MOV d, s`), an immediate (`MOV d, 0x4`, `MOV d, RZ`) or a constant-bank word (`LDC d,
//! c[0x0][0x210]`, sm_80's `MOV d, c[0x0][0x160]`). A fact holds at a point when every path
//! to it passes the instruction that made it and no write of either register since (loops
//! and reassigned PTX registers included: the meet is intersection). Every read is then
//! rewritten, in order of preference:
//!
//! 1. a copy reads its source instead (chains collapse);
//! 2. an immediate or constant goes into the operand itself when the instruction has that
//!    form (`IMAD.WIDE R2, R7, 0x4, R2`, sm_80 `ISETP.GE.AND P0, PT, R4, c[0x0][0x160], PT`),
//!    asked of the SASS tables ([`crate::forms`]);
//! 3. a constant goes into a uniform register loaded in the same block (`ULDC UR5,
//!    c[0x0][0x210]`, then `ISETP ... R4, UR5 ...`: sm_90, whose ALU instructions take no
//!    `c[][]` operand) when that form exists;
//! 4. otherwise, when the value was made in another block and the reading block is in no
//!    loop, it is loaded again there (one `LDC`/`MOV` per block), so parameters read at the
//!    top of a kernel do not hold registers across it.
//!
//! The instructions that made the facts usually become dead and [`crate::dce`] removes them.

use ir::liveness::{Liveness, vindex};
use ir::{Class, Func, Inst, Mnemonic, Modifier, Opcode, Operand, Reg, VReg, op};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use target::Profile;

use crate::forms::Forms;

/// What one 32-bit component is known to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Val {
    Copy { v: VReg, part: u8 },
    Imm(u32),
    Cbank { bank: u8, offset: u32 },
}

type Key = (VReg, u8);

/// The facts at a point: component → value, plus, per component, the components holding a
/// copy of it (so that a write kills its copies without scanning every fact). The copy lists
/// are inline for up to two copies: the data flow clones these maps once per block visit.
#[derive(Clone, Debug, Default)]
struct Facts {
    map: FxHashMap<Key, Val>,
    copies: FxHashMap<Key, SmallVec<[Key; 2]>>,
}

impl PartialEq for Facts {
    fn eq(&self, other: &Facts) -> bool {
        self.map == other.map
    }
}

impl Facts {
    fn get(&self, k: &Key) -> Option<&Val> {
        self.map.get(k)
    }
    fn remove(&mut self, k: &Key) {
        if let Some(Val::Copy { v, part }) = self.map.remove(k)
            && let Some(list) = self.copies.get_mut(&(v, part))
        {
            list.retain(|x| x != k);
        }
    }
    fn insert(&mut self, k: Key, val: Val) {
        self.remove(&k);
        if let Val::Copy { v, part } = val {
            self.copies.entry((v, part)).or_default().push(k);
        }
        self.map.insert(k, val);
    }
    /// Forgets everything about component `k`: its value and the copies of it.
    fn kill(&mut self, k: Key) {
        self.remove(&k);
        if let Some(list) = self.copies.remove(&k) {
            for c in list {
                if self.map.get(&c) == Some(&Val::Copy { v: k.0, part: k.1 }) {
                    self.map.remove(&c);
                }
            }
        }
    }
    fn rebuild_copies(&mut self) {
        self.copies.clear();
        for (k, v) in &self.map {
            if let Val::Copy { v, part } = v {
                self.copies.entry((*v, *part)).or_default().push(*k);
            }
        }
    }
}

/// The register of an operand read as is (no negation, inversion, absolute value or half
/// selector).
pub(crate) fn plain(o: &Operand) -> Option<Reg> {
    match o {
        Operand::Reg {
            reg,
            neg: false,
            not: false,
            abs: false,
            sel: ir::Sel::None,
        } => Some(*reg),
        _ => None,
    }
}

/// The facts an instruction establishes (after its own kills).
fn gen_facts(f: &Func, i: &Inst) -> Vec<(Key, Val)> {
    if i.guard.is_some() || i.defs != [0] {
        return Vec::new();
    }
    let Some(Reg::Virt {
        vreg: d,
        part: dp,
        width,
    }) = i.operands.first().and_then(plain)
    else {
        return Vec::new();
    };
    if f.vregs[d].class != Class::R {
        return Vec::new();
    }
    let src = i.operands.get(1);
    match i.mnemonic() {
        Mnemonic::MOV if i.op == op!("MOV") && width == 1 && i.operands.len() == 2 => match src {
            Some(Operand::Imm(k)) => vec![((d, dp), Val::Imm(*k as u32))],
            Some(Operand::Const { bank, offset }) => vec![(
                (d, dp),
                Val::Cbank {
                    bank: *bank,
                    offset: *offset,
                },
            )],
            Some(o) => match plain(o) {
                Some(Reg::Zero(Class::R)) => vec![((d, dp), Val::Imm(0))],
                Some(Reg::Virt {
                    vreg: s,
                    part: sp,
                    width: 1,
                }) if f.vregs[s].class == Class::R && (s, sp) != (d, dp) => {
                    vec![((d, dp), Val::Copy { v: s, part: sp })]
                }
                _ => Vec::new(),
            },
            None => Vec::new(),
        },
        Mnemonic::LDC if (i.op == op!("LDC") || i.op == op!("LDC.64")) && i.operands.len() == 2 => {
            let want = if i.op == op!("LDC") { 1 } else { 2 };
            let (bank, offset) = match src {
                Some(Operand::Const { bank, offset }) => (*bank, *offset),
                Some(Operand::ConstIndexed {
                    bank,
                    index: Reg::Zero(Class::R),
                    offset,
                }) => (*bank, *offset),
                _ => return Vec::new(),
            };
            if width != want {
                return Vec::new();
            }
            (0..width)
                .map(|k| {
                    (
                        (d, dp + k),
                        Val::Cbank {
                            bank,
                            offset: offset + 4 * u32::from(k),
                        },
                    )
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

fn kill(facts: &mut Facts, i: &Inst) {
    for r in i.def_regs() {
        if let Reg::Virt { vreg, part, width } = r {
            for p in part..part + width {
                facts.kill((vreg, p));
            }
        }
    }
}

fn transfer(f: &Func, facts: &mut Facts, i: &Inst) {
    kill(facts, i);
    for (k, v) in gen_facts(f, i) {
        facts.insert(k, v);
    }
}

fn meet(a: &mut Facts, b: &Facts) {
    a.map.retain(|k, v| b.map.get(k) == Some(v));
    a.rebuild_copies();
}

/// Blocks (layout positions) that lie on a cycle of the control-flow graph.
fn blocks_in_loops(f: &Func) -> Vec<bool> {
    let n = f.order.len();
    let succ: Vec<Vec<usize>> = (0..n).map(|k| f.successors(k)).collect();
    // Tarjan's strongly connected components, iteratively.
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut in_loop = vec![false; n];
    let mut next = 0usize;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut e)) = work.last_mut() {
            if *e < succ[v].len() {
                let w = succ[v][*e];
                *e += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(u, _)) = work.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().expect("tarjan stack");
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    let cyclic = comp.len() > 1 || succ[v].contains(&v);
                    for w in comp {
                        in_loop[w] = cyclic;
                    }
                }
            }
        }
    }
    in_loop
}

/// The other input slots of `i` that slot `k` may be exchanged with without changing the
/// result: the factors of a multiply (`IMAD*`, `FMUL`, `FFMA`, `DMUL`, `DFMA`) and the
/// operands of `FADD`/`DADD` and `IADD3`/`IADD3.X` (with or without a carry-out).
fn commuting_slots(i: &Inst, k: usize) -> Vec<usize> {
    let group: &[usize] = match i.mnemonic() {
        Mnemonic::IMAD if i.defs == [0] && !i.op.has(Modifier::X) => &[1, 2],
        Mnemonic::FMUL
        | Mnemonic::FFMA
        | Mnemonic::DMUL
        | Mnemonic::DFMA
        | Mnemonic::FADD
        | Mnemonic::DADD
            if i.defs == [0] =>
        {
            &[1, 2]
        }
        Mnemonic::IADD3 if i.op == op!("IADD3") && i.defs == [0] && i.operands.len() == 4 => {
            &[1, 2, 3]
        }
        Mnemonic::IADD3 if i.op == op!("IADD3") && i.defs == [0, 1] && i.operands.len() == 5 => {
            &[2, 3, 4]
        }
        // `IADD3.X d, a, b, c, P, Q`: the three addends commute, the carries stay.
        Mnemonic::IADD3 if i.op == op!("IADD3.X") && i.defs == [0] && i.operands.len() == 6 => {
            &[1, 2, 3]
        }
        Mnemonic::IADD3 if i.op == op!("IADD3.X") && i.defs == [0, 1] && i.operands.len() == 7 => {
            &[2, 3, 4]
        }
        _ => &[],
    };
    if group.contains(&k) {
        group.iter().copied().filter(|j| *j != k).collect()
    } else {
        Vec::new()
    }
}

/// A comparison with its two inputs exchanged: `ISETP.LT.U32.AND P, PT, a, b, Q` is
/// `ISETP.GT.U32.AND P, PT, b, a, Q` (also `FSETP`/`DSETP`, ordered and unordered). Returns
/// the other input slot and the mirrored mnemonic, when slot `k` is one of the inputs.
fn mirrored_compare(i: &Inst, k: usize) -> Option<(usize, Opcode)> {
    if !matches!(
        i.mnemonic(),
        Mnemonic::ISETP | Mnemonic::FSETP | Mnemonic::DSETP
    ) || i.operands.len() != 5
    {
        return None;
    }
    let other = match k {
        2 => 3,
        3 => 2,
        _ => return None,
    };
    let condition = *i.op.modifiers().first()?;
    let mirrored = match condition.name() {
        "LT" => "GT",
        "GT" => "LT",
        "LE" => "GE",
        "GE" => "LE",
        "LTU" => "GTU",
        "GTU" => "LTU",
        "LEU" => "GEU",
        "GEU" => "LEU",
        c @ ("EQ" | "NE" | "EQU" | "NEU" | "NUM" | "NAN") => c,
        _ => return None,
    };
    let mirrored = Modifier::from_name(mirrored)?;
    Some((other, i.op.replaced(0, mirrored)))
}

/// Per-block helper registers made by the rewrite (uniform copies and reloads).
#[derive(Default)]
struct BlockCache {
    /// (class, bank, offset, width) → register holding that constant.
    consts: FxHashMap<(bool, u8, u32, u8), VReg>,
    /// immediate → register holding it.
    imms: FxHashMap<u32, VReg>,
}

impl BlockCache {
    /// The register holding immediate `v` in this block: the one set earlier, or a new one
    /// set by a `MOV` pushed to `before`.
    fn imm_register(&mut self, f: &mut Func, before: &mut Vec<Inst>, v: u32) -> VReg {
        *self.imms.entry(v).or_insert_with(|| {
            let t = f.new_vreg(Class::R, 1, "");
            let value = if v == 0 {
                Operand::rz()
            } else {
                Operand::Imm(i64::from(v))
            };
            before.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(Reg::v(t, 1)), value],
                vec![0],
            ));
            t
        })
    }
}

struct Rewriter<'a> {
    /// Constant words load with `LDC` on this SM (`target::Forms::ldc`).
    ldc: bool,
    forms: &'a mut Forms,
    /// Scratch registers for trial forms: a uniform register of width 1 and 2.
    probe_ur: [VReg; 2],
    /// A scratch 32-bit register for trial forms.
    probe_r: VReg,
    /// Set when a fold put its operand in a later slot `j` of the instruction, moving
    /// `j`'s operand into the slot being rewritten.
    swapped_later: Option<usize>,
}

impl Rewriter<'_> {
    /// The value of `width` components starting at `(v, part)`, when all are known the same
    /// way: a copy of consecutive components of one register, one immediate (width 1), or
    /// consecutive words of one constant bank.
    fn lookup(facts: &Facts, v: VReg, part: u8, width: u8) -> Option<Val> {
        let first = *facts.get(&(v, part))?;
        for k in 1..width {
            let next = *facts.get(&(v, part + k))?;
            let ok = match (first, next) {
                (Val::Copy { v: a, part: pa }, Val::Copy { v: b, part: pb }) => {
                    a == b && pb == pa + k
                }
                (
                    Val::Cbank {
                        bank: a,
                        offset: oa,
                    },
                    Val::Cbank {
                        bank: b,
                        offset: ob,
                    },
                ) => a == b && ob == oa + 4 * u32::from(k),
                _ => false,
            };
            if !ok {
                return None;
            }
        }
        if let Val::Imm(_) = first
            && width != 1
        {
            return None;
        }
        Some(first)
    }

    /// Follows copies for a register read: the register that holds the same value.
    fn resolve_copy(f: &Func, facts: &Facts, mut reg: Reg) -> Reg {
        for _ in 0..8 {
            let Reg::Virt { vreg, part, width } = reg else {
                return reg;
            };
            match Self::lookup(facts, vreg, part, width) {
                Some(Val::Copy { v, part: sp })
                    if sp % width == 0 && f.vregs[v].class == f.vregs[vreg].class =>
                {
                    reg = Reg::Virt {
                        vreg: v,
                        part: sp,
                        width,
                    };
                }
                _ => return reg,
            }
        }
        reg
    }

    /// Rewrites the reads of `inst`; instructions to insert before it go to `before`.
    #[allow(clippy::too_many_arguments)]
    fn rewrite(
        &mut self,
        f: &mut Func,
        facts: &Facts,
        inst: &mut Inst,
        before: &mut Vec<Inst>,
        cache: &mut BlockCache,
        live_in: &ir::liveness::VSet,
        in_loop: bool,
    ) {
        // A plain copy takes an immediate or constant operand when it reads one, but no
        // uniform register or reload: its readers are rewritten through it instead, and it
        // becomes dead.
        let copy_only = inst.op == op!("MOV") && inst.operands.len() == 2;
        // A call's target stays in the register form ptxas writes (`CALL.ABS.NOINC R2`), not
        // a uniform register the tables also encode.
        if inst.mnemonic() == Mnemonic::CALL {
            return;
        }
        // A fold that exchanged slot `k` with a later slot `j` (operands that commute) left
        // `j`'s old operand in `k`, past the loop: slot `k` is then visited again.
        let mut k = 0;
        let mut revisits = 0;
        while k < inst.operands.len() {
            if self.swapped_later.take().is_some() && revisits < inst.operands.len() {
                revisits += 1;
                k -= 1;
            }
            let slot = k;
            k += 1;
            let k = slot;
            if inst.defs.contains(&k) {
                continue;
            }
            match inst.operands[k].clone() {
                Operand::Mem { base, offset, desc } => {
                    // A 64-bit address printed as its low register (`QSPC`, `CAS`: the pair
                    // is an implicit use), or a surface access's coordinate group printed as
                    // its first register (`SULD ... [R4]`: x, y, z in R4..R6), is read as
                    // that register and the next ones: a copy of the first word alone would
                    // break the group.
                    let paired = matches!(base, Reg::Virt { vreg, width: 1, .. }
                    if inst.implicit_uses.iter().any(|r| {
                        matches!(r, Reg::Virt { vreg: v, width, .. } if *v == vreg && *width > 1)
                    }));
                    if !paired {
                        inst.operands[k] = Operand::Mem {
                            base: Self::resolve_copy(f, facts, base),
                            offset,
                            desc,
                        };
                    }
                }
                Operand::ConstIndexed {
                    bank,
                    index,
                    offset,
                } => {
                    inst.operands[k] = Operand::ConstIndexed {
                        bank,
                        index: Self::resolve_copy(f, facts, index),
                        offset,
                    };
                }
                Operand::Reg {
                    reg,
                    neg,
                    not,
                    abs,
                    sel,
                } => {
                    // A word of a register group the instruction reads whole (`CAS`'s compare
                    // and new values, an aligned pair or quad as ptxas allocates them: the
                    // group is an implicit use) stays in its group.
                    let grouped = matches!(reg, Reg::Virt { vreg, .. }
                    if inst.implicit_uses.iter().any(|r| {
                        matches!(r, Reg::Virt { vreg: v, width, .. } if *v == vreg && *width > 1)
                    }));
                    if grouped {
                        continue;
                    }
                    let reg = Self::resolve_copy(f, facts, reg);
                    inst.operands[k] = Operand::Reg {
                        reg,
                        neg,
                        not,
                        abs,
                        sel,
                    };
                    // A half of a register: no constant stands for it.
                    if sel != ir::Sel::None {
                        continue;
                    }
                    let Reg::Virt { vreg, part, width } = reg else {
                        continue;
                    };
                    if f.vregs[vreg].class != Class::R {
                        continue;
                    }
                    let modified = neg || not || abs;
                    match Self::lookup(facts, vreg, part, width) {
                        Some(Val::Imm(v)) if !modified => {
                            let mut cands = Vec::new();
                            if v == 0 {
                                cands.push(Operand::rz());
                            }
                            cands.push(Operand::Imm(i64::from(v)));
                            if (v as i32) < 0 {
                                cands.push(Operand::Imm(i64::from(v as i32)));
                            }
                            let x = f32::from_bits(v);
                            if x.is_normal() || v == 0 {
                                cands.push(Operand::F32(v));
                            }
                            if self.try_operands(f, inst, k, cands) || copy_only {
                                continue;
                            }
                            if live_in.contains(vindex(vreg)) && !in_loop {
                                let t = cache.imm_register(f, before, v);
                                inst.operands[k] = Operand::r(Reg::v(t, 1));
                            }
                        }
                        Some(Val::Cbank { bank, offset }) if copy_only && !modified => {
                            let c = Operand::Const { bank, offset };
                            self.try_operands(f, inst, k, vec![c]);
                        }
                        Some(Val::Cbank { bank, offset }) if !copy_only => {
                            self.fold_const(
                                f,
                                inst,
                                k,
                                (bank, offset),
                                width,
                                (neg, not, abs),
                                before,
                                cache,
                                live_in.contains(vindex(vreg)) && !in_loop,
                            );
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }

    /// Tries each candidate operand in slot `k`, then (for operations whose inputs commute)
    /// in each slot `k` may swap with; keeps the first encodable form.
    fn try_operands(&mut self, f: &Func, inst: &mut Inst, k: usize, cands: Vec<Operand>) -> bool {
        let old = inst.clone();
        let mut slots = vec![k];
        slots.extend(commuting_slots(inst, k));
        let mut tries: Vec<(usize, Option<Opcode>)> = slots.iter().map(|j| (*j, None)).collect();
        if let Some((j, op)) = mirrored_compare(inst, k) {
            tries.push((j, Some(op)));
        }
        for (j, op) in tries {
            for c in &cands {
                *inst = old.clone();
                inst.operands.swap(k, j);
                inst.operands[j] = c.clone();
                if let Some(op) = op {
                    inst.op = op;
                }
                if self.forms.fit(f, inst) {
                    if j > k {
                        self.swapped_later = Some(j);
                    }
                    return true;
                }
            }
        }
        *inst = old;
        false
    }

    #[allow(clippy::too_many_arguments)]
    fn fold_const(
        &mut self,
        f: &mut Func,
        inst: &mut Inst,
        k: usize,
        (bank, offset): (u8, u32),
        width: u8,
        (neg, not, abs): (bool, bool, bool),
        before: &mut Vec<Inst>,
        cache: &mut BlockCache,
        may_reload: bool,
    ) {
        // Uniform registers come one or two at a time (`ULDC`, `ULDC.64`): wider operands
        // (a 3D texture's coordinate triple) keep their registers.
        if width > 2 || (width == 2 && offset % 8 != 0) {
            return;
        }
        let with = |reg: Option<Reg>| match reg {
            Some(reg) => Operand::Reg {
                reg,
                neg,
                not,
                abs,
                sel: ir::Sel::None,
            },
            None => Operand::Const { bank, offset },
        };
        // 2. the constant operand itself (modifiers apply to it as to a register).
        if !(neg || not || abs) && self.try_operands(f, inst, k, vec![with(None)]) {
            return;
        }
        // 3. a uniform register loaded in this block.
        let probe = Reg::v(self.probe_ur[usize::from(width) - 1], width);
        let before_probe = inst.clone();
        let ur_form = self.try_operands(f, inst, k, vec![with(Some(probe))]);
        // Where the probe went (slot `k` or the slot it commuted to).
        let probe_slot = inst
            .operands
            .iter()
            .position(|o| matches!(o, Operand::Reg { reg, .. } if *reg == probe));
        if !ur_form {
            *inst = before_probe.clone();
        }
        if let (true, Some(slot)) = (ur_form, probe_slot) {
            let key = (true, bank, offset, width);
            let ur = match cache.consts.get(&key) {
                Some(u) => Some(*u),
                None => {
                    let u = f.new_vreg(Class::UR, width, "");
                    let op = if width == 2 {
                        op!("ULDC.64")
                    } else {
                        op!("ULDC")
                    };
                    let ld = Inst::new(
                        op,
                        vec![
                            Operand::r(Reg::v(u, width)),
                            Operand::Const { bank, offset },
                        ],
                        vec![0],
                    );
                    if self.forms.encodable(f, &ld) {
                        before.push(ld);
                        cache.consts.insert(key, u);
                        Some(u)
                    } else {
                        None
                    }
                }
            };
            if let Some(u) = ur {
                inst.operands[slot] = with(Some(Reg::v(u, width)));
                return;
            }
            *inst = before_probe;
        }
        // 3b. a constant pair read beside an immediate, the immediate in a register.
        if width == 2
            && !(neg || not || abs)
            && self.pair_beside_immediate(f, inst, k, (bank, offset), before, cache)
        {
            return;
        }
        // 4. a reload in this block.
        if !may_reload {
            return;
        }
        let key = (false, bank, offset, width);
        let r = match cache.consts.get(&key) {
            Some(r) => *r,
            None => {
                let r = f.new_vreg(Class::R, width, "");
                if self.ldc {
                    let op = if width == 2 {
                        op!("LDC.64")
                    } else {
                        op!("LDC")
                    };
                    let src = if offset == 0 {
                        Operand::ConstIndexed {
                            bank,
                            index: Reg::Zero(Class::R),
                            offset: 0,
                        }
                    } else {
                        Operand::Const { bank, offset }
                    };
                    before.push(Inst::new(
                        op,
                        vec![Operand::r(Reg::v(r, width)), src],
                        vec![0],
                    ));
                } else {
                    for w in 0..width {
                        before.push(Inst::new(
                            op!("MOV"),
                            vec![
                                Operand::r(Reg::part(r, w)),
                                Operand::Const {
                                    bank,
                                    offset: offset + 4 * u32::from(w),
                                },
                            ],
                            vec![0],
                        ));
                    }
                }
                cache.consts.insert(key, r);
                r
            }
        };
        inst.operands[k] = with(Some(Reg::v(r, width)));
    }
}

impl Rewriter<'_> {
    /// A 64-bit operand that holds a constant-bank pair, read by an instruction that also
    /// reads an immediate (`IMAD.WIDE d, a, 0x4, B` with `B` a pointer parameter): no form
    /// reads both an immediate and a constant, so the pair stays in two registers from the
    /// parameter's load to its last reader. With the immediate in a register (one per block
    /// and value) the pair is read as the constant itself, as ptxas writes it (`IMAD.WIDE R2,
    /// R4, R7, c[0x0][0x168]` with `R7 = 4`): one short-lived register instead of two.
    fn pair_beside_immediate(
        &mut self,
        f: &mut Func,
        inst: &mut Inst,
        k: usize,
        (bank, offset): (u8, u32),
        before: &mut Vec<Inst>,
        cache: &mut BlockCache,
    ) -> bool {
        let Some((j, imm)) = inst.operands.iter().enumerate().find_map(|(j, o)| match o {
            Operand::Imm(v) if j != k && !inst.defs.contains(&j) => Some((j, *v)),
            _ => None,
        }) else {
            return false;
        };
        let Ok(v) = u32::try_from(imm).or_else(|_| i32::try_from(imm).map(|x| x as u32)) else {
            return false;
        };
        let old = inst.clone();
        inst.operands[j] = Operand::r(Reg::v(self.probe_r, 1));
        if !self.try_operands(f, inst, k, vec![Operand::Const { bank, offset }]) {
            *inst = old;
            return false;
        }
        let t = cache.imm_register(f, before, v);
        let probe = Reg::v(self.probe_r, 1);
        for o in &mut inst.operands {
            if matches!(o, Operand::Reg { reg, .. } if *reg == probe) {
                *o = Operand::r(Reg::v(t, 1));
            }
        }
        true
    }
}

/// Runs the analysis and rewrites every read of `f`.
pub fn propagate(f: &mut Func, profile: &Profile, forms: &mut Forms) {
    let n = f.order.len();
    if n == 0 {
        return;
    }
    let succ: Vec<Vec<usize>> = (0..n).map(|k| f.successors(k)).collect();
    let mut preds = vec![Vec::new(); n];
    for (k, s) in succ.iter().enumerate() {
        for &t in s {
            preds[t].push(k);
        }
    }
    // Forward data flow; `None` = not reached yet (top). Sweeps in layout order over the
    // blocks whose predecessors' facts changed since they were last computed (the same
    // fixpoint as recomputing every block each sweep, without re-running the unchanged ones).
    let mut out: Vec<Option<Facts>> = vec![None; n];
    let mut dirty = vec![true; n];
    let in_loop = blocks_in_loops(f);
    // A block whose only predecessor has no other successor and lies on no cycle takes that
    // predecessor's facts instead of a copy: the predecessor is computed once and nothing
    // else reads its facts (huge straight-line kernels split into thousands of blocks would
    // otherwise hold a copy of every fact per block).
    let sole = |k: usize| match preds[k].as_slice() {
        [p] if *p + 1 == k && succ[*p].len() == 1 && !in_loop[*p] && !in_loop[k] => Some(*p),
        _ => None,
    };
    let mut changed = true;
    while changed {
        changed = false;
        for k in 0..n {
            if !std::mem::take(&mut dirty[k]) {
                continue;
            }
            let mut facts = if k == 0 {
                Facts::default()
            } else if let Some(p) = sole(k) {
                match out[p].take() {
                    Some(m) => m,
                    None => continue,
                }
            } else {
                let mut it = preds[k].iter().filter_map(|p| out[*p].as_ref());
                match it.next() {
                    Some(first) => {
                        let mut m = first.clone();
                        for o in it {
                            meet(&mut m, o);
                        }
                        m
                    }
                    None => continue,
                }
            };
            // A block reached from the entry and from an unvisited predecessor gets that
            // predecessor's facts later; intersection keeps this monotone.
            for i in &f.blocks[f.order[k]].insts {
                transfer(f, &mut facts, i);
            }
            if out[k].as_ref() != Some(&facts) {
                out[k] = Some(facts);
                for &t in &succ[k] {
                    dirty[t] = true;
                    changed = true;
                }
            }
        }
    }
    let live = Liveness::compute(f);
    let probe_ur = [
        f.new_vreg(Class::UR, 1, "probe"),
        f.new_vreg(Class::UR, 2, "probe"),
    ];
    let probe_r = f.new_vreg(Class::R, 1, "probe");
    let mut rw = Rewriter {
        ldc: profile.codegen.is_some_and(|c| c.ldc),
        forms,
        probe_ur,
        probe_r,
        swapped_later: None,
    };
    // The facts at the end of the block rewritten last: the entry facts of a block whose
    // sole predecessor it is (`sole`, whose `out` the data flow gave away).
    let mut carry: Option<Facts> = None;
    for k in 0..n {
        let carried = carry.take();
        let mut facts = if k == 0 {
            Facts::default()
        } else if sole(k).is_some() {
            match carried {
                Some(m) => m,
                None => continue,
            }
        } else {
            let mut it = preds[k].iter().filter_map(|p| out[*p].as_ref());
            match it.next() {
                Some(first) => {
                    let mut m = first.clone();
                    for o in it {
                        meet(&mut m, o);
                    }
                    m
                }
                // Unreachable block: rewrite nothing.
                None => continue,
            }
        };
        let b = f.order[k];
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut new = Vec::with_capacity(insts.len());
        let mut cache = BlockCache::default();
        for mut i in insts {
            let mut before = Vec::new();
            rw.rewrite(
                f,
                &facts,
                &mut i,
                &mut before,
                &mut cache,
                &live.live_in[k],
                in_loop[k],
            );
            for x in &before {
                transfer(f, &mut facts, x);
            }
            new.extend(before);
            transfer(f, &mut facts, &i);
            new.push(i);
        }
        f.blocks[b].insts = new;
        carry = Some(facts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_are_found() {
        // bb0 -> bb1 -> bb1 (self loop) -> bb2
        let mut f = Func::new("k");
        let b: Vec<_> = (0..3).map(|_| f.new_block()).collect();
        f.order = b.clone();
        let p = f.new_vreg(Class::P, 1, "p");
        let mut bra = Inst::new(op!("BRA"), vec![Operand::Label(b[1])], vec![]);
        bra.guard = Some(ir::Guard {
            pred: Reg::v(p, 1),
            negated: false,
        });
        f.blocks[b[1]].insts.push(bra);
        f.blocks[b[2]]
            .insts
            .push(Inst::new(op!("EXIT"), vec![], vec![]));
        assert_eq!(blocks_in_loops(&f), vec![false, true, false]);
    }
}
