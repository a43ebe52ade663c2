//! The machine: CTAs of warps of 32 lanes, scheduling, convergence, memory spaces.
//!
//! Instruction semantics live in [`crate::ops`]; this module owns the state they act on.

use interp::Memory;
use interp::mem::{
    CONST_WINDOW, LOCAL_WINDOW, RESERVED_SMEM_SIZE, ReservedSmem, SHARED_WINDOW, SharedLayout,
    SharedMap, WINDOW_SIZE,
};
use sass::model::{AddrTerm, Address, ConstBank, Inst, OperandKind, RegFile};

use crate::load::{Kernel, Program, Slot};

/// One launch: grid, block, dynamic shared memory and the parameter bytes (laid out as the
/// kernel's EIATTR_KPARAM_INFO says, copied to bank 0 at the SM's parameter base).
#[derive(Debug, Clone)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
    pub params: Vec<u8>,
    /// Warp instructions per CTA before the run is stopped.
    pub step_limit: u64,
}

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmuError {
    /// Out-of-bounds or misaligned access, `BPT.TRAP`, ...
    Trap {
        message: String,
        pc: u64,
        thread: [u32; 3],
        cta: [u32; 3],
    },
    /// An instruction, modifier or operand form the emulator does not implement was reached
    /// (or a word the decoder does not know).
    Unsupported { reason: String, pc: u64 },
    /// Every live thread waits on something that never happens.
    Deadlock(String),
    /// The step limit was reached.
    StepLimit,
    /// The launch itself is malformed.
    BadLaunch(String),
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::Trap {
                message,
                pc,
                thread,
                cta,
            } => write!(
                f,
                "trap at {pc:#06x} (thread {thread:?} of CTA {cta:?}): {message}"
            ),
            EmuError::Unsupported { reason, pc } => write!(f, "unsupported at {pc:#06x}: {reason}"),
            EmuError::Deadlock(m) => write!(f, "deadlock: {m}"),
            EmuError::StepLimit => write!(f, "step limit reached"),
            EmuError::BadLaunch(m) => write!(f, "bad launch: {m}"),
        }
    }
}

/// Counts of a finished run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub warp_steps: u64,
    pub thread_steps: u64,
    /// Reads whose value PTX leaves undefined (a `SHFL` from a lane outside the executing
    /// lanes, which reads that lane's register as it happens to be).
    pub undefined_reads: u64,
    /// `WARPSYNC`s executed by a lane outside its own member mask: the warp-synchronous PTX
    /// instruction it stands for (`shfl.sync`, `vote.sync`, `bar.warp.sync`, ...) is undefined
    /// for such a thread.
    pub undefined_syncs: u64,
}

/// What a lane is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneState {
    /// Not part of the CTA (the last warp of a CTA whose size is not a multiple of 32).
    Absent,
    Running,
    Exited,
    /// Waiting at `BSYNC B<n>`.
    Bsync(u8),
    /// Waiting at `WARPSYNC` for these lanes.
    Warpsync(u32),
    /// Waiting at `WARPSYNC.EXCLUSIVE` for these lanes: released as a group of their own.
    WarpsyncExclusive(u32),
    /// Waiting at a CTA barrier (`BAR.SYNC id`).
    Bar(u8),
}

/// Per-warp state: per-lane registers, predicates, barrier registers and pcs; per-warp uniform
/// registers and predicates.
#[derive(Debug, Clone)]
pub struct Warp {
    pub index: u32,
    /// `r[lane * 256 + n]`; index 255 (RZ) is never written.
    pub r: Vec<u32>,
    /// Predicate bits P0..P6 per lane (bit 7 = PT, always set).
    pub p: [u8; 32],
    pub ur: [u32; 64],
    pub up: u8,
    /// Convergence barrier registers per lane: `b[lane * 16 + n]` = lane mask.
    pub b: Vec<u32>,
    pub pc: [u64; 32],
    pub state: [LaneState; 32],
    /// Per-lane local memory.
    pub local: Vec<Vec<u8>>,
    /// `BAR.RED`: each waiting lane's reduction (0 POPC, 1 AND, 2 OR) and predicate.
    pub bar_red: [Option<(u8, bool)>; 32],
    /// The result of the lane's last `BAR.RED` (read by `B2R.RESULT`).
    pub bar_result: [u32; 32],
    /// The warp's clock (`SR_CLOCKLO`): instructions it has issued. Monotonic like the
    /// hardware's cycle counter, not a cycle count.
    pub clock: u64,
    /// Where each lane continues after `ENDCOLLECTIVE`: the target of its last
    /// `WARPSYNC.COLLECTIVE`.
    pub collective_end: [u64; 32],
    /// Each lane's thread group: lanes run together only while they are in one group. A
    /// divergent branch splits a group ([`split_diverged`]); only a convergence point
    /// (`BSYNC`, `WARPSYNC`) joins lanes again, as on Volta and later GPUs, where threads
    /// that diverged do not reconverge by reaching the same pc.
    pub group: [u32; 32],
    /// The next fresh group number.
    pub next_group: u32,
    /// The group [`pick`] chose last and for how many steps in a row.
    pub last_group: u32,
    pub streak: u32,
}

impl Warp {
    /// Puts the lanes of `mask` in a fresh group of their own.
    pub fn regroup(&mut self, mask: u32) {
        let g = self.next_group;
        self.next_group += 1;
        for l in 0..32 {
            if mask >> l & 1 == 1 {
                self.group[l] = g;
            }
        }
    }
    pub fn live_mask(&self) -> u32 {
        (0..32)
            .filter(|&l| !matches!(self.state[l], LaneState::Absent | LaneState::Exited))
            .fold(0, |m, l| m | 1 << l)
    }
    pub fn present_mask(&self) -> u32 {
        (0..32)
            .filter(|&l| self.state[l] != LaneState::Absent)
            .fold(0, |m, l| m | 1 << l)
    }
    pub fn reg(&self, lane: usize, n: u8) -> u32 {
        if n == 255 {
            0
        } else {
            self.r[lane * 256 + n as usize]
        }
    }
    pub fn set_reg(&mut self, lane: usize, n: u8, v: u32) {
        if n != 255 {
            self.r[lane * 256 + n as usize] = v;
        }
    }
    pub fn ureg(&self, n: u8) -> u32 {
        if n >= 63 { 0 } else { self.ur[n as usize] }
    }
    pub fn set_ureg(&mut self, n: u8, v: u32) {
        if n < 63 {
            self.ur[n as usize] = v;
        }
    }
    pub fn pred(&self, lane: usize, n: u8) -> bool {
        n >= 7 || self.p[lane] >> n & 1 == 1
    }
    pub fn set_pred(&mut self, lane: usize, n: u8, v: bool) {
        if n < 7 {
            self.p[lane] = (self.p[lane] & !(1 << n)) | (u8::from(v) << n);
        }
    }
    pub fn upred(&self, n: u8) -> bool {
        n >= 7 || self.up >> n & 1 == 1
    }
    pub fn set_upred(&mut self, n: u8, v: bool) {
        if n < 7 {
            self.up = (self.up & !(1 << n)) | (u8::from(v) << n);
        }
    }
}

/// CTA-wide state shared by its warps.
#[derive(Debug)]
pub struct Cta {
    pub id: [u32; 3],
    /// The CTA's shared memory as [`shared_map`] lays it out (its length is `SR_SMEMSZ`).
    pub shared: Vec<u8>,
    /// See [`Stats::undefined_reads`].
    pub undefined_reads: u64,
    /// See [`Stats::undefined_syncs`].
    pub undefined_syncs: u64,
    /// See [`RunOptions::zero_undefined_lanes`].
    pub zero_undefined_lanes: bool,
    /// `BAR` arrivals since the last barrier release pass, in execution order (the pass,
    /// which sees every warp, counts them: [`release_cta_barriers`]).
    pub arrivals: Vec<Arrival>,
    /// The 16 CTA barriers' current generations.
    pub barriers: Vec<BarrierGen>,
}

/// Lanes of one warp executing a `BAR` instruction.
#[derive(Debug, Clone, Copy)]
pub struct Arrival {
    pub id: u8,
    pub warp: u32,
    pub lanes: u32,
    /// The thread count operand, if any.
    pub count: Option<u32>,
    /// The lanes wait for the generation to complete (`BAR.SYNC`, `BAR.RED`; not `BAR.ARV`).
    pub wait: bool,
}

/// One CTA barrier's current generation: as the hardware counts (and the interpreter), a warp
/// has arrived once all its lanes that have not exited executed the barrier; with a thread
/// count `b` the generation completes when `32 * arrived warps >= b`, without one when every
/// warp with lanes left has arrived. Completion releases the waiting lanes.
#[derive(Debug, Clone, Default)]
pub struct BarrierGen {
    pub expected: Option<u32>,
    /// Per warp: lanes that arrived in this generation.
    pub arrived: Vec<u32>,
    /// Per warp: lanes that wait for it.
    pub waiting: Vec<u32>,
}

/// How to run a launch beyond its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunOptions {
    /// A `SHFL` that reads a lane outside the lanes executing it (undefined in PTX) yields 0
    /// instead of that lane's stale register. The interpreter has the same option
    /// (`interp::RunOptions::zero_undefined_lanes`), so that a kernel whose result depends
    /// on undefined lanes can still be compared under one convention for their values.
    pub zero_undefined_lanes: bool,
}

/// Everything an instruction may touch besides its warp.
pub struct Ctx<'a> {
    pub prog: &'a Program,
    pub kernel: &'a Kernel,
    pub mem: &'a mut Memory,
    pub cbank0: &'a [u8],
    pub launch: &'a Launch,
    pub cta: &'a mut Cta,
    /// Instruction address being executed (for messages).
    pub pc: u64,
}

/// A failure while executing one instruction (the caller adds pc, thread and CTA).
#[derive(Debug, Clone)]
pub enum Fault {
    Trap { message: String, lane: usize },
    Unsupported(String),
}

pub type R<T> = Result<T, Fault>;

pub fn unsupported<T>(msg: impl Into<String>) -> R<T> {
    Err(Fault::Unsupported(msg.into()))
}

pub fn trap<T>(lane: usize, msg: impl Into<String>) -> R<T> {
    Err(Fault::Trap {
        message: msg.into(),
        lane,
    })
}

/// Driver-set words of constant bank 0 (below the parameters) that ptxas 13.0 reads, found by
/// compiling PTX that uses `%ntid`, `%nctaid`, generic shared/local addresses and a stack
/// frame and reading the SASS (see docs/arch/emu.md).
pub mod driver {
    /// `c[0x0][0x0..0xc]`: `%ntid.x/y/z`.
    pub const NTID: u32 = 0x0;
    /// `c[0x0][0xc..0x18]`: `%nctaid.x/y/z`.
    pub const NCTAID: u32 = 0xc;
    /// `c[0x0][0x18]` (u64): base of the generic window of shared memory (sm_80; sm_90 uses
    /// `SR_SWINHI` instead).
    pub const SHARED_WINDOW: u32 = 0x18;
    /// `c[0x0][0x20]` (u64): base of the generic window of local memory.
    pub const LOCAL_WINDOW: u32 = 0x20;
    /// `c[0x0][0x28]`: initial stack pointer (`R1`) = bytes of local memory per thread.
    pub const STACK_TOP: u32 = 0x28;
    /// `c[0x0][0x2c]`: `%dynamic_smem_size`, the launch's dynamic shared memory in bytes.
    pub const DYNAMIC_SMEM: u32 = 0x2c;
    /// `c[0x0][0x30]` (u64): `%gridid` (zero: the emulator's only grid).
    pub const GRIDID: u32 = 0x30;
    /// `c[0x0][0x10c]`: `%nsmid`.
    pub const NSMID: u32 = 0x10c;
    /// sm_90's cluster words (`target::DriverWords::cluster_words`): `%is_explicit_cluster`,
    pub const CLUSTER_EXPLICIT: u32 = 0x140;
    /// `%cluster_nctaid.{x,y,z}`,
    pub const CLUSTER_SHAPE: u32 = 0x144;
    /// their reciprocals (f32),
    pub const CLUSTER_RCP: u32 = 0x150;
    /// `%nclusterid.{x,y,z}`,
    pub const NCLUSTERID: u32 = 0x15c;
    /// `%cluster_nctarank`.
    pub const CLUSTER_NCTARANK: u32 = 0x188;
    /// `c[0x0][0x114]`: bytes of shared memory the driver reserves per CTA; ptxas computes
    /// `%total_smem_size` as `SR_SMEMSZ` minus it, and before sm_90 also
    /// `%reserved_smem_offset_0`/`_begin`.
    pub const RESERVED_SMEM_SIZE: u32 = 0x114;
    /// `%envregN` (driver environment words) sit at `envreg0 + 4N` (the SM's
    /// `target::DriverWords`). Only `%envreg1`/`%envreg2` are modeled: in a cooperative
    /// launch they hold the grid-synchronization workspace address (high, low word).
    pub fn envreg(d: &target::DriverWords, n: u32) -> u32 {
        d.envreg0 + 4 * n
    }
}

/// The layout of one CTA's shared memory for `k` (the interpreter's model,
/// [`interp::SharedMap`]): on sm_90 `.nv.shared.<k>` already counts the 1 KiB reserved block
/// at address 0.
pub fn shared_map(prog: &Program, k: &Kernel, launch: &Launch) -> SharedMap {
    let layout = SharedLayout::for_sm(prog.sm);
    let user_static = match layout {
        SharedLayout::ReservedFirst => k.shared_static.saturating_sub(RESERVED_SMEM_SIZE),
        SharedLayout::ReservedLast => k.shared_static,
    };
    SharedMap::new(layout, user_static, u64::from(launch.dynamic_shared))
}

/// Builds the constant bank 0 image of a launch.
/// `cooperative` is the launch's grid-synchronization workspace (`%envreg1:%envreg2`), if it
/// is a cooperative launch.
pub fn build_cbank0(
    prog: &Program,
    k: &Kernel,
    launch: &Launch,
    cooperative: Option<u64>,
) -> Result<Vec<u8>, EmuError> {
    let (pbase, psize) = k.param_block;
    let mut c = k.cbank0.clone();
    let d = &prog.driver;
    let (end_off, offset1_off) = (d.reserved_smem_end, d.reserved_smem_offset1);
    let need = (pbase as usize + launch.params.len())
        .max(driver::RESERVED_SMEM_SIZE as usize + 4)
        .max(offset1_off as usize + 4)
        .max(driver::envreg(d, 2) as usize + 4);
    if c.len() < need {
        c.resize(need, 0);
    }
    if launch.params.len() as u32 != psize && psize != 0 {
        return Err(EmuError::BadLaunch(format!(
            "kernel `{}` takes {psize} bytes of parameters, {} given",
            k.name,
            launch.params.len()
        )));
    }
    let put = |c: &mut Vec<u8>, off: u32, b: &[u8]| {
        c[off as usize..off as usize + b.len()].copy_from_slice(b)
    };
    for i in 0..3 {
        put(
            &mut c,
            driver::NTID + 4 * i,
            &launch.block[i as usize].to_le_bytes(),
        );
        put(
            &mut c,
            driver::NCTAID + 4 * i,
            &launch.grid[i as usize].to_le_bytes(),
        );
    }
    put(&mut c, driver::SHARED_WINDOW, &SHARED_WINDOW.to_le_bytes());
    put(&mut c, driver::LOCAL_WINDOW, &LOCAL_WINDOW.to_le_bytes());
    put(&mut c, d.const_window, &CONST_WINDOW.to_le_bytes());
    put(
        &mut c,
        driver::STACK_TOP,
        &(k.local_bytes as u32).to_le_bytes(),
    );
    put(
        &mut c,
        driver::DYNAMIC_SMEM,
        &launch.dynamic_shared.to_le_bytes(),
    );
    // `%nsmid`: the emulator is one SM (`%smid` 0).
    put(&mut c, driver::NSMID, &1u32.to_le_bytes());
    if d.cluster_words {
        // A launch without clusters: each CTA is a cluster of one.
        if c.len() < driver::CLUSTER_NCTARANK as usize + 4 {
            c.resize(driver::CLUSTER_NCTARANK as usize + 4, 0);
        }
        put(&mut c, driver::CLUSTER_EXPLICIT, &0u32.to_le_bytes());
        for i in 0..3 {
            put(&mut c, driver::CLUSTER_SHAPE + 4 * i, &1u32.to_le_bytes());
            put(
                &mut c,
                driver::CLUSTER_RCP + 4 * i,
                &1.0f32.to_bits().to_le_bytes(),
            );
            put(
                &mut c,
                driver::NCLUSTERID + 4 * i,
                &launch.grid[i as usize].to_le_bytes(),
            );
        }
        put(&mut c, driver::CLUSTER_NCTARANK, &1u32.to_le_bytes());
    }
    let smap = shared_map(prog, k, launch);
    put(
        &mut c,
        driver::RESERVED_SMEM_SIZE,
        &(RESERVED_SMEM_SIZE as u32).to_le_bytes(),
    );
    put(
        &mut c,
        end_off,
        &(smap.reserved(ReservedSmem::End) as u32).to_le_bytes(),
    );
    put(
        &mut c,
        offset1_off,
        &(smap.reserved(ReservedSmem::Offset1) as u32).to_le_bytes(),
    );
    if let Some(ws) = cooperative {
        put(
            &mut c,
            driver::envreg(d, 1),
            &((ws >> 32) as u32).to_le_bytes(),
        );
        put(&mut c, driver::envreg(d, 2), &(ws as u32).to_le_bytes());
    }
    put(&mut c, pbase, &launch.params);
    Ok(c)
}

/// Which driver words of bank 0 (below the parameter base) the emulator models.
/// `cooperative`: whether the launch is cooperative (then `%envreg1`/`%envreg2` are known).
/// The global memory descriptor (`desc[URx]` operands) is known: the emulator ignores
/// descriptors, the value is zero. `%gridid` (zero), `%nsmid` and sm_90's cluster words
/// (`build_cbank0`) are known.
pub fn driver_word_known(d: &target::DriverWords, off: u32, cooperative: bool) -> bool {
    let (end, offset1) = (d.reserved_smem_end, d.reserved_smem_offset1);
    (cooperative && (driver::envreg(d, 1)..driver::envreg(d, 3)).contains(&off))
        || off < driver::DYNAMIC_SMEM + 4
        || (d.global_desc..d.global_desc + 8).contains(&off)
        || (d.const_window..d.const_window + 8).contains(&off)
        || (driver::RESERVED_SMEM_SIZE..driver::RESERVED_SMEM_SIZE + 4).contains(&off)
        || (end..end + 4).contains(&off)
        || (offset1..offset1 + 4).contains(&off)
        || (driver::GRIDID..driver::GRIDID + 8).contains(&off)
        || (driver::NSMID..driver::NSMID + 4).contains(&off)
        || (d.cluster_words
            && ((driver::CLUSTER_EXPLICIT..driver::NCLUSTERID + 12).contains(&off)
                || (driver::CLUSTER_NCTARANK..driver::CLUSTER_NCTARANK + 4).contains(&off)))
}

impl Ctx<'_> {
    /// Reads `n` bytes of constant bank `bank` at `off`.
    pub fn cread(&self, lane: usize, bank: u32, off: i64, n: usize) -> R<u64> {
        let data: &[u8] = if bank == 0 {
            if off >= 0
                && (off as u32) < self.kernel.param_block.0
                && !driver_word_known(
                    &self.prog.driver,
                    off as u32,
                    self.mem.cooperative_workspace().is_some(),
                )
            {
                return unsupported(format!("driver constant c[0x0][{off:#x}] is not modeled"));
            }
            self.cbank0
        } else if let Some(d) = self.kernel.banks.get(&bank) {
            d
        } else if let Some(d) = self.prog.banks.get(&bank) {
            d
        } else {
            &[]
        };
        if off < 0 || off as usize + n > data.len() {
            // Reads past a bank's data read zeros on hardware within the bank's 64 KiB;
            // beyond the section they are undefined: trap.
            return trap(
                lane,
                format!(
                    "constant read c[{bank:#x}][{off:#x}] ({n} bytes) outside the bank ({} bytes)",
                    data.len()
                ),
            );
        }
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&data[off as usize..off as usize + n]);
        Ok(u64::from_le_bytes(b))
    }
}

/// The memory space an access goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global,
    Generic,
    Shared,
    Local,
    /// Constant bank 3 through its generic window (`cvta.const`): read-only.
    Const,
}

/// Resolves a generic address to its space.
pub fn classify(addr: u64) -> (Space, u64) {
    if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
        // On sm_90 bits 24..31 carry the CTA's rank in its cluster (always 0 here).
        (Space::Shared, addr - SHARED_WINDOW)
    } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
        (Space::Local, addr - LOCAL_WINDOW)
    } else if (CONST_WINDOW..CONST_WINDOW + WINDOW_SIZE).contains(&addr) {
        (Space::Const, addr - CONST_WINDOW)
    } else {
        (Space::Global, addr)
    }
}

impl Ctx<'_> {
    /// Reads `out.len()` bytes of `space` at `addr` for `lane`.
    pub fn load(
        &mut self,
        w: &Warp,
        lane: usize,
        space: Space,
        addr: u64,
        out: &mut [u8],
    ) -> R<()> {
        let (space, addr) = match space {
            Space::Generic => classify(addr),
            s => (s, addr),
        };
        if !addr.is_multiple_of(out.len().min(16) as u64) {
            return trap(
                lane,
                format!("misaligned {}-byte {space:?} read at {addr:#x}", out.len()),
            );
        }
        match space {
            Space::Global | Space::Generic => self.mem.read(addr, out).map_or_else(
                || {
                    trap(
                        lane,
                        format!("global read out of bounds: {}", self.mem.describe(addr)),
                    )
                },
                Ok,
            ),
            Space::Shared => {
                let s = &self.cta.shared;
                match s.get(addr as usize..addr as usize + out.len()) {
                    Some(b) if addr < s.len() as u64 => {
                        out.copy_from_slice(b);
                        Ok(())
                    }
                    _ => trap(
                        lane,
                        format!("shared read at {addr:#x} outside {} bytes", s.len()),
                    ),
                }
            }
            Space::Local => {
                let l = &w.local[lane];
                match l.get(addr as usize..addr as usize + out.len()) {
                    Some(b) if addr < l.len() as u64 => {
                        out.copy_from_slice(b);
                        Ok(())
                    }
                    _ => trap(
                        lane,
                        format!("local read at {addr:#x} outside {} bytes", l.len()),
                    ),
                }
            }
            Space::Const => {
                let c: &[u8] = self.prog.banks.get(&3).map_or(&[], |d| d);
                match c.get(addr as usize..addr as usize + out.len()) {
                    Some(b) => {
                        out.copy_from_slice(b);
                        Ok(())
                    }
                    None => trap(
                        lane,
                        format!("constant read at {addr:#x} outside {} bytes", c.len()),
                    ),
                }
            }
        }
    }

    /// Writes `bytes` to `space` at `addr` for `lane`.
    pub fn store(
        &mut self,
        w: &mut Warp,
        lane: usize,
        space: Space,
        addr: u64,
        bytes: &[u8],
    ) -> R<()> {
        let (space, addr) = match space {
            Space::Generic => classify(addr),
            s => (s, addr),
        };
        if !addr.is_multiple_of(bytes.len().min(16) as u64) {
            return trap(
                lane,
                format!(
                    "misaligned {}-byte {space:?} write at {addr:#x}",
                    bytes.len()
                ),
            );
        }
        let n = bytes.len();
        match space {
            Space::Global | Space::Generic => self.mem.write(addr, bytes).map_or_else(
                || {
                    trap(
                        lane,
                        format!("global write out of bounds: {}", self.mem.describe(addr)),
                    )
                },
                Ok,
            ),
            Space::Shared => {
                let len = self.cta.shared.len();
                match self.cta.shared.get_mut(addr as usize..addr as usize + n) {
                    Some(b) if addr < len as u64 => {
                        b.copy_from_slice(bytes);
                        Ok(())
                    }
                    _ => trap(
                        lane,
                        format!("shared write at {addr:#x} outside {len} bytes"),
                    ),
                }
            }
            Space::Local => {
                let len = w.local[lane].len();
                match w.local[lane].get_mut(addr as usize..addr as usize + n) {
                    Some(b) if addr < len as u64 => {
                        b.copy_from_slice(bytes);
                        Ok(())
                    }
                    _ => trap(
                        lane,
                        format!("local write at {addr:#x} outside {len} bytes"),
                    ),
                }
            }
            Space::Const => trap(lane, format!("write to constant memory at {addr:#x}")),
        }
    }
}

/// The address of a memory operand for one lane. `wide` = the space has 64-bit addresses.
/// In a wide space a register base without `.U32` is a 64-bit pair even when nvdisasm does
/// not print `.64` (`ATOM.E.CAS PT, R7, [R6], ...`, `QSPC.E.S P0, RZ, [R8]`).
pub fn address(w: &Warp, lane: usize, a: &Address, wide: bool) -> R<u64> {
    let mut v: u64 = 0;
    for t in &a.terms {
        match t {
            AddrTerm::Int(i) => v = v.wrapping_add(*i as u64),
            AddrTerm::Reg { reg, suffixes } => {
                let is64 = suffixes.iter().any(|s| s == "64")
                    || (wide && reg.file == RegFile::R && !suffixes.iter().any(|s| s == "U32"));
                let mut scale = 1u64;
                for s in suffixes {
                    match s.as_str() {
                        "64" | "U32" => {}
                        "X4" => scale = 4,
                        "X8" => scale = 8,
                        "X16" => scale = 16,
                        other => return unsupported(format!("address suffix .{other}")),
                    }
                }
                let x = match reg.file {
                    RegFile::R if is64 => {
                        u64::from(w.reg(lane, reg.index))
                            | u64::from(w.reg(lane, pair(reg.index))) << 32
                    }
                    RegFile::R => u64::from(w.reg(lane, reg.index)),
                    // In a 64-bit space a uniform register is 64 bits wide: alone (`[UR4]`),
                    // beside a 64-bit general register (sm_75's `LDG.E.SYS R0,
                    // [R2.64+UR4+-0x4]` with UR4:UR5 from `ULDC.64`) and beside a 32-bit
                    // offset (sm_75's `LDG.E.SYS R4, [R10.U32+UR4+0x100]`: the uniform
                    // register is the base, the `.U32` register an unsigned offset).
                    RegFile::Ur if is64 || (wide && reg.index != 63) => {
                        u64::from(w.ureg(reg.index)) | u64::from(w.ureg(upair(reg.index))) << 32
                    }
                    RegFile::Ur => u64::from(w.ureg(reg.index)),
                    _ => return unsupported(format!("address register {reg}")),
                };
                v = v.wrapping_add(x.wrapping_mul(scale));
            }
        }
    }
    Ok(if wide { v } else { v & 0xffff_ffff })
}

/// The second register of a pair (`RZ` pairs with `RZ`).
pub fn pair(n: u8) -> u8 {
    if n == 255 { 255 } else { n + 1 }
}

/// The second uniform register of a pair.
pub fn upair(n: u8) -> u8 {
    if n >= 63 { 63 } else { n + 1 }
}

/// Constant-bank operand: bank and byte offset for `lane`.
pub fn const_addr(w: &Warp, lane: usize, bank: &ConstBank, addr: &Address) -> R<(u32, i64)> {
    let b = match bank {
        ConstBank::Imm(b) => *b,
        ConstBank::Reg(r) if r.file == RegFile::Ur => w.ureg(r.index),
        ConstBank::Reg(r) => return unsupported(format!("constant bank register {r}")),
    };
    let mut off: i64 = 0;
    for t in &addr.terms {
        match t {
            // The immediate offset field is 16 bits; nvdisasm prints offsets of 0x8000 and
            // above as negative numbers (`c[0x0][-0x6880]` is byte 0x9780 of the bank).
            AddrTerm::Int(i) => off += *i & 0xffff,
            AddrTerm::Reg { reg, suffixes } => {
                if !suffixes.is_empty() {
                    return unsupported("constant address with register suffixes");
                }
                off += i64::from(match reg.file {
                    RegFile::R => w.reg(lane, reg.index),
                    RegFile::Ur => w.ureg(reg.index),
                    _ => return unsupported(format!("constant address register {reg}")),
                } as i32);
            }
        }
    }
    Ok((b, off))
}

/// Whether an operand is a constant-bank operand (for messages).
pub fn is_const(k: &OperandKind) -> bool {
    matches!(k, OperandKind::Const { .. })
}

/// Runs `kernel` of `prog` over the launch grid. Global memory is `mem` (the caller allocated
/// the parameter buffers there, and [`crate::load`] the module's globals).
pub fn run(
    prog: &Program,
    mem: &mut Memory,
    kernel: &str,
    launch: &Launch,
) -> Result<Stats, EmuError> {
    run_with(prog, mem, kernel, launch, &RunOptions::default())
}

/// [`run`] with `options`.
pub fn run_with(
    prog: &Program,
    mem: &mut Memory,
    kernel: &str,
    launch: &Launch,
    options: &RunOptions,
) -> Result<Stats, EmuError> {
    let k = prog
        .kernel(kernel)
        .ok_or_else(|| EmuError::BadLaunch(format!("no kernel `{kernel}` in the cubin")))?;
    let threads = launch.block.iter().map(|&x| u64::from(x)).product::<u64>();
    if threads == 0 || threads > 1024 || launch.grid.contains(&0) {
        return Err(EmuError::BadLaunch(format!(
            "block {:?} / grid {:?}: 1..=1024 threads per CTA and a non-empty grid",
            launch.block, launch.grid
        )));
    }
    let cbank0 = build_cbank0(prog, k, launch, mem.cooperative_workspace())?;
    let mut stats = Stats::default();
    for z in 0..launch.grid[2] {
        for y in 0..launch.grid[1] {
            for x in 0..launch.grid[0] {
                run_cta(
                    prog,
                    k,
                    mem,
                    &cbank0,
                    launch,
                    [x, y, z],
                    options,
                    &mut stats,
                )?;
            }
        }
    }
    Ok(stats)
}

/// The thread index (`%tid`) of the CTA's `flat`-th thread.
pub fn thread_of(launch: &Launch, flat: u32) -> [u32; 3] {
    let [bx, by, _] = launch.block;
    [flat % bx, flat / bx % by, flat / (bx * by)]
}

#[allow(clippy::too_many_arguments)] // one CTA of `run_with`: its inputs, unbundled
fn run_cta(
    prog: &Program,
    k: &Kernel,
    mem: &mut Memory,
    cbank0: &[u8],
    launch: &Launch,
    id: [u32; 3],
    options: &RunOptions,
    stats: &mut Stats,
) -> Result<(), EmuError> {
    let threads: u32 = launch.block.iter().product();
    let nwarps = threads.div_ceil(32);
    let smap = shared_map(prog, k, launch);
    let mut cta = Cta {
        id,
        shared: vec![0; smap.size() as usize],
        undefined_reads: 0,
        undefined_syncs: 0,
        zero_undefined_lanes: options.zero_undefined_lanes,
        arrivals: Vec::new(),
        barriers: vec![BarrierGen::default(); 16],
    };
    let mut warps: Vec<Warp> = (0..nwarps)
        .map(|wi| {
            let mut state = [LaneState::Absent; 32];
            let mut local = Vec::with_capacity(32);
            for (l, s) in state.iter_mut().enumerate() {
                if wi * 32 + (l as u32) < threads {
                    *s = LaneState::Running;
                    local.push(vec![0u8; k.local_bytes as usize]);
                } else {
                    local.push(Vec::new());
                }
            }
            Warp {
                index: wi,
                r: vec![0; 32 * 256],
                p: [0; 32],
                ur: [0; 64],
                up: 0,
                b: vec![0; 32 * 16],
                pc: [k.entry; 32],
                state,
                local,
                bar_red: [None; 32],
                bar_result: [0; 32],
                clock: 0,
                collective_end: [0; 32],
                group: [0; 32],
                next_group: 1,
                last_group: 0,
                streak: 0,
            }
        })
        .collect();
    let mut lane_steps = 0u64;
    loop {
        let mut progress = false;
        for w in warps.iter_mut() {
            // A quantum per warp keeps spin loops on shared memory fair.
            for _ in 0..4096 {
                release_warp_waits(w);
                let Some((pc, active)) = pick(w) else {
                    break;
                };
                // The limit counts work, a warp's worth of lanes per step: a warp whose lanes
                // diverged runs its groups one after the other (more steps, as many lanes). A
                // step counts at least 8 lanes, so that a few-thread infinite loop still stops
                // within 4x the converged limit.
                lane_steps += u64::from(active.count_ones().max(8));
                w.clock += 1;
                if lane_steps > 32 * launch.step_limit {
                    return Err(EmuError::StepLimit);
                }
                stats.warp_steps += 1;
                stats.thread_steps += u64::from(active.count_ones());
                let mut ctx = Ctx {
                    prog,
                    kernel: k,
                    mem,
                    cbank0,
                    launch,
                    cta: &mut cta,
                    pc,
                };
                step(&mut ctx, w, pc, active).map_err(|f| match f {
                    Fault::Unsupported(reason) => EmuError::Unsupported { reason, pc },
                    Fault::Trap { message, lane } => EmuError::Trap {
                        message,
                        pc,
                        thread: thread_of(launch, w.index * 32 + lane as u32),
                        cta: id,
                    },
                })?;
                split_diverged(w, active);
                progress = true;
            }
        }
        match release_cta_barriers(&mut warps, &mut cta) {
            Ok(true) => progress = true,
            Ok(false) => {}
            Err((message, w, lane)) => {
                return Err(EmuError::Trap {
                    message,
                    pc: warps[w as usize].pc[lane],
                    thread: thread_of(launch, w * 32 + lane as u32),
                    cta: id,
                });
            }
        }
        let live = warps.iter().any(|w| w.live_mask() != 0);
        if !live {
            stats.undefined_reads += cta.undefined_reads;
            stats.undefined_syncs += cta.undefined_syncs;
            return Ok(());
        }
        if !progress {
            let mut waits = Vec::new();
            for w in &warps {
                for l in 0..32 {
                    match w.state[l] {
                        LaneState::Absent | LaneState::Exited | LaneState::Running => {}
                        s => waits.push(format!(
                            "warp {} lane {l} at {:#06x}: {s:?}",
                            w.index, w.pc[l]
                        )),
                    }
                }
            }
            waits.truncate(6);
            return Err(EmuError::Deadlock(format!(
                "CTA {id:?}: no thread can proceed ({})",
                waits.join("; ")
            )));
        }
    }
}

/// The lanes to run next. The group that ran last runs on while it can, for up to
/// [`GROUP_QUANTUM`] steps in a row (the hardware keeps issuing from one group of a diverged
/// warp until it blocks or yields); otherwise the group of the lowest running lane at the
/// lowest pc — after a quantum, of another group than the last (a group spinning on a flag
/// another group of its warp sets must not starve it). Lanes of different groups never run
/// together, even at one pc, until a `BSYNC` or `WARPSYNC` joins them.
fn pick(w: &mut Warp) -> Option<(u64, u32)> {
    let mut best: Option<(u64, usize)> = None;
    let mut other: Option<(u64, usize)> = None;
    let mut same: Option<(u64, usize)> = None;
    for l in 0..32 {
        if w.state[l] != LaneState::Running {
            continue;
        }
        if best.is_none_or(|(pc, _)| w.pc[l] < pc) {
            best = Some((w.pc[l], l));
        }
        let slot = if w.group[l] == w.last_group {
            &mut same
        } else {
            &mut other
        };
        if slot.is_none_or(|(pc, _)| w.pc[l] < pc) {
            *slot = Some((w.pc[l], l));
        }
    }
    let (mut pc, mut first) = best?;
    match (same, other) {
        (Some(s), _) if w.streak < GROUP_QUANTUM => (pc, first) = s,
        (_, Some(o)) if w.streak >= GROUP_QUANTUM => (pc, first) = o,
        _ => {}
    }
    let group = w.group[first];
    if group == w.last_group {
        w.streak += 1;
    } else {
        w.last_group = group;
        w.streak = 0;
    }
    let mask = (0..32)
        .filter(|&l| w.state[l] == LaneState::Running && w.pc[l] == pc && w.group[l] == group)
        .fold(0u32, |m, l| m | 1 << l);
    Some((pc, mask))
}

/// Steps a diverged group runs before another group of its warp gets its turn when it has not
/// blocked (a spin loop on a flag another group sets). Large, as the hardware's: switching
/// groups every few instructions interleaved them inside kiln's uniform-register sequences
/// (`ULDC UR0` ... use), which kiln's code, lacking `BSSY`/`BSYNC`, leaves exposed in diverged
/// code, and which the H200 ran right (Mandelbrot1<double>).
const GROUP_QUANTUM: u32 = 4096;

/// After a step of `active` lanes: if the lanes still running stand at different pcs (a
/// divergent branch), each pc's lanes become a group of their own.
fn split_diverged(w: &mut Warp, active: u32) {
    let mut pcs: [u64; 32] = [0; 32];
    let mut n = 0;
    for l in 0..32 {
        if active >> l & 1 == 1 && w.state[l] == LaneState::Running && !pcs[..n].contains(&w.pc[l])
        {
            pcs[n] = w.pc[l];
            n += 1;
        }
    }
    if n <= 1 {
        return;
    }
    for &pc in &pcs[..n] {
        let mask = (0..32)
            .filter(|&l| active >> l & 1 == 1 && w.state[l] == LaneState::Running && w.pc[l] == pc)
            .fold(0u32, |m, l| m | 1 << l);
        w.regroup(mask);
    }
}

/// Releases lanes waiting at `BSYNC` (when every non-exited lane of the barrier's mask waits
/// at it) and at `WARPSYNC` (when every non-exited lane of its mask waits at a `WARPSYNC`).
fn release_warp_waits(w: &mut Warp) {
    let live = w.live_mask();
    for l in 0..32 {
        match w.state[l] {
            LaneState::Bsync(n) => {
                let need = w.b[l * 16 + n as usize] & live | (1 << l);
                let all = (0..32)
                    .filter(|&j| need >> j & 1 == 1)
                    .all(|j| w.state[j] == LaneState::Bsync(n));
                if all {
                    for j in 0..32 {
                        if need >> j & 1 == 1 {
                            w.state[j] = LaneState::Running;
                            w.pc[j] += 16;
                        }
                    }
                    w.regroup(need);
                }
            }
            LaneState::Warpsync(mask) => {
                let need = mask & live | (1 << l);
                let all = (0..32)
                    .filter(|&j| need >> j & 1 == 1)
                    .all(|j| matches!(w.state[j], LaneState::Warpsync(_)));
                if all {
                    for j in 0..32 {
                        if need >> j & 1 == 1 {
                            w.state[j] = LaneState::Running;
                            w.pc[j] += 16;
                        }
                    }
                    w.regroup(need);
                }
            }
            LaneState::WarpsyncExclusive(mask) => {
                // One group at a time, and only when no other lane of the warp runs: lanes of
                // different groups must not execute the following instructions together
                // (they meet again at the next BSYNC or WARPSYNC).
                let need = mask & live | (1 << l);
                let running = (0..32).any(|j| w.state[j] == LaneState::Running);
                let all = (0..32)
                    .filter(|&j| need >> j & 1 == 1)
                    .all(|j| w.state[j] == LaneState::WarpsyncExclusive(mask));
                if all && !running {
                    for j in 0..32 {
                        if need >> j & 1 == 1 {
                            w.state[j] = LaneState::Running;
                            w.pc[j] += 16;
                        }
                    }
                    w.regroup(need);
                }
            }
            _ => {}
        }
    }
}

/// Counts the `BAR` arrivals of the last pass in order and releases the barrier generations
/// they (or exits) complete ([`BarrierGen`]). A misuse the hardware leaves undefined (a
/// thread count that is not a whole number of warps, different counts in one generation) is
/// an error: (message, warp, lane).
fn release_cta_barriers(warps: &mut [Warp], cta: &mut Cta) -> Result<bool, (String, u32, usize)> {
    let n = warps.len();
    let live: Vec<u32> = warps.iter().map(Warp::live_mask).collect();
    let mut released = false;
    let complete = |b: &BarrierGen| {
        if b.arrived.iter().all(|&m| m == 0) {
            return false;
        }
        let arrived = |w: usize| b.arrived[w] != 0 && live[w] & !b.arrived[w] == 0;
        match b.expected {
            Some(c) => 32 * (0..n).filter(|&w| arrived(w)).count() as u64 >= u64::from(c),
            None => (0..n).all(|w| arrived(w) || live[w] == 0),
        }
    };
    let arrivals = std::mem::take(&mut cta.arrivals);
    for a in arrivals {
        let b = &mut cta.barriers[a.id as usize];
        b.arrived.resize(n, 0);
        b.waiting.resize(n, 0);
        if let Some(c) = a.count {
            let earlier = b.expected.filter(|_| b.arrived.iter().any(|&m| m != 0));
            let lane = a.lanes.trailing_zeros() as usize;
            if c % 32 != 0 {
                return Err((
                    format!(
                        "barrier misuse: barrier {}: thread count {c} is not a multiple of the warp size",
                        a.id
                    ),
                    a.warp,
                    lane,
                ));
            }
            if let Some(e) = earlier.filter(|&e| e != c) {
                return Err((
                    format!(
                        "barrier misuse: barrier {}: threads arrive with thread counts {e} and {c}",
                        a.id
                    ),
                    a.warp,
                    lane,
                ));
            }
            b.expected = Some(c);
        }
        b.arrived[a.warp as usize] |= a.lanes;
        if a.wait {
            b.waiting[a.warp as usize] |= a.lanes;
        }
        if complete(b) {
            let b = std::mem::take(b);
            release_generation(warps, a.id, &b);
            released = true;
        }
    }
    // Exits can complete a generation too.
    for id in 0..cta.barriers.len() {
        if complete(&cta.barriers[id]) {
            let b = std::mem::take(&mut cta.barriers[id]);
            release_generation(warps, id as u8, &b);
            released = true;
        }
    }
    Ok(released)
}

/// Lets the lanes waiting for a completed generation of barrier `id` run on, with
/// `BAR.RED`'s predicate reduction over them.
fn release_generation(warps: &mut [Warp], id: u8, b: &BarrierGen) {
    let waiting = |w: &Warp, l: usize| {
        b.waiting
            .get(w.index as usize)
            .is_some_and(|m| m >> l & 1 == 1)
            && w.state[l] == LaneState::Bar(id)
    };
    let (mut count, mut all, mut any) = (0u32, true, false);
    for w in warps.iter() {
        for l in 0..32 {
            if waiting(w, l)
                && let Some((_, v)) = w.bar_red[l]
            {
                count += u32::from(v);
                all &= v;
                any |= v;
            }
        }
    }
    for w in warps.iter_mut() {
        for l in 0..32 {
            if waiting(w, l) {
                if let Some((op, _)) = w.bar_red[l].take() {
                    w.bar_result[l] = match op {
                        0 => count,
                        1 => u32::from(all),
                        _ => u32::from(any),
                    };
                }
                w.state[l] = LaneState::Running;
                w.pc[l] += 16;
            }
        }
    }
}

/// Whether `KILN_EMU_TRACE` is set: every instruction warp 0 of CTA 0 executes is printed to
/// stderr (pc, active mask, text) — a debugging aid.
fn trace_enabled() -> bool {
    static T: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *T.get_or_init(|| std::env::var_os("KILN_EMU_TRACE").is_some())
}

/// Executes the instruction at `pc` for the lanes in `active`.
fn step(ctx: &mut Ctx<'_>, w: &mut Warp, pc: u64, active: u32) -> R<()> {
    if !ctx.prog.unapplied.is_empty() {
        return unsupported(ctx.prog.unapplied[0].clone());
    }
    let slot = ctx
        .prog
        .code
        .get(pc as usize / 16)
        .ok_or_else(|| Fault::Trap {
            message: format!("jump outside the code ({pc:#x})"),
            lane: active.trailing_zeros() as usize,
        })?;
    let inst: &Inst = match slot {
        Slot::Inst { inst, text } => {
            if trace_enabled() && w.index == 0 && ctx.cta.id == [0, 0, 0] {
                eprintln!("[emu] {pc:#06x} {active:08x} {text}");
            }
            inst
        }
        Slot::Unknown(why) => return unsupported(why.clone()),
    };
    // The guard splits the active lanes.
    let mut exec = active;
    if let Some(g) = inst.guard {
        exec = 0;
        for l in 0..32 {
            if active >> l & 1 == 1 {
                let v = if g.uniform {
                    w.upred(g.pred)
                } else {
                    w.pred(l, g.pred)
                };
                if v != g.negated {
                    exec |= 1 << l;
                }
            }
        }
    }
    let r = crate::ops::execute(ctx, w, inst, active, exec);
    if trace_enabled() && w.index == 0 && ctx.cta.id == [0, 0, 0] {
        // The first lane's destination registers after the instruction (up to four words).
        let lane = exec.trailing_zeros() as usize;
        if lane < 32
            && let Some(d) = inst.operands.first()
            && let OperandKind::Reg(reg) = &d.kind
            && reg.file == RegFile::R
            && reg.index < 255
        {
            let words: Vec<String> = (0..4u8)
                .map_while(|k| reg.index.checked_add(k).filter(|i| *i < 255))
                .map(|i| format!("{:08x}", w.reg(lane, i)))
                .collect();
            eprintln!(
                "[emu]        lane {lane}: R{}.. = {}",
                reg.index,
                words.join(" ")
            );
        }
    }
    r
}
