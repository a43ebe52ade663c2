//! Which instruction forms the target can encode, asked of the learned SASS tables.
//!
//! A pass that wants to put an immediate, a `c[bank][offset]` constant or a uniform register
//! where an instruction reads a register asks [`Forms::encodable`] first: the instruction is
//! printed with placeholder registers and assembled by `sass::encode::assemble_line`, which
//! only returns a word that nvdisasm's syntax prints back identically. So every form a pass
//! produces is one the emitter can encode, and one ptxas itself emits (the tables are learned
//! from ptxas's output), never a guess about operand encodings.

use ir::{Block, Class, Func, Inst, Opcode, Operand, Reg, VReg, op};
use rustc_hash::FxHashMap;

pub struct Forms {
    table: Option<&'static sass::Table>,
    cache: FxHashMap<String, bool>,
}

/// Mnemonics nvdisasm prints for `IMAD` words depending on their operands (a power-of-two
/// immediate with an `RZ` addend is `IMAD.SHL.U32`, an immediate 1 `IMAD.IADD`, `RZ, RZ` as
/// factors `IMAD.MOV.U32`, ...). They are the same operation: the low 32 bits of `a * b + c`
/// do not depend on signedness.
const IMAD_ALIASES: &[Opcode] = &[
    op!("IMAD.SHL.U32"),
    op!("IMAD.IADD"),
    op!("IMAD.MOV.U32"),
    op!("IMAD.MOV"),
    op!("IMAD.U32"),
];

impl Forms {
    /// Makes `i` encodable if it or a print alias of its mnemonic is (`IMAD` →
    /// `IMAD.SHL.U32`, ...): on success `i.op` is the spelling that encodes.
    pub fn fit(&mut self, f: &Func, i: &mut Inst) -> bool {
        if i.op == op!("IMAD") && product_by_zero(i) {
            // nvdisasm prints `IMAD d, a, RZ, c` (a a register) as `IMAD.MOV d, a, RZ, c`, a
            // spelling the tables do not pair with this word: checked against nvdisasm
            // 13.0.88 on sm_80, where kiln's decoder printed it as `IMAD`.
            return false;
        }
        if self.encodable(f, i) {
            return true;
        }
        if i.op == op!("IMAD") {
            for a in IMAD_ALIASES {
                i.op = *a;
                if self.encodable(f, i) {
                    return true;
                }
            }
            i.op = op!("IMAD");
        }
        false
    }

    pub fn new(profile: &target::Profile) -> Forms {
        Forms {
            table: sass::table(&profile.name()),
            cache: FxHashMap::default(),
        }
    }

    /// Whether `i` (over `f`'s virtual registers) has an encoding. Instructions naming a
    /// branch target are never asked about.
    pub fn encodable(&mut self, f: &Func, i: &Inst) -> bool {
        let Some(table) = self.table else {
            return false;
        };
        if i.operands.iter().any(|o| matches!(o, Operand::Label(_))) {
            return false;
        }
        // Placeholder registers: distinct per virtual register, aligned for any width. (A
        // list: an instruction names a handful of registers, and a map indexed by register
        // would be as long as the kernel's register count, made anew for every question.)
        let mut map: Vec<(VReg, u8)> = Vec::new();
        let (mut next_r, mut next_p) = (0u8, 0u8);
        let mut regs: Vec<Reg> = i.def_regs().chain(i.use_regs()).collect();
        regs.sort_by_key(|r| match r {
            Reg::Virt { vreg, .. } => vreg.into_raw().into_u32(),
            _ => u32::MAX,
        });
        for r in regs {
            if let Reg::Virt { vreg, .. } = r
                && !map.iter().any(|(v, _)| *v == vreg)
            {
                let idx = match f.vregs[vreg].class {
                    Class::R | Class::UR => {
                        next_r = (next_r + 1) % 12;
                        8 + 4 * next_r
                    }
                    Class::P | Class::UP => {
                        next_p = (next_p + 1) % 6;
                        next_p
                    }
                };
                map.push((vreg, idx));
            }
        }
        let assign = |v: VReg| map.iter().find(|(w, _)| *w == v).map_or(8, |(_, i)| *i);
        let text = ir::inst_text(f, i, Some(&assign), &|_: Block| String::new());
        if let Some(&ok) = self.cache.get(&text) {
            return ok;
        }
        let ok = sass::encode::assemble_line(table, &text, 0, &|_| None)
            .is_ok_and(|word| float_bits_kept(table, word, i));
        self.cache.insert(text, ok);
        ok
    }
}

/// `IMAD d, a, b, c` with exactly one factor `RZ` (or 0) and the other a register.
fn product_by_zero(i: &Inst) -> bool {
    let zero = |o: &Operand| {
        matches!(
            o,
            Operand::Imm(0)
                | Operand::Reg {
                    reg: Reg::Zero(Class::R),
                    ..
                }
        )
    };
    let reg = |o: &Operand| {
        matches!(
            o,
            Operand::Reg {
                reg: Reg::Virt { .. },
                ..
            }
        )
    };
    i.operands.len() == 4
        && ((zero(&i.operands[1]) && reg(&i.operands[2]))
            || (reg(&i.operands[1]) && zero(&i.operands[2])))
}

/// Whether the float immediates of `i` keep their bits in `word`. The same text can name
/// different bits in different encodings: `-1.9375` is f32 `0xbff80000` but, in a field
/// holding a double's high word (`MUFU.RCP64H`'s), the high word `0xbfff0000`. The word is
/// decoded and each float field's raw value compared with what the IR operand means.
fn float_bits_kept(table: &sass::Table, word: u128, i: &Inst) -> bool {
    let wanted: Vec<u64> = i
        .operands
        .iter()
        .filter_map(|o| match o {
            Operand::F32(b) => Some(u64::from(*b)),
            // An f64 immediate is encoded as its high word (its low word must be zero).
            Operand::F64(b) if b & 0xffff_ffff == 0 => Some(b >> 32),
            Operand::F64(_) => Some(u64::MAX),
            _ => None,
        })
        .collect();
    if wanted.is_empty() {
        return true;
    }
    let Some(decoded) = table.decode(word, 0) else {
        return false;
    };
    let Ok(inst) = sass::model::Inst::from_decoded(&decoded) else {
        return false;
    };
    let raws: Vec<Option<u64>> = inst
        .operands
        .iter()
        .filter_map(|o| match &o.kind {
            sass::model::OperandKind::Float { bits, .. } => Some(bits.map(|(_, raw)| raw)),
            _ => None,
        })
        .collect();
    raws.len() == wanted.len() && raws.iter().zip(&wanted).all(|(r, w)| *r == Some(*w))
}
