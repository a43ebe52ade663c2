//! `cargo xtask gpu-check`: runs kiln's cubins and ptxas's side by side on an NVIDIA GPU and
//! compares what they write, with the PTX interpreter's result as a third opinion, and their
//! kernel times.
//!
//! Three steps, so that the GPU machine needs only Python and the CUDA driver (no Rust):
//!
//! 1. `cargo xtask gpu-check prepare --arch sm_90 [--dir CORPUS] [--out DIR] [--limit N]`:
//!    every corpus kernel kiln compiles is a job in `DIR` (default `target/gpu-check`):
//!    `jobs/<n>/launch.txt` (kernel, grid, block, dynamic shared bytes, parameter slots and
//!    which of them point to buffers), `params.bin`, `buf<i>.bin` (initial buffer bytes; the
//!    emulator harness's inputs, `emu::harness::inputs`, seed 1), `kiln.cubin`,
//!    `ptxas.cubin`, and `expected.txt` (CRC-32 of each buffer after the PTX interpreter ran
//!    the same launch, when it could). The job set stays under 56 MiB so that it can travel to
//!    a GPU machine.
//! 2. `python3 xtask/gpu/launch.py DIR RESULTS` (on the GPU machine, cuda-python): each job
//!    in its own process (a faulting kernel cannot poison the next), each cubin loaded with
//!    `cuModuleLoadData`, the buffers allocated once per job (so both cubins see the same
//!    addresses) and restored before every launch; ptxas's cubin runs twice (to spot
//!    nondeterministic kernels), kiln's once; then each is timed over several launches.
//!    `RESULTS/<n>.txt` holds the status, the buffers' CRC-32 and the median time.
//! 3. `cargo xtask gpu-check compare [--out DIR] RESULTS`: kiln vs ptxas vs interpreter per
//!    kernel, the differences listed, and
//!    `RESULT gpu-check <arch> kernels=<n> equal=<n> differ=<n> kiln_errors=<n> ptxas_errors=<n> nondeterministic=<n> interp_agrees=<n> time_ratio_median=<f>`
//!    (`time_ratio` = kiln's median kernel time / ptxas's).
//!
//! `cargo xtask gpu-check [--arch sm_90]` does all three on a machine that has both Rust and
//! a GPU; without a GPU (no `nvidia-smi` or no CUDA driver for Python) it says so and exits
//! non-zero. It is not part of CI.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::corpus::{self, PtxasOutcome};

const USAGE: &str = "usage: cargo xtask gpu-check [prepare|compare RESULTS] [--arch sm_80|sm_90] [--dir CORPUS] [--out DIR] [--limit N]";

/// The most bytes of jobs `prepare` writes (the device machine takes 64 MiB of carried files).
const MAX_JOB_BYTES: u64 = 56 << 20;

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
    if !matches!(a.arch.as_str(), "sm_80" | "sm_90") {
        return Err(format!(
            "gpu-check: kiln generates code for sm_80 and sm_90, not {}",
            a.arch
        ));
    }
    Ok(a)
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
            compare(&a.out, &results)
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
            compare(&a.out, &results)
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

fn prepare(a: &Args) -> Result<(), String> {
    let dir = a
        .dir
        .clone()
        .ok_or("gpu-check prepare: no corpus (../shared/corpus or KILN_CORPUS)")?;
    crate::oracle::tool("ptxas")?;
    corpus::quiet_panics();
    let _ = std::fs::remove_dir_all(&a.out);
    let jobs_dir = a.out.join("jobs");
    std::fs::create_dir_all(&jobs_dir).map_err(|e| e.to_string())?;
    let sm = db::Sm::parse(&a.arch).ok_or("bad arch")?;
    let mut index = String::new();
    let (mut jobs, mut bytes_total) = (0usize, 0u64);
    let cfg = emu::harness::Config {
        seed: 1,
        ..emu::harness::Config::default()
    };
    'files: for (path, rel, text) in corpus::files_for_arch(&dir, &a.arch) {
        let compiled = corpus::catch(|| {
            let mut database = db::RootDatabase::default();
            let file = database.add_file(&path, text.as_bytes());
            let target = db::Target::new(sm);
            let out = db::cubin(
                &database,
                db::FileTarget::new(&database, file, target.clone()),
            );
            let names: Vec<String> = db::kernel_targets(&database, file, &target)
                .iter()
                .map(|k| k.function(&database).name(&database).clone())
                .collect();
            out.bytes.clone().map(|b| (b, names))
        });
        let Ok(Some((kiln_cubin, names))) = compiled else {
            continue;
        };
        let Ok(PtxasOutcome::Ok { cubin: theirs, .. }) = corpus::ptxas_cubin(&text, &a.arch, &[])
        else {
            continue;
        };
        let Ok(ptxas_cubin) = std::fs::read(&theirs) else {
            continue;
        };
        let Ok(mut prog) = interp::Program::from_text(&text) else {
            continue;
        };
        // Shared memory as ptxas's code for the target SM lays it out (reserved block first on
        // sm_90), whatever the PTX's `.target`.
        let sm_number: u32 = a.arch.trim_start_matches("sm_").parse().unwrap_or(0);
        prog.set_shared_layout(interp::SharedLayout::for_sm(sm_number));
        for name in names {
            if jobs >= a.limit {
                break 'files;
            }
            let Some(k) = prog.kernel(&name) else {
                continue;
            };
            let slots = prog.params(k).to_vec();
            // No texture inputs: the GPU job runner passes parameter bytes and buffers only.
            let inputs = emu::harness::inputs(&slots, prog.param_size(k) as usize, &[], &cfg);
            let job_bytes = (kiln_cubin.len() + ptxas_cubin.len() + inputs.params.len()) as u64
                + inputs.buffers.iter().map(|b| b.2.len() as u64).sum::<u64>();
            if bytes_total + job_bytes > MAX_JOB_BYTES {
                println!(
                    "gpu-check: stopping at {jobs} jobs (the job set would pass {} MiB)",
                    MAX_JOB_BYTES >> 20
                );
                break 'files;
            }
            let expected = corpus::catch(|| interpret(&prog, k, &inputs, &cfg)).unwrap_or(None);
            let jd = jobs_dir.join(jobs.to_string());
            std::fs::create_dir_all(&jd).map_err(|e| e.to_string())?;
            let mut launch = String::new();
            let _ = writeln!(launch, "file={rel}");
            let _ = writeln!(launch, "kernel={name}");
            let _ = writeln!(
                launch,
                "grid={},{},{}",
                cfg.grid[0], cfg.grid[1], cfg.grid[2]
            );
            let _ = writeln!(
                launch,
                "block={},{},{}",
                cfg.block[0], cfg.block[1], cfg.block[2]
            );
            let _ = writeln!(launch, "dynamic_shared={}", cfg.dynamic_shared);
            let slot_list: Vec<String> = slots
                .iter()
                .map(|s| format!("{}:{}", s.offset, s.size))
                .collect();
            let _ = writeln!(launch, "slots={}", slot_list.join(","));
            let buf_list: Vec<String> = inputs
                .buffers
                .iter()
                .map(|(_, at, _)| at.to_string())
                .collect();
            let _ = writeln!(launch, "buffers={}", buf_list.join(","));
            std::fs::write(jd.join("launch.txt"), launch).map_err(|e| e.to_string())?;
            std::fs::write(jd.join("params.bin"), &inputs.params).map_err(|e| e.to_string())?;
            for (i, (_, _, data)) in inputs.buffers.iter().enumerate() {
                std::fs::write(jd.join(format!("buf{i}.bin")), data).map_err(|e| e.to_string())?;
            }
            std::fs::write(jd.join("kiln.cubin"), &kiln_cubin).map_err(|e| e.to_string())?;
            std::fs::write(jd.join("ptxas.cubin"), &ptxas_cubin).map_err(|e| e.to_string())?;
            let expected_text = match &expected {
                Some(crcs) => crcs
                    .iter()
                    .map(|c| format!("{c:08x}"))
                    .collect::<Vec<_>>()
                    .join(","),
                None => "none".into(),
            };
            std::fs::write(jd.join("expected.txt"), expected_text).map_err(|e| e.to_string())?;
            let _ = writeln!(index, "{jobs}\t{rel}\t{name}");
            jobs += 1;
            bytes_total += job_bytes;
        }
    }
    std::fs::write(a.out.join("jobs.tsv"), index).map_err(|e| e.to_string())?;
    std::fs::write(a.out.join("arch.txt"), &a.arch).map_err(|e| e.to_string())?;
    println!(
        "gpu-check: {jobs} jobs ({:.1} MiB) in {}",
        bytes_total as f64 / (1 << 20) as f64,
        a.out.display()
    );
    Ok(())
}

/// Runs the launch in the PTX interpreter; the CRC-32 of each buffer afterwards, or `None`
/// when it traps or cannot run.
fn interpret(
    prog: &interp::Program,
    k: u32,
    inputs: &emu::harness::Inputs,
    cfg: &emu::harness::Config,
) -> Option<Vec<u32>> {
    let mut prog = prog.clone();
    let mut mem = interp::Memory::new();
    let (params, addrs) = emu::harness::place(inputs, &mut mem);
    prog.load(&mut mem);
    let launch = cfg.interp_launch(params);
    prog.run(&mut mem, k, &launch).ok()?;
    addrs
        .iter()
        .map(|a| mem.buffer(*a).map(|b| crc32(&b.data)))
        .collect()
}

/// One variant's outcome in a results file.
#[derive(Debug, Default, Clone)]
struct RunResult {
    status: String,
    crcs: Vec<String>,
    time_us: Option<f64>,
}

fn read_results(path: &Path) -> BTreeMap<String, RunResult> {
    let mut out = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return out;
    };
    for line in text.lines() {
        // `<variant> status=<s> crc=<a,b> time_us=<f>`
        let mut parts = line.split_whitespace();
        let Some(variant) = parts.next() else {
            continue;
        };
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
        out.insert(variant.to_string(), r);
    }
    out
}

fn compare(out: &Path, results: &Path) -> Result<(), String> {
    let arch = std::fs::read_to_string(out.join("arch.txt"))
        .map_err(|e| format!("{}: {e} (run prepare first)", out.display()))?;
    let index = std::fs::read_to_string(out.join("jobs.tsv")).map_err(|e| e.to_string())?;
    let (mut kernels, mut equal, mut differ, mut kiln_errors, mut ptxas_errors) = (0, 0, 0, 0, 0);
    let (mut nondeterministic, mut interp_agrees, mut missing) = (0, 0, 0);
    let mut ratios = Vec::new();
    for line in index.lines() {
        let mut cols = line.split('\t');
        let (Some(id), Some(file), Some(kernel)) = (cols.next(), cols.next(), cols.next()) else {
            continue;
        };
        kernels += 1;
        let r = read_results(&results.join(format!("{id}.txt")));
        let (Some(kiln), Some(p1), Some(p2)) = (r.get("kiln"), r.get("ptxas"), r.get("ptxas2"))
        else {
            missing += 1;
            println!("NO-RESULT {file} {kernel} (job {id})");
            continue;
        };
        if p1.status != "ok" {
            ptxas_errors += 1;
            println!("PTXAS-ERROR {file} {kernel}: {}", p1.status);
            continue;
        }
        if kiln.status != "ok" {
            kiln_errors += 1;
            println!(
                "KILN-ERROR {file} {kernel}: {} (ptxas's cubin ran)",
                kiln.status
            );
            continue;
        }
        if p1.crcs != p2.crcs {
            nondeterministic += 1;
            println!(
                "NONDETERMINISTIC {file} {kernel}: ptxas's cubin wrote different bytes in two runs"
            );
            continue;
        }
        if kiln.crcs == p1.crcs {
            equal += 1;
        } else {
            differ += 1;
            println!(
                "DIFFER {file} {kernel} (job {id}): kiln {:?} ptxas {:?}",
                kiln.crcs, p1.crcs
            );
        }
        let expected = std::fs::read_to_string(out.join("jobs").join(id).join("expected.txt"))
            .unwrap_or_default();
        if expected
            .trim()
            .split(',')
            .map(String::from)
            .collect::<Vec<_>>()
            == kiln.crcs
        {
            interp_agrees += 1;
        }
        if let (Some(k), Some(p)) = (kiln.time_us, p1.time_us)
            && p > 0.0
        {
            ratios.push(k / p);
        }
    }
    ratios.sort_by(f64::total_cmp);
    let median = if ratios.is_empty() {
        0.0
    } else {
        ratios[ratios.len() / 2]
    };
    if missing > 0 {
        println!("{missing} job(s) have no result (the launcher did not reach them)");
    }
    println!(
        "RESULT gpu-check {} kernels={kernels} equal={equal} differ={differ} kiln_errors={kiln_errors} ptxas_errors={ptxas_errors} nondeterministic={nondeterministic} interp_agrees={interp_agrees} time_ratio_median={median:.2}",
        arch.trim()
    );
    if differ > 0 || kiln_errors > 0 {
        return Err("gpu-check: kiln's cubins differ from ptxas's".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn crc32_matches_the_standard_check_value() {
        // The CRC-32/ISO-HDLC check value of "123456789" (as zlib.crc32 gives).
        assert_eq!(super::crc32(b"123456789"), 0xcbf4_3926);
    }
}
