//! Floating-point semantics in software: correct rounding to f64/f32/f16/bf16 (and the fp8
//! formats) in each of PTX's four IEEE rounding modes, `.ftz`, `.sat`.
//!
//! Every arithmetic result is first computed as an f64 `s` plus the *sign* of the exact error
//! `e` (the exact value is `s + e` with `|e| <= ulp(s)/2`), using error-free transformations
//! (TwoSum, FMA residuals). [`round`] then rounds that pair into the target format: because the
//! target has at most 53 significant bits, the bits of `s` below the target's precision plus the
//! sign of `e` are exactly the guard and sticky information a correct rounding needs. This makes
//! `.rz`/`.rm`/`.rp` (which Rust lacks) as exact as `.rn`.

use std::cmp::Ordering;

/// An IEEE rounding mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rnd {
    /// To nearest, ties to even (`.rn`).
    Ne,
    /// Toward zero (`.rz`).
    Z,
    /// Toward −∞ (`.rm`).
    M,
    /// Toward +∞ (`.rp`).
    P,
}

/// A binary floating-point format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fmt {
    /// Exponent field width.
    pub ebits: u32,
    /// Stored mantissa bits (without the implicit one).
    pub mbits: u32,
    /// Whether the format has infinities and NaNs in the IEEE way (`false` for e4m3, whose
    /// all-ones exponent still encodes finite values and only `S.1111.111` is NaN).
    pub ieee: bool,
}

pub const F64: Fmt = Fmt::ieee(11, 52);
pub const F32: Fmt = Fmt::ieee(8, 23);
pub const F16: Fmt = Fmt::ieee(5, 10);
pub const BF16: Fmt = Fmt::ieee(8, 7);
pub const E5M2: Fmt = Fmt::ieee(5, 2);
pub const E4M3: Fmt = Fmt {
    ebits: 4,
    mbits: 3,
    ieee: false,
};

impl Fmt {
    /// An IEEE-style format with `ebits` exponent and `mbits` stored mantissa bits.
    const fn ieee(ebits: u32, mbits: u32) -> Fmt {
        Fmt {
            ebits,
            mbits,
            ieee: true,
        }
    }

    /// Flushes a subnormal (given as bits of this format) to a zero of the same sign.
    pub fn ftz(self, bits: u64) -> u64 {
        let exponent = ((1u64 << self.ebits) - 1) << self.mbits;
        if bits & exponent == 0 {
            bits & (1 << (self.ebits + self.mbits))
        } else {
            bits
        }
    }

    fn bias(self) -> i32 {
        (1 << (self.ebits - 1)) - 1
    }
    fn width(self) -> u32 {
        1 + self.ebits + self.mbits
    }
    /// The canonical NaN PTX produces for this format (all mantissa bits set for fp32 and
    /// narrower: 0x7fffffff, 0x7fff, 0x7fff; 0x7fffffffffffffff for f64).
    pub fn canonical_nan(self) -> u64 {
        (1u64 << (self.width() - 1)) - 1
    }
    /// Largest finite magnitude bits.
    fn max_finite(self) -> u64 {
        if self.ieee {
            (((1u64 << self.ebits) - 2) << self.mbits) | ((1u64 << self.mbits) - 1)
        } else {
            // e4m3: exponent all ones, mantissa 110.
            (((1u64 << self.ebits) - 1) << self.mbits) | ((1u64 << self.mbits) - 2)
        }
    }
    fn inf(self) -> u64 {
        ((1u64 << self.ebits) - 1) << self.mbits
    }
    /// Decodes bits of this format into an f64 (exact: every format here fits in f64).
    pub fn to_f64(self, bits: u64) -> f64 {
        let sign = (bits >> (self.width() - 1)) & 1 == 1;
        let e = ((bits >> self.mbits) & ((1 << self.ebits) - 1)) as i32;
        let m = bits & ((1u64 << self.mbits) - 1);
        let mag = if self.ieee && e == (1 << self.ebits) - 1 {
            if m == 0 { f64::INFINITY } else { f64::NAN }
        } else if !self.ieee && e == (1 << self.ebits) - 1 && m == (1u64 << self.mbits) - 1 {
            f64::NAN
        } else if e == 0 {
            m as f64 * 2f64.powi(1 - self.bias() - self.mbits as i32)
        } else {
            (m | (1u64 << self.mbits)) as f64 * 2f64.powi(e - self.bias() - self.mbits as i32)
        };
        if sign { -mag } else { mag }
    }
}

/// Rounds the exact value `s + tail` (`tail` given only by its sign relative to zero, and known
/// to be smaller than half an f64 ulp of `s`) into `fmt` with `mode`. With `satfinite`, values
/// beyond the largest finite number (and infinities) clamp to it and NaN stays NaN. Returns the
/// bits of the result. NaN inputs give the format's canonical NaN.
pub fn round(s: f64, tail: Ordering, mode: Rnd, fmt: Fmt, satfinite: bool) -> u64 {
    let sign_bit = 1u64 << (fmt.width() - 1);
    if s.is_nan() {
        return fmt.canonical_nan();
    }
    let neg = s.is_sign_negative();
    let sgn = if neg { sign_bit } else { 0 };
    // The magnitude's tail direction: for a negative s, a negative tail grows the magnitude.
    let tail_mag = if neg { tail.reverse() } else { tail };
    // Rounding away from zero in magnitude terms?
    let up_dir = match mode {
        Rnd::Ne => None,
        Rnd::Z => Some(false),
        Rnd::M => Some(neg),
        Rnd::P => Some(!neg),
    };
    let overflow = |sgn: u64| -> u64 {
        let to_inf = up_dir.unwrap_or(true);
        if satfinite || !fmt.ieee || !to_inf {
            sgn | fmt.max_finite()
        } else {
            sgn | fmt.inf()
        }
    };
    if s.is_infinite() {
        return if satfinite || !fmt.ieee {
            sgn | fmt.max_finite()
        } else {
            sgn | fmt.inf()
        };
    }
    if s == 0.0 {
        // An exact zero with a nonzero tail is impossible (tail < ulp(0)/2 would be 0).
        return sgn;
    }
    // |s| = m * 2^e with m a 53-bit integer (subnormal f64 inputs have smaller m).
    let bits = s.abs().to_bits();
    let (mut m, mut e) = {
        let be = (bits >> 52) as i32;
        let bm = bits & ((1u64 << 52) - 1);
        if be == 0 {
            (bm, -1074)
        } else {
            (bm | (1u64 << 52), be - 1075)
        }
    };
    // Normalize m to exactly 53 bits.
    let lz = m.leading_zeros() as i32 - 11;
    m <<= lz;
    e -= lz;
    // Exponent of the leading bit: value in [2^lead, 2^(lead+1)).
    let lead = e + 52;
    let p = fmt.mbits as i32; // fraction bits
    let emin = 1 - fmt.bias(); // smallest normal exponent
    // Quantum (exponent of the last kept bit).
    let mut q = (lead.max(emin)) - p;
    let shift = q - e; // bits of m to drop (>= 53 - 1 - p > 0 for narrower formats)
    let kept: u128 = if shift <= 0 {
        (m as u128) << (-shift) as u32
    } else if shift >= 64 {
        0
    } else {
        (m >> shift as u32) as u128
    };
    // Rebuild exact comparison: rem vs half, plus tail.
    let (round_bit, sticky) = if shift <= 0 {
        (false, false)
    } else if shift >= 64 {
        (false, true)
    } else {
        let sh = shift as u32;
        let rem = m & ((1u64 << sh) - 1);
        let halfv = 1u64 << (sh - 1);
        (rem & halfv != 0, (rem & (halfv - 1)) != 0)
    };
    // The tail adds to (or subtracts from) the dropped part.
    let exact_dropped_zero = !round_bit && !sticky && tail_mag == Ordering::Equal;
    let mut mag = kept;
    let increment = if exact_dropped_zero {
        false
    } else {
        match up_dir {
            Some(true) => {
                // Round up in magnitude unless the dropped part is zero and the tail is negative
                // (then the exact value is just below `kept` and rounding up gives `kept`).
                !(!round_bit && !sticky && tail_mag == Ordering::Less)
            }
            Some(false) => {
                // Truncate; but a negative tail with nothing dropped means the exact value is
                // just below `kept`: truncation gives kept - 1 quantum.
                if !round_bit && !sticky && tail_mag == Ordering::Less {
                    if mag == 1u128 << p && lead > emin {
                        // Just below a power of two the quantum halves.
                        mag = (mag << 1) - 1;
                        q -= 1;
                    } else {
                        mag -= 1;
                    }
                }
                false
            }
            None => {
                if !round_bit {
                    false
                } else if sticky || tail_mag == Ordering::Greater {
                    true
                } else if tail_mag == Ordering::Less {
                    false
                } else {
                    kept & 1 == 1
                }
            }
        }
    };
    if increment {
        mag += 1;
    }
    // mag * 2^q: encode.
    let mut exp_field = (q + p) + fmt.bias(); // biased exponent if mag has p+1 bits
    if mag >> (p + 1) != 0 {
        // Carry out: renormalize.
        mag >>= 1;
        exp_field += 1;
    }
    let enc = if mag >> p == 0 {
        // Subnormal (or zero) result.
        mag as u64
    } else {
        let ef = exp_field as u64;
        (ef << fmt.mbits) | (mag as u64 & ((1u64 << fmt.mbits) - 1))
    };
    let max_e = if fmt.ieee {
        (1i32 << fmt.ebits) - 2
    } else {
        (1i32 << fmt.ebits) - 1
    };
    if exp_field > max_e || (!fmt.ieee && enc > fmt.max_finite()) {
        return overflow(sgn);
    }
    if fmt.ieee && enc == fmt.inf() {
        return overflow(sgn);
    }
    sgn | enc
}

/// The sign of a value as an [`Ordering`] against zero.
pub fn sign_of(x: f64) -> Ordering {
    x.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
}

/// Exact sum: `(s, err)` with `s = RN(a + b)` and `a + b = s + err` exactly (TwoSum).
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    if !s.is_finite() {
        return (s, 0.0);
    }
    let bb = s - a;
    let aa = s - bb;
    (s, (a - aa) + (b - bb))
}

/// `a + b` correctly rounded into `fmt`.
pub fn add(a: f64, b: f64, mode: Rnd, fmt: Fmt) -> u64 {
    let (s, e) = two_sum(a, b);
    if s == 0.0 && e == 0.0 {
        // An exact zero: the sign of two zeros of one sign is kept; otherwise IEEE gives +0,
        // or -0 when rounding toward -inf.
        let neg = if a == 0.0 && b == 0.0 && a.is_sign_negative() == b.is_sign_negative() {
            a.is_sign_negative()
        } else {
            mode == Rnd::M
        };
        let z = if neg { -0.0 } else { 0.0 };
        return round(z, Ordering::Equal, mode, fmt, false);
    }
    round(s, sign_of(e), mode, fmt, false)
}

/// `a * b` correctly rounded into `fmt`.
pub fn mul(a: f64, b: f64, mode: Rnd, fmt: Fmt) -> u64 {
    let p = a * b;
    let e = if p.is_finite() && p != 0.0 {
        a.mul_add(b, -p)
    } else {
        0.0
    };
    round(p, sign_of(e), mode, fmt, false)
}

/// `a * b + c` correctly rounded into `fmt` (a single rounding).
pub fn fma(a: f64, b: f64, c: f64, mode: Rnd, fmt: Fmt) -> u64 {
    let p = a * b;
    if !p.is_finite() || !c.is_finite() {
        return round(a.mul_add(b, c), Ordering::Equal, mode, fmt, false);
    }
    let pe = a.mul_add(b, -p);
    let (s1, e1) = two_sum(p, c);
    let (s2, e2) = two_sum(s1, pe);
    let (t, e3) = two_sum(e2, e1);
    let (s3, t2) = two_sum(s2, t);
    if s3 == 0.0 && t2 == 0.0 && e3 == 0.0 {
        let exact_zero_neg = if p == 0.0 && c == 0.0 && p.is_sign_negative() == c.is_sign_negative()
        {
            p.is_sign_negative()
        } else {
            mode == Rnd::M
        };
        return round(
            if exact_zero_neg { -0.0 } else { 0.0 },
            Ordering::Equal,
            mode,
            fmt,
            false,
        );
    }
    let tail = if t2 != 0.0 { sign_of(t2) } else { sign_of(e3) };
    if s3 == 0.0 {
        // Tiny result entirely in the tail (cannot happen with a nonzero exact value below
        // f64's range for the formats used; keep the sign).
        return round(t2 + e3, Ordering::Equal, mode, fmt, false);
    }
    round(s3, tail, mode, fmt, false)
}

/// `a / b` correctly rounded into `fmt`.
pub fn div(a: f64, b: f64, mode: Rnd, fmt: Fmt) -> u64 {
    let q = a / b;
    if q.is_infinite() && a.is_finite() && b != 0.0 && mode != Rnd::Ne {
        // The exact quotient is finite but beyond f64's range (f64 division rounded it to
        // nearest, i.e. to infinity). IEEE 754-2008 7.4: a directed rounding mode then gives
        // the largest finite number or infinity by direction, so round from the largest
        // finite f64 with a tail away from zero (`rcp.rz.f64` of a subnormal is f64::MAX).
        let tail = if q > 0.0 {
            Ordering::Greater
        } else {
            Ordering::Less
        };
        return round(f64::MAX.copysign(q), tail, mode, fmt, false);
    }
    if !q.is_finite() || q == 0.0 {
        return round(q, Ordering::Equal, mode, fmt, false);
    }
    // a = q*b + r exactly; the exact quotient is q + r/b.
    let r = -q.mul_add(b, -a);
    let tail = match (sign_of(r), sign_of(b)) {
        (Ordering::Equal, _) => Ordering::Equal,
        (x, Ordering::Greater) => x,
        (x, _) => x.reverse(),
    };
    round(q, tail, mode, fmt, false)
}

/// `sqrt(a)` correctly rounded into `fmt`.
pub fn sqrt(a: f64, mode: Rnd, fmt: Fmt) -> u64 {
    let q = a.sqrt();
    if !q.is_finite() || q == 0.0 {
        return round(q, Ordering::Equal, mode, fmt, false);
    }
    // a - q^2: positive means the exact root is above q. For a tiny `a` the residual lies
    // below f64's subnormal grid and would round to zero: compute it on a·2^256 and q·2^128
    // instead (exact scalings; q, the root of an f64, is normal).
    let (a2, q2) = if a < 2f64.powi(-900) {
        (a * 2f64.powi(256), q * 2f64.powi(128))
    } else {
        (a, q)
    };
    let r = -q2.mul_add(q2, -a2);
    round(q, sign_of(r), mode, fmt, false)
}

/// An integer (given exactly as i128) rounded into `fmt`.
pub fn from_int(x: i128, mode: Rnd, fmt: Fmt) -> u64 {
    let s = x as f64;
    let back = if s.abs() >= 1.7e38 { x } else { s as i128 };
    let err = x - back;
    round(s, err.cmp(&0), mode, fmt, false)
}

/// Flushes an f32 subnormal (given as bits) to a zero of the same sign ([`Fmt::ftz`] on
/// [`F32`]; kept for callers that hold `u32` bits, such as the SASS emulator).
pub fn ftz32(bits: u32) -> u32 {
    F32.ftz(u64::from(bits)) as u32
}

/// Flushes an f16 subnormal to a zero of the same sign ([`Fmt::ftz`] on [`F16`]).
pub fn ftz16(bits: u16) -> u16 {
    F16.ftz(u64::from(bits)) as u16
}

/// `.sat` for floats: clamps to [0, 1], NaN to +0.
pub fn sat(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next value of a xorshift64 sequence (test inputs: every bit pattern, NaNs included).
    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn ftz_flushes_subnormals_only() {
        assert_eq!(F32.ftz(0x0000_0001), 0);
        assert_eq!(F32.ftz(0x807f_ffff), 0x8000_0000);
        assert_eq!(F32.ftz(0x0080_0000), 0x0080_0000);
        assert_eq!(F32.ftz(0x7fc0_0000), 0x7fc0_0000);
        assert_eq!(F16.ftz(0x03ff), 0);
        assert_eq!(F16.ftz(0x8001), 0x8000);
        assert_eq!(F16.ftz(0x0400), 0x0400);
    }

    fn r32(x: f64, mode: Rnd) -> f32 {
        f32::from_bits(round(x, Ordering::Equal, mode, F32, false) as u32)
    }

    #[test]
    fn nearest_matches_hardware_casts() {
        // Rust's `as f32` is round-to-nearest-even: compare on many values, subnormals included.
        let mut x: u64 = 0x1234_5678_9abc_def1;
        for _ in 0..200_000 {
            let v = f64::from_bits(xorshift(&mut x));
            if v.is_nan() {
                continue;
            }
            let want = (v as f32).to_bits();
            assert_eq!(
                round(v, Ordering::Equal, Rnd::Ne, F32, false) as u32,
                want,
                "{v:e}"
            );
            let want16 = half::f16::from_f64(v).to_bits();
            assert_eq!(
                round(v, Ordering::Equal, Rnd::Ne, F16, false) as u16,
                want16,
                "{v:e}"
            );
            // (half's bf16::from_f64 rounds twice, through f32: check nearness directly.)
            let b = round(v, Ordering::Equal, Rnd::Ne, BF16, false);
            let got = BF16.to_f64(b);
            if got.is_finite() && got != 0.0 {
                let lo = BF16.to_f64(b - 1);
                let hi = BF16.to_f64(b + 1);
                assert!(
                    (got - v).abs() <= (lo - v).abs() && (got - v).abs() <= (hi - v).abs(),
                    "{v:e}"
                );
            }
            assert_eq!(round(v, Ordering::Equal, Rnd::Ne, F64, false), v.to_bits());
        }
    }

    #[test]
    fn directed_modes_bracket_the_value() {
        let mut x: u64 = 0x0bad_cafe_dead_beef;
        for _ in 0..100_000 {
            let v = f64::from_bits(xorshift(&mut x));
            if !v.is_finite() || v.abs() > 1e38 || v.abs() < 1e-37 {
                continue;
            }
            let dn = r32(v, Rnd::M) as f64;
            let up = r32(v, Rnd::P) as f64;
            let z = r32(v, Rnd::Z) as f64;
            assert!(dn <= v && v <= up, "{v:e}: {dn:e} {up:e}");
            assert!(z.abs() <= v.abs());
            if (v as f32) as f64 == v {
                assert_eq!(dn, up);
            } else {
                assert_eq!((dn as f32).next_up() as f64, up, "{v:e}");
            }
        }
    }

    #[test]
    fn tails_break_ties_and_exactness() {
        // 1 + 2^-24 is a tie between 1 and 1+2^-23 in f32; a positive tail rounds up.
        let v = 1.0 + 2f64.powi(-24);
        assert_eq!(
            round(v, Ordering::Equal, Rnd::Ne, F32, false) as u32,
            1f32.to_bits()
        );
        assert_eq!(
            round(v, Ordering::Greater, Rnd::Ne, F32, false) as u32,
            (1.0f32 + f32::EPSILON).to_bits()
        );
        // An f32-exact s with a negative tail: .rz and .rm go one below.
        assert_eq!(
            round(1.0, Ordering::Less, Rnd::Z, F32, false) as u32,
            1f32.next_down().to_bits()
        );
        assert_eq!(
            round(1.0, Ordering::Less, Rnd::P, F32, false) as u32,
            1f32.to_bits()
        );
        assert_eq!(
            round(-1.0, Ordering::Greater, Rnd::Z, F32, false) as u32,
            (-1f32).next_up().to_bits()
        );
    }

    #[test]
    fn div_overflow_in_f64_follows_the_rounding_direction() {
        // 1 / smallest subnormal = 2^1074, beyond f64's range (max is just under 2^1024).
        let tiny = f64::from_bits(1);
        assert_eq!(div(1.0, tiny, Rnd::Ne, F64), f64::INFINITY.to_bits());
        assert_eq!(div(1.0, tiny, Rnd::Z, F64), f64::MAX.to_bits());
        assert_eq!(div(1.0, tiny, Rnd::M, F64), f64::MAX.to_bits());
        assert_eq!(div(1.0, tiny, Rnd::P, F64), f64::INFINITY.to_bits());
        assert_eq!(div(-1.0, tiny, Rnd::Z, F64), f64::MIN.to_bits());
        assert_eq!(div(-1.0, tiny, Rnd::M, F64), f64::NEG_INFINITY.to_bits());
        assert_eq!(div(-1.0, tiny, Rnd::P, F64), f64::MIN.to_bits());
        // Division by zero stays an exact infinity in every mode.
        assert_eq!(div(1.0, 0.0, Rnd::Z, F64), f64::INFINITY.to_bits());
    }

    #[test]
    fn overflow_and_satfinite() {
        assert_eq!(
            round(1e300, Ordering::Equal, Rnd::Ne, F32, false) as u32,
            f32::INFINITY.to_bits()
        );
        assert_eq!(
            round(1e300, Ordering::Equal, Rnd::Z, F32, false) as u32,
            f32::MAX.to_bits()
        );
        assert_eq!(
            round(-1e300, Ordering::Equal, Rnd::P, F32, false) as u32,
            f32::MIN.to_bits()
        );
        // e4m3 has no infinity: max finite is 448.
        assert_eq!(
            E4M3.to_f64(round(1000.0, Ordering::Equal, Rnd::Ne, E4M3, true)),
            448.0
        );
        assert_eq!(
            E4M3.to_f64(round(448.0, Ordering::Equal, Rnd::Ne, E4M3, true)),
            448.0
        );
        assert_eq!(
            E5M2.to_f64(round(1e6, Ordering::Equal, Rnd::Ne, E5M2, true)),
            57344.0
        );
    }

    #[test]
    fn directed_division_and_sqrt() {
        // 1/3 in f32: rz/rm are below, rp above, and they differ by one ulp.
        let d = |m| f32::from_bits(div(1.0, 3.0, m, F32) as u32);
        assert_eq!(d(Rnd::M), d(Rnd::Z));
        assert_eq!(d(Rnd::M).next_up(), d(Rnd::P));
        assert_eq!(f32::from_bits(div(1.0, 4.0, Rnd::P, F32) as u32), 0.25);
        let s = |m| f32::from_bits(sqrt(2.0, m, F32) as u32);
        assert_eq!(s(Rnd::M).next_up(), s(Rnd::P));
        assert_eq!(f32::from_bits(sqrt(4.0, Rnd::M, F32) as u32), 2.0);
        // f64 division: rm/rp bracket.
        let dm = f64::from_bits(div(1.0, 3.0, Rnd::M, F64));
        let dp = f64::from_bits(div(1.0, 3.0, Rnd::P, F64));
        assert_eq!(dm.next_up(), dp);
        // The root of a subnormal: 0x10c6794b2b8fd rounds to nearest upwards (…1a), so the
        // root rounded down is one ulp below.
        let a = f64::from_bits(0x0001_0c67_94b2_b8fd);
        assert_eq!(sqrt(a, Rnd::Ne, F64), 0x1fe0_6210_22b8_f81a);
        assert_eq!(sqrt(a, Rnd::M, F64), 0x1fe0_6210_22b8_f819);
        assert_eq!(sqrt(a, Rnd::Z, F64), 0x1fe0_6210_22b8_f819);
        assert_eq!(sqrt(a, Rnd::P, F64), 0x1fe0_6210_22b8_f81a);
    }
}
