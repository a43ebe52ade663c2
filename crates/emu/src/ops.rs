//! Instruction semantics. Every opcode and modifier listed here is implemented; anything else
//! is an [`unsupported`] error naming it (never skipped).

use interp::float::{self, BF16, F16, F32, F64, Fmt, Rnd};
use sass::model::{Inst, Operand, OperandKind, RegFile};
use sass::table::FloatFormat;

use crate::exec::{
    Ctx, Fault, LaneState, R, Space, Warp, address, const_addr, pair, trap, unsupported, upair,
};

mod collective;
mod fp;
mod int;
mod lane;
mod memory;
mod mma;
mod packed;
mod surface;
mod syncs;

use collective::*;
use fp::*;
use int::*;
use lane::*;
use memory::*;

/// Lane indices of a mask.
pub fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..32usize).filter(move |l| mask >> l & 1 == 1)
}

/// Modifiers that only tune caching, ordering or scheduling and have no functional effect in
/// a single-CTA-at-a-time sequential emulator.
const NEUTRAL_MEM_MODS: &[&str] = &[
    "E", "CONSTANT", "STRONG", "GPU", "SYS", "SM", "CTA", "VC", "EF", "EL", "EU", "LU", "LTC128B",
    "LTC64B", "LTC256B", "NA", "BYPASS", "PRIVATE", "MMIO", "CONSTANT", "WEAK", "ZFILL",
];

thread_local! {
    /// Set while the lane loop of [`execute`] runs an instruction for its second and later
    /// lanes. Which modifiers an op accepts depends on the instruction only (every op checks
    /// them on entry, before reading a lane's values), so the first lane's check answers for
    /// all lanes; skipping the repeats keeps the string comparisons out of the per-lane path.
    static MODS_CHECKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Refuses an instruction carrying a modifier outside `allowed`.
fn check_mods(inst: &Inst, allowed: &[&str]) -> R<()> {
    check_mods_in(inst, &[allowed])
}

/// Refuses an instruction carrying a modifier outside every one of `sets`.
fn check_mods_in(inst: &Inst, sets: &[&[&str]]) -> R<()> {
    check_mods_by(inst, |m| sets.iter().any(|set| set.contains(&m)))
}

/// Refuses an instruction carrying a modifier `allowed` says no to.
fn check_mods_by(inst: &Inst, allowed: impl Fn(&str) -> bool) -> R<()> {
    if MODS_CHECKED.with(std::cell::Cell::get) {
        return Ok(());
    }
    for m in &inst.mods {
        if !allowed(m) {
            return unsupported(format!("{} with modifier .{m}", inst.opcode));
        }
    }
    Ok(())
}

/// Runs `lane_op` for each lane of `run`, checking the modifiers for the first lane only
/// (see [`MODS_CHECKED`]).
fn each_lane(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, run: u32, active: u32) -> R<()> {
    let mut result = Ok(());
    for (i, l) in lanes(run).enumerate() {
        if i == 1 {
            MODS_CHECKED.with(|c| c.set(true));
        }
        result = lane_op(ctx, w, inst, l, active);
        if result.is_err() {
            break;
        }
    }
    MODS_CHECKED.with(|c| c.set(false));
    result
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
        "ELECT" => {
            // `ELECT Pd, URd, Ps` (`elect.sync`): among the executing lanes whose Ps holds, the
            // lowest is the leader (the interpreter elects the same lane); Pd is true in the
            // leader only, URd (uniform) its lane number.
            check_mods(inst, &[])?;
            let (pd, d, ps) = (op_at(inst, 0)?, op_at(inst, 1)?, op_at(inst, 2)?);
            let mut members = 0u32;
            for l in lanes(exec) {
                if pred(w, l, ps)? {
                    members |= 1 << l;
                }
            }
            let leader = members.trailing_zeros();
            match &d.kind {
                OperandKind::Reg(r) if r.file == RegFile::Ur => {
                    if r.index != 63 {
                        w.set_ureg(r.index, leader);
                    }
                }
                k => return unsupported(format!("ELECT destination {k:?}")),
            }
            for l in lanes(exec) {
                wp(w, l, pd, l as u32 == leader)?;
            }
            next(w);
            Ok(())
        }
        "UBLKCP" => {
            // A uniform instruction: one copy for the warp, not one per lane.
            if let Some(l0) = lanes(exec).next() {
                syncs::ublkcp(ctx, w, inst, l0)?;
            }
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
            each_lane(ctx, w, inst, run, active)?;
            next(w);
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------------------
// Warp collectives.

// ---------------------------------------------------------------------------------------
// Per-lane ops.

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

// ---------------------------------------------------------------------------------------
// Memory.

const SIZE_MODS: &[&str] = &["U8", "S8", "U16", "S16", "32", "64", "128"];
