//! `gpu-check compare`: what the GPU did with each job, as verdicts.
//!
//! `RESULTS/<id>.txt` (written by `xtask/gpu/launch.py`) has one line per variant,
//! `<variant> status=<ok|error:NAME|timeout|skipped> crc=<hex,...> time_us=<f>`, for the
//! variants `ptxas`, `ptxas2` (ptxas's cubin again) and `kiln`, and for a kiln run whose
//! buffers differ from ptxas's, `diff buffer=<i> words=<n> first=<byte>:<ptxas>:<kiln>;...`.
//!
//! Verdicts, per job: `equal`; `differ:<ptxas|kiln|neither>=interp` (which side the
//! interpreter's result agrees with) on a launch the compile stage's check called comparable;
//! `differ_not_comparable:...` on one it did not (the sanitizer or the harness found the
//! launch outside the kernel's contract: its reason is in the job); `kiln_timeout` and
//! `kiln_fault` (ptxas's cubin ran); `ptxas_fault` (ptxas's own cubin faulted or hung: the
//! launch is bad, kiln's was not run); `nondeterministic` (ptxas's cubin wrote different
//! bytes in two runs); `missing` (no result). `compare` writes
//! `verdicts-corpus-<arch>.tsv` and `word-diffs-corpus-<arch>.json` next to the jobs, in the
//! layout of `../shared/hardware/<run>/`, so the directory is what `corpus hwcheck --dir`
//! replays.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::corpus::json::{self, Json};

/// One variant's line in a results file.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunResult {
    pub status: String,
    pub crcs: Vec<String>,
    pub time_us: Option<f64>,
}

/// A results file: the variants and the word-level differences (`diff` lines).
#[derive(Debug, Default)]
pub struct JobResult {
    pub variants: BTreeMap<String, RunResult>,
    pub diffs: Vec<String>,
}

pub fn parse_results(text: &str) -> JobResult {
    let mut out = JobResult::default();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let Some(variant) = parts.next() else {
            continue;
        };
        if variant == "diff" {
            out.diffs.push(parts.collect::<Vec<_>>().join(" "));
            continue;
        }
        let mut r = RunResult::default();
        for p in parts {
            match p.split_once('=') {
                Some(("status", v)) => r.status = v.to_string(),
                Some(("crc", v)) => {
                    r.crcs = v
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                }
                Some(("time_us", v)) => r.time_us = v.parse().ok(),
                _ => {}
            }
        }
        // A variant retried after a crash keeps its first outcome.
        out.variants.entry(variant.to_string()).or_insert(r);
    }
    out
}

/// The verdict on one job (module docs).
pub fn verdict(r: &JobResult, expected: Option<&[String]>, comparable: bool) -> String {
    let (Some(p1), Some(kiln)) = (r.variants.get("ptxas"), r.variants.get("kiln")) else {
        return match r.variants.get("ptxas") {
            Some(p) if p.status != "ok" => "ptxas_fault".into(),
            _ => "missing".into(),
        };
    };
    if p1.status != "ok" {
        return "ptxas_fault".into();
    }
    match kiln.status.as_str() {
        "ok" => {}
        "timeout" => return "kiln_timeout".into(),
        _ => return "kiln_fault".into(),
    }
    if let Some(p2) = r.variants.get("ptxas2")
        && p2.status == "ok"
        && p2.crcs != p1.crcs
    {
        return "nondeterministic".into();
    }
    if kiln.crcs == p1.crcs {
        return "equal".into();
    }
    let side = match expected {
        Some(e) if e == p1.crcs.as_slice() => "ptxas",
        Some(e) if e == kiln.crcs.as_slice() => "kiln",
        _ => "neither",
    };
    if comparable {
        format!("differ:{side}=interp")
    } else {
        format!("differ_not_comparable:{side}=interp")
    }
}

fn strings(j: &Json, key: &str) -> Option<Vec<String>> {
    j.get(key)?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(String::from))
        .collect()
}

pub fn compare(out: &Path, results: &Path) -> Result<(), String> {
    let arch = std::fs::read_to_string(out.join("arch.txt"))
        .map_err(|e| format!("{}: {e} (run prepare first)", out.display()))?;
    let arch = arch.trim();
    let jobs_path = out.join("jobs/jobs.jsonl");
    let jobs =
        std::fs::read_to_string(&jobs_path).map_err(|e| format!("{}: {e}", jobs_path.display()))?;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut tsv = String::from(
        "job\tfile\tkernel\tverdict\tkiln_crc\tptxas_crc\tinterp_crc\tkiln_us\tptxas_us\tlaunch\n",
    );
    let mut diffs_json = Vec::new();
    let (mut kernels, mut interp_agrees) = (0usize, 0usize);
    let mut ratios = Vec::new();
    for line in jobs.lines().filter(|l| !l.trim().is_empty()) {
        let j = json::parse(line)?;
        let get = |k: &str| j.get(k).and_then(Json::as_str).unwrap_or("").to_string();
        let (id, file, kernel, check) = (get("id"), get("file"), get("kernel"), get("check"));
        kernels += 1;
        let text = std::fs::read_to_string(results.join(format!("{id}.txt"))).unwrap_or_default();
        let r = parse_results(&text);
        let expected = strings(&j, "expected");
        let comparable = check.starts_with("verified");
        let v = verdict(&r, expected.as_deref(), comparable);
        let class = v.split(':').next().unwrap_or("").to_string();
        *counts.entry(class.clone()).or_default() += 1;
        let crc = |name: &str| {
            r.variants
                .get(name)
                .map(|x| x.crcs.join(","))
                .unwrap_or_default()
        };
        let us = |name: &str| {
            r.variants
                .get(name)
                .and_then(|x| x.time_us)
                .map(|t| format!("{t:.3}"))
                .unwrap_or_default()
        };
        let _ = writeln!(
            tsv,
            "{id}\t{file}\t{kernel}\t{v}\t{}\t{}\t{}\t{}\t{}\t{check}",
            crc("kiln"),
            crc("ptxas"),
            expected.as_ref().map_or("none".into(), |e| e.join(",")),
            us("kiln"),
            us("ptxas"),
        );
        if let Some(kiln) = r.variants.get("kiln")
            && expected.as_deref() == Some(kiln.crcs.as_slice())
        {
            interp_agrees += 1;
        }
        match class.as_str() {
            "differ" | "differ_not_comparable" | "kiln_timeout" | "kiln_fault" => {
                let first = if class == "differ_not_comparable" {
                    format!("DIFFER-NOT-COMPARABLE ({check})")
                } else {
                    class.to_uppercase().replace('_', "-")
                };
                println!("{first} {file} {kernel} (job {id}): {v}");
                for d in &r.diffs {
                    println!("    {d}");
                }
                diffs_json.push(format!(
                    "{{\"job\": \"{id}\", \"file\": {}, \"kernel\": {}, \"verdict\": {}, \"diffs\": [{}]}}",
                    super::pack::json_str(&file),
                    super::pack::json_str(&kernel),
                    super::pack::json_str(&v),
                    r.diffs
                        .iter()
                        .map(|d| super::pack::json_str(d))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            _ => {}
        }
        if class == "equal"
            && let (Some(k), Some(p)) = (
                r.variants.get("kiln").and_then(|x| x.time_us),
                r.variants.get("ptxas").and_then(|x| x.time_us),
            )
            && p > 0.0
        {
            ratios.push(k / p);
        }
    }
    let write = |name: String, text: &str| {
        let p = out.join(&name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    write(format!("verdicts-corpus-{arch}.tsv"), &tsv)?;
    write(
        format!("word-diffs-corpus-{arch}.json"),
        &format!("[\n{}\n]\n", diffs_json.join(",\n")),
    )?;
    ratios.sort_by(f64::total_cmp);
    let median = ratios.get(ratios.len() / 2).copied().unwrap_or(0.0);
    let n = |k: &str| counts.get(k).copied().unwrap_or(0);
    println!(
        "RESULT gpu-check {arch} kernels={kernels} equal={} differ={} differ_not_comparable={} kiln_errors={} kiln_timeouts={} ptxas_errors={} nondeterministic={} missing={} interp_agrees={interp_agrees} time_ratio_median={median:.2}",
        n("equal"),
        n("differ"),
        n("differ_not_comparable"),
        n("kiln_fault"),
        n("kiln_timeout"),
        n("ptxas_fault"),
        n("nondeterministic"),
        n("missing"),
    );
    if n("differ") > 0 || n("kiln_fault") > 0 || n("kiln_timeout") > 0 {
        return Err(
            "gpu-check: kiln's cubins differ from ptxas's, fault or hang on comparable launches"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> JobResult {
        parse_results(text)
    }

    #[test]
    fn verdicts_follow_the_variants() {
        let e: Vec<String> = vec!["aa".into(), "bb".into()];
        let same = "ptxas status=ok crc=aa,bb time_us=3\nptxas2 status=ok crc=aa,bb\nkiln status=ok crc=aa,bb time_us=4\n";
        assert_eq!(verdict(&job(same), Some(&e), true), "equal");
        let differ = "ptxas status=ok crc=aa,bb\nptxas2 status=ok crc=aa,bb\nkiln status=ok crc=aa,cc\ndiff buffer=1 words=1 first=4:00000001:00000002\n";
        let r = job(differ);
        assert_eq!(r.diffs, ["buffer=1 words=1 first=4:00000001:00000002"]);
        assert_eq!(verdict(&r, Some(&e), true), "differ:ptxas=interp");
        assert_eq!(
            verdict(&r, Some(&e), false),
            "differ_not_comparable:ptxas=interp"
        );
        assert_eq!(verdict(&r, None, true), "differ:neither=interp");
        let hang = "ptxas status=ok crc=aa,bb\nptxas2 status=ok crc=aa,bb\nkiln status=timeout\n";
        assert_eq!(verdict(&job(hang), Some(&e), true), "kiln_timeout");
        let fault = "ptxas status=ok crc=aa,bb\nptxas2 status=ok crc=aa,bb\nkiln status=error:CUDA_ERROR_ILLEGAL_ADDRESS\n";
        assert_eq!(verdict(&job(fault), Some(&e), true), "kiln_fault");
        let bad = "ptxas status=error:CUDA_ERROR_MISALIGNED_ADDRESS\nptxas2 status=skipped\nkiln status=skipped\n";
        assert_eq!(verdict(&job(bad), Some(&e), true), "ptxas_fault");
        let nondet =
            "ptxas status=ok crc=aa,bb\nptxas2 status=ok crc=aa,bc\nkiln status=ok crc=aa,bd\n";
        assert_eq!(verdict(&job(nondet), Some(&e), true), "nondeterministic");
        assert_eq!(verdict(&job(""), Some(&e), true), "missing");
        // A variant retried after a crash keeps its first outcome.
        let retried = "ptxas status=ok crc=aa,bb\nptxas2 status=timeout\nptxas2 status=ok crc=aa,bb\nkiln status=ok crc=aa,bb\n";
        let r = job(retried);
        assert_eq!(r.variants["ptxas2"].status, "timeout");
        assert_eq!(verdict(&r, Some(&e), true), "equal");
    }
}
