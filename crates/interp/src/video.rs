//! The video instructions (PTX ISA 9.7.18): the scalar `vadd`, `vsub`, `vabsdiff`, `vmin`,
//! `vmax`, `vshl`, `vshr`, `vmad` and `vset`, and the SIMD `v<op>2` (two half-words) and
//! `v<op>4` (four bytes) forms, as pure functions of their source words.
//!
//! Sources are sign- or zero-extended by their types (`.atype`, `.btype`) after a selector
//! picks a byte or half-word (`a.b1`, `a.h0`; SIMD forms pick half-words or bytes out of
//! `{b, a}`); the primary operation runs on the wide values; `.sat` clamps to the range of the
//! destination type (of the selected part, for a merge); then the scalar forms apply a
//! secondary operation with `c` (`.add`, `.min`, `.max`) or merge the result into `c`, and the
//! SIMD forms merge the lanes the mask selects into `c` or (`.add`) add them to `c`.

use crate::ir::{AtomOp, Cmp, Ty};

pub use ptx::video::{Sel, Video, VideoOp};

/// The modifiers of a video instruction, as the interpreter decoded them.
#[derive(Debug, Clone, Copy)]
pub struct Form<'a> {
    pub video: Video,
    /// `.dtype`, `.atype`, `.btype` (and `.ctype` is `.dtype`).
    pub types: &'a [Ty],
    pub sat: bool,
    /// The scalar secondary operation (`.add`, `.min`, `.max`) or the SIMD accumulate
    /// (`.add`).
    pub second: Option<AtomOp>,
    /// `vset`'s comparison.
    pub cmp: Option<Cmp>,
    /// `vshl`/`vshr`: `.clamp` (else `.wrap`).
    pub clamp: bool,
    /// `vmad`: `.shr7` / `.shr15` (0 for none).
    pub shr: u8,
    /// `vmad`: `.po` (plus one).
    pub po: bool,
    /// `vmad`: negated sources (`-a`, `-b`, `-c`).
    pub negate: [bool; 3],
}

fn signed(t: Ty) -> bool {
    t.is_signed()
}

/// A part of a word, sign- or zero-extended.
fn part(v: u32, bits: u32, k: u32, s: bool) -> i64 {
    let x = u64::from(v >> (bits * k)) & ((1u64 << bits) - 1);
    if s {
        ((x as i64) << (64 - bits)) >> (64 - bits)
    } else {
        x as i64
    }
}

fn clamp_to(x: i128, bits: u32, s: bool) -> i128 {
    let (lo, hi) = if s {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    x.clamp(lo, hi)
}

fn compare(cmp: Cmp, a: i128, b: i128) -> bool {
    match cmp {
        Cmp::Eq => a == b,
        Cmp::Ne => a != b,
        Cmp::Lt | Cmp::Lo => a < b,
        Cmp::Le | Cmp::Ls => a <= b,
        Cmp::Gt | Cmp::Hi => a > b,
        Cmp::Ge | Cmp::Hs => a >= b,
        _ => false,
    }
}

/// The primary operation on the extended sources, exactly (no truncation).
fn primary(f: &Form<'_>, x: i64, y: i64) -> i128 {
    let (x, y) = (i128::from(x), i128::from(y));
    match f.video.op {
        VideoOp::Add => x + y,
        VideoOp::Sub => x - y,
        VideoOp::Absdiff => (x - y).abs(),
        VideoOp::Min => x.min(y),
        VideoOp::Max => x.max(y),
        VideoOp::Avrg => {
            let s = x + y;
            if s >= 0 { (s + 1) >> 1 } else { s >> 1 }
        }
        VideoOp::Shl | VideoOp::Shr => {
            // The shift amount is `.u32`: `.clamp` limits it to 32, `.wrap` takes it mod 32.
            let n = if f.clamp { y.min(32) } else { y & 31 };
            if f.video.op == VideoOp::Shl {
                x << n
            } else {
                x >> n
            }
        }
        VideoOp::Set => i128::from(compare(f.cmp.unwrap_or(Cmp::Eq), x, y)),
        VideoOp::Mad => unreachable!("vmad has its own evaluation"),
    }
}

/// The result of a scalar video instruction: sources `a`, `b` and `c` (0 when absent) with
/// selectors `a`, `b` and the destination's (`Word` unless a merge).
pub fn scalar(f: &Form<'_>, a: u32, b: u32, c: u32, sel: [Sel; 3]) -> u32 {
    let [dt, at, bt] = [0, 1, 2].map(|k| f.types.get(k).copied().unwrap_or(Ty::U32));
    let pick = |v: u32, s: Sel, t: Ty| match s {
        Sel::Byte(k) => part(v, 8, u32::from(k), signed(t)),
        Sel::Half(k) => part(v, 16, u32::from(k), signed(t)),
        _ => part(v, 32, 0, signed(t)),
    };
    let (x, y) = (pick(a, sel[0], at), pick(b, sel[1], bt));
    if f.video.op == VideoOp::Mad {
        return mad(f, x as u32, y as u32, c, signed(at) || signed(bt));
    }
    let dbits = match sel[2] {
        Sel::Byte(_) => 8,
        Sel::Half(_) => 16,
        _ => 32,
    };
    let (r, v) = intermediate(f, x, y, dbits, signed(dt));
    match sel[2] {
        Sel::Byte(k) | Sel::Half(k) => {
            let shift = dbits * u32::from(k);
            let m = (((1u64 << dbits) - 1) as u32) << shift;
            (c & !m) | ((r << shift) & m)
        }
        _ => match f.second {
            Some(AtomOp::Add) => r.wrapping_add(c),
            Some(op @ (AtomOp::Min | AtomOp::Max)) => {
                // ptxas compares its 64-bit intermediate with `c` extended by the
                // destination's type, as 64-bit values of that signedness.
                let (rv, cv) = if signed(dt) {
                    (i128::from(v), i128::from(c as i32))
                } else {
                    (i128::from(v as u64), i128::from(c))
                };
                let take_r = if op == AtomOp::Min { rv < cv } else { rv > cv };
                if take_r { r } else { c }
            }
            _ => r,
        },
    }
}

/// The result word and the 64-bit intermediate value ptxas 13.0.88's code keeps for a
/// secondary `.min`/`.max` (read from its code, checked in the emulator): `vadd`/`vsub` and
/// saturated shifts keep a 32-bit result, sign-extended; the others their exact value. `.sat`
/// of an unsigned destination only clamps negative values to 0, except for the shifts, which
/// clamp their value (taken as 34 bits) to the destination's range.
fn intermediate(f: &Form<'_>, x: i64, y: i64, bits: u32, s: bool) -> (u32, i64) {
    let exact = primary(f, x, y);
    match f.video.op {
        VideoOp::Add | VideoOp::Sub => {
            let r = if f.sat {
                saturate(exact, bits, s)
            } else {
                exact as u32
            };
            (r, i64::from(r as i32))
        }
        VideoOp::Shl | VideoOp::Shr if f.sat => {
            let w = ((exact as i64) << 30) >> 30;
            let r = clamp_to(i128::from(w), bits, s) as u32;
            (r, i64::from(r as i32))
        }
        _ => {
            let w = exact as i64;
            let v = if !f.sat {
                w
            } else if s {
                clamp_to(i128::from(w), bits, true) as i64
            } else {
                w.max(0)
            };
            (v as u32, v)
        }
    }
}

/// `.sat` as ptxas 13.0.88 computes it: a signed destination clamps to its range; an
/// unsigned one clamps negative results to 0 and keeps the low bits of the others (its code
/// tests only the sign of the wide result).
fn saturate(x: i128, bits: u32, s: bool) -> u32 {
    if s {
        clamp_to(x, bits, true) as u32
    } else if x < 0 {
        0
    } else {
        x as u32
    }
}

/// `vmad` as ptxas 13.0.88's code computes it (read from its code, checked in the emulator):
/// the sources' words multiplied as signed 32-bit values into 64 bits whatever their types,
/// plus `c` sign-extended (and 1 for `.po`), wrapping at 64 bits; shifted right by `shr`
/// (arithmetically when a source type is signed, else logically); `.sat` clamps the 64-bit
/// value to `.s32` when a source type is signed, else to `.u32`. A negated product or addend
/// follows the ISA (`~t + 1`, `~c + 1`) on that model.
fn mad(f: &Form<'_>, a: u32, b: u32, c: u32, signed_ab: bool) -> u32 {
    let [na, nb, nc] = f.negate;
    let signed_final = signed_ab || (na ^ nb) || nc;
    let mut t = i64::from(a as i32).wrapping_mul(i64::from(b as i32));
    let mut cv = i64::from(c as i32);
    let mut lsb = 0i64;
    if f.po {
        lsb = 1;
    } else if na ^ nb {
        t = !t;
        lsb = 1;
    } else if nc {
        cv = !cv;
        lsb = 1;
    }
    let t = t.wrapping_add(cv).wrapping_add(lsb);
    let r = if signed_final {
        t >> f.shr
    } else {
        ((t as u64) >> f.shr) as i64
    };
    if !f.sat {
        r as u32
    } else if signed_final {
        r.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
    } else {
        r.clamp(0, i64::from(u32::MAX)) as u32
    }
}

/// The result of a SIMD video instruction: `sel` are the selectors of `a` and `b` (`Lanes`,
/// default `.h10`/`.h32` or `.b3210`/`.b7654`) and the destination's mask.
pub fn simd(f: &Form<'_>, a: u32, b: u32, c: u32, sel: [Sel; 3]) -> u32 {
    let lanes = u32::from(f.video.lanes);
    let bits = 32 / lanes;
    let [dt, at, bt] = [0, 1, 2].map(|k| f.types.get(k).copied().unwrap_or(Ty::U32));
    let both = (u64::from(b) << 32) | u64::from(a);
    let default_a = [0, 1, 2, 3];
    let default_b = if lanes == 2 {
        [2, 3, 0, 0]
    } else {
        [4, 5, 6, 7]
    };
    let lanes_of = |s: Sel, d: [u8; 4]| match s {
        Sel::Lanes(l) => l,
        _ => d,
    };
    let (la, lb) = (lanes_of(sel[0], default_a), lanes_of(sel[1], default_b));
    let mask = match sel[2] {
        Sel::Mask(m) => m,
        _ => (1 << lanes) - 1,
    };
    let get = |p: u8, t: Ty| -> i64 {
        let x = (both >> (bits * u32::from(p))) & ((1u64 << bits) - 1);
        if signed(t) {
            ((x as i64) << (64 - bits)) >> (64 - bits)
        } else {
            x as i64
        }
    };
    let mut out = c;
    let mut sum = i128::from(part(c, 32, 0, signed(dt)));
    for k in 0..lanes {
        let (x, y) = (get(la[k as usize], at), get(lb[k as usize], bt));
        let mut r = primary(f, x, y);
        if f.sat {
            r = clamp_to(r, bits, signed(dt));
        }
        if mask & (1 << k) == 0 {
            continue;
        }
        if f.second == Some(AtomOp::Add) {
            sum += r;
        } else {
            let m = (((1u64 << bits) - 1) as u32) << (bits * k);
            out = (out & !m) | (((r as u32) << (bits * k)) & m);
        }
    }
    if f.second == Some(AtomOp::Add) {
        sum as u32
    } else {
        out
    }
}
