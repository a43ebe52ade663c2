//! `cargo xtask corpus <stage> [--dir DIR] [--arch sm_XX] [--shard K/N]`: the conformance
//! harness.
//!
//! DIR defaults to `../shared/corpus` beside the workspace (or `$KILN_CORPUS`); any folder with
//! the same layout works: `ptx/**.ptx` (files ptxas accepts), `rejected/**.ptx` (files it
//! rejects), `ptxas_results.tsv`, `ptxas_kernels.tsv`, `zluda_run_tests.json`.
//!
//! `--shard K/N` (1 <= K <= N) runs a stage on the K-th of N deterministic shards of the
//! corpus files: a file belongs to shard `fnv1a64(its path relative to DIR, '/'-separated) % N
//! + 1`, so the selection depends on neither the file order, the machine nor the other files,
//! and the N shards partition the corpus. CI runs its slow stages on one shard; without the
//! flag every stage sees every file. File discovery applies it ([`CorpusArgs::ptx_files`],
//! [`CorpusArgs::files_for_arch`]), so every stage that walks the corpus honours it.
//!
//! Each stage lives in its own module and ends its output with one `RESULT <stage> ...` line.
//! This module holds what the stages share: argument parsing, file discovery, the `.target`
//! scan, panic isolation, a parallel map, progress output, and compiling with ptxas through a
//! content-addressed cubin cache (shared by every stage that needs ptxas's output).

#![allow(dead_code)] // helpers are used by a varying subset of stages

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::oracle;

pub mod compile;
mod cubin;
pub mod disasm;
mod emu;
pub mod hazard;
mod hwcheck;
mod interp;
pub mod json;
pub mod parse;
pub mod sema;

const USAGE: &str =
    "usage: cargo xtask corpus <stage> [--dir DIR] [--arch sm_XX] [--shard K/N] [stage options]";

/// Options common to every stage. Stage-specific flags stay in `rest`.
#[derive(Debug, Clone)]
pub struct CorpusArgs {
    pub dir: PathBuf,
    pub arch: Option<String>,
    /// `--shard K/N`: only the files of that shard (see the module documentation).
    pub shard: Option<Shard>,
    pub rest: Vec<String>,
}

/// One of `n` deterministic shards of the corpus files, `k` in `1..=n` (`--shard K/N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub k: u64,
    pub n: u64,
}

impl Shard {
    /// Parses `K/N` with `1 <= K <= N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard wants K/N with 1 <= K <= N, not `{s}`");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u64, u64) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// Whether the file at `rel` (relative to the corpus folder) belongs to this shard: by a
    /// stable hash of the path's components joined with `/`, never by order or at random.
    pub fn contains(&self, rel: &Path) -> bool {
        let key: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        self.contains_key(&key.join("/"))
    }

    /// Whether an item named `key` (a `/`-separated relative path, an `isa-forms` instance
    /// key, ...) belongs to this shard.
    pub fn contains_key(&self, key: &str) -> bool {
        fnv1a64(&[key.as_bytes()]) % self.n + 1 == self.k
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let Some((stage, rest)) = args.split_first() else {
        return Err(USAGE.into());
    };
    // `hwcheck`'s --dir names the hardware runs, not the corpus.
    if stage == "hwcheck" {
        return hwcheck::run(rest);
    }
    let args = CorpusArgs::parse_stage(rest)?;
    match stage.as_str() {
        "interp" => interp::run(&args),
        "sema" => sema::run(&args),
        "cubin" => cubin::run(&args),
        "parse" => parse::run(&args),
        "disasm" => disasm::run(&args),
        "hazard" => hazard::run(&args),
        "compile" => compile::run(&args),
        "emu" => emu::run(&args),
        other => Err(format!("unknown corpus stage `{other}`\n{USAGE}")),
    }
}

impl CorpusArgs {
    /// The options of a corpus stage (`cargo xtask corpus <stage> ...`): `--shard` allowed.
    pub fn parse_stage(args: &[String]) -> Result<CorpusArgs, String> {
        Self::parse_with(args, true)
    }

    /// The same options for the commands that learn tables from the whole corpus
    /// (`hazard-learn`, `sass-probe`): `--shard` is refused there, since a table learned from
    /// part of the corpus would be a different table.
    pub fn parse(args: &[String]) -> Result<CorpusArgs, String> {
        Self::parse_with(args, false)
    }

    fn parse_with(args: &[String], allow_shard: bool) -> Result<CorpusArgs, String> {
        let mut dir = None;
        let mut arch = None;
        let mut shard = None;
        let mut rest = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--dir" => dir = Some(PathBuf::from(it.next().ok_or("--dir needs a value")?)),
                "--arch" => arch = Some(it.next().ok_or("--arch needs a value")?.clone()),
                "--shard" => {
                    shard = Some(Shard::parse(it.next().ok_or("--shard needs K/N")?)?);
                }
                _ => {
                    if let Some(v) = a.strip_prefix("--dir=") {
                        dir = Some(PathBuf::from(v));
                    } else if let Some(v) = a.strip_prefix("--arch=") {
                        arch = Some(v.to_string());
                    } else if let Some(v) = a.strip_prefix("--shard=") {
                        shard = Some(Shard::parse(v)?);
                    } else {
                        rest.push(a.clone());
                    }
                }
            }
        }
        if let (Some(s), false) = (shard, allow_shard) {
            return Err(format!(
                "--shard {s}: only corpus stages take a shard (this command reads every file)"
            ));
        }
        let dir = match dir {
            Some(d) => d,
            None => default_dir().ok_or_else(|| {
                "no corpus: ../shared/corpus beside the workspace is absent and $KILN_CORPUS is \
                 unset (pass --dir DIR)"
                    .to_string()
            })?,
        };
        if !dir.is_dir() {
            return Err(format!("corpus folder {} does not exist", dir.display()));
        }
        Ok(CorpusArgs {
            dir,
            arch,
            shard,
            rest,
        })
    }

    /// Every `.ptx` file of the corpus folder ([`ptx_files`]), sorted, relative to it: those of
    /// the `--shard` when one is given. Prints the shard's size first, so that a log says which
    /// part of the corpus a stage saw.
    pub fn ptx_files(&self) -> Vec<PathBuf> {
        let all = ptx_files(&self.dir);
        let Some(shard) = self.shard else {
            return all;
        };
        let total = all.len();
        let mine: Vec<PathBuf> = all.into_iter().filter(|f| shard.contains(f)).collect();
        println!(
            "shard {shard}: {} of {total} files under {} (cargo xtask corpus without --shard runs all)",
            mine.len(),
            self.dir.display()
        );
        mine
    }

    /// [`files_for_arch`] over [`CorpusArgs::ptx_files`]: the accepted files compiled for
    /// `arch`, restricted to the `--shard` when one is given.
    pub fn files_for_arch(&self, arch: &str) -> Vec<(PathBuf, String, String)> {
        select_for_arch(&self.dir, self.ptx_files(), arch)
    }

    /// The `--arch` value, or an error naming the stage that needs it.
    pub fn require_arch(&self, stage: &str) -> Result<&str, String> {
        self.arch
            .as_deref()
            .ok_or_else(|| format!("corpus {stage} needs --arch sm_XX"))
    }
}

/// The workspace root (the folder holding the top-level Cargo.toml).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// `$KILN_CORPUS`, else `../shared/corpus` beside the workspace, if it exists.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("KILN_CORPUS") {
        return Some(PathBuf::from(d));
    }
    let d = workspace_root().join("../shared/corpus");
    d.is_dir().then_some(d)
}

/// Where stages keep caches (cubins compiled by ptxas, ...): `target/kiln-cache/<what>`.
pub fn cache_dir(what: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    target.join("kiln-cache").join(what)
}

/// Every `.ptx` file under `dir`, sorted, as paths relative to `dir`. Corpus stages call
/// [`CorpusArgs::ptx_files`] instead, which applies `--shard`.
pub fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p.strip_prefix(dir).unwrap_or(&p).to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The group a corpus file is counted under: its first two path components
/// (`ptx/triton`, `rejected/zluda`).
pub fn group_of(rel: &Path) -> String {
    let parts: Vec<_> = rel
        .components()
        .take(2)
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    if parts.len() == 2 && rel.components().count() > 2 {
        parts.join("/")
    } else {
        parts[0].to_string()
    }
}

/// Whether a corpus file is one ptxas accepts (it lives under `ptx/`).
pub fn is_accepted(rel: &Path) -> bool {
    rel.components()
        .next()
        .is_some_and(|c| c.as_os_str() == "ptx")
}

/// The targets named by the first `.target` directive of a PTX text (a fast textual scan that
/// skips comments; the parser is the authority, this is for choosing ptxas flags).
pub fn scan_targets(text: &str) -> Vec<String> {
    let mut in_block = false;
    for line in text.lines() {
        let mut l = line;
        if in_block {
            match l.find("*/") {
                Some(i) => {
                    l = &l[i + 2..];
                    in_block = false;
                }
                None => continue,
            }
        }
        if let Some(i) = l.find("/*") {
            if !l[i..].contains("*/") {
                in_block = true;
            }
            l = &l[..i];
        }
        let l = l.split("//").next().unwrap_or("").trim();
        if let Some(rest) = l.strip_prefix(".target") {
            return rest
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
        }
    }
    Vec::new()
}

/// A parsed SM name: `sm_90a` -> (90, Some('a')).
pub fn parse_sm(name: &str) -> Option<(u32, Option<char>)> {
    let rest = name.strip_prefix("sm_")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let num = digits.parse().ok()?;
    let suffix = rest[digits.len()..].chars().next();
    match suffix {
        None | Some('a') | Some('f') => Some((num, suffix)),
        _ => None,
    }
}

/// The `-arch` value with which ptxas compiles a file for the requested architecture family,
/// or `None` when the file's `.target` does not allow it. PTX for `sm_XY` compiles for every
/// later SM; PTX for an arch-specific target (`sm_90a`, `sm_100a`) only for that exact target,
/// and a family-specific one (`sm_100f`) for that family's members with the same major number.
pub fn arch_for_file(targets: &[String], arch: &str) -> Option<String> {
    let (want, want_suffix) = parse_sm(arch)?;
    let sm = targets.iter().find_map(|t| parse_sm(t))?;
    match sm {
        (n, None) if n <= want => Some(arch.to_string()),
        (n, Some('a')) if n == want && want_suffix.is_none_or(|s| s == 'a') => {
            Some(format!("sm_{n}a"))
        }
        (n, Some('f')) if n / 10 == want / 10 && n <= want => Some(format!("sm_{want}f")),
        _ => None,
    }
}

/// Runs `f`, turning a panic into `Err(message)`. Stages use it per file so that one panic is
/// counted and the run goes on. Call [`quiet_panics`] once first so panics don't spam stderr.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|e| {
        if let Some(s) = e.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = e.downcast_ref::<String>() {
            s.clone()
        } else {
            "panic with a non-string payload".to_string()
        }
    })
}

/// Replaces the panic hook with one that prints a single line (location and message).
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let loc = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("panic at {loc}");
    }));
}

/// Maps `f` over `items` on all cores, keeping the input order. Shows progress on stderr
/// (`label`) when the run is long.
pub fn par_map<T: Sync, R: Send>(label: &str, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(n.max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..n).map(|_| None).collect());
    let start = Instant::now();
    let last_report = Mutex::new(Instant::now());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = f(&items[i]);
                    results.lock().unwrap()[i] = Some(r);
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    let mut last = last_report.lock().unwrap();
                    if last.elapsed().as_secs() >= 5 {
                        *last = Instant::now();
                        eprintln!("{label}: {d}/{n} ({:.0} s)", start.elapsed().as_secs_f64());
                        let _ = std::io::stderr().flush();
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item was mapped"))
        .collect()
}

/// FNV-1a, 64-bit: a stable content hash for cache keys (not for security).
pub fn fnv1a64(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separate parts so that ("ab","c") and ("a","bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Outcome of compiling one PTX text with ptxas.
#[derive(Debug, Clone)]
pub enum PtxasOutcome {
    /// The cubin (path in the cache) and ptxas's stderr (warnings, `-v` report).
    Ok { cubin: PathBuf, log: String },
    /// ptxas rejected the input (its message), or crashed (the message then starts with
    /// [`CRASH_PREFIX`]; [`crash_signal`] tells).
    Rejected(String),
}

/// How a ptxas run killed by a signal is reported in [`PtxasOutcome::Rejected`] and in
/// `rejected.tsv`: `ptxas crashed (signal N)`.
pub const CRASH_PREFIX: &str = "ptxas crashed (signal ";

/// The signal number when a ptxas message says ptxas crashed rather than rejected the input.
/// Such a file has no verdict from ptxas: stages count it apart, never as accepted or rejected.
pub fn crash_signal(ptxas_message: &str) -> Option<i32> {
    ptxas_message
        .strip_prefix(CRASH_PREFIX)?
        .split(')')
        .next()?
        .parse()
        .ok()
}

/// Compiles `ptx_text` with ptxas 13.0.88 for `arch` (a full `-arch` value such as `sm_90a`)
/// with `extra` flags (e.g. `-lineinfo`, `-c`), caching the result by the hash of
/// (ptxas version, arch, flags, text) under `target/kiln-cache/cubins`. Errors are I/O or
/// tool-launch failures; a ptxas rejection is an `Ok(PtxasOutcome::Rejected)`.
pub fn ptxas_cubin(ptx_text: &str, arch: &str, extra: &[&str]) -> Result<PtxasOutcome, String> {
    let dir = cache_dir("cubins");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let flags = extra.join("\u{1}");
    let key = fnv1a64(&[
        oracle::PTXAS_VERSION.as_bytes(),
        arch.as_bytes(),
        flags.as_bytes(),
        ptx_text.as_bytes(),
    ]);
    let cubin = dir.join(format!("{key:016x}.cubin"));
    let log = dir.join(format!("{key:016x}.log"));
    let err = dir.join(format!("{key:016x}.err"));
    if cubin.is_file() && log.is_file() {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        return Ok(PtxasOutcome::Ok { cubin, log });
    }
    if err.is_file() {
        return Ok(PtxasOutcome::Rejected(
            std::fs::read_to_string(&err).unwrap_or_default(),
        ));
    }
    let ptxas = oracle::tool("ptxas")?;
    // Unique temporaries so that parallel workers never collide (threads of one process
    // share the pid, and identical corpus texts share the key).
    static TMP_SEQ: AtomicUsize = AtomicUsize::new(0);
    let uniq = format!(
        "{}-{}",
        std::process::id(),
        TMP_SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let tmp_ptx = dir.join(format!("{key:016x}.{uniq}.ptx.tmp"));
    let tmp_out = dir.join(format!("{key:016x}.{uniq}.cubin.tmp"));
    std::fs::write(&tmp_ptx, ptx_text)
        .map_err(|e| format!("writing {}: {e}", tmp_ptx.display()))?;
    let out = Command::new(&ptxas)
        .arg(format!("-arch={arch}"))
        .args(extra)
        .arg(&tmp_ptx)
        .arg("-o")
        .arg(&tmp_out)
        .output()
        .map_err(|e| format!("running ptxas: {e}"))?;
    let _ = std::fs::remove_file(&tmp_ptx);
    let stderr =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    if out.status.success() {
        std::fs::write(&log, &stderr).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp_out, &cubin).map_err(|e| format!("caching cubin: {e}"))?;
        Ok(PtxasOutcome::Ok { cubin, log: stderr })
    } else {
        let _ = std::fs::remove_file(&tmp_out);
        // A ptxas killed by a signal gave no verdict: say so (see [`crash_signal`]).
        let stderr = match std::os::unix::process::ExitStatusExt::signal(&out.status) {
            Some(sig) => format!("{CRASH_PREFIX}{sig}){stderr}"),
            None => stderr,
        };
        std::fs::write(&err, &stderr).map_err(|e| e.to_string())?;
        Ok(PtxasOutcome::Rejected(stderr))
    }
}

/// The accepted corpus files (under `dir`) that the corpus stages compile for `arch`: (path,
/// path relative to `dir`, text). The selection every arch-specific stage uses.
pub fn files_for_arch(dir: &Path, arch: &str) -> Vec<(PathBuf, String, String)> {
    select_for_arch(dir, ptx_files(dir), arch)
}

/// The files of `files` (relative to `dir`) that [`files_for_arch`] keeps.
fn select_for_arch(dir: &Path, files: Vec<PathBuf>, arch: &str) -> Vec<(PathBuf, String, String)> {
    files
        .into_iter()
        .filter_map(|rel| {
            if !is_accepted(&rel) {
                return None;
            }
            let p = dir.join(&rel);
            let text = read_text(&p).ok()?;
            let a = arch_for_file(&scan_targets(&text), arch)?;
            (a == arch).then(|| (p.clone(), rel.to_string_lossy().into_owned(), text))
        })
        .collect()
}

/// Reads a corpus file as text (lossily: corpus files are ASCII, but a stage must not crash).
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Per-group counters printed by stages above their RESULT line.
#[derive(Default, Debug)]
pub struct GroupCounts {
    rows: std::collections::BTreeMap<String, Vec<usize>>,
}

impl GroupCounts {
    /// Adds `values` (one per column) to `group`'s row.
    pub fn add(&mut self, group: &str, values: &[usize]) {
        let row = self
            .rows
            .entry(group.to_string())
            .or_insert_with(|| vec![0; values.len()]);
        for (r, v) in row.iter_mut().zip(values) {
            *r += v;
        }
    }

    /// Prints an aligned table with the given column names.
    pub fn print(&self, columns: &[&str]) {
        let w = self.rows.keys().map(String::len).max().unwrap_or(5).max(5);
        print!("{:<w$}", "group");
        for c in columns {
            print!(" {c:>10}");
        }
        println!();
        for (g, row) in &self.rows {
            print!("{g:<w$}");
            for v in row {
                print!(" {v:>10}");
            }
            println!();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_rules() {
        let t = |s: &str| vec![s.to_string()];
        assert_eq!(
            arch_for_file(&t("sm_75"), "sm_90").as_deref(),
            Some("sm_90")
        );
        assert_eq!(arch_for_file(&t("sm_90"), "sm_80"), None);
        assert_eq!(
            arch_for_file(&t("sm_90a"), "sm_90").as_deref(),
            Some("sm_90a")
        );
        assert_eq!(arch_for_file(&t("sm_90a"), "sm_100"), None);
        assert_eq!(
            arch_for_file(&t("sm_100f"), "sm_103").as_deref(),
            Some("sm_103f")
        );
        assert_eq!(arch_for_file(&t("sm_100f"), "sm_120"), None);
    }

    #[test]
    fn target_scan_skips_comments() {
        let text =
            "// .target sm_20\n/* .target sm_30\n */ .version 8.0\n.target sm_80, debug // x\n";
        assert_eq!(
            scan_targets(text),
            vec!["sm_80".to_string(), "debug".to_string()]
        );
    }

    #[test]
    fn shard_parse() {
        assert_eq!(Shard::parse("1/4"), Ok(Shard { k: 1, n: 4 }));
        assert_eq!(Shard::parse("4/4"), Ok(Shard { k: 4, n: 4 }));
        for bad in ["0/4", "5/4", "1/0", "4", "a/4", "1/b", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        let args: Vec<String> = ["--shard", "2/3", "--no-perturb"]
            .map(String::from)
            .to_vec();
        let dir = std::env::temp_dir();
        let mut with_dir = args;
        with_dir.extend(["--dir".to_string(), dir.display().to_string()]);
        let a = CorpusArgs::parse_stage(&with_dir).unwrap();
        assert_eq!(a.shard, Some(Shard { k: 2, n: 3 }));
        assert_eq!(a.rest, vec!["--no-perturb".to_string()]);
        // Commands that learn tables from the corpus refuse a shard.
        assert!(CorpusArgs::parse(&with_dir).is_err());
    }

    #[test]
    fn shards_partition_the_files_stably() {
        let files: Vec<PathBuf> = (0..400)
            .map(|i| PathBuf::from(format!("ptx/group{}/file{i}.ptx", i % 7)))
            .collect();
        for n in 1..=5 {
            let mut seen = vec![0; files.len()];
            for k in 1..=n {
                let s = Shard { k, n };
                let mine = files.iter().filter(|f| s.contains(f)).count();
                // Roughly even: each shard within 30% of its share.
                let share = files.len() as f64 / n as f64;
                assert!((mine as f64 - share).abs() <= 0.3 * share, "{s}: {mine}");
                for (i, f) in files.iter().enumerate() {
                    seen[i] += usize::from(s.contains(f));
                }
            }
            assert!(
                seen.iter().all(|&c| c == 1),
                "every file in exactly one of {n}"
            );
        }
        // The selection is a function of the relative path alone: fixed across runs and
        // machines, so that a floor measured on a shard stays the floor of that shard.
        // Pinned: if this changes, every floor in .ci/run measured on a shard must be measured
        // again.
        let s = |k| Shard { k, n: 3 };
        let p: PathBuf = ["ptx", "triton", "a.ptx"].iter().collect();
        assert!(s(2).contains(&p));
        assert!(!s(1).contains(&p) && !s(3).contains(&p));
    }

    #[test]
    fn groups() {
        assert_eq!(group_of(Path::new("ptx/triton/a.ptx")), "ptx/triton");
        assert!(is_accepted(Path::new("ptx/triton/a.ptx")));
        assert!(!is_accepted(Path::new("rejected/zluda/a.ptx")));
    }
}
