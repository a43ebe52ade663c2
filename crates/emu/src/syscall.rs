//! System calls: `LEPC` and `CALL.ABS.NOINC` to the device runtime's `vprintf` and
//! `__assertfail`, whose addresses ptxas 13.0.88 loads from constant bank 4 (an `R_CUDA_64`
//! relocation against the undefined function symbol, filled by the loader with an address in
//! [`EXTERN_WINDOW`](crate::load::EXTERN_WINDOW)):
//!
//! ```text
//! LDC.64 R8, c[0x4][0x28]      the callee's address
//! LEPC R20, `(.L_x_6)          sm_90: R20:R21 = the return address (sm_80: `LEPC R14` = the
//! CALL.ABS.NOINC R8            LEPC's own address, and R20:R21 computed from it)
//! ```
//!
//! ABI (ptxas's code, `ir::abi`): arguments from R4 upward, a 64-bit one on an even pair
//! (`vprintf`: R4:R5 format, R6:R7 argument buffer; `__assertfail`: R4:R5 message, R6:R7
//! file, R8 line, R10:R11 function, R12:R13 charSize); the 32-bit result in R4; the callee
//! returns to R20:R21. The call itself is the model shared with the interpreter
//! (`interp::devrt`): each executing lane, in lane order, decodes its call and appends it to
//! the memory's `DeviceLog`.
//!
//! After a `vprintf` the registers the callee may change are poisoned, so that code keeping a
//! value there across the call is caught: R5–R15 and R20–R21 get [`poison`]`(n)` (R4 holds
//! the result), and P0–P6 are inverted (a fixed value could equal what the caller kept; an
//! inverted one never does). `__assertfail` also poisons R4 and then traps like `BPT.TRAP`,
//! with the assertion as the message. A `CALL.ABS.NOINC` to any other address is
//! unsupported, naming the external function when it is one.

use interp::devrt::{self, SysCall};
use sass::model::Inst;

use crate::exec::{Ctx, Fault, R, Space, Warp, thread_of, trap, unsupported};
use crate::load::CODE_WINDOW;
use crate::ops::lanes;

/// The value a poisoned register `n` holds after a system call: recognisable in a trace
/// (`0xdeadbe05` for R5) and the same in every run.
pub fn poison(n: u8) -> u32 {
    0xdead_be00 | u32::from(n)
}

/// General registers a returning system call poisons (R4 holds the result).
pub const POISONED: [u8; 13] = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21];

/// The return-address pair `LEPC` writes for a system call.
const RETURN_PAIR: u8 = 20;

fn reg64(w: &Warp, l: usize, n: u8) -> u64 {
    u64::from(w.reg(l, n)) | u64::from(w.reg(l, n + 1)) << 32
}

/// `LEPC Rd[, target]`: Rd:Rd+1 = `CODE_WINDOW +` the target (sm_90's form) or the `LEPC`'s
/// own address (sm_80's, which adds the distance to the return point itself), for the
/// executing lanes.
pub fn lepc(w: &mut Warp, inst: &Inst, pc: u64, exec: u32) -> R<()> {
    use sass::model::{OperandKind, RegFile};
    if !inst.mods.is_empty() {
        return unsupported(format!("LEPC with modifier .{}", inst.mods.join(".")));
    }
    let d = match inst.operands.first().map(|o| &o.kind) {
        Some(OperandKind::Reg(r)) if r.file == RegFile::R => r.index,
        _ => return unsupported("LEPC without a register destination"),
    };
    let at = match inst.operands.get(1).map(|o| &o.kind) {
        None => pc,
        Some(OperandKind::Target(t)) => *t,
        Some(k) => return unsupported(format!("LEPC operand {k:?}")),
    };
    let v = CODE_WINDOW + at;
    for l in lanes(exec) {
        if d != 255 {
            w.set_reg(l, d, v as u32);
            w.set_reg(l, d + 1, (v >> 32) as u32);
        }
    }
    Ok(())
}

/// `CALL.ABS.NOINC Rn` for the lanes in `active` (those in `exec` call, the others move on):
/// each calling lane performs its system call in lane order (module docs).
pub fn call_abs(ctx: &mut Ctx<'_>, w: &mut Warp, target_reg: u8, active: u32, exec: u32) -> R<()> {
    let pc = ctx.pc;
    for l in lanes(active) {
        if exec >> l & 1 == 0 {
            w.pc[l] = pc + 16;
            continue;
        }
        let target = reg64(w, l, target_reg);
        let Some(name) = ctx.prog.extern_at(target) else {
            return unsupported(format!(
                "CALL.ABS to {target:#x}, which is not a function the loader resolved (only \
                 calls of the device runtime's vprintf, __assertfail and cudaGraphSetConditional are \
                 modeled)"
            ));
        };
        let Some(sc) = SysCall::from_name(name) else {
            return unsupported(format!(
                "call of the external function `{name}`, which the emulator does not model"
            ));
        };
        let ctaid = ctx.cta.id;
        let tid = thread_of(ctx.launch, w.index * 32 + l as u32);
        match sc {
            SysCall::Vprintf => {
                let ret_pc = return_pc(ctx, w, l, sc)?;
                let (format, args) = (reg64(w, l, 4), reg64(w, l, 6));
                let call = devrt::decode_vprintf(format, args, &mut |a, out| {
                    read_bytes(ctx, w, l, a, out)
                })
                .map_err(|message| Fault::Trap { message, lane: l })?;
                let r = ctx.mem.device_log_mut().record_printf(ctaid, tid, call);
                w.set_reg(l, 4, r as u32);
                clobber(w, l);
                w.pc[l] = ret_pc;
            }
            SysCall::GraphSetConditional => {
                let ret_pc = return_pc(ctx, w, l, sc)?;
                let (handle, value) = (reg64(w, l, 4), w.reg(l, 6));
                ctx.mem
                    .device_log_mut()
                    .record_conditional(ctaid, tid, handle, value);
                clobber(w, l);
                w.set_reg(l, 4, poison(4));
                w.pc[l] = ret_pc;
            }
            SysCall::Assertfail => {
                let call = devrt::decode_assertfail(
                    reg64(w, l, 4),
                    reg64(w, l, 6),
                    w.reg(l, 8),
                    reg64(w, l, 10),
                    &mut |a, out| read_bytes(ctx, w, l, a, out),
                )
                .map_err(|message| Fault::Trap { message, lane: l })?;
                let message = ctx.mem.device_log_mut().record_assert(ctaid, tid, call);
                clobber(w, l);
                w.set_reg(l, 4, poison(4));
                return trap(l, message);
            }
        }
    }
    Ok(())
}

/// The instruction a returning system call `sc` of lane `l` continues at: the code address
/// in R20:R21, or a trap when that is not one.
fn return_pc(ctx: &Ctx<'_>, w: &Warp, l: usize, sc: SysCall) -> R<u64> {
    let ret = reg64(w, l, RETURN_PAIR);
    match ctx.prog.code_pc(ret) {
        Some(pc) => Ok(pc),
        None => trap(
            l,
            format!(
                "{} would return to {ret:#x} (R20:R21), not a code address",
                sc.name()
            ),
        ),
    }
}

/// Poisons what a system call may change in lane `l` (module docs).
fn clobber(w: &mut Warp, l: usize) {
    for n in POISONED {
        w.set_reg(l, n, poison(n));
    }
    for p in 0..7 {
        let v = w.pred(l, p);
        w.set_pred(l, p, !v);
    }
}

/// Reads bytes at a generic address for lane `l`, one at a time (the device runtime reads
/// strings and arguments without the alignment rule of the load instructions, as the
/// interpreter does); `false` when a byte is not readable.
fn read_bytes(ctx: &mut Ctx<'_>, w: &Warp, l: usize, addr: u64, out: &mut [u8]) -> bool {
    for (i, b) in out.iter_mut().enumerate() {
        let mut x = [0u8];
        if ctx
            .load(w, l, Space::Generic, addr.wrapping_add(i as u64), &mut x)
            .is_err()
        {
            return false;
        }
        *b = x[0];
    }
    true
}
