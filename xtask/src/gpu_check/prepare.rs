//! `gpu-check prepare`: every corpus kernel kiln compiles becomes a job, launched the way the
//! corpus compile stage checked it (`corpus::compile::execute`: a launch inside the kernel's
//! contract, then the harness's alternatives), with that check's verdict recorded, so that
//! `compare` can tell a difference on a comparable launch (a kiln bug) from one on a launch
//! the sanitizer calls not comparable.

use std::path::Path;

use super::pack::{Job, Pack};
use crate::corpus::compile::Exec;
use crate::corpus::{self, PtxasOutcome};

/// The most bytes of distinct blobs `prepare` writes (the device machine takes 64 MiB of
/// carried files, the launcher and kiln's binary included).
pub const MAX_PACK_BYTES: u64 = 56 << 20;

/// A job before its blobs are stored.
struct Draft {
    kernel: String,
    cfg: harness::Config,
    inputs: harness::Inputs,
    slots: Vec<(u32, u32)>,
    expected: Option<Vec<u32>>,
    check: String,
}

/// One file: kiln's cubin, ptxas's, the drafts, and kernels left out (with why).
struct FileJobs {
    rel: String,
    kiln: Vec<u8>,
    ptxas: Vec<u8>,
    drafts: Vec<Draft>,
    left_out: Vec<(String, String)>,
}

pub struct Summary {
    pub jobs: usize,
    pub left_out: usize,
    pub bytes: u64,
    pub referenced: u64,
}

pub fn prepare(corpus_dir: &Path, arch: &str, out: &Path, limit: usize) -> Result<Summary, String> {
    crate::oracle::tool("ptxas")?;
    corpus::quiet_panics();
    let _ = std::fs::remove_dir_all(out);
    let mut pack = Pack::create(out)?;
    let files = corpus::files_for_arch(corpus_dir, arch);
    let per_file = corpus::par_map("gpu-check prepare", &files, |(path, rel, text)| {
        corpus::catch(|| file_jobs(path, rel, text, arch)).unwrap_or(None)
    });
    let mut lines = String::new();
    let mut left = String::new();
    let (mut jobs, mut left_out) = (0usize, 0usize);
    'files: for f in per_file.into_iter().flatten() {
        for (kernel, why) in &f.left_out {
            left.push_str(&format!("{}\t{kernel}\t{why}\n", f.rel));
            left_out += 1;
        }
        for d in f.drafts {
            if jobs >= limit {
                break 'files;
            }
            let cost: u64 = pack.cost(&f.kiln)
                + pack.cost(&f.ptxas)
                + pack.cost(&d.inputs.params)
                + d.inputs
                    .buffers
                    .iter()
                    .map(|b| pack.cost(&b.2))
                    .sum::<u64>();
            if pack.bytes + cost > MAX_PACK_BYTES {
                println!(
                    "gpu-check: stopping at {jobs} jobs (the pack would pass {} MiB)",
                    MAX_PACK_BYTES >> 20
                );
                break 'files;
            }
            let job = Job {
                id: jobs,
                file: f.rel.clone(),
                kernel: d.kernel,
                grid: d.cfg.grid,
                block: d.cfg.block,
                shared: d.cfg.dynamic_shared,
                slots: d.slots,
                buffers: d.inputs.buffers.iter().map(|b| b.1).collect(),
                params: pack.put(&d.inputs.params)?,
                bufs: d
                    .inputs
                    .buffers
                    .iter()
                    .map(|b| pack.put(&b.2))
                    .collect::<Result<_, _>>()?,
                kiln: pack.put(&f.kiln)?,
                ptxas: pack.put(&f.ptxas)?,
                expected: d.expected,
                check: d.check,
            };
            lines.push_str(&job.to_json());
            lines.push('\n');
            jobs += 1;
        }
    }
    let write = |name: &str, text: &str| {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("jobs/jobs.jsonl", &lines)?;
    write("left-out.tsv", &left)?;
    write("arch.txt", arch)?;
    Ok(Summary {
        jobs,
        left_out,
        bytes: pack.bytes,
        referenced: pack.referenced,
    })
}

/// The jobs of one file, or None when kiln or ptxas does not compile it.
fn file_jobs(path: &Path, rel: &str, text: &str, arch: &str) -> Option<FileJobs> {
    let sm = db::Sm::parse(arch)?;
    let mut database = db::RootDatabase::default();
    let file = database.add_file(path, text.as_bytes());
    let target = db::Target::new(sm);
    let out = db::cubin(
        &database,
        db::FileTarget::new(&database, file, target.clone()),
    );
    let kiln = out.bytes.clone()?;
    let names: Vec<String> = db::kernel_targets(&database, file, &target)
        .iter()
        .map(|k| k.function(&database).name(&database).clone())
        .collect();
    let Ok(PtxasOutcome::Ok { cubin, .. }) = corpus::ptxas_cubin(text, arch, &[]) else {
        return None;
    };
    let ptxas = std::fs::read(cubin).ok()?;
    let mut prog = interp::Program::from_text(text).ok()?;
    // Shared memory as ptxas's code for the target SM lays it out (reserved block first on
    // sm_90), whatever the PTX's `.target`.
    let sm_number: u32 = arch.trim_start_matches("sm_").parse().unwrap_or(0);
    prog.set_shared_layout(interp::SharedLayout::for_sm(sm_number));
    let mut f = FileJobs {
        rel: rel.to_string(),
        kiln,
        ptxas,
        drafts: Vec::new(),
        left_out: Vec::new(),
    };
    for name in names {
        let Some(k) = prog.kernel(&name) else {
            f.left_out
                .push((name, "the interpreter has no such kernel".into()));
            continue;
        };
        let (exec, cfg) = corpus::compile::execute(text, &f.kiln, Some(&f.ptxas), &name);
        let check = match exec {
            Exec::Verified => "verified".to_string(),
            Exec::VerifiedAgainstPtxas => "verified against ptxas".to_string(),
            Exec::Unchecked(r) => format!("not comparable: {r}"),
            Exec::TrapMismatch(r) => format!("not comparable: only one side traps: {r}"),
            Exec::Miscompiled(d) => format!("miscompiled: {d}"),
        };
        // The launch the check decided on, with the inputs of its first seed.
        let cfg = harness::Config { seed: 1, ..cfg };
        let inputs = harness::kernel_inputs(&prog, k, &cfg);
        if !inputs.textures.is_empty() || !inputs.surfaces.is_empty() || inputs.cooperative {
            f.left_out.push((
                name,
                "textures, surfaces or a cooperative launch (the launcher passes buffers only)"
                    .into(),
            ));
            continue;
        }
        let slots = prog
            .params(k)
            .iter()
            .map(|s| (s.offset as u32, s.size as u32))
            .collect();
        let expected = corpus::catch(|| interpret(&prog, k, &inputs, &cfg)).unwrap_or(None);
        f.drafts.push(Draft {
            kernel: name,
            cfg,
            inputs,
            slots,
            expected,
            check,
        });
    }
    Some(f)
}

/// Runs the launch in the PTX interpreter; the CRC-32 of each buffer afterwards, or `None`
/// when it traps or cannot run.
fn interpret(
    prog: &interp::Program,
    k: u32,
    inputs: &harness::Inputs,
    cfg: &harness::Config,
) -> Option<Vec<u32>> {
    let mut prog = prog.clone();
    let mut mem = interp::Memory::new();
    let (params, addrs) = harness::place(inputs, &mut mem);
    prog.load(&mut mem);
    let launch = cfg.interp_launch(params);
    prog.run(&mut mem, k, &launch).ok()?;
    addrs
        .iter()
        .map(|a| mem.buffer(*a).map(|b| super::crc32(&b.data)))
        .collect()
}
