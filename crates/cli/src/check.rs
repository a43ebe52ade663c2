//! `kiln check [--arch sm_XX] FILE...`: every diagnostic kiln can give without generating
//! code.

use std::path::PathBuf;

use crate::{Status, render};

#[derive(clap::Args)]
pub struct Args {
    /// The SM to check against (e.g. sm_90): a `.target` newer than this is an error, as in
    /// ptxas.
    #[arg(long, value_parser = parse_arch)]
    arch: Option<db::Sm>,
    /// PTX files to check. Without any, kiln checks its embedded example (nvcc's PTX for a
    /// SAXPY kernel) and prints its outline.
    files: Vec<PathBuf>,
}

/// The embedded example: `test-data/examples/saxpy.ptx`.
const EXAMPLE_PATH: &str = "test-data/examples/saxpy.ptx (embedded example)";
const EXAMPLE: &str = include_str!("../../../test-data/examples/saxpy.ptx");

fn parse_arch(s: &str) -> Result<db::Sm, String> {
    db::Sm::parse(s).ok_or_else(|| format!("`{s}` is not an SM name (expected e.g. sm_80, sm_90a)"))
}

pub fn run(args: Args) -> Status {
    let mut db = db::RootDatabase::default();
    let color = render::stderr_color();
    let (mut errors, mut warnings, mut io_failed) = (0usize, 0usize, false);
    let embedded = args.files.is_empty();
    let inputs: Vec<PathBuf> = if embedded {
        vec![PathBuf::from(EXAMPLE_PATH)]
    } else {
        args.files.clone()
    };
    for path in &inputs {
        let bytes = if embedded {
            EXAMPLE.as_bytes().to_vec()
        } else {
            match std::fs::read(path) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("kiln: error: cannot read {}: {e}", path.display());
                    io_failed = true;
                    continue;
                }
            }
        };
        let file = db.add_file(path, &bytes);
        let shown = path.display().to_string();
        if embedded {
            print_outline(&db, file, &shown);
        }
        let mut diagnostics = db::diagnostics(&db, file).clone();
        if let Some(arch) = args.arch {
            diagnostics.extend(db::target_diagnostics(&db, file, arch));
        }
        for d in &diagnostics {
            match d.severity {
                db::Severity::Error => errors += 1,
                db::Severity::Warning => warnings += 1,
            }
            eprint!("{}", render::render(&shown, file.text(&db), d, color));
        }
    }
    if errors + warnings > 0 {
        eprintln!(
            "kiln: {}, {}",
            plural(errors, "error"),
            plural(warnings, "warning")
        );
    }
    if io_failed {
        Status::Failure
    } else if errors > 0 {
        Status::InputErrors
    } else {
        Status::Ok
    }
}

/// Prints each function of the file with its parameter and instruction counts.
fn print_outline(db: &db::RootDatabase, file: db::SourceFile, shown: &str) {
    println!("{shown}:");
    for f in &db::module_items(db, file).functions {
        let o = db::function_outline(db, *f);
        let kind = if o.is_entry { ".entry" } else { ".func" };
        println!(
            "  {kind} {}: {}, {}, {}",
            o.name,
            plural(o.params, "parameter"),
            plural(o.instructions, "instruction"),
            plural(o.labels, "label")
        );
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
