//! `kiln parse FILE`: prints the lossless syntax tree (kinds, ranges, token text) and any
//! syntax errors.

use std::path::PathBuf;

use crate::{Status, render};

#[derive(clap::Args)]
pub struct Args {
    /// The PTX file to parse.
    file: PathBuf,
}

pub fn run(args: Args) -> Status {
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("kiln: error: cannot read {}: {e}", args.file.display());
            return Status::Failure;
        }
    };
    let mut db = db::RootDatabase::default();
    let file = db.add_file(&args.file, &bytes);
    print!("{}", db::parse(&db, file).0.debug_tree());
    let diagnostics = db::diagnostics(&db, file);
    let path = args.file.display().to_string();
    let color = render::stderr_color();
    for d in diagnostics {
        eprint!("{}", render::render(&path, file.text(&db), d, color));
    }
    if diagnostics
        .iter()
        .any(|d| d.severity == db::Severity::Error)
    {
        Status::InputErrors
    } else {
        Status::Ok
    }
}
