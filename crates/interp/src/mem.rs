//! Global memory: bounds-checked allocations at distinct addresses, and the generic address
//! map (which window of the 64-bit generic space belongs to which state space).
//!
//! By default a global access outside every allocation is an error (the interpreter turns it
//! into a trap). [`Memory::tolerate_unowned`] switches to the behaviour of a real GPU, where
//! memory just past a small `cuMemAlloc` buffer or past a module's globals is mapped and an
//! out-of-bounds access goes unnoticed: such accesses then succeed on a sparse, zero-initialized
//! "unowned" memory (bytes stored there read back), and every one is counted and the first one
//! is described, so that a caller can report them rather than hide them.
//!
//! A memory also carries the [`DeviceLog`] of the runs on it (`vprintf` and `__assertfail`
//! calls): both executors of a harness comparison run on their own memory, and the log
//! outlives a run that ends in a trap.

use std::collections::BTreeMap;

use crate::devrt::DeviceLog;
use crate::texture::Textures;

/// First global allocation address. Global addresses are generic addresses (identity).
pub const GLOBAL_BASE: u64 = 0x0000_0010_0000_0000;
/// Generic window of the CTA's shared memory: generic = `SHARED_WINDOW + shared address`.
pub const SHARED_WINDOW: u64 = 0x0001_0000_0000_0000;
/// Generic window of the thread's local memory.
pub const LOCAL_WINDOW: u64 = 0x0002_0000_0000_0000;
/// Generic window of the constant bank.
pub const CONST_WINDOW: u64 = 0x0003_0000_0000_0000;
/// Generic window of the parameter space.
pub const PARAM_WINDOW: u64 = 0x0004_0000_0000_0000;
/// Size of each window.
pub const WINDOW_SIZE: u64 = 0x0000_0100_0000_0000;
/// Parameter-space addresses at or above this are a thread's call-frame parameters; below, the
/// kernel's parameter buffer.
pub const FRAME_PARAM_BASE: u64 = 0x1_0000_0000;

/// Bytes of shared memory the driver reserves in every CTA (sm_80 and later): the block the
/// `%reserved_smem_offset_*` registers point into.
pub const RESERVED_SMEM_SIZE: u64 = target::RESERVED_SHARED_BYTES as u64;
/// Shared memory allocation unit: a CTA's user shared memory (`%total_smem_size`) is rounded up
/// to a multiple of it (the unit PTX documents for sm_80 and sm_90).
pub const SMEM_ALLOC_UNIT: u64 = 128;
/// `%reserved_smem_offset_1` relative to the start of the reserved block (the model's value).
pub const RESERVED_SMEM_OFFSET_1: u64 = 0x100;
/// `%reserved_smem_offset_end` relative to the start of the reserved block (the model's value).
pub const RESERVED_SMEM_END: u64 = 0x300;

/// Where the driver-reserved block lies in a CTA's shared memory. ptxas's code fixes this per
/// SM: on sm_90 it puts the user's variables after a 1 KiB block at address 0 and computes
/// `%reserved_smem_offset_begin` as 0 and `_cap` as 0x400; before sm_90 it computes `_begin`
/// as `SR_SMEMSZ - c[0x0][0x114]` (the CTA's shared size less the reserved size), so the
/// block follows the user's static and dynamic shared memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SharedLayout {
    /// Before sm_90: user shared memory from address 0, the reserved block after it.
    #[default]
    ReservedLast,
    /// sm_90 and later: the reserved block at `0..0x400`, user shared memory after it.
    ReservedFirst,
}

impl SharedLayout {
    /// The layout ptxas's code for `sm_<sm>` assumes (its `target::Profile`; SMs kiln has no
    /// profile for are the older ones, before the reserved block moved to the front).
    pub fn for_sm(sm: u32) -> SharedLayout {
        match target::Profile::of(sm).map(|p| p.shared_reserve) {
            Some(target::SharedReserve::First) => SharedLayout::ReservedFirst,
            Some(target::SharedReserve::Last) | None => SharedLayout::ReservedLast,
        }
    }

    /// Shared address of the first byte of the user's (static) shared memory.
    pub fn user_base(self) -> u64 {
        match self {
            SharedLayout::ReservedLast => 0,
            SharedLayout::ReservedFirst => RESERVED_SMEM_SIZE,
        }
    }
}

/// The `%reserved_smem_offset_*` special registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReservedSmem {
    /// `%reserved_smem_offset_0`.
    Offset0,
    /// `%reserved_smem_offset_1`.
    Offset1,
    /// `%reserved_smem_offset_begin`.
    Begin,
    /// `%reserved_smem_offset_end`.
    End,
    /// `%reserved_smem_offset_cap`.
    Cap,
}

impl ReservedSmem {
    /// The register for a PTX name (`%reserved_smem_offset_1`).
    pub fn from_name(name: &str) -> Option<ReservedSmem> {
        Some(match name.strip_prefix("%reserved_smem_offset_")? {
            "0" => ReservedSmem::Offset0,
            "1" => ReservedSmem::Offset1,
            "begin" => ReservedSmem::Begin,
            "end" => ReservedSmem::End,
            "cap" => ReservedSmem::Cap,
            _ => return None,
        })
    }
}

/// One CTA's shared memory: the user's static and dynamic shared memory and the reserved block,
/// as the interpreter and the emulator (`crates/emu`) both lay it out.
///
/// The user's part (static + dynamic bytes) is rounded up to [`SMEM_ALLOC_UNIT`]; the CTA's
/// whole shared size (`SR_SMEMSZ` in SASS) is that plus [`RESERVED_SMEM_SIZE`]. The reserved
/// block is zero at launch. In it, `%reserved_smem_offset_0` = `_begin` = its first byte,
/// `_cap` = one past its last byte, and `_1` / `_end` sit at [`RESERVED_SMEM_OFFSET_1`] /
/// [`RESERVED_SMEM_END`] from its start. Those two are driver constants a real driver chooses
/// (not observable without a GPU); the model's values are distinct from the others, so that a
/// test notices one register read for another, and leave `_1 .. _end` room for the cooperative
/// groups scratch (barrier words and 8 bytes per warp: 0x120 bytes from `_1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SharedMap {
    pub layout: SharedLayout,
    /// Bytes of the user's static and dynamic shared memory.
    pub user_bytes: u64,
}

impl SharedMap {
    /// The map for `static_bytes` of static (`.shared` variables, without any reserved block)
    /// and `dynamic_bytes` of dynamic shared memory.
    pub fn new(layout: SharedLayout, static_bytes: u64, dynamic_bytes: u64) -> SharedMap {
        SharedMap {
            layout,
            user_bytes: static_bytes + dynamic_bytes,
        }
    }

    /// `%total_smem_size`: the user's shared memory rounded up to the allocation unit.
    pub fn total_smem_size(&self) -> u64 {
        self.user_bytes.div_ceil(SMEM_ALLOC_UNIT) * SMEM_ALLOC_UNIT
    }

    /// The CTA's whole shared memory in bytes (user part, rounding and reserved block):
    /// `SR_SMEMSZ`, and the size of the CTA's shared address space.
    pub fn size(&self) -> u64 {
        self.total_smem_size() + RESERVED_SMEM_SIZE
    }

    /// Shared address of the reserved block.
    pub fn reserved_begin(&self) -> u64 {
        match self.layout {
            SharedLayout::ReservedLast => self.total_smem_size(),
            SharedLayout::ReservedFirst => 0,
        }
    }

    /// The value of a `%reserved_smem_offset_*` register.
    pub fn reserved(&self, r: ReservedSmem) -> u64 {
        let b = self.reserved_begin();
        match r {
            ReservedSmem::Offset0 | ReservedSmem::Begin => b,
            ReservedSmem::Offset1 => b + RESERVED_SMEM_OFFSET_1,
            ReservedSmem::End => b + RESERVED_SMEM_END,
            ReservedSmem::Cap => b + RESERVED_SMEM_SIZE,
        }
    }
}

/// Gap left between allocations so that running off the end of one never lands in the next.
const GAP: u64 = 0x1_0000;

/// One global allocation.
#[derive(Debug, Clone)]
pub struct Alloc {
    pub base: u64,
    pub data: Vec<u8>,
    pub name: String,
}

/// Accesses outside every allocation, when they are tolerated.
#[derive(Debug, Clone, Default)]
struct Unowned {
    /// Bytes stored outside every allocation (never-written bytes read as zero).
    bytes: BTreeMap<u64, u8>,
    /// Number of loads and stores that touched unowned memory.
    accesses: u64,
    /// Description of the first such access.
    first: Option<String>,
}

/// Bytes of the cooperative-launch workspace ([`Memory::alloc_cooperative_workspace`]).
pub const COOPERATIVE_WORKSPACE: usize = 4096;

/// Global memory.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    allocs: Vec<Alloc>,
    unowned: Option<Unowned>,
    /// The `vprintf` / `__assertfail` calls of the runs on this memory.
    log: DeviceLog,
    /// The textures kernels on this memory can fetch from ([`crate::texture`]).
    textures: Textures,
    /// The surfaces kernels on this memory can read and write ([`crate::surface`]).
    surfaces: crate::surface::Surfaces,
    /// The grid-synchronization workspace of cooperative launches, if one was allocated
    /// ([`Memory::alloc_cooperative_workspace`]).
    cooperative: Option<u64>,
}

impl Memory {
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Allocates the zeroed workspace a cooperative launch gets from the driver for grid-wide
    /// synchronization (cooperative groups' `grid.sync()` counts arrivals in it) and returns
    /// its address. Kernels read it as `%envreg1:%envreg2` (high, low word); launches on a
    /// memory without one are not cooperative and those registers are not modeled.
    pub fn alloc_cooperative_workspace(&mut self) -> u64 {
        let a = self.alloc(
            "cooperative launch workspace",
            vec![0; COOPERATIVE_WORKSPACE],
        );
        self.cooperative = Some(a);
        a
    }

    pub fn surfaces(&self) -> &crate::surface::Surfaces {
        &self.surfaces
    }

    pub fn surfaces_mut(&mut self) -> &mut crate::surface::Surfaces {
        &mut self.surfaces
    }

    /// The cooperative-launch workspace, if allocated.
    pub fn cooperative_workspace(&self) -> Option<u64> {
        self.cooperative
    }

    /// Allocates `data` and returns its address (256-byte aligned, with a guard gap).
    pub fn alloc(&mut self, name: &str, data: Vec<u8>) -> u64 {
        let base = match self.allocs.last() {
            Some(a) => (a.base + a.data.len() as u64 + GAP).div_ceil(256) * 256,
            None => GLOBAL_BASE,
        };
        self.allocs.push(Alloc {
            base,
            data,
            name: name.to_string(),
        });
        base
    }

    /// The textures of this memory (handles, bound texture references).
    pub fn textures(&self) -> &Textures {
        &self.textures
    }

    /// The textures of this memory, to add textures and bind references.
    pub fn textures_mut(&mut self) -> &mut Textures {
        &mut self.textures
    }

    /// The records of the device-runtime calls (`vprintf`, `__assertfail`) made by the runs
    /// on this memory, in the order they were made ([`crate::devrt`]). Kept after a trap.
    pub fn device_log(&self) -> &DeviceLog {
        &self.log
    }

    /// The log, for the executors that append to it.
    pub fn device_log_mut(&mut self) -> &mut DeviceLog {
        &mut self.log
    }

    /// The allocation starting at `base`.
    pub fn buffer(&self, base: u64) -> Option<&Alloc> {
        self.allocs.iter().find(|a| a.base == base)
    }

    fn find(&self, addr: u64, len: u64) -> Option<(usize, usize)> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        let a = self.allocs.get(i.checked_sub(1)?)?;
        let off = addr - a.base;
        (off.checked_add(len)? <= a.data.len() as u64).then_some((i - 1, off as usize))
    }

    /// From now on, accesses outside every allocation succeed on unowned memory and are
    /// counted ([`Memory::unowned_accesses`]) instead of failing.
    pub fn tolerate_unowned(&mut self) {
        self.unowned.get_or_insert_with(Unowned::default);
    }

    /// How many accesses touched memory outside every allocation (only counted after
    /// [`Memory::tolerate_unowned`]), and a description of the first.
    pub fn unowned_accesses(&self) -> (u64, Option<&str>) {
        match &self.unowned {
            Some(u) => (u.accesses, u.first.as_deref()),
            None => (0, None),
        }
    }

    /// Records an access outside every allocation; `None` when they are not tolerated.
    fn unowned(&mut self, kind: &str, addr: u64, len: usize) -> Option<&mut Unowned> {
        self.unowned.as_ref()?;
        let what = self.describe(addr);
        let u = self.unowned.as_mut()?;
        u.accesses += 1;
        u.first
            .get_or_insert_with(|| format!("{len}-byte {kind} at {what}"));
        Some(u)
    }

    /// Reads `out.len()` bytes at `addr`; `None` if any byte is outside every allocation
    /// (unless such accesses are tolerated).
    pub fn read(&mut self, addr: u64, out: &mut [u8]) -> Option<()> {
        match self.find(addr, out.len() as u64) {
            Some((i, off)) => out.copy_from_slice(&self.allocs[i].data[off..off + out.len()]),
            None => {
                let u = self.unowned("load", addr, out.len())?;
                for (k, b) in out.iter_mut().enumerate() {
                    *b = u
                        .bytes
                        .get(&addr.wrapping_add(k as u64))
                        .copied()
                        .unwrap_or(0);
                }
            }
        }
        Some(())
    }

    /// Writes `bytes` at `addr`; `None` if out of bounds (unless such accesses are tolerated).
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Option<()> {
        match self.find(addr, bytes.len() as u64) {
            Some((i, off)) => self.allocs[i].data[off..off + bytes.len()].copy_from_slice(bytes),
            None => {
                let u = self.unowned("store", addr, bytes.len())?;
                for (k, b) in bytes.iter().enumerate() {
                    u.bytes.insert(addr.wrapping_add(k as u64), *b);
                }
            }
        }
        Some(())
    }

    /// Describes where an address lies, for trap messages.
    pub fn describe(&self, addr: u64) -> String {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        match i.checked_sub(1).and_then(|i| self.allocs.get(i)) {
            Some(a) => format!(
                "{addr:#x} is {} bytes past the start of `{}` ({} bytes at {:#x})",
                addr - a.base,
                a.name,
                a.data.len(),
                a.base
            ),
            None => format!("{addr:#x} is below every allocation"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked() {
        let mut m = Memory::new();
        let a = m.alloc("a", vec![1, 2, 3, 4]);
        let b = m.alloc("b", vec![0; 8]);
        assert!(b >= a + 4 + GAP);
        let mut x = [0u8; 4];
        assert!(m.read(a, &mut x).is_some());
        assert_eq!(x, [1, 2, 3, 4]);
        assert!(m.read(a + 1, &mut x).is_none());
        assert!(m.read(a - 1, &mut [0u8; 1]).is_none());
        assert!(m.write(b + 4, &[9; 4]).is_some());
        assert!(m.write(b + 5, &[9; 4]).is_none());
        assert!(m.describe(a + 7).contains("7 bytes past the start of `a`"));
        assert_eq!(m.unowned_accesses(), (0, None));
    }

    #[test]
    fn unowned_accesses_are_counted_when_tolerated() {
        let mut m = Memory::new();
        let a = m.alloc("a", vec![1, 2, 3, 4]);
        m.tolerate_unowned();
        let mut x = [9u8; 4];
        // Never-written unowned bytes read as zero; stored ones read back.
        assert!(m.read(a + 4, &mut x).is_some());
        assert_eq!(x, [0; 4]);
        assert!(m.write(a + 6, &[7, 8]).is_some());
        assert!(m.read(a + 4, &mut x).is_some());
        assert_eq!(x, [0, 0, 7, 8]);
        // Accesses inside an allocation are not counted, and the allocation is untouched.
        assert!(m.read(a, &mut x).is_some());
        assert_eq!(x, [1, 2, 3, 4]);
        let (n, first) = m.unowned_accesses();
        assert_eq!(n, 3);
        assert!(first.unwrap().starts_with("4-byte load at"), "{first:?}");
        assert!(first.unwrap().contains("4 bytes past the start of `a`"));
    }
}
