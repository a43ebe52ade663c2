//! `kiln`: the command-line driver. Each subcommand lives in its own module and talks to the
//! compiler through `db` (or, for tools on binary artifacts, through `sass`/`cubin`).
//!
//! Exit codes: 0 success, 1 the input has errors, 2 usage or I/O errors.

#![forbid(unsafe_code)]

mod build;
mod check;
mod compile;
mod jobserver;
mod objdump;
mod parse;
mod ptxas;
mod render;
mod run;
mod run_sass;
mod watch;

mod asm;
mod disasm;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// kiln: an incremental PTX → SASS compiler.
#[derive(Parser)]
#[command(name = "kiln", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile PTX to a cubin (sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a).
    Build(build::Args),
    /// Check PTX files and print their diagnostics (`file:line:col: error: message`).
    Check(check::Args),
    /// Print the syntax tree of a PTX file.
    Parse(parse::Args),
    /// Run a kernel in the reference interpreter and write its buffers.
    Run(run::Args),
    /// List a cubin's sections, symbols and EIATTR records (like `cuobjdump -elf`).
    Objdump(objdump::ObjdumpArgs),
    /// Disassemble a cubin like `nvdisasm -c`.
    Disasm(disasm::DisasmArgs),
    /// Assemble nvdisasm-format SASS text into raw instruction words.
    Asm(asm::AsmArgs),
    /// Print the SASS listing of each kernel of a PTX file (`kiln build --sass` without a
    /// cubin).
    Sass(build::SassArgs),
    /// Run the language server on standard input and output (for editors).
    Lsp,
    /// Recompile PTX files to cubins whenever they change (only the kernels an edit touched).
    Watch(watch::Args),
    /// ptxas-compatible driver: `kiln ptxas [ptxas options] FILE.ptx` (also what runs when the
    /// binary is invoked as `ptxas`).
    #[command(disable_help_flag = true)]
    Ptxas {
        /// ptxas's options and the input file.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// What a subcommand returns: its exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// The input has errors (exit 1).
    InputErrors,
    /// Usage or I/O error (exit 2).
    Failure,
    /// An explicit exit status (the ptxas-compatible driver exits 255 on failure, as ptxas).
    Exit(u8),
}

fn main() -> ExitCode {
    // Invoked as `ptxas` (e.g. through a symlink that TRITON_PTXAS_PATH names): behave as
    // ptxas's command line.
    let mut argv = std::env::args();
    let program = argv.next().unwrap_or_default();
    let invoked_as = std::path::Path::new(&program)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned());
    if invoked_as.as_deref() == Some("ptxas") {
        let args: Vec<String> = argv.collect();
        return exit_code(ptxas::run(&args));
    }
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Build(args) => build::run(args),
        Command::Check(args) => check::run(args),
        Command::Parse(args) => parse::run(args),
        Command::Run(args) => run::run(args),
        Command::Objdump(args) => objdump::run(&args),
        Command::Disasm(args) => tool_result(disasm::run(&args)),
        Command::Asm(args) => tool_result(asm::run(&args)),
        Command::Sass(args) => build::run_sass(args),
        Command::Ptxas { args } => ptxas::run(&args),
        Command::Watch(args) => watch::run(args),
        Command::Lsp => match lsp::run_stdio() {
            Ok(()) => Status::Ok,
            Err(e) => {
                eprintln!("kiln lsp: {e}");
                Status::Failure
            }
        },
    };
    exit_code(status)
}

fn exit_code(status: Status) -> ExitCode {
    match status {
        Status::Ok => ExitCode::SUCCESS,
        Status::InputErrors => ExitCode::from(1),
        Status::Failure => ExitCode::from(2),
        Status::Exit(code) => ExitCode::from(code),
    }
}

/// Maps the result of a binary tool (`disasm`, `asm`) to a status: its error is printed and
/// exits 1.
fn tool_result(result: Result<(), String>) -> Status {
    match result {
        Ok(()) => Status::Ok,
        Err(e) => {
            eprintln!("kiln: error: {e}");
            Status::InputErrors
        }
    }
}
