//! `cargo xtask opcode-names [--check]`: writes `crates/sass/src/opcode/names.rs`, the SASS
//! mnemonics and modifiers of the committed tables (`crates/sass/tables/<sm>.txt`) that
//! `sass::opcode` types machine instructions with. `--check` only compares (a test of the
//! `sass` crate does the same).

pub fn run(args: &[String]) -> Result<(), String> {
    let check = args.iter().any(|a| a == "--check");
    let mut texts = Vec::new();
    for (sm, _) in sass::TABLES {
        let path = sass::table_source_path(sm);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        texts.push((*sm, text));
    }
    let refs: Vec<(&str, &str)> = texts.iter().map(|(a, b)| (*a, b.as_str())).collect();
    let source = sass::opcode::names_source(&refs);
    let out =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/sass/src/opcode/names.rs");
    let (mnemonics, modifiers) = sass::opcode::table_names(&refs);
    if check {
        let have = std::fs::read_to_string(&out).unwrap_or_default();
        if have != source {
            return Err(format!(
                "{} is not what the tables give: run `cargo xtask opcode-names`",
                out.display()
            ));
        }
    } else {
        std::fs::write(&out, source).map_err(|e| format!("writing {}: {e}", out.display()))?;
    }
    println!(
        "RESULT opcode-names tables={} mnemonics={} modifiers={}",
        texts.len(),
        mnemonics.len(),
        modifiers.len()
    );
    Ok(())
}
