//! A structured view of one instruction: opcode, modifiers and typed operands.
//!
//! The tables describe an encoding as a text template (`IMAD.WIDE.U32 %, %, %, %`); this module
//! gives the consumers that need meaning rather than text (the emulator, the hazard checker,
//! the code generator) a parsed form of the same text. [`Inst::parse`] reads nvdisasm's syntax
//! (`@!P0 IMAD.WIDE R2, -R3.reuse, c[0x0][0x160], RZ`, `LDG.E.64 R2, desc[UR4][R2.64+0x10]`,
//! ...) and `Display` prints it back exactly, so `parse(t).to_string() == t` for every line
//! nvdisasm prints (tested on a committed sample of oracle output).
//!
//! [`Inst::from_decoded`] builds the view from a decoded word: branch targets become
//! [`OperandKind::Target`] addresses and float immediates keep their raw encoded bits.

use std::fmt;

use crate::decode::{Guard, Instruction, Value};
use crate::table::FloatFormat;

/// A register file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegFile {
    /// General registers `R0..R254`, `RZ` = 255.
    R,
    /// Uniform registers `UR0..UR62`, `URZ` = 63.
    Ur,
    /// Predicates `P0..P6`, `PT` = 7.
    P,
    /// Uniform predicates `UP0..UP6`, `UPT` = 7.
    Up,
    /// Convergence barrier registers `B0..B15`.
    B,
    /// Scoreboards `SB0..SB5` (as named by `DEPBAR`).
    Sb,
}

impl RegFile {
    /// The index that reads as zero / true (`RZ`, `URZ`, `PT`, `UPT`), if the file has one.
    pub fn zero_index(self) -> Option<u8> {
        match self {
            RegFile::R => Some(255),
            RegFile::Ur => Some(63),
            RegFile::P | RegFile::Up => Some(7),
            RegFile::B | RegFile::Sb => None,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            RegFile::R => "R",
            RegFile::Ur => "UR",
            RegFile::P => "P",
            RegFile::Up => "UP",
            RegFile::B => "B",
            RegFile::Sb => "SB",
        }
    }

    fn zero_name(self) -> Option<&'static str> {
        match self {
            RegFile::R => Some("RZ"),
            RegFile::Ur => Some("URZ"),
            RegFile::P => Some("PT"),
            RegFile::Up => Some("UPT"),
            RegFile::B | RegFile::Sb => None,
        }
    }
}

/// One register of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg {
    pub file: RegFile,
    pub index: u8,
}

impl Reg {
    pub const RZ: Reg = Reg {
        file: RegFile::R,
        index: 255,
    };
    pub const URZ: Reg = Reg {
        file: RegFile::Ur,
        index: 63,
    };
    pub const PT: Reg = Reg {
        file: RegFile::P,
        index: 7,
    };
    pub const UPT: Reg = Reg {
        file: RegFile::Up,
        index: 7,
    };

    /// `RZ`, `URZ`, `PT` or `UPT`: reads as zero (or true), writes are discarded.
    pub fn is_zero(self) -> bool {
        self.file.zero_index() == Some(self.index)
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.file.zero_name() {
            Some(z) if self.is_zero() => f.write_str(z),
            _ => write!(f, "{}{}", self.file.prefix(), self.index),
        }
    }
}

/// One `+`-separated term of an address (`R2.64`, `UR4`, `0x10`, `-0x8`).
#[derive(Debug, Clone, PartialEq)]
pub enum AddrTerm {
    /// A register with its suffixes (`64` for a 64-bit base, `X4` for a scaled index, `U32`).
    Reg { reg: Reg, suffixes: Vec<String> },
    /// An immediate offset.
    Int(i64),
}

/// The inside of `[...]`: terms joined by `+`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Address {
    pub terms: Vec<AddrTerm>,
}

impl Address {
    fn regs(&self) -> impl Iterator<Item = (Reg, &[String])> {
        self.terms.iter().filter_map(|t| match t {
            AddrTerm::Reg { reg, suffixes } => Some((*reg, suffixes.as_slice())),
            AddrTerm::Int(_) => None,
        })
    }

    /// The non-uniform base register (`R2` in `[R2.64+UR4+0x10]`) and its suffixes.
    pub fn base(&self) -> Option<(Reg, &[String])> {
        self.regs().find(|(r, _)| r.file == RegFile::R)
    }

    /// The uniform register term (`UR4` in `[R2.64+UR4+0x10]`, or `[UR4]`).
    pub fn uniform(&self) -> Option<(Reg, &[String])> {
        self.regs().find(|(r, _)| r.file == RegFile::Ur)
    }

    /// The sum of the immediate terms (0 when there is none).
    pub fn offset(&self) -> i64 {
        self.terms
            .iter()
            .map(|t| match t {
                AddrTerm::Int(v) => *v,
                AddrTerm::Reg { .. } => 0,
            })
            .sum()
    }

    /// Whether the non-uniform base is a 64-bit register pair (`.64`).
    pub fn base_is_64(&self) -> bool {
        self.base()
            .is_some_and(|(_, s)| s.iter().any(|x| x == "64"))
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            match t {
                AddrTerm::Reg { reg, suffixes } => {
                    write!(f, "{reg}")?;
                    for s in suffixes {
                        write!(f, ".{s}")?;
                    }
                }
                AddrTerm::Int(v) => write_hex(f, *v)?,
            }
        }
        Ok(())
    }
}

/// The bank of a constant operand: `c[0x3]` or `cx[UR4]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConstBank {
    Imm(u32),
    Reg(Reg),
}

/// What an operand is.
#[derive(Debug, Clone, PartialEq)]
pub enum OperandKind {
    /// A register (`R3`, `UR4`, `P0`, `UP1`, `B0`, `SB2`, `RZ`, `PT`, ...).
    Reg(Reg),
    /// A special register or register-file name: `SR_TID.X`, `SRZ`, `PR`, `UPR`, ...
    Special(String),
    /// An integer immediate (printed in hex; negative values as `-0x..`).
    Int(i64),
    /// A float immediate. `bits` is the raw encoded value when the operand comes from a
    /// decoded word ([`Inst::from_decoded`]); `text` is how nvdisasm prints it.
    Float {
        value: f64,
        bits: Option<(FloatFormat, u64)>,
        text: String,
    },
    /// A constant-bank operand `c[bank][addr]` (`cx[UR4][R2+0x10]` when `indirect`).
    Const {
        bank: ConstBank,
        addr: Address,
        indirect: bool,
    },
    /// A memory operand `[addr]`, with a descriptor register for `desc[UR4][...]`.
    Mem { desc: Option<Reg>, addr: Address },
    /// A wgmma matrix descriptor held in a uniform register pair, `gdesc[UR20]`.
    GmmaDesc(Reg),
    /// A branch or call target address (from decoded words).
    Target(u64),
    /// A symbolic target as nvdisasm prints it: `` `(.L_x_3) `` holds `.L_x_3`.
    Label(String),
    /// A set of small integers, `{5,4,3,2,1,0}` (the scoreboards a `DEPBAR` waits for).
    List(Vec<u32>),
    /// Anything else, kept verbatim (e.g. nvdisasm's relocation expressions `0x0@lo(sym)`).
    Other(String),
}

/// An operand with its unary modifiers and suffixes.
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    pub kind: OperandKind,
    /// `-x`
    pub neg: bool,
    /// `|x|`
    pub abs: bool,
    /// `!P0` (logical not of a predicate)
    pub not: bool,
    /// `~R0` (bitwise not)
    pub invert: bool,
    /// Suffixes in printed order, without dots: `H1`, `H0_H0`, `B2`, `reuse`, `64`, ...
    pub suffixes: Vec<String>,
    /// How many of `suffixes` are printed inside the `|..|` of an absolute value
    /// (`|R2.H1|.reuse` has one).
    pub suffixes_in_abs: usize,
    /// A constant printed with a space between bank and address (`c[0x2] [0x18].F32`, the
    /// f32 constant source of sm_75's `HADD2.F32`).
    pub spaced_const: bool,
}

impl Operand {
    /// A plain operand of `kind` without modifiers.
    pub fn new(kind: OperandKind) -> Operand {
        Operand {
            kind,
            neg: false,
            abs: false,
            not: false,
            invert: false,
            suffixes: Vec::new(),
            suffixes_in_abs: 0,
            spaced_const: false,
        }
    }

    /// The register, if the operand is one.
    pub fn reg(&self) -> Option<Reg> {
        match self.kind {
            OperandKind::Reg(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the operand carries suffix `s` (without the dot).
    pub fn has_suffix(&self, s: &str) -> bool {
        self.suffixes.iter().any(|x| x == s)
    }

    /// Whether the operand is marked `.reuse`.
    pub fn reuse(&self) -> bool {
        self.has_suffix("reuse")
    }
}

/// One instruction: guard, opcode, modifiers and operands.
#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    pub guard: Option<Guard>,
    /// The mnemonic without modifiers: `IMAD`.
    pub opcode: String,
    /// The dot-separated modifiers in printed order: `["WIDE", "U32"]`.
    pub mods: Vec<String>,
    pub operands: Vec<Operand>,
    /// Operand indices printed after a space rather than a comma (`RET.REL.NODEC R4 `(f)`).
    pub space_separated: Vec<usize>,
}

impl Inst {
    /// Whether modifier `m` is present.
    pub fn has_mod(&self, m: &str) -> bool {
        self.mods.iter().any(|x| x == m)
    }

    /// Parses nvdisasm's text of one instruction (no address, optional trailing ` ;`).
    pub fn parse(text: &str) -> Result<Inst, String> {
        let mut t = text.trim();
        t = t.strip_suffix(';').unwrap_or(t).trim_end();
        // nvdisasm's trailing annotation (`(*"BRANCH_TARGETS .L_x_1,.L_x_2"*)`) is not part of
        // the instruction.
        if let Some(i) = t.find("(*") {
            t = t[..i].trim_end();
        }
        let mut guard = None;
        if let Some(rest) = t.strip_prefix('@') {
            let end = rest
                .find(' ')
                .ok_or_else(|| format!("guard without opcode: `{text}`"))?;
            let g = &rest[..end];
            let (negated, g) = match g.strip_prefix('!') {
                Some(g) => (true, g),
                None => (false, g),
            };
            let reg = parse_reg(g)
                .filter(|r| matches!(r.file, RegFile::P | RegFile::Up))
                .ok_or_else(|| format!("bad guard `@{g}` in `{text}`"))?;
            guard = Some(Guard {
                uniform: reg.file == RegFile::Up,
                pred: reg.index,
                negated,
            });
            t = rest[end..].trim_start();
        }
        let (mnemonic, rest) = match t.find(' ') {
            Some(i) => (&t[..i], t[i + 1..].trim()),
            None => (t, ""),
        };
        if mnemonic.is_empty() {
            return Err(format!("no opcode in `{text}`"));
        }
        let mut parts = mnemonic.split('.');
        let opcode = parts.next().unwrap_or_default().to_string();
        let mods = parts.map(str::to_string).collect();
        let mut operands = Vec::new();
        let mut space_separated = Vec::new();
        for (piece, after_space) in split_operands(rest) {
            if after_space {
                space_separated.push(operands.len());
            }
            operands.push(parse_operand(piece)?);
        }
        Ok(Inst {
            guard,
            opcode,
            mods,
            operands,
            space_separated,
        })
    }

    /// The structured view of a decoded instruction: targets as addresses, float immediates
    /// with their raw bits.
    pub fn from_decoded(i: &Instruction<'_>) -> Result<Inst, String> {
        let text = i.text(&|t| Some(format!("`(@{t:#x})")));
        let mut inst = Inst::parse(&text)?;
        let mut raws = i.values.iter().filter_map(|v| match v {
            Value::Float(f, raw) => Some(Some((*f, *raw))),
            Value::Fixed(_) => Some(None),
            _ => None,
        });
        for op in &mut inst.operands {
            if let OperandKind::Float { bits, .. } = &mut op.kind {
                *bits = raws.next().flatten();
            }
        }
        Ok(inst)
    }
}

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(g) = self.guard {
            let file = if g.uniform { RegFile::Up } else { RegFile::P };
            let reg = Reg {
                file,
                index: g.pred,
            };
            write!(f, "@{}{reg} ", if g.negated { "!" } else { "" })?;
        }
        f.write_str(&self.opcode)?;
        for m in &self.mods {
            write!(f, ".{m}")?;
        }
        for (i, op) in self.operands.iter().enumerate() {
            let sep = if i == 0 || self.space_separated.contains(&i) {
                " "
            } else {
                ", "
            };
            write!(f, "{sep}{op}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.neg {
            f.write_str("-")?;
        }
        if self.not {
            f.write_str("!")?;
        }
        if self.invert {
            f.write_str("~")?;
        }
        if self.abs {
            f.write_str("|")?;
        }
        match &self.kind {
            OperandKind::Reg(r) => write!(f, "{r}")?,
            OperandKind::Special(s) | OperandKind::Other(s) => f.write_str(s)?,
            OperandKind::Int(v) => write_hex(f, *v)?,
            OperandKind::Float { text, .. } => f.write_str(text)?,
            OperandKind::Const {
                bank,
                addr,
                indirect,
            } => {
                f.write_str(if *indirect { "cx[" } else { "c[" })?;
                match bank {
                    ConstBank::Imm(b) => write!(f, "{b:#x}")?,
                    ConstBank::Reg(r) => write!(f, "{r}")?,
                }
                let gap = if self.spaced_const { "] [" } else { "][" };
                write!(f, "{gap}{addr}]")?;
            }
            OperandKind::Mem { desc, addr } => {
                if let Some(d) = desc {
                    write!(f, "desc[{d}]")?;
                }
                write!(f, "[{addr}]")?;
            }
            OperandKind::GmmaDesc(r) => write!(f, "gdesc[{r}]")?,
            OperandKind::Target(a) => write!(f, "`(@{a:#x})")?,
            OperandKind::Label(l) => write!(f, "`({l})")?,
            OperandKind::List(items) => {
                f.write_str("{")?;
                for (i, x) in items.iter().enumerate() {
                    write!(f, "{}{x}", if i > 0 { "," } else { "" })?;
                }
                f.write_str("}")?;
            }
        }
        let inside = if self.abs { self.suffixes_in_abs } else { 0 };
        for s in &self.suffixes[..inside] {
            write!(f, ".{s}")?;
        }
        if self.abs {
            f.write_str("|")?;
        }
        for s in &self.suffixes[inside..] {
            write!(f, ".{s}")?;
        }
        Ok(())
    }
}

fn write_hex(f: &mut fmt::Formatter<'_>, v: i64) -> fmt::Result {
    if v < 0 {
        write!(f, "-{:#x}", v.unsigned_abs())
    } else {
        write!(f, "{v:#x}")
    }
}

/// Splits the operand list at top-level `, ` (and at a space before a `` `( `` target);
/// yields each piece with whether it followed a bare space.
fn split_operands(s: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    if s.is_empty() {
        return out;
    }
    let b = s.as_bytes();
    let (mut depth, mut start, mut after_space) = (0i32, 0usize, false);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'[' | b'(' | b'{' => depth += 1,
            b']' | b')' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.push((s[start..i].trim(), after_space));
                after_space = false;
                i += 1;
                while i < b.len() && b[i] == b' ' {
                    i += 1;
                }
                start = i;
                continue;
            }
            b' ' if depth == 0
                && i > start
                && !matches!(s[i..].trim_start().bytes().next(), None | Some(b','))
                && !spaced_const_gap(&s[start..i], &s[i + 1..]) =>
            {
                out.push((s[start..i].trim(), after_space));
                after_space = true;
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push((s[start..].trim(), after_space));
    out
}

/// Whether a space between `before` and `after` is the one inside a constant operand
/// (`c[0x2] [0x18]`): `before` is a bank alone and `after` starts its address.
fn spaced_const_gap(before: &str, after: &str) -> bool {
    let core = before.trim_start_matches(['-', '!', '~', '|']);
    let bank = core.strip_prefix("c[").or_else(|| core.strip_prefix("cx["));
    bank.is_some_and(|b| b.ends_with(']') && !b[..b.len() - 1].contains(['[', ']']))
        && after.starts_with('[')
}

/// `R12`, `RZ`, `UR4`, `URZ`, `P0`, `PT`, `UP1`, `UPT`, `B3`, `SB0` (the whole string).
fn parse_reg(s: &str) -> Option<Reg> {
    let named = match s {
        "RZ" => Some(Reg::RZ),
        "URZ" => Some(Reg::URZ),
        "PT" => Some(Reg::PT),
        "UPT" => Some(Reg::UPT),
        _ => None,
    };
    if named.is_some() {
        return named;
    }
    let digits = s.find(|c: char| c.is_ascii_digit())?;
    let file = match &s[..digits] {
        "R" => RegFile::R,
        "UR" => RegFile::Ur,
        "P" => RegFile::P,
        "UP" => RegFile::Up,
        "B" => RegFile::B,
        "SB" => RegFile::Sb,
        _ => return None,
    };
    let num = &s[digits..];
    if num.len() > 1 && num.starts_with('0') {
        return None;
    }
    let index: u8 = num.parse().ok()?;
    (Some(index) != file.zero_index() || file == RegFile::B || file == RegFile::Sb)
        .then_some(Reg { file, index })
}

fn parse_hex(s: &str) -> Option<i64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let h = s.strip_prefix("0x")?;
    if h.is_empty() || !h.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let v = u64::from_str_radix(h, 16).ok()?;
    let v = v as i64;
    Some(if neg { v.wrapping_neg() } else { v })
}

fn parse_float(s: &str) -> Option<f64> {
    let body = s.trim_start_matches(['+', '-']);
    let sign = if s.starts_with('-') { -1.0 } else { 1.0 };
    match body {
        "INF" => return Some(sign * f64::INFINITY),
        "QNAN" | "SNAN" | "NAN" => return Some(f64::NAN),
        _ => {}
    }
    let first = body.bytes().next()?;
    if !first.is_ascii_digit() || s.starts_with('+') {
        return None;
    }
    s.parse().ok()
}

fn parse_address(s: &str) -> Result<Address, String> {
    let mut terms = Vec::new();
    if s.is_empty() {
        return Ok(Address { terms });
    }
    for term in s.split('+') {
        if let Some(v) = parse_hex(term) {
            terms.push(AddrTerm::Int(v));
            continue;
        }
        let mut parts = term.split('.');
        let name = parts.next().unwrap_or_default();
        let reg = parse_reg(name).ok_or_else(|| format!("bad address term `{term}` in `[{s}]`"))?;
        terms.push(AddrTerm::Reg {
            reg,
            suffixes: parts.map(str::to_string).collect(),
        });
    }
    Ok(Address { terms })
}

/// The contents of the bracket group starting at `s[0] == '['` and the rest after it.
fn bracket(s: &str) -> Option<(&str, &str)> {
    let end = s.find(']')?;
    Some((&s[1..end], &s[end + 1..]))
}

fn parse_operand(text: &str) -> Result<Operand, String> {
    let mut op = Operand::new(OperandKind::Other(String::new()));
    let mut s = text;
    // Literal forms that contain characters the prefixes would eat.
    if let Some(v) = parse_hex(s) {
        op.kind = OperandKind::Int(v);
        return Ok(op);
    }
    if s.contains('@') && !s.starts_with("`(@") {
        op.kind = OperandKind::Other(s.to_string());
        return Ok(op);
    }
    if let Some(value) = parse_float(s) {
        // nvdisasm prints `+INF `, `-QNAN `, `-0.0 ` with a trailing space.
        let spaced = s.ends_with("INF") || s.ends_with("NAN") || s == "-0.0";
        op.kind = OperandKind::Float {
            value,
            bits: None,
            text: if spaced {
                format!("{s} ")
            } else {
                s.to_string()
            },
        };
        return Ok(op);
    }
    loop {
        if let Some(r) = s.strip_prefix('-') {
            op.neg = true;
            s = r;
        } else if let Some(r) = s.strip_prefix('!') {
            op.not = true;
            s = r;
        } else if let Some(r) = s.strip_prefix('~') {
            op.invert = true;
            s = r;
        } else {
            break;
        }
    }
    let mut rest;
    if let Some(r) = s.strip_prefix('|') {
        let close = r
            .find('|')
            .ok_or_else(|| format!("unclosed `|` in `{text}`"))?;
        op.abs = true;
        let inner = parse_core(&r[..close], text)?;
        if !inner.1.is_empty() {
            // Suffixes inside the bars (`|R2.H1|`) are kept with the core.
            op.suffixes = suffix_list(inner.1, text)?;
        }
        op.kind = inner.0;
        op.suffixes_in_abs = op.suffixes.len();
        rest = &r[close + 1..];
        if !rest.is_empty() {
            let more = suffix_list(rest, text)?;
            op.suffixes.extend(more);
        }
        rest = "";
    } else {
        let (kind, r) = parse_core(s, text)?;
        op.kind = kind;
        rest = r;
    }
    if !rest.is_empty() {
        op.suffixes = suffix_list(rest, text)?;
    }
    op.spaced_const = matches!(op.kind, OperandKind::Const { .. }) && text.contains("] [");
    Ok(op)
}

fn suffix_list(rest: &str, text: &str) -> Result<Vec<String>, String> {
    let r = rest
        .strip_prefix('.')
        .ok_or_else(|| format!("unexpected `{rest}` in operand `{text}`"))?;
    let parts: Vec<String> = r.split('.').map(str::to_string).collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || !p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'))
    {
        return Err(format!("bad suffix in operand `{text}`"));
    }
    Ok(parts)
}

/// The operand core (register, constant, memory, target, special) and what follows it.
fn parse_core<'s>(s: &'s str, text: &str) -> Result<(OperandKind, &'s str), String> {
    let bad = || format!("cannot parse operand `{text}`");
    if s.starts_with("c[") || s.starts_with("cx[") {
        let indirect = s.starts_with("cx[");
        let (b, r) = bracket(&s[usize::from(indirect) + 1..]).ok_or_else(bad)?;
        let bank = match parse_hex(b) {
            Some(v) => ConstBank::Imm(u32::try_from(v).map_err(|_| bad())?),
            None => ConstBank::Reg(parse_reg(b).ok_or_else(bad)?),
        };
        let r = r.strip_prefix(' ').unwrap_or(r);
        if !r.starts_with('[') {
            return Err(bad());
        }
        let (a, r) = bracket(r).ok_or_else(bad)?;
        let addr = parse_address(a)?;
        return Ok((
            OperandKind::Const {
                bank,
                addr,
                indirect,
            },
            r,
        ));
    }
    if let Some(d) = s.strip_prefix("gdesc[") {
        let end = d.find(']').ok_or_else(bad)?;
        let reg = parse_reg(&d[..end]).ok_or_else(bad)?;
        return Ok((OperandKind::GmmaDesc(reg), &d[end + 1..]));
    }
    if let Some(d) = s.strip_prefix("desc[") {
        let end = d.find(']').ok_or_else(bad)?;
        let desc = parse_reg(&d[..end]).ok_or_else(bad)?;
        let r = &d[end + 1..];
        if !r.starts_with('[') {
            return Err(bad());
        }
        let (a, r) = bracket(r).ok_or_else(bad)?;
        return Ok((
            OperandKind::Mem {
                desc: Some(desc),
                addr: parse_address(a)?,
            },
            r,
        ));
    }
    if s.starts_with('[') {
        let (a, r) = bracket(s).ok_or_else(bad)?;
        return Ok((
            OperandKind::Mem {
                desc: None,
                addr: parse_address(a)?,
            },
            r,
        ));
    }
    if let Some(t) = s.strip_prefix("`(") {
        let end = t.rfind(')').ok_or_else(bad)?;
        let inner = &t[..end];
        let kind = match inner.strip_prefix('@').and_then(parse_hex) {
            Some(a) => OperandKind::Target(a as u64),
            None => OperandKind::Label(inner.to_string()),
        };
        return Ok((kind, &t[end + 1..]));
    }
    if let Some(inner) = s.strip_prefix('{') {
        let end = inner.find('}').ok_or_else(bad)?;
        let items = inner[..end]
            .split(',')
            .map(|x| x.trim().parse::<u32>().map_err(|_| bad()))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok((OperandKind::List(items), &inner[end + 1..]));
    }
    if s.starts_with("SR_") {
        // Special registers keep their dotted names (`SR_TID.X`); nothing follows them.
        return Ok((OperandKind::Special(s.to_string()), ""));
    }
    let end = s.find('.').unwrap_or(s.len());
    let (name, r) = s.split_at(end);
    if let Some(reg) = parse_reg(name) {
        return Ok((OperandKind::Reg(reg), r));
    }
    // Named operands: `SRZ`, `PR`, texture shapes (`2D`, `ARRAY_2D`), `gsb0`.
    if name.bytes().any(|c| c.is_ascii_alphabetic())
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    {
        return Ok((OperandKind::Special(name.to_string()), r));
    }
    Err(bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(t: &str) -> Inst {
        let i = Inst::parse(t).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(i.to_string(), t, "{i:#?}");
        i
    }

    #[test]
    fn registers_modifiers_and_guards() {
        let i = roundtrip("@!P0 IMAD.WIDE.U32 R2, -R3.reuse, c[0x0][0x160], RZ");
        assert_eq!(i.opcode, "IMAD");
        assert_eq!(i.mods, ["WIDE", "U32"]);
        let g = i.guard.unwrap();
        assert!(g.negated && g.pred == 0 && !g.uniform);
        assert!(i.operands[1].neg && i.operands[1].reuse());
        assert_eq!(i.operands[3].reg(), Some(Reg::RZ));
        match &i.operands[2].kind {
            OperandKind::Const { bank, addr, .. } => {
                assert_eq!(*bank, ConstBank::Imm(0));
                assert_eq!(addr.offset(), 0x160);
            }
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn memory_operands() {
        let i = roundtrip("LDG.E.64 R2, desc[UR4][R2.64+0x10]");
        match &i.operands[1].kind {
            OperandKind::Mem { desc, addr } => {
                assert_eq!(desc.unwrap().file, RegFile::Ur);
                assert!(addr.base_is_64());
                assert_eq!(addr.offset(), 0x10);
                assert!(addr.uniform().is_none());
            }
            k => panic!("{k:?}"),
        }
        let i = roundtrip("STS [R2.X4+UR4+-0x10], R5");
        match &i.operands[0].kind {
            OperandKind::Mem { addr, .. } => {
                assert_eq!(addr.offset(), -0x10);
                assert_eq!(addr.uniform().unwrap().0.index, 4);
            }
            k => panic!("{k:?}"),
        }
        roundtrip("LDC R4, c[0x0][R2+0x10]");
        // sm_75 prints the f32 constant source of `HADD2.F32`-style forms with a space.
        let i = roundtrip("HADD2 R0, -RZ.H0_H0, c[0x2] [0x18].F32");
        assert!(i.operands[2].spaced_const);
        assert_eq!(i.operands[2].suffixes, ["F32"]);
        roundtrip("ULDC.64 UR4, c[0x0][0x118]");
        roundtrip("LDC.64 R2, c[UR4][R2.64]");
    }

    #[test]
    fn immediates_specials_and_targets() {
        let i = roundtrip("HFMA2.MMA R3, -RZ, RZ, 0, 9.5367431640625e-07");
        assert!(
            matches!(i.operands[4].kind, OperandKind::Float { value, .. } if value == 9.5367431640625e-07)
        );
        let i = roundtrip("FSEL R0, R1, +INF , P0");
        assert!(
            matches!(i.operands[2].kind, OperandKind::Float { value, .. } if value == f64::INFINITY)
        );
        let i = roundtrip("S2R R2, SR_TID.X");
        assert_eq!(i.operands[1].kind, OperandKind::Special("SR_TID.X".into()));
        roundtrip("P2R R0, PR, R0, 0x7f");
        let i = roundtrip("IADD3 R1, R1, -0x8, RZ");
        assert_eq!(i.operands[2].kind, OperandKind::Int(-8));
        let i = roundtrip("RET.REL.NODEC R4 `(_Z2lbP6float4)");
        assert_eq!(i.space_separated, [1]);
        let i = roundtrip("@P0 BRA `(@0x1a0)");
        assert_eq!(i.operands[0].kind, OperandKind::Target(0x1a0));
        roundtrip("ISETP.GE.AND P0, PT, R0, c[0x0][0x170], !PT");
        roundtrip("LOP3.LUT R0, ~R1, R2, RZ, 0xc0, !PT");
        roundtrip("FADD R0, -|R1|, |R2|.reuse");
        roundtrip("HADD2 R0, -|R1.H0_H0|, |R2.H1_H1|.reuse");
        roundtrip("MOV R0, 0x0@lo(counter)");
        roundtrip("EXIT");
        roundtrip("BSYNC B0");
        roundtrip("DEPBAR.LE SB0, 0x1");
    }

    #[test]
    fn bad_text_is_an_error_not_a_panic() {
        for t in [
            "@ EXIT",
            "@Q0 EXIT",
            "MOV R0, |R1",
            "MOV R0, [R1",
            "MOV R0, c[R",
            "MOV R0, R1..x",
            "MOV R0, $$",
            "",
        ] {
            assert!(Inst::parse(t).is_err(), "{t}");
        }
    }
}
