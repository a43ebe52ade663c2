//! Instruction selection: the dispatch from a PTX instruction (opcode and modifiers) to the
//! family that lowers it.

use super::*;

impl Cx {
    pub(crate) fn select(
        &mut self,
        node: &SyntaxNode,
        opcode: &str,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let unsup = |what: &str| Err(unsupported(node, what));
        let has = |m: &str| mods.iter().any(|x| x == m);
        if matches!(opcode, "mov" | "add")
            && let Some(ast::Operand::Name(n)) = ops.first()
            && n.name()
                .is_some_and(|t| self.param_ptrs.contains_key(t.text()))
        {
            // A parameter's address, folded into the `ld.param`s that use it (`param_ptr.rs`).
            return Ok(());
        }
        if let Some(r) = self.half2_arith(node, opcode, mods, ops) {
            return r;
        }
        if opcode == "cvt"
            && ops.len() == 3
            && has(".f32")
            && (has(".f16x2") || has(".bf16x2"))
            && (has(".rn") || has(".rz"))
            && mods.iter().all(|m| {
                matches!(
                    m.as_str(),
                    ".rn" | ".rz" | ".relu" | ".satfinite" | ".f16x2" | ".bf16x2" | ".f32"
                )
            })
        {
            // `cvt.{rn,rz}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b`: a's conversion in
            // the high half, b's in the low half; ptxas 13.0.88's
            // `F2FP{.SATFINITE}{.RELU}{.BF16 | .F16 on sm_90}{.F32 on sm_90}.PACK_AB{.RZ} d, a, b`.
            let a = self.reg_src(&ops[1], 1)?;
            let b = self.reg_src(&ops[2], 1)?;
            let d = self.dst(&ops[0], 1)?;
            let sm90 = self.target.forms.f2fp_source_type;
            let name = format!(
                "F2FP{}{}{}{}.PACK_AB{}",
                if has(".satfinite") { ".SATFINITE" } else { "" },
                if has(".relu") { ".RELU" } else { "" },
                match (has(".bf16x2"), sm90) {
                    (true, _) => ".BF16",
                    (false, true) => ".F16",
                    (false, false) => "",
                },
                if sm90 { ".F32" } else { "" },
                if has(".rz") { ".RZ" } else { "" },
            );
            let op = Opcode::parse(&name)
                .map_err(|_| unsupported(node, format!("no SASS opcode {name}")))?;
            self.push(Inst::new(
                op,
                vec![Operand::r(d), Operand::r(a), Operand::r(b)],
                vec![0],
            ));
            return Ok(());
        }
        if opcode == "cvt" {
            if let Some(r) = self.cvt_fp8(node, mods, ops) {
                return r;
            }
            if let Some(r) = self.cvt_small(node, mods, ops) {
                return r;
            }
            // Conversions between floats and 8/16-bit types: ptxas's code from the table.
            if mods.iter().any(|m| {
                matches!(
                    m.as_str(),
                    ".u8" | ".s8" | ".b8" | ".u16" | ".s16" | ".b16" | ".f16"
                )
            }) {
                Self::need(node, ops, 2)?;
                if self.cvt_from_table(node, mods, ops)? {
                    return Ok(());
                }
                return unsup(&format!("cvt{}", mods.concat()));
            }
        }
        if let Some(r) = self.small_extending(node, opcode, mods, ops) {
            return r;
        }
        if let Some(e) = self.small_type_refusal(node, opcode, mods) {
            return Err(e);
        }
        match opcode {
            "ld" if has(".param") => self.ld_param(node, mods, ops),
            "st" if has(".param") => self.st_param(node, mods, ops),
            "call" => self.call(node, mods, ops),
            // `ldu` loads a value that is read-only for the kernel's lifetime: the
            // non-coherent path, as `ld.global.nc`.
            "ldu" if has(".global") => {
                let mut mods = mods.to_vec();
                mods.push(".nc".into());
                self.ld_st(node, &mods, ops, true, MemSpace::Global)
            }
            // A generic `ldu` is a generic load (ptxas 13.0.88 writes `LD.E`).
            "ldu" => self.ld_st(node, mods, ops, true, MemSpace::Generic),
            "ld" | "st" if has(".global") => {
                self.ld_st(node, mods, ops, opcode == "ld", MemSpace::Global)
            }
            "ld" | "st" if has(".shared") || has(".shared::cta") => {
                self.ld_st(node, mods, ops, opcode == "ld", MemSpace::Shared)
            }
            "ld" | "st" if has(".local") => {
                self.ld_st(node, mods, ops, opcode == "ld", MemSpace::Local)
            }
            "ld" | "st"
                if !mods.iter().any(|m| {
                    matches!(
                        m.as_str(),
                        ".local" | ".const" | ".param" | ".tex" | ".sreg"
                    )
                }) =>
            {
                self.ld_st(node, mods, ops, opcode == "ld", MemSpace::Generic)
            }
            "ld" if has(".const") => self.ld_const(node, mods, ops),
            "ld" | "st" => unsup(&format!("{opcode} in this state space")),
            "mov" => {
                Self::need(node, ops, 2)?;
                let ty = Self::ty_of(node, mods)?;
                if ty == Ty::Pred {
                    let d = self.pred_dst(&ops[0])?;
                    // A literal: 0 is false, anything else true (`mov.pred %p, -1;`).
                    let a = match ops[1].as_int() {
                        Some(0) => Operand::not(Reg::Zero(Class::P)),
                        Some(_) => Operand::pt(),
                        None => self.pred_src(&ops[1])?,
                    };
                    self.plop3(d, a, Operand::pt(), 0xf0);
                    return Ok(());
                }
                let w = ty.words();
                // `mov.b32 %r, {%rs1, %rs2}` packs two 16-bit registers (`PRMT 0x5410`),
                // `mov.b32 {%rs1, %rs2}, %r` unpacks (the low half as is, the high half
                // shifted down; a 16-bit register's upper half is unspecified).
                if w == 1
                    && let Some((vec_i, elems)) =
                        ops.iter().enumerate().find_map(|(i, o)| match o {
                            ast::Operand::Vector(v) => Some((i, v.elements().collect::<Vec<_>>())),
                            _ => None,
                        })
                {
                    if elems.len() != 2 {
                        return unsup("mov.b32 of a vector with other than two elements");
                    }
                    if vec_i == 1 {
                        let lo = self.reg_src(&elems[0], 1)?;
                        let hi = self.reg_src(&elems[1], 1)?;
                        let d = self.dst(&ops[0], 1)?;
                        let sel = Reg::v(self.tmp(1), 1);
                        self.mov_imm(sel, 0x5410);
                        self.push(Inst::new(
                            op!("PRMT"),
                            vec![
                                Operand::r(d),
                                Operand::r(lo),
                                Operand::r(sel),
                                Operand::r(hi),
                            ],
                            vec![0],
                        ));
                    } else {
                        let a = self.reg_src(&ops[1], 1)?;
                        let t = Reg::v(self.tmp(1), 1);
                        self.push(Inst::new(
                            op!("SHF.R.U32.HI"),
                            vec![
                                Operand::r(t),
                                Operand::rz(),
                                Operand::Imm(0x10),
                                Operand::r(a),
                            ],
                            vec![0],
                        ));
                        let l = Reg::v(self.tmp(1), 1);
                        self.push(Inst::new(
                            op!("MOV"),
                            vec![Operand::r(l), Operand::r(a)],
                            vec![0],
                        ));
                        for (e, v) in elems.iter().zip([l, t]) {
                            if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                                continue;
                            }
                            let d = self.dst(e, 1)?;
                            self.push(Inst::new(
                                op!("MOV"),
                                vec![Operand::r(d), Operand::r(v)],
                                vec![0],
                            ));
                        }
                    }
                    return Ok(());
                }
                // `mov.b64 %rd, {%r1, %r2}` packs, `mov.b64 {%r1, %r2}, %rd` unpacks.
                if w == 2
                    && let Some((vec_i, elems)) =
                        ops.iter().enumerate().find_map(|(i, o)| match o {
                            ast::Operand::Vector(v) => Some((i, v.elements().collect::<Vec<_>>())),
                            _ => None,
                        })
                {
                    if elems.len() != 2 {
                        return unsup("mov of a vector with other than two elements");
                    }
                    if vec_i == 1 {
                        let d = self.dst(&ops[0], 2)?;
                        let lo = self.reg_src(&elems[0], 1)?;
                        let hi = self.reg_src(&elems[1], 1)?;
                        // Through a temporary: an element may be a part of `d` itself.
                        let t = self.tmp(2);
                        for (k, x) in [(0u8, lo), (1, hi)] {
                            self.push(Inst::new(
                                op!("MOV"),
                                vec![Operand::r(Reg::part(t, k)), Operand::r(x)],
                                vec![0],
                            ));
                        }
                        for k in 0..2 {
                            self.push(Inst::new(
                                op!("MOV"),
                                vec![Operand::r(sub(d, k)), Operand::r(Reg::part(t, k))],
                                vec![0],
                            ));
                        }
                    } else {
                        let a = self.reg_src(&ops[1], 2)?;
                        let t = self.tmp(2);
                        self.push(Inst::new(
                            op!("MOV"),
                            vec![Operand::r(Reg::part(t, 0)), Operand::r(sub(a, 0))],
                            vec![0],
                        ));
                        self.push(Inst::new(
                            op!("MOV"),
                            vec![Operand::r(Reg::part(t, 1)), Operand::r(sub(a, 1))],
                            vec![0],
                        ));
                        for (k, e) in elems.iter().enumerate() {
                            if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                                continue;
                            }
                            let d = self.dst(e, 1)?;
                            self.push(Inst::new(
                                op!("MOV"),
                                vec![Operand::r(d), Operand::r(Reg::part(t, k as u8))],
                                vec![0],
                            ));
                        }
                    }
                    return Ok(());
                }
                let d = self.dst(&ops[0], w)?;
                self.copy(node, d, &ops[1], w)
            }
            "isspacep" => self.isspacep(node, mods, ops),
            "cvta" => {
                if has(".shared") {
                    return self.cvta_shared(node, has(".to"), mods, ops);
                }
                if has(".local") {
                    return self.cvta_local(node, has(".to"), mods, ops);
                }
                if has(".const") {
                    return self.cvta_const(node, has(".to"), mods, ops);
                }
                // Generic and global addresses coincide on sm_70+ (ptxas emits no code).
                if !has(".global") {
                    return unsup("cvta outside the .global space");
                }
                Self::need(node, ops, 2)?;
                let w = Self::ty_of(node, mods)?.words();
                if w != 2 {
                    return unsup("32-bit cvta");
                }
                let d = self.dst(&ops[0], 2)?;
                self.copy(node, d, &ops[1], 2)
            }
            // Packed 16-bit integers (`half.rs`).
            "add" | "min" | "max" if has(".u16x2") || has(".s16x2") => {
                self.packed16(node, opcode, mods, ops)
            }
            // Carry chains (`carry.rs`).
            "add" | "sub" if has(".cc") => self.add_carry(node, opcode == "sub", false, mods, ops),
            "addc" | "subc" => self.add_carry(node, opcode == "subc", true, mods, ops),
            "mad" if has(".cc") => self.mad_carry(node, false, mods, ops),
            "madc" => self.mad_carry(node, true, mods, ops),
            "add" | "sub" => self.add_sub(node, opcode == "sub", mods, ops),
            "mul" => self.mul(node, mods, ops),
            "mad" => self.mad(node, mods, ops),
            "fma" => self.ffma(node, mods, ops),
            "and" | "or" | "xor" => {
                Self::need(node, ops, 3)?;
                let ty = Self::ty_of(node, mods)?;
                let lut = match opcode {
                    "and" => 0xc0,
                    "or" => 0xfc,
                    _ => 0x3c,
                };
                if ty == Ty::Pred {
                    let d = self.pred_dst(&ops[0])?;
                    let a = self.pred_src(&ops[1])?;
                    let b = self.pred_src(&ops[2])?;
                    self.plop3(d, a, b, lut);
                    return Ok(());
                }
                let w = ty.words();
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&ops[1], w)?;
                let b = self.reg_src(&ops[2], w)?;
                for k in 0..w {
                    self.lop3(sub(d, k), sub(a, k), sub(b, k), lut);
                }
                Ok(())
            }
            "not" => {
                Self::need(node, ops, 2)?;
                let ty = Self::ty_of(node, mods)?;
                if ty == Ty::Pred {
                    let d = self.pred_dst(&ops[0])?;
                    let a = self.pred_src(&ops[1])?;
                    // ~a with a in the first LUT input (0xf0).
                    self.plop3(d, a, Operand::pt(), 0x0f);
                    return Ok(());
                }
                let w = ty.words();
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&ops[1], w)?;
                for k in 0..w {
                    self.push(Inst::new(
                        op!("LOP3.LUT"),
                        vec![
                            Operand::r(sub(d, k)),
                            Operand::rz(),
                            Operand::r(sub(a, k)),
                            Operand::rz(),
                            Operand::Hex(0x33),
                            Operand::not(Reg::Zero(Class::P)),
                        ],
                        vec![0],
                    ));
                }
                Ok(())
            }
            "shl" | "shr" => self.shift(node, opcode == "shl", mods, ops),
            "setp" => self.setp(node, mods, ops, None),
            "set" => self.set(node, mods, ops),
            "selp" => {
                Self::need(node, ops, 4)?;
                let w = Self::ty_of(node, mods)?.words();
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&ops[1], w)?;
                let b = self.reg_src(&ops[2], w)?;
                let p = self.pred_src(&ops[3])?;
                for k in 0..w {
                    self.push(Inst::new(
                        op!("SEL"),
                        vec![
                            Operand::r(sub(d, k)),
                            Operand::r(sub(a, k)),
                            Operand::r(sub(b, k)),
                            p.clone(),
                        ],
                        vec![0],
                    ));
                }
                Ok(())
            }
            "min" | "max" => self.min_max(node, opcode == "min", mods, ops),
            "copysign" => {
                // `copysign d, a, b`: b's magnitude with a's sign. ptxas 13.0.88: `LOP3.LUT d,
                // b, 0x80000000, a, 0xb8, !PT` (the high word; an f64's low word is b's).
                Self::need(node, ops, 3)?;
                let ty = Self::ty_of(node, mods)?;
                let Some((_, w)) = float_kind(ty).filter(|_| mods.len() == 1) else {
                    return unsup("copysign of this type");
                };
                let a = self.reg_src(&ops[1], w)?;
                let b = self.reg_src(&ops[2], w)?;
                let t = self.tmp(w);
                if w == 2 {
                    self.mov_reg(Reg::part(t, 0), sub(b, 0));
                }
                let m = Reg::v(self.tmp(1), 1);
                self.mov_imm(m, 0x8000_0000);
                self.push(Inst::new(
                    op!("LOP3.LUT"),
                    vec![
                        Operand::r(Reg::part(t, w - 1)),
                        Operand::r(sub(b, w - 1)),
                        Operand::r(m),
                        Operand::r(sub(a, w - 1)),
                        Operand::Hex(0xb8),
                        Operand::not(Reg::Zero(Class::P)),
                    ],
                    vec![0],
                ));
                let d = self.dst(&ops[0], w)?;
                self.copy_words(d, t, w);
                Ok(())
            }
            "neg" | "abs" if has(".ftz") && has(".f32") && mods.len() == 2 => {
                // ptxas 13.0.88: `FADD.FTZ d, -RZ, -a` for neg (a subnormal input flushes to
                // -0) and `FADD.FTZ d, |a|, -RZ` for abs (to +0).
                Self::need(node, ops, 2)?;
                let a = self.reg_src(&ops[1], 1)?;
                let d = self.dst(&ops[0], 1)?;
                let minus_zero = Operand::neg(Reg::Zero(Class::R));
                let (x, y) = if opcode == "neg" {
                    (minus_zero, Operand::neg(a))
                } else {
                    let abs = Operand::Reg {
                        reg: a,
                        neg: false,
                        not: false,
                        abs: true,
                        sel: ir::Sel::None,
                    };
                    (abs, minus_zero)
                };
                self.push(Inst::new(
                    op!("FADD.FTZ"),
                    vec![Operand::r(d), x, y],
                    vec![0],
                ));
                Ok(())
            }
            "neg" | "abs" => {
                Self::need(node, ops, 2)?;
                let ty = Self::ty_of(node, mods)?;
                if let Some(r) = self.int_neg_abs(opcode == "neg", ty, ops) {
                    return r;
                }
                let Some((_, w)) = float_kind(ty).filter(|_| !has(".ftz")) else {
                    return unsup(&format!("{opcode} of this type"));
                };
                // ptxas 13.0.88 (sm_80, sm_90): arithmetic with -0, not sign-bit operations:
                // `FADD d, |a|, -RZ` / `FADD d, -a, -RZ` for f32, `DADD d, -RZ, |a|` /
                // `DADD d, -RZ, -a` for f64. The same for every number, but a NaN comes out
                // as the canonical NaN (PTX leaves the NaN unspecified); kiln writes ptxas's
                // instructions so that it writes ptxas's bytes.
                let d = self.dst(&ops[0], w)?;
                let a = self.reg_src(&ops[1], w)?;
                let src = if opcode == "neg" {
                    Operand::neg(a)
                } else {
                    Operand::Reg {
                        reg: a,
                        neg: false,
                        not: false,
                        abs: true,
                        sel: ir::Sel::None,
                    }
                };
                let minus_zero = Operand::neg(Reg::Zero(Class::R));
                let inst = if w == 2 {
                    Inst::new(op!("DADD"), vec![Operand::r(d), minus_zero, src], vec![0])
                } else {
                    Inst::new(op!("FADD"), vec![Operand::r(d), src, minus_zero], vec![0])
                };
                self.push(inst);
                Ok(())
            }
            "cvt" => self.cvt(node, mods, ops),
            "div" | "rcp" | "sqrt" | "rsqrt" if has(".f64") => {
                // ptxas's f64 routines (`cargo xtask math-forms`), slow paths inlined.
                Self::need(node, ops, if opcode == "div" { 3 } else { 2 })?;
                if self.math_from_table(opcode, mods, ops)? {
                    Ok(())
                } else {
                    unsup(&format!("{opcode}{}", mods.concat()))
                }
            }
            "div" if fmath::is_float_div(mods) && (has(".approx") || has(".full")) => {
                self.div_approx(node, mods, ops)
            }
            "div" if has(".f32") && has(".rn") && !has(".ftz") => self.div_rn_f32(node, mods, ops),
            "div" if has(".f32") && [".rn", ".rz", ".rm", ".rp"].iter().any(|r| has(r)) => {
                // ptxas's routine in the other rounding modes and with `.ftz`
                // (`cargo xtask math-forms`).
                Self::need(node, ops, 3)?;
                if self.math_from_table(opcode, mods, ops)? {
                    Ok(())
                } else {
                    unsup(&format!("{opcode}{}", mods.concat()))
                }
            }
            "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" if has(".approx") => {
                self.approx_unary(node, opcode, mods, ops)
            }
            "rcp" | "sqrt" if has(".f32") => {
                Self::need(node, ops, 2)?;
                if self.math_from_table(opcode, mods, ops)? {
                    Ok(())
                } else {
                    unsup(&format!("{opcode}{}", mods.concat()))
                }
            }
            "div" | "rem" => {
                Self::need(node, ops, 3)?;
                let ty = Self::ty_of(node, mods)?;
                let small = matches!(ty, Ty::U16 | Ty::S16 | Ty::B16);
                if mods.len() == 1
                    && matches!(ty, Ty::U64 | Ty::S64)
                    && self.math_from_table(opcode, mods, ops)?
                {
                    // ptxas's 64-bit routine (`cargo xtask math-forms`).
                    return Ok(());
                }
                if mods.len() != 1 || !(small || matches!(ty, Ty::U32 | Ty::B32 | Ty::S32)) {
                    return unsup(&format!("{opcode} of this type"));
                }
                let mut a = self.reg_src(&ops[1], 1)?;
                let mut b = self.reg_src(&ops[2], 1)?;
                if small {
                    // 16-bit operands extended to 32 bits: the 32-bit quotient and remainder
                    // of the extended values have the 16-bit results in their low halves.
                    a = self.extend_small(a, 16, ty == Ty::S16);
                    b = self.extend_small(b, 16, ty == Ty::S16);
                }
                let d = self.dst(&ops[0], 1)?;
                let want_rem = opcode == "rem";
                if ty.signed() {
                    self.sdivrem(d, a, b, want_rem);
                } else {
                    let (q, r) = self.udivrem(a, b);
                    let res = if want_rem { r } else { q };
                    self.push(Inst::new(
                        op!("MOV"),
                        vec![Operand::r(d), Operand::r(res)],
                        vec![0],
                    ));
                }
                Ok(())
            }
            "bra" => {
                Self::need(node, ops, 1)?;
                let name = match &ops[0] {
                    ast::Operand::Name(n) => {
                        n.name().map(|t| t.text().to_string()).unwrap_or_default()
                    }
                    _ => return unsup("indirect branches"),
                };
                let target = *self
                    .labels
                    .get(&name)
                    .ok_or_else(|| malformed(node, format!("undefined label `{name}`")))?;
                self.push(Inst::new(op!("BRA"), vec![Operand::Label(target)], vec![]));
                let next = self.f.new_block();
                self.start_block(next);
                Ok(())
            }
            "trap" => {
                // ptxas 13.0.88: `BPT.TRAP 0x1`, branched around when guarded.
                let inst = Inst::new(op!("BPT.TRAP"), vec![Operand::Imm(1)], vec![]);
                match self.guard.take() {
                    Some(g) => {
                        let end = self.skip_unless(g);
                        self.push(inst);
                        self.start_block(end);
                        self.guard = Some(g);
                    }
                    None => self.push(inst),
                }
                Ok(())
            }
            "ret" if self.ret_target.is_some() => self.inlined_ret(),
            "ret" | "exit" => {
                self.push(Inst::new(op!("EXIT"), vec![], vec![]));
                let next = self.f.new_block();
                self.start_block(next);
                Ok(())
            }
            "bar" if mods.len() == 2 && has(".warp") && has(".sync") => {
                // `bar.warp.sync -1`: the whole warp reconverges (`crates/opt`'s
                // `reconverge` removes it where the warp is known to be converged). Another mask: `WARPSYNC mask` as before a
                // warp collective (a constant mask synchronizes only its own threads), kept
                // even where the collectives' syncs are dropped: here it is the barrier.
                Self::need(node, ops, 1)?;
                if self.guard.is_some() {
                    return unsup("predicated bar.warp.sync");
                }
                if ops[0].as_int().is_some_and(|m| m as u32 == u32::MAX) {
                    let inst = self.full_warpsync();
                    self.push(inst);
                } else {
                    self.collective_sync(node, &ops[0], true)?;
                    self.collective_syncs.pop();
                }
                Ok(())
            }
            "bar" | "barrier" if has(".red") => self.bar_red(node, opcode, mods, ops),
            "bar" | "barrier" => self.barrier(node, opcode, mods, ops),
            "shfl" => self.shfl(node, mods, ops),
            "tex" => self.tex(node, mods, ops),
            "suld" | "sust" => self.surface(node, opcode, mods, ops),
            "sad" if mods.len() == 1 && (has(".s32") || has(".u32")) => {
                // ptxas 13.0.88: `VABSDIFF[.U32] d, a, b, c` (sm_80 and sm_90).
                Self::need(node, ops, 4)?;
                let a = self.reg_src(&ops[1], 1)?;
                let b = self.reg_src(&ops[2], 1)?;
                let c = self.reg_src(&ops[3], 1)?;
                let d = self.dst(&ops[0], 1)?;
                let op = if has(".u32") {
                    op!("VABSDIFF.U32")
                } else {
                    op!("VABSDIFF")
                };
                self.push(Inst::new(
                    op,
                    vec![Operand::r(d), Operand::r(a), Operand::r(b), Operand::r(c)],
                    vec![0],
                ));
                Ok(())
            }
            "clz" | "brev" | "popc" | "bfind" => self.bit_count(node, opcode, mods, ops),
            "testp" => self.testp(node, mods, ops),
            "bmsk" | "bfe" | "bfi" => self.bitfield(node, opcode, mods, ops),
            "slct" => self.slct(node, mods, ops),
            "atom" | "red" => self.atom(node, opcode == "red", mods, ops),
            "shf" => self.shf(node, mods, ops),
            "prmt" => self.prmt(node, mods, ops),
            "vote" => self.vote(node, mods, ops),
            "match" => self.match_sync(node, mods, ops),
            "redux" => self.redux(node, mods, ops),
            "membar" | "fence" => self.fence(node, opcode, mods),
            "cp" => self.cp_async(node, mods, ops),
            "mbarrier" => self.mbarrier(node, mods, ops),
            "ldmatrix" => self.ldmatrix(node, mods, ops),
            "stmatrix" => self.stmatrix(node, mods, ops),
            "movmatrix" => self.movmatrix(node, mods, ops),
            "mma" => self.mma(node, mods, ops),
            "wmma" => self.wmma(node, mods, ops),
            "createpolicy" => self.createpolicy(node, mods, ops),
            "prefetch" | "prefetchu" => self.prefetch(node, opcode, mods, ops),
            "elect" => self.elect(node, mods, ops),
            "griddepcontrol" => self.griddepcontrol(node, mods),
            "mul24" => self.mul24(node, mods, ops),
            "nanosleep" => {
                // `NANOSLEEP t` with t an immediate or a register (ptxas's form; sm_80 reads a
                // parameter directly as `c[0x0][o]`, kiln from a register).
                Self::need(node, ops, 1)?;
                if mods.iter().any(|m| m != ".u32") {
                    return unsup(&format!("nanosleep{}", mods.concat()));
                }
                let t = match self.src(&ops[0])? {
                    Src::Imm(v) if v <= u64::from(u32::MAX) => Operand::Imm(v as i64),
                    _ => Operand::r(self.reg_src(&ops[0], 1)?),
                };
                self.push(Inst::new(op!("NANOSLEEP"), vec![t], vec![]));
                Ok(())
            }
            "activemask" => self.activemask(node, ops),
            other => unsup(&format!("instruction `{other}`")),
        }
    }
}
