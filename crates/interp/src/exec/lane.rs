//! One instruction for one lane: the semantics of every PTX instruction the interpreter runs
//! that is not a warp collective, a barrier or a call.

use super::*;

impl Cta<'_> {
    pub(crate) fn lane(
        &mut self,
        w: usize,
        l: usize,
        f: &Function,
        inst: &Inst,
    ) -> Result<(), RunError> {
        let m = &inst.mods;
        let a = &inst.args;
        let ty = m.ty();
        macro_rules! t {
            () => {
                &self.warps[w][l]
            };
        }
        macro_rules! g {
            ($i:expr, $ty:expr) => {
                self.get(f, t!(), &a[$i], $ty)
            };
        }
        macro_rules! put {
            ($i:expr, $ty:expr, $v:expr) => {{
                let v = $v;
                let t = &mut self.warps[w][l];
                set(f, t, &a[$i], $ty, v);
            }};
        }
        match inst.op {
            Op::Nop => {}
            Op::CpAsyncCommit => {
                if let Some(san) = &mut self.san {
                    san.async_commit(w * 32 + l);
                }
            }
            Op::CpAsyncWait => {
                let n = match a.first() {
                    Some(_) => Some(g!(0, Ty::U32) as usize),
                    None => None,
                };
                if let Some(san) = &mut self.san {
                    san.async_wait(w * 32 + l, n);
                }
            }
            Op::Membar => {
                if let Some(san) = &mut self.san {
                    san.synchronize(w * 32 + l);
                }
            }
            Op::Mov => {
                if let Some(Operand::Sreg(Sreg::CooperativeWorkspace(_))) = a.get(1)
                    && self.mem.cooperative_workspace().is_none()
                {
                    return Err(RunError::Unsupported {
                        reason: "%envreg1/%envreg2 (the grid-synchronization workspace of a cooperative launch) read in a launch that is not cooperative".into(),
                        line: inst.line,
                    });
                }
                if let (Operand::Vec(dst), Operand::Vec(src)) = (&a[0], &a[1])
                    && dst.len() == src.len()
                {
                    let vals: Vec<u64> = src.iter().map(|o| self.get(f, t!(), o, ty)).collect();
                    for (d, v) in dst.iter().zip(vals) {
                        let t = &mut self.warps[w][l];
                        set(f, t, d, ty, v);
                    }
                    self.advance(w, l);
                    return Ok(());
                }
                if let Operand::Vec(parts) = &a[0] {
                    // Unpack: mov.b64 {lo, hi}, x.
                    let v = g!(1, ty);
                    let part = ty.bits() / parts.len() as u32;
                    let pty = bits_ty(part);
                    for (k, p) in parts.iter().enumerate() {
                        let t = &mut self.warps[w][l];
                        set(f, t, p, pty, (v >> (part * k as u32)) & pty.mask());
                    }
                } else {
                    put!(0, ty, g!(1, ty));
                }
            }
            Op::Ld => {
                let space = m.space.unwrap_or(Space::Generic);
                let (sp, addr) = self.address(t!(), &a[1], space);
                let n = m.vec as usize;
                let esz = ty.size() as usize;
                let mut buf = vec![0u8; esz * n];
                self.load(w, l, sp, addr, &mut buf, inst.line)?;
                let dsts: Vec<Operand> = match &a[0] {
                    Operand::Vec(v) => v.clone(),
                    o => vec![o.clone()],
                };
                for (k, d) in dsts.iter().enumerate().take(n) {
                    let mut b = [0u8; 8];
                    let chunk = &buf[k * esz..(k + 1) * esz];
                    b[..esz.min(8)].copy_from_slice(&chunk[..esz.min(8)]);
                    let t = &mut self.warps[w][l];
                    set(f, t, d, ty, u64::from_le_bytes(b));
                }
            }
            Op::CpAsync => {
                let (dsp, daddr) = self.address(t!(), &a[0], Space::Shared);
                let (ssp, saddr) = self.address(t!(), &a[1], Space::Global);
                let n = g!(2, Ty::U32) as usize;
                // `ignore-src` (a predicate): zeros when true; `src-size`: the bytes read,
                // the rest zero-filled.
                let keep = match a.get(3) {
                    None => n,
                    Some(p @ (Operand::Reg(_) | Operand::NotPred(_)))
                        if matches!(p, Operand::NotPred(_))
                            || matches!(p, Operand::Reg(r) if f.reg_bits[*r as usize] == 1) =>
                    {
                        if g!(3, Ty::Pred) & 1 != 0 { 0 } else { n }
                    }
                    Some(_) => (g!(3, Ty::U32) as usize).min(n),
                };
                let mut buf = vec![0u8; n];
                if keep > 0 {
                    self.load(w, l, ssp, saddr, &mut buf[..keep], inst.line)?;
                }
                self.store(w, l, dsp, daddr, &buf, inst.line)?;
                if let Some(san) = &mut self.san
                    && matches!(dsp, Space::Shared)
                {
                    san.async_copy(w * 32 + l, daddr, n, inst.line);
                }
            }
            Op::St => {
                let space = m.space.unwrap_or(Space::Generic);
                let (sp, addr) = self.address(t!(), &a[0], space);
                let srcs: Vec<Operand> = match &a[1] {
                    Operand::Vec(v) => v.clone(),
                    o => vec![o.clone()],
                };
                let esz = ty.size() as usize;
                let mut buf = Vec::with_capacity(esz * srcs.len());
                for s in &srcs {
                    let v = self.get(f, t!(), s, ty);
                    buf.extend_from_slice(&v.to_le_bytes()[..esz.min(8)]);
                }
                self.store(w, l, sp, addr, &buf, inst.line)?;
            }
            Op::Add | Op::Sub if ty.is_float() => {
                let x = g!(1, ty);
                let y = g!(2, ty);
                let neg = inst.op == Op::Sub;
                let r = float_bin(ty, m, x, y, &|a, b, rnd, fmt| {
                    float::add(a, if neg { -b } else { b }, rnd, fmt)
                });
                put!(0, ty, r);
            }
            Op::Mul if ty.is_float() => {
                let r = float_bin(ty, m, g!(1, ty), g!(2, ty), &float::mul);
                put!(0, ty, r);
            }
            Op::Fma | Op::Mad if ty.is_float() => {
                let (x, y, z) = (g!(1, ty), g!(2, ty), g!(3, ty));
                // A contracted `sub` (`hir::contract`): the sign bit of the product's first
                // factor or of the addend flipped, as FFMA's operand negation does.
                let sign = 1u64 << (ty.bits() - 1);
                let x = if m.fma_negate.0 { x ^ sign } else { x };
                let z = if m.fma_negate.1 { z ^ sign } else { z };
                let r = float_tern(ty, m, x, y, z);
                put!(0, ty, r);
            }
            Op::Div if ty.is_float() => {
                let (x, y) = (g!(1, ty), g!(2, ty));
                let mut r = float_bin(ty, m, x, y, &float::div);
                if ty == Ty::F64 {
                    r = f64_div_nan(x, y, r);
                }
                put!(0, ty, r);
            }
            Op::Add | Op::Sub | Op::Addc | Op::Subc => {
                let bits = ty.bits();
                let x = g!(1, ty) as u128;
                let y = g!(2, ty) as u128;
                let cin = matches!(inst.op, Op::Addc | Op::Subc) && t!().carry;
                let _ = bits;
                let sub = matches!(inst.op, Op::Sub | Op::Subc);
                let r = if m.sat && ty == Ty::S32 {
                    let (x, y) = (x as u32 as i32 as i64, y as u32 as i32 as i64);
                    let v = if sub { x - y } else { x + y };
                    v.clamp(i32::MIN as i64, i32::MAX as i64) as u64 & ty.mask()
                } else if matches!(ty, Ty::U16x2 | Ty::S16x2)
                    || m.types.iter().any(|t| matches!(t, Ty::U16x2 | Ty::S16x2))
                {
                    let mut out = 0u64;
                    for k in 0..2 {
                        let (p, q) = ((x >> (16 * k)) as u16, (y >> (16 * k)) as u16);
                        let v = if sub {
                            p.wrapping_sub(q)
                        } else {
                            p.wrapping_add(q)
                        };
                        out |= (v as u64) << (16 * k);
                    }
                    out
                } else {
                    // Subtraction is a + !b + 1 (sub.cc) or a + !b + CF (subc): the carry flag
                    // after a subtraction is the inverted borrow, as the hardware computes it
                    // (checked against ZLUDA's hardware-recorded results).
                    let (yy, c) = if sub {
                        (
                            (!y as u64 & ty.mask()) as u128,
                            if inst.op == Op::Subc { cin as u128 } else { 1 },
                        )
                    } else {
                        (y, cin as u128)
                    };
                    let full = x + yy + c;
                    if m.cc {
                        self.warps[w][l].carry = full >> bits != 0;
                    }
                    (full as u64) & ty.mask()
                };
                put!(0, ty, r);
            }
            Op::Mul | Op::Mad | Op::Madc => {
                let bits = ty.bits();
                let x = ext(g!(1, ty), ty);
                let y = ext(g!(2, ty), ty);
                let p = x.wrapping_mul(y);
                let (val, out_ty) = if m.wide {
                    (p as u64 & wide_ty(ty).mask(), wide_ty(ty))
                } else if m.hi {
                    ((p >> bits) as u64 & ty.mask(), ty)
                } else {
                    (p as u64 & ty.mask(), ty)
                };
                if matches!(inst.op, Op::Mad | Op::Madc) {
                    let c = g!(3, out_ty);
                    let cin = inst.op == Op::Madc && t!().carry;
                    let r = if m.sat && ty == Ty::S32 && m.hi {
                        let v = (val as u32 as i32 as i64) + (c as u32 as i32 as i64);
                        v.clamp(i32::MIN as i64, i32::MAX as i64) as u64 & 0xffff_ffff
                    } else {
                        let full = val as u128 + c as u128 + cin as u128;
                        if m.cc {
                            self.warps[w][l].carry = full >> out_ty.bits() != 0;
                        }
                        full as u64 & out_ty.mask()
                    };
                    put!(0, out_ty, r);
                } else {
                    put!(0, out_ty, val);
                }
            }
            Op::Mul24 | Op::Mad24 => {
                let s = ty.is_signed();
                let x = g!(1, ty);
                let y = g!(2, ty);
                let (x, y) = if s {
                    (
                        ((x << 40) as i64 >> 40) as i128,
                        ((y << 40) as i64 >> 40) as i128,
                    )
                } else {
                    ((x & 0xff_ffff) as i128, (y & 0xff_ffff) as i128)
                };
                let p = x * y;
                let v = if m.hi { (p >> 16) as u64 } else { p as u64 } & 0xffff_ffff;
                let v = if inst.op == Op::Mad24 {
                    (v + g!(3, ty)) & 0xffff_ffff
                } else {
                    v
                };
                put!(0, ty, v);
            }
            Op::Sad => {
                let (x, y, z) = (ext(g!(1, ty), ty), ext(g!(2, ty), ty), g!(3, ty));
                let d = (x - y).unsigned_abs() as u64;
                put!(0, ty, d.wrapping_add(z) & ty.mask());
            }
            Op::Div | Op::Rem => {
                let x = ext(g!(1, ty), ty);
                let y = ext(g!(2, ty), ty);
                let v = if y == 0 {
                    // Division by zero gives an unspecified value in PTX; hardware gives all
                    // ones for the quotient and the dividend for the remainder.
                    if inst.op == Op::Div {
                        ty.mask()
                    } else {
                        x as u64
                    }
                } else if inst.op == Op::Div {
                    (x.wrapping_div(y)) as u64
                } else {
                    (x.wrapping_rem(y)) as u64
                };
                put!(0, ty, v & ty.mask());
            }
            Op::Abs | Op::Neg if ty.is_float() => {
                let x = g!(1, ty);
                let r = float_unary_sign(ty, m, x, inst.op == Op::Neg);
                put!(0, ty, r);
            }
            Op::Abs => {
                let x = ext(g!(1, ty), ty);
                put!(0, ty, x.unsigned_abs() as u64 & ty.mask());
            }
            Op::Neg => {
                let x = ext(g!(1, ty), ty);
                put!(0, ty, (x.wrapping_neg()) as u64 & ty.mask());
            }
            Op::Min | Op::Max if ty.is_float() => {
                let r = float_minmax(ty, m, g!(1, ty), g!(2, ty), inst.op == Op::Max);
                put!(0, ty, r);
            }
            Op::Min | Op::Max => {
                let is_max = inst.op == Op::Max;
                if matches!(ty, Ty::U16x2 | Ty::S16x2) {
                    let (x, y) = (g!(1, ty), g!(2, ty));
                    let mut out = 0;
                    for k in 0..2 {
                        let (p, q) = ((x >> (16 * k)) & 0xffff, (y >> (16 * k)) & 0xffff);
                        let (p, q) = if ty == Ty::S16x2 {
                            (p as u16 as i16 as i64, q as u16 as i16 as i64)
                        } else {
                            (p as i64, q as i64)
                        };
                        let mut v = if is_max { p.max(q) } else { p.min(q) };
                        if m.relu {
                            v = v.max(0);
                        }
                        out |= ((v as u64) & 0xffff) << (16 * k);
                    }
                    put!(0, ty, out);
                } else {
                    let x = ext(g!(1, ty), ty);
                    let y = ext(g!(2, ty), ty);
                    let mut v = if is_max { x.max(y) } else { x.min(y) };
                    if m.relu {
                        v = v.max(0);
                    }
                    put!(0, ty, v as u64 & ty.mask());
                }
            }
            Op::Fma => {
                return Err(RunError::Unsupported {
                    reason: format!("fma on type {ty:?}"),
                    line: inst.line,
                });
            }
            Op::Popc => put!(0, Ty::U32, g!(1, ty).count_ones() as u64),
            Op::Clz => {
                let x = g!(1, ty);
                put!(0, Ty::U32, (x.leading_zeros() - (64 - ty.bits())) as u64);
            }
            Op::Bfind => {
                let x = g!(1, ty);
                let bits = ty.bits();
                let v = if ty.is_signed() && (x >> (bits - 1)) & 1 == 1 {
                    !x & ty.mask()
                } else {
                    x
                };
                let r = if v == 0 {
                    0xffff_ffff
                } else {
                    let pos = 63 - v.leading_zeros() as u64;
                    if m.shiftamt {
                        bits as u64 - 1 - pos
                    } else {
                        pos
                    }
                };
                put!(0, Ty::U32, r);
            }
            Op::Brev => {
                let x = g!(1, ty);
                put!(0, ty, x.reverse_bits() >> (64 - ty.bits()));
            }
            Op::Bfe => {
                let bits = ty.bits() as u64;
                let x = g!(1, ty);
                let pos = g!(2, Ty::U32) & 0xff;
                let len = g!(3, Ty::U32) & 0xff;
                let sbit = if ty.is_signed() {
                    if len == 0 {
                        false
                    } else {
                        (x >> (pos + len - 1).min(bits - 1)) & 1 == 1
                    }
                } else {
                    false
                };
                let mut d = 0u64;
                let folded = (ty == Ty::S32
                    && matches!(a[2], Operand::Imm(_))
                    && matches!(a[3], Operand::Imm(_)))
                .then(|| hir::fold::bfe_s32(pos as u32, len as u32))
                .flatten();
                if let Some(v) = folded {
                    // ptxas's folding of immediate fields beyond bit 31 (`hir::fold`).
                    d = u64::from(v);
                } else {
                    for i in 0..bits {
                        let bit = if i < len && pos + i < bits {
                            (x >> (pos + i)) & 1 == 1
                        } else {
                            sbit
                        };
                        d |= (bit as u64) << i;
                    }
                }
                put!(0, ty, d);
            }
            Op::Bfi => {
                let bits = ty.bits() as u64;
                let a_ = g!(1, ty);
                let b_ = g!(2, ty);
                let pos = g!(3, Ty::U32) & 0xff;
                let len = g!(4, Ty::U32) & 0xff;
                let mut d = b_;
                if bits == 32 && matches!(a[3], Operand::Imm(_)) && matches!(a[4], Operand::Imm(_))
                {
                    // Immediate position and length: ptxas 13.0.88 folds the mask itself,
                    // taking a length of 32 or more modulo 32 unless the position is 0
                    // (`bfi.b32 d, a, b, 5, 32` is `b`; PTX would insert a's 27 low bits).
                    // kiln writes the same mask (`hir::fold::bfi_mask`).
                    let m = hir::fold::bfi_mask(pos as u32, len as u32);
                    let shifted = if pos < 32 { (a_ << pos) as u32 } else { 0 };
                    d = u64::from((shifted & m) | (b_ as u32 & !m));
                } else {
                    for i in 0..len {
                        if pos + i >= bits {
                            break;
                        }
                        d = (d & !(1 << (pos + i))) | (((a_ >> i) & 1) << (pos + i));
                    }
                }
                put!(0, ty, d);
            }
            Op::Fns => {
                let mask = g!(1, Ty::B32) as u32;
                let base = g!(2, Ty::U32) as u32;
                let offset = g!(3, Ty::S32) as u32 as i32;
                let r = fns(mask, base, offset);
                put!(0, Ty::B32, r as u64);
            }
            Op::Szext => {
                let x = g!(1, Ty::B32) as u32;
                let mut n = g!(2, Ty::U32) as u32;
                n = if m.wrap { n & 31 } else { n.min(32) };
                let r = if n == 0 {
                    0
                } else if n >= 32 {
                    x
                } else if ty.is_signed() {
                    (((x << (32 - n)) as i32) >> (32 - n)) as u32
                } else {
                    x & ((1u32 << n) - 1)
                };
                put!(0, Ty::B32, r as u64);
            }
            Op::Bmsk => {
                let pos = g!(1, Ty::U32) as u32;
                let len = g!(2, Ty::U32) as u32;
                let (pos, len) = if m.wrap {
                    (pos & 31, len & 31)
                } else {
                    (pos.min(32), len.min(32))
                };
                let end = (pos as u64 + len as u64).min(32);
                let r = if pos >= 32 {
                    0
                } else {
                    (((1u64 << end) - 1) & !((1u64 << pos) - 1)) as u32
                };
                put!(0, Ty::B32, r as u64);
            }
            Op::Dp4a | Op::Dp2a => {
                let (ta, tb) = (m.ty(), m.ty2());
                let x = g!(1, Ty::B32) as u32;
                let y = g!(2, Ty::B32) as u32;
                let c = g!(3, Ty::B32) as u32;
                let byte = |v: u32, k: u32, s: bool| -> i64 {
                    let b = (v >> (8 * k)) & 0xff;
                    if s { b as u8 as i8 as i64 } else { b as i64 }
                };
                let half = |v: u32, k: u32, s: bool| -> i64 {
                    let h = (v >> (16 * k)) & 0xffff;
                    if s { h as u16 as i16 as i64 } else { h as i64 }
                };
                let mut acc = c as i64;
                if inst.op == Op::Dp4a {
                    for k in 0..4 {
                        acc += byte(x, k, ta.is_signed()) * byte(y, k, tb.is_signed());
                    }
                } else {
                    let base = if m.hi { 2 } else { 0 };
                    for k in 0..2 {
                        acc += half(x, k, ta.is_signed()) * byte(y, base + k, tb.is_signed());
                    }
                }
                put!(0, Ty::B32, acc as u64 & 0xffff_ffff);
            }
            Op::Video => {
                let Some(v) = m.video else {
                    return Err(RunError::Unsupported {
                        reason: "a video instruction without its form".into(),
                        line: inst.line,
                    });
                };
                let x = g!(1, Ty::B32) as u32;
                let y = g!(2, Ty::B32) as u32;
                let c = if a.len() > 3 {
                    g!(3, Ty::B32) as u32
                } else {
                    0
                };
                let form = crate::video::Form {
                    video: v.video,
                    types: &m.types,
                    sat: m.sat,
                    second: m.atom,
                    cmp: m.cmp,
                    clamp: m.clamp,
                    shr: v.shr,
                    po: v.po,
                    negate: v.negate,
                };
                let d = if v.video.lanes == 1 {
                    crate::video::scalar(&form, x, y, c, v.sel)
                } else {
                    crate::video::simd(&form, x, y, c, v.sel)
                };
                put!(0, Ty::B32, u64::from(d));
            }
            Op::Testp => {
                let x = g!(1, ty);
                let v = to_f64(ty, x);
                let sub = if ty == Ty::F32 {
                    (x as u32) & 0x7f80_0000 == 0 && (x as u32) & 0x7f_ffff != 0
                } else {
                    v != 0.0 && v.abs() < f64::MIN_POSITIVE
                };
                let r = match m.testp {
                    0 => v.is_finite(),
                    1 => v.is_infinite(),
                    2 => !v.is_nan(),
                    3 => v.is_nan(),
                    // PTX: "positive and negative zero are considered normal numbers".
                    4 => v.is_finite() && !sub,
                    _ => sub,
                };
                put!(0, Ty::Pred, r as u64);
            }
            Op::Copysign => {
                let x = g!(1, ty);
                let y = g!(2, ty);
                let sb = 1u64 << (ty.bits() - 1);
                put!(0, ty, (y & !sb) | (x & sb));
            }
            Op::Rcp | Op::Sqrt | Op::Rsqrt | Op::Sin | Op::Cos | Op::Lg2 | Op::Ex2 | Op::Tanh => {
                let x = g!(1, ty);
                let r = float_fn(inst.op, ty, m, x);
                put!(0, ty, r);
            }
            Op::Setp | Op::Set => {
                let src_ty = if inst.op == Op::Set { m.ty2() } else { ty };
                let x = g!(1, src_ty);
                let y = g!(2, src_ty);
                let cmp = m.cmp.unwrap_or(Cmp::Eq);
                let combine = |r: bool, me: &Self| -> bool {
                    match (m.boolop, a.get(3)) {
                        (Some(op), Some(c)) => {
                            let c = me.get(f, &me.warps[w][l], c, Ty::Pred) & 1 != 0;
                            match op {
                                BoolOp::And => r && c,
                                BoolOp::Or => r || c,
                                BoolOp::Xor => r ^ c,
                            }
                        }
                        _ => r,
                    }
                };
                if matches!(src_ty, Ty::F16x2 | Ty::Bf16x2) {
                    let hty = if src_ty == Ty::F16x2 {
                        Ty::F16
                    } else {
                        Ty::Bf16
                    };
                    let lo = compare(cmp, hty, x & 0xffff, y & 0xffff, m.ftz);
                    let hi = compare(cmp, hty, x >> 16, y >> 16, m.ftz);
                    let (lo, hi) = (combine(lo, self), combine(hi, self));
                    if inst.op == Op::Setp {
                        // PTX ISA §9.7.7.2: p = BoolOp(t[0], c) for the low halves (a[0:15]),
                        // q = BoolOp(t[1], c) for the high halves.
                        if let Operand::Vec(parts) = &a[0] {
                            let t = &mut self.warps[w][l];
                            set(f, t, &parts[0], Ty::Pred, lo as u64);
                            if let Some(q) = parts.get(1) {
                                set(f, t, q, Ty::Pred, hi as u64);
                            }
                        } else {
                            put!(0, Ty::Pred, lo as u64);
                        }
                    } else {
                        let dty = m.ty();
                        let one = set_true(dty) & 0xffff;
                        let r = ((if hi { one } else { 0 }) << 16) | if lo { one } else { 0 };
                        put!(0, dty, r);
                    }
                } else {
                    let r = combine(compare(cmp, src_ty, x, y, m.ftz), self);
                    if inst.op == Op::Setp {
                        match &a[0] {
                            Operand::Vec(parts) => {
                                // p|q: q is the complement.
                                let t = &mut self.warps[w][l];
                                set(f, t, &parts[0], Ty::Pred, r as u64);
                                if let Some(q) = parts.get(1) {
                                    let nr = combine(!compare(cmp, src_ty, x, y, m.ftz), self);
                                    let t = &mut self.warps[w][l];
                                    set(f, t, q, Ty::Pred, nr as u64);
                                }
                            }
                            _ => put!(0, Ty::Pred, r as u64),
                        }
                    } else {
                        let dty = m.ty();
                        put!(0, dty, if r { set_true(dty) } else { 0 });
                    }
                }
            }
            Op::Selp => {
                let c = g!(3, Ty::Pred) & 1 != 0;
                let v = if c { g!(1, ty) } else { g!(2, ty) };
                put!(0, ty, v);
            }
            Op::Slct => {
                let cty = m.ty2();
                let c = g!(3, cty);
                let neg = if cty == Ty::F32 {
                    let cf = f32::from_bits(c as u32);
                    let cf = if m.ftz && (c as u32) & 0x7f80_0000 == 0 {
                        0.0
                    } else {
                        cf
                    };
                    // `d = (c >= 0) ? a : b`: a NaN `c` selects `b`.
                    cf.partial_cmp(&0.0).is_none_or(|o| o.is_lt())
                } else {
                    (c as u32 as i32) < 0
                };
                let v = if neg { g!(2, ty) } else { g!(1, ty) };
                put!(0, ty, v);
            }
            Op::And | Op::Or | Op::Xor => {
                let (x, y) = (g!(1, ty), g!(2, ty));
                let v = match inst.op {
                    Op::And => x & y,
                    Op::Or => x | y,
                    _ => x ^ y,
                };
                put!(0, ty, v);
            }
            Op::Not => {
                let x = g!(1, ty);
                let v = if ty == Ty::Pred {
                    (x & 1) ^ 1
                } else {
                    !x & ty.mask()
                };
                put!(0, ty, v);
            }
            Op::Cnot => {
                let x = g!(1, ty);
                put!(0, ty, (x == 0) as u64);
            }
            Op::Lop3 => {
                let (x, y, z) = (g!(1, Ty::B32), g!(2, Ty::B32), g!(3, Ty::B32));
                let lut = g!(4, Ty::B32) as u8;
                let mut r = 0u64;
                for i in 0..32 {
                    let idx = (((x >> i) & 1) << 2) | (((y >> i) & 1) << 1) | ((z >> i) & 1);
                    r |= (((lut >> idx) & 1) as u64) << i;
                }
                put!(0, Ty::B32, r);
            }
            Op::Shf => {
                let lo = g!(1, Ty::B32);
                let hi = g!(2, Ty::B32);
                let n = g!(3, Ty::U32);
                let n = if m.wrap { n & 31 } else { n.min(32) };
                let v = (hi << 32) | lo;
                let r = if m.left { (v << n) >> 32 } else { v >> n };
                put!(0, Ty::B32, r & 0xffff_ffff);
            }
            Op::Shl => {
                let x = g!(1, ty);
                let n = g!(2, Ty::U32);
                let r = if n >= ty.bits() as u64 {
                    0
                } else {
                    (x << n) & ty.mask()
                };
                put!(0, ty, r);
            }
            Op::Shr => {
                let x = g!(1, ty);
                let n = g!(2, Ty::U32).min(ty.bits() as u64);
                let r = if ty.is_signed() {
                    let s = ext(x, ty);
                    (s >> n) as u64 & ty.mask()
                } else if n >= ty.bits() as u64 {
                    0
                } else {
                    x >> n
                };
                put!(0, ty, r);
            }
            Op::Prmt => {
                let x = g!(1, Ty::B32);
                let y = g!(2, Ty::B32);
                let c = g!(3, Ty::B32) as u32;
                put!(0, Ty::B32, prmt(x as u32, y as u32, c, m.prmt) as u64);
            }
            Op::Cvt => {
                let (dty, sty) = (m.ty(), m.ty2());
                match (dty, sty) {
                    // Two f32 sources packed into one register (the first in the high half).
                    (Ty::F16x2 | Ty::Bf16x2 | Ty::E4m3x2 | Ty::E5m2x2, Ty::F32) => {
                        let (fmt, w) = packed_elem(dty);
                        let hi = cvt_float(g!(1, Ty::F32), Ty::F32, fmt, m);
                        let lo = cvt_float(g!(2, Ty::F32), Ty::F32, fmt, m);
                        put!(0, packed_ty(w), (hi << w) | lo);
                    }
                    (Ty::E4m3x2 | Ty::E5m2x2, Ty::F16x2) => {
                        let (fmt, _) = packed_elem(dty);
                        let x = g!(1, Ty::B32);
                        let hi = cvt_float(x >> 16, Ty::F16, fmt, m);
                        let lo = cvt_float(x & 0xffff, Ty::F16, fmt, m);
                        put!(0, Ty::B16, (hi << 8) | lo);
                    }
                    (Ty::F16x2, Ty::E4m3x2 | Ty::E5m2x2) => {
                        let (sfmt, _) = packed_elem(sty);
                        let x = g!(1, Ty::B16);
                        let conv = |b: u64| {
                            let v = sfmt.to_f64(b);
                            let v = if m.relu && (v < 0.0) { 0.0 } else { v };
                            float::round(v, Ordering::Equal, Rnd::Ne, float::F16, false)
                        };
                        put!(0, Ty::B32, (conv(x >> 8) << 16) | conv(x & 0xff));
                    }
                    _ => {
                        let x = g!(1, sty);
                        let r = cvt(dty, sty, x, m);
                        put!(0, dty, r);
                    }
                }
            }
            Op::CvtPack => {
                // cvt.pack.sat.{u8,s8,u16,s16}.s32.b32 d, a, b, c: saturate a and b into the
                // destination width; d = {a, b} packed above c's low bits (for 8-bit) or alone.
                let (dty, sty) = (m.ty(), m.ty2());
                let x = ext(g!(1, sty), sty);
                let y = ext(g!(2, sty), sty);
                let satc = |v: i128| -> u64 {
                    let (lo, hi) = int_range(dty);
                    (v.clamp(lo, hi) as u64) & dty.mask()
                };
                let r = if dty.bits() == 16 {
                    (satc(x) << 16) | satc(y)
                } else {
                    let c = g!(3, Ty::B32);
                    (c << 16 | satc(x) << 8 | satc(y)) & 0xffff_ffff
                };
                put!(0, Ty::B32, r);
            }
            Op::Cvta => {
                let space = m.space.unwrap_or(Space::Global);
                let x = match &a[1] {
                    Operand::VarAddr { var, offset, .. } => {
                        (self.var_addr(t!(), *var, false) as i64 + offset) as u64
                    }
                    o => self.get(f, t!(), o, Ty::U64),
                };
                let r = if m.to {
                    let (sp, addr) = from_generic(x);
                    if sp == space || (space == Space::SharedCluster && sp == Space::Shared) {
                        addr
                    } else {
                        x
                    }
                } else {
                    to_generic(space, x)
                };
                put!(0, ty, r);
            }
            Op::Isspacep => {
                let x = g!(1, Ty::U64);
                let (sp, _) = from_generic(x);
                let want = m.space.unwrap_or(Space::Global);
                let r = sp == want || (want == Space::SharedCluster && sp == Space::Shared);
                put!(0, Ty::Pred, r as u64);
            }
            Op::Bra => {
                let Operand::Label(target) = a[0] else {
                    return Err(RunError::Unsupported {
                        reason: "branch to a non-label".into(),
                        line: inst.line,
                    });
                };
                let t = &mut self.warps[w][l];
                t.frames.last_mut().expect("frame").pc = target;
                return Ok(());
            }
            Op::Ret => {
                self.do_ret(w, l);
                return Ok(());
            }
            Op::Exit => {
                let t = &mut self.warps[w][l];
                t.st = St::Exited;
                return Ok(());
            }
            Op::Trap => {
                return Err(trap_of(self, inst.line, t!(), "`trap` executed".into()));
            }
            Op::Call => return self.call(w, l, f, inst),
            Op::Tex => {
                let texel = self.tex(f, t!(), inst)?;
                let dty = m.ty();
                if let Operand::Vec(dsts) = &a[0] {
                    for (d, v) in dsts.iter().zip(texel) {
                        let t = &mut self.warps[w][l];
                        set(f, t, d, dty, u64::from(v));
                    }
                }
            }
            Op::Suld | Op::Sust => self.surface_access(w, l, f, inst)?,
            Op::Mbarrier => self.mbarrier(w, l, f, inst)?,
            Op::Atom | Op::Red if m.vec > 1 => {
                // Vector atomics (sm_90: `.v2/.v4/.v8` of f32, f16x2, bf16x2, f16, bf16):
                // element `i` is one atomic at `a + i * size`, each returning its old value.
                let space = m.space.unwrap_or(Space::Generic);
                let (sp, addr) =
                    self.address(t!(), &a[if inst.op == Op::Atom { 1 } else { 0 }], space);
                let base = if inst.op == Op::Atom { 2 } else { 1 };
                let elems = |o: &Operand| match o {
                    Operand::Vec(v) => v.clone(),
                    other => vec![other.clone()],
                };
                let (srcs, dsts) = (elems(&a[base]), elems(&a[0]));
                if srcs.len() != m.vec as usize {
                    return Err(RunError::Unsupported {
                        reason: "vector atomic with another number of elements".into(),
                        line: inst.line,
                    });
                }
                let n = ty.size() as usize;
                for (i, s) in srcs.iter().enumerate() {
                    let b = self.get(f, t!(), s, ty);
                    let at = addr + (i * n) as u64;
                    let mut buf = [0u8; 8];
                    self.in_atomic = true;
                    let loaded = self.load(w, l, sp, at, &mut buf[..n], inst.line);
                    self.in_atomic = false;
                    loaded?;
                    let old = u64::from_le_bytes(buf);
                    let new = atom_op(m.atom.unwrap_or(AtomOp::Add), ty, old, b, 0);
                    self.in_atomic = true;
                    let stored = self.store(w, l, sp, at, &new.to_le_bytes()[..n], inst.line);
                    self.in_atomic = false;
                    stored?;
                    if inst.op == Op::Atom {
                        let t = &mut self.warps[w][l];
                        set(f, t, &dsts[i], ty, old);
                    }
                }
                if let Some(san) = &mut self.san {
                    san.synchronize(w * 32 + l);
                }
            }
            Op::Atom | Op::Red => {
                let space = m.space.unwrap_or(Space::Generic);
                let (sp, addr) =
                    self.address(t!(), &a[if inst.op == Op::Atom { 1 } else { 0 }], space);
                let base = if inst.op == Op::Atom { 2 } else { 1 };
                let b = g!(base, ty);
                let c = if m.atom == Some(AtomOp::Cas) {
                    g!(base + 1, ty)
                } else {
                    0
                };
                let n = ty.size() as usize;
                let mut buf = vec![0u8; n];
                self.in_atomic = true;
                let loaded = self.load(w, l, sp, addr, &mut buf, inst.line);
                self.in_atomic = false;
                loaded?;
                let mut ob = [0u8; 8];
                ob[..n.min(8)].copy_from_slice(&buf[..n.min(8)]);
                let old = u64::from_le_bytes(ob);
                let new = atom_op(m.atom.unwrap_or(AtomOp::Add), ty, old, b, c);
                self.in_atomic = true;
                let stored = self.store(w, l, sp, addr, &new.to_le_bytes()[..n], inst.line);
                self.in_atomic = false;
                stored?;
                if let Some(san) = &mut self.san {
                    san.synchronize(w * 32 + l);
                }
                if inst.op == Op::Atom {
                    put!(0, ty, old);
                }
            }
            Op::Shfl
            | Op::Vote
            | Op::Match
            | Op::Redux
            | Op::BarWarp
            | Op::Activemask
            | Op::Elect
            | Op::Bar
            | Op::Ldmatrix
            | Op::Stmatrix
            | Op::Movmatrix
            | Op::Mma
            | Op::Wmma
            | Op::Unsupported => {
                unreachable!("handled per warp")
            }
        }
        self.advance(w, l);
        Ok(())
    }
}
