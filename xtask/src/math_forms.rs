//! `cargo xtask math-forms`: learns ptxas's SASS for the IEEE-rounded math instructions —
//! f32 `rcp`, `sqrt`, `div` in every rounding mode, with and without `.ftz`; f64 `rcp`,
//! `sqrt`, `div` in every rounding mode and `rcp.approx.ftz.f64`, `rsqrt.approx[.ftz].f64`;
//! `div`/`rem` of `.u64`/`.s64` —
//! and writes `crates/lower/data/math.tsv`, plus the test kernels
//! `test-data/codegen/math_table.ptx` (f32) and `math_table_64.ptx`.
//!
//! Each routine is a fast path and a slow-path subroutine that ptxas calls
//! (`CALL.REL.NOINC $__internal_..._slowpath`). The probe kernel loads the operands, applies
//! the instruction and stores the result; the learned template (in `lower/src/seq.rs` syntax)
//! is everything between the loads and the store with the subroutine inlined: the call becomes
//! a branch to the subroutine's code, its return a branch back to the instruction after the
//! call. Every physical register becomes one temporary (`%rN`, `$pN`) — ptxas's own register
//! use, which is consistent across the routine's branches — with the operands copied in at
//! the start (`MOV %r0, %a`) and the result copied out at the end (`MOV %d, %r5`). An even
//! register that is anywhere half of a 64-bit operand (`DFMA`, `CS2R`, an f64 conversion)
//! becomes a 64-bit temporary `%qN` throughout, its single words `%qN.0`/`%qN.1`; ptxas's
//! two-predicate branch `@P0 BRA P1, X` becomes `@!P0 BRA S; @P1 BRA X; S:`. A routine whose
//! code reads anything else (constant banks, uniform registers) is left out (`-`).

use std::collections::{BTreeMap, HashMap};
use std::process::Command;

use crate::corpus::{self, PtxasOutcome};
use crate::cvt_forms::{ARCHS, encodable};
use crate::oracle;

/// The instructions learned: (PTX instruction, operand count). f32 in every rounding mode;
/// f64 `div`/`rcp`/`sqrt` in every rounding mode and the f64 approximations.
pub fn variants() -> Vec<(String, usize)> {
    let mut v = Vec::new();
    for (op, n) in [("rcp", 1), ("sqrt", 1), ("div", 2)] {
        for r in [".rn", ".rz", ".rm", ".rp"] {
            for ftz in ["", ".ftz"] {
                v.push((format!("{op}{r}{ftz}.f32"), n));
            }
            v.push((format!("{op}{r}.f64"), n));
        }
    }
    for inst in [
        "rcp.approx.ftz.f64",
        "rsqrt.approx.f64",
        "rsqrt.approx.ftz.f64",
    ] {
        v.push((inst.to_string(), 1));
    }
    for op in ["div", "rem"] {
        for t in [".u64", ".s64"] {
            v.push((format!("{op}{t}"), 2));
        }
    }
    v
}

/// Whether a variant computes on 64-bit values (its operands are register pairs).
pub fn is_wide(inst: &str) -> bool {
    inst.ends_with("64")
}

fn probe_ptx(inst: &str, n: usize, arch: &str) -> String {
    let srcs = if n == 1 { "%f1" } else { "%f1, %f2" };
    let t = inst.rsplit('.').next().unwrap_or("f32");
    let w = if is_wide(inst) { 8 } else { 4 };
    format!(
        ".version 8.0\n.target {}\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n  \
         .reg .b64 %q<2>;\n  .reg .{t} %f<4>;\n  ld.param.u64 %q1, [p];\n  \
         ld.global.{t} %f1, [%q1];\n  ld.global.{t} %f2, [%q1+{w}];\n  {inst} %f3, {srcs};\n  \
         st.global.{t} [%q1+16], %f3;\n  ret;\n}}\n",
        crate::cvt_forms::probe_target(arch)
    )
}

/// nvdisasm's text of a cubin: instructions and label lines (`.L_x_0:`, subroutine names).
fn disassemble(cubin: &std::path::Path) -> Result<Vec<String>, String> {
    let out = Command::new(oracle::tool("nvdisasm")?)
        .arg("-c")
        .arg(cubin)
        .output()
        .map_err(|e| format!("running nvdisasm: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = Vec::new();
    for l in text.lines() {
        let l = l.trim();
        if let Some(rest) = l.strip_prefix("/*")
            && let Some((_, inst)) = rest.split_once("*/")
        {
            lines.push(inst.trim().trim_end_matches(';').trim().to_string());
        } else if l.ends_with(':') && (l.starts_with(".L_x_") || l.starts_with("$__internal")) {
            lines.push(l.to_string());
        }
    }
    Ok(lines)
}

fn operands(args: &str) -> Vec<String> {
    args.split(", ")
        .map(|a| a.trim().replace(".reuse", ""))
        .filter(|a| !a.is_empty())
        .collect()
}

fn reg(s: &str, prefix: &str) -> Option<u32> {
    let d = s.strip_prefix(prefix)?;
    (!d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
        .then(|| d.parse().ok())
        .flatten()
}

fn is_float(s: &str) -> bool {
    let t = s.strip_prefix('-').unwrap_or(s);
    matches!(t.trim(), "+INF" | "INF")
        || (t.starts_with(|c: char| c.is_ascii_digit())
            && !t.starts_with("0x")
            && t.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-')))
}

/// Which register operands of an instruction are 64-bit pairs, by operand index (`n`
/// operands). `D*` instructions compute on pairs, `CS2R` writes one, `IMAD.WIDE` writes one
/// and adds one (its last operand), conversions by their types; `MUFU.RCP64H`/`RSQ64H` and
/// `SHF.*.U64` work on single words. Another 64-bit form is an error (not learned).
fn pair_operands(op: &str, n: usize) -> Result<Vec<bool>, String> {
    let mods: Vec<&str> = op.split('.').skip(1).collect();
    let base = op.split('.').next().unwrap_or(op);
    let wide_int = |m: &&str| matches!(*m, "S64" | "U64");
    let (dst, srcs) = match base {
        "DEPBAR" => (false, false),
        _ if base.starts_with('D') => (true, true),
        "CS2R" => (!mods.contains(&"32"), false),
        "IMAD" if mods.contains(&"WIDE") => {
            return Ok((0..n).map(|i| i == 0 || i + 1 == n).collect());
        }
        "MUFU" | "SHF" => (false, false),
        // F2F.<dst>.<src>
        "F2F" => match mods
            .iter()
            .filter(|m| m.starts_with('F'))
            .collect::<Vec<_>>()[..]
        {
            [d, s] => (*d == "F64", *s == "F64"),
            _ => return Err(format!("conversion types: {op}")),
        },
        // F2I[.<int dst>].<float src>, I2F.<float dst>[.<int src>]
        "F2I" => (mods.iter().any(wide_int), mods.contains(&"F64")),
        "I2F" => (mods.contains(&"F64"), mods.iter().any(wide_int)),
        _ if op.contains("64") => return Err(format!("64-bit form: {op}")),
        _ => (false, false),
    };
    Ok((0..n).map(|i| if i == 0 { dst } else { srcs }).collect())
}

/// Strips source modifiers: `-|R4|` → `R4`.
fn core_operand(o: &str) -> &str {
    let mut s = o;
    for p in ["-", "!", "~", "|"] {
        s = s.strip_prefix(p).unwrap_or(s);
    }
    s.strip_suffix('|').unwrap_or(s)
}

/// The template of a probe's code (module docs), or why there is none. `wide`: the operands
/// and result are f64 register pairs.
pub fn template(lines: &[String], n: usize, wide: bool) -> Result<String, String> {
    let loads: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("LDG"))
        .collect();
    if loads.len() < n {
        return Err("fewer loads than operands".into());
    }
    let stg = lines
        .iter()
        .position(|l| l.starts_with("STG"))
        .ok_or("no STG")?;
    let exit = lines
        .iter()
        .position(|l| l.starts_with("EXIT"))
        .ok_or("no EXIT")?;
    let first_reg = |l: &str| {
        l.split_once(' ')
            .and_then(|(_, a)| operands(a).first().and_then(|o| reg(o, "R")))
    };
    // What each load binds: (register, operand, word). The probe puts operand `i` at byte
    // `i * w` (w = 8 for 64-bit operands, 4 otherwise). A 64-bit operand is usually loaded
    // whole (`LDG.E.64`: the register pair, word `None`), but ptxas may load one word only:
    // `rcp.approx.ftz.f64` reads just the high word (`LDG.E R2, [R2.64+0x4]`), which binds
    // R2 to `%a.1`. (Naming it `%a.0`, as an earlier learner did, fed MUFU.RCP64H the low
    // word: docs/arch/hardware.md.)
    let width = if wide { 8 } else { 4 };
    let mut bindings: Vec<(u32, usize, Option<u32>)> = Vec::new();
    for &i in &loads {
        let l = &lines[i];
        let k = first_reg(l).ok_or("load destination")?;
        let offset = crate::cvt_forms::load_offset(l)?;
        let operand = (offset / width) as usize;
        if operand >= n {
            continue; // the probe's second operand, unused by a one-operand instruction
        }
        let whole = l.starts_with("LDG.E.64") || l.starts_with("LDG.E.128");
        let word = match (wide, whole) {
            (false, _) | (true, true) => None,
            (true, false) => Some((offset % 8) / 4),
        };
        if l.starts_with("LDG.E.128") {
            return Err(format!("a 128-bit load: {l}"));
        }
        bindings.push((k, operand, word));
    }
    bindings.sort_by_key(|&(_, operand, word)| (operand, word));
    let result = lines[stg]
        .split_once(' ')
        .and_then(|(_, a)| operands(a).last().and_then(|o| reg(o, "R")))
        .ok_or("stored register")?;
    // Even registers that start a 64-bit pair somewhere: they become one 64-bit temporary
    // (`%qN`, its words `%qN.0`/`%qN.1`) everywhere.
    let mut pairs: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    if wide {
        pairs.extend(
            bindings
                .iter()
                .filter(|b| b.2.is_none())
                .map(|&(k, _, _)| k),
        );
        pairs.insert(result);
    }
    for l in lines {
        let rest = match l.strip_prefix('@') {
            Some(r) => r.split_once(' ').map_or("", |(_, r)| r),
            None => l.as_str(),
        };
        let (op, args) = rest.split_once(' ').unwrap_or((rest, ""));
        let ops = operands(args);
        let Ok(wide_ops) = pair_operands(op, ops.len()) else {
            continue;
        };
        for (o, w) in ops.iter().zip(wide_ops) {
            if let Some(k) = reg(core_operand(o), "R")
                && w
            {
                pairs.insert(k);
            }
        }
    }
    if let Some(k) = pairs.iter().find(|&&k| k % 2 == 1) {
        return Err(format!("64-bit operand R{k} not even"));
    }
    let skip = |l: &str| {
        l.starts_with("LDG")
            || l.starts_with("STG")
            || l.starts_with("ULDC")
            || l.contains("c[0x0][0x28]")
            || ["0x160", "0x164", "0x210", "0x214"]
                .iter()
                .any(|o| l.contains(&format!("c[0x0][{o}]")))
            || l.starts_with("NOP")
    };
    // Main body: from the first instruction after the loads to the store (labels kept), then
    // the subroutines after the EXIT up to the closing `BRA` to itself.
    let start = loads[0] + 1;
    let mut main: Vec<&String> = lines[start..stg].iter().filter(|l| !skip(l)).collect();
    let mut subs: Vec<&String> = Vec::new();
    for l in &lines[exit + 1..] {
        if l.starts_with("BRA `(.L_x_") {
            let target = l.trim_start_matches("BRA `(").trim_end_matches(')');
            if subs
                .last()
                .is_some_and(|p| p.trim_end_matches(':') == target)
            {
                subs.pop();
                break;
            }
        }
        subs.push(l);
    }
    main.retain(|l| !l.is_empty());
    // Calls: `MOV Rk, <return address>` right before `CALL.REL.NOINC` is dropped; the call
    // becomes `BRA <sub>` and the next instruction gets a return label.
    let mut label_names: HashMap<String, String> = HashMap::new();
    let name_label = |l: &str, names: &mut HashMap<String, String>| -> String {
        let key = l.trim_end_matches(':').to_string();
        let n = names.len();
        names.entry(key).or_insert_with(|| format!("L{n}")).clone()
    };
    let mut out: Vec<String> = Vec::new();
    let mut regs_seen: Vec<String> = Vec::new();
    let rename = |o: &str, pair: bool, seen: &mut Vec<String>| -> Result<String, String> {
        let mut pre = String::new();
        let mut s = o;
        // `~R4` (a bitwise not) is written `!%r4` in sequences.
        for (p, text) in [("-", "-"), ("!", "!"), ("~", "!"), ("|", "|")] {
            if let Some(r) = s.strip_prefix(p) {
                pre.push_str(text);
                s = r;
            }
        }
        let (core, post) = match s.strip_suffix('|') {
            Some(c) => (c, "|"),
            None => (s, ""),
        };
        if matches!(core, "RZ" | "PT" | "SRZ") {
            return Ok(o.to_string());
        }
        if let Some(k) = reg(core, "R") {
            seen.push(core.to_string());
            let name = if pair {
                format!("%q{k}")
            } else if pairs.contains(&k) {
                format!("%q{k}.0")
            } else if k % 2 == 1 && pairs.contains(&(k - 1)) {
                format!("%q{}.1", k - 1)
            } else {
                format!("%r{k}")
            };
            return Ok(format!("{pre}{name}{post}"));
        }
        if let Some(k) = reg(core, "P") {
            return Ok(format!("{pre}$p{k}{post}"));
        }
        if is_float(o) {
            return Ok(format!("{}:{}", if pair { "d" } else { "f" }, o.trim()));
        }
        if o.starts_with("0x") || o.starts_with("-0x") {
            return Ok(o.to_string());
        }
        Err(format!("operand `{o}`"))
    };
    for &(k, operand, word) in &bindings {
        let bind = if operand == 0 { "%a" } else { "%b" };
        match word {
            None if wide => {
                for w in 0..2 {
                    out.push(format!("MOV %q{k}.{w}, {bind}.{w}"));
                }
            }
            None => out.push(format!("MOV %r{k}, {bind}")),
            Some(w) => {
                let name = rename(&format!("R{k}"), false, &mut regs_seen)?;
                out.push(format!("MOV {name}, {bind}.{w}"));
            }
        }
    }
    let mut calls = 0;
    let body: Vec<&String> = main.clone();
    let emit = |lines: &[&String],
                out: &mut Vec<String>,
                names: &mut HashMap<String, String>,
                seen: &mut Vec<String>,
                calls: &mut usize|
     -> Result<(), String> {
        let mut i = 0;
        while i < lines.len() {
            let l = lines[i].as_str();
            i += 1;
            if l.ends_with(':') {
                out.push(format!("{}:", name_label(l, names)));
                continue;
            }
            if l.starts_with(".weak") {
                continue;
            }
            // ptxas makes the canonical NaN of an invalid f32 division with `MUFU.RSQ R, -QNAN`
            // (the reciprocal square root of a NaN is the canonical NaN 0x7fffffff); the
            // template writes that value directly (an operand form the tables lack).
            let quiet;
            let l = match l
                .strip_prefix("MUFU.RSQ ")
                .and_then(|r| r.strip_suffix(", -QNAN"))
            {
                Some(d) if reg(d, "R").is_some() => {
                    quiet = format!("MOV {d}, 0x7fffffff");
                    quiet.as_str()
                }
                _ => l,
            };
            if l.contains("c[") || l.contains("UR") || l.contains("QNAN") || l.contains(".H0") {
                return Err(format!("operand form: {l}"));
            }
            let (guard, rest) = match l.strip_prefix('@') {
                Some(r) => {
                    let (g, rest) = r.split_once(' ').ok_or("guard")?;
                    let (neg, p) = match g.strip_prefix('!') {
                        Some(p) => ("!", p),
                        None => ("", g),
                    };
                    let k = reg(p, "P").ok_or("guard")?;
                    (format!("@{neg}$p{k} "), rest)
                }
                None => (String::new(), l),
            };
            let (op, args) = rest.split_once(' ').unwrap_or((rest, ""));
            if op.starts_with("CALL") {
                let target = args
                    .trim_start_matches("`(")
                    .trim_end_matches(')')
                    .to_string();
                // The return-address move just before the call.
                if out
                    .last()
                    .is_some_and(|p| p.starts_with("MOV %r") && p.contains(", 0x"))
                {
                    out.pop();
                }
                *calls += 1;
                out.push(format!("{guard}BRA {}", name_label(&target, names)));
                out.push(format!("RET{}:", *calls));
                continue;
            }
            if op.starts_with("RET") {
                if *calls != 1 {
                    return Err("a subroutine returning to more than one call".into());
                }
                out.push(format!("{guard}BRA RET1"));
                continue;
            }
            if op == "BRA"
                && let Some((p2, target)) = args.split_once(", ")
            {
                // `@P0 BRA P1, X`: taken when both hold; becomes a skip over `@P1 BRA X`.
                let (neg, p) = match p2.strip_prefix('!') {
                    Some(p) => ("!", p),
                    None => ("", p2),
                };
                let k = reg(p, "P").ok_or("BRA predicate")?;
                let target = target.trim_start_matches("`(").trim_end_matches(')');
                let skip = format!("S{}", out.len());
                if let Some(g) = guard.strip_prefix('@') {
                    let g = g.trim();
                    let flipped = match g.strip_prefix('!') {
                        Some(g) => g.to_string(),
                        None => format!("!{g}"),
                    };
                    out.push(format!("@{flipped} BRA {skip}"));
                }
                out.push(format!("@{neg}$p{k} BRA {}", name_label(target, names)));
                out.push(format!("{skip}:"));
                continue;
            }
            if op == "BRA" {
                let target = args.trim_start_matches("`(").trim_end_matches(')');
                out.push(format!("{guard}BRA {}", name_label(target, names)));
                continue;
            }
            let args = operands(args);
            let wide_ops = pair_operands(op, args.len())?;
            if wide_ops.iter().any(|&w| w) && !wide {
                return Err(format!("64-bit form: {l}"));
            }
            let ops: Vec<String> = args
                .iter()
                .zip(wide_ops)
                .map(|(o, w)| rename(o, w, seen))
                .collect::<Result<_, _>>()?;
            out.push(format!("{guard}{op} {}", ops.join(", ")));
        }
        Ok(())
    };
    emit(
        &body,
        &mut out,
        &mut label_names,
        &mut regs_seen,
        &mut calls,
    )?;
    if wide {
        for w in 0..2 {
            out.push(format!("MOV %d.{w}, %q{result}.{w}"));
        }
    } else {
        out.push(format!("MOV %d, %r{result}"));
    }
    if !subs.is_empty() {
        out.push("BRA DONE".into());
        emit(
            &subs,
            &mut out,
            &mut label_names,
            &mut regs_seen,
            &mut calls,
        )?;
        out.push("DONE:".into());
    }
    Ok(out.join("; "))
}

/// Instruction → (operand count, template or reason per arch).
pub type Routines = BTreeMap<String, (usize, Vec<Result<String, String>>)>;

pub fn learn() -> Result<Routines, String> {
    let vs = variants();
    let rows = corpus::par_map("math-forms", &vs, |(inst, n)| {
        let mut cols = Vec::new();
        for arch in ARCHS {
            let text = probe_ptx(inst, *n, arch);
            cols.push(match corpus::ptxas_cubin(&text, arch, &[])? {
                PtxasOutcome::Ok { cubin, .. } => {
                    disassemble(&cubin).and_then(|l| template(&l, *n, is_wide(inst)))
                }
                PtxasOutcome::Rejected(m) => {
                    Err(format!("ptxas rejects: {}", m.lines().next().unwrap_or("")))
                }
            });
        }
        Ok::<_, String>((inst.clone(), (*n, cols)))
    });
    rows.into_iter().collect()
}

pub fn table_path() -> std::path::PathBuf {
    corpus::workspace_root().join("crates/lower/data/math.tsv")
}

/// 64 operands per side: for f32 the special values of `cvt_forms`, for f64 (`wide`) its
/// `f64_values()`, and for the second operand the same list rotated (so every pairing of
/// kinds meets). The f64 approximations (`rsqrt.approx.f64`) are left out.
pub fn test_ptx(map: &Routines, wide: bool) -> String {
    let rows: Vec<(&String, usize)> = map
        .iter()
        .filter(|(_, (_, c))| {
            c.iter()
                .zip(ARCHS)
                .all(|(t, a)| t.as_ref().is_ok_and(|t| encodable_routine(t, a)))
        })
        .filter(|(k, _)| !k.contains(".approx") && is_wide(k) == wide)
        .map(|(k, (n, _))| (k, *n))
        .collect();
    let mut s = String::from(
        "// Generated by `cargo xtask math-forms`: every rcp/sqrt/div of one type lowered from\n\
         // crates/lower/data/math.tsv, on 64 special operands per thread pair.\n\
         .version 8.0\n.target sm_80\n.address_size 64\n",
    );
    let values: Vec<String> = if wide {
        crate::cvt_forms::f64_values()
            .iter()
            .map(|v| v.to_string())
            .collect()
    } else {
        crate::cvt_forms::F32_VALUES
            .iter()
            .map(|v| v.to_string())
            .collect()
    };
    // 64-bit rows (f64, u64, s64) share untyped registers.
    let (vals, t, w) = if wide {
        ("vals64", "b64", 8)
    } else {
        ("vals", "f32", 4)
    };
    s.push_str(&format!(
        ".global .align {w} .b{} {vals}[64] = {{{}}};\n",
        w * 8,
        values.join(", ")
    ));
    for (kernel, chunk) in rows.chunks(16).enumerate() {
        let name = format!("math{kernel}");
        s.push_str(&format!(
                "\n.visible .entry {name}(.param .u64 out)\n{{\n  .reg .b64 %rd<8>;\n  .reg .b32 %w<4>;\n  \
                 .reg .{t} %f<3>;\n  .reg .{t} %d<{c}>;\n  ld.param.u64 %rd1, [out];\n  \
                 mov.u32 %w1, %tid.x;\n  mul.wide.u32 %rd2, %w1, {w};\n  mov.u64 %rd3, {vals};\n  \
                 add.s64 %rd4, %rd3, %rd2;\n  ld.global.{t} %f1, [%rd4];\n  add.u32 %w2, %w1, 23;\n  \
                 and.b32 %w2, %w2, 63;\n  mul.wide.u32 %rd2, %w2, {w};\n  add.s64 %rd4, %rd3, %rd2;\n  \
                 ld.global.{t} %f2, [%rd4];\n  mul.wide.u32 %rd2, %w1, {stride};\n  add.s64 %rd6, %rd1, %rd2;\n",
                c = chunk.len() + 1,
                stride = chunk.len() * w,
            ));
        for (i, (k, ops)) in chunk.iter().enumerate() {
            let srcs = if *ops == 1 { "%f1" } else { "%f1, %f2" };
            s.push_str(&format!(
                "  {k} %d{i}, {srcs};\n  st.global.{t} [%rd6+{}], %d{i};\n",
                i * w
            ));
        }
        s.push_str("  ret;\n}\n");
    }
    s
}

/// Whether every instruction of a routine template encodes (labels and branches aside).
fn encodable_routine(t: &str, arch: &str) -> bool {
    // Temporaries to placeholder registers (distinct, in range, pairs aligned).
    let mut names: HashMap<String, u32> = HashMap::new();
    let mut next = 0u32;
    t.split("; ").all(|i| {
        if i.ends_with(':') || i.contains("BRA ") {
            return true;
        }
        let mut text = String::new();
        let mut rest = i;
        while let Some(p) = rest.find('%') {
            text.push_str(&rest[..p]);
            let tail = &rest[p + 1..];
            let end = tail
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(tail.len());
            let name = &tail[..end];
            let mut after = &tail[end..];
            let word = match after.as_bytes() {
                [b'.', w @ (b'0' | b'1'), ..] => {
                    after = &after[2..];
                    Some(u32::from(w - b'0'))
                }
                _ => None,
            };
            let pair = name.starts_with('q') || word.is_some();
            let base = *names.entry(name.to_string()).or_insert_with(|| {
                if pair {
                    next = next.div_ceil(2) * 2;
                }
                let r = next % 200;
                next += if pair { 2 } else { 1 };
                r
            });
            text.push_str(&format!("R{}", base + word.unwrap_or(0)));
            rest = after;
        }
        text.push_str(rest);
        // A not of a general register prints as `~R4`.
        let text = text.replace("!R", "~R");
        encodable(&text.replace("$p", "P").replace("d:", ""), arch)
    })
}

pub fn run(_args: &[String]) -> Result<(), String> {
    let map = learn()?;
    let mut s = String::from(
        "# f32 rcp/sqrt/div → ptxas 13.0.88's SASS with the slow path inlined, as templates in\n\
         # lower/src/seq.rs syntax (%a, %b operands, %d result, `; ` between lines).\n\
         # Generated by `cargo xtask math-forms`; do not edit.\n# instruction\t",
    );
    s.push_str(&crate::cvt_forms::arch_columns());
    s.push('\n');
    for (k, (_, cols)) in &map {
        s.push_str(k);
        for c in cols {
            s.push('\t');
            s.push_str(c.as_deref().unwrap_or("-"));
        }
        s.push('\n');
    }
    std::fs::write(table_path(), s).map_err(|e| e.to_string())?;
    for (file, wide) in [("math_table.ptx", false), ("math_table_64.ptx", true)] {
        std::fs::write(
            corpus::workspace_root()
                .join("test-data/codegen")
                .join(file),
            test_ptx(&map, wide),
        )
        .map_err(|e| e.to_string())?;
    }
    for (k, (_, cols)) in &map {
        for (c, a) in cols.iter().zip(ARCHS) {
            if let Err(e) = c {
                println!("{k} {a}: {e}");
            }
        }
    }
    println!(
        "wrote {} ({} instructions)",
        table_path().display(),
        map.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slow_path_is_inlined_and_registers_renamed() {
        // ptxas's sqrt.rn.f32 on sm_80 (nvdisasm -c), shortened slow path.
        let listing = "MOV R1, c[0x0][0x28]
            MOV R2, c[0x0][0x160]
            ULDC.64 UR4, c[0x0][0x118]
            MOV R3, c[0x0][0x164]
            LDG.E R0, [R2.64]
            IADD3 R4, R0, -0xd000000, RZ
            MUFU.RSQ R5, R0
            ISETP.GT.U32.AND P0, PT, R4, 0x727fffff, PT
            @!P0 BRA `(.L_x_0)
            MOV R6, 0xb0
            CALL.REL.NOINC `($__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath)
            MOV R5, R0
            BRA `(.L_x_1)
            .L_x_0:
            FMUL.FTZ R7, R0, R5
            .L_x_1:
            STG.E [R2.64+0x10], R5
            EXIT
            $__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath:
            FSETP.GTU.FTZ.AND P0, PT, |R0|, +INF , PT
            @P0 FADD.FTZ R0, R0, 1
            MOV R4, R6
            RET.REL.NODEC R4 `(k)
            .L_x_3:
            BRA `(.L_x_3)";
        let lines: Vec<String> = listing.lines().map(|l| l.trim().to_string()).collect();
        assert_eq!(
            template(&lines, 1, false).unwrap(),
            "MOV %r0, %a; IADD3 %r4, %r0, -0xd000000, RZ; MUFU.RSQ %r5, %r0; \
             ISETP.GT.U32.AND $p0, PT, %r4, 0x727fffff, PT; @!$p0 BRA L0; BRA L1; RET1:; \
             MOV %r5, %r0; BRA L2; L0:; FMUL.FTZ %r7, %r0, %r5; L2:; MOV %d, %r5; BRA DONE; \
             L1:; FSETP.GTU.FTZ.AND $p0, PT, |%r0|, f:+INF, PT; @$p0 FADD.FTZ %r0, %r0, f:1; \
             MOV %r4, %r6; BRA RET1; DONE:"
        );
    }

    #[test]
    fn f64_pairs_become_64_bit_temporaries() {
        // Shortened from ptxas's div.rn.f64 on sm_90: the second operand loaded first,
        // single words of pairs, a double immediate, a two-predicate branch.
        let listing = "LDC R1, c[0x0][0x28]
            LDG.E.64 R6, desc[UR4][R8.64+0x8]
            LDG.E.64 R4, desc[UR4][R8.64]
            MUFU.RCP64H R3, R7
            IMAD.MOV.U32 R2, RZ, RZ, 0x1
            DFMA R10, R2, -R6, 1
            FSETP.GEU.AND P1, PT, |R7|, 6.5827683646048100446e-37, PT
            DMUL R12, R4, R10
            FFMA R0, RZ, R7, R13
            FSETP.GT.AND P0, PT, |R0|, 1.469367938527859385e-39, PT
            @P0 BRA P1, `(.L_x_0)
            CS2R R12, SRZ
            .L_x_0:
            STG.E.64 desc[UR4][R8.64+0x10], R12
            EXIT
            .L_x_1:
            BRA `(.L_x_1)";
        let lines: Vec<String> = listing.lines().map(|l| l.trim().to_string()).collect();
        assert_eq!(
            template(&lines, 2, true).unwrap(),
            "MOV %q4.0, %a.0; MOV %q4.1, %a.1; MOV %q6.0, %b.0; MOV %q6.1, %b.1; \
             MUFU.RCP64H %q2.1, %q6.1; IMAD.MOV.U32 %q2.0, RZ, RZ, 0x1; \
             DFMA %q10, %q2, -%q6, d:1; \
             FSETP.GEU.AND $p1, PT, |%q6.1|, f:6.5827683646048100446e-37, PT; \
             DMUL %q12, %q4, %q10; FFMA %r0, RZ, %q6.1, %q12.1; \
             FSETP.GT.AND $p0, PT, |%r0|, f:1.469367938527859385e-39, PT; \
             @!$p0 BRA S11; @$p1 BRA L0; S11:; CS2R %q12, SRZ; L0:; \
             MOV %d.0, %q12.0; MOV %d.1, %q12.1"
        );
    }
}
