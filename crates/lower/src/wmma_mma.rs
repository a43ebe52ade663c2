//! `wmma.mma` (sm_80, sm_86, sm_89, sm_90): ptxas's fragments (`target::wmma_layout`) are
//! tilings of `mma.sync`'s (`HMMA.16816`, `HMMA.1688.F32.TF32`, `IMMA.16816`, `DMMA.884`):
//! each tile's registers are found in the fragments by matching their elements lane by lane,
//! directly or, for `m8n32k16`, on the transposed product (`dᵀ = bᵀ·aᵀ`, as ptxas computes
//! it). A form whose registers cannot be matched is refused.

use super::*;
use ir::Sel;
use target::{WmmaFrag, WmmaLayout, wmma_layout};

/// One tensor-core instruction a `wmma.mma` is tiled into: its SASS name, tile shape, register
/// counts (a, b, c; registers of `words` 32-bit words each), and element positions.
struct Tile {
    op: String,
    shape: (u8, u8, u8),
    regs: [u8; 3],
    words: u8,
    sels: Option<(Sel, Sel)>,
    /// (row, col) of element `i` of fragment `which` (0 a, 1 b, 2 c) in lane (g, t).
    at: fn(usize, usize, usize, usize) -> (usize, usize),
    /// Elements per 32-bit register of a, b, c.
    per_reg: [usize; 3],
}

/// mma.m16n8k16 with 16-bit inputs (PTX ISA 9.7.14.5.8).
fn at_16816_h(which: usize, g: usize, t: usize, i: usize) -> (usize, usize) {
    match which {
        0 => (g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4)),
        1 => (2 * t + i % 2 + 8 * (i / 2), g),
        _ => (g + 8 * (i / 2), 2 * t + i % 2),
    }
}

/// mma.m16n8k8 with tf32 inputs.
fn at_1688_tf32(which: usize, g: usize, t: usize, i: usize) -> (usize, usize) {
    match which {
        0 => (g + 8 * (i % 2), t + 4 * (i / 2)),
        1 => (t + 4 * i, g),
        _ => (g + 8 * (i / 2), 2 * t + i % 2),
    }
}

/// mma.m16n8k16 with 8-bit integer inputs.
fn at_16816_i8(which: usize, g: usize, t: usize, i: usize) -> (usize, usize) {
    match which {
        0 => (g + 8 * (i / 4), 4 * t + i % 4),
        1 => (4 * t + i, g),
        _ => (g + 8 * (i / 2), 2 * t + i % 2),
    }
}

/// mma.m8n8k4 with f64.
fn at_884(which: usize, g: usize, t: usize, i: usize) -> (usize, usize) {
    match which {
        0 => (g, t),
        1 => (t, g),
        _ => (g, 2 * t + i),
    }
}

impl Cx {
    /// `wmma.mma.sync.aligned.{alayout}.{blayout}.{shape}.{d}.{a}.{b}.{c} d, a, b, c`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn wmma_mma(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        shape: (u8, u8, u8),
        (arow, brow): (bool, bool),
        [d, a, b, c]: [&str; 4],
        satfinite: bool,
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let refuse = || unsupported(node, format!("wmma{}", mods.concat()));
        if a != b || d != c {
            return Err(refuse());
        }
        let tile = match (a, d) {
            ("f16" | "bf16", "f32") | ("f16", "f16") if !satfinite => Tile {
                op: format!(
                    "HMMA.16816.{}{}",
                    if d == "f32" { "F32" } else { "F16" },
                    if a == "bf16" { ".BF16" } else { "" }
                ),
                shape: (16, 8, 16),
                regs: [4, 2, if d == "f32" { 4 } else { 2 }],
                words: 1,
                sels: None,
                at: at_16816_h,
                per_reg: [2, 2, if d == "f32" { 1 } else { 2 }],
            },
            ("tf32", "f32") if !satfinite => Tile {
                op: "HMMA.1688.F32.TF32".into(),
                shape: (16, 8, 8),
                regs: [4, 2, 4],
                words: 1,
                sels: None,
                at: at_1688_tf32,
                per_reg: [1, 1, 1],
            },
            ("s8" | "u8", "s32") => Tile {
                op: format!(
                    "IMMA.16816.{t}.{t}{}",
                    if satfinite { ".SAT" } else { "" },
                    t = if a == "s8" { "S8" } else { "U8" }
                ),
                shape: (16, 8, 16),
                regs: [2, 1, 4],
                words: 1,
                sels: Some((Sel::Row, Sel::Col)),
                at: at_16816_i8,
                per_reg: [4, 4, 1],
            },
            ("f64", "f64") if !satfinite => Tile {
                op: if self.target.forms.dmma_8x8x4 {
                    "DMMA.8x8x4"
                } else {
                    "DMMA.884"
                }
                .into(),
                shape: (8, 8, 4),
                regs: [1, 1, 2],
                words: 2,
                sels: None,
                at: at_884,
                per_reg: [1, 1, 1],
            },
            _ => return Err(refuse()),
        };
        let la = wmma_layout(WmmaFrag::A, shape, a, arow).ok_or_else(refuse)?;
        let lb = wmma_layout(WmmaFrag::B, shape, b, brow).ok_or_else(refuse)?;
        let lc = wmma_layout(WmmaFrag::C, shape, c, true).ok_or_else(refuse)?;
        let (plan, transposed) = plan_tiles(&tile, shape, [la, lb, lc]).ok_or_else(refuse)?;
        let frag = |o: &ast::Operand, layout: &WmmaLayout, per: usize| {
            let want = layout.per_lane() / per;
            match o {
                ast::Operand::Vector(v) if v.elements().count() == want => {
                    Ok(v.elements().collect::<Vec<_>>())
                }
                _ => Err(malformed(o.syntax(), "wmma fragment of another size")),
            }
        };
        let (pa, pb, pc) = (
            tile.per_reg[0].max(1),
            tile.per_reg[1].max(1),
            tile.per_reg[2].max(1),
        );
        let de = frag(&ops[0], lc, pc)?;
        let ae = frag(&ops[1], la, pa)?;
        let be = frag(&ops[2], lb, pb)?;
        let ce = frag(&ops[3], lc, pc)?;
        let w = tile.words;
        let srcs = |cx: &mut Self, es: &[ast::Operand]| -> Result<Vec<Reg>, LowerError> {
            es.iter().map(|e| cx.reg_src(e, w)).collect()
        };
        let (mut ar, mut br, cr) = (srcs(self, &ae)?, srcs(self, &be)?, srcs(self, &ce)?);
        if transposed {
            std::mem::swap(&mut ar, &mut br);
        }
        // Every tile's result before any is written back: d may share registers with a, b, c.
        let mut results = Vec::new();
        for (ia, ib, ic) in &plan {
            let mut acc = self.group(ic.iter().map(|&q| cr[q]), w);
            for (ka, kb) in ia.iter().zip(ib) {
                let ra = self.group(ka.iter().map(|&q| ar[q]), w);
                let rb = self.group(kb.iter().map(|&q| br[q]), w);
                let out = self.tmp(tile.regs[2] * w);
                let (sa, sb) = tile.sels.unwrap_or((Sel::None, Sel::None));
                let with = |reg: Reg, sel: Sel| Operand::Reg {
                    reg,
                    neg: false,
                    not: false,
                    abs: false,
                    sel,
                };
                self.push(Inst::new(
                    sass_op(node, &tile.op)?,
                    vec![
                        Operand::r(Reg::v(out, tile.regs[2] * w)),
                        with(Reg::v(ra, tile.regs[0] * w), sa),
                        with(Reg::v(rb, tile.regs[1] * w), sb),
                        Operand::r(Reg::v(acc, tile.regs[2] * w)),
                    ],
                    vec![0],
                ));
                acc = out;
            }
            results.push((acc, ic.clone()));
        }
        for (acc, ic) in results {
            for (k, &q) in ic.iter().enumerate() {
                let e = &de[q];
                if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                    continue;
                }
                let dst = self.dst(e, w)?;
                for j in 0..w {
                    self.push(Inst::new(
                        op!("MOV"),
                        vec![
                            Operand::r(sub(dst, j)),
                            Operand::r(Reg::part(acc, k as u8 * w + j)),
                        ],
                        vec![0],
                    ));
                }
            }
        }
        Ok(())
    }

    /// The registers `regs` (each `w` words) copied into a new aligned group.
    pub(crate) fn group(&mut self, regs: impl Iterator<Item = Reg>, w: u8) -> VReg {
        let regs: Vec<Reg> = regs.collect();
        let t = self.tmp(regs.len() as u8 * w);
        for (k, r) in regs.iter().enumerate() {
            for j in 0..w {
                self.push(Inst::new(
                    op!("MOV"),
                    vec![
                        Operand::r(Reg::part(t, k as u8 * w + j)),
                        Operand::r(sub(*r, j)),
                    ],
                    vec![0],
                ));
            }
        }
        t
    }
}

/// Per output tile: for each k step the fragment registers of a and b, and the registers of
/// c (and d) — indices into the PTX fragments.
type Plan = Vec<(Vec<Vec<usize>>, Vec<Vec<usize>>, Vec<usize>)>;

/// How a `wmma.mma` of `shape` is made of `tile`s, with ptxas's fragment layouts `[a, b, c]`:
/// directly, or for the transposed product (`true`: the tiles' a registers are then the b
/// fragment's and the reverse); `None` when the fragments' registers do not hold the tiles'
/// registers.
fn plan_tiles(
    tile: &Tile,
    shape: (u8, u8, u8),
    [la, lb, lc]: [&WmmaLayout; 3],
) -> Option<(Plan, bool)> {
    let (m, n, k) = (
        usize::from(shape.0),
        usize::from(shape.1),
        usize::from(shape.2),
    );
    let (tm, tn, tk) = (
        usize::from(tile.shape.0),
        usize::from(tile.shape.1),
        usize::from(tile.shape.2),
    );
    // The registers of a layout, each the list over lanes of its elements.
    let regs_of = |l: &WmmaLayout, per: usize| -> Vec<Vec<Vec<(usize, usize)>>> {
        (0..l.per_lane() / per)
            .map(|q| {
                (0..32)
                    .map(|lane| {
                        l.at[lane][q * per..(q + 1) * per]
                            .iter()
                            .map(|&(r, c)| (usize::from(r), usize::from(c)))
                            .collect()
                    })
                    .collect()
            })
            .collect()
    };
    let per = tile.per_reg;
    let (ra, rb, rc) = (
        regs_of(la, per[0]),
        regs_of(lb, per[1]),
        regs_of(lc, per[2]),
    );
    // The fragment register holding tile register `j` of `which` at (r0, c0), `transposed`
    // reading the fragment's (col, row).
    let find = |frag: &[Vec<Vec<(usize, usize)>>],
                which: usize,
                j: usize,
                (r0, c0): (usize, usize),
                transposed: bool|
     -> Option<usize> {
        let want: Vec<Vec<(usize, usize)>> = (0..32)
            .map(|lane| {
                (j * per[which]..(j + 1) * per[which])
                    .map(|i| {
                        let (r, c) = (tile.at)(which, lane / 4, lane % 4, i);
                        let (r, c) = (r + r0, c + c0);
                        if transposed { (c, r) } else { (r, c) }
                    })
                    .collect()
            })
            .collect();
        frag.iter().position(|f| *f == want)
    };
    let count = |which: usize| usize::from(tile.regs[which]);
    for transposed in [false, true] {
        // The tile grid over (rows of d, cols of d) as the tile sees them.
        let (mm, nn) = if transposed { (n, m) } else { (m, n) };
        if mm % tm != 0 || nn % tn != 0 || k % tk != 0 {
            continue;
        }
        let (fa, fb) = if transposed { (&rb, &ra) } else { (&ra, &rb) };
        let mut plan = Plan::new();
        let mut ok = true;
        'tiles: for mi in 0..mm / tm {
            for ni in 0..nn / tn {
                let mut ia = Vec::new();
                let mut ib = Vec::new();
                for ki in 0..k / tk {
                    // The tile's a is rows mi of (a or bᵀ), k columns ki.
                    let ka: Option<Vec<usize>> = (0..count(0))
                        .map(|j| find(fa, 0, j, (mi * tm, ki * tk), transposed))
                        .collect();
                    let kb: Option<Vec<usize>> = (0..count(1))
                        .map(|j| find(fb, 1, j, (ki * tk, ni * tn), transposed))
                        .collect();
                    match (ka, kb) {
                        (Some(a), Some(b)) => {
                            ia.push(a);
                            ib.push(b);
                        }
                        _ => {
                            ok = false;
                            break 'tiles;
                        }
                    }
                }
                let ic: Option<Vec<usize>> = (0..count(2))
                    .map(|j| find(&rc, 2, j, (mi * tm, ni * tn), transposed))
                    .collect();
                match ic {
                    Some(c) => plan.push((ia, ib, c)),
                    None => {
                        ok = false;
                        break 'tiles;
                    }
                }
            }
        }
        if ok {
            return Some((plan, transposed));
        }
    }
    None
}
