//! Learning a [`LatencyTable`] from ptxas's output: run the analysis of [`crate::flow`] over
//! every code section of a corpus and keep, per pair of classes, the smallest distance ptxas
//! leaves; per class, how often ptxas guards its results with a scoreboard.
//! The generator (`cargo xtask hazard-learn`) feeds sections; this module holds the rules.

use std::collections::{BTreeMap, BTreeSet};

use crate::flow::{self, Node, Observer};
use crate::table::{ClassInfo, LatencyTable, Obs};

/// Bumped whenever the learning rules or the analysis change what a table contains.
pub const GENERATOR: u32 = 1;

/// A class is variable-latency when ptxas sets a write scoreboard on at least this fraction
/// (per mille) of its instances that write registers.
pub const VARIABLE_PER_MILLE: u64 = 500;

/// Accumulates observations over many sections.
#[derive(Debug, Default)]
pub struct Learner {
    classes: BTreeMap<String, ClassInfo>,
    raw: BTreeMap<(String, String), Obs>,
    war: BTreeMap<(String, String), Obs>,
    sbwait: Option<Obs>,
    /// Scoreboard dependences ptxas's code leaves without a wait: (raw-sb|waw-sb|war-sb,
    /// first class, second class) -> count and an example. Those with a variable-latency
    /// second instruction (`waw`, `war`) become `ordered` facts; the rest are violations.
    deps: BTreeMap<(String, String, String), (u64, String)>,
    raw_examples: BTreeMap<(String, String), String>,
    /// After [`Learner::finish`]: dependences that ptxas's code leaves uncovered according to
    /// the effects model (a model bug or a rule ptxas does not follow): (kind, producer class,
    /// consumer class) -> count, with an example.
    pub violations: BTreeMap<(String, String, String), (u64, String)>,
    /// Scoreboard reuse while pending: (pending class, new class) -> count.
    pub reuse: BTreeMap<(String, String), u64>,
    pub sections: u64,
    pub instructions: u64,
}

struct Obsv<'a> {
    l: &'a mut Learner,
    nodes: &'a [Node],
    label: &'a str,
}

impl Obsv<'_> {
    fn class(&self, i: usize) -> String {
        self.nodes[i]
            .effects
            .as_ref()
            .map_or_else(|| "?".to_string(), |e| e.class.clone())
    }
    fn violation(&mut self, kind: &str, a: usize, b: usize) {
        let key = (kind.to_string(), self.class(a), self.class(b));
        let ex = format!(
            "{} {:#06x} -> {:#06x}",
            self.label, self.nodes[a].pc, self.nodes[b].pc
        );
        let e = self.l.deps.entry(key).or_insert((0, ex));
        e.0 += 1;
    }
}

fn add(map: &mut BTreeMap<(String, String), Obs>, a: String, b: String, d: u16) {
    map.entry((a, b)).or_insert(Obs { min: d, n: 0 }).add(d);
}

fn is_variable(c: &ClassInfo) -> bool {
    c.writes > 0 && c.sb * 1000 >= c.writes * VARIABLE_PER_MILLE
}

/// Learning rules: an unscoreboarded variable result may complete with any later scoreboarded
/// instruction (the first of each class); the one ptxas waits on first before using the
/// result is recorded (`ordered raw`).
struct LearnRules<'a> {
    variable: &'a BTreeSet<String>,
}

impl flow::Rules for LearnRules<'_> {
    fn is_variable(&self, class: &str) -> bool {
        self.variable.contains(class)
    }
    fn completes_after(&self, _first: &str, _later: &str) -> bool {
        true
    }
}

impl Observer for Obsv<'_> {
    fn floating(&mut self, producer: usize, consumer: usize, _key: u16, via: Option<usize>) {
        match via {
            Some(v) => {
                let later = if v == producer {
                    flow::SELF_READ.to_string()
                } else {
                    self.class(v)
                };
                let key = ("raw".to_string(), self.class(producer), later);
                self.l.deps.entry(key).or_insert((0, String::new())).0 += 1;
            }
            None => self.violation("unguarded", producer, consumer),
        }
    }
    fn raw_fixed(&mut self, producer: usize, consumer: usize, _key: u16, elapsed: u16) {
        let (p, c) = (self.class(producer), self.class(consumer));
        if !self.l.raw.contains_key(&(p.clone(), c.clone())) {
            let ex = format!(
                "{} {:#06x} -> {:#06x}",
                self.label, self.nodes[producer].pc, self.nodes[consumer].pc
            );
            self.l.raw_examples.insert((p.clone(), c.clone()), ex);
        }
        add(&mut self.l.raw, p, c, elapsed);
    }
    fn raw_sb(&mut self, producer: usize, consumer: usize, _key: u16, _sb: u8, write: bool) {
        self.violation(if write { "waw-sb" } else { "raw-sb" }, producer, consumer);
    }
    fn war_sb(&mut self, reader: usize, writer: usize, _key: u16, _sb: u8) {
        self.violation("war-sb", reader, writer);
    }
    fn war_fixed(&mut self, reader: usize, writer: usize, _key: u16, elapsed: u16) {
        let (r, w) = (self.class(reader), self.class(writer));
        add(&mut self.l.war, r, w, elapsed);
    }
    fn sb_wait(&mut self, _setter: usize, _waiter: usize, _sb: u8, elapsed: u16) {
        self.l
            .sbwait
            .get_or_insert(Obs { min: elapsed, n: 0 })
            .add(elapsed);
    }
    fn sb_reuse(&mut self, inst: usize, _sb: u8, pending: &[usize]) {
        for &p in pending {
            if !reuse_allowed(self.nodes, p, inst) {
                let key = (self.class(p), self.class(inst));
                *self.l.reuse.entry(key).or_default() += 1;
            }
        }
    }
}

impl Learner {
    /// Adds one code section (`label` names it in examples).
    /// First pass: counts how often ptxas scoreboards each class's results.
    pub fn count_classes(&mut self, nodes: &[Node]) {
        self.sections += 1;
        self.instructions += nodes.len() as u64;
        for nd in nodes {
            let Some(e) = &nd.effects else { continue };
            let c = self.classes.entry(e.class.clone()).or_default();
            if !e.writes.is_empty() {
                c.writes += 1;
                if nd.control.write_sb < 6 {
                    c.sb += 1;
                }
            }
        }
    }

    /// The variable-latency classes after the first pass (see [`VARIABLE_PER_MILLE`]).
    pub fn variable_classes(&self) -> BTreeSet<String> {
        self.classes
            .iter()
            .filter(|(_, c)| is_variable(c))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Second pass: observes the dependences of one section (`label` names it in examples),
    /// given the variable-latency classes of the first pass.
    pub fn add_section(&mut self, label: &str, nodes: &[Node], variable: &BTreeSet<String>) {
        let rules = LearnRules { variable };
        let mut o = Obsv {
            l: self,
            nodes,
            label,
        };
        flow::analyze(nodes, &rules, &mut o);
    }

    /// The table: classes marked variable by [`VARIABLE_PER_MILLE`]; RAW pairs of variable
    /// producers become the producer's `unguarded-reads` count instead of distances; WAR
    /// pairs are kept for variable readers only.
    pub fn finish(&mut self, sm: &str, header: Vec<String>) -> LatencyTable {
        let mut classes = std::mem::take(&mut self.classes);
        for c in classes.values_mut() {
            c.variable = is_variable(c);
        }
        let variable = |c: &str| classes.get(c).is_some_and(|i| i.variable);
        let mut raw = BTreeMap::new();
        let mut unguarded: BTreeMap<String, u64> = BTreeMap::new();
        for ((p, c), o) in std::mem::take(&mut self.raw) {
            if variable(&p) {
                let ex = self.raw_examples.get(&(p.clone(), c.clone())).cloned();
                self.violations.insert(
                    ("unguarded".to_string(), p.clone(), c),
                    (o.n, ex.unwrap_or_default()),
                );
                *unguarded.entry(p).or_default() += o.n;
            } else {
                raw.insert((p, c), o);
            }
        }
        let war = std::mem::take(&mut self.war)
            .into_iter()
            .filter(|((r, _), _)| variable(r))
            .collect();
        let mut ordered = BTreeMap::new();
        for ((kind, a, b), (n, ex)) in std::mem::take(&mut self.deps) {
            match kind.as_str() {
                "waw-sb" | "war-sb" if variable(&b) => {
                    ordered.insert((kind[..3].to_string(), a, b), n);
                }
                "raw" => {
                    ordered.insert((kind, a, b), n);
                }
                "unguarded" => {
                    *unguarded.entry(a.clone()).or_default() += n;
                    self.violations.insert((kind, a, b), (n, ex));
                }
                _ => {
                    self.violations.insert((kind, a, b), (n, ex));
                }
            }
        }
        for (p, n) in unguarded {
            if let Some(c) = classes.get_mut(&p) {
                c.unguarded_reads = n;
            }
        }
        let mut t = LatencyTable {
            sm: sm.to_string(),
            header,
            classes,
            raw,
            war,
            sbwait: self.sbwait.take(),
            ordered,
            ..LatencyTable::default()
        };
        t.reindex();
        t
    }
}

/// Whether putting `new` on a scoreboard on which `old` is still pending is allowed. Scoreboards
/// count operations, so sharing one only makes a wait wait longer; ptxas does it freely, so
/// any sharing is allowed. (A partial wait, `DEPBAR.LE SBn, k`, is modelled in [`crate::flow`]
/// by releasing the oldest operations first.)
pub fn reuse_allowed(_nodes: &[Node], _old: usize, _new: usize) -> bool {
    true
}

impl Learner {
    /// Adds the observations of `o` (from another thread) to `self`.
    pub fn merge(&mut self, o: Learner) {
        for (k, c) in o.classes {
            let e = self.classes.entry(k).or_default();
            e.writes += c.writes;
            e.sb += c.sb;
        }
        for (k, v) in o.raw {
            let e = self.raw.entry(k).or_insert(Obs { min: v.min, n: 0 });
            e.min = e.min.min(v.min);
            e.n += v.n;
        }
        for (k, v) in o.war {
            let e = self.war.entry(k).or_insert(Obs { min: v.min, n: 0 });
            e.min = e.min.min(v.min);
            e.n += v.n;
        }
        if let Some(v) = o.sbwait {
            let e = self.sbwait.get_or_insert(Obs { min: v.min, n: 0 });
            e.min = e.min.min(v.min);
            e.n += v.n;
        }
        for (k, ex) in o.raw_examples {
            self.raw_examples.entry(k).or_insert(ex);
        }
        for (k, (n, ex)) in o.deps {
            self.deps.entry(k).or_insert((0, ex)).0 += n;
        }
        for (k, n) in o.reuse {
            *self.reuse.entry(k).or_default() += n;
        }
        self.sections += o.sections;
        self.instructions += o.instructions;
    }
}

/// FNV-1a 64 over parts separated by 0xff (the hash `xtask` uses for caches and headers).
pub fn fnv1a64(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The committed inputs of a latency table besides the corpus: the generator version, the
/// effects table and the analysis rules. A table whose header names another hash is stale.
pub fn model_hash() -> String {
    let g = GENERATOR.to_string();
    let h = fnv1a64(&[
        g.as_bytes(),
        crate::effects::EFFECTS_TXT.as_bytes(),
        include_str!("effects.rs").as_bytes(),
        include_str!("flow.rs").as_bytes(),
        include_str!("learn.rs").as_bytes(),
    ]);
    format!("{h:016x}")
}
