//! Corpus tests: every file under the corpus parses back to itself byte for byte; files ptxas
//! accepts (`ptx/`) parse without syntax errors; nothing panics.
//!
//! The corpus is `$KILN_CORPUS`, else `<workspace>/../shared/corpus`. Without it the tests
//! print `skipping: ...` and pass.

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

#[test]
fn corpus_lossless_and_accepted_files_have_no_errors() {
    let Some(dir) = test_support::corpus_or_skip() else {
        return;
    };
    let files = test_support::ptx_files(&dir);
    assert!(!files.is_empty(), "no .ptx files under {}", dir.display());
    let mut failures = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).expect("readable corpus file");
        let rel = path.strip_prefix(&dir).unwrap_or(path);
        let accepted = rel.starts_with("ptx");
        let result = std::panic::catch_unwind(|| {
            let (text, parse) = syntax::parse_bytes(&bytes);
            let round_trip = parse.syntax_node().to_string() == text;
            let errors: Vec<String> = parse
                .errors()
                .iter()
                .take(3)
                .map(|e| {
                    let (l, c) = line_col(&text, usize::from(e.range.start()));
                    format!("{l}:{c}: {}", e.message)
                })
                .collect();
            (round_trip, errors)
        });
        match result {
            Err(_) => failures.push(format!("{}: PANIC", rel.display())),
            Ok((round_trip, errors)) => {
                if !round_trip {
                    failures.push(format!(
                        "{}: tree does not print back to the input",
                        rel.display()
                    ));
                }
                if accepted && !errors.is_empty() {
                    failures.push(format!("{}: {}", rel.display(), errors.join("; ")));
                }
            }
        }
    }
    println!("checked {} corpus files", files.len());
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
