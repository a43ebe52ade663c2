//! Dead code elimination: instructions without side effects whose results nobody reads.

use ir::liveness::{Liveness, VSet, transfer, vindex};
use ir::{Func, Inst, Mnemonic, Reg};

/// Base mnemonics of instructions that only compute their destinations (no memory access,
/// no control flow, no warp-level synchronisation, no trap).
const PURE: &[Mnemonic] = &[
    Mnemonic::MOV,
    Mnemonic::UMOV,
    Mnemonic::IMAD,
    Mnemonic::IADD3,
    Mnemonic::LOP3,
    Mnemonic::PLOP3,
    Mnemonic::SHF,
    Mnemonic::LEA,
    Mnemonic::ISETP,
    Mnemonic::FSETP,
    Mnemonic::DSETP,
    Mnemonic::FADD,
    Mnemonic::FMUL,
    Mnemonic::FFMA,
    Mnemonic::DADD,
    Mnemonic::DMUL,
    Mnemonic::DFMA,
    Mnemonic::FSEL,
    Mnemonic::SEL,
    Mnemonic::FMNMX,
    Mnemonic::IMNMX,
    Mnemonic::VIMNMX,
    Mnemonic::PRMT,
    Mnemonic::FLO,
    Mnemonic::POPC,
    Mnemonic::BREV,
    Mnemonic::MUFU,
    Mnemonic::F2I,
    Mnemonic::I2F,
    Mnemonic::F2F,
    Mnemonic::S2R,
    Mnemonic::CS2R,
    Mnemonic::S2UR,
    Mnemonic::LDC,
    Mnemonic::ULDC,
    Mnemonic::ULEA,
    Mnemonic::UIADD3,
    Mnemonic::ULOP3,
    Mnemonic::USHF,
    Mnemonic::UFLO,
    Mnemonic::IABS,
    Mnemonic::BMSK,
    Mnemonic::SGXT,
    Mnemonic::FRND,
    Mnemonic::P2R,
    Mnemonic::R2P,
    Mnemonic::HADD2,
    Mnemonic::HMUL2,
    Mnemonic::HFMA2,
    Mnemonic::FCHK,
    Mnemonic::I2FP,
    Mnemonic::F2FP,
    Mnemonic::IMNMX,
    Mnemonic::UISETP,
    Mnemonic::USEL,
];

fn removable(i: &Inst, live: &VSet) -> bool {
    if !PURE.contains(&i.mnemonic()) {
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
        let mut cover = vec![ir::liveness::Cover::default(); f.vregs.len()];
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
                cover[x] = ir::liveness::Cover::default();
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
