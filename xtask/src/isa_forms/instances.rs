//! The instances of `crates/ptx`'s instruction forms: every combination of a form's modifier
//! groups (all of them where there are at most [`FULL_PRODUCT`], else each group varied
//! alone from a base choice), with the operand types the PTX ISA gives each operand of that
//! combination and, where the form takes an immediate, variants with immediates.
//!
//! Only the families whose operands are values (arithmetic, comparison, logic, conversion,
//! bit manipulation, video, warp collectives) are instantiated here; the others (memory,
//! control flow, textures, tensor cores, asynchronous copies) are listed as not generated,
//! by opcode, in the report.

use std::collections::BTreeSet;

use super::values::Class;

/// Modifier combinations of one form enumerated in full up to this many.
pub const FULL_PRODUCT: usize = 4608;

/// Where a memory operand points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// The thread's 32-byte slot of the `buf` parameter's buffer, as a global address.
    Global,
    /// The same slot as a generic address.
    Generic,
    /// The thread's 32-byte slot of a shared array (filled before, copied out after).
    Shared,
    /// A 32-byte local array of the thread (filled before, copied out after).
    Local,
    /// 16 bytes of the `.const` table of 64-bit values.
    Const,
}

/// One operand of a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opnd {
    /// A result: a fresh register of the class, stored to the output buffer.
    Dst(Class),
    /// A source: a register loaded from the class's table.
    Src(Class),
    /// A literal.
    Imm(String),
    /// A vector of results (`{%r0, %r1}`), each stored.
    DstVec(Class, usize),
    /// A vector of sources.
    SrcVec(Class, usize),
    /// A memory operand `[addr]` into the thread's memory of a space.
    Addr(Space),
    /// A register defined here and not stored (a cache policy): named, of a class.
    Def(&'static str, Class),
    /// A register defined by an earlier `Def`.
    Use(&'static str),
    /// The thread's address in a space as a register (`isspacep`'s operand).
    AddrReg(Space),
}

/// One PTX instruction of a probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    pub mnemonic: String,
    pub operands: Vec<Opnd>,
}

/// One probe: the instruction under test, with the statements its semantics need around it
/// (the carry chain of `addc`, ...).
#[derive(Clone, Debug)]
pub struct Instance {
    /// The form's line in `crates/ptx/data/isa.txt`.
    pub form_line: u32,
    pub section: &'static str,
    /// The instruction under test as written (`max.ftz.f32`).
    pub mnemonic: String,
    /// `mnemonic` plus the operand shape (`max.ftz.f32 r,r,i:0f00000000`): unique per probe.
    pub key: String,
    pub stmts: Vec<Stmt>,
}

/// The memory and synchronization opcodes instantiated (`memory_roles`).
pub const MEMORY_OPCODES: &[&str] = &[
    "ld",
    "ldu",
    "st",
    "atom",
    "red",
    "prefetch",
    "prefetchu",
    "fence",
    "membar",
    "isspacep",
];

/// The opcodes instantiated (value families).
pub const VALUE_OPCODES: &[&str] = &[
    "add",
    "sub",
    "mul",
    "mad",
    "mul24",
    "mad24",
    "sad",
    "div",
    "rem",
    "abs",
    "neg",
    "min",
    "max",
    "popc",
    "clz",
    "bfind",
    "fns",
    "brev",
    "bfe",
    "bfi",
    "szext",
    "bmsk",
    "dp4a",
    "dp2a",
    "addc",
    "subc",
    "madc",
    "testp",
    "copysign",
    "fma",
    "rcp",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "lg2",
    "ex2",
    "tanh",
    "set",
    "setp",
    "selp",
    "slct",
    "and",
    "or",
    "xor",
    "not",
    "cnot",
    "lop3",
    "shf",
    "shl",
    "shr",
    "mov",
    "prmt",
    "cvt",
    "activemask",
    "redux",
    "shfl",
    "vote",
    "match",
    "vadd",
    "vsub",
    "vabsdiff",
    "vmin",
    "vmax",
    "vshl",
    "vshr",
    "vmad",
    "vset",
    "vadd2",
    "vsub2",
    "vavrg2",
    "vabsdiff2",
    "vmin2",
    "vmax2",
    "vset2",
    "vadd4",
    "vsub4",
    "vavrg4",
    "vabsdiff4",
    "vmin4",
    "vmax4",
    "vset4",
];

/// The class of values a type modifier names.
pub fn class_of(ty: &str) -> Option<Class> {
    Some(match ty {
        ".b8" | ".u8" | ".s8" => Class::I8,
        ".b16" | ".u16" | ".s16" => Class::I16,
        ".b32" | ".u32" | ".s32" | ".u16x2" | ".s16x2" | ".tf32" => Class::I32,
        ".b64" | ".u64" | ".s64" => Class::I64,
        ".f16" => Class::F16,
        ".bf16" => Class::BF16,
        ".f16x2" => Class::F16x2,
        ".bf16x2" => Class::BF16x2,
        ".f32" => Class::F32,
        ".f64" => Class::F64,
        ".pred" => Class::Pred,
        ".e4m3x2" | ".e5m2x2" => Class::I16,
        _ => return None,
    })
}

fn wide(c: Class) -> Option<Class> {
    match c {
        Class::I16 => Some(Class::I32),
        Class::I32 => Some(Class::I64),
        _ => None,
    }
}

fn divisor(c: Class) -> Class {
    match c {
        Class::I16 => Class::Div16,
        Class::I32 => Class::Div32,
        Class::I64 => Class::Div64,
        c => c,
    }
}

/// Rounding modifiers: an instruction carries at most one (forms list the float and the
/// integer roundings as two optional groups).
const ROUNDINGS: &[&str] = &[
    ".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi", ".rna", ".rs",
];

/// Every modifier combination of `form` to instantiate, each in the form's group order: the
/// full product (less combinations with two roundings) when it has at most [`FULL_PRODUCT`]
/// members, else each group varied alone from the base (every group's first choice), crossed
/// with every choice of the last group (the instruction's type).
pub fn combinations(form: &ptx::Form) -> Vec<Vec<&'static str>> {
    let groups: Vec<Vec<Option<&'static str>>> = form
        .groups
        .iter()
        .map(|g| {
            let mut c: Vec<Option<&'static str>> = Vec::new();
            if !g.required {
                c.push(None);
            }
            c.extend(g.choices.iter().map(|m| Some(*m)));
            c
        })
        .collect();
    let flatten = |choice: &[usize]| -> Vec<&'static str> {
        choice
            .iter()
            .zip(&groups)
            .filter_map(|(i, g)| g[*i])
            .collect()
    };
    let valid = |mods: &[&str]| mods.iter().filter(|m| ROUNDINGS.contains(m)).count() <= 1;
    let product = groups
        .iter()
        .try_fold(1usize, |acc, g| acc.checked_mul(g.len()))
        .unwrap_or(usize::MAX);
    let mut out = Vec::new();
    if product <= 4 * FULL_PRODUCT {
        let mut choice = vec![0usize; groups.len()];
        'all: loop {
            let mods = flatten(&choice);
            if valid(&mods) {
                out.push(mods);
            }
            let mut k = groups.len();
            loop {
                if k == 0 {
                    break 'all;
                }
                k -= 1;
                choice[k] += 1;
                if choice[k] < groups[k].len() {
                    break;
                }
                choice[k] = 0;
            }
        }
        if out.len() <= FULL_PRODUCT {
            return out;
        }
        out.clear();
    }
    // Groups of memory forms that matter together: the state space (each variation is tried
    // in the generic, global and shared spaces) and the memory order with its scope.
    let find = |m: &str| groups.iter().position(|g| g.contains(&Some(m)));
    let (space_g, sem_g, scope_g) = (find(".global"), find(".relaxed"), find(".gpu"));
    let spaces: Vec<usize> = match space_g {
        Some(sg) => groups[sg]
            .iter()
            .enumerate()
            .filter(|(_, m)| matches!(m, None | Some(".global") | Some(".shared")))
            .map(|(i, _)| i)
            .collect(),
        None => vec![0],
    };
    let base = vec![0usize; groups.len()];
    let mut seen = BTreeSet::new();
    let type_group = groups.len().checked_sub(1);
    let mut push = |c: Vec<usize>, out: &mut Vec<Vec<&'static str>>| {
        let mods = flatten(&c);
        if valid(&mods) && seen.insert(c) {
            out.push(mods);
        }
    };
    for k in 0..groups.len() {
        for i in 0..groups[k].len() {
            let types = type_group.map_or(1, |t| groups[t].len());
            for t in 0..types {
                for &sp in &spaces {
                    let mut c = base.clone();
                    if let Some(sg) = space_g {
                        c[sg] = sp;
                    }
                    if let Some(tg) = type_group
                        && tg != k
                    {
                        c[tg] = t;
                    }
                    c[k] = i;
                    // A memory order needs a scope (`ld.relaxed.gpu`).
                    if Some(k) == sem_g
                        && let Some(scg) = scope_g
                        && c[scg] == 0
                    {
                        for sc in 1..groups[scg].len() {
                            let mut c = c.clone();
                            c[scg] = sc;
                            push(c, &mut out);
                        }
                    }
                    push(c, &mut out);
                }
            }
        }
    }
    out
}

/// The operand roles of `opcode` with `mods` (all sources as registers), or why the form is
/// not instantiated.
fn roles(opcode: &str, mods: &[&str], form: &ptx::Form) -> Result<Vec<Stmt>, &'static str> {
    use Opnd::{Dst, Imm, Src};
    if MEMORY_OPCODES.contains(&opcode) {
        return memory_roles(opcode, mods);
    }
    let has = |m: &str| mods.contains(&m);
    let types: Vec<Class> = mods.iter().filter_map(|m| class_of(m)).collect();
    let t = *types.last().ok_or("no type modifier")?;
    let int = matches!(t, Class::I8 | Class::I16 | Class::I32 | Class::I64);
    let mnemonic = format!("{opcode}{}", mods.concat());
    let nsrc = form.operands.len().saturating_sub(1);
    let one = |operands: Vec<Opnd>| {
        Ok(vec![Stmt {
            mnemonic: mnemonic.clone(),
            operands,
        }])
    };
    let all = |n: usize| {
        let mut v = vec![Dst(t)];
        v.extend((0..n).map(|_| Src(t)));
        v
    };
    let mask = || Imm("-1".to_string());
    let required = |f: &ptx::Form| {
        f.operands
            .iter()
            .filter(|o| !o.optional && !o.variadic)
            .count()
    };
    match opcode {
        // The carry chain: a carry-in comes from an `add.cc` before, a carry-out is read by an
        // `addc` after.
        "add" | "sub" | "mad" | "addc" | "subc" | "madc" if has(".cc") || opcode.ends_with('c') => {
            let n = if opcode.starts_with("mad") { 3 } else { 2 };
            let ty = mods.last().copied().unwrap_or(".u32");
            let mut stmts = Vec::new();
            if opcode.ends_with('c') {
                stmts.push(Stmt {
                    mnemonic: format!("add.cc{ty}"),
                    operands: all(2),
                });
            }
            stmts.push(Stmt {
                mnemonic: mnemonic.clone(),
                operands: all(n),
            });
            if has(".cc") {
                stmts.push(Stmt {
                    mnemonic: format!("addc{ty}"),
                    operands: vec![Dst(t), Imm("0".into()), Imm("0".into())],
                });
            }
            Ok(stmts)
        }
        "mul" | "mad" if has(".wide") => {
            let w = wide(t).ok_or("no wider type")?;
            let mut v = vec![Dst(w), Src(t), Src(t)];
            if opcode == "mad" {
                v.push(Src(w));
            }
            one(v)
        }
        "div" | "rem" if int => one(vec![Dst(t), Src(t), Src(divisor(t))]),
        "min" | "max" if form.operands.len() == 4 && has(".f32") => {
            // The three-input form (`c` optional): both shapes.
            let mut stmts = one(all(2))?;
            stmts.extend(one(all(3))?);
            Ok(stmts)
        }
        "add" | "sub" | "mul" | "mad" | "min" | "max" | "abs" | "neg" | "copysign" | "fma"
        | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" | "and" | "or"
        | "xor" | "not" | "cnot" | "brev" | "mul24" | "mad24" | "sad" | "div" => {
            if types.len() > 1 {
                return Err("mixed-precision form");
            }
            one(all(nsrc))
        }
        "mov" => {
            if has(".v2")
                || has(".v4")
                || form.operands[0].kinds.contains(ptx::OperandKind::Vector)
                    && form.section.contains("pack")
            {
                return Err("vector mov");
            }
            if has(".b128") {
                return Err("128-bit mov");
            }
            one(all(1))
        }
        "popc" | "clz" | "bfind" => one(vec![Dst(Class::I32), Src(t)]),
        "bfe" => one(vec![Dst(t), Src(t), Src(Class::I32), Src(Class::I32)]),
        "bfi" => one(vec![
            Dst(t),
            Src(t),
            Src(t),
            Src(Class::I32),
            Src(Class::I32),
        ]),
        "shl" | "shr" => one(vec![Dst(t), Src(t), Src(Class::I32)]),
        "shf" | "fns" | "szext" | "bmsk" | "dp4a" | "dp2a" | "prmt" => {
            let mut v = vec![Dst(Class::I32)];
            v.extend((0..nsrc).map(|_| Src(Class::I32)));
            one(v)
        }
        "lop3" => {
            if required(form) != 5 {
                return Err("lop3 with a predicate result");
            }
            one(vec![
                Dst(Class::I32),
                Src(Class::I32),
                Src(Class::I32),
                Src(Class::I32),
                Imm("0xb4".into()),
            ])
        }
        "testp" => one(vec![Dst(Class::Pred), Src(t)]),
        "setp" => {
            let combine = mods.iter().any(|m| matches!(*m, ".and" | ".or" | ".xor"));
            let mut v = vec![Dst(Class::Pred), Src(t), Src(t)];
            if combine {
                v.push(Src(Class::Pred));
            }
            one(v)
        }
        "set" => {
            let (d, s) = match types.as_slice() {
                [d, s] => (*d, *s),
                _ => return Err("set without two types"),
            };
            let combine = mods.iter().any(|m| matches!(*m, ".and" | ".or" | ".xor"));
            let mut v = vec![Dst(d), Src(s), Src(s)];
            if combine {
                v.push(Src(Class::Pred));
            }
            one(v)
        }
        "selp" => one(vec![Dst(t), Src(t), Src(t), Src(Class::Pred)]),
        "slct" => {
            let (d, c) = match types.as_slice() {
                [d, c] => (*d, *c),
                _ => return Err("slct without two types"),
            };
            one(vec![Dst(d), Src(d), Src(d), Src(c)])
        }
        "cvt" => {
            if has(".pack") {
                let mut v = vec![Dst(Class::I32), Src(Class::I32), Src(Class::I32)];
                if has(".b32") {
                    v.push(Src(Class::I32));
                }
                return one(v);
            }
            match types.as_slice() {
                // `cvt.rn.f16x2.f32 d, a, b` and the fp8 pairs from two f32.
                [d, Class::F32] if required(form) == 3 => {
                    let d = if matches!(d, Class::I16) {
                        Class::I16
                    } else {
                        Class::I32
                    };
                    one(vec![Dst(d), Src(Class::F32), Src(Class::F32)])
                }
                [d, s] => one(vec![Dst(*d), Src(*s)]),
                _ => Err("cvt without two types"),
            }
        }
        "activemask" => one(vec![Dst(Class::I32)]),
        "redux" => one(vec![Dst(t), Src(t), mask()]),
        "shfl" => {
            if !has(".sync") {
                return Err("shfl without .sync");
            }
            one(vec![
                Dst(Class::I32),
                Src(Class::I32),
                Src(Class::Lane),
                Src(Class::ShflClamp),
                mask(),
            ])
        }
        "vote" => {
            let d = if has(".ballot") {
                Class::I32
            } else {
                Class::Pred
            };
            let mut v = vec![Dst(d), Src(Class::Pred)];
            if has(".sync") {
                v.push(mask());
            }
            one(v)
        }
        "match" => {
            if has(".all") {
                return Err("match.all (predicate result)");
            }
            one(vec![Dst(Class::I32), Src(t), mask()])
        }
        "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" | "vset" | "vadd2"
        | "vsub2" | "vavrg2" | "vabsdiff2" | "vmin2" | "vmax2" | "vset2" | "vadd4" | "vsub4"
        | "vavrg4" | "vabsdiff4" | "vmin4" | "vmax4" | "vset4" => {
            let secondary = mods.iter().any(|m| matches!(*m, ".add" | ".min" | ".max"));
            let n = if secondary || required(form) == 4 {
                3
            } else {
                2
            };
            let mut v = vec![Dst(Class::I32)];
            v.extend((0..n).map(|_| Src(Class::I32)));
            one(v)
        }
        "vmad" => one(vec![
            Dst(Class::I32),
            Src(Class::I32),
            Src(Class::I32),
            Src(Class::I32),
        ]),
        _ => Err("family not instantiated"),
    }
}

/// The state space of a memory instruction's modifiers.
fn space_of(mods: &[&str]) -> Result<Space, &'static str> {
    let mut space = Space::Generic;
    for m in mods {
        space = match *m {
            ".global" => Space::Global,
            ".shared" | ".shared::cta" => Space::Shared,
            ".local" => Space::Local,
            ".const" => Space::Const,
            ".param" | ".param::entry" | ".param::func" | ".shared::cluster" => {
                return Err("parameter or cluster state space");
            }
            _ => continue,
        };
    }
    Ok(space)
}

/// The statements of a memory instruction's probe.
fn memory_roles(opcode: &str, mods: &[&str]) -> Result<Vec<Stmt>, &'static str> {
    use Opnd::{Addr, Def, Dst, DstVec, Imm, Src, SrcVec, Use};
    let has = |m: &str| mods.contains(&m);
    let mnemonic = format!("{opcode}{}", mods.concat());
    let types: Vec<Class> = mods.iter().filter_map(|m| class_of(m)).collect();
    let vec_n = if has(".v2") {
        2
    } else if has(".v4") {
        4
    } else if has(".v8") {
        8
    } else {
        1
    };
    let mut stmts = Vec::new();
    let mut policy = Vec::new();
    if has(".L2::cache_hint") {
        stmts.push(Stmt {
            mnemonic: "createpolicy.fractional.L2::evict_last.b64".into(),
            operands: vec![Def("pol", Class::I64), Imm("1.0".into())],
        });
        policy.push(Use("pol"));
    }
    let one = |t: Class, dst: bool| match (vec_n, dst) {
        (1, true) => Dst(t),
        (1, false) => Src(t),
        (n, true) => DstVec(t, n),
        (n, false) => SrcVec(t, n),
    };
    let operands = match opcode {
        "ld" | "ldu" | "st" => {
            if has(".b128") {
                return Err("128-bit registers");
            }
            if has(".v8") {
                // 256-bit accesses are sm_100's; ptxas 13.0.88 accepts `ld.global.v8.b8` for
                // sm_90 and loads the first element only.
                return Err("256-bit vectors");
            }
            let t = *types.last().ok_or("no type modifier")?;
            let space = space_of(mods)?;
            let bytes = t.bytes().max(1) * vec_n;
            if bytes > 32 || (space == Space::Const && bytes > 16) {
                return Err("access wider than the thread's slot");
            }
            if opcode == "st" && space == Space::Const {
                return Err("store to constant memory");
            }
            let mut v = if opcode == "st" {
                vec![Addr(space), one(t, false)]
            } else {
                vec![one(t, true), Addr(space)]
            };
            v.extend(policy);
            v
        }
        "atom" | "red" => {
            let t = *types.last().ok_or("no type modifier")?;
            if has(".b128") {
                return Err("128-bit registers");
            }
            let space = space_of(mods)?;
            if matches!(space, Space::Local | Space::Const) {
                return Err("atomic in this state space");
            }
            let b = if has(".inc") || has(".dec") {
                Class::I32
            } else {
                t
            };
            let mut v = Vec::new();
            if opcode == "atom" {
                v.push(one(t, true));
            }
            v.push(Addr(space));
            v.push(one(b, false));
            if has(".cas") {
                v.push(Src(t));
            }
            v.extend(policy);
            v
        }
        "prefetch" | "prefetchu" => {
            if has(".tensormap") {
                return Err("tensor maps");
            }
            vec![Addr(space_of(mods)?)]
        }
        "fence" | "membar" => {
            if has(".proxy") || has(".mbarrier_init") {
                return Err("proxy and mbarrier fences");
            }
            Vec::new()
        }
        "isspacep" => {
            if space_of(mods)? == Space::Const {
                return Err("constant space test");
            }
            // A generic pointer into global memory: true for `.global` only.
            vec![Dst(Class::Pred), Opnd::AddrReg(Space::Generic)]
        }
        _ => return Err("family not instantiated"),
    };
    stmts.push(Stmt { mnemonic, operands });
    Ok(stmts)
}

/// The instances of `form`: every modifier combination, each with all-register sources and,
/// where the form's last value source takes an immediate, one variant per immediate.
pub fn instances(form: &'static ptx::Form) -> Result<Vec<Instance>, &'static str> {
    if !VALUE_OPCODES.contains(&form.opcode) && !MEMORY_OPCODES.contains(&form.opcode) {
        return Err("family not instantiated");
    }
    if form
        .groups
        .iter()
        .any(|g| g.choices.iter().any(|c| c.contains('#')))
    {
        return Err("numbered shapes");
    }
    let mut out = Vec::new();
    let mut why = "no combination";
    for mods in combinations(form) {
        let stmts = match roles(form.opcode, &mods, form) {
            Ok(s) => s,
            Err(e) => {
                why = e;
                continue;
            }
        };
        let mnemonic = format!("{}{}", form.opcode, mods.concat());
        // The statements of the instruction under test (not the carry helpers).
        let tested: Vec<usize> = stmts
            .iter()
            .enumerate()
            .filter(|(_, s)| s.mnemonic == mnemonic)
            .map(|(i, _)| i)
            .collect();
        for &ti in &tested {
            // A probe per tested statement (the three-input min/max has two shapes).
            let keep: Vec<Stmt> = stmts
                .iter()
                .enumerate()
                .filter(|(i, s)| s.mnemonic != mnemonic || *i == ti)
                .map(|(_, s)| s.clone())
                .collect();
            let shape = shape_of(&keep[keep.iter().position(|s| s.mnemonic == mnemonic).unwrap()]);
            out.push(Instance {
                form_line: form.line,
                section: form.section,
                mnemonic: mnemonic.clone(),
                key: format!("{mnemonic} {shape}"),
                stmts: keep.clone(),
            });
            // Immediate variants: the last register source whose operand takes one.
            let pos = keep
                .iter()
                .position(|s| s.mnemonic == mnemonic)
                .expect("tested statement");
            let stmt = &keep[pos];
            let last_src = stmt
                .operands
                .iter()
                .enumerate()
                .rev()
                .find(|(i, o)| {
                    matches!(o, Opnd::Src(c) if !c.immediates().is_empty())
                        && form
                            .operands
                            .get(*i)
                            .is_some_and(|s| s.kinds.contains(ptx::OperandKind::Immediate))
                })
                .map(|(i, _)| i);
            if let Some(i) = last_src {
                let Opnd::Src(c) = stmt.operands[i] else {
                    unreachable!()
                };
                for imm in c.immediates() {
                    let mut v = keep.clone();
                    v[pos].operands[i] = Opnd::Imm((*imm).to_string());
                    let shape = shape_of(&v[pos]);
                    out.push(Instance {
                        form_line: form.line,
                        section: form.section,
                        mnemonic: mnemonic.clone(),
                        key: format!("{mnemonic} {shape}"),
                        stmts: v,
                    });
                }
            }
        }
    }
    if out.is_empty() {
        return Err(why);
    }
    Ok(out)
}

/// The operand shape of a statement: `r` for registers, `i:VALUE` for immediates.
fn shape_of(s: &Stmt) -> String {
    s.operands
        .iter()
        .map(|o| match o {
            Opnd::Dst(_) | Opnd::Src(_) | Opnd::Def(..) | Opnd::Use(_) => "r".to_string(),
            Opnd::DstVec(_, n) | Opnd::SrcVec(_, n) => format!("v{n}"),
            Opnd::Addr(_) => "[a]".to_string(),
            Opnd::AddrReg(_) => "a".to_string(),
            Opnd::Imm(v) => format!("i:{v}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(opcode: &str, line_contains: &str) -> &'static ptx::Form {
        ptx::isa()
            .forms(opcode)
            .find(|f| f.section.contains(line_contains))
            .unwrap_or_else(|| panic!("no form {opcode} {line_contains}"))
    }

    #[test]
    fn max_f32_has_ftz_and_relu_immediate() {
        let f = ptx::isa()
            .forms("max")
            .find(|f| {
                f.groups.iter().any(|g| g.choices.contains(&".NaN"))
                    && f.groups.last().unwrap().choices == [".f32"]
            })
            .unwrap();
        let keys: Vec<String> = instances(f).unwrap().into_iter().map(|i| i.key).collect();
        assert!(keys.contains(&"max.ftz.f32 r,r,r".to_string()), "{keys:?}");
        assert!(keys.contains(&"max.ftz.f32 r,r,i:0f00000000".to_string()));
        assert!(keys.contains(&"max.ftz.NaN.f32 r,r,r,r".to_string()));
    }

    #[test]
    fn addc_reads_a_carry_and_add_cc_writes_one() {
        let f = form("addc", "addc");
        let i = instances(f).unwrap();
        let cc = i.iter().find(|i| i.mnemonic == "addc.cc.u32").unwrap();
        let ms: Vec<&str> = cc.stmts.iter().map(|s| s.mnemonic.as_str()).collect();
        assert_eq!(ms, ["add.cc.u32", "addc.cc.u32", "addc.u32"]);
    }

    #[test]
    fn cvt_is_enumerated_in_full_with_one_rounding_at_most() {
        let f = form("cvt", "9.7.9.21 cvt");
        let combos = combinations(f);
        assert!(combos.len() <= FULL_PRODUCT);
        assert!(combos.contains(&vec![".rn", ".ftz", ".f32", ".f64"]));
        assert!(combos.contains(&vec![".rzi", ".sat", ".s8", ".f16"]));
        assert!(
            combos
                .iter()
                .all(|c| c.iter().filter(|m| ROUNDINGS.contains(m)).count() <= 1)
        );
    }
}
