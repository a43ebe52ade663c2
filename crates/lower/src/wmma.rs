//! `wmma.load`, `wmma.store` and `wmma.mma` (sm_80, sm_86, sm_89, sm_90) in ptxas's fragment
//! layout (`target::wmma_layout`, learned from ptxas 13.0.88 by `cargo xtask wmma-layouts`).
//!
//! * Loads and stores: each lane's element (row, col) is at `p + (row·ld + col)·size`
//!   (`.row`) or `p + (row + col·ld)·size` (`.col`), `ld` the stride operand or the matrix's
//!   width (height). ptxas's layouts place a lane's first element at an affine function of
//!   `g = lane / 4` and `t = lane % 4`, and the other elements at offsets that are the same
//!   for every lane: `g` and `t` are computed once per kernel in its entry block (`S2R
//!   SR_LANEID`), each access's lane address from them (`IMAD`, `IMAD.WIDE.U32`), then each
//!   fragment register moves with one access when its elements
//!   are adjacent in memory (two or four registers with one 64- or 128-bit access when they
//!   continue each other and the access is aligned in every lane), or element by element
//!   (16- or 8-bit accesses, packed with `PRMT`) when they are not. A register that repeats
//!   an earlier one (f16 `a`/`b` fragments hold each element twice or four times) is copied.
//! * `mma`: tiled into `mma.sync`'s instructions (`wmma_mma.rs`).
//!
//! Refused: sm_75, predicated `wmma`, sub-byte and `b1` types, accumulators of two types
//! (`.f32.f16`), `wmma.mma` rounding modifiers other than `.rn` on f64.

use super::*;
use target::{WmmaFrag, WmmaLayout, wmma_layout};

/// Bytes of one element of type `elem`.
fn elem_bytes(elem: &str) -> u32 {
    match elem {
        "s8" | "u8" => 1,
        "f16" | "bf16" => 2,
        "f64" => 8,
        _ => 4,
    }
}

/// A layout's elements as (major, minor) coordinates in memory: (row, col) for `.row`,
/// (col, row) for `.col`.
fn major_minor(l: &WmmaLayout, lane: usize, e: usize) -> (i64, i64) {
    let (r, c) = l.at[lane][e];
    let (r, c) = (i64::from(r), i64::from(c));
    if l.row_major { (r, c) } else { (c, r) }
}

/// The lane part of a layout: `(major, minor)` of a lane's first element as
/// `(mg·g + mt·t, ng·g + nt·t)`, and each element's offset from it, the same for every lane
/// and never negative; `None` when ptxas's layout is not of that form.
#[allow(clippy::type_complexity)]
fn affine(l: &WmmaLayout) -> Option<([i64; 4], Vec<(i64, i64)>)> {
    let (m0, n0) = major_minor(l, 0, 0);
    let (m1, n1) = major_minor(l, 1, 0);
    let (m4, n4) = major_minor(l, 4, 0);
    let k = [m4 - m0, m1 - m0, n4 - n0, n1 - n0];
    if (m0, n0) != (0, 0) {
        return None;
    }
    let deltas: Vec<(i64, i64)> = (0..l.per_lane()).map(|e| major_minor(l, 0, e)).collect();
    // The row addresses scale the stride by a major offset as an unsigned number.
    if deltas.iter().any(|&(a, b)| a < 0 || b < 0) || k.iter().any(|&c| c < 0) {
        return None;
    }
    for lane in 0..32usize {
        let (g, t) = ((lane / 4) as i64, (lane % 4) as i64);
        let base = (k[0] * g + k[1] * t, k[2] * g + k[3] * t);
        for (e, d) in deltas.iter().enumerate() {
            let (a, b) = major_minor(l, lane, e);
            if (a - base.0, b - base.1) != *d {
                return None;
            }
        }
    }
    Some((k, deltas))
}

/// Where a fragment lives: global/generic (64-bit base) or shared (32-bit window address).
#[derive(Clone, Copy)]
enum Base {
    Wide(VReg, bool),
    Shared(Reg),
}

impl Cx {
    pub(crate) fn wmma(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let refuse = || unsupported(node, format!("wmma{}", mods.concat()));
        if !self.target.forms.tensor_cores {
            return Err(unsupported(
                node,
                format!("wmma on {}", self.target.profile.name()),
            ));
        }
        if self.guard.is_some() {
            return Err(unsupported(node, "predicated wmma"));
        }
        let (mut what, mut frag, mut shape) = (None, None, None);
        let (mut layouts, mut types, mut space) = (Vec::new(), Vec::new(), MemSpace::Generic);
        let (mut satfinite, mut sync_aligned) = (false, 0);
        for m in mods {
            match m.as_str() {
                ".load" | ".store" | ".mma" => what = Some(m.as_str()),
                ".a" => frag = Some(WmmaFrag::A),
                ".b" => frag = Some(WmmaFrag::B),
                ".c" | ".d" => frag = Some(WmmaFrag::C),
                ".sync" | ".aligned" => sync_aligned += 1,
                ".row" => layouts.push(true),
                ".col" => layouts.push(false),
                ".global" => space = MemSpace::Global,
                ".shared" | ".shared::cta" => space = MemSpace::Shared,
                ".satfinite" => satfinite = true,
                ".rn" => {}
                ".f16" | ".bf16" | ".tf32" | ".f32" | ".f64" | ".s8" | ".u8" | ".s32" => {
                    types.push(&m[1..])
                }
                s if s.starts_with(".m") => {
                    let dims: Vec<u8> = s[2..]
                        .split(['n', 'k'])
                        .map(|d| d.parse().unwrap_or(0))
                        .collect();
                    if dims.len() != 3 {
                        return Err(refuse());
                    }
                    shape = Some((dims[0], dims[1], dims[2]));
                }
                _ => return Err(refuse()),
            }
        }
        let shape = shape.ok_or_else(refuse)?;
        if sync_aligned != 2 {
            return Err(refuse());
        }
        match (what, frag, &layouts[..], &types[..]) {
            (Some(".load"), Some(f), [row], [elem]) if !satfinite => {
                Self::need(node, ops, ops.len().clamp(2, 3))?;
                self.wmma_access(node, true, f, shape, elem, *row, space, ops)
            }
            (Some(".store"), Some(WmmaFrag::C), [row], [elem]) if !satfinite => {
                Self::need(node, ops, ops.len().clamp(2, 3))?;
                self.wmma_access(node, false, WmmaFrag::C, shape, elem, *row, space, ops)
            }
            (Some(".mma"), None, [ar, br], t) if space == MemSpace::Generic => {
                let (d, a, b, c) = match *t {
                    [d, c] => (d, "f16", "f16", c),
                    [d, a, b, c] => (d, a, b, c),
                    _ => return Err(refuse()),
                };
                Self::need(node, ops, 4)?;
                self.wmma_mma(node, mods, shape, (*ar, *br), [d, a, b, c], satfinite, ops)
            }
            _ => Err(refuse()),
        }
    }

    /// `wmma.load.{a,b,c}` (`load`) or `wmma.store.d`.
    #[allow(clippy::too_many_arguments)]
    fn wmma_access(
        &mut self,
        node: &SyntaxNode,
        load: bool,
        frag: WmmaFrag,
        shape: (u8, u8, u8),
        elem: &str,
        row: bool,
        space: MemSpace,
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let refuse = |why: &str| unsupported(node, format!("wmma {why}"));
        let layout = wmma_layout(frag, shape, elem, row)
            .ok_or_else(|| refuse(&format!("fragment {frag:?} of this shape and .{elem}")))?;
        let (k, deltas) = affine(layout).ok_or_else(|| refuse("fragment layout"))?;
        let size = elem_bytes(elem);
        let words: u8 = if size == 8 { 2 } else { 1 };
        let per_reg = (4 / size.min(4)) as usize;
        let nregs = layout.per_lane() / per_reg;
        let (regs_op, addr_op) = if load {
            (&ops[0], &ops[1])
        } else {
            (&ops[1], &ops[0])
        };
        let elems = match regs_op {
            ast::Operand::Vector(v) => v.elements().collect::<Vec<_>>(),
            _ => return Err(malformed(regs_op.syntax(), "wmma fragment of another size")),
        };
        if elems.len() != nregs {
            return Err(malformed(regs_op.syntax(), "wmma fragment of another size"));
        }
        let (m, n, kk) = shape;
        let (rows, cols) = match frag {
            WmmaFrag::A => (m, kk),
            WmmaFrag::B => (kk, n),
            WmmaFrag::C => (m, n),
        };
        // The stride in elements: an immediate or a register.
        let ld: Operand = match ops.get(2) {
            None => Operand::Imm(i64::from(if row { cols } else { rows })),
            Some(o) => match self.src(o)? {
                Src::Imm(v) if v < 1 << 20 => Operand::Imm(v as i64),
                _ => {
                    // A copy: the row addresses are computed after some fragment registers
                    // are written, and the stride may be one of them.
                    let r = self.reg_src(o, 1)?;
                    let c = Reg::v(self.tmp(1), 1);
                    self.push(Inst::new(
                        op!("MOV"),
                        vec![Operand::r(c), Operand::r(r)],
                        vec![0],
                    ));
                    Operand::r(c)
                }
            },
        };
        // The lane's (major, minor) coordinates and its element offset `major·ld + minor`.
        let (g, t) = self.wmma_lane();
        let major = self.combine(g, k[0], t, k[1]);
        let minor = self.combine(g, k[2], t, k[3]);
        let off = Reg::v(self.tmp(1), 1);
        match (major, minor) {
            (Some(a), c) => {
                let l = match &ld {
                    Operand::Imm(v) => self.konst(*v),
                    o => o.clone(),
                };
                self.push(Inst::new(
                    op!("IMAD"),
                    vec![
                        Operand::r(off),
                        Operand::r(a),
                        l,
                        c.map_or(Operand::rz(), Operand::r),
                    ],
                    vec![0],
                ))
            }
            (None, Some(c)) => self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(off), Operand::r(c)],
                vec![0],
            )),
            (None, None) => self.mov_imm(off, 0),
        }
        // The lane's address.
        let (name, disp) = self.address_name(addr_op)?;
        let base = if space == MemSpace::Shared {
            let Operand::Mem { base, offset, .. } = self.window_mem(addr_op, &name, disp, false)?
            else {
                return Err(refuse("shared address"));
            };
            let a = Reg::v(self.tmp(1), 1);
            let scale = self.konst(i64::from(size));
            self.push(Inst::new(
                op!("IMAD"),
                vec![Operand::r(a), Operand::r(off), scale, Operand::r(base)],
                vec![0],
            ));
            (Base::Shared(a), i64::from(offset))
        } else {
            let b = self.global_base(&name, addr_op)?;
            let a = self.tmp(2);
            let scale = self.konst(i64::from(size));
            self.push(Inst::new(
                op!("IMAD.WIDE.U32"),
                vec![
                    Operand::r(Reg::v(a, 2)),
                    Operand::r(off),
                    scale,
                    Operand::r(Reg::v(b, 2)),
                ],
                vec![0],
            ));
            self.needs_desc = space == MemSpace::Global || self.needs_desc;
            (Base::Wide(a, space == MemSpace::Generic), disp)
        };
        // Addresses of the element rows (`major` deltas) when the stride is a register.
        let mut row_bases: Vec<(i64, Base)> = Vec::new();
        let mut at = |cx: &mut Self, dmaj: i64, dmin: i64| -> Result<(Base, i64), LowerError> {
            let (b, disp) = base;
            match &ld {
                Operand::Imm(v) => Ok((b, disp + (dmaj * v + dmin) * i64::from(size))),
                _ if dmaj == 0 => Ok((b, disp + dmin * i64::from(size))),
                Operand::Reg { reg, .. } => {
                    if let Some((_, rb)) = row_bases.iter().find(|(d, _)| *d == dmaj) {
                        return Ok((*rb, disp + dmin * i64::from(size)));
                    }
                    let scale = cx.konst(dmaj * i64::from(size));
                    let rb = match b {
                        Base::Wide(a, generic) => {
                            let r = cx.tmp(2);
                            cx.push(Inst::new(
                                op!("IMAD.WIDE.U32"),
                                vec![
                                    Operand::r(Reg::v(r, 2)),
                                    Operand::r(*reg),
                                    scale,
                                    Operand::r(Reg::v(a, 2)),
                                ],
                                vec![0],
                            ));
                            Base::Wide(r, generic)
                        }
                        Base::Shared(a) => {
                            let r = Reg::v(cx.tmp(1), 1);
                            cx.push(Inst::new(
                                op!("IMAD"),
                                vec![Operand::r(r), Operand::r(*reg), scale, Operand::r(a)],
                                vec![0],
                            ));
                            Base::Shared(r)
                        }
                    };
                    row_bases.push((dmaj, rb));
                    Ok((rb, disp + dmin * i64::from(size)))
                }
                _ => Err(unsupported(node, "wmma stride operand")),
            }
        };
        // Runs of registers moved by one 64- or 128-bit access (ptxas's `LDG.E.64` of an f32
        // pair): registers whose elements continue each other in memory, the run's first
        // element aligned to the access size in every lane (the matrix is 32-byte aligned and
        // its stride a multiple of 16 bytes, as `wmma` requires).
        let of = |i: usize| -> Vec<(i64, i64)> { deltas[i * per_reg..(i + 1) * per_reg].to_vec() };
        let adjacent = |d: &[(i64, i64)]| d.windows(2).all(|w| w[1] == (w[0].0, w[0].1 + 1));
        let repeat: Vec<bool> = (0..nregs).map(|i| (0..i).any(|j| of(j) == of(i))).collect();
        let reg_bytes = size * per_reg as u32;
        let aligned = |dmin: i64, bytes: u32| {
            (0..8i64).all(|g| {
                (0..4i64).all(|t| {
                    ((k[2] * g + k[3] * t + dmin) * i64::from(size)) % i64::from(bytes) == 0
                })
            })
        };
        let mut run = vec![1usize; nregs];
        let mut inside = vec![false; nregs];
        for i in 0..nregs {
            if inside[i] || repeat[i] || !adjacent(&of(i)) {
                continue;
            }
            for n in [4usize, 2] {
                let bytes = reg_bytes * n as u32;
                let fits = bytes <= 16
                    && i + n <= nregs
                    && (i + 1..i + n).all(|j| {
                        let (p, q) = (of(j - 1), of(j));
                        !repeat[j] && adjacent(&q) && q[0] == (p[0].0, p[0].1 + per_reg as i64)
                    })
                    && aligned(of(i)[0].1, bytes);
                if fits {
                    run[i] = n;
                    inside[i + 1..i + n].iter_mut().for_each(|x| *x = true);
                    break;
                }
            }
        }
        // Each fragment register: a repeat of an earlier one, part of a run, one access, or
        // one access per element.
        let mut done: Vec<(Vec<(i64, i64)>, Reg)> = Vec::new();
        for (i, e) in elems.iter().enumerate() {
            let mine: Vec<(i64, i64)> = of(i);
            let sink = matches!(e, ast::Operand::Name(n) if n.is_sink());
            if inside[i] {
                continue;
            }
            if run[i] > 1 {
                let n = run[i];
                let t = self.tmp(n as u8 * words);
                let group = Reg::v(t, n as u8 * words);
                let (b, o) = at(self, mine[0].0, mine[0].1)?;
                if load {
                    self.wmma_move(node, true, b, o, reg_bytes * n as u32, group)?;
                }
                for j in 0..n {
                    let ej = &elems[i + j];
                    let r = if load {
                        if matches!(ej, ast::Operand::Name(x) if x.is_sink()) {
                            done.push((of(i + j), Reg::v(self.tmp(words), words)));
                            continue;
                        }
                        self.dst(ej, words)?
                    } else {
                        self.reg_src(ej, words)?
                    };
                    for w in 0..words {
                        let part = Reg::part(t, j as u8 * words + w);
                        let (to, from) = if load {
                            (sub(r, w), part)
                        } else {
                            (part, sub(r, w))
                        };
                        self.push(Inst::new(
                            op!("MOV"),
                            vec![Operand::r(to), Operand::r(from)],
                            vec![0],
                        ));
                    }
                    done.push((of(i + j), r));
                }
                if !load {
                    self.wmma_move(node, false, b, o, reg_bytes * n as u32, group)?;
                }
                continue;
            }
            if let Some((_, r)) = done.iter().find(|(d, _)| *d == mine) {
                if load && !sink {
                    let d = self.dst(e, words)?;
                    for j in 0..words {
                        self.push(Inst::new(
                            op!("MOV"),
                            vec![Operand::r(sub(d, j)), Operand::r(sub(*r, j))],
                            vec![0],
                        ));
                    }
                }
                continue;
            }
            let adjacent = adjacent(&mine);
            let reg = if load {
                let d = if sink {
                    Reg::v(self.tmp(words), words)
                } else {
                    self.dst(e, words)?
                };
                if adjacent {
                    let (b, o) = at(self, mine[0].0, mine[0].1)?;
                    self.wmma_move(node, true, b, o, size * per_reg as u32, d)?;
                } else {
                    let parts: Vec<Reg> = mine
                        .iter()
                        .map(|&(a, c)| {
                            let (b, o) = at(self, a, c)?;
                            let p = Reg::v(self.tmp(1), 1);
                            self.wmma_move(node, true, b, o, size, p)?;
                            Ok(p)
                        })
                        .collect::<Result<_, LowerError>>()?;
                    self.pack(d, &parts);
                }
                d
            } else {
                let v = self.reg_src(e, words)?;
                if adjacent {
                    let (b, o) = at(self, mine[0].0, mine[0].1)?;
                    self.wmma_move(node, false, b, o, size * per_reg as u32, v)?;
                } else {
                    for (h, &(a, c)) in mine.iter().enumerate() {
                        let (b, o) = at(self, a, c)?;
                        let part = if h == 0 {
                            v
                        } else {
                            let p = Reg::v(self.tmp(1), 1);
                            // Element `h`'s bytes to the bottom, zeros (RZ's bytes) above.
                            let sel = (0..4u32).fold(0u32, |sel, i| {
                                let nib = if i < size { h as u32 * size + i } else { 7 };
                                sel | nib << (4 * i)
                            });
                            self.push(Inst::new(
                                op!("PRMT"),
                                vec![
                                    Operand::r(p),
                                    Operand::r(v),
                                    Operand::Imm(i64::from(sel)),
                                    Operand::rz(),
                                ],
                                vec![0],
                            ));
                            p
                        };
                        self.wmma_move(node, false, b, o, size, part)?;
                    }
                }
                v
            };
            done.push((mine, reg));
        }
        Ok(())
    }

    /// The lane's `(g, t) = (lane / 4, lane % 4)`: registers set once in the entry block
    /// ([`Cx::place_wmma_lane`]), as ptxas computes them once per kernel.
    fn wmma_lane(&mut self) -> (Reg, Reg) {
        if let Some(gt) = self.wmma_lane {
            return gt;
        }
        let gt = (Reg::v(self.tmp(1), 1), Reg::v(self.tmp(1), 1));
        self.wmma_lane = Some(gt);
        gt
    }

    /// Puts the computation of [`Cx::wmma_lane`]'s registers at the start of block `entry`
    /// (after its first instruction, the stack pointer's load: the prologue), if a `wmma` used
    /// them.
    pub(crate) fn place_wmma_lane(&mut self, entry: Block) {
        let Some((g, t)) = self.wmma_lane else {
            return;
        };
        let lane = Reg::v(self.tmp(1), 1);
        let two = Reg::v(self.tmp(1), 1);
        let code = [
            Inst::new(
                op!("S2R"),
                vec![Operand::r(lane), Operand::Special("SR_LANEID")],
                vec![0],
            ),
            Inst::new(op!("MOV"), vec![Operand::r(two), Operand::Imm(2)], vec![0]),
            Inst::new(
                op!("SHF.R.U32.HI"),
                vec![
                    Operand::r(g),
                    Operand::rz(),
                    Operand::r(two),
                    Operand::r(lane),
                ],
                vec![0],
            ),
            Inst::new(
                op!("LOP3.LUT"),
                vec![
                    Operand::r(t),
                    Operand::r(lane),
                    Operand::Imm(3),
                    Operand::rz(),
                    Operand::Hex(0xc0),
                    Operand::not(Reg::Zero(Class::P)),
                ],
                vec![0],
            ),
        ];
        let at = usize::from(!self.f.blocks[entry].insts.is_empty());
        for (k, i) in code.into_iter().enumerate() {
            self.f.blocks[entry].insts.insert(at + k, i);
        }
    }

    /// A register holding `v` (opt folds it into the instruction where a form takes it).
    fn konst(&mut self, v: i64) -> Operand {
        let r = Reg::v(self.tmp(1), 1);
        self.mov_imm(r, v as u32);
        Operand::r(r)
    }

    /// `a·ka + b·kb` in a new register, `None` when both are zero (terms with a zero factor
    /// are left out: `IMAD` has no form with a zero immediate).
    fn combine(&mut self, a: Reg, ka: i64, b: Reg, kb: i64) -> Option<Reg> {
        let mut acc: Option<Reg> = None;
        for (r, k) in [(b, kb), (a, ka)] {
            if k == 0 {
                continue;
            }
            let d = Reg::v(self.tmp(1), 1);
            if k == 1 {
                // No multiply by one (`IMAD R, R, 0x1, RZ` prints as another instruction).
                match acc {
                    None => acc = Some(r),
                    Some(c) => {
                        self.push(Inst::new(
                            op!("IADD3"),
                            vec![Operand::r(d), Operand::r(r), Operand::r(c), Operand::rz()],
                            vec![0],
                        ));
                        acc = Some(d);
                    }
                }
                continue;
            }
            let k = self.konst(k);
            self.push(Inst::new(
                op!("IMAD"),
                vec![
                    Operand::r(d),
                    Operand::r(r),
                    k,
                    acc.map_or(Operand::rz(), Operand::r),
                ],
                vec![0],
            ));
            acc = Some(d);
        }
        acc
    }

    /// `d` = the 8- or 16-bit values `parts` packed, first in the low bits.
    fn pack(&mut self, d: Reg, parts: &[Reg]) {
        let prmt = |cx: &mut Self, d: Reg, a: Reg, sel: i64, b: Reg| {
            cx.push(Inst::new(
                op!("PRMT"),
                vec![
                    Operand::r(d),
                    Operand::r(a),
                    Operand::Imm(sel),
                    Operand::r(b),
                ],
                vec![0],
            ));
        };
        let halves: Vec<Reg> = if parts.len() == 4 {
            parts
                .chunks(2)
                .map(|p| {
                    let h = Reg::v(self.tmp(1), 1);
                    prmt(self, h, p[0], 0x0040, p[1]);
                    h
                })
                .collect()
        } else {
            parts.to_vec()
        };
        prmt(self, d, halves[0], 0x5410, halves[1]);
    }

    /// One load (`load`) or store of `bytes` bytes between `r` and `[base+off]`.
    fn wmma_move(
        &mut self,
        node: &SyntaxNode,
        load: bool,
        base: Base,
        off: i64,
        bytes: u32,
        r: Reg,
    ) -> Result<(), LowerError> {
        let offset = i32::try_from(off)
            .ok()
            .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
            .ok_or_else(|| unsupported(node, "address offset out of range"))?;
        let suffix = match bytes {
            1 => ".U8",
            2 => ".U16",
            8 => ".64",
            16 => ".128",
            _ => "",
        };
        let mut implicit = Vec::new();
        let (mem, op) = match base {
            Base::Shared(a) => (
                Operand::Mem {
                    base: a,
                    offset,
                    desc: None,
                },
                if load { "LDS" } else { "STS" }.to_string(),
            ),
            Base::Wide(a, generic) => {
                let desc_operand = self.target.forms.desc_operand;
                if !desc_operand {
                    implicit.push(desc_reg());
                }
                self.needs_desc = true;
                let op = match (generic, load) {
                    (false, true) => "LDG.E",
                    (false, false) => "STG.E",
                    (true, true) => "LD.E",
                    (true, false) => "ST.E",
                };
                (
                    Operand::Mem {
                        base: Reg::v(a, 2),
                        offset,
                        desc: desc_operand.then(desc_reg),
                    },
                    op.to_string(),
                )
            }
        };
        let op = sass_op(node, &format!("{op}{suffix}"))?;
        let mut inst = if load {
            Inst::new(op, vec![Operand::r(r), mem], vec![0])
        } else {
            Inst::new(op, vec![mem, Operand::r(r)], vec![])
        };
        inst.implicit_uses.extend(implicit);
        self.push(inst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fragment form ptxas has is of the affine form the lowering needs (so none is
    /// refused for its layout), and the f32 accumulator of m16n16k16 is mma.m16n8k16's:
    /// lane (g, t) holds (g, 2t), (g, 2t+1), (g+8, 2t), ... .
    #[test]
    fn every_fragment_layout_is_affine_in_the_lane() {
        let three = [(16, 16, 16), (32, 8, 16), (8, 32, 16)];
        let mut forms: Vec<(WmmaFrag, (u8, u8, u8), &str)> = Vec::new();
        for f in [WmmaFrag::A, WmmaFrag::B] {
            for e in ["f16", "bf16", "s8", "u8"] {
                forms.extend(three.iter().map(|&s| (f, s, e)));
            }
            forms.push((f, (16, 16, 8), "tf32"));
            forms.push((f, (8, 8, 4), "f64"));
        }
        for e in ["f16", "f32", "s32"] {
            forms.extend(three.iter().map(|&s| (WmmaFrag::C, s, e)));
        }
        forms.push((WmmaFrag::C, (16, 16, 8), "f32"));
        forms.push((WmmaFrag::C, (8, 8, 4), "f64"));
        for (f, s, e) in forms {
            for row in [true, false] {
                let l = wmma_layout(f, s, e, row).expect("in the table");
                assert!(affine(l).is_some(), "{f:?} {s:?} {e} row={row}");
            }
        }
        let c = wmma_layout(WmmaFrag::C, (16, 16, 16), "f32", true).unwrap();
        let (k, deltas) = affine(c).unwrap();
        assert_eq!(k, [1, 0, 0, 2]);
        assert_eq!(&deltas[..4], &[(0, 0), (0, 1), (8, 0), (8, 1)]);
    }
}
