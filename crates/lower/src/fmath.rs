//! f32 approximate math: `rcp`, `sqrt`, `rsqrt`, `ex2`, `lg2`, `sin`, `cos`, `tanh` with
//! `.approx`, and `div.approx`/`div.full`.
//!
//! The sequences are ptxas 13.0.88's (nvdisasm on sm_80 and sm_90, the same on both): one
//! `MUFU` per function; without `.ftz` the input is scaled out of the subnormal range first
//! (MUFU flushes subnormal inputs to zero) and the result scaled back:
//!
//! | PTX | SASS |
//! |---|---|
//! | `rcp/sqrt/rsqrt/ex2/lg2.approx.ftz.f32` | `MUFU.RCP/SQRT/RSQ/EX2/LG2` |
//! | `sin/cos.approx[.ftz].f32` | `FMUL.RZ t, a, 1/2pi` then `MUFU.SIN/COS` (revolutions) |
//! | `tanh.approx.f32` | `MUFU.TANH` |
//! | `sqrt.approx.f32` | subnormal `a`: `MUFU.SQRT(a * 2^24) * 2^-12` |
//! | `rsqrt.approx.f32` | subnormal `a`: `MUFU.RSQ(a * 2^24) * 2^12` |
//! | `lg2.approx.f32` | subnormal `a`: `MUFU.LG2(a * 2^24) - 24` |
//! | `ex2.approx.f32` | `a < -126`: `MUFU.EX2(a / 2)` squared |
//! | `rcp.approx.f32` | `s * MUFU.RCP(s * a)`, `s` = 2^24 (subnormal `a`), 1/4 (`|a| > 2^126`) |
//! | `div.approx.ftz.f32` | `MUFU.RCP(b) * a` (`FMUL.FTZ`) |
//! | `div.approx.f32` | subnormal `b`: both scaled by 2^24, then `MUFU.RCP(b) * a` |
//! | `div.full.f32` | `|b| > 2^126`: both scaled by 1/4; subnormal `b`: by 2^24; then as above |
//! | `div.full.ftz.f32` | `|b| > 2^126`: both scaled by 1/4, then `MUFU.RCP(b) * a` (`FMUL.FTZ`) |
//!
//! The emulator computes `MUFU` correctly rounded; the PTX interpreter computes `.approx`
//! exactly, so these kernels are checked against ptxas's cubin in the emulator (the corpus
//! compile stage) rather than against the interpreter.

use syntax::SyntaxNode;
use syntax::ast;

use crate::{Cx, LowerError, Ty, unsupported};

/// The smallest normal f32, 2^-126.
const MIN_NORMAL: &str = "f:1.175494350822287508e-38";
/// 2^126: beyond it a reciprocal is subnormal.
const RCP_LIMIT: &str = "f:8.50705917302346158658e+37";

impl Cx {
    /// `rcp`/`sqrt`/`rsqrt`/`ex2`/`lg2`/`sin`/`cos`/`tanh` of an f32 with `.approx`.
    pub(crate) fn approx_unary(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let has = |m: &str| mods.iter().any(|x| x == m);
        let known = mods
            .iter()
            .all(|m| matches!(m.as_str(), ".approx" | ".ftz" | ".f32"));
        if !has(".approx") || !has(".f32") || !known {
            return Err(unsupported(node, format!("{opcode}{}", mods.concat())));
        }
        if Self::ty_of(node, mods)? != Ty::F32 {
            return Err(unsupported(node, format!("{opcode}{}", mods.concat())));
        }
        let ftz = has(".ftz");
        let a = self.reg_src(&ops[1], 1)?;
        let d = self.dst(&ops[0], 1)?;
        let text = match (opcode, ftz) {
            ("rcp", true) => "MUFU.RCP %d, %a".to_string(),
            ("sqrt", true) => "MUFU.SQRT %d, %a".to_string(),
            ("rsqrt", true) => "MUFU.RSQ %d, %a".to_string(),
            ("ex2", true) => "MUFU.EX2 %d, %a".to_string(),
            ("lg2", true) => "MUFU.LG2 %d, %a".to_string(),
            ("tanh", _) => "MUFU.TANH %d, %a".to_string(),
            ("sin" | "cos", _) => format!(
                "FMUL.RZ %t, %a, f:0.15915493667125701904\nMUFU.{} %d, %t",
                opcode.to_ascii_uppercase()
            ),
            ("sqrt" | "rsqrt" | "lg2", false) => {
                let (f, fix) = match opcode {
                    "sqrt" => ("SQRT", "@!$n FMUL %d, %d, f:0.000244140625"),
                    "rsqrt" => ("RSQ", "@!$n FMUL %d, %d, f:4096"),
                    _ => ("LG2", "@!$n FADD %d, %d, f:-24"),
                };
                format!(
                    "FSETP.GEU.AND $n, PT, |%a|, {MIN_NORMAL}, PT
                     FMUL %s, %a, f:16777216
                     FSEL %t, %s, %a, !$n
                     MUFU.{f} %d, %t
                     {fix}"
                )
            }
            ("ex2", false) => "FSETP.GEU.AND $n, PT, %a, f:-126, PT
                 FMUL %h, %a, f:0.5
                 FSEL %t, %h, %a, !$n
                 MUFU.EX2 %d, %t
                 @!$n FMUL %d, %d, %d"
                .to_string(),
            ("rcp", false) => format!(
                "FSETP.GEU.AND $n, PT, |%a|, {MIN_NORMAL}, PT
                 FSETP.GT.AND $big, PT, |%a|, {RCP_LIMIT}, PT
                 MOV %s, 0x4b800000
                 FSEL %s, %s, f:1, !$n
                 FSEL %s, %s, f:0.25, !$big
                 FMUL %t, %s, %a
                 MUFU.RCP %r, %t
                 FMUL %d, %s, %r"
            ),
            _ => return Err(unsupported(node, format!("{opcode}{}", mods.concat()))),
        };
        self.emit_seq(&text, &[("%a", a), ("%d", d)]);
        Ok(())
    }

    /// `div.approx.f32`, `div.approx.ftz.f32` and `div.full.f32` (`.ftz` too).
    pub(crate) fn div_approx(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        let has = |m: &str| mods.iter().any(|x| x == m);
        let full = has(".full");
        let ftz = has(".ftz");
        let known = mods
            .iter()
            .all(|m| matches!(m.as_str(), ".approx" | ".full" | ".ftz" | ".f32"));
        if !known || full == has(".approx") {
            return Err(unsupported(node, format!("div{}", mods.concat())));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let d = self.dst(&ops[0], 1)?;
        let text = match (full, ftz) {
            (false, true) => "MUFU.RCP %r, %b\nFMUL.FTZ %d, %r, %a".to_string(),
            (false, false) => format!(
                "FSETP.GEU.AND $n, PT, |%b|, {MIN_NORMAL}, PT
                 FMUL %bs, %b, f:16777216
                 FMUL %as, %a, f:16777216
                 FSEL %bt, %bs, %b, !$n
                 FSEL %at, %as, %a, !$n
                 MUFU.RCP %r, %bt
                 FMUL %d, %r, %at"
            ),
            (true, false) => format!(
                "FSETP.GEU.AND $n, PT, |%b|, {MIN_NORMAL}, PT
                 FSETP.GT.AND $big, PT, |%b|, {RCP_LIMIT}, PT
                 FMUL %bq, %b, f:0.25
                 FMUL %aq, %a, f:0.25
                 FSEL %bt, %bq, %b, $big
                 FSEL %at, %aq, %a, $big
                 @!$n FMUL %bt, %bt, f:16777216
                 @!$n FMUL %at, %at, f:16777216
                 MUFU.RCP %r, %bt
                 FMUL %d, %r, %at"
            ),
            (true, true) => format!(
                "FSETP.GT.FTZ.AND $big, PT, |%b|, {RCP_LIMIT}, PT
                 FMUL.FTZ %aq, %a, f:0.25
                 FSEL %at, %aq, %a, $big
                 MOV %bt, %b
                 @$big FMUL.FTZ %bt, %bt, f:0.25
                 MUFU.RCP %r, %bt
                 FMUL.FTZ %d, %r, %at"
            ),
        };
        self.emit_seq(&text, &[("%a", a), ("%b", b), ("%d", d)]);
        Ok(())
    }
}

/// Whether `div` with these modifiers is a float division.
pub(crate) fn is_float_div(mods: &[String]) -> bool {
    mods.iter().any(|m| m == ".f32" || m == ".f64")
}
