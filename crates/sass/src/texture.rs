//! The operand layout of the texture fetches `TEX` and `TLD`, as ptxas 13.0.88 writes them on
//! sm_80 and sm_90 (one place for the emulator, which executes them, and the hazard checker,
//! which needs their register effects):
//!
//! ```text
//! TEX.LL      Rd1, Rd0, Ra, Rb, UR4, 0x0, 2D [, mask]      (sm_90: handle in a uniform pair)
//! TEX.SCR.LL  Rd1, Rd0, Ra, Rb, 0x0, 0x5a, 2D [, mask]     (sm_80: handle in c[0x0][4*0x5a])
//! TLD.LZ      Rd1, Rd0, Ra, UR4, 0x0, 1D [, mask]
//! TLD.SCR.LZ  Rd1, Rd0, Ra [, Rb], 0x0, 0x5a, 3D [, mask]
//! ```
//!
//! * The values: the coordinates (the layer first for `ARRAY_2D`), then for `TEX.LL` the level
//!   of detail. With a uniform handle, Ra holds the coordinates and Rb the level; with a
//!   constant-bank handle, the first half of the values (rounded up) is in Ra and the rest in
//!   Rb (read from ptxas's code for 1D/2D/3D/ARRAY_2D fetches of both kinds).
//! * The results: the channels enabled in the mask (0xf when absent), in order, two in Rd0 and
//!   the rest in Rd1.
//!
//! Other forms (`TEX.B` with a register handle, `.LB`, `.DC`, cube maps, ...) are `None`.

use crate::model::{Inst, Operand, OperandKind, Reg, RegFile};

/// Where the texture handle is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TexHandle {
    /// The low word of a uniform register pair.
    Uniform(Reg),
    /// A 32-bit word of constant bank 0, by word index.
    ConstWord(u32),
}

/// A register group: first register and number of registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    pub reg: Reg,
    pub count: u8,
}

/// A decoded `TEX`/`TLD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TexForm {
    /// `TLD` (integer coordinates, level zero) rather than `TEX` (float, explicit level).
    pub integer: bool,
    /// Number of coordinates (2 for 2D, 3 for 3D and for ARRAY_2D with its layer).
    pub coords: u8,
    /// The first coordinate is the layer of a layered texture.
    pub layered: bool,
    pub handle: TexHandle,
    /// Channel mask (bit c: channel c is fetched).
    pub mask: u8,
    /// Destinations: channels in order, two in `d0`, the rest in `d1`.
    pub d0: Group,
    pub d1: Group,
    pub a: Group,
    pub b: Option<Group>,
}

fn reg_of(o: &Operand) -> Option<Reg> {
    match &o.kind {
        OperandKind::Reg(r) => Some(*r),
        _ => None,
    }
}

fn int_of(o: Option<&Operand>) -> Option<i64> {
    match o.map(|o| &o.kind) {
        Some(OperandKind::Int(v)) => Some(*v),
        _ => None,
    }
}

impl TexForm {
    /// The layout of `inst`, or `None` for any other instruction or form.
    pub fn parse(inst: &Inst) -> Option<TexForm> {
        let integer = match inst.opcode.as_str() {
            "TEX" => false,
            "TLD" => true,
            _ => return None,
        };
        let level = if integer { "LZ" } else { "LL" };
        if !inst.has_mod(level) || inst.mods.iter().any(|m| m != level && m != "SCR") {
            return None;
        }
        let regs: Vec<Reg> = inst
            .operands
            .iter()
            .map_while(|o| reg_of(o).filter(|r| r.file == RegFile::R))
            .collect();
        let rest = &inst.operands[regs.len()..];
        let (handle, rest) = match reg_of(rest.first()?) {
            Some(r) if r.file == RegFile::Ur && int_of(rest.get(1)) == Some(0) => {
                (TexHandle::Uniform(r), &rest[2..])
            }
            None if int_of(rest.first()) == Some(0) => {
                let idx = u32::try_from(int_of(rest.get(1))?).ok()?;
                (TexHandle::ConstWord(idx), &rest[2..])
            }
            _ => return None,
        };
        let (layered, coords) = match &rest.first()?.kind {
            OperandKind::Special(g) => match g.as_str() {
                "1D" => (false, 1u8),
                "2D" => (false, 2),
                "3D" => (false, 3),
                "ARRAY_2D" => (true, 3),
                _ => return None,
            },
            _ => return None,
        };
        let mask = match rest.len() {
            1 => 0xf,
            2 => u8::try_from(int_of(rest.get(1))?)
                .ok()
                .filter(|m| (1..=0xf).contains(m))?,
            _ => return None,
        };
        let values = coords + u8::from(!integer);
        let a_count = match handle {
            TexHandle::Uniform(_) => coords,
            TexHandle::ConstWord(_) => values.div_ceil(2),
        };
        let b_count = values - a_count;
        let (d1, d0, a, b) = match (regs.as_slice(), b_count) {
            ([d1, d0, a], 0) => (*d1, *d0, *a, None),
            ([d1, d0, a, b], n) if n > 0 => (*d1, *d0, *a, Some(*b)),
            _ => return None,
        };
        let channels = mask.count_ones() as u8;
        Some(TexForm {
            integer,
            coords,
            layered,
            handle,
            mask,
            d0: Group {
                reg: d0,
                count: channels.min(2),
            },
            d1: Group {
                reg: d1,
                count: channels.saturating_sub(2),
            },
            a: Group {
                reg: a,
                count: a_count,
            },
            b: b.map(|reg| Group {
                reg,
                count: b_count,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(text: &str) -> Option<TexForm> {
        TexForm::parse(&Inst::parse(text).unwrap())
    }

    fn r(index: u8) -> Reg {
        Reg {
            file: RegFile::R,
            index,
        }
    }

    #[test]
    fn ptxas_sm90_forms() {
        // ptxas 13.0.88, sm_90, tex.2d.v4.f32.f32 through a texture object parameter.
        let f = form("TEX.LL R6, R4, R4, R6, UR4, 0x0, 2D").unwrap();
        assert_eq!((f.a.count, f.b.map(|b| b.count)), (2, Some(1)));
        assert_eq!(
            (f.d0.reg, f.d0.count, f.d1.reg, f.d1.count),
            (r(4), 2, r(6), 2)
        );
        // tex.a2d: layer, x, y in R4..R6, the level in R7.
        let f = form("TEX.LL R6, R4, R4, R7, UR4, 0x0, ARRAY_2D").unwrap();
        assert!(f.layered);
        assert_eq!((f.a.count, f.b.unwrap().reg), (3, r(7)));
        // tex.1d.v4.u32.s32 with only channels 0 and 3 used.
        let f = form("TLD.LZ RZ, R4, R0, UR4, 0x0, 1D, 0x9").unwrap();
        assert_eq!((f.mask, f.d0.count, f.d1.count, f.a.count), (9, 2, 0, 1));
        assert!(f.b.is_none());
        assert_eq!(
            f.handle,
            TexHandle::Uniform(Reg {
                file: RegFile::Ur,
                index: 4
            })
        );
    }

    #[test]
    fn ptxas_sm80_forms() {
        let f = form("TEX.SCR.LL R6, R4, R4, R6, 0x0, 0x5a, 3D").unwrap();
        assert_eq!((f.a.count, f.b.unwrap().count), (2, 2));
        assert_eq!(f.handle, TexHandle::ConstWord(0x5a));
        let f = form("TLD.SCR.LZ R6, R4, R4, R4, 0x0, 0x60, 2D").unwrap();
        assert_eq!((f.a.count, f.b.unwrap().count), (1, 1));
        let f = form("TLD.SCR.LZ R10, R8, R0, 0x0, 0x5a, 1D").unwrap();
        assert_eq!((f.a.count, f.b), (1, None));
    }

    #[test]
    fn other_forms_are_not_parsed() {
        assert!(form("TEX.SCR.B.LL R6, R4, R6, R4, 2D").is_none());
        assert!(
            form("TLD.SCR.LZ R6, R4, R4, 0x0, 0x60, 2D").is_none(),
            "B missing"
        );
        assert!(form("MOV R1, R2").is_none());
    }
}
