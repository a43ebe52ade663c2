//! Register allocation for [`ir::Func`] (v1: interference-graph colouring, no spilling).
//!
//! Liveness comes from [`ir::liveness`]: per virtual register, with partial definitions (a
//! 64-bit value written one half at a time) killing the old value once every component has
//! been written. Two virtual registers of a class *interfere* when one is written at a point
//! where the other is live afterwards, or when one instruction writes both. Registers are then
//! coloured greedily in order of first appearance (which colours the interval graphs of
//! straight-line code optimally): each gets the lowest free base index that is a multiple of
//! its width (64-bit values on even pairs, 128-bit on multiples of 4), never a register the
//! code names physically (R1, the stack pointer; the fixed uniform registers; a system call's
//! argument registers), and never, for a value live across a system call
//! (`CALL.ABS.NOINC`), a register the callee may change ([`ir::abi::clobbered`]).
//!
//! A value whose last read is an instruction may share a register with that instruction's
//! result (`IMAD R2, R2, ...`): every SASS instruction reads its sources before writing its
//! destinations, and the scheduler guards later writers of a variable-latency instruction's
//! sources with read scoreboards.
//!
//! Over budget, general registers are spilled to the stack frame ([`spill`]); what spilling
//! cannot relieve (uniform or predicate registers, values live across a system call) is an
//! error (`unsupported: register pressure ...`).
//! The register count is reported the way ptxas reports it: highest R index + 1, plus 2
//! (checked on the oracle: saxpy uses R0..R7 and ptxas reports 10).

#![forbid(unsafe_code)]

pub mod spill;

pub use spill::{Spill, allocate_spilling};

use ir::liveness::{Liveness, vindex};
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
    /// When values were spilled ([`allocate_spilling`]): the rewritten kernel the
    /// assignment is for, and its frame.
    pub spill: Option<Box<Spill>>,
}

impl Allocation {
    pub fn get(&self, v: VReg) -> u8 {
        self.assign.get(v).copied().unwrap_or(0)
    }
}

/// Allocation failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocError(pub String);

impl AllocError {
    /// Whether the general (R) registers ran out, which spilling can relieve.
    pub fn is_general_pressure(&self) -> bool {
        self.0.starts_with(PRESSURE)
            && self.0.ends_with(" registers)")
            && !self.0.contains("uniform")
            && !self.0.contains("predicate")
    }
}

/// The start of a register-pressure error.
const PRESSURE: &str = "unsupported: register pressure";

/// Registers ptxas adds to the highest used index + 1 in its report.
pub const REPORTED_EXTRA: u32 = 2;
/// Highest register count ptxas allows per thread.
pub const MAX_REGISTERS: u32 = 255;
/// The smallest budget ptxas 13.0.88 honours on sm_80 and sm_90: a smaller `--maxrregcount`
/// is raised to it ("adjusting per thread register count of 8 to lower bound of 24").
pub const MIN_REGISTERS: u32 = 24;
/// The highest R index a budget of `max_registers` (ptxas's counting) allows; as R1 is the
/// stack pointer, also the number of R words the allocator may hand out.
pub(crate) fn highest_r(max_registers: u32) -> u32 {
    max_registers
        .min(MAX_REGISTERS)
        .saturating_sub(REPORTED_EXTRA + 1)
}

/// Highest allocatable index per class besides R: UR0..UR62, P0..P6, UP0..UP6.
const MAX_UR: u32 = 62;
const MAX_PRED: u32 = 6;

/// The interference graph: per virtual register (arena index), its neighbours of the same
/// class, and the position of its first appearance in layout order.
pub struct Interference {
    pub adj: Vec<Vec<u32>>,
    pub first: Vec<u32>,
    /// Per virtual register, the position of its last appearance in layout order.
    pub last: Vec<u32>,
    /// Per virtual register, the physical registers of its class it may not take: those a
    /// system call it is live across clobbers ([`ir::abi::clobbered`]).
    pub forbid: Vec<[u64; 4]>,
}

/// The registers of `class` a system call clobbers, as a mask.
fn clobber_mask(class: Class) -> [u64; 4] {
    let mut m = [0u64; 4];
    for x in 0..256u32 {
        if ir::abi::clobbered(class, x) {
            m[(x / 64) as usize] |= 1 << (x % 64);
        }
    }
    m
}

/// Builds the interference graph of `f`.
pub fn interference(f: &Func) -> Interference {
    let nv = f.vregs.len();
    let live = Liveness::compute(f);
    let defined = ir::liveness::maybe_defined(f);
    let class: Vec<Class> = f.vregs.iter().map(|(_, d)| d.class).collect();
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); nv];
    let mut compact_at: Vec<usize> = vec![64; nv];
    let mut dedup = Dedup::new(nv);
    let mut first = vec![u32::MAX; nv];
    let mut last = vec![0u32; nv];
    let mut forbid = vec![[0u64; 4]; nv];
    let masks = [Class::R, Class::UR, Class::P, Class::UP].map(clobber_mask);
    let mask_of = |c: Class| match c {
        Class::R => &masks[0],
        Class::UR => &masks[1],
        Class::P => &masks[2],
        Class::UP => &masks[3],
    };
    let mut pos = 0u32;
    for b in &f.order {
        for i in &f.blocks[*b].insts {
            for r in i.def_regs().chain(i.use_regs()) {
                if let Reg::Virt { vreg, .. } = r {
                    let x = vindex(vreg);
                    first[x] = first[x].min(pos);
                    last[x] = pos;
                }
            }
            pos += 1;
        }
    }
    ir::liveness::walk_defined_live(f, &live, &defined, |k, idx, after| {
        let i = &f.blocks[f.order[k]].insts[idx];
        let defs: Vec<usize> = i
            .def_regs()
            .filter_map(|r| match r {
                Reg::Virt { vreg, .. } => Some(vindex(vreg)),
                _ => None,
            })
            .collect();
        if i.is_system_call() {
            for &v in after.iter().filter(|v| !defs.contains(v)) {
                for (w, m) in forbid[v].iter_mut().zip(mask_of(class[v])) {
                    *w |= m;
                }
            }
        }
        for (n, &d) in defs.iter().enumerate() {
            for v in after.iter().copied().chain(defs[..n].iter().copied()) {
                if v != d && class[v] == class[d] {
                    adj[d].push(v as u32);
                    adj[v].push(d as u32);
                    // Every definition of a value adds its neighbours again: compact
                    // lists that doubled since their last compaction (huge kernels
                    // would otherwise hold billions of duplicate edges).
                    for x in [d, v] {
                        if adj[x].len() > compact_at[x] {
                            dedup.apply(&mut adj[x]);
                            compact_at[x] = (2 * adj[x].len()).max(64);
                        }
                    }
                }
            }
        }
    });
    for a in &mut adj {
        dedup.apply(a);
    }
    Interference {
        adj,
        first,
        last,
        forbid,
    }
}

/// Removes repeated values from lists of value indices in time linear in each list (the
/// first occurrence stays, order kept): a stamp per value says which list last saw it.
struct Dedup {
    seen: Vec<u32>,
    stamp: u32,
}

impl Dedup {
    fn new(values: usize) -> Dedup {
        Dedup {
            seen: vec![0; values],
            stamp: 0,
        }
    }

    fn apply(&mut self, list: &mut Vec<u32>) {
        self.stamp += 1;
        if self.stamp == u32::MAX {
            self.seen.fill(0);
            self.stamp = 1;
        }
        let (seen, stamp) = (&mut self.seen, self.stamp);
        list.retain(|&x| std::mem::replace(&mut seen[x as usize], stamp) != stamp);
    }
}

/// Allocates `f`. `max_registers` is the budget in ptxas's counting (255 without
/// `--maxrregcount`).
pub fn allocate(f: &Func, max_registers: u32) -> Result<Allocation, AllocError> {
    allocate_counting(f, max_registers).map_err(|(e, _)| e)
}

/// [`allocate`], and on failure for want of R registers, how many R values found none (the
/// others are still coloured): what [`spill`] sizes its first round by.
pub(crate) fn allocate_counting(
    f: &Func,
    max_registers: u32,
) -> Result<Allocation, (AllocError, usize)> {
    let g = interference(f);
    let limit_r = highest_r(max_registers);
    // Physical registers the code names are never handed out.
    let mut fixed = [[0u64; 4]; 4];
    let mut max_r: Option<u32> = None;
    for i in f.insts() {
        for r in i.def_regs().chain(i.use_regs()) {
            if let Reg::Phys {
                class,
                index,
                width,
            } = r
            {
                for k in 0..u32::from(width) {
                    let x = u32::from(index) + k;
                    fixed[slot(class)][(x / 64) as usize] |= 1 << (x % 64);
                    if class == Class::R {
                        max_r = max_r.max(Some(x));
                    }
                }
            }
        }
    }
    let mut order: Vec<VReg> = f
        .vregs
        .iter()
        .map(|(v, _)| v)
        .filter(|v| g.first[vindex(*v)] != u32::MAX)
        .collect();
    order.sort_by_key(|v| (g.first[vindex(*v)], vindex(*v)));
    let cx = Colouring {
        f,
        g: &g,
        order: &order,
        fixed: &fixed,
        limit_r,
        max_registers,
    };
    let lowest = cx.colour(None)?;
    // Again, within the registers the first colouring needed, each value taking the free
    // register released longest ago: independent values then rarely share a register, so
    // the scheduler can overlap them (`SHFL R7; SHFL R9` rather than `SHFL R0; ...; SHFL R0`).
    // The register count cannot grow; where this greedy order does not fit, the first
    // colouring stands.
    let cap_r = lowest.max_r.max(max_r.unwrap_or(0));
    let rotated = cx.colour(Some(cap_r)).ok();
    let c = rotated.unwrap_or(lowest);
    let max_r = max_r.max(c.max_r_used);
    let registers = max_r.map_or(0, |m| m + 1) + REPORTED_EXTRA;
    Ok(Allocation {
        assign: c.assign,
        registers,
        max_pred: c.max_pred,
        spill: None,
    })
}

/// One greedy colouring's inputs.
struct Colouring<'a> {
    f: &'a Func,
    g: &'a Interference,
    order: &'a [VReg],
    fixed: &'a [[u64; 4]; 4],
    limit_r: u32,
    max_registers: u32,
}

/// One greedy colouring's result.
struct Coloured {
    assign: ArenaMap<VReg, u8>,
    /// Highest R index handed out (0 when none).
    max_r: u32,
    max_r_used: Option<u32>,
    max_pred: Option<u8>,
}

fn slot(c: Class) -> usize {
    match c {
        Class::R => 0,
        Class::UR => 1,
        Class::P => 2,
        Class::UP => 3,
    }
}

impl Colouring<'_> {
    /// Colours the values in order. `rotate`: R values only below this index (inclusive),
    /// R and predicate values each on the free register released longest ago; without it,
    /// each on the lowest free register.
    fn colour(&self, rotate: Option<u32>) -> Result<Coloured, (AllocError, usize)> {
        let f = self.f;
        let g = self.g;
        let mut first_failure: Option<AllocError> = None;
        let mut failed = 0usize;
        let mut assign: ArenaMap<VReg, u8> = ArenaMap::default();
        let mut base_of: Vec<Option<u8>> = vec![None; f.vregs.len()];
        let widths: Vec<u32> = f
            .vregs
            .iter()
            .map(|(_, d)| u32::from(d.width.max(1)))
            .collect();
        // Per class and register: the last position a value coloured with it appears at.
        let mut released = [[0u32; 256]; 4];
        let mut max_pred = None;
        let mut max_r_used: Option<u32> = None;
        for &v in self.order {
            let d = &f.vregs[v];
            let width = u32::from(d.width.max(1));
            let limit = match (d.class, rotate) {
                (Class::R, Some(cap)) => cap.min(self.limit_r),
                (Class::R, None) => self.limit_r,
                (Class::UR, _) => MAX_UR,
                (Class::P | Class::UP, _) => MAX_PRED,
            };
            let mut busy = self.fixed[slot(d.class)];
            let across_call = g.forbid[vindex(v)] != [0; 4];
            for (b, f) in busy.iter_mut().zip(&g.forbid[vindex(v)]) {
                *b |= f;
            }
            for &n in &g.adj[vindex(v)] {
                if let Some(b) = base_of[n as usize] {
                    for k in 0..widths[n as usize] {
                        let x = u32::from(b) + k;
                        busy[(x / 64) as usize] |= 1 << (x % 64);
                    }
                }
            }
            let free = |x: u32| busy[(x / 64) as usize] & (1 << (x % 64)) == 0;
            let fits = |base: u32| base + width - 1 <= limit && (base..base + width).all(free);
            let rotating = rotate.is_some() && matches!(d.class, Class::R | Class::P);
            let chosen = if rotating {
                let rel = &released[slot(d.class)];
                (0..=limit)
                    .step_by(width as usize)
                    .filter(|b| fits(*b))
                    .min_by_key(|b| ((*b..*b + width).map(|x| rel[x as usize]).max(), *b))
            } else {
                (0..=limit).step_by(width as usize).find(|b| fits(*b))
            };
            let Some(base) = chosen else {
                if rotate.is_some() {
                    return Err((AllocError("the rotated colouring does not fit".into()), 0));
                }
                if across_call && matches!(d.class, Class::UR | Class::UP | Class::P) {
                    return Err((
                        AllocError(format!(
                            "unsupported: a {} value live across a system call (kernel `{}`; \
                         the callee may change every such register)",
                            match d.class {
                                Class::UR => "uniform",
                                Class::UP => "uniform predicate",
                                _ => "predicate",
                            },
                            f.name
                        )),
                        0,
                    ));
                }
                let what = match d.class {
                    Class::R => format!("{} registers", self.max_registers),
                    Class::UR => "63 uniform registers".to_string(),
                    _ => "7 predicate registers".to_string(),
                };
                let e = AllocError(format!(
                    "unsupported: register pressure (kernel `{}` needs more than {what})",
                    f.name
                ));
                if d.class != Class::R {
                    return Err((e, 0));
                }
                // Count the R values that find no register; colour the rest.
                failed += 1;
                first_failure.get_or_insert(e);
                continue;
            };
            base_of[vindex(v)] = Some(base as u8);
            assign.insert(v, base as u8);
            for x in base..base + width {
                let r = &mut released[slot(d.class)][x as usize];
                *r = (*r).max(g.last[vindex(v)]);
            }
            match d.class {
                Class::R => max_r_used = max_r_used.max(Some(base + width - 1)),
                Class::P => max_pred = max_pred.max(Some((base + width - 1) as u8)),
                _ => {}
            }
        }
        if let Some(e) = first_failure {
            return Err((e, failed));
        }
        Ok(Coloured {
            assign,
            max_r: max_r_used.unwrap_or(0),
            max_r_used,
            max_pred,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{Inst, Operand, op};

    fn mov(d: Reg, s: Operand) -> Inst {
        Inst::new(op!("MOV"), vec![Operand::r(d), s], vec![0])
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
                op!("STG.E"),
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
    fn independent_values_take_different_registers_within_the_count() {
        // x and y live together (two registers), then t1 and t2 one after the other: the
        // lowest-first colouring gives both temporaries R0, the second colouring gives the
        // second one the register released longer ago, at the same count.
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let v = |f: &mut Func, n: &str| f.new_vreg(Class::R, 1, n);
        let (x, y, t1, t2) = (
            v(&mut f, "x"),
            v(&mut f, "y"),
            v(&mut f, "t1"),
            v(&mut f, "t2"),
        );
        let add = |d: VReg, a: VReg, b: VReg| {
            Inst::new(
                op!("IADD3"),
                vec![
                    Operand::r(Reg::v(d, 1)),
                    Operand::r(Reg::v(a, 1)),
                    Operand::r(Reg::v(b, 1)),
                    Operand::rz(),
                ],
                vec![0],
            )
        };
        f.blocks[b].insts = vec![
            mov(Reg::v(x, 1), Operand::Imm(1)),
            mov(Reg::v(y, 1), Operand::Imm(2)),
            add(x, x, y),
            mov(Reg::v(t1, 1), Operand::r(Reg::v(x, 1))),
            add(t1, t1, t1),
            mov(Reg::v(t2, 1), Operand::r(Reg::v(t1, 1))),
            add(t2, t2, t2),
            Inst::new(
                op!("STG.E"),
                vec![
                    Operand::Mem {
                        base: Reg::Phys {
                            class: Class::R,
                            index: 2,
                            width: 2,
                        },
                        offset: 0,
                        desc: None,
                    },
                    Operand::r(Reg::v(t2, 1)),
                ],
                vec![],
            ),
        ];
        let al = allocate(&f, 255).unwrap();
        assert_ne!(al.get(t1), al.get(t2));
        assert_eq!(
            al.registers,
            4 + REPORTED_EXTRA,
            "R0..R3 (R2:R3 named), no more"
        );
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
        let mut bra = Inst::new(op!("BRA"), vec![Operand::Label(b1)], vec![]);
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
        let g = interference(&f);
        let adj = |a: VReg, b: VReg| g.adj[vindex(a)].contains(&(vindex(b) as u32));
        assert!(adj(y, z), "y is live across z's definition");
        assert!(!adj(x, z), "x is rewritten before it is read again");
        assert!(!adj(x, y), "y = x; x = y: the copies may share a register");
        let al = allocate(&f, 255).unwrap();
        assert_ne!(al.get(y), al.get(z));
    }

    #[test]
    fn values_live_across_a_system_call_avoid_clobbered_registers() {
        // 24 values live across `CALL.ABS.NOINC`, one that dies before it.
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let vs: Vec<VReg> = (0..24).map(|_| f.new_vreg(Class::R, 1, "")).collect();
        let t = f.new_vreg(Class::R, 2, "t");
        let dead = f.new_vreg(Class::R, 1, "dead");
        for v in &vs {
            f.blocks[b].insts.push(mov(Reg::v(*v, 1), Operand::Imm(1)));
        }
        f.blocks[b]
            .insts
            .push(mov(Reg::part(t, 0), Operand::Imm(0)));
        f.blocks[b]
            .insts
            .push(mov(Reg::part(t, 1), Operand::Imm(0)));
        f.blocks[b]
            .insts
            .push(mov(Reg::v(dead, 1), Operand::Imm(2)));
        f.blocks[b]
            .insts
            .push(mov(Reg::v(vs[0], 1), Operand::r(Reg::v(dead, 1))));
        f.blocks[b].insts.push(Inst::new(
            op!("CALL.ABS.NOINC"),
            vec![Operand::r(Reg::v(t, 2))],
            vec![],
        ));
        for v in &vs {
            f.blocks[b]
                .insts
                .push(mov(Reg::v(vs[0], 1), Operand::r(Reg::v(*v, 1))));
        }
        let al = allocate(&f, 255).unwrap();
        for v in &vs {
            let r = u32::from(al.get(*v));
            assert!(
                !ir::abi::clobbered(Class::R, r),
                "R{r} is clobbered by the call"
            );
        }
        assert!(
            ir::abi::clobbered(Class::R, u32::from(al.get(dead))),
            "a value dead at the call may use a low register"
        );
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
