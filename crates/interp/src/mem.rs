//! Global memory: bounds-checked allocations at distinct addresses, and the generic address
//! map (which window of the 64-bit generic space belongs to which state space).
//!
//! By default a global access outside every allocation is an error (the interpreter turns it
//! into a trap). [`Memory::tolerate_unowned`] switches to the behaviour of a real GPU, where
//! memory just past a small `cuMemAlloc` buffer or past a module's globals is mapped and an
//! out-of-bounds access goes unnoticed: such accesses then succeed on a sparse, zero-initialized
//! "unowned" memory (bytes stored there read back), and every one is counted and the first one
//! is described, so that a caller can report them rather than hide them.

use std::collections::BTreeMap;

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

/// Global memory.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    allocs: Vec<Alloc>,
    unowned: Option<Unowned>,
}

impl Memory {
    pub fn new() -> Memory {
        Memory::default()
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
