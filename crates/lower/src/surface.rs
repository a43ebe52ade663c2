//! Unformatted surface accesses: `suld.b` → `SULD.D.BA`, `sust.b` → `SUST.D.BA`.
//!
//! The forms are ptxas 13.0.88's, read from its code for every geometry, size and
//! out-of-bounds mode on sm_75, sm_80 and sm_90 (`test-data/codegen/surface.ptx`):
//!
//! * `SULD.D.BA.{1D,2D,3D,1D_ARRAY,2D_ARRAY}[.U8|.U16|.64|.128].STRONG.SM[.TRAP|.IGN]
//!   Rd, [Rc], handle` and `SUST... [Rc], Rd, handle`. The size is the whole access (a
//!   `.v4.b8` store is one 32-bit `SUST`); `.trap` is `.TRAP`, `.zero` is `.IGN`, `.clamp`
//!   has no modifier. sm_75 spells `.STRONG.CTA` (`spelling.rs`).
//! * **Coordinates** in one register group: x (bytes), then y, then z — a layered shape's
//!   layer last, where PTX writes it first (`{layer, x, y}` → x, y, layer).
//! * **Data** in one register, pair or quad by the access's size; `.b8`/`.b16` vector
//!   elements are packed into (`PRMT`) or taken out of (`PRMT` with `RZ` bytes: zero-extended)
//!   the 32-bit words the access moves.
//! * **Handle**: a surface object, the 64-bit kernel parameter the handle register was loaded
//!   from; its low word is the handle. sm_90 reads it into a uniform register (`ULDC UR4,
//!   c[0x0][0x210]`, then `UR4, 0x0`); earlier SMs name the bank-0 word by its index (`0x0,
//!   0x58` for `c[0x0][0x160]`), as for textures (`Forms::tex_uniform_header`).
//!
//! Refused with a reason: formatted accesses (`.p`), `.surfref` variables and handles not
//! loaded from a kernel parameter, cache operators, `sured` and `suq`.

use ir::{Class, Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode};

use crate::{Cx, LowerError, malformed, sass_op, unsupported};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    D1,
    D2,
    D3,
    A1D,
    A2D,
}

impl Shape {
    /// Coordinates PTX passes that count, and the SASS geometry.
    fn coords(self) -> usize {
        match self {
            Shape::D1 => 1,
            Shape::D2 | Shape::A1D => 2,
            Shape::D3 | Shape::A2D => 3,
        }
    }
    fn geometry(self) -> &'static str {
        match self {
            Shape::D1 => "1D",
            Shape::D2 => "2D",
            Shape::D3 => "3D",
            Shape::A1D => "1D_ARRAY",
            Shape::A2D => "2D_ARRAY",
        }
    }
}

impl Cx {
    pub(crate) fn surface(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let load = opcode == "suld";
        let (mut shape, mut vec, mut bits, mut oob, mut unformatted) =
            (None, 1usize, None, ".TRAP", false);
        for m in mods {
            match m.as_str() {
                ".b" => unformatted = true,
                ".1d" => shape = Some(Shape::D1),
                ".2d" => shape = Some(Shape::D2),
                ".3d" => shape = Some(Shape::D3),
                ".a1d" => shape = Some(Shape::A1D),
                ".a2d" => shape = Some(Shape::A2D),
                ".v2" => vec = 2,
                ".v4" => vec = 4,
                ".b8" => bits = Some(8usize),
                ".b16" => bits = Some(16),
                ".b32" => bits = Some(32),
                ".b64" => bits = Some(64),
                ".trap" => oob = ".TRAP",
                ".clamp" => oob = "",
                ".zero" => oob = ".IGN",
                ".p" => return Err(unsupported(node, format!("formatted {opcode}.p"))),
                _ => return Err(unsupported(node, format!("{opcode} modifier {m}"))),
            }
        }
        let (true, Some(shape), Some(bits)) = (unformatted, shape, bits) else {
            return Err(unsupported(node, format!("this {opcode} form")));
        };
        let bytes = vec * bits / 8;
        let size = match bytes {
            1 => ".U8",
            2 => ".U16",
            4 => "",
            8 => ".64",
            16 => ".128",
            _ => return Err(unsupported(node, format!("{opcode} of {bytes} bytes"))),
        };
        Self::need(node, ops, 2)?;
        let (addr_op, data_op) = if load {
            (&ops[1], &ops[0])
        } else {
            (&ops[0], &ops[1])
        };
        let ast::Operand::Address(addr) = addr_op else {
            return Err(malformed(
                addr_op.syntax(),
                format!("{opcode} operand is not `[surface, {{..}}]`"),
            ));
        };
        let inner: Vec<ast::Operand> = addr.operands().collect();
        let [handle_op, coords_op] = inner.as_slice() else {
            return Err(malformed(
                addr_op.syntax(),
                format!("{opcode} operand is not `[surface, {{..}}]`"),
            ));
        };
        let coords: Vec<ast::Operand> = match coords_op {
            ast::Operand::Vector(v) => v.elements().collect(),
            o => vec![o.clone()],
        };
        if coords.len() < shape.coords() {
            return Err(malformed(
                coords_op.syntax(),
                format!("too few {opcode} coordinates"),
            ));
        }
        let elems: Vec<ast::Operand> = match data_op {
            ast::Operand::Vector(v) => v.elements().collect(),
            o => vec![o.clone()],
        };
        if elems.len() != vec {
            return Err(malformed(
                data_op.syntax(),
                format!("{opcode} with {} values for a .v{vec} access", elems.len()),
            ));
        }
        let word = self.surface_handle(handle_op)?;

        // Coordinates: x, y, then z or the layer (PTX writes the layer first).
        let mut order: Vec<&ast::Operand> = coords[..shape.coords()].iter().collect();
        if matches!(shape, Shape::A1D | Shape::A2D) {
            order.rotate_left(1);
        }
        let mut vals = Vec::with_capacity(order.len());
        for c in order {
            vals.push(self.reg_src(c, 1)?);
        }
        // The group prints as its first register (`[R4]`, never `[R4.64]`); the whole group
        // is an implicit use.
        let group = self.texture_group(&vals);
        let coord = match group {
            Reg::Virt { vreg, .. } => Reg::part(vreg, 0),
            other => other,
        };

        let data_words = bytes.div_ceil(4) as u8;
        let data = self.tmp(data_words);
        if !load {
            self.pack_surface_data(&elems, bits, data)?;
        }
        let mut operands = if load {
            vec![
                Operand::r(Reg::v(data, data_words)),
                Operand::Mem {
                    base: coord,
                    offset: 0,
                    desc: None,
                },
            ]
        } else {
            vec![
                Operand::Mem {
                    base: coord,
                    offset: 0,
                    desc: None,
                },
                Operand::r(Reg::v(data, data_words)),
            ]
        };
        if self.target.forms.tex_uniform_header {
            let h = self.f.new_vreg(Class::UR, 1, "");
            self.push(Inst::new(
                op!("ULDC"),
                vec![
                    Operand::r(Reg::v(h, 1)),
                    Operand::Const {
                        bank: 0,
                        offset: word,
                    },
                ],
                vec![0],
            ));
            operands.push(Operand::r(Reg::v(h, 1)));
            operands.push(Operand::Imm(0));
        } else {
            operands.push(Operand::Imm(0));
            operands.push(Operand::Hex(word / 4));
        }
        let mnemonic = if load { "SULD" } else { "SUST" };
        let op = sass_op(
            node,
            &format!("{mnemonic}.D.BA.{}{size}.STRONG.SM{oob}", shape.geometry()),
        )?;
        let mut access = Inst::new(op, operands, if load { vec![0] } else { vec![] });
        if group != coord {
            access.implicit_uses.push(group);
        }
        self.push(access);
        if load {
            self.unpack_surface_data(&elems, bits, data)?;
        }
        Ok(())
    }

    /// The constant-bank byte offset of the handle's low word: the kernel parameter the
    /// surface object was loaded from.
    fn surface_handle(&mut self, o: &ast::Operand) -> Result<u32, LowerError> {
        let ast::Operand::Name(n) = o else {
            return Err(unsupported(o.syntax(), "this surface handle form"));
        };
        let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
        match self.handle_parameter_word(&name) {
            Some(word) => Ok(word),
            None => Err(unsupported(
                o.syntax(),
                "surface handle not loaded from a kernel parameter (`.surfref` variables and computed handles)",
            )),
        }
    }

    /// The PTX register holding element `k` of a store (its low `bits` are stored).
    fn surface_source(&mut self, e: &ast::Operand, bits: usize) -> Result<Reg, LowerError> {
        self.reg_src(e, if bits == 64 { 2 } else { 1 })
    }

    /// Fills `data` (the access's words) from the stored elements.
    fn pack_surface_data(
        &mut self,
        elems: &[ast::Operand],
        bits: usize,
        data: ir::VReg,
    ) -> Result<(), LowerError> {
        let srcs: Vec<Reg> = elems
            .iter()
            .map(|e| self.surface_source(e, bits))
            .collect::<Result<_, _>>()?;
        match bits {
            32 => {
                for (k, s) in srcs.iter().enumerate() {
                    self.mov_reg(Reg::part(data, k as u8), *s);
                }
            }
            64 => {
                for (k, s) in srcs.iter().enumerate() {
                    for h in 0..2u8 {
                        self.mov_reg(Reg::part(data, 2 * k as u8 + h), sub_word(*s, h));
                    }
                }
            }
            16 => {
                // Two halves per word: `PRMT w, a, 0x5410, b` (a's low half, then b's).
                for (k, pair) in srcs.chunks(2).enumerate() {
                    let w = Reg::part(data, k as u8);
                    match pair {
                        [a, b] => self.byte_permute(w, *a, 0x5410, *b),
                        [a] => self.mov_reg(w, *a),
                        _ => unreachable!("chunks of two"),
                    }
                }
            }
            8 => {
                // Bytes 0..4 of one word: pairs first (`PRMT t, a, 0x40, b`), then both.
                let w = Reg::part(data, 0);
                match srcs.as_slice() {
                    [a] => self.mov_reg(w, *a),
                    [a, b] => self.byte_permute(w, *a, 0x40, *b),
                    [a, b, c, d] => {
                        let lo = Reg::v(self.tmp(1), 1);
                        let hi = Reg::v(self.tmp(1), 1);
                        self.byte_permute(lo, *a, 0x40, *b);
                        self.byte_permute(hi, *c, 0x40, *d);
                        self.byte_permute(w, lo, 0x5410, hi);
                    }
                    _ => unreachable!("vectors of 1, 2 or 4"),
                }
            }
            _ => unreachable!("sizes checked"),
        }
        Ok(())
    }

    /// Writes the loaded elements from `data` (zero-extended `.b8`/`.b16` elements).
    fn unpack_surface_data(
        &mut self,
        elems: &[ast::Operand],
        bits: usize,
        data: ir::VReg,
    ) -> Result<(), LowerError> {
        for (k, e) in elems.iter().enumerate() {
            if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                continue;
            }
            match bits {
                32 => {
                    let d = self.dst(e, 1)?;
                    self.mov_reg(d, Reg::part(data, k as u8));
                }
                64 => {
                    let d = self.dst(e, 2)?;
                    for h in 0..2u8 {
                        self.mov_reg(sub_word(d, h), Reg::part(data, 2 * k as u8 + h));
                    }
                }
                16 | 8 => {
                    let d = self.dst(e, 1)?;
                    let per_word = 32 / bits;
                    let w = Reg::part(data, (k / per_word) as u8);
                    // Byte selectors: the element's bytes, then RZ's (byte 4: zero).
                    let first = (k % per_word) * bits / 8;
                    let sel = if bits == 8 {
                        0x4440 | first as u32
                    } else {
                        0x4400 | ((first as u32 + 1) << 4) | first as u32
                    };
                    self.byte_permute(d, w, sel, Reg::Zero(Class::R));
                }
                _ => unreachable!("sizes checked"),
            }
        }
        Ok(())
    }

    fn byte_permute(&mut self, d: Reg, a: Reg, sel: u32, b: Reg) {
        self.push(Inst::new(
            op!("PRMT"),
            vec![
                Operand::r(d),
                Operand::r(a),
                Operand::Hex(sel),
                Operand::r(b),
            ],
            vec![0],
        ));
    }
}

/// Word `h` of a two-word register.
fn sub_word(r: Reg, h: u8) -> Reg {
    match r {
        Reg::Virt { vreg, part, .. } => Reg::Virt {
            vreg,
            part: part + h,
            width: 1,
        },
        other => other,
    }
}
