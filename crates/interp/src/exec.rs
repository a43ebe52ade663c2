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

use std::cmp::Ordering;

use crate::devrt::{self, SysCall};
use crate::float::{self, Fmt, Rnd};
use crate::ir::*;
use crate::mem::{self, Memory};

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

#[derive(Debug, Default, Clone)]
struct Barrier {
    arrived: u32,
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

    fn release_barriers(&mut self) -> bool {
        let exited = self
            .warps
            .iter()
            .flatten()
            .filter(|t| t.st == St::Exited)
            .count() as u32;
        let mut released = false;
        for b in 0..self.barriers.len() {
            let bar = &self.barriers[b];
            if bar.waiting.is_empty() && bar.arrived == 0 {
                continue;
            }
            let expected = bar.expected.unwrap_or(self.nthreads);
            let done = if bar.expected.is_some() {
                bar.arrived >= expected
            } else {
                bar.arrived + exited >= self.nthreads
            };
            if !done {
                continue;
            }
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
            released = true;
        }
        released
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
            | Op::Ldmatrix
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
        let count = count_op.map(|o| self.get(f, t0, o, Ty::U32) as u32);
        if id as usize >= self.barriers.len() {
            return Err(trap_of(
                self,
                inst.line,
                t0,
                format!("barrier {id} out of range (0..15)"),
            ));
        }
        for l in Self::lanes(active) {
            let t = &self.warps[w][l];
            let red_val = if inst.mods.bar == 2 {
                let c = args.last().expect("bar.red predicate");
                Some(self.get(f, t, c, Ty::Pred) & 1 != 0)
            } else {
                None
            };
            let b = &mut self.barriers[id as usize];
            if b.arrived == 0 && b.waiting.is_empty() {
                b.all = true;
                b.any = false;
                b.popc = 0;
            }
            b.arrived += 1;
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
        Ok(())
    }

    fn collective(
        &mut self,
        w: usize,
        active: u32,
        f: &Function,
        inst: &Inst,
        forced: bool,
    ) -> Result<(), RunError> {
        let args = &inst.args;
        // Member mask operand position.
        let mask_op = match inst.op {
            Op::Shfl if inst.mods.sync => args.get(4),
            Op::Vote if inst.mods.sync => args.get(2),
            Op::Match => args.last(),
            Op::Redux => args.get(2),
            Op::BarWarp => args.first(),
            _ => None,
        };
        // Each thread's own member mask (threads with different masks may execute one
        // collective together; each then combines the threads of its own mask).
        let mut masks = [u32::MAX; 32];
        if let Some(mo) = mask_op {
            for l in Self::lanes(active) {
                masks[l] = self.get(f, &self.warps[w][l], mo, Ty::B32) as u32;
                if masks[l] >> l & 1 == 0 {
                    self.stats.outside_mask += 1;
                }
            }
            let live: u32 = self.warps[w]
                .iter()
                .enumerate()
                .filter(|(_, t)| t.st != St::Exited)
                .fold(0, |m, (l, _)| m | (1 << l));
            let missing = Self::lanes(active).fold(0, |m, l| m | masks[l]) & live & !active;
            if missing != 0 && !forced {
                for l in Self::lanes(active) {
                    self.warps[w][l].st = St::Wait;
                }
                return Ok(());
            }
        }
        let n = self.warps[w].len();
        if let Some(san) = &mut self.san {
            let lanes: Vec<usize> = Self::lanes(active).map(|l| w * 32 + l).collect();
            san.warp_sync(&lanes);
        }
        match inst.op {
            Op::BarWarp => {}
            Op::Activemask => {
                for l in Self::lanes(active) {
                    let t = &mut self.warps[w][l];
                    set(f, t, &args[0], Ty::B32, active as u64);
                }
            }
            Op::Vote => {
                let mode = inst.mods.mode;
                let mut ballot = 0u32;
                for l in Self::lanes(active) {
                    let t = &self.warps[w][l];
                    if self.get(f, t, &args[1], Ty::Pred) & 1 != 0 {
                        ballot |= 1 << l;
                    }
                }
                let ty = if mode == 4 { Ty::B32 } else { Ty::Pred };
                for l in Self::lanes(active) {
                    let member = if inst.mods.sync {
                        masks[l] & active
                    } else {
                        active
                    };
                    let set_bits = ballot & member;
                    let v = match mode {
                        1 => (set_bits == member) as u64,
                        2 => (set_bits != 0) as u64,
                        3 => (set_bits == 0 || set_bits == member) as u64,
                        _ => set_bits as u64,
                    };
                    let t = &mut self.warps[w][l];
                    set(f, t, &args[0], ty, v);
                }
            }
            Op::Shfl => {
                let ty = Ty::B32;
                let vals: Vec<u64> = (0..n)
                    .map(|l| {
                        let t = &self.warps[w][l];
                        if t.st == St::Exited {
                            0
                        } else {
                            self.get(f, t, &args[1], ty)
                        }
                    })
                    .collect();
                for l in Self::lanes(active) {
                    let t = &self.warps[w][l];
                    let b = (self.get(f, t, &args[2], Ty::B32) & 0x1f) as i64;
                    let c = self.get(f, t, &args[3], Ty::B32) as i64;
                    let lane = l as i64;
                    let segmask = (c >> 8) & 0x1f;
                    let max_lane = (lane & segmask) | (c & 0x1f & !segmask);
                    let min_lane = lane & segmask;
                    let (j, pval) = match inst.mods.shfl {
                        0 => (lane - b, lane - b >= max_lane),
                        1 => (lane + b, lane + b <= max_lane),
                        2 => (lane ^ b, (lane ^ b) <= max_lane),
                        _ => {
                            let j = min_lane | (b & 0x1f & !segmask);
                            (j, j <= max_lane)
                        }
                    };
                    let j = if pval { j } else { lane };
                    let v = if !(0..n as i64).contains(&j) {
                        if self.zero_undefined_lanes {
                            0
                        } else {
                            vals[l]
                        }
                    } else if active >> j & 1 == 0 && self.zero_undefined_lanes {
                        0
                    } else {
                        vals[j as usize]
                    };
                    let t = &mut self.warps[w][l];
                    set(f, t, &args[0], ty, v);
                    if let Operand::Vec(parts) = &args[0] {
                        // `d|p` is parsed as a vector in some spellings: write both.
                        if parts.len() == 2 {
                            set(f, t, &parts[0], ty, v);
                            set(f, t, &parts[1], Ty::Pred, pval as u64);
                        }
                    }
                }
            }
            Op::Match => {
                let ty = inst.mods.ty();
                let src = &args[args.len() - 2];
                let vals: Vec<u64> = (0..n)
                    .map(|l| {
                        if active >> l & 1 == 1 {
                            self.get(f, &self.warps[w][l], src, ty)
                        } else {
                            0
                        }
                    })
                    .collect();
                for l in Self::lanes(active) {
                    let member = masks[l] & active;
                    let all_equal = Self::lanes(member).all(|k| vals[k] == vals[l]);
                    let (d, p) = if inst.mods.mode == 1 {
                        (if all_equal { member } else { 0 }, all_equal)
                    } else {
                        (
                            Self::lanes(member)
                                .filter(|&k| vals[k] == vals[l])
                                .fold(0u32, |m, k| m | 1 << k),
                            true,
                        )
                    };
                    let t = &mut self.warps[w][l];
                    match &args[0] {
                        // `d|p` (match.all's optional predicate), parsed as a pair.
                        Operand::Vec(parts) if parts.len() == 2 => {
                            set(f, t, &parts[0], Ty::B32, d as u64);
                            set(f, t, &parts[1], Ty::Pred, p as u64);
                        }
                        a => set(f, t, a, Ty::B32, d as u64),
                    }
                    if inst.mods.mode == 1 && args.len() == 4 {
                        set(f, t, &args[1], Ty::Pred, p as u64);
                    }
                }
            }
            Op::Redux => {
                let ty = inst.mods.ty();
                let signed = ty.is_signed();
                // Only executing threads take part (exited ones have no registers left).
                let vals: Vec<u64> = (0..n)
                    .map(|l| {
                        if active >> l & 1 == 1 {
                            self.get(f, &self.warps[w][l], &args[1], Ty::B32)
                        } else {
                            0
                        }
                    })
                    .collect();
                for l in Self::lanes(active) {
                    let member = masks[l] & active;
                    let r = Self::lanes(member)
                        .map(|k| vals[k])
                        .reduce(|a, b| match inst.mods.atom {
                            Some(AtomOp::Add) => (a as u32).wrapping_add(b as u32) as u64,
                            Some(AtomOp::And) => a & b,
                            Some(AtomOp::Or) => a | b,
                            Some(AtomOp::Xor) => a ^ b,
                            Some(AtomOp::Min) if signed => (a as i32).min(b as i32) as u32 as u64,
                            Some(AtomOp::Max) if signed => (a as i32).max(b as i32) as u32 as u64,
                            Some(AtomOp::Min) => (a as u32).min(b as u32) as u64,
                            Some(AtomOp::Max) => (a as u32).max(b as u32) as u64,
                            _ => a,
                        })
                        .unwrap_or(0);
                    let t = &mut self.warps[w][l];
                    set(f, t, &args[0], Ty::B32, r);
                }
            }
            Op::Ldmatrix => {
                whole_warp(active, n, "ldmatrix", inst.line)?;
                // Threads 8i..8i+7 give the row addresses of matrix i (rows of 8 b16 values).
                let space = inst.mods.space.unwrap_or(Space::Generic);
                let nmat = inst.mods.xn.max(1) as usize;
                let mut rows = vec![[0u16; 8]; 8 * nmat];
                for (r, row) in rows.iter_mut().enumerate() {
                    let (sp, addr) = self.address(&self.warps[w][r], &args[1], space);
                    let mut b = [0u8; 16];
                    self.load(w, r, sp, addr, &mut b, inst.line)?;
                    for (k, e) in row.iter_mut().enumerate() {
                        *e = u16::from_le_bytes([b[2 * k], b[2 * k + 1]]);
                    }
                }
                let dsts: Vec<Operand> = match &args[0] {
                    Operand::Vec(v) => v.clone(),
                    o => vec![o.clone()],
                };
                for l in Self::lanes(active) {
                    let (g, t4) = (l / 4, l % 4);
                    for (i, d) in dsts.iter().enumerate().take(nmat) {
                        let m = &rows[8 * i..8 * i + 8];
                        let (lo, hi) = if inst.mods.trans {
                            (m[2 * t4][g], m[2 * t4 + 1][g])
                        } else {
                            (m[g][2 * t4], m[g][2 * t4 + 1])
                        };
                        let t = &mut self.warps[w][l];
                        set(f, t, d, Ty::B32, (hi as u64) << 16 | lo as u64);
                    }
                }
            }
            Op::Mma => {
                whole_warp(active, n, "mma", inst.line)?;
                self.mma(w, active, f, inst);
            }
            Op::Wmma => {
                whole_warp(active, n, "wmma", inst.line)?;
                self.wmma(w, active, f, inst)?;
            }
            _ => unreachable!("not a collective"),
        }
        for l in Self::lanes(active) {
            self.advance(w, l);
        }
        Ok(())
    }

    /// The registers of a vector operand (`{a, b, ...}`) or a single register, in order.
    fn vec_regs(o: &Operand) -> Vec<Operand> {
        match o {
            Operand::Vec(v) => v.clone(),
            other => vec![other.clone()],
        }
    }

    /// `mma.sync.aligned.mMnNkK.row.col.dtype.atype.btype.ctype d, a, b, c`: gathers the
    /// fragments of all 32 lanes (layouts of `crate::mma::sync_shape`), multiplies, and
    /// scatters D.
    fn mma(&mut self, w: usize, active: u32, f: &Function, inst: &Inst) {
        use crate::mma::{Elem, multiply, sync_shape};
        let args = &inst.args;
        let (d, a, b, c) = (
            Self::vec_regs(&args[0]),
            Self::vec_regs(&args[1]),
            Self::vec_regs(&args[2]),
            Self::vec_regs(&args[3]),
        );
        let e = |i: usize| Elem::of(inst.mods.types[i]).expect("lowering checked the types");
        let (td, ta, tb, tc) = (e(0), e(1), e(2), e(3));
        let s = sync_shape(inst.mods.shape.expect("checked"), ta).expect("checked");
        let mut am = vec![vec![0f64; s.k]; s.m];
        let mut bm = vec![vec![0f64; s.n]; s.k];
        let mut cm = vec![vec![0f64; s.n]; s.m];
        // A register of a fragment: 32 bits, 64 for f64 elements.
        let rty = |t: Elem| if t == Elem::F64 { Ty::B64 } else { Ty::B32 };
        for l in Self::lanes(active) {
            let t = &self.warps[w][l];
            let (g, t4) = (l / 4, l % 4);
            let read = |ops: &[Operand], ty: Elem| -> Vec<u64> {
                ops.iter().map(|o| self.get(f, t, o, rty(ty))).collect()
            };
            let (av, bv, cv) = (read(&a, ta), read(&b, tb), read(&c, tc));
            for i in 0..s.na {
                let (r, k) = (s.a_at)(g, t4, i);
                am[r][k] = ta.get(&av, i);
            }
            for i in 0..s.nb {
                let (k, n) = (s.b_at)(g, t4, i);
                bm[k][n] = tb.get(&bv, i);
            }
            for i in 0..s.nc {
                let (r, n) = (s.c_at)(g, t4, i);
                cm[r][n] = tc.get(&cv, i);
            }
        }
        let dm = multiply(&am, &bm, &cm, td, inst.mods.satfinite);
        for l in Self::lanes(active) {
            let (g, t4) = (l / 4, l % 4);
            let mut regs = vec![0u64; td.regs(s.nc)];
            for i in 0..s.nc {
                let (r, n) = (s.c_at)(g, t4, i);
                td.put(&mut regs, i, dm[r][n]);
            }
            let t = &mut self.warps[w][l];
            for (dst, v) in d.iter().zip(regs) {
                set(f, t, dst, rty(td), v);
            }
        }
    }

    /// `wmma.load.{a,b,c}` / `wmma.store.d` / `wmma.mma` (PTX ISA §9.7.14.4): fragments in the
    /// layout of [`crate::mma::WmmaFrag::at`]. Loads and stores address element (i, j) of the
    /// matrix at `p + (i·stride + j)·size` (`.row`) or `p + (i + j·stride)·size` (`.col`),
    /// the stride defaulting to the matrix's width (`.row`) or height (`.col`).
    fn wmma(&mut self, w: usize, active: u32, f: &Function, inst: &Inst) -> Result<(), RunError> {
        use crate::ir::WmmaOp;
        use crate::mma::{Elem, multiply};
        let (op, frags) = crate::lower::wmma_form(&inst.mods).expect("lowering checked the form");
        let args = &inst.args;
        let rty = |t: Elem| if t == Elem::F64 { Ty::B64 } else { Ty::B32 };
        let space = inst.mods.space.unwrap_or(Space::Generic);
        match op {
            WmmaOp::Load(_) | WmmaOp::Store => {
                let fr = frags[0];
                let row_major = inst.mods.layouts[0];
                let (regs_op, addr_op) = if matches!(op, WmmaOp::Store) {
                    (&args[1], &args[0])
                } else {
                    (&args[0], &args[1])
                };
                let regs = Self::vec_regs(regs_op);
                let size = (fr.elem.bits() / 8) as u64;
                for l in Self::lanes(active) {
                    let t = &self.warps[w][l];
                    let stride = match args.get(2) {
                        Some(o) => self.get(f, t, o, Ty::U32),
                        None if row_major => fr.cols as u64,
                        None => fr.rows as u64,
                    };
                    let (sp, base) = self.address(t, addr_op, space);
                    // The matrix pointer must be 256-bit aligned and the stride a multiple of
                    // 16 bytes (CUDA's `load_matrix_sync`/`store_matrix_sync`, on which ptxas's
                    // vector loads rely): otherwise the access is misaligned.
                    if !base.is_multiple_of(32) || !(stride * size).is_multiple_of(16) {
                        return Err(trap_of(
                            self,
                            inst.line,
                            t,
                            format!(
                                "misaligned wmma matrix: address {base:#x} (needs 32-byte alignment), stride {stride} elements of {size} bytes (needs a multiple of 16 bytes)"
                            ),
                        ));
                    }
                    let at = |e: usize| -> u64 {
                        let (i, j) = fr.at(l, e);
                        let (i, j) = (i as u64, j as u64);
                        let off = if row_major {
                            i * stride + j
                        } else {
                            i + j * stride
                        };
                        base.wrapping_add(off * size)
                    };
                    if matches!(op, WmmaOp::Store) {
                        let vals: Vec<u64> = regs
                            .iter()
                            .map(|o| self.get(f, t, o, rty(fr.elem)))
                            .collect();
                        for e in 0..fr.per_lane {
                            let per = fr.elem.per_reg();
                            let sh = (e % per) as u32 * fr.elem.bits();
                            let v = vals.get(e / per).copied().unwrap_or(0) >> sh;
                            let bytes = v.to_le_bytes();
                            self.store(w, l, sp, at(e), &bytes[..size as usize], inst.line)?;
                        }
                    } else {
                        let mut out = vec![0u64; fr.regs()];
                        for e in 0..fr.per_lane {
                            let mut b = vec![0u8; size as usize];
                            self.load(w, l, sp, at(e), &mut b, inst.line)?;
                            fr.elem.put(&mut out, e, fr.elem.from_memory(&b));
                        }
                        let t = &mut self.warps[w][l];
                        for (dst, v) in regs.iter().zip(out) {
                            set(f, t, dst, rty(fr.elem), v);
                        }
                    }
                }
            }
            WmmaOp::Mma => {
                let (fa, fb, fc, fd) = (frags[0], frags[1], frags[2], frags[3]);
                let (d, a, b, c) = (
                    Self::vec_regs(&args[0]),
                    Self::vec_regs(&args[1]),
                    Self::vec_regs(&args[2]),
                    Self::vec_regs(&args[3]),
                );
                let mut am = vec![vec![0f64; fa.cols]; fa.rows];
                let mut bm = vec![vec![0f64; fb.cols]; fb.rows];
                let mut cm = vec![vec![0f64; fc.cols]; fc.rows];
                // Lanes in order; an element a fragment holds twice is read from its first
                // copy (lane order, then element order).
                let mut seen = [
                    vec![false; fa.rows * fa.cols],
                    vec![false; fb.rows * fb.cols],
                    vec![false; fc.rows * fc.cols],
                ];
                for l in Self::lanes(active) {
                    let t = &self.warps[w][l];
                    for (k, (fr, ops, m)) in
                        [(fa, &a, &mut am), (fb, &b, &mut bm), (fc, &c, &mut cm)]
                            .into_iter()
                            .enumerate()
                    {
                        let vals: Vec<u64> = ops
                            .iter()
                            .map(|o| self.get(f, t, o, rty(fr.elem)))
                            .collect();
                        for e in 0..fr.per_lane {
                            let (i, j) = fr.at(l, e);
                            if !std::mem::replace(&mut seen[k][i * fr.cols + j], true) {
                                m[i][j] = fr.elem.get(&vals, e);
                            }
                        }
                    }
                }
                let dm = multiply(&am, &bm, &cm, fd.elem, inst.mods.satfinite);
                for l in Self::lanes(active) {
                    let mut out = vec![0u64; fd.regs()];
                    for e in 0..fd.per_lane {
                        let (i, j) = fd.at(l, e);
                        fd.elem.put(&mut out, e, dm[i][j]);
                    }
                    let t = &mut self.warps[w][l];
                    for (dst, v) in d.iter().zip(out) {
                        set(f, t, dst, rty(fd.elem), v);
                    }
                }
            }
        }
        Ok(())
    }

    // ---- operand access -------------------------------------------------------------------

    fn sreg(&self, t: &Thread, s: Sreg, lane: usize) -> u64 {
        let b = self.launch.block;
        let g = self.launch.grid;
        let warp = (t.tid[0] + t.tid[1] * b[0] + t.tid[2] * b[0] * b[1]) / 32;
        match s {
            Sreg::Tid(d) => t.tid[d as usize] as u64,
            Sreg::Ntid(d) => b[d as usize] as u64,
            Sreg::Ctaid(d) => self.ctaid[d as usize] as u64,
            Sreg::Nctaid(d) => g[d as usize] as u64,
            Sreg::Laneid => lane as u64,
            Sreg::Warpid => warp as u64,
            Sreg::Nwarpid => self.warps.len() as u64,
            Sreg::Smid | Sreg::Gridid | Sreg::Zero => 0,
            Sreg::CooperativeWorkspace(high) => {
                let a = self.mem.cooperative_workspace().unwrap_or(0);
                if high { a >> 32 } else { a & 0xffff_ffff }
            }
            Sreg::Nsmid => 1,
            Sreg::LanemaskEq => 1u64 << lane,
            Sreg::LanemaskLe => ((1u64 << (lane + 1)) - 1) & 0xffff_ffff,
            Sreg::LanemaskLt => (1u64 << lane) - 1,
            Sreg::LanemaskGe => (!((1u64 << lane) - 1)) & 0xffff_ffff,
            Sreg::LanemaskGt => (!((1u64 << (lane + 1)) - 1)) & 0xffff_ffff,
            Sreg::Clock => self.clock & 0xffff_ffff,
            Sreg::ClockHi => self.clock >> 32,
            Sreg::Clock64 | Sreg::Globaltimer => self.clock,
            Sreg::GlobaltimerLo => self.clock & 0xffff_ffff,
            Sreg::GlobaltimerHi => self.clock >> 32,
            Sreg::DynamicSmemSize => self.launch.dynamic_shared as u64,
            Sreg::TotalSmemSize => self.smap.total_smem_size(),
            Sreg::ReservedSmem(r) => self.smap.reserved(r),
        }
    }

    /// The address of a variable in its own space (or generic).
    fn var_addr(&self, t: &Thread, v: VarRef, generic: bool) -> u64 {
        let fr = t.frames.last().expect("frame");
        let a = match (v.space, v.loc) {
            (Space::Global, Loc::Static(o)) => self.module.global_base + o,
            (Space::Shared | Space::SharedCluster, Loc::Static(o)) => {
                self.module.shared_layout.user_base() + o
            }
            (_, Loc::Static(o)) => o,
            (_, Loc::FrameLocal(o)) => fr.local_base + o,
            (_, Loc::FrameParam(o)) => mem::FRAME_PARAM_BASE + fr.param_base + o,
        };
        if generic { to_generic(v.space, a) } else { a }
    }

    // `f` (the running function) is part of the operand-access signature shared with `set`.
    #[allow(clippy::only_used_in_recursion)]
    fn get(&self, f: &Function, t: &Thread, op: &Operand, ty: Ty) -> u64 {
        let lane = self.lane_of(t);
        match op {
            Operand::Reg(r) => t.frames.last().expect("frame").regs[*r as usize] & ty.mask(),
            Operand::RegOff(r, off) => {
                (t.frames.last().expect("frame").regs[*r as usize] as i64).wrapping_add(*off) as u64
                    & ty.mask()
            }
            Operand::NotPred(r) => (t.frames.last().expect("frame").regs[*r as usize] & 1) ^ 1,
            Operand::Imm(i) => crate::lower::imm_bits(*i, ty),
            Operand::Sreg(s) => self.sreg(t, *s, lane) & ty.mask(),
            Operand::VarAddr {
                var,
                offset,
                generic,
            } => (self.var_addr(t, *var, *generic) as i64).wrapping_add(*offset) as u64 & ty.mask(),
            Operand::Func(i) => *i as u64,
            Operand::Label(pc) => *pc as u64,
            Operand::Vec(v) => {
                // A vector source packed into a wider scalar (mov.b64 d, {a, b}).
                let n = v.len() as u32;
                let part = ty.bits() / n.max(1);
                let pty = match part {
                    8 => Ty::B8,
                    16 => Ty::B16,
                    32 => Ty::B32,
                    _ => Ty::B64,
                };
                let mut out = 0u64;
                for (k, e) in v.iter().enumerate() {
                    out |= self.get(f, t, e, pty) << (part * k as u32);
                }
                out
            }
            Operand::Addr { .. } | Operand::Texref(_) | Operand::Sink => 0,
        }
    }

    fn lane_of(&self, t: &Thread) -> usize {
        let b = self.launch.block;
        ((t.tid[0] + t.tid[1] * b[0] + t.tid[2] * b[0] * b[1]) % 32) as usize
    }

    /// Resolves an address operand: (space, address in that space).
    fn address(&self, t: &Thread, op: &Operand, space: Space) -> (Space, u64) {
        let (base, offset) = match op {
            Operand::Addr { base, offset } => (*base, *offset),
            Operand::VarAddr { var, offset, .. } => (AddrBase::Var(*var), *offset),
            Operand::Reg(r) => (AddrBase::Reg(*r), 0),
            _ => (AddrBase::None, 0),
        };
        let b = match base {
            AddrBase::None => 0,
            AddrBase::Reg(r) => t.frames.last().expect("frame").regs[r as usize],
            AddrBase::Var(v) => {
                // A variable named in a generic access means its generic address.
                self.var_addr(t, v, space == Space::Generic)
            }
        };
        let a = (b as i64).wrapping_add(offset) as u64;
        if space == Space::Generic {
            from_generic(a)
        } else {
            (space, a)
        }
    }

    /// Where an address lies, for trap messages: global addresses name their allocation.
    fn where_is(&self, space: Space, addr: u64) -> String {
        if matches!(space, Space::Global | Space::Generic) {
            self.mem.describe(addr)
        } else {
            format!("{addr:#x}")
        }
    }

    fn load(
        &mut self,
        w: usize,
        l: usize,
        space: Space,
        addr: u64,
        out: &mut [u8],
        line: u32,
    ) -> Result<(), RunError> {
        let n = out.len() as u64;
        if let Some(san) = &mut self.san {
            match space {
                Space::Shared | Space::SharedCluster => {
                    san.shared(w * 32 + l, addr, out.len(), line, false, self.in_atomic)
                }
                Space::Local if addr + n <= self.warps[w][l].local.len() as u64 => {
                    san.local(w * 32 + l, addr, out.len(), line, false)
                }
                _ => {}
            }
        }
        let t = &self.warps[w][l];
        let ok = match space {
            Space::Global | Space::Generic => self.mem.read(addr, out).is_some(),
            Space::Shared | Space::SharedCluster => copy_from(&self.shared, addr, out),
            Space::Local => copy_from(&t.local, addr, out),
            Space::Const => copy_from(&self.module.consts, addr, out),
            Space::Param => {
                if addr >= mem::FRAME_PARAM_BASE {
                    copy_from(&t.param, addr - mem::FRAME_PARAM_BASE, out)
                } else {
                    copy_from(&self.launch.params, addr, out)
                }
            }
        };
        if !ok {
            return Err(trap_of(
                self,
                line,
                t,
                format!(
                    "out-of-bounds {n}-byte load from {} memory: {}",
                    space_name(space),
                    self.where_is(space, addr)
                ),
            ));
        }
        Ok(())
    }

    fn store(
        &mut self,
        w: usize,
        l: usize,
        space: Space,
        addr: u64,
        bytes: &[u8],
        line: u32,
    ) -> Result<(), RunError> {
        let n = bytes.len();
        if let Some(san) = &mut self.san {
            match space {
                Space::Shared | Space::SharedCluster => {
                    san.shared(w * 32 + l, addr, n, line, true, self.in_atomic)
                }
                Space::Local if addr + n as u64 <= self.warps[w][l].local.len() as u64 => {
                    san.local(w * 32 + l, addr, n, line, true)
                }
                _ => {}
            }
        }
        let ok = match space {
            Space::Global | Space::Generic => self.mem.write(addr, bytes).is_some(),
            Space::Shared | Space::SharedCluster => copy_to(&mut self.shared, addr, bytes),
            Space::Local => copy_to(&mut self.warps[w][l].local, addr, bytes),
            Space::Const => false,
            Space::Param => {
                if addr >= mem::FRAME_PARAM_BASE {
                    copy_to(
                        &mut self.warps[w][l].param,
                        addr - mem::FRAME_PARAM_BASE,
                        bytes,
                    )
                } else {
                    false
                }
            }
        };
        if !ok {
            let t = &self.warps[w][l];
            return Err(trap_of(
                self,
                line,
                t,
                format!(
                    "out-of-bounds or read-only {n}-byte store to {} memory: {}",
                    space_name(space),
                    self.where_is(space, addr)
                ),
            ));
        }
        Ok(())
    }

    // ---- per-lane instruction semantics --------------------------------------------------

    fn lane(&mut self, w: usize, l: usize, f: &Function, inst: &Inst) -> Result<(), RunError> {
        let m = &inst.mods;
        let a = &inst.args;
        let ty = m.ty();
        macro_rules! t {
            () => {
                &self.warps[w][l]
            };
        }
        macro_rules! g {
            ($i:expr, $ty:expr) => {
                self.get(f, t!(), &a[$i], $ty)
            };
        }
        macro_rules! put {
            ($i:expr, $ty:expr, $v:expr) => {{
                let v = $v;
                let t = &mut self.warps[w][l];
                set(f, t, &a[$i], $ty, v);
            }};
        }
        match inst.op {
            Op::Nop => {}
            Op::Membar => {
                if let Some(san) = &mut self.san {
                    san.synchronize(w * 32 + l);
                }
            }
            Op::Mov => {
                if let Some(Operand::Sreg(Sreg::CooperativeWorkspace(_))) = a.get(1)
                    && self.mem.cooperative_workspace().is_none()
                {
                    return Err(RunError::Unsupported {
                        reason: "%envreg1/%envreg2 (the grid-synchronization workspace of a cooperative launch) read in a launch that is not cooperative".into(),
                        line: inst.line,
                    });
                }
                if let (Operand::Vec(dst), Operand::Vec(src)) = (&a[0], &a[1])
                    && dst.len() == src.len()
                {
                    let vals: Vec<u64> = src.iter().map(|o| self.get(f, t!(), o, ty)).collect();
                    for (d, v) in dst.iter().zip(vals) {
                        let t = &mut self.warps[w][l];
                        set(f, t, d, ty, v);
                    }
                    self.advance(w, l);
                    return Ok(());
                }
                if let Operand::Vec(parts) = &a[0] {
                    // Unpack: mov.b64 {lo, hi}, x.
                    let v = g!(1, ty);
                    let part = ty.bits() / parts.len() as u32;
                    let pty = bits_ty(part);
                    for (k, p) in parts.iter().enumerate() {
                        let t = &mut self.warps[w][l];
                        set(f, t, p, pty, (v >> (part * k as u32)) & pty.mask());
                    }
                } else {
                    put!(0, ty, g!(1, ty));
                }
            }
            Op::Ld => {
                let space = m.space.unwrap_or(Space::Generic);
                let (sp, addr) = self.address(t!(), &a[1], space);
                let n = m.vec as usize;
                let esz = ty.size() as usize;
                let mut buf = vec![0u8; esz * n];
                self.load(w, l, sp, addr, &mut buf, inst.line)?;
                let dsts: Vec<Operand> = match &a[0] {
                    Operand::Vec(v) => v.clone(),
                    o => vec![o.clone()],
                };
                for (k, d) in dsts.iter().enumerate().take(n) {
                    let mut b = [0u8; 8];
                    let chunk = &buf[k * esz..(k + 1) * esz];
                    b[..esz.min(8)].copy_from_slice(&chunk[..esz.min(8)]);
                    let t = &mut self.warps[w][l];
                    set(f, t, d, ty, u64::from_le_bytes(b));
                }
            }
            Op::CpAsync => {
                let (dsp, daddr) = self.address(t!(), &a[0], Space::Shared);
                let (ssp, saddr) = self.address(t!(), &a[1], Space::Global);
                let n = g!(2, Ty::U32) as usize;
                // `ignore-src` (a predicate): zeros when true; `src-size`: the bytes read,
                // the rest zero-filled.
                let keep = match a.get(3) {
                    None => n,
                    Some(p @ (Operand::Reg(_) | Operand::NotPred(_)))
                        if matches!(p, Operand::NotPred(_))
                            || matches!(p, Operand::Reg(r) if f.reg_bits[*r as usize] == 1) =>
                    {
                        if g!(3, Ty::Pred) & 1 != 0 { 0 } else { n }
                    }
                    Some(_) => (g!(3, Ty::U32) as usize).min(n),
                };
                let mut buf = vec![0u8; n];
                if keep > 0 {
                    self.load(w, l, ssp, saddr, &mut buf[..keep], inst.line)?;
                }
                self.store(w, l, dsp, daddr, &buf, inst.line)?;
            }
            Op::St => {
                let space = m.space.unwrap_or(Space::Generic);
                let (sp, addr) = self.address(t!(), &a[0], space);
                let srcs: Vec<Operand> = match &a[1] {
                    Operand::Vec(v) => v.clone(),
                    o => vec![o.clone()],
                };
                let esz = ty.size() as usize;
                let mut buf = Vec::with_capacity(esz * srcs.len());
                for s in &srcs {
                    let v = self.get(f, t!(), s, ty);
                    buf.extend_from_slice(&v.to_le_bytes()[..esz.min(8)]);
                }
                self.store(w, l, sp, addr, &buf, inst.line)?;
            }
            Op::Add | Op::Sub if ty.is_float() => {
                let x = g!(1, ty);
                let y = g!(2, ty);
                let neg = inst.op == Op::Sub;
                let r = float_bin(ty, m, x, y, &|a, b, rnd, fmt| {
                    float::add(a, if neg { -b } else { b }, rnd, fmt)
                });
                put!(0, ty, r);
            }
            Op::Mul if ty.is_float() => {
                let r = float_bin(ty, m, g!(1, ty), g!(2, ty), &float::mul);
                put!(0, ty, r);
            }
            Op::Fma | Op::Mad if ty.is_float() => {
                let (x, y, z) = (g!(1, ty), g!(2, ty), g!(3, ty));
                // A contracted `sub` (`hir::contract`): the sign bit of the product's first
                // factor or of the addend flipped, as FFMA's operand negation does.
                let sign = 1u64 << (ty.bits() - 1);
                let x = if m.fma_negate.0 { x ^ sign } else { x };
                let z = if m.fma_negate.1 { z ^ sign } else { z };
                let r = float_tern(ty, m, x, y, z);
                put!(0, ty, r);
            }
            Op::Div if ty.is_float() => {
                let (x, y) = (g!(1, ty), g!(2, ty));
                let mut r = float_bin(ty, m, x, y, &float::div);
                if ty == Ty::F64 {
                    r = f64_div_nan(x, y, r);
                }
                put!(0, ty, r);
            }
            Op::Add | Op::Sub | Op::Addc | Op::Subc => {
                let bits = ty.bits();
                let x = g!(1, ty) as u128;
                let y = g!(2, ty) as u128;
                let cin = matches!(inst.op, Op::Addc | Op::Subc) && t!().carry;
                let _ = bits;
                let sub = matches!(inst.op, Op::Sub | Op::Subc);
                let r = if m.sat && ty == Ty::S32 {
                    let (x, y) = (x as u32 as i32 as i64, y as u32 as i32 as i64);
                    let v = if sub { x - y } else { x + y };
                    v.clamp(i32::MIN as i64, i32::MAX as i64) as u64 & ty.mask()
                } else if matches!(ty, Ty::U16x2 | Ty::S16x2)
                    || m.types.iter().any(|t| matches!(t, Ty::U16x2 | Ty::S16x2))
                {
                    let mut out = 0u64;
                    for k in 0..2 {
                        let (p, q) = ((x >> (16 * k)) as u16, (y >> (16 * k)) as u16);
                        let v = if sub {
                            p.wrapping_sub(q)
                        } else {
                            p.wrapping_add(q)
                        };
                        out |= (v as u64) << (16 * k);
                    }
                    out
                } else {
                    // Subtraction is a + !b + 1 (sub.cc) or a + !b + CF (subc): the carry flag
                    // after a subtraction is the inverted borrow, as the hardware computes it
                    // (checked against ZLUDA's hardware-recorded results).
                    let (yy, c) = if sub {
                        (
                            (!y as u64 & ty.mask()) as u128,
                            if inst.op == Op::Subc { cin as u128 } else { 1 },
                        )
                    } else {
                        (y, cin as u128)
                    };
                    let full = x + yy + c;
                    if m.cc {
                        self.warps[w][l].carry = full >> bits != 0;
                    }
                    (full as u64) & ty.mask()
                };
                put!(0, ty, r);
            }
            Op::Mul | Op::Mad | Op::Madc => {
                let bits = ty.bits();
                let x = ext(g!(1, ty), ty);
                let y = ext(g!(2, ty), ty);
                let p = x.wrapping_mul(y);
                let (val, out_ty) = if m.wide {
                    (p as u64 & wide_ty(ty).mask(), wide_ty(ty))
                } else if m.hi {
                    ((p >> bits) as u64 & ty.mask(), ty)
                } else {
                    (p as u64 & ty.mask(), ty)
                };
                if matches!(inst.op, Op::Mad | Op::Madc) {
                    let c = g!(3, out_ty);
                    let cin = inst.op == Op::Madc && t!().carry;
                    let r = if m.sat && ty == Ty::S32 && m.hi {
                        let v = (val as u32 as i32 as i64) + (c as u32 as i32 as i64);
                        v.clamp(i32::MIN as i64, i32::MAX as i64) as u64 & 0xffff_ffff
                    } else {
                        let full = val as u128 + c as u128 + cin as u128;
                        if m.cc {
                            self.warps[w][l].carry = full >> out_ty.bits() != 0;
                        }
                        full as u64 & out_ty.mask()
                    };
                    put!(0, out_ty, r);
                } else {
                    put!(0, out_ty, val);
                }
            }
            Op::Mul24 | Op::Mad24 => {
                let s = ty.is_signed();
                let x = g!(1, ty);
                let y = g!(2, ty);
                let (x, y) = if s {
                    (
                        ((x << 40) as i64 >> 40) as i128,
                        ((y << 40) as i64 >> 40) as i128,
                    )
                } else {
                    ((x & 0xff_ffff) as i128, (y & 0xff_ffff) as i128)
                };
                let p = x * y;
                let v = if m.hi { (p >> 16) as u64 } else { p as u64 } & 0xffff_ffff;
                let v = if inst.op == Op::Mad24 {
                    (v + g!(3, ty)) & 0xffff_ffff
                } else {
                    v
                };
                put!(0, ty, v);
            }
            Op::Sad => {
                let (x, y, z) = (ext(g!(1, ty), ty), ext(g!(2, ty), ty), g!(3, ty));
                let d = (x - y).unsigned_abs() as u64;
                put!(0, ty, d.wrapping_add(z) & ty.mask());
            }
            Op::Div | Op::Rem => {
                let x = ext(g!(1, ty), ty);
                let y = ext(g!(2, ty), ty);
                let v = if y == 0 {
                    // Division by zero gives an unspecified value in PTX; hardware gives all
                    // ones for the quotient and the dividend for the remainder.
                    if inst.op == Op::Div {
                        ty.mask()
                    } else {
                        x as u64
                    }
                } else if inst.op == Op::Div {
                    (x.wrapping_div(y)) as u64
                } else {
                    (x.wrapping_rem(y)) as u64
                };
                put!(0, ty, v & ty.mask());
            }
            Op::Abs | Op::Neg if ty.is_float() => {
                let x = g!(1, ty);
                let r = float_unary_sign(ty, m, x, inst.op == Op::Neg);
                put!(0, ty, r);
            }
            Op::Abs => {
                let x = ext(g!(1, ty), ty);
                put!(0, ty, x.unsigned_abs() as u64 & ty.mask());
            }
            Op::Neg => {
                let x = ext(g!(1, ty), ty);
                put!(0, ty, (x.wrapping_neg()) as u64 & ty.mask());
            }
            Op::Min | Op::Max if ty.is_float() => {
                let r = float_minmax(ty, m, g!(1, ty), g!(2, ty), inst.op == Op::Max);
                put!(0, ty, r);
            }
            Op::Min | Op::Max => {
                let is_max = inst.op == Op::Max;
                if matches!(ty, Ty::U16x2 | Ty::S16x2) {
                    let (x, y) = (g!(1, ty), g!(2, ty));
                    let mut out = 0;
                    for k in 0..2 {
                        let (p, q) = ((x >> (16 * k)) & 0xffff, (y >> (16 * k)) & 0xffff);
                        let (p, q) = if ty == Ty::S16x2 {
                            (p as u16 as i16 as i64, q as u16 as i16 as i64)
                        } else {
                            (p as i64, q as i64)
                        };
                        let mut v = if is_max { p.max(q) } else { p.min(q) };
                        if m.relu {
                            v = v.max(0);
                        }
                        out |= ((v as u64) & 0xffff) << (16 * k);
                    }
                    put!(0, ty, out);
                } else {
                    let x = ext(g!(1, ty), ty);
                    let y = ext(g!(2, ty), ty);
                    let mut v = if is_max { x.max(y) } else { x.min(y) };
                    if m.relu {
                        v = v.max(0);
                    }
                    put!(0, ty, v as u64 & ty.mask());
                }
            }
            Op::Fma => {
                return Err(RunError::Unsupported {
                    reason: format!("fma on type {ty:?}"),
                    line: inst.line,
                });
            }
            Op::Popc => put!(0, Ty::U32, g!(1, ty).count_ones() as u64),
            Op::Clz => {
                let x = g!(1, ty);
                put!(0, Ty::U32, (x.leading_zeros() - (64 - ty.bits())) as u64);
            }
            Op::Bfind => {
                let x = g!(1, ty);
                let bits = ty.bits();
                let v = if ty.is_signed() && (x >> (bits - 1)) & 1 == 1 {
                    !x & ty.mask()
                } else {
                    x
                };
                let r = if v == 0 {
                    0xffff_ffff
                } else {
                    let pos = 63 - v.leading_zeros() as u64;
                    if m.shiftamt {
                        bits as u64 - 1 - pos
                    } else {
                        pos
                    }
                };
                put!(0, Ty::U32, r);
            }
            Op::Brev => {
                let x = g!(1, ty);
                put!(0, ty, x.reverse_bits() >> (64 - ty.bits()));
            }
            Op::Bfe => {
                let bits = ty.bits() as u64;
                let x = g!(1, ty);
                let pos = g!(2, Ty::U32) & 0xff;
                let len = g!(3, Ty::U32) & 0xff;
                let sbit = if ty.is_signed() {
                    if len == 0 {
                        false
                    } else {
                        (x >> (pos + len - 1).min(bits - 1)) & 1 == 1
                    }
                } else {
                    false
                };
                let mut d = 0u64;
                let folded = (ty == Ty::S32
                    && matches!(a[2], Operand::Imm(_))
                    && matches!(a[3], Operand::Imm(_)))
                .then(|| hir::fold::bfe_s32(pos as u32, len as u32))
                .flatten();
                if let Some(v) = folded {
                    // ptxas's folding of immediate fields beyond bit 31 (`hir::fold`).
                    d = u64::from(v);
                } else {
                    for i in 0..bits {
                        let bit = if i < len && pos + i < bits {
                            (x >> (pos + i)) & 1 == 1
                        } else {
                            sbit
                        };
                        d |= (bit as u64) << i;
                    }
                }
                put!(0, ty, d);
            }
            Op::Bfi => {
                let bits = ty.bits() as u64;
                let a_ = g!(1, ty);
                let b_ = g!(2, ty);
                let pos = g!(3, Ty::U32) & 0xff;
                let len = g!(4, Ty::U32) & 0xff;
                let mut d = b_;
                if bits == 32 && matches!(a[3], Operand::Imm(_)) && matches!(a[4], Operand::Imm(_))
                {
                    // Immediate position and length: ptxas 13.0.88 folds the mask itself,
                    // taking a length of 32 or more modulo 32 unless the position is 0
                    // (`bfi.b32 d, a, b, 5, 32` is `b`; PTX would insert a's 27 low bits).
                    // kiln writes the same mask (`hir::fold::bfi_mask`).
                    let m = hir::fold::bfi_mask(pos as u32, len as u32);
                    let shifted = if pos < 32 { (a_ << pos) as u32 } else { 0 };
                    d = u64::from((shifted & m) | (b_ as u32 & !m));
                } else {
                    for i in 0..len {
                        if pos + i >= bits {
                            break;
                        }
                        d = (d & !(1 << (pos + i))) | (((a_ >> i) & 1) << (pos + i));
                    }
                }
                put!(0, ty, d);
            }
            Op::Fns => {
                let mask = g!(1, Ty::B32) as u32;
                let base = g!(2, Ty::U32) as u32;
                let offset = g!(3, Ty::S32) as u32 as i32;
                let r = fns(mask, base, offset);
                put!(0, Ty::B32, r as u64);
            }
            Op::Szext => {
                let x = g!(1, Ty::B32) as u32;
                let mut n = g!(2, Ty::U32) as u32;
                n = if m.wrap { n & 31 } else { n.min(32) };
                let r = if n == 0 {
                    0
                } else if n >= 32 {
                    x
                } else if ty.is_signed() {
                    (((x << (32 - n)) as i32) >> (32 - n)) as u32
                } else {
                    x & ((1u32 << n) - 1)
                };
                put!(0, Ty::B32, r as u64);
            }
            Op::Bmsk => {
                let pos = g!(1, Ty::U32) as u32;
                let len = g!(2, Ty::U32) as u32;
                let (pos, len) = if m.wrap {
                    (pos & 31, len & 31)
                } else {
                    (pos.min(32), len.min(32))
                };
                let end = (pos as u64 + len as u64).min(32);
                let r = if pos >= 32 {
                    0
                } else {
                    (((1u64 << end) - 1) & !((1u64 << pos) - 1)) as u32
                };
                put!(0, Ty::B32, r as u64);
            }
            Op::Dp4a | Op::Dp2a => {
                let (ta, tb) = (m.ty(), m.ty2());
                let x = g!(1, Ty::B32) as u32;
                let y = g!(2, Ty::B32) as u32;
                let c = g!(3, Ty::B32) as u32;
                let byte = |v: u32, k: u32, s: bool| -> i64 {
                    let b = (v >> (8 * k)) & 0xff;
                    if s { b as u8 as i8 as i64 } else { b as i64 }
                };
                let half = |v: u32, k: u32, s: bool| -> i64 {
                    let h = (v >> (16 * k)) & 0xffff;
                    if s { h as u16 as i16 as i64 } else { h as i64 }
                };
                let mut acc = c as i64;
                if inst.op == Op::Dp4a {
                    for k in 0..4 {
                        acc += byte(x, k, ta.is_signed()) * byte(y, k, tb.is_signed());
                    }
                } else {
                    let base = if m.hi { 2 } else { 0 };
                    for k in 0..2 {
                        acc += half(x, k, ta.is_signed()) * byte(y, base + k, tb.is_signed());
                    }
                }
                put!(0, Ty::B32, acc as u64 & 0xffff_ffff);
            }
            Op::Vabsdiff4 => {
                // Types d, a, b; each byte of a and b sign-extended per its type. Without a
                // mask every byte of d is selected, so c only matters to `.add`.
                let (ta, tb) = (m.types[1], m.types[2]);
                let x = g!(1, Ty::B32) as u32;
                let y = g!(2, Ty::B32) as u32;
                let c = g!(3, Ty::B32) as u32;
                let byte = |v: u32, k: u32, t: Ty| -> i64 {
                    let b = (v >> (8 * k)) & 0xff;
                    if t.is_signed() {
                        b as u8 as i8 as i64
                    } else {
                        b as i64
                    }
                };
                let diffs: Vec<u32> = (0..4)
                    .map(|k| (byte(x, k, ta) - byte(y, k, tb)).unsigned_abs() as u32)
                    .collect();
                let d = if m.atom == Some(AtomOp::Add) {
                    diffs.iter().fold(c, |acc, d| acc.wrapping_add(*d))
                } else {
                    diffs
                        .iter()
                        .enumerate()
                        .fold(0, |r, (k, d)| r | (d & 0xff) << (8 * k))
                };
                put!(0, Ty::B32, u64::from(d));
            }
            Op::Testp => {
                let x = g!(1, ty);
                let v = to_f64(ty, x);
                let sub = if ty == Ty::F32 {
                    (x as u32) & 0x7f80_0000 == 0 && (x as u32) & 0x7f_ffff != 0
                } else {
                    v != 0.0 && v.abs() < f64::MIN_POSITIVE
                };
                let r = match m.testp {
                    0 => v.is_finite(),
                    1 => v.is_infinite(),
                    2 => !v.is_nan(),
                    3 => v.is_nan(),
                    // PTX: "positive and negative zero are considered normal numbers".
                    4 => v.is_finite() && !sub,
                    _ => sub,
                };
                put!(0, Ty::Pred, r as u64);
            }
            Op::Copysign => {
                let x = g!(1, ty);
                let y = g!(2, ty);
                let sb = 1u64 << (ty.bits() - 1);
                put!(0, ty, (y & !sb) | (x & sb));
            }
            Op::Rcp | Op::Sqrt | Op::Rsqrt | Op::Sin | Op::Cos | Op::Lg2 | Op::Ex2 | Op::Tanh => {
                let x = g!(1, ty);
                let r = float_fn(inst.op, ty, m, x);
                put!(0, ty, r);
            }
            Op::Setp | Op::Set => {
                let src_ty = if inst.op == Op::Set { m.ty2() } else { ty };
                let x = g!(1, src_ty);
                let y = g!(2, src_ty);
                let cmp = m.cmp.unwrap_or(Cmp::Eq);
                let combine = |r: bool, me: &Self| -> bool {
                    match (m.boolop, a.get(3)) {
                        (Some(op), Some(c)) => {
                            let c = me.get(f, &me.warps[w][l], c, Ty::Pred) & 1 != 0;
                            match op {
                                BoolOp::And => r && c,
                                BoolOp::Or => r || c,
                                BoolOp::Xor => r ^ c,
                            }
                        }
                        _ => r,
                    }
                };
                if matches!(src_ty, Ty::F16x2 | Ty::Bf16x2) {
                    let hty = if src_ty == Ty::F16x2 {
                        Ty::F16
                    } else {
                        Ty::Bf16
                    };
                    let lo = compare(cmp, hty, x & 0xffff, y & 0xffff, m.ftz);
                    let hi = compare(cmp, hty, x >> 16, y >> 16, m.ftz);
                    let (lo, hi) = (combine(lo, self), combine(hi, self));
                    if inst.op == Op::Setp {
                        // PTX ISA §9.7.7.2: p = BoolOp(t[0], c) for the low halves (a[0:15]),
                        // q = BoolOp(t[1], c) for the high halves.
                        if let Operand::Vec(parts) = &a[0] {
                            let t = &mut self.warps[w][l];
                            set(f, t, &parts[0], Ty::Pred, lo as u64);
                            if let Some(q) = parts.get(1) {
                                set(f, t, q, Ty::Pred, hi as u64);
                            }
                        } else {
                            put!(0, Ty::Pred, lo as u64);
                        }
                    } else {
                        let dty = m.ty();
                        let one = set_true(dty) & 0xffff;
                        let r = ((if hi { one } else { 0 }) << 16) | if lo { one } else { 0 };
                        put!(0, dty, r);
                    }
                } else {
                    let r = combine(compare(cmp, src_ty, x, y, m.ftz), self);
                    if inst.op == Op::Setp {
                        match &a[0] {
                            Operand::Vec(parts) => {
                                // p|q: q is the complement.
                                let t = &mut self.warps[w][l];
                                set(f, t, &parts[0], Ty::Pred, r as u64);
                                if let Some(q) = parts.get(1) {
                                    let nr = combine(!compare(cmp, src_ty, x, y, m.ftz), self);
                                    let t = &mut self.warps[w][l];
                                    set(f, t, q, Ty::Pred, nr as u64);
                                }
                            }
                            _ => put!(0, Ty::Pred, r as u64),
                        }
                    } else {
                        let dty = m.ty();
                        put!(0, dty, if r { set_true(dty) } else { 0 });
                    }
                }
            }
            Op::Selp => {
                let c = g!(3, Ty::Pred) & 1 != 0;
                let v = if c { g!(1, ty) } else { g!(2, ty) };
                put!(0, ty, v);
            }
            Op::Slct => {
                let cty = m.ty2();
                let c = g!(3, cty);
                let neg = if cty == Ty::F32 {
                    let cf = f32::from_bits(c as u32);
                    let cf = if m.ftz && (c as u32) & 0x7f80_0000 == 0 {
                        0.0
                    } else {
                        cf
                    };
                    cf < 0.0
                } else {
                    (c as u32 as i32) < 0
                };
                let v = if neg { g!(2, ty) } else { g!(1, ty) };
                put!(0, ty, v);
            }
            Op::And | Op::Or | Op::Xor => {
                let (x, y) = (g!(1, ty), g!(2, ty));
                let v = match inst.op {
                    Op::And => x & y,
                    Op::Or => x | y,
                    _ => x ^ y,
                };
                put!(0, ty, v);
            }
            Op::Not => {
                let x = g!(1, ty);
                let v = if ty == Ty::Pred {
                    (x & 1) ^ 1
                } else {
                    !x & ty.mask()
                };
                put!(0, ty, v);
            }
            Op::Cnot => {
                let x = g!(1, ty);
                put!(0, ty, (x == 0) as u64);
            }
            Op::Lop3 => {
                let (x, y, z) = (g!(1, Ty::B32), g!(2, Ty::B32), g!(3, Ty::B32));
                let lut = g!(4, Ty::B32) as u8;
                let mut r = 0u64;
                for i in 0..32 {
                    let idx = (((x >> i) & 1) << 2) | (((y >> i) & 1) << 1) | ((z >> i) & 1);
                    r |= (((lut >> idx) & 1) as u64) << i;
                }
                put!(0, Ty::B32, r);
            }
            Op::Shf => {
                let lo = g!(1, Ty::B32);
                let hi = g!(2, Ty::B32);
                let n = g!(3, Ty::U32);
                let n = if m.wrap { n & 31 } else { n.min(32) };
                let v = (hi << 32) | lo;
                let r = if m.left { (v << n) >> 32 } else { v >> n };
                put!(0, Ty::B32, r & 0xffff_ffff);
            }
            Op::Shl => {
                let x = g!(1, ty);
                let n = g!(2, Ty::U32);
                let r = if n >= ty.bits() as u64 {
                    0
                } else {
                    (x << n) & ty.mask()
                };
                put!(0, ty, r);
            }
            Op::Shr => {
                let x = g!(1, ty);
                let n = g!(2, Ty::U32).min(ty.bits() as u64);
                let r = if ty.is_signed() {
                    let s = ext(x, ty);
                    (s >> n) as u64 & ty.mask()
                } else if n >= ty.bits() as u64 {
                    0
                } else {
                    x >> n
                };
                put!(0, ty, r);
            }
            Op::Prmt => {
                let x = g!(1, Ty::B32);
                let y = g!(2, Ty::B32);
                let c = g!(3, Ty::B32) as u32;
                put!(0, Ty::B32, prmt(x as u32, y as u32, c, m.prmt) as u64);
            }
            Op::Cvt => {
                let (dty, sty) = (m.ty(), m.ty2());
                match (dty, sty) {
                    // Two f32 sources packed into one register (the first in the high half).
                    (Ty::F16x2 | Ty::Bf16x2 | Ty::E4m3x2 | Ty::E5m2x2, Ty::F32) => {
                        let (fmt, w) = packed_elem(dty);
                        let hi = cvt_float(g!(1, Ty::F32), Ty::F32, fmt, m);
                        let lo = cvt_float(g!(2, Ty::F32), Ty::F32, fmt, m);
                        put!(0, packed_ty(w), (hi << w) | lo);
                    }
                    (Ty::E4m3x2 | Ty::E5m2x2, Ty::F16x2) => {
                        let (fmt, _) = packed_elem(dty);
                        let x = g!(1, Ty::B32);
                        let hi = cvt_float(x >> 16, Ty::F16, fmt, m);
                        let lo = cvt_float(x & 0xffff, Ty::F16, fmt, m);
                        put!(0, Ty::B16, (hi << 8) | lo);
                    }
                    (Ty::F16x2, Ty::E4m3x2 | Ty::E5m2x2) => {
                        let (sfmt, _) = packed_elem(sty);
                        let x = g!(1, Ty::B16);
                        let conv = |b: u64| {
                            let v = sfmt.to_f64(b);
                            let v = if m.relu && (v < 0.0) { 0.0 } else { v };
                            float::round(v, Ordering::Equal, Rnd::Ne, float::F16, false)
                        };
                        put!(0, Ty::B32, (conv(x >> 8) << 16) | conv(x & 0xff));
                    }
                    _ => {
                        let x = g!(1, sty);
                        let r = cvt(dty, sty, x, m);
                        put!(0, dty, r);
                    }
                }
            }
            Op::CvtPack => {
                // cvt.pack.sat.{u8,s8,u16,s16}.s32.b32 d, a, b, c: saturate a and b into the
                // destination width; d = {a, b} packed above c's low bits (for 8-bit) or alone.
                let (dty, sty) = (m.ty(), m.ty2());
                let x = ext(g!(1, sty), sty);
                let y = ext(g!(2, sty), sty);
                let satc = |v: i128| -> u64 {
                    let (lo, hi) = int_range(dty);
                    (v.clamp(lo, hi) as u64) & dty.mask()
                };
                let r = if dty.bits() == 16 {
                    (satc(x) << 16) | satc(y)
                } else {
                    let c = g!(3, Ty::B32);
                    (c << 16 | satc(x) << 8 | satc(y)) & 0xffff_ffff
                };
                put!(0, Ty::B32, r);
            }
            Op::Cvta => {
                let space = m.space.unwrap_or(Space::Global);
                let x = match &a[1] {
                    Operand::VarAddr { var, offset, .. } => {
                        (self.var_addr(t!(), *var, false) as i64 + offset) as u64
                    }
                    o => self.get(f, t!(), o, Ty::U64),
                };
                let r = if m.to {
                    let (sp, addr) = from_generic(x);
                    if sp == space || (space == Space::SharedCluster && sp == Space::Shared) {
                        addr
                    } else {
                        x
                    }
                } else {
                    to_generic(space, x)
                };
                put!(0, ty, r);
            }
            Op::Isspacep => {
                let x = g!(1, Ty::U64);
                let (sp, _) = from_generic(x);
                let want = m.space.unwrap_or(Space::Global);
                let r = sp == want || (want == Space::SharedCluster && sp == Space::Shared);
                put!(0, Ty::Pred, r as u64);
            }
            Op::Bra => {
                let Operand::Label(target) = a[0] else {
                    return Err(RunError::Unsupported {
                        reason: "branch to a non-label".into(),
                        line: inst.line,
                    });
                };
                let t = &mut self.warps[w][l];
                t.frames.last_mut().expect("frame").pc = target;
                return Ok(());
            }
            Op::Ret => {
                self.do_ret(w, l);
                return Ok(());
            }
            Op::Exit => {
                let t = &mut self.warps[w][l];
                t.st = St::Exited;
                return Ok(());
            }
            Op::Trap => {
                return Err(trap_of(self, inst.line, t!(), "`trap` executed".into()));
            }
            Op::Call => return self.call(w, l, f, inst),
            Op::Tex => {
                let texel = self.tex(f, t!(), inst)?;
                let dty = m.ty();
                if let Operand::Vec(dsts) = &a[0] {
                    for (d, v) in dsts.iter().zip(texel) {
                        let t = &mut self.warps[w][l];
                        set(f, t, d, dty, u64::from(v));
                    }
                }
            }
            Op::Suld | Op::Sust => self.surface_access(w, l, f, inst)?,
            Op::Atom | Op::Red => {
                let space = m.space.unwrap_or(Space::Generic);
                let (sp, addr) =
                    self.address(t!(), &a[if inst.op == Op::Atom { 1 } else { 0 }], space);
                let base = if inst.op == Op::Atom { 2 } else { 1 };
                let b = g!(base, ty);
                let c = if m.atom == Some(AtomOp::Cas) {
                    g!(base + 1, ty)
                } else {
                    0
                };
                let n = ty.size() as usize;
                let mut buf = vec![0u8; n];
                self.in_atomic = true;
                let loaded = self.load(w, l, sp, addr, &mut buf, inst.line);
                self.in_atomic = false;
                loaded?;
                let mut ob = [0u8; 8];
                ob[..n.min(8)].copy_from_slice(&buf[..n.min(8)]);
                let old = u64::from_le_bytes(ob);
                let new = atom_op(m.atom.unwrap_or(AtomOp::Add), ty, old, b, c);
                self.in_atomic = true;
                let stored = self.store(w, l, sp, addr, &new.to_le_bytes()[..n], inst.line);
                self.in_atomic = false;
                stored?;
                if let Some(san) = &mut self.san {
                    san.synchronize(w * 32 + l);
                }
                if inst.op == Op::Atom {
                    put!(0, ty, old);
                }
            }
            Op::Shfl
            | Op::Vote
            | Op::Match
            | Op::Redux
            | Op::BarWarp
            | Op::Activemask
            | Op::Bar
            | Op::Ldmatrix
            | Op::Mma
            | Op::Wmma
            | Op::Unsupported => {
                unreachable!("handled per warp")
            }
        }
        self.advance(w, l);
        Ok(())
    }

    /// One lane's `tex` fetch: the four result words (raw bits), through the memory's
    /// textures ([`crate::texture`]). The texture's own geometry decides which coordinates
    /// count (the instruction's geometry only says how many the kernel passes); an unbound
    /// texture reference or a handle naming no texture traps.
    /// `suld.b` / `sust.b` on the memory's surfaces (`crate::surface`): x in bytes, then the
    /// row and the slice or layer (PTX writes a layered shape's layer first).
    fn surface_access(
        &mut self,
        w: usize,
        l: usize,
        f: &Function,
        inst: &Inst,
    ) -> Result<(), RunError> {
        use crate::surface::{Place, SurfShape};
        let a = &inst.args;
        let (data_at, handle_at, coords_at) = if inst.op == Op::Suld {
            (0, 1, 2)
        } else {
            (2, 0, 1)
        };
        let (shape, mode) = inst.mods.surf.expect("lowering checked the geometry");
        let ty = inst.mods.ty();
        let esize = (ty.bits() / 8) as usize;
        let t = &self.warps[w][l];
        let handle = self.get(f, t, &a[handle_at], Ty::U64);
        let Operand::Vec(cs) = &a[coords_at] else {
            unreachable!("lowering makes surface coordinates a vector")
        };
        let c: Vec<i32> = cs
            .iter()
            .map(|o| self.get(f, t, o, Ty::S32) as u32 as i32)
            .collect();
        // PTX: {layer, x[, y]} for layered shapes; the model takes (x, y, z/layer).
        let (x, y, z) = match shape {
            SurfShape::D1 => (c[0], 0, 0),
            SurfShape::D2 => (c[0], c[1], 0),
            SurfShape::D3 => (c[0], c[1], c[2]),
            SurfShape::Array1D => (c[1], c[0], 0),
            SurfShape::Array2D => (c[1], c[2], c[0]),
        };
        let Operand::Vec(data) = &a[data_at] else {
            unreachable!("lowering makes surface data a vector")
        };
        let n = esize * data.len();
        let Some(surf) = self.mem.surfaces().get(handle) else {
            return Err(trap_of(
                self,
                inst.line,
                t,
                format!(
                    "{}: surface handle {handle:#x} names no surface",
                    if inst.op == Op::Suld { "suld" } else { "sust" }
                ),
            ));
        };
        let place = surf.place(x, y, z, n, mode);
        if place == Place::OutOfBounds {
            return Err(trap_of(
                self,
                inst.line,
                t,
                format!(
                    "surface access out of bounds: {n} bytes at x = {x} bytes, y = {y}, z = {z} of a {}x{}x{} surface",
                    surf.width, surf.height, surf.depth
                ),
            ));
        }
        if inst.op == Op::Sust {
            let mut bytes = Vec::with_capacity(n);
            for o in data {
                let v = self.get(f, t, o, ty);
                bytes.extend_from_slice(&v.to_le_bytes()[..esize]);
            }
            if let Place::At(at) = place {
                let s = self
                    .mem
                    .surfaces_mut()
                    .get_mut(handle)
                    .expect("checked above");
                s.data[at..at + n].copy_from_slice(&bytes);
            }
        } else {
            let bytes = match place {
                Place::At(at) => surf.data[at..at + n].to_vec(),
                _ => vec![0; n],
            };
            for (k, d) in data.iter().enumerate() {
                let mut b = [0u8; 8];
                b[..esize].copy_from_slice(&bytes[k * esize..(k + 1) * esize]);
                let t = &mut self.warps[w][l];
                set(f, t, d, ty, u64::from_le_bytes(b));
            }
        }
        Ok(())
    }

    fn tex(&self, f: &Function, t: &Thread, inst: &Inst) -> Result<[u32; 4], RunError> {
        use crate::texture::{Coords, TexShape};
        let a = &inst.args;
        let textures = self.mem.textures();
        let texture = match &a[1] {
            Operand::Texref(name) => {
                let Some(h) = textures.bound(name) else {
                    return Err(trap_of(
                        self,
                        inst.line,
                        t,
                        format!("tex: texture reference `{name}` is not bound to a texture"),
                    ));
                };
                textures.get(u64::from(h)).ok_or_else(|| {
                    trap_of(
                        self,
                        inst.line,
                        t,
                        format!(
                            "tex: texture reference `{name}` is bound to handle {h}, which names no texture"
                        ),
                    )
                })?
            }
            op => {
                let h = self.get(f, t, op, Ty::U64);
                textures.get(h).ok_or_else(|| {
                    trap_of(
                        self,
                        inst.line,
                        t,
                        format!("tex: texture handle {h:#x} names no texture"),
                    )
                })?
            }
        };
        let Operand::Vec(cs) = &a[2] else {
            unreachable!("lowering makes tex coordinates a vector")
        };
        let (layer, cs) = match inst.mods.tex {
            Some(TexShape::Array2D) => (self.get(f, t, &cs[0], Ty::U32) as u32, &cs[1..]),
            _ => (0, &cs[..]),
        };
        let coords = if inst.mods.ty2() == Ty::S32 {
            let mut c = [0i32; 3];
            for (k, o) in cs.iter().take(3).enumerate() {
                c[k] = self.get(f, t, o, Ty::S32) as u32 as i32;
            }
            Coords::Int(c)
        } else {
            let mut c = [0f32; 3];
            for (k, o) in cs.iter().take(3).enumerate() {
                c[k] = f32::from_bits(self.get(f, t, o, Ty::F32) as u32);
            }
            Coords::Float(c)
        };
        if let Some(lod) = a.get(3) {
            // Every modelled texture has one level: any level of detail selects it.
            let _ = self.get(f, t, lod, Ty::F32);
        }
        Ok(texture.fetch(layer, coords))
    }

    fn call(&mut self, w: usize, l: usize, f: &Function, inst: &Inst) -> Result<(), RunError> {
        let module = self.module;
        let info = inst.call.as_ref().expect("call info");
        let callee_id = info.func.expect("direct call");
        let callee = &module.functions[callee_id as usize];
        if !callee.defined {
            if let Some(sc) = SysCall::from_name(&callee.name) {
                return self.system_call(w, l, f, inst, callee, sc);
            }
            return Err(RunError::Unsupported {
                reason: format!(
                    "call to `{}`, which has no body in this module (external function)",
                    callee.name
                ),
                line: inst.line,
            });
        }
        let (arg_bytes, arg_regs) = self.call_args(w, l, f, inst, callee)?;
        let t = &mut self.warps[w][l];
        t.frames.last_mut().expect("frame").pc += 1;
        let local_base = t.local.len().div_ceil(16) as u64 * 16;
        let param_base = t.param.len().div_ceil(16) as u64 * 16;
        t.local.resize((local_base + callee.local_size) as usize, 0);
        t.param.resize((param_base + callee.param_size) as usize, 0);
        let mut regs = vec![0u64; callee.reg_bits.len()];
        for ((slot, bytes), vals) in callee.params.iter().zip(&arg_bytes).zip(&arg_regs) {
            match slot.reg {
                Some(r) => {
                    for (k, v) in vals.iter().enumerate().take(slot.vec.max(1) as usize) {
                        let width = callee.reg_bits[r as usize + k];
                        let m = if width >= 64 {
                            u64::MAX
                        } else {
                            (1u64 << width) - 1
                        };
                        regs[r as usize + k] = v & m;
                    }
                }
                None => {
                    let at = (param_base + slot.offset) as usize;
                    t.param[at..at + bytes.len()].copy_from_slice(bytes);
                }
            }
        }
        t.frames.push(Frame {
            func: callee_id,
            pc: 0,
            regs,
            local_base,
            param_base,
            rets: info.rets.clone(),
        });
        Ok(())
    }

    /// A call of the device runtime's `vprintf` or `__assertfail` (declared without a body):
    /// the call is decoded and recorded in the memory's [`crate::DeviceLog`]
    /// ([`crate::devrt`]); `vprintf` writes its result and returns, `__assertfail` ends the
    /// run with a trap naming the assertion, as `trap` does. A byte the call cannot read is
    /// a trap too.
    fn system_call(
        &mut self,
        w: usize,
        l: usize,
        f: &Function,
        inst: &Inst,
        callee: &Function,
        sc: SysCall,
    ) -> Result<(), RunError> {
        let info = inst.call.as_ref().expect("call info");
        let sizes: Vec<u64> = callee.params.iter().map(|p| p.size).collect();
        if sizes != sc.param_sizes() || info.args.len() != sizes.len() {
            return Err(RunError::Unsupported {
                reason: format!(
                    "call to `{}` with parameters of {sizes:?} bytes ({} arguments); the device runtime's takes {:?}",
                    callee.name,
                    info.args.len(),
                    sc.param_sizes()
                ),
                line: inst.line,
            });
        }
        let (bytes, regs) = self.call_args(w, l, f, inst, callee)?;
        let arg = |i: usize| -> u64 {
            match regs[i].first() {
                Some(v) => *v,
                None => {
                    let mut b = [0u8; 8];
                    let n = bytes[i].len().min(8);
                    b[..n].copy_from_slice(&bytes[i][..n]);
                    u64::from_le_bytes(b)
                }
            }
        };
        let (ctaid, tid, line) = (self.ctaid, self.warps[w][l].tid, inst.line);
        let mut read = |a: u64, out: &mut [u8]| {
            let (sp, a) = from_generic(a);
            self.load(w, l, sp, a, out, line).is_ok()
        };
        match sc {
            SysCall::Vprintf => {
                let call = devrt::decode_vprintf(arg(0), arg(1), &mut read)
                    .map_err(|e| trap_of(self, line, &self.warps[w][l], e))?;
                let r = self.mem.device_log_mut().record_printf(ctaid, tid, call);
                if let (Some(slot), Some(dst)) = (callee.rets.first(), info.rets.first()) {
                    let v = u64::from(r as u32);
                    match dst {
                        Operand::VarAddr { .. } => {
                            let (sp, a) = self.address(&self.warps[w][l], dst, Space::Param);
                            let n = slot.size.min(8) as usize;
                            self.store(w, l, sp, a, &v.to_le_bytes()[..n], line)?;
                        }
                        _ => set(f, &mut self.warps[w][l], dst, Ty::S32, v),
                    }
                }
                self.advance(w, l);
                Ok(())
            }
            SysCall::GraphSetConditional => {
                self.mem
                    .device_log_mut()
                    .record_conditional(ctaid, tid, arg(0), arg(1) as u32);
                self.advance(w, l);
                Ok(())
            }
            SysCall::Assertfail => {
                let call =
                    devrt::decode_assertfail(arg(0), arg(1), arg(2) as u32, arg(3), &mut read)
                        .map_err(|e| trap_of(self, line, &self.warps[w][l], e))?;
                let message = self.mem.device_log_mut().record_assert(ctaid, tid, call);
                Err(trap_of(self, line, &self.warps[w][l], message))
            }
        }
    }

    /// The argument values of a call, gathered in the caller's frame: bytes for `.param`
    /// parameters, element values for `.reg` ones (one list each, by parameter).
    fn call_args(
        &mut self,
        w: usize,
        l: usize,
        f: &Function,
        inst: &Inst,
        callee: &Function,
    ) -> Result<CallArgs, RunError> {
        let info = inst.call.as_ref().expect("call info");
        let mut arg_bytes: Vec<Vec<u8>> = Vec::new();
        let mut arg_regs: Vec<Vec<u64>> = Vec::new();
        for (slot, arg) in callee.params.iter().zip(&info.args) {
            let t = &self.warps[w][l];
            if slot.reg.is_some() {
                let vals = match arg {
                    Operand::Vec(parts) => {
                        parts.iter().map(|p| self.get(f, t, p, slot.ty)).collect()
                    }
                    Operand::VarAddr {
                        var:
                            VarRef {
                                space: Space::Param,
                                ..
                            },
                        ..
                    } => {
                        let (sp, addr) = self.address(t, arg, Space::Param);
                        let mut b = [0u8; 8];
                        let n = slot.ty.size().min(8) as usize;
                        self.load(w, l, sp, addr, &mut b[..n], inst.line)?;
                        vec![u64::from_le_bytes(b)]
                    }
                    o => vec![self.get(f, t, o, slot.ty)],
                };
                arg_regs.push(vals);
                arg_bytes.push(Vec::new());
                continue;
            }
            let bytes = match arg {
                Operand::VarAddr {
                    var:
                        VarRef {
                            space: Space::Param,
                            ..
                        },
                    ..
                } => {
                    let (sp, addr) = self.address(t, arg, Space::Param);
                    let mut b = vec![0u8; slot.size as usize];
                    self.load(w, l, sp, addr, &mut b, inst.line)?;
                    b
                }
                Operand::Vec(parts) => {
                    let mut b = Vec::new();
                    for p in parts {
                        let v = self.get(f, t, p, slot.ty);
                        b.extend_from_slice(&v.to_le_bytes()[..slot.ty.size().min(8) as usize]);
                    }
                    b.resize(slot.size as usize, 0);
                    b
                }
                o => {
                    let v = self.get(f, t, o, slot.ty);
                    let mut b = v.to_le_bytes()[..slot.size.min(8) as usize].to_vec();
                    b.resize(slot.size as usize, 0);
                    b
                }
            };
            arg_bytes.push(bytes);
            arg_regs.push(Vec::new());
        }
        Ok((arg_bytes, arg_regs))
    }
}

fn copy_from(src: &[u8], addr: u64, out: &mut [u8]) -> bool {
    let Some(end) = addr.checked_add(out.len() as u64) else {
        return false;
    };
    if end > src.len() as u64 {
        return false;
    }
    out.copy_from_slice(&src[addr as usize..end as usize]);
    true
}

fn copy_to(dst: &mut [u8], addr: u64, bytes: &[u8]) -> bool {
    let Some(end) = addr.checked_add(bytes.len() as u64) else {
        return false;
    };
    if end > dst.len() as u64 {
        return false;
    }
    dst[addr as usize..end as usize].copy_from_slice(bytes);
    true
}

fn space_name(s: Space) -> &'static str {
    match s {
        Space::Generic | Space::Global => "global",
        Space::Shared | Space::SharedCluster => "shared",
        Space::Local => "local",
        Space::Const => "constant",
        Space::Param => "parameter",
    }
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

/// Writes `v` (a value of type `ty`) to a destination operand, extending or truncating to the
/// register's declared width (sign-extending for signed types, as PTX's relaxed `ld`/`cvt`
/// rules say).
fn set(f: &Function, t: &mut Thread, op: &Operand, ty: Ty, v: u64) {
    match op {
        Operand::Reg(r) => {
            let width = f.reg_bits[*r as usize];
            let v = v & ty.mask();
            let v = if width == 1 {
                (v != 0) as u64
            } else if width > ty.bits() && ty.is_signed() {
                let s = 64 - ty.bits();
                (((v << s) as i64) >> s) as u64
            } else {
                v
            };
            let m = if width >= 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            t.frames.last_mut().expect("frame").regs[*r as usize] = v & m;
        }
        Operand::Vec(parts) if parts.len() == 1 => set(f, t, &parts[0], ty, v),
        _ => {}
    }
}

fn bits_ty(bits: u32) -> Ty {
    match bits {
        8 => Ty::B8,
        16 => Ty::B16,
        32 => Ty::B32,
        _ => Ty::B64,
    }
}

/// Sign- or zero-extends a value of type `ty` to i128.
fn ext(v: u64, ty: Ty) -> i128 {
    if ty.is_signed() {
        let s = 64 - ty.bits();
        (((v << s) as i64) >> s) as i128
    } else {
        (v & ty.mask()) as i128
    }
}

fn wide_ty(ty: Ty) -> Ty {
    match ty {
        Ty::U16 => Ty::U32,
        Ty::S16 => Ty::S32,
        Ty::U32 => Ty::U64,
        Ty::S32 => Ty::S64,
        Ty::B16 => Ty::B32,
        Ty::B32 => Ty::B64,
        other => other,
    }
}

fn int_range(ty: Ty) -> (i128, i128) {
    let bits = ty.bits();
    if ty.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// The element format and width in bits of a packed pair type (`.f16x2`, `.bf16x2`,
/// `.e4m3x2`, `.e5m2x2`).
fn packed_elem(ty: Ty) -> (Fmt, u32) {
    match ty {
        Ty::F16x2 => (float::F16, 16),
        Ty::Bf16x2 => (float::BF16, 16),
        Ty::E4m3x2 => (float::E4M3, 8),
        _ => (float::E5M2, 8),
    }
}

/// The bit type holding a packed pair of `w`-bit elements.
fn packed_ty(w: u32) -> Ty {
    if w == 16 { Ty::B32 } else { Ty::B16 }
}

fn fmt_of(ty: Ty) -> Fmt {
    match ty {
        Ty::F16 | Ty::F16x2 => float::F16,
        Ty::Bf16 | Ty::Bf16x2 => float::BF16,
        Ty::F64 => float::F64,
        _ => float::F32,
    }
}

/// Bits of a float type -> f64 (exact).
fn to_f64(ty: Ty, bits: u64) -> f64 {
    match ty {
        Ty::F64 => f64::from_bits(bits),
        Ty::F32 => f32::from_bits(bits as u32) as f64,
        _ => fmt_of(ty).to_f64(bits & 0xffff),
    }
}

fn flush_in(ty: Ty, bits: u64, ftz: bool) -> u64 {
    if !ftz {
        return bits;
    }
    match ty {
        Ty::F32 => float::ftz32(bits as u32) as u64,
        Ty::F16 => float::ftz16(bits as u16) as u64,
        _ => bits,
    }
}

/// Post-processing of a float result: `.sat`, `.relu`, `.ftz` on the output.
fn finish(ty: Ty, m: &Mods, bits: u64) -> u64 {
    let fmt = fmt_of(ty);
    let mut bits = bits;
    if m.sat {
        let v = fmt.to_f64(bits);
        bits = float::round(float::sat(v), Ordering::Equal, Rnd::Ne, fmt, false);
    }
    if m.relu {
        let v = fmt.to_f64(bits);
        if v.is_nan() {
            bits = fmt.canonical_nan();
        } else if v < 0.0 {
            bits = 0;
        }
    }
    flush_in(ty, bits, m.ftz)
}

/// Applies a scalar float operation lane-wise (packed x2 types operate on both halves).
fn packed(ty: Ty, x: u64, y: u64, z: u64, op: &dyn Fn(Ty, u64, u64, u64) -> u64) -> u64 {
    match ty {
        Ty::F16x2 | Ty::Bf16x2 => {
            let h = if ty == Ty::F16x2 { Ty::F16 } else { Ty::Bf16 };
            let lo = op(h, x & 0xffff, y & 0xffff, z & 0xffff) & 0xffff;
            let hi = op(h, x >> 16 & 0xffff, y >> 16 & 0xffff, z >> 16 & 0xffff) & 0xffff;
            (hi << 16) | lo
        }
        _ => op(ty, x, y, z),
    }
}

fn float_bin(ty: Ty, m: &Mods, x: u64, y: u64, f: &dyn Fn(f64, f64, Rnd, Fmt) -> u64) -> u64 {
    let rnd = m.rnd.unwrap_or(Rnd::Ne);
    packed(ty, x, y, 0, &|t, x, y, _| {
        let a = to_f64(t, flush_in(t, x, m.ftz));
        let b = to_f64(t, flush_in(t, y, m.ftz));
        let r = if m.approx && t == Ty::F32 {
            // div.approx/div.full: within 2 ulp per PTX; computed exactly here.
            f(a, b, Rnd::Ne, fmt_of(t))
        } else {
            f(a, b, rnd, fmt_of(t))
        };
        finish(t, m, r)
    })
}

fn float_tern(ty: Ty, m: &Mods, x: u64, y: u64, z: u64) -> u64 {
    let rnd = m.rnd.unwrap_or(Rnd::Ne);
    packed(ty, x, y, z, &|t, x, y, z| {
        let a = to_f64(t, flush_in(t, x, m.ftz));
        let b = to_f64(t, flush_in(t, y, m.ftz));
        let c = to_f64(t, flush_in(t, z, m.ftz));
        finish(t, m, float::fma(a, b, c, rnd, fmt_of(t)))
    })
}

fn float_unary_sign(ty: Ty, m: &Mods, x: u64, neg: bool) -> u64 {
    packed(ty, x, 0, 0, &|t, x, _, _| {
        let bits = t.bits().min(if matches!(t, Ty::F16 | Ty::Bf16) {
            16
        } else {
            64
        });
        let sb = 1u64 << (bits - 1);
        let x = flush_in(t, x, m.ftz);
        // ptxas computes f32 and f64 `abs`/`neg` as an addition of -0 (`FADD |a|, -RZ`,
        // `DADD -RZ, -a`): a NaN comes out canonical (PTX leaves it unspecified).
        if matches!(t, Ty::F32 | Ty::F64) && to_f64(t, x).is_nan() {
            return fmt_of(t).canonical_nan();
        }
        let r = if neg { x ^ sb } else { x & !sb };
        if t == Ty::F32 || t == Ty::F16 {
            flush_in(t, r, m.ftz)
        } else {
            r
        }
    })
}

fn float_minmax(ty: Ty, m: &Mods, x: u64, y: u64, is_max: bool) -> u64 {
    packed(ty, x, y, 0, &|t, x, y, _| {
        let fmt = fmt_of(t);
        let x = flush_in(t, x, m.ftz);
        let y = flush_in(t, y, m.ftz);
        let a = to_f64(t, x);
        let b = to_f64(t, y);
        let r = if a.is_nan() && b.is_nan() && t == Ty::F64 && !m.nan {
            // Two NaNs in f64: ptxas's `max.f64`/`min.f64` (DSETP.MAX/MIN, then selects)
            // returns the second operand quieted.
            y | F64_QUIET_BIT
        } else if (a.is_nan() && b.is_nan()) || ((a.is_nan() || b.is_nan()) && m.nan) {
            fmt.canonical_nan()
        } else if a.is_nan() {
            y
        } else if b.is_nan() {
            x
        } else {
            let pick_a = if a == b {
                // -0 < +0
                let an = a.is_sign_negative();
                if is_max { !an } else { an }
            } else if is_max {
                a > b
            } else {
                a < b
            };
            if pick_a { x } else { y }
        };
        let r = if m.xorsign_abs {
            let bits = if matches!(t, Ty::F16 | Ty::Bf16) {
                16
            } else {
                t.bits()
            };
            let sb = 1u64 << (bits - 1);
            let sign = (x ^ y) & sb;
            let ax = x & !sb;
            let ay = y & !sb;
            let r = float_minmax(
                t,
                &Mods {
                    xorsign_abs: false,
                    ..m.clone()
                },
                ax,
                ay,
                is_max,
            );
            (r & !sb) | sign
        } else {
            r
        };
        finish(
            t,
            &Mods {
                sat: false,
                ..m.clone()
            },
            r,
        )
    })
}

/// The NaN an f64 `div` gives on NVIDIA GPUs, where it is ptxas's software routine
/// (checked in the emulator on ptxas 13.0.88's code, sm_80 and sm_90): a NaN operand comes
/// back quieted (the first one), an invalid division (0/0, inf/inf) gives the negative quiet
/// NaN 0xfff8000000000000. `r` is the division's result otherwise.
fn f64_div_nan(x: u64, y: u64, r: u64) -> u64 {
    let nan = |b: u64| f64::from_bits(b).is_nan();
    if nan(x) {
        x | F64_QUIET_BIT
    } else if nan(y) {
        y | F64_QUIET_BIT
    } else if nan(r) {
        NEG_QUIET_NAN
    } else {
        r
    }
}

/// The bit that makes an f64 NaN quiet.
const F64_QUIET_BIT: u64 = 0x0008_0000_0000_0000;

/// The NaN of ptxas's f64 `div` and `sqrt` routines for an invalid operation.
const NEG_QUIET_NAN: u64 = 0xfff8_0000_0000_0000;

/// Approximate and correctly rounded transcendental/unary functions.
fn float_fn(op: Op, ty: Ty, m: &Mods, x: u64) -> u64 {
    packed(ty, x, 0, 0, &|t, x, _, _| {
        let fmt = fmt_of(t);
        let a = to_f64(t, flush_in(t, x, m.ftz));
        let rnd = m.rnd.unwrap_or(Rnd::Ne);
        let r = match op {
            Op::Rcp if !m.approx && t == Ty::F64 => {
                // A NaN comes back quieted (ptxas's routine).
                if a.is_nan() {
                    x | F64_QUIET_BIT
                } else {
                    float::div(1.0, a, rnd, fmt)
                }
            }
            Op::Sqrt if !m.approx && t == Ty::F64 && a < 0.0 => {
                // ptxas's routine: the square root of a negative number (not -0) is
                // 0xfff8000000000000; of a NaN, the canonical NaN (its `DADD a, a`).
                NEG_QUIET_NAN
            }
            Op::Rcp | Op::Rsqrt if m.approx && m.ftz && t == Ty::F64 => {
                // PTX: `rcp.approx.ftz.f64` and `rsqrt.approx.ftz.f64` use only the operand's
                // high 32 bits and give only the result's (the low word is zero); subnormal
                // inputs and results are flushed to signed zero. ptxas writes one MUFU.RCP64H
                // (RSQ64H) on the high word.
                let flush = |v: f64| {
                    if v.is_subnormal() {
                        0.0f64.copysign(v)
                    } else {
                        v
                    }
                };
                let hi = flush(f64::from_bits(x & 0xffff_ffff_0000_0000));
                let r = if op == Op::Rcp {
                    1.0 / hi
                } else {
                    1.0 / hi.sqrt()
                };
                flush(r).to_bits() & 0xffff_ffff_0000_0000
            }
            Op::Rsqrt if t == Ty::F64 && (a.is_nan() || a < 0.0) => {
                // ptxas's rsqrt.approx.f64 routine (its special-case block, also what an H100
                // wrote: h100-2026-11-27 job 2701): a NaN comes back quieted (`DADD a, a`),
                // a negative number (not -0) gives 0xfff8000000000000.
                if a.is_nan() {
                    x | F64_QUIET_BIT
                } else {
                    NEG_QUIET_NAN
                }
            }
            Op::Rcp if !m.approx => float::div(1.0, a, rnd, fmt),
            Op::Sqrt if !m.approx => float::sqrt(a, rnd, fmt),
            Op::Rcp => float::div(1.0, a, Rnd::Ne, fmt),
            Op::Sqrt => float::sqrt(a, Rnd::Ne, fmt),
            Op::Rsqrt => float::round(1.0 / a.sqrt(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Sin => float::round(a.sin(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Cos => float::round(a.cos(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Lg2 => float::round(a.log2(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Ex2 => float::round(a.exp2(), Ordering::Equal, Rnd::Ne, fmt, false),
            Op::Tanh => float::round(a.tanh(), Ordering::Equal, Rnd::Ne, fmt, false),
            _ => unreachable!("not a float function"),
        };
        finish(t, m, r)
    })
}

fn compare(cmp: Cmp, ty: Ty, x: u64, y: u64, ftz: bool) -> bool {
    if ty.is_float() {
        let a = to_f64(ty, flush_in(ty, x, ftz));
        let b = to_f64(ty, flush_in(ty, y, ftz));
        let un = a.is_nan() || b.is_nan();
        return match cmp {
            Cmp::Eq => !un && a == b,
            Cmp::Ne => !un && a != b,
            Cmp::Lt | Cmp::Lo => !un && a < b,
            Cmp::Le | Cmp::Ls => !un && a <= b,
            Cmp::Gt | Cmp::Hi => !un && a > b,
            Cmp::Ge | Cmp::Hs => !un && a >= b,
            Cmp::Equ => un || a == b,
            Cmp::Neu => un || a != b,
            Cmp::Ltu => un || a < b,
            Cmp::Leu => un || a <= b,
            Cmp::Gtu => un || a > b,
            Cmp::Geu => un || a >= b,
            Cmp::Num => !un,
            Cmp::Nan => un,
        };
    }
    let (sa, sb) = (ext(x, ty), ext(y, ty));
    let (ua, ub) = (x & ty.mask(), y & ty.mask());
    match cmp {
        Cmp::Eq | Cmp::Equ => ua == ub,
        Cmp::Ne | Cmp::Neu => ua != ub,
        Cmp::Lt | Cmp::Ltu => sa < sb,
        Cmp::Le | Cmp::Leu => sa <= sb,
        Cmp::Gt | Cmp::Gtu => sa > sb,
        Cmp::Ge | Cmp::Geu => sa >= sb,
        Cmp::Lo => ua < ub,
        Cmp::Ls => ua <= ub,
        Cmp::Hi => ua > ub,
        Cmp::Hs => ua >= ub,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// The "true" value `set` writes: all ones for integers, 1.0 for floats.
fn set_true(ty: Ty) -> u64 {
    match ty {
        Ty::F32 => 1f32.to_bits() as u64,
        Ty::F16 | Ty::F16x2 => 0x3c00,
        Ty::Bf16 | Ty::Bf16x2 => 0x3f80,
        _ => ty.mask(),
    }
}

fn cvt_float(bits: u64, sty: Ty, fmt: Fmt, m: &Mods) -> u64 {
    let v = to_f64(sty, flush_in(sty, bits, m.ftz));
    let v = if m.relu && v < 0.0 { 0.0 } else { v };
    let rnd = m.rnd.unwrap_or(Rnd::Ne);
    let r = float::round(v, Ordering::Equal, rnd, fmt, m.satfinite);
    if m.relu && v.is_nan() {
        fmt.canonical_nan()
    } else {
        r
    }
}

fn round_integral(v: f64, r: Rnd) -> f64 {
    match r {
        Rnd::Ne => v.round_ties_even(),
        Rnd::Z => v.trunc(),
        Rnd::M => v.floor(),
        Rnd::P => v.ceil(),
    }
}

/// `cvt` between scalar types.
fn cvt(dty: Ty, sty: Ty, x: u64, m: &Mods) -> u64 {
    let dfloat = dty.is_float() || dty == Ty::Tf32;
    match (dfloat, sty.is_float()) {
        (false, false) => {
            let v = ext(x, sty);
            if m.sat {
                let (lo, hi) = int_range(dty);
                (v.clamp(lo, hi) as u64) & dty.mask()
            } else {
                (v as u64) & dty.mask()
            }
        }
        (true, false) => {
            let v = ext(x, sty);
            let r = float::from_int(v, m.rnd.unwrap_or(Rnd::Ne), fmt_of(dty));
            let r = finish(
                dty,
                &Mods {
                    ftz: false,
                    ..m.clone()
                },
                r,
            );
            cvt_sat_zero(dty, m, r)
        }
        (false, true) => {
            let v = to_f64(sty, flush_in(sty, x, m.ftz));
            if v.is_nan() {
                return 0;
            }
            let r = round_integral(v, m.irnd.unwrap_or(Rnd::Z));
            let (lo, hi) = int_range(dty);
            let i = if r <= lo as f64 {
                lo
            } else if r >= hi as f64 {
                hi
            } else {
                r as i128
            };
            (i as u64) & dty.mask()
        }
        (true, true) => {
            if dty == Ty::Tf32 {
                // cvt.rna.tf32.f32: keep 10 mantissa bits, ties away from zero.
                let b = x as u32;
                if f32::from_bits(b).is_nan() {
                    return 0x7fff_ffff;
                }
                let r = (b.wrapping_add(0x1000)) & 0xffff_e000;
                return r as u64;
            }
            if sty == Ty::Bf16 && dty == Ty::F32 && m.irnd.is_none() && !m.sat && !m.relu {
                // bf16 -> f32 is the bit pattern shifted up, NaN payloads and signs included
                // (ptxas 13.0.88 writes `SHF.L.U32 d, a, 0x10, RZ` for every rounding).
                return (x & 0xffff) << 16;
            }
            let v = to_f64(sty, flush_in(sty, x, m.ftz && sty == Ty::F32));
            let fmt = fmt_of(dty);
            let r = if let Some(ir) = m.irnd {
                let v = round_integral(v, ir);
                float::round(v, Ordering::Equal, Rnd::Ne, fmt, false)
            } else {
                let r = float::round(
                    v,
                    Ordering::Equal,
                    m.rnd.unwrap_or(Rnd::Ne),
                    fmt,
                    m.satfinite,
                );
                if v.is_nan() && dty == Ty::F64 {
                    // f32 -> f64 keeps the payload (quieted).
                    let b = x as u32;
                    ((b as u64 & 0x8000_0000) << 32)
                        | 0x7ff8_0000_0000_0000
                        | ((b as u64 & 0x3f_ffff) << 29)
                } else {
                    r
                }
            };
            let ftz_out = m.ftz && dty == Ty::F32;
            let r = finish(
                dty,
                &Mods {
                    ftz: ftz_out,
                    relu: m.relu,
                    sat: m.sat,
                    ..Mods::default()
                },
                r,
            );
            cvt_sat_zero(dty, m, r)
        }
    }
}

/// `cvt.sat` to a float type gives +0 for a -0 result: ptxas computes it as `FADD.SAT d, RZ,
/// x` (and `RZ + -0 = +0`), on sm_80 and sm_90 alike.
fn cvt_sat_zero(dty: Ty, m: &Mods, bits: u64) -> u64 {
    let sign = match dty {
        Ty::F16 | Ty::Bf16 => 0x8000,
        Ty::F32 => 0x8000_0000,
        Ty::F64 => 0x8000_0000_0000_0000,
        _ => return bits,
    };
    if m.sat && bits == sign { 0 } else { bits }
}

fn prmt(a: u32, b: u32, c: u32, mode: u8) -> u32 {
    let bytes = ((b as u64) << 32 | a as u64).to_le_bytes();
    let sel = |i: u32| -> u8 {
        let s = (c >> (4 * i)) & 0xf;
        let v = bytes[(s & 7) as usize];
        if s & 8 != 0 {
            if v & 0x80 != 0 { 0xff } else { 0 }
        } else {
            v
        }
    };
    let pick = |idx: [u32; 4]| -> u32 {
        idx.iter().enumerate().fold(0u32, |acc, (k, &i)| {
            acc | (bytes[(i & 7) as usize] as u32) << (8 * k)
        })
    };
    let n = c & 3;
    match mode {
        0 => (0..4).fold(0u32, |acc, i| acc | (sel(i) as u32) << (8 * i)),
        1 => pick([n, n + 1, n + 2, n + 3]),
        2 => pick([n, (n + 7) & 7, (n + 6) & 7, (n + 5) & 7]),
        3 => pick([n, n, n, n]),
        4 => ecl(&bytes, n),
        5 => ecr(&bytes, n),
        _ => {
            let s = (n & 1) * 2;
            pick([s, s + 1, s, s + 1])
        }
    }
}

fn ecl(bytes: &[u8; 8], n: u32) -> u32 {
    // Edge clamp left: byte i takes byte max(i, n)... per PTX: {3,2,1,0} -> for n: result bytes
    // k < n take byte k? PTX table: ecl n=0 -> 3 2 1 0; n=1 -> 3 2 1 1; n=2 -> 3 2 2 2; n=3 -> 3 3 3 3.
    let idx = |k: u32| if k < n { n } else { k };
    (0..4).fold(0u32, |acc, k| {
        acc | (bytes[idx(k) as usize] as u32) << (8 * k)
    })
}

fn ecr(bytes: &[u8; 8], n: u32) -> u32 {
    // Edge clamp right: n=0 -> 0 0 0 0; n=1 -> 1 1 1 0; n=2 -> 2 2 1 0; n=3 -> 3 2 1 0.
    let idx = |k: u32| if k > n { n } else { k };
    (0..4).fold(0u32, |acc, k| {
        acc | (bytes[idx(k) as usize] as u32) << (8 * k)
    })
}

fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    let base = base & 31;
    if offset == 0 {
        return if mask >> base & 1 == 1 {
            base
        } else {
            0xffff_ffff
        };
    }
    let mut count = offset.unsigned_abs();
    let mut pos = base as i32;
    let step = if offset > 0 { 1 } else { -1 };
    loop {
        if !(0..32).contains(&pos) {
            return 0xffff_ffff;
        }
        if mask >> pos & 1 == 1 {
            count -= 1;
            if count == 0 {
                return pos as u32;
            }
        }
        pos += step;
    }
}

fn atom_op(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let mask = ty.mask();
    match op {
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if old & mask == b & mask {
                c
            } else {
                old
            }
        }
        AtomOp::Add if ty.is_float() => {
            let m = Mods {
                ftz: ty == Ty::F32,
                ..Mods::default()
            };
            float_bin(ty, &m, old, b, &float::add)
        }
        AtomOp::Add => old.wrapping_add(b) & mask,
        AtomOp::Inc => {
            if old & mask >= b & mask {
                0
            } else {
                (old + 1) & mask
            }
        }
        AtomOp::Dec => {
            if old & mask == 0 || old & mask > b & mask {
                b
            } else {
                (old - 1) & mask
            }
        }
        AtomOp::Min | AtomOp::Max if ty.is_float() => {
            float_minmax(ty, &Mods::default(), old, b, op == AtomOp::Max)
        }
        AtomOp::Min | AtomOp::Max => {
            let (x, y) = (ext(old, ty), ext(b, ty));
            let v = if op == AtomOp::Max {
                x.max(y)
            } else {
                x.min(y)
            };
            v as u64 & mask
        }
    }
}
