//! Register effects of one instruction: the registers it reads and writes (with widths), its
//! latency class and its control-flow behaviour, derived from [`sass::model::Inst`] and the
//! data file `data/effects.txt` (format documented at the top of that file).

use std::collections::HashMap;
use std::sync::OnceLock;

use sass::model::{AddrTerm, Address, ConstBank, Inst, OperandKind, Reg, RegFile};

/// The effects table, as committed (hashed into the latency tables' headers).
pub const EFFECTS_TXT: &str = include_str!("../data/effects.txt");

/// `count` consecutive registers of one file starting at `index` (`R4` with count 2 is the
/// pair R4:R5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegRange {
    pub file: RegFile,
    pub index: u8,
    pub count: u8,
}

impl RegRange {
    /// The registers of the range (stopping before the file's zero register).
    pub fn regs(self) -> impl Iterator<Item = Reg> {
        let zero = self.file.zero_index().map_or(u16::MAX, u16::from);
        (u16::from(self.index)..u16::from(self.index) + u16::from(self.count))
            .take_while(move |&i| i < zero && i <= 255)
            .map(move |i| Reg {
                file: self.file,
                index: i as u8,
            })
    }

    /// Dense keys of the registers of the range (see [`reg_key`]).
    pub fn keys(self) -> impl Iterator<Item = u16> {
        self.regs().map(reg_key)
    }
}

/// Number of distinct dense register keys ([`reg_key`]).
pub const REG_KEYS: usize = 256 + 64 + 8 + 8 + 16 + 8;

/// A dense key for a register: R 0..=255, UR 256.., P 320.., UP 328.., B 336.., SB 352...
pub fn reg_key(r: Reg) -> u16 {
    let i = u16::from(r.index);
    match r.file {
        RegFile::R => i,
        RegFile::Ur => 256 + (i & 63),
        RegFile::P => 320 + (i & 7),
        RegFile::Up => 328 + (i & 7),
        RegFile::B => 336 + (i & 15),
        RegFile::Sb => 352 + (i & 7),
    }
}

/// The register of a dense key (inverse of [`reg_key`]).
pub fn key_reg(k: u16) -> Reg {
    let (file, index) = match k {
        0..=255 => (RegFile::R, k),
        256..=319 => (RegFile::Ur, k - 256),
        320..=327 => (RegFile::P, k - 320),
        328..=335 => (RegFile::Up, k - 328),
        336..=351 => (RegFile::B, k - 336),
        _ => (RegFile::Sb, k - 352),
    };
    Reg {
        file,
        index: index as u8,
    }
}

/// What an instruction does to control flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Falls through to the next instruction.
    Next,
    /// Jumps to `target`; also falls through when `conditional`.
    Branch { target: u64, conditional: bool },
    /// Calls a subroutine (`CALL.REL` to `target`, or `CALL.ABS` through a register: `None`),
    /// then continues with the next instruction.
    Call { target: Option<u64> },
    /// Returns from a subroutine (`RET`); also falls through when `conditional`.
    Return { conditional: bool },
    /// Ends the thread (`EXIT`); also falls through when `conditional`.
    Exit { conditional: bool },
    /// Jumps through a register (`BRX`, `JMX`): targets unknown.
    Indirect,
}

/// `DEPBAR.LE SBn, count`: waits until at most `count` operations are pending on scoreboard
/// `sb` (and until the scoreboards in `also` are clear).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Depbar {
    pub sb: u8,
    pub count: u8,
    pub also: u8,
}

/// The effects of one instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effects {
    /// Latency class (the mnemonic without modifiers unless the table says otherwise).
    pub class: String,
    /// Registers read (sources, address and descriptor registers, the guard predicate).
    pub reads: Vec<RegRange>,
    /// Registers written.
    pub writes: Vec<RegRange>,
    pub flow: Flow,
    pub depbar: Option<Depbar>,
    /// Whether the mnemonic has a line in `data/effects.txt` (otherwise: first operand written).
    pub listed: bool,
    /// Whether the roles are an approximation (`approx` in the table, or a shape not parsed).
    pub approx: bool,
}

/// How the destination operands are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dst {
    First(usize),
    BeforeMem,
    AllBut(usize),
}

/// How widths of R/UR operands are found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Width {
    Fixed {
        all: u8,
        dst: Option<u8>,
        src: Vec<u8>,
    },
    Size,
    Cvt,
    Mma,
    Ldsm,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Special {
    None,
    P2r,
    R2p,
}

/// One line of `data/effects.txt`.
#[derive(Debug, Clone)]
struct Spec {
    mods: Vec<String>,
    dst: Dst,
    width: Width,
    special: Special,
    class: Option<String>,
    approx: bool,
}

/// Parses `data/effects.txt`; errors name the line.
fn parse_specs(text: &str) -> Result<HashMap<String, Vec<Spec>>, String> {
    let mut map: HashMap<String, Vec<Spec>> = HashMap::new();
    for (ln, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |m: &str| format!("effects.txt:{}: {m}: `{line}`", ln + 1);
        let mut words = line.split_whitespace();
        let mnemonic = words.next().ok_or_else(|| bad("empty"))?;
        let mut parts = mnemonic.split('.');
        let opcode = parts.next().unwrap_or_default().to_string();
        let mut spec = Spec {
            mods: parts.map(str::to_string).collect(),
            dst: Dst::First(1),
            width: Width::Fixed {
                all: 1,
                dst: None,
                src: Vec::new(),
            },
            special: Special::None,
            class: None,
            approx: false,
        };
        let num = |v: &str| v.parse::<u8>().map_err(|_| bad("bad number"));
        for w in words {
            let (k, v) = w.split_once('=').unwrap_or((w, ""));
            match (k, v) {
                ("dst", "mem") => spec.dst = Dst::BeforeMem,
                ("dst", n) => spec.dst = Dst::First(usize::from(num(n)?)),
                ("src", n) => spec.dst = Dst::AllBut(usize::from(num(n)?)),
                ("w", "size") => spec.width = Width::Size,
                ("w", "cvt") => spec.width = Width::Cvt,
                ("w", "mma") => spec.width = Width::Mma,
                ("w", "ldsm") => spec.width = Width::Ldsm,
                ("w", n) | ("dw", n) | ("sw", n) => {
                    let Width::Fixed { all, dst, src } = &mut spec.width else {
                        return Err(bad("w/dw/sw after a width rule"));
                    };
                    match k {
                        "w" => *all = num(n)?,
                        "dw" => *dst = Some(num(n)?),
                        _ => {
                            *src = n.split(',').map(num).collect::<Result<Vec<_>, _>>()?;
                        }
                    }
                }
                ("special", "p2r") => spec.special = Special::P2r,
                ("special", "r2p") => spec.special = Special::R2p,
                ("class", c) if !c.is_empty() => spec.class = Some(c.to_string()),
                ("approx", "") => spec.approx = true,
                _ => return Err(bad("unknown key")),
            }
        }
        map.entry(opcode).or_default().push(spec);
    }
    Ok(map)
}

fn specs() -> &'static HashMap<String, Vec<Spec>> {
    static S: OnceLock<HashMap<String, Vec<Spec>>> = OnceLock::new();
    S.get_or_init(|| parse_specs(EFFECTS_TXT).expect("data/effects.txt parses (tested)"))
}

/// Checks that `data/effects.txt` parses (used by the tests).
pub fn validate_table() -> Result<usize, String> {
    parse_specs(EFFECTS_TXT).map(|m| m.values().map(Vec::len).sum())
}

/// The most specific line for `opcode` whose modifiers are all present.
fn lookup<'a>(opcode: &str, mods: &[String]) -> Option<&'a Spec> {
    let cands = specs().get(opcode)?;
    cands
        .iter()
        .filter(|s| s.mods.iter().all(|m| mods.contains(m)))
        .max_by_key(|s| s.mods.len())
}

/// Register width of a data access with these modifiers (`w=size`).
fn size_width(mods: &[String]) -> u8 {
    if mods.iter().any(|m| m == "128") {
        4
    } else if mods
        .iter()
        .any(|m| matches!(m.as_str(), "64" | "F64" | "S64" | "U64"))
    {
        2
    } else {
        1
    }
}

const FLOAT_TYPES: &[&str] = &["F16", "BF16", "F32", "F64", "TF32", "E4M3", "E5M2"];
const INT_TYPES: &[&str] = &["S8", "U8", "S16", "U16", "S32", "U32", "S64", "U64"];

fn type_width(t: &str) -> u8 {
    if t.ends_with("64") { 2 } else { 1 }
}

/// (destination width, source width) of a conversion (`w=cvt`).
fn cvt_widths(opcode: &str, mods: &[String]) -> (u8, u8) {
    let types: Vec<&str> = mods
        .iter()
        .map(String::as_str)
        .filter(|m| FLOAT_TYPES.contains(m) || INT_TYPES.contains(m))
        .collect();
    let first = |set: &[&str], default: &str| -> u8 {
        type_width(
            types
                .iter()
                .copied()
                .find(|t| set.contains(t))
                .unwrap_or(default),
        )
    };
    match opcode {
        "F2I" => (first(INT_TYPES, "S32"), first(FLOAT_TYPES, "F32")),
        "I2F" => (first(FLOAT_TYPES, "F32"), first(INT_TYPES, "S32")),
        _ => (
            types.first().map_or(1, |t| type_width(t)),
            types.get(1).map_or(1, |t| type_width(t)),
        ),
    }
}

/// Widths of D, A, B, C of a matrix multiply (`w=mma`), or `None` when the shape is not
/// understood.
fn mma_widths(opcode: &str, mods: &[String]) -> Option<[u8; 4]> {
    if mods.iter().any(|m| m == "SP") {
        return None;
    }
    let shape = mods.first()?;
    let (m, n, k) = if let Some(k) = shape.strip_prefix("168") {
        (16u32, 8u32, k.parse::<u32>().ok()?)
    } else if let Some(k) = shape.strip_prefix("88") {
        (8, 8, k.parse::<u32>().ok()?)
    } else {
        return None;
    };
    let has = |t: &str| mods.iter().any(|x| x == t);
    let (acc, input) = match opcode {
        "DMMA" => (64, 64),
        "IMMA" => (32, if has("S4") || has("U4") { 4 } else { 8 }),
        "HMMA" => {
            let acc = if mods.get(1).is_some_and(|t| t == "F16") {
                16
            } else {
                32
            };
            let input = if has("TF32") { 32 } else { 16 };
            (acc, input)
        }
        _ => return None,
    };
    let regs = |rows: u32, cols: u32, bits: u32| -> Option<u8> {
        u8::try_from((rows * cols * bits).div_ceil(1024)).ok()
    };
    Some([
        regs(m, n, acc)?,
        regs(m, k, input)?,
        regs(k, n, input)?,
        regs(m, n, acc)?,
    ])
}

fn push(v: &mut Vec<RegRange>, r: Reg, count: u8) {
    if r.is_zero() || count == 0 {
        return;
    }
    v.push(RegRange {
        file: r.file,
        index: r.index,
        count,
    });
}

/// The registers an address reads. `extended`: the instruction has `.E` (a 64-bit address),
/// so its register term is a pair even where nvdisasm prints no `.64` (every sm_75 global
/// access, `[R2]`; `ATOMG.E.CAS` on sm_80, `[R2+0x38]`), unless the term says `.U32`.
fn address_reads(a: &Address, extended: bool, out: &mut Vec<RegRange>) {
    for t in &a.terms {
        if let AddrTerm::Reg { reg, suffixes } = t {
            let wide = suffixes.iter().any(|s| s == "64")
                || (extended && reg.file == RegFile::R && !suffixes.iter().any(|s| s == "U32"));
            push(out, *reg, if wide { 2 } else { 1 });
        }
    }
}

/// The effects of one instruction.
pub fn effects(inst: &Inst) -> Effects {
    let spec = lookup(&inst.opcode, &inst.mods);
    let listed = spec.is_some();
    let default = Spec {
        mods: Vec::new(),
        dst: Dst::First(1),
        width: Width::Fixed {
            all: 1,
            dst: None,
            src: Vec::new(),
        },
        special: Special::None,
        class: None,
        approx: false,
    };
    let spec = spec.unwrap_or(&default);
    let mut approx = spec.approx;
    let ops = &inst.operands;
    let extended = matches!(
        inst.opcode.as_str(),
        "LDG" | "STG" | "LD" | "ST" | "ATOM" | "ATOMG" | "RED" | "REDG" | "CCTL"
    ) && inst.mods.iter().any(|m| m == "E");
    let ndst = match spec.dst {
        Dst::First(n) => n.min(ops.len()),
        Dst::AllBut(n) => ops.len().saturating_sub(n),
        Dst::BeforeMem => ops
            .iter()
            .position(|o| matches!(o.kind, OperandKind::Mem { .. }))
            .unwrap_or(0),
    };
    let mma = match spec.width {
        Width::Mma => {
            let w = mma_widths(&inst.opcode, &inst.mods);
            if w.is_none() {
                approx = true;
            }
            w
        }
        _ => None,
    };
    let (cvt_d, cvt_s) = cvt_widths(&inst.opcode, &inst.mods);
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    if let Some(g) = inst.guard.filter(|g| g.pred != 7) {
        let file = if g.uniform { RegFile::Up } else { RegFile::P };
        push(
            &mut reads,
            Reg {
                file,
                index: g.pred,
            },
            1,
        );
    }
    for (k, op) in ops.iter().enumerate() {
        let is_dst = k < ndst;
        let src_pos = k.saturating_sub(ndst);
        match &op.kind {
            OperandKind::Reg(r) => {
                let width = match r.file {
                    RegFile::R | RegFile::Ur => match &spec.width {
                        Width::Fixed { all, dst, src } => {
                            if is_dst {
                                dst.unwrap_or(*all)
                            } else {
                                src.get(src_pos).copied().unwrap_or(*all)
                            }
                        }
                        Width::Size => size_width(&inst.mods),
                        Width::Cvt => {
                            if is_dst {
                                cvt_d
                            } else {
                                cvt_s
                            }
                        }
                        Width::Mma => mma.map_or(1, |w| w[k.min(3)]),
                        Width::Ldsm => {
                            if is_dst {
                                if inst.has_mod("4") {
                                    4
                                } else if inst.has_mod("2") {
                                    2
                                } else {
                                    1
                                }
                            } else {
                                1
                            }
                        }
                    },
                    _ => 1,
                };
                if is_dst {
                    push(&mut writes, *r, width);
                } else {
                    push(&mut reads, *r, width);
                }
            }
            OperandKind::Mem { desc, addr } => {
                if let Some(d) = desc {
                    push(&mut reads, *d, 2);
                }
                address_reads(addr, extended, &mut reads);
            }
            OperandKind::Const { bank, addr, .. } => {
                if let ConstBank::Reg(r) = bank {
                    push(&mut reads, *r, 1);
                }
                address_reads(addr, false, &mut reads);
            }
            _ => {}
        }
    }
    let mask = ops
        .iter()
        .rev()
        .find_map(|o| match o.kind {
            OperandKind::Int(v) => Some(v),
            _ => None,
        })
        .unwrap_or(0);
    let pfile = if inst.opcode.starts_with('U') {
        RegFile::Up
    } else {
        RegFile::P
    };
    for i in 0..7u8 {
        if mask >> i & 1 == 1 {
            let p = Reg {
                file: pfile,
                index: i,
            };
            match spec.special {
                Special::P2r => push(&mut reads, p, 1),
                Special::R2p => push(&mut writes, p, 1),
                Special::None => {}
            }
        }
    }
    if let Some(t) = sass::texture::TexForm::parse(inst) {
        // The texture fetches ptxas writes have an exact layout (`sass::texture`).
        reads.retain(|r| matches!(r.file, RegFile::P | RegFile::Up));
        writes.clear();
        for g in [Some(t.a), t.b].into_iter().flatten() {
            push(&mut reads, g.reg, g.count);
        }
        if let sass::texture::TexHandle::Uniform(u) = t.handle {
            push(&mut reads, u, 2);
        }
        for g in [t.d0, t.d1] {
            push(&mut writes, g.reg, g.count);
        }
        approx = false;
    }
    let class = spec.class.clone().unwrap_or_else(|| inst.opcode.clone());
    Effects {
        class,
        reads,
        writes,
        flow: flow(inst),
        depbar: depbar(inst),
        listed,
        approx,
    }
}

fn target(inst: &Inst) -> Option<u64> {
    inst.operands.iter().find_map(|o| match o.kind {
        OperandKind::Target(t) => Some(t),
        _ => None,
    })
}

fn flow(inst: &Inst) -> Flow {
    let guarded = inst.guard.is_some_and(|g| g.pred != 7 || g.negated);
    match inst.opcode.as_str() {
        "BRA" | "JMP" => match target(inst) {
            Some(t) => {
                // Anything besides the target (a predicate, `~URZ` of BRA.DIV) makes it
                // conditional.
                let extra = inst.operands.len() > 1;
                let cond = guarded
                    || extra
                    || inst
                        .mods
                        .iter()
                        .any(|m| matches!(m.as_str(), "DIV" | "CONV"));
                Flow::Branch {
                    target: t,
                    conditional: cond,
                }
            }
            None => Flow::Indirect,
        },
        "BRX" | "JMX" => Flow::Indirect,
        "WARPSYNC" => match target(inst) {
            Some(t) => Flow::Branch {
                target: t,
                conditional: true,
            },
            None => Flow::Next,
        },
        "CALL" => Flow::Call {
            target: target(inst),
        },
        "RET" => Flow::Return {
            conditional: guarded,
        },
        "EXIT" => Flow::Exit {
            conditional: guarded,
        },
        _ => Flow::Next,
    }
}

fn depbar(inst: &Inst) -> Option<Depbar> {
    if inst.opcode != "DEPBAR" {
        return None;
    }
    let mut sb = None;
    let mut count = 0u8;
    let mut also = 0u8;
    for o in &inst.operands {
        match &o.kind {
            OperandKind::Reg(Reg {
                file: RegFile::Sb,
                index,
            }) => sb = Some(*index),
            OperandKind::Int(v) => count = u8::try_from(*v).unwrap_or(u8::MAX),
            OperandKind::List(items) => {
                // `{5,4,3}`: further scoreboards waited to zero.
                for &i in items.iter().filter(|i| **i < 6) {
                    also |= 1 << i;
                }
            }
            OperandKind::Other(s) => {
                // `{5,4,3}` in an older spelling of the model.
                for d in s.trim_matches(['{', '}']).split(',') {
                    if let Some(i) = d.trim().parse::<u8>().ok().filter(|i| *i < 6) {
                        also |= 1 << i;
                    }
                }
            }
            _ => {}
        }
    }
    Some(Depbar {
        sb: sb.unwrap_or(7),
        count,
        also,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eff(t: &str) -> Effects {
        effects(&Inst::parse(t).expect("parses"))
    }

    fn show(v: &[RegRange]) -> String {
        v.iter()
            .map(|r| {
                let base = Reg {
                    file: r.file,
                    index: r.index,
                };
                if r.count == 1 {
                    base.to_string()
                } else {
                    format!("{base}x{}", r.count)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn rw(t: &str) -> String {
        let e = eff(t);
        format!("w[{}] r[{}]", show(&e.writes), show(&e.reads))
    }

    #[test]
    fn table_parses() {
        assert!(validate_table().unwrap() > 50);
    }

    #[test]
    fn roles_and_widths() {
        assert_eq!(rw("IADD3 R9, P0, R6, UR6, RZ"), "w[R9 P0] r[R6 UR6]");
        assert_eq!(
            rw("IADD3.X R11, R7, UR7, RZ, P0, !PT"),
            "w[R11] r[R7 UR7 P0]"
        );
        assert_eq!(rw("IMAD.WIDE R8, R4, 0x8, R8"), "w[R8x2] r[R4 R8x2]");
        assert_eq!(
            rw("@!P0 LDG.E.64.CONSTANT R8, desc[UR4][R8.64]"),
            "w[R8x2] r[P0 UR4x2 R8x2]"
        );
        assert_eq!(rw("STS.128 [R5+UR4], R8"), "w[] r[R5 UR4 R8x4]");
        assert_eq!(rw("ISETP.GE.AND P0, PT, R4, UR4, PT"), "w[P0] r[R4 UR4]");
        assert_eq!(
            rw("PLOP3.LUT P0, PT, P0, P1, P2, 0xe0, 0x0"),
            "w[P0] r[P0 P1 P2]"
        );
        assert_eq!(rw("DFMA R4, R2, R4, c[0x2][0x20]"), "w[R4x2] r[R2x2 R4x2]");
        assert_eq!(rw("F2F.F64.F32 R4, R4"), "w[R4x2] r[R4]");
        assert_eq!(rw("F2I.S64.TRUNC R2, R2"), "w[R2x2] r[R2]");
        assert_eq!(rw("I2F.U64.RP R5, R12"), "w[R5] r[R12x2]");
        assert_eq!(
            rw("HMMA.16816.F32 R16, R4.reuse, R12, RZ"),
            "w[R16x4] r[R4x4 R12x2]"
        );
        assert_eq!(
            rw("IMMA.16816.U8.U8 R12, R18.reuse.ROW, R22.COL, R12"),
            "w[R12x4] r[R18x2 R22 R12x4]"
        );
        assert_eq!(
            rw("LDSM.16.M88.4 R12, [R31+UR9+0x2000]"),
            "w[R12x4] r[R31 UR9]"
        );
        assert_eq!(
            rw("ATOM.E.CAST.SPIN.64 PT, R30, [R66], R28, R30"),
            "w[R30x2] r[R66x2 R28x2 R30x2]"
        );
        // `.E`: a 64-bit address, printed without `.64` on sm_75 and by sm_80's CAS.
        assert_eq!(rw("LDG.E.SYS R2, [R4+0x8]"), "w[R2] r[R4x2]");
        assert_eq!(
            rw("ATOMG.E.CAS.STRONG.GPU PT, R9, [R2+0x38], R16, R17"),
            "w[R9] r[R2x2 R16 R17]"
        );
        assert_eq!(rw("LDS.U R0, [R17.X4+0x4]"), "w[R0] r[R17]");
        assert_eq!(rw("P2R R43, PR, RZ, 0x1"), "w[R43] r[P0]");
        assert_eq!(rw("R2P PR, R8, 0x7e"), "w[P1 P2 P3 P4 P5 P6] r[R8]");
        assert_eq!(rw("SHFL.BFLY PT, R10, R5, 0x10, 0x1f"), "w[R10] r[R5]");
        assert_eq!(rw("VOTE.ANY R8, PT, P0"), "w[R8] r[P0]");
        assert_eq!(
            rw("LEA.HI.X.SX32 R14, R9, R15, 0x1, P0"),
            "w[R14] r[R9 R15 P0]"
        );
        assert_eq!(rw("LOP3.LUT P0, RZ, R3, 0x1, RZ, 0xc0, !PT"), "w[P0] r[R3]");
        assert_eq!(rw("CS2R R6, SRZ"), "w[R6x2] r[]");
        assert_eq!(rw("BSSY B0, `(@0x2c0)"), "w[B0] r[]");
    }

    #[test]
    fn flow_kinds() {
        assert_eq!(
            eff("@!P0 BRA `(@0x2b0)").flow,
            Flow::Branch {
                target: 0x2b0,
                conditional: true
            }
        );
        assert_eq!(
            eff("BRA `(@0x2b0)").flow,
            Flow::Branch {
                target: 0x2b0,
                conditional: false
            }
        );
        assert_eq!(
            eff("BRA.DIV ~URZ, `(@0x40)").flow,
            Flow::Branch {
                target: 0x40,
                conditional: true
            }
        );
        assert_eq!(eff("@P0 EXIT").flow, Flow::Exit { conditional: true });
        assert_eq!(
            eff("DEPBAR.LE SB5, 0x5").depbar,
            Some(Depbar {
                sb: 5,
                count: 5,
                also: 0
            })
        );
        // ptxas's sm_80 code waits on a further scoreboard in the list (`R2UR` results).
        assert_eq!(
            eff("DEPBAR.LE SB0, 0x0, {1}").depbar,
            Some(Depbar {
                sb: 0,
                count: 0,
                also: 1 << 1
            })
        );
    }
}
