//! Warp-level matrix instructions on the tensor cores, as ptxas 13.0.88 writes them on sm_80,
//! sm_86, sm_89 and sm_90 (`test-data/codegen/mma.ptx`):
//!
//! * `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared{::cta}.b16 d, [a]` →
//!   `LDSM.16.M88[.2|.4]` / `LDSM.16.MT88[.2|.4]` into an aligned register group;
//! * `mma.sync.aligned.{m16n8k16,m16n8k8}.row.col.{f32,f16}.{f16,bf16}.{f16,bf16}.{f32,f16}`
//!   and `.{m16n8k8,m16n8k4}.row.col.f32.tf32.tf32.f32` → `HMMA.{16816,1688,1684}.{F32,F16}
//!   [.BF16|.TF32] d, a, b, c` with each fragment gathered into an aligned group (A: 4 or 2
//!   registers, B: 2 or 1, C and D: 4 for f32, 2 for f16) and D copied out;
//! * `mma.sync.aligned.{m16n8k32,m16n8k16}.row.col[.satfinite].s32.{s8,u8}.{s8,u8}.s32` →
//!   `IMMA.{16832,16816}.A.B[.SAT] d, a.ROW, b.COL, c` (A 4 or 2 registers, B 2 or 1, C/D 4);
//! * `mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64` → `DMMA.884` (`DMMA.8x8x4` on sm_90;
//!   A and B one double, C and D two), scoreboarded like ptxas's.
//!
//! * `stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16` (sm_90) → `STSM.16.M88[.n]` /
//!   `STSM.16.MT88[.n]`, `movmatrix.sync.aligned.m8n8.trans.b16` → `MOVM.16.MT88`.
//!
//! Other shapes and types (`m8n8k16` and 4-bit integers, `b1`, sparse `mma.sp`, sm_90's new
//! `ldmatrix`/`stmatrix` shapes) are refused. `wmma` is lowered in `wmma.rs`.

use super::*;
use ir::Sel;

impl Cx {
    pub(crate) fn ldmatrix(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let (elems, mem, op) = self.matrix_operands(node, "ldmatrix", mods, &ops[0], &ops[1])?;
        let count = elems.len() as u8;
        let t = self.tmp(count);
        self.push(Inst::new(
            sass_op(node, &op)?,
            vec![Operand::r(Reg::v(t, count)), mem],
            vec![0],
        ));
        self.scatter(t, &elems, 1)
    }

    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared{::cta}.b16 [a], {r...}` (sm_90) →
    /// `STSM.16.M88[.2|.4]` / `STSM.16.MT88[.2|.4] [a], group`.
    pub(crate) fn stmatrix(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let (elems, mem, op) = self.matrix_operands(node, "stmatrix", mods, &ops[1], &ops[0])?;
        let count = elems.len() as u8;
        let src = self.gather(&elems, 1)?;
        self.push(Inst::new(
            sass_op(node, &op)?,
            vec![mem, Operand::r(Reg::v(src, count))],
            vec![],
        ));
        Ok(())
    }

    /// What `ldmatrix` and `stmatrix` share: the register elements (`regs`, one per matrix),
    /// the shared address and the SASS name (`LDSM`/`STSM` `.16.M88`/`.16.MT88`, `.2`/`.4`).
    fn matrix_operands(
        &mut self,
        node: &SyntaxNode,
        what: &str,
        mods: &[String],
        regs: &ast::Operand,
        addr: &ast::Operand,
    ) -> Result<(Vec<ast::Operand>, Operand, String), LowerError> {
        let (count, trans) = matrix_mods(node, what, mods)?;
        if self.guard.is_some() {
            return Err(unsupported(node, format!("predicated {what}")));
        }
        let elems = vector_elements(regs)
            .filter(|e| e.len() == usize::from(count))
            .ok_or_else(|| {
                malformed(regs.syntax(), format!("{what} registers of another count"))
            })?;
        let (name, off) = self.address_name(addr)?;
        let mem = self.window_mem(addr, &name, off, false)?;
        let mut op = String::from(if what == "ldmatrix" { "LDSM" } else { "STSM" });
        op.push_str(if trans { ".16.MT88" } else { ".16.M88" });
        if count > 1 {
            op.push_str(&format!(".{count}"));
        }
        Ok((elems, mem, op))
    }

    /// `movmatrix.sync.aligned.m8n8.trans.b16 d, a` → `MOVM.16.MT88 d, a`.
    pub(crate) fn movmatrix(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let known = [".sync", ".aligned", ".m8n8", ".trans", ".b16"];
        if mods.len() != known.len() || !known.iter().all(|k| mods.iter().any(|m| m == k)) {
            return Err(unsupported(node, format!("movmatrix{}", mods.concat())));
        }
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated movmatrix"));
        }
        let a = self.reg_src(&ops[1], 1)?;
        let d = self.dst(&ops[0], 1)?;
        self.push(Inst::new(
            op!("MOVM.16.MT88"),
            vec![Operand::r(d), Operand::r(a)],
            vec![0],
        ));
        Ok(())
    }

    pub(crate) fn mma(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 4)?;
        if !self.target.forms.tensor_cores {
            return Err(unsupported(
                node,
                format!(
                    "mma on {} (its HMMA/IMMA results are scoreboarded there; kiln schedules them as fixed-latency)",
                    self.target.profile.name()
                ),
            ));
        }
        let mut shape = None;
        let mut types: Vec<&str> = Vec::new();
        let (mut row_col, mut sync_aligned, mut satfinite) = (0, 0, false);
        for m in mods {
            match m.as_str() {
                ".sync" | ".aligned" => sync_aligned += 1,
                ".row" | ".col" => row_col += 1,
                ".satfinite" => satfinite = true,
                ".m16n8k16" | ".m16n8k8" | ".m16n8k4" | ".m16n8k32" | ".m8n8k4" => {
                    shape = Some(m.as_str())
                }
                ".f32" | ".f16" | ".bf16" | ".tf32" | ".f64" | ".s8" | ".u8" | ".s32" => {
                    types.push(m.as_str())
                }
                other => return Err(unsupported(node, format!("mma{}: {other}", mods.concat()))),
            }
        }
        let refuse = || unsupported(node, format!("mma{}", mods.concat()));
        let at = |name: &str| mods.iter().position(|m| m == name);
        let row_then_col = matches!((at(".row"), at(".col")), (Some(r), Some(c)) if r < c);
        if sync_aligned != 2 || row_col != 2 || !row_then_col {
            return Err(refuse());
        }
        let [d, a, b, c] = types[..] else {
            return Err(refuse());
        };
        if d != c {
            return Err(refuse());
        }
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated mma"));
        }
        if matches!(a, ".s8" | ".u8") {
            return self.imma(node, shape, [d, a, b], satfinite, ops);
        }
        if a == ".f64" {
            if (shape, d, b, satfinite) != (Some(".m8n8k4"), ".f64", ".f64", false) {
                return Err(refuse());
            }
            let name = if self.target.forms.dmma_8x8x4 {
                "DMMA.8x8x4"
            } else {
                "DMMA.884"
            };
            return self.mma_op(node, name, ops, [4, 2, 2], 2, None);
        }
        if a != b || satfinite {
            return Err(refuse());
        }
        // (SASS shape, A registers, B registers).
        let (sass_shape, a_regs, b_regs) = match (shape, a) {
            (Some(".m16n8k16"), ".f16" | ".bf16") => ("16816", 4u8, 2u8),
            (Some(".m16n8k8"), ".f16" | ".bf16") => ("1688", 2, 1),
            (Some(".m16n8k8"), ".tf32") => ("1688", 4, 2),
            (Some(".m16n8k4"), ".tf32") => ("1684", 2, 1),
            _ => return Err(refuse()),
        };
        let acc_regs: u8 = match d {
            ".f32" => 4,
            ".f16" if a == ".f16" => 2,
            _ => return Err(refuse()),
        };
        let mut op = format!(
            "HMMA.{sass_shape}.{}",
            if d == ".f32" { "F32" } else { "F16" }
        );
        match a {
            ".bf16" => op.push_str(".BF16"),
            ".tf32" => op.push_str(".TF32"),
            _ => {}
        }
        self.mma_op(node, &op, ops, [acc_regs, a_regs, b_regs], 1, None)
    }

    /// `mma` of 8-bit integers: `IMMA.{16832,16816}.A.B[.SAT]`.
    fn imma(
        &mut self,
        node: &SyntaxNode,
        shape: Option<&str>,
        [d, a, b]: [&str; 3],
        satfinite: bool,
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let (sass_shape, a_regs, b_regs) = match shape {
            Some(".m16n8k32") => ("16832", 4, 2),
            Some(".m16n8k16") => ("16816", 2, 1),
            _ => return Err(unsupported(node, "this integer mma shape")),
        };
        if d != ".s32" || !matches!(b, ".s8" | ".u8") {
            return Err(unsupported(node, "this integer mma type"));
        }
        let ty = |t: &str| if t == ".s8" { "S8" } else { "U8" };
        let mut op = format!("IMMA.{sass_shape}.{}.{}", ty(a), ty(b));
        if satfinite {
            op.push_str(".SAT");
        }
        self.mma_op(
            node,
            &op,
            ops,
            [4, a_regs, b_regs],
            1,
            Some((Sel::Row, Sel::Col)),
        )
    }

    /// `op d, a, b, c` with fragments of `regs` = [C/D, A, B] 32-bit registers, each
    /// fragment's elements `words` registers wide (2 for f64), gathered into aligned groups;
    /// `layouts` the selectors of A and B (`IMMA`'s `.ROW`/`.COL`).
    fn mma_op(
        &mut self,
        node: &SyntaxNode,
        op: &str,
        ops: &[ast::Operand],
        [acc, a, b]: [u8; 3],
        words: u8,
        layouts: Option<(Sel, Sel)>,
    ) -> Result<(), LowerError> {
        let fragment = |o: &ast::Operand, n: u8| {
            vector_elements(o)
                .filter(|e| e.len() * usize::from(words) == usize::from(n))
                .ok_or_else(|| malformed(o.syntax(), "mma fragment of another size"))
        };
        let de = fragment(&ops[0], acc)?;
        let ae = fragment(&ops[1], a)?;
        let be = fragment(&ops[2], b)?;
        let ce = fragment(&ops[3], acc)?;
        let ra = self.gather(&ae, words)?;
        let rb = self.gather(&be, words)?;
        let rc = self.gather(&ce, words)?;
        let t = self.tmp(acc);
        let (sa, sb) = layouts.unwrap_or((Sel::None, Sel::None));
        let with = |reg: Reg, sel: Sel| Operand::Reg {
            reg,
            neg: false,
            not: false,
            abs: false,
            sel,
        };
        self.push(Inst::new(
            sass_op(node, op)?,
            vec![
                Operand::r(Reg::v(t, acc)),
                with(Reg::v(ra, a), sa),
                with(Reg::v(rb, b), sb),
                Operand::r(Reg::v(rc, acc)),
            ],
            vec![0],
        ));
        self.scatter(t, &de, words)
    }

    /// The registers `elems` (each `words` 32-bit words) copied into a new aligned group.
    fn gather(&mut self, elems: &[ast::Operand], words: u8) -> Result<VReg, LowerError> {
        let regs: Vec<Reg> = elems
            .iter()
            .map(|e| self.reg_src(e, words))
            .collect::<Result<_, _>>()?;
        Ok(self.group(regs.into_iter(), words))
    }

    /// The parts of group `t` copied out to the registers `elems` (each `words` 32-bit
    /// words; `_` skipped).
    fn scatter(&mut self, t: VReg, elems: &[ast::Operand], words: u8) -> Result<(), LowerError> {
        for (k, e) in elems.iter().enumerate() {
            if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                continue;
            }
            let d = self.dst(e, words)?;
            for j in 0..words {
                self.push(Inst::new(
                    op!("MOV"),
                    vec![
                        Operand::r(sub(d, j)),
                        Operand::r(Reg::part(t, k as u8 * words + j)),
                    ],
                    vec![0],
                ));
            }
        }
        Ok(())
    }
}

/// The matrix count (`.x1/.x2/.x4`) and `.trans` of an `ldmatrix`/`stmatrix` of `.m8n8.b16`
/// matrices in shared memory.
fn matrix_mods(node: &SyntaxNode, what: &str, mods: &[String]) -> Result<(u8, bool), LowerError> {
    let (mut count, mut trans, mut shape) = (None, false, false);
    for m in mods {
        match m.as_str() {
            ".sync" | ".aligned" | ".shared" | ".shared::cta" | ".b16" => {}
            ".m8n8" => shape = true,
            ".x1" => count = Some(1u8),
            ".x2" => count = Some(2),
            ".x4" => count = Some(4),
            ".trans" => trans = true,
            other => return Err(unsupported(node, format!("{what} modifier {other}"))),
        }
    }
    let count = count.ok_or_else(|| malformed(node, format!("{what} without .x1/.x2/.x4")))?;
    if !shape {
        return Err(unsupported(node, format!("{what} shape other than .m8n8")));
    }
    Ok((count, trans))
}

/// The elements of a vector operand `{a, b, ...}`.
fn vector_elements(o: &ast::Operand) -> Option<Vec<ast::Operand>> {
    match o {
        ast::Operand::Vector(v) => Some(v.elements().collect()),
        _ => None,
    }
}
