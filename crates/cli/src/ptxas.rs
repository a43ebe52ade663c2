//! The ptxas-compatible entry point: `kiln ptxas [ptxas options] FILE.ptx`, or the `kiln`
//! binary invoked under the name `ptxas` (a symlink), so that tools which run ptxas — Triton
//! through `TRITON_PTXAS_PATH`, build systems — can run kiln instead.
//!
//! Options are parsed the way ptxas 13.0.88 parses them: each has a long form (`--gpu-name`)
//! and a short one (`-arch`); a value follows as `--opt=value`, `--opt value`, `-opt=value` or
//! `-opt value`, and `-O` also as `-O3`. Every ptxas option is known here, and each is one of:
//! - **implemented**: `--gpu-name`, `--output-file` (default `elf.o`, as ptxas), `--verbose`
//!   (ptxas's report on standard error, `ptxas info    : ` lines), `--opt-level`,
//!   `--maxrregcount`, `--fmad` (`hir::contract`), `--disable-warnings`, `--warning-as-error`, `--warn-on-spills`,
//!   `--warn-on-local-memory-usage`, `--input-as-string`, `--options-file`, `--machine 64`,
//!   `--version` (names the ptxas release kiln matches, which is what Triton reads), `--help`;
//! - **accepted without effect on the code**, because they only tune ptxas's own search or
//!   silence messages kiln does not print: `--allow-expensive-optimizations`,
//!   `--Ofast-compile`, `--register-usage-level`, `--split-compile`, the `--suppress-*`
//!   options, `--make-errors-visible-at-exit`, `--generate-line-info` (like ptxas 13.0.88,
//!   kiln writes line tables whenever the PTX has `.loc`/`.file` directives, with or without
//!   it);
//! - **refused** with `unsupported option` and exit status 255 (ptxas's failure status),
//!   because honouring them changes the output and kiln does not implement that yet
//!   (`--compile-only`, `--device-debug`, cache-policy defaults, `--entry`, ...).
//!
//! Diagnostics keep kiln's `file:line:col: error: ...` format.

use std::path::PathBuf;

use crate::{Status, compile};

/// How kiln treats an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handling {
    Implemented,
    /// Accepted; does not change kiln's output (see the module documentation).
    NoEffect,
    /// Refused: honouring it would change the output in a way kiln does not implement.
    Unsupported,
}

/// One ptxas option: long name, short name, whether it takes a value, and its handling.
struct Opt {
    long: &'static str,
    short: &'static str,
    value: bool,
    handling: Handling,
}

const fn opt(long: &'static str, short: &'static str, value: bool, handling: Handling) -> Opt {
    Opt {
        long,
        short,
        value,
        handling,
    }
}

use Handling::{Implemented as Impl, NoEffect, Unsupported};

/// ptxas 13.0.88's options (`ptxas --help`), in its order.
const OPTIONS: &[Opt] = &[
    opt("Ofast-compile", "Ofc", true, NoEffect),
    opt(
        "allow-expensive-optimizations",
        "allow-expensive-optimizations",
        true,
        NoEffect,
    ),
    opt("compile-as-tools-patch", "astoolspatch", false, Unsupported),
    opt("compile-only", "c", false, Unsupported),
    opt("compiler-annotations", "annotate", false, Unsupported),
    opt("def-load-cache", "dlcm", true, Unsupported),
    opt("def-store-cache", "dscm", true, Unsupported),
    opt("device-debug", "g", false, Unsupported),
    opt(
        "device-function-maxrregcount",
        "func-maxrregcount",
        true,
        NoEffect,
    ),
    opt(
        "device-stack-protector",
        "device-stack-protector",
        true,
        Unsupported,
    ),
    opt(
        "disable-optimizer-constants",
        "disable-optimizer-consts",
        false,
        Unsupported,
    ),
    opt("disable-warnings", "w", false, Impl),
    opt("dont-merge-basicblocks", "no-bb-merge", false, Unsupported),
    opt("entry", "e", true, Unsupported),
    opt("extensible-whole-program", "ewp", false, Unsupported),
    opt("fmad", "fmad", true, Impl),
    opt("force-load-cache", "flcm", true, Unsupported),
    opt("force-store-cache", "fscm", true, Unsupported),
    opt(
        "g-tensor-memory-access-check",
        "g-tmem-access-check",
        false,
        Unsupported,
    ),
    opt("generate-line-info", "lineinfo", false, NoEffect),
    opt(
        "gno-tensor-memory-access-check",
        "gno-tmem-access-check",
        false,
        NoEffect,
    ),
    opt("gpu-name", "arch", true, Impl),
    opt("help", "h", false, Impl),
    opt("input-as-string", "ias", true, Impl),
    opt(
        "legacy-bar-warp-wide-behavior",
        "legacy-bar-warp-wide-behavior",
        false,
        Unsupported,
    ),
    opt("list-version", "version-ls", false, Unsupported),
    opt("machine", "m", true, Impl),
    opt(
        "make-errors-visible-at-exit",
        "make-errors-visible-at-exit",
        false,
        NoEffect,
    ),
    opt("maxntid", "maxntid", true, Unsupported),
    opt("maxrregcount", "maxrregcount", true, Impl),
    opt("minnctapersm", "minnctapersm", true, Unsupported),
    opt("opt-level", "O", true, Impl),
    opt(
        "optimize-float-atomics",
        "opt-fp-atomics",
        false,
        Unsupported,
    ),
    opt("options-file", "optf", true, Impl),
    opt("output-file", "o", true, Impl),
    opt(
        "override-directive-values",
        "override-directive-values",
        false,
        NoEffect,
    ),
    opt("position-independent-code", "pic", true, Unsupported),
    opt("preserve-relocs", "preserve-relocs", false, Unsupported),
    opt("register-usage-level", "regUsageLevel", true, NoEffect),
    opt("return-at-end", "ret-end", false, Unsupported),
    opt("sanitize", "sanitize", true, Unsupported),
    opt("sp-bounds-check", "sp-bounds-check", false, Unsupported),
    opt("split-compile", "split-compile", true, NoEffect),
    opt(
        "suppress-async-bulk-multicast-advisory-warning",
        "suppress-async-bulk-multicast-advisory-warning",
        false,
        NoEffect,
    ),
    opt(
        "suppress-debug-info",
        "suppress-debug-info",
        false,
        NoEffect,
    ),
    opt(
        "suppress-double-demote-warning",
        "suppress-double-demote-warning",
        false,
        NoEffect,
    ),
    opt(
        "suppress-sparse-mma-advisory-info",
        "suppress-sparse-mma-advisory-info",
        false,
        NoEffect,
    ),
    opt(
        "suppress-stack-size-warning",
        "suppress-stack-size-warning",
        false,
        NoEffect,
    ),
    opt("verbose", "v", false, Impl),
    opt("version", "V", false, Impl),
    opt(
        "warn-on-double-precision-use",
        "warn-double-usage",
        false,
        Unsupported,
    ),
    opt("warn-on-local-memory-usage", "warn-lmem-usage", false, Impl),
    opt("warn-on-spills", "warn-spills", false, Impl),
    opt("warning-as-error", "Werror", false, Impl),
];

/// ptxas's exit status for every failure.
const FAILURE: u8 = 255;

/// The ptxas release whose behaviour kiln reproduces (the oracle it is tested against).
const PTXAS_RELEASE: &str = "Cuda compilation tools, release 13.0, V13.0.88";

/// The parsed command line: options in order (long name, value) and input files.
#[derive(Debug, Default, PartialEq, Eq)]
struct CommandLine {
    options: Vec<(&'static str, Option<String>)>,
    inputs: Vec<String>,
}

impl CommandLine {
    fn last(&self, long: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(l, _)| *l == long)
            .and_then(|(_, v)| v.as_deref())
    }
    fn has(&self, long: &str) -> bool {
        self.options.iter().any(|(l, _)| *l == long)
    }
}

/// Parses ptxas-style arguments; `--options-file` is expanded in place.
fn parse(args: &[String], depth: u32) -> Result<CommandLine, String> {
    let mut cl = CommandLine::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(body) = arg.strip_prefix('-').filter(|b| !b.is_empty()) else {
            cl.inputs.push(arg.clone());
            continue;
        };
        let (is_long, body) = match body.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, body),
        };
        let (name, attached) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let found = OPTIONS.iter().find(|o| {
            if is_long {
                o.long == name
            } else {
                o.short == name
            }
        });
        // `-O3`: the short opt-level with its value attached.
        let (o, attached) = match found {
            Some(o) => (o, attached),
            None if !is_long
                && attached.is_none()
                && name.len() > 1
                && name.starts_with('O')
                && name[1..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                let o = OPTIONS
                    .iter()
                    .find(|o| o.long == "opt-level")
                    .unwrap_or(&OPTIONS[0]);
                (o, Some(name[1..].to_string()))
            }
            None => return Err(format!("Unknown option '{arg}'")),
        };
        let value = if o.value {
            match attached {
                Some(v) => Some(v),
                None => {
                    let Some(v) = args.get(i) else {
                        return Err(format!("Option '{arg}' requires a value"));
                    };
                    i += 1;
                    Some(v.clone())
                }
            }
        } else {
            if attached.is_some() {
                return Err(format!("Option '--{}' takes no value", o.long));
            }
            None
        };
        if o.long == "options-file" {
            if depth > 8 {
                return Err("options files nest too deeply".into());
            }
            for f in value.as_deref().unwrap_or("").split(',') {
                let text = std::fs::read_to_string(f)
                    .map_err(|e| format!("cannot read options file '{f}': {e}"))?;
                let words: Vec<String> = text.split_whitespace().map(String::from).collect();
                let inner = parse(&words, depth + 1)?;
                cl.options.extend(inner.options);
                cl.inputs.extend(inner.inputs);
            }
            continue;
        }
        cl.options.push((o.long, value));
    }
    Ok(cl)
}

fn fatal(message: &str) -> Status {
    eprintln!("ptxas fatal   : {message}");
    Status::Exit(FAILURE)
}

/// Runs the ptxas-compatible driver on `args` (without the program name).
pub fn run(args: &[String]) -> Status {
    let cl = match parse(args, 0) {
        Ok(cl) => cl,
        Err(m) => return fatal(&m),
    };
    if cl.has("version") {
        println!(
            "kiln {}: an incremental PTX to SASS compiler",
            env!("CARGO_PKG_VERSION")
        );
        println!("Drop-in for ptxas; compatible with: {PTXAS_RELEASE}");
        return Status::Ok;
    }
    if cl.has("help") {
        print_help();
        return Status::Ok;
    }
    for (long, value) in &cl.options {
        let o = OPTIONS.iter().find(|o| o.long == *long);
        if o.is_some_and(|o| o.handling == Unsupported) {
            let v = value
                .as_deref()
                .map(|v| format!("={v}"))
                .unwrap_or_default();
            return fatal(&format!(
                "unsupported option '--{long}{v}' (kiln does not implement it yet)"
            ));
        }
    }
    let Some(arch_name) = cl.last("gpu-name") else {
        return fatal("no GPU name given: use --gpu-name (-arch) sm_80, sm_90 or sm_90a");
    };
    let Some(arch) = db::Sm::parse(arch_name) else {
        return fatal(&format!(
            "Value '{arch_name}' is not defined for option 'gpu-name'"
        ));
    };
    if !db::codegen_supported(arch) {
        return fatal(&format!(
            "unsupported: code generation for {arch} (kiln generates code for {} and their `a` variants)",
            db::codegen_sms()
        ));
    }
    if let Some(m) = cl.last("machine")
        && m != "64"
    {
        return fatal(&format!(
            "unsupported: --machine {m} (only 64-bit code exists for {arch})"
        ));
    }
    let mut target = db::Target::new(arch);
    if let Some(o) = cl.last("opt-level") {
        match o.parse::<u8>() {
            Ok(n) if n <= 4 => target.opt_level = n.min(3),
            _ => {
                return fatal(&format!(
                    "Value '{o}' is not defined for option 'opt-level'"
                ));
            }
        }
    }
    if let Some(m) = cl.last("maxrregcount") {
        target.max_registers = match m {
            // The largest budget is no limit; the smallest is ptxas's lower bound (24).
            "archmax" => None,
            "archmin" => Some(db::MIN_REGISTERS),
            n => match n.parse::<u32>() {
                Ok(n) if n > 0 && n < db::MIN_REGISTERS => {
                    eprintln!(
                        "ptxas warning : For profile {} adjusting per thread register count of {n} to lower bound of {}",
                        target.sm,
                        db::MIN_REGISTERS
                    );
                    Some(db::MIN_REGISTERS)
                }
                Ok(n) if n > 0 => Some(n),
                _ => {
                    return fatal(&format!(
                        "Value '{n}' is not defined for option 'maxrregcount'"
                    ));
                }
            },
        };
    }
    if let Some(v) = cl.last("fmad") {
        target.fmad = match v {
            "true" => true,
            "false" => false,
            _ => {
                return fatal(&format!("Value '{v}' is not defined for option 'fmad'"));
            }
        };
    }
    let verbose = cl.has("verbose");
    // The inputs: files, or strings given with --input-as-string.
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for s in cl.options.iter().filter(|(l, _)| *l == "input-as-string") {
        inputs.push((
            "<input string>".into(),
            s.1.clone().unwrap_or_default().into_bytes(),
        ));
    }
    for f in cl.inputs.iter().flat_map(|f| f.split(',')) {
        match std::fs::read(f) {
            Ok(b) => inputs.push((f.to_string(), b)),
            Err(_) => return fatal(&format!("Input file '{f}' could not be opened")),
        }
    }
    let (path, bytes) = match inputs.len() {
        0 => return fatal("No input files specified"),
        1 => inputs.remove(0),
        _ => {
            return fatal(
                "unsupported: more than one input (kiln compiles one PTX module per run)",
            );
        }
    };
    let output = PathBuf::from(cl.last("output-file").unwrap_or("elf.o"));
    let outcome = compile::compile(&compile::Request {
        path: &path,
        bytes: &bytes,
        target,
        report: verbose.then_some(compile::Report {
            tool: "ptxas",
            to_stderr: true,
            ptxas_lines: true,
        }),
        sass: false,
        control_codes: false,
        warnings: !cl.has("disable-warnings"),
        warnings_as_errors: cl.has("warning-as-error"),
    });
    let mut warnings = Vec::new();
    for s in &outcome.stats {
        if cl.has("warn-on-spills") && (s.spill_stores > 0 || s.spill_loads > 0) {
            warnings.push(format!(
                "Registers are spilled to local memory in function '{}', {} bytes spill stores, {} bytes spill loads",
                s.name, s.spill_stores, s.spill_loads
            ));
        }
        if cl.has("warn-on-local-memory-usage") && s.stack_frame > 0 {
            warnings.push(format!(
                "Local memory used for function '{}', size of stack frame: {} bytes",
                s.name, s.stack_frame
            ));
        }
    }
    if !cl.has("disable-warnings") {
        for w in &warnings {
            eprintln!("ptxas warning : {w}");
        }
    }
    let failed_on_warning = cl.has("warning-as-error") && !warnings.is_empty();
    match outcome.cubin {
        Some(bytes) if outcome.errors == 0 && !failed_on_warning => {
            if let Err(e) = std::fs::write(&output, bytes) {
                return fatal(&format!(
                    "Could not open output file '{}': {e}",
                    output.display()
                ));
            }
            Status::Ok
        }
        _ => fatal("Ptx assembly aborted due to errors"),
    }
}

fn print_help() {
    println!("Usage  : ptxas [options] <ptx file>   (kiln's ptxas-compatible driver)\n");
    println!("Options (ptxas 13.0.88's names; long and short forms):\n");
    for o in OPTIONS {
        let value = if o.value { " <value>" } else { "" };
        let what = match o.handling {
            Impl => "",
            NoEffect => "   [accepted; no effect on kiln's output]",
            Unsupported => "   [unsupported: refused]",
        };
        println!("--{}{value} (-{}){what}", o.long, o.short);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_every_value_spelling() {
        let cl = parse(
            &args("-arch=sm_90 --gpu-name sm_80 -O2 --opt-level=1 -maxrregcount 32 -v k.ptx -o k.cubin"),
            0,
        )
        .unwrap();
        assert_eq!(cl.last("gpu-name"), Some("sm_80"));
        assert_eq!(cl.last("opt-level"), Some("1"));
        assert_eq!(cl.last("maxrregcount"), Some("32"));
        assert_eq!(cl.last("output-file"), Some("k.cubin"));
        assert!(cl.has("verbose"));
        assert_eq!(cl.inputs, vec!["k.ptx".to_string()]);
    }

    #[test]
    fn rejects_unknown_options_and_missing_values() {
        assert_eq!(
            parse(&args("--bogus k.ptx"), 0).unwrap_err(),
            "Unknown option '--bogus'"
        );
        assert!(
            parse(&args("k.ptx -o"), 0)
                .unwrap_err()
                .contains("requires a value")
        );
        assert!(
            parse(&args("-v=1"), 0)
                .unwrap_err()
                .contains("takes no value")
        );
    }

    #[test]
    fn every_option_has_distinct_names() {
        for (i, a) in OPTIONS.iter().enumerate() {
            for b in &OPTIONS[i + 1..] {
                assert_ne!(a.long, b.long);
                assert_ne!(a.short, b.short, "{} and {}", a.long, b.long);
            }
        }
    }
}
