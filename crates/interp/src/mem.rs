//! Global memory: bounds-checked allocations at distinct addresses, and the generic address
//! map (which window of the 64-bit generic space belongs to which state space).

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

/// Global memory.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    allocs: Vec<Alloc>,
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

    /// Reads `out.len()` bytes at `addr`; `None` if any byte is outside every allocation.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Option<()> {
        let (i, off) = self.find(addr, out.len() as u64)?;
        out.copy_from_slice(&self.allocs[i].data[off..off + out.len()]);
        Some(())
    }

    /// Writes `bytes` at `addr`; `None` if out of bounds.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Option<()> {
        let (i, off) = self.find(addr, bytes.len() as u64)?;
        self.allocs[i].data[off..off + bytes.len()].copy_from_slice(bytes);
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
    }
}
