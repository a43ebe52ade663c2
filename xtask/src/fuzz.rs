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
//! to `target/fuzz-failures/` and the command exits non-zero.
//!
//! The random generator is seeded from `--seed` (default fixed), so a run is reproducible up to
//! how many inputs fit in the time budget. The run stops starting new inputs when `--seconds`
//! (default 30) have passed; the last line is
//! `RESULT fuzz parse inputs=N failures=N seconds=X seed=S`.

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

/// A small, fast, deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
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
            // Deep nesting of one bracket or prefix operator, sometimes closed.
            const OPEN: &[(&str, &str)] = &[
                ("{", "}"),
                ("(", ")"),
                ("[", "]"),
                ("-", ""),
                ("!", ""),
                ("{{", "}}"),
            ];
            let (open, close) = OPEN[rng.below(OPEN.len())];
            let n = 1 + rng.below(20_000);
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
    let _ = std::fs::create_dir_all(&dir);
    let hash = corpus::fnv1a64(&[input]);
    let path = dir.join(format!("{kind}-{hash:016x}.ptx"));
    if let Err(e) = std::fs::write(&path, input) {
        eprintln!("fuzz: could not write {}: {e}", path.display());
    }
    path
}

pub fn run(args: &[String]) -> Result<(), String> {
    let Some((target, rest)) = args.split_first() else {
        return Err("usage: cargo xtask fuzz parse [--seconds N] [--seed S]".into());
    };
    if target != "parse" {
        return Err(format!("unknown fuzz target `{target}` (available: parse)"));
    }
    let mut seconds = 30u64;
    let mut seed = 0x6b69_6c6e_u64; // "kiln"
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a non-negative integer"))
        };
        match a.as_str() {
            "--seconds" => seconds = value("--seconds")?,
            "--seed" => seed = value("--seed")?,
            other => return Err(format!("fuzz parse: unknown option `{other}`")),
        }
    }
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
        .stack_size(16 << 20)
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

    let mut count = 0u64;
    let mut last_report = Instant::now();
    while start.elapsed() < budget {
        let base = &seeds[rng.below(seeds.len())];
        let mut input = window(&mut rng, base);
        // Mostly a few mutations; sometimes none (the seed itself must parse cleanly too).
        let n = rng.below(5);
        for _ in 0..n {
            mutate(&mut rng, &mut input);
        }
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
        if let Err(msg) = outcome {
            let kind = if msg.starts_with("hang") {
                "hang"
            } else if msg.starts_with("panic") {
                "panic"
            } else {
                "invariant"
            };
            let path = save_failure(kind, &input);
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
    println!(
        "RESULT fuzz parse inputs={count} failures=0 seconds={:.1} seed={seed}",
        start.elapsed().as_secs_f64()
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
