//! `cargo xtask occupancy-check [--cuda-root DIR] [--write-sample]`: checks kiln's per-SM
//! occupancy limits (`crates/target/data/occupancy.tsv`) and occupancy function
//! (`target::OccupancyLimits::occupancy`) against NVIDIA's occupancy calculator.
//!
//! The calculator is `include/cuda_occupancy.h` of the CUDA 13.0 toolkit (the
//! `nvidia-cuda-runtime` wheel that `../shared/tools/nvcc.sh` installs; `--cuda-root` or
//! `$KILN_CUDA_ROOT` names another toolkit folder). `occupancy_check.cpp` includes it and is
//! built with g++ as a host program (no GPU, no driver). Then:
//!
//! 1. **rules**: the rows of the data file marked `[occ]` (allocation units, sub-partitions,
//!    blocks per SM, carveouts, barrier factor) must equal the header's own functions for each
//!    SM's compute capability;
//! 2. **grid**: for every SM, `cudaOccMaxActiveBlocksPerMultiprocessor` with a
//!    `cudaOccDeviceProp` filled from kiln's data must give the same active blocks and the same
//!    limiting factors as kiln's function, over every register count 0..=255 by every block
//!    size 1..=1025 (three static shared sizes), dynamic shared memory from 0 past the opt-in
//!    limit in 31-byte steps (five register counts, 32 block sizes, three static sizes), every
//!    carveout 0..=100 %, and barrier counts 0..=17 and 32.
//!
//! It prints `RESULT occupancy-check ... differ=0 rules_differ=0`. With `--write-sample` it
//! writes `crates/target/data/occupancy-sample.tsv` (a deterministic sample of the header's
//! answers, which `target`'s unit tests compare with kiln's function where no toolkit is
//! installed); otherwise it checks that the committed sample is still the header's answers.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use target::{Launch, Limiter, OccupancyLimits};

const PROGRAM: &str = include_str!("occupancy_check.cpp");
const SAMPLE: &str = "crates/target/data/occupancy-sample.tsv";
/// About one launch in this many goes into the sample.
const SAMPLE_BUCKETS: u64 = 40_000;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut cuda_root = std::env::var_os("KILN_CUDA_ROOT").map(PathBuf::from);
    let mut write_sample = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--cuda-root" => {
                cuda_root = Some(PathBuf::from(
                    it.next().ok_or("--cuda-root needs a folder")?,
                ))
            }
            "--write-sample" => write_sample = true,
            other => return Err(format!("occupancy-check: unknown argument `{other}`")),
        }
    }
    let started = std::time::Instant::now();
    let root = match cuda_root {
        Some(r) => r,
        None => toolkit_root()?,
    };
    let header = root.join("include/cuda_occupancy.h");
    if !header.is_file() {
        return Err(format!("occupancy-check: no {}", header.display()));
    }
    let exe = build(&root)?;
    let sms = OccupancyLimits::all();
    let devices = device_lines(sms);

    // 1. The rows taken from the header.
    let rules = run_program(&exe, "rules", &devices)?;
    let rules = String::from_utf8(rules).map_err(|e| format!("rules output: {e}"))?;
    let mut rules_checked = 0;
    let mut rules_differ = 0;
    for (sm, theirs) in sms.iter().zip(rules.split("device ").skip(1)) {
        for line in theirs.lines().skip(1) {
            let (key, value) = line.split_once(' ').ok_or(format!("rules: `{line}`"))?;
            let ours = match key {
                "shared_allocation_unit" => sm.shared_allocation_unit.to_string(),
                "register_allocation_unit" => sm.register_allocation_unit.to_string(),
                "register_sub_partitions" => sm.register_sub_partitions.to_string(),
                "max_blocks_per_sm" => sm.max_blocks_per_sm.to_string(),
                "shared_carveout_kib" => sm
                    .shared_carveouts
                    .iter()
                    .map(|c| (c / 1024).to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                "barrier_factor" => sm.barrier_factor.map_or("-".to_string(), |f| f.to_string()),
                // kiln keeps the guide's 255 (the most ptxas allocates); the header's check
                // allows 256, which no kernel has. The grid stops at 255.
                "register_max_per_thread_check" => {
                    if value != "256" || sm.max_registers_per_thread != 255 {
                        println!(
                            "sm_{}: the header's register check is {value}, kiln's limit {}",
                            sm.sm, sm.max_registers_per_thread
                        );
                        rules_differ += 1;
                    }
                    rules_checked += 1;
                    continue;
                }
                other => return Err(format!("rules: unknown key `{other}`")),
            };
            rules_checked += 1;
            if ours != value {
                rules_differ += 1;
                println!("sm_{}: {key}: kiln {ours}, cuda_occupancy.h {value}", sm.sm);
            }
        }
    }

    // 2. The grid.
    let queries = grid(sms);
    let mut input = devices.clone();
    for q in &queries {
        let _ = writeln!(
            input,
            "q {} {} {} {} {} {} {} {} {} {} {} {}",
            q.dev,
            q.regs.0,
            q.regs.1,
            q.threads.0,
            q.threads.1,
            q.threads.2,
            q.static_shared,
            q.dynamic.0,
            q.dynamic.1,
            q.dynamic.2,
            q.carveout.map_or(-1, i32::from),
            q.barriers
        );
    }
    let theirs = run_program(&exe, "grid", &input)?;
    let mut at = 0;
    let mut launches = 0u64;
    let mut differ = 0u64;
    let mut sample = String::from(
        "# Generated by `cargo xtask occupancy-check --write-sample`: a deterministic sample of\n\
         # cudaOccMaxActiveBlocksPerMultiprocessor's answers (CUDA 13.0 cuda_occupancy.h) for the\n\
         # limits in occupancy.tsv; `target`'s tests compare kiln's occupancy function with it.\n\
         # carveout -1: the default; limiters: cudaOccLimitingFactor bits.\n\
         sm\tregisters\tthreads\tstatic_shared\tdynamic_shared\tcarveout\tbarriers\tblocks\tlimiters\n",
    );
    // The sample: the first launch of each distinct answer per SM, and the launches whose
    // hash falls in one bucket of SAMPLE_BUCKETS.
    let mut seen = std::collections::HashSet::new();
    for q in &queries {
        let sm = &sms[q.dev];
        for launch in q.launches() {
            let Some(pair) = theirs.get(at..at + 2) else {
                return Err("grid: the program answered fewer launches than asked".into());
            };
            at += 2;
            launches += 1;
            let o = sm.occupancy(&launch);
            let ours = (o.blocks, Limiter::cuda_bits(&o.limiters));
            let header = (u32::from(pair[0]), u32::from(pair[1]));
            if ours != header {
                differ += 1;
                if differ <= 20 {
                    println!(
                        "sm_{}: {launch:?}: kiln {} blocks (limiters {:#x}), cuda_occupancy.h {}",
                        sm.sm,
                        ours.0,
                        ours.1,
                        if pair == [255, 255] {
                            "error".to_string()
                        } else {
                            format!("{} blocks (limiters {:#x})", header.0, header.1)
                        }
                    );
                }
            }
            if seen.insert((q.dev, header)) || hash(&launch).is_multiple_of(SAMPLE_BUCKETS) {
                let _ = writeln!(
                    sample,
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    sm.sm,
                    launch.registers,
                    launch.threads,
                    launch.static_shared,
                    launch.dynamic_shared,
                    launch.carveout.map_or(-1, i32::from),
                    launch.barriers,
                    header.0,
                    header.1
                );
            }
        }
    }
    if at != theirs.len() {
        return Err("grid: the program answered more launches than asked".into());
    }
    let sample_path = crate::corpus::workspace_root().join(SAMPLE);
    let sample_stale = if write_sample {
        std::fs::write(&sample_path, &sample)
            .map_err(|e| format!("writing {}: {e}", sample_path.display()))?;
        println!("wrote {}", sample_path.display());
        0
    } else {
        let committed = std::fs::read_to_string(&sample_path).unwrap_or_default();
        if committed != sample {
            println!(
                "{} is not the header's answers: run `cargo xtask occupancy-check --write-sample`",
                sample_path.display()
            );
            1
        } else {
            0
        }
    };
    println!(
        "RESULT occupancy-check sms={} launches={launches} differ={differ} rules={rules_checked} \
         rules_differ={rules_differ} sample_stale={sample_stale} seconds={}",
        sms.len(),
        started.elapsed().as_secs()
    );
    if differ > 0 || rules_differ > 0 || sample_stale > 0 {
        return Err("occupancy-check: kiln differs from cuda_occupancy.h".into());
    }
    Ok(())
}

/// The CUDA toolkit folder of `../shared/tools/nvcc.sh` (which installs it if needed).
fn toolkit_root() -> Result<PathBuf, String> {
    let script = crate::corpus::workspace_root().join("../shared/tools/nvcc.sh");
    if !script.is_file() {
        return Err(format!(
            "occupancy-check: no {} (pass --cuda-root or set KILN_CUDA_ROOT)",
            script.display()
        ));
    }
    let out = Command::new("bash")
        .arg(&script)
        .arg("--print-root")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} --print-root failed", script.display()));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Builds the checker under `target/occupancy-check/`.
fn build(root: &Path) -> Result<PathBuf, String> {
    let dir = crate::corpus::cache_dir("occupancy-check");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let src = dir.join("occupancy_check.cpp");
    let exe = dir.join("occupancy_check");
    std::fs::write(&src, PROGRAM).map_err(|e| format!("writing {}: {e}", src.display()))?;
    let out = Command::new("g++")
        .args(["-std=c++17", "-O2", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-I")
        .arg(root.join("include"))
        .output()
        .map_err(|e| format!("running g++: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "g++ could not build the checker:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(exe)
}

fn run_program(exe: &Path, mode: &str, input: &str) -> Result<Vec<u8>, String> {
    let path = exe.with_extension(format!("{mode}.in"));
    std::fs::write(&path, input).map_err(|e| format!("writing {}: {e}", path.display()))?;
    let stdin = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let out = Command::new(exe)
        .arg(mode)
        .stdin(stdin)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("{} {mode} failed: {}", exe.display(), out.status));
    }
    Ok(out.stdout)
}

/// `dev` lines: each SM's limits as the `cudaOccDeviceProp` fields.
fn device_lines(sms: &[OccupancyLimits]) -> String {
    let mut s = String::new();
    for sm in sms {
        let _ = writeln!(
            s,
            "dev {} {} {} {} {} {} {} {} {} {} {} 1",
            sm.sm / 10,
            sm.sm % 10,
            sm.max_threads_per_block,
            sm.max_threads_per_sm,
            sm.registers_per_block,
            sm.registers_per_sm,
            sm.warp_size,
            sm.shared_per_block,
            sm.shared_per_sm,
            sm.shared_per_block_optin,
            sm.shared_reserved_per_block
        );
    }
    s
}

/// One line of queries: the launches of nested loops over registers, threads and dynamic
/// shared memory (inclusive ranges; `threads` and `dynamic` are `(from, to, step)`).
struct Query {
    dev: usize,
    regs: (u32, u32),
    threads: (u32, u32, u32),
    static_shared: u32,
    dynamic: (u32, u32, u32),
    carveout: Option<u8>,
    barriers: u32,
}

impl Query {
    fn launches(&self) -> impl Iterator<Item = Launch> + '_ {
        (self.regs.0..=self.regs.1).flat_map(move |registers| {
            (self.threads.0..=self.threads.1)
                .step_by(self.threads.2 as usize)
                .flat_map(move |threads| {
                    (self.dynamic.0..=self.dynamic.1)
                        .step_by(self.dynamic.2 as usize)
                        .map(move |dynamic_shared| Launch {
                            registers,
                            threads,
                            static_shared: self.static_shared,
                            dynamic_shared,
                            barriers: self.barriers,
                            carveout: self.carveout,
                        })
                })
        })
    }
}

fn grid(sms: &[OccupancyLimits]) -> Vec<Query> {
    let mut qs = Vec::new();
    for (dev, sm) in sms.iter().enumerate() {
        let beyond = sm.shared_per_block_optin + 2048;
        // Registers by block size (1..=1025 threads), no dynamic shared memory.
        for static_shared in [0, 4096, 48 * 1024] {
            qs.push(Query {
                dev,
                regs: (0, 255),
                threads: (1, 1025, 1),
                static_shared,
                dynamic: (0, 0, 1),
                carveout: None,
                barriers: 1,
            });
        }
        // Shared memory from 0 past the opt-in limit, in 31-byte steps (across the
        // allocation units).
        for regs in [0, 32, 64, 128, 255] {
            for static_shared in [0, 1, 48 * 1024] {
                qs.push(Query {
                    dev,
                    regs: (regs, regs),
                    threads: (32, 1024, 32),
                    static_shared,
                    dynamic: (0, beyond, 31),
                    carveout: None,
                    barriers: 1,
                });
            }
        }
        // Every carveout preference.
        for carveout in 0..=100u8 {
            for (regs, threads) in [(16, 64), (64, 256), (32, 1024)] {
                qs.push(Query {
                    dev,
                    regs: (regs, regs),
                    threads: (threads, threads, 1),
                    static_shared: 0,
                    dynamic: (0, beyond, 257),
                    carveout: Some(carveout),
                    barriers: 1,
                });
            }
        }
        // Barriers.
        for barriers in (0..=17).chain([32]) {
            qs.push(Query {
                dev,
                regs: (0, 255),
                threads: (32, 1024, 32),
                static_shared: 0,
                dynamic: (0, 0, 1),
                carveout: None,
                barriers,
            });
        }
    }
    qs
}

/// FNV-1a over a launch's fields (the same sample on every machine).
fn hash(l: &Launch) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in [
        l.registers,
        l.threads,
        l.static_shared,
        l.dynamic_shared,
        l.barriers,
        l.carveout.map_or(255, u32::from),
    ] {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}
