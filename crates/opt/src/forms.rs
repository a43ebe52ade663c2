//! Which instruction forms the target can encode, asked of the learned SASS tables.
//!
//! A pass that wants to put an immediate, a `c[bank][offset]` constant or a uniform register
//! where an instruction reads a register asks [`Forms::encodable`] first: the instruction is
//! printed with placeholder registers and assembled by `sass::encode::assemble_line`, which
//! only returns a word that nvdisasm's syntax prints back identically. So every form a pass
//! produces is one the emitter can encode, and one ptxas itself emits (the tables are learned
//! from ptxas's output), never a guess about operand encodings.

use ir::{Block, Class, Func, Inst, Operand, Reg, VReg};
use la_arena::ArenaMap;
use rustc_hash::FxHashMap;

pub struct Forms {
    table: Option<&'static sass::Table>,
    cache: FxHashMap<String, bool>,
}

impl Forms {
    pub fn new(sm: u32) -> Forms {
        Forms {
            table: sass::table(&format!("sm_{sm}")),
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
        // Placeholder registers: distinct per virtual register, aligned for any width.
        let mut map: ArenaMap<VReg, u8> = ArenaMap::default();
        let (mut next_r, mut next_p) = (0u8, 0u8);
        let mut regs: Vec<Reg> = i.def_regs().chain(i.use_regs()).collect();
        regs.sort_by_key(|r| match r {
            Reg::Virt { vreg, .. } => vreg.into_raw().into_u32(),
            _ => u32::MAX,
        });
        for r in regs {
            if let Reg::Virt { vreg, .. } = r
                && map.get(vreg).is_none()
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
                map.insert(vreg, idx);
            }
        }
        let assign = |v: VReg| map.get(v).copied().unwrap_or(8);
        let text = ir::inst_text(f, i, Some(&assign), &|_: Block| String::new());
        if let Some(&ok) = self.cache.get(&text) {
            return ok;
        }
        let ok = sass::encode::assemble_line(table, &text, 0, &|_| None).is_ok();
        self.cache.insert(text, ok);
        ok
    }
}
