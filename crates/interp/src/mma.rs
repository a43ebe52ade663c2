//! Matrix multiply-accumulate: the fragment layouts of `mma.sync` (PTX ISA 9.0 §9.7.14.5,
//! "Matrix Fragments for mma.mMnNkK") and of `wmma` (whose layout the PTX ISA leaves to the
//! implementation: here ptxas's, from `target::wmma_layout`), and the arithmetic both share.
//!
//! Arithmetic model: integer products are summed exactly and wrap to 32 bits (`.satfinite`
//! clamps to the s32 range); f16/bf16/tf32 products are exact in f64, their sum with `c` is
//! rounded once to f32 (or f16); f64 (`m8n8k4`) is a chain of fused multiply-adds in `k`
//! order starting from `c`. tf32 operands are f32 registers whose low 13 mantissa bits are
//! ignored.

use std::cmp::Ordering;

use crate::float::{self, Rnd};
use crate::ir::Ty;

/// Element type of a matrix operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F16,
    Bf16,
    Tf32,
    F32,
    F64,
    S8,
    U8,
    S32,
}

impl Elem {
    pub fn of(ty: Ty) -> Option<Elem> {
        Some(match ty {
            Ty::F16 | Ty::F16x2 => Elem::F16,
            Ty::Bf16 | Ty::Bf16x2 => Elem::Bf16,
            Ty::Tf32 => Elem::Tf32,
            Ty::F32 => Elem::F32,
            Ty::F64 => Elem::F64,
            Ty::S8 => Elem::S8,
            Ty::U8 => Elem::U8,
            Ty::S32 => Elem::S32,
            _ => return None,
        })
    }

    /// The PTX type name (`f16`, `tf32`, `s32`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
            Elem::Tf32 => "tf32",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::S8 => "s8",
            Elem::U8 => "u8",
            Elem::S32 => "s32",
        }
    }

    /// Bits of one element.
    pub fn bits(self) -> u32 {
        match self {
            Elem::F16 | Elem::Bf16 => 16,
            Elem::S8 | Elem::U8 => 8,
            Elem::Tf32 | Elem::F32 | Elem::S32 => 32,
            Elem::F64 => 64,
        }
    }

    /// Elements per fragment register (registers are 32 bits wide, f64 ones 64).
    pub fn per_reg(self) -> usize {
        (32 / self.bits().min(32)) as usize
    }

    /// The value of an element's bits.
    pub fn value(self, bits: u64) -> f64 {
        match self {
            Elem::F16 => float::F16.to_f64(bits & 0xffff),
            Elem::Bf16 => float::BF16.to_f64(bits & 0xffff),
            Elem::Tf32 => f64::from(f32::from_bits(bits as u32 & 0xffff_e000)),
            Elem::F32 => f64::from(f32::from_bits(bits as u32)),
            Elem::F64 => f64::from_bits(bits),
            Elem::S8 => f64::from(bits as u8 as i8),
            Elem::U8 => (bits & 0xff) as f64,
            Elem::S32 => f64::from(bits as u32 as i32),
        }
    }

    /// Element `i` of a fragment held in `regs` (as read from 32- or 64-bit registers).
    pub fn get(self, regs: &[u64], i: usize) -> f64 {
        let per = self.per_reg();
        let r = regs.get(i / per).copied().unwrap_or(0);
        let sh = (i % per) as u32 * self.bits();
        self.value(if self.bits() >= 32 { r } else { r >> sh })
    }

    /// Stores an element's bits into fragment registers.
    pub fn put(self, regs: &mut [u64], i: usize, bits: u64) {
        let per = self.per_reg();
        if let Some(r) = regs.get_mut(i / per) {
            if self.bits() >= 32 {
                *r = bits;
            } else {
                let sh = (i % per) as u32 * self.bits();
                let m = ((1u64 << self.bits()) - 1) << sh;
                *r = (*r & !m) | ((bits << sh) & m);
            }
        }
    }

    /// Registers a fragment of `n` elements occupies.
    pub fn regs(self, n: usize) -> usize {
        n.div_ceil(self.per_reg())
    }

    /// The bits of an element with raw memory contents `raw` (little-endian `bits / 8` bytes).
    pub fn from_memory(self, raw: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        b[..raw.len()].copy_from_slice(raw);
        u64::from_le_bytes(b)
    }
}

/// Multiplies logical matrices: `d = a · b + c` (`a` is m×k, `b` k×n, `c` m×n), giving the
/// bits of each element of `d` in type `acc`.
pub fn multiply(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    c: &[Vec<f64>],
    acc: Elem,
    satfinite: bool,
) -> Vec<Vec<u64>> {
    let (m, k, n) = (a.len(), b.len(), c.first().map_or(0, Vec::len));
    (0..m)
        .map(|r| {
            (0..n)
                .map(|col| match acc {
                    Elem::S32 => {
                        let s: i64 = (0..k)
                            .map(|kk| a[r][kk] as i64 * b[kk][col] as i64)
                            .sum::<i64>()
                            + c[r][col] as i64;
                        if satfinite {
                            s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32 as u64
                        } else {
                            s as u32 as u64
                        }
                    }
                    Elem::F64 => {
                        let mut x = c[r][col];
                        for kk in 0..k {
                            x = a[r][kk].mul_add(b[kk][col], x);
                        }
                        if x.is_nan() {
                            float::F64.canonical_nan()
                        } else {
                            x.to_bits()
                        }
                    }
                    _ => {
                        let fmt = if acc == Elem::F16 {
                            float::F16
                        } else {
                            float::F32
                        };
                        let s: f64 =
                            (0..k).map(|kk| a[r][kk] * b[kk][col]).sum::<f64>() + c[r][col];
                        if s.is_nan() {
                            fmt.canonical_nan()
                        } else {
                            float::round(s, Ordering::Equal, Rnd::Ne, fmt, false)
                        }
                    }
                })
                .collect()
        })
        .collect()
}

/// Where element `i` of lane (`g` = lane / 4, `t` = lane % 4)'s fragment sits: (row, col).
pub type At = fn(usize, usize, usize) -> (usize, usize);

/// The fragments of one `mma.sync` shape and type: elements per lane and their positions.
#[derive(Clone, Copy)]
pub struct SyncShape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub na: usize,
    pub nb: usize,
    pub nc: usize,
    pub a_at: At,
    pub b_at: At,
    pub c_at: At,
}

fn c16x8(g: usize, t: usize, i: usize) -> (usize, usize) {
    let row = if i < 2 { g } else { g + 8 };
    (row, t * 2 + (i & 1))
}

/// The `mma.sync.aligned` shape `(m, n, k)` for A elements of type `ta` (row.col only), or
/// `None` when it is not implemented.
pub fn sync_shape(shape: (u8, u8, u8), ta: Elem) -> Option<SyncShape> {
    let half = matches!(ta, Elem::F16 | Elem::Bf16);
    let int = matches!(ta, Elem::S8 | Elem::U8);
    Some(match shape {
        (16, 8, 16) if half => SyncShape {
            m: 16,
            n: 8,
            k: 16,
            na: 8,
            nb: 4,
            nc: 4,
            a_at: |g, t, i| {
                let row = if matches!(i, 0 | 1 | 4 | 5) { g } else { g + 8 };
                (row, t * 2 + (i & 1) + if i >= 4 { 8 } else { 0 })
            },
            b_at: |g, t, i| (t * 2 + (i & 1) + if i >= 2 { 8 } else { 0 }, g),
            c_at: c16x8,
        },
        (16, 8, 8) if half => SyncShape {
            m: 16,
            n: 8,
            k: 8,
            na: 4,
            nb: 2,
            nc: 4,
            a_at: |g, t, i| (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1)),
            b_at: |g, t, i| (t * 2 + i, g),
            c_at: c16x8,
        },
        (16, 8, 8) if ta == Elem::Tf32 => SyncShape {
            m: 16,
            n: 8,
            k: 8,
            na: 4,
            nb: 2,
            nc: 4,
            a_at: |g, t, i| {
                let row = if i % 2 == 0 { g } else { g + 8 };
                (row, if i < 2 { t } else { t + 4 })
            },
            b_at: |g, t, i| (if i == 0 { t } else { t + 4 }, g),
            c_at: c16x8,
        },
        (16, 8, 4) if ta == Elem::Tf32 => SyncShape {
            m: 16,
            n: 8,
            k: 4,
            na: 2,
            nb: 1,
            nc: 4,
            a_at: |g, t, i| (if i == 0 { g } else { g + 8 }, t),
            b_at: |g, t, _| (t, g),
            c_at: c16x8,
        },
        (16, 8, 16) if int => SyncShape {
            m: 16,
            n: 8,
            k: 16,
            na: 8,
            nb: 4,
            nc: 4,
            a_at: |g, t, i| (if i < 4 { g } else { g + 8 }, t * 4 + (i & 3)),
            b_at: |g, t, i| (t * 4 + i, g),
            c_at: c16x8,
        },
        (16, 8, 32) if int => SyncShape {
            m: 16,
            n: 8,
            k: 32,
            na: 16,
            nb: 8,
            nc: 4,
            a_at: |g, t, i| {
                let row = if i < 4 || (8..12).contains(&i) {
                    g
                } else {
                    g + 8
                };
                (row, t * 4 + (i & 3) + if i >= 8 { 16 } else { 0 })
            },
            b_at: |g, t, i| (t * 4 + (i & 3) + if i >= 4 { 16 } else { 0 }, g),
            c_at: c16x8,
        },
        (8, 8, 4) if ta == Elem::F64 => SyncShape {
            m: 8,
            n: 8,
            k: 4,
            na: 1,
            nb: 1,
            nc: 2,
            a_at: |g, t, _| (g, t),
            b_at: |g, t, _| (t, g),
            c_at: |g, t, i| (g, t * 2 + i),
        },
        _ => return None,
    })
}

/// Which `wmma` fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frag {
    A,
    B,
    /// The accumulator (`wmma.load.c`, `wmma.store.d`, `wmma.mma`'s c and d).
    C,
}

/// A `wmma` fragment: its logical matrix (rows × cols), element type, and elements per lane
/// (the PTX ISA's register counts: for f16 A and B fragments, 16 halves per lane whatever
/// the shape, so that a lane holds some elements more than once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WmmaFrag {
    pub rows: usize,
    pub cols: usize,
    pub elem: Elem,
    pub per_lane: usize,
    /// Where ptxas keeps each element (`target::wmma_layout`).
    layout: &'static target::WmmaLayout,
}

impl WmmaFrag {
    /// The fragment of `which` for shape `(m, n, k)` with element type `elem`, or `None` for
    /// a combination the PTX ISA does not define (or this interpreter does not implement).
    pub fn of(which: Frag, (m, n, k): (u8, u8, u8), elem: Elem) -> Option<WmmaFrag> {
        let (m, n, k) = (usize::from(m), usize::from(n), usize::from(k));
        let shape_ok = match elem {
            Elem::F16 | Elem::Bf16 | Elem::S8 | Elem::U8 => {
                matches!((m, n, k), (16, 16, 16) | (32, 8, 16) | (8, 32, 16))
            }
            Elem::Tf32 => (m, n, k) == (16, 16, 8),
            Elem::F64 => (m, n, k) == (8, 8, 4),
            Elem::F32 | Elem::S32 => {
                which == Frag::C
                    && matches!(
                        (m, n, k),
                        (16, 16, 16) | (32, 8, 16) | (8, 32, 16) | (16, 16, 8)
                    )
            }
        };
        if !shape_ok {
            return None;
        }
        let (rows, cols) = match which {
            Frag::A => (m, k),
            Frag::B => (k, n),
            Frag::C => (m, n),
        };
        let logical = rows * cols / 32;
        let per_lane = match (which, elem) {
            (Frag::A | Frag::B, Elem::F16) => 16,
            _ => logical,
        };
        if logical == 0 || per_lane % logical != 0 {
            return None;
        }
        let frag = match which {
            Frag::A => target::WmmaFrag::A,
            Frag::B => target::WmmaFrag::B,
            Frag::C => target::WmmaFrag::C,
        };
        let layout = target::wmma_layout(frag, (m as u8, n as u8, k as u8), elem.name(), true)?;
        if layout.per_lane() != per_lane {
            return None;
        }
        Some(WmmaFrag {
            rows,
            cols,
            elem,
            per_lane,
            layout,
        })
    }

    /// (row, col) of element `e` of `lane`'s fragment, where ptxas keeps it (the PTX ISA
    /// leaves the layout to the implementation; `target::wmma_layout` holds the one ptxas
    /// 13.0.88 uses on sm_80–sm_90, learned by `cargo xtask wmma-layouts`).
    pub fn at(&self, lane: usize, e: usize) -> (usize, usize) {
        let (r, c) = self.layout.at[lane][e];
        (usize::from(r), usize::from(c))
    }

    /// Fragment registers per lane.
    pub fn regs(&self) -> usize {
        self.elem.regs(self.per_lane)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_layouts_cover_each_matrix_once() {
        for (shape, ta) in [
            ((16, 8, 16), Elem::F16),
            ((16, 8, 8), Elem::F16),
            ((16, 8, 8), Elem::Tf32),
            ((16, 8, 4), Elem::Tf32),
            ((16, 8, 16), Elem::S8),
            ((16, 8, 32), Elem::U8),
            ((8, 8, 4), Elem::F64),
        ] {
            let s = sync_shape(shape, ta).expect("implemented");
            for (n, at, rows, cols) in [
                (s.na, s.a_at, s.m, s.k),
                (s.nb, s.b_at, s.k, s.n),
                (s.nc, s.c_at, s.m, s.n),
            ] {
                let mut seen = vec![0; rows * cols];
                for lane in 0..32 {
                    for i in 0..n {
                        let (r, c) = at(lane / 4, lane % 4, i);
                        seen[r * cols + c] += 1;
                    }
                }
                assert!(seen.iter().all(|&x| x == 1), "{shape:?} {ta:?}");
            }
        }
    }

    #[test]
    fn wmma_fragments_cover_each_matrix() {
        let f = WmmaFrag::of(Frag::A, (16, 16, 16), Elem::F16).unwrap();
        assert_eq!((f.per_lane, f.regs()), (16, 8));
        let f = WmmaFrag::of(Frag::B, (32, 8, 16), Elem::F16).unwrap();
        assert_eq!((f.rows, f.cols, f.per_lane, f.regs()), (16, 8, 16, 8));
        let f = WmmaFrag::of(Frag::A, (16, 16, 16), Elem::Bf16).unwrap();
        assert_eq!(f.regs(), 4);
        let f = WmmaFrag::of(Frag::A, (16, 16, 8), Elem::Tf32).unwrap();
        assert_eq!(f.regs(), 4);
        let f = WmmaFrag::of(Frag::C, (8, 8, 4), Elem::F64).unwrap();
        assert_eq!(f.regs(), 2);
        let f = WmmaFrag::of(Frag::A, (8, 32, 16), Elem::U8).unwrap();
        assert_eq!(f.regs(), 1);
        for (which, shape, e) in [
            (Frag::A, (16, 16, 16), Elem::F16),
            (Frag::B, (8, 32, 16), Elem::S8),
            (Frag::C, (16, 16, 16), Elem::F32),
        ] {
            let f = WmmaFrag::of(which, shape, e).unwrap();
            let mut seen = vec![0; f.rows * f.cols];
            for lane in 0..32 {
                for i in 0..f.per_lane {
                    let (r, c) = f.at(lane, i);
                    seen[r * f.cols + c] += 1;
                }
            }
            let each = f.per_lane * 32 / (f.rows * f.cols);
            assert!(seen.iter().all(|&x| x == each), "{which:?} {shape:?}");
        }
    }

    #[test]
    fn multiply_rounds_once_and_wraps_integers() {
        // 1 + 2^-30 + 2^-30 is exact in f64 and rounds to 1 in f32 only once.
        let a = vec![vec![1.0, 2f64.powi(-15), 2f64.powi(-15)]];
        let b = vec![vec![1.0], vec![2f64.powi(-15)], vec![2f64.powi(-15)]];
        let c = vec![vec![2f64.powi(-24)]];
        let d = multiply(&a, &b, &c, Elem::F32, false);
        // 1 + 2^-29 + 2^-24 rounds to 1 + 2^-23 (above the halfway point).
        assert_eq!(d[0][0] as u32, (1.0f32 + f32::EPSILON).to_bits());
        let a = vec![vec![127.0, 127.0]];
        let b = vec![vec![127.0], vec![127.0]];
        let c = vec![vec![f64::from(i32::MAX)]];
        assert_eq!(
            multiply(&a, &b, &c, Elem::S32, false)[0][0] as u32,
            (i32::MAX as u32).wrapping_add(2 * 127 * 127)
        );
        assert_eq!(
            multiply(&a, &b, &c, Elem::S32, true)[0][0] as u32,
            i32::MAX as u32
        );
    }
}
