//! `cargo xtask`: project automation that must work on a fresh machine.
//!
//! Every subcommand lives in its own module; `main` only dispatches. Arguments are parsed by
//! hand (no clap) so that `cargo xtask` builds in seconds.

mod corpus;
mod oracle;
mod sass_probe;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  oracle                    install NVIDIA's ptxas/nvdisasm/cuobjdump (PyPI wheels) into a
                            cache folder and print the folder holding the binaries
  corpus <stage> [--dir DIR] [--arch sm_XX]
                            run a conformance stage over the corpus (default ../shared/corpus)
  sass-probe --arch sm_XX [--collect] [--dir DIR]
                            learn crates/sass/tables/<sm>.txt from nvdisasm (--collect first
                            picks seed words from ptxas output for the corpus)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match cmd.as_str() {
        "oracle" => oracle::run(rest),
        "corpus" => corpus::run(rest),
        "sass-probe" => sass_probe::run(rest),
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("xtask: {msg}");
            ExitCode::FAILURE
        }
    }
}
