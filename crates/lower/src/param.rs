//! `ld.param` in a kernel: parameters live in constant bank 0 at the SM's parameter base.
//!
//! Forms (ptxas 13.0.88's, checked with `cuobjdump -sass` on sm_80 and sm_90):
//! * 32- and 64-bit values: `MOV R, c[0x0][o]` on sm_80, `LDC`/`LDC.64` on sm_90
//!   ([`Cx::const_load`]);
//! * 8- and 16-bit values: `LDC.U8`/`LDC.S8`/`LDC.U16`/`LDC.S16 R, c[0x0][o]`, zero- or
//!   sign-extended to 32 bits (so 16-bit registers get a defined upper half);
//! * a value narrower than its 64-bit destination register: the low word, then sign or zero
//!   extension into the high word;
//! * `.v2`/`.v4`: one load per element (offsets `o + k * size`).
//!
//! The offset must lie inside the parameter and be a multiple of the element size (PTX's
//! alignment rule); anything else is refused.

use ir::{Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode};

use crate::{Cx, LowerError, Src, malformed, sub, unsupported};

/// One `ld.param` element type: its size in bytes, signedness and whether it is a float.
struct ParamTy {
    size: u32,
    signed: bool,
}

fn param_ty(m: &str) -> Option<ParamTy> {
    let (size, signed) = match m {
        ".b8" | ".u8" => (1, false),
        ".s8" => (1, true),
        ".b16" | ".u16" => (2, false),
        ".s16" => (2, true),
        ".b32" | ".u32" | ".f32" => (4, false),
        ".s32" => (4, true),
        ".b64" | ".u64" | ".f64" => (8, false),
        ".s64" => (8, true),
        _ => return None,
    };
    Some(ParamTy { size, signed })
}

impl Cx {
    pub(crate) fn ld_param(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let mut count = 1;
        let mut ty = None;
        for m in mods.iter().filter(|m| *m != ".param") {
            match m.as_str() {
                ".v2" => count = 2,
                ".v4" => count = 4,
                t => match param_ty(t) {
                    Some(p) if ty.is_none() => ty = Some(p),
                    _ => return Err(unsupported(node, "this ld.param form")),
                },
            }
        }
        let Some(ty) = ty else {
            return Err(unsupported(node, "this ld.param form"));
        };
        let dsts: Vec<Option<ast::Operand>> = match &ops[0] {
            ast::Operand::Vector(v) => v
                .elements()
                .map(|e| (e.syntax().text() != "_").then_some(e))
                .collect(),
            o => vec![Some(o.clone())],
        };
        if dsts.len() != count {
            return Err(malformed(
                ops[0].syntax(),
                "vector operand of another length",
            ));
        }
        let (name, off) = self.address_name(&ops[1])?;
        let (name, off) = match self.param_ptrs.get(&name) {
            Some((p, o)) => (p.clone(), o + off),
            None => (name, off),
        };
        if let Some(&var) = self.param_vars.get(&name) {
            // A call's result or an inlined function's parameter (`call.rs`).
            return self.ld_param_var(node, var, off, (ty.size, ty.signed), &dsts);
        }
        let (base, size) = *self
            .params
            .get(&name)
            .ok_or_else(|| unsupported(ops[1].syntax(), format!("ld.param of `{name}`")))?;
        let total = ty.size * count as u32;
        let off = u32::try_from(off)
            .ok()
            .filter(|o| o + total <= size && o % ty.size == 0);
        let Some(off) = off else {
            return Err(unsupported(
                node,
                "ld.param outside or misaligned in its parameter",
            ));
        };
        for (k, d) in dsts.iter().enumerate() {
            let Some(d) = d else { continue };
            let cb = self.target.param_base() + base + off + k as u32 * ty.size;
            self.ld_param_elem(d, &ty, cb)?;
        }
        Ok(())
    }

    fn ld_param_elem(&mut self, d: &ast::Operand, ty: &ParamTy, cb: u32) -> Result<(), LowerError> {
        self.ld_cbank_elem(d, ty.size, ty.signed, 0, None, cb)
    }

    /// Loads one element of `size` bytes from `c[bank][index + offset]` (no index: an
    /// immediate offset) into the destination register `d`, zero- or sign-extending values
    /// narrower than the register. Shared by `ld.param` and `ld.const` (`modvar.rs`).
    pub(crate) fn ld_cbank_elem(
        &mut self,
        d: &ast::Operand,
        size: u32,
        signed: bool,
        bank: u8,
        index: Option<Reg>,
        offset: u32,
    ) -> Result<(), LowerError> {
        let width = match self.src(d)? {
            Src::Reg(_, w) => w,
            _ => return Err(malformed(d.syntax(), "destination is not a register")),
        };
        if size == 8 && width != 2 {
            return Err(unsupported(d.syntax(), "operand of another width or class"));
        }
        let d = self.dst(d, width)?;
        let low = if width == 2 && size < 8 { sub(d, 0) } else { d };
        match (size, index) {
            (4 | 8, None) => {
                self.const_load_in(Operand::r(low), bank, offset, (size / 4) as u8);
            }
            _ => {
                let op = match (size, signed) {
                    (1, false) => op!("LDC.U8"),
                    (1, true) => op!("LDC.S8"),
                    (2, false) => op!("LDC.U16"),
                    (2, true) => op!("LDC.S16"),
                    (4, _) => op!("LDC"),
                    _ => op!("LDC.64"),
                };
                let src = match index {
                    Some(index) => Operand::ConstIndexed {
                        bank,
                        index,
                        offset,
                    },
                    None if offset == 0 => Operand::ConstIndexed {
                        bank,
                        index: Reg::Zero(ir::Class::R),
                        offset: 0,
                    },
                    None => Operand::Const { bank, offset },
                };
                self.push(Inst::new(op, vec![Operand::r(low), src], vec![0]));
            }
        }
        if width == 2 && size < 8 {
            self.extend_high(d, signed);
        }
        Ok(())
    }
}
