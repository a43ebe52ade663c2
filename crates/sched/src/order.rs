//! Issue order within a block: list scheduling after register allocation.
//!
//! Program order waits on a load as soon as the next instruction needs it; ptxas issues the
//! loads of a block first and the arithmetic that does not need them under their latency.
//! This module reorders each block's instructions by the longest latency-weighted path to
//! the block's end (critical path first), keeping every dependence:
//!
//! * registers after allocation (read after write, write after read, write after write, the
//!   guard and implicit uses included): reordering creates no register pressure and needs no
//!   renaming;
//! * memory: a store, atomic or reduction keeps its place relative to every other access to
//!   its state space (global, shared, local; generic addresses and strong accesses: all of
//!   them), as does a CTA barrier (`BAR.SYNC`) to every access; weak loads may pass one
//!   another, and accesses to different spaces pass each other;
//! * everything not known to be free of other effects — control flow, barriers, fences,
//!   warp synchronisation, clocks, system calls, convergence barriers, collectives, anything
//!   with a branch target — stays where it is: the block is split at such instructions and
//!   only the runs between them are reordered.
//!
//! The latencies that weigh the paths are the performance model's (`crates/perfmodel`:
//! variable latencies per SM and class) and [`crate::LATENCIES`] for fixed-latency results.

use ir::{Func, Inst, Mnemonic, Operand, VReg};
use target::Profile;

use crate::{LATENCIES, PhysKey, is_variable_latency, phys};

/// How an instruction may move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Only registers: moves freely within the run.
    Pure,
    /// A weak load of the state spaces in the mask ([`GLOBAL`], [`SHARED`], [`LOCAL`]): may
    /// pass other weak loads, pure instructions and any access to other spaces.
    Load(u8),
    /// A store, atomic, reduction or strong access of the spaces in the mask: keeps its
    /// order with every access to those spaces.
    Ordered(u8),
    /// Stays in place; splits the block into runs.
    Fixed,
}

/// State spaces, as a mask: accesses to different spaces never touch the same memory.
const GLOBAL: u8 = 1;
const SHARED: u8 = 2;
const LOCAL: u8 = 4;
/// Every space: generic addresses, strong accesses (which keep their order with every
/// access), barriers.
const ALL: u8 = GLOBAL | SHARED | LOCAL;

/// The spaces a memory access may touch.
fn spaces(m: Mnemonic) -> u8 {
    use Mnemonic as M;
    match m {
        M::LDG | M::STG | M::ATOMG | M::REDG => GLOBAL,
        M::LDS | M::STS | M::ATOMS | M::LDSM => SHARED,
        M::LDL | M::STL => LOCAL,
        // `LD`/`ST`/`ATOM`/`RED` take generic addresses.
        _ => ALL,
    }
}

fn kind(i: &Inst) -> Kind {
    use Mnemonic as M;
    if i.is_terminator()
        || i.is_system_call()
        || ir::kind::never_runs(i)
        || i.operands.iter().any(|o| matches!(o, Operand::Label(_)))
    {
        return Kind::Fixed;
    }
    let strong = ir::kind::is_strongly_ordered(i);
    match i.mnemonic() {
        m if ir::kind::is_lane_arithmetic(m) || ir::kind::is_uniform_arithmetic(m) => Kind::Pure,
        M::ULDC | M::R2UR | M::LDC => Kind::Pure,
        // Special registers that do not change while a thread runs (clocks and timers do).
        M::S2R | M::S2UR
            if i.operands.iter().all(|o| match o {
                Operand::Special(s) => {
                    s.starts_with("SR_TID")
                        || s.starts_with("SR_CTAID")
                        || s.starts_with("SR_LANEID")
                        || s.starts_with("SR_LTMASK")
                        || s.starts_with("SR_LEMASK")
                        || s.starts_with("SR_GTMASK")
                        || s.starts_with("SR_GEMASK")
                        || s.starts_with("SR_EQMASK")
                }
                _ => true,
            }) =>
        {
            Kind::Pure
        }
        M::LDG | M::LDS | M::LD | M::LDL if !strong => Kind::Load(spaces(i.mnemonic())),
        // `ldmatrix`: a shared-memory read that keeps its order with every shared access.
        M::LDSM => Kind::Ordered(SHARED),
        // The tensor cores: registers only (of the whole warp, which a block runs together).
        M::HMMA | M::IMMA | M::DMMA => Kind::Pure,
        // Warp collectives read and write registers only. Within a run every lane that
        // reaches one reaches the others (no branch, exit or `WARPSYNC` inside a run: they
        // split it), so moving it among them leaves its participants unchanged.
        M::SHFL | M::VOTE | M::VOTEU | M::MATCH | M::REDUX => Kind::Pure,
        m if ir::kind::is_memory_access(m) => Kind::Ordered(if strong { ALL } else { spaces(m) }),
        // A CTA barrier orders memory accesses, not register arithmetic: it keeps its place
        // among the accesses (as a store does) and arithmetic moves across it, as ptxas
        // computes the next step's predicates before the `BAR.SYNC` of a reduction.
        M::BAR if i.op.has(ir::modifier!("SYNC")) => Kind::Ordered(ALL),
        _ => Kind::Fixed,
    }
}

/// Cycles from an instruction's issue until its results are ready (for the priority only).
fn latency(i: &Inst, profile: &Profile, figures: Option<&perfmodel::Latencies>) -> u64 {
    if is_variable_latency(i, profile) {
        return figures.map_or(30, |l| u64::from(l.write(i.mnemonic().name())));
    }
    let writes_predicate = i.def_regs().any(|r| match r {
        ir::Reg::Phys { class, .. } => matches!(class, ir::Class::P | ir::Class::UP),
        _ => false,
    });
    if writes_predicate {
        LATENCIES.p
    } else {
        LATENCIES.r
    }
}

/// Keys of [`hazard::effects::reg_key`] are below this.
const REG_KEYS: usize = 512;

/// `preds[j]`: the earlier instructions of the run that `j` must follow, in ascending order,
/// and whether `j` reads a result of theirs (a true dependence, which waits for the producer's
/// latency; any other waits one cycle).
///
/// Every earlier writer of a register `j` reads is a true predecessor, unless a later writer of
/// that register is ready no sooner (its latency at least the earlier one's less one: it issues
/// a cycle after it at the least). Of the other orderings
/// — `j` writes what an earlier instruction reads or writes, two memory accesses that are not
/// both loads — only the nearest are listed: the last writer of each register `j` writes and
/// its readers since, the last ordered access and the loads since. Every farther one precedes
/// a listed one through a chain of such orderings, each adding a cycle, so the schedule (and the
/// longest-path priorities) equal those of the full pairwise relation, built in time linear in
/// the run rather than quadratic.
fn dependences(
    kinds: &[Kind],
    reads: &[&[u16]],
    writes: &[&[u16]],
    lat: &[u64],
) -> Vec<Vec<(usize, bool)>> {
    let n = kinds.len();
    // Per register: its writers that may be the last to make it ready (the last one among them).
    let mut writers: Vec<Vec<usize>> = vec![Vec::new(); REG_KEYS];
    let mut readers_since_write: Vec<Vec<usize>> = vec![Vec::new(); REG_KEYS];
    // Per state space: the last ordered access and the loads since.
    let mut last_ordered: [Option<usize>; 3] = [None; 3];
    let mut loads_since_ordered: [Vec<usize>; 3] = Default::default();
    let each = |mask: u8| (0..3).filter(move |s| mask >> s & 1 == 1);
    let mut preds: Vec<Vec<(usize, bool)>> = Vec::with_capacity(n);
    for j in 0..n {
        let mut p: Vec<(usize, bool)> = Vec::new();
        for &r in reads[j] {
            p.extend(writers[usize::from(r)].iter().map(|&i| (i, true)));
        }
        for &r in writes[j] {
            let r = usize::from(r);
            p.extend(writers[r].last().map(|&i| (i, false)));
            p.extend(readers_since_write[r].iter().map(|&i| (i, false)));
        }
        match kinds[j] {
            Kind::Pure | Kind::Fixed => {}
            Kind::Load(m) => {
                for s in each(m) {
                    p.extend(last_ordered[s].map(|i| (i, false)));
                }
            }
            Kind::Ordered(m) => {
                for s in each(m) {
                    p.extend(last_ordered[s].map(|i| (i, false)));
                    p.extend(loads_since_ordered[s].iter().map(|&i| (i, false)));
                }
            }
        }
        // One entry per predecessor, true when any of its orderings is.
        p.sort_unstable();
        p.dedup_by(|later, earlier| {
            later.0 == earlier.0 && {
                earlier.1 |= later.1;
                true
            }
        });
        preds.push(p);
        for &r in reads[j] {
            let list = &mut readers_since_write[usize::from(r)];
            if list.last() != Some(&j) {
                list.push(j);
            }
        }
        for &r in writes[j] {
            let r = usize::from(r);
            if writers[r].last() != Some(&j) {
                writers[r].retain(|&w| lat[w] > lat[j] + 1);
                writers[r].push(j);
            }
            readers_since_write[r].clear();
        }
        match kinds[j] {
            Kind::Pure | Kind::Fixed => {}
            Kind::Load(m) => {
                for s in each(m) {
                    loads_since_ordered[s].push(j);
                }
            }
            Kind::Ordered(m) => {
                for s in each(m) {
                    last_ordered[s] = Some(j);
                    loads_since_ordered[s].clear();
                }
            }
        }
    }
    preds
}

/// The hazard checker's dense key ([`hazard::effects::reg_key`]) of an allocated register.
fn key(k: PhysKey) -> u16 {
    use sass::model::{Reg, RegFile};
    let file = match k.0 {
        0 => RegFile::R,
        1 => RegFile::Ur,
        2 => RegFile::P,
        _ => RegFile::Up,
    };
    hazard::effects::reg_key(Reg {
        file,
        index: k.1 as u8,
    })
}

/// The registers an instruction reads and writes, as the IR says and as the SASS instruction
/// does (`hazard::effects`, the checker's model of every SASS form: `IMAD.HI` reads a register
/// pair where the IR names one register). `None` when the checker's model marks its roles as
/// approximate: the instruction then stays in place. (A mnemonic without a line of its own
/// in the checker's table writes its first operand and reads the others, which holds for the
/// mnemonics [`kind`] lets move.)
fn registers(f: &Func, i: &Inst, assign: &dyn Fn(VReg) -> u8) -> Option<(Vec<u16>, Vec<u16>)> {
    let text = ir::inst_text(f, i, Some(assign), &|_| "0x0".to_string());
    let sass = sass::model::Inst::parse(&text).ok()?;
    let e = hazard::effects(&sass);
    if e.approx {
        return None;
    }
    let real = |r: &sass::model::Reg| r.file.zero_index() != Some(r.index);
    let sass_keys = |ranges: &[hazard::RegRange]| -> Vec<u16> {
        ranges
            .iter()
            .flat_map(|g| g.regs())
            .filter(real)
            .map(hazard::effects::reg_key)
            .collect()
    };
    let mut reads = sass_keys(&e.reads);
    let mut writes = sass_keys(&e.writes);
    reads.extend(i.use_regs().flat_map(|r| phys(f, r, assign)).map(key));
    writes.extend(i.def_regs().flat_map(|r| phys(f, r, assign)).map(key));
    Some((reads, writes))
}

/// The issue order of `insts` (a block of `f`): indexes into `insts`.
pub(crate) fn block_order(
    f: &Func,
    insts: &[Inst],
    assign: &dyn Fn(VReg) -> u8,
    profile: &Profile,
) -> Vec<usize> {
    let figures = perfmodel::latencies(&profile.name());
    let mut order = Vec::with_capacity(insts.len());
    let mut start = 0;
    let mut regs = Vec::new();
    for (j, i) in insts.iter().enumerate() {
        let r = match kind(i) {
            Kind::Fixed => None,
            _ => registers(f, i, assign),
        };
        match r {
            Some(r) => regs.push(r),
            None => {
                order.extend(
                    run_order(&insts[start..j], &regs, profile, figures).map(|k| start + k),
                );
                order.push(j);
                regs.clear();
                start = j + 1;
            }
        }
    }
    order.extend(run_order(&insts[start..], &regs, profile, figures).map(|k| start + k));
    order
}

/// List scheduling of a run without fixed instructions.
fn run_order(
    run: &[Inst],
    regs: &[(Vec<u16>, Vec<u16>)],
    profile: &Profile,
    figures: Option<&perfmodel::Latencies>,
) -> impl Iterator<Item = usize> {
    let reads: Vec<&[u16]> = regs.iter().map(|r| r.0.as_slice()).collect();
    let writes: Vec<&[u16]> = regs.iter().map(|r| r.1.as_slice()).collect();
    let kinds: Vec<Kind> = run.iter().map(kind).collect();
    // Priority: the longest latency-weighted path from the instruction to the run's end (an
    // instruction without results, a store, counts one cycle).
    let lat: Vec<u64> = run
        .iter()
        .zip(&writes)
        .map(|(i, w)| {
            if w.is_empty() {
                1
            } else {
                latency(i, profile, figures)
            }
        })
        .collect();
    let preds = dependences(&kinds, &reads, &writes, &lat);
    list_schedule(&preds, &lat).into_iter()
}

/// The list schedule of a run's instructions given their predecessors and latencies: the
/// order to issue them in.
fn list_schedule(preds: &[Vec<(usize, bool)>], lat: &[u64]) -> Vec<usize> {
    let n = preds.len();
    let mut height = lat.to_vec();
    for j in (0..n).rev() {
        for &(i, _) in &preds[j] {
            height[i] = height[i].max(lat[i] + height[j]);
        }
    }
    let mut waiting: Vec<usize> = preds.iter().map(Vec::len).collect();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, p) in preds.iter().enumerate() {
        for &(i, _) in p {
            succs[i].push(j);
        }
    }
    // One instruction per cycle; an instruction is available once the results it reads are
    // ready. Among the available ones the highest goes first; when none is available, the
    // one available soonest.
    let mut issued = vec![0u64; n];
    let available = |j: usize, issued: &[u64]| {
        preds[j]
            .iter()
            .map(|&(i, raw)| issued[i] + if raw { lat[i] } else { 1 })
            .max()
            .unwrap_or(0)
    };
    let mut ready: Vec<usize> = (0..n).filter(|&j| waiting[j] == 0).collect();
    let mut out = Vec::with_capacity(n);
    let mut now = 0u64;
    while !ready.is_empty() {
        let (pos, _) = ready
            .iter()
            .enumerate()
            .max_by_key(|&(_, &j)| {
                let at = available(j, &issued);
                (
                    at <= now,
                    std::cmp::Reverse(at.max(now)),
                    height[j],
                    std::cmp::Reverse(j),
                )
            })
            .expect("not empty");
        let j = ready.swap_remove(pos);
        issued[j] = now.max(available(j, &issued));
        now = issued[j] + 1;
        out.push(j);
        for &s in &succs[j] {
            waiting[s] -= 1;
            if waiting[s] == 0 {
                ready.push(s);
            }
        }
    }
    debug_assert_eq!(out.len(), n, "the dependences of a run are acyclic");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{Class, Reg, op};

    fn r(index: u8, width: u8) -> Reg {
        Reg::Phys {
            class: Class::R,
            index,
            width,
        }
    }

    fn add(d: u8, a: u8, b: u8) -> Inst {
        Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(r(d, 1)),
                Operand::r(r(a, 1)),
                Operand::r(r(b, 1)),
                Operand::rz(),
            ],
            vec![0],
        )
    }

    fn mem(base: u8) -> Operand {
        Operand::Mem {
            base: r(base, 2),
            offset: 0,
            desc: None,
        }
    }

    fn load(d: u8, base: u8) -> Inst {
        Inst::new(op!("LDG.E"), vec![Operand::r(r(d, 1)), mem(base)], vec![0])
    }

    fn store(base: u8, s: u8) -> Inst {
        Inst::new(op!("STG.E"), vec![mem(base), Operand::r(r(s, 1))], vec![])
    }

    /// The pairwise relation `dependences` reduces: every earlier instruction `j` reads a
    /// result of, or writes what it reads or writes, or a memory access not both loads.
    fn all_dependences(
        kinds: &[Kind],
        reads: &[&[u16]],
        writes: &[&[u16]],
    ) -> Vec<Vec<(usize, bool)>> {
        let overlaps = |a: &[u16], b: &[u16]| a.iter().any(|x| b.contains(x));
        (0..kinds.len())
            .map(|j| {
                (0..j)
                    .filter_map(|i| {
                        let space = |k: Kind| match k {
                            Kind::Load(m) | Kind::Ordered(m) => m,
                            _ => 0,
                        };
                        let memory = !matches!(
                            (kinds[i], kinds[j]),
                            (Kind::Pure, _) | (_, Kind::Pure) | (Kind::Load(_), Kind::Load(_))
                        ) && space(kinds[i]) & space(kinds[j]) != 0;
                        let raw = overlaps(writes[i], reads[j]);
                        (memory
                            || raw
                            || overlaps(reads[i], writes[j])
                            || overlaps(writes[i], writes[j]))
                        .then_some((i, raw))
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_reduced_dependences_schedule_as_the_pairwise_ones() {
        // Random runs over few registers (many overwrites and rereads), random latencies.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let mut reduced_edges = 0;
        let mut all_edges = 0;
        for _ in 0..400 {
            let n = 1 + next(60) as usize;
            let kinds: Vec<Kind> = (0..n)
                .map(|_| match next(4) {
                    0 => Kind::Load(1 + next(7) as u8),
                    1 => Kind::Ordered(1 + next(7) as u8),
                    _ => Kind::Pure,
                })
                .collect();
            let mut regs = |k: u64| -> Vec<Vec<u16>> {
                (0..n)
                    .map(|_| (0..next(k)).map(|_| next(6) as u16).collect())
                    .collect()
            };
            let reads = regs(4);
            let writes = regs(3);
            let lat: Vec<u64> = (0..n).map(|_| 1 + next(30)).collect();
            let reads: Vec<&[u16]> = reads.iter().map(Vec::as_slice).collect();
            let writes: Vec<&[u16]> = writes.iter().map(Vec::as_slice).collect();
            let all = all_dependences(&kinds, &reads, &writes);
            let reduced = dependences(&kinds, &reads, &writes, &lat);
            all_edges += all.iter().map(Vec::len).sum::<usize>();
            reduced_edges += reduced.iter().map(Vec::len).sum::<usize>();
            assert_eq!(list_schedule(&all, &lat), list_schedule(&reduced, &lat));
        }
        // The test exercises the reduction: far fewer edges than the pairwise relation.
        assert!(
            reduced_edges * 2 < all_edges,
            "{reduced_edges} of {all_edges}"
        );
    }

    fn order(insts: Vec<Inst>) -> Vec<usize> {
        let f = Func::new("k");
        block_order(&f, &insts, &|_| 0, Profile::of(90).expect("sm_90"))
    }

    #[test]
    fn a_load_issues_before_arithmetic_that_does_not_need_it() {
        let o = order(vec![
            add(4, 5, 6),
            add(7, 4, 4),
            load(2, 8),
            store(10, 2),
            Inst::new(op!("EXIT"), vec![], vec![]),
        ]);
        assert_eq!(o, vec![2, 0, 1, 3, 4]);
    }

    #[test]
    fn registers_and_stores_keep_their_order() {
        // The load overwrites R2, which the add reads (write after read); the second load
        // may not pass the store (memory order).
        let o = order(vec![add(4, 2, 3), load(2, 8), store(12, 4), load(5, 14)]);
        assert_eq!(o, vec![0, 1, 2, 3]);
    }

    #[test]
    fn sass_operand_pairs_the_ir_does_not_name_are_dependences() {
        // `IMAD.HI` adds the register pair at its last operand: R10 names R10:R11, so the MOV
        // to R11 (wanted early: a load's address depends on it) may not pass it.
        let hi = Inst::new(
            op!("IMAD.HI.U32"),
            vec![
                Operand::r(r(6, 1)),
                Operand::r(r(0, 1)),
                Operand::r(r(1, 1)),
                Operand::r(r(10, 1)),
            ],
            vec![0],
        );
        let mov = Inst::new(
            op!("MOV"),
            vec![Operand::r(r(11, 1)), Operand::rz()],
            vec![0],
        );
        let o = order(vec![hi, mov, load(2, 10)]);
        assert_eq!(o, vec![0, 1, 2]);
    }

    #[test]
    fn barriers_order_memory_and_arithmetic_crosses_them() {
        let bar = || {
            Inst::new(
                op!("BAR.SYNC.DEFER_BLOCKING"),
                vec![Operand::Imm(0)],
                vec![],
            )
        };
        // The load stays after the barrier, the add (long path: the load's address
        // depends on it) moves before it.
        let o = order(vec![bar(), add(8, 5, 6), load(2, 8), store(12, 2)]);
        assert_eq!(o, vec![1, 0, 2, 3]);
        // A store before the barrier stays before it.
        let o = order(vec![store(12, 2), bar(), load(3, 8)]);
        assert_eq!(o, vec![0, 1, 2]);
    }

    #[test]
    fn strong_loads_keep_their_order_with_other_loads() {
        let strong = Inst::new(
            op!("LDG.E.STRONG.SYS"),
            vec![Operand::r(r(3, 1)), mem(10)],
            vec![0],
        );
        let o = order(vec![add(4, 5, 6), strong.clone(), load(2, 8)]);
        assert_eq!(o, vec![1, 2, 0], "loads first, the strong one still first");
        let o = order(vec![load(2, 8), strong]);
        assert_eq!(o, vec![0, 1]);
    }

    #[test]
    fn a_shuffle_moves_like_arithmetic() {
        // `SHFL.BFLY R3, R4, 0x1, 0x1f` needs nothing the load or the store touches: it may
        // issue before the store (warp collectives read and write registers only).
        let shfl = Inst::new(
            op!("SHFL.BFLY"),
            vec![
                Operand::r(Reg::Zero(Class::P)),
                Operand::r(r(3, 1)),
                Operand::r(r(4, 1)),
                Operand::Imm(1),
                Operand::Imm(0x1f),
            ],
            vec![0, 1],
        );
        let o = order(vec![load(2, 8), store(10, 2), shfl]);
        assert_eq!(o, vec![0, 2, 1]);
    }

    #[test]
    fn accesses_to_different_spaces_pass_each_other() {
        // A global load may issue before a shared store (no address of one is an address
        // of the other), not before a global one.
        let sts = Inst::new(
            op!("STS"),
            vec![
                Operand::Mem {
                    base: r(12, 1),
                    offset: 0,
                    desc: None,
                },
                Operand::r(r(4, 1)),
            ],
            vec![],
        );
        let o = order(vec![sts, load(2, 8), add(5, 2, 2)]);
        assert_eq!(o, vec![1, 0, 2]);
        let o = order(vec![store(12, 4), load(2, 8), add(5, 2, 2)]);
        assert_eq!(o, vec![0, 1, 2]);
    }
}
