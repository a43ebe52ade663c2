//! `cvt` variants lowered from `data/cvt.tsv`: ptxas 13.0.88's own SASS for each variant and SM,
//! learned by `cargo xtask cvt-forms` and written as templates in the sequence syntax of
//! `seq.rs` (`%s` the source, `%d` the destination). A variant the table does not cover, or
//! covers with `-` (ptxas's code reads constant banks, branches, ...), stays unsupported.

use std::sync::OnceLock;

use ir::Reg;
use syntax::SyntaxNode;
use syntax::ast;

use crate::learned::Table;
use crate::{Cx, LowerError, Ty, sub, unsupported};

/// Base mnemonics whose scheduling class kiln knows (`sched::is_variable_latency`); a
/// template using another one is refused.
const SCHEDULED: &[&str] = &[
    "FRND", "I2F", "F2I", "F2F", "I2FP", "F2FP", "FADD", "FMUL", "FSETP", "ISETP", "LOP3", "PRMT",
    "SEL", "FSEL", "IMAD", "SHF", "IADD3", "HADD2",
];

/// variant (`cvt.rmi.f32.f32`) → one template per learned SM.
fn table() -> &'static Table<()> {
    static T: OnceLock<Table<()>> = OnceLock::new();
    T.get_or_init(|| {
        Table::parse(
            include_str!("../data/cvt.tsv"),
            0,
            |_| Some(()),
            cvt_template_schedulable,
        )
    })
}

/// Whether every instruction of a `cvt` template (`; `-separated, as in `data/cvt.tsv`) has
/// a scheduling class kiln knows; `lower` refuses the others (the generator of the table's
/// test kernels leaves them out the same way).
pub fn cvt_template_schedulable(t: &str) -> bool {
    t.split(';').all(|i| {
        let i = i.trim();
        let i = match i.strip_prefix('@') {
            Some(r) => r.split_once(' ').map_or("", |(_, r)| r),
            None => i,
        };
        SCHEDULED.contains(&i.split(['.', ' ']).next().unwrap_or(""))
    })
}

/// Register words of a `cvt` type (`.f64` → 2).
fn words(t: &str) -> u8 {
    if t.ends_with("64") { 2 } else { 1 }
}

impl Cx {
    /// Lowers `cvt<mods> d, a` from the table; `Ok(false)` when the table has no template for
    /// this variant and SM.
    pub(crate) fn cvt_from_table(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<bool, LowerError> {
        // The table's spelling: rounding, `.ftz`, `.sat`, then the two types.
        let mut key = String::from("cvt");
        let rounding = mods.iter().find(|m| {
            matches!(
                m.as_str(),
                ".rn" | ".rz" | ".rm" | ".rp" | ".rni" | ".rzi" | ".rmi" | ".rpi"
            )
        });
        key.extend(rounding.map(String::as_str));
        for m in [".ftz", ".sat"] {
            if mods.iter().any(|x| x == m) {
                key.push_str(m);
            }
        }
        let known = |m: &String| {
            ast::TYPES.contains(&m.as_str()) || Some(m) == rounding || m == ".ftz" || m == ".sat"
        };
        if !mods.iter().all(known) {
            return Ok(false);
        }
        for m in mods.iter().filter(|m| ast::TYPES.contains(&m.as_str())) {
            key.push_str(m);
        }
        let Some((_, text)) = table().get(&key, self.target.profile.number) else {
            return Ok(false);
        };
        let types: Vec<&str> = mods
            .iter()
            .map(String::as_str)
            .filter(|m| ast::TYPES.contains(m))
            .collect();
        let [dt, st] = types[..] else {
            return Ok(false);
        };
        // 8- and 16-bit results live in 16-bit registers (their upper half unspecified);
        // kiln refuses them in wider registers rather than guess the extension.
        let narrow = |t: &str| !t.ends_with("32") && !t.ends_with("64");
        if narrow(dt) {
            let ok = match &ops[0] {
                ast::Operand::Name(n) => n
                    .name()
                    .and_then(|t| self.regs.get(t.text()))
                    .is_some_and(|(_, ty)| matches!(ty, Ty::B16 | Ty::U16 | Ty::S16)),
                _ => false,
            };
            if !ok {
                return Err(unsupported(
                    node,
                    format!(
                        "cvt{dt}{st} into a register that is not 16-bit",
                        dt = dt,
                        st = st
                    ),
                ));
            }
        }
        let d = self.dst(&ops[0], words(dt))?;
        let s = if words(st) == 1 && self.reg_width(&ops[1]) == Some(2) {
            sub(self.reg_src(&ops[1], 2)?, 0)
        } else {
            self.reg_src(&ops[1], words(st))?
        };
        let same = |a: Reg, b: Reg| match (a, b) {
            (Reg::Virt { vreg: x, .. }, Reg::Virt { vreg: y, .. }) => x == y,
            _ => false,
        };
        if text.lines().count() > 1 && same(d, s) {
            // The template writes `%d` before its last read of `%s`: go through a temporary.
            let t = self.tmp(words(dt));
            self.emit_seq(text, &[("%d", Reg::v(t, words(dt))), ("%s", s)]);
            self.copy_words(d, t, words(dt));
        } else {
            self.emit_seq(text, &[("%d", d), ("%s", s)]);
        }
        Ok(true)
    }
}

/// instruction (`sqrt.rn.f32`, `div.rn.f64`) → one template per learned SM, from
/// `data/math.tsv` (`cargo xtask math-forms`: ptxas's routines with their slow paths inlined).
fn math_table() -> &'static Table<()> {
    static T: OnceLock<Table<()>> = OnceLock::new();
    T.get_or_init(|| Table::parse(include_str!("../data/math.tsv"), 0, |_| Some(()), |_| true))
}

impl Cx {
    /// Lowers an IEEE-rounded f32 or f64 `rcp`/`sqrt`/`div` (and the f64 approximations)
    /// from ptxas's routine; `Ok(false)` when
    /// the table has none for this instruction and SM.
    pub(crate) fn math_from_table(
        &mut self,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<bool, LowerError> {
        // The table's modifier order: rounding, `.ftz`, type (PTX accepts `div.ftz.rn.f32`).
        let rank = |m: &String| match m.as_str() {
            ".rn" | ".rz" | ".rm" | ".rp" | ".approx" => 0,
            ".ftz" => 1,
            _ => 2,
        };
        let mut sorted: Vec<&String> = mods.iter().collect();
        sorted.sort_by_key(|m| rank(m));
        let key = format!(
            "{opcode}{}",
            sorted.iter().map(|m| m.as_str()).collect::<String>()
        );
        let Some((_, text)) = math_table().get(&key, self.target.profile.number) else {
            return Ok(false);
        };
        let n = ops.len() - 1;
        // 64-bit routines work on register pairs (`%a.0`, `%a.1`).
        let w = if key.ends_with("64") { 2 } else { 1 };
        let d = self.dst(&ops[0], w)?;
        let mut binds = vec![("%d", d)];
        let a = self.reg_src(&ops[1], w)?;
        binds.push(("%a", a));
        if n == 2 {
            let b = self.reg_src(&ops[2], w)?;
            binds.push(("%b", b));
        }
        // The routine copies its operands in first and its result out last, so `%d` may be
        // one of them.
        self.emit_seq(text, &binds);
        Ok(true)
    }
}
