//! Fixed-latency distances from the learned hazard tables (`crates/hazard/tables/sm_XX.txt`),
//! per producer and consumer, where the tables say enough to be safe; elsewhere the bounds of
//! [`Latencies`](crate::Latencies).
//!
//! A table row `raw P C d n=N` says ptxas 13.0.88 never put a consumer of class `C` closer than
//! `d` cycles after the `P` whose register it reads, in `N` samples. That minimum is over every
//! operand a `C` reads, and some operands are read late: `IMAD` → `IMAD` at 2 cycles is the
//! accumulator, `IADD3` → `IMAD.WIDE` at 3 the 64-bit addend, `ISETP` → `SEL` at 4 a predicate
//! read as a selector. So a pair's own minimum does not bound a read in an early operand. The
//! distance used here is the pair's minimum, but never less than what the producer needed
//! before the *early readers*: the largest minimum over the common ALU and FMA-pipe consumers
//! ([`EARLY_READERS`]) with at least [`SAMPLES`] samples (`IADD3`: 4 to `IADD3`/`LOP3`/`ISETP`,
//! 5 to `IMAD`/`FADD`, so 5). A predicate read as a guard keeps the bound of `Latencies` (the
//! tables show 13 before almost any guarded consumer); a predicate read as an operand by a
//! consumer that takes predicates as operands uses the same rule over [`PREDICATE_READERS`].
//! A pair the table never saw, or a producer without early-reader samples, keeps the bound,
//! and no distance exceeds the bound: the tables only shorten what `Latencies` gives (some
//! producers' floors are large for reasons the tables do not show, `IMAD.WIDE` → `FADD` at 16
//! on sm_90, and the bounds are what ran on the H100).

use std::collections::HashMap;

use hazard::table::LatencyTable;
use ir::{Inst, Mnemonic};

/// Consumers that read their register operands early in the pipeline, sampled well enough in
/// the corpus to bound a producer's result latency.
const EARLY_READERS: &[&str] = &[
    "IADD3", "IMAD", "LOP3", "SHF", "LEA", "ISETP", "FFMA", "FADD", "FMUL", "MOV", "SEL", "PRMT",
];

/// Consumers that read a predicate as an operand (a selector, a combined predicate).
const PREDICATE_READERS: &[&str] = &["SEL", "FSEL", "ISETP", "FSETP", "PLOP3"];

/// A table minimum counts towards a producer's bound with at least this many samples.
const SAMPLES: u64 = 100;

/// The learned distances of one SM.
pub(crate) struct FixedLatency {
    table: Option<&'static LatencyTable>,
    /// Producer class -> largest minimum before an early reader of its register results.
    early: HashMap<&'static str, u16>,
    /// Producer class -> largest minimum before a predicate operand reader.
    predicate: HashMap<&'static str, u16>,
}

impl FixedLatency {
    pub(crate) fn of(sm: &str) -> FixedLatency {
        let table = hazard::latency_table(sm);
        let mut early: HashMap<&'static str, u16> = HashMap::new();
        let mut predicate: HashMap<&'static str, u16> = HashMap::new();
        if let Some(t) = table {
            for ((p, c), o) in &t.raw {
                if o.n < SAMPLES {
                    continue;
                }
                for (readers, map) in [
                    (EARLY_READERS, &mut early),
                    (PREDICATE_READERS, &mut predicate),
                ] {
                    if readers.contains(&c.as_str()) {
                        let e = map.entry(p.as_str()).or_default();
                        *e = (*e).max(o.min);
                    }
                }
            }
        }
        FixedLatency {
            table,
            early,
            predicate,
        }
    }

    /// The latency class of an instruction (`hazard`'s: the mnemonic, or `IMAD.WIDE` and
    /// `HFMA2.MMA`, `crates/hazard/data/effects.txt`).
    pub(crate) fn class(i: &Inst) -> &'static str {
        match i.mnemonic() {
            Mnemonic::IMAD if i.op.has(ir::modifier!("WIDE")) => "IMAD.WIDE",
            Mnemonic::HFMA2 if i.op.has(ir::modifier!("MMA")) => "HFMA2.MMA",
            m => m.name(),
        }
    }

    /// Cycles from the issue of a `producer` (class) result to `consumer`'s read of it:
    /// `bound` unless the table gives a safe distance (see the module documentation).
    /// `predicate`: the register is a predicate; `guard`: `consumer` reads it as its guard.
    pub(crate) fn read_after(
        &self,
        producer: &str,
        consumer: &Inst,
        predicate: bool,
        guard: bool,
        bound: u64,
    ) -> u64 {
        let Some(t) = self.table else {
            return bound;
        };
        if guard {
            return bound;
        }
        let Some(pair) = t
            .raw
            .get(&(producer.to_string(), Self::class(consumer).to_string()))
        else {
            return bound;
        };
        let floor = if predicate {
            self.predicate.get(producer)
        } else {
            self.early.get(producer)
        };
        match floor {
            Some(f) => bound.min(u64::from(pair.min.max(*f))),
            None => bound,
        }
    }
}
