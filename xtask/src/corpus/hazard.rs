//! The control-code hazard checker on ptxas's output.
//!
//! - `cargo xtask hazard-learn --arch sm_XX [--dir DIR]`: compiles every corpus file the arch
//!   allows with ptxas (cached), learns the latency table from the code sections and writes
//!   `crates/hazard/tables/<sm>.txt` (the generator of the committed tables).
//! - `cargo xtask corpus hazard --arch sm_XX [--dir DIR] [--no-perturb]`: checks every code
//!   section with the committed table (expects no hazard on ptxas's code), then perturbs ptxas's
//!   control fields (`hazard::perturb`) and counts how many injected errors are reported.
//!   Prints `RESULT hazard <arch> kernels= instructions= hazards= panics=` and
//!   `RESULT hazard-perturb <arch> injected= reported=`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{CorpusArgs, PtxasOutcome};

/// A kernel's code section: its name and instruction words.
type Section = (String, Vec<u128>);

/// The code sections of the cubin ptxas makes of one corpus file for `arch`: `None` when the
/// file's `.target` does not allow the arch or ptxas rejects it.
fn file_sections(
    args: &CorpusArgs,
    arch: &str,
    rel: &PathBuf,
) -> Result<Option<Vec<Section>>, String> {
    let text = super::read_text(&args.dir.join(rel))?;
    let Some(a) = super::arch_for_file(&super::scan_targets(&text), arch) else {
        return Ok(None);
    };
    let cubin = match super::ptxas_cubin(&text, &a, &[])? {
        PtxasOutcome::Ok { cubin, .. } => cubin,
        PtxasOutcome::Rejected(_) => return Ok(None),
    };
    let secs = super::disasm::text_sections(&cubin)?;
    Ok(Some(
        secs.into_iter()
            .map(|(name, bytes)| (name, sass::words(&bytes)))
            .collect(),
    ))
}

fn accepted_files(args: &CorpusArgs) -> Vec<PathBuf> {
    args.ptx_files()
        .into_iter()
        .filter(|f| super::is_accepted(f))
        .collect()
}

/// `cargo xtask hazard-learn --arch sm_XX [--dir DIR]`.
pub fn learn(raw: &[String]) -> Result<(), String> {
    let args = CorpusArgs::parse(raw)?;
    let arch = args.require_arch("hazard-learn")?.to_string();
    let sm = sass::normalize_sm(&arch).ok_or_else(|| format!("bad --arch `{arch}`"))?;
    if !hazard::TABLES.iter().any(|(n, _)| *n == sm) {
        return Err(format!("hazard::TABLES has no entry for {sm}"));
    }
    super::quiet_panics();
    // The corpus, then each `--also DIR` (e.g. test-data/hazard-probe: kernels written to make
    // ptxas show dependences the corpus rarely has). Absolute paths, so that `file_sections`'
    // join with the corpus folder keeps them.
    let mut files = accepted_files(&args);
    let mut also_args = String::new();
    let mut it = args.rest.iter();
    while let Some(a) = it.next() {
        let dir = if a == "--also" {
            it.next().ok_or("--also needs a folder")?.clone()
        } else if let Some(v) = a.strip_prefix("--also=") {
            v.to_string()
        } else if a == "--fuzz" {
            // `--fuzz SEED:COUNT`: the codegen fuzzer's programs as probes (written under
            // target/, regenerated identically from the seed).
            let spec = it.next().ok_or("--fuzz needs SEED:COUNT")?;
            let (seed, count) = spec
                .split_once(':')
                .and_then(|(s, c)| Some((s.parse::<u64>().ok()?, c.parse::<usize>().ok()?)))
                .ok_or("--fuzz needs SEED:COUNT")?;
            let dir =
                super::workspace_root().join(format!("target/hazard-fuzz-probe/{seed}-{count}"));
            crate::fuzz_codegen::emit_programs(
                &dir,
                seed,
                count,
                crate::fuzz_codegen::DEFAULT_SIZE,
            )?;
            also_args.push_str(&format!(" --fuzz {spec}"));
            let extra = super::ptx_files(&dir);
            files.extend(extra.into_iter().map(|f| dir.join(f)));
            continue;
        } else {
            return Err(format!("hazard-learn: unknown argument `{a}`"));
        };
        also_args.push_str(&format!(" --also {dir}"));
        let dir = std::fs::canonicalize(&dir).map_err(|e| format!("{dir}: {e}"))?;
        let extra = super::ptx_files(&dir);
        if extra.is_empty() {
            return Err(format!("{}: no PTX files", dir.display()));
        }
        files.extend(extra.into_iter().map(|f| dir.join(f)));
    }
    // Pass 1: which classes ptxas scoreboards. Pass 2: the dependences.
    let counts = super::par_map("hazard-learn classes", &files, |rel| {
        let mut l = hazard::learn::Learner::default();
        let mut digest = Vec::new();
        let r = file_sections(&args, &arch, rel).and_then(|secs| {
            for (name, words) in secs.unwrap_or_default() {
                for w in &words {
                    digest.extend_from_slice(&w.to_le_bytes());
                }
                let nodes = hazard::nodes(&sm, &words).map_err(|e| format!("{name}: {e}"))?;
                l.count_classes(&nodes);
            }
            Ok(())
        });
        (l, r, super::fnv1a64(&[&digest]))
    });
    let mut all = hazard::learn::Learner::default();
    let mut corpus_hash = Vec::new();
    for (l, r, h) in counts {
        r.map_err(|e| format!("learning failed: {e}"))?;
        corpus_hash.extend_from_slice(&h.to_le_bytes());
        all.merge(l);
    }
    let variable = all.variable_classes();
    let results = super::par_map("hazard-learn", &files, |rel| {
        let mut l = hazard::learn::Learner::default();
        let mut err = None;
        match file_sections(&args, &arch, rel) {
            Ok(Some(secs)) => {
                for (name, words) in secs {
                    let label = format!("{}:{name}", rel.display());
                    let r = super::catch(|| {
                        let nodes = hazard::nodes(&sm, &words)?;
                        l.add_section(&label, &nodes, &variable);
                        Ok::<(), String>(())
                    });
                    match r {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) | Err(e) => err = Some(format!("{label}: {e}")),
                    }
                }
            }
            Ok(None) => {}
            Err(e) => err = Some(e),
        }
        (l, err)
    });
    for (l, err) in results {
        if let Some(e) = err {
            return Err(format!("learning failed: {e}"));
        }
        all.merge(l);
    }
    println!(
        "{} sections, {} instructions",
        all.sections, all.instructions
    );
    let header = vec![
        format!(
            "kiln hazard latency table for {sm}: generated by `cargo xtask hazard-learn --arch {sm}{also_args}`; do not edit"
        ),
        format!(
            "generator {}; oracle ptxas {}; model-hash {}; corpus-hash {:016x}",
            hazard::learn::GENERATOR,
            crate::oracle::PTXAS_VERSION,
            hazard::learn::model_hash(),
            super::fnv1a64(&[&corpus_hash])
        ),
        format!(
            "sections {}; instructions {}",
            all.sections, all.instructions
        ),
    ];
    let table = all.finish(&sm, header);
    if !all.violations.is_empty() {
        println!("dependences ptxas leaves to nothing (model errors or rules ptxas breaks):");
        let mut v: Vec<_> = all.violations.iter().collect();
        v.sort_by_key(|e| std::cmp::Reverse(e.1.0));
        for ((kind, a, b), (n, ex)) in v.iter().take(40) {
            println!("  {n:>7} {kind} {a} -> {b}   e.g. {ex}");
        }
    }
    if !all.reuse.is_empty() {
        println!("scoreboard reuse while pending (pending class -> new class):");
        let mut v: Vec<_> = all.reuse.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1));
        for ((a, b), n) in v.iter().take(30) {
            println!("  {n:>7} {a} -> {b}");
        }
    }
    let path = super::workspace_root().join(format!("crates/hazard/tables/{sm}.txt"));
    std::fs::write(&path, table.to_text()).map_err(|e| format!("{}: {e}", path.display()))?;
    println!(
        "wrote {} ({} classes, {} raw pairs, {} war pairs)",
        path.display(),
        table.classes.len(),
        table.raw.len(),
        table.war.len()
    );
    Ok(())
}

#[derive(Default)]
struct FileResult {
    kernels: usize,
    instructions: usize,
    undecoded: usize,
    hazards: usize,
    panics: usize,
    injected: BTreeMap<&'static str, usize>,
    reported: BTreeMap<&'static str, usize>,
    examples: Vec<String>,
    missed: Vec<String>,
    error: Option<String>,
}

/// `cargo xtask corpus hazard --arch sm_XX`.
pub fn run(args: &CorpusArgs) -> Result<(), String> {
    let arch = args.require_arch("hazard")?.to_string();
    let sm = sass::normalize_sm(&arch).ok_or_else(|| format!("bad --arch `{arch}`"))?;
    let table = hazard::latency_table(&sm).ok_or_else(|| {
        format!("no latency table for {sm} (run cargo xtask hazard-learn --arch {sm})")
    })?;
    let perturb = !args.rest.iter().any(|a| a == "--no-perturb");
    super::quiet_panics();
    let files = accepted_files(args);
    let results = super::par_map("hazard", &files, |rel| {
        let mut r = FileResult::default();
        let secs = match file_sections(args, &arch, rel) {
            Ok(Some(s)) => s,
            Ok(None) => return r,
            Err(e) => {
                r.error = Some(e);
                return r;
            }
        };
        for (name, words) in secs {
            r.kernels += 1;
            r.instructions += words.len();
            let label = format!("{}:{name}", rel.display());
            let out = super::catch(|| {
                let nodes = hazard::nodes(&sm, &words)?;
                let found = hazard::check_nodes(table, &nodes);
                let pert = if perturb {
                    hazard::perturb::run(table, &nodes)
                } else {
                    Vec::new()
                };
                Ok::<_, String>((
                    nodes.iter().filter(|n| n.effects.is_none()).count(),
                    found,
                    pert,
                ))
            });
            match out {
                Ok(Ok((undecoded, found, pert))) => {
                    r.undecoded += undecoded;
                    r.hazards += found.len();
                    for h in found.iter().take(3) {
                        r.examples.push(format!("{label}: {h}"));
                    }
                    for p in pert {
                        *r.injected.entry(p.kind).or_default() += 1;
                        if p.reported {
                            *r.reported.entry(p.kind).or_default() += 1;
                        } else if r.missed.len() < 3 {
                            r.missed.push(format!("{label}: {}", p.description));
                        }
                    }
                }
                Ok(Err(e)) => r.error = Some(format!("{label}: {e}")),
                Err(_) => r.panics += 1,
            }
        }
        r
    });
    let mut tot = FileResult::default();
    let mut errors = 0;
    for r in results {
        if let Some(e) = &r.error {
            errors += 1;
            if errors <= 5 {
                eprintln!("error: {e}");
            }
        }
        tot.kernels += r.kernels;
        tot.instructions += r.instructions;
        tot.undecoded += r.undecoded;
        tot.hazards += r.hazards;
        tot.panics += r.panics;
        for (k, v) in r.injected {
            *tot.injected.entry(k).or_default() += v;
        }
        for (k, v) in r.reported {
            *tot.reported.entry(k).or_default() += v;
        }
        tot.examples.extend(r.examples);
        tot.missed.extend(r.missed);
    }
    if !tot.examples.is_empty() {
        println!("hazards on ptxas's code (first 30):");
        for e in tot.examples.iter().take(30) {
            println!("  {e}");
        }
    }
    println!(
        "{} instructions could not be decoded (checked through their control fields only)",
        tot.undecoded
    );
    if errors > 0 {
        println!("{errors} files had errors (above)");
    }
    println!(
        "RESULT hazard {arch} kernels={} instructions={} hazards={} panics={}",
        tot.kernels, tot.instructions, tot.hazards, tot.panics
    );
    if perturb {
        for (k, n) in &tot.injected {
            println!(
                "perturbation {k}: injected={n} reported={}",
                tot.reported.get(k).copied().unwrap_or(0)
            );
        }
        if !tot.missed.is_empty() {
            println!("missed perturbations (first 20):");
            for m in tot.missed.iter().take(20) {
                println!("  {m}");
            }
        }
        let inj: usize = tot.injected.values().sum();
        let rep: usize = tot.reported.values().sum();
        println!("RESULT hazard-perturb {arch} injected={inj} reported={rep}");
    }
    Ok(())
}

/// The hazard checker's reports on `kernel`'s code in a cubin (its `.text.<kernel>` section).
pub fn kernel_hazards(cubin: &[u8], kernel: &str) -> Vec<String> {
    let Ok(c) = cubin::read(cubin) else {
        return Vec::new();
    };
    let sm = format!("sm_{}", c.header.sm());
    let name = format!(".text.{kernel}");
    c.sections
        .iter()
        .filter(|s| s.name == name)
        .flat_map(|s| {
            let words = sass::words(&cubin::write::encode_data(&s.data));
            hazard::check(&sm, &words).unwrap_or_default()
        })
        .map(|h| format!("{:#06x}: {}", h.pc, h.message))
        .collect()
}
