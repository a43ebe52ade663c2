//! Per-SM unit tests on words from ptxas output (snapshots in `tests/data/<sm>.words`, made
//! with the oracle as recorded in each file's header): every word the table knows must print
//! exactly what nvdisasm printed and assemble back to the same word; a word it does not know
//! must print as `.unknown` (never a wrong text). The number of unknown words is printed and
//! bounded so that coverage cannot silently regress.

fn check(sm: &str, data: &str, max_unknown: usize) {
    let Some(table) = sass::table(sm).filter(|t| !t.encodings.is_empty()) else {
        println!("skipping: no {sm} table");
        return;
    };
    let mut n = 0;
    let mut unknown = 0;
    for line in data.lines().filter(|l| !l.starts_with('#')) {
        let (hex, want) = line.split_once('\t').expect("word<TAB>text");
        let word = u128::from_str_radix(hex, 16).expect("hex");
        let pc = (n * 16) as u64;
        let want = want.trim_end_matches(" ;").trim_end_matches(';');
        let got = table.print(word, pc, &|_| None);
        if got.starts_with(".unknown") {
            unknown += 1;
            n += 1;
            continue;
        }
        assert_eq!(got.trim_end(), want.trim_end(), "{sm} word {n} {hex}");
        let d = table.decode(word, pc).expect("known");
        let text = format!("{} {got}", table.full_control(&d, pc).to_text());
        let back = sass::encode::assemble_line(table, &text, pc, &|_| None)
            .unwrap_or_else(|e| panic!("{sm} word {n} `{text}`: {e}"));
        assert_eq!(
            back, word,
            "{sm} re-encoding of `{text}`: {back:032x} != {word:032x}"
        );
        n += 1;
    }
    println!("{sm}: {n} words, {unknown} unknown");
    assert!(n > 100);
    assert!(
        unknown <= max_unknown,
        "{sm}: {unknown} unknown words (at most {max_unknown})"
    );
}

#[test]
fn sm_90_words_match_nvdisasm() {
    check("sm_90", include_str!("data/sm_90.words"), 8);
}

#[test]
fn sm_80_words_match_nvdisasm() {
    check("sm_80", include_str!("data/sm_80.words"), 8);
}

/// Aliases and specially printed values (IMAD.SHL/IADD/MOV/U32 by operand value, NaN
/// literals, omitted zero offsets and default masks): the cases a learned decode priority
/// and exception probing must get right.
#[test]
fn sm_90_special_words_match_nvdisasm() {
    check("sm_90", include_str!("data/sm_90.special.words"), 2);
}

#[test]
fn sm_80_special_words_match_nvdisasm() {
    check("sm_80", include_str!("data/sm_80.special.words"), 2);
}
