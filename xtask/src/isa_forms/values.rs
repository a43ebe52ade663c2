//! The edge values every operand of a form is fed, by value class.
//!
//! Each class has [`N`] values in a `.const` table of the probe kernel; thread `g` of the
//! launch reads entry `g % N` for its first source, `(g / N) % N` for its second (so that the
//! 1,024 threads see every pair of the first two tables), and mixes of both for the others.
//! The values are the ones where implementations of an instruction part ways: signed zeros,
//! infinities, quiet and signalling NaNs, subnormals, the extremes of every width, ties of
//! every rounding, values just past a narrower type's range, shift amounts and bit positions
//! at and past the width.

/// Entries per table (a power of two).
pub const N: usize = 32;

/// The class of values an operand takes; it also fixes the register type holding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// 8-bit integers in a 16-bit register whose upper byte is garbage.
    I8,
    I16,
    I32,
    I64,
    /// Non-zero divisors (no -1 either: `MIN / -1` overflows).
    Div16,
    Div32,
    Div64,
    F16,
    BF16,
    F16x2,
    BF16x2,
    F32,
    F64,
    Pred,
    /// `shfl`'s lane operand (0..40) and its clamp/segment mask.
    Lane,
    ShflClamp,
}

impl Class {
    /// The PTX register type of the class (nvcc's: `.b16`, `.b32`, `.f32`, ...).
    pub fn reg_type(self) -> &'static str {
        match self {
            Class::I8 | Class::I16 | Class::Div16 | Class::F16 | Class::BF16 => ".b16",
            Class::I32
            | Class::Div32
            | Class::F16x2
            | Class::BF16x2
            | Class::Lane
            | Class::ShflClamp => ".b32",
            Class::F32 => ".f32",
            Class::I64 | Class::Div64 => ".b64",
            Class::F64 => ".f64",
            Class::Pred => ".pred",
        }
    }

    /// Bytes of one value (0 for predicates).
    pub fn bytes(self) -> usize {
        match self.reg_type() {
            ".b16" => 2,
            ".b32" | ".f32" => 4,
            ".b64" | ".f64" => 8,
            _ => 0,
        }
    }

    /// The register-name prefix of the class's registers.
    pub fn reg_prefix(self) -> &'static str {
        match self.reg_type() {
            ".b16" => "%rs",
            ".b32" => "%r",
            ".f32" => "%f",
            ".b64" => "%rd",
            ".f64" => "%fd",
            _ => "%p",
        }
    }

    /// The name of the class's `.const` table.
    pub fn table_name(self) -> String {
        format!("V_{self:?}")
    }

    /// The class's values, [`N`] of them, as bit patterns of [`Class::bytes`] bytes.
    pub fn values(self) -> Vec<u64> {
        let v: Vec<u64> = match self {
            Class::I8 => {
                let lows = [0x00u64, 0x01, 0x7f, 0x80, 0x81, 0xff, 0xfe, 0x10];
                let highs = [0x0000u64, 0xa500, 0xff00, 0x5a00];
                highs
                    .iter()
                    .flat_map(|h| lows.iter().map(move |l| h | l))
                    .collect()
            }
            Class::I16 => vec![
                0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 255, 256, 0x0fff, 0x4000, 0x7fff, 0x8000,
                0x8001, 0xffff, 0xfffe, 0xfff9, 0xff80, 0xf000, 0x1234, 0xbeef, 0x5555, 0xaaaa,
                0x00ff, 0x7f7f, 0x8080, 0x0102,
            ],
            Class::Div16 => vec![
                1, 2, 3, 5, 7, 8, 10, 13, 16, 31, 100, 255, 256, 1000, 0x0fff, 0x4000, 0x7fff,
                0x8000, 0x8001, 0xfffe, 0xfff9, 0xff80, 0xf000, 0x1234, 0xbeef, 0x5555, 0xaaaa,
                0x00ff, 0x7f7f, 0x8080, 0x0102, 0xfffd,
            ],
            Class::I32 => vec![
                0,
                1,
                2,
                3,
                7,
                8,
                15,
                16,
                31,
                32,
                33,
                63,
                64,
                255,
                256,
                0xffff,
                0x1_0000,
                0x7fff_ffff,
                0x8000_0000,
                0x8000_0001,
                0xffff_ffff,
                0xffff_fffe,
                0xffff_fff9,
                0xffff_ff80,
                0x1234_5678,
                0xdead_beef,
                0x5555_5555,
                0xaaaa_aaaa,
                0x00ff_00ff,
                0x7f7f_7f7f,
                0x8080_8080,
                0x0102_0304,
            ],
            Class::Div32 => vec![
                1,
                2,
                3,
                5,
                7,
                8,
                10,
                13,
                16,
                31,
                32,
                100,
                255,
                256,
                1000,
                0xffff,
                0x1_0000,
                0x7fff_ffff,
                0x8000_0000,
                0x8000_0001,
                0xffff_fffe,
                0xffff_fff9,
                0xffff_ff80,
                0x1234_5678,
                0xdead_beef,
                0x5555_5555,
                0xaaaa_aaaa,
                0x00ff_00ff,
                0x7f7f_7f7f,
                0x8080_8080,
                0x0102_0304,
                0xffff_fffd,
            ],
            Class::I64 => vec![
                0,
                1,
                2,
                7,
                31,
                32,
                33,
                63,
                64,
                65,
                0xffff_ffff,
                0x1_0000_0000,
                0x7fff_ffff,
                0x8000_0000,
                0xffff_ffff_8000_0000,
                0x7fff_ffff_ffff_ffff,
                0x8000_0000_0000_0000,
                u64::MAX,
                u64::MAX - 1,
                u64::MAX - 6,
                0x1234_5678_9abc_def0,
                0xfedc_ba98_7654_3210,
                0x0000_0001_0000_0001,
                0x8000_0000_0000_0001,
                0x00ff_00ff_00ff_00ff,
                0x5555_5555_5555_5555,
                0x4000_0000_0000_0000,
                0x0020_0000_0000_0001,
                1_000_000_007,
                0xffff_ffff_0000_0000,
                0x000f_ffff_ffff_ffff,
                0x0000_0000_0000_0100,
            ],
            Class::Div64 => vec![
                1,
                2,
                3,
                5,
                7,
                13,
                31,
                32,
                64,
                1000,
                0xffff_ffff,
                0x1_0000_0000,
                0x7fff_ffff,
                0x8000_0000,
                0xffff_ffff_8000_0000,
                0x7fff_ffff_ffff_ffff,
                0x8000_0000_0000_0000,
                u64::MAX - 1,
                u64::MAX - 6,
                0x1234_5678_9abc_def0,
                0xfedc_ba98_7654_3210,
                0x0000_0001_0000_0001,
                0x8000_0000_0000_0001,
                0x00ff_00ff_00ff_00ff,
                0x5555_5555_5555_5555,
                0x4000_0000_0000_0000,
                0x0020_0000_0000_0001,
                1_000_000_007,
                0xffff_ffff_0000_0000,
                0x000f_ffff_ffff_ffff,
                0x0000_0000_0000_0100,
                u64::MAX - 2,
            ],
            Class::F16 => vec![
                0x0000, 0x8000, 0x3c00, 0xbc00, 0x3800, 0xb800, 0x3e00, 0x4100, 0xc100, 0x7c00,
                0xfc00, 0x7e00, 0x7c01, 0xfe00, 0x0001, 0x03ff, 0x83ff, 0x0400, 0x7bff, 0xfbff,
                0x4248, 0x5640, 0x3555, 0x6400, 0x2e66, 0xe400, 0x1400, 0x4000, 0xc000, 0x3bff,
                0x3c01, 0x0200,
            ],
            Class::BF16 => vec![
                0x0000, 0x8000, 0x3f80, 0xbf80, 0x3f00, 0xbf00, 0x3fc0, 0x4020, 0xc020, 0x7f80,
                0xff80, 0x7fc0, 0x7f81, 0xffc0, 0x0001, 0x007f, 0x807f, 0x0080, 0x7f7f, 0xff7f,
                0x4049, 0x42c8, 0x3eab, 0x4480, 0x3dcd, 0xc480, 0x1400, 0x4000, 0xc000, 0x3f7f,
                0x3f81, 0x0040,
            ],
            Class::F16x2 | Class::BF16x2 => {
                let half = if self == Class::F16x2 {
                    Class::F16
                } else {
                    Class::BF16
                }
                .values();
                (0..N)
                    .map(|i| half[i] | (half[(i * 7 + 3) % N] << 16))
                    .collect()
            }
            Class::F32 => vec![
                0x0000_0000,
                0x8000_0000,
                0x3f80_0000,
                0xbf80_0000,
                0x3f00_0000,
                0xbf00_0000,
                0x3fc0_0000,
                0x4020_0000,
                0xc020_0000,
                0x4040_0000,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0x7f80_0001,
                0xffc0_0000,
                0x0000_0001,
                0x007f_ffff,
                0x807f_ffff,
                0x0080_0000,
                0x7f7f_ffff,
                0xff7f_ffff,
                0x4049_0fdb,
                0x5015_02f9,
                0xd015_02f9,
                0x4f00_0000,
                0xcf00_0000,
                0x4f80_0000,
                0x4f7f_ffff,
                0x477f_e000,
                0x477f_f000,
                0x3eaa_aaab,
                0x3727_c5ac,
            ],
            Class::F64 => vec![
                0x0000_0000_0000_0000,
                0x8000_0000_0000_0000,
                0x3ff0_0000_0000_0000,
                0xbff0_0000_0000_0000,
                0x3fe0_0000_0000_0000,
                0xbfe0_0000_0000_0000,
                0x3ff8_0000_0000_0000,
                0x4004_0000_0000_0000,
                0xc004_0000_0000_0000,
                0x7ff0_0000_0000_0000,
                0xfff0_0000_0000_0000,
                0x7ff8_0000_0000_0000,
                0x7ff0_0000_0000_0001,
                0xfff8_0000_0000_0000,
                0x0000_0000_0000_0001,
                0x000f_ffff_ffff_ffff,
                0x0010_0000_0000_0000,
                0x7fef_ffff_ffff_ffff,
                0xffef_ffff_ffff_ffff,
                0x4009_21fb_5444_2d18,
                0x3ff0_0000_1000_0000,
                0x3ff0_0000_3000_0000,
                0x47ef_ffff_e000_0000,
                0x47ef_ffff_f000_0000,
                0x7e37_e43c_8800_759c,
                0x01a5_6e1f_c2f8_f359,
                0x3810_0000_0000_0000,
                0x3690_0000_0000_0000,
                0x41e0_0000_0000_0000,
                0xc1e0_0000_0000_0000,
                0x43e0_0000_0000_0000,
                0x3fd5_5555_5555_5555,
            ],
            Class::Pred => vec![0; N],
            Class::Lane => vec![
                0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 30, 31, 32, 33, 40, 63, 0, 1, 6, 12,
                18, 25, 27, 29, 31, 5, 2, 14,
            ],
            Class::ShflClamp => vec![
                0x1f, 0x0, 0x1c1f, 0x181f, 0x101f, 0x001f, 0x3, 0x7, 0xf, 0x1e1f, 0x1f1f, 0x1c00,
                0x1800, 0x1000, 0x1f, 0x1f, 0x0, 0x1, 0x2, 0x1c03, 0x1807, 0x100f, 0x1e01, 0x1f,
                0x1f, 0x0, 0x181f, 0x101f, 0x1c1f, 0x1f, 0x1e00, 0x1f00,
            ],
        };
        assert_eq!(v.len(), N, "{self:?} has {} values", v.len());
        v
    }

    /// Immediate operands of the class (PTX literals), for the forms that take one.
    pub fn immediates(self) -> &'static [&'static str] {
        match self {
            Class::I16 | Class::I32 | Class::I64 => &["5", "-3"],
            Class::Div16 | Class::Div32 | Class::Div64 => &["7", "-3"],
            Class::F32 => &["0f00000000", "0fBFC00000"],
            Class::F64 => &["0d0000000000000000", "0dBFF8000000000000"],
            Class::Lane => &["1", "19"],
            Class::ShflClamp => &["31", "7199"],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_has_n_values_that_fit_its_width() {
        for c in [
            Class::I8,
            Class::I16,
            Class::I32,
            Class::I64,
            Class::Div16,
            Class::Div32,
            Class::Div64,
            Class::F16,
            Class::BF16,
            Class::F16x2,
            Class::BF16x2,
            Class::F32,
            Class::F64,
            Class::Lane,
            Class::ShflClamp,
        ] {
            let v = c.values();
            assert_eq!(v.len(), N);
            if c.bytes() < 8 {
                assert!(v.iter().all(|x| *x >> (8 * c.bytes()) == 0), "{c:?}");
            }
        }
        assert!(!Class::Div32.values().contains(&0));
        assert!(!Class::Div32.values().contains(&0xffff_ffff));
        assert!(!Class::Div64.values().contains(&0));
        assert!(!Class::Div64.values().contains(&u64::MAX));
        assert!(!Class::Div16.values().contains(&0));
        assert!(!Class::Div16.values().contains(&0xffff));
    }
}
