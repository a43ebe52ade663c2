//! The interpreter as a sanitizer (`kiln run --check`): a CPU-side racecheck and initcheck for
//! PTX.
//!
//! While a CTA runs, every shared-memory byte remembers its last write and the last reads of
//! up to two other warps since then, each with the thread, PTX line and the thread's *barrier
//! generation* (how many CTA barriers it had passed). Two accesses of different warps to a byte,
//! at least one a write and not both atomic, are a **data race** unless a barrier both threads
//! took part in lies between them: the later thread's generation is above the earlier access's.
//! Threads of one warp are taken as ordered (the interpreter runs a warp's lanes in lockstep,
//! as warp-synchronous code assumes). A read of a shared or local byte nothing wrote is an
//! **uninitialized read**. Global memory is not tracked here: the harness catches races whose
//! effect shows by running the launch in another thread interleaving
//! ([`crate::Schedule::Interleaved`]). Barrier misuse that blocks threads forever is reported
//! by the interpreter as a deadlock; out-of-bounds accesses trap.
//!
//! An asynchronous copy (`cp.async`) writes its shared destination at an unknown time until
//! the copying thread waits for its group (`cp.async.wait_group N` once at most N later groups
//! are pending, `cp.async.wait_all`): any access to those bytes before that wait, by any thread
//! (the copying one included), is an **unwaited asynchronous copy** finding. (The interpreter
//! performs the copy at once; this is what makes kernels that read early comparable by
//! nothing.)
//!
//! Synchronization through memory (atomics, fences, volatile and acquire/release accesses:
//! flags, spin-waits, cooperative groups' barriers) orders everything before it, and a warp's
//! `bar.warp.sync` or `.sync` collective joins its lanes: an approximation that can miss a
//! race across such synchronization but never reports one it orders.
//!
//! Findings are grouped by kind and PTX lines, with the first threads involved and a count.

/// What a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// A read of shared memory another warp wrote without a barrier between.
    ReadAfterWrite,
    /// A write of shared memory another warp read without a barrier between.
    WriteAfterRead,
    /// Two writes of shared memory by different warps without a barrier between.
    WriteAfterWrite,
    /// A read of shared memory nothing wrote in this CTA.
    UninitializedShared,
    /// A read of a thread's local memory it never wrote.
    UninitializedLocal,
    /// An access of shared bytes a `cp.async` writes before its thread waited for it.
    UnwaitedAsyncCopy,
}

impl FindingKind {
    pub fn describe(self) -> &'static str {
        match self {
            FindingKind::ReadAfterWrite => "data race (read after write) on shared memory",
            FindingKind::WriteAfterRead => "data race (write after read) on shared memory",
            FindingKind::WriteAfterWrite => "data race (write after write) on shared memory",
            FindingKind::UninitializedShared => "read of uninitialized shared memory",
            FindingKind::UninitializedLocal => "read of uninitialized local memory",
            FindingKind::UnwaitedAsyncCopy => {
                "access of a cp.async destination before its thread waited for the copy \
                 (cp.async.wait_group/wait_all)"
            }
        }
    }

    /// Whether the finding is a race (the others are uninitialized reads).
    pub fn is_race(self) -> bool {
        matches!(
            self,
            FindingKind::ReadAfterWrite
                | FindingKind::WriteAfterRead
                | FindingKind::WriteAfterWrite
                | FindingKind::UnwaitedAsyncCopy
        )
    }
}

/// One finding (the first occurrence of its kind and lines; `count` accesses in all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    /// PTX line of the access that completed the finding.
    pub line: u32,
    /// PTX line of the earlier, conflicting access (races).
    pub other_line: Option<u32>,
    pub cta: [u32; 3],
    pub thread: [u32; 3],
    pub other_thread: Option<[u32; 3]>,
    /// Byte offset in the space (shared: from the CTA's shared window; local: in the frame).
    pub offset: u64,
    pub count: u64,
}

impl Finding {
    /// A one-line description (without the source position).
    pub fn message(&self) -> String {
        let t = |t: [u32; 3]| format!("({},{},{})", t[0], t[1], t[2]);
        let mut s = format!(
            "{} at byte {:#x}: thread {} of CTA {}",
            self.kind.describe(),
            self.offset,
            t(self.thread),
            t(self.cta)
        );
        if let (Some(o), Some(l)) = (self.other_thread, self.other_line) {
            s.push_str(&format!(", conflicting with thread {} at line {l}", t(o)));
        }
        if self.count > 1 {
            s.push_str(&format!(" ({} accesses)", self.count));
        }
        s
    }
}

/// The `thread` of the driver's initialization (ordered before every access).
const DRIVER: u32 = u32::MAX;

/// One access as the shadow memory remembers it.
#[derive(Debug, Clone, Copy)]
struct Access {
    thread: u32,
    warp: u32,
    generation: u64,
    line: u32,
    atomic: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    write: Option<Access>,
    reads: [Option<Access>; 2],
    /// A `cp.async` whose thread has not waited for it writes this byte.
    pending: Option<Access>,
}

/// A thread's asynchronous copies not yet waited for: (shared offset, bytes) each.
#[derive(Debug, Clone, Default)]
struct AsyncCopies {
    /// Issued since the last `cp.async.commit_group`.
    uncommitted: Vec<(u64, usize)>,
    /// Committed groups, oldest first.
    groups: std::collections::VecDeque<Vec<(u64, usize)>>,
}

/// A CTA's sanitizer state.
#[derive(Debug)]
pub(crate) struct CtaSanitizer {
    cells: Vec<Cell>,
    /// Per thread (linear index): its asynchronous copies not yet waited for.
    async_copies: Vec<AsyncCopies>,
    /// Per thread (linear index): the generation of the last barrier it passed.
    generation: Vec<u64>,
    /// Per thread: which local bytes it wrote.
    local_written: Vec<Vec<bool>>,
    next_generation: u64,
    /// Per thread: its `%tid`.
    tids: Vec<[u32; 3]>,
    cta: [u32; 3],
    findings: Vec<Finding>,
}

impl CtaSanitizer {
    pub(crate) fn new(shared_bytes: usize, tids: Vec<[u32; 3]>, cta: [u32; 3]) -> Self {
        CtaSanitizer {
            cells: vec![Cell::default(); shared_bytes],
            async_copies: vec![AsyncCopies::default(); tids.len()],
            generation: vec![0; tids.len()],
            local_written: vec![Vec::new(); tids.len()],
            next_generation: 1,
            tids,
            cta,
            findings: Vec::new(),
        }
    }

    /// Threads `threads` (linear indices) completed a barrier together.
    pub(crate) fn barrier(&mut self, threads: impl Iterator<Item = usize>) {
        let g = self.next_generation;
        self.next_generation += 1;
        for t in threads {
            if let Some(x) = self.generation.get_mut(t) {
                *x = g;
            }
        }
    }

    /// `thread` synchronized through memory (an atomic, a fence, a volatile or acquire/release
    /// access): every access made so far, by any thread, counts as ordered before its later
    /// ones. Release and acquire are not told apart, so a race across such synchronization
    /// can be missed, never invented (flags and spin-waits, cooperative groups' barriers).
    pub(crate) fn synchronize(&mut self, thread: usize) {
        let g = self.next_generation;
        self.next_generation += 1;
        if let Some(x) = self.generation.get_mut(thread) {
            *x = g;
        }
    }

    /// Threads of one warp synchronized (`bar.warp.sync`, a `.sync` collective): each takes
    /// the latest generation among them.
    pub(crate) fn warp_sync(&mut self, threads: &[usize]) {
        let g = threads
            .iter()
            .filter_map(|&t| self.generation.get(t).copied())
            .max()
            .unwrap_or(0);
        for &t in threads {
            if let Some(x) = self.generation.get_mut(t) {
                *x = g;
            }
        }
    }

    fn report(
        &mut self,
        kind: FindingKind,
        line: u32,
        thread: usize,
        offset: u64,
        other: Option<Access>,
    ) {
        let other_line = other.map(|a| a.line);
        if let Some(f) = self
            .findings
            .iter_mut()
            .find(|f| f.kind == kind && f.line == line && f.other_line == other_line)
        {
            f.count += 1;
            return;
        }
        self.findings.push(Finding {
            kind,
            line,
            other_line,
            cta: self.cta,
            thread: self.tids[thread],
            other_thread: other.map(|a| self.tids[a.thread as usize]),
            offset,
            count: 1,
        });
    }

    /// Whether `earlier` happened before an access by `thread` now.
    fn ordered(&self, earlier: &Access, thread: usize, warp: u32) -> bool {
        earlier.thread == DRIVER
            || earlier.warp == warp
            || self.generation[thread] > earlier.generation
    }

    /// Shared bytes the driver initializes before the CTA starts (the reserved block).
    pub(crate) fn initialized(&mut self, range: std::ops::Range<u64>) {
        let me = Access {
            thread: DRIVER,
            warp: DRIVER,
            generation: 0,
            line: 0,
            atomic: false,
        };
        for at in range {
            if let Some(c) = self.cells.get_mut(at as usize) {
                c.write = Some(me);
            }
        }
    }

    /// A shared-memory access of `len` bytes at `offset`.
    pub(crate) fn shared(
        &mut self,
        thread: usize,
        offset: u64,
        len: usize,
        line: u32,
        write: bool,
        atomic: bool,
    ) {
        let warp = (thread / 32) as u32;
        let me = Access {
            thread: thread as u32,
            warp,
            generation: self.generation[thread],
            line,
            atomic,
        };
        for k in 0..len as u64 {
            let at = (offset + k) as usize;
            let Some(cell) = self.cells.get(at).copied() else {
                continue;
            };
            let conflict = |a: &Access| !(self.ordered(a, thread, warp) || a.atomic && atomic);
            let mut finding = None;
            if let Some(copy) = cell.pending {
                finding = Some((FindingKind::UnwaitedAsyncCopy, Some(copy)));
            } else if write {
                if let Some(w) = cell.write.filter(|w| conflict(w)) {
                    finding = Some((FindingKind::WriteAfterWrite, Some(w)));
                } else if let Some(r) = cell.reads.iter().flatten().find(|r| conflict(r)) {
                    finding = Some((FindingKind::WriteAfterRead, Some(*r)));
                }
            } else {
                match cell.write {
                    None if !atomic => finding = Some((FindingKind::UninitializedShared, None)),
                    Some(w) if conflict(&w) => {
                        finding = Some((FindingKind::ReadAfterWrite, Some(w)));
                    }
                    _ => {}
                }
            }
            if let Some((kind, other)) = finding {
                self.report(kind, line, thread, offset + k, other);
                // One finding per access (not one per byte).
                self.update(at, me, write);
                for j in k + 1..len as u64 {
                    self.update((offset + j) as usize, me, write);
                }
                return;
            }
            self.update(at, me, write);
        }
    }

    fn update(&mut self, at: usize, me: Access, write: bool) {
        let Some(cell) = self.cells.get_mut(at) else {
            return;
        };
        if write {
            cell.write = Some(me);
            cell.reads = [None, None];
            if me.atomic {
                // An atomic also reads: later atomics of other warps do not race with it.
                cell.reads[0] = Some(me);
            }
        } else if let Some(slot) = cell
            .reads
            .iter_mut()
            .find(|r| r.is_none_or(|r| r.warp == me.warp))
        {
            *slot = Some(me);
        } else {
            // Keep the newest read of two other warps.
            cell.reads[0] = cell.reads[1];
            cell.reads[1] = Some(me);
        }
    }

    /// `thread`'s `cp.async` wrote `len` shared bytes at `offset` (recorded as a write by
    /// [`CtaSanitizer::shared`] first): they stay pending until the thread waits for the copy.
    pub(crate) fn async_copy(&mut self, thread: usize, offset: u64, len: usize, line: u32) {
        let me = Access {
            thread: thread as u32,
            warp: (thread / 32) as u32,
            generation: self.generation[thread],
            line,
            atomic: false,
        };
        for at in offset..offset + len as u64 {
            if let Some(c) = self.cells.get_mut(at as usize) {
                c.pending = Some(me);
            }
        }
        if let Some(a) = self.async_copies.get_mut(thread) {
            a.uncommitted.push((offset, len));
        }
    }

    /// `cp.async.commit_group` by `thread`.
    pub(crate) fn async_commit(&mut self, thread: usize) {
        if let Some(a) = self.async_copies.get_mut(thread) {
            let group = std::mem::take(&mut a.uncommitted);
            a.groups.push_back(group);
        }
    }

    /// `cp.async.wait_group n` by `thread` (`None`: `cp.async.wait_all`, which commits first):
    /// the copies of all but the `n` newest committed groups are complete.
    pub(crate) fn async_wait(&mut self, thread: usize, n: Option<usize>) {
        if n.is_none() {
            self.async_commit(thread);
        }
        let keep = n.unwrap_or(0);
        let Some(a) = self.async_copies.get_mut(thread) else {
            return;
        };
        let mut done = Vec::new();
        while a.groups.len() > keep {
            done.extend(a.groups.pop_front().unwrap_or_default());
        }
        for (offset, len) in done {
            for at in offset..offset + len as u64 {
                if let Some(c) = self.cells.get_mut(at as usize)
                    && c.pending.is_some_and(|p| p.thread == thread as u32)
                {
                    c.pending = None;
                }
            }
        }
    }

    /// `cp.async.mbarrier.arrive` by `thread`: the barrier's phase cannot complete before every
    /// earlier copy of the thread, committed or not, has; a thread that waits for the phase
    /// may read them (taken as complete here, at the arrival).
    pub(crate) fn async_arrive(&mut self, thread: usize) {
        self.async_wait(thread, None);
    }

    /// A local-memory access of `len` bytes at `offset` in `thread`'s frame.
    pub(crate) fn local(&mut self, thread: usize, offset: u64, len: usize, line: u32, write: bool) {
        let end = offset as usize + len;
        let written = &mut self.local_written[thread];
        if written.len() < end {
            written.resize(end, false);
        }
        if write {
            written[offset as usize..end].fill(true);
        } else if !written[offset as usize..end].iter().all(|&b| b) {
            self.report(FindingKind::UninitializedLocal, line, thread, offset, None);
        }
    }

    pub(crate) fn into_findings(self) -> Vec<Finding> {
        self.findings
    }
}
