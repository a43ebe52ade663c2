//! `cargo xtask corpus cubin --arch sm_XX [--dir DIR] [--no-lineinfo]`: the cubin stage.
//!
//! For every accepted corpus file whose `.target` allows the arch: compile it with ptxas
//! (whole-program; when ptxas rejects that, as relocatable `-c`), and again with `-lineinfo`
//! so the debug sections are covered. For each cubin: read it with the `cubin` crate, compare
//! our listing with `cuobjdump -elf` (see `cubin::listing` for what "equal" means), write the
//! model back and compare bytes. Panics are caught and counted.
//!
//! Last line: `RESULT cubin <arch> cubins=<n> listing_equal=<n> byte_identical=<n> panics=<n>`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{CorpusArgs, GroupCounts, PtxasOutcome};
use crate::oracle;

struct Outcome {
    group: String,
    cubins: usize,
    listing_equal: usize,
    byte_identical: usize,
    rule_layout: usize,
    panics: usize,
    relocatable: usize,
    facts_checked: usize,
    facts_equal: usize,
    messages: Vec<String>,
}

/// ptxas's own `-v` report per (file, arch, entry) from `ptxas_kernels.tsv`:
/// (registers, barriers, static shared bytes, stack bytes).
type KernelTable = HashMap<(String, String, String), (u32, u32, u64, u32)>;

fn load_kernel_table(dir: &Path) -> KernelTable {
    let mut t = HashMap::new();
    let Ok(text) = std::fs::read_to_string(dir.join("ptxas_kernels.tsv")) else {
        return t;
    };
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 7 {
            continue;
        }
        let (Ok(regs), Ok(bar), Ok(smem), Ok(stack)) =
            (f[3].parse(), f[4].parse(), f[5].parse(), f[6].parse())
        else {
            continue;
        };
        t.insert(
            (f[0].to_string(), f[1].to_string(), f[2].to_string()),
            (regs, bar, smem, stack),
        );
    }
    t
}

/// `cuobjdump -elf` of a cached cubin, cached beside it.
fn cuobjdump_elf(cubin: &Path) -> Result<String, String> {
    let cache = cubin.with_extension("cuobjdump-elf.txt");
    if let Ok(t) = std::fs::read_to_string(&cache) {
        return Ok(t);
    }
    let out = Command::new(oracle::tool("cuobjdump")?)
        .arg("-elf")
        .arg(cubin)
        .output()
        .map_err(|e| format!("running cuobjdump: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cuobjdump -elf failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = cache.with_extension(format!("{}-{seq}.tmp", std::process::id()));
    if std::fs::write(&tmp, &text).is_ok() {
        let _ = std::fs::rename(&tmp, &cache);
    }
    Ok(text)
}

/// Checks one cubin file; returns (listing_equal, byte_identical, rule_layout, message).
type Checked = (
    bool,
    bool,
    bool,
    Option<String>,
    Vec<cubin::facts::FunctionFacts>,
);

fn check_cubin(path: &Path) -> Result<Checked, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let theirs = cuobjdump_elf(path)?;
    let c = match cubin::read(&data) {
        Ok(c) => c,
        Err(e) => {
            return Ok((
                false,
                false,
                false,
                Some(format!("read error: {e}")),
                Vec::new(),
            ));
        }
    };
    let mut msg = None;
    let listing_equal = match cubin::listing::compare_with_cuobjdump(&c, &theirs) {
        Ok(()) => true,
        Err(e) => {
            msg = Some(format!("listing differs: {e}"));
            false
        }
    };
    let out = cubin::write(&c);
    let byte_identical = out == data;
    if !byte_identical && msg.is_none() {
        let first = out.iter().zip(&data).position(|(a, b)| a != b);
        msg = Some(format!(
            "rewrite differs: {} vs {} bytes, first difference at {first:?}",
            out.len(),
            data.len()
        ));
    }
    Ok((
        listing_equal,
        byte_identical,
        c.layout_is_rule_based(),
        msg,
        c.functions(),
    ))
}

fn check_file(
    dir: &Path,
    rel: &Path,
    arch: &str,
    lineinfo: bool,
    table: &KernelTable,
) -> Option<Outcome> {
    let text = super::read_text(&dir.join(rel)).ok()?;
    let targets = super::scan_targets(&text);
    let arch = super::arch_for_file(&targets, arch)?;
    let mut o = Outcome {
        group: super::group_of(rel),
        cubins: 0,
        listing_equal: 0,
        byte_identical: 0,
        rule_layout: 0,
        panics: 0,
        relocatable: 0,
        facts_checked: 0,
        facts_equal: 0,
        messages: Vec::new(),
    };
    let variants: &[&[&str]] = if lineinfo {
        &[&[], &["-lineinfo"]]
    } else {
        &[&[]]
    };
    for flags in variants {
        // Whole-program first; files with unresolved externs need `-c`.
        let mut compiled = None;
        for reloc in [false, true] {
            let mut f: Vec<&str> = flags.to_vec();
            if reloc {
                f.push("-c");
            }
            match super::ptxas_cubin(&text, &arch, &f) {
                Ok(PtxasOutcome::Ok { cubin, .. }) => {
                    compiled = Some((cubin, reloc));
                    break;
                }
                Ok(PtxasOutcome::Rejected(_)) => continue,
                Err(e) => {
                    o.messages.push(format!("{}: {e}", rel.display()));
                    break;
                }
            }
        }
        let Some((cubin, reloc)) = compiled else {
            continue;
        };
        o.cubins += 1;
        o.relocatable += usize::from(reloc);
        let what = format!(
            "{} [{arch}{}{}]",
            rel.display(),
            if flags.is_empty() { "" } else { " -lineinfo" },
            if reloc { " -c" } else { "" }
        );
        match super::catch(|| check_cubin(&cubin)) {
            Ok(Ok((l, b, r, msg, facts))) => {
                o.listing_equal += usize::from(l);
                o.byte_identical += usize::from(b);
                o.rule_layout += usize::from(r);
                if let Some(m) = msg {
                    o.messages.push(format!("{what}: {m}"));
                }
                // Cross-check the kernels' facts with ptxas's own -v report.
                let key_file = rel.to_string_lossy().into_owned();
                for f in facts.iter().filter(|f| f.is_entry) {
                    let key = (key_file.clone(), arch.clone(), f.name.clone());
                    let Some(&(regs, bar, smem, stack)) = table.get(&key) else {
                        continue;
                    };
                    o.facts_checked += 1;
                    let ours = (
                        f.registers.unwrap_or(0),
                        u32::from(f.num_barriers.unwrap_or(0)),
                    );
                    if ours == (regs, bar) {
                        o.facts_equal += 1;
                    } else {
                        o.messages.push(format!(
                            "{what}: {}: (regs, barriers) ours {ours:?}, ptxas -v {:?}",
                            f.name,
                            (regs, bar)
                        ));
                    }
                    let _ = (smem, stack);
                }
            }
            Ok(Err(e)) => o.messages.push(format!("{what}: {e}")),
            Err(p) => {
                o.panics += 1;
                o.messages.push(format!("{what}: PANIC {p}"));
            }
        }
    }
    Some(o)
}

pub fn run(args: &CorpusArgs) -> Result<(), String> {
    let arch = args.require_arch("cubin")?.to_string();
    let lineinfo = !args.rest.iter().any(|a| a == "--no-lineinfo");
    if let Some(bad) = args.rest.iter().find(|a| *a != "--no-lineinfo") {
        return Err(format!("corpus cubin: unknown option `{bad}`"));
    }
    oracle::tool("ptxas")?;
    oracle::tool("cuobjdump")?;
    super::quiet_panics();
    let files: Vec<PathBuf> = args
        .ptx_files()
        .into_iter()
        .filter(|f| super::is_accepted(f))
        .collect();
    let dir = args.dir.clone();
    let table = load_kernel_table(&dir);
    let results = super::par_map("cubin", &files, |rel| {
        check_file(&dir, rel, &arch, lineinfo, &table)
    });
    let mut groups = GroupCounts::default();
    let (mut n, mut le, mut bi, mut rl, mut pa, mut rc) = (0, 0, 0, 0, 0, 0);
    let (mut fc, mut fe) = (0, 0);
    let mut shown = 0;
    for o in results.into_iter().flatten() {
        groups.add(
            &o.group,
            &[
                o.cubins,
                o.listing_equal,
                o.byte_identical,
                o.rule_layout,
                o.relocatable,
                o.panics,
            ],
        );
        n += o.cubins;
        le += o.listing_equal;
        bi += o.byte_identical;
        rl += o.rule_layout;
        pa += o.panics;
        rc += o.relocatable;
        fc += o.facts_checked;
        fe += o.facts_equal;
        for m in o.messages {
            if shown < 40 {
                println!("{m}");
            }
            shown += 1;
        }
    }
    if shown > 40 {
        println!("... {} more messages", shown - 40);
    }
    groups.print(&[
        "cubins",
        "listing_eq",
        "byte_ident",
        "rule_layout",
        "reloc(-c)",
        "panics",
    ]);
    println!(
        "rule_layout={rl} (cubins whose every section offset follows the packing rule), relocatable={rc}"
    );
    println!(
        "kernel_facts_checked={fc} kernel_facts_equal={fe} (REGCOUNT and NUM_BARRIERS of entries vs ptxas -v in ptxas_kernels.tsv)"
    );
    println!("RESULT cubin {arch} cubins={n} listing_equal={le} byte_identical={bi} panics={pa}");
    Ok(())
}
