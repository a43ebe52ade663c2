//! Perturbation testing: break ptxas's control fields in ways that certainly create a hazard,
//! and see whether the checker reports it.
//!
//! Every injection is chosen in straight-line code (no branch, call, exit or branch target
//! between the two instructions involved), so the broken dependence is real on the only path
//! that reaches the consumer; whether it is broken is decided here from the effects model and
//! the control fields alone, independently of the checker's dataflow:
//! - `stall`: a fixed-latency producer and the next reader of its result: stalls between them
//!   lowered (never below 1) until the distance is one less than the table requires;
//! - `wait`: an instruction that waits on a scoreboard set by the nearest earlier instruction
//!   whose registers it touches: the wait bit dropped;
//! - `swap`: a producer's write scoreboard changed to one no instruction up to the consumer
//!   waits on;
//! - `reuse`: a producer's write scoreboard changed to one on which an earlier operation is
//!   still pending (and which the consumer does not wait on).
//!
//! The consumer must then be reported.

use crate::effects::{Effects, Flow, RegRange};
use crate::flow::Node;
use crate::table::LatencyTable;

/// One injected error and its outcome.
#[derive(Debug, Clone)]
pub struct Perturbation {
    pub kind: &'static str,
    /// The instruction at which the hazard must be reported.
    pub index: usize,
    pub description: String,
    pub reported: bool,
}

/// Sections longer than this are not perturbed (each injection re-runs the checker).
pub const MAX_SECTION: usize = 4000;
/// Injections of each kind per section.
pub const PER_KIND: usize = 2;
/// Longest producer-consumer span considered.
const SPAN: usize = 24;

fn keys(r: &[RegRange]) -> Vec<u16> {
    let mut v: Vec<u16> = r.iter().flat_map(|x| x.keys()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// General registers only (what a read scoreboard protects).
fn gprs(r: &[RegRange]) -> Vec<u16> {
    keys(r).into_iter().filter(|&k| k < 256).collect()
}

fn touches(a: &[u16], b: &[u16]) -> bool {
    a.iter().any(|k| b.binary_search(k).is_ok())
}

struct Ctx<'a> {
    table: &'a LatencyTable,
    nodes: &'a [Node],
    /// Instructions that start a block reached by a jump, call or return.
    joined: Vec<bool>,
}

impl Ctx<'_> {
    fn eff(&self, i: usize) -> Option<&Effects> {
        self.nodes[i].effects.as_ref()
    }

    /// Whether control goes from `p` to `c` only through p, p+1, ..., c.
    fn straight(&self, p: usize, c: usize) -> bool {
        (p..c).all(|i| self.eff(i).is_some_and(|e| e.flow == Flow::Next))
            && (p + 1..=c).all(|i| !self.joined[i] && self.eff(i).is_some())
    }

    fn waits(&self, i: usize, s: u8) -> bool {
        self.nodes[i].control.wait_mask >> s & 1 == 1
            || self
                .eff(i)
                .and_then(|e| e.depbar)
                .is_some_and(|d| d.sb == s || d.also >> s & 1 == 1)
    }

    fn variable(&self, class: &str) -> bool {
        self.table.is_variable(class)
    }

    fn sets(&self, i: usize, s: u8) -> bool {
        let c = self.nodes[i].control;
        c.write_sb == s || c.read_sb == s
    }
}

fn pick<T>(mut v: Vec<T>) -> Vec<T> {
    if v.len() <= PER_KIND {
        return v;
    }
    let n = v.len();
    let idx: Vec<usize> = (0..PER_KIND)
        .map(|k| (k * 2 + 1) * n / (PER_KIND * 2))
        .collect();
    let mut out = Vec::new();
    for (j, x) in v.drain(..).enumerate() {
        if idx.contains(&j) {
            out.push(x);
        }
    }
    out
}

/// Injects errors into `nodes` (ptxas's code) and checks each perturbed copy.
pub fn run(table: &LatencyTable, nodes: &[Node]) -> Vec<Perturbation> {
    if nodes.len() > MAX_SECTION || nodes.is_empty() {
        return Vec::new();
    }
    let mut joined = vec![false; nodes.len()];
    let index_of = |pc: u64| nodes.binary_search_by_key(&pc, |x| x.pc).ok();
    for (i, n) in nodes.iter().enumerate() {
        match n.effects.as_ref().map(|e| e.flow) {
            Some(Flow::Branch { target, .. })
            | Some(Flow::Call {
                target: Some(target),
            }) => {
                if let Some(t) = index_of(target) {
                    joined[t] = true;
                }
                if matches!(n.effects.as_ref().map(|e| e.flow), Some(Flow::Call { .. }))
                    && i + 1 < nodes.len()
                {
                    joined[i + 1] = true;
                }
            }
            _ => {}
        }
    }
    let cx = Ctx {
        table,
        nodes,
        joined,
    };
    let mut cands: Vec<(&'static str, usize, Vec<Node>, String)> = Vec::new();
    let mut stall = Vec::new();
    let mut wait = Vec::new();
    let mut swap = Vec::new();
    let mut reuse = Vec::new();
    for c in 0..nodes.len() {
        let Some(ce) = cx.eff(c) else { continue };
        let creads = keys(&ce.reads);
        let cwrites = keys(&ce.writes);
        // stall: the latest writer of a register c reads, fixed latency, straight line.
        for p in (c.saturating_sub(SPAN)..c).rev() {
            if !cx.straight(p, c) {
                break;
            }
            let Some(pe) = cx.eff(p) else { break };
            let pw = keys(&pe.writes);
            if !touches(&pw, &creads) {
                continue;
            }
            if nodes[p].control.write_sb < 6 || table.is_variable(&pe.class) {
                break;
            }
            // No other write of those registers in between.
            let shadowed = (p + 1..c).any(|i| {
                cx.eff(i)
                    .is_some_and(|e| touches(&keys(&e.writes), &creads) && nodes[i].guard.is_none())
            });
            if shadowed {
                break;
            }
            let need = table.raw_required(&pe.class, &ce.class);
            if need < 2 {
                break;
            }
            let dist: u16 = (p..c).map(|i| u16::from(nodes[i].control.stall)).sum();
            let mut cut = i32::from(dist) - i32::from(need) + 1;
            let mut m = nodes.to_vec();
            let mut order: Vec<usize> = (p..c).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(m[i].control.stall));
            for i in order {
                if cut <= 0 {
                    break;
                }
                let s = i32::from(m[i].control.stall);
                let d = (s - 1).min(cut).max(0);
                m[i].control.stall = (s - d) as u8;
                cut -= d;
            }
            if cut <= 0 {
                stall.push((
                    "stall",
                    c,
                    m,
                    format!(
                        "stalls {:#06x}..{:#06x} cut to {} cycles ({} -> {}, {need} needed)",
                        nodes[p].pc,
                        nodes[c].pc,
                        need - 1,
                        pe.class,
                        ce.class
                    ),
                ));
            }
            break;
        }
        // wait: c waits on s; the nearest setter of s before it whose registers c touches.
        for s in 0..6u8 {
            if nodes[c].control.wait_mask >> s & 1 == 0 {
                continue;
            }
            for p in (c.saturating_sub(SPAN)..c).rev() {
                if !cx.straight(p, c) || (p + 1..c).any(|i| cx.waits(i, s)) {
                    break;
                }
                if !cx.sets(p, s) {
                    continue;
                }
                let Some(pe) = cx.eff(p) else { break };
                let ctl = nodes[p].control;
                // Waiting for p's result also ends its reads.
                let result_waited =
                    ctl.write_sb < 6 && (p + 1..=c).any(|i| cx.waits(i, ctl.write_sb));
                let waw_ordered =
                    cx.variable(&ce.class) && table.is_ordered("waw", &pe.class, &ce.class);
                let hit = (ctl.write_sb == s
                    && (touches(&keys(&pe.writes), &creads)
                        || (!waw_ordered && touches(&keys(&pe.writes), &cwrites))))
                    || (ctl.read_sb == s
                        && !result_waited
                        && touches(&gprs(&pe.reads), &cwrites)
                        && !(cx.variable(&ce.class)
                            && table.is_ordered("war", &pe.class, &ce.class)));
                if hit && !cx.waits(p, s) {
                    let mut m = nodes.to_vec();
                    m[c].control.wait_mask &= !(1 << s);
                    wait.push((
                        "wait",
                        c,
                        m,
                        format!(
                            "wait on SB{s} dropped at {:#06x} ({} at {:#06x} set it)",
                            nodes[c].pc, pe.class, nodes[p].pc
                        ),
                    ));
                }
                break;
            }
        }
    }
    // swap / reuse: a producer with a write scoreboard and its first waiting consumer.
    for p in 0..nodes.len() {
        let s = nodes[p].control.write_sb;
        let Some(pe) = cx.eff(p) else { continue };
        if s >= 6 || pe.writes.is_empty() {
            continue;
        }
        let pw = keys(&pe.writes);
        let Some(c) = (p + 1..nodes.len().min(p + SPAN)).find(|&i| cx.waits(i, s)) else {
            continue;
        };
        let Some(ce) = cx.eff(c) else { continue };
        if !cx.straight(p, c)
            || nodes[c].control.wait_mask >> s & 1 == 0
            || !(touches(&pw, &keys(&ce.reads)) || touches(&pw, &keys(&ce.writes)))
        {
            continue;
        }
        let (mut did_swap, mut did_reuse) = (false, false);
        for t in 0..6u8 {
            if t == s || (p + 1..=c).any(|i| cx.waits(i, t)) || (p + 1..c).any(|i| cx.sets(i, t)) {
                continue;
            }
            // Is t pending at p: set by an earlier instruction of the straight run and not
            // waited on since (up to and including p)?
            let pending = (p.saturating_sub(SPAN)..p).any(|q| {
                cx.straight(q, p) && cx.sets(q, t) && !(q + 1..=p).any(|i| cx.waits(i, t))
            });
            if (pending && did_reuse) || (!pending && did_swap) {
                continue;
            }
            let mut m = nodes.to_vec();
            m[p].control.write_sb = t;
            let desc = format!(
                "{} at {:#06x}: write scoreboard SB{s} -> SB{t}{}; {} at {:#06x} waits on SB{s}",
                pe.class,
                nodes[p].pc,
                if pending { " (pending)" } else { "" },
                ce.class,
                nodes[c].pc
            );
            if pending {
                did_reuse = true;
                reuse.push(("reuse", c, m, desc));
            } else {
                did_swap = true;
                swap.push(("swap", c, m, desc));
            }
        }
    }
    cands.extend(pick(stall));
    cands.extend(pick(wait));
    cands.extend(pick(swap));
    cands.extend(pick(reuse));
    cands
        .into_iter()
        .map(|(kind, index, m, description)| {
            let found = crate::check_nodes(table, &m);
            Perturbation {
                kind,
                index,
                description,
                reported: found.iter().any(|h| h.index == index),
            }
        })
        .collect()
}
