//! `cp.async` (sm_80 and later): copies from global to shared memory that complete
//! asynchronously, and the groups that wait for them, as ptxas 13.0.88 writes them on sm_80,
//! sm_86, sm_89 and sm_90 (`test-data/codegen/cp_async.ptx`):
//!
//! * `cp.async.{ca,cg}.shared{::cta}.global [d], [s], size` → `LDGSTS.E[.BYPASS][.LTCnB]
//!   [.64|.128] [d], [s.64]` (`.cg` is `.BYPASS`, the L2 prefetch size `.LTC64B/128B/256B`);
//! * with a `src-size` n: the source address plus `(size - n) % size` and `.ZFILL` (the
//!   address's low bits are the bytes to zero), the predicate operand `n != 0`; a literal n
//!   goes into the offset. The learned tables have `.ZFILL` only for 4-byte copies and
//!   `.cg` 16-byte ones (ptxas's forms in the corpus): 8-byte and `.ca` 16-byte copies with a
//!   src-size fail closed at encoding;
//! * with an `ignore-src` predicate p: the predicate operand `!p` (zeros where p holds);
//! * `cp.async.commit_group` → `LDGDEPBAR`, `cp.async.wait_group N` → `DEPBAR.LE SB0, N`,
//!   `cp.async.wait_all` → `LDGDEPBAR` then `DEPBAR.LE SB0, 0x0` (the scheduler leaves
//!   scoreboard 0 to these in a kernel that has them);
//! * on sm_86 and later, three never-executed `@!PT LDS RZ, [RZ]` before an `LDGSTS` unless
//!   the previous instruction of the block that touches memory is an `LDGSTS`.
//!
//! `.L2::cache_hint`'s policy is dropped (a hint: the copy reads the same memory).
//! `cp.async.mbarrier.arrive` and the bulk copy to shared memory are in `mbarrier.rs`; the
//! other bulk copies are refused.

use super::*;
use ir::Mnemonic;

impl Cx {
    pub(crate) fn cp_async(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        if mods.first().map(String::as_str) != Some(".async") {
            return Err(unsupported(node, format!("cp{}", mods.concat())));
        }
        let rest = &mods[1..];
        match rest.first().map(String::as_str) {
            Some(".commit_group") if rest.len() == 1 => {
                Self::need(node, ops, 0)?;
                self.push(Inst::new(op!("LDGDEPBAR"), vec![], vec![]));
                Ok(())
            }
            Some(".wait_group") if rest.len() == 1 => {
                Self::need(node, ops, 1)?;
                let n = ops[0].as_int().filter(|n| *n <= 63).ok_or_else(|| {
                    unsupported(ops[0].syntax(), "this cp.async.wait_group count")
                })?;
                self.depbar(n as i64);
                Ok(())
            }
            Some(".wait_all") if rest.len() == 1 => {
                Self::need(node, ops, 0)?;
                self.push(Inst::new(op!("LDGDEPBAR"), vec![], vec![]));
                self.depbar(0);
                Ok(())
            }
            Some(".ca" | ".cg") => self.cp_async_copy(node, rest, ops),
            Some(".mbarrier") => self.cp_async_mbarrier_arrive(node, mods, ops),
            Some(".bulk") => self.cp_async_bulk(node, mods, ops),
            _ => Err(unsupported(node, format!("cp{}", mods.concat()))),
        }
    }

    /// `DEPBAR.LE SB0, n`: waits until at most `n` committed groups are in flight.
    fn depbar(&mut self, n: i64) {
        self.push(Inst::new(
            op!("DEPBAR.LE"),
            vec![Operand::Special("SB0"), Operand::Imm(n)],
            vec![],
        ));
    }

    fn cp_async_copy(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let (mut bypass, mut prefetch, mut hint) = (false, None, false);
        let (mut shared, mut global) = (false, false);
        for m in mods {
            match m.as_str() {
                ".ca" => {}
                ".cg" => bypass = true,
                ".shared" | ".shared::cta" => shared = true,
                ".global" => global = true,
                ".L2::64B" => prefetch = Some(".LTC64B"),
                ".L2::128B" => prefetch = Some(".LTC128B"),
                ".L2::256B" => prefetch = Some(".LTC256B"),
                ".L2::cache_hint" => hint = true,
                other => return Err(unsupported(node, format!("cp.async modifier {other}"))),
            }
        }
        if !shared || !global {
            return Err(malformed(node, "cp.async copies .global to .shared"));
        }
        // d, s, size, then an optional src-size or ignore-src, then the cache policy.
        let fixed = 3 + usize::from(hint);
        if ops.len() != fixed && ops.len() != fixed + 1 {
            return Err(unsupported(
                node,
                format!("this form with {} operands", ops.len()),
            ));
        }
        let size = ops[2]
            .as_int()
            .filter(|s| matches!(s, 4 | 8 | 16))
            .ok_or_else(|| malformed(ops[2].syntax(), "cp.async copies 4, 8 or 16 bytes"))?;
        if bypass && size != 16 {
            return Err(malformed(node, "cp.async.cg copies 16 bytes"));
        }
        let extra = (ops.len() == fixed + 1).then(|| &ops[3]);
        let (dname, doff) = self.address_name(&ops[0])?;
        let dst = self.window_mem(&ops[0], &dname, doff, false)?;
        let (sname, soff) = self.address_name(&ops[1])?;
        let mut base = self.global_base(&sname, &ops[1])?;
        let mut offset = soff;
        // The predicate operand: copy where it holds, zeros elsewhere.
        let mut copy = None;
        let mut zfill = false;
        match extra {
            None => {}
            Some(o) if self.is_predicate(o) => {
                let mut p = self.pred_src(o)?;
                if let Operand::Reg { not, .. } = &mut p {
                    *not = !*not;
                }
                copy = Some(p);
            }
            Some(o) => match self.src(o)? {
                Src::Imm(n) if n == size => {}
                Src::Imm(n) if (1..size).contains(&n) => {
                    offset += (size - n) as i64;
                    zfill = true;
                }
                Src::Imm(_) => {
                    return Err(unsupported(o.syntax(), "this cp.async src-size"));
                }
                _ => {
                    let n = self.reg_src(o, 1)?;
                    // A non-negative offset joins the adjustment: sm_80's tables know
                    // `LDGSTS.E.ZFILL [R+o], [R.64], P` but not with a source offset too.
                    let folded = u32::try_from(offset).ok().filter(|o| *o < 1 << 23);
                    base = self.zfill_source(base, n, size as u32, folded.unwrap_or(0));
                    if folded.is_some() {
                        offset = 0;
                    }
                    let p = Reg::v(self.ptmp(), 1);
                    self.push(Inst::new(
                        op!("ISETP.NE.U32.AND"),
                        vec![
                            Operand::r(p),
                            Operand::pt(),
                            Operand::r(n),
                            Operand::rz(),
                            Operand::pt(),
                        ],
                        vec![0, 1],
                    ));
                    copy = Some(Operand::r(p));
                    zfill = true;
                }
            },
        }
        let offset = i32::try_from(offset)
            .ok()
            .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
            .ok_or_else(|| unsupported(ops[1].syntax(), "address offset out of range"))?;
        self.needs_desc = true;
        let desc_operand = self.target.forms.desc_operand;
        let src = Operand::Mem {
            base: Reg::v(base, 2),
            offset,
            desc: desc_operand.then(desc_reg),
        };
        let mut name = String::from("LDGSTS.E");
        if bypass {
            name.push_str(".BYPASS");
        }
        if let Some(p) = prefetch {
            name.push_str(p);
        }
        name.push_str(match size {
            8 => ".64",
            16 => ".128",
            _ => "",
        });
        if zfill {
            name.push_str(".ZFILL");
        }
        let mut operands = vec![dst, src];
        operands.extend(copy);
        let mut inst = Inst::new(sass_op(node, &name)?, operands, vec![]);
        if !desc_operand {
            // sm_80's LDGSTS reads the memory descriptor from UR4 without printing it.
            inst.implicit_uses.push(desc_reg());
        }
        if self.target.forms.ldgsts_lds_guard && !self.follows_ldgsts() {
            for _ in 0..3 {
                let mut guard = Inst::new(
                    op!("LDS"),
                    vec![
                        Operand::r(Reg::Zero(Class::R)),
                        Operand::Mem {
                            base: Reg::Zero(Class::R),
                            offset: 0,
                            desc: None,
                        },
                    ],
                    vec![0],
                );
                guard.guard = Some(Guard {
                    pred: Reg::Zero(Class::P),
                    negated: true,
                });
                self.push(guard);
            }
        }
        self.push(inst);
        Ok(())
    }

    /// Whether `o` names a predicate (possibly negated).
    fn is_predicate(&self, o: &ast::Operand) -> bool {
        let inner = match o {
            ast::Operand::Prefix(p) if p.op().is_some_and(|t| t.text() == "!") => p.expr(),
            _ => Some(o.clone()),
        };
        inner.is_some_and(
            |i| matches!(self.src(&i), Ok(Src::Reg(r, 1)) if self.f.vregs[r].class == Class::P),
        )
    }

    /// `base + (size - n) % size + offset` in a new 64-bit register: the source of a `.ZFILL`
    /// copy of `n` bytes (ptxas's `IADD3`, `LOP3`, then a 64-bit add).
    fn zfill_source(&mut self, base: VReg, n: Reg, size: u32, offset: u32) -> VReg {
        let k = Reg::v(self.tmp(1), 1);
        self.push(Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(k),
                Operand::neg(n),
                Operand::Imm(i64::from(size)),
                Operand::rz(),
            ],
            vec![0],
        ));
        let adj = Reg::v(self.tmp(1), 1);
        self.push(Inst::new(
            op!("LOP3.LUT"),
            vec![
                Operand::r(adj),
                Operand::r(k),
                Operand::Imm(i64::from(size - 1)),
                Operand::rz(),
                Operand::Hex(0xc0),
                Operand::not(Reg::Zero(Class::P)),
            ],
            vec![0],
        ));
        if offset != 0 {
            self.push(Inst::new(
                op!("IADD3"),
                vec![
                    Operand::r(adj),
                    Operand::r(adj),
                    Operand::Imm(i64::from(offset)),
                    Operand::rz(),
                ],
                vec![0],
            ));
        }
        let t = self.tmp(2);
        let carry = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(Reg::part(t, 0)),
                Operand::r(carry),
                Operand::r(Reg::part(base, 0)),
                Operand::r(adj),
                Operand::rz(),
            ],
            vec![0, 1],
        ));
        self.push(Inst::new(
            op!("IADD3.X"),
            vec![
                Operand::r(Reg::part(t, 1)),
                Operand::r(Reg::part(base, 1)),
                Operand::rz(),
                Operand::rz(),
                Operand::r(carry),
                Operand::not(Reg::Zero(Class::P)),
            ],
            vec![0],
        ));
        t
    }

    /// Whether the current block's last instruction that touches memory or synchronizes is
    /// an `LDGSTS` (then ptxas writes no `@!PT LDS` before the next one).
    fn follows_ldgsts(&self) -> bool {
        let insts = &self.f.blocks[self.cur].insts;
        for i in insts.iter().rev() {
            match i.mnemonic() {
                Mnemonic::LDGSTS => return true,
                Mnemonic::LDGDEPBAR => {}
                m if ir::kind::is_lane_arithmetic(m) || ir::kind::is_uniform_arithmetic(m) => {}
                _ => return false,
            }
        }
        false
    }
}
