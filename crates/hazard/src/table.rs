//! Per-SM latency tables learned from ptxas's output (`cargo xtask hazard-learn`), their text
//! format, and the lookups the checker and a scheduler use.
//!
//! Format (one fact per line, `#` lines are the header):
//!
//! ```text
//! class <CLASS> <fixed|variable> writes=<n> sb=<n> unguarded-reads=<n>
//! raw <PRODUCER> <CONSUMER> <min stall distance> n=<observations>
//! war <READER> <WRITER> <min stall distance> n=<observations>
//! sbwait <min stall distance from setting a scoreboard to waiting on it> n=<observations>
//! ordered <war|waw> <FIRST> <WRITER> n=<observations>
//! ```
//!
//! `ordered` pairs: ptxas lets a variable-latency WRITER overwrite a register that FIRST still
//! holds on its read scoreboard (`war`) or will still write (`waw`), without waiting: the
//! hardware keeps the two in order (e.g. both go through the shared-memory pipeline).
//! `ordered raw FIRST LATER`: a FIRST result without a write scoreboard is complete once a
//! later scoreboarded LATER instruction has been waited on.

use std::collections::{BTreeMap, BTreeSet};

use crate::flow;

/// Facts about one latency class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClassInfo {
    /// Whether ptxas guards its results with scoreboards (variable latency).
    pub variable: bool,
    /// Instances that write registers.
    pub writes: u64,
    /// Of those, instances that set a write scoreboard.
    pub sb: u64,
    /// Reads of an unguarded result of this class seen in ptxas's code (must be 0 for a
    /// variable class; for a fixed class the RAW distances apply).
    pub unguarded_reads: u64,
}

/// A minimum distance and how many times the pair was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Obs {
    pub min: u16,
    pub n: u64,
}

impl Obs {
    pub fn add(&mut self, d: u16) {
        self.min = self.min.min(d);
        self.n += 1;
    }
}

/// The learned latency facts of one SM.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LatencyTable {
    pub sm: String,
    /// Header lines without the leading `# `.
    pub header: Vec<String>,
    pub classes: BTreeMap<String, ClassInfo>,
    /// Fixed-latency read-after-write: (producer class, consumer class) -> min distance.
    pub raw: BTreeMap<(String, String), Obs>,
    /// Write-after-read of a variable-latency reader without a read scoreboard:
    /// (reader class, writer class) -> min distance.
    pub war: BTreeMap<(String, String), Obs>,
    /// Minimum distance between setting a scoreboard and waiting on it.
    pub sbwait: Option<Obs>,
    /// (`war`|`waw`, first class, variable writer class) triples that ptxas keeps in order
    /// without a wait.
    pub ordered: BTreeMap<(String, String, String), u64>,
    /// Derived from `raw` ([`LatencyTable::reindex`]): per consumer class, the smallest RAW
    /// distance any producer was consumed after.
    pub raw_by_consumer: BTreeMap<String, u16>,
    /// Derived from `war`: per writer class, the smallest WAR distance after any reader.
    pub war_by_writer: BTreeMap<String, u16>,
    /// Derived from `ordered raw` ([`LatencyTable::completes_after`]): the transitive closure
    /// of the learned completion orders, plus each non-memory variable class after itself.
    pub completion_order: BTreeSet<(String, String)>,
}

/// Whether a class is a memory or texture access (whose completion order among themselves is
/// left to what ptxas shows: loads may complete out of order).
fn is_memory_class(class: &str) -> bool {
    [
        "LD", "ST", "ATOM", "RED", "SU", "TEX", "TLD", "TXD", "TXQ", "TMML", "CCTL", "UBLKCP",
        "UTMA",
    ]
    .iter()
    .any(|p| class.starts_with(p))
}

/// The transitive closure of a relation: (a, c) whenever a chain a -> b -> ... -> c of pairs
/// exists (Warshall's algorithm over interned names: the fixed-point loop over string pairs
/// it replaces took 2.5 ms of every compile's start-up).
fn transitive_closure(pairs: &BTreeSet<(String, String)>) -> BTreeSet<(String, String)> {
    let mut names: Vec<&str> = pairs
        .iter()
        .flat_map(|(a, b)| [a.as_str(), b.as_str()])
        .collect();
    names.sort_unstable();
    names.dedup();
    let id = |n: &str| names.binary_search(&n).expect("interned");
    let n = names.len();
    let words = n.div_ceil(64);
    let mut reach = vec![vec![0u64; words]; n];
    for (a, b) in pairs {
        let j = id(b);
        reach[id(a)][j / 64] |= 1 << (j % 64);
    }
    for k in 0..n {
        let via = reach[k].clone();
        for row in &mut reach {
            if row[k / 64] >> (k % 64) & 1 == 1 {
                for (w, v) in row.iter_mut().zip(&via) {
                    *w |= v;
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    for (i, row) in reach.iter().enumerate() {
        for j in 0..n {
            if row[j / 64] >> (j % 64) & 1 == 1 {
                out.insert((names[i].to_string(), names[j].to_string()));
            }
        }
    }
    out
}

impl LatencyTable {
    /// Rebuilds the derived per-consumer and per-writer minima from `raw` and `war`.
    pub fn reindex(&mut self) {
        // Minima per second class (gathered over borrowed names: each name is copied once).
        fn minima(m: &BTreeMap<(String, String), Obs>) -> BTreeMap<String, u16> {
            let mut by: std::collections::HashMap<&str, u16> = Default::default();
            for ((_, c), o) in m {
                let e = by.entry(c.as_str()).or_insert(o.min);
                *e = (*e).min(o.min);
            }
            by.into_iter().map(|(c, v)| (c.to_string(), v)).collect()
        }
        self.raw_by_consumer = minima(&self.raw);
        self.war_by_writer = minima(&self.war);
        self.completion_order = transitive_closure(&self.completion_pairs());
    }

    /// The learned completion orders before closure ([`LatencyTable::reindex`]).
    fn completion_pairs(&self) -> BTreeSet<(String, String)> {
        // Completion order: if every earlier A is complete once a later B is, and every
        // earlier B once a later C is, A and B share B's in-order queue with C (or finish
        // sooner), so an earlier A is complete once a later C is. `@read` (the producer's own
        // read scoreboard) is not a class and takes no part in chains.
        let mut order: BTreeSet<(String, String)> = self
            .ordered
            .keys()
            .filter(|(k, a, b)| k == "raw" && a != flow::SELF_READ && b != flow::SELF_READ)
            .map(|(_, a, b)| (a.clone(), b.clone()))
            .collect();
        // Results of one non-memory variable class complete in issue order (one queue): ptxas
        // relies on it for every such class whose unscoreboarded results it ever leaves to a
        // later one (docs/arch/hazard.md).
        for (name, c) in &self.classes {
            if c.variable && !is_memory_class(name) {
                order.insert((name.clone(), name.clone()));
            }
        }
        order
    }

    /// Whether an unscoreboarded variable-latency result of `first` is complete once a later
    /// scoreboarded instruction of class `later` is (`later` may be [`flow::SELF_READ`]).
    pub fn completes_after(&self, first: &str, later: &str) -> bool {
        if later == flow::SELF_READ {
            return self.ordered.contains_key(&(
                "raw".to_string(),
                first.to_string(),
                later.to_string(),
            ));
        }
        self.completion_order
            .contains(&(first.to_string(), later.to_string()))
    }

    /// Parses the text format; errors name the line.
    pub fn parse(sm: &str, text: &str) -> Result<LatencyTable, String> {
        let mut t = LatencyTable {
            sm: sm.to_string(),
            ..LatencyTable::default()
        };
        // Rows gathered first and the maps built from them at once (the generator writes them
        // sorted, and building a map from a list is much cheaper than inserting row by row:
        // this runs at every compile's start).
        let mut raw = Vec::new();
        let mut war = Vec::new();
        let mut ordered = Vec::new();
        for (ln, line) in text.lines().enumerate() {
            if let Some(h) = line.strip_prefix("# ") {
                t.header.push(h.to_string());
                continue;
            }
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || format!("{sm} latency table line {}: `{line}`", ln + 1);
            let mut words = [""; 7];
            let mut count = 0;
            for word in line.split_ascii_whitespace() {
                if count == words.len() {
                    return Err(bad());
                }
                words[count] = word;
                count += 1;
            }
            let w = &words[..count];
            let kv = |s: &str, key: &str| -> Result<u64, String> {
                s.strip_prefix(key)
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(bad)
            };
            match w {
                ["class", name, kind, writes, sb, ur] => {
                    let variable = match *kind {
                        "variable" => true,
                        "fixed" => false,
                        _ => return Err(bad()),
                    };
                    t.classes.insert(
                        name.to_string(),
                        ClassInfo {
                            variable,
                            writes: kv(writes, "writes=")?,
                            sb: kv(sb, "sb=")?,
                            unguarded_reads: kv(ur, "unguarded-reads=")?,
                        },
                    );
                }
                [kind @ ("raw" | "war"), a, b, min, n] => {
                    let obs = Obs {
                        min: min.parse().map_err(|_| bad())?,
                        n: kv(n, "n=")?,
                    };
                    let rows = if *kind == "raw" { &mut raw } else { &mut war };
                    rows.push(((a.to_string(), b.to_string()), obs));
                }
                ["ordered", k @ ("raw" | "war" | "waw"), a, b, n] => {
                    ordered.push(((k.to_string(), a.to_string(), b.to_string()), kv(n, "n=")?));
                }
                ["sbwait", min, n] => {
                    t.sbwait = Some(Obs {
                        min: min.parse().map_err(|_| bad())?,
                        n: kv(n, "n=")?,
                    });
                }
                _ => return Err(bad()),
            }
        }
        t.raw = raw.into_iter().collect();
        t.war = war.into_iter().collect();
        t.ordered = ordered.into_iter().collect();
        t.reindex();
        Ok(t)
    }

    /// The canonical text form (what the generator writes).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for h in &self.header {
            s.push_str("# ");
            s.push_str(h);
            s.push('\n');
        }
        for (name, c) in &self.classes {
            s.push_str(&format!(
                "class {name} {} writes={} sb={} unguarded-reads={}\n",
                if c.variable { "variable" } else { "fixed" },
                c.writes,
                c.sb,
                c.unguarded_reads
            ));
        }
        for ((a, b), o) in &self.raw {
            s.push_str(&format!("raw {a} {b} {} n={}\n", o.min, o.n));
        }
        for ((a, b), o) in &self.war {
            s.push_str(&format!("war {a} {b} {} n={}\n", o.min, o.n));
        }
        if let Some(o) = self.sbwait {
            s.push_str(&format!("sbwait {} n={}\n", o.min, o.n));
        }
        for ((k, a, b), n) in &self.ordered {
            s.push_str(&format!("ordered {k} {a} {b} n={n}\n"));
        }
        s
    }

    /// Whether the table has seen instructions of `class` (in ptxas's code).
    pub fn knows(&self, class: &str) -> bool {
        self.classes.contains_key(class)
    }

    /// Whether results of `class` are variable-latency (guarded by scoreboards). Classes the
    /// table has never seen count as fixed.
    pub fn is_variable(&self, class: &str) -> bool {
        self.classes.get(class).is_some_and(|c| c.variable)
    }

    /// The distance the checker requires between a fixed-latency producer and a consumer of
    /// its result: the smallest distance ptxas leaves after the producer before *any*
    /// consumer, or the smallest distance any producer leaves before this consumer class,
    /// whichever is smaller (0 for an unknown producer). Not the pair's own minimum: a pair's
    /// minimum is only what ptxas's schedules happened to leave (`FMNMX` → `IADD3` 22 cycles on
    /// the sm_90 corpus, against 4 before another `FMNMX`). The consumer side: some consumers
    /// read their operands a cycle later than others, or sit in the producer's own pipe, and
    /// ptxas schedules them sooner — on PTX outside the corpus, `F2FP` → `PRMT` and `HADD2` →
    /// `HFMA2` at 4 cycles where the corpus's fastest consumers of `F2FP`/`HADD2` took 5 and
    /// `PRMT`/`HFMA2` were fed after 4 by other producers; `R2P` → `FSEL` after 6 where every
    /// corpus consumer of `R2P` waited 13 or more. Taking the smaller bound costs the
    /// perturbation test a few stall cuts on sm_80 (`SEL` → `SEL` at 3, 4 cycles in the corpus;
    /// docs/arch/hazard.md).
    pub fn raw_required(&self, producer: &str, consumer: &str) -> u16 {
        let by_producer = self
            .raw
            .range((producer.to_string(), String::new())..)
            .take_while(|((p, _), _)| p == producer)
            .map(|(_, o)| o.min)
            .min()
            .unwrap_or(0);
        let by_consumer = self
            .raw_by_consumer
            .get(consumer)
            .copied()
            .unwrap_or(u16::MAX);
        by_producer.min(by_consumer)
    }

    /// A branch ptxas wrote at least this often after a producer measures that producer's
    /// guard latency ([`LatencyTable::raw_required_predicate`]).
    pub const PREDICATE_PAIR_SAMPLES: u64 = 50;

    /// The distance the checker requires before a consumer reads a *predicate* a fixed-latency
    /// producer wrote. A predicate read as an operand (`SEL`, `FSEL`, `PLOP3`, a carry-in) takes
    /// [`LatencyTable::raw_required`]. A predicate read as the consumer's *guard* (`@P0 ...`,
    /// a branch's condition) arrives later: the producer's guard latency, which is what ptxas
    /// leaves before a branch on it (`raw <producer> BRA`, where ptxas wrote that pair at least
    /// [`Self::PREDICATE_PAIR_SAMPLES`] times). sm_90's `DSETP` feeds `FSEL`'s operand after
    /// 6 cycles but a guard only after 14 (`raw DSETP BRA 14 n=761`); the operand minimum let
    /// kiln's 13-cycle `DSETP` → `@P0 BRA` pass, and on an H100 that branch read the previous
    /// predicate (docs/arch/hardware.md). The branch latency bounds every guard read: the
    /// sm_80 corpus has `ISETP` → `@P0 DADD` only at 14 or more (n=827), but ptxas writes it at
    /// 13, the `ISETP` → `BRA` latency, for PTX outside the corpus (found by `cargo xtask fuzz
    /// codegen --ptxas`). Some guarded consumers read their guard sooner, and a pair ptxas was
    /// seen to write sooner keeps its own minimum (`ISETP` → `@P4 MEMBAR` at 12).
    pub fn raw_required_predicate(&self, producer: &str, consumer: &str, guard: bool) -> u16 {
        let base = self.raw_required(producer, consumer);
        if !guard {
            return base;
        }
        let Some(branch) = self
            .raw
            .get(&(producer.to_string(), "BRA".to_string()))
            .filter(|o| o.n >= Self::PREDICATE_PAIR_SAMPLES)
            .map(|o| o.min)
        else {
            return base;
        };
        let own = self
            .raw
            .get(&(producer.to_string(), consumer.to_string()))
            .map(|o| o.min);
        base.max(own.map_or(branch, |m| m.min(branch)))
    }

    /// The distance a scheduler should leave (conservative): the learned minimum for the pair;
    /// for an unseen pair the largest minimum of the producer with any consumer; for an
    /// unknown producer the largest minimum in the table.
    pub fn raw_safe(&self, producer: &str, consumer: &str) -> u16 {
        if let Some(o) = self.raw.get(&(producer.to_string(), consumer.to_string())) {
            return o.min;
        }
        self.raw
            .range((producer.to_string(), String::new())..)
            .take_while(|((p, _), _)| p == producer)
            .map(|(_, o)| o.min)
            .max()
            .unwrap_or_else(|| self.max_raw())
    }

    /// WAR distance required after a variable-latency reader without a read scoreboard: the
    /// smallest ptxas leaves before any writer (per reader, like
    /// [`LatencyTable::raw_required`]) or the smallest after any such reader before this
    /// writer class, whichever is smaller. Without a read scoreboard the reader takes its operands within a
    /// few cycles of issue; the corpus's minimum for a rarely seen reader is a sample, not
    /// that latency (`ATOMG` → `IMAD` at 32 cycles in the sm_90 corpus, 3 in ptxas's code for
    /// PTX outside it, where other readers were overwritten by `IMAD` after 3).
    pub fn war_required(&self, reader: &str, writer: &str) -> u16 {
        let by_reader = self
            .war
            .range((reader.to_string(), String::new())..)
            .take_while(|((p, _), _)| p == reader)
            .map(|(_, o)| o.min)
            .min()
            .unwrap_or(0);
        let by_writer = self.war_by_writer.get(writer).copied().unwrap_or(u16::MAX);
        by_reader.min(by_writer)
    }

    /// Whether variable-latency `writer` may overwrite a register still pending for `first`
    /// (`kind` = `war`: on its read scoreboard; `waw`: its own pending write) without waiting.
    ///
    /// A write-after-read between two instructions of one variable-latency class is ordered
    /// too: they run in one in-order pipe, which reads the first one's operands before the
    /// second one's result exists. ptxas relies on it (`DFMA R18, -R20, ...` then
    /// `DFMA R20, -R20, 1, -R20` with no wait on the first one's read scoreboard, sm_80, PTX
    /// outside the corpus: `cargo xtask fuzz codegen --ptxas`), rarely enough that the
    /// learner saw it only for `DMUL`.
    pub fn is_ordered(&self, kind: &str, first: &str, writer: &str) -> bool {
        self.is_variable(writer)
            && ((kind == "war" && first == writer)
                || self.ordered.contains_key(&(
                    kind.to_string(),
                    first.to_string(),
                    writer.to_string(),
                )))
    }

    /// The largest RAW minimum in the table (how long fixed-latency results stay relevant).
    pub fn max_raw(&self) -> u16 {
        self.raw.values().map(|o| o.min).max().unwrap_or(0)
    }

    /// The largest WAR minimum in the table.
    pub fn max_war(&self) -> u16 {
        self.war.values().map(|o| o.min).max().unwrap_or(0)
    }

    /// A header field `key value` (e.g. `inputs-hash`).
    pub fn header_field(&self, key: &str) -> Option<&str> {
        self.header.iter().find_map(|h| {
            h.split("; ")
                .find_map(|p| p.strip_prefix(key).and_then(|v| v.strip_prefix(' ')))
        })
    }
}

#[cfg(test)]
mod closure_tests {
    use super::*;

    /// The fixed-point loop `transitive_closure` replaced.
    fn naive(pairs: &BTreeSet<(String, String)>) -> BTreeSet<(String, String)> {
        let mut order = pairs.clone();
        loop {
            let mut added = Vec::new();
            for (a, b) in &order {
                for (x, c) in &order {
                    if x == b && !order.contains(&(a.clone(), c.clone())) {
                        added.push((a.clone(), c.clone()));
                    }
                }
            }
            if added.is_empty() {
                return order;
            }
            order.extend(added);
        }
    }

    fn set(pairs: &[(&str, &str)]) -> BTreeSet<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn closure_of_chains_and_cycles() {
        let r = set(&[
            ("A", "B"),
            ("B", "C"),
            ("C", "D"),
            ("X", "Y"),
            ("Y", "X"),
            ("Q", "Q"),
        ]);
        let c = transitive_closure(&r);
        assert_eq!(c, naive(&r));
        assert!(c.contains(&("A".to_string(), "D".to_string())));
        assert!(c.contains(&("X".to_string(), "X".to_string())));
        assert!(!c.contains(&("A".to_string(), "A".to_string())));
    }

    /// On every committed table's completion orders, the closure equals the fixed point.
    #[test]
    fn closure_equals_the_fixed_point_on_committed_tables() {
        for (sm, text) in crate::TABLES {
            if text.trim().is_empty() {
                continue;
            }
            let t = LatencyTable::parse(sm, text).expect("parses");
            let base = t.completion_pairs();
            assert_eq!(t.completion_order, naive(&base), "{sm}");
        }
    }
}
