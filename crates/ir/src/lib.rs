//! kiln's machine IR: one kernel as basic blocks of SASS-named instructions over virtual
//! registers.
//!
//! * Virtual registers ([`VReg`]) live in an `la-arena` and belong to a class ([`Class`]:
//!   `R`, `UR`, `P`, `UP`); a value of 64 bits is one virtual register of `width` 2, which the
//!   register allocator places on an even-aligned pair.
//! * An instruction ([`Inst`]) is a typed SASS opcode ([`Opcode`]: a mnemonic and its
//!   modifiers, `op!("ISETP.GE.U32.AND")`, names the committed tables spell), an optional
//!   guard predicate and typed operands in nvdisasm's order; `defs` says which
//!   operand positions it writes. After register allocation the same instruction prints as the
//!   nvdisasm text that `sass::encode::assemble_line` encodes.
//! * Blocks ([`Block`]) are in an arena and in layout order (`Func::order`); control leaves a
//!   block by its last instruction (`BRA`, `EXIT`) or falls through to the next in order.
//!
//! v1 is not in SSA form: PTX registers are assigned more than once, so each PTX register is
//! one virtual register. [`verify`] checks the structural rules every pass relies on.

#![forbid(unsafe_code)]

pub mod abi;
pub mod cfg;
pub mod kind;
pub mod liveness;

use std::fmt::{self, Write as _};

use la_arena::{Arena, Idx};
pub use sass::opcode::{Mnemonic, Modifier, Opcode};
pub use sass::{modifier, op};

/// A register class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// 32-bit per-thread registers R0..R254 (R255 is RZ).
    R,
    /// 32-bit uniform registers UR0..UR62 (UR63 is URZ).
    UR,
    /// Per-thread predicates P0..P6 (P7 is PT).
    P,
    /// Uniform predicates UP0..UP6.
    UP,
}

impl Class {
    fn prefix(self) -> &'static str {
        match self {
            Class::R => "R",
            Class::UR => "UR",
            Class::P => "P",
            Class::UP => "UP",
        }
    }
}

/// A virtual register: a class and a width in 32-bit registers (1, 2 or 4; predicates 1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VRegData {
    pub class: Class,
    pub width: u8,
    /// The PTX name it stands for, for the printer (empty for temporaries).
    pub name: String,
}

pub type VReg = Idx<VRegData>;

/// A register reference inside an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reg {
    /// `width` registers starting at component `part` of a virtual register.
    Virt { vreg: VReg, part: u8, width: u8 },
    /// A physical register (after allocation, or fixed by the ABI such as R1).
    Phys { class: Class, index: u8, width: u8 },
    /// RZ / URZ / PT / UPT by class.
    Zero(Class),
}

impl Reg {
    /// The whole virtual register `v` of width `w`.
    pub fn v(vreg: VReg, width: u8) -> Reg {
        Reg::Virt {
            vreg,
            part: 0,
            width,
        }
    }
    /// The 32-bit component `part` of `v`.
    pub fn part(vreg: VReg, part: u8) -> Reg {
        Reg::Virt {
            vreg,
            part,
            width: 1,
        }
    }
    pub fn width(self) -> u8 {
        match self {
            Reg::Virt { width, .. } | Reg::Phys { width, .. } => width,
            Reg::Zero(_) => 1,
        }
    }
}

/// Which 16-bit half of a register a packed-half operand reads, replicated into both lanes
/// (`R0.H0_H0`, `R0.H1_H1`); `None`: the whole register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Sel {
    #[default]
    None,
    H0H0,
    H1H1,
    /// The register's sign bit as a predicate source (`PLOP3.LUT P0, PT, R0.SIGN, ...`).
    Sign,
    /// `IMMA`'s fragment layouts: A by rows, B by columns (`IMMA.16832.S8.S8 R12, R4.ROW,
    /// R8.COL, R12`).
    Row,
    Col,
}

impl Sel {
    /// The suffix nvdisasm prints after the register.
    pub fn suffix(self) -> &'static str {
        match self {
            Sel::None => "",
            Sel::H0H0 => ".H0_H0",
            Sel::H1H1 => ".H1_H1",
            Sel::Sign => ".SIGN",
            Sel::Row => ".ROW",
            Sel::Col => ".COL",
        }
    }
}

/// An instruction operand, printed exactly as nvdisasm prints it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A register with source modifiers (`-R2`, `!P0`, `|R3|`, `~R4`) and a half selector
    /// (`R2.H0_H0`).
    Reg {
        reg: Reg,
        neg: bool,
        not: bool,
        abs: bool,
        sel: Sel,
    },
    /// An integer immediate, printed in hex (`0x4`, `-0x3`).
    Imm(i64),
    /// `c[bank][offset]`.
    Const { bank: u8, offset: u32 },
    /// `c[bank][index+offset]` with a register index (`c[0x0][RZ]` for LDC at offset 0).
    ConstIndexed { bank: u8, index: Reg, offset: u32 },
    /// A memory address `[base.64+offset]`, `desc[UR][base.64]`, `[base+offset]`.
    Mem {
        base: Reg,
        offset: i32,
        desc: Option<Reg>,
    },
    /// A memory address with a uniform-register term, `[base+ur+offset]` (`SYNCS.ARRIVE.TRANS64
    /// R2, [R0+URZ], RZ`: the forms whose address has both a register and a uniform slot).
    MemUr { base: Reg, ur: Reg, offset: i32 },
    /// A branch target.
    Label(Block),
    /// A convergence barrier register `B0`..`B15` (`BSSY`, `BSYNC`): per-thread state that
    /// no register class of the allocator holds; the reconvergence pass assigns them.
    Barrier(u8),
    /// A special register name such as `SR_TID.X`.
    Special(&'static str),
    /// A trailing LUT/flag field printed in hex without sign handling (`0xc0`).
    Hex(u32),
    /// A 32-bit float immediate (its bits), printed as nvdisasm prints it (`1`, `+INF `,
    /// `1.84467440737095516160e+19`).
    F32(u32),
    /// A 64-bit float immediate (its bits) of a `D*` instruction, printed as nvdisasm prints
    /// it (`0.5`, `8.98846567431157953865e+307`); SASS holds its high 32 bits, so the low 32
    /// bits must be zero for the instruction to encode.
    F64(u64),
}

impl Operand {
    pub fn r(reg: Reg) -> Operand {
        Operand::Reg {
            reg,
            neg: false,
            not: false,
            abs: false,
            sel: Sel::None,
        }
    }
    pub fn neg(reg: Reg) -> Operand {
        Operand::Reg {
            reg,
            neg: true,
            not: false,
            abs: false,
            sel: Sel::None,
        }
    }
    pub fn not(reg: Reg) -> Operand {
        Operand::Reg {
            reg,
            neg: false,
            not: true,
            abs: false,
            sel: Sel::None,
        }
    }
    pub fn rz() -> Operand {
        Operand::r(Reg::Zero(Class::R))
    }
    pub fn pt() -> Operand {
        Operand::r(Reg::Zero(Class::P))
    }
    /// Registers this operand reads or writes (memory bases and descriptors included).
    pub fn regs(&self) -> impl Iterator<Item = Reg> + '_ {
        let (a, b) = match self {
            Operand::Reg { reg, .. } => (Some(*reg), None),
            Operand::Mem { base, desc, .. } => (Some(*base), *desc),
            Operand::MemUr { base, ur, .. } => (Some(*base), Some(*ur)),
            Operand::ConstIndexed { index, .. } => (Some(*index), None),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }
    /// The registers of [`Operand::regs`], mutably.
    pub fn regs_mut(&mut self) -> impl Iterator<Item = &mut Reg> {
        let (a, b) = match self {
            Operand::Reg { reg, .. } => (Some(reg), None),
            Operand::Mem { base, desc, .. } => (Some(base), desc.as_mut()),
            Operand::MemUr { base, ur, .. } => (Some(base), Some(ur)),
            Operand::ConstIndexed { index, .. } => (Some(index), None),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }
}

/// A guard predicate `@P0` / `@!P0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub pred: Reg,
    pub negated: bool,
}

/// One machine instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// Mnemonic with modifiers, e.g. `op!("IADD3.X")`, `op!("LDG.E.64")`.
    pub op: Opcode,
    pub guard: Option<Guard>,
    pub operands: Vec<Operand>,
    /// Indices into `operands` that the instruction writes (register operands only).
    pub defs: Vec<usize>,
    /// Registers read without appearing in the text (sm_80 `LDG.E` reads its memory
    /// descriptor from UR4 without printing it).
    pub implicit_uses: Vec<Reg>,
    /// The source construct it came from: a byte range `(start, end)` in the input the
    /// lowering was given, for diagnostics of later passes.
    pub origin: Option<(u32, u32)>,
}

impl Inst {
    pub fn new(op: Opcode, operands: Vec<Operand>, defs: Vec<usize>) -> Inst {
        Inst {
            op,
            guard: None,
            operands,
            defs,
            implicit_uses: Vec::new(),
            origin: None,
        }
    }
    /// The mnemonic without modifiers (`IADD3` for `IADD3.X`).
    pub fn mnemonic(&self) -> Mnemonic {
        self.op.mnemonic()
    }
    /// Registers written.
    pub fn def_regs(&self) -> impl Iterator<Item = Reg> + '_ {
        self.defs.iter().flat_map(|&i| self.operands[i].regs())
    }
    /// Registers read: every register of a non-def operand, the guard, and memory bases.
    pub fn use_regs(&self) -> impl Iterator<Item = Reg> + '_ {
        self.operands
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.defs.contains(i))
            .flat_map(|(_, o)| o.regs())
            .chain(self.guard.map(|g| g.pred))
            .chain(self.implicit_uses.iter().copied())
    }
    /// Whether this instruction ends a block (a branch or an exit).
    pub fn is_terminator(&self) -> bool {
        matches!(
            self.mnemonic(),
            Mnemonic::BRA | Mnemonic::EXIT | Mnemonic::RET
        )
    }
}

/// A basic block.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BlockData {
    pub insts: Vec<Inst>,
}

pub type Block = Idx<BlockData>;

/// One kernel in machine IR.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Func {
    pub name: String,
    pub vregs: Arena<VRegData>,
    pub blocks: Arena<BlockData>,
    /// Layout order; `order[0]` is the entry.
    pub order: Vec<Block>,
    /// A 64-bit address register prints bare (`[R2]`, sm_75) instead of `[R2.64]`.
    pub bare_wide_addresses: bool,
}

impl Func {
    pub fn new(name: impl Into<String>) -> Func {
        Func {
            name: name.into(),
            ..Func::default()
        }
    }
    pub fn new_vreg(&mut self, class: Class, width: u8, name: impl Into<String>) -> VReg {
        self.vregs.alloc(VRegData {
            class,
            width,
            name: name.into(),
        })
    }
    pub fn new_block(&mut self) -> Block {
        self.blocks.alloc(BlockData::default())
    }
    /// Successors of a block in layout order: a branch target and/or the next block.
    pub fn successors(&self, pos: usize) -> Vec<usize> {
        let b = self.order[pos];
        let next = (pos + 1 < self.order.len()).then_some(pos + 1);
        let index_of = |t: Block| self.order.iter().position(|x| *x == t);
        match self.blocks[b].insts.last() {
            Some(i) if i.mnemonic() == Mnemonic::BRA => {
                let target = i.operands.iter().find_map(|o| match o {
                    Operand::Label(t) => index_of(*t),
                    _ => None,
                });
                let mut s: Vec<usize> = target.into_iter().collect();
                if i.guard.is_some() {
                    s.extend(next);
                }
                s
            }
            Some(i) if matches!(i.mnemonic(), Mnemonic::EXIT | Mnemonic::RET) => {
                if i.guard.is_some() {
                    next.into_iter().collect()
                } else {
                    Vec::new()
                }
            }
            _ => next.into_iter().collect(),
        }
    }
    /// Instructions in layout order.
    pub fn insts(&self) -> impl Iterator<Item = &Inst> {
        self.order.iter().flat_map(|b| self.blocks[*b].insts.iter())
    }
}

/// Structural errors found by [`verify`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError(pub String);

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks the rules passes rely on: every block is laid out once, terminators only end
/// blocks, labels name laid-out blocks, register parts lie inside their virtual register,
/// def positions are register operands, classes match (guards are predicates).
pub fn verify(f: &Func) -> Result<(), VerifyError> {
    let err = |m: String| Err(VerifyError(format!("{}: {m}", f.name)));
    let mut seen = std::collections::HashSet::new();
    for b in &f.order {
        if !seen.insert(*b) {
            return err(format!("block {} laid out twice", b.into_raw()));
        }
    }
    for (pos, b) in f.order.iter().enumerate() {
        let insts = &f.blocks[*b].insts;
        for (k, i) in insts.iter().enumerate() {
            if i.is_terminator() && k + 1 != insts.len() {
                return err(format!("`{}` in the middle of block {pos}", i.op));
            }
            for &d in &i.defs {
                match i.operands.get(d) {
                    Some(Operand::Reg { .. }) => {}
                    _ => return err(format!("`{}`: def {d} is not a register operand", i.op)),
                }
            }
            if let Some(g) = i.guard
                && !matches!(class_of(f, g.pred), Class::P | Class::UP)
            {
                return err(format!("`{}`: guard is not a predicate", i.op));
            }
            for o in &i.operands {
                if let Operand::Label(t) = o
                    && !seen.contains(t)
                {
                    return err(format!("`{}`: branch to a block not laid out", i.op));
                }
                for r in o.regs() {
                    if let Reg::Virt { vreg, part, width } = r {
                        let d = &f.vregs[vreg];
                        if part + width > d.width {
                            return err(format!(
                                "`{}`: component {part}+{width} of a {}-wide register",
                                i.op, d.width
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The class of a register reference.
pub fn class_of(f: &Func, r: Reg) -> Class {
    match r {
        Reg::Virt { vreg, .. } => f.vregs[vreg].class,
        Reg::Phys { class, .. } | Reg::Zero(class) => class,
    }
}

/// Prints a register: `R4` (physical), `%r3` / `v12` (virtual, before allocation), `RZ`.
fn reg_text(f: &Func, r: Reg, assignment: Option<&dyn Fn(VReg) -> u8>) -> String {
    match r {
        Reg::Zero(c) => match c {
            Class::R => "RZ".into(),
            Class::UR => "URZ".into(),
            Class::P => "PT".into(),
            Class::UP => "UPT".into(),
        },
        Reg::Phys { class, index, .. } => format!("{}{index}", class.prefix()),
        Reg::Virt { vreg, part, .. } => match assignment {
            Some(a) => format!("{}{}", f.vregs[vreg].class.prefix(), a(vreg) + part),
            None => {
                let d = &f.vregs[vreg];
                let base = if d.name.is_empty() {
                    format!("v{}", vreg.into_raw())
                } else {
                    d.name.clone()
                };
                if d.width > 1 {
                    format!("{base}.{part}")
                } else {
                    base
                }
            }
        },
    }
}

/// Prints one instruction in nvdisasm syntax (without `;`). `assignment` maps virtual
/// registers to physical indices after allocation; `label` gives a block's address.
pub fn inst_text(
    f: &Func,
    i: &Inst,
    assignment: Option<&dyn Fn(VReg) -> u8>,
    label: &dyn Fn(Block) -> String,
) -> String {
    let mut s = String::new();
    if let Some(g) = i.guard {
        let _ = write!(
            s,
            "@{}{} ",
            if g.negated { "!" } else { "" },
            reg_text(f, g.pred, assignment)
        );
    }
    let _ = write!(s, "{}", i.op);
    for (k, o) in i.operands.iter().enumerate() {
        s.push_str(if k == 0 { " " } else { ", " });
        match o {
            Operand::Reg {
                reg,
                neg,
                not,
                abs,
                sel,
            } => {
                if *neg {
                    s.push('-');
                }
                if *not {
                    s.push(if class_of(f, *reg) == Class::R {
                        '~'
                    } else {
                        '!'
                    });
                }
                let t = reg_text(f, *reg, assignment) + sel.suffix();
                if *abs {
                    let _ = write!(s, "|{t}|");
                } else {
                    s.push_str(&t);
                }
            }
            Operand::Imm(v) => {
                if *v < 0 {
                    let _ = write!(s, "-0x{:x}", v.unsigned_abs());
                } else {
                    let _ = write!(s, "0x{v:x}");
                }
            }
            Operand::Hex(v) => {
                let _ = write!(s, "0x{v:x}");
            }
            Operand::F32(bits) => {
                s.push_str(&sass::text::format_float(
                    f64::from(f32::from_bits(*bits)),
                    true,
                ));
            }
            Operand::F64(bits) => {
                s.push_str(&sass::text::format_float(f64::from_bits(*bits), true));
            }
            Operand::Const { bank, offset } => {
                let _ = write!(s, "c[0x{bank:x}][0x{offset:x}]");
            }
            Operand::ConstIndexed {
                bank,
                index,
                offset,
            } => {
                let _ = write!(s, "c[0x{bank:x}][{}", reg_text(f, *index, assignment));
                if *offset != 0 {
                    let _ = write!(s, "+0x{offset:x}");
                }
                s.push(']');
            }
            Operand::Mem { base, offset, desc } => {
                if let Some(d) = desc {
                    let _ = write!(s, "desc[{}]", reg_text(f, *d, assignment));
                }
                s.push('[');
                s.push_str(&reg_text(f, *base, assignment));
                if base.width() == 2 && !f.bare_wide_addresses {
                    s.push_str(".64");
                }
                if *offset > 0 {
                    let _ = write!(s, "+0x{offset:x}");
                } else if *offset < 0 {
                    // nvdisasm's spelling of a negative offset.
                    let _ = write!(s, "+-0x{:x}", offset.unsigned_abs());
                }
                s.push(']');
            }
            Operand::MemUr { base, ur, offset } => {
                s.push('[');
                s.push_str(&reg_text(f, *base, assignment));
                s.push('+');
                s.push_str(&reg_text(f, *ur, assignment));
                if *offset > 0 {
                    let _ = write!(s, "+0x{offset:x}");
                } else if *offset < 0 {
                    let _ = write!(s, "+-0x{:x}", offset.unsigned_abs());
                }
                s.push(']');
            }
            Operand::Label(b) => s.push_str(&label(*b)),
            Operand::Barrier(n) => {
                let _ = write!(s, "B{n}");
            }
            Operand::Special(n) => s.push_str(n),
        }
    }
    s
}

/// A readable listing of a function before or after allocation.
pub fn print(f: &Func, assignment: Option<&dyn Fn(VReg) -> u8>) -> String {
    let mut out = format!("func {}\n", f.name);
    let label = |b: Block| {
        format!(
            "bb{}",
            f.order.iter().position(|x| *x == b).unwrap_or(usize::MAX)
        )
    };
    for (pos, b) in f.order.iter().enumerate() {
        let _ = writeln!(out, "bb{pos}:");
        for i in &f.blocks[*b].insts {
            let _ = writeln!(out, "    {}", inst_text(f, i, assignment, &label));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifier_rejects_mid_block_exit_and_bad_parts() {
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let v = f.new_vreg(Class::R, 1, "%r1");
        f.blocks[b]
            .insts
            .push(Inst::new(op!("EXIT"), vec![], vec![]));
        f.blocks[b].insts.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(Reg::part(v, 1)), Operand::rz()],
            vec![0],
        ));
        let e = verify(&f).unwrap_err();
        assert!(e.0.contains("middle of block"), "{e}");
        f.blocks[b].insts.remove(0);
        let e = verify(&f).unwrap_err();
        assert!(e.0.contains("component 1+1"), "{e}");
    }

    #[test]
    fn prints_nvdisasm_syntax() {
        let mut f = Func::new("k");
        let b = f.new_block();
        f.order.push(b);
        let a = f.new_vreg(Class::R, 2, "%rd1");
        let d = f.new_vreg(Class::R, 1, "%f1");
        let i = Inst::new(
            op!("LDG.E"),
            vec![
                Operand::r(Reg::v(d, 1)),
                Operand::Mem {
                    base: Reg::v(a, 2),
                    offset: 16,
                    desc: Some(Reg::Phys {
                        class: Class::UR,
                        index: 4,
                        width: 2,
                    }),
                },
            ],
            vec![0],
        );
        let assign = |v: VReg| if v == a { 4 } else { 7 };
        let t = inst_text(&f, &i, Some(&assign), &|_| String::new());
        assert_eq!(t, "LDG.E R7, desc[UR4][R4.64+0x10]");
        let t = inst_text(&f, &i, None, &|_| String::new());
        assert_eq!(t, "LDG.E %f1, desc[UR4][%rd1.0.64+0x10]");
    }
}
