//! Checks on the committed tables: they parse, their header hash matches the committed seeds
//! (a stale table fails here: regenerate with `cargo xtask sass-probe --arch <sm>`), and
//! decoding random words never panics.

#[test]
fn committed_tables_parse_and_are_fresh() {
    for (sm, _) in sass::TABLES {
        let text = std::fs::read_to_string(sass::table_source_path(sm)).expect("table committed");
        let t = sass::Table::parse(sm, &text).expect("table parses");
        assert!(!t.encodings.is_empty());
        // Round trip of the text format.
        assert_eq!(t.to_text(), text, "{sm} table is not in canonical form");
        let seeds_path = format!("{}/tables/{sm}.seeds", env!("CARGO_MANIFEST_DIR"));
        let seeds = std::fs::read_to_string(&seeds_path).expect("seeds committed");
        // Recompute the generator's input hash (xtask/src/sass_probe: FNV-1a over generator
        // version, SM, nvdisasm version and the seed list) from the committed seeds.
        let field = |key: &str| -> String {
            t.header
                .iter()
                .find_map(|h| h.split("; ").find_map(|p| p.strip_prefix(key)))
                .unwrap_or_else(|| panic!("{sm} table header lacks `{key}`"))
                .to_string()
        };
        let generator = field("generator ");
        let disasm = field("oracle nvdisasm ");
        let want = field("inputs-hash ");
        let seeds_text: String = seeds
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                format!(
                    "{:032x}\n",
                    u128::from_str_radix(l.trim(), 16).expect("hex seed")
                )
            })
            .collect();
        let h = fnv1a64(&[
            generator.as_bytes(),
            sm.as_bytes(),
            disasm.as_bytes(),
            seeds_text.as_bytes(),
        ]);
        assert_eq!(
            format!("{h:016x}"),
            want,
            "{sm} table is stale (seeds changed): run cargo xtask sass-probe --arch {sm}"
        );
    }
}

#[test]
fn random_words_never_panic() {
    let Some(t) = sass::table("sm_90").filter(|t| !t.encodings.is_empty()) else {
        println!("skipping: no sm_90 table");
        return;
    };
    // xorshift: deterministic pseudo-random words, with real opcodes in the low bits half of
    // the time so that encodings are actually exercised.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..200_000u64 {
        let mut w = u128::from(next()) | u128::from(next()) << 64;
        if i % 2 == 0 {
            let e = &t.encodings[(next() as usize) % t.encodings.len()];
            w = (w & !e.mask) | e.value;
        }
        let text = t.print(w, i * 16, &|_| None);
        assert!(!text.is_empty());
    }
}

/// The FNV-1a variant of `xtask/src/corpus/mod.rs::fnv1a64` (parts separated by 0xff).
fn fnv1a64(parts: &[&[u8]]) -> u64 {
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

/// The committed assembler preferences (`tables/<sm>.prefer`) name encodings of their tables
/// with the templates they print, and each preferred encoding is the one the assembler tries
/// first; shadows are known to the table.
#[test]
fn committed_preferences_apply() {
    for (sm, text) in sass::PREFERENCES {
        let prefs = sass::prefer::parse(sm, text).expect("preferences parse");
        let table = sass::table(sm).expect("table with preferences");
        for p in &prefs.preferred {
            let first = table.by_template(&p.template).next().expect("template");
            assert_eq!(
                (first.mask, first.value),
                (p.mask, p.value),
                "{sm}: `{}`",
                p.template
            );
        }
        for s in &prefs.shadows {
            let i = table
                .find_encoding(s.mask, s.value)
                .expect("shadow in table");
            assert!(
                table.is_shadow(&table.encodings[i]),
                "{sm}: `{}`",
                s.template
            );
        }
    }
}

/// sm_90's `BAR.SYNC.DEFER_BLOCKING 0x0` assembles to ptxas's word (opcode bits `0xb1d`: the
/// barrier id, no thread count), not to the `0x91d` form whose `RZ` thread count nvdisasm does
/// not print (what kiln wrote before, and what made barriers fall through on an H100).
#[test]
fn sm_90_barrier_assembles_to_ptxas_word() {
    let table = sass::table("sm_90").expect("sm_90 table");
    let w = sass::encode::assemble_line(table, "BAR.SYNC.DEFER_BLOCKING 0x0", 0, &|_| None)
        .expect("assembles");
    let e = table.lookup(w).expect("decodes");
    assert!(!table.is_shadow(e));
    // ptxas 13.0.88's word for `bar.sync 0` on sm_90, outside the control field (nvdisasm -hex
    // of the oracle's cubin for test-data/codegen/shared.ptx).
    assert_eq!(
        w & !sass::control::CONTROL_MASK,
        0x0000000000010000_0000000000007b1d
    );
}
