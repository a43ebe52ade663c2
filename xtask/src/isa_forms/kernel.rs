//! The probe kernel of an instance: every thread of a [`GRID`]×[`BLOCK`] launch loads its
//! sources from the classes' `.const` tables (see `values.rs` for which entry), runs the
//! statements and stores every result to its own slots of the output buffer.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::instances::{Instance, Opnd};
use super::values::{Class, N};

pub const BLOCK: u32 = 256;
pub const GRID: u32 = 4;
/// Bytes per result slot.
const SLOT: usize = 16;
/// PTX version of every probe (ptxas 13.0.88's newest).
pub const VERSION: &str = "9.0";

/// Source-index registers: `%ix0`..`%ix5` (`values.rs` mixes; sources beyond reuse them).
const INDICES: usize = 6;

/// Bytes of output buffer one instance needs.
pub fn buffer_bytes(inst: &Instance) -> usize {
    (GRID * BLOCK) as usize * SLOT * results(inst).max(1)
}

fn results(inst: &Instance) -> usize {
    inst.stmts
        .iter()
        .flat_map(|s| &s.operands)
        .filter(|o| matches!(o, Opnd::Dst(_)))
        .count()
}

/// The module header: version, target and the tables the instances read.
pub fn header(arch: &str, insts: &[&Instance]) -> String {
    let mut classes = BTreeSet::new();
    for i in insts {
        for s in &i.stmts {
            for o in &s.operands {
                if let Opnd::Src(c) = o
                    && *c != Class::Pred
                {
                    classes.insert(*c);
                }
            }
        }
    }
    let mut t = format!(".version {VERSION}\n.target {arch}\n.address_size 64\n\n");
    for c in classes {
        let bytes = c.bytes();
        let vals = c
            .values()
            .iter()
            .map(|v| format!("0x{v:0w$x}", w = bytes * 2))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            t,
            ".const .align {bytes} .b{} {}[{N}] = {{{vals}}};",
            bytes * 8,
            c.table_name()
        );
    }
    t
}

/// The kernel `name` of `inst`.
pub fn kernel(name: &str, inst: &Instance) -> String {
    let mut body = String::new();
    let mut counts = [0usize; 6]; // b16, b32, f32, b64, f64, pred
    let kind = |c: Class| match c.reg_type() {
        ".b16" => 0,
        ".b32" => 1,
        ".f32" => 2,
        ".b64" => 3,
        ".f64" => 4,
        _ => 5,
    };
    let mut fresh = |c: Class| {
        let k = kind(c);
        counts[k] += 1;
        format!("{}{}", c.reg_prefix(), counts[k] - 1)
    };
    // g = %ctaid.x * BLOCK + %tid.x; the source indices.
    let _ = writeln!(body, "\tmov.u32 %g0, %tid.x;");
    let _ = writeln!(body, "\tmov.u32 %g1, %ctaid.x;");
    let _ = writeln!(body, "\tmad.lo.u32 %g2, %g1, {BLOCK}, %g0;");
    let mask = N - 1;
    let _ = writeln!(body, "\tand.b32 %ix0, %g2, {mask};");
    let _ = writeln!(body, "\tshr.u32 %g3, %g2, {};", N.trailing_zeros());
    let _ = writeln!(body, "\tand.b32 %ix1, %g3, {mask};");
    for (k, (a, b, c)) in [(5, 3, 1), (7, 11, 9), (13, 5, 17), (1, 17, 3)]
        .iter()
        .enumerate()
    {
        let _ = writeln!(body, "\tmul.lo.u32 %g4, %ix0, {a};");
        let _ = writeln!(body, "\tmad.lo.u32 %g4, %ix1, {b}, %g4;");
        let _ = writeln!(body, "\tadd.u32 %g4, %g4, {c};");
        let _ = writeln!(body, "\tand.b32 %ix{}, %g4, {mask};", k + 2);
    }
    let mut src = 0usize;
    let mut dsts: Vec<(Class, String)> = Vec::new();
    for s in &inst.stmts {
        let mut ops = Vec::new();
        for o in &s.operands {
            match o {
                Opnd::Imm(v) => ops.push(v.clone()),
                Opnd::Dst(c) => {
                    let r = fresh(*c);
                    dsts.push((*c, r.clone()));
                    ops.push(r);
                }
                Opnd::Src(c) => {
                    let r = fresh(*c);
                    let ix = format!("%ix{}", src % INDICES);
                    src += 1;
                    if *c == Class::Pred {
                        let _ = writeln!(body, "\tand.b32 %g5, {ix}, 1;");
                        let _ = writeln!(body, "\tsetp.ne.b32 {r}, %g5, 0;");
                    } else {
                        let bytes = c.bytes();
                        let _ = writeln!(body, "\tmov.u64 %ga0, {};", c.table_name());
                        let _ = writeln!(body, "\tmul.wide.u32 %ga1, {ix}, {bytes};");
                        let _ = writeln!(body, "\tadd.s64 %ga2, %ga0, %ga1;");
                        let ty = match c.reg_type() {
                            ".f32" => ".f32".to_string(),
                            ".f64" => ".f64".to_string(),
                            _ => format!(".b{}", bytes * 8),
                        };
                        let _ = writeln!(body, "\tld.const{ty} {r}, [%ga2];");
                    }
                    ops.push(r);
                }
            }
        }
        let _ = writeln!(body, "\t{} {};", s.mnemonic, ops.join(", "));
    }
    // The results, each in its 16-byte slot.
    let stride = SLOT * dsts.len().max(1);
    let _ = writeln!(body, "\tld.param.u64 %ga3, [out];");
    let _ = writeln!(body, "\tcvta.to.global.u64 %ga4, %ga3;");
    let _ = writeln!(body, "\tmul.wide.u32 %ga5, %g2, {stride};");
    let _ = writeln!(body, "\tadd.s64 %ga6, %ga4, %ga5;");
    for (j, (c, r)) in dsts.iter().enumerate() {
        let off = j * SLOT;
        if *c == Class::Pred {
            let _ = writeln!(body, "\tselp.u32 %g6, 1, 0, {r};");
            let _ = writeln!(body, "\tst.global.u32 [%ga6+{off}], %g6;");
        } else {
            let ty = match c.reg_type() {
                ".f32" => ".f32".to_string(),
                ".f64" => ".f64".to_string(),
                _ => format!(".b{}", c.bytes() * 8),
            };
            let _ = writeln!(body, "\tst.global{ty} [%ga6+{off}], {r};");
        }
    }
    let mut decl = String::new();
    for (k, (ty, prefix)) in [
        (".b16", "%rs"),
        (".b32", "%r"),
        (".f32", "%f"),
        (".b64", "%rd"),
        (".f64", "%fd"),
        (".pred", "%p"),
    ]
    .iter()
    .enumerate()
    {
        if counts[k] > 0 {
            let _ = writeln!(decl, "\t.reg {ty} {prefix}<{}>;", counts[k]);
        }
    }
    let _ = writeln!(decl, "\t.reg .b32 %g<7>;");
    let _ = writeln!(decl, "\t.reg .b32 %ix<{INDICES}>;");
    let _ = writeln!(decl, "\t.reg .b64 %ga<7>;");
    format!(
        "// {}\n.visible .entry {name}(\n\t.param .u64 out\n)\n.reqntid {BLOCK}, 1, 1\n{{\n{decl}\n{body}\tret;\n}}\n",
        inst.key
    )
}
