//! Texture fetches: `tex` → `TEX` (float coordinates) / `TLD` (integer coordinates).
//!
//! The forms are ptxas 13.0.88's (read from its sm_80 and sm_90 code for every shape below,
//! `test-data/codegen/texture.ptx`):
//!
//! * **Handle.** A texture object (`cudaTextureObject_t`, a 64-bit kernel parameter) or a
//!   bound texture reference (`.global .texref`), whose 32-bit word ptxas places in the
//!   kernel's constant bank after the parameters (the driver writes the texture header index
//!   there through an `R_CUDA_TEX_HEADER_INDEX` relocation). sm_80 names the word by its
//!   index (`TEX.SCR.LL ..., 0x0, 0x5a, 2D` reads `c[0x0][0x168]`); sm_90 reads it into a
//!   uniform pair (`ULDC UR4, c[0x0][0x218]`, `UMOV UR5, URZ`,
//!   `TEX.LL ..., UR4, 0x0, 2D`). A handle computed at run time (`TEX.B`) is not supported.
//! * **Coordinates** travel in two register groups A and B. sm_90: A holds the coordinates
//!   (the layer first for `a2d`), B the level of detail. sm_80: the coordinates and the level
//!   of detail in order, the first half (rounded up) in A, the rest in B. `TEX.LL` always
//!   takes a level: the `tex.level` operand, else -32.0 (0xc2000000, ptxas's constant).
//!   `TLD.LZ` (level zero) takes none. A 1D fetch with float coordinates is a 2D `TEX` with
//!   y = 0; the layer of `a2d` is clamped to 0xffff first (`ISETP.GT.U32` + `SEL`).
//! * **Results**: the four channels land in two register pairs, channels 0–1 in the second
//!   printed destination and 2–3 in the first (`TEX.LL R6, R4, ...` writes x, y to R4, R5
//!   and z, w to R6, R7); kiln always fetches all four (ptxas narrows the channel mask to the
//!   channels used, a register-count difference only).
//!
//! Not supported (refused with a reason): cube maps (ptxas projects the coordinates with
//! `MUFU.RCP` first), `a2d` and `.level` with integer coordinates, samplers of independent
//! mode (`[tex, sampler, {..}]`), handles not loaded from a kernel parameter, `tld4`, `txq`.
//! Surfaces are `surface.rs`.

use ir::{Class, Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode};

use crate::{Cx, LowerError, malformed, unsupported};

/// The level of detail ptxas gives `TEX.LL` for a fetch without one (-32.0).
const IMPLICIT_LOD: u32 = 0xc200_0000;
/// ptxas clamps the layer of a layered fetch to this.
const MAX_LAYER: u32 = 0xffff;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    D1,
    D2,
    D3,
    A2D,
}

/// Where the handle word is.
enum Handle {
    /// Byte offset of the 32-bit word in constant bank 0.
    Cbank(u32),
}

impl Cx {
    pub(crate) fn tex(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let mut shape = None;
        let mut level = false;
        let mut types = Vec::new();
        let mut v4 = false;
        for m in mods {
            match m.as_str() {
                ".1d" => shape = Some(Shape::D1),
                ".2d" => shape = Some(Shape::D2),
                ".3d" => shape = Some(Shape::D3),
                ".a2d" => shape = Some(Shape::A2D),
                ".level" => level = true,
                ".v4" => v4 = true,
                ".f32" | ".u32" | ".s32" => types.push(m.as_str()),
                ".cube" | ".acube" | ".a1d" | ".2dms" | ".a2dms" => {
                    return Err(unsupported(node, format!("tex{m}")));
                }
                _ => return Err(unsupported(node, format!("tex modifier {m}"))),
            }
        }
        let (Some(shape), true, [_, coord_ty]) = (shape, v4, types.as_slice()) else {
            return Err(unsupported(node, "this tex form"));
        };
        let float = *coord_ty == ".f32";
        if !float && (level || shape == Shape::A2D) {
            return Err(unsupported(
                node,
                "tex with integer coordinates and a level or layers",
            ));
        }
        Self::need(node, ops, if level { 3 } else { 2 })?;
        let dsts: Vec<ast::Operand> = match &ops[0] {
            ast::Operand::Vector(v) => v.elements().collect(),
            o => return Err(malformed(o.syntax(), "tex destination is not a vector")),
        };
        if dsts.len() != 4 {
            return Err(malformed(
                ops[0].syntax(),
                "tex destination of another length",
            ));
        }
        let ast::Operand::Address(addr) = &ops[1] else {
            return Err(malformed(
                ops[1].syntax(),
                "tex operand is not `[handle, {..}]`",
            ));
        };
        let inner: Vec<ast::Operand> = addr.operands().collect();
        let (handle_op, coords_op) = match inner.as_slice() {
            [h, c] => (h, c),
            [_, _, _] => {
                return Err(unsupported(
                    ops[1].syntax(),
                    "tex with a separate sampler (independent texture mode)",
                ));
            }
            _ => {
                return Err(malformed(
                    ops[1].syntax(),
                    "tex operand is not `[handle, {..}]`",
                ));
            }
        };
        let coords: Vec<ast::Operand> = match coords_op {
            ast::Operand::Vector(v) => v.elements().collect(),
            o => vec![o.clone()],
        };
        let used = match shape {
            Shape::D1 => 1,
            Shape::D2 => 2,
            Shape::D3 | Shape::A2D => 3,
        };
        if coords.len() < used {
            return Err(malformed(coords_op.syntax(), "too few tex coordinates"));
        }
        let Handle::Cbank(word) = self.texture_handle(handle_op)?;

        // Coordinate values (the layer of a2d first, clamped), then the level of detail.
        let mut vals: Vec<Reg> = Vec::new();
        for (k, c) in coords.iter().take(used).enumerate() {
            let r = self.reg_src(c, 1)?;
            if shape == Shape::A2D && k == 0 {
                let p = Reg::v(self.ptmp(), 1);
                self.push(Inst::new(
                    op!("ISETP.GT.U32.AND"),
                    vec![
                        Operand::r(p),
                        Operand::r(Reg::Zero(Class::P)),
                        Operand::r(r),
                        Operand::Imm(i64::from(MAX_LAYER)),
                        Operand::r(Reg::Zero(Class::P)),
                    ],
                    vec![0],
                ));
                let t = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    op!("SEL"),
                    vec![
                        Operand::r(t),
                        Operand::r(r),
                        Operand::Imm(i64::from(MAX_LAYER)),
                        Operand::not(p),
                    ],
                    vec![0],
                ));
                vals.push(t);
            } else {
                vals.push(r);
            }
        }
        let geometry = match shape {
            Shape::D1 if float => {
                // A 2D fetch at y = 0.
                let z = Reg::v(self.tmp(1), 1);
                self.mov_imm(z, 0);
                vals.push(z);
                "2D"
            }
            Shape::D1 => "1D",
            Shape::D2 => "2D",
            Shape::D3 => "3D",
            Shape::A2D => "ARRAY_2D",
        };
        let ncoords = vals.len();
        if float {
            let lod = if level {
                self.reg_src(&ops[2], 1)?
            } else {
                let t = Reg::v(self.tmp(1), 1);
                self.mov_imm(t, IMPLICIT_LOD);
                t
            };
            vals.push(lod);
        }
        let uniform_header = self.target.forms.tex_uniform_header;
        // Split into the A and B groups and copy each into an aligned register group.
        let a_len = if uniform_header {
            ncoords
        } else {
            vals.len().div_ceil(2)
        };
        let (a_vals, b_vals) = vals.split_at(a_len);
        let a = self.texture_group(a_vals);
        let b = (!b_vals.is_empty()).then(|| self.texture_group(b_vals));

        let d0 = self.tmp(2);
        let d1 = self.tmp(2);
        let mut operands = vec![
            Operand::r(Reg::v(d1, 2)),
            Operand::r(Reg::v(d0, 2)),
            Operand::r(a),
        ];
        if let Some(b) = b {
            operands.push(Operand::r(b));
        }
        let op = if uniform_header {
            let h = self.f.new_vreg(Class::UR, 2, "");
            self.push(Inst::new(
                op!("ULDC"),
                vec![
                    Operand::r(Reg::part(h, 0)),
                    Operand::Const {
                        bank: 0,
                        offset: word,
                    },
                ],
                vec![0],
            ));
            self.push(Inst::new(
                op!("UMOV"),
                vec![
                    Operand::r(Reg::part(h, 1)),
                    Operand::r(Reg::Zero(Class::UR)),
                ],
                vec![0],
            ));
            operands.push(Operand::r(Reg::v(h, 2)));
            operands.push(Operand::Imm(0));
            if float { op!("TEX.LL") } else { op!("TLD.LZ") }
        } else {
            operands.push(Operand::Imm(0));
            operands.push(Operand::Hex(word / 4));
            if float {
                op!("TEX.SCR.LL")
            } else {
                op!("TLD.SCR.LZ")
            }
        };
        operands.push(Operand::Special(geometry));
        self.push(Inst::new(op, operands, vec![0, 1]));
        for (k, d) in dsts.iter().enumerate() {
            if matches!(d, ast::Operand::Name(n) if n.is_sink()) {
                continue;
            }
            let d = self.dst(d, 1)?;
            let pair = if k < 2 { d0 } else { d1 };
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(d), Operand::r(Reg::part(pair, (k % 2) as u8))],
                vec![0],
            ));
        }
        Ok(())
    }

    /// Copies 1–4 values into a register group aligned for the texture unit (a pair, or a
    /// quad for three or four values) and returns the operand covering them.
    pub(crate) fn texture_group(&mut self, vals: &[Reg]) -> Reg {
        if let [r] = vals {
            return *r;
        }
        let width = if vals.len() == 2 { 2 } else { 4 };
        let t = self.tmp(width);
        for (k, v) in vals.iter().enumerate() {
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(Reg::part(t, k as u8)), Operand::r(*v)],
                vec![0],
            ));
        }
        Reg::Virt {
            vreg: t,
            part: 0,
            width: vals.len() as u8,
        }
    }

    /// The constant-bank word holding a texture handle: a bound texture reference's slot
    /// after the parameters, or the low word of the kernel parameter a texture object was
    /// loaded from.
    fn texture_handle(&mut self, o: &ast::Operand) -> Result<Handle, LowerError> {
        let ast::Operand::Name(n) = o else {
            return Err(unsupported(o.syntax(), "this texture handle form"));
        };
        let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
        if self.texrefs.contains(&name) && !self.regs.contains_key(&name) {
            let at = match self.texture_slots.iter().position(|(t, _)| *t == name) {
                Some(i) => self.texture_slots[i].1,
                None => {
                    let at = self.target.param_base()
                        + self.param_end.next_multiple_of(4)
                        + 4 * self.texture_slots.len() as u32;
                    self.texture_slots.push((name, at));
                    at
                }
            };
            return Ok(Handle::Cbank(at));
        }
        match self.handle_parameter_word(&name) {
            Some(word) => Ok(Handle::Cbank(word)),
            None => Err(unsupported(
                o.syntax(),
                "texture handle not loaded from a kernel parameter or a texture reference",
            )),
        }
    }

    /// The constant-bank byte offset of the 64-bit kernel parameter register `name` was
    /// loaded from (a texture or surface object; its low word is the handle), if it was
    /// (`parameter_registers`; not inside an inlined function, whose registers are its own).
    pub(crate) fn handle_parameter_word(&self, name: &str) -> Option<u32> {
        let p = self
            .inline_stack
            .is_empty()
            .then(|| self.texture_params.get(name))
            .flatten()?;
        let &(base, size) = self.params.get(p)?;
        (size == 8).then(|| self.target.param_base() + base)
    }
}

/// Kernel-body registers whose only definition is an unguarded 64-bit `ld.param` of a whole
/// kernel parameter: register → parameter (texture objects, `texture_handle`).
pub(crate) fn parameter_registers(
    defs: &rustc_hash::FxHashMap<String, ast::Instruction>,
) -> rustc_hash::FxHashMap<String, String> {
    let mut out = rustc_hash::FxHashMap::default();
    for (reg, i) in defs {
        let opcode = i.opcode().map(|t| t.text().to_string()).unwrap_or_default();
        let mods: Vec<String> = i.modifiers().map(|t| t.text().to_string()).collect();
        if opcode != "ld"
            || i.guard().is_some()
            || !mods.iter().any(|m| m == ".param")
            || !mods
                .iter()
                .any(|m| matches!(m.as_str(), ".u64" | ".b64" | ".s64"))
            || mods.iter().any(|m| m.starts_with(".v"))
        {
            continue;
        }
        let ops: Vec<ast::Operand> = i.operands().collect();
        let Some(ast::Operand::Address(a)) = ops.get(1) else {
            continue;
        };
        let inner: Vec<ast::Operand> = a.operands().collect();
        let param = match inner.as_slice() {
            [ast::Operand::Name(p)] if p.components().next().is_none() => {
                p.name().map(|t| t.text().to_string())
            }
            [ast::Operand::Binary(b)] if b.rhs().and_then(|r| r.as_int()) == Some(0) => {
                match b.lhs() {
                    Some(ast::Operand::Name(p)) => p.name().map(|t| t.text().to_string()),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(p) = param {
            out.insert(reg.clone(), p);
        }
    }
    out
}
