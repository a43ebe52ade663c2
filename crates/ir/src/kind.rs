//! What a machine opcode does, in the classes the passes that move, predicate or reason about
//! instructions share: the scheduler (what may move), the divergence analysis (what keeps a
//! uniform value uniform) and if-conversion (what may run under a guard). One list each, so
//! that a mnemonic added to one is seen by all.

use crate::{Inst, Operand};
use sass::opcode::Mnemonic;

/// Per-lane arithmetic of the vector datapath: results depend only on the operands, no side
/// effect, no memory, no lane exchange (integer, logic, shifts, moves, selects, comparisons,
/// float and double arithmetic, conversions, `MUFU`).
pub fn is_lane_arithmetic(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::IADD3
            | M::IMAD
            | M::LOP3
            | M::SHF
            | M::LEA
            | M::MOV
            | M::SEL
            | M::FSEL
            | M::ISETP
            | M::FSETP
            | M::PLOP3
            | M::FFMA
            | M::FADD
            | M::FMUL
            | M::FMNMX
            | M::IMNMX
            | M::IABS
            | M::PRMT
            | M::I2FP
            | M::F2FP
            | M::FSET
            | M::HADD2
            | M::HMUL2
            | M::HFMA2
            | M::MUFU
            | M::F2I
            | M::I2F
            | M::F2F
            | M::FRND
            | M::DADD
            | M::DMUL
            | M::DFMA
            | M::DSETP
            | M::POPC
            | M::FLO
            | M::BREV
            | M::BMSK
            | M::SGXT
    )
}

/// Arithmetic of the uniform datapath (one value per warp), side-effect free.
pub fn is_uniform_arithmetic(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::UMOV
            | M::UIADD3
            | M::UIMAD
            | M::ULOP3
            | M::USHF
            | M::ULEA
            | M::USEL
            | M::UISETP
            | M::UPLOP3
            | M::UPRMT
    )
}

/// Loads, stores and atomics of global, shared, local and generic memory (not the constant
/// banks: see [`is_indexed_constant_load`]).
pub fn is_memory_access(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::LDG
            | M::LDS
            | M::LDL
            | M::LD
            | M::STG
            | M::STS
            | M::STL
            | M::ST
            | M::ATOM
            | M::ATOMG
            | M::ATOMS
            | M::RED
            | M::REDG
    )
}

/// A memory access with a strong or device ordering (`.STRONG`, `.SYS`, `.GPU`, `.MMIO`): it
/// keeps its order with every other memory access.
pub fn is_strongly_ordered(i: &Inst) -> bool {
    use sass::opcode::Modifier;
    [
        Modifier::STRONG,
        Modifier::SYS,
        Modifier::GPU,
        Modifier::MMIO,
    ]
    .iter()
    .any(|m| i.op.has(*m))
}

/// An instruction guarded by `!PT`, which never runs (`@!PT LDS RZ, [RZ]` before `LDGSTS`):
/// it is there for its place.
pub fn never_runs(i: &Inst) -> bool {
    i.guard
        .is_some_and(|g| g.negated && matches!(g.pred, crate::Reg::Zero(_)))
}

/// A constant-bank read whose address depends on a register (`LDC R0, c[0x0][R2]`): like a
/// memory access, it may read out of bounds where its address was not made valid.
pub fn is_indexed_constant_load(i: &Inst) -> bool {
    i.mnemonic() == Mnemonic::LDC
        && i.operands
            .iter()
            .any(|o| matches!(o, Operand::ConstIndexed { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classes_are_disjoint() {
        for m in Mnemonic::all() {
            let n = [
                is_lane_arithmetic(m),
                is_uniform_arithmetic(m),
                is_memory_access(m),
            ]
            .iter()
            .filter(|b| **b)
            .count();
            assert!(n <= 1, "{} is in {n} classes", m.name());
        }
    }
}
