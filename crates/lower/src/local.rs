//! `.local` variables: the thread's stack frame.
//!
//! As ptxas 13.0.88 does it (checked with `cuobjdump -sass`/`-elf` on sm_80 and sm_90): the
//! kernel moves the stack pointer `R1` (initialized from `c[0x0][0x28]`) down by the frame
//! size (`IADD3 R1, R1, -frame, RZ`); a variable's local address is `R1 + offset`; `ld/st
//! .local` are `LDL`/`STL` with 32-bit addresses (`[R1+0x4]`); `cvta.local` adds the generic
//! window base of local memory, `c[0x0][0x20]` (64 bits), and `cvta.to.local` subtracts it.
//! The frame size goes to EIATTR_FRAME_SIZE / EIATTR_MIN_STACK_SIZE and to `-v`'s "bytes stack
//! frame".
//!
//! Variables are laid out in declaration order at their alignment and the frame is rounded
//! to a multiple of the largest alignment (at least 8). ptxas also promotes local arrays to registers and removes dead ones, so its
//! frames can be smaller than kiln's (never a correctness difference).

use ir::{Class, Inst, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode, DeclLike};

use crate::LoweredType;
use crate::{Cx, LowerError, STACK_POINTER, sub, unsupported};

/// `c[0x0][0x20]`: the generic address of the local window.
const LOCAL_WINDOW_CBANK: u32 = 0x20;

impl Cx {
    /// Places a function-scope `.local` declaration in the frame.
    pub(crate) fn local_decl(&mut self, v: &ast::VarDecl) -> Result<(), LowerError> {
        if !v.linkage().is_empty() {
            return Err(unsupported(v.syntax(), "extern or linked local variables"));
        }
        let tyt = v.ty().map(|t| t.text().to_string()).unwrap_or_default();
        let elem: u32 = match tyt.as_str() {
            ".b8" | ".u8" | ".s8" => 1,
            ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
            ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" => 4,
            ".b64" | ".u64" | ".s64" | ".f64" => 8,
            other => {
                return Err(unsupported(
                    v.syntax(),
                    format!("local variables of type {other}"),
                ));
            }
        };
        let elem = elem * v.vector().unwrap_or(1);
        let align = v.align().unwrap_or(elem).max(1);
        for d in v.declarators() {
            let Some(n) = d.name() else { continue };
            if d.initializer().is_some() {
                return Err(unsupported(d.syntax(), "local variables with initializers"));
            }
            let mut count = 1u32;
            for dim in d.array_dims() {
                let k = dim
                    .size()
                    .and_then(|e| e.as_int())
                    .ok_or_else(|| unsupported(d.syntax(), "local arrays of unknown size"))?;
                count = u32::try_from(k)
                    .ok()
                    .and_then(|k| count.checked_mul(k))
                    .ok_or_else(|| unsupported(d.syntax(), "local arrays this large"))?;
            }
            let at = self.frame_size.div_ceil(align) * align;
            self.frame_align = self.frame_align.max(align);
            self.frame_size = elem
                .checked_mul(count)
                .and_then(|size| at.checked_add(size))
                .filter(|e| *e <= 512 * 1024)
                .ok_or_else(|| unsupported(d.syntax(), "more than 512 KiB of local variables"))?;
            if self.locals.insert(n.text().to_string(), at).is_some() {
                return Err(unsupported(
                    d.syntax(),
                    "local variables with a repeated name",
                ));
            }
        }
        Ok(())
    }

    /// After the body is lowered (inlined functions place their `.local` variables as they
    /// are met): rounds the frame and moves the stack pointer down at the start of `entry`,
    /// right after `R1` is loaded.
    pub(crate) fn open_frame(&mut self, entry: ir::Block) {
        if self.frame_size == 0 {
            return;
        }
        // A multiple of the largest alignment (at least 8), so that the stack pointer keeps
        // every variable aligned.
        let align = self.frame_align.max(8);
        self.frame_size = self.frame_size.div_ceil(align) * align;
        let sp = self.stack_pointer();
        let frame = -(self.frame_size as i64);
        let inst = Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(sp),
                Operand::r(sp),
                Operand::Imm(frame),
                Operand::rz(),
            ],
            vec![0],
        );
        self.f.blocks[entry].insts.insert(1, inst);
    }

    pub(crate) fn stack_pointer(&self) -> Reg {
        Reg::Phys {
            class: Class::R,
            index: STACK_POINTER,
            width: 1,
        }
    }

    /// `dst` = the local address of frame offset `at` (`R1 + at`).
    pub(crate) fn local_addr(&mut self, dst: Reg, at: u32) {
        let sp = self.stack_pointer();
        if at == 0 {
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(dst), Operand::r(sp)],
                vec![0],
            ));
        } else {
            self.push(Inst::new(
                op!("IADD3"),
                vec![
                    Operand::r(dst),
                    Operand::r(sp),
                    Operand::Imm(i64::from(at)),
                    Operand::rz(),
                ],
                vec![0],
            ));
        }
    }

    /// `cvta.local` / `cvta.to.local` (64-bit): add or subtract the local window base.
    pub(crate) fn cvta_local(
        &mut self,
        node: &SyntaxNode,
        to: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        self.cvta_window(node, to, mods, ops, LOCAL_WINDOW_CBANK)
    }

    /// `cvta.const`/`cvta.to.const`: the generic address of constant bank 3 (the module's
    /// `.const` variables) is the 64-bit driver constant `c[0x0][0x50]` (`c[0x0][0xd0]` on
    /// sm_90), added or subtracted as for local memory (ptxas 13.0.88).
    pub(crate) fn cvta_const(
        &mut self,
        node: &SyntaxNode,
        to: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let window = self.target.driver.const_window;
        self.cvta_window(node, to, mods, ops, window)
    }

    /// Adds (`cvta`) or subtracts (`cvta.to`) the 64-bit window base at `c[0x0][window]`.
    fn cvta_window(
        &mut self,
        node: &SyntaxNode,
        to: bool,
        mods: &[String],
        ops: &[ast::Operand],
        window: u32,
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        if Self::ty_of(node, mods)?.words() != 2 {
            return Err(unsupported(node, "32-bit cvta"));
        }
        let a = self.reg_src(&ops[1], 2)?;
        let d = self.dst(&ops[0], 2)?;
        let t = self.tmp(2);
        let base = self.tmp(2);
        self.const_load(Operand::r(Reg::v(base, 2)), window, 2);
        let (blo, bhi) = (Reg::part(base, 0), Reg::part(base, 1));
        let b = if to {
            [Operand::neg(blo), Operand::not(bhi)]
        } else {
            [Operand::r(blo), Operand::r(bhi)]
        };
        self.add64(
            [Reg::part(t, 0), Reg::part(t, 1)],
            [Operand::r(sub(a, 0)), Operand::r(sub(a, 1))],
            b,
        );
        self.copy_words(d, t, 2);
        Ok(())
    }
}
