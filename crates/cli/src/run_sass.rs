//! `kiln run --sass FILE.cubin --kernel NAME --grid X,Y,Z --block X,Y,Z --arg ...`: runs a
//! kernel of a cubin in the SASS emulator (`crates/emu`) with the same argument syntax as the
//! PTX interpreter (`run.rs`): one `--arg` per kernel parameter in order (the parameter list
//! comes from the cubin's EIATTR_KPARAM_INFO), buffers written to `--out DIR/argN.bin`.

use std::path::PathBuf;

use crate::Status;
use crate::run::{Arg, Args, dims, parse_arg, write};

pub(crate) fn run(args: &Args) -> Result<Status, String> {
    let shown = args.file.display().to_string();
    let bytes = std::fs::read(&args.file).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut mem = interp::Memory::new();
    // Buffers are allocated before the module's globals (the loader allocates those).
    let mut seed = args.seed | 1;
    let parsed: Vec<Arg> = args
        .args
        .iter()
        .map(|a| parse_arg(a, &mut seed))
        .collect::<Result<_, _>>()?;
    let mut buffers: Vec<(usize, u64, Option<PathBuf>)> = Vec::new();
    let mut values: Vec<Vec<u8>> = Vec::new();
    for (i, a) in parsed.into_iter().enumerate() {
        match a {
            Arg::Scalar(b) => values.push(b),
            Arg::Buffer { data, path } => {
                let addr = mem.alloc(&format!("argument {i}"), data);
                buffers.push((i, addr, path));
                values.push(addr.to_le_bytes().to_vec());
            }
        }
    }
    let prog = emu::load(&bytes, &mut mem).map_err(|e| format!("{shown}: {e}"))?;
    let k = prog.kernel(&args.kernel).ok_or_else(|| {
        format!(
            "no kernel `{}` in {shown} (kernels: {})",
            args.kernel,
            prog.kernels
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    if k.params.len() != values.len() {
        return Err(format!(
            "`{}` takes {} parameter(s), {} --arg given",
            args.kernel,
            k.params.len(),
            values.len()
        ));
    }
    let mut params = vec![0u8; k.param_block.1 as usize];
    for (i, (p, v)) in k.params.iter().zip(&values).enumerate() {
        if v.len() != p.size as usize {
            return Err(format!(
                "parameter {i} is {} bytes, --arg `{}` gives {}",
                p.size,
                args.args[i],
                v.len()
            ));
        }
        let at = p.offset as usize;
        params
            .get_mut(at..at + v.len())
            .ok_or_else(|| format!("parameter {i} lies outside the parameter block"))?
            .copy_from_slice(v);
    }
    let launch = emu::Launch {
        grid: dims(&args.grid, "grid")?,
        block: dims(&args.block, "block")?,
        dynamic_shared: args.dynamic_shared,
        params,
        step_limit: args.step_limit,
    };
    let result = emu::run(&prog, &mut mem, &args.kernel, &launch);
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
                "ran `{}` (SASS): {} warp instructions, {} thread instructions",
                args.kernel, stats.warp_steps, stats.thread_steps
            );
            Ok(Status::Ok)
        }
        Err(e) => {
            eprintln!("{shown}: error: {e}");
            Ok(Status::InputErrors)
        }
    }
}
