//! Modifier flags (`sass::compose`): words of ptxas's code for test-data/holdout (PTX the
//! sm_90 table was not learned from) whose modifier combinations no learned encoding has.
//! Each decodes through an encoding plus flags to exactly what nvdisasm 13.0.88 printed for it
//! (`nvdisasm --binary SM90` on the raw words, 2026-11-26) and assembles back to the same word.

const SM90: &[(u128, &str)] = &[
    (
        0x040fe40003f0620041e000001000742a,
        "DSETP.GE.AND P0, PT, |R16|.reuse, 2.14748364800000000000e+09, PT",
    ),
    (
        0x000fe40006f05870000000010400780c,
        "ISETP.NE.U32.XOR P0, PT, R4, 0x1, !P5",
    ),
    (
        0x000fda00067a5870000000010400780c,
        "ISETP.NE.U32.XOR P5, PT, R4, 0x1, !P4",
    ),
    (
        0x000fd00000000a103ff000000610742b,
        "DFMA R16, |R6|, -R16, 1",
    ),
    (
        0x000fd000000005060000000a0812722b,
        "DFMA R18, -R8, R10, |R6|",
    ),
    (
        0x000fe20004701000000000ff0400722a,
        "DSETP.LT.AND P0, PT, R4, RZ, !P0",
    ),
    (
        0x000fc4000fb5e0ff800000040a007c10,
        "IADD3 R0, P2, P3, R10, -UR4, RZ",
    ),
    // Two flags that make the text only together (from ptxas's code for kiln's own
    // test-data/codegen/cvt_table.ptx, `cvt.rzi.s64.f16`; nvdisasm's text from the probe's
    // truth cache): the assembler tries flag sets one or two flags away from the shown one.
    (
        0x000e24000010d90000000007000c7311,
        "F2I.S64.F16.TRUNC R12, R7",
    ),
];

/// Words that decoded only through flags in an earlier sm_90 table and that a later collect
/// round learned an encoding for (still checked: nvdisasm's text, assembled back).
const SM90_LEARNED_SINCE: &[(u128, &str)] = &[
    // A flag counted from the end of the operands: the bit that negates IADD3's last source
    // whatever the number of carry-out predicates (this word is from the corpus).
    (
        0x000fe20007c7e8120000000304217210,
        "IADD3 R33, P3, P4, R4, R3, -R18",
    ),
];

#[test]
fn learned_since_decode_and_assemble() {
    let Some(table) = sass::table("sm_90") else {
        println!("skipping: no sm_90 table");
        return;
    };
    for &(word, want) in SM90_LEARNED_SINCE {
        assert!(table.lookup_index(word).is_some(), "{want}");
        prints_and_assembles_back(table, word, want);
    }
}

/// `word` decodes to nvdisasm's text `want`, and that text assembles back to `word`.
fn prints_and_assembles_back(table: &sass::Table, word: u128, want: &str) {
    let d = table
        .decode(word, 0)
        .unwrap_or_else(|| panic!("{want}: not decoded"));
    assert_eq!(d.text(&|_| None), want);
    let line = format!("{} {want}", table.full_control(&d, 0).to_text());
    assert_eq!(
        sass::encode::assemble_line(table, &line, 0, &|_| None),
        Ok(word),
        "{line}"
    );
}

#[test]
fn flag_combinations_decode_and_assemble() {
    let Some(table) = sass::table("sm_90") else {
        println!("skipping: no sm_90 table");
        return;
    };
    for &(word, want) in SM90 {
        // No learned encoding has the combination...
        assert_eq!(table.lookup_index(word), None, "{want}");
        // ...the flags give nvdisasm's text, which assembles back to the word.
        prints_and_assembles_back(table, word, want);
    }
}

#[test]
fn flags_are_only_a_fallback() {
    let Some(table) = sass::table("sm_90") else {
        println!("skipping: no sm_90 table");
        return;
    };
    assert!(
        !table.flags.is_empty(),
        "the sm_90 table has modifier flags"
    );
    // Every encoding still decodes its own value as itself (flags never take precedence).
    for (i, e) in table.encodings.iter().enumerate().step_by(7) {
        if let Some(j) = table.lookup_index(e.value) {
            let d = table.decode(e.value, 0).expect("known");
            assert_eq!(d.encoding, &table.encodings[j], "encoding {i}");
        }
    }
}
