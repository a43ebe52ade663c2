//! `sass::model::Inst` parses every instruction shape nvdisasm printed for ptxas's corpus
//! cubins and prints it back unchanged.
//!
//! `data/nvdisasm_shapes.txt` was made from the oracle: `nvdisasm -c` on 900 cached corpus
//! cubins (sm_80 and sm_90), instruction text without address and ` ;`, one line kept per shape
//! (register numbers, immediates and labels normalised). Set `KILN_SASS_LINES=<file>` to check
//! a larger file of such lines too.

use sass::model::{Inst, OperandKind};

fn check_lines(text: &str) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut n = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        n += 1;
        match Inst::parse(line) {
            Ok(i) => {
                let printed = i.to_string();
                // nvdisasm's trailing space after a final `+INF ` literal is not in the sample.
                if printed.trim_end() != line.trim_end() {
                    failures.push(format!("{line}\n  reprinted as {printed}"));
                }
                if i.operands
                    .iter()
                    .any(|o| matches!(o.kind, OperandKind::Other(_)))
                    && !line.contains('@')
                {
                    failures.push(format!("{line}\n  has an unclassified operand: {i:?}"));
                }
            }
            Err(e) => failures.push(format!("{line}\n  {e}")),
        }
    }
    (n, failures)
}

#[test]
fn nvdisasm_shapes_round_trip() {
    let (n, failures) = check_lines(include_str!("data/nvdisasm_shapes.txt"));
    assert!(n > 3000, "sample has {n} lines");
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures[..failures.len().min(30)].join("\n")
    );
}

#[test]
fn more_lines_from_env() {
    let Ok(path) = std::env::var("KILN_SASS_LINES") else {
        println!("skipping: KILN_SASS_LINES not set");
        return;
    };
    let text = std::fs::read_to_string(&path).expect("KILN_SASS_LINES file");
    let (n, failures) = check_lines(&text);
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures[..failures.len().min(30)].join("\n")
    );
}
