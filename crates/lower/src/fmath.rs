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
pub(crate) const MIN_NORMAL: &str = "f:1.175494350822287508e-38";
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

/// `div.rn.f32` (IEEE round-to-nearest division), ptxas 13.0.88's algorithm: a fast path
/// (reciprocal from `MUFU.RCP`, one Newton step, quotient and one correction in FFMA) taken
/// when `FCHK` says the operands cannot make it inexact, else a slow path that handles NaN,
/// infinity and zero operands, scales subnormal operands by 2^64, divides the significands
/// with two corrections and rounds overflowing and subnormal quotients by hand (the `.RZ`,
/// `.RM` and `.RP` roundings of the last FFMA give the sticky information). ptxas calls the
/// slow path as a subroutine (`CALL.REL.NOINC`); kiln places it inline behind a branch.
const DIV_RN_F32: &str = "
    MUFU.RCP %r, %b
    FCHK $slow, %a, %b
    FFMA %t, %r, -%b, f:1
    FFMA %y, %r, %t, %r
    FFMA %q0, %y, %a, RZ
    FFMA %e, %q0, -%b, %a
    FFMA %q, %y, %e, %q0
    @!$slow BRA END
    SHF.R.U32.HI %eb, RZ, 0x17, %b
    SHF.R.U32.HI %ea, RZ, 0x17, %a
    LOP3.LUT %eb, %eb, 0xff, RZ, #0xc0, !PT
    LOP3.LUT %ea, %ea, 0xff, RZ, #0xc0, !PT
    IADD3 %eb1, %eb, -0x1, RZ
    IADD3 %ea1, %ea, -0x1, RZ
    MOV %sa, %a
    MOV %sb, %b
    MOV %adj, RZ
    ISETP.GT.U32.AND $p0, PT, %eb1, 0xfd, PT
    ISETP.GT.U32.OR $p0, PT, %ea1, 0xfd, $p0
    @!$p0 BRA MAIN
    FSETP.GTU.FTZ.AND $p0, PT, |%a|, f:+INF, PT
    FSETP.GTU.FTZ.AND $p1, PT, |%b|, f:+INF, PT
    PLOP3.LUT $p0, PT, $p0, $p1, PT, #0xa8, #0x0
    @$p0 BRA NAN_IN
    LOP3.LUT $p0, RZ, %b, 0x7fffffff, %a, #0xc8, !PT
    @!$p0 BRA NAN_OUT
    FSETP.NEU.FTZ.AND $p2, PT, |%a|, f:+INF, PT
    FSETP.NEU.FTZ.AND $p1, PT, |%b|, f:+INF, PT
    FSETP.NEU.FTZ.AND $p0, PT, |%a|, f:+INF, PT
    PLOP3.LUT $p3, PT, $p1, $p2, PT, #0x2, #0x0
    @$p3 BRA NAN_OUT
    LOP3.LUT $p2, RZ, %a, 0x7fffffff, RZ, #0xc0, !PT
    PLOP3.LUT $p1, PT, $p1, $p2, PT, #0x2a, #0x0
    @$p1 BRA ZERO
    LOP3.LUT $p1, RZ, %b, 0x7fffffff, RZ, #0xc0, !PT
    PLOP3.LUT $p0, PT, $p0, $p1, PT, #0x2a, #0x0
    @$p0 BRA INF
    ISETP.GE.AND $p0, PT, %ea1, RZ, PT
    ISETP.GE.AND $p1, PT, %eb1, RZ, PT
    @!$p0 FFMA %sa, %a, f:1.8446744073709552e19, RZ
    @!$p0 MOV %adj, 0xffffffc0
    @!$p1 FFMA %sb, %b, f:1.8446744073709552e19, RZ
    @!$p1 IADD3 %adj, %adj, 0x40, RZ
MAIN:
    LEA %t2, %eb, 0xc0800000, 0x17
    IADD3 %bn, %sb, -%t2, RZ
    IADD3 %ea2, %ea, -0x7f, RZ
    MUFU.RCP %rb, %bn
    FADD.FTZ %nb, -%bn, -RZ
    IMAD %an, %ea2, -0x800000, %sa
    IADD3 %ex, %ea2, 0x7f, -%eb
    IADD3 %ex, %ex, %adj, RZ
    FFMA %y, %rb, %nb, f:1
    FFMA %y, %rb, %y, %rb
    FFMA %q0, %an, %y, RZ
    FFMA %r0, %nb, %q0, %an
    FFMA %q1, %y, %r0, %q0
    FFMA %r1, %nb, %q1, %an
    FFMA %q, %y, %r1, %q1
    SHF.R.U32.HI %eq, RZ, 0x17, %q
    LOP3.LUT %eq, %eq, 0xff, RZ, #0xc0, !PT
    IADD3 %e, %eq, %ex, RZ
    IADD3 %e1, %e, -0x1, RZ
    ISETP.GE.U32.AND $p0, PT, %e1, 0xfe, PT
    @!$p0 BRA NORMAL
    ISETP.GT.AND $p0, PT, %e, 0xfe, PT
    @$p0 BRA OVERFLOW
    ISETP.GE.AND $p0, PT, %e, 0x1, PT
    @$p0 BRA END
    ISETP.GE.AND $p0, PT, %e, -0x18, PT
    LOP3.LUT %q, %q, 0x80000000, RZ, #0xc0, !PT
    @!$p0 BRA END
    FFMA.RZ %qz, %y, %r1, %q1
    IADD3 %sh, %e, 0x20, RZ
    FFMA.RM %qm, %y, %r1, %q1
    ISETP.NE.AND $p2, PT, %e, RZ, PT
    LOP3.LUT %m, %qz, 0x7fffff, RZ, #0xc0, !PT
    FFMA.RP %qp, %y, %r1, %q1
    IADD3 %ne, RZ, -%e, RZ
    ISETP.NE.AND $p1, PT, %e, RZ, PT
    LOP3.LUT %m, %m, 0x800000, RZ, #0xfc, !PT
    FSETP.NEU.FTZ.AND $p0, PT, %qp, %qm, PT
    SHF.L.U32 %lost, %m, %sh, RZ
    SEL %rs, %ne, RZ, $p2
    ISETP.NE.AND $p1, PT, %lost, RZ, $p1
    SHF.R.U32.HI %rs, RZ, %rs, %m
    PLOP3.LUT $p0, PT, $p0, $p1, PT, #0xa8, #0x0
    SHF.R.U32.HI %lo, RZ, 0x1, %rs
    SEL %st, RZ, 0x1, !$p0
    LOP3.LUT %st, %st, 0x1, %lo, #0xf8, !PT
    LOP3.LUT %st, %st, %rs, RZ, #0xc0, !PT
    IADD3 %st, %lo, %st, RZ
    LOP3.LUT %q, %st, %q, RZ, #0xfc, !PT
    BRA END
OVERFLOW:
    LOP3.LUT %q, %q, 0x80000000, RZ, #0xc0, !PT
    LOP3.LUT %q, %q, 0x7f800000, RZ, #0xfc, !PT
    BRA END
NORMAL:
    IMAD %q, %ex, 0x800000, %q
    BRA END
INF:
    LOP3.LUT %q, %b, 0x80000000, %a, #0x48, !PT
    LOP3.LUT %q, %q, 0x7f800000, RZ, #0xfc, !PT
    BRA END
ZERO:
    LOP3.LUT %q, %b, 0x80000000, %a, #0x48, !PT
    BRA END
NAN_OUT:
    MOV %q, 0x7fffffff
    BRA END
NAN_IN:
    FADD.FTZ %q, %a, %b
END:
    MOV %d, %q
";

impl Cx {
    /// `div.rn.f32` (see [`DIV_RN_F32`]).
    pub(crate) fn div_rn_f32(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 3)?;
        if mods.iter().any(|m| !matches!(m.as_str(), ".rn" | ".f32")) {
            return Err(unsupported(node, format!("div{}", mods.concat())));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let b = self.reg_src(&ops[2], 1)?;
        let d = self.dst(&ops[0], 1)?;
        self.emit_seq(DIV_RN_F32, &[("%a", a), ("%b", b), ("%d", d)]);
        Ok(())
    }
}
