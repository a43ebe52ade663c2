//! Memory instructions: textures, loads, stores, `LDGSTS` and atomics.

use super::*;

/// `TEX` (float coordinates) and `TLD` (integer coordinates) in the forms of
/// [`sass::texture::TexForm`], sampled by the interpreter's texture model (`interp::texture`;
/// the level of detail is ignored: every modelled texture has one level).
pub(crate) fn texture(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    use sass::texture::{TexForm, TexHandle};
    let Some(f) = TexForm::parse(inst) else {
        return unsupported(format!("texture form {}", inst.opcode));
    };
    let handle = match f.handle {
        TexHandle::Uniform(r) if r.index == 63 => 0,
        TexHandle::Uniform(r) => w.ureg(r.index),
        TexHandle::ConstWord(idx) => {
            let off = idx as usize * 4;
            ctx.cbank0
                .get(off..off + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| {
                    Fault::Unsupported(format!("texture word {idx:#x} outside bank 0"))
                })?
        }
    };
    let group = |g: sass::texture::Group| -> Vec<u32> {
        (0..g.count)
            .map(|i| {
                if g.reg.index == 255 {
                    0
                } else {
                    w.reg(l, g.reg.index + i)
                }
            })
            .collect()
    };
    let mut vals = group(f.a);
    if let Some(b) = f.b {
        vals.extend(group(b));
    }
    let Some(t) = ctx.mem.textures().get(u64::from(handle)) else {
        return trap(l, format!("texture handle {handle:#x} names no texture"));
    };
    let n = usize::from(f.coords);
    let (layer, c) = if f.layered {
        (vals[0], &vals[1..n])
    } else {
        (0, &vals[..n])
    };
    let mut at = [0u32; 3];
    at[..c.len()].copy_from_slice(c);
    let coords = if f.integer {
        interp::texture::Coords::Int(at.map(|v| v as i32))
    } else {
        interp::texture::Coords::Float(at.map(f32::from_bits))
    };
    let texel = t.fetch(layer, coords);
    let channels: Vec<u32> = (0..4)
        .filter(|c| f.mask >> c & 1 == 1)
        .map(|c| texel[c])
        .collect();
    let (first, second) = channels.split_at(usize::from(f.d0.count));
    for (g, vals) in [(f.d0, first), (f.d1, second)] {
        if g.reg.index != 255 {
            for (i, v) in vals.iter().enumerate() {
                w.set_reg(l, g.reg.index + i as u8, *v);
            }
        }
    }
    Ok(())
}

/// Access width in bytes and sign extension from the size modifiers.
pub(crate) fn mem_size(inst: &Inst) -> (usize, bool) {
    if inst.has_mod("U8") {
        (1, false)
    } else if inst.has_mod("S8") {
        (1, true)
    } else if inst.has_mod("U16") {
        (2, false)
    } else if inst.has_mod("S16") {
        (2, true)
    } else if inst.has_mod("64") {
        (8, false)
    } else if inst.has_mod("128") {
        (16, false)
    } else {
        (4, false)
    }
}

pub(crate) fn space_of(op: &str) -> (Space, bool) {
    match op {
        "LDG" | "STG" | "ATOMG" | "REDG" => (Space::Global, true),
        "LDS" | "STS" | "ATOMS" => (Space::Shared, false),
        "LDL" | "STL" => (Space::Local, false),
        _ => (Space::Generic, true),
    }
}

pub(crate) fn mem_operand(inst: &Inst) -> R<(usize, &sass::model::Address)> {
    inst.operands
        .iter()
        .enumerate()
        .find_map(|(i, o)| match &o.kind {
            OperandKind::Mem { addr, .. } => Some((i, addr)),
            _ => None,
        })
        .ok_or_else(|| Fault::Unsupported(format!("{} without a memory operand", inst.opcode)))
}

pub(crate) fn load(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods_in(inst, &[NEUTRAL_MEM_MODS, SIZE_MODS, &["U"]])?;
    let (space, wide) = space_of(&inst.opcode);
    let (mi, addr) = mem_operand(inst)?;
    // `LDG.E.CONSTANT.SYS PT, R2, [UR4]` (sm_75): a predicate destination before the data,
    // always `PT` (discarded) in ptxas's code.
    let d = match mi {
        1 => op_at(inst, 0)?,
        2 if matches!(&op_at(inst, 0)?.kind,
            OperandKind::Reg(r) if r.file == RegFile::P && r.index == 7) =>
        {
            op_at(inst, 1)?
        }
        _ => return unsupported(format!("{} operand layout", inst.opcode)),
    };
    let a = address(w, l, addr, wide)?;
    let (n, signed) = mem_size(inst);
    let mut buf = [0u8; 16];
    ctx.load(w, l, space, a, &mut buf[..n])?;
    let words: Vec<u32> = match n {
        1 => vec![if signed {
            buf[0] as i8 as u32
        } else {
            u32::from(buf[0])
        }],
        2 => {
            let v = u16::from_le_bytes([buf[0], buf[1]]);
            vec![if signed {
                v as i16 as u32
            } else {
                u32::from(v)
            }]
        }
        _ => buf[..n]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect(),
    };
    wr_n(w, l, d, &words)
}

pub(crate) fn store(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods_in(inst, &[NEUTRAL_MEM_MODS, SIZE_MODS])?;
    let (space, wide) = space_of(&inst.opcode);
    let (mi, addr) = mem_operand(inst)?;
    if mi != 0 {
        return unsupported(format!("{} operand layout", inst.opcode));
    }
    let a = address(w, l, addr, wide)?;
    let (n, _) = mem_size(inst);
    let v = rd_n(w, l, op_at(inst, 1)?, n.div_ceil(4))?;
    let mut bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    bytes.truncate(n);
    ctx.store(w, l, space, a, &bytes)
}

/// `LDGSTS[.size][.ZFILL] [shared], [global.64], p` (`cp.async`): copies 4, 8 (`.64`) or 16
/// (`.128`) bytes from global to shared memory. The copy completes here, at issue; PTX lets
/// a kernel read the destination only after `cp.async.wait_group`/`wait_all` (`LDGDEPBAR`,
/// `DEPBAR`), so no correct kernel can tell. When `p` (default `PT`) is false the
/// destination gets zeros (`ignore-src`); with `.ZFILL` the low bits of the global address
/// (modulo the size) are the number of trailing bytes to zero, the rest is copied from the
/// address rounded down to the size (ptxas adds `(size - src-size) % size` to the source
/// for `cp.async ..., src-size`; read from ptxas 13.0.88's sm_80/sm_90 code).
pub(crate) fn ldgsts(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(
        inst,
        &[
            "E", "BYPASS", "LTC64B", "LTC128B", "LTC256B", "ZFILL", "64", "128",
        ],
    )?;
    let n: usize = if inst.has_mod("128") {
        16
    } else if inst.has_mod("64") {
        8
    } else {
        4
    };
    let (dst, src) = match (&op_at(inst, 0)?.kind, &op_at(inst, 1)?.kind) {
        (OperandKind::Mem { addr: d, .. }, OperandKind::Mem { addr: s, .. }) => (d, s),
        _ => return unsupported("LDGSTS operand layout"),
    };
    let copy = match inst.operands.get(2) {
        Some(p) => pred(w, l, p)?,
        None => true,
    };
    let d = address(w, l, dst, false)?;
    let mut a = address(w, l, src, true)?;
    let mut bytes = [0u8; 16];
    if copy {
        let mut keep = n;
        if inst.has_mod("ZFILL") {
            keep = n - (a % n as u64) as usize;
            a -= (n - keep) as u64;
        }
        if keep == n {
            ctx.load(w, l, Space::Global, a, &mut bytes[..n])?;
        } else {
            // Only the kept bytes are read (the rest may lie past the source's end).
            for (i, b) in bytes[..keep].iter_mut().enumerate() {
                let mut one = [0u8];
                ctx.load(w, l, Space::Global, a + i as u64, &mut one)?;
                *b = one[0];
            }
        }
    }
    ctx.store(w, l, Space::Shared, d, &bytes[..n])
}

pub(crate) fn atom(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    if inst.opcode == "ATOMS" && inst.has_mod("ARRIVE") {
        return syncs::atoms_arrive(ctx, w, inst, l);
    }
    const OPS: &[&str] = &[
        "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS",
    ];
    const TYS: &[&str] = &[
        "S32", "U32", "64", "S64", "U64", "F32", "F64", "F16x2", "BF16x2", "F32x2", "F32x4",
        "F16x4", "F16x8", "BF16x4", "BF16x8",
    ];
    check_mods_in(
        inst,
        &[
            NEUTRAL_MEM_MODS,
            OPS,
            TYS,
            &["FTZ", "RN", "CAST", "SPIN", "32", "POPC"],
        ],
    )?;
    let no_result = matches!(&op_at(inst, 0)?.kind, OperandKind::Reg(r) if r.index == 255);
    if inst.has_mod("POPC") && inst.has_mod("INC") && inst.has_mod("32") && no_result {
        // `ATOMS.POPC.INC.32 RZ, [a]`: ptxas's form of `atom.shared.add.u32 _, [a], 1` whose
        // result is unused (the hardware adds, per address, the population count of the
        // lanes naming it): every executing lane adds 1 to its word.
        let (space, wide) = space_of(&inst.opcode);
        let (_, addr) = mem_operand(inst)?;
        let a = address(w, l, addr, wide)?;
        let mut buf = [0u8; 4];
        ctx.load(w, l, space, a, &mut buf)?;
        let v = u32::from_le_bytes(buf).wrapping_add(1);
        return ctx.store(w, l, space, a, &v.to_le_bytes());
    }
    if inst.has_mod("CAST") && inst.has_mod("SPIN") && !inst.has_mod("POPC") {
        // `ATOMS.CAST.SPIN[.64] d, [a], cmp, new`: compare-and-store, `d` = 1 when the word
        // held `cmp` and now holds `new`, else 0 (64-bit `d` for `.64`) — the step of
        // ptxas's compare-and-swap loops (a shared `atom.add.f32` is `LDS`, `FADD`, this,
        // `ISETP.EQ d, 0x1` and a branch back).
        let (space, wide) = space_of(&inst.opcode);
        let (mi, addr) = mem_operand(inst)?;
        let a = address(w, l, addr, wide)?;
        let is64 = inst.has_mod("64");
        let n = if is64 { 8 } else { 4 };
        let src = |i: usize| -> R<u64> {
            let o = op_at(inst, i)?;
            if is64 {
                raw64(ctx, w, l, o)
            } else {
                raw32(ctx, w, l, o).map(u64::from)
            }
        };
        let (cmp, new) = (src(mi + 1)?, src(mi + 2)?);
        let mut buf = [0u8; 8];
        ctx.load(w, l, space, a, &mut buf[..n])?;
        let swapped = u64::from_le_bytes(buf) == cmp;
        if swapped {
            ctx.store(w, l, space, a, &new.to_le_bytes()[..n])?;
        }
        if mi >= 1 {
            let d = op_at(inst, mi - 1)?;
            if is64 {
                wr64(w, l, d, u64::from(swapped))?;
            } else {
                wr(w, l, d, u32::from(swapped))?;
            }
        }
        return Ok(());
    }
    if inst.has_mod("CAST") || inst.has_mod("POPC") {
        return unsupported(format!("{}.{}", inst.opcode, inst.mods.join(".")));
    }
    let op = find_mod(inst, OPS)
        .ok_or_else(|| Fault::Unsupported(format!("{} without an operation", inst.opcode)))?;
    let (space, wide) = space_of(&inst.opcode);
    let (mi, addr) = mem_operand(inst)?;
    let a = address(w, l, addr, wide)?;
    let is64 =
        inst.has_mod("64") || inst.has_mod("S64") || inst.has_mod("U64") || inst.has_mod("F64");
    let n = if is64 { 8 } else { 4 };
    let ty = find_mod(inst, &["S32", "F32", "F64", "S64", "F16x2", "BF16x2"]).unwrap_or(if is64 {
        "U64"
    } else {
        "U32"
    });
    if let Some(packed) = find_mod(
        inst,
        &[
            "F16x2", "BF16x2", "F32x2", "F32x4", "F16x4", "F16x8", "BF16x4", "BF16x8",
        ],
    ) {
        return atom_packed(ctx, w, inst, l, op, packed);
    }
    let src = |i: usize| -> R<u64> {
        let o = op_at(inst, i)?;
        if is64 {
            raw64(ctx, w, l, o)
        } else {
            raw32(ctx, w, l, o).map(u64::from)
        }
    };
    let b = src(mi + 1)?;
    let c = if op == "CAS" { src(mi + 2)? } else { 0 };
    // `ATOM P, d, [a], b` (generic space) with a predicate destination other than `PT`:
    // ptxas's generic 64-bit atomics (`ATOM P0, ...; @P0 BRA done; QSPC.E.S P0, RZ, [a];`
    // then a shared or a local path) — the atomic is performed, and P set, only when `a`
    // is a global address; otherwise nothing happens and P is clear.
    let pred_dst = (mi >= 2)
        .then(|| op_at(inst, mi - 2))
        .transpose()?
        .filter(|p| !matches!(&p.kind, OperandKind::Reg(r) if r.file == RegFile::P && r.is_zero() && !p.not));
    if let Some(p) = pred_dst {
        if space != Space::Generic || !is_pred(p) || p.not {
            return unsupported(format!("{} with a predicate result", inst.opcode));
        }
        let global = crate::exec::classify(a).0 == Space::Global;
        wp(w, l, p, global)?;
        if !global {
            return Ok(());
        }
    }
    let mut buf = [0u8; 8];
    ctx.load(w, l, space, a, &mut buf[..n])?;
    let old = u64::from_le_bytes(buf);
    let mask = if is64 { u64::MAX } else { 0xffff_ffff };
    let new = match op {
        "ADD" => match ty {
            "F32" => {
                // `.FTZ` flushes subnormal inputs and result.
                let ftz = |x: u64| if inst.has_mod("FTZ") { F32.ftz(x) } else { x };
                ftz(float::add(
                    f64::from(f32::from_bits(ftz(old) as u32)),
                    f64::from(f32::from_bits(ftz(b) as u32)),
                    Rnd::Ne,
                    F32,
                ))
            }
            "F64" => float::add(f64::from_bits(old), f64::from_bits(b), Rnd::Ne, F64),
            _ => old.wrapping_add(b) & mask,
        },
        "MIN" | "MAX" => {
            let (x, y) = match ty {
                "S32" => (i128::from(old as i32), i128::from(b as i32)),
                "S64" => (i128::from(old as i64), i128::from(b as i64)),
                _ => (i128::from(old), i128::from(b)),
            };
            let r = if op == "MIN" { x.min(y) } else { x.max(y) };
            r as u64 & mask
        }
        "INC" => {
            if old >= b {
                0
            } else {
                old + 1
            }
        }
        "DEC" => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
        "AND" => old & b,
        "OR" => old | b,
        "XOR" => old ^ b,
        "EXCH" => b,
        "CAS" => {
            if old == b {
                c
            } else {
                old
            }
        }
        _ => return unsupported(format!("atomic .{op}")),
    };
    ctx.store(w, l, space, a, &new.to_le_bytes()[..n])?;
    // ATOM/ATOMG/ATOMS return the old value in the register before the address (RZ = none;
    // ATOM/ATOMG first name a predicate, PT when discarded); RED returns nothing.
    if mi >= 1 {
        let d = op_at(inst, mi - 1)?;
        if is64 {
            wr64(w, l, d, old)?;
        } else {
            wr(w, l, d, old as u32)?;
        }
    }
    Ok(())
}

/// Packed and vector floating-point atomic adds (`ATOMG.E.ADD.F16x2.RN`, sm_90's
/// `REDG.E.ADD.F32x4.FTZ.RN`, `.F16x8.RN`, `.BF16x4.RN`, ...): each element is added
/// round-to-nearest like `HADD2`/`FADD` (`.FTZ` flushes f32 subnormals), the old words go to
/// the destination group.
fn atom_packed(
    ctx: &mut Ctx<'_>,
    w: &mut Warp,
    inst: &Inst,
    l: usize,
    op: &str,
    ty: &str,
) -> R<()> {
    if op != "ADD" {
        return unsupported(format!("{}.{op}.{ty}", inst.opcode));
    }
    let (fmt, elem_bits, words) = match ty {
        "F16x2" => (F16, 16, 1),
        "BF16x2" => (BF16, 16, 1),
        "F16x4" => (F16, 16, 2),
        "BF16x4" => (BF16, 16, 2),
        "F16x8" => (F16, 16, 4),
        "BF16x8" => (BF16, 16, 4),
        "F32x2" => (F32, 32, 2),
        _ => (F32, 32, 4),
    };
    let (space, wide) = space_of(&inst.opcode);
    let (mi, addr) = mem_operand(inst)?;
    let a = address(w, l, addr, wide)?;
    let b = rd_n(w, l, op_at(inst, mi + 1)?, words)?;
    let mut buf = [0u8; 16];
    ctx.load(w, l, space, a, &mut buf[..4 * words])?;
    let old: Vec<u32> = buf[..4 * words]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let ftz = inst.has_mod("FTZ");
    let add = |x: u64, y: u64| -> u64 {
        if elem_bits == 32 {
            let fl = |v: u64| if ftz { F32.ftz(v) } else { v };
            fl(float::add(
                f64::from(f32::from_bits(fl(x) as u32)),
                f64::from(f32::from_bits(fl(y) as u32)),
                Rnd::Ne,
                F32,
            ))
        } else {
            float::add(fmt.to_f64(x), fmt.to_f64(y), Rnd::Ne, fmt)
        }
    };
    let new: Vec<u32> = old
        .iter()
        .zip(&b)
        .map(|(&o, &v)| {
            if elem_bits == 32 {
                add(u64::from(o), u64::from(v)) as u32
            } else {
                let lo = add(u64::from(o & 0xffff), u64::from(v & 0xffff)) as u32 & 0xffff;
                let hi = add(u64::from(o >> 16), u64::from(v >> 16)) as u32 & 0xffff;
                hi << 16 | lo
            }
        })
        .collect();
    let bytes: Vec<u8> = new.iter().flat_map(|x| x.to_le_bytes()).collect();
    ctx.store(w, l, space, a, &bytes)?;
    if mi >= 1 {
        wr_n(w, l, op_at(inst, mi - 1)?, &old)?;
    }
    Ok(())
}
