//! Operands and memory: special registers, variable addresses, register reads, loads and
//! stores, surfaces and textures.

use super::*;

impl Cta<'_> {
    pub(crate) fn sreg(&self, t: &Thread, s: Sreg, lane: usize) -> u64 {
        let b = self.launch.block;
        let g = self.launch.grid;
        let warp = (t.tid[0] + t.tid[1] * b[0] + t.tid[2] * b[0] * b[1]) / 32;
        match s {
            Sreg::Tid(d) => t.tid[d as usize] as u64,
            Sreg::Ntid(d) => b[d as usize] as u64,
            Sreg::Ctaid(d) => self.ctaid[d as usize] as u64,
            Sreg::Nctaid(d) => g[d as usize] as u64,
            Sreg::Laneid => lane as u64,
            Sreg::Warpid => warp as u64,
            // The SM's warp slots: ptxas folds 64 on sm_80 and reads SR_VIRTCFG on sm_90 (the
            // SASS emulator gives 64 there too); not the CTA's warp count.
            Sreg::Nwarpid => 64,
            Sreg::Smid | Sreg::Gridid | Sreg::Zero => 0,
            Sreg::CooperativeWorkspace(high) => {
                let a = self.mem.cooperative_workspace().unwrap_or(0);
                if high { a >> 32 } else { a & 0xffff_ffff }
            }
            Sreg::Nsmid => 1,
            Sreg::ClusterCtaid(_) | Sreg::ClusterCtarank => 0,
            Sreg::ClusterNctaid(_) | Sreg::ClusterNctarank => 1,
            Sreg::Clusterid(d) => self.ctaid[d as usize] as u64,
            Sreg::Nclusterid(d) => g[d as usize] as u64,
            Sreg::IsExplicitCluster => 0,
            Sreg::LanemaskEq => 1u64 << lane,
            Sreg::LanemaskLe => ((1u64 << (lane + 1)) - 1) & 0xffff_ffff,
            Sreg::LanemaskLt => (1u64 << lane) - 1,
            Sreg::LanemaskGe => (!((1u64 << lane) - 1)) & 0xffff_ffff,
            Sreg::LanemaskGt => (!((1u64 << (lane + 1)) - 1)) & 0xffff_ffff,
            Sreg::Clock => self.clock & 0xffff_ffff,
            Sreg::ClockHi => self.clock >> 32,
            Sreg::Clock64 | Sreg::Globaltimer => self.clock,
            Sreg::GlobaltimerLo => self.clock & 0xffff_ffff,
            Sreg::GlobaltimerHi => self.clock >> 32,
            Sreg::DynamicSmemSize => self.launch.dynamic_shared as u64,
            Sreg::TotalSmemSize => self.smap.total_smem_size(),
            Sreg::ReservedSmem(r) => self.smap.reserved(r),
        }
    }

    /// The address of a variable in its own space (or generic).
    pub(crate) fn var_addr(&self, t: &Thread, v: VarRef, generic: bool) -> u64 {
        let fr = t.frames.last().expect("frame");
        let a = match (v.space, v.loc) {
            (Space::Global, Loc::Static(o)) => self.module.global_base + o,
            (Space::Shared | Space::SharedCluster, Loc::Static(o)) => {
                self.module.shared_layout.user_base() + o
            }
            (_, Loc::Static(o)) => o,
            (_, Loc::FrameLocal(o)) => fr.local_base + o,
            (_, Loc::FrameParam(o)) => mem::FRAME_PARAM_BASE + fr.param_base + o,
        };
        if generic { to_generic(v.space, a) } else { a }
    }

    #[allow(clippy::only_used_in_recursion)]
    pub(crate) fn get(&self, f: &Function, t: &Thread, op: &Operand, ty: Ty) -> u64 {
        let lane = self.lane_of(t);
        match op {
            Operand::Reg(r) => t.frames.last().expect("frame").regs[*r as usize] & ty.mask(),
            Operand::RegOff(r, off) => {
                (t.frames.last().expect("frame").regs[*r as usize] as i64).wrapping_add(*off) as u64
                    & ty.mask()
            }
            Operand::NotPred(r) => (t.frames.last().expect("frame").regs[*r as usize] & 1) ^ 1,
            Operand::Imm(i) => crate::lower::imm_bits(*i, ty),
            Operand::Sreg(s) => self.sreg(t, *s, lane) & ty.mask(),
            Operand::VarAddr {
                var,
                offset,
                generic,
            } => (self.var_addr(t, *var, *generic) as i64).wrapping_add(*offset) as u64 & ty.mask(),
            Operand::Func(i) => *i as u64,
            Operand::Label(pc) => *pc as u64,
            Operand::Vec(v) => {
                // A vector source packed into a wider scalar (mov.b64 d, {a, b}).
                let n = v.len() as u32;
                let part = ty.bits() / n.max(1);
                let pty = match part {
                    8 => Ty::B8,
                    16 => Ty::B16,
                    32 => Ty::B32,
                    _ => Ty::B64,
                };
                let mut out = 0u64;
                for (k, e) in v.iter().enumerate() {
                    out |= self.get(f, t, e, pty) << (part * k as u32);
                }
                out
            }
            Operand::Addr { .. } | Operand::Texref(_) | Operand::Sink => 0,
        }
    }

    pub(crate) fn lane_of(&self, t: &Thread) -> usize {
        let b = self.launch.block;
        ((t.tid[0] + t.tid[1] * b[0] + t.tid[2] * b[0] * b[1]) % 32) as usize
    }

    /// Resolves an address operand: (space, address in that space).
    pub(crate) fn address(&self, t: &Thread, op: &Operand, space: Space) -> (Space, u64) {
        let (base, offset) = match op {
            Operand::Addr { base, offset } => (*base, *offset),
            Operand::VarAddr { var, offset, .. } => (AddrBase::Var(*var), *offset),
            Operand::Reg(r) => (AddrBase::Reg(*r), 0),
            _ => (AddrBase::None, 0),
        };
        let b = match base {
            AddrBase::None => 0,
            AddrBase::Reg(r) => t.frames.last().expect("frame").regs[r as usize],
            AddrBase::Var(v) => {
                // A variable named in a generic access means its generic address.
                self.var_addr(t, v, space == Space::Generic)
            }
        };
        let a = (b as i64).wrapping_add(offset) as u64;
        if space == Space::Generic {
            from_generic(a)
        } else {
            (space, a)
        }
    }

    /// Where an address lies, for trap messages: global addresses name their allocation.
    pub(crate) fn where_is(&self, space: Space, addr: u64) -> String {
        if matches!(space, Space::Global | Space::Generic) {
            self.mem.describe(addr)
        } else {
            format!("{addr:#x}")
        }
    }

    pub(crate) fn load(
        &mut self,
        w: usize,
        l: usize,
        space: Space,
        addr: u64,
        out: &mut [u8],
        line: u32,
    ) -> Result<(), RunError> {
        let n = out.len() as u64;
        if space == Space::Local && !addr.is_multiple_of(n.next_power_of_two()) {
            self.stats.misaligned_local += 1;
        }
        if let Some(san) = &mut self.san {
            match space {
                Space::Shared | Space::SharedCluster => {
                    san.shared(w * 32 + l, addr, out.len(), line, false, self.in_atomic)
                }
                Space::Local if addr + n <= self.warps[w][l].local.len() as u64 => {
                    san.local(w * 32 + l, addr, out.len(), line, false)
                }
                _ => {}
            }
        }
        let t = &self.warps[w][l];
        let ok = match space {
            Space::Global | Space::Generic => self.mem.read(addr, out).is_some(),
            Space::Shared | Space::SharedCluster => copy_from(&self.shared, addr, out),
            Space::Local => copy_from(&t.local, addr, out),
            Space::Const => copy_from(&self.module.consts, addr, out),
            Space::Param => {
                if addr >= mem::FRAME_PARAM_BASE {
                    copy_from(&t.param, addr - mem::FRAME_PARAM_BASE, out)
                } else {
                    copy_from(&self.launch.params, addr, out)
                }
            }
        };
        if !ok {
            return Err(trap_of(
                self,
                line,
                t,
                format!(
                    "out-of-bounds {n}-byte load from {} memory: {}",
                    space_name(space),
                    self.where_is(space, addr)
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn store(
        &mut self,
        w: usize,
        l: usize,
        space: Space,
        addr: u64,
        bytes: &[u8],
        line: u32,
    ) -> Result<(), RunError> {
        let n = bytes.len();
        if space == Space::Local && !addr.is_multiple_of((n as u64).next_power_of_two()) {
            self.stats.misaligned_local += 1;
        }
        if let Some(san) = &mut self.san {
            match space {
                Space::Shared | Space::SharedCluster => {
                    san.shared(w * 32 + l, addr, n, line, true, self.in_atomic)
                }
                Space::Local if addr + n as u64 <= self.warps[w][l].local.len() as u64 => {
                    san.local(w * 32 + l, addr, n, line, true)
                }
                _ => {}
            }
        }
        let ok = match space {
            Space::Global | Space::Generic => self.mem.write(addr, bytes).is_some(),
            Space::Shared | Space::SharedCluster => copy_to(&mut self.shared, addr, bytes),
            Space::Local => copy_to(&mut self.warps[w][l].local, addr, bytes),
            Space::Const => false,
            Space::Param => {
                if addr >= mem::FRAME_PARAM_BASE {
                    copy_to(
                        &mut self.warps[w][l].param,
                        addr - mem::FRAME_PARAM_BASE,
                        bytes,
                    )
                } else {
                    false
                }
            }
        };
        if !ok {
            let t = &self.warps[w][l];
            return Err(trap_of(
                self,
                line,
                t,
                format!(
                    "out-of-bounds or read-only {n}-byte store to {} memory: {}",
                    space_name(space),
                    self.where_is(space, addr)
                ),
            ));
        }
        Ok(())
    }

    /// One lane's `tex` fetch: the four result words (raw bits), through the memory's
    /// textures ([`crate::texture`]). The texture's own geometry decides which coordinates
    /// count (the instruction's geometry only says how many the kernel passes); an unbound
    /// texture reference or a handle naming no texture traps.
    /// `suld.b` / `sust.b` on the memory's surfaces (`crate::surface`): x in bytes, then the
    /// row and the slice or layer (PTX writes a layered shape's layer first).
    pub(crate) fn surface_access(
        &mut self,
        w: usize,
        l: usize,
        f: &Function,
        inst: &Inst,
    ) -> Result<(), RunError> {
        use crate::surface::{Place, SurfShape};
        let a = &inst.args;
        let (data_at, handle_at, coords_at) = if inst.op == Op::Suld {
            (0, 1, 2)
        } else {
            (2, 0, 1)
        };
        let (shape, mode) = inst.mods.surf.expect("lowering checked the geometry");
        let ty = inst.mods.ty();
        let esize = (ty.bits() / 8) as usize;
        let t = &self.warps[w][l];
        let handle = self.get(f, t, &a[handle_at], Ty::U64);
        let Operand::Vec(cs) = &a[coords_at] else {
            unreachable!("lowering makes surface coordinates a vector")
        };
        let c: Vec<i32> = cs
            .iter()
            .map(|o| self.get(f, t, o, Ty::S32) as u32 as i32)
            .collect();
        // PTX: {layer, x[, y]} for layered shapes; the model takes (x, y, z/layer).
        let (x, y, z) = match shape {
            SurfShape::D1 => (c[0], 0, 0),
            SurfShape::D2 => (c[0], c[1], 0),
            SurfShape::D3 => (c[0], c[1], c[2]),
            SurfShape::Array1D => (c[1], c[0], 0),
            SurfShape::Array2D => (c[1], c[2], c[0]),
        };
        let Operand::Vec(data) = &a[data_at] else {
            unreachable!("lowering makes surface data a vector")
        };
        let n = esize * data.len();
        let Some(surf) = self.mem.surfaces().get(handle) else {
            return Err(trap_of(
                self,
                inst.line,
                t,
                format!(
                    "{}: surface handle {handle:#x} names no surface",
                    if inst.op == Op::Suld { "suld" } else { "sust" }
                ),
            ));
        };
        let place = surf.place(x, y, z, n, mode);
        if place == Place::OutOfBounds {
            return Err(trap_of(
                self,
                inst.line,
                t,
                format!(
                    "surface access out of bounds: {n} bytes at x = {x} bytes, y = {y}, z = {z} of a {}x{}x{} surface",
                    surf.width, surf.height, surf.depth
                ),
            ));
        }
        if inst.op == Op::Sust {
            let mut bytes = Vec::with_capacity(n);
            for o in data {
                let v = self.get(f, t, o, ty);
                bytes.extend_from_slice(&v.to_le_bytes()[..esize]);
            }
            if let Place::At(at) = place {
                let s = self
                    .mem
                    .surfaces_mut()
                    .get_mut(handle)
                    .expect("checked above");
                s.data[at..at + n].copy_from_slice(&bytes);
            }
        } else {
            let bytes = match place {
                Place::At(at) => surf.data[at..at + n].to_vec(),
                _ => vec![0; n],
            };
            for (k, d) in data.iter().enumerate() {
                let mut b = [0u8; 8];
                b[..esize].copy_from_slice(&bytes[k * esize..(k + 1) * esize]);
                let t = &mut self.warps[w][l];
                set(f, t, d, ty, u64::from_le_bytes(b));
            }
        }
        Ok(())
    }

    pub(crate) fn tex(&self, f: &Function, t: &Thread, inst: &Inst) -> Result<[u32; 4], RunError> {
        use crate::texture::{Coords, TexShape};
        let a = &inst.args;
        let textures = self.mem.textures();
        let texture = match &a[1] {
            Operand::Texref(name) => {
                let Some(h) = textures.bound(name) else {
                    return Err(trap_of(
                        self,
                        inst.line,
                        t,
                        format!("tex: texture reference `{name}` is not bound to a texture"),
                    ));
                };
                textures.get(u64::from(h)).ok_or_else(|| {
                    trap_of(
                        self,
                        inst.line,
                        t,
                        format!(
                            "tex: texture reference `{name}` is bound to handle {h}, which names no texture"
                        ),
                    )
                })?
            }
            op => {
                let h = self.get(f, t, op, Ty::U64);
                textures.get(h).ok_or_else(|| {
                    trap_of(
                        self,
                        inst.line,
                        t,
                        format!("tex: texture handle {h:#x} names no texture"),
                    )
                })?
            }
        };
        let Operand::Vec(cs) = &a[2] else {
            unreachable!("lowering makes tex coordinates a vector")
        };
        let (layer, cs) = match inst.mods.tex {
            Some(TexShape::Array2D) => (self.get(f, t, &cs[0], Ty::U32) as u32, &cs[1..]),
            _ => (0, &cs[..]),
        };
        let coords = if inst.mods.ty2() == Ty::S32 {
            let mut c = [0i32; 3];
            for (k, o) in cs.iter().take(3).enumerate() {
                c[k] = self.get(f, t, o, Ty::S32) as u32 as i32;
            }
            Coords::Int(c)
        } else {
            let mut c = [0f32; 3];
            for (k, o) in cs.iter().take(3).enumerate() {
                c[k] = f32::from_bits(self.get(f, t, o, Ty::F32) as u32);
            }
            Coords::Float(c)
        };
        if let Some(lod) = a.get(3) {
            // Every modelled texture has one level: any level of detail selects it.
            let _ = self.get(f, t, lod, Ty::F32);
        }
        Ok(texture.fetch(layer, coords))
    }
}
