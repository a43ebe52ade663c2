//! `kiln`: the command-line driver. Each subcommand lives in its own module and talks to the
//! compiler through `db` (or, for tools on binary artifacts, through `sass`/`cubin`).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod objdump;

/// kiln: an incremental PTX → SASS compiler.
#[derive(Parser)]
#[command(name = "kiln", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List a cubin's sections, symbols and EIATTR records (like `cuobjdump -elf`).
    Objdump(objdump::ObjdumpArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Objdump(a) => objdump::run(&a),
    }
}
