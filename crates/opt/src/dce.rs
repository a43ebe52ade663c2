//! Dead code elimination: instructions without side effects whose results nobody reads.

use ir::liveness::{Liveness, VSet, transfer, vindex};
use ir::{Func, Inst, Reg};

/// Base mnemonics of instructions that only compute their destinations (no memory access,
/// no control flow, no warp-level synchronisation, no trap).
const PURE: &[&str] = &[
    "MOV", "UMOV", "IMAD", "IADD3", "LOP3", "PLOP3", "SHF", "LEA", "ISETP", "FSETP", "DSETP",
    "FADD", "FMUL", "FFMA", "DADD", "DMUL", "DFMA", "FSEL", "SEL", "FMNMX", "IMNMX", "VIMNMX",
    "PRMT", "FLO", "POPC", "BREV", "MUFU", "F2I", "I2F", "F2F", "S2R", "CS2R", "S2UR", "LDC",
    "ULDC", "ULEA", "UIADD3", "ULOP3", "USHF", "UFLO", "IABS", "BMSK", "SGXT", "FRND", "P2R",
    "R2P", "HADD2", "HMUL2", "HFMA2", "FCHK", "I2FP", "F2FP", "IMNMX", "UISETP", "USEL",
];

fn removable(i: &Inst, live: &VSet) -> bool {
    if !PURE.contains(&i.base_op()) {
        return false;
    }
    let mut any = false;
    for r in i.def_regs() {
        match r {
            Reg::Virt { vreg, .. } => {
                if live.contains(vindex(vreg)) {
                    return false;
                }
                any = true;
            }
            Reg::Zero(_) => {}
            Reg::Phys { .. } => return false,
        }
    }
    any
}

/// Removes dead instructions until none is left; whether anything was removed.
pub fn dce(f: &mut Func) -> bool {
    let mut any = false;
    loop {
        let live = Liveness::compute(f);
        let mut cover = vec![0u8; f.vregs.len()];
        let mut changed = false;
        for k in 0..f.order.len() {
            let b = f.order[k];
            let insts = std::mem::take(&mut f.blocks[b].insts);
            let mut keep = vec![true; insts.len()];
            let mut l = live.live_out[k].clone();
            let mut touched = Vec::new();
            for (idx, i) in insts.iter().enumerate().rev() {
                if removable(i, &l) {
                    keep[idx] = false;
                    changed = true;
                    continue;
                }
                transfer(f, i, &mut l, &mut cover, &mut touched);
            }
            for x in touched {
                cover[x] = 0;
            }
            f.blocks[b].insts = insts
                .into_iter()
                .zip(keep)
                .filter_map(|(i, k)| k.then_some(i))
                .collect();
        }
        if !changed {
            return any;
        }
        any = true;
    }
}
