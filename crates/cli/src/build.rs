//! `kiln build [FILE.ptx] --arch sm_80|sm_90 -o OUT.cubin [-v] [--maxrregcount N]
//! [--sass]`: compiles PTX to a cubin through the database's code-generation queries.
//!
//! Without a file, builds the embedded example (`test-data/examples/saxpy.ptx`). `-v` prints
//! the resource report in ptxas's format; `--sass` prints the SASS listing of each kernel.
//! Any diagnostic (syntax, semantics, `.target`, or `unsupported: ...` from code generation)
//! is printed with its span and the build fails with exit code 1 without writing a file.

use std::path::PathBuf;

use crate::{Status, render};

#[derive(clap::Args)]
pub struct Args {
    /// The PTX file (the embedded SAXPY example when omitted).
    file: Option<PathBuf>,
    /// Target SM: sm_80 or sm_90.
    #[arg(long, value_parser = parse_arch)]
    arch: db::Sm,
    /// Output cubin.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Print ptxas's resource report for each kernel.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Print each kernel's SASS listing.
    #[arg(long)]
    sass: bool,
    /// Register budget per thread (as ptxas's `--maxrregcount`).
    #[arg(long)]
    maxrregcount: Option<u32>,
}

const EXAMPLE_PATH: &str = "test-data/examples/saxpy.ptx (embedded example)";
const EXAMPLE: &str = include_str!("../../../test-data/examples/saxpy.ptx");

fn parse_arch(s: &str) -> Result<db::Sm, String> {
    db::Sm::parse(s).ok_or_else(|| format!("`{s}` is not an SM name (expected sm_80 or sm_90)"))
}

pub fn run(args: Args) -> Status {
    let (path, bytes) = match &args.file {
        Some(p) => match std::fs::read(p) {
            Ok(b) => (p.display().to_string(), b),
            Err(e) => {
                eprintln!("kiln: error: cannot read {}: {e}", p.display());
                return Status::Failure;
            }
        },
        None => (EXAMPLE_PATH.to_string(), EXAMPLE.as_bytes().to_vec()),
    };
    let mut db = db::RootDatabase::default();
    let file = db.add_file(&path, &bytes);
    let color = render::stderr_color();
    let mut diagnostics = db::diagnostics(&db, file).clone();
    diagnostics.extend(db::target_diagnostics(&db, file, args.arch));
    if !db::codegen_supported(args.arch.number) {
        eprintln!(
            "kiln: error: code generation supports sm_80 and sm_90, not {}",
            args.arch
        );
        return Status::Failure;
    }
    let mut target = db::Target::new(args.arch);
    target.max_registers = args.maxrregcount;
    if diagnostics
        .iter()
        .all(|d| d.severity != db::Severity::Error)
    {
        let ft = db::FileTarget::new(&db, file, target.clone());
        let out = db::cubin(&db, ft);
        diagnostics.extend(out.diagnostics.iter().cloned());
        if let Some(bytes) = &out.bytes {
            for kt in db::kernel_targets(&db, file, &target) {
                let name = kt.function(&db).name(&db).clone();
                if args.verbose
                    && let Ok(s) = db::kernel_stats(&db, kt)
                {
                    println!(
                        "kiln info    : Compiling entry function '{name}' for '{}'",
                        args.arch
                    );
                    println!("kiln info    : Function properties for {name}");
                    println!(
                        "    {} bytes stack frame, {} bytes spill stores, {} bytes spill loads",
                        s.stack_frame, s.spill_stores, s.spill_loads
                    );
                    let cmem = if args.arch.number < 90 {
                        format!(", {} bytes cmem[0]", s.cmem0)
                    } else {
                        String::new()
                    };
                    let smem = if s.shared_bytes > 0 {
                        format!(", {} bytes smem", s.shared_bytes)
                    } else {
                        String::new()
                    };
                    println!(
                        "kiln info    : Used {} registers, used {} barriers{smem}{cmem}",
                        s.registers, s.barriers
                    );
                }
                if args.sass
                    && let Ok(e) = db::encoded(&db, kt)
                {
                    println!("//--------------------- .text.{name} --------------------------");
                    for l in &e.listing {
                        println!("        {l}");
                    }
                }
            }
            if let Some(o) = &args.output
                && let Err(e) = std::fs::write(o, bytes)
            {
                eprintln!("kiln: error: cannot write {}: {e}", o.display());
                return Status::Failure;
            }
        }
    }
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == db::Severity::Error)
        .count();
    for d in &diagnostics {
        eprint!("{}", render::render(&path, file.text(&db), d, color));
    }
    if errors > 0 {
        eprintln!("kiln: {errors} error(s); no cubin written");
        Status::InputErrors
    } else {
        Status::Ok
    }
}
