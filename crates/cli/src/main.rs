//! `kiln`: the command-line driver. Each subcommand lives in its own module and talks to the
//! compiler through `db` (or, for tools on binary artifacts, through `sass`/`cubin`).

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
    /// Disassemble a cubin like `nvdisasm -c`.
    Disasm(disasm::DisasmArgs),
    /// Assemble nvdisasm-format SASS text into raw instruction words.
    Asm(asm::AsmArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Disasm(a) => disasm::run(&a),
        Command::Asm(a) => asm::run(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kiln: error: {e}");
            ExitCode::FAILURE
        }
    }
}
