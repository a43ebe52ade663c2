//! `ld` and `st` in every state space kiln lowers (global, shared, local, generic, const,
//! param), with their orderings.

use super::*;

impl Cx {
    /// `[name]` / `[name+imm]` → (name, offset).
    pub(crate) fn address_name(&self, o: &ast::Operand) -> Result<(String, i64), LowerError> {
        let bad = || unsupported(o.syntax(), format!("address `{}`", o.syntax().text()));
        let ast::Operand::Address(a) = o else {
            return Err(bad());
        };
        let inner: Vec<ast::Operand> = a.operands().collect();
        if inner.len() != 1 {
            return Err(bad());
        }
        let name_of = |e: &ast::Operand| match e {
            ast::Operand::Name(n) if n.components().next().is_none() => {
                n.name().map(|t| t.text().to_string())
            }
            _ => None,
        };
        match &inner[0] {
            ast::Operand::Binary(b) => {
                let l = b.lhs().ok_or_else(bad)?;
                let r = b.rhs().ok_or_else(bad)?;
                let n = name_of(&l).ok_or_else(bad)?;
                let v = r.as_int().ok_or_else(bad)? as i64;
                match b.op().map(|t| t.text().to_string()).as_deref() {
                    Some("+") => Ok((n, v)),
                    Some("-") => Ok((n, -v)),
                    _ => Err(bad()),
                }
            }
            e => Ok((name_of(e).ok_or_else(bad)?, 0)),
        }
    }

    /// The address operand of a shared or local access `[name+off]`: shared addresses are
    /// 32-bit offsets in the CTA's window (sm_80: window offset 0 is the first static
    /// variable), a 64-bit register holds one in its low word; a frame variable is relative
    /// to the stack pointer.
    pub(crate) fn window_mem(
        &mut self,
        addr_op: &ast::Operand,
        name: &str,
        off: i64,
        local: bool,
    ) -> Result<Operand, LowerError> {
        let offset = i32::try_from(off)
            .ok()
            .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
            .ok_or_else(|| unsupported(addr_op.syntax(), "address offset out of range"))?;
        let (base, offset) = if let Some(&at) = self.locals.get(name).filter(|_| local) {
            // A frame variable: relative to the stack pointer (`STL [R1+0x4]`).
            (self.stack_pointer(), (at as i32).wrapping_add(offset))
        } else if let Some(&at) = self.shared.get(name).filter(|_| !local) {
            let t = Reg::v(self.tmp(1), 1);
            self.shared_addr(t, at.wrapping_add(offset as u32));
            (t, 0)
        } else {
            let (r, rty) = *self
                .regs
                .get(name)
                .ok_or_else(|| unsupported(addr_op.syntax(), format!("address of `{name}`")))?;
            if rty == Ty::Pred || rty == Ty::F32 {
                return Err(unsupported(
                    addr_op.syntax(),
                    "shared address register type",
                ));
            }
            (Reg::part(r, 0), offset)
        };
        Ok(Operand::Mem {
            base,
            offset,
            desc: None,
        })
    }

    pub(crate) fn ld_st(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
        load: bool,
        space: MemSpace,
    ) -> Result<(), LowerError> {
        // `.L2::cache_hint` takes the cache policy as a third operand.
        let hint = mods.iter().any(|m| m == ".L2::cache_hint");
        Self::need(node, ops, if hint { 3 } else { 2 })?;
        // Shared and local memory: 32-bit window addresses, no memory descriptor.
        let shared = matches!(space, MemSpace::Shared | MemSpace::Local);
        let local = space == MemSpace::Local;
        let mut nc = false;
        let mut volatile = false;
        let mut mmio = false;
        let mut strong: Option<&'static str> = None;
        let mut evict: Option<&'static str> = None;
        // The L2 prefetch size (`.L2::64B/128B/256B` → `.LTC64B/128B/256B`).
        let mut prefetch: Option<&'static str> = None;
        let mut set_evict = |e: &'static str| -> Result<(), LowerError> {
            if evict.replace(e).is_some() {
                return Err(malformed(node, "two L1 eviction priorities"));
            }
            Ok(())
        };
        let mut size = None;
        let mut vector = 1u32;
        // Memory orders (`.relaxed`/`.acquire`/`.release` with a scope): strong accesses at
        // the scope; acquire loads are followed by `CCTL.IVALL` and release stores preceded
        // by `MEMBAR.ALL.<scope>` + `ERRBAR` (+ `CGAERRBAR` on sm_90) beyond the CTA, as
        // ptxas 13.0.88 emits them. Shared memory ignores the scope (plain LDS/STS).
        let (mut ordered, mut acquire, mut release) = (false, false, false);
        let mut scope = "";
        for m in mods {
            match m.as_str() {
                ".global" | ".shared" | ".shared::cta" | ".local" | ".weak" => {}
                ".relaxed" => ordered = true,
                ".acquire" if load => (ordered, acquire) = (true, true),
                ".release" if !load => (ordered, release) = (true, true),
                ".cta" | ".gpu" | ".sys" => scope = m.as_str(),
                // The cluster scope is the GPU's on sm_90 (ptxas 13.0.88:
                // `ld.relaxed.cluster.global` is `LDG.E.STRONG.GPU`, `st.release.cluster` is
                // `MEMBAR.ALL.GPU`, `ERRBAR`, `CGAERRBAR`, `ST.E.STRONG.GPU`).
                ".cluster" if self.target.forms.clusters => scope = m.as_str(),
                // Volatile: shared accesses are plain LDS/STS, global and generic ones
                // `.STRONG.SYS` (ptxas's forms).
                ".volatile" => volatile = true,
                ".nc" if load && space == MemSpace::Global => nc = true,
                // Cache operators, as ptxas 13.0.88 maps them (nvdisasm on sm_80/sm_90):
                // evict-first and last-use come before the size (`STG.E.EF.64`), the
                // strong scopes after it (`LDG.E.64.STRONG.SM`).
                ".ca" | ".wb" if !shared => strong = Some(".STRONG.SM"),
                ".cg" if !shared => strong = Some(".STRONG.GPU"),
                ".cv" if load && !shared => strong = Some(".STRONG.SYS"),
                ".wt" if !load && !shared => strong = Some(".STRONG.SYS"),
                ".cs" if !shared => set_evict(".EF")?,
                ".lu" if load && !shared => set_evict(".LU")?,
                // Eviction priorities and L2 prefetch sizes (cache hints: results do not
                // change), as ptxas 13.0.88 prints them on sm_80 and sm_90:
                // `LDG.E.EL.LTC256B.128.CONSTANT`. `.L1::evict_normal` is the default.
                ".L1::evict_normal" if !shared => {}
                ".L1::evict_first" if !shared => set_evict(".EF")?,
                ".L1::evict_last" if !shared => set_evict(".EL")?,
                ".L1::evict_unchanged" if !shared => set_evict(".EU")?,
                ".L1::no_allocate" if !shared => set_evict(".NA")?,
                ".L2::64B" if load && !shared => prefetch = Some(".LTC64B"),
                ".L2::128B" if load && !shared => prefetch = Some(".LTC128B"),
                ".L2::256B" if load && !shared => prefetch = Some(".LTC256B"),
                ".L2::cache_hint" if !shared => {}
                // Memory-mapped I/O (`.mmio.relaxed.sys`): `LDG.E.MMIO.SYS R, [R]`.
                ".mmio" if !shared => mmio = true,
                ".v2" => vector = 2,
                ".v4" => vector = 4,
                // Sub-word accesses: (bytes, SASS suffix, sign-extending).
                ".u8" | ".b8" => size = Some((1, ".U8")),
                ".s8" => size = Some((1, ".S8")),
                ".u16" | ".b16" => size = Some((2, ".U16")),
                ".s16" => size = Some((2, ".S16")),
                ".b32" | ".u32" | ".s32" | ".f32" => size = Some((4, "")),
                ".b64" | ".u64" | ".s64" | ".f64" => size = Some((8, ".64")),
                // Cache operators on shared memory change nothing: ptxas 13.0.88 writes
                // plain `LDS`/`STS` for `ld.shared.cg`, `st.shared.cs`, `st.shared.wt`, ...
                ".ca" | ".cg" | ".cs" | ".lu" | ".cv" | ".wb" | ".wt"
                    if space == MemSpace::Shared => {}
                other => return Err(unsupported(node, format!("ld/st modifier {other}"))),
            }
        }
        let Some((elem, suffix)) = size else {
            return Err(malformed(node, "ld/st without a type"));
        };
        if ordered == scope.is_empty() {
            return Err(malformed(
                node,
                "a memory order needs a scope and the reverse",
            ));
        }
        if ordered && (volatile || strong.is_some() || nc || local) {
            return Err(unsupported(node, "this combination of ld/st modifiers"));
        }
        if mmio && (scope != ".sys" || acquire || release || evict.is_some() || vector > 1) {
            return Err(malformed(
                node,
                ".mmio needs .relaxed.sys and a scalar type",
            ));
        }
        if nc && prefetch == Some(".LTC256B") && self.target.forms.nc_prefetch_128 {
            prefetch = Some(".LTC128B");
        }
        if ordered && !shared && !mmio {
            strong = Some(match scope {
                ".cta" => ".STRONG.SM",
                ".sys" => ".STRONG.SYS",
                _ => ".STRONG.GPU",
            });
        }
        let beyond_cta = scope != ".cta" && !shared;
        if release && beyond_cta {
            let sc = if scope == ".sys" { "SYS" } else { "GPU" };
            self.push(Inst::new(
                sass_op(node, &format!("MEMBAR.ALL.{sc}"))?,
                vec![],
                vec![],
            ));
            self.push(Inst::new(op!("ERRBAR"), vec![], vec![]));
            if self.target.forms.clusters {
                self.push(Inst::new(op!("CGAERRBAR"), vec![], vec![]));
            }
        } else if release && !shared {
            self.push(Inst::new(op!("MEMBAR.ALL.CTA"), vec![], vec![]));
        }
        if acquire && beyond_cta {
            self.pending_acquire = true;
        }
        let bytes = elem * vector;
        if vector > 1 && bytes > 16 {
            return Err(unsupported(node, "vector ld/st of 256-bit size"));
        }
        // Vectors of 8/16-bit elements move as one 16/32/64-bit access, the elements packed
        // and unpacked with PRMT (ptxas's form).
        let packed = vector > 1 && elem < 4;
        // Stores of sub-words write the low bytes (no sign in the SASS form).
        let suffix = match (load, bytes) {
            (false, 1) => ".U8",
            (_, 2) if packed => ".U16",
            (_, 4) if packed => "",
            (false, 2) => ".U16",
            (_, 8) => ".64",
            (_, 16) => ".128",
            _ => suffix,
        };
        let w: u8 = if bytes >= 8 { (bytes / 4) as u8 } else { 1 };
        let (addr_op, val_op) = if load {
            (&ops[1], &ops[0])
        } else {
            (&ops[0], &ops[1])
        };
        let (name, off) = self.address_name(addr_op)?;
        let desc_operand = self.target.forms.desc_operand;
        // Registers the access reads without naming them (sm_80's memory descriptor, the
        // pair of an MMIO address).
        let mut implicit: Vec<Reg> = Vec::new();
        // A constant L2 cache policy (`createpolicy.fractional` with an immediate fraction,
        // or `mov` of a literal) goes into a uniform pair that is the descriptor, as ptxas
        // does; any other policy is dropped (a hint: the default descriptor reads the same
        // memory).
        let constant_policy = match hint.then(|| &ops[2]) {
            Some(ast::Operand::Name(n)) => {
                let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
                Ok(self.constants.get(&name).copied())
            }
            Some(o) => o
                .as_int()
                .map(Some)
                .ok_or_else(|| unsupported(o.syntax(), "this cache-policy operand")),
            None => Ok(None),
        }?;
        let policy = match constant_policy {
            Some(v) if !shared => Some({
                let u = self.f.new_vreg(Class::UR, 2, "");
                for (k, word) in [(0u8, v as u32), (1, (v >> 32) as u32)] {
                    self.push(Inst::new(
                        op!("UMOV"),
                        vec![Operand::r(Reg::part(u, k)), Operand::Imm(i64::from(word))],
                        vec![0],
                    ));
                }
                Reg::v(u, 2)
            }),
            _ => None,
        };
        let (mem, mut op) = if shared {
            let mem = self.window_mem(addr_op, &name, off, local)?;
            let op = match (local, load) {
                (false, true) => "LDS",
                (false, false) => "STS",
                (true, true) => "LDL",
                (true, false) => "STL",
            };
            (mem, op.to_string())
        } else {
            let generic = space == MemSpace::Generic;
            let base = self.global_base(&name, addr_op)?;
            let offset = i32::try_from(off)
                .ok()
                .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
                .ok_or_else(|| unsupported(addr_op.syntax(), "address offset out of range"))?;
            self.needs_desc = true;
            // The tables know `.STRONG.SYS` accesses only without an offset: add it first.
            let (base, offset) = if volatile && offset != 0 {
                let k = self.tmp(2);
                let kv = i64::from(offset) as u64;
                self.mov_imm(Reg::part(k, 0), kv as u32);
                self.mov_imm(Reg::part(k, 1), (kv >> 32) as u32);
                let t = self.tmp(2);
                let p = Reg::v(self.ptmp(), 1);
                self.push(Inst::new(
                    op!("IADD3"),
                    vec![
                        Operand::r(Reg::part(t, 0)),
                        Operand::r(p),
                        Operand::r(Reg::part(base, 0)),
                        Operand::r(Reg::part(k, 0)),
                        Operand::rz(),
                    ],
                    vec![0, 1],
                ));
                self.push(Inst::new(
                    op!("IADD3.X"),
                    vec![
                        Operand::r(Reg::part(t, 1)),
                        Operand::r(Reg::part(base, 1)),
                        Operand::r(Reg::part(k, 1)),
                        Operand::rz(),
                        Operand::r(p),
                        Operand::not(Reg::Zero(Class::P)),
                    ],
                    vec![0],
                ));
                (t, 0)
            } else {
                (base, offset)
            };
            let mem = if mmio {
                // nvdisasm prints an MMIO access's 64-bit address as its low register,
                // without the descriptor (`LDG.E.MMIO.SYS R3, [R2]`); the pair stays live
                // through an implicit use.
                implicit.push(Reg::v(base, 2));
                Operand::Mem {
                    base: Reg::part(base, 0),
                    offset,
                    desc: None,
                }
            } else if let Some(p) = policy {
                // The L2 cache policy is the access's descriptor (`desc[UR6]`), printed on
                // sm_80 too.
                Operand::Mem {
                    base: Reg::v(base, 2),
                    offset,
                    desc: Some(p),
                }
            } else {
                if !desc_operand {
                    // sm_80 LDG/STG read the memory descriptor from UR4 without printing it.
                    implicit.push(desc_reg());
                }
                Operand::Mem {
                    base: Reg::v(base, 2),
                    offset,
                    desc: desc_operand.then(desc_reg),
                }
            };
            let op = match (generic, load) {
                (false, true) => "LDG.E",
                (false, false) => "STG.E",
                (true, true) => "LD.E",
                (true, false) => "ST.E",
            };
            (mem, op.to_string())
        };
        if let Some(e) = evict {
            op.push_str(e);
        }
        if let Some(p) = prefetch {
            op.push_str(p);
        }
        op.push_str(suffix);
        if nc {
            op.push_str(".CONSTANT");
        }
        if mmio {
            op.push_str(".MMIO.SYS");
        } else if volatile && !shared {
            op.push_str(".STRONG.SYS");
        } else if let Some(st) = strong {
            op.push_str(st);
        }
        let op = sass_op(node, &op)?;
        let elems: Option<Vec<ast::Operand>> = match val_op {
            ast::Operand::Vector(v) => Some(v.elements().collect()),
            _ => None,
        };
        if elems.as_ref().map_or(1, Vec::len) != vector as usize {
            return Err(malformed(
                val_op.syntax(),
                "vector operand of another length",
            ));
        }
        let ew: u8 = if elem == 8 { 2 } else { 1 };
        if packed {
            let elems = elems.unwrap_or_default();
            let signed = mods.iter().any(|m| matches!(m.as_str(), ".s8" | ".s16"));
            let t = self.tmp(w);
            let prmt = |cx: &mut Self, d: Reg, a: Reg, sel: u32, b: Operand| {
                cx.push(Inst::new(
                    op!("PRMT"),
                    vec![
                        Operand::r(d),
                        Operand::r(a),
                        Operand::Imm(i64::from(sel)),
                        b,
                    ],
                    vec![0],
                ));
            };
            if load {
                let mut inst = Inst::new(op, vec![Operand::r(Reg::v(t, w)), mem], vec![0]);
                inst.implicit_uses.extend(implicit.iter().copied());
                self.push(inst);
                for (k, e) in elems.iter().enumerate() {
                    if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                        continue;
                    }
                    let at = k as u32 * elem;
                    let (word, lo) = ((at / 4) as u8, at % 4);
                    // Result bytes: the element's bytes, then zeros (byte 7 of RZ) or copies
                    // of its sign (selector nibble 8 | byte).
                    let top = lo + elem - 1;
                    let fill = if signed { 8 | top } else { 7 };
                    let mut sel = 0u32;
                    for i in 0..4 {
                        let nib = if i < elem { lo + i } else { fill };
                        sel |= nib << (4 * i);
                    }
                    let d = self.dst(e, 1)?;
                    prmt(self, d, Reg::part(t, word), sel, Operand::rz());
                }
                self.finish_acquire();
                return Ok(());
            }
            let mut regs = Vec::new();
            for e in &elems {
                regs.push(self.reg_src(e, 1)?);
            }
            let halves: Vec<Reg> = if elem == 1 {
                // Bytes in pairs: [e0.b0, e1.b0] in the low half.
                regs.chunks(2)
                    .map(|p| {
                        let h = Reg::v(self.tmp(1), 1);
                        prmt(self, h, p[0], 0x0040, Operand::r(p[1]));
                        h
                    })
                    .collect()
            } else {
                regs.clone()
            };
            if bytes == 2 {
                self.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(Reg::v(t, 1)), Operand::r(halves[0])],
                    vec![0],
                ));
            } else {
                for (j, pair) in halves.chunks(2).enumerate() {
                    prmt(
                        self,
                        Reg::part(t, j as u8),
                        pair[0],
                        0x5410,
                        Operand::r(pair[1]),
                    );
                }
            }
            let mut inst = Inst::new(op, vec![mem, Operand::r(Reg::v(t, w))], vec![]);
            inst.implicit_uses.extend(implicit.iter().copied());
            self.push(inst);
            return Ok(());
        }
        let mut inst = match (&elems, load) {
            (None, true) if w == 1 && self.reg_width(val_op) == Some(2) => {
                // Into a 64-bit register: load the low word, then extend.
                let d = self.dst(val_op, 2)?;
                let mut load = Inst::new(op, vec![Operand::r(sub(d, 0)), mem], vec![0]);
                load.implicit_uses.extend(implicit.iter().copied());
                self.push(load);
                let signed = mods
                    .iter()
                    .any(|m| matches!(m.as_str(), ".s8" | ".s16" | ".s32"));
                self.extend_high(d, signed);
                self.finish_acquire();
                return Ok(());
            }
            (None, true) => {
                let d = self.dst(val_op, w)?;
                Inst::new(op, vec![Operand::r(d), mem], vec![0])
            }
            (None, false) if w == 1 && self.reg_width(val_op) == Some(2) => {
                // From a 64-bit register: PTX stores the low bits.
                let v = self.reg_src(val_op, 2)?;
                Inst::new(op, vec![mem, Operand::r(sub(v, 0))], vec![])
            }
            (None, false) => {
                let v = self.reg_src(val_op, w)?;
                Inst::new(op, vec![mem, Operand::r(v)], vec![])
            }
            (Some(_), false) => {
                // Gather the elements into an aligned register group.
                let t = self.tmp(w);
                for (k, e) in elems.iter().flatten().enumerate() {
                    let r = self.reg_src(e, ew)?;
                    for j in 0..ew {
                        self.push(Inst::new(
                            op!("MOV"),
                            vec![
                                Operand::r(Reg::part(t, k as u8 * ew + j)),
                                Operand::r(sub(r, j)),
                            ],
                            vec![0],
                        ));
                    }
                }
                Inst::new(op, vec![mem, Operand::r(Reg::v(t, w))], vec![])
            }
            (Some(_), true) => {
                // Load into an aligned group, then copy out (after the load, below).
                let t = self.tmp(w);
                let mut load = Inst::new(op, vec![Operand::r(Reg::v(t, w)), mem], vec![0]);
                load.implicit_uses.extend(implicit.iter().copied());
                self.push(load);
                for (k, e) in elems.iter().flatten().enumerate() {
                    if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                        continue;
                    }
                    let d = self.dst(e, ew)?;
                    for j in 0..ew {
                        self.push(Inst::new(
                            op!("MOV"),
                            vec![
                                Operand::r(sub(d, j)),
                                Operand::r(Reg::part(t, k as u8 * ew + j)),
                            ],
                            vec![0],
                        ));
                    }
                }
                self.finish_acquire();
                return Ok(());
            }
        };
        inst.implicit_uses.extend(implicit.iter().copied());
        self.push(inst);
        self.finish_acquire();
        Ok(())
    }

    /// After an acquire load beyond the CTA: `CCTL.IVALL` (later loads miss in L1).
    pub(crate) fn finish_acquire(&mut self) {
        if std::mem::take(&mut self.pending_acquire) {
            self.push(Inst::new(op!("CCTL.IVALL"), vec![], vec![]));
        }
    }
}

/// The policy `createpolicy.fractional` with these modifiers and operands creates, when the
/// fraction is an immediate or absent (1.0): ptxas's folded value
/// ([`hir::fold::createpolicy_fractional`]).
pub(crate) fn fractional_policy(mods: &[String], ops: &[ast::Operand]) -> Option<u64> {
    if !mods.iter().any(|m| m == ".fractional") {
        return None;
    }
    let prios: Vec<&str> = mods
        .iter()
        .map(String::as_str)
        .filter(|m| m.starts_with(".L2::evict_"))
        .collect();
    let fraction = match ops.get(1) {
        None => 1.0,
        Some(ast::Operand::Immediate(l)) => match l.value()? {
            LiteralValue::F64(v) => v,
            LiteralValue::F64Bits(b) => f64::from_bits(b),
            LiteralValue::F32Bits(b) => f64::from(f32::from_bits(b)),
            LiteralValue::Int { .. } => return None,
        },
        Some(_) => return None,
    };
    if ops.len() > 2 || prios.is_empty() || prios.len() > 2 {
        return None;
    }
    hir::fold::createpolicy_fractional(prios[0], prios.get(1).copied(), fraction)
}

impl Cx {
    /// `createpolicy`: `.fractional` with an immediate (or no) fraction is ptxas's folded
    /// constant; `.cvt.L2` is the value itself (ptxas: a copy on sm_80 and sm_90). The
    /// fraction in a register and `.range` (ptxas computes them with a uniform loop) are
    /// refused.
    pub(crate) fn createpolicy(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let has = |m: &str| mods.iter().any(|x| x == m);
        if has(".cvt") {
            Self::need(node, ops, 2)?;
            let d = self.dst(&ops[0], 2)?;
            return self.copy(node, d, &ops[1], 2);
        }
        if !has(".fractional") {
            return Err(unsupported(node, format!("createpolicy{}", mods.concat())));
        }
        let v = fractional_policy(mods, ops).ok_or_else(|| {
            unsupported(
                node,
                "createpolicy.fractional with a fraction in a register",
            )
        })?;
        let d = self.dst(&ops[0], 2)?;
        self.mov_imm(sub(d, 0), v as u32);
        self.mov_imm(sub(d, 1), (v >> 32) as u32);
        Ok(())
    }
}

impl Cx {
    /// `prefetch{.global}.{L1,L2}`, `prefetch.global.L2::evict_{last,normal}`, `prefetchu.L1`
    /// → `CCTL.E.PF1/PF2/PML2 [a]` (ptxas 13.0.88 on sm_80 and sm_90; nvdisasm prints the
    /// 64-bit address as its low register). A hint: nothing changes in memory. Local-memory
    /// prefetches (`CCTLL`) are refused.
    pub(crate) fn prefetch(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 1)?;
        let mut kind = None;
        for m in mods {
            match m.as_str() {
                ".global" => {}
                ".L1" => kind = Some("PF1"),
                ".L2" | ".L2::evict_normal" => kind = Some("PF2"),
                ".L2::evict_last" => kind = Some("PML2"),
                ".local" => return Err(unsupported(node, "prefetch.local")),
                other => return Err(unsupported(node, format!("{opcode} modifier {other}"))),
            }
        }
        let kind = kind.ok_or_else(|| malformed(node, "prefetch without a cache level"))?;
        let (name, off) = self.address_name(&ops[0])?;
        let offset = i32::try_from(off)
            .ok()
            .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
            .ok_or_else(|| unsupported(ops[0].syntax(), "address offset out of range"))?;
        let base = self.global_base(&name, &ops[0])?;
        let mut inst = Inst::new(
            sass_op(node, &format!("CCTL.E.{kind}"))?,
            vec![Operand::Mem {
                base: Reg::part(base, 0),
                offset,
                desc: None,
            }],
            vec![],
        );
        inst.implicit_uses.push(Reg::v(base, 2));
        self.push(inst);
        Ok(())
    }
}
