//! A static performance model of SASS: how many cycles one warp spends issuing a kernel's
//! code, estimated from the code alone. It is the GPU-less judge of code quality: the corpus
//! compile stage compares kiln's code with ptxas's under it (`cycles_ratio_median`), and
//! `kiln ptxas -v` prints it per kernel.
//!
//! The model walks the code once in address order, as one warp that never waits for another:
//!
//! * an instruction issues `max(stall, 1)` cycles after the previous one (the stall count of
//!   the control code is what the hardware waits; it already covers every fixed latency, as
//!   the hazard checker proves for kiln's code and as ptxas guarantees for its own);
//! * an instruction that sets a write scoreboard has its result `latency(class)` cycles after
//!   it issues, one that sets a read scoreboard has read its operands after `read` cycles
//!   (`data/latency.tsv`: per SM and latency class, each figure with its source);
//! * an instruction waiting on scoreboards issues no sooner than the last pending operation
//!   on them completes (`DEPBAR.LE SBn, k` leaves the `k` youngest pending);
//! * the cycles between one issue and the next count `TRIP_COUNT ^ depth` times, where
//!   `depth` is how many natural loops of the control-flow graph hold the instruction
//!   (`loops.rs`; loops of unknown trip count are assumed to run [`TRIP_COUNT`] times).
//!
//! What it leaves out, so that its figures are read as relative, not absolute: other warps
//! (latency hidden by occupancy, issue-port and memory-bandwidth contention), caches (every
//! global load costs an L2 hit), branch divergence, the real trip counts (a loop ptxas
//! unrolled four times counts as many trips as kiln's rolled one), and the yield bit.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::OnceLock;

use hazard::{Flow, Node};

/// The per-SM variable latencies (`data/latency.tsv`).
pub const LATENCY_TABLE: &str = include_str!("../data/latency.tsv");

/// How many times a loop whose trip count the code does not show is assumed to run.
pub const TRIP_COUNT: f64 = 8.0;

/// The latencies the model assumes for one SM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Latencies {
    /// Latency class (as `hazard::effects` names it) -> cycles until the write scoreboard
    /// clears.
    pub classes: HashMap<String, u32>,
    /// For a scoreboarded class without a row.
    pub default: u32,
    /// Cycles until a read scoreboard clears.
    pub read: u32,
}

impl Latencies {
    /// Cycles until the write scoreboard of an instruction of `class` clears.
    pub fn write(&self, class: &str) -> u32 {
        self.classes.get(class).copied().unwrap_or(self.default)
    }
}

/// One row of `data/latency.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub sm: String,
    pub class: String,
    pub cycles: u32,
    pub source: String,
}

/// Parses the latency table's text: rows, or the first malformed line.
pub fn parse_rows(text: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let bad = || format!("latency.tsv line {}: `{line}`", n + 1);
        let mut f = line.splitn(4, '\t');
        let (Some(sm), Some(class), Some(cycles), Some(source)) =
            (f.next(), f.next(), f.next(), f.next())
        else {
            return Err(bad());
        };
        let cycles = cycles.parse().map_err(|_| bad())?;
        if source.trim().is_empty() {
            return Err(format!("{}: a figure without a source", bad()));
        }
        rows.push(Row {
            sm: sm.to_string(),
            class: class.to_string(),
            cycles,
            source: source.to_string(),
        });
    }
    Ok(rows)
}

/// The latencies of an SM (`sm_90a` means sm_90), or `None` when the table has no `default`
/// and `read` rows for it.
pub fn latencies(sm: &str) -> Option<&'static Latencies> {
    static ALL: OnceLock<HashMap<String, Latencies>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        let rows = parse_rows(LATENCY_TABLE).expect("the committed table parses (tested)");
        type Rows = (HashMap<String, u32>, Option<u32>, Option<u32>);
        let mut by_sm: HashMap<String, Rows> = HashMap::new();
        for r in rows {
            let e = by_sm.entry(r.sm).or_default();
            match r.class.as_str() {
                "default" => e.1 = Some(r.cycles),
                "read" => e.2 = Some(r.cycles),
                _ => {
                    e.0.insert(r.class, r.cycles);
                }
            }
        }
        by_sm
            .into_iter()
            .filter_map(|(sm, (classes, default, read))| {
                Some((
                    sm,
                    Latencies {
                        classes,
                        default: default?,
                        read: read?,
                    },
                ))
            })
            .collect()
    });
    all.get(&sass::normalize_sm(sm)?)
}

/// The model's figures for one kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Weighted cycles from the first issue to the last instruction's completion of issue.
    pub cycles: f64,
    /// Weighted instructions issued (the issue-slot demand).
    pub issue_slots: f64,
    /// Instructions of the kernel (without the closing branch and padding).
    pub instructions: usize,
    /// Natural loops (one per loop header).
    pub loops: usize,
}

/// Estimates a code section (`.text` of one kernel) of `sm`.
pub fn estimate(sm: &str, code: &[u8]) -> Result<Estimate, String> {
    let lat = latencies(sm).ok_or_else(|| format!("no latency figures for {sm}"))?;
    let nodes = hazard::nodes(sm, &sass::words(code))?;
    Ok(estimate_nodes(lat, &nodes))
}

/// The instructions of a section before its closing self-branch (`BRA` to itself, then
/// `NOP` padding), as compilers end every kernel.
fn body_len(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .position(|n| {
            matches!(
                n.effects.as_ref().map(|e| e.flow),
                Some(Flow::Branch { target, conditional: false }) if target == n.pc
            )
        })
        .unwrap_or(nodes.len())
}

/// Waits for the operations pending on one scoreboard but the `keep` youngest: the time they
/// are all complete (at least `at`).
fn drain(pending: &mut Vec<f64>, keep: usize, at: f64) -> f64 {
    let n = pending.len().saturating_sub(keep);
    pending.drain(..n).fold(at, f64::max)
}

/// [`estimate`] on decoded nodes (instruction `i` at pc `16 * i`).
pub fn estimate_nodes(lat: &Latencies, nodes: &[Node]) -> Estimate {
    let nodes = &nodes[..body_len(nodes)];
    let (depth, loops) = loops::loop_depths(nodes);
    let weight = |i: usize| TRIP_COUNT.powi(depth[i] as i32);
    // Per scoreboard: completion times of the operations pending on it, oldest first.
    let mut pending: [Vec<f64>; 6] = Default::default();
    let mut cycles = 0.0;
    let mut issue_slots = 0.0;
    let mut next_issue = 0.0f64;
    for (i, n) in nodes.iter().enumerate() {
        let c = n.control;
        let mut issue = next_issue;
        for (sb, q) in pending.iter_mut().enumerate() {
            if c.wait_mask >> sb & 1 == 1 {
                issue = drain(q, 0, issue);
            }
        }
        if let Some(d) = n.effects.as_ref().and_then(|e| e.depbar) {
            for (sb, q) in pending.iter_mut().enumerate() {
                if d.also >> sb & 1 == 1 {
                    issue = drain(q, 0, issue);
                }
            }
            if usize::from(d.sb) < 6 {
                issue = drain(&mut pending[usize::from(d.sb)], usize::from(d.count), issue);
            }
        }
        // Waiting is charged to the instruction that waits, the stall to the one that stalls.
        cycles += weight(i) * (issue - next_issue);
        let stall = f64::from(c.stall.max(1));
        cycles += weight(i) * stall;
        issue_slots += weight(i);
        let class = n.effects.as_ref().map_or("", |e| e.class.as_str());
        if usize::from(c.write_sb) < 6 {
            pending[usize::from(c.write_sb)].push(issue + f64::from(lat.write(class)));
        }
        if usize::from(c.read_sb) < 6 {
            pending[usize::from(c.read_sb)].push(issue + f64::from(lat.read));
        }
        next_issue = issue + stall;
    }
    Estimate {
        cycles,
        issue_slots,
        instructions: nodes.len(),
        loops,
    }
}

mod loops;

#[cfg(test)]
mod tests;
