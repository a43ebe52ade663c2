//! The analysis shared by the checker and the learner: a control-flow graph over one code
//! section and a forward dataflow of what is in flight (fixed-latency results still in the
//! pipeline, operations pending on scoreboards), with every dependence reported to an
//! [`Observer`] in a final pass over the fixed point.
//!
//! Rules (see `docs/arch/hazard.md`):
//! - Distance between two instructions = the sum of the stall fields from the earlier one up
//!   to (not including) the later one, along the path. Waiting on a scoreboard is not counted
//!   as elapsed time.
//! - At a join (branch target, return point) the states of all predecessors are merged
//!   pessimistically: every pending item of any predecessor, with the smallest elapsed time.
//! - `CALL.REL` flows into the callee and also to the next instruction; `RET` flows to the
//!   instruction after every `CALL.REL` of its own subroutine (a call target starts a
//!   subroutine, which runs to the next call target), and after calls through registers. `EXIT`/`RET`/unconditional `BRA` end
//!   their path; indirect jumps (`BRX`) end it too, and blocks no edge reaches start empty.
//! - A guarded write may not happen: it adds a pending item but removes none. Two
//!   instructions guarded by the same predicate with opposite senses (`@P0` / `@!P0`) never
//!   both execute, so no dependence links them until the predicate is written again.
//! - Waiting for an instruction's write scoreboard also releases its read scoreboard (its
//!   sources were read before its result arrived). A read scoreboard protects general
//!   registers only: predicates and uniform registers are read at issue.

use std::collections::BTreeMap;

use sass::Control;

use crate::effects::{Effects, Flow, REG_KEYS, RegRange};

/// One instruction as the analysis sees it.
#[derive(Debug, Clone)]
pub struct Node {
    pub pc: u64,
    pub control: Control,
    /// `None` when the word could not be decoded (no register effects known).
    pub effects: Option<Effects>,
    /// The guard predicate (dense register key, negated), `None` when unguarded.
    pub guard: Option<(u16, bool)>,
}

/// A guard predicate as (dense register key, negated).
pub type GuardKey = Option<(u16, bool)>;

/// Whether two guards can never both be true (same predicate, opposite senses), assuming the
/// predicate was not written in between.
fn exclusive(a: GuardKey, b: GuardKey) -> bool {
    matches!((a, b), (Some((x, nx)), Some((y, ny))) if x == y && nx != ny)
}

/// What a pending fixed-latency item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PendKind {
    /// A result without a write scoreboard, still within its latency.
    Write,
    /// A source register of an instruction without a read scoreboard (for WAR distances).
    Read,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pend {
    key: u16,
    kind: PendKind,
    inst: u32,
    guard: GuardKey,
    elapsed: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SbPend {
    inst: u32,
    /// true: the instruction's writes are pending; false: its reads are.
    write: bool,
    /// The instruction's guard while its predicate is unchanged.
    guard: GuardKey,
    /// How many later operations were put on the same scoreboard (smallest over paths).
    newer: u8,
}

/// A result of a variable-latency instruction that set no write scoreboard. It is complete
/// once a later scoreboarded instruction that the hardware completes after it (`via`) has
/// been waited on ([`Rules::completes_after`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Floating {
    key: u16,
    inst: u32,
    guard: GuardKey,
    /// The waited-on instruction through which it completed (on every path), if it did.
    done: Option<u32>,
    /// While not done: later scoreboarded instructions (pending on every path) whose
    /// completion completes it (the first of each class, at most [`MAX_VIAS`]), sorted.
    vias: Vec<u32>,
}

/// The class name standing for "the producer's own read scoreboard" in
/// [`Rules::completes_after`]: results that are complete once the producer has read its
/// sources (e.g. the predicate of `ATOM`).
pub const SELF_READ: &str = "@read";

/// Most later instructions a floating result is tied to.
const MAX_VIAS: usize = 8;

/// The dataflow state before an instruction.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct State {
    pend: Vec<Pend>,
    floating: Vec<Floating>,
    sb: [Vec<SbPend>; 6],
    /// Per scoreboard: the last instruction that set it and the cycles since.
    set: [Option<(u32, u16)>; 6],
}

impl State {
    /// Merges `o` into `self` (union, smallest elapsed/newer); returns whether it changed.
    fn merge(&mut self, o: &State) -> bool {
        let before = self.clone();
        let mut m: BTreeMap<(u16, PendKind, u32, GuardKey), u16> = BTreeMap::new();
        for p in self.pend.iter().chain(&o.pend) {
            let e = m
                .entry((p.key, p.kind, p.inst, p.guard))
                .or_insert(p.elapsed);
            *e = (*e).min(p.elapsed);
        }
        self.pend = m
            .into_iter()
            .map(|((key, kind, inst, guard), elapsed)| Pend {
                key,
                kind,
                inst,
                guard,
                elapsed,
            })
            .collect();
        // One entry per result: done only when done on every path; otherwise completed by the
        // vias pending on every path that is not done.
        let mut m: BTreeMap<(u16, u32, GuardKey), Floating> = BTreeMap::new();
        for f in self.floating.iter().chain(&o.floating) {
            match m.entry((f.key, f.inst, f.guard)) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(f.clone());
                }
                std::collections::btree_map::Entry::Occupied(mut o) => {
                    let a = o.get_mut();
                    match (a.done, f.done) {
                        (Some(x), Some(y)) => a.done = Some(x.min(y)),
                        (Some(_), None) => {
                            a.done = None;
                            a.vias = f.vias.clone();
                        }
                        (None, Some(_)) => {}
                        (None, None) => a.vias.retain(|v| f.vias.contains(v)),
                    }
                }
            }
        }
        self.floating = m.into_values().collect();
        for s in 0..6 {
            let mut m: BTreeMap<(u32, bool, GuardKey), u8> = BTreeMap::new();
            for p in self.sb[s].iter().chain(&o.sb[s]) {
                let e = m.entry((p.inst, p.write, p.guard)).or_insert(p.newer);
                *e = (*e).min(p.newer);
            }
            self.sb[s] = m
                .into_iter()
                .map(|((inst, write, guard), newer)| SbPend {
                    inst,
                    write,
                    guard,
                    newer,
                })
                .collect();
            self.set[s] = match (self.set[s], o.set[s]) {
                (Some(a), Some(b)) => Some(if b.1 < a.1 { b } else { a }),
                (a, b) => a.or(b),
            };
        }
        *self != before
    }
}

/// The facts the analysis needs about latency classes.
pub trait Rules {
    /// Whether results of `class` arrive after a variable latency (scoreboarded).
    fn is_variable(&self, class: &str) -> bool;
    /// Whether an unscoreboarded variable-latency result of `first` is complete once a later
    /// scoreboarded instruction of class `later` is.
    fn completes_after(&self, first: &str, later: &str) -> bool;
}

/// Receives every dependence the analysis finds (in the final pass). Indices are
/// instruction indices in the section.
pub trait Observer {
    /// `consumer` reads or writes register `key`, the result of variable-latency `producer`
    /// that set no write scoreboard: complete through scoreboarded `via` (`Some`, waited on)
    /// or not known to be complete (`None`).
    fn floating(&mut self, producer: usize, consumer: usize, key: u16, via: Option<usize>);
    /// `consumer` reads register `key` written by fixed-latency `producer` `elapsed` cycles
    /// earlier (no write scoreboard on the producer).
    fn raw_fixed(&mut self, producer: usize, consumer: usize, key: u16, elapsed: u16);
    /// `consumer` reads (`write` = false) or writes (`write` = true) register `key` that
    /// `producer` writes and that is still pending on scoreboard `sb`.
    fn raw_sb(&mut self, producer: usize, consumer: usize, key: u16, sb: u8, write: bool);
    /// `writer` writes register `key` that `reader` reads and that is still pending on read
    /// scoreboard `sb`.
    fn war_sb(&mut self, reader: usize, writer: usize, key: u16, sb: u8);
    /// `writer` writes register `key` read by `reader` (no read scoreboard) `elapsed` cycles
    /// earlier.
    fn war_fixed(&mut self, reader: usize, writer: usize, key: u16, elapsed: u16);
    /// `waiter` waits on scoreboard `sb` last set by `setter` `elapsed` cycles earlier.
    fn sb_wait(&mut self, setter: usize, waiter: usize, sb: u8, elapsed: u16);
    /// `inst` puts an operation on scoreboard `sb` while `pending` operations are on it.
    fn sb_reuse(&mut self, inst: usize, sb: u8, pending: &[usize]);
}

/// Pending fixed-latency items older than this many cycles are dropped.
pub const HORIZON: u16 = 48;

fn stall(c: &Control) -> u16 {
    u16::from(c.stall)
}

/// Runs the analysis over one section and reports dependences to `obs`.
pub fn analyze(nodes: &[Node], rules: &dyn Rules, obs: &mut dyn Observer) {
    if nodes.is_empty() {
        return;
    }
    let n = nodes.len();
    let index_of = |pc: u64| -> Option<usize> { nodes.binary_search_by_key(&pc, |x| x.pc).ok() };
    // Return points: the instruction after each CALL.REL, with the callee it returns from
    // (`None` for a call through a register).
    let mut returns: Vec<(usize, Option<usize>)> = Vec::new();
    let mut leader = vec![false; n];
    leader[0] = true;
    for (i, nd) in nodes.iter().enumerate() {
        let Some(e) = &nd.effects else { continue };
        match e.flow {
            Flow::Next => {}
            Flow::Branch { target, .. } => {
                if let Some(t) = index_of(target) {
                    leader[t] = true;
                }
                if i + 1 < n {
                    leader[i + 1] = true;
                }
            }
            Flow::Call { target } => {
                let t = target.and_then(index_of);
                if let Some(t) = t {
                    leader[t] = true;
                }
                if i + 1 < n {
                    leader[i + 1] = true;
                    returns.push((i + 1, t));
                }
            }
            _ => {
                if i + 1 < n {
                    leader[i + 1] = true;
                }
            }
        }
    }
    let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
    // Subroutines: each call target starts one, which runs to the next one (or the end). A
    // `RET` returns to the calls of its own subroutine only; a call through a register may
    // reach any of them.
    let mut callees: Vec<usize> = returns.iter().filter_map(|r| r.1).collect();
    callees.sort_unstable();
    callees.dedup();
    let callee_of = |i: usize| -> Option<usize> {
        let k = callees.partition_point(|&c| c <= i);
        (k > 0).then(|| callees[k - 1])
    };
    let block_of = |i: usize| starts.partition_point(|&s| s <= i) - 1;
    let nb = starts.len();
    let end = |b: usize| if b + 1 < nb { starts[b + 1] } else { n };
    let mut succ: Vec<Vec<usize>> = Vec::with_capacity(nb);
    let mut has_pred = vec![false; nb];
    for b in 0..nb {
        let last = end(b) - 1;
        let fall = (last + 1 < n).then(|| block_of(last + 1));
        let mut s = Vec::new();
        match nodes[last].effects.as_ref().map(|e| e.flow) {
            None | Some(Flow::Next) => s.extend(fall),
            Some(Flow::Branch {
                target,
                conditional,
            }) => {
                if let Some(t) = index_of(target) {
                    s.push(block_of(t));
                }
                if conditional {
                    s.extend(fall);
                }
            }
            Some(Flow::Call { target }) => {
                if let Some(t) = target.and_then(index_of) {
                    s.push(block_of(t));
                }
                s.extend(fall);
            }
            Some(Flow::Return { conditional }) => {
                let own = callee_of(last);
                s.extend(
                    returns
                        .iter()
                        .filter(|(_, t)| own.is_none() || t.is_none() || *t == own)
                        .map(|&(r, _)| block_of(r)),
                );
                if conditional {
                    s.extend(fall);
                }
            }
            Some(Flow::Exit { conditional }) => {
                if conditional {
                    s.extend(fall);
                }
            }
            Some(Flow::Indirect) => {}
        }
        s.sort_unstable();
        s.dedup();
        for &t in &s {
            has_pred[t] = true;
        }
        succ.push(s);
    }
    // Fixed point.
    let mut input: Vec<Option<State>> = vec![None; nb];
    let mut work: Vec<usize> = Vec::new();
    for b in (0..nb).rev() {
        if b == 0 || !has_pred[b] {
            input[b] = Some(State::default());
            work.push(b);
        }
    }
    let mut quiet = Quiet;
    let mut in_work = vec![false; nb];
    for &b in &work {
        in_work[b] = true;
    }
    while let Some(b) = work.pop() {
        in_work[b] = false;
        let mut st = input[b].clone().unwrap_or_default();
        for i in starts[b]..end(b) {
            step(nodes, i, &mut st, rules, &mut quiet);
        }
        for &t in &succ[b] {
            let changed = match &mut input[t] {
                Some(s) => s.merge(&st),
                None => {
                    input[t] = Some(st.clone());
                    true
                }
            };
            if changed && !in_work[t] {
                in_work[t] = true;
                work.push(t);
            }
        }
    }
    // Final pass with the observer.
    for b in 0..nb {
        let mut st = input[b].clone().unwrap_or_default();
        for i in starts[b]..end(b) {
            step(nodes, i, &mut st, rules, obs);
        }
    }
}

struct Quiet;

impl Observer for Quiet {
    fn floating(&mut self, _: usize, _: usize, _: u16, _: Option<usize>) {}
    fn raw_fixed(&mut self, _: usize, _: usize, _: u16, _: u16) {}
    fn raw_sb(&mut self, _: usize, _: usize, _: u16, _: u8, _: bool) {}
    fn war_sb(&mut self, _: usize, _: usize, _: u16, _: u8) {}
    fn war_fixed(&mut self, _: usize, _: usize, _: u16, _: u16) {}
    fn sb_wait(&mut self, _: usize, _: usize, _: u8, _: u16) {}
    fn sb_reuse(&mut self, _: usize, _: u8, _: &[usize]) {}
}

fn covers(ranges: &[RegRange], key: u16) -> bool {
    ranges.iter().any(|r| r.keys().any(|k| k == key))
}

/// One instruction: waits, checks, then its own effects, then time advances by its stall.
fn class(nodes: &[Node], i: usize) -> &str {
    nodes[i].effects.as_ref().map_or("?", |e| e.class.as_str())
}

fn step(nodes: &[Node], i: usize, st: &mut State, rules: &dyn Rules, obs: &mut dyn Observer) {
    let nd = &nodes[i];
    let c = nd.control;
    // 1. Waits before issue. An instruction whose result has arrived has read its sources:
    // releasing its write scoreboard releases its read scoreboard too.
    let mut released: Vec<u32> = Vec::new();
    let mut read_released: Vec<u32> = Vec::new();
    for s in 0..6u8 {
        if c.wait_mask >> s & 1 == 1 {
            if let Some((setter, el)) = st.set[usize::from(s)] {
                obs.sb_wait(setter as usize, i, s, el);
            }
            released.extend(
                st.sb[usize::from(s)]
                    .iter()
                    .filter(|p| p.write)
                    .map(|p| p.inst),
            );
            read_released.extend(
                st.sb[usize::from(s)]
                    .iter()
                    .filter(|p| !p.write)
                    .map(|p| p.inst),
            );
            st.sb[usize::from(s)].clear();
            st.set[usize::from(s)] = None;
        }
    }
    let eff = nd.effects.as_ref();
    if let Some(d) = eff.and_then(|e| e.depbar) {
        if d.sb < 6 {
            let list = &mut st.sb[usize::from(d.sb)];
            released.extend(
                list.iter()
                    .filter(|p| p.write && p.newer >= d.count)
                    .map(|p| p.inst),
            );
            read_released.extend(
                list.iter()
                    .filter(|p| !p.write && p.newer >= d.count)
                    .map(|p| p.inst),
            );
            list.retain(|p| p.newer < d.count);
            if list.is_empty() {
                st.set[usize::from(d.sb)] = None;
            }
        }
        for s in 0..6 {
            if d.also >> s & 1 == 1 {
                released.extend(st.sb[s].iter().filter(|p| p.write).map(|p| p.inst));
                read_released.extend(st.sb[s].iter().filter(|p| !p.write).map(|p| p.inst));
                st.sb[s].clear();
                st.set[s] = None;
            }
        }
    }
    if !released.is_empty() {
        for list in &mut st.sb {
            list.retain(|p| p.write || !released.contains(&p.inst));
        }
        // Its unscoreboarded reads too (sm_75 holdout h_half: `F2F.F16.F32 R8, R8` with a
        // write scoreboard, then `PRMT R8, ...` 2 cycles later waiting on it).
        st.pend
            .retain(|p| p.kind != PendKind::Read || !released.contains(&p.inst));
    }
    if !released.is_empty() || !read_released.is_empty() {
        for f in &mut st.floating {
            if f.done.is_none() {
                // A via that is the producer itself completes with its read scoreboard.
                let hit = f.vias.iter().copied().find(|&v| {
                    if v == f.inst {
                        read_released.contains(&v)
                    } else {
                        released.contains(&v)
                    }
                });
                if let Some(v) = hit {
                    f.done = Some(v);
                    f.vias.clear();
                }
            }
        }
    }
    // 2. Checks.
    if let Some(e) = eff {
        let mut read_keys: Vec<u16> = e.reads.iter().flat_map(|r| r.keys()).collect();
        read_keys.sort_unstable();
        read_keys.dedup();
        let mut write_keys: Vec<u16> = e.writes.iter().flat_map(|r| r.keys()).collect();
        write_keys.sort_unstable();
        write_keys.dedup();
        let g = nd.guard;
        for &k in &read_keys {
            for p in &st.pend {
                if p.key == k && p.kind == PendKind::Write && !exclusive(p.guard, g) {
                    obs.raw_fixed(p.inst as usize, i, k, p.elapsed);
                }
            }
        }
        for (s, list) in st.sb.iter().enumerate() {
            for p in list {
                let Some(pe) = nodes[p.inst as usize].effects.as_ref() else {
                    continue;
                };
                if exclusive(p.guard, g) {
                    continue;
                }
                if p.write {
                    for &k in &read_keys {
                        if covers(&pe.writes, k) {
                            obs.raw_sb(p.inst as usize, i, k, s as u8, false);
                        }
                    }
                    for &k in &write_keys {
                        if covers(&pe.writes, k) {
                            obs.raw_sb(p.inst as usize, i, k, s as u8, true);
                        }
                    }
                } else {
                    // A read scoreboard covers the general registers only: predicates
                    // and uniform registers are read at issue.
                    for &k in write_keys.iter().filter(|&&k| k < 256) {
                        if covers(&pe.reads, k) {
                            obs.war_sb(p.inst as usize, i, k, s as u8);
                        }
                    }
                }
            }
        }
        for f in &st.floating {
            let read = read_keys.binary_search(&f.key).is_ok();
            let written = write_keys.binary_search(&f.key).is_ok();
            // Overwriting it with a result that completes after it (same in-order queue) is no
            // hazard: the later result lands last.
            let ordered_overwrite = !read
                && written
                && rules.is_variable(&e.class)
                && rules.completes_after(class(nodes, f.inst as usize), &e.class);
            if (read || written)
                && !ordered_overwrite
                && !exclusive(f.guard, g)
                && f.inst as usize != i
            {
                obs.floating(f.inst as usize, i, f.key, f.done.map(|v| v as usize));
            }
        }
        for &k in &write_keys {
            for p in &st.pend {
                if p.key == k
                    && p.kind == PendKind::Read
                    && p.inst as usize != i
                    && !exclusive(p.guard, g)
                {
                    obs.war_fixed(p.inst as usize, i, k, p.elapsed);
                }
            }
        }
        // 3. Scoreboard reuse.
        for s in [c.write_sb, c.read_sb] {
            if s < 6 && !st.sb[usize::from(s)].is_empty() {
                let pending: Vec<usize> = st.sb[usize::from(s)]
                    .iter()
                    .map(|p| p.inst as usize)
                    .collect();
                obs.sb_reuse(i, s, &pending);
            }
        }
        // 4. Own effects. Writing a predicate ends the exclusivity of guards on it.
        if g.is_none() {
            st.pend
                .retain(|p| write_keys.binary_search(&p.key).is_err());
            st.floating
                .retain(|f| write_keys.binary_search(&f.key).is_err());
        }
        let stale = |gk: GuardKey| gk.is_some_and(|(k, _)| write_keys.binary_search(&k).is_ok());
        for p in &mut st.pend {
            if stale(p.guard) {
                p.guard = None;
            }
        }
        for f in &mut st.floating {
            if stale(f.guard) {
                f.guard = None;
            }
        }
        for list in &mut st.sb {
            for p in list.iter_mut() {
                if stale(p.guard) {
                    p.guard = None;
                }
            }
        }
        let g = if stale(g) { None } else { g };
        if c.write_sb < 6 {
            // Earlier unscoreboarded results that complete no later than this one.
            for f in &mut st.floating {
                let fresh = f.done.is_none()
                    && f.vias.len() < MAX_VIAS
                    && !f.vias.iter().any(|&v| class(nodes, v as usize) == e.class);
                if fresh && rules.completes_after(class(nodes, f.inst as usize), &e.class) {
                    f.vias.push(i as u32);
                    f.vias.sort_unstable();
                }
            }
        }
        if c.write_sb < 6 && !e.writes.is_empty() {
            push_sb(st, c.write_sb, i, true, g);
        } else if rules.is_variable(&e.class) {
            let own = c.read_sb < 6 && rules.completes_after(&e.class, SELF_READ);
            for &k in &write_keys {
                st.floating.push(Floating {
                    key: k,
                    inst: i as u32,
                    guard: g,
                    done: None,
                    vias: if own { vec![i as u32] } else { Vec::new() },
                });
            }
        } else {
            for &k in &write_keys {
                st.pend.push(Pend {
                    key: k,
                    kind: PendKind::Write,
                    inst: i as u32,
                    guard: g,
                    elapsed: 0,
                });
            }
        }
        if c.read_sb < 6 {
            push_sb(st, c.read_sb, i, false, g);
        } else if rules.is_variable(&e.class) {
            for &k in &read_keys {
                if usize::from(k) < 256 {
                    st.pend.push(Pend {
                        key: k,
                        kind: PendKind::Read,
                        inst: i as u32,
                        guard: g,
                        elapsed: 0,
                    });
                }
            }
        }
        if c.write_sb < 6 && e.writes.is_empty() {
            // A scoreboard set by an instruction without register results (stores, barriers).
            push_sb(st, c.write_sb, i, true, g);
        }
    } else {
        for s in [c.write_sb, c.read_sb] {
            if s < 6 {
                push_sb(st, s, i, false, None);
            }
        }
    }
    // 5. Time advances.
    let d = stall(&c);
    for p in &mut st.pend {
        p.elapsed = p.elapsed.saturating_add(d);
    }
    st.pend.retain(|p| p.elapsed < HORIZON);
    st.pend.sort_unstable();
    st.pend.dedup();
    st.floating.sort_unstable();
    st.floating.dedup();
    for x in st.set.iter_mut().flatten() {
        x.1 = x.1.saturating_add(d).min(HORIZON);
    }
    debug_assert!(st.pend.iter().all(|p| usize::from(p.key) < REG_KEYS));
}

fn push_sb(st: &mut State, s: u8, i: usize, write: bool, guard: GuardKey) {
    let list = &mut st.sb[usize::from(s)];
    for p in list.iter_mut() {
        p.newer = p.newer.saturating_add(1);
    }
    list.push(SbPend {
        inst: i as u32,
        write,
        guard,
        newer: 0,
    });
    st.set[usize::from(s)] = Some((i as u32, 0));
}
