//! `mbarrier` objects (PTX ISA 9.0 §9.7.13.15): 64-bit barriers in shared memory that count
//! arrivals and transaction bytes per phase.
//!
//! The interpreter keeps an object in its own 8 bytes of shared memory, so that re-initialising,
//! aliasing and the sanitizer's view of the bytes behave like any other memory. The encoding is
//! the interpreter's own (PTX leaves the object opaque; the hardware's is not this one):
//!
//! | bits    | field                                                         |
//! |---------|---------------------------------------------------------------|
//! | 0..20   | pending arrivals of the current phase                         |
//! | 20..40  | expected arrivals (what `pending` restarts from)              |
//! | 40..62  | transaction count (bytes expected minus bytes completed), signed |
//! | 62      | set once initialised (`inval` clears it)                      |
//! | 63      | phase parity                                                  |
//!
//! A phase completes when its pending arrivals and its transaction count are both zero: the
//! parity flips, `pending` restarts from `expected`. The opaque state an `arrive` returns is the
//! object as it was before the arrival; `test_wait`/`try_wait` with a state report whether that
//! state's phase has completed (the parity differs), `.parity` forms compare with the operand's
//! low bit. `try_wait` never blocks here (PTX lets it return false when its time limit ends,
//! and the program loops). `pending_count` is not modelled (what count a state reports, before
//! or after its own arrival, is the hardware's and not confirmed on one).

/// The operation of an `mbarrier` instruction (or `cp.async.mbarrier.arrive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbarOp {
    /// `mbarrier.init [a], count`.
    Init,
    /// `mbarrier.arrive{.expect_tx}` / `arrive_drop{.expect_tx}`: `state, [a]{, count | tx}`.
    /// `drop` also lowers the expected count; `expect_tx` adds the operand to the transaction
    /// count first (and arrives once); `no_complete` (sm_80's `.noComplete`) must not complete
    /// the phase (undefined in PTX if it does: reported).
    Arrive {
        drop: bool,
        expect_tx: bool,
        no_complete: bool,
    },
    /// `mbarrier.expect_tx [a], tx`.
    ExpectTx,
    /// `mbarrier.complete_tx [a], tx`.
    CompleteTx,
    /// `mbarrier.test_wait`/`try_wait{.parity}`: `p, [a], state | parity{, time}`.
    TestWait { parity: bool },
    /// `mbarrier.inval [a]`.
    Inval,
    /// `cp.async.mbarrier.arrive{.noinc} [a]`: the arrival when the thread's earlier
    /// `cp.async` copies complete (at once here). Without `.noinc` the pending count is raised
    /// by one first, so the pair leaves the phase as it was.
    CpAsyncArrive { noinc: bool },
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [d], [s], n, [a]`:
    /// copies `n` bytes (a multiple of 16, both addresses 16-byte aligned) from global to the
    /// CTA's shared memory, then completes `n` transaction bytes on the barrier (at once here).
    BulkCopy,
}

const FIELD: u64 = (1 << 20) - 1;
const TX_BITS: u32 = 22;
const TX_SHIFT: u32 = 40;
const VALID: u64 = 1 << 62;
const PHASE: u64 = 1 << 63;

/// The largest arrival count PTX allows (`2^20 - 1`).
pub const MAX_COUNT: u64 = FIELD;

/// An object's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Object {
    pub pending: u64,
    pub expected: u64,
    pub tx: i64,
    pub valid: bool,
    pub phase: bool,
}

impl Object {
    pub fn decode(w: u64) -> Object {
        let raw_tx = (w >> TX_SHIFT) & ((1 << TX_BITS) - 1);
        // Sign-extend the 22-bit transaction count.
        let tx = ((raw_tx << (64 - TX_BITS)) as i64) >> (64 - TX_BITS);
        Object {
            pending: w & FIELD,
            expected: (w >> 20) & FIELD,
            tx,
            valid: w & VALID != 0,
            phase: w & PHASE != 0,
        }
    }

    pub fn encode(&self) -> u64 {
        let tx = (self.tx as u64) & ((1 << TX_BITS) - 1);
        (self.pending & FIELD)
            | (self.expected & FIELD) << 20
            | tx << TX_SHIFT
            | if self.valid { VALID } else { 0 }
            | if self.phase { PHASE } else { 0 }
    }

    /// A fresh object expecting `count` arrivals per phase, in phase 0.
    pub fn init(count: u64) -> Result<Object, String> {
        if count == 0 || count > MAX_COUNT {
            return Err(format!(
                "mbarrier.init with count {count} (PTX allows 1 to 2^20 - 1)"
            ));
        }
        Ok(Object {
            pending: count,
            expected: count,
            tx: 0,
            valid: true,
            phase: false,
        })
    }

    /// Completes the phase when nothing is pending.
    fn settle(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.phase = !self.phase;
            self.pending = self.expected;
        }
    }

    /// Adds `tx` transaction bytes (negative: completes them).
    pub fn add_tx(&mut self, tx: i64) -> Result<(), String> {
        let limit = (1i64 << 20) - 1;
        let t = self.tx + tx;
        if !(-limit..=limit).contains(&t) {
            return Err(format!(
                "mbarrier transaction count {t} out of range (PTX: -(2^20 - 1) to 2^20 - 1)"
            ));
        }
        self.tx = t;
        self.settle();
        Ok(())
    }

    /// An arrive-on operation of `count` arrivals (`drop`: the expected count falls too).
    pub fn arrive(&mut self, count: u64, drop: bool) -> Result<(), String> {
        if count == 0 || count > self.pending {
            return Err(format!(
                "mbarrier arrive-on with count {count} when {} arrivals are pending (undefined in PTX)",
                self.pending
            ));
        }
        if drop {
            if count > self.expected {
                return Err(format!(
                    "mbarrier.arrive_drop of {count} when {} arrivals are expected (undefined in PTX)",
                    self.expected
                ));
            }
            self.expected -= count;
        }
        self.pending -= count;
        self.settle();
        Ok(())
    }

    /// Whether the phase a state (an earlier value of the object) was taken in has completed.
    pub fn completed_since(&self, state: u64) -> bool {
        self.phase != (state & PHASE != 0)
    }

    /// Whether the phase of parity `parity` (its low bit) has completed: the current phase has
    /// the other parity.
    pub fn parity_completed(&self, parity: u64) -> bool {
        self.phase != (parity & 1 != 0)
    }
}

/// Decodes `mbarrier`'s modifiers (`mods` after the opcode) into its operation, or a reason it
/// is not modelled.
pub fn decode(mods: &[String]) -> Result<MbarOp, String> {
    let mut op = None;
    let mut expect_tx = false;
    let mut parity = false;
    let mut no_complete = false;
    for m in mods {
        match m.as_str() {
            ".init" => op = Some(MbarOp::Init),
            ".arrive" => {
                op = Some(MbarOp::Arrive {
                    drop: false,
                    expect_tx: false,
                    no_complete: false,
                })
            }
            ".arrive_drop" => {
                op = Some(MbarOp::Arrive {
                    drop: true,
                    expect_tx: false,
                    no_complete: false,
                })
            }
            ".expect_tx" => expect_tx = true,
            ".complete_tx" => op = Some(MbarOp::CompleteTx),
            ".test_wait" | ".try_wait" => op = Some(MbarOp::TestWait { parity: false }),
            ".parity" => parity = true,
            ".inval" => op = Some(MbarOp::Inval),
            ".pending_count" => {
                return Err(
                    "`mbarrier.pending_count` is not modelled by the interpreter (the \
                            count a state reports is the hardware's encoding)"
                        .into(),
                );
            }
            ".noComplete" => no_complete = true,
            // Orders and scopes: a sequential machine orders everything.
            ".release" | ".acquire" | ".relaxed" | ".cta" | ".b64" | ".shared" | ".shared::cta" => {
            }
            ".cluster" => {}
            ".shared::cluster" => {
                return Err(
                    "`mbarrier` on a `.shared::cluster` address (another CTA's barrier) is not \
                     modelled by the interpreter"
                        .into(),
                );
            }
            other => {
                return Err(format!(
                    "`mbarrier` with `{other}` is not implemented by the interpreter"
                ));
            }
        }
    }
    match (op, expect_tx, parity) {
        (Some(MbarOp::Arrive { drop, .. }), e, false) => Ok(MbarOp::Arrive {
            drop,
            expect_tx: e,
            no_complete,
        }),
        _ if no_complete => Err("`.noComplete` outside `mbarrier.arrive{_drop}`".into()),
        (None, true, false) => Ok(MbarOp::ExpectTx),
        (Some(MbarOp::TestWait { .. }), false, p) => Ok(MbarOp::TestWait { parity: p }),
        (Some(o), false, false) => Ok(o),
        _ => Err(format!(
            "`mbarrier{}` is not implemented by the interpreter",
            mods.concat()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips() {
        let o = Object {
            pending: 5,
            expected: 1 << 19,
            tx: -12345,
            valid: true,
            phase: true,
        };
        assert_eq!(Object::decode(o.encode()), o);
        let o = Object {
            tx: (1 << 20) - 1,
            phase: false,
            ..o
        };
        assert_eq!(Object::decode(o.encode()), o);
    }

    #[test]
    fn a_phase_completes_when_arrivals_and_bytes_are_done() {
        let mut o = Object::init(2).unwrap();
        let s0 = o.encode();
        o.arrive(1, false).unwrap();
        assert!(!o.completed_since(s0) && !o.parity_completed(0));
        o.add_tx(64).unwrap();
        o.arrive(1, false).unwrap();
        // Arrivals done, 64 bytes outstanding: still phase 0.
        assert!(!o.completed_since(s0));
        o.add_tx(-64).unwrap();
        assert!(o.completed_since(s0) && o.parity_completed(0) && !o.parity_completed(1));
        assert_eq!((o.pending, o.expected, o.tx), (2, 2, 0));
        // arrive_drop lowers the count of every later phase.
        let s1 = o.encode();
        o.arrive(1, true).unwrap();
        o.arrive(1, false).unwrap();
        assert!(o.completed_since(s1));
        assert_eq!((o.pending, o.expected), (1, 1));
        assert!(o.arrive(2, false).is_err());
        assert!(Object::init(0).is_err() && Object::init(1 << 20).is_err());
    }

    #[test]
    fn decodes_the_forms() {
        let d = |s: &str| {
            decode(
                &s.split('.')
                    .filter(|x| !x.is_empty())
                    .map(|x| format!(".{x}"))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(d(".init.shared.b64"), Ok(MbarOp::Init));
        assert_eq!(
            d(".arrive.expect_tx.release.cta.shared::cta.b64"),
            Ok(MbarOp::Arrive {
                drop: false,
                expect_tx: true,
                no_complete: false
            })
        );
        assert_eq!(
            d(".try_wait.parity.shared.b64"),
            Ok(MbarOp::TestWait { parity: true })
        );
        assert_eq!(
            d(".expect_tx.relaxed.cta.shared::cta.b64"),
            Ok(MbarOp::ExpectTx)
        );
        assert!(d(".pending_count.b64").is_err());
        assert!(d(".arrive.shared::cluster.b64").is_err());
    }
}
