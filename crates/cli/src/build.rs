//! `kiln build [FILE.ptx] --arch sm_80|sm_90|sm_90a -o OUT.cubin [-O0..3] [-v]
//! [--maxrregcount N] [--sass]`: compiles PTX to a cubin through the database's code-generation queries.
//!
//! Without a file, builds the embedded example (`test-data/examples/saxpy.ptx`). `-v` prints
//! the resource report in ptxas's format; `--sass` prints the SASS listing of each kernel.
//! Any diagnostic (syntax, semantics, `.target`, or `unsupported: ...` from code generation)
//! is printed with its span and the build fails with exit code 1 without writing a file.

use std::path::PathBuf;

use crate::{Status, compile};

#[derive(clap::Args)]
pub struct Args {
    /// The PTX file (the embedded SAXPY example when omitted).
    file: Option<PathBuf>,
    /// Target SM: sm_80, sm_90 or sm_90a.
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
    /// With `--sass`: print each instruction's control field (waits, scoreboards, yield,
    /// stall) before it.
    #[arg(long)]
    control_codes: bool,
    /// Register budget per thread (as ptxas's `--maxrregcount`).
    #[arg(long)]
    maxrregcount: Option<u32>,
    /// Optimization level, as ptxas's `-O0`..`-O3` (default 3).
    #[arg(short = 'O', default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: u8,
}

const EXAMPLE_PATH: &str = "test-data/examples/saxpy.ptx (embedded example)";
const EXAMPLE: &str = include_str!("../../../test-data/examples/saxpy.ptx");

fn parse_arch(s: &str) -> Result<db::Sm, String> {
    db::Sm::parse(s)
        .ok_or_else(|| format!("`{s}` is not an SM name (expected e.g. sm_80, sm_90 or sm_90a)"))
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
    if !db::codegen_supported(args.arch) {
        eprintln!(
            "kiln: error: code generation supports {} and their `a` variants, not {}",
            db::codegen_sms(),
            args.arch
        );
        return Status::Failure;
    }
    let mut target = db::Target::new(args.arch);
    if let Some(n) = args.maxrregcount.filter(|n| *n < db::MIN_REGISTERS) {
        eprintln!(
            "kiln: warning: adjusting the register count of {n} to the lower bound of {} (as ptxas)",
            db::MIN_REGISTERS
        );
    }
    target.max_registers = args.maxrregcount;
    target.opt_level = args.opt_level;
    let outcome = compile::compile(&compile::Request {
        path: &path,
        bytes: &bytes,
        target,
        report: args.verbose.then_some(compile::Report {
            tool: "kiln",
            to_stderr: false,
            ptxas_lines: false,
        }),
        sass: args.sass,
        control_codes: args.control_codes,
        warnings: true,
        warnings_as_errors: false,
    });
    if let Some(bytes) = &outcome.cubin
        && let Some(o) = &args.output
        && let Err(e) = std::fs::write(o, bytes)
    {
        eprintln!("kiln: error: cannot write {}: {e}", o.display());
        return Status::Failure;
    }
    if outcome.errors > 0 {
        eprintln!("kiln: {} error(s); no cubin written", outcome.errors);
        Status::InputErrors
    } else {
        Status::Ok
    }
}

/// `kiln sass [FILE.ptx] --arch sm_80|sm_90`: the SASS listing of each kernel, no cubin.
#[derive(clap::Args)]
pub struct SassArgs {
    /// The PTX file (the embedded SAXPY example when omitted).
    file: Option<PathBuf>,
    /// Target SM: sm_80, sm_90 or sm_90a.
    #[arg(long, value_parser = parse_arch)]
    arch: db::Sm,
    /// Register budget per thread (as ptxas's `--maxrregcount`).
    #[arg(long)]
    maxrregcount: Option<u32>,
    /// Optimization level, as ptxas's `-O0`..`-O3` (default 3).
    #[arg(short = 'O', default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: u8,
    /// Print each instruction's control field (waits, scoreboards, yield, stall) before it.
    #[arg(long)]
    control_codes: bool,
}

pub fn run_sass(args: SassArgs) -> Status {
    run(Args {
        file: args.file,
        arch: args.arch,
        output: None,
        verbose: false,
        sass: true,
        control_codes: args.control_codes,
        maxrregcount: args.maxrregcount,
        opt_level: args.opt_level,
    })
}
