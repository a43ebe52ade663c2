//! `cargo xtask isa-forms --learn`: ptxas's SASS for the value-family forms kiln's
//! instruction selection does not cover, as templates `lower` uses (`crates/lower/data/ops.tsv`,
//! read by `lower/src/op_table.rs`).
//!
//! For every all-register instance of a form (one instruction, one result, no fixed
//! immediate) that kiln's instruction selection refuses, a learning probe loads each source
//! from global memory (operand `i` at byte `16 i`; a 16-bit source as the low half of a loaded
//! word, so that ptxas cannot assume its upper bits, which kiln's 16-bit registers leave
//! unspecified; a predicate source as a loaded word tested against zero, the word being what
//! the template takes), applies the instruction and stores the result (a predicate through
//! `selp`). ptxas 13.0.88 compiles it for sm_80 and sm_90 and nvdisasm lists it. The
//! template is everything between the first load and the store, in `lower/src/seq.rs`
//! syntax: each physical register a temporary (`%rK`, an even register that is half of a
//! 64-bit operand anywhere a 64-bit `%qK`), the sources copied in first (`MOV %r4, %a`), the
//! result copied out last (`MOV %d, %r5`; a predicate result is the predicate the final `SEL`
//! read, copied with `PLOP3`), branches and labels kept, a `CALL` of a subroutine inlined as
//! in `math_forms.rs`, `UMOV URk, imm` (a 64-bit constant ptxas keeps in uniform registers)
//! as a `MOV` into a 32-bit temporary. A probe whose code reads constant banks or other
//! uniform registers, or uses a 64-bit form the learner does not know, gets no template
//! (`-`, with the reason in the report). Every template is then checked by the suite itself:
//! `cargo xtask isa-forms` compiles and verifies kiln's code for the form.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::instances::{Instance, Opnd};
use super::values::Class;
use crate::corpus::{self, PtxasOutcome};

/// The SMs of the table's columns.
pub const ARCHS: &[&str] = crate::cvt_forms::ARCHS;

/// How an operand travels between registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// 8 or 16 bits: the low half of a 32-bit register, the upper bits unspecified.
    Half,
    Word,
    Pair,
    Pred,
}

pub fn shape(c: Class) -> Shape {
    match c.bytes() {
        0 => Shape::Pred,
        2 => Shape::Half,
        8 => Shape::Pair,
        _ => Shape::Word,
    }
}

/// The sources' and result's shapes of an instance the learner handles, or why not.
pub fn learnable(inst: &Instance) -> Result<(Vec<Shape>, Shape), &'static str> {
    let [stmt] = inst.stmts.as_slice() else {
        return Err("more than one instruction (carry chains)");
    };
    let mut srcs = Vec::new();
    let mut dst = None;
    for o in &stmt.operands {
        match o {
            Opnd::Dst(c) => {
                if dst.replace(shape(*c)).is_some() {
                    return Err("two results");
                }
            }
            Opnd::Src(c) => srcs.push(shape(*c)),
            Opnd::Imm(_) => return Err("a fixed immediate"),
            _ => return Err("a vector, memory or named operand"),
        }
    }
    Ok((srcs, dst.ok_or("no result")?))
}

/// The names sources are bound to in templates, in order.
pub const SOURCE_NAMES: [&str; 5] = ["%a", "%b", "%c", "%e", "%f"];

fn reg_decl(s: Shape) -> &'static str {
    match s {
        Shape::Half => ".b16",
        Shape::Word => ".b32",
        Shape::Pair => ".b64",
        Shape::Pred => ".pred",
    }
}

/// The learning probe of `inst` for `arch`.
pub fn probe(inst: &Instance, arch: &str, srcs: &[Shape], dst: Shape) -> String {
    let stmt = &inst.stmts[0];
    let mut body = String::new();
    let mut names = Vec::new();
    for (i, s) in srcs.iter().enumerate() {
        let off = 16 * i;
        match s {
            Shape::Half => {
                body.push_str(&format!(
                    "  ld.global.b32 %w{i}, [%q1+{off}];\n  mov.b32 {{%s{i}, %h{i}}}, %w{i};\n"
                ));
            }
            Shape::Word => body.push_str(&format!("  ld.global.b32 %s{i}, [%q1+{off}];\n")),
            Shape::Pair => body.push_str(&format!("  ld.global.b64 %s{i}, [%q1+{off}];\n")),
            // A predicate source: a loaded word tested against zero; the template takes the
            // word (kiln passes 1 or 0, `op_table.rs`).
            Shape::Pred => body.push_str(&format!(
                "  ld.global.b32 %w{i}, [%q1+{off}];\n  setp.ne.b32 %s{i}, %w{i}, 0;\n"
            )),
        }
        names.push(format!("%s{i}"));
    }
    let mut decls = String::new();
    for (i, s) in srcs.iter().enumerate() {
        decls.push_str(&format!("  .reg {} %s{i};\n", reg_decl(*s)));
        if *s == Shape::Pred {
            decls.push_str(&format!("  .reg .b32 %w{i};\n"));
        }
        if *s == Shape::Half {
            decls.push_str(&format!("  .reg .b32 %w{i};\n  .reg .b16 %h{i};\n"));
        }
    }
    decls.push_str(&format!("  .reg {} %d;\n", reg_decl(dst)));
    let ops: Vec<String> = stmt
        .operands
        .iter()
        .map(|o| match o {
            Opnd::Dst(_) => "%d".to_string(),
            _ => names.remove(0),
        })
        .collect();
    body.push_str(&format!("  {} {};\n", stmt.mnemonic, ops.join(", ")));
    let off = 16 * 8;
    match dst {
        Shape::Half => body.push_str(&format!("  st.global.b16 [%q1+{off}], %d;\n")),
        Shape::Word => body.push_str(&format!("  st.global.b32 [%q1+{off}], %d;\n")),
        Shape::Pair => body.push_str(&format!("  st.global.b64 [%q1+{off}], %d;\n")),
        Shape::Pred => {
            decls.push_str("  .reg .b32 %z;\n");
            body.push_str(&format!(
                "  selp.u32 %z, 1, 0, %d;\n  st.global.b32 [%q1+{off}], %z;\n"
            ));
        }
    }
    format!(
        ".version {}\n.target {arch}\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n  \
         .reg .b64 %q1;\n{decls}  ld.param.u64 %q1, [p];\n{body}  ret;\n}}\n",
        super::kernel::VERSION
    )
}

/// nvdisasm's text of a cubin: instructions and label lines (nvdisasm's listing is cached
/// beside ptxas's cubins, by the cubin's hash).
fn disassemble(cubin: &std::path::Path) -> Result<Vec<String>, String> {
    let bytes = std::fs::read(cubin).map_err(|e| format!("reading {}: {e}", cubin.display()))?;
    let dir = corpus::cache_dir("nvdisasm");
    let cached = dir.join(format!("{:016x}.txt", corpus::fnv1a64(&[&bytes])));
    let text = match std::fs::read_to_string(&cached) {
        Ok(t) => t,
        Err(_) => {
            let out = std::process::Command::new(crate::oracle::tool("nvdisasm")?)
                .arg("-c")
                .arg(cubin)
                .output()
                .map_err(|e| format!("running nvdisasm: {e}"))?;
            if !out.status.success() {
                return Err(format!("nvdisasm fails on {}", cubin.display()));
            }
            let t = String::from_utf8_lossy(&out.stdout).into_owned();
            let _ = std::fs::create_dir_all(&dir);
            let tmp = cached.with_extension(format!("{}.tmp", std::process::id()));
            if std::fs::write(&tmp, &t).is_ok() {
                let _ = std::fs::rename(&tmp, &cached);
            }
            t
        }
    };
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
/// operands); an error for a 64-bit form the learner does not know.
fn pair_operands(op: &str, n: usize) -> Result<Vec<bool>, String> {
    let mods: Vec<&str> = op.split('.').skip(1).collect();
    let base = op.split('.').next().unwrap_or(op);
    let wide_int = |m: &&str| matches!(*m, "S64" | "U64");
    let (dst, srcs) = match base {
        "DEPBAR" => (false, false),
        // DSETP writes predicates and reads pairs.
        "DSETP" => return Ok((0..n).map(|i| (2..4).contains(&i)).collect()),
        _ if base.starts_with('D') => (true, true),
        "CS2R" => (!mods.contains(&"32"), false),
        "IMAD" if mods.contains(&"WIDE") => {
            return Ok((0..n).map(|i| i == 0 || i + 1 == n).collect());
        }
        // `IMAD.HI d, a, b, c`: the high word of `a * b + c` with `c` a 64-bit pair.
        "IMAD" if mods.contains(&"HI") => {
            return Ok((0..n).map(|i| i + 1 == n).collect());
        }
        "MUFU" | "SHF" | "IADD3" | "LEA" | "ISETP" | "LOP3" | "SEL" | "FSEL" | "PRMT" | "FLO"
        | "POPC" | "BREV" | "IMNMX" | "VIMNMX" | "IABS" | "MOV" | "IMAD" => (false, false),
        "F2F" => match mods
            .iter()
            .filter(|m| m.starts_with('F'))
            .collect::<Vec<_>>()[..]
        {
            [d, s] => (*d == "F64", *s == "F64"),
            _ => return Err(format!("conversion types: {op}")),
        },
        "F2I" => (mods.iter().any(wide_int), mods.contains(&"F64")),
        "I2F" => (mods.contains(&"F64"), mods.iter().any(wide_int)),
        "FRND" => (mods.contains(&"F64"), mods.contains(&"F64")),
        _ if op.contains("64") => return Err(format!("64-bit form: {op}")),
        _ => (false, false),
    };
    Ok((0..n).map(|i| if i == 0 { dst } else { srcs }).collect())
}

fn core_operand(o: &str) -> &str {
    let mut s = o;
    for p in ["-", "!", "~", "|"] {
        s = s.strip_prefix(p).unwrap_or(s);
    }
    let s = s.strip_suffix('|').unwrap_or(s);
    s.split('.').next().unwrap_or(s)
}

/// The template of a probe's code (module docs), or why there is none.
pub fn template(lines: &[String], srcs: &[Shape], dst: Shape) -> Result<String, String> {
    let loads: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("LDG"))
        .collect();
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
    // Loads: (register, operand, word of a pair or None for the whole value, extension).
    // ptxas narrows the load of a 16-bit source it splits from a word to `LDG.E.U16` (its
    // upper half is never read) and may then rely on the zero upper bits; kiln's 16-bit
    // registers leave them unspecified, so the template extends the source as the load did.
    let mut bindings: Vec<(u32, usize, Option<u32>, Option<&str>)> = Vec::new();
    for &i in &loads {
        let l = &lines[i];
        let k = first_reg(l).ok_or("load destination")?;
        let offset = crate::cvt_forms::load_offset(l)?;
        let operand = (offset / 16) as usize;
        if operand >= srcs.len() {
            return Err(format!("a load past the operands: {l}"));
        }
        if l.starts_with("LDG.E.128") {
            return Err(format!("a 128-bit load: {l}"));
        }
        let whole = l.starts_with("LDG.E.64");
        let word = match (srcs[operand], whole) {
            (Shape::Pair, false) => Some((offset % 16) / 4),
            (Shape::Pair, true) => None,
            (_, true) => return Err(format!("a 64-bit load of a 32-bit operand: {l}")),
            _ => None,
        };
        let op = l.split(' ').next().unwrap_or("");
        let extension = match op
            .split('.')
            .find(|m| matches!(*m, "U16" | "S16" | "U8" | "S8"))
        {
            // A narrowed load of a word operand: ptxas found its upper bits irrelevant, so
            // the template may extend it the same way.
            Some(_) if !matches!(srcs[operand], Shape::Half | Shape::Word) => {
                return Err(format!("a sub-word load of a 64-bit operand: {l}"));
            }
            Some("U16") => Some("LOP3.LUT {r}, {a}, 0xffff, RZ, #0xc0, !PT"),
            Some("S16") => Some("PRMT {r}, {a}, 0x9910, RZ"),
            Some("U8") => Some("LOP3.LUT {r}, {a}, 0xff, RZ, #0xc0, !PT"),
            Some("S8") => Some("PRMT {r}, {a}, 0x8880, RZ"),
            _ => None,
        };
        bindings.push((k, operand, word, extension));
    }
    bindings.sort_by_key(|&(_, operand, word, _)| (operand, word));
    let stored_ops = lines[stg]
        .split_once(' ')
        .map(|(_, a)| operands(a))
        .ok_or("STG operands")?;
    let stored = reg(stored_ops.last().ok_or("STG operands")?, "R").ok_or("stored register")?;
    // A predicate result: the `SEL` writing the stored register names it.
    let mut result_pred: Option<(u32, bool)> = None;
    let mut skip_line: Option<usize> = None;
    if dst == Shape::Pred {
        let (i, l) = lines[..stg]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, l)| first_reg(l) == Some(stored) && !l.starts_with('@'))
            .ok_or("the stored register's writer")?;
        let (op, args) = l.split_once(' ').ok_or("selection")?;
        let a = operands(args);
        if !op.starts_with("SEL") && !op.starts_with("FSEL") || a.len() != 4 {
            return Err(format!("predicate result not selected by SEL: {l}"));
        }
        let (neg, p) = match a[3].strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, a[3].as_str()),
        };
        let k = reg(p, "P").ok_or("SEL predicate")?;
        // `SEL d, x, y, p` is `p ? x : y`; the result is 1 where the PTX predicate holds.
        let one_first = a[1] == "0x1" && a[2] == "RZ";
        let zero_first = a[1] == "RZ" && a[2] == "0x1";
        if !(one_first || zero_first) {
            return Err(format!("predicate result selection: {l}"));
        }
        result_pred = Some((k, one_first != neg));
        skip_line = Some(i);
    }
    let mut pairs: BTreeSet<u32> = BTreeSet::new();
    for &(k, operand, word, _) in &bindings {
        if srcs[operand] == Shape::Pair && word.is_none() {
            pairs.insert(k);
        }
    }
    if dst == Shape::Pair {
        pairs.insert(stored);
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
    let skip = |i: usize, l: &str| {
        l.starts_with("LDG")
            || l.starts_with("STG")
            || l.starts_with("ULDC")
            || l.contains("c[0x0][0x28]")
            || ["0x160", "0x164", "0x210", "0x214"]
                .iter()
                .any(|o| l.contains(&format!("c[0x0][{o}]")))
            || l.starts_with("NOP")
            || Some(i) == skip_line
    };
    let start = loads.first().map_or(0, |f| f + 1);
    let main: Vec<&String> = (start..stg)
        .filter(|&i| !skip(i, &lines[i]))
        .map(|i| &lines[i])
        .filter(|l| !l.is_empty())
        .collect();
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
    // An extension is left out where every read of the loaded register takes its low half
    // alone (`R0.H0_H0`): the upper bits then cannot matter.
    let low_half_only = |k: u32| {
        main.iter().chain(subs.iter()).all(|l| {
            let rest = match l.strip_prefix('@') {
                Some(r) => r.split_once(' ').map_or("", |(_, r)| r),
                None => l.as_str(),
            };
            let Some((_, args)) = rest.split_once(' ') else {
                return true;
            };
            operands(args).iter().skip(1).all(|o| {
                let core = core_operand(o);
                reg(core, "R") != Some(k) || o.contains(".H0_H0")
            })
        })
    };
    for b in &mut bindings {
        if b.3.is_some() && low_half_only(b.0) {
            b.3 = None;
        }
    }
    // Uniform registers set by `UMOV URk, imm`: 32-bit temporaries.
    let mut uniform: HashMap<String, String> = HashMap::new();
    let mut out: Vec<String> = Vec::new();
    for &(k, operand, word, extension) in &bindings {
        let bind = SOURCE_NAMES[operand];
        match (word, extension) {
            (None, _) if srcs[operand] == Shape::Pair => {
                for w in 0..2 {
                    out.push(format!("MOV %q{k}.{w}, {bind}.{w}"));
                }
            }
            (None, Some(ext)) => {
                out.push(ext.replace("{r}", &name_of(k, &pairs)).replace("{a}", bind))
            }
            (None, None) => out.push(format!("MOV {}, {bind}", name_of(k, &pairs))),
            (Some(w), _) => out.push(format!("MOV {}, {bind}.{w}", name_of(k, &pairs))),
        }
    }
    let mut labels: HashMap<String, String> = HashMap::new();
    let mut calls = 0usize;
    emit(
        &main,
        &pairs,
        &mut uniform,
        &mut labels,
        &mut calls,
        &mut out,
    )?;
    match (dst, result_pred) {
        (Shape::Pred, Some((k, true))) => {
            out.push(format!("PLOP3.LUT $d, PT, $p{k}, PT, PT, #0xf0, #0x0"))
        }
        (Shape::Pred, Some((k, false))) => {
            out.push(format!("PLOP3.LUT $d, PT, $p{k}, PT, PT, #0xf, #0x0"))
        }
        (Shape::Pair, _) => {
            for w in 0..2 {
                out.push(format!("MOV %d.{w}, %q{stored}.{w}"));
            }
        }
        _ => out.push(format!("MOV %d, {}", name_of(stored, &pairs))),
    }
    if !subs.is_empty() {
        out.push("BRA DONE".into());
        emit(
            &subs,
            &pairs,
            &mut uniform,
            &mut labels,
            &mut calls,
            &mut out,
        )?;
        out.push("DONE:".into());
    }
    Ok(out.join("; "))
}

/// The temporary of physical register `k`.
fn name_of(k: u32, pairs: &BTreeSet<u32>) -> String {
    if pairs.contains(&k) {
        format!("%q{k}.0")
    } else if k % 2 == 1 && pairs.contains(&(k - 1)) {
        format!("%q{}.1", k - 1)
    } else {
        format!("%r{k}")
    }
}

fn label_name(l: &str, names: &mut HashMap<String, String>) -> String {
    let key = l.trim_end_matches(':').to_string();
    let n = names.len();
    names.entry(key).or_insert_with(|| format!("L{n}")).clone()
}

fn rename(
    o: &str,
    pair: bool,
    pairs: &BTreeSet<u32>,
    uniform: &HashMap<String, String>,
) -> Result<String, String> {
    // nvdisasm writes `|R0|.H0_H0`; the sequences `|%r0.H0_H0|`.
    let moved;
    let o = match o.rsplit_once("|.") {
        Some((head, sel)) if !sel.contains('|') => {
            moved = format!("{head}.{sel}|");
            moved.as_str()
        }
        _ => o,
    };
    let mut pre = String::new();
    let mut s = o;
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
    // A half selector the sequences know stays on the renamed register.
    let (core, sel) = match [".H0_H0", ".H1_H1", ".SIGN"]
        .into_iter()
        .find_map(|h| core.strip_suffix(h).map(|c| (c, h)))
    {
        Some((c, h)) => (c, h),
        None => (core, ""),
    };
    if matches!(core, "RZ" | "PT" | "SRZ") {
        return Ok(o.to_string());
    }
    if let Some(k) = reg(core, "R") {
        let name = if pair {
            format!("%q{k}")
        } else {
            name_of(k, pairs)
        };
        return Ok(format!("{pre}{name}{sel}{post}"));
    }
    if let Some(k) = reg(core, "P") {
        return Ok(format!("{pre}$p{k}{post}"));
    }
    if let Some(t) = uniform.get(core) {
        return Ok(format!("{pre}{t}{post}"));
    }
    if is_float(o) {
        return Ok(format!("{}:{}", if pair { "d" } else { "f" }, o.trim()));
    }
    if o.starts_with("0x") || o.starts_with("-0x") {
        return Ok(o.to_string());
    }
    Err(format!("operand `{o}`"))
}

fn emit(
    lines: &[&String],
    pairs: &BTreeSet<u32>,
    uniform: &mut HashMap<String, String>,
    labels: &mut HashMap<String, String>,
    calls: &mut usize,
    out: &mut Vec<String>,
) -> Result<(), String> {
    for l in lines {
        let l = l.as_str();
        if l.ends_with(':') {
            out.push(format!("{}:", label_name(l, labels)));
            continue;
        }
        if l.starts_with(".weak") {
            continue;
        }
        let (guard, rest) = match l.strip_prefix('@') {
            Some(r) => {
                let (g, rest) = r.split_once(' ').ok_or("guard")?;
                let (neg, p) = match g.strip_prefix('!') {
                    Some(p) => ("!", p),
                    None => ("", g),
                };
                let k = reg(p, "P").ok_or_else(|| format!("guard {g}"))?;
                (format!("@{neg}$p{k} "), rest)
            }
            None => (String::new(), l),
        };
        let (op, args) = rest.split_once(' ').unwrap_or((rest, ""));
        if op == "UMOV" {
            let a = operands(args);
            if a.len() == 2 && (a[1].starts_with("0x") || a[1] == "URZ") {
                let t = format!("%u{}", a[0].trim_start_matches("UR"));
                let v = if a[1] == "URZ" { "RZ" } else { a[1].as_str() };
                out.push(format!("{guard}MOV {t}, {v}"));
                uniform.insert(a[0].clone(), t);
                continue;
            }
            return Err(format!("uniform operand form: {l}"));
        }
        if l.contains("c[") || l.contains("QNAN") {
            return Err(format!("operand form: {l}"));
        }
        if op.starts_with("CALL") {
            let target = args
                .trim_start_matches("`(")
                .trim_end_matches(')')
                .to_string();
            if out
                .last()
                .is_some_and(|p| p.starts_with("MOV %r") && p.contains(", 0x"))
            {
                out.pop();
            }
            *calls += 1;
            out.push(format!("{guard}BRA {}", label_name(&target, labels)));
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
            out.push(format!("@{neg}$p{k} BRA {}", label_name(target, labels)));
            out.push(format!("{skip}:"));
            continue;
        }
        if op == "BRA" {
            let target = args.trim_start_matches("`(").trim_end_matches(')');
            out.push(format!("{guard}BRA {}", label_name(target, labels)));
            continue;
        }
        let args = operands(args);
        if args.iter().any(|a| {
            let c = core_operand(a);
            c.starts_with("UR") && !uniform.contains_key(c) || c.starts_with("UP")
        }) {
            return Err(format!("uniform operand form: {l}"));
        }
        let wide_ops = pair_operands(op, args.len())?;
        let ops: Vec<String> = args
            .iter()
            .zip(wide_ops)
            .map(|(o, w)| rename(o, w, pairs, uniform))
            .collect::<Result<_, _>>()?;
        out.push(format!("{guard}{op} {}", ops.join(", ")));
    }
    Ok(())
}

/// One learned row: the sources' shapes, the result's, a template or a reason per arch.
pub struct Row {
    pub srcs: Vec<Shape>,
    pub dst: Shape,
    pub cols: Vec<Result<String, String>>,
}

pub fn shape_word(s: Shape) -> &'static str {
    match s {
        Shape::Half => "h",
        Shape::Word => "w",
        Shape::Pair => "q",
        Shape::Pred => "p",
    }
}

/// Writes the probe of every instance in `insts` for every SM of [`ARCHS`] to
/// `dir/<sm>/ptx/<n>.ptx` (the same texts [`learn`] compiles, so ptxas's results are cached):
/// seeds for a SASS table collect round (`sass-probe --arch <sm> --collect --also dir/<sm>`)
/// that brings the encodings of ptxas's code for these forms into the table.
pub fn write_probes(insts: &[&Instance], dir: &std::path::Path) -> Result<(), String> {
    for arch in ARCHS {
        let out = dir.join(arch).join("ptx");
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut n = 0;
        for (k, inst) in insts.iter().enumerate() {
            let Ok((srcs, dst)) = learnable(inst) else {
                continue;
            };
            let path = out.join(format!("isa_{k:05}.ptx"));
            std::fs::write(&path, probe(inst, arch, &srcs, dst))
                .map_err(|e| format!("{}: {e}", path.display()))?;
            n += 1;
        }
        println!("wrote {n} probes to {}", out.display());
    }
    Ok(())
}

/// Learns the templates of `insts` (those kiln refuses, as `refused` says).
pub fn learn(insts: &[&Instance]) -> BTreeMap<String, Row> {
    let rows = corpus::par_map("isa-forms learn", insts, |inst| {
        let (srcs, dst) = learnable(inst).ok()?;
        let mut cols = Vec::new();
        for arch in ARCHS {
            let text = probe(inst, arch, &srcs, dst);
            cols.push(match corpus::ptxas_cubin(&text, arch, &[]) {
                Ok(PtxasOutcome::Ok { cubin, .. }) => disassemble(&cubin)
                    .and_then(|l| template(&l, &srcs, dst))
                    .and_then(|t| scheduling_known(&t, arch).map(|()| t)),
                Ok(PtxasOutcome::Rejected(m)) => Err(format!(
                    "ptxas rejects: {}",
                    m.lines().next().unwrap_or("").trim()
                )),
                Err(e) => Err(e),
            });
        }
        Some((inst.mnemonic.clone(), Row { srcs, dst, cols }))
    });
    rows.into_iter().flatten().collect()
}

/// The latency class of a SASS mnemonic, as `crates/hazard/data/effects.txt` names it.
fn latency_class(op: &str) -> &str {
    if op.starts_with("IMAD.WIDE") {
        "IMAD.WIDE"
    } else if op.starts_with("HFMA2.MMA") {
        "HFMA2.MMA"
    } else {
        op.split('.').next().unwrap_or(op)
    }
}

/// Every instruction of `template` has a latency class the hazard tables of `arch` know, and
/// `sched` scoreboards exactly the variable-latency ones: a template may not bring an
/// instruction whose timing neither the scheduler nor the checker has seen.
fn scheduling_known(template: &str, arch: &str) -> Result<(), String> {
    let table =
        hazard::latency_table(arch).ok_or_else(|| format!("no latency table for {arch}"))?;
    let profile = target::Sm::parse(arch)
        .and_then(|s| s.profile())
        .ok_or_else(|| format!("no profile for {arch}"))?;
    for line in template.split("; ") {
        let line = line.trim();
        if line.ends_with(':') {
            continue;
        }
        let line = match line.strip_prefix('@') {
            Some(r) => r.split_once(' ').map_or("", |(_, r)| r),
            None => line,
        };
        let op = line.split(' ').next().unwrap_or("");
        let class = latency_class(op);
        if matches!(class, "MOV" | "BRA") {
            continue;
        }
        if !table.knows(class) {
            return Err(format!(
                "latency class {class} unknown to the {arch} hazard table"
            ));
        }
        let op = ir::Opcode::parse(op)?;
        let inst = ir::Inst::new(op, Vec::new(), Vec::new());
        if table.is_variable(class) != sched::is_variable_latency(&inst, profile) {
            return Err(format!(
                "{class}: the hazard table and the scheduler disagree on its latency kind"
            ));
        }
    }
    Ok(())
}

pub fn table_path() -> std::path::PathBuf {
    corpus::workspace_root().join("crates/lower/data/ops.tsv")
}

/// `old` (a table's text) with the rows of `opcodes` replaced by those of `rows`: what
/// `--learn --opcode OP` writes, so that learning a few opcodes keeps every other template.
pub fn merge_table(old: &str, rows: &BTreeMap<String, Row>, opcodes: &[String]) -> String {
    let new = table_text(rows);
    let is_row = |l: &&str| !l.starts_with('#') && !l.is_empty();
    let opcode_of = |l: &str| l.split(['.', '\t']).next().unwrap_or("").to_string();
    let mut lines: BTreeMap<String, String> = old
        .lines()
        .filter(is_row)
        .filter(|l| !opcodes.contains(&opcode_of(l)))
        .map(|l| {
            (
                l.split('\t').next().unwrap_or("").to_string(),
                l.to_string(),
            )
        })
        .collect();
    for l in new.lines().filter(is_row) {
        lines.insert(
            l.split('\t').next().unwrap_or("").to_string(),
            l.to_string(),
        );
    }
    let mut t: String =
        new.lines()
            .take_while(|l| l.starts_with('#'))
            .fold(String::new(), |mut t, l| {
                t.push_str(l);
                t.push('\n');
                t
            });
    for l in lines.values() {
        t.push_str(l);
        t.push('\n');
    }
    t
}

/// The table's text: a header, then one row per instruction.
pub fn table_text(rows: &BTreeMap<String, Row>) -> String {
    let mut t = String::from(
        "# PTX instruction → ptxas 13.0.88's SASS, as templates in lower/src/seq.rs syntax \
         (%a %b %c %e %f sources, %d or $d the result; `-` = none learned, kiln refuses it).\n\
         # Generated by `cargo xtask isa-forms --learn` (xtask/src/isa_forms/learn.rs); do not edit.\n\
         # instruction\tshapes (sources > result; h 16-bit, w 32-bit, q 64-bit, p predicate)\t",
    );
    t.push_str(&crate::cvt_forms::arch_columns());
    t.push('\n');
    for (k, r) in rows {
        if r.cols.iter().all(|c| c.is_err()) {
            continue;
        }
        let shapes: String = r.srcs.iter().map(|s| shape_word(*s)).collect();
        t.push_str(&format!("{k}\t{shapes}>{}", shape_word(r.dst)));
        for c in &r.cols {
            t.push('\t');
            t.push_str(c.as_deref().unwrap_or("-"));
        }
        t.push('\n');
    }
    t
}
