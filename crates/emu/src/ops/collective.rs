//! Barriers and warp collectives: `BAR`, `SHFL`, `VOTE`, `MATCH`, `REDUX`.

use super::*;

pub(crate) fn breg(op: &Operand) -> R<usize> {
    match &op.kind {
        OperandKind::Reg(r) if r.file == RegFile::B => Ok(r.index as usize),
        k => unsupported(format!("barrier register operand {k:?}")),
    }
}

/// `BAR.SYNC[.DEFER_BLOCKING] id[, count]`, `BAR.ARV id, count`, `BAR.RED.{POPC,AND,OR}
/// id[, count], P`: the executing lanes arrive at barrier `id` (`SYNC`/`RED` lanes wait for
/// the generation to complete, `ARV` lanes go on); `BAR.SYNC R, R` (one register twice) holds
/// the count in its high half and the id in its low bits. The arrivals are counted, in order,
/// by the release pass that sees every warp (`exec::release_cta_barriers`).
pub(crate) fn bar(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, active: u32, exec: u32) -> R<()> {
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
    let n_ops = inst.operands.len() - usize::from(red.is_some());
    if n_ops == 0 || n_ops > 2 {
        return unsupported("BAR operand layout");
    }
    if let Some(op) = red {
        let p = op_at(inst, n_ops)?;
        for l in lanes(exec) {
            let v = pred(w, l, p)?;
            w.bar_red[l] = Some((op, v));
        }
    }
    let l0 = lanes(exec)
        .next()
        .or_else(|| lanes(active).next())
        .unwrap_or(0);
    let a = raw32(ctx, w, l0, op_at(inst, 0)?)?;
    let same_register = n_ops == 2
        && inst.operands[0].kind == inst.operands[1].kind
        && matches!(&inst.operands[0].kind, OperandKind::Reg(r) if r.file == RegFile::R && r.index != 255);
    let (id, count): (u8, Option<u32>) = if same_register {
        ((a & 0xf) as u8, Some(a >> 16))
    } else if n_ops == 2 {
        ((a & 0xf) as u8, Some(raw32(ctx, w, l0, op_at(inst, 1)?)?))
    } else {
        ((a & 0xf) as u8, None)
    };
    // A count of 0 is every thread (as ptxas reads an immediate 0).
    let count = count.filter(|&c| c != 0);
    if inst.has_mod("ARV") && count.is_none() {
        return unsupported("BAR.ARV without a thread count");
    }
    // `.DEFER_BLOCKING` (ptxas's form of an aligned barrier, and of every barrier on sm_90)
    // counts a warp's arrival per execution: lanes of a diverged warp that reach it separately
    // arrive as many times (such kiln cubins hung or let warps pass early on an H200; ptxas
    // reconverges first, with `BSYNC` or `WARPSYNC`). Plain `BAR.SYNC` (ptxas's sm_80 form of a
    // non-aligned `barrier.sync`) takes a warp's lanes as they come: ptxas's own code reaches it
    // with half warps (test-data/holdout `h_tiles`).
    let live = w.live_mask();
    if inst.has_mod("DEFER_BLOCKING") && active != live {
        return Err(Fault::Trap {
            message: format!(
                "barrier executed by a diverged warp: lanes {active:#010x} of the warp's live \
                 lanes {live:#010x} reach it apart (the hardware counts each execution as the \
                 warp's arrival)"
            ),
            lane: active.trailing_zeros() as usize,
        });
    }
    let wait = !inst.has_mod("ARV");
    for l in lanes(active) {
        if exec >> l & 1 == 1 && wait {
            w.state[l] = LaneState::Bar(id);
        } else {
            w.pc[l] = ctx.pc + 16;
        }
    }
    if exec != 0 {
        ctx.cta.arrivals.push(crate::exec::Arrival {
            id,
            warp: w.index,
            lanes: exec,
            count,
            wait,
        });
    }
    Ok(())
}

pub(crate) fn shfl(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
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

pub(crate) fn vote(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
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

pub(crate) fn matchop(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
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

pub(crate) fn redux(ctx: &Ctx<'_>, w: &mut Warp, inst: &Inst, exec: u32) -> R<()> {
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
