//! `cargo xtask math-forms`: learns ptxas's SASS for the IEEE-rounded f32 math instructions
//! (`rcp`, `sqrt`, `div` in every rounding mode, with and without `.ftz`) and writes
//! `crates/lower/data/math.tsv`, plus the test kernels `test-data/codegen/math_table.ptx`.
//!
//! Each routine is a fast path and a slow-path subroutine that ptxas calls
//! (`CALL.REL.NOINC $__internal_..._slowpath`). The probe kernel loads the operands, applies
//! the instruction and stores the result; the learned template (in `lower/src/seq.rs` syntax)
//! is everything between the loads and the store with the subroutine inlined: the call becomes
//! a branch to the subroutine's code, its return a branch back to the instruction after the
//! call. Every physical register becomes one temporary (`%rN`, `$pN`) — ptxas's own register
//! use, which is consistent across the routine's branches — with the operands copied in at
//! the start (`MOV %r0, %a`) and the result copied out at the end (`MOV %d, %r5`). A routine
//! whose code reads anything else (constant banks, uniform registers, 64-bit pairs) is left
//! out (`-`).

use std::collections::{BTreeMap, HashMap};
use std::process::Command;

use crate::corpus::{self, PtxasOutcome};
use crate::cvt_forms::{ARCHS, encodable};
use crate::oracle;

/// The instructions learned: (PTX instruction, operand count).
pub fn variants() -> Vec<(String, usize)> {
    let mut v = Vec::new();
    for (op, n) in [("rcp", 1), ("sqrt", 1), ("div", 2)] {
        for r in [".rn", ".rz", ".rm", ".rp"] {
            for ftz in ["", ".ftz"] {
                v.push((format!("{op}{r}{ftz}.f32"), n));
            }
        }
    }
    v
}

fn probe_ptx(inst: &str, n: usize) -> String {
    let srcs = if n == 1 { "%f1" } else { "%f1, %f2" };
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n  \
         .reg .b64 %q<2>;\n  .reg .f32 %f<4>;\n  ld.param.u64 %q1, [p];\n  \
         ld.global.f32 %f1, [%q1];\n  ld.global.f32 %f2, [%q1+4];\n  {inst} %f3, {srcs};\n  \
         st.global.f32 [%q1+16], %f3;\n  ret;\n}}\n"
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

/// The template of a probe's code (module docs), or why there is none.
pub fn template(lines: &[String], n: usize) -> Result<String, String> {
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
    let src: Vec<u32> = loads
        .iter()
        .map(|&i| first_reg(&lines[i]))
        .collect::<Option<_>>()
        .ok_or("load destination")?;
    let result = lines[stg]
        .split_once(' ')
        .and_then(|(_, a)| operands(a).last().and_then(|o| reg(o, "R")))
        .ok_or("stored register")?;
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
    let rename = |o: &str, seen: &mut Vec<String>| -> Result<String, String> {
        let mut pre = String::new();
        let mut s = o;
        for p in ["-", "!", "|"] {
            if let Some(r) = s.strip_prefix(p) {
                pre.push_str(p);
                s = r;
            }
        }
        let (core, post) = match s.strip_suffix('|') {
            Some(c) => (c, "|"),
            None => (s, ""),
        };
        if matches!(core, "RZ" | "PT") {
            return Ok(o.to_string());
        }
        if let Some(k) = reg(core, "R") {
            seen.push(core.to_string());
            return Ok(format!("{pre}%r{k}{post}"));
        }
        if let Some(k) = reg(core, "P") {
            return Ok(format!("{pre}$p{k}{post}"));
        }
        if is_float(o) {
            return Ok(format!("f:{}", o.trim()));
        }
        if o.starts_with("0x") || o.starts_with("-0x") {
            return Ok(o.to_string());
        }
        Err(format!("operand `{o}`"))
    };
    for (k, s) in src.iter().enumerate().take(n) {
        out.push(format!("MOV %r{s}, %{}", if k == 0 { "a" } else { "b" }));
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
            if op == "BRA" {
                let target = args.trim_start_matches("`(").trim_end_matches(')');
                out.push(format!("{guard}BRA {}", name_label(target, names)));
                continue;
            }
            if op.contains("64") || op.starts_with('D') {
                return Err(format!("64-bit values: {l}"));
            }
            let ops: Vec<String> = operands(args)
                .iter()
                .map(|o| rename(o, seen))
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
    out.push(format!("MOV %d, %r{result}"));
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
        let text = probe_ptx(inst, *n);
        let mut cols = Vec::new();
        for arch in ARCHS {
            cols.push(match corpus::ptxas_cubin(&text, arch, &[])? {
                PtxasOutcome::Ok { cubin, .. } => {
                    disassemble(&cubin).and_then(|l| template(&l, *n))
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

/// 64 f32 operands per side: the special values of `cvt_forms` and, for the second operand,
/// the same list rotated (so every pairing of kinds meets).
pub fn test_ptx(map: &Routines) -> String {
    let rows: Vec<(&String, usize)> = map
        .iter()
        .filter(|(_, (_, c))| {
            c.iter()
                .zip(ARCHS)
                .all(|(t, a)| t.as_ref().is_ok_and(|t| encodable_routine(t, a)))
        })
        .map(|(k, (n, _))| (k, *n))
        .collect();
    let mut s = String::from(
        "// Generated by `cargo xtask math-forms`: every f32 rcp/sqrt/div lowered from\n\
         // crates/lower/data/math.tsv, on 64 special operands per thread pair.\n\
         .version 8.0\n.target sm_80\n.address_size 64\n",
    );
    s.push_str(".global .align 4 .b32 vals[64] = {");
    s.push_str(
        &crate::cvt_forms::F32_VALUES
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    );
    s.push_str("};\n");
    for (n, chunk) in rows.chunks(16).enumerate() {
        s.push_str(&format!(
            "\n.visible .entry math{n}(.param .u64 out)\n{{\n  .reg .b64 %rd<8>;\n  .reg .b32 %w<4>;\n  \
             .reg .f32 %f<3>;\n  .reg .f32 %d<{c}>;\n  ld.param.u64 %rd1, [out];\n  \
             mov.u32 %w1, %tid.x;\n  mul.wide.u32 %rd2, %w1, 4;\n  mov.u64 %rd3, vals;\n  \
             add.s64 %rd4, %rd3, %rd2;\n  ld.global.f32 %f1, [%rd4];\n  add.u32 %w2, %w1, 23;\n  \
             and.b32 %w2, %w2, 63;\n  mul.wide.u32 %rd2, %w2, 4;\n  add.s64 %rd4, %rd3, %rd2;\n  \
             ld.global.f32 %f2, [%rd4];\n  mul.wide.u32 %rd2, %w1, {stride};\n  add.s64 %rd6, %rd1, %rd2;\n",
            c = chunk.len() + 1,
            stride = chunk.len() * 4,
        ));
        for (i, (k, ops)) in chunk.iter().enumerate() {
            let srcs = if *ops == 1 { "%f1" } else { "%f1, %f2" };
            s.push_str(&format!(
                "  {k} %d{i}, {srcs};\n  st.global.f32 [%rd6+{}], %d{i};\n",
                i * 4
            ));
        }
        s.push_str("  ret;\n}\n");
    }
    s
}

/// Whether every instruction of a routine template encodes (labels and branches aside).
fn encodable_routine(t: &str, arch: &str) -> bool {
    let mut names = HashMap::new();
    t.split("; ").all(|i| {
        if i.ends_with(':') || i.contains("BRA ") {
            return true;
        }
        // Temporaries to placeholder registers (distinct, in range).
        let mut text = i
            .replace("%a", "%r200")
            .replace("%b", "%r201")
            .replace("%d", "%r202");
        while let Some(p) = text.find("%r") {
            let end = text[p + 2..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(text.len(), |e| p + 2 + e);
            let k: u32 = text[p + 2..end].parse().unwrap_or(0);
            let n = names.len() as u32;
            let r = *names.entry(k).or_insert(n % 200);
            text.replace_range(p..end, &format!("R{r}"));
        }
        encodable(&text.replace("$p", "P"), arch)
    })
}

pub fn run(_args: &[String]) -> Result<(), String> {
    let map = learn()?;
    let mut s = String::from(
        "# f32 rcp/sqrt/div → ptxas 13.0.88's SASS with the slow path inlined, as templates in\n\
         # lower/src/seq.rs syntax (%a, %b operands, %d result, `; ` between lines).\n\
         # Generated by `cargo xtask math-forms`; do not edit.\n# instruction\tsm_80\tsm_90\n",
    );
    for (k, (_, cols)) in &map {
        s.push_str(k);
        for c in cols {
            s.push('\t');
            s.push_str(c.as_deref().unwrap_or("-"));
        }
        s.push('\n');
    }
    std::fs::write(table_path(), s).map_err(|e| e.to_string())?;
    std::fs::write(
        corpus::workspace_root().join("test-data/codegen/math_table.ptx"),
        test_ptx(&map),
    )
    .map_err(|e| e.to_string())?;
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
            template(&lines, 1).unwrap(),
            "MOV %r0, %a; IADD3 %r4, %r0, -0xd000000, RZ; MUFU.RSQ %r5, %r0; \
             ISETP.GT.U32.AND $p0, PT, %r4, 0x727fffff, PT; @!$p0 BRA L0; BRA L1; RET1:; \
             MOV %r5, %r0; BRA L2; L0:; FMUL.FTZ %r7, %r0, %r5; L2:; MOV %d, %r5; BRA DONE; \
             L1:; FSETP.GTU.FTZ.AND $p0, PT, |%r0|, f:+INF, PT; @$p0 FADD.FTZ %r0, %r0, f:1; \
             MOV %r4, %r6; BRA RET1; DONE:"
        );
    }
}
