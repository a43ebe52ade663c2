//! Issue order and control codes for allocated machine IR.
//!
//! With `reorder` (`-O1` and up), each block's instructions issue in the order `order.rs`
//! chooses: list scheduling by critical path after register allocation, every register and
//! memory dependence kept, instructions with other effects left in place. Then every
//! instruction gets a [`Control`]-like record (stall, yield, read/write scoreboard, wait mask)
//! computed in one pass over the instructions in issue order:
//!
//! * **Fixed-latency results** are ready a fixed number of cycles after issue
//!   ([`Latencies`]); an instruction reading or rewriting a register that is not ready yet
//!   raises the previous instruction's stall (and inserts `NOP`s beyond a stall of 15).
//! * **Variable-latency instructions** (loads, stores, `S2R`, sm_90 `LDC`, sm_80 `I2F`,
//!   `F2I`) set a write scoreboard for their destinations and a read scoreboard for their
//!   sources; a later reader/writer of such a destination, or writer of such a source, waits
//!   on it. Scoreboards are counters, so they are handed out round-robin and may be shared.
//! * **Block boundaries**: a block starts with what its predecessors laid out before it leave
//!   in flight (the join of their exit states: pending scoreboards per register, fixed-latency
//!   results not ready yet). A branch stalls until every fixed-latency result is ready (the
//!   branch's stall is all a taken path sees), and a branch back to a block laid out at or
//!   before its own (a loop's latch) also waits on every scoreboard in use, so a loop header's
//!   entry state needs nothing from its latches. Loads in flight cross forward edges and are
//!   waited on where they are read, as in ptxas's code.
//!
//! The latencies are upper bounds of the distances ptxas 13.0.88 itself leaves between a
//! producer and its first consumer (`docs/arch/codegen.md` lists the observations); a
//! hazard checker will replace these bounds with per-SM tables.

#![forbid(unsafe_code)]

use std::collections::HashMap;

use ir::{Class, Func, Inst, Mnemonic, Reg, VReg};
use target::Profile;

mod fixed;
mod order;

/// The control fields of one instruction (same meaning as `sass::Control`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ctrl {
    pub stall: u8,
    pub yield_bit: bool,
    /// 7 = none.
    pub write_sb: u8,
    /// 7 = none.
    pub read_sb: u8,
    pub wait_mask: u8,
}

/// One issued slot: an instruction of the function (block position, index) or a `NOP`
/// inserted for a long stall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Inst { block: usize, index: usize },
    Nop,
}

/// Result of scheduling: slots in issue order with their controls; `block_start[k]` is the
/// slot index where block `order[k]` begins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub slots: Vec<(Slot, Ctrl)>,
    pub block_start: Vec<usize>,
}

impl Schedule {
    /// Delays slot `index` by `cycles`: `NOP`s (stall ≤ 15 each) inserted before it. A block
    /// starting at `index` starts at the first inserted `NOP`, so the delay applies on every
    /// path into it.
    pub fn insert_delay(&mut self, index: usize, mut cycles: u16) {
        let mut at = index;
        while cycles > 0 {
            let s = cycles.min(15) as u8;
            let nop = Ctrl {
                stall: s,
                yield_bit: s <= 8,
                write_sb: 7,
                read_sb: 7,
                wait_mask: 0,
            };
            self.slots.insert(at, (Slot::Nop, nop));
            for b in &mut self.block_start {
                if *b > index {
                    *b += 1;
                }
            }
            at += 1;
            cycles -= u16::from(s);
        }
    }
}

/// Fixed latencies (cycles from issue until a dependent instruction may issue).
#[derive(Clone, Copy, Debug)]
pub struct Latencies {
    /// Vector register results (ptxas: IMAD.WIDE → LDG address 6 cycles on sm_80/sm_90).
    pub r: u64,
    /// sm_90 double-precision results (ptxas: DADD → dependent DMUL 8 cycles).
    pub r_fp64: u64,
    /// Predicate results (ptxas: ISETP → `@P0 EXIT` 13 cycles).
    pub p: u64,
    /// sm_90 DSETP predicate results (ptxas: DSETP → BRA 14, → PLOP3 15 cycles).
    pub p_fp64: u64,
    /// Uniform register results (ptxas: ULDC.64 UR4 → first LDG 14–15 cycles).
    pub ur: u64,
    /// Minimum stall after a variable-latency instruction before its scoreboard can be
    /// waited on (ptxas: S2R/LDG/LDC stall ≥ 1–2).
    pub sb_setup: u8,
    /// Stall after a branch or exit: ptxas 13.0.88 writes `S05` after every `EXIT` and after
    /// almost every `BRA` on sm_75, sm_80, sm_86, sm_89 and sm_90 (the first 40 cuda-samples
    /// files of the corpus: sm_90 204 `EXIT` all at 5, 1,024 of 1,381 `BRA` at 5, none less;
    /// sm_80 1,380 of 1,398 `BRA` at 5).
    pub branch: u8,
}

/// The bounds used for sm_80 and sm_90.
pub const LATENCIES: Latencies = Latencies {
    r: 6,
    r_fp64: 8,
    p: 13,
    p_fp64: 15,
    ur: 15,
    sb_setup: 2,
    branch: 5,
};

/// Whether an instruction completes with variable latency (needs scoreboards) on the SM of
/// `profile`.
pub fn is_variable_latency(i: &Inst, profile: &Profile) -> bool {
    match i.mnemonic() {
        Mnemonic::S2R
        | Mnemonic::S2UR
        | Mnemonic::LDG
        | Mnemonic::STG
        | Mnemonic::LDS
        | Mnemonic::STS
        | Mnemonic::LD
        | Mnemonic::ST
        | Mnemonic::LDL
        | Mnemonic::STL
        | Mnemonic::ATOM
        | Mnemonic::ATOMG
        | Mnemonic::ATOMS
        | Mnemonic::RED
        | Mnemonic::REDG
        | Mnemonic::MUFU
        | Mnemonic::F2I
        | Mnemonic::BAR
        | Mnemonic::B2R
        | Mnemonic::SHFL
        | Mnemonic::FLO
        | Mnemonic::POPC
        | Mnemonic::BREV
        | Mnemonic::REDUX
        | Mnemonic::FCHK => true,
        // `ldmatrix`: the tables' `class LDSM variable` (sm_80 and sm_90); `mma.f64`: `class
        // DMMA variable`. `movmatrix`: ptxas scoreboards `MOVM`'s result (`MOVM.16.MT88 R0,
        // R0 [W0]`, its reader waits on 0; no table has a class for it). `stmatrix`: its
        // registers are read through a scoreboard (conservative; `class STSM fixed`).
        Mnemonic::LDSM | Mnemonic::DMMA | Mnemonic::MOVM | Mnemonic::STSM => true,
        // `crates/hazard/tables/sm_{80,90}.txt`: `class MATCH variable` (every MATCH ptxas
        // writes sets a write scoreboard).
        Mnemonic::MATCH => true,
        // The same tables: `class QSPC variable` (sm_80 and sm_90).
        Mnemonic::QSPC => true,
        // The same tables: `class TEX variable`, `class TLD variable`.
        Mnemonic::TEX | Mnemonic::TLD => true,
        // Surface accesses go through the texture unit: ptxas scoreboards `SULD`'s result
        // and `SUST`'s sources (`SULD.D.BA.2D.STRONG.SM.TRAP R0, [R4], UR4, 0x0 [W5]`, its
        // reader waits on 5; `SUST ... [R0]`: a read scoreboard).
        Mnemonic::SULD | Mnemonic::SUST => true,
        // `mbarrier` (sm_90): the tables' `class SYNCS variable` (ptxas scoreboards the state an
        // arrival returns and the predicate of a phase check).
        Mnemonic::SYNCS => true,
        Mnemonic::R2UR => !profile.codegen.is_some_and(|f| f.r2ur_fixed_latency),
        Mnemonic::LDC | Mnemonic::F2F => true,
        // ptxas scoreboards every FRND (ordinary and .F64) on sm_80 and sm_90.
        Mnemonic::FRND => true,
        // sm_90 converts 32-bit integers to f32 with the fixed-latency I2FP; its I2F forms
        // (.F64, .RP) are scoreboarded like every sm_80 I2F.
        Mnemonic::I2F => true,
        // Double precision: scoreboarded on sm_80, fixed latency on sm_90 (ptxas's schedules).
        Mnemonic::DADD | Mnemonic::DMUL | Mnemonic::DFMA | Mnemonic::DSETP => {
            !profile.codegen.is_some_and(|f| f.fp64_fixed_latency)
        }
        _ => false,
    }
}

/// When the results of a tensor-core `HMMA` or `IMMA` may be read: fixed latency, but longer
/// than the ALU's and depending on the consumer. The learned table's minimum distance ptxas
/// left between the producer and that consumer class (`raw HMMA HMMA 16` on sm_80, `18` on
/// sm_90: the accumulator chain), or for a consumer ptxas never fed from it the largest such
/// minimum (`raw HMMA F2FP 38` on sm_80, `raw HMMA FMUL 24` on sm_90). The hazard checker
/// bounds a pair by the smaller of the producer's and the consumer's minima, which does not
/// catch a too-early consumer; this rule is what keeps kiln's code from one.
struct MmaLatency {
    table: Option<&'static hazard::table::LatencyTable>,
}

impl MmaLatency {
    /// Without a table: ptxas's largest `HMMA` distance on sm_80.
    const FALLBACK: u64 = 38;

    fn of(profile: &Profile) -> MmaLatency {
        MmaLatency {
            table: hazard::latency_table(&format!("sm_{}", profile.number)),
        }
    }

    /// Whether `m`'s results follow this rule.
    fn applies(m: Mnemonic) -> bool {
        matches!(m, Mnemonic::HMMA | Mnemonic::IMMA)
    }

    /// The largest minimum after `producer` (a drain, or an unseen consumer).
    fn longest(&self, producer: Mnemonic) -> u64 {
        self.table.map_or(Self::FALLBACK, |t| {
            u64::from(t.raw_safe(producer.name(), "")).max(1)
        })
    }

    /// Cycles from `producer`'s issue until `consumer` may read or overwrite its results.
    fn after(&self, producer: Mnemonic, consumer: &Inst) -> u64 {
        self.table.map_or(Self::FALLBACK, |t| {
            u64::from(t.raw_safe(producer.name(), consumer.mnemonic().name()))
        })
    }
}

/// The scoreboard after `sb`, cycling through `first..=5`.
fn next_scoreboard(sb: u8, first: u8) -> u8 {
    if sb >= 5 { first } else { sb + 1 }
}

/// Fixed latency of an instruction's results of register class `class` (0 R, 1 UR, 2+ P).
fn fixed_latency(i: &Inst, class: u8, lat: &Latencies) -> u64 {
    match class {
        0 if matches!(
            i.mnemonic(),
            Mnemonic::DADD | Mnemonic::DMUL | Mnemonic::DFMA
        ) =>
        {
            lat.r_fp64
        }
        0 => lat.r,
        1 => lat.ur,
        // sm_90's fixed-latency DSETP (in the fp64 pipe) writes its predicate later than
        // ISETP/FSETP: ptxas leaves 14 cycles before a branch or an ALU consumer and 15 before
        // PLOP3 (`crates/hazard/tables/sm_90.txt`: `raw DSETP BRA 14 n=761`, `raw DSETP PLOP3
        // 15`). 13 made the branch read the previous DSETP's predicate on an H100
        // (Mandelbrot<double> one iteration late, rsqrt.approx.f64 of a negative number 2x;
        // docs/arch/hardware.md). On sm_80 DSETP is scoreboarded.
        _ if i.mnemonic() == Mnemonic::DSETP => lat.p_fp64,
        _ => lat.p,
    }
}

type PhysKey = (u8, u32);

fn key_class(c: Class) -> u8 {
    match c {
        Class::R => 0,
        Class::UR => 1,
        Class::P => 2,
        Class::UP => 3,
    }
}

/// Physical registers covered by a register reference (none for RZ/PT).
fn phys(f: &Func, r: Reg, assign: &dyn Fn(VReg) -> u8) -> Vec<PhysKey> {
    match r {
        Reg::Zero(_) => Vec::new(),
        Reg::Phys {
            class,
            index,
            width,
        } => (0..width)
            .map(|k| (key_class(class), u32::from(index + k)))
            .collect(),
        Reg::Virt { vreg, part, width } => {
            let c = f.vregs[vreg].class;
            let base = u32::from(assign(vreg)) + u32::from(part);
            (0..width)
                .map(|k| (key_class(c), base + u32::from(k)))
                .collect()
        }
    }
}

/// A fixed-latency result in flight: ready for any reader at `any` (the bound of
/// [`Latencies`]); with its producer's class known, for a given reader at `issue` plus the
/// learned distance ([`fixed::FixedLatency`]).
#[derive(Clone, Copy, Debug)]
struct Ready {
    any: u64,
    issue: u64,
    producer: Option<&'static str>,
}

/// What a block leaves in flight where control leaves it, and what a block starts with: the
/// join over its predecessors laid out before it.
#[derive(Clone, Debug, Default)]
struct Carried {
    /// Fixed-latency results not ready yet: cycles after the exit (the cycle the next
    /// instruction may issue) until they are.
    remaining: HashMap<PhysKey, u64>,
    /// Register -> scoreboards of its pending write.
    pending_write: HashMap<PhysKey, u8>,
    /// Register -> scoreboards of the instructions still to read it.
    pending_read: HashMap<PhysKey, u8>,
    /// Scoreboards of `MEMBAR`s the next instruction waits on.
    fence_wait: u8,
}

impl Carried {
    /// The state on entry to a block reached from each of `exits` (`None`: a predecessor
    /// not scheduled yet, which leaves nothing in flight).
    fn join<'a>(exits: impl Iterator<Item = Option<&'a Carried>>) -> Carried {
        let mut out = Carried::default();
        for e in exits.flatten() {
            for (r, c) in &e.remaining {
                let x = out.remaining.entry(*r).or_default();
                *x = (*x).max(*c);
            }
            for (r, m) in &e.pending_write {
                *out.pending_write.entry(*r).or_default() |= m;
            }
            for (r, m) in &e.pending_read {
                *out.pending_read.entry(*r).or_default() |= m;
            }
            out.fence_wait |= e.fence_wait;
        }
        out
    }
}

/// Schedules `f` for the SM of `profile` with registers assigned by `assign`: in program
/// order, or with `reorder` each block's instructions in the order of `order.rs` (list
/// scheduling by critical path, every dependence kept).
pub fn schedule(
    f: &Func,
    assign: &dyn Fn(VReg) -> u8,
    profile: &Profile,
    reorder: bool,
) -> Schedule {
    let lat = LATENCIES;
    let converge = hazard::convergence_stall(&format!("sm_{}", profile.number));
    let mma = MmaLatency::of(profile);
    let fixed = fixed::FixedLatency::of(&format!("sm_{}", profile.number));
    // Issue cycles (and producers) of the tensor-core results not yet overwritten (see
    // [`MmaLatency`]).
    let mut mma_issue: HashMap<PhysKey, (u64, Mnemonic)> = HashMap::new();
    let mut slots: Vec<(Slot, Ctrl)> = Vec::new();
    let mut block_start = Vec::new();
    // Per block, from its entry state: when fixed-latency results are ready; register ->
    // mask of the scoreboards its pending write may be on (more than one where paths with
    // different scoreboards join).
    let mut ready: HashMap<PhysKey, Ready>;
    let mut pending_write: HashMap<PhysKey, u8>;
    // A register may be read by several in-flight instructions with different scoreboards:
    // its entry is the mask of all of them (an overwrite waits on every one).
    let mut pending_read: HashMap<PhysKey, u8>;
    // `cp.async`'s groups count on scoreboard 0 (`LDGDEPBAR`, `DEPBAR.LE SB0, n`): a kernel
    // with them leaves it to them, as ptxas does, so that waiting on a load does not wait
    // for every copy in flight.
    let first_sb = u8::from(f.order.iter().any(|b| {
        f.blocks[*b]
            .insts
            .iter()
            .any(|i| matches!(i.mnemonic(), Mnemonic::LDGDEPBAR | Mnemonic::DEPBAR))
    }));
    let mut next_sb = first_sb;
    // The scoreboards of `MEMBAR`s the next instruction must wait on.
    let mut fence_wait: u8;
    // Issue cycle of the last slot.
    let mut last_issue: u64 = 0;
    let succs = ir::cfg::successors(f);
    let preds = ir::cfg::predecessors(&succs);
    // What each block leaves in flight on its way out (see `Carried`).
    let mut exits: Vec<Option<Carried>> = vec![None; f.order.len()];
    for (k, b) in f.order.iter().enumerate() {
        block_start.push(slots.len());
        // The block's first instruction issues no sooner than this.
        let entry = slots
            .last()
            .map_or(0, |(_, c)| last_issue + u64::from(c.stall));
        // Entry state: what its predecessors laid out before it leave in flight. A
        // predecessor laid out at or after it (a loop's latch) drains before its branch.
        let carried = Carried::join(
            preds[k]
                .iter()
                .filter(|p| **p < k)
                .map(|p| exits[*p].as_ref()),
        );
        ready = carried
            .remaining
            .iter()
            .map(|(r, c)| {
                let at = entry + c;
                (
                    *r,
                    Ready {
                        any: at,
                        issue: at,
                        producer: None,
                    },
                )
            })
            .collect();
        pending_write = carried.pending_write;
        pending_read = carried.pending_read;
        fence_wait = carried.fence_wait;
        mma_issue.clear();
        let insts = &f.blocks[*b].insts;
        let order: Vec<usize> = if reorder {
            order::block_order(f, insts, assign, profile)
        } else {
            (0..insts.len()).collect()
        };
        for &j in &order {
            let i = &insts[j];
            let reads: Vec<PhysKey> = i.use_regs().flat_map(|r| phys(f, r, assign)).collect();
            let writes: Vec<PhysKey> = i.def_regs().flat_map(|r| phys(f, r, assign)).collect();
            // Control flow and warp reconvergence see every earlier result complete.
            // Memory fences also start with every earlier access complete, and the
            // instruction after a `MEMBAR` waits for it (ptxas gives `MEMBAR` a scoreboard
            // that the next memory access waits on).
            //
            // A branch leaves every fixed-latency result complete (a taken branch's target
            // cannot lengthen the branch's stall), and a branch back to a block laid out
            // at or before this one (a loop's latch) also every scoreboard: the target's
            // entry state is what the blocks laid out before it leave. A forward branch
            // leaves its scoreboards to its targets, whose entry state joins them.
            let back_edge = succs[k].iter().any(|s| *s <= k);
            let drain = matches!(
                i.mnemonic(),
                Mnemonic::WARPSYNC
                    | Mnemonic::MEMBAR
                    | Mnemonic::ERRBAR
                    | Mnemonic::CGAERRBAR
                    | Mnemonic::CCTL
            )
                // A system call starts with every earlier access complete: the callee saves
                // and uses registers of its own.
                || i.is_system_call()
                || (i.mnemonic() == Mnemonic::BRA && back_edge);
            let drain_fixed = drain || i.mnemonic() == Mnemonic::BRA;
            let mut wait = std::mem::take(&mut fence_wait);
            if drain {
                for mask in pending_write.values() {
                    wait |= mask;
                }
                for mask in pending_read.values() {
                    wait |= mask;
                }
            } else {
                for r in reads.iter().chain(&writes) {
                    if let Some(mask) = pending_write.get(r) {
                        wait |= mask;
                    }
                }
                for r in &writes {
                    if let Some(mask) = pending_read.get(r) {
                        wait |= mask;
                    }
                }
            }
            // A write on several scoreboards (paths joined) is known complete once all of
            // them have been waited on.
            for mask in pending_write.values_mut() {
                *mask &= !wait;
            }
            pending_write.retain(|_, mask| *mask != 0);
            for mask in pending_read.values_mut() {
                *mask &= !wait;
            }
            pending_read.retain(|_, mask| *mask != 0);
            let earliest = if drain_fixed {
                let mma_done = mma_issue.values().map(|(at, p)| at + mma.longest(*p)).max();
                ready
                    .values()
                    .map(|r| r.any)
                    .chain(mma_done)
                    .max()
                    .unwrap_or(0)
            } else {
                let guard: Vec<PhysKey> =
                    i.guard.map(|g| phys(f, g.pred, assign)).unwrap_or_default();
                let read_ready = reads.iter().filter_map(|r| {
                    let x = ready.get(r)?;
                    Some(match x.producer {
                        Some(p) => {
                            x.issue
                                + fixed.read_after(
                                    p,
                                    i,
                                    r.0 >= 2,
                                    guard.contains(r),
                                    x.any - x.issue,
                                )
                        }
                        None => x.any,
                    })
                });
                read_ready
                    .chain(writes.iter().filter_map(|r| ready.get(r).map(|x| x.any)))
                    .chain(
                        reads
                            .iter()
                            .chain(&writes)
                            .filter_map(|r| mma_issue.get(r).map(|(at, p)| at + mma.after(*p, i))),
                    )
                    .max()
                    .unwrap_or(0)
            };
            // Issue cycle: after the previous slot's stall, later if a result is not ready.
            let mut issue = match slots.last() {
                Some((_, c)) => last_issue + u64::from(c.stall),
                None => 0,
            };
            if earliest > issue && !slots.is_empty() {
                let mut extra = earliest - issue;
                let last = slots.len() - 1;
                let room = u64::from(15 - slots[last].1.stall);
                let add = extra.min(room);
                slots[last].1.stall += add as u8;
                extra -= add;
                issue += add;
                while extra > 0 {
                    let s = extra.min(15);
                    slots.push((
                        Slot::Nop,
                        Ctrl {
                            stall: s as u8,
                            yield_bit: true,
                            write_sb: 7,
                            read_sb: 7,
                            wait_mask: 0,
                        },
                    ));
                    issue += s;
                    extra -= s;
                }
            }
            let mut c = Ctrl {
                stall: 1,
                yield_bit: true,
                write_sb: 7,
                read_sb: 7,
                wait_mask: wait,
            };
            if is_variable_latency(i, profile) {
                if !writes.is_empty() {
                    c.write_sb = next_sb;
                    for w in &writes {
                        pending_write.insert(*w, 1 << next_sb);
                        ready.remove(w);
                    }
                    next_sb = next_scoreboard(next_sb, first_sb);
                }
                if !reads.is_empty() {
                    c.read_sb = next_sb;
                    for r in &reads {
                        *pending_read.entry(*r).or_default() |= 1 << next_sb;
                    }
                    next_sb = next_scoreboard(next_sb, first_sb);
                }
                c.stall = lat.sb_setup;
            } else if MmaLatency::applies(i.mnemonic()) {
                for w in &writes {
                    ready.remove(w);
                    mma_issue.insert(*w, (issue, i.mnemonic()));
                }
            } else {
                let producer = fixed::FixedLatency::class(i);
                for w in &writes {
                    ready.insert(
                        *w,
                        Ready {
                            any: issue + fixed_latency(i, w.0, &lat),
                            issue,
                            producer: Some(producer),
                        },
                    );
                }
            }
            if !MmaLatency::applies(i.mnemonic()) {
                for w in &writes {
                    mma_issue.remove(w);
                }
            }
            if i.mnemonic() == Mnemonic::MEMBAR {
                c.read_sb = next_sb;
                fence_wait = 1 << next_sb;
                next_sb = next_scoreboard(next_sb, first_sb);
                c.stall = c.stall.max(lat.sb_setup);
            }
            if i.is_terminator() || i.is_system_call() {
                c.stall = c.stall.max(lat.branch);
            }
            if matches!(i.mnemonic(), Mnemonic::WARPSYNC | Mnemonic::BSYNC)
                && let Some(least) = converge
            {
                c.stall = c.stall.max(least);
            }
            last_issue = issue;
            slots.push((Slot::Inst { block: k, index: j }, c));
        }
        let exit = slots
            .last()
            .map_or(0, |(_, c)| last_issue + u64::from(c.stall));
        let mut remaining: HashMap<PhysKey, u64> = ready
            .iter()
            .filter(|(_, x)| x.any > exit)
            .map(|(r, x)| (*r, x.any - exit))
            .collect();
        for (r, (at, p)) in &mma_issue {
            let done = at + mma.longest(*p);
            if done > exit {
                let e = remaining.entry(*r).or_default();
                *e = (*e).max(done - exit);
            }
        }
        exits[k] = Some(Carried {
            remaining,
            pending_write: std::mem::take(&mut pending_write),
            pending_read: std::mem::take(&mut pending_read),
            fence_wait,
        });
    }
    // nvdisasm rejects the yield flag together with long stalls (`S13` + yield is an
    // undefined control value); ptxas sets it only on stalls up to 8.
    for (_, c) in &mut slots {
        c.yield_bit = c.stall <= 8;
    }
    Schedule { slots, block_start }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{Operand, op};

    fn r(index: u8) -> Reg {
        Reg::Phys {
            class: Class::R,
            index,
            width: 1,
        }
    }

    #[test]
    fn dependent_alu_waits_and_loads_use_scoreboards() {
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let addr = Reg::Phys {
            class: Class::R,
            index: 2,
            width: 2,
        };
        f.blocks[b].insts = vec![
            Inst::new(
                op!("S2R"),
                vec![Operand::r(r(0)), Operand::Special("SR_TID.X")],
                vec![0],
            ),
            Inst::new(
                op!("IADD3"),
                vec![
                    Operand::r(r(4)),
                    Operand::r(r(0)),
                    Operand::r(r(0)),
                    Operand::rz(),
                ],
                vec![0],
            ),
            Inst::new(
                op!("IADD3"),
                vec![
                    Operand::r(r(5)),
                    Operand::r(r(4)),
                    Operand::r(r(4)),
                    Operand::rz(),
                ],
                vec![0],
            ),
            Inst::new(
                op!("STG.E"),
                vec![
                    Operand::Mem {
                        base: addr,
                        offset: 0,
                        desc: None,
                    },
                    Operand::r(r(5)),
                ],
                vec![],
            ),
            Inst::new(op!("MOV"), vec![Operand::r(r(5)), Operand::rz()], vec![0]),
            Inst::new(op!("EXIT"), vec![], vec![]),
        ];
        let s = schedule(&f, &|_| 0, Profile::of(80).unwrap(), false);
        let c: Vec<Ctrl> = s.slots.iter().map(|x| x.1).collect();
        assert_eq!(c[0].write_sb, 0, "S2R sets a write scoreboard");
        assert_eq!(c[1].wait_mask, 1, "its reader waits on it");
        // sm_80's table: `raw IADD3 IADD3 4`, and `IADD3` before its early readers at most 5
        // (`raw IADD3 IMAD 5`, `raw IADD3 FADD 5`): 5, under the bound of 6.
        assert_eq!(
            c[1].stall, 5,
            "IADD3 → dependent IADD3 covers the learned ALU latency"
        );
        assert_eq!(
            c[3].read_sb, 1,
            "the store's sources are guarded by a read scoreboard"
        );
        assert_eq!(
            c[4].wait_mask,
            1 << 1,
            "overwriting the stored register waits for the read"
        );
    }

    #[test]
    fn overwrite_waits_for_every_store_reading_the_register() {
        // Two stores read the same address pair with different read scoreboards; the
        // instruction that then overwrites the address must wait on both (a kernel of
        // cuda-samples/alignedTypes was rejected by the hazard checker when only the last
        // store's scoreboard was remembered).
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let addr = Reg::Phys {
            class: Class::R,
            index: 12,
            width: 2,
        };
        let store = |offset| {
            Inst::new(
                op!("STG.E"),
                vec![
                    Operand::Mem {
                        base: addr,
                        offset,
                        desc: None,
                    },
                    Operand::r(r(2)),
                ],
                vec![],
            )
        };
        f.blocks[b].insts = vec![
            store(-4),
            store(0),
            Inst::new(op!("MOV"), vec![Operand::r(r(12)), Operand::rz()], vec![0]),
            Inst::new(op!("EXIT"), vec![], vec![]),
        ];
        let s = schedule(&f, &|_| 0, Profile::of(90).unwrap(), false);
        let c: Vec<Ctrl> = s.slots.iter().map(|x| x.1).collect();
        assert_ne!(c[0].read_sb, c[1].read_sb);
        assert_eq!(c[2].wait_mask, (1 << c[0].read_sb) | (1 << c[1].read_sb));
    }

    fn p(index: u8) -> Reg {
        Reg::Phys {
            class: Class::P,
            index,
            width: 1,
        }
    }

    fn guarded(mut i: Inst, pred: Reg) -> Inst {
        i.guard = Some(ir::Guard {
            pred,
            negated: false,
        });
        i
    }

    /// `LDG R0; @P0 BRA join; IADD3 R4; join: IADD3 R5, R0` (sm_90), with `back` a branch from
    /// the join block back to the entry.
    fn load_across_a_branch(back: bool) -> Schedule {
        let mut f = Func::new("k");
        let entry = f.new_block();
        let side = f.new_block();
        let join = f.new_block();
        let exit = f.new_block();
        f.order = vec![entry, side, join, exit];
        let addr = Reg::Phys {
            class: Class::R,
            index: 2,
            width: 2,
        };
        f.blocks[entry].insts = vec![
            Inst::new(
                op!("LDG.E"),
                vec![
                    Operand::r(r(0)),
                    Operand::Mem {
                        base: addr,
                        offset: 0,
                        desc: None,
                    },
                ],
                vec![0],
            ),
            guarded(
                Inst::new(op!("BRA"), vec![Operand::Label(join)], vec![]),
                p(0),
            ),
        ];
        f.blocks[side].insts = vec![Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(r(4)),
                Operand::r(r(6)),
                Operand::r(r(6)),
                Operand::rz(),
            ],
            vec![0],
        )];
        let mut last = vec![Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(r(5)),
                Operand::r(r(0)),
                Operand::r(r(4)),
                Operand::rz(),
            ],
            vec![0],
        )];
        if back {
            last.push(guarded(
                Inst::new(op!("BRA"), vec![Operand::Label(entry)], vec![]),
                p(1),
            ));
        }
        f.blocks[join].insts = last;
        f.blocks[exit].insts = vec![Inst::new(op!("EXIT"), vec![], vec![])];
        schedule(&f, &|_| 0, Profile::of(90).unwrap(), false)
    }

    #[test]
    fn a_load_in_flight_crosses_a_forward_branch() {
        let s = load_across_a_branch(false);
        let c: Vec<Ctrl> = s.slots.iter().map(|x| x.1).collect();
        let load_sb = c[0].write_sb;
        assert_eq!(c[1].wait_mask, 0, "the branch does not wait for the load");
        assert_eq!(
            c[2].wait_mask, 0,
            "nor does the side block, which does not read it"
        );
        assert_eq!(
            c[3].wait_mask,
            1 << load_sb,
            "the join's reader waits, whichever way it was reached"
        );
    }

    #[test]
    fn a_loop_latch_leaves_nothing_in_flight() {
        let s = load_across_a_branch(true);
        let c: Vec<Ctrl> = s.slots.iter().map(|x| x.1).collect();
        // Slots: LDG, @P0 BRA, IADD3 (side), IADD3 (join), @P1 BRA (latch), EXIT.
        let store_sb = c[0].read_sb;
        assert_eq!(c[3].wait_mask, 1 << c[0].write_sb);
        assert_eq!(
            c[4].wait_mask,
            1 << store_sb,
            "the latch waits for the load's address read before going back"
        );
        assert!(
            u64::from(c[3].stall) + u64::from(c[4].stall) >= LATENCIES.r.min(5),
            "and for the join's result"
        );
    }

    #[test]
    fn a_predicate_read_as_a_selector_is_ready_sooner_than_a_guard() {
        // `ISETP P0; SEL R2, R3, R4, P0` against `ISETP P0; @P0 IADD3`: sm_90's table has
        // `raw ISETP SEL 4` (n=26,289) and every other predicate-operand reader at 4; a guard
        // keeps the bound.
        let setp = Inst::new(
            op!("ISETP.GE.AND"),
            vec![
                Operand::r(p(0)),
                Operand::r(Reg::Zero(Class::P)),
                Operand::r(r(0)),
                Operand::r(r(1)),
                Operand::r(Reg::Zero(Class::P)),
            ],
            vec![0, 1],
        );
        let add = Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(r(2)),
                Operand::r(r(3)),
                Operand::r(r(4)),
                Operand::rz(),
            ],
            vec![0],
        );
        let sel = Inst::new(
            op!("SEL"),
            vec![
                Operand::r(r(2)),
                Operand::r(r(3)),
                Operand::r(r(4)),
                Operand::r(p(0)),
            ],
            vec![0],
        );
        let stall = |second: Inst| {
            let mut f = Func::new("k");
            let b = f.new_block();
            f.order.push(b);
            f.blocks[b].insts = vec![setp.clone(), second, Inst::new(op!("EXIT"), vec![], vec![])];
            schedule(&f, &|_| 0, Profile::of(90).unwrap(), false).slots[0]
                .1
                .stall
        };
        assert_eq!(stall(sel), 4);
        assert_eq!(stall(guarded(add, p(0))), LATENCIES.p as u8);
    }
}
