//! Module-scope `.global` and `.const` variables (ptxas 13.0.88's forms, read with nvdisasm
//! on sm_80 and sm_90):
//!
//! * a `.global` variable's address is not known before the driver loads the module: the
//!   cubin carries a table of 64-bit addresses in constant bank 4 (`.nv.constant4`, filled by
//!   `R_CUDA_64` relocations against the variables), and code reads slot `i` with
//!   `LDC.64 R, c[0x4][8 * i]` (sm_90) or `MOV R, c[0x4][8 * i]` per word (sm_80). kiln's table
//!   holds every `.global` variable of the module in declaration order, so a kernel's code does
//!   not depend on which variables other kernels use;
//! * a `.const` variable lives in bank 3 (`.nv.constant3`); its address is its offset in the
//!   bank, `ld.const [var+o]` reads `c[0x3][offset + o]` and `ld.const [reg+o]` reads
//!   `c[0x3][reg + o]` with `LDC` (the register's low word indexes the bank).
//!
//! Not supported: `cvta.const` (generic addresses of the constant banks), stores to `.const`.

use ir::{Operand, Reg};
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode};

use crate::LoweredType;
use crate::{Cx, LowerError, Src, malformed, unsupported};

/// The constant bank of the module's global address table.
pub(crate) const ADDRESS_TABLE_BANK: u8 = 4;
/// The constant bank of `.const` variables.
pub(crate) const CONST_BANK: u8 = 3;
/// Bytes a constant bank may address.
const BANK_SIZE: i64 = 64 * 1024;

impl Cx {
    /// A 64-bit register pair holding the address of the global variable in `slot`.
    pub(crate) fn global_addr(&mut self, slot: u32) -> ir::VReg {
        let t = self.tmp(2);
        self.const_load_in(Operand::r(Reg::v(t, 2)), ADDRESS_TABLE_BANK, 8 * slot, 2);
        t
    }

    /// The 64-bit base register of a global or generic address `[name+o]`: the register
    /// `name`, or the address of the global variable `name` from the address table.
    pub(crate) fn global_base(
        &mut self,
        name: &str,
        at: &ast::Operand,
    ) -> Result<ir::VReg, LowerError> {
        if let Some(&(r, ty)) = self.regs.get(name) {
            if ty.words() != 2 {
                return Err(unsupported(at.syntax(), "32-bit global addresses"));
            }
            return Ok(r);
        }
        match self.globals.get(name) {
            Some(&slot) => Ok(self.global_addr(slot)),
            None => Err(unsupported(at.syntax(), format!("address of `{name}`"))),
        }
    }

    /// `ld.const[.v2|.v4].<type> d, [addr]`.
    pub(crate) fn ld_const(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let mut count = 1u32;
        let mut ty: Option<(u32, bool)> = None;
        for m in mods.iter().filter(|m| *m != ".const") {
            let t = match m.as_str() {
                ".v2" => {
                    count = 2;
                    continue;
                }
                ".v4" => {
                    count = 4;
                    continue;
                }
                ".b8" | ".u8" => (1, false),
                ".s8" => (1, true),
                ".b16" | ".u16" => (2, false),
                ".s16" => (2, true),
                ".b32" | ".u32" | ".f32" => (4, false),
                ".s32" => (4, true),
                ".b64" | ".u64" | ".f64" => (8, false),
                ".s64" => (8, true),
                other => return Err(unsupported(node, format!("ld.const modifier {other}"))),
            };
            if ty.replace(t).is_some() {
                return Err(malformed(node, "ld.const with two types"));
            }
        }
        let Some((size, signed)) = ty else {
            return Err(malformed(node, "ld.const without a type"));
        };
        let dsts: Vec<Option<ast::Operand>> = match &ops[0] {
            ast::Operand::Vector(v) => v
                .elements()
                .map(|e| (e.syntax().text() != "_").then_some(e))
                .collect(),
            o => vec![Some(o.clone())],
        };
        if dsts.len() != count as usize {
            return Err(malformed(
                ops[0].syntax(),
                "vector operand of another length",
            ));
        }
        let (name, off) = self.address_name(&ops[1])?;
        let (index, base) = if let Some(&at) = self.consts.get(&name) {
            (None, i64::from(at) + off)
        } else {
            if !self.regs.contains_key(&name) {
                return Err(unsupported(
                    ops[1].syntax(),
                    format!("ld.const of `{name}`"),
                ));
            }
            let (r, _) = self.regs[&name];
            if self.f.vregs[r].class != ir::Class::R {
                return Err(unsupported(
                    ops[1].syntax(),
                    "constant address register type",
                ));
            }
            (Some(Reg::part(r, 0)), off)
        };
        let total = i64::from(size * count);
        if base < 0 || base + total > BANK_SIZE || base % i64::from(size.min(8)) != 0 {
            return Err(unsupported(
                node,
                "ld.const outside the constant bank or misaligned",
            ));
        }
        for (k, d) in dsts.iter().enumerate() {
            let Some(d) = d else { continue };
            if !matches!(self.src(d)?, Src::Reg(..)) {
                return Err(malformed(d.syntax(), "destination is not a register"));
            }
            let at = base as u32 + k as u32 * size;
            self.ld_cbank_elem(d, size, signed, CONST_BANK, index, at)?;
        }
        Ok(())
    }
}
