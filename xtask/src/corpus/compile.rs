//! `cargo xtask corpus compile --arch sm_80|sm_90 [--dir DIR]`: compiles every corpus file
//! whose `.target` allows the arch with kiln (through the db's `cubin` query) and checks each
//! cubin with NVIDIA's tools.
//!
//! Per file: kiln's diagnostics (an `unsupported: ...` error fails the file closed; every
//! kernel of it counts as unsupported, grouped by reason). Per compiled file: `cuobjdump -elf`
//! must accept the cubin without a message and equal our ELF listing, and nvdisasm must read
//! every word as kiln's listing shows it: in raw-binary batches of many files' code
//! (`test_support::raw_nvdisasm`; nvdisasm's start-up made one run per file a third of the
//! stage), or `nvdisasm -c` on the cubin alone for a listing with relocated operands or
//! callees and for every file of a batch that fails (that verdict stands). A file failing any
//! of these counts its kernels as `tool_rejected` (a bug, reported by name). Registers are
//! compared with ptxas's `-v` report (`ptxas_kernels.tsv`), instruction counts with ptxas's
//! cubin (instructions before the closing `BRA`-to-self and `NOP` padding).
//!
//! Execution: every compiled kernel runs in the SASS emulator (`crates/emu`) on kiln's cubin
//! and in the PTX interpreter on the same inputs (`harness`, two seeds). `verified`
//! counts kernels whose buffers matched byte for byte, `miscompiled` those that differed
//! (each printed). Kernels with approximate math (`.approx`, `div.full`, ...), which the
//! interpreter computes exactly and the hardware with MUFU approximations, and kernels with
//! ptxas's f64 `div`/`rcp`/`sqrt` routines (which kiln reproduces; they differ from the
//! interpreter on a few edge inputs, docs/arch/emu.md), are verified when
//! kiln's cubin and ptxas's leave identical buffers in the emulator (`verified_vs_ptxas`, a
//! part of `verified`); kernels one side cannot run are listed as not executed, with reasons;
//! `trap_mismatch` counts kernels where only one side trapped on a memory access (inputs
//! outside the kernel's defined behaviour under the generic launch), each printed.
//! The emulator is functional: control codes are checked only by nvdisasm's acceptance.
//! `KILN_TIME_FILES=1` prints each file's wall time (`TIME <s> <file>`) to standard error.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::{CorpusArgs, PtxasOutcome};
use crate::oracle;
use test_support::raw_nvdisasm;

/// What executing a compiled kernel showed.
pub enum Exec {
    /// Emulator on kiln's cubin == interpreter on the PTX, for every seed.
    Verified,
    /// Approximate math (MUFU), which the interpreter computes exactly: emulator on kiln's
    /// cubin == emulator on ptxas's cubin, for every seed.
    VerifiedAgainstPtxas,
    /// A difference (the description).
    Miscompiled(String),
    /// Not executed: the emulator or interpreter cannot run it (the reason).
    Unchecked(String),
    /// Only one side trapped on a memory access (out of bounds, misaligned): the harness's
    /// generic launch (64 threads, random scalars) drove the kernel outside its defined
    /// behaviour, and the two models lay out memory differently. Listed by name; neither
    /// verified nor counted as a miscompile unless ptxas's cubin behaves differently.
    TrapMismatch(String),
}

/// A kernel's compilation: Ok(kiln registers, kiln instructions) or Err(unsupported reason).
type KernelResult = Result<(u32, usize), String>;

struct FileOutcome {
    kernels: Vec<(String, KernelResult)>,
    /// Per compiled kernel: the execution check.
    exec: HashMap<String, Exec>,
    /// Tool problems with the produced cubin.
    tool_error: Option<String>,
    /// Waiting for the raw nvdisasm batch.
    raw: Option<RawPending>,
    kiln_s: f64,
    ptxas_instr: HashMap<String, usize>,
    /// Per kernel: the static performance model's cycles of kiln's and of ptxas's code
    /// (`crates/perfmodel`), where the SM has its figures.
    kiln_cycles: HashMap<String, f64>,
    ptxas_cycles: HashMap<String, f64>,
    /// Per kernel: the registers of ptxas's cubin (EIATTR_REGCOUNT, what `ptxas -v` reports)
    /// for the same PTX and target.
    ptxas_regs: HashMap<String, u32>,
}

fn reason_of(message: &str) -> String {
    let m = message
        .split_once("`: ")
        .filter(|(k, _)| k.starts_with("kernel `"))
        .map_or(message, |(_, r)| r);
    // Group operand spellings together.
    for prefix in [
        "unsupported: operand `",
        "unsupported: address `",
        "unsupported: ld.param of `",
        "unsupported: address of `",
    ] {
        if let Some(rest) = m.strip_prefix(prefix) {
            // Special registers keep their name (`%clock`, `%lanemask_lt`, ...); other
            // names (module variables, labels) are grouped.
            let name = rest.split('`').next().unwrap_or("");
            if name.starts_with('%') && name.len() < 24 {
                return format!("{prefix}{name}`");
            }
            return format!("{}…`", prefix);
        }
    }
    if let Some(rest) = m.strip_prefix("unsupported: call of ") {
        // Library functions keep their name (`__assertfail`, `vprintf`, `malloc`); mangled
        // and register callees are grouped by the reason in parentheses.
        let (name, why) = rest.split_once(" (").unwrap_or((rest, ""));
        let why = why
            .split([',', ':'])
            .next()
            .unwrap_or("")
            .trim_end_matches(')');
        let name = if name.len() < 24 && !name.starts_with("_Z") && !name.starts_with('%') {
            name
        } else {
            "…"
        };
        return format!("unsupported: call of {name} ({why})");
    }
    if m.starts_with("unsupported: encoding of") {
        // Keep the mnemonic only.
        let op = m
            .split('`')
            .nth(1)
            .and_then(|t| {
                t.trim_start_matches('@')
                    .split_whitespace()
                    .find(|w| !w.starts_with("P") && !w.starts_with("!P"))
            })
            .unwrap_or("?");
        return format!("unsupported: encoding of {op}");
    }
    m.to_string()
}

fn nvdisasm_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = &l[l.find("/*")?..];
            (rest[2..]
                .find("*/")
                .is_some_and(|e| e >= 4 && rest[2..2 + e].chars().all(|c| c.is_ascii_hexdigit())))
            .then(|| norm(rest))
        })
        .collect()
}

/// Renames `.L_x_N` labels by order of first appearance, restarting at each function (a line
/// at address 0): nvdisasm numbers labels across the whole file, kiln per kernel.
fn canonical_labels(lines: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    lines
        .iter()
        .map(|l| {
            if l.starts_with("/*0000*/") {
                names.clear();
            }
            let mut out = String::new();
            let mut rest = l.as_str();
            while let Some(i) = rest.find(".L_x_") {
                out.push_str(&rest[..i]);
                let tail = &rest[i + 5..];
                let digits = tail.chars().take_while(char::is_ascii_digit).count();
                let name = &rest[i..i + 5 + digits];
                let k = match names.iter().position(|n| n == name) {
                    Some(k) => k,
                    None => {
                        names.push(name.to_string());
                        names.len() - 1
                    }
                };
                out.push_str(&format!("L{k}"));
                rest = &tail[digits..];
            }
            out.push_str(rest);
            out
        })
        .collect()
}

fn norm(l: &str) -> String {
    let body = l.split(';').next().unwrap_or(l);
    body.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Instructions of a ptxas kernel before its closing `BRA` to itself and the `NOP` padding.
fn ptxas_instructions(code: &[u8], arch: &str) -> Option<usize> {
    let table = sass::table(arch)?;
    let words = sass::words(code);
    let mut n = words.len();
    while n > 0
        && table
            .print(words[n - 1], (n as u64 - 1) * 16, &|_| None)
            .starts_with("NOP")
    {
        n -= 1;
    }
    // The closing branch.
    Some(n.saturating_sub(1))
}

/// What ptxas's cubin of the same file says per kernel: its registers (EIATTR_REGCOUNT, what
/// `ptxas -v` reports), its instruction count and the performance model's cycles.
fn ptxas_facts(c: &cubin::Cubin, arch: &str, out: &mut FileOutcome) {
    for f in c.functions() {
        if let (true, Some(r)) = (f.is_entry, f.registers) {
            out.ptxas_regs.insert(f.name, r);
        }
    }
    for s in &c.sections {
        let (Some(name), cubin::model::SectionData::Bytes(code)) =
            (s.name.strip_prefix(".text."), &s.data)
        else {
            continue;
        };
        if let Ok(m) = perfmodel::estimate(arch, code) {
            out.ptxas_cycles.insert(name.to_string(), m.cycles);
        }
        if let Some(n) = ptxas_instructions(code, arch) {
            out.ptxas_instr.insert(name.to_string(), n);
        }
    }
}

fn check_file(path: &Path, rel: &str, text: &str, arch: &str, dir: &Path) -> FileOutcome {
    let sm = db::Sm::parse(arch).expect("checked arch");
    let mut out = FileOutcome {
        kernels: Vec::new(),
        tool_error: None,
        exec: HashMap::new(),
        raw: None,
        kiln_s: 0.0,
        ptxas_instr: HashMap::new(),
        kiln_cycles: HashMap::new(),
        ptxas_cycles: HashMap::new(),
        ptxas_regs: HashMap::new(),
    };
    let start = Instant::now();
    let mut database = db::RootDatabase::default();
    let file = database.add_file(path, text.as_bytes());
    let mut errors: Vec<String> = db::diagnostics(&database, file)
        .iter()
        .chain(&db::target_diagnostics(&database, file, sm))
        .filter(|d| d.severity == db::Severity::Error)
        .map(|d| format!("front end: {}", d.message))
        .collect();
    let target = db::Target::new(sm);
    let kts = db::kernel_targets(&database, file, &target);
    let names: Vec<String> = kts
        .iter()
        .map(|k| k.function(&database).name(&database).clone())
        .collect();
    let mut bytes = None;
    if errors.is_empty() {
        let o = db::cubin(
            &database,
            db::FileTarget::new(&database, file, target.clone()),
        );
        errors.extend(o.diagnostics.iter().map(|d| d.message.clone()));
        bytes = o.bytes.clone();
    }
    out.kiln_s = start.elapsed().as_secs_f64();
    match &bytes {
        None => {
            // Per-kernel reasons where a kernel has one; otherwise the file's first error.
            for n in &names {
                let own = errors
                    .iter()
                    .find(|e| e.starts_with(&format!("kernel `{n}`: ")));
                let r = own.or(errors.first()).cloned().unwrap_or_default();
                out.kernels.push((n.clone(), Err(reason_of(&r))));
            }
            return out;
        }
        Some(b) => {
            let mut listing = Vec::new();
            let mut kernel_code = Vec::new();
            for (k, n) in kts.iter().zip(&names) {
                let e = db::encoded(&database, *k).as_ref().expect("compiled");
                let s = db::kernel_stats(&database, *k).as_ref().expect("compiled");
                listing.extend(e.listing.iter().map(|l| norm(l)));
                kernel_code.push(raw_nvdisasm::KernelCode {
                    code: e.code.clone(),
                    listing: e.listing.clone(),
                });
                if let Ok(m) = perfmodel::estimate(arch, &e.code) {
                    out.kiln_cycles.insert(n.clone(), m.cycles);
                }
                out.kernels
                    .push((n.clone(), Ok((s.registers, s.instructions))));
            }
            let cubin_path = dir.join(format!(
                "{:016x}.cubin",
                super::fnv1a64(&[rel.as_bytes(), arch.as_bytes()])
            ));
            if let Err(e) = std::fs::write(&cubin_path, b) {
                out.tool_error = Some(format!("writing cubin: {e}"));
                return out;
            }
            out.tool_error = cuobjdump_check(&cubin_path, b).err();
            // nvdisasm: in a raw batch after every file is compiled (`raw_nvdisasm`), unless
            // the listing holds text only the ELF gives (relocations, callees).
            if out.tool_error.is_none() {
                match raw_pending(b, kernel_code, &listing) {
                    Ok(p) => out.raw = Some(p),
                    Err(_) => out.tool_error = nvdisasm_check(&cubin_path, &listing).err(),
                }
            }
            let _ = std::fs::remove_file(&cubin_path);
            let theirs = match super::ptxas_cubin(text, arch, &[]) {
                Ok(PtxasOutcome::Ok { cubin, .. }) => std::fs::read(cubin).ok(),
                _ => None,
            };
            for n in &names {
                out.exec
                    .insert(n.clone(), execute(text, b, theirs.as_deref(), n).0);
            }
            if let Some(c) = theirs.as_deref().and_then(|t| cubin::read(t).ok()) {
                ptxas_facts(&c, arch, &mut out);
            }
        }
    }
    out
}

/// Runs a compiled kernel in the emulator and the PTX in the interpreter on the same inputs
/// (`harness`, two seeds); `ptxas` is ptxas's cubin of the same PTX, the reference when
/// the two disagree. A launch the generic inputs leave unchecked is tried again with the
/// harness's alternatives for that reason (`harness::retry`); the first that executes wins.
/// The second value is the launch that decided (the one `gpu-check` runs on a GPU).
pub fn execute(
    ptx: &str,
    cubin: &[u8],
    ptxas: Option<&[u8]>,
    kernel: &str,
) -> (Exec, harness::Config) {
    // A launch inside the kernel's declared bounds (`.reqntid`, `.maxntid`).
    let plain = harness::retry::contract_config(ptx, kernel, &harness::Config::default());
    let first = execute_with(ptx, cubin, ptxas, kernel, &plain);
    let Exec::Unchecked(reason) = &first else {
        return (first, plain);
    };
    harness::retry::alternatives(ptx, kernel, reason, &plain)
        .into_iter()
        .map(|cfg| (execute_with(ptx, cubin, ptxas, kernel, &cfg), cfg))
        .find(|(e, _)| !matches!(e, Exec::Unchecked(_)))
        .unwrap_or((first, plain))
}

fn execute_with(
    ptx: &str,
    cubin: &[u8],
    ptxas: Option<&[u8]>,
    kernel: &str,
    base: &harness::Config,
) -> Exec {
    use harness::{Config, Verdict, compare};
    // Two seeds must agree. A seed on which ptxas's own cubin differs from the interpreter is
    // not evidence either way (the generated inputs make the result depend on thread order,
    // or leave defined behaviour): up to four more seeds are tried in its place.
    let mut agreed = 0;
    let mut inconclusive: Option<String> = None;
    for seed in 1u64..=6 {
        if agreed == 2 {
            break;
        }
        let cfg = Config {
            seed,
            ..base.clone()
        };
        match compare(ptx, cubin, kernel, &cfg) {
            Verdict::Equal => agreed += 1,
            Verdict::Differ(_)
                if (super::emu::approximate_math(ptx) || super::emu::f64_routines(ptx))
                    && ptxas.is_some() =>
            {
                let theirs = ptxas.expect("checked");
                let same = [1u64, 2].into_iter().all(|seed| {
                    let cfg = Config {
                        seed,
                        ..base.clone()
                    };
                    harness::compare_cubins(ptx, cubin, theirs, kernel, &cfg) == Verdict::Equal
                });
                // Differing from both is not evidence of a miscompile: ptxas may also contract
                // `mul`+`add` without `.rn` into FFMA (PTX allows it, kiln does not), so
                // neither reference is exact for kiln's code. Listed, not verified.
                return if same {
                    Exec::VerifiedAgainstPtxas
                } else if super::emu::approximate_math(ptx) {
                    Exec::Unchecked(
                        "approximate math: differs from the interpreter (MUFU rounding) and from ptxas's cubin (ptxas contracts mul/add into FFMA)"
                            .into(),
                    )
                } else {
                    Exec::Unchecked(
                        "f64 div/rcp/sqrt: differs from the interpreter (edge inputs of ptxas's routines) and from ptxas's cubin (ptxas contracts mul/add into FFMA)"
                            .into(),
                    )
                };
            }
            Verdict::Differ(_) if super::emu::nondeterminism(ptx).is_some() => {
                // Clocks, hardware placement registers, float atomics: two correct
                // executions may differ (the emu stage lists these kernels the same way).
                return Exec::Unchecked(format!(
                    "nondeterministic: {}",
                    super::emu::nondeterminism(ptx).unwrap_or_default()
                ));
            }
            Verdict::Differ(d) => {
                // The interpreter is more permissive than the hardware (e.g. misaligned
                // accesses, which PTX leaves undefined): when ptxas's own cubin differs from
                // the interpreter in the same way, the inputs are outside defined behaviour.
                if let Some(theirs) = ptxas {
                    match compare(ptx, theirs, kernel, &cfg) {
                        v if v == Verdict::Differ(d.clone()) => {
                            return Exec::Unchecked(format!(
                                "ptxas's cubin differs from the interpreter the same way: {}",
                                d.split(" at 0x").next().unwrap_or(&d)
                            ));
                        }
                        Verdict::Differ(_) => {
                            inconclusive.get_or_insert(d);
                            continue;
                        }
                        _ => {}
                    }
                }
                let memory_trap = |side: &str| {
                    d.starts_with(&format!("{side} trapped"))
                        && ["misaligned", "outside", "out-of-bounds"]
                            .iter()
                            .any(|w| d.contains(w))
                };
                if memory_trap("emulator") || memory_trap("interpreter") {
                    return Exec::TrapMismatch(d);
                }
                return Exec::Miscompiled(d);
            }
            Verdict::Unsupported(r) => return Exec::Unchecked(format!("emu: {r}")),
            Verdict::NotComparable(r) => return Exec::Unchecked(r),
        }
    }
    match inconclusive {
        Some(d) if agreed < 2 => Exec::Unchecked(format!(
            "order-dependent with the generated inputs: ptxas's cubin differs from the interpreter too ({})",
            d.split(", first at").next().unwrap_or(&d)
        )),
        _ => Exec::Verified,
    }
}

/// A compiled file waiting for the raw nvdisasm batch: its kernels' code, and the cubin and
/// listing for the per-file check if the batch disagrees.
struct RawPending {
    target: String,
    kernels: Vec<raw_nvdisasm::KernelCode>,
    cubin: Vec<u8>,
    listing: Vec<String>,
}

/// The file's code for a raw batch, when kiln's listing is its decoder's text of the words
/// and the cubin holds no code but the kernels'. Err: why the file is checked alone.
fn raw_pending(
    bytes: &[u8],
    kernels: Vec<raw_nvdisasm::KernelCode>,
    listing: &[String],
) -> Result<RawPending, String> {
    let c = cubin::read(bytes).map_err(|e| e.to_string())?;
    let target = format!("sm_{}", c.arch_name());
    let table = sass::table(&target).ok_or_else(|| format!("no table for {target}"))?;
    let print = |w: u128, pc: u64| table.print(w, pc, &|_| None);
    raw_nvdisasm::batchable(c.sections.iter().map(|s| s.name.as_str()), &print, &kernels)?;
    Ok(RawPending {
        target,
        kernels,
        cubin: bytes.to_vec(),
        listing: listing.to_vec(),
    })
}

/// Words per raw nvdisasm batch: nvdisasm's start-up (about 0.3 s) costs as much as
/// disassembling some 20,000 words.
const BATCH_WORDS: usize = 40_000;

/// Runs the raw nvdisasm batches over the files waiting for them; a file the batch does not
/// pass is checked alone on its cubin (that verdict stands; a raw-only disagreement is
/// printed as a note).
fn run_raw_batches(outcomes: &mut [Result<FileOutcome, String>], rels: &[&str], dir: &Path) {
    let compiled = outcomes
        .iter()
        .flatten()
        .filter(|o| o.kernels.iter().any(|(_, k)| k.is_ok()))
        .count();
    let batched = outcomes
        .iter()
        .flatten()
        .filter(|o| o.raw.is_some())
        .count();
    // Batches of (file index) per target.
    let mut by_target: BTreeMap<String, Vec<Vec<usize>>> = BTreeMap::new();
    let mut words_in_last: BTreeMap<String, usize> = BTreeMap::new();
    for (i, o) in outcomes.iter().enumerate() {
        let Ok(FileOutcome { raw: Some(p), .. }) = o else {
            continue;
        };
        let n: usize = p.kernels.iter().map(|k| k.code.len() / 16).sum();
        let batches = by_target.entry(p.target.clone()).or_default();
        let w = words_in_last.entry(p.target.clone()).or_default();
        if batches.is_empty() || *w + n > BATCH_WORDS {
            batches.push(Vec::new());
            *w = 0;
        }
        batches.last_mut().expect("pushed").push(i);
        *w += n;
    }
    let jobs: Vec<(String, Vec<usize>)> = by_target
        .into_iter()
        .flat_map(|(t, bs)| bs.into_iter().map(move |b| (t.clone(), b)))
        .collect();
    println!(
        "nvdisasm: {batched} of {compiled} compiled files in {} raw batches, {} alone on their cubin (relocated operands or callees)",
        jobs.len(),
        compiled - batched
    );
    let verdicts = super::par_map("nvdisasm", &jobs, |(target, files)| {
        let Some(table) = sass::table(target) else {
            return vec![Some(format!("no table for {target}")); files.len()];
        };
        let entries: Vec<raw_nvdisasm::Entry<'_>> = files
            .iter()
            .map(|i| raw_nvdisasm::Entry {
                kernels: match &outcomes[*i] {
                    Ok(FileOutcome { raw: Some(p), .. }) => &p.kernels,
                    _ => unreachable!("batched files wait for the batch"),
                },
            })
            .collect();
        let name = format!(
            "batch-{}-{:016x}",
            target,
            super::fnv1a64(&[&files[0].to_le_bytes()])
        );
        let nvdisasm = match oracle::tool("nvdisasm") {
            Ok(t) => t,
            Err(e) => return vec![Some(e); files.len()],
        };
        let print = |w: u128, pc: u64| table.print(w, pc, &|_| None);
        raw_nvdisasm::check_batch(&nvdisasm, &print, target, &entries, dir, &name)
    });
    for ((_, files), vs) in jobs.iter().zip(verdicts) {
        for (i, v) in files.iter().zip(vs) {
            let Some(why) = v else { continue };
            let Ok(o) = &mut outcomes[*i] else { continue };
            let p = o.raw.as_ref().expect("batched");
            let path = dir.join(format!(
                "{:016x}.cubin",
                super::fnv1a64(&[rels[*i].as_bytes(), p.target.as_bytes()])
            ));
            let alone = std::fs::write(&path, &p.cubin)
                .map_err(|e| format!("writing cubin: {e}"))
                .and_then(|()| nvdisasm_check(&path, &p.listing));
            let _ = std::fs::remove_file(&path);
            match alone {
                Ok(()) => println!(
                    "NOTE {}: the raw nvdisasm batch disagreed, the file alone passes: {why}",
                    rels[*i]
                ),
                Err(e) => o.tool_error = Some(e),
            }
        }
    }
    for o in outcomes.iter_mut().flatten() {
        o.raw = None;
    }
}

fn nvdisasm_check(cubin_path: &Path, listing: &[String]) -> Result<(), String> {
    let nv = Command::new(oracle::tool("nvdisasm")?)
        .arg("-c")
        .arg(cubin_path)
        .output()
        .map_err(|e| e.to_string())?;
    let err = String::from_utf8_lossy(&nv.stderr);
    if !nv.status.success() || !err.trim().is_empty() {
        return Err(format!("nvdisasm: {}", err.trim()));
    }
    let got = canonical_labels(&nvdisasm_lines(&String::from_utf8_lossy(&nv.stdout)));
    let listing = canonical_labels(listing);
    if got != listing {
        let at = got
            .iter()
            .zip(&listing)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(listing.len()));
        return Err(format!(
            "nvdisasm text differs at line {at}: nvdisasm `{}` kiln `{}`",
            got.get(at).map_or("", String::as_str),
            listing.get(at).map_or("", String::as_str)
        ));
    }
    Ok(())
}

fn cuobjdump_check(cubin_path: &Path, bytes: &[u8]) -> Result<(), String> {
    let cu = Command::new(oracle::tool("cuobjdump")?)
        .arg("-elf")
        .arg(cubin_path)
        .output()
        .map_err(|e| e.to_string())?;
    if !cu.status.success() {
        return Err(format!(
            "cuobjdump: {}",
            String::from_utf8_lossy(&cu.stderr).trim()
        ));
    }
    let model = cubin::read(bytes).map_err(|e| e.to_string())?;
    cubin::listing::compare_with_cuobjdump(&model, &String::from_utf8_lossy(&cu.stdout))
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub fn run(args: &CorpusArgs) -> Result<(), String> {
    let arch = args.require_arch("compile")?.to_string();
    if !db::Sm::parse(&arch).is_some_and(db::codegen_supported) {
        return Err(format!(
            "compile: code generation supports {}, not {arch}",
            db::codegen_sms()
        ));
    }
    oracle::tool("nvdisasm")?;
    // `-v`: one line per compiled kernel that was not executed, with the reason.
    let verbose = args.rest.iter().any(|a| a == "-v" || a == "--verbose");
    // `--regs`: one line per compiled kernel that uses more registers than ptxas's cubin.
    let list_regs = args.rest.iter().any(|a| a == "--regs");
    // `--cycles`: one line per compiled kernel with both performance-model estimates.
    let list_cycles = args.rest.iter().any(|a| a == "--cycles");
    super::quiet_panics();
    // ptxas's per-file compile times.
    let mut ptxas_ms: HashMap<String, f64> = HashMap::new();
    if let Ok(t) = std::fs::read_to_string(args.dir.join("ptxas_results.tsv")) {
        for l in t.lines().skip(1) {
            let c: Vec<&str> = l.split('\t').collect();
            if c.len() > 13
                && c[2] == arch
                && c[4] == "OK"
                && let Ok(ms) = c[13].parse::<f64>()
            {
                ptxas_ms.insert(c[0].to_string(), ms);
            }
        }
    }
    let files = args.files_for_arch(&arch);
    let tmp = super::cache_dir("kiln-compile");
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let mut results = super::par_map("compile", &files, |(p, rel, text)| {
        let t = Instant::now();
        let r = super::catch(|| check_file(p, rel, text, &arch, &tmp));
        if std::env::var_os("KILN_TIME_FILES").is_some() {
            eprintln!("TIME {:.2} {rel}", t.elapsed().as_secs_f64());
        }
        r
    });
    let rels: Vec<&str> = files.iter().map(|(_, rel, _)| rel.as_str()).collect();
    run_raw_batches(&mut results, &rels, &tmp);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let (mut kernels, mut compiled, mut unsupported, mut panics, mut rejected) = (0, 0, 0, 0, 0);
    let (mut regs_le, mut regs_ratio, mut instr_ratio) = (0usize, Vec::new(), Vec::new());
    let mut cycles_ratio = Vec::new();
    let (mut verified, mut miscompiled, mut trap_mismatch) = (0usize, 0usize, 0usize);
    // Of `verified`: approximate-math kernels checked against ptxas's cubin.
    let mut verified_vs_ptxas = 0usize;
    let mut unchecked: BTreeMap<String, usize> = BTreeMap::new();
    let (mut kiln_s, mut ptxas_s) = (0.0, 0.0);
    for ((_, rel, _), r) in files.iter().zip(results) {
        let out = match r {
            Ok(o) => o,
            Err(e) => {
                panics += 1;
                println!("PANIC {rel}: {e}");
                continue;
            }
        };
        kiln_s += out.kiln_s;
        ptxas_s += ptxas_ms.get(rel).copied().unwrap_or(0.0) / 1000.0;
        for (name, k) in &out.kernels {
            kernels += 1;
            match k {
                Err(reason) => {
                    unsupported += 1;
                    *reasons.entry(reason.clone()).or_default() += 1;
                }
                Ok(_) if out.tool_error.is_some() => {
                    rejected += 1;
                    println!(
                        "TOOL-REJECTED {rel} {name}: {}",
                        out.tool_error.as_deref().unwrap_or("")
                    );
                }
                Ok((regs, instrs)) => {
                    compiled += 1;
                    match out.exec.get(name) {
                        Some(Exec::Verified) => verified += 1,
                        Some(Exec::VerifiedAgainstPtxas) => {
                            verified += 1;
                            verified_vs_ptxas += 1;
                        }
                        Some(Exec::Miscompiled(d)) => {
                            miscompiled += 1;
                            println!("MISCOMPILED {rel} {name}: {d}");
                        }
                        Some(Exec::Unchecked(r)) => {
                            if verbose {
                                println!("UNCHECKED {rel} {name}: {r}");
                            }
                            *unchecked.entry(r.clone()).or_default() += 1;
                        }
                        Some(Exec::TrapMismatch(d)) => {
                            trap_mismatch += 1;
                            println!("TRAP-MISMATCH {rel} {name}: {d}");
                        }
                        None => {}
                    }
                    if let Some(p) = out.ptxas_regs.get(name) {
                        if regs <= p {
                            regs_le += 1;
                        } else if list_regs {
                            println!("REGS-ABOVE {rel} {name} kiln={regs} ptxas={p}");
                        }
                        regs_ratio.push(f64::from(*regs) / f64::from((*p).max(1)));
                    }
                    if let Some(p) = out.ptxas_instr.get(name) {
                        instr_ratio.push(*instrs as f64 / (*p).max(1) as f64);
                    }
                    if let (Some(k), Some(p)) =
                        (out.kiln_cycles.get(name), out.ptxas_cycles.get(name))
                        && *p > 0.0
                    {
                        if list_cycles {
                            println!(
                                "CYCLES {rel} {name} kiln={k:.0} ptxas={p:.0} ratio={:.3}",
                                k / p
                            );
                        }
                        cycles_ratio.push(k / p);
                    }
                }
            }
        }
    }
    let mut by_count: Vec<(&String, &usize)> = reasons.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    println!("unsupported kernels by reason:");
    for (r, n) in by_count {
        println!("{n:>7}  {r}");
    }
    println!("compiled kernels not executed, by reason:");
    for (r, n) in &unchecked {
        println!("{n:>7}  {r}");
    }
    println!("tool_rejected={rejected} (cubins nvdisasm/cuobjdump refused or listed differently)");
    // Of the compiled kernels not verified: launches the harness or the sanitizer found outside
    // the kernel's contract or results PTX leaves open (`not_comparable`), and kernels a model
    // cannot run (`unexecuted`: the emulator or the interpreter lacks a form).
    let unexecuted: usize = unchecked
        .iter()
        .filter(|(r, _)| r.starts_with("emu: ") || r.starts_with("interp"))
        .map(|(_, n)| n)
        .sum();
    let not_comparable = unchecked.values().sum::<usize>() - unexecuted;
    println!(
        "RESULT compile {arch} kernels={kernels} compiled={compiled} verified={verified} verified_vs_ptxas={verified_vs_ptxas} miscompiled={miscompiled} trap_mismatch={trap_mismatch} not_comparable={not_comparable} unexecuted={unexecuted} unsupported={unsupported} panics={panics} regs_le_ptxas={regs_le} regs_ratio_median={:.2} instr_ratio_median={:.2} cycles_ratio_median={} kiln_s={kiln_s:.2} ptxas_s={ptxas_s:.2}",
        median(regs_ratio),
        median(instr_ratio),
        // Only SMs with the model's latency figures (`crates/perfmodel/data/latency.tsv`).
        if cycles_ratio.is_empty() {
            "n/a".to_string()
        } else {
            format!("{:.2}", median(cycles_ratio))
        }
    );
    Ok(())
}
