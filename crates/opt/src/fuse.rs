//! Instruction combining: a wide product followed by a 64-bit add becomes one `IMAD.WIDE`
//! with the addend (`mul.wide.s32 t, i, 4; add.s64 p, base, t` is ptxas's
//! `IMAD.WIDE R2, R7, 0x4, R2`).

use ir::{Class, Func, Inst, Operand, Reg, VReg, op};

use crate::forms::Forms;

fn plain_virt(o: &Operand) -> Option<(VReg, u8, u8)> {
    match o {
        Operand::Reg {
            reg: Reg::Virt { vreg, part, width },
            neg: false,
            not: false,
            abs: false,
            sel: ir::Sel::None,
        } => Some((*vreg, *part, *width)),
        _ => None,
    }
}

/// Whether any instruction in `insts` writes a register read by `o`.
fn clobbers(insts: &[Inst], o: &Operand) -> bool {
    let read: Vec<Reg> = o.regs().collect();
    insts.iter().any(|i| {
        i.def_regs().any(|d| {
            read.iter().any(|r| match (d, *r) {
                (Reg::Virt { vreg: a, .. }, Reg::Virt { vreg: b, .. }) => a == b,
                (
                    Reg::Phys {
                        class: c1,
                        index: i1,
                        ..
                    },
                    Reg::Phys {
                        class: c2,
                        index: i2,
                        ..
                    },
                ) => c1 == c2 && i1 == i2,
                _ => false,
            })
        })
    })
}

/// Reads of each virtual register in the whole function (by arena index).
fn read_counts(f: &Func) -> Vec<u32> {
    let mut reads = vec![0u32; f.vregs.len()];
    for i in f.insts() {
        for r in i.use_regs() {
            if let Reg::Virt { vreg, .. } = r {
                reads[vreg.into_raw().into_u32() as usize] += 1;
            }
        }
    }
    reads
}

/// A 64-bit add as a carry pair, `IADD3 e.0, p, a, b, RZ; IADD3.X e.1, c, d, RZ, p, !PT`,
/// unguarded, whose carry `p` nothing else reads: `p`.
fn carry_pair(f: &Func, lo: &Inst, hi: &Inst, reads: &[u32]) -> Option<VReg> {
    if lo.op != op!("IADD3") || hi.op != op!("IADD3.X") || lo.guard.is_some() || hi.guard.is_some()
    {
        return None;
    }
    if lo.operands.len() != 5 || lo.defs != [0, 1] || hi.operands.len() != 6 || hi.defs != [0] {
        return None;
    }
    let (p, 0, 1) = plain_virt(&lo.operands[1])? else {
        return None;
    };
    let single_carry = f.vregs[p].class == Class::P
        && reads[p.into_raw().into_u32() as usize] == 1
        && plain_virt(&hi.operands[4]) == Some((p, 0, 1))
        && hi.operands[5] == Operand::not(Reg::Zero(Class::P))
        && lo.operands[4] == Operand::rz()
        && hi.operands[3] == Operand::rz();
    single_carry.then_some(p)
}

/// Fuses `IMAD.WIDE[.U32] m, a, b, RZ` with a later `IADD3 e.0, p, x.0, m.0, RZ; IADD3.X
/// e.1, x.1, m.1, RZ, p, !PT` in the same block into `IMAD.WIDE[.U32] e, a, b, x`, when
/// the carry predicate is read nowhere else and `a`, `b` still hold their values. The product
/// itself is left for dead-code elimination.
pub fn fuse_wide_add(f: &mut Func, forms: &mut Forms) -> bool {
    let pred_uses = read_counts(f);
    let mut changed = false;
    for b in f.order.clone() {
        let mut j = 0;
        while j + 1 < f.blocks[b].insts.len() {
            if let Some(new) = match_at(f, b, j, &pred_uses, forms) {
                let insts = &mut f.blocks[b].insts;
                insts[j] = new;
                insts.remove(j + 1);
                changed = true;
            }
            j += 1;
        }
    }
    changed
}

fn match_at(
    f: &Func,
    b: ir::Block,
    j: usize,
    pred_uses: &[u32],
    forms: &mut Forms,
) -> Option<Inst> {
    let insts = &f.blocks[b].insts;
    let (lo, hi) = (&insts[j], &insts[j + 1]);
    carry_pair(f, lo, hi, pred_uses)?;
    let (e, 0, 1) = plain_virt(&lo.operands[0])? else {
        return None;
    };
    let (e1, 1, 1) = plain_virt(&hi.operands[0])? else {
        return None;
    };
    if e != e1 || f.vregs[e].width != 2 {
        return None;
    }
    // Which side is the product: x.k + m.k with m from IMAD.WIDE.
    for (xs, ms) in [(2usize, 3usize), (3, 2)] {
        let Some((x, 0, 1)) = plain_virt(&lo.operands[xs]) else {
            continue;
        };
        let Some((m, 0, 1)) = plain_virt(&lo.operands[ms]) else {
            continue;
        };
        if plain_virt(&hi.operands[xs - 1]) != Some((x, 1, 1))
            || plain_virt(&hi.operands[ms - 1]) != Some((m, 1, 1))
            || f.vregs[x].width != 2
            || f.vregs[m].width != 2
            || x == e && m == e
        {
            continue;
        }
        // The product's definition, earlier in the block.
        let (at, def) = insts[..j].iter().enumerate().rev().find(|(_, i)| {
            i.def_regs()
                .any(|r| matches!(r, Reg::Virt { vreg, .. } if vreg == m))
        })?;
        if !(def.op == op!("IMAD.WIDE") || def.op == op!("IMAD.WIDE.U32"))
            || def.guard.is_some()
            || def.defs != [0]
            || plain_virt(&def.operands[0]) != Some((m, 0, 2))
            || def.operands[3] != Operand::rz()
        {
            return None;
        }
        // The sources must hold the same values at the add: not rewritten after the definition,
        // nor by the definition itself (`shl.b32 %r, %r, 2` then `add`: the fused form would
        // read the shifted value and shift it again).
        let between = &insts[at..j];
        if clobbers(between, &def.operands[1]) || clobbers(between, &def.operands[2]) {
            return None;
        }
        let mut new = Inst::new(
            def.op,
            vec![
                Operand::r(Reg::v(e, 2)),
                def.operands[1].clone(),
                def.operands[2].clone(),
                Operand::r(Reg::v(x, 2)),
            ],
            vec![0],
        );
        new.origin = lo.origin;
        if forms.encodable(f, &new) {
            return Some(new);
        }
        return None;
    }
    None
}

/// The nearest instruction before `j` in `insts` that writes `v`, with its index.
fn last_def(insts: &[Inst], j: usize, v: VReg) -> Option<(usize, &Inst)> {
    insts[..j].iter().enumerate().rev().find(|(_, i)| {
        i.def_regs()
            .any(|r| matches!(r, Reg::Virt { vreg, .. } if vreg == v))
    })
}

/// Folds a 32-bit product or left shift into the add that consumes it:
/// `IMAD m, a, b, RZ; IADD3 d, m, x, RZ` → `IMAD d, a, b, x` (PTX `mul.lo` + `add`), and
/// `SHF.L.U32 t, a, k, RZ; IADD3 d, t, x, RZ` → `LEA d, a, x, k` for an immediate `k < 32`
/// (`shl` + `add`, ptxas's address arithmetic), and `IADD3 m, a, b, RZ; IADD3 d, m, x, RZ` →
/// `IADD3 d, a, b, x` within four instructions. Same block, unguarded, `a`/`b` unchanged in
/// between; the product, shift or first add stays for dead-code elimination when still read
/// elsewhere.
pub fn fuse_add(f: &mut Func, forms: &mut Forms) -> bool {
    let mut changed = false;
    for b in f.order.clone() {
        for j in 0..f.blocks[b].insts.len() {
            if let Some(new) = match_add(f, b, j, forms) {
                f.blocks[b].insts[j] = new;
                changed = true;
            }
        }
    }
    changed
}

fn match_add(f: &Func, b: ir::Block, j: usize, forms: &mut Forms) -> Option<Inst> {
    let insts = &f.blocks[b].insts;
    let add = &insts[j];
    if add.op != op!("IADD3") || add.guard.is_some() || add.defs != [0] || add.operands.len() != 4 {
        return None;
    }
    for (ms, xs) in [(1usize, 2usize), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2)] {
        let zs = 6 - ms - xs;
        if add.operands[zs] != Operand::rz() {
            continue;
        }
        let Some((m, 0, 1)) = plain_virt(&add.operands[ms]) else {
            continue;
        };
        if f.vregs[m].width != 1 {
            continue;
        }
        let Some((at, def)) = last_def(insts, j, m) else {
            continue;
        };
        if def.guard.is_some() || def.defs != [0] || plain_virt(&def.operands[0]) != Some((m, 0, 1))
        {
            continue;
        }
        // The sources must hold the same values at the add: not rewritten after the definition,
        // nor by the definition itself (`shl.b32 %r, %r, 2` then `add`: the fused form would
        // read the shifted value and shift it again).
        let between = &insts[at..j];
        let x = add.operands[xs].clone();
        let is_multiply = [op!("IMAD"), op!("IMAD.SHL.U32"), op!("IMAD.U32")].contains(&def.op);
        let mut new = match def.op {
            _ if is_multiply && def.operands[3] == Operand::rz() => {
                if clobbers(between, &def.operands[1]) || clobbers(between, &def.operands[2]) {
                    continue;
                }
                Inst::new(
                    op!("IMAD"),
                    vec![
                        add.operands[0].clone(),
                        def.operands[1].clone(),
                        def.operands[2].clone(),
                        x,
                    ],
                    vec![0],
                )
            }
            o if o == op!("SHF.L.U32") && def.operands[3] == Operand::rz() => {
                let Operand::Imm(k) = def.operands[2] else {
                    continue;
                };
                if !(0..32).contains(&k) || clobbers(between, &def.operands[1]) {
                    continue;
                }
                let Operand::Reg { .. } = x else {
                    continue;
                };
                Inst::new(
                    op!("LEA"),
                    vec![
                        add.operands[0].clone(),
                        def.operands[1].clone(),
                        x,
                        Operand::Hex(k as u32),
                    ],
                    vec![0],
                )
            }
            // `IADD3 m, a, b, RZ; IADD3 d, m, x, RZ` → `IADD3 d, a, b, x` (chains of PTX adds:
            // ptxas adds three values at once). Only over a short distance: `a` and `b` then
            // live up to the add instead of `m`.
            o if o == op!("IADD3") && def.operands.len() == 4 && j - at <= 4 => {
                let Some(free) = (1..4).find(|&z| def.operands[z] == Operand::rz()) else {
                    continue;
                };
                let sources: Vec<Operand> = (1..4)
                    .filter(|&z| z != free)
                    .map(|z| def.operands[z].clone())
                    .collect();
                if sources.iter().any(|o| clobbers(between, o)) {
                    continue;
                }
                Inst::new(
                    op!("IADD3"),
                    vec![
                        add.operands[0].clone(),
                        sources[0].clone(),
                        sources[1].clone(),
                        x,
                    ],
                    vec![0],
                )
            }
            _ => continue,
        };
        new.origin = add.origin;
        if forms.fit(f, &mut new) {
            return Some(new);
        }
    }
    None
}

/// Folds a 64-bit left shift by an immediate into the 64-bit add that consumes it:
/// `SHF.L.U32 s.0, a, k, RZ; SHF.L.U64.HI s.1, a, k, h` (`h:a << k`) then `IADD3 e.0, p,
/// s.0, x.0, RZ; IADD3.X e.1, s.1, x.1, RZ, p, !PT` becomes `LEA e.0, p, a, x.0, k; LEA.HI.X
/// e.1, a, x.1, h, k, p` (nvcc's `cvt.u64.u32` + `shl.b64` + `add.s64` for a 64-bit index;
/// ptxas writes `LEA R2, P0, R0, c[0x0][0x168], 0x2; LEA.HI.X R3, R0, c[0x0][0x16c], RZ,
/// 0x2, P0`). Same block, unguarded, the carry read only by the pair, `a` and `h` unchanged
/// since the shifts; the shifts stay for dead-code elimination when still read elsewhere.
pub fn fuse_wide_lea(f: &mut Func, forms: &mut Forms) -> bool {
    let pred_uses = read_counts(f);
    let mut changed = false;
    for b in f.order.clone() {
        let mut j = 0;
        while j + 1 < f.blocks[b].insts.len() {
            if let Some((lo, hi)) = match_wide_lea(f, b, j, &pred_uses, forms) {
                let insts = &mut f.blocks[b].insts;
                insts[j] = lo;
                insts[j + 1] = hi;
                changed = true;
            }
            j += 1;
        }
    }
    changed
}

fn match_wide_lea(
    f: &Func,
    b: ir::Block,
    j: usize,
    pred_uses: &[u32],
    forms: &mut Forms,
) -> Option<(Inst, Inst)> {
    let insts = &f.blocks[b].insts;
    let (lo, hi) = (&insts[j], &insts[j + 1]);
    carry_pair(f, lo, hi, pred_uses)?;
    // The destination's words must not be a source of the shifts or of the other addend's
    // high word (the low `LEA` writes `e.0` before the high one reads its sources).
    for (ss, xs) in [(2usize, 3usize), (3, 2)] {
        let Some(s_lo) = plain_virt(&lo.operands[ss]) else {
            continue;
        };
        let Some(s_hi) = plain_virt(&hi.operands[ss - 1]) else {
            continue;
        };
        let def_of = |(v, part, _): (VReg, u8, u8)| {
            insts[..j].iter().enumerate().rev().find(|(_, i)| {
                i.def_regs().any(|r| {
                    matches!(r, Reg::Virt { vreg, part: q, width } if vreg == v && part >= q && part < q + width)
                })
            })
        };
        let (at_lo, shl) = def_of(s_lo)?;
        let (at_hi, shf) = def_of(s_hi)?;
        if shl.op != op!("SHF.L.U32")
            || shf.op != op!("SHF.L.U64.HI")
            || shl.guard.is_some()
            || shf.guard.is_some()
            || shl.defs != [0]
            || shf.defs != [0]
            || plain_virt(&shl.operands[0]) != Some(s_lo)
            || plain_virt(&shf.operands[0]) != Some(s_hi)
            || shl.operands[3] != Operand::rz()
            || shl.operands[1] != shf.operands[1]
            || shl.operands[2] != shf.operands[2]
        {
            continue;
        }
        let Operand::Imm(k) = shl.operands[2] else {
            continue;
        };
        if !(0..32).contains(&k) {
            continue;
        }
        let (a, h) = (shl.operands[1].clone(), shf.operands[3].clone());
        if !matches!(a, Operand::Reg { .. }) {
            continue;
        }
        let first = at_lo.min(at_hi);
        if clobbers(&insts[first..j], &a) || clobbers(&insts[first..j], &h) {
            continue;
        }
        let e_lo = lo.operands[0].clone();
        let (x_lo, x_hi) = (lo.operands[xs].clone(), hi.operands[xs - 1].clone());
        let written: Vec<Reg> = e_lo.regs().collect();
        let reads_written = |o: &Operand| o.regs().any(|r| written.contains(&r));
        if reads_written(&a) || reads_written(&h) || reads_written(&x_hi) {
            continue;
        }
        let mut new_lo = Inst::new(
            op!("LEA"),
            vec![
                e_lo,
                lo.operands[1].clone(),
                a.clone(),
                x_lo,
                Operand::Hex(k as u32),
            ],
            vec![0, 1],
        );
        new_lo.origin = lo.origin;
        let mut new_hi = Inst::new(
            op!("LEA.HI.X"),
            vec![
                hi.operands[0].clone(),
                a,
                x_hi,
                h,
                Operand::Hex(k as u32),
                hi.operands[4].clone(),
            ],
            vec![0],
        );
        new_hi.origin = hi.origin;
        if forms.encodable(f, &new_lo) && forms.encodable(f, &new_hi) {
            return Some((new_lo, new_hi));
        }
        return None;
    }
    None
}
