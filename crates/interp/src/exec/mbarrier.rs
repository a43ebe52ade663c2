//! `mbarrier.*` and `cp.async.mbarrier.arrive` for one lane: read-modify-writes of the
//! object's 8 bytes of shared memory in the encoding of [`crate::mbarrier`].

use super::*;
use crate::mbarrier::{MbarOp, Object};

impl Cta<'_> {
    pub(crate) fn mbarrier(
        &mut self,
        w: usize,
        l: usize,
        f: &Function,
        inst: &Inst,
    ) -> Result<(), RunError> {
        let a = &inst.args;
        let op = inst
            .mods
            .mbar
            .expect("an mbarrier instruction has its operation");
        let undefined = |why: String| RunError::Unsupported {
            reason: format!("undefined behaviour: {why}"),
            line: inst.line,
        };
        let needed = match op {
            MbarOp::Inval | MbarOp::CpAsyncArrive { .. } => 1,
            MbarOp::Init | MbarOp::ExpectTx | MbarOp::CompleteTx | MbarOp::Arrive { .. } => 2,
            MbarOp::TestWait { .. } => 3,
            MbarOp::BulkCopy => 4,
        };
        if a.len() < needed {
            return Err(RunError::Unsupported {
                reason: format!("`{}` with {} operands", inst.text, a.len()),
                line: inst.line,
            });
        }
        let addr_at = match op {
            MbarOp::Arrive { .. } | MbarOp::TestWait { .. } => 1,
            MbarOp::BulkCopy => 3,
            _ => 0,
        };
        let space = inst.mods.space.unwrap_or(Space::Generic);
        let (sp, addr) = self.address(&self.warps[w][l], &a[addr_at], space);
        if sp != Space::Shared {
            return Err(undefined(format!(
                "an mbarrier object outside shared memory ({})",
                self.where_is(sp, addr)
            )));
        }
        if addr % 8 != 0 {
            return Err(undefined(format!(
                "a misaligned mbarrier object at {}",
                self.where_is(sp, addr)
            )));
        }
        let mut buf = [0u8; 8];
        self.in_atomic = true;
        let loaded = self.load(w, l, sp, addr, &mut buf, inst.line);
        self.in_atomic = false;
        loaded?;
        let old = u64::from_le_bytes(buf);
        let mut obj = Object::decode(old);
        if op != MbarOp::Init && !obj.valid {
            return Err(undefined(format!(
                "`{}` on an mbarrier object that is not initialized",
                inst.text
            )));
        }
        if op == MbarOp::BulkCopy {
            self.bulk_copy(w, l, f, inst)?;
        }
        let operand = |k: usize| self.get(f, &self.warps[w][l], &a[k], Ty::U32);
        let mut result = None;
        match op {
            MbarOp::Init => obj = Object::init(operand(1)).map_err(undefined)?,
            MbarOp::Inval => obj.valid = false,
            MbarOp::ExpectTx => obj.add_tx(operand(1) as i64).map_err(undefined)?,
            MbarOp::CompleteTx => obj.add_tx(-(operand(1) as i64)).map_err(undefined)?,
            MbarOp::BulkCopy => obj.add_tx(-(operand(2) as i64)).map_err(undefined)?,
            MbarOp::Arrive {
                drop,
                expect_tx,
                no_complete,
            } => {
                let extra = a.get(2).map(|_| operand(2));
                let count = if expect_tx {
                    obj.add_tx(extra.unwrap_or(0) as i64).map_err(undefined)?;
                    1
                } else {
                    extra.unwrap_or(1)
                };
                let phase = obj.phase;
                obj.arrive(count, drop).map_err(undefined)?;
                if no_complete && obj.phase != phase {
                    return Err(undefined(format!("`{}` completed the phase", inst.text)));
                }
                result = Some(old);
            }
            MbarOp::CpAsyncArrive { noinc } => {
                // The thread's copies have completed (they complete at once here).
                if let Some(san) = &mut self.san {
                    san.async_arrive(w * 32 + l);
                }
                if noinc {
                    obj.arrive(1, false).map_err(undefined)?;
                }
            }
            MbarOp::TestWait { parity } => {
                let v = self.get(f, &self.warps[w][l], &a[2], Ty::B64);
                let done = if parity {
                    obj.parity_completed(v)
                } else {
                    obj.completed_since(v)
                };
                let t = &mut self.warps[w][l];
                set(f, t, &a[0], Ty::Pred, u64::from(done));
            }
        }
        let new = obj.encode();
        if new != old || op == MbarOp::Init {
            self.in_atomic = true;
            let stored = self.store(w, l, sp, addr, &new.to_le_bytes(), inst.line);
            self.in_atomic = false;
            stored?;
        }
        if let Some(state) = result {
            let t = &mut self.warps[w][l];
            set(f, t, &a[0], Ty::B64, state);
        }
        if let Some(san) = &mut self.san {
            san.synchronize(w * 32 + l);
        }
        Ok(())
    }

    /// The copy of a `cp.async.bulk` (global to shared): `n` bytes, `n` a multiple of 16 and
    /// both addresses 16-byte aligned (PTX; otherwise undefined, reported).
    fn bulk_copy(&mut self, w: usize, l: usize, f: &Function, inst: &Inst) -> Result<(), RunError> {
        let a = &inst.args;
        let (dsp, dst) = self.address(&self.warps[w][l], &a[0], Space::Shared);
        let (ssp, src) = self.address(&self.warps[w][l], &a[1], Space::Global);
        let n = self.get(f, &self.warps[w][l], &a[2], Ty::U32);
        if !n.is_multiple_of(16) || !dst.is_multiple_of(16) || !src.is_multiple_of(16) {
            return Err(RunError::Unsupported {
                reason: format!(
                    "undefined behaviour: a bulk copy of {n} bytes from {} to {} (sizes and \
                     addresses must be multiples of 16)",
                    self.where_is(ssp, src),
                    self.where_is(dsp, dst)
                ),
                line: inst.line,
            });
        }
        let mut buf = vec![0u8; n as usize];
        self.load(w, l, ssp, src, &mut buf, inst.line)?;
        self.store(w, l, dsp, dst, &buf, inst.line)
    }
}
