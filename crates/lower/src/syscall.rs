//! Calls of system functions (`vprintf`, `__assertfail`): the functions without a body that
//! the CUDA driver links into a module. ptxas 13.0.88 calls them through the module's
//! address table (sm_80 and sm_90, read with nvdisasm and `cuobjdump -elf`):
//!
//! ```text
//! MOV R4, …  MOV R5, …  …             arguments in R4 upward (ir::abi)
//! LDC.64 R8, c[0x4][0x28]             the callee's address (R_CUDA_64 against `vprintf`)
//! LEPC R20, `(.L_x_6)                 the return address: the instruction after the call
//! CALL.ABS.NOINC R8
//! .L_x_6: …                           the result in R4
//! ```
//!
//! sm_80 has no `LEPC Rd, target`; ptxas takes `LEPC R14` (its own address) and adds the
//! distance to the return point into R20:R21 before the call, and so does kiln.
//!
//! The cubin names the callee an undefined function symbol and lists it in the kernel's
//! `EIATTR_EXTERNS`, the call's offset in `EIATTR_SYSCALL_OFFSETS` (`crates/cubin`).
//!
//! Here: the argument words are copied into R4… (named physically, so the allocator never
//! hands those registers out in such a kernel), the callee's slot of the address table is
//! loaded, and `LEPC` + `CALL.ABS.NOINC` end a block; the code after the call starts a new one
//! (the `LEPC` target) and first re-establishes what the callee may have changed and the
//! kernel keeps in fixed registers (the global memory descriptor, the shared window base:
//! [`Cx::after_system_calls`]). Values live across the call stay out of the registers the
//! callee may change (`ir::abi::clobbered`, enforced by `regalloc`; predicates are kept in R
//! registers by `opt::ppressure`).

use ir::{Class, Inst, Operand, Reg, abi, op};
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode};

use crate::call::{CallOperands, Formal, plain_name, ty_size};
use crate::{Cx, LowerError, unsupported};

fn phys_r(index: u8, width: u8) -> Reg {
    Reg::Phys {
        class: Class::R,
        index,
        width,
    }
}

impl Cx {
    /// `call (results), name, (arguments);` of the system function `name`, declared by
    /// `function` (module docs).
    pub(crate) fn system_call(
        &mut self,
        node: &SyntaxNode,
        name: &str,
        function: &ast::Function,
        c: &CallOperands,
    ) -> Result<(), LowerError> {
        let Some(&slot) = self.system_slots.get(name) else {
            return Err(unsupported(
                node,
                format!("call of {name} (not declared at module scope)"),
            ));
        };
        let formals = Self::formals(function.params())?;
        let results = Self::formals(function.return_params())?;
        c.check_arity(node, name, formals.len(), results.len())?;
        // Every parameter and result is a 32- or 64-bit scalar.
        let size_of = |f: &Formal| match *f {
            Formal::Param {
                scalar: Some((s, _)),
                ..
            } if s == 4 || s == 8 => Some(s),
            Formal::Reg(ty) if matches!(ty_size(ty), 4 | 8) && ty != crate::Ty::Pred => {
                Some(ty_size(ty))
            }
            _ => None,
        };
        if formals
            .iter()
            .chain(&results)
            .any(|(_, f)| size_of(f).is_none())
        {
            return Err(unsupported(
                node,
                format!("call of {name} with parameters other than 32/64-bit scalars"),
            ));
        }
        if results.len() > 1 || results.first().is_some_and(|(_, f)| size_of(f) != Some(4)) {
            return Err(unsupported(
                node,
                format!("call of {name} with a result other than one 32-bit word"),
            ));
        }
        let guard = self.guard.take();
        let skip = guard.map(|g| self.skip_unless(g));
        // Argument words, then their registers.
        let mut next = abi::FIRST_ARG;
        let mut words: Vec<(u8, Reg)> = Vec::new();
        for ((_, formal), arg) in formals.iter().zip(&c.args) {
            let size = size_of(formal).expect("checked");
            let n = (size / 4) as u8;
            if n == 2 {
                next = next.next_multiple_of(2);
            }
            if next + n - 1 > abi::LAST_ARG {
                return Err(unsupported(
                    node,
                    format!("call of {name} with more argument words than R4–R15 hold"),
                ));
            }
            let arg_var = plain_name(arg).and_then(|n| self.param_vars.get(&n).copied());
            let src = match arg_var {
                Some(var) => {
                    let t = Reg::v(self.tmp(n), n);
                    self.read_param_var(arg.syntax(), var, 0, size, false, t)?;
                    t
                }
                None => self.value_reg(arg, size)?,
            };
            for k in 0..n {
                words.push((next + k, crate::sub(src, k)));
            }
            next += n;
        }
        let mut uses = Vec::new();
        for (index, src) in words {
            let d = phys_r(index, 1);
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(d), Operand::r(src)],
                vec![0],
            ));
            uses.push(d);
        }
        let target = self.global_addr(slot);
        let after = self.f.new_block();
        let ret = |k| phys_r(abi::RETURN_ADDRESS + k, 1);
        if self.target.forms.lepc_target {
            self.push(Inst::new(
                op!("LEPC"),
                vec![
                    Operand::r(phys_r(abi::RETURN_ADDRESS, 2)),
                    Operand::Label(after),
                ],
                vec![0],
            ));
        } else {
            // sm_80 has no `LEPC Rd, target`: `LEPC` gives its own address, and the distance
            // to the return point is added to it — the `Label` operand of this `IADD3` is
            // that distance, which `emit` prints as a number (`emit::encode`).
            let pc = self.tmp(2);
            self.push(Inst::new(
                op!("LEPC"),
                vec![Operand::r(Reg::v(pc, 2))],
                vec![0],
            ));
            self.add64(
                [ret(0), ret(1)],
                [Operand::r(Reg::part(pc, 0)), Operand::r(Reg::part(pc, 1))],
                [Operand::Label(after), Operand::rz()],
            );
        }
        let mut call = Inst::new(
            op!("CALL.ABS.NOINC"),
            vec![Operand::r(Reg::v(target, 2))],
            vec![],
        );
        call.implicit_uses = uses;
        self.push(call);
        self.start_block(after);
        self.after_system_calls.push(after);
        if !self.system_called.iter().any(|n| n == name) {
            self.system_called.push(name.to_string());
        }
        // The result, from R4.
        if let Some(ret) = c.rets.first() {
            let value = Reg::v(self.tmp(1), 1);
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(value), Operand::r(phys_r(abi::FIRST_ARG, 1))],
                vec![0],
            ));
            match plain_name(ret).and_then(|n| self.param_vars.get(&n).copied()) {
                Some(var) => self.write_param_var(node, var, 0, 4, value)?,
                None => {
                    let d = self.r_dst(ret)?;
                    if d.width() != 1 {
                        return Err(unsupported(ret.syntax(), "operand of another width"));
                    }
                    self.push(Inst::new(
                        op!("MOV"),
                        vec![Operand::r(d), Operand::r(value)],
                        vec![0],
                    ));
                }
            }
        }
        if let Some(end) = skip {
            self.start_block(end);
        }
        Ok(())
    }
}
