//! Comparisons and selections by comparison: `setp`, `min`, `max`.

use super::*;

impl Cx {
    /// `setp`; with `dst`, the result goes to that predicate instead of `ops[0]` (`set`).
    pub(crate) fn setp(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
        dst: Option<Reg>,
    ) -> Result<(), LowerError> {
        // `setp.cmp.xor`: the comparison, then `PLOP3.LUT d, PT, t, c, PT, 0x3c` (t ^ c; 0xc3
        // for `!c`). ptxas writes `ISETP.*.XOR` with the predicate folded in, a form the
        // learned tables do not know yet (it never occurs in the corpus).
        if ops.len() == 4 && mods.iter().any(|m| m == ".xor") {
            let inner: Vec<String> = mods.iter().filter(|m| *m != ".xor").cloned().collect();
            let t = Reg::v(self.ptmp(), 1);
            self.setp(node, &inner, &ops[..3], Some(t))?;
            let d = match dst {
                Some(p) => p,
                None => self.pred_dst(&ops[0])?,
            };
            let (c, lut) = match self.pred_src(&ops[3])? {
                Operand::Reg { reg, not: true, .. } => (reg, 0xc3),
                Operand::Reg { reg, .. } => (reg, 0x3c),
                _ => return Err(unsupported(node, "setp.xor with this combining operand")),
            };
            self.push(Inst::new(
                op!("PLOP3.LUT"),
                vec![
                    Operand::r(d),
                    Operand::pt(),
                    Operand::r(t),
                    Operand::r(c),
                    Operand::pt(),
                    Operand::Hex(lut),
                    Operand::Hex(0),
                ],
                vec![0],
            ));
            return Ok(());
        }
        // `setp.cmp[.bool].type p, a, b[, {!}c]`: the combining predicate is ISETP's last
        // source with the bool op in the mnemonic (`ISETP.LT.OR P0, PT, R1, R2, P1`).
        let (bool_op, mods): (&str, Vec<String>) = {
            let b = mods
                .iter()
                .find(|m| matches!(m.as_str(), ".and" | ".or" | ".xor"));
            let op = match b.map(String::as_str) {
                Some(".and") => "AND",
                Some(".or") => "OR",
                Some(".xor") => "XOR",
                _ => "",
            };
            let rest = mods
                .iter()
                .filter(|m| !matches!(m.as_str(), ".and" | ".or" | ".xor"))
                .cloned()
                .collect();
            (op, rest)
        };
        let mods = &mods[..];
        let combine = match (ops.len(), bool_op) {
            (3, "") => Operand::pt(),
            (4, op) if !op.is_empty() => self.pred_src(&ops[3])?,
            _ => {
                return Err(unsupported(node, "setp with a second destination"));
            }
        };
        let bool_op = if bool_op.is_empty() { "AND" } else { bool_op };
        if let Some(half) = mods.last().map(String::as_str).and_then(HalfType::of) {
            return self.setp_half(node, half, mods, ops, dst, bool_op, combine);
        }
        let ty = Self::ty_of(node, mods)?;
        let cmp = mods.first().map(String::as_str).unwrap_or("");
        let p = match dst {
            Some(p) => p,
            None => self.pred_dst(&ops[0])?,
        };
        if let Some((fp, w)) = float_kind(ty) {
            let sfx = float_suffix(node, &mods[1..mods.len() - 1], false)?;
            let c = float_condition(cmp)
                .ok_or_else(|| unsupported(node, format!("setp comparison {cmp}")))?;
            let a = self.reg_src(&ops[1], w)?;
            let b = self.reg_src(&ops[2], w)?;
            self.push(Inst::new(
                sass_op(node, &format!("{fp}SETP.{c}{sfx}.{bool_op}"))?,
                vec![
                    Operand::r(p),
                    Operand::pt(),
                    Operand::r(a),
                    Operand::r(b),
                    combine,
                ],
                vec![0],
            ));
            return Ok(());
        }
        if mods.len() != 2 || ty == Ty::Pred || ty == Ty::F64 {
            return Err(unsupported(node, "this setp form"));
        }
        let unsigned = matches!(
            ty,
            Ty::U32 | Ty::B32 | Ty::U64 | Ty::B64 | Ty::U16 | Ty::B16
        );
        let c = match cmp {
            ".eq" => "EQ",
            ".ne" => "NE",
            ".lt" | ".lo" => "LT",
            ".le" | ".ls" => "LE",
            ".gt" | ".hi" => "GT",
            ".ge" | ".hs" => "GE",
            other => return Err(unsupported(node, format!("setp comparison {other}"))),
        };
        let unsigned = unsigned || matches!(cmp, ".lo" | ".ls" | ".hi" | ".hs");
        if ty.words() == 2 {
            // ptxas's pair: the low words unsigned, then the high words with `.EX` chained
            // on the low result (`ISETP.GE.U32.AND P0 ..; ISETP.GE.AND.EX P0 .., P0`).
            if ops.len() == 4 {
                return Err(unsupported(node, "64-bit setp with a combining predicate"));
            }
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let lo = Reg::v(self.ptmp(), 1);
            self.push(Inst::new(
                sass_op(node, &format!("ISETP.{c}.U32.AND"))?,
                vec![
                    Operand::r(lo),
                    Operand::pt(),
                    Operand::r(sub(a, 0)),
                    Operand::r(sub(b, 0)),
                    Operand::pt(),
                ],
                vec![0],
            ));
            self.push(Inst::new(
                sass_op(
                    node,
                    &format!("ISETP.{c}{}.AND.EX", if unsigned { ".U32" } else { "" }),
                )?,
                vec![
                    Operand::r(p),
                    Operand::pt(),
                    Operand::r(sub(a, 1)),
                    Operand::r(sub(b, 1)),
                    Operand::pt(),
                    Operand::r(lo),
                ],
                vec![0],
            ));
            return Ok(());
        }
        let mut a = self.reg_src(&ops[1], 1)?;
        let mut b = self.reg_src(&ops[2], 1)?;
        if matches!(ty, Ty::U16 | Ty::S16 | Ty::B16) {
            // 16-bit registers carry unspecified upper bits (`small.rs`).
            a = self.extend_small(a, 16, ty == Ty::S16);
            b = self.extend_small(b, 16, ty == Ty::S16);
        }
        let op = sass_op(
            node,
            &format!("ISETP.{c}{}.{bool_op}", if unsigned { ".U32" } else { "" }),
        )?;
        self.push(Inst::new(
            op,
            vec![
                Operand::r(p),
                Operand::pt(),
                Operand::r(a),
                Operand::r(b),
                combine,
            ],
            vec![0],
        ));
        Ok(())
    }

    pub(crate) fn min_max(
        &mut self,
        node: &SyntaxNode,
        min: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let ty = Self::ty_of(node, mods)?;
        if matches!(ty, Ty::S64 | Ty::U64) && mods.len() == 1 {
            // ptxas's form: the 64-bit comparison (low words unsigned, high words `.EX`
            // chained), then `SEL` of each word.
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let c = if min { "LT" } else { "GT" };
            let hi = if ty == Ty::U64 { ".U32" } else { "" };
            let lo_p = Reg::v(self.ptmp(), 1);
            let p = Reg::v(self.ptmp(), 1);
            self.push(Inst::new(
                sass_op(node, &format!("ISETP.{c}.U32.AND"))?,
                vec![
                    Operand::r(lo_p),
                    Operand::pt(),
                    Operand::r(sub(a, 0)),
                    Operand::r(sub(b, 0)),
                    Operand::pt(),
                ],
                vec![0],
            ));
            self.push(Inst::new(
                sass_op(node, &format!("ISETP.{c}{hi}.AND.EX"))?,
                vec![
                    Operand::r(p),
                    Operand::pt(),
                    Operand::r(sub(a, 1)),
                    Operand::r(sub(b, 1)),
                    Operand::pt(),
                    Operand::r(lo_p),
                ],
                vec![0],
            ));
            let t = self.tmp(2);
            for k in 0..2 {
                self.push(Inst::new(
                    op!("SEL"),
                    vec![
                        Operand::r(Reg::part(t, k)),
                        Operand::r(sub(a, k)),
                        Operand::r(sub(b, k)),
                        Operand::r(p),
                    ],
                    vec![0],
                ));
            }
            let d = self.dst(&ops[0], 2)?;
            self.copy_words(d, t, 2);
            return Ok(());
        }
        if ty == Ty::F64 && mods.len() == 1 {
            // ptxas's form: `DSETP.MAX/MIN` gives the selection (first predicate) and whether
            // the result is a NaN (second); the words are selected with `FSEL`/`SEL`, and a
            // NaN result is `b`'s high word quieted (`| 0x80000`).
            let a = self.reg_src(&ops[1], 2)?;
            let b = self.reg_src(&ops[2], 2)?;
            let (p, q) = (Reg::v(self.ptmp(), 1), Reg::v(self.ptmp(), 1));
            self.push(Inst::new(
                if min {
                    op!("DSETP.MIN.AND")
                } else {
                    op!("DSETP.MAX.AND")
                },
                vec![
                    Operand::r(p),
                    Operand::r(q),
                    Operand::r(a),
                    Operand::r(b),
                    Operand::pt(),
                ],
                vec![0, 1],
            ));
            let t = self.tmp(2);
            let (lo, hi) = (Reg::part(t, 0), Reg::part(t, 1));
            self.push(Inst::new(
                op!("FSEL"),
                vec![
                    Operand::r(hi),
                    Operand::r(sub(a, 1)),
                    Operand::r(sub(b, 1)),
                    Operand::r(p),
                ],
                vec![0],
            ));
            self.push(Inst::new(
                op!("SEL"),
                vec![
                    Operand::r(lo),
                    Operand::r(sub(a, 0)),
                    Operand::r(sub(b, 0)),
                    Operand::r(p),
                ],
                vec![0],
            ));
            let mut quiet = Inst::new(
                op!("LOP3.LUT"),
                vec![
                    Operand::r(hi),
                    Operand::r(sub(b, 1)),
                    Operand::Imm(0x80000),
                    Operand::rz(),
                    Operand::Hex(0xfc),
                    Operand::not(Reg::Zero(Class::P)),
                ],
                vec![0],
            );
            quiet.guard = Some(Guard {
                pred: q,
                negated: false,
            });
            self.push(quiet);
            let d = self.dst(&ops[0], 2)?;
            self.copy_words(d, t, 2);
            return Ok(());
        }
        let sel = if min {
            Operand::pt()
        } else {
            Operand::not(Reg::Zero(Class::P))
        };
        let op = match ty {
            Ty::F32 if mods.len() == 1 => op!("FMNMX"),
            // sm_90 has VIMNMX where sm_80 has IMNMX (ptxas's forms; PT selects the minimum).
            Ty::S32 | Ty::U32 if mods.len() == 1 => self.int_minmax_op(ty == Ty::U32),
            _ => return Err(unsupported(node, "this min/max form")),
        };
        let d = self.dst(&ops[0], 1)?;
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        self.push(Inst::new(
            op,
            vec![Operand::r(d), Operand::r(a), Operand::r(b), sel],
            vec![0],
        ));
        Ok(())
    }
}

/// The half-precision types of `setp` (`HSETP2`).
#[derive(Clone, Copy, PartialEq, Eq)]
struct HalfType {
    bf16: bool,
    pair: bool,
}

impl HalfType {
    fn of(m: &str) -> Option<HalfType> {
        Some(match m {
            ".f16" => HalfType {
                bf16: false,
                pair: false,
            },
            ".f16x2" => HalfType {
                bf16: false,
                pair: true,
            },
            ".bf16" => HalfType {
                bf16: true,
                pair: false,
            },
            ".bf16x2" => HalfType {
                bf16: true,
                pair: true,
            },
            _ => return None,
        })
    }
}

/// The SASS condition of a float comparison modifier.
fn float_condition(cmp: &str) -> Option<&'static str> {
    Some(match cmp {
        ".eq" => "EQ",
        ".ne" => "NE",
        ".lt" => "LT",
        ".le" => "LE",
        ".gt" => "GT",
        ".ge" => "GE",
        ".equ" => "EQU",
        ".neu" => "NEU",
        ".ltu" => "LTU",
        ".leu" => "LEU",
        ".gtu" => "GTU",
        ".geu" => "GEU",
        ".num" => "NUM",
        ".nan" => "NAN",
        _ => return None,
    })
}

impl Cx {
    /// `setp.cmp[.ftz][.bool].{f16,bf16} p, a, b[, c]` and the `x2` forms with `p|q`, as
    /// ptxas 13.0.88 writes them: `HSETP2.NE.AND P0, P1, R4, R5, PT` for a pair (`p` the low
    /// halves' comparison, `q` the high halves'); for a scalar (the value in the low half of
    /// its register) ptxas writes `HSETP2[.BF16_V2].GT[.FTZ].AND P0, PT, R2.H0_H0, R3.H0_H0,
    /// PT`, selector forms the learned tables know for a few comparisons only, so kiln writes
    /// the pair form `P0, PT, R2, R3, PT`: the low halves meet in the first result either way,
    /// and the high halves' result (of unspecified bits) goes to `PT`.
    #[allow(clippy::too_many_arguments)]
    fn setp_half(
        &mut self,
        node: &SyntaxNode,
        half: HalfType,
        mods: &[String],
        ops: &[ast::Operand],
        dst: Option<Reg>,
        bool_op: &str,
        combine: Operand,
    ) -> Result<(), LowerError> {
        let cmp = mods.first().map(String::as_str).unwrap_or("");
        let c = float_condition(cmp)
            .ok_or_else(|| unsupported(node, format!("setp comparison {cmp}")))?;
        let mut ftz = false;
        for m in &mods[1..mods.len() - 1] {
            match m.as_str() {
                ".ftz" if !half.bf16 => ftz = true,
                other => return Err(unsupported(node, format!("setp modifier {other}"))),
            }
        }
        let (p, q) = match (&ops[0], half.pair) {
            (ast::Operand::Binary(b), true) if b.op().is_some_and(|t| t.text() == "|") => {
                let lhs = b
                    .lhs()
                    .ok_or_else(|| unsupported(node, "setp destination pair"))?;
                let rhs = b
                    .rhs()
                    .ok_or_else(|| unsupported(node, "setp destination pair"))?;
                (self.pred_dst(&lhs)?, Operand::r(self.pred_dst(&rhs)?))
            }
            // `set` of a pair (its destination a word, not a predicate) writes both halves:
            // not here (the learned table has ptxas's code for it).
            (_, true) if self.pred_dst(&ops[0]).is_err() => {
                return Err(unsupported(node, "setp of a pair without `p|q`"));
            }
            // `setp` with one destination for a pair: the low halves' comparison (ptxas
            // 13.0.88 writes `HSETP2 P, PT, a.H0_H0, b.H0_H0`; the high halves' is not kept).
            _ => {
                let p = match dst {
                    Some(p) => p,
                    None => self.pred_dst(&ops[0])?,
                };
                (p, Operand::pt())
            }
        };
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let op = format!(
            "HSETP2{}.{c}{}.{bool_op}",
            if half.bf16 { ".BF16_V2" } else { "" },
            if ftz { ".FTZ" } else { "" }
        );
        let defs = if half.pair { vec![0, 1] } else { vec![0] };
        self.push(Inst::new(
            sass_op(node, &op)?,
            vec![Operand::r(p), q, Operand::r(a), Operand::r(b), combine],
            defs,
        ));
        Ok(())
    }
}

impl Cx {
    /// The 32-bit integer minimum/maximum: `VIMNMX` on SMs that have it (sm_90), `IMNMX`
    /// before; `.U32` for unsigned operands (ptxas's forms; a `PT` selector picks the minimum).
    pub(crate) fn int_minmax_op(&self, unsigned: bool) -> Opcode {
        match (self.target.forms.vimnmx, unsigned) {
            (true, true) => op!("VIMNMX.U32"),
            (true, false) => op!("VIMNMX"),
            (false, true) => op!("IMNMX.U32"),
            (false, false) => op!("IMNMX"),
        }
    }
}
