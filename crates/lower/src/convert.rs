//! `cvt` between integer and floating-point types (the forms not in the learned tables,
//! `cvt_table.rs`).

use super::*;

impl Cx {
    /// The 8-bit float conversions (sm_89, sm_90), one `F2FP` each as ptxas 13.0.88 writes
    /// them: `cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a` → `F2FP{.RELU}.F16.E4M3.UNPACK_B d, a`;
    /// `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b` →
    /// `F2FP.SATFINITE{.RELU}.E4M3.F32.PACK_AB_MERGE_C d, a, b, RZ` (a in the high byte);
    /// `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a` →
    /// `F2FP.SATFINITE{.RELU}.E4M3.F16.UNPACK_B_MERGE_C d, a, RZ`. `None` for other `cvt`s.
    pub(crate) fn cvt_fp8(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Option<Result<(), LowerError>> {
        let has = |m: &str| mods.iter().any(|x| x == m);
        let fp8 = |m: &String| matches!(m.as_str(), ".e4m3x2" | ".e5m2x2");
        let f8 = mods.iter().find(|m| fp8(m))?;
        let name = if f8 == ".e4m3x2" { "E4M3" } else { "E5M2" };
        let known = [
            ".rn",
            ".relu",
            ".satfinite",
            ".e4m3x2",
            ".e5m2x2",
            ".f16x2",
            ".f32",
        ];
        let refuse = || Some(Err(unsupported(node, format!("cvt{}", mods.concat()))));
        if !mods.iter().all(|m| known.contains(&m.as_str())) || !has(".rn") {
            return refuse();
        }
        let relu = if has(".relu") { ".RELU" } else { "" };
        // The destination type is the first type.
        let types: Vec<&String> = mods
            .iter()
            .filter(|m| fp8(m) || *m == ".f16x2" || *m == ".f32")
            .collect();
        let r = (|| {
            match types[..] {
                [d, s] if d == ".f16x2" && fp8(s) && !has(".satfinite") => {
                    Self::need(node, ops, 2)?;
                    let a = self.reg_src(&ops[1], 1)?;
                    let d = self.dst(&ops[0], 1)?;
                    let op = sass_op(node, &format!("F2FP{relu}.F16.{name}.UNPACK_B"))?;
                    self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
                }
                [d, s] if fp8(d) && s == ".f32" && has(".satfinite") => {
                    Self::need(node, ops, 3)?;
                    let a = self.reg_src(&ops[1], 1)?;
                    let b = self.reg_src(&ops[2], 1)?;
                    let d = self.dst(&ops[0], 1)?;
                    let op = sass_op(
                        node,
                        &format!("F2FP.SATFINITE{relu}.{name}.F32.PACK_AB_MERGE_C"),
                    )?;
                    self.push(Inst::new(
                        op,
                        vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::rz()],
                        vec![0],
                    ));
                }
                [d, s] if fp8(d) && s == ".f16x2" && has(".satfinite") => {
                    Self::need(node, ops, 2)?;
                    let a = self.reg_src(&ops[1], 1)?;
                    let d = self.dst(&ops[0], 1)?;
                    let op = sass_op(
                        node,
                        &format!("F2FP.SATFINITE{relu}.{name}.F16.UNPACK_B_MERGE_C"),
                    )?;
                    self.push(Inst::new(
                        op,
                        vec![Operand::r(d), Operand::r(a), Operand::rz()],
                        vec![0],
                    ));
                }
                _ => return Err(unsupported(node, format!("cvt{}", mods.concat()))),
            }
            Ok(())
        })();
        Some(r)
    }

    /// `cvt.rna.tf32.f32 d, a` as ptxas 13.0.88 writes it on sm_80 and sm_90: add half a
    /// tf32 unit in the last place (`0x1000`) unless `|a|` is infinite or NaN, then clear the
    /// 13 low mantissa bits (a NaN keeps its high bits).
    fn cvt_rna_tf32(&mut self, ops: &[ast::Operand]) -> Result<(), LowerError> {
        let a = self.reg_src(&ops[1], 1)?;
        let d = self.dst(&ops[0], 1)?;
        self.emit_seq(
            "MOV %h, 0x1000
             MOV %t, %a
             FSETP.GEU.AND $p, PT, |%a|, f:+INF, PT
             @!$p IADD3 %t, %a, %h, RZ
             LOP3.LUT %d, %t, 0xffffe000, RZ, #0xc0, !PT",
            &[("%a", a), ("%d", d)],
        );
        Ok(())
    }

    /// `cvt{.rn,.rz,.rm,.rp}.ftz{.sat}.f32.f64 d, a`: `F2F` (then `FADD.SAT`), then the
    /// result multiplied by `FLT_MIN` (a sign-preserving zero) where ptxas 13.0.88's code
    /// flushes it, which it decides per rounding mode (the interpreter's
    /// `f64_to_f32_flush` says where; read from ptxas's code on sm_75 to sm_90): against
    /// `|a|` for `.rn`, `.rm` and `.rp` (the thresholds of [`ptx::flush`], by the source's
    /// sign for the directed modes), against the result for `.rz`.
    fn cvt_f32_f64_ftz(
        &mut self,
        node: &SyntaxNode,
        rest: &[&str],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let sat = rest.contains(&".sat");
        let rnd = rest
            .iter()
            .find(|m| !matches!(**m, ".ftz" | ".sat"))
            .copied();
        if rest.len() != 2 + usize::from(sat) {
            return Err(unsupported(node, format!("cvt{}.f32.f64", rest.concat())));
        }
        let suffix = match rnd {
            Some(".rn") => "",
            Some(".rz") => ".RZ",
            Some(".rm") => ".RM",
            Some(".rp") => ".RP",
            _ => return Err(unsupported(node, format!("cvt{}.f32.f64", rest.concat()))),
        };
        let a = self.reg_src(&ops[1], 2)?;
        let d = self.dst(&ops[0], 1)?;
        let convert = if sat {
            format!("F2F.F32.F64{suffix} %r, %a\nFADD.SAT %d, RZ, %r")
        } else {
            format!("F2F.F32.F64{suffix} %d, %a")
        };
        let min = fmath::MIN_NORMAL;
        // A threshold of `ptx::flush` as the (low, high) words of a double.
        let words = |t: u64| (format!("{:#x}", t as u32), format!("{:#x}", t >> 32));
        let (flt_min, midpoint) = (
            words(ptx::flush::FLT_MIN),
            words(ptx::flush::ABOVE_MIDPOINT),
        );
        let rn = words(ptx::flush::RN_BELOW);
        // The flush threshold as a double (low, high words), per sign of the source.
        let threshold = |neg: (String, String), pos: (String, String)| {
            format!(
                "ISETP.LT.AND $neg, PT, %a.1, RZ, PT
                 MOV %nl, {}
                 MOV %nh, {}
                 MOV %pl, {}
                 MOV %ph, {}
                 SEL %q0.0, %nl, %pl, $neg
                 SEL %q0.1, %nh, %ph, $neg
                 DSETP.GT.AND $f, PT, %q0, |%a|, PT
                 @$f FMUL %d, %d, {min}",
                neg.0, neg.1, pos.0, pos.1
            )
        };
        let flush = match suffix {
            "" => format!(
                "MOV %q0.0, {}
                 MOV %q0.1, {}
                 DSETP.GT.AND $f, PT, %q0, |%a|, PT
                 @$f FMUL %d, %d, {min}",
                rn.0, rn.1
            ),
            ".RZ" => format!(
                "FSETP.GEU.AND $k, PT, |%d|, {min}, PT
                 @!$k FMUL %d, %d, {min}"
            ),
            ".RM" => threshold(midpoint, flt_min),
            _ => threshold(flt_min, midpoint),
        };
        self.emit_seq(&format!("{convert}\n{flush}"), &[("%a", a), ("%d", d)]);
        Ok(())
    }

    pub(crate) fn cvt(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let types: Vec<&String> = mods
            .iter()
            .filter(|m| ast::TYPES.contains(&m.as_str()))
            .collect();
        let rest: Vec<&String> = mods
            .iter()
            .filter(|m| !ast::TYPES.contains(&m.as_str()))
            .collect();
        if types.len() != 2 {
            return Err(malformed(node, "cvt needs two types"));
        }
        if types[0] == ".tf32" && types[1] == ".f32" && rest.len() == 1 && rest[0] == ".rna" {
            return self.cvt_rna_tf32(ops);
        }
        let (Some(dt), Some(st)) = (Ty::lowered(types[0]), Ty::lowered(types[1])) else {
            if self.cvt_from_table(node, mods, ops)? {
                return Ok(());
            }
            return Err(unsupported(node, format!("cvt{}{}", types[0], types[1])));
        };
        let rest: Vec<&str> = rest.iter().map(|s| s.as_str()).collect();
        let int = |t: Ty| matches!(t, Ty::U32 | Ty::S32 | Ty::B32 | Ty::U64 | Ty::S64 | Ty::B64);
        let i2fp = self.target.forms.i2fp;
        if int(dt) && int(st) && rest.is_empty() {
            let d = self.dst(&ops[0], dt.words())?;
            // PTX lets cvt's source register be wider than its type (`cvt.s64.s32 %rd2,
            // %rd1;`): the low word is the value.
            let a = if st.words() == 1 && self.reg_width(&ops[1]) == Some(2) {
                sub(self.reg_src(&ops[1], 2)?, 0)
            } else {
                self.reg_src(&ops[1], st.words())?
            };
            match (dt.words(), st.words()) {
                (1, 1) => self.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(d), Operand::r(a)],
                    vec![0],
                )),
                (1, 2) => self.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(d), Operand::r(sub(a, 0))],
                    vec![0],
                )),
                (2, 1) => {
                    // Write the high word first: `d` may not overlap `a` (different vregs).
                    if st.signed() {
                        let s = self.tmp(1);
                        self.mov_imm(Reg::v(s, 1), 31);
                        self.push(Inst::new(
                            op!("SHF.R.S32.HI"),
                            vec![
                                Operand::r(sub(d, 1)),
                                Operand::rz(),
                                Operand::r(Reg::v(s, 1)),
                                Operand::r(a),
                            ],
                            vec![0],
                        ));
                    } else {
                        self.mov_imm(sub(d, 1), 0);
                    }
                    self.push(Inst::new(
                        op!("MOV"),
                        vec![Operand::r(sub(d, 0)), Operand::r(a)],
                        vec![0],
                    ));
                }
                _ => {
                    for k in 0..2 {
                        self.push(Inst::new(
                            op!("MOV"),
                            vec![Operand::r(sub(d, k)), Operand::r(sub(a, k))],
                            vec![0],
                        ));
                    }
                }
            }
            return Ok(());
        }
        if dt == Ty::F32 && matches!(st, Ty::S32 | Ty::U32) && rest == [".rn"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 1)?;
            let op = match (i2fp, st == Ty::U32) {
                (false, false) => op!("I2F"),
                (false, true) => op!("I2F.U32"),
                (true, false) => op!("I2FP.F32.S32"),
                (true, true) => op!("I2FP.F32.U32"),
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if dt == Ty::F64 && matches!(st, Ty::S32 | Ty::U32) && rest == [".rn"] {
            let d = self.dst(&ops[0], 2)?;
            let a = self.reg_src(&ops[1], 1)?;
            let op = if st == Ty::U32 {
                op!("I2F.F64.U32")
            } else {
                op!("I2F.F64")
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if matches!(dt, Ty::S32 | Ty::U32) && st == Ty::F64 && rest == [".rzi"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 2)?;
            let op = if dt == Ty::U32 {
                op!("F2I.U32.F64.TRUNC")
            } else {
                op!("F2I.F64.TRUNC")
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if dt == Ty::F32 && st == Ty::F64 && rest.contains(&".ftz") {
            return self.cvt_f32_f64_ftz(node, &rest, ops);
        }
        if dt == Ty::F32 && st == Ty::F64 && rest == [".rn"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 2)?;
            self.push(Inst::new(
                op!("F2F.F32.F64"),
                vec![Operand::r(d), Operand::r(a)],
                vec![0],
            ));
            return Ok(());
        }
        if matches!(dt, Ty::S32 | Ty::U32) && st == Ty::F32 && rest == [".rzi"] {
            let d = self.dst(&ops[0], 1)?;
            let a = self.reg_src(&ops[1], 1)?;
            let op = if dt == Ty::U32 {
                op!("F2I.U32.TRUNC.NTZ")
            } else {
                op!("F2I.TRUNC.NTZ")
            };
            self.push(Inst::new(op, vec![Operand::r(d), Operand::r(a)], vec![0]));
            return Ok(());
        }
        if self.cvt_from_table(node, mods, ops)? {
            return Ok(());
        }
        Err(unsupported(
            node,
            format!("cvt{}{}{}", rest.concat(), types[0], types[1]),
        ))
    }
}
