//! The probe kernel of an instance: every thread of a [`GRID`]×[`BLOCK`] launch loads its
//! sources from the classes' `.const` tables (see `values.rs` for which entry), runs the
//! statements and stores every result to its own slots of the output buffer.
//!
//! Memory operands (`instances::Space`) point into memory of the thread's own: a 32-byte slot
//! of the second parameter's buffer (`buf`, global or generic addresses), a 32-byte slot of a
//! shared array or a 32-byte local array (both filled from the thread's slot of `buf` first
//! and copied to the output after the probe), or 16 bytes of the 64-bit `.const` table. The
//! harness compares every buffer, so what a store or an atomic left in memory is compared too.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::instances::{Instance, Opnd, Space};
use super::values::{Class, N};

pub const BLOCK: u32 = 256;
pub const GRID: u32 = 4;
/// Bytes per result slot.
const SLOT: usize = 16;
/// Bytes of memory per thread for memory operands.
const MEM: usize = 32;
/// PTX version of every probe (ptxas 13.0.88's newest).
pub const VERSION: &str = "9.0";

/// Source-index registers: `%ix0`..`%ix5` (`values.rs` mixes; sources beyond reuse them).
const INDICES: usize = 6;

/// Bytes of every buffer one instance needs (the harness gives each pointer parameter the
/// same size).
pub fn buffer_bytes(inst: &Instance) -> usize {
    let threads = (GRID * BLOCK) as usize;
    (threads * SLOT * slots(inst).max(1)).max(threads * MEM)
}

/// Result slots: one per result register, two per thread-private memory copied out.
fn slots(inst: &Instance) -> usize {
    let ops = || inst.stmts.iter().flat_map(|s| &s.operands);
    let results: usize = ops()
        .map(|o| match o {
            Opnd::Dst(_) => 1,
            Opnd::DstVec(_, n) => *n,
            _ => 0,
        })
        .sum();
    results + 2 * spaces(inst).intersection(&private()).count()
}

fn private() -> BTreeSet<Space> {
    [Space::Shared, Space::Local].into_iter().collect()
}

/// The memory spaces an instance's operands point into.
fn spaces(inst: &Instance) -> BTreeSet<Space> {
    inst.stmts
        .iter()
        .flat_map(|s| &s.operands)
        .filter_map(|o| match o {
            Opnd::Addr(s) | Opnd::AddrReg(s) => Some(*s),
            _ => None,
        })
        .collect()
}

/// Whether an instance's kernel has the `buf` parameter.
fn has_buf(inst: &Instance) -> bool {
    !spaces(inst).is_empty() && spaces(inst) != [Space::Const].into_iter().collect()
}

/// The module header: version, target and the tables the instances read.
pub fn header(arch: &str, insts: &[&Instance]) -> String {
    let mut classes = BTreeSet::new();
    for i in insts {
        for s in &i.stmts {
            for o in &s.operands {
                match o {
                    Opnd::Src(c) | Opnd::SrcVec(c, _) if *c != Class::Pred => {
                        classes.insert(*c);
                    }
                    Opnd::Addr(Space::Const) => {
                        classes.insert(Class::I64);
                    }
                    _ => {}
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
            ".const .align {} .b{} {}[{N}] = {{{vals}}};",
            bytes.max(16),
            bytes * 8,
            c.table_name()
        );
    }
    t
}

/// The `ld`/`st` type suffix of a class's registers.
fn access_type(c: Class) -> String {
    match c.reg_type() {
        ".f32" => ".f32".to_string(),
        ".f64" => ".f64".to_string(),
        _ => format!(".b{}", c.bytes() * 8),
    }
}

/// Registers of one kernel, by class.
#[derive(Default)]
struct Regs {
    counts: [usize; 6],
}

impl Regs {
    fn kind(c: Class) -> usize {
        match c.reg_type() {
            ".b16" => 0,
            ".b32" => 1,
            ".f32" => 2,
            ".b64" => 3,
            ".f64" => 4,
            _ => 5,
        }
    }

    fn fresh(&mut self, c: Class) -> String {
        let k = Self::kind(c);
        self.counts[k] += 1;
        format!("{}{}", c.reg_prefix(), self.counts[k] - 1)
    }

    fn decls(&self) -> String {
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
            if self.counts[k] > 0 {
                let _ = writeln!(decl, "\t.reg {ty} {prefix}<{}>;", self.counts[k]);
            }
        }
        decl
    }
}

/// Loads a source of class `c` from its table at index register `ix` into a fresh register.
fn load_source(body: &mut String, regs: &mut Regs, c: Class, ix: &str) -> String {
    let r = regs.fresh(c);
    if c == Class::Pred {
        let _ = writeln!(body, "\tand.b32 %g5, {ix}, 1;");
        let _ = writeln!(body, "\tsetp.ne.b32 {r}, %g5, 0;");
    } else {
        let bytes = c.bytes();
        let _ = writeln!(body, "\tmov.u64 %ga0, {};", c.table_name());
        let _ = writeln!(body, "\tmul.wide.u32 %ga1, {ix}, {bytes};");
        let _ = writeln!(body, "\tadd.s64 %ga2, %ga0, %ga1;");
        let _ = writeln!(body, "\tld.const{} {r}, [%ga2];", access_type(c));
    }
    r
}

/// The address register of a space (set up by [`setup_spaces`]).
fn addr_reg(s: Space) -> &'static str {
    match s {
        Space::Global => "%aglob",
        Space::Generic => "%agen",
        Space::Shared => "%ashr",
        Space::Local => "%aloc",
        Space::Const => "%acon",
    }
}

/// Sets up the address registers of `spaces`; shared and local memory get the thread's slot
/// of `buf` copied in (the shared array's slots are written before a barrier).
fn setup_spaces(
    body: &mut String,
    decl: &mut String,
    globals: &mut String,
    spaces: &BTreeSet<Space>,
) {
    let needs_buf = spaces.iter().any(|s| !matches!(s, Space::Const));
    if needs_buf {
        let _ = writeln!(decl, "\t.reg .b64 %agen, %aglob, %gm<3>;");
        let _ = writeln!(body, "\tld.param.u64 %gm0, [buf];");
        let _ = writeln!(body, "\tmul.wide.u32 %gm1, %g2, {MEM};");
        let _ = writeln!(body, "\tadd.s64 %agen, %gm0, %gm1;");
        let _ = writeln!(body, "\tcvta.to.global.u64 %gm2, %gm0;");
        let _ = writeln!(body, "\tadd.s64 %aglob, %gm2, %gm1;");
    }
    let copy_in = |body: &mut String, space: &str, reg: &str| {
        for k in 0..MEM / 16 {
            let _ = writeln!(
                body,
                "\tld.global.v4.b32 {{%gv0, %gv1, %gv2, %gv3}}, [%aglob+{}];",
                16 * k
            );
            let _ = writeln!(
                body,
                "\tst.{space}.v4.b32 [{reg}+{}], {{%gv0, %gv1, %gv2, %gv3}};",
                16 * k
            );
        }
    };
    if spaces.contains(&Space::Shared) || spaces.contains(&Space::Local) {
        let _ = writeln!(decl, "\t.reg .b32 %gv<4>;");
    }
    if spaces.contains(&Space::Shared) {
        let _ = writeln!(
            globals,
            "\t.shared .align 16 .b8 SH[{}];",
            BLOCK as usize * MEM
        );
        let _ = writeln!(decl, "\t.reg .b32 %ashr, %gs0;");
        let _ = writeln!(body, "\tmov.u32 %gs0, SH;");
        let _ = writeln!(body, "\tmad.lo.u32 %ashr, %g0, {MEM}, %gs0;");
        copy_in(body, "shared", "%ashr");
        let _ = writeln!(body, "\tbar.sync 0;");
    }
    if spaces.contains(&Space::Local) {
        let _ = writeln!(globals, "\t.local .align 16 .b8 LM[{MEM}];");
        let _ = writeln!(decl, "\t.reg .b64 %aloc;");
        let _ = writeln!(body, "\tmov.u64 %aloc, LM;");
        copy_in(body, "local", "%aloc");
    }
    if spaces.contains(&Space::Const) {
        let _ = writeln!(decl, "\t.reg .b64 %acon, %gc<2>;");
        let _ = writeln!(body, "\tmov.u64 %gc0, {};", Class::I64.table_name());
        let _ = writeln!(body, "\tand.b32 %g5, %ix0, {};", N / 2 - 1);
        let _ = writeln!(body, "\tmul.wide.u32 %gc1, %g5, 16;");
        let _ = writeln!(body, "\tadd.s64 %acon, %gc0, %gc1;");
    }
}

/// The kernel `name` of `inst`.
pub fn kernel(name: &str, inst: &Instance) -> String {
    let mut body = String::new();
    let mut decl = String::new();
    let mut globals = String::new();
    let mut regs = Regs::default();
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
    let spaces = spaces(inst);
    setup_spaces(&mut body, &mut decl, &mut globals, &spaces);
    let mut src = 0usize;
    let mut dsts: Vec<(Class, String)> = Vec::new();
    let mut named: Vec<(&str, Class)> = Vec::new();
    let mut next_ix = || {
        let ix = format!("%ix{}", src % INDICES);
        src += 1;
        ix
    };
    for s in &inst.stmts {
        let mut ops = Vec::new();
        for o in &s.operands {
            match o {
                Opnd::Imm(v) => ops.push(v.clone()),
                Opnd::Dst(c) => {
                    let r = regs.fresh(*c);
                    dsts.push((*c, r.clone()));
                    ops.push(r);
                }
                Opnd::DstVec(c, n) => {
                    let rs: Vec<String> = (0..*n).map(|_| regs.fresh(*c)).collect();
                    dsts.extend(rs.iter().map(|r| (*c, r.clone())));
                    ops.push(format!("{{{}}}", rs.join(", ")));
                }
                Opnd::Src(c) => {
                    let ix = next_ix();
                    ops.push(load_source(&mut body, &mut regs, *c, &ix));
                }
                Opnd::SrcVec(c, n) => {
                    let rs: Vec<String> = (0..*n)
                        .map(|_| {
                            let ix = next_ix();
                            load_source(&mut body, &mut regs, *c, &ix)
                        })
                        .collect();
                    ops.push(format!("{{{}}}", rs.join(", ")));
                }
                Opnd::Addr(space) => ops.push(format!("[{}]", addr_reg(*space))),
                Opnd::AddrReg(space) => ops.push(addr_reg(*space).to_string()),
                Opnd::Def(n, c) => {
                    named.push((n, *c));
                    ops.push(format!("%{n}"));
                }
                Opnd::Use(n) => ops.push(format!("%{n}")),
            }
        }
        if ops.is_empty() {
            let _ = writeln!(body, "\t{};", s.mnemonic);
        } else {
            let _ = writeln!(body, "\t{} {};", s.mnemonic, ops.join(", "));
        }
    }
    for (n, c) in &named {
        let _ = writeln!(decl, "\t.reg {} %{n};", c.reg_type());
    }
    // The results, each in its 16-byte slot; then shared and local memory, copied out.
    let stride = SLOT * slots(inst).max(1);
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
            let _ = writeln!(body, "\tst.global{} [%ga6+{off}], {r};", access_type(*c));
        }
    }
    let mut off = dsts.len() * SLOT;
    for (space, reg) in [(Space::Shared, "%ashr"), (Space::Local, "%aloc")] {
        if !spaces.contains(&space) {
            continue;
        }
        if space == Space::Shared {
            let _ = writeln!(body, "\tbar.sync 0;");
        }
        let name = if space == Space::Shared {
            "shared"
        } else {
            "local"
        };
        for k in 0..MEM / 16 {
            let _ = writeln!(
                body,
                "\tld.{name}.v4.b32 {{%gv0, %gv1, %gv2, %gv3}}, [{reg}+{}];",
                16 * k
            );
            let _ = writeln!(
                body,
                "\tst.global.v4.b32 [%ga6+{off}], {{%gv0, %gv1, %gv2, %gv3}};"
            );
            off += 16;
        }
    }
    let mut params = String::from("\t.param .u64 out");
    if has_buf(inst) {
        params.push_str(",\n\t.param .u64 buf");
    }
    let _ = writeln!(decl, "\t.reg .b32 %g<7>;");
    let _ = writeln!(decl, "\t.reg .b32 %ix<{INDICES}>;");
    let _ = writeln!(decl, "\t.reg .b64 %ga<7>;");
    format!(
        "// {}\n.visible .entry {name}(\n{params}\n)\n.reqntid {BLOCK}, 1, 1\n{{\n{globals}{}{decl}\n{body}\tret;\n}}\n",
        inst.key,
        regs.decls()
    )
}
