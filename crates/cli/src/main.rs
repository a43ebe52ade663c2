//! `kiln`: the command-line driver. Each subcommand lives in its own module and talks to the
//! compiler through `db` (or, for tools on binary artifacts, through `sass`/`cubin`).
//!
//! Exit codes: 0 success, 1 the input has errors, 2 usage or I/O errors.

#![forbid(unsafe_code)]

mod build;
mod check;
mod objdump;
mod parse;
mod render;
mod run;
mod run_sass;

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
    /// Compile PTX to a cubin (sm_80, sm_90).
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
}

/// What a subcommand returns: its exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// The input has errors (exit 1).
    InputErrors,
    /// Usage or I/O error (exit 2).
    Failure,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Build(args) => build::run(args),
        Command::Check(args) => check::run(args),
        Command::Parse(args) => parse::run(args),
        Command::Run(args) => run::run(args),
        Command::Objdump(args) => objdump::run(&args),
        Command::Disasm(args) => tool_result(disasm::run(&args)),
        Command::Asm(args) => tool_result(asm::run(&args)),
    };
    match status {
        Status::Ok => ExitCode::SUCCESS,
        Status::InputErrors => ExitCode::from(1),
        Status::Failure => ExitCode::from(2),
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
