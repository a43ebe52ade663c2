//! `%reserved_smem_offset_{0,1,begin,end,cap}`: offsets of the driver-reserved block of a
//! CTA's shared memory (cooperative groups keep their multi-warp barrier words there).
//!
//! ptxas 13.0.88 reads them as follows (checked by compiling a kernel that stores each one, for
//! sm_80 and sm_90, and reading `nvdisasm`):
//!
//! | register | sm_80 | sm_90 |
//! |---|---|---|
//! | `_0`, `_begin` | `S2R SR_SMEMSZ` − `c[0x0][0x114]` | `MOV R, 0x0` (a link-time symbol, resolved) |
//! | `_1` | `c[0x0][0x124]` | `LDC c[0x0][0x6c]` |
//! | `_end` | `c[0x0][0x120]` | `LDC c[0x0][0x68]` |
//! | `_cap` | `S2R SR_SMEMSZ` | `MOV R, 0x400` (a link-time symbol, resolved) |
//!
//! So before sm_90 the block ends the CTA's shared memory (`SR_SMEMSZ` is its whole size,
//! `c[0x0][0x114]` the reserved size); on sm_90 it is the first 1 KiB, before the user's
//! variables. ptxas folds the sm_80 subtraction into `IADD3 R, R, -c[0x0][0x114], RZ`; kiln
//! loads the word first (`MOV`) and subtracts the register. Any read marks the kernel
//! (`EIATTR_RESERVED_SMEM_USED`); on sm_90 the resolved symbols also shape the symbol table
//! ([`ReservedSmemUse`], `cubin::builder::ReservedSymbol`). ptxas resolves
//! `.nv.reservedSmem.cap` also for the 0x400 base of the user's shared variables, in every
//! sm_90 kernel that addresses shared memory (without `EIATTR_RESERVED_SMEM_USED`).

use ir::{Inst, Operand, Reg, op};
use target::SharedReserve;

use crate::Cx;

/// One of the `%reserved_smem_offset_*` registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReservedReg {
    Offset0,
    Offset1,
    Begin,
    End,
    Cap,
}

impl ReservedReg {
    pub(crate) fn from_name(name: &str) -> Option<ReservedReg> {
        Some(match name.strip_prefix("%reserved_smem_offset_")? {
            "0" => ReservedReg::Offset0,
            "1" => ReservedReg::Offset1,
            "begin" => ReservedReg::Begin,
            "end" => ReservedReg::End,
            "cap" => ReservedReg::Cap,
            _ => return None,
        })
    }
}

/// What a kernel reads of the reserved shared memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReservedSmemUse {
    /// Any `%reserved_smem_offset_*` register is read (`EIATTR_RESERVED_SMEM_USED`).
    pub used: bool,
    /// sm_90: `%reserved_smem_offset_0` is read (ptxas resolves `.nv.reservedSmem.offset0`).
    pub offset0: bool,
    /// sm_90: `%reserved_smem_offset_begin` is read (`.nv.reservedSmem.begin`).
    pub begin: bool,
    /// sm_90: the code uses the 0x400 ptxas links through `.nv.reservedSmem.cap`:
    /// `%reserved_smem_offset_cap`, and the base of the user's shared memory (the window base
    /// `(SR_CgaCtaId << 24) + 0x400`), also in kernels that read no reserved register.
    pub cap: bool,
}

/// `c[0x0][0x114]`: bytes of reserved shared memory per CTA (sm_80).
const RESERVED_SIZE_CBANK: u32 = 0x114;
/// sm_90: where ptxas's code puts the user's shared variables (the block's end).
const SM90_RESERVED_CAP: i64 = target::RESERVED_SHARED_BYTES as i64;

impl Cx {
    /// `dst` = the value of `r` (a 32-bit register).
    pub(crate) fn reserved_smem(&mut self, dst: Reg, r: ReservedReg) {
        self.reserved_smem.used = true;
        let driver = self.target.driver;
        let (end, offset1) = (driver.reserved_smem_end, driver.reserved_smem_offset1);
        let reserved_first = self.target.profile.shared_reserve == SharedReserve::First;
        match r {
            ReservedReg::Offset1 => self.const_load(Operand::r(dst), offset1, 1),
            ReservedReg::End => self.const_load(Operand::r(dst), end, 1),
            ReservedReg::Offset0 | ReservedReg::Begin | ReservedReg::Cap if reserved_first => {
                let v = match r {
                    ReservedReg::Offset0 => {
                        self.reserved_smem.offset0 = true;
                        0
                    }
                    ReservedReg::Begin => {
                        self.reserved_smem.begin = true;
                        0
                    }
                    _ => {
                        self.reserved_smem.cap = true;
                        SM90_RESERVED_CAP
                    }
                };
                // The immediate ptxas's linker writes (`MOV R, 0x0`, not `RZ`).
                self.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(dst), Operand::Imm(v)],
                    vec![0],
                ));
            }
            ReservedReg::Cap => self.push(Inst::new(
                op!("S2R"),
                vec![Operand::r(dst), Operand::Special("SR_SMEMSZ")],
                vec![0],
            )),
            ReservedReg::Offset0 | ReservedReg::Begin => {
                let size = Reg::v(self.tmp(1), 1);
                let reserved = Reg::v(self.tmp(1), 1);
                self.push(Inst::new(
                    op!("S2R"),
                    vec![Operand::r(size), Operand::Special("SR_SMEMSZ")],
                    vec![0],
                ));
                self.const_load(Operand::r(reserved), RESERVED_SIZE_CBANK, 1);
                self.push(Inst::new(
                    op!("IADD3"),
                    vec![
                        Operand::r(dst),
                        Operand::r(size),
                        Operand::neg(reserved),
                        Operand::rz(),
                    ],
                    vec![0],
                ));
            }
        }
    }
}
