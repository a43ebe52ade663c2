//! The calling convention of system calls (`vprintf`, `__assertfail`,
//! `cudaGraphSetConditional`): what ptxas 13.0.88
//! assumes of them, read from its sm_80/sm_90 output for kernels that print or assert
//! (`/*…*/ LEPC R20, … ; CALL.ABS.NOINC R8 ;`, see `docs/arch/codegen.md`):
//!
//! * arguments in registers from R4 upward in declaration order, a 64-bit argument on an
//!   even-aligned pair (`__assertfail`: R4:R5, R6:R7, R8, R10:R11, R12:R13); a 32-bit result
//!   in R4;
//! * `LEPC R20` puts the return address in R20:R21; the callee's address comes from the
//!   module's address table in constant bank 4 (an `R_CUDA_64` relocation against the
//!   undefined function symbol);
//! * across the call ptxas keeps values in R2, R16–R19, R22 and up, UR36:UR37 and the
//!   convergence barriers B6/B7, and re-computes predicates.
//!
//! kiln assumes less than ptxas does (never more): a value live across a call may not sit in
//! R0–R15, R20–R21, any predicate, any uniform register but UR36–UR37, or any uniform
//! predicate. The emulator clobbers what ptxas evidently does not rely on (R4–R15, R20–R21,
//! P0–P6) with recognisable garbage, so a kernel that kept a value there fails its check.

use crate::{Class, Inst, op};

/// The first argument register.
pub const FIRST_ARG: u8 = 4;
/// The register pair `LEPC` writes the return address to.
pub const RETURN_ADDRESS: u8 = 20;
/// Argument registers run up to R15: at most 12 words of arguments.
pub const LAST_ARG: u8 = 15;

/// The system functions kiln calls, by their PTX names (`cudaGraphSetConditional` takes the
/// same convention: handle in R4:R5, value in R6, no result).
pub const SYSTEM_FUNCTIONS: [&str; 3] = ["vprintf", "__assertfail", "cudaGraphSetConditional"];

/// Whether `name` is a system function kiln can call.
pub fn is_system_function(name: &str) -> bool {
    SYSTEM_FUNCTIONS.contains(&name)
}

/// Whether register `index` of `class` may be changed by a system call, as far as the
/// values kiln keeps live across one are concerned (module docs).
pub fn clobbered(class: Class, index: u32) -> bool {
    match class {
        Class::R => index <= 15 || index == 20 || index == 21,
        Class::UR => !(36..=37).contains(&index),
        Class::P | Class::UP => true,
    }
}

impl Inst {
    /// A call of a system function (`CALL.ABS.NOINC`): registers [`clobbered`] by the callee
    /// hold no value across it.
    pub fn is_system_call(&self) -> bool {
        self.op == op!("CALL.ABS.NOINC")
    }
}
