//! `mbarrier` objects. sm_90's `SYNCS` unit: the objects ptxas 13.0.88 drives with `SYNCS.EXCH.64`
//! (initialise), `SYNCS.ARRIVE.TRANS64.*` (arrive, count transaction bytes) and
//! `SYNCS.PHASECHK.TRANS64[.TRYWAIT]` (test a phase), and `SYNCS.CCTL.IV` (invalidate).
//!
//! The object's layout is read from ptxas's own code (`docs/arch/codegen.md`, "mbarrier"), not
//! from a document; a GPU has not confirmed it:
//!
//! * `mbarrier.init [a], n` stores `lo = (0x100000 - n) << 1`, `hi = (0x100000 - n) << 11`: the
//!   expected-arrivals field is bits 1..21 and the pending-arrivals field bits 43..63, each
//!   holding `0x100000 - count` (counting up towards `0x100000`);
//! * `test_wait` compares bit 31 of the high word of a state (an earlier value of the object)
//!   and `try_wait.parity` compares `parity << 31` with the object: the phase is bit 63;
//! * `pending_count` is `0x100000 - ((state.hi >> 11) & 0xfffff)`.
//!
//! The transaction count is nowhere in ptxas's code; the emulator keeps it in the bits between
//! the two fields (21..43, signed). An arrival's result is the object before it. A phase
//! completes when the pending field reaches `0x100000` and the transaction count 0: bit 63
//! flips and the pending field restarts from the expected field. A phase held open by
//! outstanding bytes after its last arrival stores its pending field as 0.
//!
//! The `ARRIVE` variants name the arrivals (`A1` one, `AR` the register operand, `A0` none)
//! and the transaction change (`T0` none, `TR` plus the register, `TX` minus it — `complete_tx`
//! —, `T1` plus one); no suffix is `A1TR` (`mbarrier.arrive.expect_tx`). `.OPTOUT`
//! (`arrive_drop`) also lowers the expected count; `.RED` has no result.
//!
//! Before sm_90 the object is two plain shared words that `ATOMS.ARRIVE.64` and `ARRIVES`
//! update ([`atoms_arrive`]).

use super::*;

const FIELD: u64 = (1 << 20) - 1;
const FULL: u64 = 1 << 20;
const TX_SHIFT: u32 = 21;
const TX_BITS: u32 = 22;

/// The fields of an object as the emulator models it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Object {
    /// `0x100000 - expected arrivals`.
    expected: u64,
    /// `0x100000 - pending arrivals` (`0x100000`: none pending).
    pending: u64,
    tx: i64,
    phase: bool,
}

impl Object {
    fn decode(w: u64) -> Object {
        let raw = (w >> TX_SHIFT) & ((1 << TX_BITS) - 1);
        Object {
            expected: (w >> 1) & FIELD,
            // A count is at most 2^20 - 1, so the field is never 0 but when nothing is pending
            // (a phase held open by outstanding transaction bytes): 0 stands for 0x100000.
            pending: match (w >> 43) & FIELD {
                0 => FULL,
                p => p,
            },
            tx: ((raw << (64 - TX_BITS)) as i64) >> (64 - TX_BITS),
            phase: w >> 63 == 1,
        }
    }

    fn encode(&self) -> u64 {
        (self.expected & FIELD) << 1
            | ((self.tx as u64) & ((1 << TX_BITS) - 1)) << TX_SHIFT
            | (self.pending & FIELD) << 43
            | u64::from(self.phase) << 63
    }
}

/// `ARRIVES.LDGSTSBAR.64.{ARVCNT|TRANSCNT} [a]` (`cp.async.mbarrier.arrive{.noinc}`): when
/// the lane's earlier `LDGSTS` copies complete — at once here, where they complete as they
/// issue — one arrival (`.ARVCNT`) or one transaction completed (`.TRANSCNT`, taking back the
/// `SYNCS.ARRIVE.TRANS64.RED.A0T1` before it).
///
/// Before sm_90 plain `ARRIVES.LDGSTSBAR.64 [a]` is that arrival on sm_80's object
/// ([`atoms_arrive`]).
pub(crate) fn arrives(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["LDGSTSBAR", "64", "ARVCNT", "TRANSCNT"])?;
    let (_, addr) = mem_operand(inst)?;
    let a = address(w, l, addr, false)?;
    let (arrivals, tx) = match find_mod(inst, &["ARVCNT", "TRANSCNT"]) {
        Some("ARVCNT") => (1, 0),
        Some(_) => (0, -1),
        None => return words_arrive(ctx, w, l, a).map(|_| ()),
    };
    update(ctx, w, l, a, arrivals, tx, false).map(|_| ())
}

/// `UBLKCP.S.G [URd], [URs], URn` (sm_90: `cp.async.bulk.shared::cluster.global.mbarrier::
/// complete_tx::bytes`): copies `16 * (URn & 0xffff)` bytes from the global address in the
/// pair `URs` to the shared address in `URd`, then completes as many transaction bytes on the
/// barrier whose address is in `URd+1` (at once: the copy completes as it issues). The roles
/// are read from ptxas's code (`URn` is `UPRMT(n >> 4, 0x5410)`, the barrier the `R2UR` into
/// the destination's pair partner), unconfirmed on a GPU.
pub(crate) fn ublkcp(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["S", "G"])?;
    let ureg_of = |o: &Operand| -> R<u8> {
        match &o.kind {
            OperandKind::Mem { addr, .. } => match addr.terms.as_slice() {
                [sass::model::AddrTerm::Reg { reg, .. }] if reg.file == RegFile::Ur => {
                    Ok(reg.index)
                }
                _ => unsupported("UBLKCP address other than [URn]"),
            },
            OperandKind::Reg(r) if r.file == RegFile::Ur => Ok(r.index),
            k => unsupported(format!("UBLKCP operand {k:?}")),
        }
    };
    let (d, s, n) = (
        ureg_of(op_at(inst, 0)?)?,
        ureg_of(op_at(inst, 1)?)?,
        ureg_of(op_at(inst, 2)?)?,
    );
    let dst = u64::from(w.ureg(d));
    let bar = u64::from(w.ureg(upair(d)));
    let src = u64::from(w.ureg(s)) | u64::from(w.ureg(upair(s))) << 32;
    let bytes = 16 * (w.ureg(n) & 0xffff) as usize;
    let mut buf = vec![0u8; bytes];
    ctx.load(w, l, Space::Global, src, &mut buf)?;
    ctx.store(w, l, Space::Shared, dst, &buf)?;
    update(ctx, w, l, bar, 0, -(bytes as i64), false).map(|_| ())
}

/// `ATOMS.ARRIVE.64 d, [a]` (sm_80, sm_86, sm_89: `mbarrier.arrive`): one arrival on the
/// object as ptxas keeps it before sm_90, two shared words. ptxas initialises `count` arrivals
/// as `lo = 0x40000000 - count`, `hi = 0x80000000 - count`, lowers the expected count with an
/// increment of `lo` (`arrive_drop`), adds a `.noComplete` count to `hi` and tests bit 31 of
/// `hi` for the phase: `hi` counts arrivals up towards `0x80000000`, whose carry flips the
/// phase, after which its low 31 bits restart from the expected count, `0x40000000 + lo`.
/// `d` gets the object before the arrival.
pub(crate) fn atoms_arrive(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    check_mods(inst, &["ARRIVE", "64"])?;
    let (mi, addr) = mem_operand(inst)?;
    let a = address(w, l, addr, false)?;
    let old = words_arrive(ctx, w, l, a)?;
    if mi >= 1 {
        wr64(w, l, op_at(inst, mi - 1)?, old)?;
    }
    Ok(())
}

/// One arrival on sm_80's two-word object at `a`; returns the object before it.
fn words_arrive(ctx: &mut Ctx<'_>, w: &mut Warp, l: usize, a: u64) -> R<u64> {
    let mut b = [0u8; 8];
    ctx.load(w, l, Space::Shared, a, &mut b)?;
    let old = u64::from_le_bytes(b);
    let (lo, hi) = (old as u32, (old >> 32) as u32);
    let mut next = hi.wrapping_add(1);
    if next & 0x7fff_ffff == 0 {
        next = (next & 0x8000_0000) | (0x4000_0000u32.wrapping_add(lo) & 0x7fff_ffff);
    }
    let new = u64::from(lo) | u64::from(next) << 32;
    ctx.store(w, l, Space::Shared, a, &new.to_le_bytes())?;
    Ok(old)
}

/// One arrive-on operation on the object at shared address `a`: returns the object before it.
fn update(
    ctx: &mut Ctx<'_>,
    w: &mut Warp,
    l: usize,
    a: u64,
    arrivals: u64,
    tx: i64,
    drop: bool,
) -> R<u64> {
    let mut b = [0u8; 8];
    ctx.load(w, l, Space::Shared, a, &mut b)?;
    let old = u64::from_le_bytes(b);
    let mut obj = Object::decode(old);
    if obj.pending + arrivals > FULL {
        return trap(
            l,
            format!(
                "mbarrier arrival of {arrivals} with {} pending (undefined)",
                FULL - obj.pending
            ),
        );
    }
    obj.pending += arrivals;
    if drop {
        obj.expected += arrivals;
    }
    obj.tx += tx;
    if obj.pending == FULL && obj.tx == 0 {
        obj.phase = !obj.phase;
        obj.pending = obj.expected;
    }
    ctx.store(w, l, Space::Shared, a, &obj.encode().to_le_bytes())?;
    Ok(old)
}

pub(crate) fn syncs(ctx: &mut Ctx<'_>, w: &mut Warp, inst: &Inst, l: usize) -> R<()> {
    let (mi, addr) = mem_operand(inst)?;
    let a = address(w, l, addr, false)?;
    let load = |ctx: &mut Ctx<'_>, w: &mut Warp| -> R<u64> {
        let mut b = [0u8; 8];
        ctx.load(w, l, Space::Shared, a, &mut b)?;
        Ok(u64::from_le_bytes(b))
    };
    if inst.has_mod("EXCH") {
        check_mods(inst, &["EXCH", "64"])?;
        let v = raw64(ctx, w, l, op_at(inst, mi + 1)?)?;
        let old = load(ctx, w)?;
        ctx.store(w, l, Space::Shared, a, &v.to_le_bytes())?;
        return wr64(w, l, op_at(inst, 0)?, old);
    }
    if inst.has_mod("CCTL") {
        // Invalidates the unit's copy of the object (`mbarrier.inval`): the bytes stay.
        return check_mods(inst, &["CCTL", "IV"]);
    }
    if inst.has_mod("PHASECHK") {
        check_mods(inst, &["PHASECHK", "TRANS64", "TRYWAIT"])?;
        let state = int32(ctx, w, l, op_at(inst, mi + 1)?)?;
        let obj = Object::decode(load(ctx, w)?);
        return wp(w, l, op_at(inst, 0)?, obj.phase != (state >> 31 == 1));
    }
    if !inst.has_mod("ARRIVE") {
        return unsupported(format!("SYNCS.{}", inst.mods.join(".")));
    }
    const KINDS: &[&str] = &["A1T0", "ART0", "A0TR", "A0TX", "A0T1"];
    check_mods_by(inst, |m| {
        matches!(m, "ARRIVE" | "TRANS64" | "RED" | "OPTOUT") || KINDS.contains(&m)
    })?;
    let kind = find_mod(inst, KINDS).unwrap_or("A1TR");
    let operand = u64::from(int32(ctx, w, l, op_at(inst, mi + 1)?)?);
    let (arrivals, tx) = match kind {
        "A1T0" => (1, 0),
        "ART0" => (operand, 0),
        "A0TR" => (0, operand as i64),
        "A0TX" => (0, -(operand as i64)),
        "A0T1" => (0, 1),
        _ => (1, operand as i64),
    };
    let old = update(ctx, w, l, a, arrivals, tx, inst.has_mod("OPTOUT"))?;
    if mi >= 1 && !inst.has_mod("RED") {
        wr64(w, l, op_at(inst, 0)?, old)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ptxas's init value for a count decodes to that many pending and expected arrivals in
    /// phase 0; the layout round-trips.
    #[test]
    fn ptxas_init_words_decode() {
        for n in [1u64, 2, 64, 0xfffff] {
            let lo = (0x100000 - n) << 1;
            let hi = (0x100000 - n) << 11;
            let o = Object::decode(lo | hi << 32);
            assert_eq!(
                (FULL - o.pending, FULL - o.expected, o.tx, o.phase),
                (n, n, 0, false)
            );
            assert_eq!(o.encode(), lo | hi << 32);
            // ptxas's pending_count sequence on the high word.
            assert_eq!(0x100000 - ((hi >> 11) & 0xfffff), n);
        }
        let o = Object {
            expected: 7,
            pending: FULL,
            tx: -5,
            phase: true,
        };
        assert_eq!(Object::decode(o.encode()), o);
    }
}
