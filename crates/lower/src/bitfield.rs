//! Bit-field instructions: `bmsk.{clamp,wrap}.b32`, `bfe.{u32,s32}` and `bfi.b32`.
//!
//! SASS forms follow ptxas 13.0.88 (checked with `cuobjdump -sass` on sm_80 and sm_90):
//! * `bmsk.clamp.b32 d, a, b` → `BMSK d, a, b`; `.wrap` → `BMSK.W`;
//! * `bfe.u32/.s32 d, a, b, c` → `SHF.R.U32.HI`/`SHF.R.S32.HI t, RZ, pos, a` (the clamped
//!   funnel shift: a position of 32 or more leaves zeros or sign bits) + `SGXT.U32`/`SGXT d,
//!   t, len` (keep or sign-extend the low `len` bits; 0 gives 0, 32 or more keeps all; for
//!   a register length kiln builds the same from `BMSK`, see `extend_field`). PTX
//!   uses only the low byte of the position and length: ptxas extracts it with `PRMT`, kiln
//!   with `LOP3 & 0xff`. Constant positions and lengths are folded (no shift for 0, no
//!   `SGXT` for 32 or more, 0 for an empty field of `.u32`);
//! * `bfi.b32 f, a, b, c, d` → `BMSK m, pos, len` + `SHF.L.U32 t, a, pos, RZ` +
//!   `LOP3.LUT f, t, m, b, 0xe2` (`(t & m) | (b & ~m)`); with constant position and length
//!   the mask is a constant (`MOV`) and an empty field copies `b`.
//!
//! * `bfi.b64` with a constant position and length (the only form in the corpus: NVCC's
//!   `bfi.b64 d, a, b, 32, 32` packs two words): per result word, `b`'s word where the field
//!   does not reach, the word of `a << pos` where it covers the word, `LOP3.LUT 0xe2` with
//!   the word's mask where it covers part (ptxas 13.0.88 writes the 32, 32 case as two moves,
//!   and partial words with `SHF.L.U64.HI`/`PRMT`/`LOP3`).
//!
//! Refused: `bfe.u64/.s64`, `bfi.b64` with a register position or length.

use ir::{Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast;

use crate::{Cx, LowerError, Src, Ty, malformed, unsupported};

/// The low byte of a position or length operand: a constant, or a register to mask.
enum Field {
    Const(u32),
    Reg(Reg),
}

impl Cx {
    pub(crate) fn bitfield(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let ty = Self::ty_of(node, mods)?;
        match opcode {
            "bmsk" => {
                if ops.len() != 3 {
                    return Err(malformed(node, "bmsk takes 3 operands"));
                }
                let op = if mods.iter().any(|m| m == ".wrap") {
                    op!("BMSK.W")
                } else if mods.iter().any(|m| m == ".clamp") {
                    op!("BMSK")
                } else {
                    return Err(malformed(node, "bmsk without .clamp or .wrap"));
                };
                let a = self.reg_src(&ops[1], 1)?;
                let b = self.reg_src(&ops[2], 1)?;
                let d = self.dst(&ops[0], 1)?;
                self.push(Inst::new(
                    op,
                    vec![Operand::r(d), Operand::r(a), Operand::r(b)],
                    vec![0],
                ));
                Ok(())
            }
            "bfe" => {
                if ops.len() != 4 {
                    return Err(malformed(node, "bfe takes 4 operands"));
                }
                let signed = match ty {
                    Ty::U32 => false,
                    Ty::S32 => true,
                    _ => return Err(unsupported(node, "bfe of a 64-bit type")),
                };
                self.bfe(signed, ops)
            }
            "bfi" => {
                if ops.len() != 5 {
                    return Err(malformed(node, "bfi takes 5 operands"));
                }
                if ty == Ty::B64 {
                    return self.bfi64(node, ops);
                }
                if ty != Ty::B32 {
                    return Err(unsupported(node, "bfi of this type"));
                }
                self.bfi(ops)
            }
            _ => Err(unsupported(node, format!("instruction `{opcode}`"))),
        }
    }

    /// The low byte of `o` (PTX reads only bits 0..7 of bit-field positions and lengths).
    fn field(&mut self, o: &ast::Operand) -> Result<Field, LowerError> {
        if let Src::Imm(v) = self.src(o)? {
            return Ok(Field::Const(v as u32 & 0xff));
        }
        let r = self.reg_src(o, 1)?;
        let t = Reg::v(self.tmp(1), 1);
        let ff = Reg::v(self.tmp(1), 1);
        self.mov_imm(ff, 0xff);
        self.lop3(t, r, ff, 0xc0);
        Ok(Field::Reg(t))
    }

    fn bfe(&mut self, signed: bool, ops: &[ast::Operand]) -> Result<(), LowerError> {
        let a = self.reg_src(&ops[1], 1)?;
        let pos = self.field(&ops[2])?;
        let len = self.field(&ops[3])?;
        let d = self.dst(&ops[0], 1)?;
        if !signed && matches!(len, Field::Const(0)) {
            self.mov_imm(d, 0);
            return Ok(());
        }
        if !signed && matches!(pos, Field::Const(p) if p >= 32) {
            self.mov_imm(d, 0);
            return Ok(());
        }
        if let (true, Field::Const(p), Field::Const(l)) = (signed, &pos, &len)
            && let Some(v) = hir::fold::bfe_s32(*p, *l)
        {
            // ptxas folds a signed field beyond bit 31 to all ones (`hir::fold::bfe_s32`).
            self.mov_imm(d, v);
            return Ok(());
        }
        let shr = if signed {
            op!("SHF.R.S32.HI")
        } else {
            op!("SHF.R.U32.HI")
        };
        let shifted = match pos {
            Field::Const(0) => a,
            Field::Const(p) => {
                // A signed field past bit 31 is all sign bits: shifting by 31 gives them.
                let t = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    shr,
                    vec![
                        Operand::r(t),
                        Operand::rz(),
                        Operand::Imm(i64::from(p.min(31))),
                        Operand::r(a),
                    ],
                    vec![0],
                ));
                t
            }
            Field::Reg(p) => {
                let t = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    shr,
                    vec![Operand::r(t), Operand::rz(), Operand::r(p), Operand::r(a)],
                    vec![0],
                ));
                t
            }
        };
        let sgxt = if signed { op!("SGXT") } else { op!("SGXT.U32") };
        match len {
            Field::Const(l) if l >= 32 => self.mov_reg(d, shifted),
            Field::Const(0) => self.mov_imm(d, 0),
            Field::Const(l) => self.push(Inst::new(
                sgxt,
                vec![
                    Operand::r(d),
                    Operand::r(shifted),
                    Operand::Imm(i64::from(l)),
                ],
                vec![0],
            )),
            Field::Reg(l) => self.extend_field(signed, d, shifted, l),
        }
        Ok(())
    }

    /// Keeps (`.u32`) or sign-extends (`.s32`) the low `len` bits of `x` for a register
    /// length (0 gives 0, 32 or more keeps `x`). ptxas uses `SGXT d, x, len`, whose register
    /// form kiln's SASS tables do not hold yet; the same result from `BMSK` (mask of `len`
    /// low bits, clamped): `x & m`, or for `.s32` `x | ~m` when the field's top bit
    /// (`m & ~(m >> 1)`) is set in `x`.
    fn extend_field(&mut self, signed: bool, d: Reg, x: Reg, len: Reg) {
        let r = |cx: &mut Self| Reg::v(cx.tmp(1), 1);
        let m = r(self);
        self.push(Inst::new(
            op!("BMSK"),
            vec![Operand::r(m), Operand::rz(), Operand::r(len)],
            vec![0],
        ));
        if !signed {
            self.lop3(d, x, m, 0xc0);
            return;
        }
        let half = r(self);
        self.push(Inst::new(
            op!("SHF.R.U32.HI"),
            vec![
                Operand::r(half),
                Operand::rz(),
                Operand::Imm(1),
                Operand::r(m),
            ],
            vec![0],
        ));
        let top = r(self);
        self.lop3(top, m, half, 0x30);
        let sign = r(self);
        self.lop3(sign, x, top, 0xc0);
        let p = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            op!("ISETP.NE.U32.AND"),
            vec![
                Operand::r(p),
                Operand::pt(),
                Operand::r(sign),
                Operand::rz(),
                Operand::pt(),
            ],
            vec![0],
        ));
        let neg = r(self);
        self.lop3(neg, x, m, 0xf3);
        let pos = r(self);
        self.lop3(pos, x, m, 0xc0);
        self.push(Inst::new(
            op!("SEL"),
            vec![
                Operand::r(d),
                Operand::r(neg),
                Operand::r(pos),
                Operand::r(p),
            ],
            vec![0],
        ));
    }

    /// `bfi.b64` with a constant position and length (module docs).
    fn bfi64(&mut self, node: &SyntaxNode, ops: &[ast::Operand]) -> Result<(), LowerError> {
        let (Field::Const(pos), Field::Const(len)) = (self.field(&ops[3])?, self.field(&ops[4])?)
        else {
            return Err(unsupported(
                node,
                "bfi.b64 with a register position or length",
            ));
        };
        let a = self.reg_src(&ops[1], 2)?;
        let b = self.reg_src(&ops[2], 2)?;
        let mask: u64 = if pos >= 64 || len == 0 {
            0
        } else if len >= 64 {
            u64::MAX << pos
        } else {
            ((1u64 << len) - 1) << pos
        };
        // The words of `a << pos` where the mask needs them.
        let shifted_word = |cx: &mut Cx, k: u32| -> Reg {
            let word = |r: Reg, w: u32| crate::sub(r, w as u8);
            let t = Reg::v(cx.tmp(1), 1);
            match (pos, k) {
                (0, _) => return word(a, k),
                (32, 1) => return word(a, 0),
                (p, 0) if p < 32 => cx.push(Inst::new(
                    op!("SHF.L.U32"),
                    vec![
                        Operand::r(t),
                        Operand::r(word(a, 0)),
                        Operand::Imm(i64::from(p)),
                        Operand::rz(),
                    ],
                    vec![0],
                )),
                (p, 1) if p < 32 => cx.push(Inst::new(
                    op!("SHF.L.U64.HI"),
                    vec![
                        Operand::r(t),
                        Operand::r(word(a, 0)),
                        Operand::Imm(i64::from(p)),
                        Operand::r(word(a, 1)),
                    ],
                    vec![0],
                )),
                (p, 1) => cx.push(Inst::new(
                    op!("SHF.L.U32"),
                    vec![
                        Operand::r(t),
                        Operand::r(word(a, 0)),
                        Operand::Imm(i64::from(p - 32)),
                        Operand::rz(),
                    ],
                    vec![0],
                )),
                // Word 0 with a position of 32 or more has an empty mask (not reached).
                _ => cx.mov_imm(t, 0),
            }
            t
        };
        // Computed into temporaries first: `d` may be `a` or `b`.
        let mut words = [b; 2];
        for k in 0..2u32 {
            let m = (mask >> (32 * k)) as u32;
            let bk = crate::sub(b, k as u8);
            words[k as usize] = match m {
                0 => bk,
                u32::MAX => shifted_word(self, k),
                m => {
                    let s = shifted_word(self, k);
                    let mr = Reg::v(self.tmp(1), 1);
                    self.mov_imm(mr, m);
                    let t = Reg::v(self.tmp(1), 1);
                    self.push(Inst::new(
                        op!("LOP3.LUT"),
                        vec![
                            Operand::r(t),
                            Operand::r(s),
                            Operand::r(mr),
                            Operand::r(bk),
                            Operand::Hex(0xe2),
                            Operand::not(Reg::Zero(ir::Class::P)),
                        ],
                        vec![0],
                    ));
                    t
                }
            };
        }
        let t = Reg::v(self.tmp(2), 2);
        for k in 0..2u8 {
            self.mov_reg(crate::sub(t, k), words[k as usize]);
        }
        let d = self.dst(&ops[0], 2)?;
        for k in 0..2u8 {
            self.mov_reg(crate::sub(d, k), crate::sub(t, k));
        }
        Ok(())
    }

    fn bfi(&mut self, ops: &[ast::Operand]) -> Result<(), LowerError> {
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let pos = self.field(&ops[3])?;
        let len = self.field(&ops[4])?;
        let f = self.dst(&ops[0], 1)?;
        let mask = match (&pos, &len) {
            (Field::Const(p), Field::Const(l)) => {
                // ptxas's folding of immediate fields, which takes a length of 32 or more
                // modulo 32 unless the position is 0.
                let m = hir::fold::bfi_mask(*p, *l);
                if m == 0 {
                    self.mov_reg(f, b);
                    return Ok(());
                }
                let r = Reg::v(self.tmp(1), 1);
                self.mov_imm(r, m);
                r
            }
            _ => {
                let p = self.field_reg(&pos);
                let l = self.field_reg(&len);
                let m = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    op!("BMSK"),
                    vec![Operand::r(m), Operand::r(p), Operand::r(l)],
                    vec![0],
                ));
                m
            }
        };
        let shifted = match pos {
            Field::Const(0) => a,
            _ => {
                let p = self.field_reg(&pos);
                let t = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    op!("SHF.L.U32"),
                    vec![Operand::r(t), Operand::r(a), Operand::r(p), Operand::rz()],
                    vec![0],
                ));
                t
            }
        };
        // Through a temporary: `f` may be `b` or `a`.
        let t = Reg::v(self.tmp(1), 1);
        self.push(Inst::new(
            op!("LOP3.LUT"),
            vec![
                Operand::r(t),
                Operand::r(shifted),
                Operand::r(mask),
                Operand::r(b),
                Operand::Hex(0xe2),
                Operand::not(Reg::Zero(ir::Class::P)),
            ],
            vec![0],
        ));
        self.mov_reg(f, t);
        Ok(())
    }

    pub(crate) fn mov_reg(&mut self, d: Reg, s: Reg) {
        self.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(d), Operand::r(s)],
            vec![0],
        ));
    }

    /// A field as a register (constants materialized with `MOV`).
    fn field_reg(&mut self, f: &Field) -> Reg {
        match f {
            Field::Reg(r) => *r,
            Field::Const(v) => {
                let r = Reg::v(self.tmp(1), 1);
                self.mov_imm(r, *v);
                r
            }
        }
    }
}
