//! Reconvergence: convergence barriers (`BSSY`/`BSYNC`) around every region of divergent
//! control flow, as ptxas 13.0.88 places them.
//!
//! On Volta and later GPUs the lanes of a warp that branch apart stay apart until a
//! convergence barrier joins them: `BSSY Bn, L` records the lanes that execute it in the
//! per-thread barrier register `Bn`, and `BSYNC Bn` (at `L - 16`) waits until every
//! non-exited lane it recorded has arrived. Without them the two sides of a branch run as
//! separate groups for the rest of the kernel: warp-synchronous code (lanes exchanging
//! values through shared memory without a barrier, which compilers before Volta made work
//! and much code still assumes), uniform-register sequences and every collective then see a
//! split warp. ptxas's placement, read from its SASS (`docs/arch/codegen.md`):
//! * a divergent branch in block `X` gets `BSSY` at the end of `X` and `BSYNC` on the edges
//!   into `X`'s immediate post-dominator `S`: a block of its own before `S` that only the
//!   region's edges enter, and the `BSSY` target is the address after the `BSYNC`;
//! * a branch inside a loop whose post-dominator lies outside the loop (a loop exit, a
//!   `break`) gets its `BSSY` in the loop's preheader and its `BSYNC` at the first
//!   post-dominator of the loop outside it, so that the loop does not re-execute `BSSY`;
//! * a branch whose post-dominator is the end of the thread (an early `return`) gets none;
//! * nested regions use `B0`, `B1`, … by nesting depth; a region inside another that ends
//!   at the same `S` needs no barrier of its own (the outer `BSYNC` waits for all its lanes).
//!
//! A region holding a `WARPSYNC` gets none: that `WARPSYNC` joins the warp, and it would
//! wait for the lanes that skipped the body while they wait at the `BSYNC` (ptxas's code for
//! a collective under a branch).
//!
//! Every region must have one entry (its `BSSY` block dominates it) and nest properly in the
//! others; a region that does not (code from an irreducible or otherwise unstructured PTX
//! `bra` graph), or one nested deeper than the 16 barrier registers, is left without barriers
//! — kiln's code before this pass, which lets the hardware run the two sides apart — rather
//! than given barriers some lanes could wait at forever.
//!
//! Which branches are divergent: [`crate::uniform`].

use std::collections::{HashMap, HashSet};

use ir::cfg::{self, Loop, PostDom};
use ir::{Block, Func, Inst, Mnemonic, Operand, op};

/// Convergence barrier registers per thread.
const BARRIERS: u8 = 16;

/// What [`reconverge`] placed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placed {
    /// Regions given a `BSSY`/`BSYNC` pair.
    pub regions: usize,
    /// Divergent branches left without one (see the module documentation).
    pub skipped: usize,
    /// Whole-warp `WARPSYNC`s removed where the warp is known to be converged.
    pub warpsyncs_dropped: usize,
}

/// Places convergence barriers in `f` (after optimization, before register allocation).
pub fn reconverge(f: &mut Func) -> Placed {
    exit_in_place(f);
    let mut fall = fall_edges(f);
    let divergent: HashSet<Block> = crate::uniform::divergent_branches(f)
        .into_iter()
        .zip(&f.order)
        .filter(|(d, _)| *d)
        .map(|(_, b)| *b)
        .collect();
    let mut plan = plan_of(f, &fall, &divergent);
    if !plan.need_preheaders.is_empty() {
        // By block: each preheader shifts the positions after it.
        let headers: Vec<Block> = plan.need_preheaders.iter().map(|&h| f.order[h]).collect();
        for header in headers {
            add_preheader(f, &mut fall, header);
        }
        plan = plan_of(f, &fall, &divergent);
    }
    let placed = Placed {
        regions: plan.regions.len(),
        skipped: plan.skipped,
        warpsyncs_dropped: drop_converged_warpsyncs(f, &plan.split),
    };
    if plan.regions.is_empty() {
        return placed;
    }
    apply(f, &mut fall, &plan.regions);
    lay_out(f, &fall);
    debug_assert!(ir::verify(f).is_ok(), "{:?}", ir::verify(f));
    placed
}

/// A branch to a block that only ends the thread becomes the `EXIT` itself, under the
/// branch's guard (ptxas's `@P0 EXIT`): the lanes leaving end at once instead of waiting as a
/// group of their own for their turn, so a barrier or collective after the branch sees only
/// the lanes that stay.
fn exit_in_place(f: &mut Func) {
    let succs = cfg::successors(f);
    let exit_only = exit_only_blocks(f, &succs);
    let pos: HashMap<Block, usize> = f.order.iter().enumerate().map(|(p, b)| (*b, p)).collect();
    for &b in &f.order.clone() {
        let Some(t) = taken(f, b) else {
            continue;
        };
        if !exit_only[pos[&t]] {
            continue;
        }
        if let Some(i) = f.blocks[b].insts.last_mut() {
            let mut exit = Inst::new(op!("EXIT"), vec![], vec![]);
            exit.guard = i.guard;
            exit.origin = i.origin;
            *i = exit;
        }
    }
}

/// The block each block falls into when it does not branch (`None`: it always branches or
/// ends), made explicit so that blocks can be inserted anywhere and the layout fixed last.
fn fall_edges(f: &Func) -> HashMap<Block, Block> {
    let mut fall = HashMap::new();
    for (p, &b) in f.order.iter().enumerate() {
        let ends = f.blocks[b].insts.last().is_some_and(|i| {
            i.guard.is_none()
                && matches!(i.mnemonic(), Mnemonic::BRA | Mnemonic::EXIT | Mnemonic::RET)
        });
        if !ends && let Some(&next) = f.order.get(p + 1) {
            fall.insert(b, next);
        }
    }
    fall
}

/// The target of `b`'s branch, if it ends with one.
fn taken(f: &Func, b: Block) -> Option<Block> {
    let i = f.blocks[b].insts.last()?;
    if i.mnemonic() != Mnemonic::BRA {
        return None;
    }
    i.operands.iter().find_map(|o| match o {
        Operand::Label(t) => Some(*t),
        _ => None,
    })
}

/// Redirects `b`'s edges to `from` (branch and fall-through) to `to`.
fn redirect(f: &mut Func, fall: &mut HashMap<Block, Block>, b: Block, from: Block, to: Block) {
    if let Some(i) = f.blocks[b].insts.last_mut()
        && i.mnemonic() == Mnemonic::BRA
    {
        for o in &mut i.operands {
            if *o == Operand::Label(from) {
                *o = Operand::Label(to);
            }
        }
    }
    if fall.get(&b) == Some(&from) {
        fall.insert(b, to);
    }
}

/// The control-flow graph by layout position with the explicit fall-through edges.
struct Graph {
    succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
}

fn graph(f: &Func, fall: &HashMap<Block, Block>) -> Graph {
    let pos: HashMap<Block, usize> = f.order.iter().enumerate().map(|(p, b)| (*b, p)).collect();
    let succs: Vec<Vec<usize>> = f
        .order
        .iter()
        .map(|&b| {
            let mut s: Vec<usize> = Vec::new();
            for t in [taken(f, b), fall.get(&b).copied()].into_iter().flatten() {
                let p = pos[&t];
                if !s.contains(&p) {
                    s.push(p);
                }
            }
            s
        })
        .collect();
    let preds = cfg::predecessors(&succs);
    Graph { succs, preds }
}

/// A region of divergent control flow: `BSSY` at the end of `entry`, `BSYNC` on the edges
/// from `nodes` into `sync` (layout positions).
#[derive(Clone, Debug)]
struct Region {
    entry: usize,
    sync: usize,
    nodes: Vec<bool>,
    /// `nodes` as a bit set (64 blocks a word), for the nesting tests between regions.
    bits: Vec<u64>,
    size: usize,
    /// The divergent branches it reconverges.
    covers: Vec<usize>,
    /// Index of the smallest region containing this one, and the nesting depth.
    parent: Option<usize>,
    depth: u8,
}

#[derive(Default)]
struct Plan {
    /// Properly nested regions, outermost first.
    regions: Vec<Region>,
    /// Loop headers whose loop needs a preheader of its own to hold a `BSSY`.
    need_preheaders: Vec<usize>,
    skipped: usize,
    /// By layout position: whether lanes of a warp may arrive at the block apart.
    split: Vec<bool>,
}

fn plan_of(f: &Func, fall: &HashMap<Block, Block>, divergent: &HashSet<Block>) -> Plan {
    let g = graph(f, fall);
    let n = g.succs.len();
    let mut plan = Plan::default();
    if n == 0 {
        return plan;
    }
    let idom = cfg::immediate_dominators(&g.succs, 0);
    let (loops, reducible) = cfg::natural_loops(&g.succs, 0, &idom);
    // Paths into a block that only ends the thread do not count: exited lanes leave every
    // convergence barrier (ptxas's `@P0 EXIT` inside a region).
    let exit_only = exit_only_blocks(f, &g.succs);
    let live = without_exits(&g.succs, &exit_only);
    let pd = PostDom::new(&live);
    let ends = |s: usize| s == PostDom::EXIT;
    let mut candidates: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    let mut branches: Vec<usize> = Vec::new();
    for (x, &b) in f.order.iter().enumerate() {
        if idom[x].is_none() || !divergent.contains(&b) || taken(f, b) == fall.get(&b).copied() {
            continue;
        }
        branches.push(x);
        if !reducible {
            plan.skipped += 1;
            continue;
        }
        let Some(mut s) = pd.ipdom(x) else {
            plan.skipped += 1;
            continue;
        };
        let mut e = x;
        let region = loop {
            // An empty block that only falls on is no meeting point of its own: ending there
            // or at the block it falls into is the same, and the later one lets regions that
            // end together share one barrier.
            while s != PostDom::EXIT && f.blocks[f.order[s]].insts.is_empty() && live[s].len() == 1
            {
                s = live[s][0];
            }
            if ends(s) {
                break None;
            }
            let Some(l) = loops
                .iter()
                .filter(|l| l.body[e] && !l.body[s])
                .max_by_key(|l| l.size)
            else {
                break Some((e, s));
            };
            let Some(ph) = preheader(&g, l) else {
                if !plan.need_preheaders.contains(&l.header) {
                    plan.need_preheaders.push(l.header);
                }
                break None;
            };
            // The first post-dominator of the loop outside it.
            let mut t = l.header;
            let out = loop {
                match pd.ipdom(t) {
                    Some(u) if u != PostDom::EXIT && l.body[u] => t = u,
                    other => break other,
                }
            };
            let Some(out) = out else {
                break None;
            };
            e = ph;
            s = out;
        };
        // No region: an early exit needs no barrier; a missing preheader is added and the
        // plan made again.
        if let Some((e, s)) = region {
            match candidates.iter_mut().find(|c| (c.0, c.1) == (e, s)) {
                Some(c) => c.2.push(x),
                None => candidates.push((e, s, vec![x])),
            }
        }
    }
    if !plan.need_preheaders.is_empty() {
        return plan;
    }
    let mut regions: Vec<Region> = Vec::new();
    for (entry, sync, covers) in candidates {
        let mut nodes = vec![false; n];
        let mut work = vec![entry];
        let mut size = 0;
        while let Some(b) = work.pop() {
            if b == sync || nodes[b] {
                continue;
            }
            nodes[b] = true;
            size += 1;
            work.extend(live[b].iter().copied());
        }
        // One entry: only the entry block is entered from outside, and not from inside
        // (blocks nothing reaches, such as the empty ones lowering leaves, do not count).
        let single_entry = (0..n).filter(|&b| nodes[b]).all(|b| {
            let mut preds = g.preds[b].iter().filter(|&&p| idom[p].is_some());
            if b == entry {
                preds.all(|&p| !nodes[p])
            } else {
                preds.all(|&p| nodes[p])
            }
        });
        if !single_entry {
            plan.skipped += 1;
            continue;
        }
        // A `WARPSYNC` inside: it joins the warp itself, and it would wait for the lanes
        // that skipped the body while they wait at the `BSYNC` (ptxas places no region there
        // either, only the `WARPSYNC`).
        let warpsync = (0..n).filter(|&b| nodes[b]).any(|b| {
            f.blocks[f.order[b]]
                .insts
                .iter()
                .any(|i| i.mnemonic() == Mnemonic::WARPSYNC)
        });
        if warpsync {
            plan.skipped += 1;
            continue;
        }
        let mut bits = vec![0u64; n.div_ceil(64)];
        for b in (0..n).filter(|&b| nodes[b]) {
            bits[b / 64] |= 1 << (b % 64);
        }
        regions.push(Region {
            entry,
            sync,
            nodes,
            bits,
            size,
            covers,
            parent: None,
            depth: 0,
        });
    }
    // Outermost first; a region nests in the smallest accepted region holding all of it.
    regions.sort_by_key(|r| std::cmp::Reverse(r.size));
    let mut accepted: Vec<Region> = Vec::new();
    'next: for mut r in regions {
        let mut parent: Option<usize> = None;
        for (k, a) in accepted.iter().enumerate() {
            let mut words = r.bits.iter().zip(&a.bits);
            let inside = words.clone().all(|(x, y)| x & !y == 0);
            let apart = words.all(|(x, y)| x & y == 0);
            if inside {
                if r.size == a.size {
                    // The same blocks as a region already placed: its barrier serves.
                    accepted[k].covers.extend(r.covers);
                    continue 'next;
                }
                if parent.is_none_or(|p| accepted[p].size > a.size) {
                    parent = Some(k);
                }
            } else if !apart {
                plan.skipped += 1;
                continue 'next;
            }
        }
        // Inside a region that ends where this one does: the outer `BSYNC` already waits
        // for every lane of this one (ptxas places one barrier for both).
        if let Some(p) = parent
            && accepted[p].sync == r.sync
        {
            accepted[p].covers.extend(r.covers);
            continue;
        }
        let depth = parent.map_or(0, |p| accepted[p].depth + 1);
        if depth >= BARRIERS {
            plan.skipped += 1;
            continue;
        }
        r.parent = parent;
        r.depth = depth;
        accepted.push(r);
    }
    // Where lanes may arrive apart: inside a region (past its entry), and wherever two sides
    // of a divergent branch without one meet.
    let mut split = vec![false; n];
    for r in &accepted {
        for b in (0..n).filter(|&b| r.nodes[b] && b != r.entry) {
            split[b] = true;
        }
    }
    for x in branches {
        if accepted.iter().any(|r| r.covers.contains(&x)) {
            continue;
        }
        // Both sides go on (a side that only exits leaves nobody behind): lanes of the other
        // side may be anywhere, alive, while these run.
        if live[x].len() < 2 {
            continue;
        }
        let mut seen = vec![false; n];
        let mut work = live[x].clone();
        while let Some(b) = work.pop() {
            if seen[b] {
                continue;
            }
            seen[b] = true;
            split[b] = true;
            work.extend(live[b].iter().copied());
        }
    }
    // A `WARPSYNC` of part of the warp (a member mask other than -1, or a guarded one) joins
    // those lanes alone and may leave them a group apart from the rest of the warp until the
    // next whole-warp join: everything it reaches may see the warp split.
    for p in 0..n {
        let partial = f.blocks[f.order[p]]
            .insts
            .iter()
            .any(|i| i.mnemonic() == Mnemonic::WARPSYNC && !whole_warp(i));
        if partial {
            let mut work = vec![p];
            let mut seen = vec![false; n];
            while let Some(b) = work.pop() {
                if seen[b] {
                    continue;
                }
                seen[b] = true;
                split[b] = true;
                work.extend(g.succs[b].iter().copied());
            }
        }
    }
    plan.split = split;
    plan.regions = accepted;
    plan
}

/// Blocks (by position) that only end the thread: an unguarded `EXIT` alone, or nothing
/// before falling into such a block.
pub(crate) fn exit_only_blocks(f: &Func, succs: &[Vec<usize>]) -> Vec<bool> {
    let n = succs.len();
    let mut e: Vec<bool> = (0..n)
        .map(|p| match f.blocks[f.order[p]].insts.as_slice() {
            [i] => i.mnemonic() == Mnemonic::EXIT && i.guard.is_none(),
            _ => false,
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for p in 0..n {
            if !e[p]
                && f.blocks[f.order[p]].insts.is_empty()
                && succs[p].len() == 1
                && e[succs[p][0]]
            {
                e[p] = true;
                changed = true;
            }
        }
    }
    e
}

/// The graph without edges into the blocks of `exit_only`.
pub(crate) fn without_exits(succs: &[Vec<usize>], exit_only: &[bool]) -> Vec<Vec<usize>> {
    succs
        .iter()
        .map(|ss| ss.iter().copied().filter(|&s| !exit_only[s]).collect())
        .collect()
}

/// An unguarded `WARPSYNC` of the whole warp (`WARPSYNC.ALL`, `WARPSYNC 0xffffffff`).
fn whole_warp(i: &Inst) -> bool {
    i.mnemonic() == Mnemonic::WARPSYNC
        && i.guard.is_none()
        && (i.op == op!("WARPSYNC.ALL")
            || i.operands == [Operand::Hex(u32::MAX)]
            || i.operands == [Operand::Imm(-1)])
}

/// Removes the whole-warp `WARPSYNC`s (`bar.warp.sync -1` and those lowering put before
/// barriers and collectives) from blocks where the warp's live lanes are known to run
/// together, as ptxas does: there they wait for nobody.
fn drop_converged_warpsyncs(f: &mut Func, split: &[bool]) -> usize {
    let mut dropped = 0;
    for (p, &b) in f.order.iter().enumerate() {
        if split.get(p).copied().unwrap_or(true) {
            continue;
        }
        let insts = &mut f.blocks[b].insts;
        let before = insts.len();
        insts.retain(|i| !(i.mnemonic() == Mnemonic::WARPSYNC && whole_warp(i)));
        dropped += before - insts.len();
    }
    dropped
}

/// The loop's preheader: its header's one predecessor outside it, when that block goes
/// nowhere else.
fn preheader(g: &Graph, l: &Loop) -> Option<usize> {
    let outside: Vec<usize> = g.preds[l.header]
        .iter()
        .copied()
        .filter(|&p| !l.body[p])
        .collect();
    match outside.as_slice() {
        [p] if g.succs[*p] == [l.header] => Some(*p),
        _ => None,
    }
}

/// Gives the loop headed at block `header` a preheader: an empty block before it
/// that every edge from outside the loop now enters.
fn add_preheader(f: &mut Func, fall: &mut HashMap<Block, Block>, header: Block) {
    let Some(header) = f.order.iter().position(|b| *b == header) else {
        return;
    };
    let g = graph(f, fall);
    let idom = cfg::immediate_dominators(&g.succs, 0);
    let (loops, _) = cfg::natural_loops(&g.succs, 0, &idom);
    let Some(l) = loops.iter().find(|l| l.header == header) else {
        return;
    };
    let h = f.order[header];
    let ph = f.new_block();
    let outside: Vec<Block> = g.preds[header]
        .iter()
        .filter(|&&p| !l.body[p])
        .map(|&p| f.order[p])
        .collect();
    for p in outside {
        redirect(f, fall, p, h, ph);
    }
    fall.insert(ph, h);
    f.order.insert(header, ph);
}

/// Inserts the barriers of `regions` (planned on `f`'s current layout), innermost first.
fn apply(f: &mut Func, fall: &mut HashMap<Block, Block>, regions: &[Region]) {
    let positions = f.order.clone();
    // A nested region ends inside its parent (one ending where the parent ends is merged
    // into it), so its `BSYNC` block is no edge into the parent's end.
    for k in (0..regions.len()).rev() {
        let r = &regions[k];
        let s = positions[r.sync];
        let y = f.new_block();
        f.blocks[y].insts.push(Inst::new(
            op!("BSYNC"),
            vec![Operand::Barrier(r.depth)],
            vec![],
        ));
        let members: Vec<Block> = (0..positions.len())
            .filter(|&b| r.nodes[b])
            .map(|b| positions[b])
            .collect();
        for u in members {
            redirect(f, fall, u, s, y);
        }
        fall.insert(y, s);
        let at = f
            .order
            .iter()
            .position(|b| *b == s)
            .unwrap_or(f.order.len());
        f.order.insert(at, y);
        // `BSSY` before the entry block's branch; its target is fixed after layout.
        let e = positions[r.entry];
        let insts = &mut f.blocks[e].insts;
        let origin = insts.last().and_then(|i| i.origin);
        let at = match insts.last() {
            Some(i) if i.is_terminator() => insts.len() - 1,
            _ => insts.len(),
        };
        let mut bssy = Inst::new(
            op!("BSSY"),
            vec![Operand::Barrier(r.depth), Operand::Label(y)],
            vec![],
        );
        bssy.origin = origin;
        insts.insert(at, bssy);
    }
}

/// Puts `BMOV.32.CLEAR RZ, Bn` right before every `BSSY Bn` (sm_75's ptxas does: the
/// barrier is cleared before the warp's lanes are recorded in it).
pub fn clear_before_bssy(f: &mut Func) {
    for b in f.order.clone() {
        let insts = &mut f.blocks[b].insts;
        let mut k = 0;
        while k < insts.len() {
            if insts[k].mnemonic() == Mnemonic::BSSY
                && let Some(&Operand::Barrier(n)) = insts[k].operands.first()
            {
                let mut clear = Inst::new(
                    op!("BMOV.32.CLEAR"),
                    vec![Operand::r(ir::Reg::Zero(ir::Class::R)), Operand::Barrier(n)],
                    vec![],
                );
                clear.origin = insts[k].origin;
                insts.insert(k, clear);
                k += 1;
            }
            k += 1;
        }
    }
}

/// Makes the layout agree with the fall-through edges (a `BRA` block where a block no longer
/// falls into its successor) and points each `BSSY` at the address after its `BSYNC`.
fn lay_out(f: &mut Func, fall: &HashMap<Block, Block>) {
    let old = std::mem::take(&mut f.order);
    let mut order: Vec<Block> = Vec::with_capacity(old.len() + 8);
    for (p, &b) in old.iter().enumerate() {
        order.push(b);
        if let Some(&t) = fall.get(&b)
            && old.get(p + 1) != Some(&t)
        {
            let tramp = f.new_block();
            f.blocks[tramp]
                .insts
                .push(Inst::new(op!("BRA"), vec![Operand::Label(t)], vec![]));
            order.push(tramp);
        }
    }
    f.order = order;
    let next: HashMap<Block, Block> = f.order.windows(2).map(|w| (w[0], w[1])).collect();
    for &b in &f.order.clone() {
        for i in &mut f.blocks[b].insts {
            if i.mnemonic() != Mnemonic::BSSY {
                continue;
            }
            for o in &mut i.operands {
                if let Operand::Label(y) = o
                    && let Some(&after) = next.get(y)
                {
                    *o = Operand::Label(after);
                }
            }
        }
    }
}
