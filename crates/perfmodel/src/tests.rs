//! The model on hand-written code: each rule of the crate documentation, cycle for cycle.

use super::*;

/// Assembles `[control] instruction` lines for sm_90 (pc = 16 × line).
fn code(lines: &[&str]) -> Vec<u8> {
    let table = sass::table("sm_90").expect("sm_90 table");
    lines
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            sass::encode::assemble_line(table, l, i as u64 * 16, &|_| None)
                .unwrap_or_else(|e| panic!("`{l}`: {e}"))
                .to_le_bytes()
        })
        .collect()
}

const CLOSE: &[&str] = &[
    "[B------:R-:W-:Y:S00] BRA 0x{pc}",
    "[B------:R-:W-:Y:S00] NOP",
];

/// `lines`, then the closing self-branch and a `NOP`.
fn kernel(lines: &[&str]) -> Vec<u8> {
    let pc = lines.len() * 16;
    let close: Vec<String> = CLOSE
        .iter()
        .map(|l| l.replace("{pc}", &format!("{pc:x}")))
        .collect();
    let mut all: Vec<&str> = lines.to_vec();
    all.extend(close.iter().map(String::as_str));
    code(&all)
}

#[test]
fn stalls_add_up_and_the_closing_branch_is_not_counted() {
    let e = estimate(
        "sm_90",
        &kernel(&[
            "[B------:R-:W-:-:S04] IADD3 R0, R1, R2, RZ",
            "[B------:R-:W-:-:S00] IADD3 R3, R0, R2, RZ",
            "[B------:R-:W-:-:S05] EXIT",
        ]),
    )
    .expect("estimates");
    // 4, then a zero stall that still takes its issue cycle, then 5.
    assert_eq!(e.cycles, 10.0);
    assert_eq!(e.issue_slots, 3.0);
    assert_eq!(e.instructions, 3);
    assert_eq!(e.loops, 0);
}

#[test]
fn a_wait_on_a_load_costs_its_latency_from_issue() {
    let lat = latencies("sm_90").expect("sm_90 figures");
    let ldg = f64::from(lat.write("LDG"));
    let e = estimate(
        "sm_90",
        &kernel(&[
            "[B------:R-:W2:-:S01] LDG.E R2, desc[UR4][R2.64]",
            "[B------:R-:W-:-:S02] IADD3 R4, R5, R6, RZ",
            "[B--2---:R-:W-:-:S05] STG.E desc[UR4][R4.64], R2",
            "[B------:R-:W-:-:S05] EXIT",
        ]),
    )
    .expect("estimates");
    // The store issues at the load's completion (`ldg` after cycle 0), then 5 + 5.
    assert_eq!(e.cycles, ldg + 5.0 + 5.0);
}

#[test]
fn depbar_leaves_the_youngest_operations_pending() {
    let lat = latencies("sm_90").expect("sm_90 figures");
    let lds = f64::from(lat.write("LDS"));
    let e = estimate(
        "sm_90",
        &kernel(&[
            "[B------:R-:W0:-:S01] LDS R2, [R3]",
            "[B------:R-:W0:-:S01] LDS R4, [R5]",
            "[B------:R-:W-:-:S01] DEPBAR.LE SB0, 0x1",
            "[B------:R-:W-:-:S05] EXIT",
        ]),
    )
    .expect("estimates");
    // DEPBAR waits for the first LDS only (issued at 0): it issues at `lds`.
    assert_eq!(e.cycles, lds + 1.0 + 5.0);
}

#[test]
fn a_loop_body_counts_trip_count_times() {
    let e = estimate(
        "sm_90",
        &kernel(&[
            "[B------:R-:W-:-:S02] IADD3 R0, R0, 0x1, RZ",
            "[B------:R-:W-:-:S13] ISETP.GE.AND P0, PT, R0, R1, PT",
            "[B------:R-:W-:-:S05] @!P0 BRA 0x0",
            "[B------:R-:W-:-:S05] EXIT",
        ]),
    )
    .expect("estimates");
    assert_eq!(e.loops, 1);
    assert_eq!(e.cycles, (2.0 + 13.0 + 5.0) * TRIP_COUNT + 5.0);
    assert_eq!(e.issue_slots, 3.0 * TRIP_COUNT + 1.0);
}

#[test]
fn a_backward_branch_that_closes_no_cycle_is_not_a_loop() {
    // The `else` side of a branch (5) placed after the join point (3) and jumping back to
    // it: a backward branch, but nothing from 3 on leads back to 5.
    let e = estimate(
        "sm_90",
        &kernel(&[
            "[B------:R-:W-:-:S05] @P0 BRA 0x50",
            "[B------:R-:W-:-:S02] IADD3 R0, R0, 0x1, RZ",
            "[B------:R-:W-:-:S02] IADD3 R0, R0, 0x2, RZ",
            "[B------:R-:W-:-:S02] IADD3 R0, R0, 0x3, RZ",
            "[B------:R-:W-:-:S05] EXIT",
            "[B------:R-:W-:-:S05] BRA 0x30",
        ]),
    )
    .expect("estimates");
    assert_eq!(e.loops, 0);
    // Address order, each instruction once: 5 + 2 + 2 + 2 + 5 + 5.
    assert_eq!(e.cycles, 21.0);
}

#[test]
fn loop_depth_follows_the_graph_not_the_layout() {
    // An outer loop (header 0, latch 5) holding an inner loop (1-2) whose latch block sits
    // after the outer loop's exit (7) and jumps back (8): 1, 2, 7, 8 are two loops deep,
    // 0, 3, 4, 5 one, 6 none, whatever the addresses say.
    let e = estimate(
        "sm_90",
        &kernel(&[
            "[B------:R-:W-:-:S01] IADD3 R0, R0, 0x1, RZ",
            "[B------:R-:W-:-:S01] IADD3 R1, R1, 0x1, RZ",
            "[B------:R-:W-:-:S01] @P1 BRA 0x70",
            "[B------:R-:W-:-:S01] IADD3 R2, R2, 0x1, RZ",
            "[B------:R-:W-:-:S01] IADD3 R3, R3, 0x1, RZ",
            "[B------:R-:W-:-:S01] @P0 BRA 0x0",
            "[B------:R-:W-:-:S01] EXIT",
            "[B------:R-:W-:-:S01] IADD3 R4, R4, 0x1, RZ",
            "[B------:R-:W-:-:S01] BRA 0x10",
        ]),
    )
    .expect("estimates");
    assert_eq!(e.loops, 2);
    let t = TRIP_COUNT;
    assert_eq!(e.cycles, 4.0 * t * t + 4.0 * t + 1.0);
}

#[test]
fn the_table_names_sources_and_variable_classes_only() {
    let rows = parse_rows(LATENCY_TABLE).expect("parses");
    for name in ["sm_80", "sm_90"] {
        assert!(
            latencies(name).is_some(),
            "{name}: needs `default` and `read` rows"
        );
        let table = hazard::latency_table(name).expect("a hazard table");
        for r in rows.iter().filter(|r| name == r.sm) {
            if r.class == "default" || r.class == "read" {
                continue;
            }
            let info = table.classes.get(&r.class);
            assert!(
                info.is_some_and(|c| c.variable),
                "{name} {}: not a variable class of the hazard table",
                r.class
            );
        }
    }
    assert!(
        rows.iter().all(|r| r.source.contains('[')),
        "every row cites a source"
    );
    assert!(latencies("sm_120").is_none());
}
