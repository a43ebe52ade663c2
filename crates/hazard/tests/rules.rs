//! The checker's rules on small hand-written sections (nvdisasm text plus control fields,
//! as `kiln disasm --control` prints them) against a small latency table. The sequences are
//! shaped after ptxas's code for test-data/holdout and test-data/unseen (quoted where so).

use hazard::table::LatencyTable;
use hazard::{Hazard, HazardKind, check_nodes, node_from_inst};
use sass::Control;
use sass::model::Inst;

/// A table in the committed text format: DFMA and BREV/FLO/POPC variable-latency, the ALU
/// classes fixed, with the orders and distances the cases below need.
const TABLE: &str = "\
# test table
class DFMA variable writes=10 sb=8 unguarded-reads=0
class DSETP fixed writes=10 sb=0 unguarded-reads=0
class BREV variable writes=10 sb=10 unguarded-reads=0
class FLO variable writes=10 sb=10 unguarded-reads=0
class POPC variable writes=10 sb=10 unguarded-reads=0
class LDG variable writes=10 sb=10 unguarded-reads=0
class IMAD fixed writes=10 sb=0 unguarded-reads=0
class IADD3 fixed writes=10 sb=0 unguarded-reads=0
class LOP3 fixed writes=10 sb=0 unguarded-reads=0
class HADD2 fixed writes=10 sb=0 unguarded-reads=0
class HFMA2 fixed writes=10 sb=0 unguarded-reads=0
class F2F variable writes=10 sb=10 unguarded-reads=0
class PRMT fixed writes=10 sb=0 unguarded-reads=0
war F2F IMAD 4 n=100
war F2F PRMT 4 n=100
raw HADD2 FFMA 5 n=100
raw IADD3 HFMA2 4 n=100
raw IADD3 LOP3 4 n=100
raw IMAD LOP3 5 n=100
ordered raw DFMA DFMA n=10
ordered raw POPC FLO n=10
ordered raw BREV POPC n=10
";

fn table() -> LatencyTable {
    LatencyTable::parse("sm_90", TABLE).expect("test table parses")
}

/// Checks `(instruction text, control text)` lines, at pc 0x10 apart.
fn check(lines: &[(&str, &str)]) -> Vec<Hazard> {
    let nodes: Vec<_> = lines
        .iter()
        .enumerate()
        .map(|(i, (text, control))| {
            let inst = Inst::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let control = Control::parse(control).unwrap_or_else(|e| panic!("{control}: {e}"));
            node_from_inst(16 * i as u64, control, Some(inst))
        })
        .collect();
    check_nodes(&table(), &nodes)
}

fn kinds(h: &[Hazard]) -> Vec<HazardKind> {
    h.iter().map(|h| h.kind).collect()
}

#[test]
fn completion_order_is_transitive_and_per_class() {
    let t = table();
    assert!(t.completes_after("POPC", "FLO"));
    // BREV -> POPC -> FLO: an earlier BREV is complete once a later FLO is.
    assert!(t.completes_after("BREV", "FLO"));
    assert!(!t.completes_after("FLO", "BREV"));
    // Each non-memory variable class completes in issue order; loads are left to the data.
    assert!(t.completes_after("FLO", "FLO"));
    assert!(!t.completes_after("LDG", "LDG"));
    // Fixed-latency classes take no part.
    assert!(!t.completes_after("IMAD", "IMAD"));
}

/// holdout h_hash (sm_90): `BREV` without a scoreboard, read after waiting for a later `FLO`.
#[test]
fn unscoreboarded_result_completes_through_a_later_ordered_one() {
    let seq = [
        ("BREV R8, R3", "[B------:R-:W-:Y:S01]"),
        ("POPC R10, R3", "[B------:R-:W-:Y:S01]"),
        ("FLO.U32 R9, R9", "[B------:R-:W0:Y:S01]"),
        ("IADD3 R10, -R9, 0x1f, RZ", "[B0-----:R-:W-:Y:S04]"),
        (
            "LOP3.LUT R5, R10, R8, R5, 0x96, !PT",
            "[B------:R-:W-:-:S02]",
        ),
        (
            "LOP3.LUT R5, R10, R5, R10, 0x96, !PT",
            "[B------:R-:W-:-:S02]",
        ),
        ("EXIT", "[B------:R-:W-:Y:S05]"),
    ];
    assert_eq!(kinds(&check(&seq)), vec![]);
    // Without the wait, both unscoreboarded results (and the FLO result) are unguarded.
    let mut bad = seq;
    bad[3].1 = "[B------:R-:W-:Y:S04]";
    let h = check(&bad);
    assert!(
        h.iter()
            .any(|h| h.kind == HazardKind::UnguardedVariable && h.pc == 0x40),
        "{h:?}"
    );
    assert!(
        h.iter().any(|h| h.kind == HazardKind::RawScoreboard),
        "{h:?}"
    );
}

/// holdout h_fp (sm_80): a `DFMA` result without a scoreboard overwritten under a predicate by
/// a later `DFMA` (same in-order queue), read after waiting for that one.
#[test]
fn ordered_overwrite_of_an_unscoreboarded_result_is_no_hazard() {
    let seq = [
        ("DFMA R20, R8, R20, R20", "[B------:R-:W-:-:S04]"),
        ("@P0 DFMA R20, R22, R8, 1", "[B------:R-:W0:-:S04]"),
        (
            "DSETP.NEU.AND P0, PT, |R14|, +INF , PT",
            "[B------:R-:W-:-:S04]",
        ),
        ("@P1 DFMA R20, R20, -1, RZ", "[B0-----:R-:W0:-:S10]"),
        ("EXIT", "[B0-----:R-:W-:Y:S05]"),
    ];
    assert_eq!(kinds(&check(&seq)), vec![]);
    // Overwritten by a fixed-latency instruction instead, the late DFMA result may land last.
    let mut bad = seq;
    bad[1] = ("@P0 IMAD.MOV.U32 R20, RZ, RZ, R8", "[B------:R-:W-:-:S04]");
    let h = check(&bad);
    assert!(
        h.iter()
            .any(|h| h.kind == HazardKind::UnguardedVariable && h.pc == 0x10),
        "{h:?}"
    );
}

/// unseen u_f64h: `HADD2` → `HFMA2` after 4 cycles where every consumer of `HADD2` in the
/// table waited 5: the consumer side of the table (`IADD3` → `HFMA2` at 4) bounds it.
#[test]
fn raw_distance_is_bounded_by_producer_and_consumer() {
    let t = table();
    assert_eq!(t.raw_required("HADD2", "HFMA2"), 4);
    assert_eq!(t.raw_required("HADD2", "FFMA"), 5);
    assert_eq!(t.raw_required("IMAD", "LOP3"), 4);
    let seq = [
        ("HADD2 R7, R9, R19", "[B------:R-:W-:Y:S04]"),
        ("HFMA2 R7, R9, R19, R7", "[B------:R-:W-:Y:S01]"),
        ("EXIT", "[B------:R-:W-:Y:S05]"),
    ];
    assert_eq!(kinds(&check(&seq)), vec![]);
    let mut bad = seq;
    bad[0].1 = "[B------:R-:W-:Y:S03]";
    assert_eq!(kinds(&check(&bad)), vec![HazardKind::RawStall]);
}

/// holdout h_fp (sm_75): `F2F.F16.F32 R8, R8` sets a write scoreboard but no read scoreboard;
/// `PRMT` overwrites R8 2 cycles later, after waiting on that write scoreboard: the F2F has
/// completed, so it has read its source. Without the wait it is a WAR hazard.
#[test]
fn waiting_on_a_write_scoreboard_covers_the_instructions_reads() {
    let waited = [
        ("F2F.F16.F32 R8, R8", "[B------:R-:W0:-:S02]"),
        ("PRMT R8, R8, 0x5410, R9", "[B0-----:R-:W-:-:S06]"),
    ];
    assert_eq!(kinds(&check(&waited)), vec![]);
    let not_waited = [
        ("F2F.F16.F32 R8, R7", "[B------:R-:W0:-:S02]"),
        ("PRMT R7, R9, 0x5410, R9", "[B------:R-:W-:-:S06]"),
    ];
    assert_eq!(kinds(&check(&not_waited)), vec![HazardKind::WarStall]);
}

/// ptxas waits 5 cycles after every `WARPSYNC`/`BSYNC` (e.g. `WARPSYNC.ALL ; [..:S05]` before
/// `BAR.SYNC.DEFER_BLOCKING` in cuda-samples' `multi_warp_cg_reduce`); kiln's layernorm for
/// the H200 run issued `SHFL` 1 cycle after `WARPSYNC.ALL`.
#[test]
fn an_instruction_right_after_a_reconvergence_is_a_convergence_stall() {
    let seq = [
        ("WARPSYNC.ALL", "[B------:R-:W-:Y:S05]"),
        (
            "SHFL.BFLY PT, R12, R11, 0x10, 0x1f",
            "[B------:R-:W1:Y:S02]",
        ),
        ("EXIT", "[B-1----:R-:W-:Y:S05]"),
    ];
    assert_eq!(kinds(&check(&seq)), vec![]);
    let mut bad = seq;
    bad[0].1 = "[B------:R-:W-:Y:S01]";
    let h = check(&bad);
    assert_eq!(kinds(&h), vec![HazardKind::ConvergenceStall]);
    assert_eq!((h[0].index, h[0].deficit), (1, Some(4)));
}
