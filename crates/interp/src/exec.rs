//! Execution: CTAs of warps of 32 lanes with per-lane program counters and call stacks.
//!
//! Scheduling within a warp: each step picks the lanes that are deepest in the call stack and,
//! among those, at the lowest instruction index, and executes one instruction for exactly those
//! lanes (the active mask). Lanes that branch apart run separately and merge again as soon as
//! they reach the same instruction, which for structured code is the immediate post-dominator
//! of the branch. Warp collectives with a member mask (`shfl.sync`, `vote.sync`, `match.sync`,
//! `redux.sync`, `bar.warp.sync`) wait until every live lane of the mask has arrived. CTA
//! barriers (`bar.sync`/`barrier.sync`/`bar.red`) block lanes until the expected number of
//! threads has arrived; exited threads count as arrived.

mod access;
mod calls;
mod collective;
mod lane;
mod mbarrier;
mod values;

use std::cmp::Ordering;

use crate::devrt::{self, SysCall};
use crate::float::{self, Fmt, Rnd};
use crate::ir::*;
use crate::mem::{self, Memory};
use values::*;

/// Warp steps a warp runs before the next warp of its CTA gets a turn (warps run round-robin,
/// as in the SASS emulator). Spin-wait loops on shared or global memory (cooperative groups'
/// multi-warp barriers) need the other warps to run while one spins.
pub const WARP_QUANTUM: u32 = 4096;

/// The order in which the interpreter runs the threads of a launch. Any order is a legal
/// execution of well-synchronised PTX, so a kernel whose result depends on the order has a
/// data race (or an order-dependent atomic) at that launch: its result is no reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schedule {
    /// CTAs in order; each CTA's warps round-robin in order, [`WARP_QUANTUM`] steps a turn.
    #[default]
    RoundRobin,
    /// CTAs in reverse order; warps in reverse order, one warp step a turn (the finest
    /// interleaving of warps).
    Interleaved,
}

/// How to run a launch: the thread order and whether to sanitize ([`crate::sanitize`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunOptions {
    pub schedule: Schedule,
    /// Track shared and local memory accesses and report races and uninitialized reads in
    /// [`RunStats::findings`].
    pub sanitize: bool,
    /// A `shfl` that reads a lane outside the lanes executing it (undefined in PTX) yields 0
    /// instead of whatever the model holds there (the emulator has the same option), so a
    /// kernel whose result depends on undefined lanes can be compared under one convention.
    pub zero_undefined_lanes: bool,
}

/// A kernel launch.
#[derive(Debug, Clone)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory.
    pub dynamic_shared: u32,
    /// The kernel parameter buffer (laid out as [`Function::params`] says).
    pub params: Vec<u8>,
    /// Instructions executed per CTA before giving up (a guard against endless loops).
    pub step_limit: u64,
}

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// A trap: out-of-bounds access, `trap`, misaligned access, division of an address ...
    Trap {
        message: String,
        line: u32,
        thread: [u32; 3],
        cta: [u32; 3],
    },
    /// An instruction the interpreter does not implement was reached.
    Unsupported { reason: String, line: u32 },
    /// Every live thread waits on something that never happens.
    Deadlock { message: String },
    /// The step limit was reached.
    StepLimit,
    /// The launch itself is malformed (unknown kernel, block too large, ...).
    BadLaunch(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Trap {
                message,
                line,
                thread,
                cta,
            } => write!(
                f,
                "trap at line {line} (thread {thread:?} of CTA {cta:?}): {message}"
            ),
            RunError::Unsupported { reason, line } => {
                write!(f, "unsupported at line {line}: {reason}")
            }
            RunError::Deadlock { message } => write!(f, "deadlock: {message}"),
            RunError::StepLimit => write!(f, "step limit reached"),
            RunError::BadLaunch(m) => write!(f, "bad launch: {m}"),
        }
    }
}

/// Counters of a finished run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Warp-instructions executed.
    pub warp_steps: u64,
    /// Thread-instructions executed.
    pub thread_steps: u64,
    /// Warp-synchronous instructions (`shfl.sync`, `vote.sync`, `match`, `redux`,
    /// `bar.warp.sync`) executed by a thread whose own member mask leaves it out: undefined in
    /// PTX (the result computed here is one possibility).
    pub outside_mask: u64,
    /// Shared-memory accesses outside the static `.shared` array their address derives from
    /// ([`crate::provenance`]): undefined in PTX (what they read depends on the layout).
    pub outside_array: u64,
    /// `.local` accesses (direct or through a generic address) at an address that is not a
    /// multiple of their size: undefined in PTX, and executed here as if aligned. A
    /// compiled kernel that traps on a misaligned local access when this is 0 misaligned
    /// its own stack frame.
    pub misaligned_local: u64,
    /// The sanitizer's findings (with [`RunOptions::sanitize`]).
    pub findings: Vec<crate::sanitize::Finding>,
}

/// A call's argument values: per parameter, bytes (`.param`) and element values (`.reg`).
type CallArgs = (Vec<Vec<u8>>, Vec<Vec<u64>>);

#[derive(Debug, Clone)]
struct Frame {
    func: u32,
    pc: u32,
    regs: Vec<u64>,
    local_base: u64,
    param_base: u64,
    /// The caller's return operands, written back at `ret`.
    rets: Vec<Operand>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Run,
    /// Waiting at a CTA barrier.
    Bar,
    /// Waiting for the rest of a collective's member mask.
    Wait,
    Exited,
}

#[derive(Debug, Clone)]
struct Thread {
    frames: Vec<Frame>,
    st: St,
    local: Vec<u8>,
    param: Vec<u8>,
    carry: bool,
    tid: [u32; 3],
    /// Result register of a pending `bar.red` (written on release).
    bar_dst: Option<(Operand, Ty)>,
}

/// One CTA barrier's current generation. Barriers count warps, as the hardware does (PTX:
/// "waits for all non-exited threads from its warp and marks the warp's arrival"): a warp
/// has arrived once every thread of it that has not exited has executed the barrier
/// instruction in this generation. With a thread count `b` the generation completes when
/// `32 * arrived warps >= b`; without one when every warp that has threads left has arrived.
/// Completion releases the waiting threads (`bar.sync`, `bar.red`; `bar.arrive` does not
/// wait) and starts the next generation.
#[derive(Debug, Default, Clone)]
struct Barrier {
    /// Per warp: the lanes that executed the barrier in this generation.
    arrived: Vec<u32>,
    expected: Option<u32>,
    /// bar.red accumulators: popc count, and, or.
    popc: u32,
    all: bool,
    any: bool,
    red: bool,
    waiting: Vec<(usize, usize)>,
    red_kind: u8,
}

struct Cta<'a> {
    module: &'a Module,
    mem: &'a mut Memory,
    launch: &'a Launch,
    ctaid: [u32; 3],
    /// The CTA's shared memory: user variables, dynamic area and reserved block, laid out as
    /// `smap` says.
    shared: Vec<u8>,
    smap: mem::SharedMap,
    warps: Vec<Vec<Thread>>,
    barriers: Vec<Barrier>,
    clock: u64,
    stats: RunStats,
    nthreads: u32,
    schedule: Schedule,
    zero_undefined_lanes: bool,
    san: Option<crate::sanitize::CtaSanitizer>,
    /// Set while an atomic reads and writes memory (for the sanitizer).
    in_atomic: bool,
}

/// `.aligned` warp instructions (`ldmatrix`, `mma`) need every live lane of the warp (`n`
/// threads) active.
fn whole_warp(active: u32, n: usize, what: &str, line: u32) -> Result<(), RunError> {
    if active.count_ones() as usize == n.min(32) {
        return Ok(());
    }
    Err(RunError::Unsupported {
        reason: format!(
            "{what} with part of the warp inactive (it is .aligned: all lanes must execute it)"
        ),
        line,
    })
}

fn trap_of(cta: &Cta<'_>, line: u32, t: &Thread, message: String) -> RunError {
    RunError::Trap {
        message,
        line,
        thread: t.tid,
        cta: cta.ctaid,
    }
}

/// Runs `kernel` of `module` for the whole grid. `mem` must already hold the module's global
/// variables ([`crate::Program::load`]) and the buffers the parameters point at.
pub fn run(
    module: &Module,
    mem: &mut Memory,
    kernel: u32,
    launch: &Launch,
) -> Result<RunStats, RunError> {
    run_scheduled(module, mem, kernel, launch, Schedule::RoundRobin)
}

/// [`run`] with the threads run in the order `schedule` says.
pub fn run_scheduled(
    module: &Module,
    mem: &mut Memory,
    kernel: u32,
    launch: &Launch,
    schedule: Schedule,
) -> Result<RunStats, RunError> {
    let options = RunOptions {
        schedule,
        ..RunOptions::default()
    };
    run_with(module, mem, kernel, launch, &options)
}

/// [`run`] with `options`.
pub fn run_with(
    module: &Module,
    mem: &mut Memory,
    kernel: u32,
    launch: &Launch,
    options: &RunOptions,
) -> Result<RunStats, RunError> {
    let schedule = options.schedule;
    let f = module
        .functions
        .get(kernel as usize)
        .ok_or_else(|| RunError::BadLaunch("no such kernel".into()))?;
    if !f.is_entry || !f.defined {
        return Err(RunError::BadLaunch(format!(
            "`{}` is not a defined .entry",
            f.name
        )));
    }
    let [bx, by, bz] = launch.block;
    let n = bx as u64 * by as u64 * bz as u64;
    if n == 0 || n > 1024 {
        return Err(RunError::BadLaunch(format!(
            "block of {n} threads (1 to 1024 allowed)"
        )));
    }
    if launch.grid.contains(&0) {
        return Err(RunError::BadLaunch("empty grid".into()));
    }
    let mut stats = RunStats::default();
    let mut ctas = Vec::new();
    for cz in 0..launch.grid[2] {
        for cy in 0..launch.grid[1] {
            for cx in 0..launch.grid[0] {
                ctas.push([cx, cy, cz]);
            }
        }
    }
    if schedule == Schedule::Interleaved {
        ctas.reverse();
    }
    for ctaid in ctas {
        let s = run_cta(module, mem, kernel, launch, ctaid, options)?;
        stats.warp_steps += s.warp_steps;
        stats.thread_steps += s.thread_steps;
        stats.outside_mask += s.outside_mask;
        stats.outside_array += s.outside_array;
        stats.misaligned_local += s.misaligned_local;
        stats.findings.extend(s.findings);
    }
    Ok(stats)
}

fn run_cta(
    module: &Module,
    mem: &mut Memory,
    kernel: u32,
    launch: &Launch,
    ctaid: [u32; 3],
    options: &RunOptions,
) -> Result<RunStats, RunError> {
    let f = &module.functions[kernel as usize];
    let [bx, by, bz] = launch.block;
    let n = bx * by * bz;
    let mut warps: Vec<Vec<Thread>> = Vec::new();
    for i in 0..n {
        let tid = [i % bx, (i / bx) % by, i / (bx * by)];
        let t = Thread {
            frames: vec![Frame {
                func: kernel,
                pc: 0,
                regs: vec![0; f.reg_bits.len()],
                local_base: module.local_static.div_ceil(16) * 16,
                param_base: 0,
                rets: Vec::new(),
            }],
            st: St::Run,
            local: vec![0; (module.local_static.div_ceil(16) * 16 + f.local_size) as usize],
            param: vec![0; f.param_size as usize],
            carry: false,
            tid,
            bar_dst: None,
        };
        if i % 32 == 0 {
            warps.push(Vec::new());
        }
        warps.last_mut().expect("a warp").push(t);
    }
    let smap = mem::SharedMap::new(
        module.shared_layout,
        module.shared_static,
        u64::from(launch.dynamic_shared),
    );
    let mut cta = Cta {
        module,
        mem,
        launch,
        ctaid,
        shared: vec![0; smap.size() as usize],
        smap,
        warps,
        barriers: vec![Barrier::default(); 16],
        clock: 0,
        stats: RunStats::default(),
        nthreads: n,
        schedule: options.schedule,
        zero_undefined_lanes: options.zero_undefined_lanes,
        san: None,
        in_atomic: false,
    };
    if options.sanitize {
        let tids = cta.warps.iter().flatten().map(|t| t.tid).collect();
        let mut san = crate::sanitize::CtaSanitizer::new(cta.shared.len(), tids, ctaid);
        let reserved = cta.smap.reserved_begin();
        san.initialized(reserved..reserved + mem::RESERVED_SMEM_SIZE);
        cta.san = Some(san);
    }
    cta.run()?;
    if let Some(san) = cta.san.take() {
        cta.stats.findings = san.into_findings();
    }
    Ok(cta.stats)
}

impl Cta<'_> {
    fn run(&mut self) -> Result<(), RunError> {
        loop {
            let mut progressed = false;
            let (order, quantum): (Vec<usize>, u32) = match self.schedule {
                Schedule::RoundRobin => ((0..self.warps.len()).collect(), WARP_QUANTUM),
                Schedule::Interleaved => ((0..self.warps.len()).rev().collect(), 1),
            };
            for w in order {
                // Run this warp until it can make no progress or its quantum is used up (so
                // that a warp spinning on memory another warp will write lets that warp run).
                for _ in 0..quantum {
                    if !self.step_warp(w)? {
                        break;
                    }
                    progressed = true;
                    if self.stats.warp_steps > self.launch.step_limit {
                        return Err(RunError::StepLimit);
                    }
                }
            }
            if self.warps.iter().flatten().all(|t| t.st == St::Exited) {
                return Ok(());
            }
            // Everyone is blocked: release barriers that are complete (exited threads count).
            if self.release_barriers() {
                continue;
            }
            // Force collectives whose member masks name threads that can never arrive.
            let mut forced = false;
            for w in 0..self.warps.len() {
                if self.warps[w].iter().any(|t| t.st == St::Wait)
                    && !self.warps[w].iter().any(|t| t.st == St::Run)
                {
                    self.force_wait(w)?;
                    forced = true;
                    break;
                }
            }
            if forced || progressed {
                continue;
            }
            let waiting = self
                .warps
                .iter()
                .flatten()
                .filter(|t| t.st == St::Bar)
                .count();
            return Err(RunError::Deadlock {
                message: format!(
                    "{waiting} of {} threads wait at a barrier that cannot complete",
                    self.nthreads
                ),
            });
        }
    }

    /// The lanes of warp `w` that have not exited.
    fn live_lanes(&self, w: usize) -> u32 {
        self.warps[w]
            .iter()
            .enumerate()
            .filter(|(_, t)| t.st != St::Exited)
            .fold(0, |m, (l, _)| m | 1 << l)
    }

    /// Whether barrier `b`'s generation is complete (see [`Barrier`]).
    fn barrier_complete(&self, b: usize) -> bool {
        let bar = &self.barriers[b];
        if bar.arrived.iter().all(|&m| m == 0) {
            return false;
        }
        let arrived = |w: usize| {
            let m = bar.arrived.get(w).copied().unwrap_or(0);
            m != 0 && self.live_lanes(w) & !m == 0
        };
        match bar.expected {
            Some(c) => {
                32 * (0..self.warps.len()).filter(|&w| arrived(w)).count() as u64 >= u64::from(c)
            }
            None => (0..self.warps.len()).all(|w| arrived(w) || self.live_lanes(w) == 0),
        }
    }

    /// Releases the barriers whose generation is complete (exits can complete one).
    fn release_barriers(&mut self) -> bool {
        let mut released = false;
        for b in 0..self.barriers.len() {
            if self.barrier_complete(b) {
                self.release_barrier(b);
                released = true;
            }
        }
        released
    }

    /// Ends barrier `b`'s generation: its waiting threads run again (with `bar.red`'s result).
    fn release_barrier(&mut self, b: usize) {
        {
            let bar = std::mem::take(&mut self.barriers[b]);
            if let Some(san) = &mut self.san {
                san.barrier(bar.waiting.iter().map(|&(w, l)| w * 32 + l));
            }
            for (w, l) in bar.waiting {
                let t = &mut self.warps[w][l];
                t.st = St::Run;
                if let Some((dst, ty)) = t.bar_dst.take() {
                    let v = match bar.red_kind {
                        0 => bar.popc as u64,
                        1 => bar.all as u64,
                        _ => bar.any as u64,
                    };
                    let f = &self.module.functions[t.frames.last().expect("frame").func as usize];
                    set(f, t, &dst, ty, v);
                }
            }
        }
    }

    /// Picks the next group of lanes of warp `w`: (mask, depth, func, pc).
    fn pick(&self, w: usize, include_wait: bool) -> Option<(u32, usize, u32, u32)> {
        let warp = &self.warps[w];
        let mut best: Option<(usize, u32, u32)> = None;
        for t in warp {
            if t.st != St::Run && !(include_wait && t.st == St::Wait) {
                continue;
            }
            let fr = t.frames.last().expect("a running thread has a frame");
            let key = (t.frames.len(), fr.func, fr.pc);
            best = Some(match best {
                None => key,
                Some(b) => {
                    if key.0 > b.0 || (key.0 == b.0 && (key.1, key.2) < (b.1, b.2)) {
                        key
                    } else {
                        b
                    }
                }
            });
        }
        let (depth, func, pc) = best?;
        let mut mask = 0u32;
        for (l, t) in warp.iter().enumerate() {
            if matches!(t.st, St::Run | St::Wait) {
                let fr = t.frames.last().expect("frame");
                if t.frames.len() == depth && fr.func == func && fr.pc == pc {
                    mask |= 1 << l;
                }
            }
        }
        Some((mask, depth, func, pc))
    }

    fn force_wait(&mut self, w: usize) -> Result<(), RunError> {
        let Some((mask, _, func, pc)) = self.pick(w, true) else {
            return Ok(());
        };
        self.exec(w, mask, func, pc, true)
    }

    /// One step of warp `w`. Returns whether it made progress.
    fn step_warp(&mut self, w: usize) -> Result<bool, RunError> {
        let Some((mask, _, func, pc)) = self.pick(w, false) else {
            return Ok(false);
        };
        // Include waiting lanes at the same spot.
        let mut full = mask;
        for (l, t) in self.warps[w].iter().enumerate() {
            if t.st == St::Wait {
                let fr = t.frames.last().expect("frame");
                if fr.func == func
                    && fr.pc == pc
                    && t.frames.len() == self.warps[w][mask.trailing_zeros() as usize].frames.len()
                {
                    full |= 1 << l;
                }
            }
        }
        self.exec(w, full, func, pc, false)?;
        Ok(true)
    }

    /// Counts the lanes whose shared access by `inst` leaves the static shared array at
    /// offset `array` that its address derives from ([`crate::provenance`]): undefined in PTX.
    fn count_outside_array(
        &mut self,
        w: usize,
        active: u32,
        f: &Function,
        inst: &Inst,
        array: u64,
    ) {
        let Some(&(_, size)) = self
            .module
            .shared_vars
            .iter()
            .find(|v| v.0 == array && v.1 > 0)
        else {
            return;
        };
        let start = self.module.shared_layout.user_base() + array;
        let a = &inst.args;
        let (addr_op, bytes) = match inst.op {
            Op::Ld => (
                &a[1],
                inst.mods.ty().size() as u64 * u64::from(inst.mods.vec),
            ),
            Op::St => {
                let n = match &a[1] {
                    Operand::Vec(v) => v.len() as u64,
                    _ => 1,
                };
                (&a[0], inst.mods.ty().size() as u64 * n)
            }
            Op::Atom => (&a[1], inst.mods.ty().size() as u64),
            Op::Red => (&a[0], inst.mods.ty().size() as u64),
            Op::CpAsync => {
                let n = Self::lanes(active)
                    .next()
                    .map_or(0, |l| self.get(f, &self.warps[w][l], &a[2], Ty::U32));
                (&a[0], n)
            }
            _ => return,
        };
        for l in Self::lanes(active) {
            let (_, addr) = self.address(&self.warps[w][l], addr_op, Space::Shared);
            if addr < start || addr.saturating_add(bytes) > start + size {
                self.stats.outside_array += 1;
            }
        }
    }

    fn lanes(mask: u32) -> impl Iterator<Item = usize> {
        (0..32).filter(move |l| mask & (1 << l) != 0)
    }

    fn exec(
        &mut self,
        w: usize,
        mask: u32,
        func: u32,
        pc: u32,
        forced: bool,
    ) -> Result<(), RunError> {
        let module = self.module;
        let f = &module.functions[func as usize];
        let Some(inst) = f.body.get(pc as usize) else {
            // Falling off the end of a body is an implicit `ret`.
            for l in Self::lanes(mask) {
                self.do_ret(w, l);
            }
            return Ok(());
        };
        self.clock += 1;
        self.stats.warp_steps += 1;
        self.stats.thread_steps += mask.count_ones() as u64;
        // Guard: lanes whose predicate is false just move on.
        let mut active = mask;
        if let Some((p, neg)) = inst.guard {
            for l in Self::lanes(mask) {
                let t = &self.warps[w][l];
                let v = t.frames.last().expect("frame").regs[p as usize] & 1 != 0;
                if v == neg {
                    active &= !(1 << l);
                    let t = &mut self.warps[w][l];
                    t.frames.last_mut().expect("frame").pc += 1;
                    if t.st == St::Wait {
                        t.st = St::Run;
                    }
                }
            }
        }
        if active == 0 {
            return Ok(());
        }
        match inst.op {
            Op::Unsupported => {
                return Err(RunError::Unsupported {
                    reason: inst.unsupported.clone().unwrap_or_default(),
                    line: inst.line,
                });
            }
            Op::Shfl
            | Op::Vote
            | Op::Match
            | Op::Redux
            | Op::BarWarp
            | Op::Activemask
            | Op::Elect
            | Op::Ldmatrix
            | Op::Stmatrix
            | Op::Movmatrix
            | Op::Mma
            | Op::Wmma => {
                return self.collective(w, active, f, inst, forced);
            }
            Op::Bar => return self.barrier(w, active, f, inst),
            _ => {}
        }
        if inst.mods.strong
            && let Some(san) = &mut self.san
        {
            // A volatile or acquire/release access: synchronization (before it, for the
            // sanitizer's purposes, and after it below).
            for l in Self::lanes(active) {
                san.synchronize(w * 32 + l);
            }
        }
        if let Some(Some(array)) = f.shared_arrays.get(pc as usize) {
            self.count_outside_array(w, active, f, inst, *array);
        }
        for l in Self::lanes(active) {
            self.lane(w, l, f, inst)?;
        }
        Ok(())
    }

    fn advance(&mut self, w: usize, l: usize) {
        let t = &mut self.warps[w][l];
        t.frames.last_mut().expect("frame").pc += 1;
        t.st = St::Run;
    }

    fn do_ret(&mut self, w: usize, l: usize) {
        let module = self.module;
        let t = &mut self.warps[w][l];
        let callee = t.frames.pop().expect("frame");
        let cf = &module.functions[callee.func as usize];
        if t.frames.is_empty() {
            t.st = St::Exited;
            return;
        }
        // Copy return values into the caller's operands.
        for (slot, dst) in cf.rets.iter().zip(&callee.rets) {
            let caller = &module.functions[t.frames.last().expect("caller").func as usize];
            let esz = slot.ty.size().min(8) as usize;
            // The returned value as elements of the slot type.
            let vals: Vec<u64> = match slot.reg {
                Some(r) => (0..slot.vec.max(1))
                    .map(|k| callee.regs[(r + k) as usize])
                    .collect(),
                None => {
                    let at = (callee.param_base + slot.offset) as usize;
                    t.param[at..at + slot.size as usize]
                        .chunks(esz)
                        .map(|c| {
                            let mut b = [0u8; 8];
                            b[..c.len()].copy_from_slice(c);
                            u64::from_le_bytes(b)
                        })
                        .collect()
                }
            };
            match dst {
                Operand::VarAddr {
                    var:
                        VarRef {
                            space: Space::Param,
                            loc: Loc::FrameParam(off),
                        },
                    ..
                } => {
                    let at = (t.frames.last().expect("caller").param_base + off) as usize;
                    let mut bytes = Vec::new();
                    for v in &vals {
                        bytes.extend_from_slice(&v.to_le_bytes()[..esz]);
                    }
                    let end = (at + bytes.len()).min(t.param.len());
                    t.param[at..end].copy_from_slice(&bytes[..end - at]);
                }
                Operand::Vec(parts) => {
                    for (p, v) in parts.iter().zip(&vals) {
                        set(caller, t, p, slot.ty, *v);
                    }
                }
                other => {
                    if let Some(v) = vals.first() {
                        set(caller, t, other, slot.ty, *v);
                    }
                }
            }
        }
        t.local.truncate(callee.local_base as usize);
        t.param.truncate(callee.param_base as usize);
        t.st = St::Run;
    }

    fn barrier(
        &mut self,
        w: usize,
        active: u32,
        f: &Function,
        inst: &Inst,
    ) -> Result<(), RunError> {
        let args = &inst.args;
        let first = Self::lanes(active).next().expect("an active lane");
        // bar.red: d, a, {b,} {!}c ; others: a {, b}
        let (id_op, count_op) = match inst.mods.bar {
            2 => (
                args.get(1),
                if args.len() == 4 { args.get(2) } else { None },
            ),
            _ => (args.first(), args.get(1)),
        };
        let t0 = &self.warps[w][first];
        let id = id_op
            .map(|o| self.get(f, t0, o, Ty::U32) as u32)
            .unwrap_or(0);
        // A thread count of 0 is every thread (ptxas drops it: `BAR.SYNC 0x3`).
        let count = count_op
            .map(|o| self.get(f, t0, o, Ty::U32) as u32)
            .filter(|&c| c != 0);
        if id as usize >= self.barriers.len() {
            return Err(trap_of(
                self,
                inst.line,
                t0,
                format!("barrier {id} out of range (0..15)"),
            ));
        }
        // Misuse the hardware does not define: a count that is not a whole number of warps,
        // or threads of one generation giving different counts.
        if let Some(c) = count {
            let earlier = self.barriers[id as usize]
                .expected
                .filter(|_| self.barriers[id as usize].arrived.iter().any(|&m| m != 0));
            if c % 32 != 0 || earlier.is_some_and(|e| e != c) {
                let why = match earlier {
                    Some(e) if e != c => format!("threads arrive with thread counts {e} and {c}"),
                    _ => format!("thread count {c} is not a multiple of the warp size"),
                };
                return Err(trap_of(
                    self,
                    inst.line,
                    t0,
                    format!("barrier misuse: barrier {id}: {why}"),
                ));
            }
        }
        for l in Self::lanes(active) {
            let t = &self.warps[w][l];
            let red_val = if inst.mods.bar == 2 {
                let c = args.last().expect("bar.red predicate");
                Some(self.get(f, t, c, Ty::Pred) & 1 != 0)
            } else {
                None
            };
            let nwarps = self.warps.len();
            let b = &mut self.barriers[id as usize];
            if b.arrived.iter().all(|&m| m == 0) && b.waiting.is_empty() {
                b.all = true;
                b.any = false;
                b.popc = 0;
            }
            b.arrived.resize(nwarps, 0);
            b.arrived[w] |= 1 << l;
            if let Some(c) = count {
                b.expected = Some(c);
            }
            if let Some(v) = red_val {
                b.red = true;
                b.popc += v as u32;
                b.all &= v;
                b.any |= v;
                b.red_kind = if inst.mods.popc {
                    0
                } else if inst.mods.boolop == Some(BoolOp::And) {
                    1
                } else {
                    2
                };
            }
            self.advance(w, l);
            if inst.mods.bar != 1 {
                let t = &mut self.warps[w][l];
                t.st = St::Bar;
                if inst.mods.bar == 2 {
                    t.bar_dst = Some((
                        args[0].clone(),
                        if inst.mods.popc { Ty::U32 } else { Ty::Pred },
                    ));
                }
                self.barriers[id as usize].waiting.push((w, l));
            }
        }
        // With a thread count the generation completes as soon as enough warps arrived (a
        // later arrival belongs to the next one). Without one every warp with threads left is
        // waiting once it completes, so nothing can arrive before the end of the scheduler's
        // pass, which releases it (`release_barriers`): the order in which warps run on after
        // a `bar.sync 0` stays the scheduler's.
        if self.barriers[id as usize].expected.is_some() && self.barrier_complete(id as usize) {
            self.release_barrier(id as usize);
        }
        Ok(())
    }

    // ---- operand access -------------------------------------------------------------------

    // `f` (the running function) is part of the operand-access signature shared with `set`.

    // ---- per-lane instruction semantics --------------------------------------------------
}

/// Space address -> generic address.
pub fn to_generic(space: Space, a: u64) -> u64 {
    match space {
        Space::Generic | Space::Global => a,
        Space::Shared | Space::SharedCluster => mem::SHARED_WINDOW + a,
        Space::Local => mem::LOCAL_WINDOW + a,
        Space::Const => mem::CONST_WINDOW + a,
        Space::Param => mem::PARAM_WINDOW + a,
    }
}

/// Generic address -> (space, address in that space).
pub fn from_generic(a: u64) -> (Space, u64) {
    let win = |base: u64| a >= base && a < base + mem::WINDOW_SIZE;
    if win(mem::SHARED_WINDOW) {
        (Space::Shared, a - mem::SHARED_WINDOW)
    } else if win(mem::LOCAL_WINDOW) {
        (Space::Local, a - mem::LOCAL_WINDOW)
    } else if win(mem::CONST_WINDOW) {
        (Space::Const, a - mem::CONST_WINDOW)
    } else if win(mem::PARAM_WINDOW) {
        (Space::Param, a - mem::PARAM_WINDOW)
    } else {
        (Space::Global, a)
    }
}

/// The bit that makes an f64 NaN quiet.
const F64_QUIET_BIT: u64 = 0x0008_0000_0000_0000;

/// The NaN of ptxas's f64 `div` and `sqrt` routines for an invalid operation.
const NEG_QUIET_NAN: u64 = 0xfff8_0000_0000_0000;
