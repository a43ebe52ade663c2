//! `cargo xtask gpu-check`: runs kiln's cubins and ptxas's side by side on an NVIDIA GPU and
//! compares what they write, with the PTX interpreter's result as a third opinion, and their
//! kernel times. Built for a short lease of a GPU machine (minutes, with start-up): all the
//! preparation happens here, the GPU machine only runs Python and the CUDA driver.
//!
//! 1. `cargo xtask gpu-check prepare --arch sm_90 [--dir CORPUS] [--out DIR] [--limit N]`
//!    ([`prepare`]): every corpus kernel kiln compiles is a job in `DIR` (default
//!    `target/gpu-check`), launched as the corpus compile stage checked it (a launch inside
//!    the kernel's contract), with that check's verdict. The jobs are one file,
//!    `DIR/jobs/jobs.jsonl`, and every cubin, parameter block and buffer is stored once in
//!    `DIR/jobs/blobs/` ([`pack`]): the whole sm_90 corpus fits the 64 MiB that travels.
//! 2. `python3 xtask/gpu/launch.py DIR RESULTS [--hang-s S] [--reps N]` on the GPU machine
//!    (cuda-python): the jobs run in one process; after a CUDA fault (the context is lost) a
//!    fresh process resumes at the next variant; a launch that has not finished after
//!    `--hang-s` seconds (default 5) is a hang, and the watchdog kills the process and resumes
//!    after it. A job whose ptxas cubin faults or hangs is not run further. Per job:
//!    ptxas's cubin twice, kiln's once, same buffers at the same addresses, CRC-32 of each
//!    buffer, word-level differences of kiln's buffers from ptxas's, median kernel times.
//! 3. `cargo xtask gpu-check compare [--out DIR] RESULTS` ([`compare`]): the verdict classes
//!    per job, word-level differences, `DIR/verdicts-corpus-<arch>.tsv` and
//!    `RESULT gpu-check <arch> kernels=.. equal=.. differ=.. differ_not_comparable=..
//!    kiln_errors=.. kiln_timeouts=.. ptxas_errors=.. nondeterministic=.. missing=..
//!    interp_agrees=.. time_ratio_median=..`; it fails when kiln's code differs, faults or
//!    hangs on a launch the compile stage called comparable.
//!
//! `cargo xtask gpu-check [--arch sm_90]` does all three on a machine that has both Rust and
//! a GPU; without a GPU (no `nvidia-smi` or no CUDA driver for Python) it says so and exits
//! non-zero. It is not part of CI (`xtask/gpu/test_launch.py`, which is, checks the
//! launcher's process handling with a simulated driver).

use std::path::PathBuf;
use std::process::Command;

use crate::corpus;

mod compare;
mod pack;
mod prepare;

const USAGE: &str = "usage: cargo xtask gpu-check [prepare|compare RESULTS] [--arch sm_XX (an SM with code generation)] [--dir CORPUS] [--out DIR] [--limit N]";

struct Args {
    step: Option<String>,
    results: Option<PathBuf>,
    arch: String,
    dir: Option<PathBuf>,
    out: PathBuf,
    limit: usize,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        step: None,
        results: None,
        arch: "sm_90".into(),
        dir: corpus::default_dir(),
        out: corpus::workspace_root().join("target/gpu-check"),
        limit: usize::MAX,
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{x} needs a value\n{USAGE}"))
        };
        match x.as_str() {
            "--arch" => a.arch = value()?,
            "--dir" => a.dir = Some(PathBuf::from(value()?)),
            "--out" => a.out = PathBuf::from(value()?),
            "--limit" => {
                a.limit = value()?
                    .parse()
                    .map_err(|_| format!("bad --limit\n{USAGE}"))?
            }
            "prepare" | "compare" if a.step.is_none() => a.step = Some(x.clone()),
            other if a.step.as_deref() == Some("compare") && a.results.is_none() => {
                a.results = Some(PathBuf::from(other));
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if !db::Sm::parse(&a.arch).is_some_and(db::codegen_supported) {
        return Err(format!(
            "gpu-check: kiln generates code for {}, not {}",
            db::codegen_sms(),
            a.arch
        ));
    }
    Ok(a)
}

/// `prepare`, with a summary line.
fn prepare(a: &Args) -> Result<(), String> {
    let dir = a
        .dir
        .clone()
        .ok_or("gpu-check prepare: no corpus (../shared/corpus or KILN_CORPUS)")?;
    let s = prepare::prepare(&dir, &a.arch, &a.out, a.limit)?;
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    println!(
        "gpu-check: {} jobs in {} ({:.1} MiB of blobs for {:.1} MiB of job data; {} kernels left out, left-out.tsv)",
        s.jobs,
        a.out.display(),
        mib(s.bytes),
        mib(s.referenced),
        s.left_out
    );
    Ok(())
}

pub fn run(args: &[String]) -> Result<(), String> {
    let a = parse(args)?;
    match a.step.as_deref() {
        Some("prepare") => prepare(&a),
        Some("compare") => {
            let results = a
                .results
                .clone()
                .ok_or_else(|| format!("compare needs RESULTS\n{USAGE}"))?;
            compare::compare(&a.out, &results)
        }
        _ => {
            gpu_present()?;
            prepare(&a)?;
            let results = a.out.join("results");
            let script = corpus::workspace_root().join("xtask/gpu/launch.py");
            let status = Command::new("python3")
                .arg(&script)
                .arg(&a.out)
                .arg(&results)
                .status()
                .map_err(|e| format!("gpu-check: cannot run python3: {e}"))?;
            if !status.success() {
                return Err(format!("gpu-check: {} failed ({status})", script.display()));
            }
            compare::compare(&a.out, &results)
        }
    }
}

/// Whether this machine can run CUDA kernels: `nvidia-smi -L` lists a GPU and Python can
/// import the CUDA driver bindings.
fn gpu_present() -> Result<(), String> {
    let smi = Command::new("nvidia-smi").arg("-L").output();
    match smi {
        Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).contains("GPU") => {}
        _ => {
            return Err("gpu-check: no NVIDIA GPU here (`nvidia-smi -L` lists none); run `cargo xtask gpu-check prepare`, then xtask/gpu/launch.py on a GPU machine, then `gpu-check compare`".into());
        }
    }
    let py = Command::new("python3")
        .args(["-c", "import importlib.util as u; import sys; sys.exit(0 if (u.find_spec('cuda') or u.find_spec('cuda.bindings')) else 1)"])
        .status();
    match py {
        Ok(s) if s.success() => Ok(()),
        _ => Err("gpu-check: a GPU is present but Python has no CUDA driver bindings (pip install cuda-python)".into()),
    }
}

/// CRC-32 (IEEE 802.3, as Python's `zlib.crc32`).
pub fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *t = c;
    }
    let mut crc = !0u32;
    for &b in data {
        crc = table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

#[cfg(test)]
mod tests {
    #[test]
    fn crc32_matches_the_standard_check_value() {
        // The CRC-32/ISO-HDLC check value of "123456789" (as zlib.crc32 gives).
        assert_eq!(super::crc32(b"123456789"), 0xcbf4_3926);
    }
}

/// The whole pipeline on a simulated GPU: a pack of jobs, `xtask/gpu/launch.py --driver fake`
/// (its worker processes, fault recovery and hang watchdog are the real ones), then
/// `compare`'s verdicts.
#[cfg(test)]
mod launcher_tests {
    use super::pack::{Job, Pack};

    #[test]
    fn launcher_recovers_from_faults_and_hangs() {
        let dir = std::env::temp_dir().join(format!("kiln-gpu-check-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut pack = Pack::create(&dir).unwrap();
        let ptxas = pack.put(b"\x7fELF ptxas").unwrap();
        let kiln = pack.put(b"KILN fine").unwrap();
        let wrong = pack.put(b"KILN WRONG").unwrap();
        let params = pack.put(&[0u8; 16]).unwrap();
        let buf = pack.put(&[7u8; 64]).unwrap();
        let cases = [
            ("good", &kiln, "verified"),
            ("wrong", &wrong, "verified"),
            ("fault_k", &kiln, "verified"),
            ("hang_k", &kiln, "verified"),
            ("ptxas_fault_k", &kiln, "verified"),
            ("racy", &wrong, "not comparable: data race"),
            ("good_after", &kiln, "verified"),
        ];
        let mut lines = String::new();
        for (id, (kernel, image, check)) in cases.iter().enumerate() {
            let job = Job {
                id,
                file: "ptx/test.ptx".into(),
                kernel: (*kernel).into(),
                grid: [1, 1, 1],
                block: [32, 1, 1],
                shared: 0,
                slots: vec![(0, 8), (8, 8)],
                buffers: vec![0, 8],
                params: params.clone(),
                bufs: vec![buf.clone(), buf.clone()],
                kiln: (*image).clone(),
                ptxas: ptxas.clone(),
                expected: None,
                check: (*check).into(),
            };
            lines.push_str(&job.to_json());
            lines.push('\n');
        }
        std::fs::write(dir.join("jobs/jobs.jsonl"), lines).unwrap();
        std::fs::write(dir.join("arch.txt"), "sm_90").unwrap();
        let results = dir.join("results");
        let script = crate::corpus::workspace_root().join("xtask/gpu/launch.py");
        let out = std::process::Command::new("python3")
            .arg(&script)
            .arg(&dir)
            .arg(&results)
            .args(["--hang-s", "1", "--reps", "2", "--driver", "fake"])
            .output()
            .expect("python3 runs");
        let log = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{log}");
        assert!(log.contains("1 hang(s)"), "{log}");
        // A differing, faulting or hanging kiln cubin on a comparable launch fails the check.
        assert!(super::compare::compare(&dir, &results).is_err());
        let tsv = std::fs::read_to_string(dir.join("verdicts-corpus-sm_90.tsv")).unwrap();
        let verdicts: Vec<(String, String)> = tsv
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                (f[2].to_string(), f[3].to_string())
            })
            .collect();
        let want = [
            ("good", "equal"),
            ("wrong", "differ:neither=interp"),
            ("fault_k", "kiln_fault"),
            ("hang_k", "kiln_timeout"),
            ("ptxas_fault_k", "ptxas_fault"),
            ("racy", "differ_not_comparable:neither=interp"),
            ("good_after", "equal"),
        ];
        let got: Vec<(&str, &str)> = verdicts
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(got, want);
        // Word-level differences: the first word of each buffer, ptxas's value then kiln's.
        let wrong_results = std::fs::read_to_string(results.join("1.txt")).unwrap();
        let good_word = format!("{:08x}", super::crc32(b"wrong"));
        assert!(
            wrong_results.contains(&format!(
                "diff buffer=0 words=1 first=0:{good_word}:4e4c494b"
            )),
            "{wrong_results}"
        );
        // ptxas's cubin faulted: kiln's was not run.
        let bad = std::fs::read_to_string(results.join("4.txt")).unwrap();
        assert!(bad.contains("kiln status=skipped"), "{bad}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
