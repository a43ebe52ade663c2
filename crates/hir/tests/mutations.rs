//! Replays the committed mutation suite (`test-data/sema-mutations`, made by
//! `cargo xtask mutate` from corpus files with ptxas 13.0.88's verdict recorded for each case)
//! and requires at least 99% agreement with ptxas on accept/reject.

/// Our verdict: whether `syntax` + `hir` report an error.
fn rejects(text: &str) -> bool {
    let parse = syntax::parse(text);
    !parse.errors().is_empty()
        || hir::check_module(&parse.tree())
            .iter()
            .any(|d| d.severity == hir::Severity::Error)
}

#[test]
fn agrees_with_ptxas_on_mutants() {
    replay("sema-mutations", 300);
}

/// The mutants of `test-data/unseen` (PTX that nvcc made from our own kernels, never part of
/// the corpus the checks were developed on).
#[test]
fn agrees_with_ptxas_on_unseen_mutants() {
    replay("unseen-mutations", 90);
}

/// Replays the suite in `test-data/<rel>` and requires at least `min_cases` cases with
/// a ptxas verdict and 99% agreement.
fn replay(rel: &str, min_cases: usize) {
    let Some(dir) = test_support::test_data_or_skip(rel) else {
        return;
    };
    let table = std::fs::read_to_string(dir.join("expected.tsv")).expect("expected.tsv");
    let (mut n, mut agree) = (0, 0);
    let mut disagreements = Vec::new();
    for row in table.lines().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        let [file, _source, mutation, verdict, _message] = cols[..] else {
            panic!("bad row {row}")
        };
        let text = std::fs::read_to_string(dir.join(file)).expect("mutant file");
        if verdict == "crash" {
            // ptxas crashed on this mutant: there is no verdict to agree with.
            println!("no ptxas verdict (ptxas crashed): {file} ({mutation})");
            continue;
        }
        let ptxas_rejects = verdict != "ok";
        n += 1;
        if rejects(&text) == ptxas_rejects {
            agree += 1;
        } else {
            disagreements.push(format!("{file} ({mutation}): ptxas {verdict}"));
        }
    }
    for d in &disagreements {
        println!("disagree: {d}");
    }
    assert!(n >= min_cases, "the suite has only {n} cases");
    let pct = 100.0 * agree as f64 / n as f64;
    println!("mutation suite: {agree}/{n} agree ({pct:.1}%)");
    assert!(pct >= 99.0, "agreement {pct:.1}% < 99%");
}
