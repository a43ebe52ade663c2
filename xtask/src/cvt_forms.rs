//! `cargo xtask cvt-forms`: learns ptxas's SASS for every `cvt` variant and writes the table
//! `crates/lower/data/cvt.tsv` that `lower` uses, plus the test kernels
//! `test-data/codegen/cvt_table.ptx` that exercise every row.
//!
//! For each combination of destination and source type, rounding modifier, `.ftz` and
//! `.sat`, a one-instruction kernel (`ld.global` → `cvt` → `st.global`) is compiled with ptxas
//! 13.0.88 for sm_80 and sm_90 and disassembled with nvdisasm. The instructions between the load
//! and the store become a template in `lower`'s sequence syntax (`lower/src/seq.rs`): the
//! loaded register is `%s`, the register stored is `%d`, every other value a fresh temporary
//! (`%tN`, `$pN`). A variant is left out (`-`) when its code cannot be written that way:
//! constant-bank or uniform-register operands, branches, 64-bit temporaries, the `.H1_H0`
//! selector, or reads of a register the template does not name (the `.H0_H0` and `.H1_H1`
//! selectors are kept). 8- and 16-bit
//! sources are loaded as the low half of a 32-bit word (`mov.b32 {lo, hi}`), so ptxas's code
//! cannot rely on the upper bits, as kiln's 16-bit registers leave them unspecified.

use std::collections::{BTreeMap, HashMap};
use std::process::Command;

use crate::corpus::{self, PtxasOutcome};
use crate::oracle;

const TYPES: &[&str] = &[
    "f32", "f64", "s32", "u32", "s64", "u64", "f16", "bf16", "s16", "u16", "s8", "u8",
];
const ROUNDINGS: &[&str] = &[
    "", ".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi",
];
/// The SMs every learned table (`cvt.tsv`, `math.tsv`, `ops.tsv`) has a column for: those
/// with code generation. `lower` reads the columns from each table's header line.
pub const ARCHS: &[&str] = &["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"];

/// The SM columns of a learned table's header line (`sm_80\tsm_86\t...`).
pub fn arch_columns() -> String {
    ARCHS.join("\t")
}

/// A `cvt` variant: its modifiers as PTX writes them (`.rmi.ftz.sat.s32.f32`).
#[derive(Clone, Debug)]
pub struct Variant {
    pub mods: String,
    pub dt: &'static str,
    pub st: &'static str,
}

fn bits(t: &str) -> u32 {
    t.trim_start_matches(char::is_alphabetic)
        .parse()
        .expect("type width")
}

/// Every variant ptxas might accept (it rejects the rest; those are dropped).
pub fn variants() -> Vec<Variant> {
    let mut v = Vec::new();
    for &dt in TYPES {
        for &st in TYPES {
            if dt == st && !dt.starts_with('f') {
                continue;
            }
            for r in ROUNDINGS {
                for ftz in ["", ".ftz"] {
                    for sat in ["", ".sat"] {
                        v.push(Variant {
                            mods: format!("{r}{ftz}{sat}.{dt}.{st}"),
                            dt,
                            st,
                        });
                    }
                }
            }
        }
    }
    v
}

/// The PTX register type holding a value of type `t`.
fn reg_type(t: &str) -> &'static str {
    match t {
        "f32" => ".f32",
        "f64" => ".f64",
        "s32" | "u32" => ".b32",
        "s64" | "u64" => ".b64",
        _ => ".b16",
    }
}

/// The `.target` of a learning probe compiled for `arch`: sm_80 (the PTX of every variant
/// the other SMs have, bf16 included), sm_75 for sm_75 (ptxas takes no `.target sm_80` file
/// for it).
pub fn probe_target(arch: &str) -> &'static str {
    if arch == "sm_75" { "sm_75" } else { "sm_80" }
}

/// The byte offset of a load's address (`[R2.64+0x4]`, sm_90's `desc[UR4][R2.64+0x4]`,
/// sm_75's `[R2+0x4]`, whose 64-bit register prints without `.64`): 0 without one.
pub fn load_offset(l: &str) -> Result<u32, String> {
    let addr = l.rsplit_once('[').map_or("", |(_, a)| a);
    match addr.split_once("+0x") {
        Some((_, rest)) => {
            let hex: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
            u32::from_str_radix(&hex, 16).map_err(|_| format!("load offset: {l}"))
        }
        None => Ok(0),
    }
}

/// The probe kernel of a variant for `arch`.
fn probe_ptx(v: &Variant, arch: &str) -> String {
    let (drt, srt) = (reg_type(v.dt), reg_type(v.st));
    let load = if srt == ".b16" {
        "ld.global.b32 %w1, [%q1];\n  mov.b32 {%s1, %s2}, %w1;".to_string()
    } else {
        format!("ld.global{srt} %s1, [%q1];")
    };
    format!(
        ".version 8.0\n.target {}\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n  \
         .reg .b64 %q<2>;\n  .reg .b32 %w<2>;\n  .reg {drt} %d<2>;\n  .reg {srt} %s<3>;\n  \
         ld.param.u64 %q1, [p];\n  {load}\n  cvt{} %d1, %s1;\n  st.global{drt} [%q1+16], %d1;\n  ret;\n}}\n",
        probe_target(arch),
        v.mods
    )
}

/// nvdisasm's instruction texts of a cubin (without addresses and `;`).
fn disassemble(cubin: &std::path::Path) -> Result<Vec<String>, String> {
    let out = Command::new(oracle::tool("nvdisasm")?)
        .arg("-c")
        .arg(cubin)
        .output()
        .map_err(|e| format!("running nvdisasm: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("/*")?;
            let (_, inst) = rest.split_once("*/")?;
            Some(inst.trim().trim_end_matches(';').trim().to_string())
        })
        .collect())
}

/// Operands of an instruction's text, without nvdisasm's `.reuse` markers.
fn split_operands(args: &str) -> Vec<String> {
    args.split(", ")
        .map(|a| a.trim().replace(".reuse", ""))
        .filter(|a| !a.is_empty())
        .collect()
}

/// `R12` → 12.
fn reg_index(s: &str, prefix: &str) -> Option<u32> {
    let d = s.strip_prefix(prefix)?;
    if d.is_empty() || !d.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    d.parse().ok()
}

/// Whether `s` is a float literal as nvdisasm prints them.
fn is_float(s: &str) -> bool {
    let t = s.strip_prefix('-').unwrap_or(s);
    matches!(t, "+INF" | "INF")
        || (t.starts_with(|c: char| c.is_ascii_digit())
            && !t.starts_with("0x")
            && t.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-')))
}

/// Turns the instructions between a probe's load and store into a template, or explains why
/// it cannot.
pub fn template(lines: &[String], dt: &str) -> Result<String, String> {
    let ldg = lines
        .iter()
        .position(|l| l.starts_with("LDG"))
        .ok_or("no LDG")?;
    let stg = lines
        .iter()
        .rposition(|l| l.starts_with("STG"))
        .ok_or("no STG")?;
    let first_op = |l: &str| -> Option<u32> {
        let (_, args) = l.split_once(' ')?;
        reg_index(split_operands(args).first()?, "R")
    };
    let s_reg = first_op(&lines[ldg]).ok_or("LDG destination")?;
    let stored = lines[stg]
        .split_once(' ')
        .map(|(_, a)| split_operands(a))
        .and_then(|o| o.last().cloned())
        .ok_or("STG operands")?;
    let d_reg = reg_index(&stored, "R").ok_or("STG source")?;
    let skip = |l: &str| {
        l.starts_with("LDG")
            || l.starts_with("STG")
            || l.starts_with("EXIT")
            || l.starts_with("BRA `")
            || l.starts_with("NOP")
            || l.starts_with("ULDC.64")
            || l.contains("c[0x0][0x28]")
            || (l.contains("c[0x0][0x160]") || l.contains("c[0x0][0x164]"))
            || l.contains("c[0x0][0x210]")
    };
    let body: Vec<&String> = lines.iter().filter(|l| !skip(l)).collect();
    if body.is_empty() {
        return Err("no instruction of its own".into());
    }
    let wide_dst = bits(dt) == 64;
    // The last write of the stored register is `%d`.
    let dests = |l: &str| -> Vec<usize> {
        let (op, args) = l.split_once(' ').unwrap_or((l, ""));
        let op = op.trim_start_matches('@');
        let ops = split_operands(args);
        let base = op.split('.').next().unwrap_or("");
        let second_pred = ops.get(1).is_some_and(|o| reg_index(o, "P").is_some());
        if matches!(base, "ISETP" | "FSETP" | "DSETP" | "PLOP3")
            || (matches!(base, "IADD3" | "LOP3") && second_pred)
        {
            vec![0, 1]
        } else {
            vec![0]
        }
    };
    let mut names: HashMap<String, String> = HashMap::new();
    names.insert(format!("R{s_reg}"), "%s".into());
    let (mut nt, mut np) = (0, 0);
    // The last unguarded write of the stored register is `%d`; guarded writes after it keep
    // the name (the old value survives where the guard is false).
    let last_d_write = body
        .iter()
        .rposition(|l| {
            !l.starts_with('@')
                && l.split_once(' ')
                    .map(|(_, a)| split_operands(a))
                    .and_then(|o| o.first().cloned())
                    == Some(format!("R{d_reg}"))
        })
        .ok_or("the stored register is not written unguarded")?;
    let mut out = Vec::new();
    for (k, l) in body.iter().enumerate() {
        if l.contains("c[") || l.contains("UR") || l.contains(".H1_H0") {
            return Err(format!("operand form: {l}"));
        }
        if l.contains("BRA") || l.contains("CALL") || l.contains("RET") || l.contains("QNAN") {
            return Err(format!("control flow or NaN literal: {l}"));
        }
        let (guard, rest) = match l.strip_prefix('@') {
            Some(r) => {
                let (g, rest) = r.split_once(' ').ok_or("guard")?;
                (Some(g.to_string()), rest.to_string())
            }
            None => (None, l.to_string()),
        };
        let (op, args) = rest.split_once(' ').unwrap_or((rest.as_str(), ""));
        let ops = split_operands(args);
        let ds = dests(&rest);
        let base = op.split('.').next().unwrap_or("");
        let wide_op = base.starts_with('D') && base != "DSETP"
            || op.contains(".F64")
            || op.contains("64")
            || op.ends_with(".64");
        // Sources first (an instruction reads before it writes).
        let rename = |o: &str, names: &HashMap<String, String>| -> Result<String, String> {
            let mut pre = String::new();
            let mut s = o;
            for p in ["-", "!", "~", "|"] {
                if let Some(r) = s.strip_prefix(p) {
                    pre.push_str(p);
                    s = r;
                }
            }
            let (core, post) = match s.strip_suffix('|') {
                Some(c) => (c, "|"),
                None => (s, ""),
            };
            // A half selector stays on the renamed register (`%s.H0_H0`).
            let (core, post) = match [".H0_H0", ".H1_H1"]
                .into_iter()
                .find_map(|h| core.strip_suffix(h).map(|c| (c, h)))
            {
                Some((c, h)) => (c, format!("{h}{post}")),
                None => (core, post.to_string()),
            };
            if matches!(core, "RZ" | "PT") {
                return Ok(o.to_string());
            }
            if reg_index(core, "R").is_some() || reg_index(core, "P").is_some() {
                let n = names
                    .get(core)
                    .ok_or_else(|| format!("reads {core}, which the template does not name"))?;
                return Ok(format!("{pre}{n}{post}"));
            }
            if is_float(o) {
                return Ok(format!("f:{o}"));
            }
            if o.starts_with("0x") || o.starts_with("-0x") {
                return Ok(o.to_string());
            }
            Err(format!("operand `{o}`"))
        };
        let mut new_ops = Vec::new();
        for (i, o) in ops.iter().enumerate() {
            if ds.contains(&i) {
                new_ops.push(String::new());
            } else {
                new_ops.push(rename(o, &names)?);
            }
        }
        let guard = match guard {
            Some(g) => {
                let (neg, p) = match g.strip_prefix('!') {
                    Some(p) => ("!", p),
                    None => ("", g.as_str()),
                };
                let n = names.get(p).ok_or("guard names an unknown predicate")?;
                Some(format!("@{neg}{n}"))
            }
            None => None,
        };
        for &i in &ds {
            let o = &ops[i];
            if matches!(o.as_str(), "RZ" | "PT") {
                new_ops[i] = o.clone();
                continue;
            }
            let guarded = l.starts_with('@');
            let name = if guarded {
                names
                    .get(o)
                    .cloned()
                    .ok_or_else(|| format!("guarded write of an unnamed register: {l}"))?
            } else if k == last_d_write && i == 0 && o == &format!("R{d_reg}") {
                if wide_op != wide_dst && !op.starts_with("F2F.F32") {
                    // A 64-bit result for a 32-bit destination or the reverse.
                    if wide_dst {
                        return Err(format!("32-bit write of a 64-bit result: {l}"));
                    }
                }
                "%d".to_string()
            } else if reg_index(o, "P").is_some() {
                np += 1;
                format!("$p{np}")
            } else if reg_index(o, "R").is_some() {
                if wide_op && !op.starts_with("F2F.F32") && !op.starts_with("F2I") {
                    return Err(format!("64-bit temporary: {l}"));
                }
                nt += 1;
                format!("%t{nt}")
            } else {
                return Err(format!("destination `{o}`"));
            };
            names.insert(o.clone(), name.clone());
            new_ops[i] = name;
        }
        let text = if new_ops.is_empty() {
            op.to_string()
        } else {
            format!("{op} {}", new_ops.join(", "))
        };
        out.push(match guard {
            Some(g) => format!("{g} {text}"),
            None => text,
        });
    }
    if names.get(&format!("R{d_reg}")).map(String::as_str) != Some("%d") {
        return Err("the stored value is not the template's result".into());
    }
    Ok(out.join("; "))
}

/// The learned table: variant → template per arch (`None`: not expressible / rejected).
pub fn learn() -> Result<BTreeMap<String, Vec<Result<String, String>>>, String> {
    let vs = variants();
    let rows = corpus::par_map("cvt-forms", &vs, |v| {
        let mut cols = Vec::new();
        for arch in ARCHS {
            let text = probe_ptx(v, arch);
            let r = match corpus::ptxas_cubin(&text, arch, &[]) {
                Ok(PtxasOutcome::Ok { cubin, .. }) => {
                    disassemble(&cubin).and_then(|lines| template(&lines, v.dt))
                }
                Ok(PtxasOutcome::Rejected(m)) => {
                    Err(format!("ptxas rejects: {}", m.lines().next().unwrap_or("")))
                }
                Err(e) => return Err(e),
            };
            cols.push(r);
        }
        Ok((format!("cvt{}", v.mods), cols))
    });
    let mut map = BTreeMap::new();
    for r in rows {
        let (k, cols) = r?;
        // Variants ptxas rejects on every arch are not PTX at all: leave them out.
        if cols
            .iter()
            .all(|c| matches!(c, Err(m) if m.starts_with("ptxas rejects")))
        {
            continue;
        }
        map.insert(k, cols);
    }
    Ok(map)
}

pub fn table_path() -> std::path::PathBuf {
    corpus::workspace_root().join("crates/lower/data/cvt.tsv")
}

pub fn table_text(map: &BTreeMap<String, Vec<Result<String, String>>>) -> String {
    let mut s = String::from(
        "# cvt variant → ptxas 13.0.88's SASS, as templates in lower/src/seq.rs syntax (%s source,\n\
         # %d destination); `-` = not expressible as a template (kiln refuses it).\n\
         # Generated by `cargo xtask cvt-forms`; do not edit.\n\
         # variant\t",
    );
    s.push_str(&arch_columns());
    s.push('\n');
    for (k, cols) in map {
        s.push_str(k);
        for c in cols {
            s.push('\t');
            s.push_str(c.as_deref().unwrap_or("-"));
        }
        s.push('\n');
    }
    s
}

/// Interesting source values, one per thread of the test launch (64 threads): signed zeros,
/// halves (ties), subnormals, the extremes of every integer and float range, infinities,
/// NaNs, values just inside and outside the 8/16/32/64-bit integer ranges.
pub const F32_VALUES: [u32; 64] = [
    0x0000_0000,
    0x8000_0000,
    0x3f80_0000,
    0xbf80_0000,
    0x3f00_0000,
    0x3fc0_0000,
    0x4020_0000,
    0xc020_0000,
    0x0000_0001,
    0x8000_0001,
    0x007f_ffff,
    0x0080_0000,
    0x8080_0000,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0xffc0_0001,
    0x437f_8000,
    0x4380_0000,
    0xc300_8000,
    0x477f_ff66,
    0x4780_0000,
    0x4f00_0000,
    0xcf00_0000,
    0x4eff_ffff,
    0x4f80_0000,
    0x5015_02f9,
    0xd015_02f9,
    0x5f00_0000,
    0xdf00_0000,
    0x5f80_0000,
    0x42f6_e979,
    0x3eff_ffff,
    0x3f00_0001,
    0x322b_cc77,
    0x0039_0000,
    0x4b00_0001,
    0xcb00_0001,
    0x4b7f_ffff,
    0x3f7f_ffff,
    0xbf7f_ffff,
    0x42fe_0000,
    0xc300_0000,
    0xc301_0000,
    0x46ff_fe00,
    0xc700_0000,
    0x4700_0100,
    0x3400_0000,
    0x3380_0000,
    0x3a00_0000,
    0x3880_0000,
    0x387f_ffff,
    0x477f_e000,
    0x4780_1000,
    0x5eff_ffff,
    0xdeff_ffff,
    0x0100_0000,
    0x1234_5678,
    0x9abc_def0,
    0x4049_0fdb,
    0xc2c8_0000,
    0x4479_ffff,
];

/// 64-bit source values: every 32-bit one widened to f64, then moved past the f32 and 32-bit
/// integer ranges.
pub fn f64_values() -> Vec<u64> {
    let extra: [u64; 16] = [
        0x0000_0000_0000_0001,
        0x000f_ffff_ffff_ffff,
        0x7fef_ffff_ffff_ffff,
        0x3ff0_0000_1000_0000,
        0x3ff0_0000_0800_0000,
        0x3ff0_0000_1800_0000,
        0x43e0_0000_0000_0000,
        0xc3e0_0000_0000_0000,
        0x43f0_0000_0000_0000,
        0x47f0_0000_0000_0000,
        0x3690_0000_0000_0000,
        0x36a0_0000_1000_0000,
        0x41ef_ffff_ffe0_0000,
        0xc1e0_0000_0020_0000,
        0x7ff8_0000_0000_0001,
        0xfff0_0000_0000_0000,
    ];
    let mut v: Vec<u64> = F32_VALUES[..48]
        .iter()
        .map(|&b| f64::from(f32::from_bits(b)).to_bits())
        .collect();
    v.extend(extra);
    v
}

/// Whether kiln's SASS table for `arch` encodes every instruction of `template` (with
/// placeholder registers): forms ptxas emits only here (`F2I.S8.F16`, ...) may be missing from
/// tables learned from the corpus until a probe run adds them.
pub fn encodable(template: &str, arch: &str) -> bool {
    let Some(table) = sass::table(arch) else {
        return false;
    };
    template.split("; ").all(|i| {
        // nvdisasm (and kiln's printer) write infinities as `+INF ` with a space.
        let mut text = i
            .replace("f:", "")
            .replace("+INF,", "+INF ,")
            .replace("-INF,", "-INF ,");
        for (k, name) in [("%d", "R8"), ("%s", "R4")] {
            text = text.replace(k, name);
        }
        for n in (1..10).rev() {
            text = text
                .replace(&format!("%t{n}"), &format!("R{}", 10 + 2 * n))
                .replace(&format!("$p{n}"), &format!("P{}", n % 7));
        }
        sass::encode::assemble_line(table, &text, 0, &|_| None).is_ok()
    })
}

/// The test kernels: every variant with templates on every SM that the SASS tables encode, each thread converting its
/// own value (`F32_VALUES[tid]`, `f64_values()[tid]`, or the same bits as integers; 8/16-bit
/// sources are the low half of the 32-bit pattern) and storing every result.
pub fn test_ptx(map: &BTreeMap<String, Vec<Result<String, String>>>) -> String {
    let rows: Vec<&String> = map
        .iter()
        .filter(|(_, c)| {
            // Not sm_75's column: the test file is sm_80 PTX (its bf16 rows), which sm_75
            // refuses as a whole; sm_75's templates are exercised by the corpus stages.
            c.iter()
                .zip(ARCHS)
                .filter(|(_, arch)| **arch != "sm_75")
                .all(|(t, arch)| {
                    t.as_ref()
                        .is_ok_and(|t| encodable(t, arch) && lower::cvt_template_schedulable(t))
                })
        })
        // f32/f16/bf16 → f64 of a NaN: the interpreter keeps the payload, the emulator's
        // F2F.F64.F32/.F64.F16 gives 0x7fffffffffffffff; which one the hardware does is not
        // established without a GPU (ptxas's cubin differs from the interpreter the same way),
        // so these rows (ptxas's own single instruction) are not in the execution test.
        .filter(|(k, _)| {
            ![".f64.f32", ".f64.f16", ".f64.bf16"]
                .iter()
                .any(|t| k.ends_with(t))
        })
        // f32 → f16 with `.ftz` and a directed rounding: ptxas writes the same
        // `F2F.F16.F32.RM`/`.RP` as without `.ftz`, which keeps a subnormal input (the smallest
        // f16 subnormal, not -0, for -2^-149 under `.rm`) where the interpreter flushes it as
        // the ISA says; ptxas's own cubin differs from the interpreter the same way (`corpus
        // compile` counts it not comparable), and only a GPU says which is right.
        .filter(|(k, _)| {
            !(k.ends_with(".f16.f32")
                && k.contains(".ftz")
                && (k.starts_with("cvt.rm.") || k.starts_with("cvt.rp.")))
        })
        .map(|(k, _)| k)
        .collect();
    let mut s = String::from(
        "// Generated by `cargo xtask cvt-forms`: every cvt variant lowered from\n\
         // crates/lower/data/cvt.tsv, on 64 special source values (one per thread).\n\
         .version 8.0\n.target sm_80\n.address_size 64\n",
    );
    s.push_str(".global .align 4 .b32 vals32[64] = {");
    s.push_str(
        &F32_VALUES
            .iter()
            .map(|v| format!("{v}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    s.push_str("};\n.global .align 8 .b64 vals64[64] = {");
    s.push_str(
        &f64_values()
            .iter()
            .map(|v| format!("{v}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    s.push_str("};\n");
    for (n, chunk) in rows.chunks(24).enumerate() {
        s.push_str(&format!(
            "\n.visible .entry cvt{n}(.param .u64 out)\n{{\n  .reg .b64 %rd<8>;\n  .reg .b32 %w<4>;\n  \
             .reg .f32 %f<2>;\n  .reg .f64 %fd<2>;\n  .reg .b16 %h<3>;\n  .reg .b32 %r<2>;\n  \
             .reg .f32 %df<{c}>;\n  .reg .f64 %dd<{c}>;\n  .reg .b32 %dr<{c}>;\n  .reg .b64 %dl<{c}>;\n  \
             .reg .b16 %dh<{c}>;\n  \
             ld.param.u64 %rd1, [out];\n  mov.u32 %w1, %tid.x;\n  mul.wide.u32 %rd2, %w1, 4;\n  \
             mov.u64 %rd3, vals32;\n  add.s64 %rd3, %rd3, %rd2;\n  ld.global.b32 %r1, [%rd3];\n  \
             mov.b32 %f1, %r1;\n  mov.b32 {{%h1, %h2}}, %r1;\n  mul.wide.u32 %rd2, %w1, 8;\n  \
             mov.u64 %rd4, vals64;\n  add.s64 %rd4, %rd4, %rd2;\n  ld.global.b64 %rd5, [%rd4];\n  \
             mov.b64 %fd1, %rd5;\n  mul.wide.u32 %rd2, %w1, {stride};\n  add.s64 %rd6, %rd1, %rd2;\n",
            c = chunk.len() + 1,
            stride = chunk.len() * 8,
        ));
        for (i, k) in chunk.iter().enumerate() {
            let types: Vec<&str> = k.rsplitn(3, '.').take(2).collect();
            let (st, dt) = (types[0], types[1]);
            let src = match st {
                "f32" => "%f1",
                "f64" => "%fd1",
                "s32" | "u32" => "%r1",
                "s64" | "u64" => "%rd5",
                _ => "%h1",
            };
            let (dst, store) = match dt {
                "f32" => (format!("%df{i}"), "f32"),
                "f64" => (format!("%dd{i}"), "f64"),
                "s32" | "u32" => (format!("%dr{i}"), "b32"),
                "s64" | "u64" => (format!("%dl{i}"), "b64"),
                _ => (format!("%dh{i}"), "b16"),
            };
            s.push_str(&format!(
                "  {k} {dst}, {src};\n  st.global.{store} [%rd6+{}], {dst};\n",
                i * 8
            ));
        }
        s.push_str("  ret;\n}\n");
    }
    s
}

/// A kernel with every variant ptxas accepts, for `cargo xtask sass-probe --collect --dir
/// test-data/sass-probe` (so the SASS tables learn the conversion forms).
pub fn probe_kernel(map: &BTreeMap<String, Vec<Result<String, String>>>) -> String {
    let mut s = String::from(
        "// Generated by `cargo xtask cvt-forms`: every cvt variant, for the SASS probe.\n\
         .version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry probe_cvt(.param .u64 p)\n{\n  .reg .b64 %q<4>;\n  .reg .b32 %w<2>;\n  \
         .reg .f32 %f<2>;\n  .reg .f64 %fd<2>;\n  .reg .b32 %r<2>;\n  .reg .b64 %l<2>;\n  \
         .reg .b16 %h<3>;\n  .reg .f32 %df<2>;\n  .reg .f64 %dd<2>;\n  .reg .b32 %dr<2>;\n  \
         .reg .b64 %dl<2>;\n  .reg .b16 %dh<2>;\n  ld.param.u64 %q1, [p];\n  \
         ld.global.f32 %f1, [%q1];\n  ld.global.f64 %fd1, [%q1+8];\n  ld.global.b32 %r1, [%q1+16];\n  \
         ld.global.b64 %l1, [%q1+24];\n  mov.b32 {%h1, %h2}, %r1;\n",
    );
    for (n, k) in map.keys().enumerate() {
        let types: Vec<&str> = k.rsplitn(3, '.').take(2).collect();
        let (st, dt) = (types[0], types[1]);
        let src = match st {
            "f32" => "%f1",
            "f64" => "%fd1",
            "s32" | "u32" => "%r1",
            "s64" | "u64" => "%l1",
            _ => "%h1",
        };
        let (dst, store) = match dt {
            "f32" => ("%df1", "f32"),
            "f64" => ("%dd1", "f64"),
            "s32" | "u32" => ("%dr1", "b32"),
            "s64" | "u64" => ("%dl1", "b64"),
            _ => ("%dh1", "b16"),
        };
        s.push_str(&format!(
            "  {k} {dst}, {src};\n  st.global.{store} [%q1+{}], {dst};\n",
            32 + 8 * n
        ));
    }
    s.push_str("  ret;\n}\n");
    s
}

pub fn test_ptx_path() -> std::path::PathBuf {
    corpus::workspace_root().join("test-data/codegen/cvt_table.ptx")
}

pub fn run(_args: &[String]) -> Result<(), String> {
    let map = learn()?;
    let path = table_path();
    std::fs::create_dir_all(path.parent().expect("data dir")).map_err(|e| e.to_string())?;
    std::fs::write(&path, table_text(&map)).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(test_ptx_path(), test_ptx(&map)).map_err(|e| e.to_string())?;
    let probe = corpus::workspace_root().join("test-data/sass-probe/ptx/probe_cvt.ptx");
    std::fs::write(&probe, probe_kernel(&map)).map_err(|e| e.to_string())?;
    let supported = map.values().filter(|c| c.iter().all(Result::is_ok)).count();
    println!(
        "wrote {} ({} variants, {supported} with templates on every SM)",
        path.display(),
        map.len()
    );
    let mut why: BTreeMap<String, usize> = BTreeMap::new();
    for cols in map.values() {
        for c in cols {
            if let Err(e) = c {
                let key: String = e.split(':').next().unwrap_or(e).to_string();
                *why.entry(key).or_default() += 1;
            }
        }
    }
    for (w, n) in why {
        println!("{n:>5}  {w}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(t: &str) -> Vec<String> {
        t.lines().map(|l| l.trim().to_string()).collect()
    }

    /// Every SM's spelling of a load's offset: a template's operands are bound by it (sm_75's
    /// bare `[R2+0x4]` once read as offset 0 bound both of `div.rz.f32`'s sources to `%a`).
    #[test]
    fn load_offsets_of_every_sm() {
        assert_eq!(load_offset("LDG.E.SYS R0, [R2+0x4]"), Ok(4));
        assert_eq!(load_offset("LDG.E.SYS R0, [R2]"), Ok(0));
        assert_eq!(load_offset("LDG.E R0, [R2.64+0x8]"), Ok(8));
        assert_eq!(load_offset("LDG.E.64 R6, desc[UR4][R8.64+0x10]"), Ok(16));
        assert_eq!(load_offset("LDG.E.64 R6, desc[UR4][R8.64]"), Ok(0));
    }

    #[test]
    fn templates_name_the_source_destination_and_temporaries() {
        // cvt.rni.sat.f32.f32 on sm_80: the first write of the stored register is a
        // temporary, the last one `%d`.
        let l = lines(
            "MOV R1, c[0x0][0x28]
             MOV R2, c[0x0][0x160]
             LDG.E R0, [R2.64]
             FRND R0, R0
             FADD.SAT R5, RZ, R0
             STG.E [R2.64+0x10], R5
             EXIT",
        );
        assert_eq!(
            template(&l, "f32").unwrap(),
            "FRND %t1, %s; FADD.SAT %d, RZ, %t1"
        );
        // A guarded write keeps the register's name (the old value survives where the guard
        // is false).
        let l = lines(
            "LDG.E.64 R4, [R2.64]
             F2F.F32.F64.RZ R7, R4
             FSETP.GEU.AND P0, PT, |R7|, 1.175494350822287508e-38, PT
             @!P0 FMUL R7, R7, 1.175494350822287508e-38
             STG.E [R2.64+0x10], R7",
        );
        assert_eq!(
            template(&l, "f32").unwrap(),
            "F2F.F32.F64.RZ %d, %s; FSETP.GEU.AND $p1, PT, |%d|, f:1.175494350822287508e-38, PT; \
             @!$p1 FMUL %d, %d, f:1.175494350822287508e-38"
        );
        // Reads of a register the template cannot name (the high word of a 64-bit source)
        // and constant-bank operands are refused.
        let l = lines(
            "LDG.E.64 R4, [R2.64]
             SHF.R.U32.HI R0, RZ, 0x1f, R5
             STG.E [R2.64+0x10], R0",
        );
        assert!(template(&l, "u32").is_err());
        let l = lines(
            "LDG.E.64 R4, [R2.64]
             DSETP.GEU.AND P0, PT, |R4|, c[0x2][0x0], PT
             SEL R0, RZ, 0x1, !P0
             STG.E [R2.64+0x10], R0",
        );
        assert!(template(&l, "u32").is_err());
    }

    /// A sample of the committed table regenerated with ptxas and nvdisasm: the table is what
    /// the generator makes of the oracle's output.
    #[test]
    fn committed_table_matches_the_oracle() {
        if oracle::tool("ptxas").is_err() {
            println!("skipping: NVIDIA's ptxas is not installed (cargo xtask oracle)");
            return;
        }
        let text = std::fs::read_to_string(table_path()).expect("committed table");
        let committed: HashMap<&str, Vec<&str>> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let mut f = l.split('\t');
                (f.next().unwrap(), f.collect())
            })
            .collect();
        let all = variants();
        for v in all.iter().step_by(97) {
            let key = format!("cvt{}", v.mods);
            for (k, arch) in ARCHS.iter().enumerate() {
                let text = probe_ptx(v, arch);
                let got = match corpus::ptxas_cubin(&text, arch, &[]).unwrap() {
                    PtxasOutcome::Ok { cubin, .. } => {
                        template(&disassemble(&cubin).unwrap(), v.dt).ok()
                    }
                    PtxasOutcome::Rejected(_) => None,
                };
                let want = committed.get(key.as_str()).map(|c| c[k]);
                match (got.as_deref(), want) {
                    (Some(g), Some(w)) => assert_eq!(g, w, "{key} {arch}"),
                    (None, Some(w)) => assert_eq!(w, "-", "{key} {arch}"),
                    (Some(g), None) => panic!("{key} {arch}: {g} missing from the table"),
                    (None, None) => {}
                }
            }
        }
    }
}
