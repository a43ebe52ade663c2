//! Instruction semantics. Every opcode and modifier listed here is implemented; anything else
//! is an [`unsupported`] error naming it (never skipped).

use interp::float::{self, BF16, F16, F32, F64, Fmt, Rnd};
use sass::model::{Inst, Operand, OperandKind, RegFile};
use sass::table::FloatFormat;

use crate::exec::{
    Ctx, Fault, LaneState, R, Space, Warp, address, const_addr, pair, trap, unsupported, upair,
};

mod mma;
mod packed;
mod surface;

/// Lane indices of a mask.
pub fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..32usize).filter(move |l| mask >> l & 1 == 1)
}

/// Modifiers that only tune caching, ordering or scheduling and have no functional effect in
/// a single-CTA-at-a-time sequential emulator.
const NEUTRAL_MEM_MODS: &[&str] = &[
    "E", "CONSTANT", "STRONG", "GPU", "SYS", "SM", "CTA", "VC", "EF", "EL", "LU", "LTC128B",
    "LTC64B", "LTC256B", "NA", "BYPASS", "PRIVATE", "MMIO", "CONSTANT", "WEAK", "ZFILL",
];

fn check_mods(inst: &Inst, allowed: &[&str]) -> R<()> {
    for m in &inst.mods {
        if !allowed.contains(&m.as_str()) {
            return unsupported(format!("{} with modifier .{m}", inst.opcode));
        }
    }
    Ok(())
}

fn op_at(inst: &Inst, i: usize) -> R<&Operand> {
    inst.operands
        .get(i)
        .ok_or_else(|| Fault::Unsupported(format!("{}: missing operand {i}", inst.opcode)))
}

// ---------------------------------------------------------------------------------------
// Operand access.

/// The raw 32-bit value of a source operand (no `-`, `|..|`, `~`, `!` applied); a byte
/// selector (`R2.B1`..`.B3`) shifts the selected byte down.
fn raw32(ctx: &Ctx<'_>, w: &Warp, l: usize, op: &Operand) -> R<u32> {
    let v = raw32_whole(ctx, w, l, op)?;
    Ok(if op.suffixes.is_empty() {
        v
    } else if op.has_suffix("B1") {
        v >> 8
    } else if op.has_suffix("B2") {
        v >> 16
    } else if op.has_suffix("B3") {
        v >> 24
    } else {
        v
    })
}

fn raw32_whole(ctx: &Ctx<'_>, w: &Warp, l: usize, op: &Operand) -> R<u32> {
    Ok(match &op.kind {
        OperandKind::Reg(r) => match r.file {
            RegFile::R => w.reg(l, r.index),
            RegFile::Ur => w.ureg(r.index),
            RegFile::P => u32::from(w.pred(l, r.index)),
            RegFile::Up => u32::from(w.upred(r.index)),
            RegFile::B => w.b[l * 16 + r.index as usize],
            RegFile::Sb => return unsupported("scoreboard register as a value"),
        },
        OperandKind::Int(i) => *i as u32,
        OperandKind::Float { bits, value, .. } => match bits {
            Some((FloatFormat::F32, raw)) | Some((FloatFormat::F64Hi, raw)) => *raw as u32,
            Some((FloatFormat::F16, raw)) | Some((FloatFormat::Bf16, raw)) => *raw as u32,
            None => (*value as f32).to_bits(),
        },
        OperandKind::Const {
            bank,
            addr,
            indirect,
        } => {
            if *indirect {
                return unsupported("indirect constant bank operand cx[..]");
            }
            let (b, off) = const_addr(w, l, bank, addr)?;
            ctx.cread(l, b, off, 4)? as u32
        }
        OperandKind::Special(s) if s == "SRZ" => 0,
        k => return unsupported(format!("operand {k:?}")),
    })
}

/// The raw 64-bit value of a source operand (register pairs, 64-bit constants; an integer
/// immediate sign-extends; an f64 immediate is its high word).
fn raw64(ctx: &Ctx<'_>, w: &Warp, l: usize, op: &Operand) -> R<u64> {
    Ok(match &op.kind {
        OperandKind::Reg(r) => match r.file {
            RegFile::R => u64::from(w.reg(l, r.index)) | u64::from(w.reg(l, pair(r.index))) << 32,
            RegFile::Ur => u64::from(w.ureg(r.index)) | u64::from(w.ureg(upair(r.index))) << 32,
            _ => return unsupported(format!("64-bit operand {}", r)),
        },
        OperandKind::Int(i) => *i as u64,
        OperandKind::Float { bits, value, .. } => match bits {
            Some((FloatFormat::F64Hi, raw)) => raw << 32,
            Some((FloatFormat::F32, raw)) => f64::from(f32::from_bits(*raw as u32)).to_bits(),
            Some((FloatFormat::F16 | FloatFormat::Bf16, _)) => {
                return unsupported("16-bit float immediate as a 64-bit operand");
            }
            None => value.to_bits(),
        },
        OperandKind::Const {
            bank,
            addr,
            indirect,
        } => {
            if *indirect {
                return unsupported("indirect constant bank operand cx[..]");
            }
            let (b, off) = const_addr(w, l, bank, addr)?;
            ctx.cread(l, b, off, 8)?
        }
        k => return unsupported(format!("64-bit operand {k:?}")),
    })
}

/// An integer source: `~x` inverts, `-x` negates (two's complement).
fn int32(ctx: &Ctx<'_>, w: &Warp, l: usize, op: &Operand) -> R<u32> {
    let mut v = raw32(ctx, w, l, op)?;
    if op.invert {
        v = !v;
    }
    if op.neg {
        v = v.wrapping_neg();
    }
    if op.abs {
        v = (v as i32).unsigned_abs();
    }
    Ok(v)
}

/// A predicate source (`P`/`UP`, `!` applied; `R.SIGN`, as `PLOP3` reads it, is the sign bit
/// of a register).
fn pred(w: &Warp, l: usize, op: &Operand) -> R<bool> {
    let v = match &op.kind {
        OperandKind::Reg(r) if r.file == RegFile::P => w.pred(l, r.index),
        OperandKind::Reg(r) if r.file == RegFile::Up => w.upred(r.index),
        OperandKind::Reg(r) if r.file == RegFile::R && op.has_suffix("SIGN") => {
            r.index != 255 && w.reg(l, r.index) >> 31 == 1
        }
        k => return unsupported(format!("predicate operand {k:?}")),
    };
    Ok(v != op.not)
}

fn is_pred(op: &Operand) -> bool {
    matches!(&op.kind, OperandKind::Reg(r) if matches!(r.file, RegFile::P | RegFile::Up))
}

/// Writes a 32-bit result to a register operand (R or UR).
fn wr(w: &mut Warp, l: usize, op: &Operand, v: u32) -> R<()> {
    match &op.kind {
        OperandKind::Reg(r) => match r.file {
            RegFile::R => w.set_reg(l, r.index, v),
            RegFile::Ur => w.set_ureg(r.index, v),
            _ => return unsupported(format!("destination {r}")),
        },
        k => return unsupported(format!("destination {k:?}")),
    }
    Ok(())
}

/// Writes `n` consecutive 32-bit words starting at a register operand.
fn wr_n(w: &mut Warp, l: usize, op: &Operand, vals: &[u32]) -> R<()> {
    match &op.kind {
        OperandKind::Reg(r) if r.file == RegFile::R => {
            if r.index == 255 {
                return Ok(());
            }
            for (i, v) in vals.iter().enumerate() {
                w.set_reg(l, r.index + i as u8, *v);
            }
        }
        OperandKind::Reg(r) if r.file == RegFile::Ur => {
            if r.index == 63 {
                return Ok(());
            }
            for (i, v) in vals.iter().enumerate() {
                w.set_ureg(r.index + i as u8, *v);
            }
        }
        k => return unsupported(format!("destination {k:?}")),
    }
    Ok(())
}

/// Reads `n` consecutive 32-bit words starting at a register operand.
fn rd_n(w: &Warp, l: usize, op: &Operand, n: usize) -> R<Vec<u32>> {
    match &op.kind {
        OperandKind::Reg(r) if r.file == RegFile::R => Ok((0..n)
            .map(|i| {
                if r.index == 255 {
                    0
                } else {
                    w.reg(l, r.index + i as u8)
                }
            })
            .collect()),
        OperandKind::Reg(r) if r.file == RegFile::Ur => Ok((0..n)
            .map(|i| {
                if r.index == 63 {
                    0
                } else {
                    w.ureg(r.index + i as u8)
                }
            })
            .collect()),
        k => unsupported(format!("register operand {k:?}")),
    }
}

fn wr64(w: &mut Warp, l: usize, op: &Operand, v: u64) -> R<()> {
    wr_n(w, l, op, &[v as u32, (v >> 32) as u32])
}

fn wp(w: &mut Warp, l: usize, op: &Operand, v: bool) -> R<()> {
    match &op.kind {
        OperandKind::Reg(r) if r.file == RegFile::P => w.set_pred(l, r.index, v),
        OperandKind::Reg(r) if r.file == RegFile::Up => w.set_upred(r.index, v),
        k => return unsupported(format!("predicate destination {k:?}")),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Floating point helpers.

fn rnd(inst: &Inst) -> Rnd {
    if inst.has_mod("RZ") {
        Rnd::Z
    } else if inst.has_mod("RM") {
        Rnd::M
    } else if inst.has_mod("RP") {
        Rnd::P
    } else {
        Rnd::Ne
    }
}

/// An f32 source: `|x|` and `-x` act on the sign; `.FTZ` flushes subnormals.
fn f32src(ctx: &Ctx<'_>, w: &Warp, l: usize, op: &Operand, ftz: bool) -> R<f64> {
    let mut b = raw32(ctx, w, l, op)?;
    if op.abs {
        b &= 0x7fff_ffff;
    }
    if op.neg {
        b ^= 0x8000_0000;
    }
    if ftz {
        b = F32.ftz(u64::from(b)) as u32;
    }
    Ok(f64::from(f32::from_bits(b)))
}

fn f64src(ctx: &Ctx<'_>, w: &Warp, l: usize, op: &Operand) -> R<f64> {
    let mut b = raw64(ctx, w, l, op)?;
    if op.abs {
        b &= !(1u64 << 63);
    }
    if op.neg {
        b ^= 1u64 << 63;
    }
    Ok(f64::from_bits(b))
}

/// Finishes an f32 result: `.FTZ` flushes a subnormal result, `.SAT` clamps to [0, 1].
fn f32fin(bits: u64, ftz: bool, sat: bool) -> u32 {
    let mut b = bits as u32;
    if sat {
        let x = f32::from_bits(b);
        b = if x.is_nan() {
            0
        } else {
            x.clamp(0.0, 1.0).to_bits()
        };
    }
    if ftz {
        b = F32.ftz(u64::from(b)) as u32;
    }
    b
}

fn fcmp(cmp: &str, a: f64, b: f64) -> R<bool> {
    let un = a.is_nan() || b.is_nan();
    Ok(match cmp {
        "F" => false,
        "T" => true,
        "EQ" => !un && a == b,
        "NE" => !un && a != b,
        "LT" => !un && a < b,
        "LE" => !un && a <= b,
        "GT" => !un && a > b,
        "GE" => !un && a >= b,
        "EQU" => un || a == b,
        "NEU" => un || a != b,
        "LTU" => un || a < b,
        "LEU" => un || a <= b,
        "GTU" => un || a > b,
        "GEU" => un || a >= b,
        "NUM" => !un,
        "NAN" => un,
        c => return unsupported(format!("float comparison .{c}")),
    })
}

fn bool_op(op: &str, a: bool, b: bool) -> R<bool> {
    Ok(match op {
        "AND" => a && b,
        "OR" => a || b,
        "XOR" => a != b,
        o => return unsupported(format!("predicate combination .{o}")),
    })
}

const CMPS: &[&str] = &[
    "F", "T", "EQ", "NE", "LT", "LE", "GT", "GE", "EQU", "NEU", "LTU", "LEU", "GTU", "GEU", "NUM",
    "NAN",
];
const BOPS: &[&str] = &["AND", "OR", "XOR"];

fn find_mod<'a>(inst: &'a Inst, set: &[&str]) -> Option<&'a str> {
    inst.mods
        .iter()
        .find(|m| set.contains(&m.as_str()))
        .map(String::as_str)
}

/// `x` as a value of an integer type name (`U8` ... `S64`), as i128.
fn int_of(ty: &str, x: u64) -> i128 {
    match ty {
        "U8" => i128::from(x as u8),
        "S8" => i128::from(x as i8),
        "U16" => i128::from(x as u16),
        "S16" => i128::from(x as i16),
        "U32" => i128::from(x as u32),
        "S32" => i128::from(x as i32),
        "U64" => i128::from(x),
        _ => i128::from(x as i64),
    }
}

fn int_range(ty: &str) -> (i128, i128) {
    match ty {
        "U8" => (0, 255),
        "S8" => (-128, 127),
        "U16" => (0, 65535),
        "S16" => (-32768, 32767),
        "U32" => (0, u32::MAX as i128),
        "S32" => (i32::MIN as i128, i32::MAX as i128),
        "U64" => (0, u64::MAX as i128),
        _ => (i64::MIN as i128, i64::MAX as i128),
    }
}

const INT_TYS: &[&str] = &["U8", "S8", "U16", "S16", "U32", "S32", "U64", "S64"];
const FLT_TYS: &[&str] = &["F16", "F32", "F64", "BF16"];

fn fmt_of(t: &str) -> Fmt {
    match t {
        "F16" => F16,
        "BF16" => BF16,
        "F64" => F64,
        _ => F32,
    }
}

fn fbits_to_f64(t: &str, b: u64) -> f64 {
    fmt_of(t).to_f64(b)
}

// ---------------------------------------------------------------------------------------
// Dispatch.

/// Executes `inst` for `exec` (the active lanes whose guard holds); every lane of `active`
/// moves to the next instruction unless the instruction transfers control.
pub fn execute(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, active: u32, exec: u32) -> R<()> {
    let pc = ctx.pc;
    let next = |w: &mut Warp| {
        for l in lanes(active) {
            w.pc[l] = pc + 16;
        }
    };
    let name = inst.opcode.as_str();
    match name {
        // ---- control flow and convergence
        "BRA" => {
            check_mods(inst, &["U", "DIV", "CONV", "ANY"])?;
            let target = inst
                .operands
                .iter()
                .find_map(|o| match o.kind {
                    OperandKind::Target(t) => Some(t),
                    _ => None,
                })
                .ok_or_else(|| Fault::Unsupported("BRA without a target address".into()))?;
            let mut take = exec;
            // `@P0 BRA !P1, target`: a predicate operand is a second condition, taken only by
            // the lanes where it holds too (ptxas's division slow path branches so).
            if let Some(o) = inst.operands.first().filter(|o| is_pred(o)) {
                for l in lanes(take) {
                    if !pred(w, l, o)? {
                        take &= !(1 << l);
                    }
                }
            }
            if inst.has_mod("DIV") || inst.has_mod("CONV") {
                // BRA.DIV URx: taken when the active lanes differ from the mask in URx;
                // BRA.CONV URx (`~URZ`: every lane): taken when they are exactly the mask's
                // present lanes (ptxas branches to its converged fast path so, and otherwise
                // calls a subroutine that first reconverges with `WARPSYNC`).
                let m = match inst.operands.first() {
                    Some(o) if matches!(&o.kind, OperandKind::Reg(r) if r.file == RegFile::Ur) => {
                        let l0 = lanes(active).next().unwrap_or(0);
                        int32(ctx, w, l0, o)?
                    }
                    // sm_75's `BRA.DIV `(target)`: no mask operand, the whole warp.
                    Some(o) if matches!(o.kind, OperandKind::Target(_)) => u32::MAX,
                    _ => return unsupported("BRA.DIV/.CONV without a uniform mask"),
                };
                let converged = active == m & w.present_mask();
                take = if converged == inst.has_mod("CONV") {
                    exec
                } else {
                    0
                };
            }
            if inst.has_mod("ANY") {
                // `@P BRA.ANY`: the warp branches together when the condition holds in any of
                // its active lanes (ptxas's waterfall loops: `@P1 BRA.U.ANY` repeats until no
                // lane is left).
                take = if take != 0 { active } else { 0 };
            }
            for l in lanes(active) {
                w.pc[l] = if take >> l & 1 == 1 { target } else { pc + 16 };
            }
            Ok(())
        }
        "EXIT" => {
            check_mods(inst, &[])?;
            for l in lanes(active) {
                if exec >> l & 1 == 1 {
                    w.state[l] = LaneState::Exited;
                } else {
                    w.pc[l] = pc + 16;
                }
            }
            Ok(())
        }
        "BSSY" => {
            check_mods(inst, &["RECONVERGENT"])?;
            let b = breg(op_at(inst, 0)?)?;
            for l in lanes(exec) {
                w.b[l * 16 + b] = exec;
            }
            next(w);
            Ok(())
        }
        "BSYNC" => {
            check_mods(inst, &["RECONVERGENT"])?;
            let b = breg(op_at(inst, 0)?)?;
            for l in lanes(active) {
                if exec >> l & 1 == 1 {
                    w.state[l] = LaneState::Bsync(b as u8);
                } else {
                    w.pc[l] = pc + 16;
                }
            }
            Ok(())
        }
        "BREAK" => {
            check_mods(inst, &[])?;
            let b = breg(
                inst.operands
                    .last()
                    .ok_or_else(|| Fault::Unsupported("BREAK".into()))?,
            )?;
            for l in lanes(exec) {
                for j in 0..32 {
                    w.b[j * 16 + b] &= !(1 << l);
                }
            }
            next(w);
            Ok(())
        }
        "BMOV" => {
            check_mods(inst, &["32", "CLEAR"])?;
            let d = op_at(inst, 0)?;
            let s = op_at(inst, 1)?;
            for l in lanes(exec) {
                match (&d.kind, &s.kind) {
                    (OperandKind::Reg(dr), _) if dr.file == RegFile::B => {
                        let v = raw32(ctx, w, l, s)?;
                        w.b[l * 16 + dr.index as usize] = v;
                    }
                    (_, OperandKind::Reg(sr)) if sr.file == RegFile::B => {
                        let v = w.b[l * 16 + sr.index as usize];
                        wr(w, l, d, v)?;
                        if inst.has_mod("CLEAR") {
                            w.b[l * 16 + sr.index as usize] = 0;
                        }
                    }
                    _ => return unsupported("BMOV operands"),
                }
            }
            next(w);
            Ok(())
        }
        "WARPSYNC" => {
            check_mods(inst, &["ALL", "EXCLUSIVE", "COLLECTIVE"])?;
            // `WARPSYNC.COLLECTIVE Rm, `(end)`: ptxas's form around a collective whose member
            // mask is not the active lanes (after `BRA.DIV`): the lanes of each mask run the
            // instructions up to `ENDCOLLECTIVE` as a group of their own (like `.EXCLUSIVE`),
            // then continue at `end`.
            let collective = inst.has_mod("COLLECTIVE");
            if collective {
                let end = inst
                    .operands
                    .iter()
                    .find_map(|o| match o.kind {
                        OperandKind::Target(t) => Some(t),
                        _ => None,
                    })
                    .ok_or_else(|| {
                        Fault::Unsupported("WARPSYNC.COLLECTIVE without an end".into())
                    })?;
                for l in lanes(exec) {
                    w.collective_end[l] = end;
                }
            }
            for l in lanes(active) {
                if exec >> l & 1 == 1 {
                    // Each thread waits for the threads of its own mask.
                    let mask = if inst.has_mod("ALL") {
                        u32::MAX
                    } else {
                        raw32(ctx, w, l, op_at(inst, 0)?)?
                    };
                    if mask >> l & 1 == 0 {
                        ctx.cta.undefined_syncs += 1;
                    }
                    // `.EXCLUSIVE` (ptxas's form before a collective whose member mask may
                    // differ between threads): the threads of one mask continue as a group of
                    // their own, apart from other groups (`exec::release_warp_waits`).
                    w.state[l] = if inst.has_mod("EXCLUSIVE") || collective {
                        LaneState::WarpsyncExclusive(mask)
                    } else {
                        LaneState::Warpsync(mask)
                    };
                } else {
                    w.pc[l] = pc + 16;
                }
            }
            Ok(())
        }
        "ENDCOLLECTIVE" => {
            check_mods(inst, &[])?;
            for l in lanes(active) {
                w.pc[l] = if exec >> l & 1 == 1 && w.collective_end[l] != 0 {
                    std::mem::take(&mut w.collective_end[l])
                } else {
                    pc + 16
                };
            }
            Ok(())
        }
        "BAR" => bar(ctx, w, inst, active, exec),
        "B2R" => {
            // `B2R.RESULT Rd[, Pd]`: the lane's last BAR.RED result (Pd: it is not zero).
            check_mods(inst, &["RESULT"])?;
            if !inst.has_mod("RESULT") {
                return unsupported("B2R without .RESULT");
            }
            for l in lanes(exec) {
                let v = w.bar_result[l];
                wr(w, l, op_at(inst, 0)?, v)?;
                if let Some(p) = inst.operands.get(1) {
                    wp(w, l, p, v != 0)?;
                }
            }
            next(w);
            Ok(())
        }
        "CALL" => {
            check_mods(inst, &["REL", "NOINC", "ABS"])?;
            let reg = inst.operands.iter().find_map(|o| match &o.kind {
                OperandKind::Reg(r) if r.file == RegFile::R && r.index != 255 => Some(r.index),
                _ => None,
            });
            let target = inst.operands.iter().find_map(|o| match o.kind {
                OperandKind::Target(t) => Some(t),
                _ => None,
            });
            let t = match (reg, target) {
                (None, Some(t)) => t,
                // `CALL.ABS.NOINC Rn`: a system call through the address constant bank 4
                // holds (`crate::syscall`).
                (Some(r), None) if inst.has_mod("ABS") => {
                    return crate::syscall::call_abs(ctx, w, r, active, exec);
                }
                // `CALL.REL.NOINC R10 `(kernel)`: an indirect call (virtual functions, function
                // pointers) to the address in the register relative to the target.
                (Some(_), Some(_)) => {
                    return unsupported("CALL through a register (an indirect call)");
                }
                _ => return unsupported("CALL through a relocated address"),
            };
            for l in lanes(active) {
                w.pc[l] = if exec >> l & 1 == 1 { t } else { pc + 16 };
            }
            Ok(())
        }
        "RET" => {
            check_mods(inst, &["REL", "NODEC", "ABS"])?;
            let r = op_at(inst, 0)?;
            if inst.has_mod("ABS") {
                // `RET.ABS.NODEC R20`: to the 64-bit code address in R20:R21 (built by the
                // caller's relocated `MOV` pair, `load::apply_code_relocs`).
                let OperandKind::Reg(reg) = &r.kind else {
                    return unsupported("RET.ABS without a register");
                };
                if reg.file != RegFile::R || reg.index >= 254 {
                    return unsupported("RET.ABS without an R register pair");
                }
                for l in lanes(active) {
                    if exec >> l & 1 == 0 {
                        w.pc[l] = pc + 16;
                        continue;
                    }
                    let addr =
                        u64::from(w.reg(l, reg.index)) | u64::from(w.reg(l, reg.index + 1)) << 32;
                    match ctx.prog.code_pc(addr) {
                        Some(t) => w.pc[l] = t,
                        None => {
                            return trap(l, format!("RET.ABS to {addr:#x}, not a code address"));
                        }
                    }
                }
                return Ok(());
            }
            let base = if inst.has_mod("REL") {
                ctx.prog.section_of(pc).map_or(0, |s| s.base)
            } else {
                0
            };
            for l in lanes(active) {
                w.pc[l] = if exec >> l & 1 == 1 {
                    base + u64::from(raw32(ctx, w, l, r)?)
                } else {
                    pc + 16
                };
            }
            Ok(())
        }
        "LEPC" => {
            crate::syscall::lepc(w, inst, pc, exec)?;
            next(w);
            Ok(())
        }
        "BPT" => {
            if exec != 0 {
                return trap(
                    exec.trailing_zeros() as usize,
                    format!("BPT.{}", inst.mods.join(".")),
                );
            }
            next(w);
            Ok(())
        }
        "NOP" | "DEPBAR" | "MEMBAR" | "ERRBAR" | "CCTL" | "FENCE" | "YIELD" | "NANOSLEEP"
        | "CGAERRBAR" | "LDGDEPBAR" => {
            next(w);
            Ok(())
        }
        // Programmatic dependent launch: `ACQBULK` waits for the grids this one depends on
        // and `PREEXIT` lets dependent grids start; a single emulated launch has neither.
        "ACQBULK" | "PREEXIT" => {
            next(w);
            Ok(())
        }
        // ---- warp-wide data ops
        "SHFL" => {
            shfl(ctx, w, inst, exec)?;
            next(w);
            Ok(())
        }
        "HMMA" | "IMMA" | "DMMA" => {
            mma::mma(w, inst, exec)?;
            next(w);
            Ok(())
        }
        "LDSM" => {
            mma::ldsm(ctx, w, inst, exec)?;
            next(w);
            Ok(())
        }
        "STSM" => {
            mma::stsm(ctx, w, inst, exec)?;
            next(w);
            Ok(())
        }
        "MOVM" => {
            mma::movm(w, inst, exec)?;
            next(w);
            Ok(())
        }
        "VOTE" | "VOTEU" => {
            vote(ctx, w, inst, exec)?;
            next(w);
            Ok(())
        }
        "MATCH" => {
            matchop(ctx, w, inst, exec)?;
            next(w);
            Ok(())
        }
        "REDUX" => {
            redux(ctx, w, inst, exec)?;
            next(w);
            Ok(())
        }
        "R2UR" if inst.operands.first().is_some_and(is_pred) => {
            // `R2UR[.OR] Pd, URd, Rs`: URd = Rs of the first executing lane; in each executing
            // lane Pd = its Rs differs from that value (`.OR`: Pd |= ...). ptxas's waterfall
            // loops rely on it being per lane: for a texture handle that may differ between
            // threads (`R2UR P0, UR4, R8; R2UR.OR P0, UR5, R9; @!P0 TEX ..., UR4`, then the
            // lanes with P0 clear leave the loop), and before collectives whose member mask may
            // differ between threads.
            check_mods(inst, &["OR"])?;
            let (p, d, a) = (op_at(inst, 0)?, op_at(inst, 1)?, op_at(inst, 2)?);
            let Some(l0) = lanes(exec).next() else {
                next(w);
                return Ok(());
            };
            let v0 = raw32(ctx, w, l0, a)?;
            for l in lanes(exec) {
                let differs = raw32(ctx, w, l, a)? != v0;
                let old = inst.has_mod("OR") && pred(w, l, p)?;
                wp(w, l, p, old || differs)?;
            }
            wr(w, l0, d, v0)?;
            next(w);
            Ok(())
        }
        _ => {
            // An instruction writing only uniform registers runs once (for the first lane),
            // since it may overwrite its own uniform inputs.
            let uniform = inst.operands.first().is_some_and(|o| {
                matches!(&o.kind, OperandKind::Reg(r) if matches!(r.file, RegFile::Ur | RegFile::Up))
            });
            let run = if uniform {
                exec & exec.wrapping_neg()
            } else {
                exec
            };
            for l in lanes(run) {
                lane_op(ctx, w, inst, l, active)?;
            }
            next(w);
            Ok(())
        }
    }
}

fn breg(op: &Operand) -> R<usize> {
    match &op.kind {
        OperandKind::Reg(r) if r.file == RegFile::B => Ok(r.index as usize),
        k => unsupported(format!("barrier register operand {k:?}")),
    }
}

fn bar(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, active: u32, exec: u32) -> R<()> {
    check_mods(
        inst,
        &["SYNC", "DEFER_BLOCKING", "ARV", "RED", "POPC", "AND", "OR"],
    )?;
    // `BAR.RED.{POPC,AND,OR} id, P`: a barrier that also reduces a predicate over the CTA
    // (the result is read with `B2R.RESULT`).
    let red = inst.has_mod("RED").then(|| {
        if inst.has_mod("POPC") {
            0u8
        } else if inst.has_mod("AND") {
            1
        } else {
            2
        }
    });
    if inst.operands.len() > usize::from(red.is_some()) + 1 {
        return unsupported("BAR with a thread count");
    }
    if let Some(op) = red {
        let p = op_at(inst, 1)?;
        for l in lanes(exec) {
            let v = pred(w, l, p)?;
            w.bar_red[l] = Some((op, v));
        }
    }
    let id = match inst.operands.first() {
        Some(o) => {
            let l0 = lanes(active).next().unwrap_or(0);
            raw32(ctx, w, l0, o)? as u8
        }
        None => 0,
    };
    for l in lanes(active) {
        if exec >> l & 1 == 1 && (inst.has_mod("SYNC") || red.is_some()) {
            w.state[l] = LaneState::Bar(id);
        } else {
            w.pc[l] = ctx.pc + 16;
        }
    }
    if inst.has_mod("ARV") {
        return unsupported("BAR.ARV (producer/consumer barriers)");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Warp collectives.

fn shfl(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
    check_mods(inst, &["IDX", "UP", "DOWN", "BFLY"])?;
    let mode = inst.mods.first().map(String::as_str).unwrap_or("");
    let (pd, d, a, b, c) = (
        op_at(inst, 0)?,
        op_at(inst, 1)?,
        op_at(inst, 2)?,
        op_at(inst, 3)?,
        op_at(inst, 4)?,
    );
    let mut res = Vec::new();
    for l in lanes(exec) {
        let bval = raw32(ctx, w, l, b)? & 0x1f;
        let cv = raw32(ctx, w, l, c)?;
        let cval = cv & 0x1f;
        let segmask = (cv >> 8) & 0x1f;
        let lane = l as u32;
        let max_lane = (lane & segmask) | (cval & !segmask);
        let min_lane = lane & segmask;
        let (j, ok) = match mode {
            "UP" => {
                let j = lane as i32 - bval as i32;
                (j, j >= max_lane as i32)
            }
            "DOWN" => {
                let j = (lane + bval) as i32;
                (j, j <= max_lane as i32)
            }
            "BFLY" => {
                let j = (lane ^ bval) as i32;
                (j, j <= max_lane as i32)
            }
            "IDX" => {
                let j = (min_lane | (bval & !segmask)) as i32;
                (j, j <= max_lane as i32)
            }
            m => return unsupported(format!("SHFL.{m}")),
        };
        let src = if ok { j as usize } else { l };
        let undefined = exec >> src & 1 == 0;
        if undefined {
            ctx.cta.undefined_reads += 1;
        }
        let v = if undefined && ctx.cta.zero_undefined_lanes {
            0
        } else {
            raw32(ctx, w, src, a)?
        };
        res.push((l, v, ok));
    }
    for (l, v, ok) in res {
        wr(w, l, d, v)?;
        wp(w, l, pd, ok)?;
    }
    Ok(())
}

fn vote(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
    check_mods(inst, &["ANY", "ALL", "EQ"])?;
    let _ = ctx;
    // VOTE.mode Rd, Pd, Psrc, or VOTE.mode Pd, Psrc (no ballot register).
    let (d, pd, s) = if inst.operands.len() == 2 {
        (None, op_at(inst, 0)?, op_at(inst, 1)?)
    } else {
        (Some(op_at(inst, 0)?), op_at(inst, 1)?, op_at(inst, 2)?)
    };
    let mut ballot = 0u32;
    for l in lanes(exec) {
        if pred(w, l, s)? {
            ballot |= 1 << l;
        }
    }
    let pv = if inst.has_mod("ANY") {
        ballot != 0
    } else if inst.has_mod("ALL") {
        ballot == exec
    } else {
        ballot == 0 || ballot == exec
    };
    for l in lanes(exec) {
        if let Some(d) = d {
            wr(w, l, d, ballot)?;
        }
        wp(w, l, pd, pv)?;
    }
    Ok(())
}

fn matchop(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
    check_mods(inst, &["ANY", "ALL", "U32", "U64"])?;
    let wide = inst.has_mod("U64");
    let all = inst.has_mod("ALL");
    let (pd, d, a) = if all {
        (Some(op_at(inst, 0)?), op_at(inst, 1)?, op_at(inst, 2)?)
    } else {
        (None, op_at(inst, 0)?, op_at(inst, 1)?)
    };
    let mut vals = [0u64; 32];
    for l in lanes(exec) {
        vals[l] = if wide {
            raw64(ctx, w, l, a)?
        } else {
            u64::from(raw32(ctx, w, l, a)?)
        };
    }
    let mut res = Vec::new();
    for l in lanes(exec) {
        let m = lanes(exec)
            .filter(|&j| vals[j] == vals[l])
            .fold(0u32, |m, j| m | 1 << j);
        res.push((l, m));
    }
    for (l, m) in res {
        if all {
            let ok = m == exec;
            wr(w, l, d, if ok { m } else { 0 })?;
            if let Some(p) = pd {
                wp(w, l, p, ok)?;
            }
        } else {
            wr(w, l, d, m)?;
        }
    }
    Ok(())
}

fn redux(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
    check_mods(
        inst,
        &["SUM", "AND", "OR", "XOR", "MIN", "MAX", "S32", "U32"],
    )?;
    let (d, a) = (op_at(inst, 0)?, op_at(inst, 1)?);
    let signed = inst.has_mod("S32");
    let mut acc: Option<u32> = None;
    for l in lanes(exec) {
        let v = raw32(ctx, w, l, a)?;
        acc = Some(match acc {
            None => v,
            // nvdisasm prints the default operation, AND, without a modifier (ptxas 13.0.88
            // compiles `redux.sync.and.b32` to `REDUX UR, R` and `.add` to `REDUX.SUM`).
            Some(x) => match inst.mods.first().map(String::as_str) {
                Some("SUM") => x.wrapping_add(v),
                Some("AND") | None => x & v,
                Some("OR") => x | v,
                Some("XOR") => x ^ v,
                Some("MIN") if signed => (x as i32).min(v as i32) as u32,
                Some("MAX") if signed => (x as i32).max(v as i32) as u32,
                Some("MIN") => x.min(v),
                Some("MAX") => x.max(v),
                m => return unsupported(format!("REDUX.{m:?}")),
            },
        });
    }
    if let Some(v) = acc {
        for l in lanes(exec) {
            wr(w, l, d, v)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Per-lane ops.

/// The uniform twin of an opcode (`UIADD3` -> `IADD3`); the operand files decide where
/// results go, so one implementation serves both.
fn base_name(name: &str) -> &str {
    match name {
        "UIADD3" | "UIMAD" | "ULOP3" | "USHF" | "ULEA" | "UISETP" | "USEL" | "UMOV" | "UPRMT"
        | "UFLO" | "UPOPC" | "UBREV" | "USGXT" | "UBMSK" | "UPLOP3" | "UIMNMX" | "ULDC"
        | "US2R" => &name[1..],
        "UVIMNMX" => "VIMNMX",
        n => n,
    }
}

fn lane_op(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize, active: u32) -> R<()> {
    let o = |i: usize| op_at(inst, i);
    match base_name(&inst.opcode) {
        "MOV" => {
            check_mods(inst, &["64"])?;
            if inst.has_mod("64") {
                let v = raw64(ctx, w, l, o(1)?)?;
                return wr64(w, l, o(0)?, v);
            }
            let v = raw32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, v)
        }
        "R2UR" => {
            check_mods(inst, &[])?;
            let v = raw32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, v)
        }
        "S2R" | "S2UR" | "CS2R" => s2r(ctx, w, inst, l, active),
        "IMAD" => imad(ctx, w, inst, l),
        "IADD3" => iadd3(ctx, w, inst, l),
        "IADD" => {
            check_mods(inst, &["64"])?;
            if !inst.has_mod("64") {
                return unsupported("IADD without .64");
            }
            let a = raw64(ctx, w, l, o(1)?)?;
            let b = raw64(ctx, w, l, o(2)?)?;
            let a = if o(1)?.neg { a.wrapping_neg() } else { a };
            let b = if o(2)?.neg { b.wrapping_neg() } else { b };
            wr64(w, l, o(0)?, a.wrapping_add(b))
        }
        "VIADD" => {
            // `.16x2` / `.U8x4`: lane-wise wrapping addition of packed halfwords / bytes (PTX
            // `vadd2`/`vadd4`, `vsub*` with the second operand negated lane by lane).
            check_mods(inst, &["16x2", "U8x4"])?;
            let lane_bits = if inst.has_mod("16x2") {
                16
            } else if inst.has_mod("U8x4") {
                8
            } else {
                let a = int32(ctx, w, l, o(1)?)?;
                let b = int32(ctx, w, l, o(2)?)?;
                return wr(w, l, o(0)?, a.wrapping_add(b));
            };
            let (oa, ob) = (o(1)?, o(2)?);
            if [oa, ob].iter().any(|op| op.invert || op.abs) {
                return unsupported("VIADD packed with `~` or `|..|` operands");
            }
            let packed = |op: &Operand| -> R<u32> {
                let v = raw32(ctx, w, l, op)?;
                Ok(if op.neg {
                    lanewise(v, 0, lane_bits, |x, _| x.wrapping_neg())
                } else {
                    v
                })
            };
            let a = packed(oa)?;
            let b = packed(ob)?;
            wr(w, l, o(0)?, lanewise(a, b, lane_bits, u32::wrapping_add))
        }
        "LOP3" => lop3(ctx, w, inst, l),
        "PLOP3" => {
            check_mods(inst, &["LUT"])?;
            let a = pred(w, l, o(2)?)?;
            let b = pred(w, l, o(3)?)?;
            let c = pred(w, l, o(4)?)?;
            let idx = (u32::from(a) << 2) | (u32::from(b) << 1) | u32::from(c);
            let l1 = raw32(ctx, w, l, o(5)?)?;
            let l2 = raw32(ctx, w, l, o(6)?)?;
            wp(w, l, o(0)?, l1 >> idx & 1 == 1)?;
            wp(w, l, o(1)?, l2 >> idx & 1 == 1)
        }
        "SHF" => shf(ctx, w, inst, l),
        "LEA" => lea(ctx, w, inst, l),
        "PRMT" => {
            check_mods(inst, &[])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            let s = raw32(ctx, w, l, o(2)?)?;
            let b = raw32(ctx, w, l, o(3)?)?;
            let bytes = (u64::from(b) << 32 | u64::from(a)).to_le_bytes();
            let mut r = 0u32;
            for i in 0..4 {
                let n = (s >> (4 * i)) & 0xf;
                let mut v = bytes[(n & 7) as usize];
                if n & 8 != 0 {
                    v = if v & 0x80 != 0 { 0xff } else { 0 };
                }
                r |= u32::from(v) << (8 * i);
            }
            wr(w, l, o(0)?, r)
        }
        "SEL" | "FSEL" => {
            check_mods(inst, &[])?;
            let p = pred(w, l, o(3)?)?;
            let v = if p {
                raw32_mod(ctx, w, l, o(1)?, inst.opcode.ends_with("FSEL"))?
            } else {
                raw32_mod(ctx, w, l, o(2)?, inst.opcode.ends_with("FSEL"))?
            };
            wr(w, l, o(0)?, v)
        }
        "IMNMX" => {
            check_mods(inst, &["U32"])?;
            let a = int32(ctx, w, l, o(1)?)?;
            let b = int32(ctx, w, l, o(2)?)?;
            let p = pred(w, l, o(3)?)?;
            wr(w, l, o(0)?, min_max(a, b, p, inst.has_mod("U32")))
        }
        "VIADDMNMX" => {
            // d = min/max(a + b, c): min with PT, max with !PT; signed unless `.U32`.
            check_mods(inst, &["U32"])?;
            let a = int32(ctx, w, l, o(1)?)?;
            let b = int32(ctx, w, l, o(2)?)?;
            let c = int32(ctx, w, l, o(3)?)?;
            let p = pred(w, l, o(4)?)?;
            wr(
                w,
                l,
                o(0)?,
                min_max(a.wrapping_add(b), c, p, inst.has_mod("U32")),
            )
        }
        "VABSDIFF" => {
            // `sad`: |a - b| + c, the difference of signed (default) or `.U32` values.
            check_mods(inst, &["U32"])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            let b = raw32(ctx, w, l, o(2)?)?;
            let c = raw32(ctx, w, l, o(3)?)?;
            let diff = if inst.has_mod("U32") {
                a.abs_diff(b)
            } else {
                (a as i32).abs_diff(b as i32)
            };
            wr(w, l, o(0)?, diff.wrapping_add(c))
        }
        "VABSDIFF4" => {
            // PTX `vabsdiff4` (CUDA `__vabsdiffu4`, `__vsadu4`): per-byte |a - b| of unsigned
            // (`.U8`) or signed (`.S8`) bytes, packed; with `.ACC` (PTX's `.add` mode) their
            // sum plus c. Without `.ACC`, c would be PTX's merge source for unselected bytes,
            // which ptxas's forms here never use (`RZ`): another value is reported.
            check_mods(inst, &["U8", "S8", "ACC"])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            let b = raw32(ctx, w, l, o(2)?)?;
            let c = raw32(ctx, w, l, o(3)?)?;
            let signed = inst.has_mod("S8");
            let diff = |x: u32, y: u32| {
                if signed {
                    u32::from((x as u8 as i8).abs_diff(y as u8 as i8))
                } else {
                    u32::from((x as u8).abs_diff(y as u8))
                }
            };
            let d = if inst.has_mod("ACC") {
                (0..4).fold(c, |acc, i| {
                    acc.wrapping_add(diff(a >> (8 * i), b >> (8 * i)))
                })
            } else if c == 0 {
                lanewise(a, b, 8, diff)
            } else {
                return unsupported("VABSDIFF4 without .ACC and a non-zero third operand");
            };
            wr(w, l, o(0)?, d)
        }
        "IABS" => {
            check_mods(inst, &[])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, (a as i32).unsigned_abs())
        }
        "POPC" => {
            check_mods(inst, &[])?;
            let a = int32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, a.count_ones())
        }
        "BREV" => {
            check_mods(inst, &[])?;
            let a = int32(ctx, w, l, o(1)?)?;
            wr(w, l, o(0)?, a.reverse_bits())
        }
        "FLO" => {
            check_mods(inst, &["U32", "SH"])?;
            let a = int32(ctx, w, l, o(1)?)?;
            // Signed FLO finds the most significant bit that differs from the sign bit:
            // ptxas compiles PTX's `bfind.s32` ("the most significant non-sign bit") to it.
            let a = if !inst.has_mod("U32") && (a as i32) < 0 {
                !a
            } else {
                a
            };
            let v = if a == 0 {
                u32::MAX
            } else if inst.has_mod("SH") {
                a.leading_zeros()
            } else {
                31 - a.leading_zeros()
            };
            wr(w, l, o(0)?, v)
        }
        "SGXT" => {
            check_mods(inst, &["U32", "W"])?;
            let a = raw32(ctx, w, l, o(1)?)?;
            let mut n = raw32(ctx, w, l, o(2)?)?;
            n = if inst.has_mod("W") { n & 31 } else { n.min(32) };
            let v = if n == 0 {
                0
            } else if n >= 32 {
                a
            } else if inst.has_mod("U32") {
                a & ((1u32 << n) - 1)
            } else {
                (((a << (32 - n)) as i32) >> (32 - n)) as u32
            };
            wr(w, l, o(0)?, v)
        }
        "BMSK" => {
            check_mods(inst, &["W"])?;
            let pos = raw32(ctx, w, l, o(1)?)?;
            let wid = raw32(ctx, w, l, o(2)?)?;
            let (pos, wid) = if inst.has_mod("W") {
                (pos & 31, wid & 31)
            } else {
                (pos.min(32), wid.min(32))
            };
            let m = ((1u64 << wid) - 1) << pos;
            wr(w, l, o(0)?, m as u32)
        }
        "ISETP" => isetp(ctx, w, inst, l),
        "P2R" | "P2UR" => {
            check_mods(inst, &["B1", "B2", "B3"])?;
            let sh = byte_shift(inst);
            let a = raw32(ctx, w, l, o(2)?)?;
            let mask = raw32(ctx, w, l, o(3)?)? << sh;
            let p = match &o(1)?.kind {
                OperandKind::Special(s) if s == "PR" => u32::from(w.p[l]) | 0x80,
                OperandKind::Special(s) if s == "UPR" => u32::from(w.up) | 0x80,
                k => return unsupported(format!("P2R source {k:?}")),
            };
            wr(w, l, o(0)?, (a & !mask) | ((p << sh) & mask))
        }
        "R2P" => {
            check_mods(inst, &["B1", "B2", "B3"])?;
            let sh = byte_shift(inst);
            let a = raw32(ctx, w, l, o(1)?)? >> sh;
            let mask = raw32(ctx, w, l, o(2)?)?;
            for i in 0..7 {
                if mask >> i & 1 == 1 {
                    w.set_pred(l, i, a >> i & 1 == 1);
                }
            }
            Ok(())
        }
        "LDC" => {
            check_mods(inst, &["64", "U8", "S8", "U16", "S16"])?;
            let (bank, addr) = match &o(1)?.kind {
                OperandKind::Const {
                    bank,
                    addr,
                    indirect: false,
                } => (bank, addr),
                k => return unsupported(format!("LDC source {k:?}")),
            };
            let (b, off) = const_addr(w, l, bank, addr)?;
            if inst.has_mod("64") {
                let v = ctx.cread(l, b, off, 8)?;
                return wr64(w, l, o(0)?, v);
            }
            let v = match find_mod(inst, &["U8", "S8", "U16", "S16"]) {
                Some("U8") => ctx.cread(l, b, off, 1)? as u32,
                Some("S8") => ctx.cread(l, b, off, 1)? as u8 as i8 as u32,
                Some("U16") => ctx.cread(l, b, off, 2)? as u32,
                Some("S16") => ctx.cread(l, b, off, 2)? as u16 as i16 as u32,
                _ => ctx.cread(l, b, off, 4)? as u32,
            };
            wr(w, l, o(0)?, v)
        }
        "LDG" | "LD" | "LDS" | "LDL" => load(ctx, w, inst, l),
        "STG" | "ST" | "STS" | "STL" => store(ctx, w, inst, l),
        "LDGSTS" => ldgsts(ctx, w, inst, l),
        "ATOMG" | "ATOM" | "ATOMS" | "RED" | "REDG" => atom(ctx, w, inst, l),
        "TEX" | "TLD" => texture(ctx, w, inst, l),
        "SUST" | "SULD" => surface::access(ctx, w, inst, l),
        "QSPC" => {
            check_mods(inst, &["E", "S", "L", "G"])?;
            let a = match &o(2)?.kind {
                OperandKind::Mem { addr, .. } => address(w, l, addr, true)?,
                k => return unsupported(format!("QSPC operand {k:?}")),
            };
            let (sp, _) = crate::exec::classify(a);
            let v = match find_mod(inst, &["S", "L", "G"]) {
                Some("S") => sp == Space::Shared,
                Some("L") => sp == Space::Local,
                _ => sp == Space::Global,
            };
            wp(w, l, o(0)?, v)
        }
        // ---- floating point
        "FADD" | "FMUL" | "FFMA" => ffma(ctx, w, inst, l),
        "FMNMX" => {
            check_mods(inst, &["FTZ", "NAN"])?;
            let ftz = inst.has_mod("FTZ");
            let a = f32src(ctx, w, l, o(1)?, ftz)?;
            let b = f32src(ctx, w, l, o(2)?, ftz)?;
            let p = pred(w, l, o(3)?)?;
            let r = fminmax(a, b, p, inst.has_mod("NAN"));
            let bits = if r.is_nan() {
                0x7fff_ffff
            } else {
                (r as f32).to_bits()
            };
            wr(w, l, o(0)?, bits)
        }
        "FSETP" => fsetp(ctx, w, inst, l, false),
        "FSET" => {
            // `FSET[.BF].cmp.bop d, a, b, c`: d = (a cmp b) bop c as 1.0 (`.BF`) or all ones,
            // else 0.
            let (v, _) = float_compare(ctx, w, inst, l, 1, &["FTZ", "BF"])?;
            let t = if inst.has_mod("BF") {
                1.0f32.to_bits()
            } else {
                u32::MAX
            };
            wr(w, l, o(0)?, if v { t } else { 0 })
        }
        "DSETP" => fsetp(ctx, w, inst, l, true),
        "FCHK" => {
            check_mods(inst, &[])?;
            let a = f32::from_bits(raw32(ctx, w, l, o(1)?)?);
            let b = f32::from_bits(raw32(ctx, w, l, o(2)?)?);
            wp(w, l, o(0)?, fchk(a, b))
        }
        "MUFU" => mufu(ctx, w, inst, l),
        "DADD" | "DMUL" | "DFMA" => {
            check_mods(inst, &["RN", "RZ", "RM", "RP"])?;
            let mode = rnd(inst);
            let a = f64src(ctx, w, l, o(1)?)?;
            let b = f64src(ctx, w, l, o(2)?)?;
            let r = match base_name(&inst.opcode) {
                "DADD" => float::add(a, b, mode, F64),
                "DMUL" => float::mul(a, b, mode, F64),
                _ => float::fma(a, b, f64src(ctx, w, l, o(3)?)?, mode, F64),
            };
            wr64(w, l, o(0)?, r)
        }
        "FRND" => {
            check_mods(inst, &["F64", "FTZ", "TRUNC", "FLOOR", "CEIL", "F32"])?;
            let f64t = inst.has_mod("F64");
            let a = if f64t {
                f64src(ctx, w, l, o(1)?)?
            } else {
                f32src(ctx, w, l, o(1)?, inst.has_mod("FTZ"))?
            };
            let r = if inst.has_mod("TRUNC") {
                a.trunc()
            } else if inst.has_mod("FLOOR") {
                a.floor()
            } else if inst.has_mod("CEIL") {
                a.ceil()
            } else {
                a.round_ties_even()
            };
            if f64t {
                let b = if r.is_nan() {
                    F64.canonical_nan()
                } else {
                    r.to_bits()
                };
                wr64(w, l, o(0)?, b)
            } else {
                let b = if r.is_nan() {
                    0x7fff_ffff
                } else {
                    (r as f32).to_bits()
                };
                wr(
                    w,
                    l,
                    o(0)?,
                    f32fin(u64::from(b), inst.has_mod("FTZ"), false),
                )
            }
        }
        "F2I" => f2i(ctx, w, inst, l),
        "I2F" | "I2FP" => i2f(ctx, w, inst, l),
        "F2F" => f2f(ctx, w, inst, l),
        "F2FP" => packed::f2fp(ctx, w, inst, l),
        "HADD2" | "HMUL2" | "HFMA2" => half2(ctx, w, inst, l),
        "HMNMX2" => packed::hmnmx2(ctx, w, inst, l),
        "HSET2" => packed::hset2(ctx, w, inst, l),
        "HSETP2" => packed::hsetp2(ctx, w, inst, l),
        "VIMNMX" => packed::vimnmx(ctx, w, inst, l),
        "VIMNMX3" => packed::vimnmx3(ctx, w, inst, l),
        "I2IP" => packed::i2ip(ctx, w, inst, l),
        "IDP" => packed::idp(ctx, w, inst, l),
        _ => unsupported(format!("instruction {}", inst.opcode)),
    }
}

/// `TEX` (float coordinates) and `TLD` (integer coordinates) in the forms of
/// [`sass::texture::TexForm`], sampled by the interpreter's texture model (`interp::texture`;
/// the level of detail is ignored: every modelled texture has one level).
fn texture(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
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

fn byte_shift(inst: &Inst) -> u32 {
    if inst.has_mod("B1") {
        8
    } else if inst.has_mod("B2") {
        16
    } else if inst.has_mod("B3") {
        24
    } else {
        0
    }
}

/// A 32-bit selection source: floats keep sign modifiers as bit flips, integers as integer ops.
fn raw32_mod(ctx: &Ctx<'_>, w: &Warp, l: usize, op: &Operand, float: bool) -> R<u32> {
    if float {
        let mut b = raw32(ctx, w, l, op)?;
        if op.abs {
            b &= 0x7fff_ffff;
        }
        if op.neg {
            b ^= 0x8000_0000;
        }
        Ok(b)
    } else {
        int32(ctx, w, l, op)
    }
}

fn s2r(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize, active: u32) -> R<()> {
    let d = op_at(inst, 0)?;
    let s = op_at(inst, 1)?;
    let name = match &s.kind {
        OperandKind::Special(n) => n.as_str(),
        k => return unsupported(format!("S2R source {k:?}")),
    };
    let flat = w.index * 32 + l as u32;
    let [bx, by, _] = ctx.launch.block;
    let tid = [flat % bx, flat / bx % by, flat / (bx * by)];
    let lane = l as u32;
    let v: u64 = match name {
        "SRZ" => 0,
        "SR_TID.X" => u64::from(tid[0]),
        "SR_TID.Y" => u64::from(tid[1]),
        "SR_TID.Z" => u64::from(tid[2]),
        "SR_CTAID.X" => u64::from(ctx.cta.id[0]),
        "SR_CTAID.Y" => u64::from(ctx.cta.id[1]),
        "SR_CTAID.Z" => u64::from(ctx.cta.id[2]),
        "SR_LANEID" => u64::from(lane),
        "SR_EQMASK" => 1u64 << lane,
        "SR_LTMASK" => (1u64 << lane) - 1,
        "SR_LEMASK" => (2u64 << lane) - 1,
        "SR_GTMASK" => u64::from(!(((2u64 << lane) - 1) as u32)),
        "SR_GEMASK" => u64::from(!(((1u64 << lane) - 1) as u32)),
        // The CTA's rank in its cluster (sm_90): one CTA per cluster here.
        "SR_CgaCtaId" => 0,
        "SR_SWINHI" => interp::mem::SHARED_WINDOW >> 32,
        // The CTA's whole shared memory (user part, rounding, reserved block).
        "SR_SMEMSZ" => ctx.cta.shared.len() as u64,
        "SR_WARPID" => u64::from(w.index),
        // The warp's instruction count (monotonic; see `Warp::clock`).
        "SR_CLOCKLO" => w.clock,
        "SR_CLOCKHI" => w.clock >> 32,
        // The global nanosecond timer, modelled by the same monotonic count (a kernel reading
        // it is nondeterministic on the hardware and is compared as such).
        "SR_GLOBALTIMERLO" => w.clock,
        "SR_GLOBALTIMERHI" => w.clock >> 32,
        // The bottom of the stack in the thread's local window: device-debug (`-G`) code
        // checks each lowered stack pointer with `ISETP.GE.U32 P0, PT, R1, <this>` and traps
        // (`BPT.TRAP`) below it. The emulator's local window starts at 0 and the stack pointer
        // at its top (`c[0x0][0x28]`), so the bottom is 0; a frame reaching below it is also
        // an out-of-bounds local access, which traps.
        "SR_LMEMHIOFF" => 0,
        n => return unsupported(format!("special register {n}")),
    };
    let _ = active;
    if inst.opcode == "CS2R" {
        if inst.has_mod("32") {
            return wr(w, l, d, v as u32);
        }
        return wr64(w, l, d, v);
    }
    wr(w, l, d, v as u32)
}

fn imad(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["MOV", "IADD", "SHL", "U32", "WIDE", "HI", "X"])?;
    let ops = &inst.operands;
    let d = op_at(inst, 0)?;
    // Optional carry-out predicate after the destination; carry-in predicate last (.X).
    let mut i = 1;
    let cout = if ops.get(1).is_some_and(is_pred) {
        i = 2;
        Some(&ops[1])
    } else {
        None
    };
    let (a, b, c) = (op_at(inst, i)?, op_at(inst, i + 1)?, op_at(inst, i + 2)?);
    let x = inst.has_mod("X");
    let cin = if x {
        u128::from(pred(w, l, op_at(inst, i + 3)?)?)
    } else {
        0
    };
    let unsigned = inst.has_mod("U32");
    let av = raw32(ctx, w, l, a)?;
    let bv = raw32(ctx, w, l, b)?;
    let (av, bv) = (
        if a.invert { !av } else { av },
        if b.invert { !bv } else { bv },
    );
    // Negated multiplicands negate the product.
    let neg_prod = a.neg != b.neg;
    let prod: i128 = if unsigned {
        i128::from(av) * i128::from(bv)
    } else {
        i128::from(av as i32) * i128::from(bv as i32)
    };
    let prod = if neg_prod { -prod } else { prod };
    if inst.has_mod("WIDE") {
        let cv = raw64(ctx, w, l, c)?;
        let cv = if c.invert { !cv } else { cv };
        let cv = u128::from(if c.neg {
            if x { !cv } else { cv.wrapping_neg() }
        } else {
            cv
        });
        let p = (prod as u128) & u128::from(u64::MAX);
        let s = p + cv + cin;
        wr64(w, l, d, s as u64)?;
        if let Some(co) = cout {
            wp(w, l, co, s >> 64 & 1 == 1)?;
        }
        return Ok(());
    }
    if inst.has_mod("HI") {
        // IMAD.HI adds a 64-bit addend (the register pair at c) to the 64-bit product and
        // returns the high word: ptxas's division sequence `IMAD.HI.U32 R5, R5, R7, R4` with
        // R4 = 0 computes R5 + umulhi(R5, R7) (checked by the ZLUDA `rem` run test, whose
        // expected bytes come from hardware).
        let cv = raw64(ctx, w, l, c)?;
        let cv = if c.invert { !cv } else { cv };
        let cv = if c.neg {
            if x { !cv } else { cv.wrapping_neg() }
        } else {
            cv
        };
        let s = u128::from(prod as u64) + u128::from(cv) + cin;
        wr(w, l, d, (s >> 32) as u32)?;
        if let Some(co) = cout {
            wp(w, l, co, s >> 64 & 1 == 1)?;
        }
        return Ok(());
    }
    let cv = raw32(ctx, w, l, c)?;
    let cv = if c.invert { !cv } else { cv };
    let cv = u64::from(if c.neg {
        if x { !cv } else { cv.wrapping_neg() }
    } else {
        cv
    });
    let p = (prod as u64) & 0xffff_ffff;
    let s = p + cv + cin as u64;
    wr(w, l, d, s as u32)?;
    if let Some(co) = cout {
        wp(w, l, co, s >> 32 & 1 == 1)?;
    }
    Ok(())
}

fn iadd3(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["X", "64"])?;
    if inst.has_mod("64") {
        // UIADD3.64: 64-bit three-input add of register pairs.
        let d = op_at(inst, 0)?;
        let mut s: u64 = 0;
        for op in &inst.operands[1..] {
            let v = raw64(ctx, w, l, op)?;
            s = s.wrapping_add(if op.neg { v.wrapping_neg() } else { v });
        }
        return wr64(w, l, d, s);
    }
    let ops = &inst.operands;
    let d = op_at(inst, 0)?;
    let mut i = 1;
    let mut couts = Vec::new();
    while ops.get(i).is_some_and(is_pred) {
        couts.push(&ops[i]);
        i += 1;
    }
    let x = inst.has_mod("X");
    let mut t = [0u64; 3];
    for (k, op) in ops[i..i + 3].iter().enumerate() {
        let v = raw32(ctx, w, l, op)?;
        let v = if op.invert { !v } else { v };
        // `-x` is `~x + 1` in the adder (so `a - 0` carries out, like a borrow-free
        // subtraction); with `.X` the carry-in supplies the `+ 1`.
        t[k] = if op.neg {
            if x { u64::from(!v) } else { u64::from(!v) + 1 }
        } else {
            u64::from(v)
        };
    }
    let mut cin = 0u64;
    if x {
        for op in &ops[i + 3..] {
            cin += u64::from(pred(w, l, op)?);
        }
    }
    // Two additions: the first carry-out predicate is the carry of `a + b`, the second the
    // carry of adding `c` (and the carry-ins); `.X` consumers add both back.
    let s1 = t[0] + t[1];
    let c1 = s1 >> 32;
    let s2 = (s1 & 0xffff_ffff) + t[2] + cin;
    let c2 = s2 >> 32;
    wr(w, l, d, s2 as u32)?;
    match couts.as_slice() {
        [] => {}
        [p] => wp(w, l, p, (c1 + c2) & 1 == 1)?,
        [p, q, ..] => {
            wp(w, l, p, c1 & 1 == 1)?;
            wp(w, l, q, c2 & 1 == 1)?;
        }
    }
    Ok(())
}

fn lop3(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["LUT"])?;
    let ops = &inst.operands;
    let (pd, i) = if ops.first().is_some_and(is_pred) {
        (Some(&ops[0]), 1)
    } else {
        (None, 0)
    };
    let d = op_at(inst, i)?;
    let a = int32(ctx, w, l, op_at(inst, i + 1)?)?;
    let b = int32(ctx, w, l, op_at(inst, i + 2)?)?;
    let c = int32(ctx, w, l, op_at(inst, i + 3)?)?;
    let lut = raw32(ctx, w, l, op_at(inst, i + 4)?)?;
    let mut r = 0u32;
    for bit in 0..32 {
        let idx = ((a >> bit & 1) << 2) | ((b >> bit & 1) << 1) | (c >> bit & 1);
        r |= (lut >> idx & 1) << bit;
    }
    wr(w, l, d, r)?;
    if let Some(p) = pd {
        let q = op_at(inst, i + 5)?;
        if !(q.not && matches!(&q.kind, OperandKind::Reg(r) if r.is_zero())) {
            return unsupported("LOP3 predicate output combined with a predicate other than !PT");
        }
        wp(w, l, p, r != 0)?;
    }
    Ok(())
}

fn shf(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["L", "R", "U32", "S32", "U64", "S64", "HI", "W"])?;
    let d = op_at(inst, 0)?;
    let lo = raw32(ctx, w, l, op_at(inst, 1)?)?;
    let s = raw32(ctx, w, l, op_at(inst, 2)?)?;
    let hi = raw32(ctx, w, l, op_at(inst, 3)?)?;
    let wide = inst.has_mod("U64") || inst.has_mod("S64");
    let signed = inst.has_mod("S32") || inst.has_mod("S64");
    let s = if inst.has_mod("W") {
        if wide { s & 63 } else { s & 31 }
    } else if wide {
        s.min(64)
    } else {
        s.min(32)
    };
    let v = (u64::from(hi) << 32) | u64::from(lo);
    let r: u64 = if inst.has_mod("L") {
        ((u128::from(v) << s) & u128::from(u64::MAX)) as u64
    } else if signed {
        ((v as i64) >> s.min(63)) as u64
    } else if s >= 64 {
        0
    } else {
        v >> s
    };
    let out = if inst.has_mod("HI") {
        (r >> 32) as u32
    } else {
        r as u32
    };
    wr(w, l, d, out)
}

fn lea(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["HI", "X", "SX32"])?;
    let ops = &inst.operands;
    let d = op_at(inst, 0)?;
    let mut i = 1;
    let cout = if ops.get(1).is_some_and(is_pred) {
        i = 2;
        Some(&ops[1])
    } else {
        None
    };
    let hi = inst.has_mod("HI");
    let x = inst.has_mod("X");
    let sx = inst.has_mod("SX32");
    let a_op = op_at(inst, i)?;
    let b_op = op_at(inst, i + 1)?;
    let mut k = i + 2;
    let a = raw32(ctx, w, l, a_op)?;
    let a = if a_op.invert { !a } else { a };
    let c = if hi && !sx {
        let c = raw32(ctx, w, l, op_at(inst, k)?)?;
        k += 1;
        c
    } else if sx {
        if a & 0x8000_0000 != 0 { u32::MAX } else { 0 }
    } else {
        0
    };
    let s = raw32(ctx, w, l, op_at(inst, k)?)? & 31;
    let cin = if x {
        u64::from(pred(w, l, op_at(inst, k + 1)?)?)
    } else {
        0
    };
    let b = raw32(ctx, w, l, b_op)?;
    let b = if b_op.invert { !b } else { b };
    let a = if a_op.neg { a.wrapping_neg() } else { a };
    // `LEA d, a, -b, s` is `(a << s) - b` (ptxas writes `x * 7` as `LEA R17, R5, -R5, 0x3`);
    // as in IADD3, a negated operand adds `!b + 1` (`!b` with `.X`, whose carry-in supplies
    // the `+ 1`).
    let b = if b_op.neg {
        if x { u64::from(!b) } else { u64::from(!b) + 1 }
    } else {
        u64::from(b)
    };
    let shifted = if hi {
        ((((u64::from(c) << 32) | u64::from(a)) << s) >> 32) as u32
    } else {
        a << s
    };
    let sum = u64::from(shifted) + b + cin;
    wr(w, l, d, sum as u32)?;
    if let Some(co) = cout {
        wp(w, l, co, sum >> 32 & 1 == 1)?;
    }
    Ok(())
}

fn isetp(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let allowed: Vec<&str> = CMPS
        .iter()
        .chain(BOPS)
        .chain(&["U32", "S32", "U64", "S64", "EX"])
        .copied()
        .collect();
    check_mods(inst, &allowed)?;
    let cmp = find_mod(inst, CMPS)
        .ok_or_else(|| Fault::Unsupported("ISETP without a comparison".into()))?;
    let bop = find_mod(inst, BOPS).unwrap_or("AND");
    let (pd, pq) = (op_at(inst, 0)?, op_at(inst, 1)?);
    let (ao, bo) = (op_at(inst, 2)?, op_at(inst, 3)?);
    let pc = pred(w, l, op_at(inst, 4)?)?;
    let wide = inst.has_mod("U64") || inst.has_mod("S64");
    let signed = !(inst.has_mod("U32") || inst.has_mod("U64"));
    let (a, b): (i128, i128) = if wide {
        let a = raw64(ctx, w, l, ao)?;
        let b = raw64(ctx, w, l, bo)?;
        if signed {
            (i128::from(a as i64), i128::from(b as i64))
        } else {
            (i128::from(a), i128::from(b))
        }
    } else {
        let a = int32(ctx, w, l, ao)?;
        let b = int32(ctx, w, l, bo)?;
        if signed {
            (i128::from(a as i32), i128::from(b as i32))
        } else {
            (i128::from(a), i128::from(b))
        }
    };
    let r = if inst.has_mod("EX") {
        // The high halves of a 64-bit comparison; the last predicate holds the low halves'
        // (unsigned) result of the same comparison.
        let low = pred(w, l, op_at(inst, 5)?)?;
        match cmp {
            "EQ" => a == b && low,
            "NE" => a != b || low,
            "LT" => a < b || (a == b && low),
            "LE" => a < b || (a == b && low),
            "GT" => a > b || (a == b && low),
            "GE" => a > b || (a == b && low),
            c => return unsupported(format!("ISETP.{c}.EX")),
        }
    } else {
        match cmp {
            "EQ" => a == b,
            "NE" => a != b,
            "LT" => a < b,
            "LE" => a <= b,
            "GT" => a > b,
            "GE" => a >= b,
            "T" => true,
            "F" => false,
            c => return unsupported(format!("ISETP.{c}")),
        }
    };
    let v1 = bool_op(bop, r, pc)?;
    let v2 = bool_op(bop, !r, pc)?;
    wp(w, l, pd, v1)?;
    wp(w, l, pq, v2)
}

fn fsetp(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize, dbl: bool) -> R<()> {
    if dbl && (inst.has_mod("MAX") || inst.has_mod("MIN")) {
        return dsetp_minmax(ctx, w, inst, l);
    }
    let (p, q) = float_compare(ctx, w, inst, l, 2, &["FTZ"])?;
    wp(w, l, op_at(inst, 0)?, p)?;
    wp(w, l, op_at(inst, 1)?, q)
}

/// The `FSETP`/`DSETP`/`FSET` comparison: `(a cmp b) bop c` and `!(a cmp b) bop c`, with `a`,
/// `b`, `c` the operands from `first` on (f64 for `DSETP`); `extra` are the modifiers allowed
/// besides comparisons and combinations.
fn float_compare(
    ctx: &Ctx<'_>,
    w: &Warp,
    inst: &Inst,
    l: usize,
    first: usize,
    extra: &[&str],
) -> R<(bool, bool)> {
    let allowed: Vec<&str> = CMPS.iter().chain(BOPS).chain(extra).copied().collect();
    check_mods(inst, &allowed)?;
    let cmp = find_mod(inst, CMPS).ok_or_else(|| {
        Fault::Unsupported(format!("{} without a comparison", base_name(&inst.opcode)))
    })?;
    let bop = find_mod(inst, BOPS).unwrap_or("AND");
    let ftz = inst.has_mod("FTZ");
    let (a, b) = if base_name(&inst.opcode) == "DSETP" {
        (
            f64src(ctx, w, l, op_at(inst, first)?)?,
            f64src(ctx, w, l, op_at(inst, first + 1)?)?,
        )
    } else {
        (
            f32src(ctx, w, l, op_at(inst, first)?, ftz)?,
            f32src(ctx, w, l, op_at(inst, first + 1)?, ftz)?,
        )
    };
    let c = pred(w, l, op_at(inst, first + 2)?)?;
    let r = fcmp(cmp, a, b)?;
    Ok((bool_op(bop, r, c)?, bool_op(bop, !r, c)?))
}

/// `DSETP.MAX/MIN.AND p, q, a, b, c`: `p` = "the result is `a`", `q` = "both are NaN".
/// ptxas lowers `max.f64`/`min.f64` to this, then selects the words with `p` and, under `q`,
/// quiets `b`'s high word; so `p` must pick the non-NaN operand (the maximum, +0 over -0 for
/// MAX, -0 over +0 for MIN) and `q` hold only when both are NaN.
fn dsetp_minmax(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["MAX", "MIN", "AND"])?;
    let is_max = inst.has_mod("MAX");
    let (pd, pq) = (op_at(inst, 0)?, op_at(inst, 1)?);
    let a = f64src(ctx, w, l, op_at(inst, 2)?)?;
    let b = f64src(ctx, w, l, op_at(inst, 3)?)?;
    let c = pred(w, l, op_at(inst, 4)?)?;
    let pick_a = if a.is_nan() {
        false
    } else if b.is_nan() {
        true
    } else if a == b {
        is_max != a.is_sign_negative()
    } else if is_max {
        a > b
    } else {
        a < b
    };
    wp(w, l, pd, pick_a && c)?;
    wp(w, l, pq, a.is_nan() && b.is_nan() && c)
}

/// min (`p`) or max of two floats: a NaN operand yields the other one (both NaN: NaN), and
/// -0 orders below +0; with `.NAN` any NaN operand yields NaN.
fn fminmax(a: f64, b: f64, p: bool, nan: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        if nan || (a.is_nan() && b.is_nan()) {
            return f64::NAN;
        }
        return if a.is_nan() { b } else { a };
    }
    if a == b && a == 0.0 {
        let neg = if p {
            a.is_sign_negative() || b.is_sign_negative()
        } else {
            a.is_sign_negative() && b.is_sign_negative()
        };
        return if neg { -0.0 } else { 0.0 };
    }
    if p { a.min(b) } else { a.max(b) }
}

/// `FCHK P, a, b`: whether `a / b` needs ptxas's slow path. The exact hardware condition is
/// not public; this is the conservative one (set whenever an operand is zero, infinite, NaN
/// or subnormal, or the exponents could make the fast path's reciprocal or quotient leave the
/// normal range). Both paths compute the correctly rounded quotient, so a conservative answer
/// changes which code runs, not the result.
fn fchk(a: f32, b: f32) -> bool {
    // A zero dividend too: the fast path's `FFMA q, y, a, RZ` adds +0 and would lose the
    // sign of a negative zero quotient, which the slow path gets right.
    if !a.is_normal() || !b.is_normal() {
        return true;
    }
    let ea = ((a.to_bits() >> 23) & 0xff) as i32 - 127;
    let eb = ((b.to_bits() >> 23) & 0xff) as i32 - 127;
    let q = ea - eb;
    !(-100..=100).contains(&q) || !(-120..=120).contains(&eb) || ea <= -100
}

/// Applies `f` to each `lane_bits`-wide lane of `a` and `b` (the result truncated to the lane).
fn lanewise(a: u32, b: u32, lane_bits: u32, f: impl Fn(u32, u32) -> u32) -> u32 {
    let mask = (1u32 << lane_bits) - 1;
    (0..32 / lane_bits).fold(0, |r, i| {
        let sh = i * lane_bits;
        r | (f(a >> sh & mask, b >> sh & mask) & mask) << sh
    })
}

/// `IMNMX`/`VIADDMNMX`'s choice: the minimum when `p` (`PT`), else the maximum; signed
/// unless `unsigned` (`.U32`).
fn min_max(a: u32, b: u32, p: bool, unsigned: bool) -> u32 {
    match (unsigned, p) {
        (true, true) => a.min(b),
        (true, false) => a.max(b),
        (false, true) => (a as i32).min(b as i32) as u32,
        (false, false) => (a as i32).max(b as i32) as u32,
    }
}

/// `FMUL`'s product scales (`.D2` = halved, ..., `.M8` = times 8), applied before the one
/// rounding.
const FMUL_SCALES: &[(&str, f64)] = &[
    ("D2", 0.5),
    ("D4", 0.25),
    ("D8", 0.125),
    ("M2", 2.0),
    ("M4", 4.0),
    ("M8", 8.0),
];

fn ffma(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let is_mul = base_name(&inst.opcode) == "FMUL";
    let mut allowed = vec!["FTZ", "SAT", "RN", "RZ", "RM", "RP"];
    if is_mul {
        allowed.extend(FMUL_SCALES.iter().map(|(m, _)| *m));
    }
    check_mods(inst, &allowed)?;
    let ftz = inst.has_mod("FTZ");
    let mode = rnd(inst);
    let d = op_at(inst, 0)?;
    let scale = FMUL_SCALES
        .iter()
        .find(|(m, _)| inst.has_mod(m))
        .map_or(1.0, |(_, k)| *k);
    // Exact in f64: a 24-bit significand times a power of two.
    let a = f32src(ctx, w, l, op_at(inst, 1)?, ftz)? * scale;
    let b = f32src(ctx, w, l, op_at(inst, 2)?, ftz)?;
    let r = match base_name(&inst.opcode) {
        "FADD" => float::add(a, b, mode, F32),
        "FMUL" => float::mul(a, b, mode, F32),
        _ => {
            let c = f32src(ctx, w, l, op_at(inst, 3)?, ftz)?;
            float::fma(a, b, c, mode, F32)
        }
    };
    wr(w, l, d, f32fin(r, ftz, inst.has_mod("SAT")))
}

/// A subnormal f64 as the zero of its sign.
fn flush_f64(x: f64) -> f64 {
    if x.is_subnormal() {
        0.0f64.copysign(x)
    } else {
        x
    }
}

fn mufu(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let f = inst.mods.first().map(String::as_str).unwrap_or("");
    check_mods(inst, &[f])?;
    let d = op_at(inst, 0)?;
    let s = op_at(inst, 1)?;
    if f == "RCP64H" || f == "RSQ64H" {
        // The high word of a double's approximate reciprocal (square root): computed from the
        // operand as the high word of a double with a zero low word, truncated to the high
        // word. ptxas refines it with Newton steps in DFMA.
        let mut hi = raw32(ctx, w, l, s)?;
        if s.abs {
            hi &= 0x7fff_ffff;
        }
        if s.neg {
            hi ^= 0x8000_0000;
        }
        // Flush-to-zero like the other MUFU functions (and as PTX specifies for
        // `rcp.approx.ftz.f64`, which is this instruction alone): a subnormal operand is a
        // signed zero, a subnormal result a signed zero.
        let x = flush_f64(f64::from_bits(u64::from(hi) << 32));
        let r = if f == "RCP64H" {
            1.0 / x
        } else {
            1.0 / x.sqrt()
        };
        return wr(w, l, d, (flush_f64(r).to_bits() >> 32) as u32);
    }
    // f32 functions: inputs flushed (MUFU is flush-to-zero), results rounded from f64.
    let x = f32src(ctx, w, l, s, true)?;
    let r = match f {
        "RCP" => float::div(1.0, x, Rnd::Ne, F32),
        "SQRT" => float::sqrt(x, Rnd::Ne, F32),
        "RSQ" => float::round(
            1.0 / x.sqrt(),
            std::cmp::Ordering::Equal,
            Rnd::Ne,
            F32,
            false,
        ),
        "EX2" => float::round(x.exp2(), std::cmp::Ordering::Equal, Rnd::Ne, F32, false),
        "LG2" => float::round(x.log2(), std::cmp::Ordering::Equal, Rnd::Ne, F32, false),
        // MUFU.SIN/COS take the angle in revolutions (ptxas pre-multiplies by 1/2pi).
        "SIN" => float::round(
            (x * std::f64::consts::TAU).sin(),
            std::cmp::Ordering::Equal,
            Rnd::Ne,
            F32,
            false,
        ),
        "COS" => float::round(
            (x * std::f64::consts::TAU).cos(),
            std::cmp::Ordering::Equal,
            Rnd::Ne,
            F32,
            false,
        ),
        "TANH" => float::round(x.tanh(), std::cmp::Ordering::Equal, Rnd::Ne, F32, false),
        o => return unsupported(format!("MUFU.{o}")),
    };
    wr(w, l, d, F32.ftz(u64::from(r as u32)) as u32)
}

fn f2i(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let allowed: Vec<&str> = INT_TYS
        .iter()
        .chain(FLT_TYS)
        .chain(&["FTZ", "TRUNC", "FLOOR", "CEIL", "NTZ", "RN"])
        .copied()
        .collect();
    check_mods(inst, &allowed)?;
    let dty = find_mod(inst, INT_TYS).unwrap_or("S32");
    let sty = find_mod(inst, FLT_TYS).unwrap_or("F32");
    let src = op_at(inst, 1)?;
    let x = match sty {
        "F64" => f64src(ctx, w, l, src)?,
        "F32" => f32src(ctx, w, l, src, inst.has_mod("FTZ"))?,
        t => {
            let b = raw32(ctx, w, l, src)? & 0xffff;
            fbits_to_f64(t, u64::from(b))
        }
    };
    let r = if inst.has_mod("TRUNC") {
        x.trunc()
    } else if inst.has_mod("FLOOR") {
        x.floor()
    } else if inst.has_mod("CEIL") {
        x.ceil()
    } else {
        x.round_ties_even()
    };
    let (lo, hi) = int_range(dty);
    let v: i128 = if r.is_nan() {
        0
    } else if r <= lo as f64 {
        lo
    } else if r >= hi as f64 {
        hi
    } else {
        r as i128
    };
    let d = op_at(inst, 0)?;
    if matches!(dty, "U64" | "S64") {
        wr64(w, l, d, v as u64)
    } else {
        wr(w, l, d, v as u32)
    }
}

fn i2f(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let allowed: Vec<&str> = INT_TYS
        .iter()
        .chain(FLT_TYS)
        .chain(&["RN", "RZ", "RM", "RP"])
        .copied()
        .collect();
    check_mods(inst, &allowed)?;
    let dty = find_mod(inst, FLT_TYS).unwrap_or("F32");
    let sty = find_mod(inst, INT_TYS).unwrap_or("S32");
    let src = op_at(inst, 1)?;
    let raw = if matches!(sty, "U64" | "S64") {
        raw64(ctx, w, l, src)?
    } else if src.has_suffix("H1") {
        u64::from(raw32(ctx, w, l, src)? >> 16)
    } else {
        u64::from(raw32(ctx, w, l, src)?)
    };
    let x = int_of(sty, raw);
    let r = float::from_int(x, rnd(inst), fmt_of(dty));
    let d = op_at(inst, 0)?;
    if dty == "F64" {
        wr64(w, l, d, r)
    } else {
        wr(w, l, d, r as u32)
    }
}

fn f2f(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(
        inst,
        &[
            "F16", "F32", "F64", "BF16", "FTZ", "RN", "RZ", "RM", "RP", "SAT",
        ],
    )?;
    let tys: Vec<&str> = inst
        .mods
        .iter()
        .map(String::as_str)
        .filter(|m| FLT_TYS.contains(m))
        .collect();
    let (dty, sty) = match tys.as_slice() {
        [d, s] => (*d, *s),
        _ => return unsupported(format!("F2F.{}", inst.mods.join("."))),
    };
    let src = op_at(inst, 1)?;
    let ftz = inst.has_mod("FTZ");
    let x = match sty {
        "F64" => f64src(ctx, w, l, src)?,
        "F32" => f32src(ctx, w, l, src, ftz)?,
        t => {
            let mut b = raw32(ctx, w, l, src)?;
            if src.has_suffix("H1") {
                b >>= 16;
            }
            fbits_to_f64(t, u64::from(b & 0xffff))
        }
    };
    let mut r = float::round(x, std::cmp::Ordering::Equal, rnd(inst), fmt_of(dty), false);
    if dty == "F64" && sty == "F32" && x.is_nan() {
        // A widened NaN keeps its payload, quieted: ptxas folds `cvt.f64.f32` of a NaN
        // constant that way, and the interpreter widens so (not yet checked on a GPU).
        let b = raw32(ctx, w, l, src)?;
        r = (u64::from(b & 0x8000_0000) << 32)
            | 0x7ff8_0000_0000_0000
            | (u64::from(b & 0x3f_ffff) << 29);
    }
    let d = op_at(inst, 0)?;
    match dty {
        "F64" => wr64(w, l, d, r),
        "F32" => {
            if ftz {
                r = F32.ftz(u64::from(r as u32));
            }
            wr(w, l, d, f32fin(r, false, inst.has_mod("SAT")))
        }
        _ => wr(w, l, d, r as u32 & 0xffff),
    }
}

/// Reads a packed pair of halves (`lo`, `hi`) as f64s: a register with an optional swizzle
/// (`.H0_H0`, `.H1_H1`, `.F32`), or two f16 immediates (consumed from `ops`).
fn half_src(
    ctx: &Ctx<'_>,
    w: &Warp,
    l: usize,
    ops: &[Operand],
    i: &mut usize,
    fmt: Fmt,
) -> R<(f64, f64)> {
    let op = ops
        .get(*i)
        .ok_or_else(|| Fault::Unsupported("missing half2 operand".into()))?;
    if let OperandKind::Float { .. } = op.kind {
        let op2 = ops
            .get(*i + 1)
            .ok_or_else(|| Fault::Unsupported("half2 immediate without its pair".into()))?;
        // nvdisasm prints the high half first.
        let hi = raw32(ctx, w, l, op)?;
        let lo = raw32(ctx, w, l, op2)?;
        *i += 2;
        return Ok((
            fmt.to_f64(u64::from(lo & 0xffff)),
            fmt.to_f64(u64::from(hi & 0xffff)),
        ));
    }
    *i += 1;
    let v = raw32(ctx, w, l, op)?;
    let (mut lo, mut hi) = (v & 0xffff, v >> 16);
    let mut f32v = None;
    for s in &op.suffixes {
        match s.as_str() {
            "H0_H0" => hi = lo,
            "H1_H1" => lo = hi,
            "H1_H0" | "reuse" => {}
            "F32" => f32v = Some(f64::from(f32::from_bits(v))),
            o => return unsupported(format!("half2 operand suffix .{o}")),
        }
    }
    let (mut a, mut b) = match f32v {
        Some(x) => (x, x),
        None => (fmt.to_f64(u64::from(lo)), fmt.to_f64(u64::from(hi))),
    };
    if op.abs {
        a = a.abs();
        b = b.abs();
    }
    if op.neg {
        a = -a;
        b = -b;
    }
    Ok((a, b))
}

fn half2(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["MMA", "F32", "FTZ", "SAT", "BF16_V2", "RN"])?;
    if inst.has_mod("FTZ") || inst.has_mod("SAT") {
        return unsupported(format!("{}.{}", inst.opcode, inst.mods.join(".")));
    }
    let fmt = if inst.has_mod("BF16_V2") { BF16 } else { F16 };
    let d = op_at(inst, 0)?;
    let mut i = 1;
    let a = half_src(ctx, w, l, &inst.operands, &mut i, fmt)?;
    let b = half_src(ctx, w, l, &inst.operands, &mut i, fmt)?;
    let op = inst.opcode.as_str();
    let c = if op == "HFMA2" {
        Some(half_src(ctx, w, l, &inst.operands, &mut i, fmt)?)
    } else {
        None
    };
    let one = |x: f64, y: f64, z: Option<f64>, f: Fmt| -> u64 {
        match (op, z) {
            ("HADD2", _) => float::add(x, y, Rnd::Ne, f),
            ("HMUL2", _) => float::mul(x, y, Rnd::Ne, f),
            (_, Some(z)) => float::fma(x, y, z, Rnd::Ne, f),
            _ => float::mul(x, y, Rnd::Ne, f),
        }
    };
    if inst.has_mod("F32") {
        // One f32 result from the low halves.
        let r = one(a.0, b.0, c.map(|c| c.0), F32);
        return wr(w, l, d, r as u32);
    }
    let lo = one(a.0, b.0, c.map(|c| c.0), fmt) as u32 & 0xffff;
    let hi = one(a.1, b.1, c.map(|c| c.1), fmt) as u32 & 0xffff;
    wr(w, l, d, (hi << 16) | lo)
}

// ---------------------------------------------------------------------------------------
// Memory.

/// Access width in bytes and sign extension from the size modifiers.
fn mem_size(inst: &Inst) -> (usize, bool) {
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

fn space_of(op: &str) -> (Space, bool) {
    match op {
        "LDG" | "STG" | "ATOMG" | "REDG" => (Space::Global, true),
        "LDS" | "STS" | "ATOMS" => (Space::Shared, false),
        "LDL" | "STL" => (Space::Local, false),
        _ => (Space::Generic, true),
    }
}

fn mem_operand(inst: &Inst) -> R<(usize, &sass::model::Address)> {
    inst.operands
        .iter()
        .enumerate()
        .find_map(|(i, o)| match &o.kind {
            OperandKind::Mem { addr, .. } => Some((i, addr)),
            _ => None,
        })
        .ok_or_else(|| Fault::Unsupported(format!("{} without a memory operand", inst.opcode)))
}

const SIZE_MODS: &[&str] = &["U8", "S8", "U16", "S16", "32", "64", "128"];

fn load(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let allowed: Vec<&str> = NEUTRAL_MEM_MODS
        .iter()
        .chain(SIZE_MODS)
        .chain(&["U"])
        .copied()
        .collect();
    check_mods(inst, &allowed)?;
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

fn store(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let allowed: Vec<&str> = NEUTRAL_MEM_MODS.iter().chain(SIZE_MODS).copied().collect();
    check_mods(inst, &allowed)?;
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
fn ldgsts(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["E", "BYPASS", "LTC128B", "ZFILL", "64", "128"])?;
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

fn atom(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    const OPS: &[&str] = &[
        "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS",
    ];
    const TYS: &[&str] = &[
        "S32", "U32", "64", "S64", "U64", "F32", "F64", "F16x2", "BF16x2",
    ];
    let allowed: Vec<&str> = NEUTRAL_MEM_MODS
        .iter()
        .chain(OPS)
        .chain(TYS)
        .chain(&["FTZ", "RN", "CAST", "SPIN", "32", "POPC"])
        .copied()
        .collect();
    check_mods(inst, &allowed)?;
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
    if matches!(ty, "F16x2" | "BF16x2") {
        return unsupported(format!("{}.{ty}", inst.opcode));
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
