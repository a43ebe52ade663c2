//! `kiln run FILE.ptx --kernel NAME --grid X,Y,Z --block X,Y,Z --arg ...`: runs a kernel in
//! the reference interpreter (`interp`) and writes the buffers back after the run.
//!
//! Arguments, one `--arg` per kernel parameter in order:
//! * scalars `u8:V` .. `u64:V`, `s8:V` .. `s64:V`, `f32:V`, `f64:V`, `b32:0x..`;
//! * buffers (the parameter receives their address): `file:PATH` (the file's bytes),
//!   `zero:N` (N zero bytes), `rand:N` (N bytes from `--seed`).
//!
//! After the run every buffer is written to `--out DIR` (default `kiln-run-out`) as
//! `argK.bin`; `file:` buffers are written back to their own path only with `--in-place`.

use std::path::{Path, PathBuf};

use crate::{Status, render};

#[derive(clap::Args)]
pub struct Args {
    /// The PTX file.
    pub(crate) file: PathBuf,
    /// The `.entry` to run.
    #[arg(long)]
    pub(crate) kernel: String,
    /// Grid size in CTAs: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    pub(crate) grid: String,
    /// CTA size in threads: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    pub(crate) block: String,
    /// One argument per kernel parameter (see the module docs for the forms).
    #[arg(long = "arg")]
    pub(crate) args: Vec<String>,
    /// Bytes of dynamic shared memory.
    #[arg(long, default_value_t = 0)]
    pub(crate) dynamic_shared: u32,
    /// Seed of `rand:N` buffers.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Where buffers are written after the run.
    #[arg(long, default_value = "kiln-run-out")]
    pub(crate) out: PathBuf,
    /// Write `file:PATH` buffers back to PATH.
    #[arg(long)]
    pub(crate) in_place: bool,
    /// Instructions per CTA before the run is stopped.
    #[arg(long, default_value_t = 100_000_000)]
    pub(crate) step_limit: u64,
    /// FILE is a cubin: run it in the SASS emulator (`crates/emu`) instead of interpreting PTX.
    #[arg(long)]
    pub(crate) sass: bool,
    /// Sanitize the run: report data races on shared memory, reads of uninitialized shared or
    /// local memory, and results that depend on thread interleaving (the launch runs a second
    /// time in another thread order); a non-zero exit status when anything is found.
    #[arg(long)]
    pub(crate) check: bool,
}

pub(crate) fn dims(s: &str, what: &str) -> Result<[u32; 3], String> {
    let v: Vec<u32> = s
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<u32>()
                .map_err(|_| format!("--{what}: `{p}` is not a number"))
        })
        .collect::<Result<_, _>>()?;
    if v.is_empty() || v.len() > 3 || v.contains(&0) {
        return Err(format!(
            "--{what} takes 1 to 3 positive numbers, e.g. 128,1,1"
        ));
    }
    Ok([v[0], *v.get(1).unwrap_or(&1), *v.get(2).unwrap_or(&1)])
}

/// A parsed `--arg`.
pub(crate) enum Arg {
    Scalar(Vec<u8>),
    Buffer {
        data: Vec<u8>,
        path: Option<PathBuf>,
    },
}

pub(crate) fn parse_arg(s: &str, seed: &mut u64) -> Result<Arg, String> {
    let (kind, v) = s.split_once(':').ok_or_else(|| {
        format!(
            "--arg `{s}`: expected KIND:VALUE (u32:5, f32:1.5, file:in.bin, zero:4096, rand:4096)"
        )
    })?;
    let int = |v: &str| -> Result<i128, String> {
        let (neg, body) = v.strip_prefix('-').map_or((false, v), |b| (true, b));
        let x = if let Some(h) = body.strip_prefix("0x") {
            i128::from_str_radix(h, 16)
        } else {
            body.parse::<i128>()
        }
        .map_err(|_| format!("--arg `{s}`: `{v}` is not an integer"))?;
        Ok(if neg { -x } else { x })
    };
    let scalar = |bytes: usize, x: i128, signed: bool| -> Result<Arg, String> {
        let bits = bytes as u32 * 8;
        let (lo, hi) = if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        if x < lo || x > hi {
            return Err(format!("--arg `{s}`: {x} does not fit in {kind}"));
        }
        Ok(Arg::Scalar((x as u128).to_le_bytes()[..bytes].to_vec()))
    };
    let size = |v: &str| {
        v.parse::<usize>()
            .map_err(|_| format!("--arg `{s}`: `{v}` is not a size"))
    };
    match kind {
        "u8" | "b8" => scalar(1, int(v)?, false),
        "u16" | "b16" => scalar(2, int(v)?, false),
        "u32" | "b32" => scalar(4, int(v)?, false),
        "u64" | "b64" => scalar(8, int(v)?, false),
        "s8" => scalar(1, int(v)?, true),
        "s16" => scalar(2, int(v)?, true),
        "s32" => scalar(4, int(v)?, true),
        "s64" => scalar(8, int(v)?, true),
        "f32" => v
            .parse::<f32>()
            .map(|x| Arg::Scalar(x.to_le_bytes().to_vec()))
            .map_err(|_| format!("--arg `{s}`: `{v}` is not a number")),
        "f64" => v
            .parse::<f64>()
            .map(|x| Arg::Scalar(x.to_le_bytes().to_vec()))
            .map_err(|_| format!("--arg `{s}`: `{v}` is not a number")),
        "file" => std::fs::read(v)
            .map(|data| Arg::Buffer {
                data,
                path: Some(PathBuf::from(v)),
            })
            .map_err(|e| format!("--arg `{s}`: cannot read {v}: {e}")),
        "zero" => Ok(Arg::Buffer {
            data: vec![0; size(v)?],
            path: None,
        }),
        "rand" => {
            let n = size(v)?;
            let mut data = Vec::with_capacity(n);
            for _ in 0..n {
                // xorshift64*: reproducible from --seed.
                *seed ^= *seed >> 12;
                *seed ^= *seed << 25;
                *seed ^= *seed >> 27;
                data.push((seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8);
            }
            Ok(Arg::Buffer { data, path: None })
        }
        _ => Err(format!("--arg `{s}`: unknown kind `{kind}`")),
    }
}

pub fn run(args: Args) -> Status {
    match run_inner(&args) {
        Ok(s) => s,
        Err(msg) => {
            eprintln!("kiln: error: {msg}");
            Status::Failure
        }
    }
}

fn run_inner(args: &Args) -> Result<Status, String> {
    if args.sass {
        return crate::run_sass::run(args);
    }
    let bytes = std::fs::read(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    // Diagnostics first: a module ptxas would refuse is not run.
    let mut db = db::RootDatabase::default();
    let file = db.add_file(&args.file, &bytes);
    let text = file.text(&db).to_string();
    // Syntax and semantic diagnostics (crates/hir through the database).
    let diags = db::diagnostics(&db, file).clone();
    let color = render::stderr_color();
    let shown = args.file.display().to_string();
    let mut errors = 0;
    for d in &diags {
        if d.severity == db::Severity::Error {
            errors += 1;
        }
        eprint!("{}", render::render(&shown, &text, d, color));
    }
    if errors > 0 {
        eprintln!("kiln: {errors} error(s); not running");
        return Ok(Status::InputErrors);
    }

    let mut prog = db::interp_program(&db, file, true).map_err(|e| format!("{shown}:{e}"))?;
    let k = prog.kernel(&args.kernel).ok_or_else(|| {
        format!(
            "no kernel `{}` in {shown} (kernels: {})",
            args.kernel,
            prog.kernels().join(", ")
        )
    })?;
    let slots = prog.params(k).to_vec();
    if slots.len() != args.args.len() {
        return Err(format!(
            "`{}` takes {} parameter(s) ({}), {} --arg given",
            args.kernel,
            slots.len(),
            slots
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            args.args.len()
        ));
    }
    let grid = dims(&args.grid, "grid")?;
    let block = dims(&args.block, "block")?;
    let (mut mem, params, buffers) = setup(&mut prog, k, &slots, args)?;
    let launch = interp::Launch {
        grid,
        block,
        dynamic_shared: args.dynamic_shared,
        params,
        step_limit: args.step_limit,
    };
    let options = interp::RunOptions {
        schedule: interp::Schedule::RoundRobin,
        sanitize: args.check,
        ..interp::RunOptions::default()
    };
    let result = prog.run_with(&mut mem, k, &launch, &options);
    // Buffers are written even after a trap: they show the state at the failure.
    if !buffers.is_empty() {
        std::fs::create_dir_all(&args.out)
            .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    }
    for (i, addr, path) in &buffers {
        let data = &mem.buffer(*addr).expect("allocated").data;
        let dest = match path {
            Some(p) if args.in_place => p.clone(),
            _ => args.out.join(format!("arg{i}.bin")),
        };
        write(&dest, data)?;
        println!("wrote {} ({} bytes)", dest.display(), data.len());
    }
    match result {
        Ok(stats) => {
            println!(
                "ran `{}`: {} warp instructions, {} thread instructions",
                args.kernel, stats.warp_steps, stats.thread_steps
            );
            if !args.check {
                return Ok(Status::Ok);
            }
            let mut found = 0;
            for f in &stats.findings {
                found += 1;
                report(&shown, &text, f.line, &f.message());
            }
            // Races on global memory (and any the shadow memory misses) by their effect: the
            // same launch in the finest reverse interleaving of threads.
            let (mut mem2, params2, buffers2) = setup(&mut prog, k, &slots, args)?;
            let launch2 = interp::Launch {
                params: params2,
                ..launch.clone()
            };
            let second = interp::RunOptions {
                schedule: interp::Schedule::Interleaved,
                ..interp::RunOptions::default()
            };
            if prog.run_with(&mut mem2, k, &launch2, &second).is_ok() {
                for ((i, a, _), (_, b, _)) in buffers.iter().zip(&buffers2) {
                    let x = &mem.buffer(*a).expect("allocated").data;
                    let y = &mem2.buffer(*b).expect("allocated").data;
                    if x != y {
                        found += 1;
                        let n = x.iter().zip(y).filter(|(p, q)| p != q).count();
                        eprintln!(
                            "{shown}: warning: data race: the result depends on how threads \
                             interleave (argument {i}: {n} bytes differ between two thread orders)"
                        );
                    }
                }
            }
            if found == 0 {
                println!("check: no data race or uninitialized read found");
                Ok(Status::Ok)
            } else {
                eprintln!("kiln: check: {found} finding(s)");
                Ok(Status::Failure)
            }
        }
        Err(e) => {
            eprintln!("{shown}: error: {e}");
            Ok(Status::InputErrors)
        }
    }
}

/// A sanitizer finding at PTX line `line`: `file:line:col: warning: message` and the line.
fn report(shown: &str, text: &str, line: u32, message: &str) {
    let src = text
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .unwrap_or("");
    let col = src.len() - src.trim_start().len() + 1;
    eprintln!("{shown}:{line}:{col}: warning: {message}");
    eprintln!("  | {}", src.trim());
}

/// A buffer argument: (argument index, address, file it came from).
type Buffer = (usize, u64, Option<PathBuf>);

/// Fresh memory with the module loaded and the arguments placed: (memory, parameter bytes,
/// buffers). The same arguments give the same addresses every time.
fn setup(
    prog: &mut interp::Program,
    k: u32,
    slots: &[interp::ParamSlot],
    args: &Args,
) -> Result<(interp::Memory, Vec<u8>, Vec<Buffer>), String> {
    let mut mem = interp::Memory::new();
    prog.load(&mut mem);
    let mut seed = args.seed | 1;
    let mut params = vec![0u8; prog.param_size(k) as usize];
    let mut buffers: Vec<(usize, u64, Option<PathBuf>)> = Vec::new();
    for (i, (slot, a)) in slots.iter().zip(&args.args).enumerate() {
        let bytes = match parse_arg(a, &mut seed)? {
            Arg::Scalar(b) => {
                if b.len() as u64 != slot.size {
                    return Err(format!(
                        "parameter `{}` is {} bytes, --arg `{a}` gives {}",
                        slot.name,
                        slot.size,
                        b.len()
                    ));
                }
                b
            }
            Arg::Buffer { data, path } => {
                if slot.size != 8 {
                    return Err(format!(
                        "parameter `{}` is {} bytes; a buffer address needs 8",
                        slot.name, slot.size
                    ));
                }
                let addr = mem.alloc(&format!("argument {i} ({})", slot.name), data);
                buffers.push((i, addr, path));
                addr.to_le_bytes().to_vec()
            }
        };
        let at = slot.offset as usize;
        params[at..at + bytes.len()].copy_from_slice(&bytes);
    }
    Ok((mem, params, buffers))
}

pub(crate) fn write(p: &Path, data: &[u8]) -> Result<(), String> {
    std::fs::write(p, data).map_err(|e| format!("cannot write {}: {e}", p.display()))
}
