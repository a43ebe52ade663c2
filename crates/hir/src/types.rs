//! PTX types and the relaxed operand type-checking rules (PTX ISA 9.0 §6.4.1 "Operand Type
//! Information"; the exact behaviour was probed against ptxas 13.0.88).

/// A register or instruction type, reduced to what the checks need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ty {
    pub class: Class,
    /// Bits (predicates: 1; packed `.f16x2`: 32).
    pub bits: u32,
    /// Packed half pairs (`.f16x2`, `.bf16x2`): only `.b32` or the same type fits.
    pub packed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    Bit,
    Unsigned,
    Signed,
    Float,
    /// bf16 and bf16x2 (distinct from f16 for matching).
    BFloat,
    Pred,
    /// Opaque types (.texref, .samplerref, .surfref) and anything else.
    Other,
}

impl Ty {
    /// The checks' view of a type modifier (`ptx::Type` parses it); `None` for the types the
    /// operand checks do not classify (`.tf32`, the packed 8-bit floats, `.u16x2`/`.s16x2`).
    pub fn parse(s: &str) -> Option<Ty> {
        use ptx::Type as T;
        let t = T::parse(s)?;
        let class = match t {
            T::B8 | T::B16 | T::B32 | T::B64 | T::B128 => Class::Bit,
            T::U8 | T::U16 | T::U32 | T::U64 => Class::Unsigned,
            T::S8 | T::S16 | T::S32 | T::S64 => Class::Signed,
            T::F16 | T::F16x2 | T::F32 | T::F64 => Class::Float,
            T::Bf16 | T::Bf16x2 => Class::BFloat,
            T::Pred => Class::Pred,
            T::E4m3x2 | T::E5m2x2 | T::Tf32 | T::U16x2 | T::S16x2 => return None,
        };
        Some(Ty {
            class,
            bits: if t == T::Pred { 1 } else { t.bits() },
            packed: matches!(t, T::F16x2 | T::Bf16x2),
        })
    }

    pub fn is_int(self) -> bool {
        matches!(self.class, Class::Bit | Class::Unsigned | Class::Signed)
    }

    pub fn is_float(self) -> bool {
        matches!(self.class, Class::Float | Class::BFloat)
    }

    /// Twice as wide (for `.wide` results).
    pub fn doubled(self) -> Ty {
        Ty {
            bits: self.bits * 2,
            ..self
        }
    }
}

/// How an operand must relate to the instruction type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Same size, compatible class (arithmetic operands).
    Exact,
    /// A register at least as wide, same class family (`ld` destinations, `st` sources,
    /// `cvt` sources): integers may be wider; floats must be exact.
    Wider,
    /// `cvt` destinations: integer results narrower than 32 bits may sit in wider integer
    /// registers; everything else exact.
    CvtDest,
}

/// Whether a register of type `reg` may stand where the instruction expects `want`.
pub fn fits(want: Ty, reg: Ty, fit: Fit) -> bool {
    if want.class == Class::Pred || reg.class == Class::Pred {
        return want.class == reg.class;
    }
    if want.class == Class::Other || reg.class == Class::Other {
        return true;
    }
    let class_ok = match want.class {
        // A bit-size instruction type accepts any register of the right size.
        Class::Bit => true,
        Class::Unsigned | Class::Signed => reg.is_int(),
        Class::Float | Class::BFloat => {
            if want.packed {
                reg.class == Class::Bit || (reg.packed && reg.class == want.class)
            } else {
                reg.class == Class::Bit || (reg.class == want.class && !reg.packed)
            }
        }
        Class::Pred | Class::Other => true,
    };
    if !class_ok {
        return false;
    }
    match fit {
        Fit::Exact => reg.bits == want.bits,
        Fit::Wider => {
            // A float value may be loaded into a wider .b register (ld.f32 into .b64 is
            // accepted), but not into a wider float register.
            if want.is_float() && reg.class != Class::Bit {
                reg.bits == want.bits
            } else {
                reg.bits >= want.bits
            }
        }
        Fit::CvtDest => {
            if want.is_int() && want.bits < 32 {
                reg.bits >= want.bits
            } else {
                reg.bits == want.bits
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Ty {
        Ty::parse(s).unwrap()
    }

    /// Each case was checked with ptxas 13.0.88 (see the module docs).
    #[test]
    fn relaxed_rules_match_ptxas() {
        // add.u32 with a .u64 register: mismatch; with .s32: fine; with .f32: mismatch.
        assert!(!fits(t(".u32"), t(".u64"), Fit::Exact));
        assert!(fits(t(".u32"), t(".s32"), Fit::Exact));
        assert!(!fits(t(".u32"), t(".f32"), Fit::Exact));
        // and.b32 with .f32: fine.
        assert!(fits(t(".b32"), t(".f32"), Fit::Exact));
        // add.f16 with .u32: mismatch; add.u16 with .b16: fine.
        assert!(!fits(t(".f16"), t(".u32"), Fit::Exact));
        assert!(fits(t(".u16"), t(".b16"), Fit::Exact));
        // add.f16x2 with .u32 registers: mismatch.
        assert!(!fits(t(".f16x2"), t(".u32"), Fit::Exact));
        assert!(fits(t(".f16x2"), t(".b32"), Fit::Exact));
        // ld.global.u32 into .u64: fine; ld.global.u64 into .u32: mismatch; ld.u32 into .f32 and
        // ld.f32 into .u32 or .f64: mismatch.
        assert!(fits(t(".u32"), t(".u64"), Fit::Wider));
        assert!(!fits(t(".u64"), t(".u32"), Fit::Wider));
        assert!(!fits(t(".u32"), t(".f32"), Fit::Wider));
        assert!(!fits(t(".f32"), t(".u32"), Fit::Wider));
        assert!(!fits(t(".f32"), t(".f64"), Fit::Wider));
        // ld.global.f32 into a .b64 register: accepted (ZLUDA's ld_st_implicit).
        assert!(fits(t(".f32"), t(".b64"), Fit::Wider));
        // cvt.u16.u32 into .u32: fine; cvt.u32.u64 into .u64: mismatch.
        assert!(fits(t(".u16"), t(".u32"), Fit::CvtDest));
        assert!(!fits(t(".u32"), t(".u64"), Fit::CvtDest));
        // setp destination: predicate only.
        assert!(!fits(t(".pred"), t(".u32"), Fit::Exact));
    }
}
