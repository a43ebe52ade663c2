//! `cargo xtask isa-forms [--arch sm_XX]... [--opcode OP]... [--shard K/N] [--verbose]`: the
//! PTX ISA's instruction forms as a conformance suite for code generation.
//!
//! Every form of `crates/ptx`'s table in the value families (`instances.rs`) is instantiated
//! for every modifier combination with the operand types the ISA gives it, and each instance
//! becomes a probe kernel (`kernel.rs`) fed the edge values of `values.rs` by 1,024 threads.
//! Per target:
//!
//! 1. ptxas 13.0.88 says which instances exist: the probes go to it in modules of
//!    [`BATCH`] kernels; the kernels on the lines it reports as errors are taken out and the
//!    rest compiled again. What ptxas rejects is not counted further.
//! 2. The judge is checked first: ptxas's code for each accepted probe runs in the emulator
//!    against the interpreter (`harness`). A difference there is a gap in the emulator's or
//!    the interpreter's model of the instruction (`judge_differ`), listed.
//! 3. kiln compiles each accepted probe alone: `unsupported: ...` is counted by reason (the
//!    forms code generation still refuses), any other error is a false error (kiln rejects
//!    what ptxas accepts), and a compiled probe runs in the emulator against the interpreter:
//!    equal is `verified`, a difference is `miscompiled`.
//!
//!    Where the judge differs on ptxas's code too (the interpreter does not reproduce the
//!    hardware's approximations bit for bit: `sin.approx`, `div.full`, ...), kiln's code is
//!    compared with ptxas's in the emulator instead (`verified_vs_ptxas`, part of
//!    `verified`). A probe whose code uses an instruction the emulator cannot run is
//!    `unverifiable` (compiled, not verified, listed).
//!
//! `--sema` stops after ptxas's verdicts (no judge) and runs kiln's checker alone on every
//! probe: `missed_errors` as above, and `false_errors` counts the probes ptxas accepts that the
//! checker rejects (its message in the TSV). Keep the probe set (no `--opcode`) to reuse
//! ptxas's cached verdicts: the modules, and so the cache keys, depend on the whole set.
//! For a rejected probe the TSV's kiln column says whether the checker `accepts` (a missed
//! error) or `rejects` it.
//!
//! `--shard K/N` runs the instances whose key hashes to the K-th of N shards
//! (`corpus::Shard::contains_key`: deterministic, independent of the order and of the other
//! instances); CI runs one shard, a full run takes every instance.
//!
//! Writes `target/isa-forms-<arch>.tsv` (every instance and its outcome). Last line per
//! target: `RESULT isa-forms <arch> forms=<n> instances=<n> accepted_by_ptxas=<n>
//! compiled=<n> verified=<n> verified_vs_ptxas=<n> unverifiable=<n> unsupported=<n>
//! not_comparable=<n> miscompiled=<n> false_errors=<n> missed_errors=<n> judge_equal=<n>
//! judge_differ=<n> judge_unsupported=<n> panics=<n>`; `missed_errors` counts probes ptxas
//! rejects that kiln's checker accepts.

mod instances;
mod kernel;
mod learn;
mod values;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::corpus::{self, PtxasOutcome};
use instances::Instance;

/// Probe kernels per ptxas module.
const BATCH: usize = 96;

/// What happened to one instance.
#[derive(Clone, Debug, Default)]
struct Outcome {
    accepted: bool,
    /// ptxas's reason when it rejected the instance.
    rejected: Option<String>,
    judge: Verdict,
    kiln: Verdict,
    /// ptxas's cubin holding the probe (a batch's).
    ptxas_cubin: Option<std::path::PathBuf>,
    /// For a probe ptxas rejects: kiln's checker accepts it too (a missed error).
    missed: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum Verdict {
    #[default]
    NotRun,
    Equal,
    Differ(String),
    /// Equal to ptxas's code in the emulator, where the interpreter cannot reproduce the
    /// instruction bit for bit (the judge differs on ptxas's code too: approximate math).
    EqualToPtxas,
    /// kiln: `unsupported: ...`; judge: the emulator cannot run ptxas's code.
    Unsupported(String),
    /// kiln's code uses an instruction the emulator cannot run: compiled, not verified.
    Unverifiable(String),
    NotComparable(String),
    /// kiln rejects a probe ptxas accepts (not `unsupported`).
    FalseError(String),
    Panic(String),
}

impl Verdict {
    fn word(&self) -> &'static str {
        match self {
            Verdict::NotRun => "-",
            Verdict::Equal => "equal",
            Verdict::Differ(_) => "differ",
            Verdict::EqualToPtxas => "equal_to_ptxas",
            Verdict::Unsupported(_) => "unsupported",
            Verdict::Unverifiable(_) => "unverifiable",
            Verdict::NotComparable(_) => "not_comparable",
            Verdict::FalseError(_) => "false_error",
            Verdict::Panic(_) => "panic",
        }
    }

    fn detail(&self) -> &str {
        match self {
            Verdict::Differ(s)
            | Verdict::Unsupported(s)
            | Verdict::Unverifiable(s)
            | Verdict::NotComparable(s)
            | Verdict::FalseError(s)
            | Verdict::Panic(s) => s,
            _ => "",
        }
    }
}

struct Args {
    archs: Vec<String>,
    opcodes: Vec<String>,
    verbose: bool,
    learn: bool,
    /// `--sema`: ptxas's verdicts and kiln's checker only (no judge, no code generation).
    sema: bool,
    shard: Option<corpus::Shard>,
    /// `--learn --probes-out DIR`: write the learner's probes (`DIR/<sm>/ptx/*.ptx`, one per
    /// instance) instead of learning, as seeds for `sass-probe --collect --also DIR/<sm>`.
    probes_out: Option<std::path::PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        archs: Vec::new(),
        opcodes: Vec::new(),
        verbose: false,
        learn: false,
        sema: false,
        shard: None,
        probes_out: None,
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--arch" => a
                .archs
                .push(it.next().ok_or("--arch needs a value")?.clone()),
            "--opcode" => a
                .opcodes
                .push(it.next().ok_or("--opcode needs a value")?.clone()),
            "--verbose" | "-v" => a.verbose = true,
            "--learn" => a.learn = true,
            "--sema" => a.sema = true,
            "--probes-out" => {
                a.probes_out = Some(it.next().ok_or("--probes-out needs a folder")?.into())
            }
            "--shard" => {
                a.shard = Some(corpus::Shard::parse(it.next().ok_or("--shard needs K/N")?)?)
            }
            other => return Err(format!("isa-forms: unknown argument `{other}`")),
        }
    }
    if a.archs.is_empty() {
        a.archs = vec!["sm_80".into(), "sm_90".into()];
    }
    if a.probes_out.is_some() && !a.learn {
        return Err("isa-forms: --probes-out goes with --learn".into());
    }
    if a.learn && a.shard.is_some() {
        return Err("isa-forms --learn reads every instance: no --shard".into());
    }
    Ok(a)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let args = parse_args(args)?;
    corpus::quiet_panics();
    if args.learn {
        return learn_table(&args);
    }
    for arch in &args.archs {
        run_arch(arch, &args)?;
    }
    Ok(())
}

/// The probes of one target.
struct Suite {
    insts: Vec<Instance>,
    /// Forms instantiated.
    forms: usize,
    /// Forms not instantiated: opcode → why.
    skipped: BTreeMap<String, String>,
}

/// ptxas's verdict on one probe: the judge's verdict and the cubin holding it, or ptxas's
/// reason for rejecting it.
type PtxasVerdict = Result<(Verdict, std::path::PathBuf), String>;

/// The instances for `arch` and the forms not instantiated (opcode → reason).
fn instances_for(arch: &str, opcodes: &[String]) -> Result<Suite, String> {
    let sm = db::Sm::parse(arch).ok_or_else(|| format!("isa-forms: unknown target {arch}"))?;
    let mut out = Vec::new();
    let mut skipped = BTreeMap::new();
    let mut forms = 0;
    for form in ptx::isa().all_forms() {
        if !opcodes.is_empty() && !opcodes.iter().any(|o| o == form.opcode) {
            continue;
        }
        if !sm.satisfies(form.min_sm) {
            continue;
        }
        match instances::instances(form) {
            Ok(v) => {
                forms += 1;
                out.extend(v);
            }
            Err(why) => {
                skipped
                    .entry(form.opcode.to_string())
                    .or_insert_with(|| why.to_string());
            }
        }
    }
    // One probe per key (forms overlap: `bar.sync` is listed twice, ...).
    let mut seen = std::collections::HashSet::new();
    out.retain(|i| seen.insert(i.key.clone()));
    Ok(Suite {
        insts: out,
        forms,
        skipped,
    })
}

/// A module of probes: the text and, per instance, the kernel's first and last line (1-based).
fn module(arch: &str, insts: &[(usize, &Instance)]) -> (String, Vec<(usize, usize, usize)>) {
    let refs: Vec<&Instance> = insts.iter().map(|(_, i)| *i).collect();
    let mut text = kernel::header(arch, &refs);
    let mut lines = Vec::new();
    for (idx, inst) in insts {
        let first = text.lines().count() + 1;
        text.push_str(&kernel::kernel(&format!("f{idx}"), inst));
        let last = text.lines().count();
        lines.push((*idx, first, last));
        text.push('\n');
    }
    (text, lines)
}

/// The line numbers ptxas's messages name (`ptxas X.ptx, line 12; error : ...`).
fn error_lines(message: &str) -> Vec<usize> {
    message
        .lines()
        .filter(|l| l.contains("error"))
        .filter_map(|l| {
            let rest = &l[l.find(", line ")? + 7..];
            rest.split(';').next()?.trim().parse().ok()
        })
        .collect()
}

/// The single-probe module of `inst` (kernel `f{idx}`).
fn single(arch: &str, idx: usize, inst: &Instance) -> String {
    module(arch, &[(idx, inst)]).0
}

fn harness_config(inst: &Instance) -> harness::Config {
    harness::Config {
        grid: [kernel::GRID, 1, 1],
        block: [kernel::BLOCK, 1, 1],
        dynamic_shared: 0,
        buffer_bytes: kernel::buffer_bytes(inst),
        ..harness::Config::default()
    }
}

fn judge(arch: &str, idx: usize, inst: &Instance, image: &emu::load::Image) -> Verdict {
    let text = single(arch, idx, inst);
    let prog = match interp::Program::from_text(&text) {
        Ok(p) => p,
        Err(e) => return Verdict::NotComparable(format!("interp: {}", e.message)),
    };
    let cfg = harness_config(inst);
    match corpus::catch(|| harness::compare_kernel(&prog, image, &format!("f{idx}"), &cfg)) {
        Ok(harness::Verdict::Equal) => Verdict::Equal,
        Ok(harness::Verdict::Differ(d)) => Verdict::Differ(d),
        Ok(harness::Verdict::Unsupported(u)) => Verdict::Unsupported(u),
        Ok(harness::Verdict::NotComparable(r)) => Verdict::NotComparable(r),
        Err(p) => Verdict::Panic(p),
    }
}

/// kiln's verdict on probe `idx`: its code against the interpreter, or, where the judge
/// shows that the interpreter cannot reproduce ptxas's code (`judge` differs), against
/// ptxas's code (`ptxas_cubin`) in the emulator.
fn kiln(
    arch: &str,
    idx: usize,
    inst: &Instance,
    judge: &Verdict,
    ptxas_cubin: Option<&std::path::Path>,
) -> Verdict {
    let Some(sm) = db::Sm::parse(arch) else {
        return Verdict::FalseError(format!("kiln does not know {arch}"));
    };
    let text = single(arch, idx, inst);
    let built = corpus::catch(|| {
        let mut database = db::RootDatabase::default();
        let file = database.add_file(std::path::Path::new("probe.ptx"), text.as_bytes());
        let out = db::cubin(
            &database,
            db::FileTarget::new(&database, file, db::Target::new(sm)),
        );
        match &out.bytes {
            Some(b) => Ok(b.clone()),
            None => Err(out
                .diagnostics
                .first()
                .map(|d| d.message.clone())
                .unwrap_or_default()),
        }
    });
    let bytes = match built {
        Ok(Ok(b)) => b,
        Ok(Err(m)) if m.contains("unsupported") => return Verdict::Unsupported(reason(&m)),
        Ok(Err(m)) => return Verdict::FalseError(m),
        Err(p) => return Verdict::Panic(p),
    };
    let cfg = harness_config(inst);
    let name = format!("f{idx}");
    let verdict = match corpus::catch(|| harness::compare(&text, &bytes, &name, &cfg)) {
        Ok(harness::Verdict::Equal) => Verdict::Equal,
        Ok(harness::Verdict::Differ(d)) => Verdict::Differ(d),
        Ok(harness::Verdict::Unsupported(u)) => Verdict::Unverifiable(u),
        Ok(harness::Verdict::NotComparable(r)) => Verdict::NotComparable(r),
        Err(p) => Verdict::Panic(p),
    };
    if matches!(verdict, Verdict::Differ(_))
        && *judge == Verdict::Equal
        && approximate(&inst.mnemonic)
        && inst
            .stmts
            .iter()
            .filter(|s| s.mnemonic == inst.mnemonic)
            .all(|s| {
                !s.operands
                    .iter()
                    .any(|o| matches!(o, instances::Opnd::Src(_)))
            })
    {
        // ptxas evaluates an approximation of constants when it compiles (exactly, as the
        // interpreter does); kiln computes it with MUFU when the kernel runs.
        return Verdict::NotComparable(
            "approximate math of constants: ptxas folds it, kiln computes it with MUFU".into(),
        );
    }
    if let (Verdict::Differ(d), Verdict::Differ(_), Some(theirs)) = (&verdict, judge, ptxas_cubin) {
        let Ok(theirs) = std::fs::read(theirs) else {
            return verdict;
        };
        return match corpus::catch(|| harness::compare_cubins(&text, &bytes, &theirs, &name, &cfg))
        {
            Ok(harness::Verdict::Equal) => Verdict::EqualToPtxas,
            Ok(harness::Verdict::Differ(e)) => Verdict::Differ(format!(
                "{d}; and against ptxas's code in the emulator: {e}"
            )),
            _ => verdict,
        };
    }
    verdict
}

/// `--learn`: the templates of the all-register instances kiln refuses on sm_80 or sm_90
/// (`learn.rs`), written to `crates/lower/data/ops.tsv` (the table is learned anew each time).
fn learn_table(args: &Args) -> Result<(), String> {
    // What the families refuse, without the table being learned.
    lower::disable_learned_ops();
    let mut all: Vec<Instance> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for arch in learn::ARCHS {
        for i in instances_for(arch, &args.opcodes)?.insts {
            if seen.insert(i.key.clone()) {
                all.push(i);
            }
        }
    }
    let candidates: Vec<(usize, &Instance)> = all
        .iter()
        .enumerate()
        .filter(|(_, i)| {
            learn::learnable(i).is_ok() && i.mnemonic != "cvt" && !i.mnemonic.starts_with("cvt.")
        })
        .collect();
    let refused = corpus::par_map("isa-forms refused", &candidates, |(idx, inst)| {
        learn::ARCHS.iter().any(|arch| {
            matches!(
                kiln(arch, *idx, inst, &Verdict::NotRun, None),
                Verdict::Unsupported(_)
            )
        })
    });
    let to_learn: Vec<&Instance> = candidates
        .iter()
        .zip(refused)
        .filter(|(_, r)| *r)
        .map(|((_, i), _)| *i)
        .collect();
    eprintln!(
        "isa-forms --learn: {} instances kiln refuses",
        to_learn.len()
    );
    if let Some(dir) = &args.probes_out {
        return learn::write_probes(&to_learn, dir);
    }
    let rows = learn::learn(&to_learn);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut learned = 0;
    for r in rows.values() {
        for c in &r.cols {
            match c {
                Ok(_) => learned += 1,
                Err(e) => {
                    let short: String = e.chars().take(60).collect();
                    *reasons.entry(short).or_default() += 1;
                }
            }
        }
    }
    let mut report = format!(
        "# instruction\t{} (template or why not)\n",
        crate::cvt_forms::arch_columns()
    );
    for (k, r) in &rows {
        report.push_str(k);
        for c in &r.cols {
            report.push('\t');
            report.push_str(&match c {
                Ok(t) => t.clone(),
                Err(e) => format!("NOT LEARNED: {e}"),
            });
        }
        report.push('\n');
    }
    let report_path = corpus::workspace_root().join("target/isa-forms-learn.tsv");
    std::fs::write(&report_path, report)
        .map_err(|e| format!("writing {}: {e}", report_path.display()))?;
    let path = learn::table_path();
    let text = if args.opcodes.is_empty() {
        learn::table_text(&rows)
    } else {
        // Only these opcodes were learned: their rows replace the table's, the rest stay.
        let old = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        learn::merge_table(&old, &rows, &args.opcodes)
    };
    std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("not learned (reason: count):");
    let mut by: Vec<_> = reasons.into_iter().collect();
    by.sort_by_key(|(r, n)| (std::cmp::Reverse(*n), r.clone()));
    for (r, n) in by.iter().take(40) {
        println!("  {n:>5}  {r}");
    }
    println!(
        "RESULT isa-forms-learn instructions={} templates={learned} written={}",
        rows.len(),
        path.display()
    );
    Ok(())
}

/// Whether kiln's checker (syntax, semantics, `.target`) finds no error in the probe.
fn sema_accepts(arch: &str, idx: usize, inst: &Instance) -> bool {
    let Some(sm) = db::Sm::parse(arch) else {
        return false;
    };
    let text = single(arch, idx, inst);
    corpus::catch(|| {
        let mut database = db::RootDatabase::default();
        let file = database.add_file(std::path::Path::new("probe.ptx"), text.as_bytes());
        let errors = |d: &[db::Diagnostic]| d.iter().any(|d| d.severity == db::Severity::Error);
        !errors(db::diagnostics(&database, file))
            && !errors(&db::target_diagnostics(&database, file, sm))
    })
    .unwrap_or(false)
}

/// kiln's checker's first error on the probe (for `--sema`'s report).
fn sema_first_error(arch: &str, idx: usize, inst: &Instance) -> String {
    let Some(sm) = db::Sm::parse(arch) else {
        return format!("kiln does not know {arch}");
    };
    let text = single(arch, idx, inst);
    corpus::catch(|| {
        let mut database = db::RootDatabase::default();
        let file = database.add_file(std::path::Path::new("probe.ptx"), text.as_bytes());
        let mut all = db::diagnostics(&database, file).to_vec();
        all.extend(db::target_diagnostics(&database, file, sm).iter().cloned());
        all.into_iter()
            .find(|d| d.severity == db::Severity::Error)
            .map(|d| d.message)
            .unwrap_or_default()
    })
    .unwrap_or_else(|p| format!("panic: {p}"))
}

/// Whether an instruction computes an approximation (MUFU-based in ptxas's code).
fn approximate(mnemonic: &str) -> bool {
    mnemonic.contains(".approx")
        || mnemonic.starts_with("div.full")
        || mnemonic.starts_with("tanh")
        || mnemonic.starts_with("ex2")
}

/// An `unsupported: ...` message without the kernel's name.
fn reason(m: &str) -> String {
    m.find("unsupported: ")
        .map_or(m, |i| &m[i..])
        .trim()
        .to_string()
}

fn run_arch(arch: &str, args: &Args) -> Result<(), String> {
    let Suite {
        insts,
        forms,
        skipped,
    } = instances_for(arch, &args.opcodes)?;
    let insts: Vec<Instance> = match args.shard {
        Some(s) => insts
            .into_iter()
            .filter(|i| s.contains_key(&i.key))
            .collect(),
        None => insts,
    };
    let insts = &insts;
    let n = insts.len();
    let shard = args
        .shard
        .map_or(String::new(), |s| format!(" (shard {s})"));
    eprintln!("isa-forms {arch}: {forms} forms, {n} instances{shard}");
    let mut outcomes: Vec<Outcome> = vec![Outcome::default(); n];

    // 1 + 2: ptxas in batches, then the judge on each batch's cubin.
    let batches: Vec<Vec<usize>> = (0..n)
        .collect::<Vec<_>>()
        .chunks(BATCH)
        .map(|c| c.to_vec())
        .collect();
    let per_batch = corpus::par_map("isa-forms ptxas", &batches, |batch| {
        ptxas_batch(arch, insts, batch, !args.sema)
    });
    for b in per_batch {
        for (i, r) in b? {
            match r {
                Ok((v, cubin)) => {
                    outcomes[i].accepted = true;
                    outcomes[i].judge = v;
                    outcomes[i].ptxas_cubin = Some(cubin);
                }
                Err(why) => outcomes[i].rejected = Some(why),
            }
        }
    }

    // kiln's checker on every probe ptxas rejects: it must reject it too.
    let rejected: Vec<usize> = (0..n).filter(|i| outcomes[*i].rejected.is_some()).collect();
    let missed = corpus::par_map("isa-forms sema", &rejected, |&i| {
        sema_accepts(arch, i, &insts[i])
    });
    for (i, m) in rejected.iter().zip(missed) {
        outcomes[*i].missed = m;
    }

    // 3: kiln on every accepted probe.
    let accepted: Vec<usize> = (0..n).filter(|i| outcomes[*i].accepted).collect();
    if args.sema {
        // The checker alone: an error on a probe ptxas accepts is a false error.
        let ok = corpus::par_map("isa-forms sema (accepted)", &accepted, |&i| {
            sema_accepts(arch, i, &insts[i])
        });
        for (i, ok) in accepted.iter().zip(ok) {
            outcomes[*i].kiln = if ok {
                Verdict::NotRun
            } else {
                Verdict::FalseError(sema_first_error(arch, *i, &insts[*i]))
            };
        }
        return report(arch, forms, insts, &outcomes, &skipped, args.verbose);
    }
    let verdicts = corpus::par_map("isa-forms kiln", &accepted, |&i| {
        let o = &outcomes[i];
        kiln(arch, i, &insts[i], &o.judge, o.ptxas_cubin.as_deref())
    });
    for (i, v) in accepted.iter().zip(verdicts) {
        outcomes[*i].kiln = v;
    }

    report(arch, forms, insts, &outcomes, &skipped, args.verbose)
}

/// ptxas on the probes `batch` of `insts` in one module: the kernels on the lines of its
/// errors are taken out and the rest compiled again (one probe at a time when an error names
/// no line); the judge runs on the accepted ones.
fn ptxas_batch(
    arch: &str,
    insts: &[Instance],
    batch: &[usize],
    run_judge: bool,
) -> Result<Vec<(usize, PtxasVerdict)>, String> {
    let mut left: Vec<usize> = batch.to_vec();
    let mut res: Vec<(usize, PtxasVerdict)> = Vec::new();
    loop {
        if left.is_empty() {
            break;
        }
        let members: Vec<(usize, &Instance)> = left.iter().map(|i| (*i, &insts[*i])).collect();
        let (text, lines) = module(arch, &members);
        match corpus::ptxas_cubin(&text, arch, &[]) {
            Ok(PtxasOutcome::Ok { cubin, .. }) => {
                let image = std::fs::read(&cubin)
                    .map_err(|e| e.to_string())
                    .and_then(|b| emu::load::decode(&b).map_err(|e| e.to_string()));
                for &i in &left {
                    let v = match &image {
                        Ok(_) if !run_judge => Verdict::NotRun,
                        Ok(image) => judge(arch, i, &insts[i], image),
                        Err(e) => Verdict::Unsupported(format!("load: {e}")),
                    };
                    res.push((i, Ok((v, cubin.clone()))));
                }
                break;
            }
            Ok(PtxasOutcome::Rejected(msg)) => {
                let bad: Vec<usize> = error_lines(&msg)
                    .into_iter()
                    .filter_map(|l| {
                        lines
                            .iter()
                            .find(|(_, a, b)| (*a..=*b).contains(&l))
                            .map(|(i, _, _)| *i)
                    })
                    .collect();
                if bad.is_empty() {
                    if left.len() == 1 {
                        res.push((left[0], Err(first_error(&msg))));
                        break;
                    }
                    // No line to blame: one probe at a time.
                    let mut rest = Vec::new();
                    for &i in &left {
                        let t = single(arch, i, &insts[i]);
                        match corpus::ptxas_cubin(&t, arch, &[]) {
                            Ok(PtxasOutcome::Ok { .. }) => rest.push(i),
                            Ok(PtxasOutcome::Rejected(m)) => res.push((i, Err(first_error(&m)))),
                            Err(e) => res.push((i, Err(e))),
                        }
                    }
                    left = rest;
                    continue;
                }
                for &i in &bad {
                    if !res.iter().any(|(j, _)| *j == i) {
                        let why = msg
                            .lines()
                            .find(|l| {
                                error_lines(l).first().is_some_and(|l| {
                                    lines
                                        .iter()
                                        .any(|(j, a, b)| *j == i && (*a..=*b).contains(l))
                                })
                            })
                            .unwrap_or("rejected");
                        res.push((i, Err(first_error(why))));
                    }
                }
                left.retain(|i| !bad.contains(i));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(res)
}

/// ptxas's first error line, without the file name.
fn first_error(msg: &str) -> String {
    let l = msg
        .lines()
        .find(|l| l.contains("error") || l.contains("fatal"))
        .unwrap_or(msg.lines().next().unwrap_or(""));
    match l.find("; ") {
        Some(i) => l[i + 2..].trim().to_string(),
        None => l.trim().to_string(),
    }
}

fn report(
    arch: &str,
    forms: usize,
    insts: &[Instance],
    outcomes: &[Outcome],
    skipped: &BTreeMap<String, String>,
    verbose: bool,
) -> Result<(), String> {
    let mut tsv =
        String::from("# key\tsection\tptxas\tjudge\tkiln\tptxas or judge detail\tkiln detail\n");
    let mut per_op: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut unsupported: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut problems = Vec::new();
    let (mut accepted, mut compiled, mut verified, mut unsup, mut nc) = (0, 0, 0, 0, 0);
    let (mut vs_ptxas, mut unverifiable, mut missed) = (0, 0, 0);
    let (mut miscompiled, mut false_errors, mut panics) = (0, 0, 0);
    let (mut judge_equal, mut judge_differ, mut judge_unsup) = (0, 0, 0);
    for (inst, o) in insts.iter().zip(outcomes) {
        let opcode = inst.mnemonic.split('.').next().unwrap_or("");
        let row = per_op.entry(opcode).or_default();
        row[0] += 1;
        let ptxas = if o.accepted { "accepted" } else { "rejected" };
        let clean = |t: &str| t.replace(['\t', '\n'], " ");
        let _ = writeln!(
            tsv,
            "{}\t{} (isa.txt:{})\t{ptxas}\t{}\t{}\t{}\t{}",
            inst.key,
            inst.section,
            inst.form_line,
            o.judge.word(),
            match (o.accepted, o.missed) {
                (false, true) => "accepts",
                (false, false) => "rejects",
                _ => o.kiln.word(),
            },
            clean(o.rejected.as_deref().unwrap_or(o.judge.detail())),
            clean(o.kiln.detail()),
        );
        if o.missed {
            missed += 1;
            problems.push(format!(
                "kiln accepts what ptxas rejects: {}: {}",
                inst.key,
                o.rejected.as_deref().unwrap_or("")
            ));
        }
        if !o.accepted {
            continue;
        }
        accepted += 1;
        row[1] += 1;
        match &o.judge {
            Verdict::Equal => judge_equal += 1,
            Verdict::Differ(d) => {
                judge_differ += 1;
                problems.push(format!("judge differs: {}: {d}", inst.key));
            }
            Verdict::Unsupported(_) => judge_unsup += 1,
            Verdict::Panic(p) => {
                panics += 1;
                problems.push(format!("judge panics: {}: {p}", inst.key));
            }
            _ => {}
        }
        match &o.kiln {
            Verdict::Equal => {
                compiled += 1;
                verified += 1;
                row[2] += 1;
                row[3] += 1;
            }
            Verdict::EqualToPtxas => {
                compiled += 1;
                verified += 1;
                vs_ptxas += 1;
                row[2] += 1;
                row[3] += 1;
            }
            Verdict::Unverifiable(u) => {
                compiled += 1;
                unverifiable += 1;
                row[2] += 1;
                problems.push(format!("unverifiable: {}: {u}", inst.key));
            }
            Verdict::Differ(d) => {
                compiled += 1;
                row[2] += 1;
                miscompiled += 1;
                problems.push(format!("MISCOMPILED: {}: {d}", inst.key));
            }
            Verdict::NotComparable(r) => {
                compiled += 1;
                row[2] += 1;
                nc += 1;
                if verbose {
                    problems.push(format!("not comparable: {}: {r}", inst.key));
                }
            }
            Verdict::Unsupported(r) => {
                unsup += 1;
                unsupported.entry(r.clone()).or_default().push(&inst.key);
            }
            Verdict::FalseError(m) => {
                false_errors += 1;
                problems.push(format!("kiln rejects: {}: {m}", inst.key));
            }
            Verdict::Panic(p) => {
                panics += 1;
                problems.push(format!("kiln panics: {}: {p}", inst.key));
            }
            Verdict::NotRun => {}
        }
    }
    let path = corpus::workspace_root()
        .join("target")
        .join(format!("isa-forms-{arch}.tsv"));
    std::fs::write(&path, tsv).map_err(|e| format!("writing {}: {e}", path.display()))?;

    println!("isa-forms {arch}: per opcode (instances, accepted by ptxas, compiled, verified):");
    for (op, r) in &per_op {
        println!("  {op:<10} {:>5} {:>5} {:>5} {:>5}", r[0], r[1], r[2], r[3]);
    }
    println!("unsupported instances by reason ({}):", unsupported.len());
    let mut by_count: Vec<_> = unsupported.iter().collect();
    by_count.sort_by_key(|(r, v)| (std::cmp::Reverse(v.len()), (*r).clone()));
    for (r, v) in by_count {
        let eg: Vec<&str> = v.iter().take(3).copied().collect();
        println!("  {:>5}  {r}  (e.g. {})", v.len(), eg.join("; "));
    }
    if !skipped.is_empty() {
        println!("forms not instantiated (opcode: why):");
        for (op, why) in skipped {
            println!("  {op}: {why}");
        }
    }
    for p in problems.iter().take(if verbose { usize::MAX } else { 60 }) {
        println!("{p}");
    }
    if problems.len() > 60 && !verbose {
        println!("... {} more (see {})", problems.len() - 60, path.display());
    }
    println!(
        "RESULT isa-forms {arch} forms={forms} instances={} accepted_by_ptxas={accepted} compiled={compiled} verified={verified} verified_vs_ptxas={vs_ptxas} unverifiable={unverifiable} unsupported={unsup} not_comparable={nc} miscompiled={miscompiled} false_errors={false_errors} missed_errors={missed} judge_equal={judge_equal} judge_differ={judge_differ} judge_unsupported={judge_unsup} panics={panics}",
        insts.len()
    );
    Ok(())
}
