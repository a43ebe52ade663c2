//! Surface and texture instructions (`suld`, `sust`, `sured`, `suq`, `tex`, `tld4`, `txq`).

use super::*;

impl FnCx<'_> {
    /// `suld.b... d, [surf, {coords}]` / `sust.b... [surf, {coords}], v`. The surface must be
    /// a register holding a handle (surface objects); `.surfref` variables are unsupported.
    pub(crate) fn surface(
        &mut self,
        mut inst: Inst,
        ops: &[ast::Operand],
        line: u32,
    ) -> Result<Inst, LowerError> {
        let what = if inst.op == Op::Suld { "suld" } else { "sust" };
        let unsupported = |mut inst: Inst, why: String| -> Result<Inst, LowerError> {
            inst.op = Op::Unsupported;
            inst.unsupported = Some(why);
            inst.args.clear();
            Ok(inst)
        };
        let Some((shape, _)) = inst.mods.surf else {
            return unsupported(inst, format!("`{what}` without a geometry"));
        };
        if !matches!(inst.mods.ty(), Ty::B8 | Ty::B16 | Ty::B32 | Ty::B64)
            || inst.mods.types.len() != 1
        {
            return unsupported(
                inst,
                format!("`{what}` of a type other than .b8/.b16/.b32/.b64"),
            );
        }
        let (addr_at, data_at) = if inst.op == Op::Suld { (1, 0) } else { (0, 1) };
        if ops.len() != 2 {
            return unsupported(inst, format!("`{what}` with {} operands", ops.len()));
        }
        let ast::Operand::Address(addr) = &ops[addr_at] else {
            return unsupported(
                inst,
                format!("`{what}` without a `[surface, {{coordinates}}]` operand"),
            );
        };
        let inner: Vec<ast::Operand> = addr.operands().collect();
        if inner.len() != 2 {
            return unsupported(
                inst,
                format!("`{what}` address with {} operands", inner.len()),
            );
        }
        let lower = |me: &mut Self, o: &ast::Operand| -> Result<Operand, LowerError> {
            me.operand(o, line, &mut vec![0], usize::MAX, false)
        };
        let handle = match lower(self, &inner[0]) {
            Ok(h @ Operand::Reg(_)) => h,
            Ok(_) => {
                return unsupported(
                    inst,
                    format!(
                        "`{what}` surface that is not a register holding a surface object (`.surfref` variables are not modelled)"
                    ),
                );
            }
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        let coords = match lower(self, &inner[1]) {
            Ok(Operand::Vec(v)) => v,
            Ok(c @ (Operand::Reg(_) | Operand::Imm(_))) => vec![c],
            Ok(_) => {
                return unsupported(inst, format!("`{what}` coordinates that are not a vector"));
            }
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        let need = 1 + shape.extra_coords();
        if coords.len() < need {
            return unsupported(
                inst,
                format!(
                    "`{what}` needs {need} coordinates for its geometry, got {}",
                    coords.len()
                ),
            );
        }
        let data = match lower(self, &ops[data_at]) {
            Ok(Operand::Vec(v)) => v,
            Ok(d @ (Operand::Reg(_) | Operand::Imm(_) | Operand::Sink)) => vec![d],
            Ok(_) => {
                return unsupported(inst, format!("`{what}` data that is not a register vector"));
            }
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        if data.len() != usize::from(inst.mods.vec) {
            let vec = inst.mods.vec;
            return unsupported(
                inst,
                format!("`{what}` with {} values for a .v{vec} access", data.len()),
            );
        }
        let coords = Operand::Vec(coords[..need].to_vec());
        inst.args = if inst.op == Op::Suld {
            vec![Operand::Vec(data), handle, coords]
        } else {
            vec![handle, coords, Operand::Vec(data)]
        };
        Ok(inst)
    }

    /// `tex[.level].shape.v4.dty.cty {d0, d1, d2, d3}, [tex, {coords}][, lod]`. Forms the
    /// interpreter cannot run become `Unsupported` with the reason.
    pub(crate) fn tex(
        &mut self,
        mut inst: Inst,
        ops: &[ast::Operand],
        line: u32,
    ) -> Result<Inst, LowerError> {
        let unsupported = |mut inst: Inst, why: String| -> Result<Inst, LowerError> {
            inst.op = Op::Unsupported;
            inst.unsupported = Some(why);
            inst.args.clear();
            Ok(inst)
        };
        let shape = inst.mods.tex.expect("parse_op checked the geometry");
        let want = if inst.mods.level { 3 } else { 2 };
        if ops.len() != want {
            return unsupported(
                inst,
                format!("`tex` with {} operands (expected {want})", ops.len()),
            );
        }
        let ast::Operand::Address(addr) = &ops[1] else {
            return unsupported(
                inst,
                "`tex` without a `[texture, {coordinates}]` operand".into(),
            );
        };
        let inner: Vec<ast::Operand> = addr.operands().collect();
        match inner.len() {
            2 => {}
            3 => {
                return unsupported(
                    inst,
                    "`tex` in independent mode (`[texture, sampler, {coordinates}]`): separate samplers are not modelled".into(),
                );
            }
            n => return unsupported(inst, format!("`tex` address with {n} operands")),
        }
        // Destinations: four registers or `_` sinks.
        let dsts = match self.operand(&ops[0], line, &mut vec![0], usize::MAX, false) {
            Ok(d) => d,
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        match &dsts {
            Operand::Vec(v)
                if v.len() == 4
                    && v.iter()
                        .all(|d| matches!(d, Operand::Reg(_) | Operand::Sink)) => {}
            _ => {
                return unsupported(
                    inst,
                    "`tex` destinations other than a vector of four registers".into(),
                );
            }
        }
        // The texture: a texture reference by name or a register holding a handle.
        let texture = match &inner[0] {
            ast::Operand::Name(n) => {
                let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
                match self.lookup(&name) {
                    Some(Sym::Texref(r)) => Operand::Texref(r),
                    Some(Sym::Reg { slot, width: 1 }) => Operand::Reg(slot),
                    Some(_) => {
                        return unsupported(
                            inst,
                            format!(
                                "`tex` texture `{name}` is neither a texture reference nor a scalar register"
                            ),
                        );
                    }
                    None => {
                        return unsupported(
                            inst,
                            format!(
                                "`tex` texture `{name}` is not a texture reference (samplers and surfaces are not modelled)"
                            ),
                        );
                    }
                }
            }
            _ => {
                return unsupported(inst, "`tex` texture operand that is not a name".into());
            }
        };
        // Coordinates: registers or immediates; old PTX writes four for every geometry, of
        // which the leading ones the geometry needs count.
        let need = match shape {
            TexShape::D1 => 1,
            TexShape::D2 => 2,
            TexShape::D3 | TexShape::Array2D => 3,
        };
        let coords = match self.operand(&inner[1], line, &mut vec![0], usize::MAX, false) {
            Ok(Operand::Vec(v)) => v,
            Ok(c @ (Operand::Reg(_) | Operand::Imm(_))) => vec![c],
            Ok(_) => return unsupported(inst, "`tex` coordinates that are not a vector".into()),
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        if coords.len() < need
            || !coords[..need]
                .iter()
                .all(|c| matches!(c, Operand::Reg(_) | Operand::Imm(_)))
        {
            return unsupported(
                inst,
                format!(
                    "`tex` needs {need} register or immediate coordinates for its geometry, got {}",
                    coords.len()
                ),
            );
        }
        inst.args = vec![dsts, texture, Operand::Vec(coords[..need].to_vec())];
        if inst.mods.level {
            match self.operand(&ops[2], line, &mut vec![0], usize::MAX, false) {
                Ok(lod @ (Operand::Reg(_) | Operand::Imm(_))) => inst.args.push(lod),
                Ok(_) => {
                    return unsupported(
                        inst,
                        "`tex.level` level of detail that is not a register or immediate".into(),
                    );
                }
                Err(e) if e.message.starts_with("unsupported: ") => {
                    return unsupported(inst, e.message["unsupported: ".len()..].to_string());
                }
                Err(e) => return Err(e),
            }
        }
        Ok(inst)
    }
}
