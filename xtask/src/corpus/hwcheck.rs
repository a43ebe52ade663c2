//! `cargo xtask corpus hwcheck [--dir DIR]`: replays what kiln's cubins did on real GPUs
//! (`../shared/hardware/*/`, or `DIR/*/`) without a GPU.
//!
//! A run folder holds `verdicts-corpus-<sm>.tsv` (one row per corpus kernel: job, file,
//! kernel, verdict, ...) and `jobs/jobs.jsonl` (each job's launch and the SHA-1 of kiln's cubin
//! as built then, blobs in `jobs/blobs/`). Every `differ*` or `kiln_timeout` row is a case;
//! the launch is the emulator harness's (`harness::Config`, seed 1, the job's grid,
//! block and dynamic shared memory: `gpu-check prepare` made the GPU's inputs the same way).
//! Each case is triaged mechanically:
//!
//! * **kiln bug, sm_90 barrier**: the old cubin holds a shadow encoding
//!   (`sass::prefer::Shadow`: sm_90 `BAR.SYNC` with a hidden `RZ` thread count). *Flagged*:
//!   the emulator does not call the old cubin equal to the interpreter. *Fixed*: today's cubin
//!   holds no shadow word and the emulator runs it equal to the interpreter (or the launch is
//!   outside the kernel's contract, below).
//! * **outside the contract**: the PTX's result at the recorded launch depends on how the
//!   interpreter interleaves its threads (`harness::schedule_dependence`): a data race
//!   or order-dependent atomics in the PTX itself.
//! * **rounding** (`test-data/hardware/triage.tsv`): kiln and ptxas round the same PTX
//!   differently in IEEE-valid ways; listed with the evidence, not accepted as final.
//! * otherwise **unexplained**.
//!
//! Runs folders may also hold `triton/layernorm_kernel.{ptx,kiln.cubin}`: Triton's layernorm
//! as kiln compiled it for the run, replayed at a launch like Triton's (128 threads).
//!
//! Last line: `RESULT hwcheck cases=<n> kiln_bugs=<n> fixed=<n> old_cubin_flagged=<n>
//! contract=<n> rounding=<n> ptxas_differs=<n> unexplained=<n>`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::json::{self, Json};

/// One recorded case and what the replay found.
struct Case {
    label: String,
    class: Class,
    old: String,
    new: String,
}

#[derive(PartialEq)]
enum Class {
    KilnBug {
        flagged: bool,
        fixed: bool,
    },
    /// Control codes too short for the hardware: flagged by the hazard checker (the first
    /// report), fixed when today's code has none and runs equal to the interpreter.
    KilnBugTiming {
        first: String,
        fixed: bool,
    },
    /// Other results than the PTX's (rounding: a `mul` + `add` ptxas contracts and old kiln
    /// did not) that the emulator shows in the old cubin and not in today's.
    KilnBugFloat {
        first: String,
    },
    Contract(String),
    Rounding(String),
    /// kiln's result is the interpreter's and ptxas's is not (evidence in the triage file).
    PtxasDiffers(String),
    Unexplained(String),
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut root = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dir" => root = Some(PathBuf::from(it.next().ok_or("--dir needs a value")?)),
            other => return Err(format!("corpus hwcheck: unknown argument `{other}`")),
        }
    }
    let root = root
        .unwrap_or_else(|| super::workspace_root().join("../shared/hardware"))
        .canonicalize()
        .map_err(|e| format!("hardware folder: {e}"))?;
    let corpus = super::default_dir().ok_or("corpus hwcheck: no corpus (../shared/corpus)")?;
    let triage = read_triage(&super::workspace_root().join("test-data/hardware/triage.tsv"))?;
    super::quiet_panics();
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map_err(|e| format!("{}: {e}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    runs.sort();
    let mut cases = Vec::new();
    for run in &runs {
        for (arch, rows) in verdict_files(run)? {
            let jobs = read_jobs(&run.join("jobs/jobs.jsonl"))?;
            let replayed = super::par_map("hwcheck", &rows, |row| {
                replay(run, &corpus, &arch, row, &jobs, &triage)
            });
            cases.extend(replayed);
        }
        let ln = run.join("triton/layernorm_kernel.kiln.cubin");
        if ln.is_file() {
            cases.push(layernorm(run, &ln));
        }
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &cases {
        let (class, detail) = match &c.class {
            Class::KilnBug { flagged, fixed } => {
                *counts.entry("kiln_bugs").or_default() += 1;
                *counts.entry("old_cubin_flagged").or_default() += usize::from(*flagged);
                *counts.entry("fixed").or_default() += usize::from(*fixed);
                (
                    "kiln-bug",
                    format!(
                        "sm_90 barrier (hidden RZ thread count); flagged={flagged} fixed={fixed}"
                    ),
                )
            }
            Class::KilnBugTiming { first, fixed } => {
                *counts.entry("kiln_bugs").or_default() += 1;
                *counts.entry("old_cubin_flagged").or_default() += 1;
                *counts.entry("fixed").or_default() += usize::from(*fixed);
                (
                    "kiln-bug",
                    format!("control codes (hazard checker: {first}); fixed={fixed}"),
                )
            }
            Class::KilnBugFloat { first } => {
                *counts.entry("kiln_bugs").or_default() += 1;
                *counts.entry("old_cubin_flagged").or_default() += 1;
                *counts.entry("fixed").or_default() += 1;
                (
                    "kiln-bug",
                    format!("results (the emulator on the old cubin: {first}); fixed=true"),
                )
            }
            Class::Contract(r) => {
                *counts.entry("contract").or_default() += 1;
                ("contract", r.clone())
            }
            Class::Rounding(r) => {
                *counts.entry("rounding").or_default() += 1;
                ("rounding", r.clone())
            }
            Class::PtxasDiffers(r) => {
                *counts.entry("ptxas_differs").or_default() += 1;
                ("ptxas-differs", r.clone())
            }
            Class::Unexplained(r) => {
                *counts.entry("unexplained").or_default() += 1;
                ("unexplained", r.clone())
            }
        };
        println!(
            "{class:<12} {}\n             {detail}\n             old cubin: {}\n             today: {}",
            c.label, c.old, c.new
        );
    }
    let n = |k: &str| counts.get(k).copied().unwrap_or(0);
    println!(
        "RESULT hwcheck cases={} kiln_bugs={} fixed={} old_cubin_flagged={} contract={} rounding={} ptxas_differs={} unexplained={}",
        cases.len(),
        n("kiln_bugs"),
        n("fixed"),
        n("old_cubin_flagged"),
        n("contract"),
        n("rounding"),
        n("ptxas_differs"),
        n("unexplained")
    );
    Ok(())
}

/// The manual triage: (file, kernel) -> (class, evidence).
type Triage = BTreeMap<(String, String), (String, String)>;

/// One verdict row: (job id, file, kernel, verdict).
type Row = (String, String, String, String);

/// The `verdicts-corpus-<sm>.tsv` files of a run folder: (arch, rows that are cases).
fn verdict_files(run: &Path) -> Result<Vec<(String, Vec<Row>)>, String> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(run)
        .map_err(|e| format!("{}: {e}", run.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(arch) = name
            .strip_prefix("verdicts-corpus-")
            .and_then(|n| n.strip_suffix(".tsv"))
        else {
            continue;
        };
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let rows = text
            .lines()
            .skip(1)
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                let v = *f.get(3)?;
                (v.starts_with("differ") || v == "kiln_timeout").then(|| {
                    (
                        f[0].to_string(),
                        f[1].to_string(),
                        f[2].to_string(),
                        v.to_string(),
                    )
                })
            })
            .collect();
        out.push((arch.to_string(), rows));
    }
    Ok(out)
}

/// `jobs.jsonl`: job id -> the job's object.
fn read_jobs(path: &Path) -> Result<BTreeMap<String, Json>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let j = json::parse(line)?;
        if let Some(id) = j.get("id").and_then(Json::as_str) {
            out.insert(id.to_string(), j);
        }
    }
    Ok(out)
}

/// `test-data/hardware/triage.tsv`: `file<TAB>kernel<TAB>class<TAB>evidence`, for causes a
/// replay cannot establish by itself (rounding). (file, kernel) -> (class, evidence).
fn read_triage(path: &Path) -> Result<Triage, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(BTreeMap::new());
    };
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        if f.len() != 4 {
            return Err(format!("{}:{}: expected 4 columns", path.display(), n + 1));
        }
        out.insert(
            (f[0].to_string(), f[1].to_string()),
            (f[2].to_string(), f[3].to_string()),
        );
    }
    Ok(out)
}

/// Words of a cubin's code that decode to a shadow encoding (`sass::prefer::Shadow`).
fn shadow_words(cubin: &[u8]) -> Result<usize, String> {
    let c = cubin::read(cubin).map_err(|e| e.to_string())?;
    let sm = format!("sm_{}", c.header.sm());
    let table = sass::table(&sm).ok_or_else(|| format!("no table for {sm}"))?;
    let mut n = 0;
    for s in &c.sections {
        if !s.name.starts_with(".text.") {
            continue;
        }
        for w in sass::words(&cubin::write::encode_data(&s.data)) {
            if table.lookup(w).is_some_and(|e| table.is_shadow(e)) {
                n += 1;
            }
        }
    }
    Ok(n)
}

fn verdict_text(v: &harness::Verdict) -> String {
    match v {
        harness::Verdict::Equal => "equal to the interpreter".into(),
        harness::Verdict::Differ(d) => format!("differs: {d}"),
        harness::Verdict::Unsupported(r) => format!("emulator refuses: {r}"),
        harness::Verdict::NotComparable(r) => format!("not comparable: {r}"),
    }
}

/// Today's kiln cubin of `text` for `arch`, or why there is none.
fn compile_today(path: &Path, text: &str, arch: &str) -> Result<Vec<u8>, String> {
    let sm = db::Sm::parse(arch).ok_or_else(|| format!("bad arch {arch}"))?;
    super::catch(|| {
        let mut database = db::RootDatabase::default();
        let file = database.add_file(path, text.as_bytes());
        let out = db::cubin(
            &database,
            db::FileTarget::new(&database, file, db::Target::new(sm)),
        );
        out.bytes.clone().ok_or_else(|| {
            let first = out.diagnostics.first().map(|d| d.message.clone());
            format!(
                "kiln no longer compiles it: {}",
                first.unwrap_or_else(|| "no cubin".into())
            )
        })
    })?
}

fn replay(
    run: &Path,
    corpus: &Path,
    arch: &str,
    (id, file, kernel, verdict): &Row,
    jobs: &BTreeMap<String, Json>,
    triage: &Triage,
) -> Case {
    let label = format!("{file} {kernel} [{verdict}, job {id}]");
    let unexplained = |why: String| Case {
        label: label.clone(),
        class: Class::Unexplained(why),
        old: String::new(),
        new: String::new(),
    };
    let Some(job) = jobs.get(id) else {
        return unexplained("the job is not recorded in jobs/jobs.jsonl".into());
    };
    let dims = |key: &str| -> [u32; 3] {
        let mut d = [1u32; 3];
        for (k, v) in job
            .get(key)
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .take(3)
            .enumerate()
        {
            d[k] = v.as_f64().unwrap_or(1.0) as u32;
        }
        d
    };
    let cfg = harness::Config {
        seed: 1,
        grid: dims("grid"),
        block: dims("block"),
        dynamic_shared: job
            .get("shared")
            .and_then(Json::as_f64)
            .map_or(harness::Config::default().dynamic_shared, |v| v as u32),
        ..harness::Config::default()
    };
    let ptx_path = corpus.join(file);
    let Ok(text) = super::read_text(&ptx_path) else {
        return unexplained(format!("{} is not in the corpus", ptx_path.display()));
    };
    let Some(old) = job
        .get("kiln")
        .and_then(Json::as_str)
        .and_then(|sha| std::fs::read(run.join("jobs/blobs").join(sha)).ok())
    else {
        return unexplained("kiln's cubin of the run is not recorded".into());
    };
    let old_shadows = shadow_words(&old).unwrap_or(0);
    let old_v = super::catch(|| harness::compare(&text, &old, kernel, &cfg))
        .unwrap_or_else(|p| harness::Verdict::Unsupported(format!("panic: {p}")));
    let today = compile_today(&ptx_path, &text, arch);
    let ((new_v, zero_lanes), new_shadows, today_hazards) = match &today {
        Ok(new) => (
            compare_today(&text, new, kernel, &cfg),
            shadow_words(new).unwrap_or(0),
            Some(super::hazard::kernel_hazards(new, kernel)),
        ),
        Err(e) => ((harness::Verdict::Unsupported(e.clone()), false), 0, None),
    };
    // The launch the GPU ran (its parameter bytes and buffers, recorded in the job) may take
    // paths the harness's own inputs for that shape do not (cuda-samples' bitonic sort only
    // sorts when `arrayLength` reaches 3): where the generated launch shows nothing, the old
    // cubin and today's are compared on the recorded one.
    let (old_v, (new_v, zero_lanes)) = match (&old_v, recorded_inputs(run, job)) {
        (harness::Verdict::Equal, Some(inputs)) => {
            let on_recorded = |cubin: &[u8]| {
                super::catch(|| {
                    harness::compare_with_inputs(&text, cubin, kernel, &cfg, inputs.clone())
                })
                .unwrap_or_else(|p| harness::Verdict::Unsupported(format!("panic: {p}")))
            };
            let old_rec = on_recorded(&old);
            if matches!(old_rec, harness::Verdict::Differ(_)) {
                let new_rec = match &today {
                    Ok(new) => on_recorded(new),
                    Err(e) => harness::Verdict::Unsupported(e.clone()),
                };
                (old_rec, (new_rec, false))
            } else {
                (old_v, (new_v, zero_lanes))
            }
        }
        _ => (old_v, (new_v, zero_lanes)),
    };
    let sm: u32 = arch.trim_start_matches("sm_").parse().unwrap_or(90);
    let race = super::catch(|| harness::schedule_dependence(&text, kernel, sm, &cfg))
        .ok()
        .and_then(Result::ok)
        .flatten();
    let old_text = format!("{} shadow word(s); {}", old_shadows, verdict_text(&old_v));
    let new_text = format!(
        "{} shadow word(s); {} hazard(s); {}{}",
        new_shadows,
        today_hazards.as_ref().map_or(0, Vec::len),
        verdict_text(&new_v),
        if zero_lanes {
            " (its shuffles read lanes outside the executing ones at every launch the harness makes, undefined in PTX: compared with both models reading 0 there)"
        } else {
            ""
        }
    );
    // The barrier bug explains a case when the old cubin's run reaches a shadow word (the
    // emulator refuses it there); one that never executes its shadow words is triaged on.
    let hit_shadow = matches!(&old_v, harness::Verdict::Unsupported(r) if r.contains(SHADOW));
    let old_hazards = super::hazard::kernel_hazards(&old, kernel);
    let class = if hit_shadow {
        let passes = match &new_v {
            harness::Verdict::Equal => true,
            // A launch outside the contract: today's cubin is not wrong there, nothing is.
            harness::Verdict::NotComparable(r) => race.is_some() || r.contains("data race"),
            _ => false,
        };
        Class::KilnBug {
            flagged: old_v != harness::Verdict::Equal,
            fixed: new_shadows == 0 && passes,
        }
    } else if !old_hazards.is_empty() {
        // Control codes the hardware does not honour: today's code must have none and run
        // equal to the interpreter.
        let new_clean = today_hazards.as_ref().is_some_and(Vec::is_empty);
        Class::KilnBugTiming {
            first: old_hazards[0].clone(),
            fixed: new_clean && new_v == harness::Verdict::Equal,
        }
    } else if let (harness::Verdict::Differ(d), harness::Verdict::Equal) = (&old_v, &new_v) {
        // The emulator now tells the old code from the PTX (the interpreter models ptxas's
        // contraction of mul + add, `hir::contract`) and today's code matches it.
        Class::KilnBugFloat { first: d.clone() }
    } else if let Some(r) = race {
        Class::Contract(r)
    } else if let harness::Verdict::NotComparable(r) = &old_v
        && (r.starts_with("sanitizer:") || r.starts_with("undefined behaviour"))
    {
        // The sanitizer finds a race or an uninitialized read at the launch the GPU ran, or
        // the kernel reads values PTX leaves undefined there (shuffles of absent lanes).
        Class::Contract(r.clone())
    } else if let Some((class, evidence)) = triage.get(&(file.clone(), kernel.clone())) {
        match class.as_str() {
            "rounding" => Class::Rounding(evidence.clone()),
            "ptxas-differs" => Class::PtxasDiffers(evidence.clone()),
            _ => Class::Unexplained(format!("triage says {class}: {evidence}")),
        }
    } else {
        Class::Unexplained("no kiln bug and no contract violation found by the replay".into())
    };
    Case {
        label,
        class,
        old: old_text,
        new: new_text,
    }
}

/// The inputs a job ran with on the GPU: its parameter bytes, and each buffer at the parameter
/// slot whose offset the job names (`None` when the job records no parameter block).
fn recorded_inputs(run: &Path, job: &Json) -> Option<harness::Inputs> {
    let blob = |sha: &str| std::fs::read(run.join("jobs/blobs").join(sha)).ok();
    let params = blob(job.get("params")?.as_str()?)?;
    let slots: Vec<u64> = job
        .get("slots")?
        .as_array()?
        .iter()
        .filter_map(|s| s.as_array()?.first()?.as_f64().map(|o| o as u64))
        .collect();
    let offsets = job.get("buffers")?.as_array()?;
    let bufs = job.get("bufs")?.as_array()?;
    let mut buffers = Vec::new();
    for (off, sha) in offsets.iter().zip(bufs) {
        let off = off.as_f64()? as u64;
        let index = slots.iter().position(|&o| o == off)?;
        buffers.push((index, off as usize, blob(sha.as_str()?)?));
    }
    Some(harness::Inputs {
        params,
        buffers,
        textures: Vec::new(),
        surfaces: Vec::new(),
        cooperative: false,
    })
}

/// The emulator's verdict on today's cubin ([`compare_with_retries`]). A kernel that reads
/// lanes outside the executing ones at every launch (undefined in PTX: cuda-samples'
/// `reduce7<T, 1/2/4>`, whose shuffles read lanes 4..31 of a 4-thread block) is not
/// comparable as it stands; it is then compared with both models reading 0 for those lanes
/// (`Config::zero_undefined_lanes`); the second value says whether that convention was used.
fn compare_today(
    ptx: &str,
    cubin: &[u8],
    kernel: &str,
    cfg: &harness::Config,
) -> (harness::Verdict, bool) {
    let v = compare_with_retries(ptx, cubin, kernel, cfg);
    match &v {
        harness::Verdict::NotComparable(r) if r.contains(UNDEFINED_LANES) => {
            let zero = harness::Config {
                zero_undefined_lanes: true,
                ..cfg.clone()
            };
            (compare_with_retries(ptx, cubin, kernel, &zero), true)
        }
        _ => (v, false),
    }
}

/// The harness's reason for a launch whose `shfl`s read lanes outside the executing lanes.
const UNDEFINED_LANES: &str = "SHFL read(s) of lanes outside the executing lanes";

/// What the emulator says when a run reaches a shadow word (`emu::load`).
const SHADOW: &str = "a form that prints like ptxas's but that ptxas never writes";

/// The emulator's verdict on `cubin` at `cfg`; when that launch is not comparable, the
/// harness's alternative launches (`harness::retry`, as the corpus stages use them), keeping the
/// first that compares.
fn compare_with_retries(
    ptx: &str,
    cubin: &[u8],
    kernel: &str,
    cfg: &harness::Config,
) -> harness::Verdict {
    let run = |c: &harness::Config| {
        super::catch(|| harness::compare(ptx, cubin, kernel, c))
            .unwrap_or_else(|p| harness::Verdict::Unsupported(format!("panic: {p}")))
    };
    let first = run(cfg);
    let harness::Verdict::NotComparable(reason) = &first else {
        return first;
    };
    for alt in harness::retry::alternatives(ptx, kernel, reason, cfg) {
        let v = run(&alt);
        if !matches!(v, harness::Verdict::NotComparable(_)) {
            return match v {
                harness::Verdict::Equal => harness::Verdict::Equal,
                other => other,
            };
        }
    }
    first
}

/// Triton's layernorm as kiln compiled it for the run, at a launch like Triton's: 4 warps
/// (its `.reqntid 128`), one row per CTA.
fn layernorm(run: &Path, cubin_path: &Path) -> Case {
    let label = format!("{} (Triton layernorm)", cubin_path.display());
    let ptx_path = run.join("triton/layernorm_kernel.ptx");
    let (old, text) = match (std::fs::read(cubin_path), super::read_text(&ptx_path)) {
        (Ok(o), Ok(t)) => (o, t),
        _ => {
            return Case {
                label,
                class: Class::Unexplained("the run lacks the PTX or the cubin".into()),
                old: String::new(),
                new: String::new(),
            };
        }
    };
    let cfg = harness::Config {
        seed: 1,
        grid: [4, 1, 1],
        block: [128, 1, 1],
        ..harness::Config::default()
    };
    let kernel = "layernorm_kernel";
    let old_shadows = shadow_words(&old).unwrap_or(0);
    let old_v = super::catch(|| harness::compare(&text, &old, kernel, &cfg))
        .unwrap_or_else(|p| harness::Verdict::Unsupported(format!("panic: {p}")));
    let (new_v, new_shadows) = match compile_today(&ptx_path, &text, "sm_90a") {
        Ok(new) => (
            compare_with_retries(&text, &new, kernel, &cfg),
            shadow_words(&new).unwrap_or(0),
        ),
        Err(e) => (harness::Verdict::Unsupported(e), 0),
    };
    let class = if old_shadows > 0 {
        Class::KilnBug {
            flagged: old_v != harness::Verdict::Equal,
            fixed: new_shadows == 0 && new_v == harness::Verdict::Equal,
        }
    } else {
        Class::Unexplained("no shadow word in the old cubin".into())
    };
    Case {
        label,
        class,
        old: format!("{old_shadows} shadow word(s); {}", verdict_text(&old_v)),
        new: format!("{new_shadows} shadow word(s); {}", verdict_text(&new_v)),
    }
}
