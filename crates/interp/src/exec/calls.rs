//! Calls: device functions (frames on each lane's call stack) and system calls (`vprintf`,
//! `malloc`, the device runtime).

use super::*;

impl Cta<'_> {
    pub(crate) fn call(
        &mut self,
        w: usize,
        l: usize,
        f: &Function,
        inst: &Inst,
    ) -> Result<(), RunError> {
        let module = self.module;
        let info = inst.call.as_ref().expect("call info");
        let callee_id = info.func.expect("direct call");
        let callee = &module.functions[callee_id as usize];
        if !callee.defined {
            if let Some(sc) = SysCall::from_name(&callee.name) {
                return self.system_call(w, l, f, inst, callee, sc);
            }
            return Err(RunError::Unsupported {
                reason: format!(
                    "call to `{}`, which has no body in this module (external function)",
                    callee.name
                ),
                line: inst.line,
            });
        }
        let (arg_bytes, arg_regs) = self.call_args(w, l, f, inst, callee)?;
        let t = &mut self.warps[w][l];
        t.frames.last_mut().expect("frame").pc += 1;
        let local_base = t.local.len().div_ceil(16) as u64 * 16;
        let param_base = t.param.len().div_ceil(16) as u64 * 16;
        t.local.resize((local_base + callee.local_size) as usize, 0);
        t.param.resize((param_base + callee.param_size) as usize, 0);
        let mut regs = vec![0u64; callee.reg_bits.len()];
        for ((slot, bytes), vals) in callee.params.iter().zip(&arg_bytes).zip(&arg_regs) {
            match slot.reg {
                Some(r) => {
                    for (k, v) in vals.iter().enumerate().take(slot.vec.max(1) as usize) {
                        let width = callee.reg_bits[r as usize + k];
                        let m = if width >= 64 {
                            u64::MAX
                        } else {
                            (1u64 << width) - 1
                        };
                        regs[r as usize + k] = v & m;
                    }
                }
                None => {
                    let at = (param_base + slot.offset) as usize;
                    t.param[at..at + bytes.len()].copy_from_slice(bytes);
                }
            }
        }
        t.frames.push(Frame {
            func: callee_id,
            pc: 0,
            regs,
            local_base,
            param_base,
            rets: info.rets.clone(),
        });
        Ok(())
    }

    /// A call of the device runtime's `vprintf` or `__assertfail` (declared without a body):
    /// the call is decoded and recorded in the memory's [`crate::DeviceLog`]
    /// ([`crate::devrt`]); `vprintf` writes its result and returns, `__assertfail` ends the
    /// run with a trap naming the assertion, as `trap` does. A byte the call cannot read is
    /// a trap too.
    pub(crate) fn system_call(
        &mut self,
        w: usize,
        l: usize,
        f: &Function,
        inst: &Inst,
        callee: &Function,
        sc: SysCall,
    ) -> Result<(), RunError> {
        let info = inst.call.as_ref().expect("call info");
        let sizes: Vec<u64> = callee.params.iter().map(|p| p.size).collect();
        if sizes != sc.param_sizes() || info.args.len() != sizes.len() {
            return Err(RunError::Unsupported {
                reason: format!(
                    "call to `{}` with parameters of {sizes:?} bytes ({} arguments); the device runtime's takes {:?}",
                    callee.name,
                    info.args.len(),
                    sc.param_sizes()
                ),
                line: inst.line,
            });
        }
        let (bytes, regs) = self.call_args(w, l, f, inst, callee)?;
        let arg = |i: usize| -> u64 {
            match regs[i].first() {
                Some(v) => *v,
                None => {
                    let mut b = [0u8; 8];
                    let n = bytes[i].len().min(8);
                    b[..n].copy_from_slice(&bytes[i][..n]);
                    u64::from_le_bytes(b)
                }
            }
        };
        let (ctaid, tid, line) = (self.ctaid, self.warps[w][l].tid, inst.line);
        let mut read = |a: u64, out: &mut [u8]| {
            let (sp, a) = from_generic(a);
            self.load(w, l, sp, a, out, line).is_ok()
        };
        match sc {
            SysCall::Vprintf => {
                let call = devrt::decode_vprintf(arg(0), arg(1), &mut read)
                    .map_err(|e| trap_of(self, line, &self.warps[w][l], e))?;
                let r = self.mem.device_log_mut().record_printf(ctaid, tid, call);
                if let (Some(slot), Some(dst)) = (callee.rets.first(), info.rets.first()) {
                    let v = u64::from(r as u32);
                    match dst {
                        Operand::VarAddr { .. } => {
                            let (sp, a) = self.address(&self.warps[w][l], dst, Space::Param);
                            let n = slot.size.min(8) as usize;
                            self.store(w, l, sp, a, &v.to_le_bytes()[..n], line)?;
                        }
                        _ => set(f, &mut self.warps[w][l], dst, Ty::S32, v),
                    }
                }
                self.advance(w, l);
                Ok(())
            }
            SysCall::GraphSetConditional => {
                self.mem
                    .device_log_mut()
                    .record_conditional(ctaid, tid, arg(0), arg(1) as u32);
                self.advance(w, l);
                Ok(())
            }
            SysCall::Assertfail => {
                let call =
                    devrt::decode_assertfail(arg(0), arg(1), arg(2) as u32, arg(3), &mut read)
                        .map_err(|e| trap_of(self, line, &self.warps[w][l], e))?;
                let message = self.mem.device_log_mut().record_assert(ctaid, tid, call);
                Err(trap_of(self, line, &self.warps[w][l], message))
            }
        }
    }

    /// The argument values of a call, gathered in the caller's frame: bytes for `.param`
    /// parameters, element values for `.reg` ones (one list each, by parameter).
    pub(crate) fn call_args(
        &mut self,
        w: usize,
        l: usize,
        f: &Function,
        inst: &Inst,
        callee: &Function,
    ) -> Result<CallArgs, RunError> {
        let info = inst.call.as_ref().expect("call info");
        let mut arg_bytes: Vec<Vec<u8>> = Vec::new();
        let mut arg_regs: Vec<Vec<u64>> = Vec::new();
        for (slot, arg) in callee.params.iter().zip(&info.args) {
            let t = &self.warps[w][l];
            if slot.reg.is_some() {
                let vals = match arg {
                    Operand::Vec(parts) => {
                        parts.iter().map(|p| self.get(f, t, p, slot.ty)).collect()
                    }
                    Operand::VarAddr {
                        var:
                            VarRef {
                                space: Space::Param,
                                ..
                            },
                        ..
                    } => {
                        let (sp, addr) = self.address(t, arg, Space::Param);
                        let mut b = [0u8; 8];
                        let n = slot.ty.size().min(8) as usize;
                        self.load(w, l, sp, addr, &mut b[..n], inst.line)?;
                        vec![u64::from_le_bytes(b)]
                    }
                    o => vec![self.get(f, t, o, slot.ty)],
                };
                arg_regs.push(vals);
                arg_bytes.push(Vec::new());
                continue;
            }
            let bytes = match arg {
                Operand::VarAddr {
                    var:
                        VarRef {
                            space: Space::Param,
                            ..
                        },
                    ..
                } => {
                    let (sp, addr) = self.address(t, arg, Space::Param);
                    let mut b = vec![0u8; slot.size as usize];
                    self.load(w, l, sp, addr, &mut b, inst.line)?;
                    b
                }
                Operand::Vec(parts) => {
                    let mut b = Vec::new();
                    for p in parts {
                        let v = self.get(f, t, p, slot.ty);
                        b.extend_from_slice(&v.to_le_bytes()[..slot.ty.size().min(8) as usize]);
                    }
                    b.resize(slot.size as usize, 0);
                    b
                }
                o => {
                    let v = self.get(f, t, o, slot.ty);
                    let mut b = v.to_le_bytes()[..slot.size.min(8) as usize].to_vec();
                    b.resize(slot.size as usize, 0);
                    b
                }
            };
            arg_bytes.push(bytes);
            arg_regs.push(Vec::new());
        }
        Ok((arg_bytes, arg_regs))
    }
}
