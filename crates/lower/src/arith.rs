//! Integer and floating-point arithmetic: `add`, `sub`, `mul`, `mad`, `fma` and the 64-bit
//! sequences they need.

use super::*;

impl Cx {
    pub(crate) fn add_sub(
        &mut self,
        node: &SyntaxNode,
        is_sub: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let ty = Self::ty_of(node, mods)?;
        if let Some((p, w)) = float_kind(ty) {
            let sfx = float_suffix(node, &mods[..mods.len() - 1], true)?;
            if let Some(c) = self.contractions.get(&node.text_range()).cloned()
                && let Some(mul) = self.contracted_muls.get(&c.mul).cloned()
            {
                // ptxas's contraction (`hir::contract`): `{p}FMA d, ±a, b, ±c` with the
                // mul's factors (unchanged since the mul, the rule makes sure).
                let factors: Vec<ast::Operand> = mul.operands().skip(1).collect();
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&factors[0], w)?;
                let b = self.reg_src(&factors[1], w)?;
                let c_reg = self.reg_src(&ops[3 - c.product_operand], w)?;
                let sign = |r: Reg, neg: bool| if neg { Operand::neg(r) } else { Operand::r(r) };
                self.push(Inst::new(
                    sass_op(node, &format!("{p}FMA{sfx}"))?,
                    vec![
                        Operand::r(d),
                        sign(a, c.negate_product),
                        Operand::r(b),
                        sign(c_reg, c.negate_addend),
                    ],
                    vec![0],
                ));
                return Ok(());
            }
            let d = self.dst(&ops[0], w)?;
            let a = self.reg_src(&ops[1], w)?;
            let b = self.reg_src(&ops[2], w)?;
            let bo = if is_sub {
                Operand::neg(b)
            } else {
                Operand::r(b)
            };
            self.push(Inst::new(
                sass_op(node, &format!("{p}ADD{sfx}"))?,
                vec![Operand::r(d), Operand::r(a), bo],
                vec![0],
            ));
            return Ok(());
        }
        if mods.len() != 1 || matches!(ty, Ty::Pred | Ty::F64) {
            return Err(unsupported(
                node,
                "this add/sub form (saturation, carry, f64)",
            ));
        }
        let w = ty.words();
        let d = self.dst(&ops[0], w)?;
        let a = self.reg_src(&ops[1], w)?;
        let b = self.reg_src(&ops[2], w)?;
        // The same words as a carry chain without carry in or out (`carry.rs`).
        self.add_words(d, a, b, w, is_sub, false, false);
        Ok(())
    }

    pub(crate) fn mul(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let ty = Self::ty_of(node, mods)?;
        if let Some((p, w)) = float_kind(ty) {
            let sfx = float_suffix(node, &mods[..mods.len() - 1], true)?;
            let d = self.dst(&ops[0], w)?;
            let a = self.reg_src(&ops[1], w)?;
            let b = self.reg_src(&ops[2], w)?;
            self.push(Inst::new(
                sass_op(node, &format!("{p}MUL{sfx}"))?,
                vec![Operand::r(d), Operand::r(a), Operand::r(b)],
                vec![0],
            ));
            return Ok(());
        }
        let mode = mods.first().map(String::as_str).unwrap_or("");
        if ty.words() == 2 && mode == ".lo" && mods.len() == 2 {
            // 64-bit low product: lo(a)*lo(b) as a wide product, plus the two cross
            // products' low words in the high word.
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            return self.mul_lo64(&ops[0], a, b, None);
        }
        if ty.words() == 2 && mode == ".hi" && mods.len() == 2 {
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let hi = self.mul_hi64(a, b, ty.signed());
            let d = self.dst(&ops[0], 2)?;
            self.copy_words(d, hi, 2);
            return Ok(());
        }
        if ty.words() != 1 || mods.len() != 2 {
            return Err(unsupported(node, "this mul form"));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        self.mul32(node, &ops[0], mode, ty, a, b)
    }

    /// The high 64 bits of the 128-bit product of 64-bit `a` and `b`, as ptxas 13.0.88 computes
    /// `mul.hi.u64` (sm_80, sm_90): with a = a1:a0, b = b1:b0, the cross products
    /// `m = a0·b1 + a1·b0` (65 bits: `IMAD.WIDE.U32` with a carry-out, the carry kept by
    /// `IMAD.X`), the carry of `hi(a0·b0) + lo(m)` (`IADD3 RZ, P, ...`), then
    /// `a1·b1 + hi(m) + carry` (`IMAD.WIDE.U32.X`). `mul.hi.s64` subtracts `a` when `b` is
    /// negative and `b` when `a` is (two `SEL`s of a 64-bit subtraction).
    pub(crate) fn mul_hi64(&mut self, a: Reg, b: Reg, signed: bool) -> VReg {
        let p = |cx: &mut Cx| Reg::v(cx.ptmp(), 1);
        let t = self.tmp(2);
        self.imad_wide(Reg::v(t, 2), sub(a, 1), sub(b, 0), false, None);
        let m = self.tmp(2);
        let c0 = p(self);
        self.push(Inst::new(
            op!("IMAD.WIDE.U32"),
            vec![
                Operand::r(Reg::v(m, 2)),
                Operand::r(c0),
                Operand::r(sub(a, 0)),
                Operand::r(sub(b, 1)),
                Operand::r(Reg::v(t, 2)),
            ],
            vec![0, 1],
        ));
        // x = hi(m) : carry of m.
        let x = self.tmp(2);
        self.push(Inst::new(
            op!("IMAD.X"),
            vec![
                Operand::r(Reg::part(x, 1)),
                Operand::rz(),
                Operand::rz(),
                Operand::rz(),
                Operand::r(c0),
            ],
            vec![0],
        ));
        self.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(Reg::part(x, 0)), Operand::r(Reg::part(m, 1))],
            vec![0],
        ));
        let lo = self.tmp(2);
        self.imad_wide(Reg::v(lo, 2), sub(a, 0), sub(b, 0), false, None);
        let c1 = p(self);
        self.push(Inst::new(
            op!("IADD3"),
            vec![
                Operand::rz(),
                Operand::r(c1),
                Operand::r(Reg::part(lo, 1)),
                Operand::r(Reg::part(m, 0)),
                Operand::rz(),
            ],
            vec![1],
        ));
        let hi = self.tmp(2);
        self.push(Inst::new(
            op!("IMAD.WIDE.U32.X"),
            vec![
                Operand::r(Reg::v(hi, 2)),
                Operand::r(sub(a, 1)),
                Operand::r(sub(b, 1)),
                Operand::r(Reg::v(x, 2)),
                Operand::r(c1),
            ],
            vec![0],
        ));
        if !signed {
            return hi;
        }
        // hi - a when b < 0, then - b when a < 0.
        let mut r = hi;
        for (neg_if, minus) in [(b, a), (a, b)] {
            let negative = p(self);
            self.push(Inst::new(
                op!("ISETP.LT.AND"),
                vec![
                    Operand::r(negative),
                    Operand::pt(),
                    Operand::r(sub(neg_if, 1)),
                    Operand::rz(),
                    Operand::pt(),
                ],
                vec![0],
            ));
            let diff = self.tmp(2);
            self.add64(
                [Reg::part(diff, 0), Reg::part(diff, 1)],
                [Operand::neg(sub(minus, 0)), Operand::not(sub(minus, 1))],
                [Operand::r(Reg::part(r, 0)), Operand::r(Reg::part(r, 1))],
            );
            let next = self.tmp(2);
            for k in 0..2 {
                self.push(Inst::new(
                    op!("SEL"),
                    vec![
                        Operand::r(Reg::part(next, k)),
                        Operand::r(Reg::part(diff, k)),
                        Operand::r(Reg::part(r, k)),
                        Operand::r(negative),
                    ],
                    vec![0],
                ));
            }
            r = next;
        }
        r
    }

    /// `d = a * b (+ c)`, the low 64 bits of 64-bit operands: lo(a)*lo(b) (+ c) as a wide
    /// product, plus the two cross products' low words in the high word.
    pub(crate) fn mul_lo64(
        &mut self,
        d: &ast::Operand,
        a: Reg,
        b: Reg,
        c: Option<Reg>,
    ) -> Result<(), LowerError> {
        {
            let w = self.tmp(2);
            self.imad_wide(Reg::v(w, 2), sub(a, 0), sub(b, 0), false, c);
            let c1 = self.tmp(2);
            self.imad_wide(Reg::v(c1, 2), sub(a, 0), sub(b, 1), false, None);
            let c2 = self.tmp(2);
            self.imad_wide(Reg::v(c2, 2), sub(a, 1), sub(b, 0), false, None);
            let hi = Reg::v(self.tmp(1), 1);
            self.push(Inst::new(
                op!("IADD3"),
                vec![
                    Operand::r(hi),
                    Operand::r(Reg::part(w, 1)),
                    Operand::r(Reg::part(c1, 0)),
                    Operand::r(Reg::part(c2, 0)),
                ],
                vec![0],
            ));
            let d = self.dst(d, 2)?;
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(sub(d, 0)), Operand::r(Reg::part(w, 0))],
                vec![0],
            ));
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(sub(d, 1)), Operand::r(hi)],
                vec![0],
            ));
            Ok(())
        }
    }

    /// 32-bit integer `mul.lo/.wide/.hi`.
    pub(crate) fn mul32(
        &mut self,
        node: &SyntaxNode,
        d_op: &ast::Operand,
        mode: &str,
        ty: Ty,
        a: Reg,
        b: Reg,
    ) -> Result<(), LowerError> {
        let ops = [d_op.clone()];
        match mode {
            ".lo" => {
                let d = self.dst(&ops[0], 1)?;
                self.push(Inst::new(
                    op!("IMAD"),
                    vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::rz()],
                    vec![0],
                ));
                Ok(())
            }
            ".wide" => {
                let d = self.dst(&ops[0], 2)?;
                self.imad_wide(d, a, b, ty.signed(), None);
                Ok(())
            }
            ".hi" => {
                let d = self.dst(&ops[0], 1)?;
                self.push(Inst::new(
                    if ty.signed() {
                        op!("IMAD.HI")
                    } else {
                        op!("IMAD.HI.U32")
                    },
                    vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::rz()],
                    vec![0],
                ));
                Ok(())
            }
            _ => Err(unsupported(node, format!("mul{mode} of {ty:?}"))),
        }
    }

    /// `d = a + b` on 64-bit values given as (low, high) operands, as ptxas adds them:
    /// `IADD3 d.lo, P, a.lo, b.lo, RZ` and `IADD3.X d.hi, a.hi, b.hi, RZ, P, !PT`. A negated
    /// low and inverted high word of `b` subtract it.
    pub(crate) fn add64(&mut self, d: [Reg; 2], a: [Operand; 2], b: [Operand; 2]) {
        let [alo, ahi] = a;
        let [blo, bhi] = b;
        let carry = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            op!("IADD3"),
            vec![Operand::r(d[0]), Operand::r(carry), alo, blo, Operand::rz()],
            vec![0, 1],
        ));
        self.push(Inst::new(
            op!("IADD3.X"),
            vec![
                Operand::r(d[1]),
                ahi,
                bhi,
                Operand::rz(),
                Operand::r(carry),
                Operand::not(Reg::Zero(Class::P)),
            ],
            vec![0],
        ));
    }

    pub(crate) fn imad_wide(&mut self, d: Reg, a: Reg, b: Reg, signed: bool, c: Option<Reg>) {
        let op = if signed {
            op!("IMAD.WIDE")
        } else {
            op!("IMAD.WIDE.U32")
        };
        let c = c.map_or(Operand::rz(), Operand::r);
        self.push(Inst::new(
            op,
            vec![Operand::r(d), Operand::r(a), Operand::r(b), c],
            vec![0],
        ));
    }

    pub(crate) fn mad(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 4)?;
        let ty = Self::ty_of(node, mods)?;
        if float_kind(ty).is_some() {
            let rounding = mods
                .iter()
                .any(|m| matches!(m.as_str(), ".rn" | ".rz" | ".rm" | ".rp"));
            if !rounding {
                // `mad.f32` without a rounding modifier (PTX for sm_1x): ptxas compiles it
                // to FFMA, i.e. fma.rn.
                let mut with_rn = vec![".rn".to_string()];
                with_rn.extend(mods.iter().cloned());
                return self.ffma(node, &with_rn, ops);
            }
            return self.ffma(node, mods, ops);
        }
        let mode = mods.first().map(String::as_str).unwrap_or("");
        if ty.words() == 2 && mode == ".lo" && mods.len() == 2 {
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let c = self.reg_src(&ops[3], 2)?;
            return self.mul_lo64(&ops[0], a, b, Some(c));
        }
        if ty.words() != 1 || mods.len() != 2 {
            return Err(unsupported(node, "this mad form"));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        match mode {
            ".lo" => {
                let c = self.reg_src(&ops[3], 1)?;
                let d = self.dst(&ops[0], 1)?;
                self.push(Inst::new(
                    op!("IMAD"),
                    vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::r(c)],
                    vec![0],
                ));
                Ok(())
            }
            ".wide" => {
                let c = self.reg_src(&ops[3], 2)?;
                let d = self.dst(&ops[0], 2)?;
                self.imad_wide(d, a, b, ty.signed(), Some(c));
                Ok(())
            }
            _ => Err(unsupported(node, format!("mad{mode} of {ty:?}"))),
        }
    }

    pub(crate) fn ffma(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 4)?;
        let ty = Self::ty_of(node, mods)?;
        let (p, w) = float_kind(ty).ok_or_else(|| unsupported(node, "fma of this type"))?;
        let sfx = float_suffix(node, &mods[..mods.len() - 1], true)?;
        let d = self.dst(&ops[0], w)?;
        let a = self.reg_src(&ops[1], w)?;
        let b = self.reg_src(&ops[2], w)?;
        let c = self.reg_src(&ops[3], w)?;
        self.push(Inst::new(
            sass_op(node, &format!("{p}FMA{sfx}"))?,
            vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::r(c)],
            vec![0],
        ));
        Ok(())
    }
}
