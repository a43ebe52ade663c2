//! `cargo xtask`: project automation that must work on a fresh machine.
//!
//! Every subcommand lives in its own module; `main` only dispatches. Arguments are parsed by
//! hand (no clap) so that `cargo xtask` builds in seconds.

mod bench;
mod corpus;
mod cubin_names;
mod cvt_forms;
mod e2e_editor;
mod fuzz;
mod fuzz_codegen;
mod fuzz_cubin;
mod gpu_check;
mod isa_forms;
mod math_forms;
mod mutate;
mod occupancy_check;
mod opcode_names;
mod oracle;
mod sass_prefer;
mod sass_probe;
mod sm_forms;
mod wmma_layouts;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  oracle                    install NVIDIA's ptxas/nvdisasm/cuobjdump (PyPI wheels) into a
                            cache folder and print the folder holding the binaries
  corpus <stage> [--dir DIR] [--arch sm_XX]
                            run a conformance stage over the corpus (default ../shared/corpus)
  mutate [--count N] [--seed S] [--out DIR] [--check] [--max-bytes N]
                            break valid corpus PTX, compare ptxas's verdict with ours, and
                            write the cases to test-data/sema-mutations
  cubin-names [--print]     check the EIATTR name table against cuobjdump (or print it)
  fuzz-cubin [--seconds N] [--seed S]
                            mutation-fuzz the cubin reader (deterministic, bounded)
  fuzz parse [--seconds N] [--seed S]
                            mutation-fuzz the PTX parser (panics, hangs, lossless round trip)
  fuzz codegen [--seconds N] [--seed S] [--arch sm_XX]...
                            differential fuzzing of code generation: random well-defined
                            kernels compiled by kiln, emulator against interpreter
  fuzz ptxas-diff [--cases N] [--seed S] [--strict]
                            differential test: does the parser accept what ptxas parses?
  sass-probe --arch sm_XX [--collect|--report] [--dir DIR]
                            learn crates/sass/tables/<sm>.txt from nvdisasm (--collect first
                            picks seed words from ptxas output for the corpus)
  sass-prefer --arch sm_XX [--dir DIR]...
                            learn which encoding ptxas writes for texts several encodings
                            print: writes crates/sass/tables/<sm>.prefer
  cvt-forms                 learn ptxas's SASS for every cvt variant: writes
                            crates/lower/data/cvt.tsv (templates lower uses)
  sm-forms --base sm_XX --arch sm_YY [--dir DIR] [--shard K/N] [--top N]
                            which SASS mnemonics ptxas writes for one SM and not the other on
                            the same corpus files (how an SM's target::Forms are found)
  wmma-layouts              learn ptxas's wmma fragment layouts (probes run in the emulator):
                            writes crates/target/data/wmma_layouts.txt
  opcode-names [--check]    write crates/sass/src/opcode/names.rs: the SASS mnemonics and
                            modifiers of the committed tables (typed machine opcodes)
  math-forms                learn ptxas's f32/f64 rcp/sqrt/div routines (slow paths inlined):
                            writes crates/lower/data/math.tsv
  isa-forms [--arch sm_XX]... [--opcode OP]... [--shard K/N] [--learn] [--sema] [--verbose]
                            the PTX ISA's instruction forms as probes: ptxas's verdict, the
                            judge on ptxas's code, kiln's code verified (target/isa-forms-*.tsv);
                            --sema: ptxas's verdicts and kiln's checker only (missed and
                            false errors of the checker, no code generation)
  hazard-learn --arch sm_XX [--dir DIR]
                            learn crates/hazard/tables/<sm>.txt (latencies, scoreboard use)
                            from ptxas output for the corpus
  bench compile --arch sm_XX [--runs N]
                            kiln vs ptxas, whole process, cold, on the corpus files kiln
                            compiles completely (time and peak memory)
  occupancy-check [--cuda-root DIR] [--write-sample]
                            compare kiln's per-SM occupancy limits and occupancy function
                            with NVIDIA's cuda_occupancy.h (built with g++; no GPU), and
                            check crates/target/data/occupancy-sample.tsv
  e2e-editor                the VS Code extension's end-to-end test in code-server and
                            Chromium (editors/code/e2e/run.sh; installs on first use)
  gpu-check [prepare | compare RESULTS] [--arch sm_XX] [--out DIR] [--limit N]
                            run kiln's and ptxas's cubins on an NVIDIA GPU and compare
                            (needs a GPU; not part of CI; see xtask/src/gpu_check/mod.rs)
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
        "mutate" => mutate::run(rest),
        "fuzz-cubin" => fuzz_cubin::run(rest),
        "cubin-names" => cubin_names::run(rest),
        "fuzz" => fuzz::run(rest),
        "sass-probe" => sass_probe::run(rest),
        "sass-prefer" => sass_prefer::run(rest),
        "cvt-forms" => cvt_forms::run(rest),
        "math-forms" => math_forms::run(rest),
        "opcode-names" => opcode_names::run(rest),
        "isa-forms" => isa_forms::run(rest),
        "sm-forms" => sm_forms::run(rest),
        "wmma-layouts" => wmma_layouts::run_cmd(rest),
        "hazard-learn" => corpus::hazard::learn(rest),
        "gpu-check" => gpu_check::run(rest),
        "bench" => bench::run(rest),
        "occupancy-check" => occupancy_check::run(rest),
        "e2e-editor" => e2e_editor::run(rest),
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
