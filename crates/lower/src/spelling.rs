//! The SM's spelling of memory and barrier instructions.
//!
//! Lowering writes sm_80's names; an SM whose ptxas names the same operations otherwise
//! renames them here, once per kernel, after lowering (`target::Forms`: sm_75 spells weak
//! global and generic accesses `.SYS`, a `.cta`-scoped strong access `.STRONG.CTA`, shared
//! loads `LDS.U`, barriers without `.DEFER_BLOCKING`, `NANOSLEEP.WARP`, has no memory
//! descriptor and prints a 64-bit address register bare). Later passes look at mnemonics, latency classes and
//! operands, which the renaming leaves as they were.

use ir::{Class, Func, Mnemonic, Modifier, Opcode, Reg, modifier};
use target::Forms;

use crate::GLOBAL_DESC_UR;

/// Renames `f`'s instructions to the SM's spelling (a no-op for sm_80's forms). Without a
/// memory descriptor the kernel's prologue loads none (`lower_kernel`); the accesses' implicit
/// uses of it are dropped here.
pub(crate) fn respell(f: &mut Func, forms: &Forms) {
    f.bare_wide_addresses = !forms.wide_address_suffix;
    for b in f.order.clone() {
        for i in f.blocks[b].insts.iter_mut() {
            if !forms.memory_descriptor {
                i.implicit_uses.retain(|r| !is_descriptor(*r));
            }
            i.op = renamed(i.op, forms);
        }
    }
}

/// The memory descriptor `UR4` (sm_80: `ULDC.64 UR4, c[0x0][0x118]`).
fn is_descriptor(r: Reg) -> bool {
    matches!(r, Reg::Phys { class: Class::UR, index, .. } if index == GLOBAL_DESC_UR)
}

/// `op` in the SM's spelling.
fn renamed(op: Opcode, forms: &Forms) -> Opcode {
    let m = op.mnemonic();
    let mut out = op;
    if forms.strong_cta
        && op.has(Modifier::STRONG)
        && let Some(k) = op.modifiers().iter().position(|x| *x == Modifier::SM)
    {
        out = out.replaced(k, Modifier::CTA);
    }
    let global_or_generic = matches!(
        m,
        Mnemonic::LDG | Mnemonic::STG | Mnemonic::LD | Mnemonic::ST
    ) && op.has(Modifier::E);
    if forms.weak_access_sys
        && global_or_generic
        && !op.has(Modifier::STRONG)
        && !op.has(modifier!("MMIO"))
    {
        out = out.with(Modifier::SYS).unwrap_or(out);
    }
    if forms.lds_u && m == Mnemonic::LDS && !op.has(Modifier::U) {
        // An `LDS` has at most three modifiers (`LDS.U8`, `LDS.64`): one more always fits.
        let room = "an LDS opcode has room for `.U`";
        let mut u = Opcode::new(Mnemonic::LDS).with(Modifier::U).expect(room);
        for &x in out.modifiers() {
            u = u.with(x).expect(room);
        }
        out = u;
    }
    if !forms.bar_defer_blocking && m == Mnemonic::BAR {
        out = out.without(modifier!("DEFER_BLOCKING"));
    }
    if forms.nanosleep_warp && m == Mnemonic::NANOSLEEP && !op.has(modifier!("WARP")) {
        out = out.with(modifier!("WARP")).unwrap_or(out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sm75(text: &str) -> String {
        let forms = target::Profile::of(75)
            .and_then(|p| p.codegen.as_ref())
            .expect("sm_75 forms");
        renamed(Opcode::parse(text).expect("opcode"), forms).to_string()
    }

    /// Each pair read from ptxas 13.0.88's sm_80 and sm_75 code for the same PTX.
    #[test]
    fn sm75_names() {
        for (sm80, sm75_name) in [
            ("LDG.E", "LDG.E.SYS"),
            ("LDG.E.U8", "LDG.E.U8.SYS"),
            ("LDG.E.128", "LDG.E.128.SYS"),
            ("LDG.E.CONSTANT", "LDG.E.CONSTANT.SYS"),
            ("LDG.E.128.CONSTANT", "LDG.E.128.CONSTANT.SYS"),
            ("LDG.E.NA", "LDG.E.NA.SYS"),
            ("LDG.E.LTC128B", "LDG.E.LTC128B.SYS"),
            ("LDG.E.LU.64", "LDG.E.LU.64.SYS"),
            ("STG.E.EF", "STG.E.EF.SYS"),
            ("ST.E", "ST.E.SYS"),
            ("LD.E", "LD.E.SYS"),
            ("LDG.E.STRONG.SYS", "LDG.E.STRONG.SYS"),
            ("LDG.E.64.STRONG.GPU", "LDG.E.64.STRONG.GPU"),
            ("LDG.E.STRONG.SM", "LDG.E.STRONG.CTA"),
            ("LD.E.STRONG.SM", "LD.E.STRONG.CTA"),
            ("ATOMG.E.ADD.STRONG.SM", "ATOMG.E.ADD.STRONG.CTA"),
            ("RED.E.ADD.STRONG.SM", "RED.E.ADD.STRONG.CTA"),
            ("ATOMG.E.ADD.STRONG.GPU", "ATOMG.E.ADD.STRONG.GPU"),
            ("LDS", "LDS.U"),
            ("LDS.64", "LDS.U.64"),
            ("LDS.U8", "LDS.U.U8"),
            ("LDS.S8", "LDS.U.S8"),
            ("STS", "STS"),
            ("LDL", "LDL"),
            ("BAR.SYNC.DEFER_BLOCKING", "BAR.SYNC"),
            ("BAR.RED.OR.DEFER_BLOCKING", "BAR.RED.OR"),
            ("BAR.ARV", "BAR.ARV"),
            ("NANOSLEEP", "NANOSLEEP.WARP"),
        ] {
            assert_eq!(sm75(sm80), sm75_name, "{sm80}");
        }
    }

    #[test]
    fn sm80_is_unchanged() {
        let forms = target::Profile::of(80)
            .and_then(|p| p.codegen.as_ref())
            .expect("sm_80 forms");
        for t in [
            "LDG.E",
            "LDS.64",
            "BAR.SYNC.DEFER_BLOCKING",
            "LDG.E.STRONG.SM",
        ] {
            assert_eq!(renamed(Opcode::parse(t).unwrap(), forms).to_string(), t);
        }
    }
}
