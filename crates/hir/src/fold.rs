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

/// The 64-bit L2 cache policy `createpolicy.fractional.L2::<primary>[.L2::<secondary>].b64 d,
/// fraction` creates, as ptxas 13.0.88 folds it for an immediate fraction (probed on sm_80
/// and sm_90 with every priority pair and fractions from 0.0001 to 1.0: the same values on
/// both): the low word is 0; the high word is `(0x10 | primary << 1 | secondary_first) << 24
/// | (ceil(fraction * 16) - 1) << 20`, with primary `evict_unchanged` 0, `evict_first` 1,
/// `evict_last` 2, `evict_normal` 3, and the secondary bit set for `.L2::evict_first` (the
/// default secondary is `evict_unchanged`). `None` for names or fractions ptxas refuses
/// (the fraction must be in (0, 1]; only `evict_first`/`evict_unchanged` are secondaries).
pub fn createpolicy_fractional(
    primary: &str,
    secondary: Option<&str>,
    fraction: f64,
) -> Option<u64> {
    let p: u64 = match primary {
        ".L2::evict_unchanged" => 0,
        ".L2::evict_first" => 1,
        ".L2::evict_last" => 2,
        ".L2::evict_normal" => 3,
        _ => return None,
    };
    let s: u64 = match secondary {
        None | Some(".L2::evict_unchanged") => 0,
        Some(".L2::evict_first") => 1,
        _ => return None,
    };
    if !(fraction > 0.0 && fraction <= 1.0) {
        return None;
    }
    let field = ((fraction * 16.0).ceil() as u64).saturating_sub(1).min(15);
    Some(((0x10 | p << 1 | s) << 24 | field << 20) << 32)
}

#[cfg(test)]
mod policy_tests {
    use super::createpolicy_fractional as f;

    /// Values read from ptxas 13.0.88's sm_80 code (`UMOV UR5, <high word>`).
    #[test]
    fn fractional_policies_are_ptxas_values() {
        let hi = |p, s, x| f(p, s, x).map(|v| (v >> 32) as u32);
        assert_eq!(hi(".L2::evict_first", None, 1.0), Some(0x12f0_0000));
        assert_eq!(hi(".L2::evict_last", None, 0.5), Some(0x1470_0000));
        assert_eq!(
            hi(".L2::evict_last", Some(".L2::evict_first"), 0.7),
            Some(0x15b0_0000)
        );
        assert_eq!(hi(".L2::evict_normal", None, 0.25), Some(0x1630_0000));
        assert_eq!(
            hi(".L2::evict_normal", Some(".L2::evict_unchanged"), 0.9375),
            Some(0x16e0_0000)
        );
        assert_eq!(hi(".L2::evict_unchanged", None, 0.96875), Some(0x10f0_0000));
        assert_eq!(
            hi(".L2::evict_first", Some(".L2::evict_first"), 0.0001),
            Some(0x1300_0000)
        );
        assert_eq!(
            hi(".L2::evict_unchanged", Some(".L2::evict_first"), 0.0625),
            Some(0x1100_0000)
        );
        assert_eq!(f(".L2::evict_first", None, 1.0).map(|v| v as u32), Some(0));
        assert_eq!(f(".L2::evict_first", Some(".L2::evict_last"), 1.0), None);
        assert_eq!(f(".L2::evict_first", None, 0.0), None);
    }
}
