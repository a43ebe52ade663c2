//! Results ptxas decides itself where the PTX leaves room or where ptxas 13.0.88 departs from
//! the PTX ISA: kiln's lowering and the interpreter both follow these, so that kiln's code
//! computes ptxas's bits and the interpreter is a reference for both. Each rule was probed
//! with the oracle; `test-data/codegen/bfi_fold.ptx` runs kiln's code against the interpreter
//! and against ptxas's cubin (crates/db/tests/codegen.rs).

/// The mask ptxas folds for `bfi.b32` with an immediate position and length (each already
/// taken modulo 256): nothing from position 32 on or for length 0; the whole word for
/// position 0 and length 32 or more; otherwise `len mod 32` bits from `pos`. The PTX ISA
/// inserts `min(len, 32 - pos)` bits instead: `bfi.b32 d, a, b, 5, 32` is `b` for ptxas
/// (an empty mask), `a`'s 27 low bits over `b` for the ISA.
pub fn bfi_mask(pos: u32, len: u32) -> u32 {
    if pos >= 32 || len == 0 {
        0
    } else if pos == 0 && len >= 32 {
        u32::MAX
    } else {
        (((1u64 << (len & 31)) - 1) << pos) as u32
    }
}

/// What ptxas folds `bfe.s32` with an immediate position of 32 or more and a nonzero
/// immediate length to: all ones, whatever the operand (probed: (32, 22), (33, 5), (40, 1),
/// (255, 255)). The PTX ISA fills the result with the operand's sign bit instead. `None`
/// where ptxas computes the field (the ISA's result).
pub fn bfe_s32(pos: u32, len: u32) -> Option<u32> {
    (pos >= 32 && len != 0).then_some(u32::MAX)
}
