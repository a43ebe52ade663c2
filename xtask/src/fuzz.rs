//! `cargo xtask fuzz parse [--seconds N] [--seed S]`: a deterministic mutation fuzzer for the
//! PTX parser that runs on stable Rust.
//!
//! Seeds are windows of corpus files (`$KILN_CORPUS` or `../shared/corpus`; small embedded
//! seeds when the corpus is absent). Each input is a seed with a few mutations: byte flips,
//! insertions of PTX punctuation and keywords, deletions, truncation, line swaps and
//! duplications, invalid UTF-8, and deep nesting. Each input is parsed with
//! `syntax::parse_bytes` on a worker thread under `catch_unwind`, with a watchdog: a panic, a
//! parse that takes longer than the per-input limit (a hang), a tree that does not print back
//! to its input, or an error range outside the text is a failure. The failing input is written
//! to `target/fuzz-failures/` and the command exits non-zero. A crash that kills the process
//! (stack overflow) cannot be caught; the input being parsed is always on disk as
//! `target/fuzz-failures/in-flight.ptx`, so it is left there.
//!
//! The random generator is seeded from `--seed` (default fixed), so a run is reproducible up to
//! how many inputs fit in the time budget. No new input starts once `--seconds` (default 30)
//! minus the slowest input so far have passed; the last line is
//! `RESULT fuzz parse inputs=N failures=N seconds=X seed=S slowest_input_ms=T`.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::corpus;

/// A parse of one fuzz input (a few KB, or a few hundred KB of nesting) takes milliseconds
/// even unoptimized; anything this slow is treated as a hang.
const PER_INPUT_LIMIT: Duration = Duration::from_secs(10);

/// Largest window of a corpus file used as one seed.
const MAX_SEED_LEN: usize = 8 * 1024;

const EMBEDDED_SEEDS: &[&str] = &[
    ".version 8.4\n.target sm_90a, texmode_independent\n.address_size 64\n\n\
     .visible .entry k(\n\t.param .u64 .ptr.global.align 16 k_p0,\n\t.param .u32 n\n)\n\
     .maxntid 128, 1, 1\n{\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n\t.reg .b64 %rd<3>;\n\
     \tld.param.u64 %rd1, [k_p0];\n\tmov.u32 %r1, %tid.x;\n\tsetp.ge.u32 %p1, %r1, 32;\n\
     \t@%p1 bra $L__BB0_2;\n\tld.global.nc.v2.u32 {%r2, _}, [%rd1+-8];\n$L__BB0_2:\n\tret;\n}\n",
    ".version 7.0\n.target sm_80\n.address_size 64\n.global .align 4 .b8 tbl[2][3] = {{1, 2, 3}, \
     {4, 5, 6}};\n.global .u64 p = generic(tbl);\n.extern .shared .align 16 .b8 smem[];\n\
     .extern .func (.param .b32 rv) vprintf(.param .b64 fmt, .param .b64 args);\n\
     .func (.reg .f32 r) f(.reg .f32 a) .noreturn\n{\n\tproto: .callprototype (.param .b32 _) _ \
     (.param .b64 _);\n\tcall.uni (rv), vprintf, (fmt, args), proto;\n\tmov.f32 r, 0f3F800000;\n\
     \tadd.s32 %r1, %r1, -(1 << 4) * 2U;\n\t{ .reg .pred p; @!p ret; }\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"k.py\"\n.section .debug_info\n{\n\
     $L__info0:\n.b32 $L__tmp1-$L__tmp0\n.b8 1, 2 // x\n.b64 .debug_abbrev\n}\n\
     .section .debug_macinfo { }\n/* block\ncomment */\n",
];

/// Fragments inserted by the insertion mutation.
const DICTIONARY: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    ":",
    "::",
    "@",
    "!",
    "<",
    ">",
    "=",
    "-",
    "+",
    "|",
    "?",
    ".",
    "%",
    "_",
    "\n",
    " ",
    "\t",
    "\"",
    "//",
    "/*",
    "*/",
    ".reg",
    ".entry",
    ".func",
    ".visible",
    ".extern",
    ".param",
    ".global",
    ".shared",
    ".align 8",
    ".b8",
    ".u32",
    ".v4",
    ".section",
    ".loc 1 2 3",
    ".file",
    ".version",
    ".target",
    ".callprototype",
    ".maxntid",
    ".pragma",
    "%r1",
    "%r<10>",
    "$L__BB0_1",
    "call",
    "ret;",
    "bra",
    "0x",
    "0f3F800000",
    "0d",
    "0b1",
    "017",
    "1.5e3",
    "7U",
    "generic(",
    "mask(",
    "inlined_at",
    "\u{e9}",
    "\u{0}",
];

/// A small, fast, deterministic PRNG (xorshift64*), shared with `fuzz codegen`.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// One element of `v` (non-empty), uniformly.
    pub(crate) fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    /// True with probability `percent`/100.
    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

fn pos(rng: &mut Rng, input: &[u8]) -> usize {
    rng.below(input.len() + 1)
}

fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
    match rng.below(10) {
        0 | 1 => {
            // Byte flip (any byte, so also invalid UTF-8).
            if !input.is_empty() {
                let i = rng.below(input.len());
                input[i] = rng.next() as u8;
            }
        }
        2 | 3 => {
            let word = DICTIONARY[rng.below(DICTIONARY.len())].as_bytes();
            let at = pos(rng, input);
            input.splice(at..at, word.iter().copied());
        }
        4 => {
            // Delete a short range.
            if !input.is_empty() {
                let a = rng.below(input.len());
                let b = (a + 1 + rng.below(32)).min(input.len());
                input.drain(a..b);
            }
        }
        5 => {
            let at = pos(rng, input);
            input.truncate(at);
        }
        6 => {
            // Swap two lines or duplicate one.
            let text = std::mem::take(input);
            let mut lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
            if !lines.is_empty() {
                let a = rng.below(lines.len());
                let b = rng.below(lines.len());
                if rng.below(2) == 0 {
                    lines.swap(a, b);
                } else {
                    let l = lines[a];
                    lines.insert(b, l);
                }
            }
            *input = lines.concat();
        }
        7 => {
            // Invalid UTF-8: a stray continuation byte, a truncated sequence, a surrogate,
            // an overlong encoding.
            const BAD: &[&[u8]] = &[
                b"\xff",
                b"\x80",
                b"\xc3",
                b"\xe2\x82",
                b"\xed\xa0\x80",
                b"\xc0\xaf",
            ];
            let bad = BAD[rng.below(BAD.len())];
            let at = pos(rng, input);
            input.splice(at..at, bad.iter().copied());
        }
        8 => {
            // Deep nesting of one bracket or prefix operator, or a long operator chain (each
            // operator is one more tree level), sometimes closed.
            const OPEN: &[(&str, &str)] = &[
                ("{", "}"),
                ("(", ")"),
                ("[", "]"),
                ("-", ""),
                ("!", ""),
                ("{{", "}}"),
                ("+1", ""),
                ("?1:1", ""),
                ("*(1)", ""),
                ("@", ""),
            ];
            let (open, close) = OPEN[rng.below(OPEN.len())];
            let limit = if rng.below(4) == 0 { 100_000 } else { 20_000 };
            let n = 1 + rng.below(limit);
            let at = pos(rng, input);
            let mut s = open.repeat(n);
            if rng.below(2) == 0 {
                s.push('1');
                s.push_str(&close.repeat(rng.below(n + 1)));
            }
            input.splice(at..at, s.into_bytes());
        }
        _ => {
            // Copy a chunk of the input to another place.
            if !input.is_empty() {
                let a = rng.below(input.len());
                let b = (a + 1 + rng.below(256)).min(input.len());
                let chunk = input[a..b].to_vec();
                let at = pos(rng, input);
                input.splice(at..at, chunk);
            }
        }
    }
}

/// Checks one input; `Err` describes a failure.
fn check(input: &[u8]) -> Result<(), String> {
    let (text, parse) = syntax::parse_bytes(input);
    let printed = parse.syntax_node().to_string();
    if printed != text {
        return Err("tree does not print back to the decoded input".into());
    }
    for e in parse.errors() {
        let (s, t) = (usize::from(e.range.start()), usize::from(e.range.end()));
        if t > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(t) {
            return Err(format!(
                "error range {:?} is not inside the text: {}",
                e.range, e.message
            ));
        }
    }
    Ok(())
}

fn load_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = EMBEDDED_SEEDS
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    match corpus::default_dir() {
        Some(dir) if dir.is_dir() => {
            for rel in corpus::ptx_files(&dir) {
                if let Ok(bytes) = std::fs::read(dir.join(&rel)) {
                    seeds.push(bytes);
                }
            }
            eprintln!("fuzz: {} seeds (corpus {})", seeds.len(), dir.display());
        }
        _ => println!(
            "fuzz: corpus not found; using {} embedded seeds only",
            seeds.len()
        ),
    }
    seeds
}

/// A seed-sized window of `seed` starting at a line boundary.
fn window(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    if seed.len() <= MAX_SEED_LEN {
        return seed.to_vec();
    }
    let mut start = rng.below(seed.len() - MAX_SEED_LEN);
    while start > 0 && seed[start - 1] != b'\n' {
        start -= 1;
    }
    seed[start..(start + MAX_SEED_LEN).min(seed.len())].to_vec()
}

fn save_failure(kind: &str, input: &[u8]) -> PathBuf {
    let dir = corpus::workspace_root().join("target/fuzz-failures");
    let hash = corpus::fnv1a64(&[input]);
    let path = dir.join(format!("{kind}-{hash:016x}.ptx"));
    if let Err(e) = std::fs::write(&path, input) {
        eprintln!("fuzz: could not write {}: {e}", path.display());
    }
    path
}

pub fn run(args: &[String]) -> Result<(), String> {
    let Some((target, rest)) = args.split_first() else {
        return Err("usage: cargo xtask fuzz parse [--seconds N] [--seed S] | \
             fuzz ptxas-diff [--cases N] [--seed S] [--strict] | \
             fuzz codegen [--seconds N] [--seed S] [--arch sm_XX]... [--size N]"
            .into());
    };
    match target.as_str() {
        "parse" => run_parse(rest),
        "ptxas-diff" => run_ptxas_diff(rest),
        "codegen" => crate::fuzz_codegen::run(rest),
        other => Err(format!(
            "unknown fuzz target `{other}` (available: parse, ptxas-diff, codegen)"
        )),
    }
}

/// Parses `--name value` integer options.
fn int_options(
    rest: &[String],
    names: &[&str],
    flags: &[&str],
) -> Result<(Vec<Option<u64>>, Vec<bool>), String> {
    let mut values = vec![None; names.len()];
    let mut set = vec![false; flags.len()];
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        if let Some(i) = names.iter().position(|n| n == a) {
            let v = it
                .next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{a} needs a non-negative integer"))?;
            values[i] = Some(v);
        } else if let Some(i) = flags.iter().position(|f| f == a) {
            set[i] = true;
        } else {
            return Err(format!("unknown option `{a}`"));
        }
    }
    Ok((values, set))
}

/// `cargo xtask fuzz ptxas-diff [--cases N] [--seed S] [--strict]`: differential testing of
/// the parser against ptxas. Each case is a small accepted corpus file with one mutation
/// (the byte-level ones of `fuzz parse`, or a comment/line break inserted at whitespace,
/// which must not change anything). ptxas and the parser each say whether the text parses
/// (for ptxas: no "Parsing error" or header/storage fatal). Disagreements are printed and
/// their inputs written to `target/fuzz-failures/ptxas-diff/`. The parser is deliberately
/// more lenient than ptxas on opcode and modifier spelling (that is the `ptx` crate's job),
/// so "we accept, ptxas rejects" is informational; "we reject, ptxas parses" is a bug in the
/// parser, and fails the run with `--strict`. Last line:
/// `RESULT fuzz ptxas-diff cases=N agree=N we_reject_ptxas_parses=N we_accept_ptxas_rejects=N`.
fn run_ptxas_diff(rest: &[String]) -> Result<(), String> {
    let (values, flags) = int_options(rest, &["--cases", "--seed"], &["--strict"])?;
    let cases = values[0].unwrap_or(200) as usize;
    let seed = values[1].unwrap_or(0x6b69_6c6e);
    let strict = flags[0];
    let Some(dir) = corpus::default_dir().filter(|d| d.is_dir()) else {
        println!("skipping: corpus not found (set KILN_CORPUS)");
        return Ok(());
    };
    let ptxas = match crate::oracle::tool("ptxas") {
        Ok(p) => p,
        Err(e) => {
            println!("skipping: ptxas unavailable: {e}");
            return Ok(());
        }
    };
    let mut seeds = Vec::new();
    for rel in corpus::ptx_files(&dir) {
        if !corpus::is_accepted(&rel) {
            continue;
        }
        let path = dir.join(&rel);
        if std::fs::metadata(&path).map_or(true, |m| m.len() > 6000) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some(arch) = corpus::arch_for_file(&corpus::scan_targets(&text), "sm_90") else {
            continue;
        };
        seeds.push((rel, text, arch));
    }
    if seeds.is_empty() {
        println!("skipping: no small accepted corpus files for sm_90");
        return Ok(());
    }
    let out_dir = corpus::workspace_root().join("target/fuzz-failures/ptxas-diff");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("creating {}: {e}", out_dir.display()))?;
    let mut rng = Rng::new(seed);
    let (mut agree, mut false_reject, mut lenient) = (0usize, 0usize, 0usize);
    for case in 0..cases {
        let (rel, text, arch) = &seeds[rng.below(seeds.len())];
        let mut input = text.clone().into_bytes();
        if rng.below(3) == 0 {
            // Layout change at whitespace: never changes the meaning.
            let spaces: Vec<usize> = (0..input.len())
                .filter(|&i| input[i].is_ascii_whitespace())
                .collect();
            if !spaces.is_empty() {
                let at = spaces[rng.below(spaces.len())];
                let ins: &[u8] = [b"/* c */".as_slice(), b"\n", b"// c\n", b" "][rng.below(4)];
                input.splice(at..at, ins.iter().copied());
            }
        } else {
            mutate(&mut rng, &mut input);
        }
        let mutated = input;
        let ours = syntax::parse_bytes(&mutated).1.errors().is_empty();
        let src = out_dir.join(format!("case-{case}.ptx"));
        std::fs::write(&src, &mutated).map_err(|e| format!("writing {}: {e}", src.display()))?;
        let out = std::process::Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&src)
            .arg("-o")
            .arg(out_dir.join("case.cubin"))
            .output()
            .map_err(|e| format!("running ptxas: {e}"))?;
        let log = String::from_utf8_lossy(&out.stderr);
        let theirs = ![
            "Parsing error",
            "syntax error",
            "Missing .version",
            "Missing .target",
            "No variable storage",
            "Unexpected non-ASCII",
            "Unexpected EOF",
        ]
        .iter()
        .any(|m| log.contains(m));
        if ours == theirs {
            agree += 1;
            let _ = std::fs::remove_file(&src);
            continue;
        }
        let first_ptxas = log.lines().next().unwrap_or("").to_string();
        if theirs {
            false_reject += 1;
            let first_ours = syntax::parse_bytes(&mutated)
                .1
                .errors()
                .first()
                .map(|e| e.to_string())
                .unwrap_or_default();
            println!(
                "WE REJECT, PTXAS PARSES: {} (from {}): ours: {first_ours}",
                src.display(),
                rel.display()
            );
        } else {
            lenient += 1;
            println!(
                "we accept, ptxas rejects: {} (from {}): {first_ptxas}",
                src.display(),
                rel.display()
            );
        }
    }
    println!(
        "RESULT fuzz ptxas-diff cases={cases} agree={agree} we_reject_ptxas_parses={false_reject} \
         we_accept_ptxas_rejects={lenient}"
    );
    if strict && false_reject > 0 {
        return Err(format!(
            "{false_reject} inputs ptxas parses were rejected by the parser"
        ));
    }
    Ok(())
}

fn run_parse(rest: &[String]) -> Result<(), String> {
    let (values, _) = int_options(rest, &["--seconds", "--seed"], &[])?;
    let seconds = values[0].unwrap_or(30);
    let seed = values[1].unwrap_or(0x6b69_6c6e); // "kiln"
    let start = Instant::now();
    let budget = Duration::from_secs(seconds);
    let seeds = load_seeds();
    let mut rng = Rng::new(seed);

    // Silence the default panic message; the worker reports panics itself.
    std::panic::set_hook(Box::new(|info| {
        let loc = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("fuzz: panic at {loc}: {info}");
    }));

    // One worker thread parses inputs; the main thread is the watchdog.
    let (to_worker, inputs) = mpsc::channel::<Vec<u8>>();
    let (to_main, results) = mpsc::channel::<Result<(), String>>();
    std::thread::Builder::new()
        .name("fuzz-parse".into())
        .stack_size(2 << 20)
        .spawn(move || {
            for input in inputs {
                let r =
                    corpus::catch(|| check(&input)).unwrap_or_else(|p| Err(format!("panic: {p}")));
                if to_main.send(r).is_err() {
                    break;
                }
            }
        })
        .map_err(|e| format!("spawning the fuzz worker: {e}"))?;

    let failures_dir = corpus::workspace_root().join("target/fuzz-failures");
    std::fs::create_dir_all(&failures_dir)
        .map_err(|e| format!("creating {}: {e}", failures_dir.display()))?;
    let in_flight = failures_dir.join("in-flight.ptx");
    eprintln!(
        "fuzz: if the process dies (stack overflow, abort), {} holds the input that killed it",
        in_flight.display()
    );
    let mut count = 0u64;
    let mut last_report = Instant::now();
    // The slowest input so far: no new input starts unless it would finish in the budget.
    let mut slowest = Duration::ZERO;
    while start.elapsed() + slowest < budget {
        let base = &seeds[rng.below(seeds.len())];
        let mut input = window(&mut rng, base);
        // Mostly a few mutations; sometimes none (the seed itself must parse cleanly too).
        let n = rng.below(5);
        for _ in 0..n {
            mutate(&mut rng, &mut input);
        }
        // A stack overflow or abort kills the whole process before any report, so the input
        // in flight is kept on disk until its result is in.
        std::fs::write(&in_flight, &input)
            .map_err(|e| format!("writing {}: {e}", in_flight.display()))?;
        let t0 = Instant::now();
        to_worker
            .send(input.clone())
            .map_err(|_| "fuzz worker stopped".to_string())?;
        count += 1;
        let outcome = match results.recv_timeout(PER_INPUT_LIMIT) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                Err(format!("hang: no result after {PER_INPUT_LIMIT:?}"))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err("fuzz worker died".into()),
        };
        slowest = slowest.max(t0.elapsed());
        if let Err(msg) = outcome {
            let kind = if msg.starts_with("hang") {
                "hang"
            } else if msg.starts_with("panic") {
                "panic"
            } else {
                "invariant"
            };
            let path = save_failure(kind, &input);
            let _ = std::fs::remove_file(&in_flight);
            println!("fuzz: FAILURE on input {count} (seed {seed}): {msg}");
            println!("fuzz: input written to {}", path.display());
            println!(
                "RESULT fuzz parse inputs={count} failures=1 seconds={:.1} seed={seed}",
                start.elapsed().as_secs_f64()
            );
            // A hung worker cannot be stopped; exiting the process ends it.
            std::process::exit(1);
        }
        if last_report.elapsed() >= Duration::from_secs(10) {
            last_report = Instant::now();
            eprintln!(
                "fuzz: {count} inputs, {:.0} s",
                start.elapsed().as_secs_f64()
            );
        }
    }
    let _ = std::fs::remove_file(&in_flight);
    println!(
        "RESULT fuzz parse inputs={count} failures=0 seconds={:.1} seed={seed} slowest_input_ms={}",
        start.elapsed().as_secs_f64(),
        slowest.as_millis()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next(), b.next());
        }
    }

    #[test]
    fn mutations_of_embedded_seeds_pass_the_checks() {
        let mut rng = Rng::new(1);
        for i in 0..300 {
            let mut input = EMBEDDED_SEEDS[i % EMBEDDED_SEEDS.len()].as_bytes().to_vec();
            for _ in 0..3 {
                mutate(&mut rng, &mut input);
            }
            check(&input).unwrap();
        }
    }
}
