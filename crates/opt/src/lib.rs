//! Machine-IR optimizations between lowering and register allocation.
//!
//! Passes, in order ([`optimize`]): [`webs::rename_webs`] first (a register written more than
//! once becomes one register per web of definitions and uses), then twice when the second
//! round has something to fuse:
//! * [`fuse::fuse_wide_add`]: `IMAD.WIDE` + 64-bit add → `IMAD.WIDE` with the addend;
//! * [`narrow::narrow`]: 64-bit values whose high word nobody reads become 32-bit values;
//! * [`facts::propagate`]: copy propagation, immediates and constant-bank words folded into
//!   the operands that can hold them (or into uniform registers), parameters reloaded near
//!   their readers;
//! * [`fuse::fuse_add`]: `IMAD`/`SHF.L` + `IADD3` → `IMAD` with addend / `LEA`, and
//!   [`fuse::fuse_wide_lea`]: a 64-bit shift + 64-bit add → `LEA` + `LEA.HI.X`;
//! * [`dce::dce`]: dead code elimination;
//! * [`addr::fold`] (once, after the rounds): `base + constant` addresses read as
//!   `[base+constant]`, the adds left dead;
//! * [`licm::hoist_constants`] (once, after the rounds): immediates moved into registers
//!   inside loops set once in the loop's preheader;
//! * [`ifconv::if_convert`] (once, after the rounds): short branches into predicated code;
//! * [`merge::merge_fallthrough`] (once, after if-conversion): a block that only falls
//!   through into a block nothing else enters becomes one block with it;
//! * [`hoist::hoist_loads`] (once, last): weak loads of loops moved up their blocks, past
//!   arithmetic, so that they issue together (without raising a block's register pressure);
//! * [`ppressure::relieve`] (also at `-O0`): predicates beyond the 7 registers kept in R
//!   registers (`SEL` after each write, `ISETP` before each read);
//! * [`reconverge::reconverge`] (also at `-O0`): `BSSY`/`BSYNC` around divergent regions
//!   (on sm_75 each `BSSY` after a `BMOV.32.CLEAR` of its barrier, as ptxas writes it).
//!
//! Every form a pass produces is checked against the SASS tables first ([`forms`]), so
//! optimization never makes a kernel unencodable. The IR stays as lowering defines it (not
//! SSA; partial and guarded writes), and every pass is sound for that: facts are
//! per 32-bit component, killed by any write, and met by intersection over paths.

#![forbid(unsafe_code)]

pub mod addr;
pub mod dce;
pub mod facts;
pub mod forms;
pub mod fuse;
pub mod hoist;
pub mod ifconv;
pub mod licm;
pub mod merge;
pub mod narrow;
pub mod ppressure;
pub mod reconverge;
pub mod uniform;
pub mod webs;

use ir::Func;
use target::Profile;

/// Optimizes `f` for the SM of `profile` at ptxas-style level `level` (0 = no optimization).
pub fn optimize(f: &mut Func, profile: &Profile, level: u8) {
    if level > 0 {
        passes(f, profile);
    }
    // Not an optimization: code with more than 7 live predicates cannot be allocated.
    ppressure::relieve(f);
    // Not an optimization either: diverged lanes meet again where ptxas's code meets them.
    reconverge::reconverge(f);
    if profile.codegen.is_some_and(|c| c.bssy_clears_barrier) {
        reconverge::clear_before_bssy(f);
    }
    debug_assert!(ir::verify(f).is_ok(), "{:?}", ir::verify(f));
}

fn passes(f: &mut Func, profile: &Profile) {
    let mut forms = forms::Forms::new(profile);
    webs::rename_webs(f);
    for round in 0..2 {
        let fused = fuse::fuse_wide_add(f, &mut forms);
        if round > 0 && !fused {
            break;
        }
        if narrow::narrow(f, &mut forms) {
            dce::dce(f);
        }
        facts::propagate(f, profile, &mut forms);
        let added = fuse::fuse_add(f, &mut forms) | fuse::fuse_wide_lea(f, &mut forms);
        dce::dce(f);
        if added && round == 0 {
            // Operands freed by the fusion may fold now.
            facts::propagate(f, profile, &mut forms);
            dce::dce(f);
        }
    }
    if addr::fold(f, &mut forms) {
        dce::dce(f);
    }
    licm::hoist_constants(f);
    ifconv::if_convert(f);
    merge::merge_fallthrough(f);
    hoist::hoist_loads(f);
    debug_assert!(ir::verify(f).is_ok(), "{:?}", ir::verify(f));
}
