//! Per-thread memos of the last inputs parsed, lowered or decoded.
//!
//! The corpus stages and `gpu-check` check every kernel of a file in turn, each with several
//! seeds and sometimes several launch shapes, on the same PTX text and the same cubins. Without
//! these memos every check parsed and lowered the whole file again (quadratic in the kernels
//! of a file). Entries are keyed by the full input (compared byte for byte, so a hit is never
//! a different input) and kept per thread, a few at a time.

use std::cell::RefCell;
use std::rc::Rc;

/// Entries kept per kind and thread: the PTX of the file being checked, and its cubins (kiln's
/// and ptxas's).
const KEEP: usize = 3;

struct Memo<T> {
    entries: Vec<(Vec<u8>, Rc<T>)>,
}

impl<T> Memo<T> {
    const fn new() -> Memo<T> {
        Memo {
            entries: Vec::new(),
        }
    }

    fn get_or(&mut self, key: &[u8], make: impl FnOnce() -> T) -> Rc<T> {
        if let Some(i) = self.entries.iter().position(|(k, _)| k == key) {
            // Most recently used last.
            let e = self.entries.remove(i);
            let v = e.1.clone();
            self.entries.push(e);
            return v;
        }
        let v = Rc::new(make());
        if self.entries.len() == KEEP {
            self.entries.remove(0);
        }
        self.entries.push((key.to_vec(), v.clone()));
        v
    }
}

thread_local! {
    static PARSES: RefCell<Memo<syntax::Parse>> = const { RefCell::new(Memo::new()) };
    static PROGRAMS: RefCell<Memo<Result<interp::Program, interp::LowerError>>> =
        const { RefCell::new(Memo::new()) };
    static IMAGES: RefCell<Memo<Result<emu::load::Image, emu::load::LoadError>>> =
        const { RefCell::new(Memo::new()) };
}

/// `syntax::parse(ptx)`, memoized.
pub fn parse(ptx: &str) -> syntax::Parse {
    PARSES.with(|m| {
        m.borrow_mut()
            .get_or(ptx.as_bytes(), || syntax::parse(ptx))
            .as_ref()
            .clone()
    })
}

/// `interp::Program::from_text(ptx)`, memoized (callers clone the program to run it).
pub fn program(ptx: &str) -> Rc<Result<interp::Program, interp::LowerError>> {
    PROGRAMS.with(|m| {
        m.borrow_mut()
            .get_or(ptx.as_bytes(), || interp::Program::from_text(ptx))
    })
}

/// `emu::load::decode(cubin)`, memoized.
pub fn image(cubin: &[u8]) -> Rc<Result<emu::load::Image, emu::load::LoadError>> {
    IMAGES.with(|m| m.borrow_mut().get_or(cubin, || emu::load::decode(cubin)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_are_the_same_input_and_old_entries_go() {
        let mut m: Memo<usize> = Memo::new();
        let mut made = 0;
        let mut get = |m: &mut Memo<usize>, k: &str| {
            *m.get_or(k.as_bytes(), || {
                made += 1;
                k.len()
            })
        };
        assert_eq!(get(&mut m, "a"), 1);
        assert_eq!(get(&mut m, "bb"), 2);
        assert_eq!(get(&mut m, "a"), 1);
        assert_eq!(get(&mut m, "ccc"), 3);
        assert_eq!(get(&mut m, "dddd"), 4); // evicts "bb", the least recently used
        assert_eq!(get(&mut m, "bb"), 2);
        assert_eq!(made, 5);
    }
}
