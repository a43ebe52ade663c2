//! `cargo xtask corpus emu --arch sm_XX [-v] [--limit N]`: for every kernel of every accepted
//! corpus file the arch allows, runs the PTX in the reference interpreter and ptxas's cubin in
//! the SASS emulator (`crates/emu`) with the same generated inputs (`harness`, documented
//! there) and compares every buffer byte and the trap status. Then runs every ZLUDA run test
//! (`zluda_run_tests.json`, expected bytes known) through the emulator.
//!
//! Output: differing kernels (always), unsupported kernels grouped by reason, kernels that are
//! not comparable (the interpreter does not support them, step limit) grouped by reason,
//! kernels whose result PTX does not define (undefined behaviour the harness recognises) and
//! legitimately nondeterministic kernels that differ, each with its reason, then
//! `RESULT emu <arch> kernels=<n> equal=<n> differ=<n> unsupported=<n> hazards=<n> panics=<n>
//! nondeterministic=<n> undefined=<n> ptxas_deviations=<n>`. `unsupported` counts every kernel that was not
//! compared for a reason of ours (the emulator, the interpreter or the harness cannot run or
//! compare it); `nondeterministic` the kernels that differ in a way two correct runs may
//! (clocks, float atomics, approximate math); `undefined` the kernels that, with every launch
//! the harness tries, do something PTX leaves undefined (read lanes outside a shuffle's member
//! mask, index a shared array out of its bounds); `ptxas_deviations` the kernels that differ
//! because ptxas's code does not compute what the PTX ISA defines (detected from the PTX, each
//! listed with the construct). `kernels` is the sum of the six classes.

use std::collections::BTreeMap;
use std::path::Path;

use harness::{Config, Verdict};

use super::json::{self, Json};
use super::{CorpusArgs, PtxasOutcome, catch, par_map, quiet_panics, read_text};

#[derive(Debug)]
enum KernelOutcome {
    Verdict(Verdict),
    /// Differed (the difference), and ptxas's cubin of the same PTX with `--fmad=false` is
    /// equal: ptxas contracted an `add`/`sub` of a `mul` into one FFMA/DFMA, which PTX
    /// allows for those without a rounding modifier, and the interpreter rounds twice.
    EqualWithoutContraction(String),
    /// Differed (the difference), and the kernel uses a PTX construct that ptxas 13.0.88
    /// compiles against the PTX ISA (`interp::Program::float_memory_through_wider_registers`):
    /// the emulator ran ptxas's code as written; the interpreter follows the ISA.
    PtxasDeviation(String, &'static str),
    Panic(String),
}

struct FileResult {
    rel: String,
    /// Hazards the checker (`crates/hazard`) reports on ptxas's code, and checker errors.
    hazards: Vec<String>,
    kernels: Vec<(String, KernelOutcome, Option<&'static str>)>,
    error: Option<String>,
}

/// The PTX's lines with leading blanks and a guard (`@%p `, `@!%p `) removed, so that an
/// instruction line starts with its opcode.
fn instruction_lines(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().map(|l| {
        let l = l.trim_start();
        l.strip_prefix('@')
            .map_or(l, |r| r.split_once(' ').map_or(r, |x| x.1))
    })
}

/// Why a kernel's results may legitimately differ between two correct executions, from its
/// PTX text (reported, not hidden, when the kernel differs).
pub(super) fn nondeterminism(ptx: &str) -> Option<&'static str> {
    if ptx.contains("%clock") || ptx.contains("%globaltimer") {
        Some("reads a clock")
    } else if ptx.contains("%smid") || ptx.contains("%nsmid") || ptx.contains("%warpid") {
        Some("reads hardware placement registers (%smid/%warpid)")
    } else if instruction_lines(ptx).any(|l| {
        (l.starts_with("atom") || l.starts_with("red"))
            && l.contains(".add")
            && [".f32", ".f64", ".f16", ".bf16"]
                .iter()
                .any(|t| l.contains(t))
    }) {
        Some("float atomics: the result depends on the order threads add in")
    } else if approximate_math(ptx) {
        Some(
            "approximate math (.approx, div.full, tanh, ex2): ptxas computes these with MUFU \
             approximations, the interpreter in f64 (docs/arch/emu.md, MUFU precision)",
        )
    } else {
        None
    }
}

/// Whether the PTX uses f64 `div`/`rcp`/`sqrt` (not `.approx`) or 64-bit integer `div`/`rem`:
/// ptxas's software routines, whose results differ from the interpreter's exact ones on a few
/// edge inputs (overflow under directed rounding, a NaN operand of `sqrt.rm`, one 1-ulp
/// quotient near 2^-992; division by zero).
pub(super) fn f64_routines(ptx: &str) -> bool {
    instruction_lines(ptx).any(|l| {
        let float = ["div.", "rcp.", "sqrt."].iter().any(|p| l.starts_with(p))
            && l.contains(".f64")
            && !l.contains(".approx");
        let int = (l.starts_with("div.") || l.starts_with("rem."))
            && (l.contains(".u64") || l.contains(".s64"));
        float || int
    })
}

/// Whether the PTX has a float `mul`, `add` or `sub` without a rounding modifier: PTX lets
/// ptxas contract such a `mul` and `add` into one fused multiply-add.
fn contractible(ptx: &str) -> bool {
    instruction_lines(ptx).any(|l| {
        ["mul.", "add.", "sub."].iter().any(|p| l.starts_with(p))
            && (l.contains(".f32") || l.contains(".f64"))
            && ![".rn", ".rz", ".rm", ".rp"].iter().any(|r| l.contains(r))
    })
}

/// Whether the PTX uses approximate math (`.approx`, `div.full`, `tanh`, `ex2`), which ptxas
/// computes with MUFU approximations and the interpreter exactly.
pub(super) fn approximate_math(ptx: &str) -> bool {
    ptx.contains(".approx")
        || ptx.contains("div.full")
        || ptx.contains("tanh")
        || ptx.contains("ex2.")
}

fn run_file(dir: &Path, rel: &Path, arch: &str, cfg: &Config) -> Option<FileResult> {
    let text = read_text(&dir.join(rel)).ok()?;
    let targets = super::scan_targets(&text);
    let arch = super::arch_for_file(&targets, arch)?;
    let mut r = FileResult {
        rel: rel.display().to_string(),
        hazards: Vec::new(),
        kernels: Vec::new(),
        error: None,
    };
    let prog = match interp::Program::from_text(&text) {
        Ok(p) => p,
        Err(e) => {
            r.error = Some(format!("interp lowering: {}", e.message));
            return Some(r);
        }
    };
    let names: Vec<String> = prog.kernels().iter().map(|s| s.to_string()).collect();
    if names.is_empty() {
        return None;
    }
    let cubin = match super::ptxas_cubin(&text, &arch, &[]) {
        Ok(PtxasOutcome::Ok { cubin, .. }) => cubin,
        Ok(PtxasOutcome::Rejected(m)) => {
            let first = m.lines().next().unwrap_or("").to_string();
            for n in names {
                r.kernels.push((
                    n,
                    KernelOutcome::Verdict(Verdict::Unsupported(format!(
                        "ptxas whole-program compile refused (needs -c / linking): {first}"
                    ))),
                    None,
                ));
            }
            return Some(r);
        }
        Err(e) => {
            r.error = Some(e);
            return Some(r);
        }
    };
    let bytes = match std::fs::read(&cubin) {
        Ok(b) => b,
        Err(e) => {
            r.error = Some(format!("{}: {e}", cubin.display()));
            return Some(r);
        }
    };
    r.hazards = hazards_of(&bytes);
    let nd = nondeterminism(&text);
    let image = match emu::load::decode(&bytes) {
        Ok(i) => i,
        Err(e) => {
            for n in names {
                r.kernels.push((
                    n,
                    KernelOutcome::Verdict(Verdict::Unsupported(format!("load: {e}"))),
                    None,
                ));
            }
            return Some(r);
        }
    };
    // ptxas's code without mul/add contraction, decoded when a kernel first needs it.
    let mut uncontracted: Option<Option<emu::load::Image>> = None;
    for n in names {
        let mut o = match catch(|| compare_with_retries(&text, &prog, &image, &n, cfg)) {
            Ok(v) => KernelOutcome::Verdict(v),
            Err(p) => KernelOutcome::Panic(p),
        };
        if let KernelOutcome::Verdict(Verdict::Differ(d)) = &o
            && nd.is_none()
            && contractible(&text)
        {
            let image = uncontracted.get_or_insert_with(|| {
                let Ok(PtxasOutcome::Ok { cubin, .. }) =
                    super::ptxas_cubin(&text, &arch, &["--fmad=false"])
                else {
                    return None;
                };
                emu::load::decode(&std::fs::read(cubin).ok()?).ok()
            });
            // The interpreter without contraction too (`--fmad=false` on both sides).
            let exact = interp::Program::from_text_with(&text, false).ok();
            if let Some(image) = image
                && let Some(exact) = &exact
                && let Ok(Verdict::Equal) =
                    catch(|| compare_with_retries(&text, exact, image, &n, cfg))
            {
                o = KernelOutcome::EqualWithoutContraction(d.clone());
            }
        }
        if let KernelOutcome::Verdict(Verdict::Differ(d)) = &o
            && prog
                .kernel(&n)
                .is_some_and(|k| prog.float_memory_through_wider_registers(k))
        {
            o = KernelOutcome::PtxasDeviation(
                d.clone(),
                "a floating-point ld/st through a wider bit-size register: the PTX ISA (9.4.1, \
                 Tables 27/28) zero-extends loads and stores the low bits, ptxas 13.0.88 \
                 converts the register's integer value (I2FP.F32.U32) before the store",
            );
        }
        r.kernels.push((n, o, nd));
    }
    Some(r)
}

/// [`harness::compare_kernel`] with `cfg`, then, when that is not comparable, with the
/// alternatives for its reason (`harness::retry`): the first that compares (equal or differing)
/// is the verdict, otherwise the first launch's.
fn compare_with_retries(
    ptx: &str,
    prog: &interp::Program,
    image: &emu::load::Image,
    kernel: &str,
    cfg: &Config,
) -> Verdict {
    // A launch inside the kernel's declared bounds (`.reqntid`, `.maxntid`).
    let cfg = &harness::retry::contract_config(ptx, kernel, cfg);
    let first = harness::compare_kernel(prog, image, kernel, cfg);
    let Verdict::NotComparable(reason) = &first else {
        return first;
    };
    harness::retry::alternatives(ptx, kernel, reason, cfg)
        .iter()
        .map(|alt| harness::compare_kernel(prog, image, kernel, alt))
        .find(|v| matches!(v, Verdict::Equal | Verdict::Differ(_)))
        .unwrap_or(first)
}

/// Marks a line of [`hazards_of`] that is a checker error rather than a hazard.
const CHECKER_ERROR: &str = "checker error: ";

/// Runs the hazard checker on every code section of a cubin; one line per hazard or checker
/// error.
fn hazards_of(bytes: &[u8]) -> Vec<String> {
    let Ok(c) = cubin::read(bytes) else {
        return Vec::new();
    };
    let sm = format!("sm_{}", c.header.sm());
    let mut out = Vec::new();
    for s in &c.sections {
        if !s.name.starts_with(".text.") {
            continue;
        }
        let words = sass::words(&cubin::write::encode_data(&s.data));
        match hazard::check(&sm, &words) {
            Ok(hs) => out.extend(hs.iter().map(|h| format!("{}: {h}", s.name))),
            Err(e) => out.push(format!("{}: {CHECKER_ERROR}{e}", s.name)),
        }
    }
    out
}

/// Groups a reason: drops register numbers, addresses and operand details so that one cause
/// is one line.
fn reason_key(r: &str) -> String {
    let mut s = r.to_string();
    if s.starts_with("harness:")
        && let Some(i) = s.find(" (")
    {
        s.truncate(i);
    }
    if s.starts_with("undecoded word")
        && let Some(i) = s.find(" .unknown")
    {
        s.truncate(i);
    }
    if s.len() > 110 {
        s.truncate(110);
    }
    s
}

pub fn run(args: &CorpusArgs) -> Result<(), String> {
    let arch = args.require_arch("emu")?.to_string();
    let verbose = args.rest.iter().any(|a| a == "-v" || a == "--verbose");
    let limit: Option<usize> = args
        .rest
        .iter()
        .position(|a| a == "--limit")
        .and_then(|i| args.rest.get(i + 1))
        .and_then(|v| v.parse().ok());
    quiet_panics();
    let cfg = Config::default();
    let mut files: Vec<_> = args
        .ptx_files()
        .into_iter()
        .filter(|f| super::is_accepted(f))
        .collect();
    if let Some(n) = limit {
        files.truncate(n);
    }
    let results = par_map("emu", &files, |rel| {
        match catch(|| run_file(&args.dir, rel, &arch, &cfg)) {
            Ok(r) => r,
            Err(p) => Some(FileResult {
                rel: rel.display().to_string(),
                kernels: vec![("?".into(), KernelOutcome::Panic(p), None)],
                hazards: Vec::new(),
                error: None,
            }),
        }
    });

    let (mut kernels, mut equal, mut differ, mut unsupported, mut panics) = (0, 0, 0, 0, 0);
    let (mut nondeterministic, mut undefined, mut deviations) = (0, 0, 0);
    let mut deviation_list: Vec<String> = Vec::new();
    let mut undef: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut hazards = 0;
    let mut unchecked: BTreeMap<String, usize> = BTreeMap::new();
    let mut unsup: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut notcmp: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut nondet: Vec<String> = Vec::new();
    let mut contracted: Vec<String> = Vec::new();
    for r in results.into_iter().flatten() {
        if let Some(e) = &r.error {
            println!("error       {}: {e}", r.rel);
        }
        for h in &r.hazards {
            if h.contains(CHECKER_ERROR) {
                *unchecked
                    .entry(h.split(CHECKER_ERROR).nth(1).unwrap_or("").to_string())
                    .or_default() += 1;
                continue;
            }
            hazards += 1;
            println!("HAZARD      {}: {h}", r.rel);
        }
        for (k, o, nd) in &r.kernels {
            kernels += 1;
            let who = format!("{} {k}", r.rel);
            match o {
                KernelOutcome::Verdict(Verdict::Equal) => {
                    equal += 1;
                    if verbose {
                        println!("equal       {who}");
                    }
                }
                KernelOutcome::Verdict(Verdict::Differ(m)) => match nd {
                    Some(why) => {
                        nondeterministic += 1;
                        nondet.push(format!("{who}: {why} ({m})"));
                    }
                    None => {
                        differ += 1;
                        println!("DIFFER      {who}: {m}");
                    }
                },
                KernelOutcome::Verdict(Verdict::Unsupported(m)) => {
                    unsupported += 1;
                    unsup.entry(reason_key(m)).or_default().push(who);
                }
                KernelOutcome::Verdict(Verdict::NotComparable(m))
                    if m.starts_with("undefined behaviour") =>
                {
                    undefined += 1;
                    undef.entry(reason_key(m)).or_default().push(who);
                }
                KernelOutcome::Verdict(Verdict::NotComparable(m)) => {
                    unsupported += 1;
                    notcmp.entry(reason_key(m)).or_default().push(who);
                }
                KernelOutcome::PtxasDeviation(m, why) => {
                    deviations += 1;
                    deviation_list.push(format!("{who}: {why} ({m})"));
                }
                KernelOutcome::EqualWithoutContraction(m) => {
                    equal += 1;
                    contracted.push(format!("{who} ({m})"));
                }
                KernelOutcome::Panic(p) => {
                    panics += 1;
                    println!("PANIC       {who}: {p}");
                }
            }
        }
    }
    let show = |title: &str, m: &BTreeMap<String, Vec<String>>| {
        if m.is_empty() {
            return;
        }
        println!("{title}:");
        let mut v: Vec<_> = m.iter().collect();
        v.sort_by_key(|(_, ks)| std::cmp::Reverse(ks.len()));
        for (reason, ks) in v {
            println!("  {:5}  {reason}  (e.g. {})", ks.len(), ks[0]);
            if verbose {
                for k in ks {
                    println!("           {k}");
                }
            }
        }
    };
    show("unsupported by the emulator, by reason", &unsup);
    show("not comparable, by reason", &notcmp);
    show(
        "undefined behaviour with every launch tried (no defined result to compare), by reason",
        &undef,
    );
    if !contracted.is_empty() {
        println!(
            "equal with ptxas --fmad=false (ptxas contracts mul/add without a rounding modifier into FFMA, \
             as PTX allows; the interpreter rounds twice), counted equal:"
        );
        for c in &contracted {
            println!("  {c}");
        }
    }
    if !deviation_list.is_empty() {
        println!(
            "kernels where ptxas's code does not compute what the PTX ISA says (the emulator ran ptxas's code as written):"
        );
        for d in &deviation_list {
            println!("  {d}");
        }
    }
    if !nondet.is_empty() {
        println!("legitimately nondeterministic kernels that differ:");
        for n in &nondet {
            println!("  {n}");
        }
    }

    // ZLUDA run tests through the emulator.
    let (zt, zp, zf, zu, zd) = zluda(&args.dir, &arch, verbose)?;
    println!(
        "ZLUDA run tests through the emulator: tests={zt} pass={zp} fail={zf} unsupported={zu} ptxas_deviations={zd}"
    );

    for (why, n) in &unchecked {
        println!("hazard checker could not check {n} code section(s): {why}");
    }
    println!(
        "hazard checker (crates/hazard) on ptxas's code of every compiled file: {hazards} hazard(s) reported"
    );
    println!(
        "RESULT emu {arch} kernels={kernels} equal={equal} differ={differ} unsupported={unsupported} hazards={hazards} panics={panics} nondeterministic={nondeterministic} undefined={undefined} ptxas_deviations={deviations}"
    );
    Ok(())
}

fn hex_bytes(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).ok())
        .collect()
}

enum ZOutcome {
    Pass,
    /// Byte-exact after this many out-of-bounds global accesses, tolerated as on the GPU (as
    /// the interpreter's ZLUDA stage does; the first is described).
    PassOob(u64, String),
    Fail(String),
    /// Differs where ptxas's code does not compute what the PTX ISA says (as in the corpus
    /// part: `interp::Program::float_memory_through_wider_registers`).
    PtxasDeviation(String),
    Unsupported(String),
}

fn zluda_one(dir: &Path, arch: &str, t: &Json) -> ZOutcome {
    let name = t.get("name").and_then(Json::as_str).unwrap_or("?");
    let Some(rel) = t.get("corpus_path").and_then(Json::as_str) else {
        return ZOutcome::Fail("no corpus_path".into());
    };
    let text = match read_text(&dir.join(rel)) {
        Ok(t) => t,
        Err(e) => return ZOutcome::Fail(e),
    };
    let Some(arch) = super::arch_for_file(&super::scan_targets(&text), arch) else {
        return ZOutcome::Unsupported("target not allowed for this arch".into());
    };
    let block = t.get("block_dim_x").and_then(Json::as_f64).unwrap_or(1.0) as u32;
    let input = match t.get("input") {
        Some(Json::Null) | None => None,
        Some(i) => i.get("hex").and_then(Json::as_str).and_then(hex_bytes),
    };
    let Some(expected) = t
        .get("output")
        .and_then(|o| o.get("hex"))
        .and_then(Json::as_str)
        .and_then(hex_bytes)
    else {
        return ZOutcome::Fail("bad output hex".into());
    };
    let cubin = match super::ptxas_cubin(&text, &arch, &[]) {
        Ok(PtxasOutcome::Ok { cubin, .. }) => cubin,
        Ok(PtxasOutcome::Rejected(m)) => {
            return ZOutcome::Unsupported(format!(
                "ptxas refuses: {}",
                m.lines().next().unwrap_or("")
            ));
        }
        Err(e) => return ZOutcome::Fail(e),
    };
    let Ok(bytes) = std::fs::read(&cubin) else {
        return ZOutcome::Fail("cannot read cubin".into());
    };
    let mut mem = interp::Memory::new();
    mem.tolerate_unowned();
    let out = mem.alloc("output", vec![0; expected.len()]);
    let inp = match input {
        Some(b) => mem.alloc("input", b),
        None => out,
    };
    let prog = match emu::load(&bytes, &mut mem) {
        Ok(p) => p,
        Err(e) => return ZOutcome::Unsupported(format!("load: {e}")),
    };
    let Some(k) = prog.kernel(name) else {
        return ZOutcome::Fail(format!("no kernel `{name}` in the cubin"));
    };
    let mut params = vec![0u8; k.param_block.1 as usize];
    for (p, v) in k.params.iter().zip([inp, out]) {
        let at = p.offset as usize;
        let n = (p.size as usize).min(8);
        if at + n <= params.len() {
            params[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
    }
    let launch = emu::Launch {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        dynamic_shared: 1024,
        params,
        step_limit: 10_000_000,
    };
    match emu::run(&prog, &mut mem, name, &launch) {
        Ok(_) => {}
        Err(emu::EmuError::Unsupported { reason, .. }) => return ZOutcome::Unsupported(reason),
        Err(e) => return ZOutcome::Fail(e.to_string()),
    }
    let got = &mem.buffer(out).expect("output buffer").data;
    if *got == expected {
        match mem.unowned_accesses() {
            (0, _) => ZOutcome::Pass,
            (n, first) => ZOutcome::PassOob(n, first.unwrap_or_default().to_string()),
        }
    } else {
        let first = got
            .iter()
            .zip(&expected)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let deviation = interp::Program::from_text(&text).is_ok_and(|p| {
            p.kernel(name)
                .is_some_and(|k| p.float_memory_through_wider_registers(k))
        });
        if deviation {
            return ZOutcome::PtxasDeviation(format!(
                "output differs from byte {first}; a floating-point ld/st through a wider register, which ptxas compiles against the PTX ISA"
            ));
        }
        ZOutcome::Fail(format!("output differs from byte {first}"))
    }
}

/// (tests, pass, fail, unsupported, ptxas deviations).
type ZludaCounts = (usize, usize, usize, usize, usize);

fn zluda(dir: &Path, arch: &str, verbose: bool) -> Result<ZludaCounts, String> {
    let path = dir.join("zluda_run_tests.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc = json::parse(&text)?;
    let tests = doc
        .as_array()
        .ok_or("zluda_run_tests.json is not an array")?;
    let runnable: Vec<&Json> = tests.iter().filter(|t| t.get("output").is_some()).collect();
    let results = par_map("emu-zluda", &runnable, |t| {
        catch(|| zluda_one(dir, arch, t)).unwrap_or_else(|p| ZOutcome::Fail(format!("panic: {p}")))
    });
    let (mut pass, mut fail, mut unsup, mut deviations) = (0, 0, 0, 0);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for (t, r) in runnable.iter().zip(&results) {
        let name = t.get("name").and_then(Json::as_str).unwrap_or("?");
        match r {
            ZOutcome::Pass => {
                pass += 1;
                if verbose {
                    println!("zluda pass  {name}");
                }
            }
            ZOutcome::PassOob(n, first) => {
                pass += 1;
                println!(
                    "zluda pass-oob {name}: byte-exact, after {n} out-of-bounds global accesses tolerated as on the GPU (first: {first})"
                );
            }
            ZOutcome::Fail(m) => {
                fail += 1;
                println!("zluda FAIL  {name}: {m}");
            }
            ZOutcome::PtxasDeviation(m) => {
                deviations += 1;
                println!("zluda ptxas-deviation {name}: {m}");
            }
            ZOutcome::Unsupported(m) => {
                unsup += 1;
                *reasons.entry(reason_key(m)).or_default() += 1;
                if verbose {
                    println!("zluda unsupported {name}: {m}");
                }
            }
        }
    }
    for (r, n) in reasons {
        println!("  zluda unsupported {n:4}  {r}");
    }
    Ok((runnable.len(), pass, fail, unsup, deviations))
}
