//! PTX data types (PTX ISA 9.0 §5.2 "Types"): the one place their names are parsed.

use std::fmt;

/// A PTX data type, as an instruction's type modifier or a declaration names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    F32,
    F64,
    Pred,
    E4m3x2,
    E5m2x2,
    Tf32,
    U16x2,
    S16x2,
}

/// Every type with its name.
const NAMES: [(Type, &str); 25] = [
    (Type::B8, ".b8"),
    (Type::B16, ".b16"),
    (Type::B32, ".b32"),
    (Type::B64, ".b64"),
    (Type::B128, ".b128"),
    (Type::U8, ".u8"),
    (Type::U16, ".u16"),
    (Type::U32, ".u32"),
    (Type::U64, ".u64"),
    (Type::S8, ".s8"),
    (Type::S16, ".s16"),
    (Type::S32, ".s32"),
    (Type::S64, ".s64"),
    (Type::F16, ".f16"),
    (Type::F16x2, ".f16x2"),
    (Type::Bf16, ".bf16"),
    (Type::Bf16x2, ".bf16x2"),
    (Type::F32, ".f32"),
    (Type::F64, ".f64"),
    (Type::Pred, ".pred"),
    (Type::E4m3x2, ".e4m3x2"),
    (Type::E5m2x2, ".e5m2x2"),
    (Type::Tf32, ".tf32"),
    (Type::U16x2, ".u16x2"),
    (Type::S16x2, ".s16x2"),
];

impl Type {
    /// Parses a type modifier with its dot (`.u32`).
    pub fn parse(s: &str) -> Option<Type> {
        NAMES.iter().find(|(_, n)| *n == s).map(|(t, _)| *t)
    }

    /// The type's name with its dot (`.u32`).
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(t, _)| *t == self)
            .map(|(_, n)| *n)
            .expect("every type is named")
    }

    /// Size in bytes (a predicate occupies one byte in memory).
    pub fn size(self) -> u32 {
        use Type::*;
        match self {
            B8 | U8 | S8 | Pred => 1,
            B16 | U16 | S16 | F16 | Bf16 | E4m3x2 | E5m2x2 => 2,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 | Tf32 | U16x2 | S16x2 => 4,
            B64 | U64 | S64 | F64 => 8,
            B128 => 16,
        }
    }

    pub fn bits(self) -> u32 {
        self.size() * 8
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Type::S8 | Type::S16 | Type::S32 | Type::S64)
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            Type::F16 | Type::F16x2 | Type::Bf16 | Type::Bf16x2 | Type::F32 | Type::F64
        )
    }

    /// Mask of the low `bits()` bits.
    pub fn mask(self) -> u64 {
        if self.bits() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits()) - 1
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (t, n) in NAMES {
            assert_eq!(Type::parse(n), Some(t));
            assert_eq!(t.name(), n);
        }
        assert_eq!(Type::parse("u32"), None);
        assert_eq!(Type::parse(".v2"), None);
    }
}
