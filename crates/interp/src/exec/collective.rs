//! Warp collectives (`shfl`, `vote`, `match`, `redux`, `bar.warp.sync`, ...) and tensor-core
//! fragments (`mma.sync`, `wmma`).

use super::*;

impl Cta<'_> {
    pub(crate) fn collective(
        &mut self,
        w: usize,
        active: u32,
        f: &Function,
        inst: &Inst,
        forced: bool,
    ) -> Result<(), RunError> {
        let args = &inst.args;
        // Member mask operand position.
        let mask_op = match inst.op {
            Op::Shfl if inst.mods.sync => args.get(4),
            Op::Vote if inst.mods.sync => args.get(2),
            Op::Match => args.last(),
            Op::Redux => args.get(2),
            Op::BarWarp => args.first(),
            Op::Elect => args.get(1),
            _ => None,
        };
        // Each thread's own member mask (threads with different masks may execute one
        // collective together; each then combines the threads of its own mask).
        let mut masks = [u32::MAX; 32];
        if let Some(mo) = mask_op {
            for l in Self::lanes(active) {
                masks[l] = self.get(f, &self.warps[w][l], mo, Ty::B32) as u32;
                if masks[l] >> l & 1 == 0 {
                    self.stats.outside_mask += 1;
                }
            }
            let live: u32 = self.warps[w]
                .iter()
                .enumerate()
                .filter(|(_, t)| t.st != St::Exited)
                .fold(0, |m, (l, _)| m | (1 << l));
            let missing = Self::lanes(active).fold(0, |m, l| m | masks[l]) & live & !active;
            if missing != 0 && !forced {
                for l in Self::lanes(active) {
                    self.warps[w][l].st = St::Wait;
                }
                return Ok(());
            }
        }
        let n = self.warps[w].len();
        if let Some(san) = &mut self.san {
            let lanes: Vec<usize> = Self::lanes(active).map(|l| w * 32 + l).collect();
            san.warp_sync(&lanes);
        }
        match inst.op {
            Op::BarWarp => {}
            Op::Elect => {
                // The leader is the lowest lane of the member mask that executes (the PTX ISA
                // only promises the same leader for the same mask; the emulator's ELECT
                // elects the same lane).
                let parts = match &args[0] {
                    Operand::Vec(p) if p.len() == 2 => p.clone(),
                    other => vec![other.clone()],
                };
                for l in Self::lanes(active) {
                    let leader = (masks[l] & active).trailing_zeros() as u64;
                    let t = &mut self.warps[w][l];
                    set(f, t, &parts[0], Ty::B32, leader);
                    if let Some(p) = parts.get(1) {
                        set(f, t, p, Ty::Pred, u64::from(leader == l as u64));
                    }
                }
            }
            Op::Activemask => {
                for l in Self::lanes(active) {
                    let t = &mut self.warps[w][l];
                    set(f, t, &args[0], Ty::B32, active as u64);
                }
            }
            Op::Vote => {
                let mode = inst.mods.mode;
                let mut ballot = 0u32;
                for l in Self::lanes(active) {
                    let t = &self.warps[w][l];
                    if self.get(f, t, &args[1], Ty::Pred) & 1 != 0 {
                        ballot |= 1 << l;
                    }
                }
                let ty = if mode == 4 { Ty::B32 } else { Ty::Pred };
                for l in Self::lanes(active) {
                    let member = if inst.mods.sync {
                        masks[l] & active
                    } else {
                        active
                    };
                    let set_bits = ballot & member;
                    let v = match mode {
                        1 => (set_bits == member) as u64,
                        2 => (set_bits != 0) as u64,
                        3 => (set_bits == 0 || set_bits == member) as u64,
                        _ => set_bits as u64,
                    };
                    let t = &mut self.warps[w][l];
                    set(f, t, &args[0], ty, v);
                }
            }
            Op::Shfl => {
                let ty = Ty::B32;
                let vals: Vec<u64> = (0..n)
                    .map(|l| {
                        let t = &self.warps[w][l];
                        if t.st == St::Exited {
                            0
                        } else {
                            self.get(f, t, &args[1], ty)
                        }
                    })
                    .collect();
                for l in Self::lanes(active) {
                    let t = &self.warps[w][l];
                    let b = (self.get(f, t, &args[2], Ty::B32) & 0x1f) as i64;
                    let c = self.get(f, t, &args[3], Ty::B32) as i64;
                    let lane = l as i64;
                    let segmask = (c >> 8) & 0x1f;
                    let max_lane = (lane & segmask) | (c & 0x1f & !segmask);
                    let min_lane = lane & segmask;
                    let (j, pval) = match inst.mods.shfl {
                        0 => (lane - b, lane - b >= max_lane),
                        1 => (lane + b, lane + b <= max_lane),
                        2 => (lane ^ b, (lane ^ b) <= max_lane),
                        _ => {
                            let j = min_lane | (b & 0x1f & !segmask);
                            (j, j <= max_lane)
                        }
                    };
                    let j = if pval { j } else { lane };
                    let v = if !(0..n as i64).contains(&j) {
                        if self.zero_undefined_lanes {
                            0
                        } else {
                            vals[l]
                        }
                    } else if active >> j & 1 == 0 && self.zero_undefined_lanes {
                        0
                    } else {
                        vals[j as usize]
                    };
                    let t = &mut self.warps[w][l];
                    set(f, t, &args[0], ty, v);
                    if let Operand::Vec(parts) = &args[0] {
                        // `d|p` is parsed as a vector in some spellings: write both.
                        if parts.len() == 2 {
                            set(f, t, &parts[0], ty, v);
                            set(f, t, &parts[1], Ty::Pred, pval as u64);
                        }
                    }
                }
            }
            Op::Match => {
                let ty = inst.mods.ty();
                let src = &args[args.len() - 2];
                let vals: Vec<u64> = (0..n)
                    .map(|l| {
                        if active >> l & 1 == 1 {
                            self.get(f, &self.warps[w][l], src, ty)
                        } else {
                            0
                        }
                    })
                    .collect();
                for l in Self::lanes(active) {
                    let member = masks[l] & active;
                    let all_equal = Self::lanes(member).all(|k| vals[k] == vals[l]);
                    let (d, p) = if inst.mods.mode == 1 {
                        (if all_equal { member } else { 0 }, all_equal)
                    } else {
                        (
                            Self::lanes(member)
                                .filter(|&k| vals[k] == vals[l])
                                .fold(0u32, |m, k| m | 1 << k),
                            true,
                        )
                    };
                    let t = &mut self.warps[w][l];
                    match &args[0] {
                        // `d|p` (match.all's optional predicate), parsed as a pair.
                        Operand::Vec(parts) if parts.len() == 2 => {
                            set(f, t, &parts[0], Ty::B32, d as u64);
                            set(f, t, &parts[1], Ty::Pred, p as u64);
                        }
                        a => set(f, t, a, Ty::B32, d as u64),
                    }
                    if inst.mods.mode == 1 && args.len() == 4 {
                        set(f, t, &args[1], Ty::Pred, p as u64);
                    }
                }
            }
            Op::Redux => {
                let ty = inst.mods.ty();
                let signed = ty.is_signed();
                // Only executing threads take part (exited ones have no registers left).
                let vals: Vec<u64> = (0..n)
                    .map(|l| {
                        if active >> l & 1 == 1 {
                            self.get(f, &self.warps[w][l], &args[1], Ty::B32)
                        } else {
                            0
                        }
                    })
                    .collect();
                for l in Self::lanes(active) {
                    let member = masks[l] & active;
                    let r = Self::lanes(member)
                        .map(|k| vals[k])
                        .reduce(|a, b| match inst.mods.atom {
                            Some(AtomOp::Add) => (a as u32).wrapping_add(b as u32) as u64,
                            Some(AtomOp::And) => a & b,
                            Some(AtomOp::Or) => a | b,
                            Some(AtomOp::Xor) => a ^ b,
                            Some(AtomOp::Min) if signed => (a as i32).min(b as i32) as u32 as u64,
                            Some(AtomOp::Max) if signed => (a as i32).max(b as i32) as u32 as u64,
                            Some(AtomOp::Min) => (a as u32).min(b as u32) as u64,
                            Some(AtomOp::Max) => (a as u32).max(b as u32) as u64,
                            _ => a,
                        })
                        .unwrap_or(0);
                    let t = &mut self.warps[w][l];
                    set(f, t, &args[0], Ty::B32, r);
                }
            }
            Op::Ldmatrix => {
                whole_warp(active, n, "ldmatrix", inst.line)?;
                // Threads 8i..8i+7 give the row addresses of matrix i (rows of 8 b16 values).
                let space = inst.mods.space.unwrap_or(Space::Generic);
                let nmat = inst.mods.xn.max(1) as usize;
                let mut rows = vec![[0u16; 8]; 8 * nmat];
                for (r, row) in rows.iter_mut().enumerate() {
                    let (sp, addr) = self.address(&self.warps[w][r], &args[1], space);
                    let mut b = [0u8; 16];
                    self.load(w, r, sp, addr, &mut b, inst.line)?;
                    for (k, e) in row.iter_mut().enumerate() {
                        *e = u16::from_le_bytes([b[2 * k], b[2 * k + 1]]);
                    }
                }
                let dsts: Vec<Operand> = match &args[0] {
                    Operand::Vec(v) => v.clone(),
                    o => vec![o.clone()],
                };
                for l in Self::lanes(active) {
                    let (g, t4) = (l / 4, l % 4);
                    for (i, d) in dsts.iter().enumerate().take(nmat) {
                        let m = &rows[8 * i..8 * i + 8];
                        let (lo, hi) = if inst.mods.trans {
                            (m[2 * t4][g], m[2 * t4 + 1][g])
                        } else {
                            (m[g][2 * t4], m[g][2 * t4 + 1])
                        };
                        let t = &mut self.warps[w][l];
                        set(f, t, d, Ty::B32, (hi as u64) << 16 | lo as u64);
                    }
                }
            }
            Op::Stmatrix => {
                whole_warp(active, n, "stmatrix", inst.line)?;
                // The inverse of `ldmatrix`: lane l's register i holds its two elements of
                // matrix i; threads 8i..8i+7 give the row addresses of matrix i.
                let space = inst.mods.space.unwrap_or(Space::Generic);
                let nmat = inst.mods.xn.max(1) as usize;
                let srcs = Self::vec_regs(&args[1]);
                let mut rows = vec![[0u16; 8]; 8 * nmat];
                for l in 0..32 {
                    let (g, t4) = (l / 4, l % 4);
                    for (i, s) in srcs.iter().enumerate().take(nmat) {
                        let v = self.get(f, &self.warps[w][l], s, Ty::B32);
                        let (lo, hi) = (v as u16, (v >> 16) as u16);
                        let m = &mut rows[8 * i..8 * i + 8];
                        if inst.mods.trans {
                            m[2 * t4][g] = lo;
                            m[2 * t4 + 1][g] = hi;
                        } else {
                            m[g][2 * t4] = lo;
                            m[g][2 * t4 + 1] = hi;
                        }
                    }
                }
                for (r, row) in rows.iter().enumerate() {
                    let (sp, addr) = self.address(&self.warps[w][r], &args[0], space);
                    let bytes: Vec<u8> = row.iter().flat_map(|e| e.to_le_bytes()).collect();
                    self.store(w, r, sp, addr, &bytes, inst.line)?;
                }
            }
            Op::Movmatrix => {
                whole_warp(active, n, "movmatrix", inst.line)?;
                // Lane l = 4g + t holds row g, columns 2t and 2t + 1; after the transpose it
                // holds the transpose's, i.e. column g, rows 2t and 2t + 1.
                let mut m = [[0u16; 8]; 8];
                for l in 0..32 {
                    let v = self.get(f, &self.warps[w][l], &args[1], Ty::B32);
                    let (g, t4) = (l / 4, l % 4);
                    m[g][2 * t4] = v as u16;
                    m[g][2 * t4 + 1] = (v >> 16) as u16;
                }
                for l in Self::lanes(active) {
                    let (g, t4) = (l / 4, l % 4);
                    let v = u64::from(m[2 * t4 + 1][g]) << 16 | u64::from(m[2 * t4][g]);
                    let t = &mut self.warps[w][l];
                    set(f, t, &args[0], Ty::B32, v);
                }
            }
            Op::Mma => {
                whole_warp(active, n, "mma", inst.line)?;
                self.mma(w, active, f, inst);
            }
            Op::Wmma => {
                whole_warp(active, n, "wmma", inst.line)?;
                self.wmma(w, active, f, inst)?;
            }
            _ => unreachable!("not a collective"),
        }
        for l in Self::lanes(active) {
            self.advance(w, l);
        }
        Ok(())
    }

    /// The registers of a vector operand (`{a, b, ...}`) or a single register, in order.
    pub(crate) fn vec_regs(o: &Operand) -> Vec<Operand> {
        match o {
            Operand::Vec(v) => v.clone(),
            other => vec![other.clone()],
        }
    }

    /// `mma.sync.aligned.mMnNkK.row.col.dtype.atype.btype.ctype d, a, b, c`: gathers the
    /// fragments of all 32 lanes (layouts of `crate::mma::sync_shape`), multiplies, and
    /// scatters D.
    pub(crate) fn mma(&mut self, w: usize, active: u32, f: &Function, inst: &Inst) {
        use crate::mma::{Elem, multiply, sync_shape};
        let args = &inst.args;
        let (d, a, b, c) = (
            Self::vec_regs(&args[0]),
            Self::vec_regs(&args[1]),
            Self::vec_regs(&args[2]),
            Self::vec_regs(&args[3]),
        );
        let e = |i: usize| Elem::of(inst.mods.types[i]).expect("lowering checked the types");
        let (td, ta, tb, tc) = (e(0), e(1), e(2), e(3));
        let s = sync_shape(inst.mods.shape.expect("checked"), ta).expect("checked");
        let mut am = vec![vec![0f64; s.k]; s.m];
        let mut bm = vec![vec![0f64; s.n]; s.k];
        let mut cm = vec![vec![0f64; s.n]; s.m];
        // A register of a fragment: 32 bits, 64 for f64 elements.
        let rty = |t: Elem| if t == Elem::F64 { Ty::B64 } else { Ty::B32 };
        for l in Self::lanes(active) {
            let t = &self.warps[w][l];
            let (g, t4) = (l / 4, l % 4);
            let read = |ops: &[Operand], ty: Elem| -> Vec<u64> {
                ops.iter().map(|o| self.get(f, t, o, rty(ty))).collect()
            };
            let (av, bv, cv) = (read(&a, ta), read(&b, tb), read(&c, tc));
            for i in 0..s.na {
                let (r, k) = (s.a_at)(g, t4, i);
                am[r][k] = ta.get(&av, i);
            }
            for i in 0..s.nb {
                let (k, n) = (s.b_at)(g, t4, i);
                bm[k][n] = tb.get(&bv, i);
            }
            for i in 0..s.nc {
                let (r, n) = (s.c_at)(g, t4, i);
                cm[r][n] = tc.get(&cv, i);
            }
        }
        let dm = multiply(&am, &bm, &cm, td, inst.mods.satfinite);
        for l in Self::lanes(active) {
            let (g, t4) = (l / 4, l % 4);
            let mut regs = vec![0u64; td.regs(s.nc)];
            for i in 0..s.nc {
                let (r, n) = (s.c_at)(g, t4, i);
                td.put(&mut regs, i, dm[r][n]);
            }
            let t = &mut self.warps[w][l];
            for (dst, v) in d.iter().zip(regs) {
                set(f, t, dst, rty(td), v);
            }
        }
    }

    /// `wmma.load.{a,b,c}` / `wmma.store.d` / `wmma.mma` (PTX ISA §9.7.14.4): fragments in the
    /// layout of [`crate::mma::WmmaFrag::at`]. Loads and stores address element (i, j) of the
    /// matrix at `p + (i·stride + j)·size` (`.row`) or `p + (i + j·stride)·size` (`.col`),
    /// the stride defaulting to the matrix's width (`.row`) or height (`.col`).
    pub(crate) fn wmma(
        &mut self,
        w: usize,
        active: u32,
        f: &Function,
        inst: &Inst,
    ) -> Result<(), RunError> {
        use crate::ir::WmmaOp;
        use crate::mma::{Elem, multiply};
        let (op, frags) = crate::lower::wmma_form(&inst.mods).expect("lowering checked the form");
        let args = &inst.args;
        let rty = |t: Elem| if t == Elem::F64 { Ty::B64 } else { Ty::B32 };
        let space = inst.mods.space.unwrap_or(Space::Generic);
        match op {
            WmmaOp::Load(_) | WmmaOp::Store => {
                let fr = frags[0];
                let row_major = inst.mods.layouts[0];
                let (regs_op, addr_op) = if matches!(op, WmmaOp::Store) {
                    (&args[1], &args[0])
                } else {
                    (&args[0], &args[1])
                };
                let regs = Self::vec_regs(regs_op);
                let size = (fr.elem.bits() / 8) as u64;
                for l in Self::lanes(active) {
                    let t = &self.warps[w][l];
                    let stride = match args.get(2) {
                        Some(o) => self.get(f, t, o, Ty::U32),
                        None if row_major => fr.cols as u64,
                        None => fr.rows as u64,
                    };
                    let (sp, base) = self.address(t, addr_op, space);
                    // The matrix pointer must be 256-bit aligned and the stride a multiple of
                    // 16 bytes (CUDA's `load_matrix_sync`/`store_matrix_sync`, on which ptxas's
                    // vector loads rely): otherwise the access is misaligned.
                    if !base.is_multiple_of(32) || !(stride * size).is_multiple_of(16) {
                        return Err(trap_of(
                            self,
                            inst.line,
                            t,
                            format!(
                                "misaligned wmma matrix: address {base:#x} (needs 32-byte alignment), stride {stride} elements of {size} bytes (needs a multiple of 16 bytes)"
                            ),
                        ));
                    }
                    let at = |e: usize| -> u64 {
                        let (i, j) = fr.at(l, e);
                        let (i, j) = (i as u64, j as u64);
                        let off = if row_major {
                            i * stride + j
                        } else {
                            i + j * stride
                        };
                        base.wrapping_add(off * size)
                    };
                    if matches!(op, WmmaOp::Store) {
                        let vals: Vec<u64> = regs
                            .iter()
                            .map(|o| self.get(f, t, o, rty(fr.elem)))
                            .collect();
                        for e in 0..fr.per_lane {
                            let per = fr.elem.per_reg();
                            let sh = (e % per) as u32 * fr.elem.bits();
                            let v = vals.get(e / per).copied().unwrap_or(0) >> sh;
                            let bytes = v.to_le_bytes();
                            self.store(w, l, sp, at(e), &bytes[..size as usize], inst.line)?;
                        }
                    } else {
                        let mut out = vec![0u64; fr.regs()];
                        for e in 0..fr.per_lane {
                            let mut b = vec![0u8; size as usize];
                            self.load(w, l, sp, at(e), &mut b, inst.line)?;
                            fr.elem.put(&mut out, e, fr.elem.from_memory(&b));
                        }
                        let t = &mut self.warps[w][l];
                        for (dst, v) in regs.iter().zip(out) {
                            set(f, t, dst, rty(fr.elem), v);
                        }
                    }
                }
            }
            WmmaOp::Mma => {
                let (fa, fb, fc, fd) = (frags[0], frags[1], frags[2], frags[3]);
                let (d, a, b, c) = (
                    Self::vec_regs(&args[0]),
                    Self::vec_regs(&args[1]),
                    Self::vec_regs(&args[2]),
                    Self::vec_regs(&args[3]),
                );
                let mut am = vec![vec![0f64; fa.cols]; fa.rows];
                let mut bm = vec![vec![0f64; fb.cols]; fb.rows];
                let mut cm = vec![vec![0f64; fc.cols]; fc.rows];
                // Lanes in order; an element a fragment holds twice is read from its first
                // copy (lane order, then element order).
                let mut seen = [
                    vec![false; fa.rows * fa.cols],
                    vec![false; fb.rows * fb.cols],
                    vec![false; fc.rows * fc.cols],
                ];
                for l in Self::lanes(active) {
                    let t = &self.warps[w][l];
                    for (k, (fr, ops, m)) in
                        [(fa, &a, &mut am), (fb, &b, &mut bm), (fc, &c, &mut cm)]
                            .into_iter()
                            .enumerate()
                    {
                        let vals: Vec<u64> = ops
                            .iter()
                            .map(|o| self.get(f, t, o, rty(fr.elem)))
                            .collect();
                        for e in 0..fr.per_lane {
                            let (i, j) = fr.at(l, e);
                            if !std::mem::replace(&mut seen[k][i * fr.cols + j], true) {
                                m[i][j] = fr.elem.get(&vals, e);
                            }
                        }
                    }
                }
                let dm = multiply(&am, &bm, &cm, fd.elem, inst.mods.satfinite);
                for l in Self::lanes(active) {
                    let mut out = vec![0u64; fd.regs()];
                    for e in 0..fd.per_lane {
                        let (i, j) = fd.at(l, e);
                        fd.elem.put(&mut out, e, dm[i][j]);
                    }
                    let t = &mut self.warps[w][l];
                    for (dst, v) in d.iter().zip(out) {
                        set(f, t, dst, rty(fd.elem), v);
                    }
                }
            }
        }
        Ok(())
    }
}
