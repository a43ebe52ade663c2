//! Unformatted surface accesses: `SUST.D.BA` / `SULD.D.BA` (PTX `sust.b` / `suld.b`), on the
//! memory's surfaces (`interp::surface`, the model the interpreter uses too).
//!
//! Forms, read from ptxas 13.0.88's code for `sust.b`/`suld.b` of every geometry, size and
//! out-of-bounds mode on sm_80 and sm_90:
//! `SUST.D.BA.{1D,2D,3D,1D_ARRAY,2D_ARRAY}[.U8|.S8|.U16|.S16|.64|.128][...][.TRAP|.IGN]
//! [Rc], Rd, h, w` and `SULD... Rd, [Rc], h, w`. The coordinates are Rc, Rc+1, Rc+2: x in
//! bytes, then y, then z — a layered shape's layer comes last (PTX writes it first). The data
//! is Rd.. (one register per 32 bits). The handle is the uniform register `h` (sm_90) or, when
//! `h` is not a register, the bank-0 word with index `w` (sm_80: the surface-object
//! parameter's low word). `.TRAP` traps out of bounds, `.IGN` drops stores and reads zeros,
//! neither clamps (PTX `.trap`, `.zero`, `.clamp`).

use interp::surface::{OutOfBounds, Place, SurfShape};
use sass::model::{Inst, OperandKind, RegFile};

use super::{check_mods_in, op_at};
use crate::exec::{Ctx, Fault, R, Warp, trap, unsupported};

/// Modifiers with no functional effect on a sequential machine (ordering, scope, caching).
const NEUTRAL: &[&str] = &[
    "STRONG", "WEAK", "SM", "GPU", "SYS", "CTA", "CONSTANT", "EF", "EL", "LU", "NA",
];

pub(super) fn access(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let shapes = ["1D", "2D", "3D", "1D_ARRAY", "2D_ARRAY"];
    let sizes = ["U8", "S8", "U16", "S16", "64", "128"];
    let flags: &[&str] = &["D", "BA", "TRAP", "IGN"];
    check_mods_in(inst, &[flags, &shapes, &sizes, NEUTRAL])?;
    if !inst.has_mod("D") || !inst.has_mod("BA") {
        return unsupported(format!(
            "{} other than unformatted byte-addressed (.D.BA)",
            inst.opcode
        ));
    }
    let shape = match shapes.iter().find(|s| inst.has_mod(s)) {
        Some(&"1D") => SurfShape::D1,
        Some(&"2D") => SurfShape::D2,
        Some(&"3D") => SurfShape::D3,
        Some(&"1D_ARRAY") => SurfShape::Array1D,
        Some(&"2D_ARRAY") => SurfShape::Array2D,
        _ => return unsupported(format!("{} without a geometry", inst.opcode)),
    };
    let mode = if inst.has_mod("TRAP") {
        OutOfBounds::Trap
    } else if inst.has_mod("IGN") {
        OutOfBounds::Zero
    } else {
        OutOfBounds::Clamp
    };
    let (n, signed) = match sizes.iter().find(|s| inst.has_mod(s)) {
        Some(&"U8") => (1, false),
        Some(&"S8") => (1, true),
        Some(&"U16") => (2, false),
        Some(&"S16") => (2, true),
        Some(&"64") => (8, false),
        Some(&"128") => (16, false),
        _ => (4, false),
    };
    let load = inst.opcode == "SULD";
    let (data_i, mem_i) = if load { (0, 1) } else { (1, 0) };
    let coords = match &op_at(inst, mem_i)?.kind {
        OperandKind::Mem { addr, .. } => match addr.base() {
            Some((r, _)) if r.file == RegFile::R => r.index,
            _ => return unsupported(format!("{} coordinate operand", inst.opcode)),
        },
        k => return unsupported(format!("{} coordinate operand {k:?}", inst.opcode)),
    };
    let reg = |i: u8| -> i32 {
        if coords == 255 {
            0
        } else {
            w.reg(l, coords + i) as i32
        }
    };
    let (x, y, z) = match shape {
        SurfShape::D1 => (reg(0), 0, 0),
        SurfShape::D2 | SurfShape::Array1D => (reg(0), reg(1), 0),
        SurfShape::D3 | SurfShape::Array2D => (reg(0), reg(1), reg(2)),
    };
    // After the data and coordinate operands: the handle in a uniform register (sm_90:
    // `UR5, 0x0`), or a placeholder and the bank-0 word holding it (sm_80: `0x0, 0x58`).
    let handle = match &op_at(inst, 2)?.kind {
        OperandKind::Reg(r) if r.file == RegFile::Ur && r.index != 63 => w.ureg(r.index),
        _ => {
            let idx = match &op_at(inst, 3)?.kind {
                OperandKind::Int(i) => *i as usize,
                k => return unsupported(format!("{} handle operand {k:?}", inst.opcode)),
            };
            let off = idx * 4;
            ctx.cbank0
                .get(off..off + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| {
                    Fault::Unsupported(format!("surface word {idx:#x} outside bank 0"))
                })?
        }
    };
    let Some(surf) = ctx.mem.surfaces().get(u64::from(handle)) else {
        return trap(l, format!("surface handle {handle:#x} names no surface"));
    };
    let place = surf.place(x, y, z, n, mode);
    if place == Place::OutOfBounds {
        return trap(
            l,
            format!(
                "surface access out of bounds: {n} bytes at x = {x} bytes, y = {y}, z = {z} of a {}x{}x{} surface",
                surf.width, surf.height, surf.depth
            ),
        );
    }
    let data = match &op_at(inst, data_i)?.kind {
        OperandKind::Reg(r) if r.file == RegFile::R => r.index,
        k => return unsupported(format!("{} data operand {k:?}", inst.opcode)),
    };
    if load {
        let mut bytes = [0u8; 16];
        if let Place::At(at) = place {
            bytes[..n].copy_from_slice(&surf.data[at..at + n]);
        }
        let words: Vec<u32> = match (n, signed) {
            (1, true) => vec![bytes[0] as i8 as u32],
            (2, true) => vec![i16::from_le_bytes([bytes[0], bytes[1]]) as u32],
            _ => bytes[..n.max(4)]
                .chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        };
        if data != 255 {
            for (i, v) in words.iter().enumerate() {
                w.set_reg(l, data + i as u8, *v);
            }
        }
    } else {
        let mut bytes = Vec::with_capacity(16);
        for i in 0..n.div_ceil(4) {
            let v = if data == 255 {
                0
            } else {
                w.reg(l, data + i as u8)
            };
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        if let Place::At(at) = place {
            let s = ctx
                .mem
                .surfaces_mut()
                .get_mut(u64::from(handle))
                .expect("checked above");
            s.data[at..at + n].copy_from_slice(&bytes[..n]);
        }
    }
    Ok(())
}
