//! The compact table images (`build.rs`, `sass::image`) against the text tables they are made
//! from: for every committed table, the embedded image decodes to exactly the structures
//! `Table::parse` builds from `tables/<sm>.txt` (every encoding, its modifier flags, and every
//! index the decoder and assembler use), and the loaded table with preferences answers as
//! the parsed one does.

use sass::Table;

/// Every committed table: the embedded image (as `sass::table_as_learned` loads it) equals
/// the parsed text, structure by structure. A stale or wrongly written image fails here.
#[test]
fn embedded_images_equal_the_text_tables() {
    for (sm, _) in sass::TABLES {
        let text = std::fs::read_to_string(sass::table_source_path(sm)).expect("table committed");
        let parsed = Table::parse(sm, &text).expect("table parses");
        let image = sass::table_as_learned(sm).expect("image loads");
        assert!(image.encodings.is_image());
        sass::image::compare(&parsed, &image).unwrap_or_else(|e| panic!("{e}"));
        // The image is the text's, byte for byte, when written back as text.
        assert_eq!(image.to_text(), text, "{sm}");
    }
}

/// With preferences applied, the shared table (`sass::table`) and a parsed table with the
/// same preferences agree too (assembler order per template, shadows).
#[test]
fn tables_with_preferences_equal_parsed_ones() {
    for (sm, prefer) in sass::PREFERENCES {
        let text = std::fs::read_to_string(sass::table_source_path(sm)).expect("table committed");
        let mut parsed = Table::parse(sm, &text).expect("table parses");
        let prefs = sass::prefer::parse(sm, prefer).expect("preferences parse");
        parsed.apply_preferences(&prefs.preferred).expect("apply");
        parsed.apply_shadows(&prefs.shadows).expect("apply");
        let loaded = sass::table(sm).expect("table");
        sass::image::compare(&parsed, loaded).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A small table with what the committed ones may not all have: an opcode whose encodings
/// are not contiguous in table order, a `when` flag, a fixed float slot with spaces, a
/// linear slot with no bits, negative and non-power-of-two weights, a pc-relative slot.
const SMALL: &str = "\
# a small table
E 00000000000000000000000000000fff 00000000000000000000000000000947 00000000000000000000000000000000 P
T BRA %
S L X 16 1 82:4,83:8,84:-16
E 0000000000000000000000000000ffff 00000000000000000000000000001210 00000000000000000000000000000000 -
T IADD3 %, %^0, -%, %
S L R 0 0 16:1,17:2,18:4,19:8,20:16,21:32,22:64,23:128
S L R 0 0 24:1,25:2,26:4,27:8,28:16,29:32,30:64,31:128
S L R 255 0 
S F f32 32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63
X 0000000000000000000000000000e000
E 00000000000000000000000000000fff 00000000000000000000000000000947 00000000000000000000000000000000 U
T BRA.U %
S C F 0 +INF 
S L X 0 0 32:3,33:-6
E 0000000000000000000000000000fffe 00000000000000000000000000000210 00000000000000000000000000000000 -
T IADD3 %, %^0, -%, %
S L R 0 0 16:1,17:2,18:4,19:8,20:16,21:32,22:64,23:-128
S C R 255 RZ
S C X 3 
S L UR8 0 0 40:1
F 210 72 O -1 - _
F 210 72 when X O -1 ~ _
F 947 75 I 1 U
";

#[test]
fn a_small_table_round_trips_through_an_image() {
    let parsed = Table::parse("sm_90", SMALL).expect("parses");
    let bytes: &'static [u8] = Box::leak(
        sass::image::write::image_of("sm_90", SMALL, &sass::image::write::stored)
            .expect("writes")
            .into_boxed_slice(),
    );
    let image = Table::from_image("sm_90", bytes).expect("loads");
    sass::image::compare(&parsed, &image).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(image.to_text(), SMALL);
    // Opcode 0x947's encodings are 0 and 2 (two runs), in table order.
    let of: Vec<_> = image
        .candidates(0x947)
        .map(|e| e.template.clone())
        .collect();
    assert_eq!(of, ["BRA %", "BRA.U %"]);
    let of: Vec<_> = image.template_indices("IADD3 %, %, -%, %").collect();
    assert_eq!(of, [1, 3]);
}

/// Changing the flags of an image table (the probe's `--compose` does so on parsed tables)
/// decodes it into memory first and then behaves as a parsed table does.
#[test]
fn set_flags_on_an_image_table() {
    let mut parsed = Table::parse("sm_90", SMALL).expect("parses");
    let bytes: &'static [u8] = Box::leak(
        sass::image::write::image_of("sm_90", SMALL, &sass::image::write::stored)
            .expect("writes")
            .into_boxed_slice(),
    );
    let mut image = Table::from_image("sm_90", bytes).expect("loads");
    let composable = vec![0, 0xe000, 0, 0];
    parsed.set_flags(Default::default(), composable.clone());
    image.set_flags(Default::default(), composable);
    assert!(!image.encodings.is_image());
    sass::image::compare(&parsed, &image).unwrap_or_else(|e| panic!("{e}"));
    assert!(parsed.flags.is_empty() && image.encodings.composable(1) == 0xe000);
}

/// The comparison itself notices a difference (so the tests above can fail).
#[test]
fn compare_notices_a_changed_encoding() {
    let parsed = Table::parse("sm_90", SMALL).expect("parses");
    let changed = SMALL.replace("T BRA.U %", "T BRA.U.X %");
    let bytes: &'static [u8] = Box::leak(
        sass::image::write::image_of("sm_90", &changed, &sass::image::write::stored)
            .expect("writes")
            .into_boxed_slice(),
    );
    let image = Table::from_image("sm_90", bytes).expect("loads");
    let err = sass::image::compare(&parsed, &image).expect_err("differs");
    assert!(err.contains("encoding 2"), "{err}");
}

/// The writer rejects what `Table::parse` rejects.
#[test]
fn the_writer_rejects_bad_lines() {
    for bad in [
        "E 1 2 3\n",
        "T X\n",
        "S Q\n",
        "X 1\n",
        "F 210 72 when X O -1 ~ _\n",
        "junk\n",
    ] {
        assert!(Table::parse("sm_90", bad).is_err(), "{bad}");
        assert!(
            sass::image::write::image_of("sm_90", bad, &sass::image::write::stored).is_err(),
            "{bad}"
        );
    }
}
