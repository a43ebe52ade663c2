//! `cargo xtask cubin-names [--print]`: checks `cubin::eiattr::EIATTR_NAMES` and
//! `COMPAT_NAMES` against `cuobjdump -elf` 13.0.88.
//!
//! It compiles a small kernel with ptxas (sm_90), and for every code 0x00..=0x6f rewrites the
//! code byte of the first record of the global `.nv.info` (an SVAL record, so the layout stays
//! valid), runs `cuobjdump -elf` and reads the `Attribute:` line of that record. The table in
//! the crate must give the same name (or `None` where cuobjdump prints `unknown Attribute`).
//! `--print` prints the table as Rust source, which is how the table was made.

use std::process::Command;

use crate::corpus::{PtxasOutcome, cache_dir, ptxas_cubin};
use crate::oracle;

const KERNEL: &str = "\
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  st.global.u32 [%rd1], 1;
  ret;
}
";

pub fn run(args: &[String]) -> Result<(), String> {
    let print = args.iter().any(|a| a == "--print");
    let cubin_path = match ptxas_cubin(KERNEL, "sm_90", &[])? {
        PtxasOutcome::Ok { cubin, .. } => cubin,
        PtxasOutcome::Rejected(m) => return Err(format!("ptxas rejected the probe kernel: {m}")),
    };
    let data = std::fs::read(&cubin_path).map_err(|e| e.to_string())?;
    let c = cubin::read(&data).map_err(|e| e.to_string())?;
    let (lay, _) = cubin::write::layout(&c);
    let idx = c
        .sections
        .iter()
        .position(|s| s.name == ".nv.info")
        .ok_or("probe cubin has no .nv.info")?;
    let off = lay.offsets[idx] as usize;
    if data.get(off) != Some(&4) {
        return Err("first .nv.info record is not an SVAL record".into());
    }
    let cuobjdump = oracle::tool("cuobjdump")?;
    let dir = cache_dir("cubin-names");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let probe = dir.join("probe.cubin");
    let mut mismatches = 0;
    if print {
        println!("pub const EIATTR_NAMES: [Option<&str>; 0x70] = [");
    }
    for code in 0u8..0x70 {
        let mut d = data.clone();
        d[off + 1] = code;
        std::fs::write(&probe, &d).map_err(|e| e.to_string())?;
        let out = Command::new(&cuobjdump)
            .arg("-elf")
            .arg(&probe)
            .output()
            .map_err(|e| format!("running cuobjdump: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let name = text
            .split("\n.nv.info\n")
            .nth(1)
            .and_then(|rest| {
                rest.lines()
                    .find_map(|l| l.trim().strip_prefix("Attribute:"))
            })
            .map(|n| n.trim().to_string())
            .ok_or_else(|| format!("code {code:#x}: no attribute line in cuobjdump's output"))?;
        let theirs = (name != "unknown Attribute").then_some(name);
        let ours = cubin::eiattr::EIATTR_NAMES[usize::from(code)].map(str::to_string);
        if print {
            match &theirs {
                Some(n) => println!("    Some(\"{n}\"),"),
                None => println!("    None,"),
            }
        }
        if theirs != ours {
            mismatches += 1;
            eprintln!("code {code:#04x}: cuobjdump {theirs:?}, table {ours:?}");
        }
    }
    if print {
        println!("];");
    }
    // `.nv.compat`: rewrite the code of its INST_TENSORMAP_V1 record (a BVAL record that
    // cuobjdump accepts with any code; changing other records makes it refuse the file).
    let cidx = c
        .sections
        .iter()
        .position(|s| s.name == ".nv.compat")
        .ok_or("probe cubin has no .nv.compat")?;
    let cubin::SectionData::Attributes(recs) = &c.sections[cidx].data else {
        return Err(".nv.compat did not decode".into());
    };
    let mut at = lay.offsets[cidx] as usize;
    for r in recs.iter().take_while(|r| r.code != 0x03) {
        at += 4 + if r.format == cubin::eiattr::Format::Sval {
            r.payload.len()
        } else {
            0
        };
    }
    if print {
        println!("pub const COMPAT_NAMES: [&str; _] = [");
    }
    for code in 0u8..0x20 {
        let mut d = data.clone();
        d[at + 1] = code;
        std::fs::write(&probe, &d).map_err(|e| e.to_string())?;
        let out = Command::new(&cuobjdump)
            .arg("-elf")
            .arg(&probe)
            .output()
            .map_err(|e| format!("running cuobjdump: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let name = text
            .split("\n.nv.compat\n")
            .nth(1)
            .and_then(|rest| {
                rest.lines()
                    .filter_map(|l| l.trim().strip_prefix("Attribute:"))
                    .nth(recs.iter().take_while(|r| r.code != 0x03).count())
            })
            .map(|n| n.trim().to_string())
            .ok_or_else(|| format!("compat code {code:#x}: no attribute line"))?;
        let theirs = (name != "unknown Attribute").then_some(name);
        let ours = cubin::eiattr::compat_name(code).map(str::to_string);
        if print && let Some(n) = &theirs {
            println!("    \"{n}\",");
        }
        if theirs != ours {
            mismatches += 1;
            eprintln!("compat code {code:#04x}: cuobjdump {theirs:?}, table {ours:?}");
        }
    }
    if print {
        println!("];");
    }
    println!("RESULT cubin-names codes=112+32 mismatches={mismatches}");
    if mismatches > 0 {
        return Err(format!("{mismatches} EIATTR names differ from cuobjdump"));
    }
    Ok(())
}
