//! `atom` and `red` on global, shared and generic addresses.
//!
//! SASS forms are ptxas 13.0.88's (checked with `cuobjdump -sass` on sm_80 and sm_90):
//! * global `atom.OP.T d, [a], b` → `ATOMG.E.OP[.T].STRONG.GPU PT, d, [a.64+o], b` (sm_90 with
//!   `desc[UR4]`); generic → `ATOM.E...`; `cas` → `ATOMG.E.CAS[.64].STRONG.GPU PT, d, [a+o], b,
//!   c` (printed without `.64` and descriptor, as nvdisasm does; `b`, `c` an aligned pair);
//! * `red.global` → `RED.E.OP...` (sm_80) / `REDG.E.OP...` (sm_90) `[a.64+o], b`; generic
//!   `red` → `ATOM.E.OP... PT, RZ, [a.64+o], b` (ptxas emits no generic `RED`);
//! * shared: `ATOMS.OP[.T] d, [a+o], b` (`RZ` as `d` for `red`), `ATOMS.CAS d, [a], b, c`;
//! * type suffixes: `.S32`/`.S64` for signed min/max, `.64` for 64-bit integers,
//!   `.F32.FTZ.RN` for `add.f32`, `.F64.RN` for `add.f64`.
//!
//! Scopes `.cta`/`.gpu`/`.sys` select `.STRONG.SM/.GPU/.SYS`; `.release`/`.acquire`/
//! `.acq_rel` put the scope's `fence.acq_rel` sequence before and/or after the atomic. ptxas aggregates atomics on warp-uniform addresses (`REDUX` + one
//! thread); kiln issues one per thread. Forms kiln's SASS tables lack fail at encoding.
//! * shared `add` of `.f32`/`.f64`/`.u64`/`.s64`, and `and`/`or`/`xor`/`min`/`max`/`exch` of
//!   64-bit integers: ptxas's compare-and-swap loop ([`Cx::shared_rmw_loop`]).
//!
//! * generic `add` of `.f32`/`.f64`/`.u64`, and `and`/`or`/`xor`/`min`/`max`/`exch` of 64-bit
//!   integers: a `QSPC.E.S` test, then the shared loop on the shared address or the generic
//!   `ATOM.E.OP...` ([`Cx::generic_rmw`]).
//!
//! * `.noftz` half-precision adds on global memory: `ATOMG.E.ADD.F16x2.RN` /
//!   `RED[G].E.ADD.BF16x2.RN`; sm_90's vector adds (`.v2/.v4` of f32, f16x2, bf16x2):
//!   `ATOMG.E.ADD.F32x4.FTZ.RN`, `.F16x8.RN`, ... ([`Cx::vector_atom`]); `.L2::cache_hint`'s
//!   policy is dropped (a hint).
//!
//! * 16-bit `cas` and scalar `.f16`/`.bf16` `add` on global, shared and generic addresses:
//!   compare-and-swap loops on the word holding the half ([`Cx::sub_word_atom`],
//!   `atom_sub.rs`).
//!
//! Refused: 64-bit `cas` on generic addresses; float atomics other than
//! `add` off global memory, and 64-bit generic or shared `inc`/`dec` (more compare-and-swap
//! loops); `.f16x2`/`.bf16x2` atomics off global memory (compare-and-swap loops in ptxas's
//! code).

use ir::{Inst, Opcode, Operand, Reg, op};
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode};

use crate::atom_sub::SubWord;
use crate::{Cx, LowerError, MemSpace, Ty, desc_reg, malformed, sass_op, unsupported};

impl Cx {
    pub(crate) fn atom(
        &mut self,
        node: &SyntaxNode,
        is_red: bool,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        let mut space = MemSpace::Generic;
        let mut op = None;
        let mut ty = None;
        let (mut release, mut acquire) = (false, false);
        let mut scope = ".gpu";
        let mut noftz = false;
        let mut hint = false;
        let mut vector = 1u8;
        for m in mods {
            match m.as_str() {
                ".global" => space = MemSpace::Global,
                ".shared" | ".shared::cta" => space = MemSpace::Shared,
                ".relaxed" => {}
                ".acq_rel" => (release, acquire) = (true, true),
                ".release" => release = true,
                ".acquire" => acquire = true,
                ".cta" | ".gpu" | ".sys" => scope = m.as_str(),
                // The cluster scope is the GPU's on sm_90 (ptxas 13.0.88: `atom.cluster.or`
                // is `ATOM.E.OR.STRONG.GPU`, `red.cluster.global.add` `REDG.E.ADD.STRONG.GPU`).
                ".cluster" if self.target.forms.clusters => scope = m.as_str(),
                ".add" | ".min" | ".max" | ".inc" | ".dec" | ".and" | ".or" | ".xor" | ".exch"
                | ".cas" => op = Some(m[1..].to_ascii_uppercase()),
                ".b32" | ".u32" | ".s32" | ".f32" | ".b64" | ".u64" | ".s64" | ".f64"
                | ".f16x2" | ".bf16x2" | ".f16" | ".bf16" | ".b16" => ty = Some(m.as_str()),
                // Half-precision adds keep subnormals (`.noftz`, required by PTX for them).
                ".noftz" => noftz = true,
                // The L2 cache policy operand: a hint, dropped (the default descriptor).
                ".L2::cache_hint" => hint = true,
                ".v2" => vector = 2,
                ".v4" => vector = 4,
                ".v8" => vector = 8,
                other => {
                    return Err(unsupported(
                        node,
                        format!("{} modifier {other}", if is_red { "red" } else { "atom" }),
                    ));
                }
            }
        }
        let (Some(op), Some(ty)) = (op, ty) else {
            return Err(malformed(node, "atom/red without an operation or a type"));
        };
        let cas = op == "CAS";
        let want = match (is_red, cas) {
            (true, _) => 2,
            (false, true) => 4,
            (false, false) => 3,
        } + usize::from(hint);
        if ops.len() != want {
            return Err(malformed(node, format!("expected {want} operands")));
        }
        let words: u8 = if ty.ends_with("64") { 2 } else { 1 };
        let half = matches!(ty, ".f16x2" | ".bf16x2" | ".f16" | ".bf16");
        let float = ty.starts_with(".f") || half;
        if half && !noftz {
            return Err(malformed(node, "half-precision atomics need .noftz"));
        }
        // 16-bit atomics: compare-and-swap loops on the word holding the half (`atom_sub.rs`).
        let sub_word = match (op.as_str(), ty) {
            ("ADD", ".f16") => Some(SubWord::AddF16),
            ("ADD", ".bf16") => {
                // Its add is `HADD2.BF16_V2`: sm_90's.
                sass_op(node, "HADD2.BF16_V2")?;
                Some(SubWord::AddBf16)
            }
            ("CAS", ".b16") => Some(SubWord::Cas),
            (_, ".b16") => return Err(unsupported(node, "this 16-bit atomic")),
            _ => None,
        };
        if noftz && !half {
            return Err(malformed(node, ".noftz applies to half-precision atomics"));
        }
        if vector > 1 {
            let v = VectorAtom {
                is_red,
                space,
                op: &op,
                ty,
                n: vector,
                scope,
                release,
                acquire,
            };
            return self.vector_atom(node, &v, ops);
        }
        let suffix = match (op.as_str(), ty) {
            ("ADD", ".f32") => ".F32.FTZ.RN",
            ("ADD", ".f64") => ".F64.RN",
            // ptxas 13.0.88: `ATOMG.E.ADD.F16x2.RN`, `REDG.E.ADD.BF16x2.RN` (sm_80: `RED.E`);
            // scalar f16/bf16 adds are compare-and-swap loops (refused).
            ("ADD", ".f16x2") => ".F16x2.RN",
            ("ADD", ".bf16x2") => ".BF16x2.RN",
            _ if sub_word.is_some() => "",
            (_, ".f16" | ".bf16") => {
                return Err(unsupported(node, "scalar f16/bf16 atomics"));
            }
            (_, ".f32" | ".f64") => return Err(unsupported(node, "this floating-point atomic")),
            ("MIN" | "MAX", ".s32") => ".S32",
            ("MIN" | "MAX", ".s64") => ".S64",
            ("INC" | "DEC", t) if t != ".u32" => {
                return Err(malformed(node, "atom.inc/.dec take .u32"));
            }
            (_, _) if words == 2 => ".64",
            _ => "",
        };
        let shared = space == MemSpace::Shared;
        if half && sub_word.is_none() && space != MemSpace::Global {
            // ptxas builds these from compare-and-swap loops on shared-window addresses.
            return Err(unsupported(
                node,
                "half-precision atomics on shared or generic addresses",
            ));
        }
        // ptxas builds float and 64-bit arithmetic shared atomics from compare-and-swap
        // loops; kiln does the same for `add` and the 64-bit logic, min/max and exchange
        // ([`Cx::shared_rmw_loop`]). Shared 64-bit `exch` outside a generic address is
        // `ATOMS.EXCH.64` (below).
        let looped = (op == "ADD" && (float || words == 2))
            || (words == 2
                && !float
                && matches!(op.as_str(), "AND" | "OR" | "XOR" | "MIN" | "MAX" | "EXCH"));
        let add_loop = shared && looped && op != "EXCH";
        if shared && (float || (words == 2 && !matches!(op.as_str(), "EXCH" | "CAS"))) && !add_loop
        {
            return Err(unsupported(node, "this atomic on shared memory"));
        }
        // ptxas gives these a path for shared-window addresses (QSPC); kiln does the same
        // ([`Cx::generic_rmw`]).
        let generic_add = space == MemSpace::Generic && looped;
        if space == MemSpace::Generic && (float || words == 2) && !generic_add {
            return Err(unsupported(
                node,
                "64-bit or floating-point generic atomics other than add",
            ));
        }
        if cas && words == 2 && space == MemSpace::Generic {
            // ptxas adds a local-window fallback (`LD`, `SEL`s, `ST`) behind the generic one.
            return Err(unsupported(node, "64-bit atom.cas on a generic address"));
        }
        let desc_operand = self.target.forms.desc_operand;
        let addr_i = usize::from(!is_red);
        let (name, off) = self.address_name(&ops[addr_i])?;
        let offset = i32::try_from(off)
            .ok()
            .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
            .ok_or_else(|| unsupported(ops[addr_i].syntax(), "address offset out of range"))?;
        let mut implicit = Vec::new();
        let mem = if shared {
            let (base, offset) = if let Some(&at) = self.shared.get(&name) {
                let t = Reg::v(self.tmp(1), 1);
                self.shared_addr(t, at.wrapping_add(offset as u32));
                (t, 0)
            } else {
                let (r, rty) = *self.regs.get(&name).ok_or_else(|| {
                    unsupported(ops[addr_i].syntax(), format!("address of `{name}`"))
                })?;
                if rty == Ty::Pred {
                    return Err(unsupported(
                        ops[addr_i].syntax(),
                        "shared address register type",
                    ));
                }
                (Reg::part(r, 0), offset)
            };
            Operand::Mem {
                base,
                offset,
                desc: None,
            }
        } else {
            let r = self.global_base(&name, &ops[addr_i])?;
            self.needs_desc = true;
            if !desc_operand {
                implicit.push(desc_reg());
            }
            if cas {
                // nvdisasm prints CAS's 64-bit address as its low register, without the
                // descriptor; the whole pair stays live through an implicit use.
                implicit.push(Reg::v(r, 2));
                Operand::Mem {
                    base: Reg::part(r, 0),
                    offset,
                    desc: None,
                }
            } else {
                Operand::Mem {
                    base: Reg::v(r, 2),
                    offset,
                    desc: desc_operand.then(desc_reg),
                }
            }
        };
        let val_i = addr_i + 1;
        let b = self.reg_src(&ops[val_i], words)?;
        // The scope picks the strength (`.cta` → `.STRONG.SM`); shared-memory atomics are
        // the same ATOMS at every scope (ptxas's forms).
        let strong = match scope {
            ".cta" => "SM",
            ".sys" => "SYS",
            _ => "GPU",
        };
        // Release and acquire orders: the scope's `fence.acq_rel` before and after the
        // atomic (ptxas emits the release half before — MEMBAR.ALL.<scope>, ERRBAR — and
        // CCTL.IVALL after at .gpu; the full fence on both sides is at least as strong).
        let fence_mods = [".acq_rel".to_string(), scope.to_string()];
        if let Some(kind) = sub_word {
            let c = if cas {
                Some(self.reg_src(&ops[val_i + 1], 1)?)
            } else {
                None
            };
            if release {
                self.fence(node, "fence", &fence_mods)?;
            }
            let old = self.sub_word_atom(node, kind, space, strong, mem, b, c, implicit)?;
            if acquire {
                self.fence(node, "fence", &fence_mods)?;
            }
            if !is_red {
                let d = self.dst(&ops[0], 1)?;
                self.copy_words(d, old, 1);
            }
            return Ok(());
        }
        if add_loop || generic_add {
            if release {
                self.fence(node, "fence", &fence_mods)?;
            }
            let old = if add_loop {
                self.shared_rmw_loop(&op, ty, words, mem, b)
            } else {
                let atom = sass_op(node, &format!("ATOM.E.{op}{suffix}.STRONG.{strong}"))?;
                self.generic_rmw(atom, &op, ty, words, mem, b, implicit)
            };
            if acquire {
                self.fence(node, "fence", &fence_mods)?;
            }
            if !is_red {
                let d = self.dst(&ops[0], words)?;
                self.copy_words(d, old, words);
            }
            return Ok(());
        }
        // `cas` reads its compare and new values from one aligned register pair (`Rb`,
        // `Rb+1`), as ptxas always allocates them; the 64-bit one from an aligned quad (`Rb`,
        // `Rb+2` as printed: `ATOMG.E.CAS.64.STRONG.GPU PT, R4, [R2], R12, R14`).
        let (b, c) = if cas && words == 2 {
            let c = self.reg_src(&ops[val_i + 1], words)?;
            let quad = self.tmp(4);
            for (k, src) in [
                crate::sub(b, 0),
                crate::sub(b, 1),
                crate::sub(c, 0),
                crate::sub(c, 1),
            ]
            .into_iter()
            .enumerate()
            {
                self.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(Reg::part(quad, k as u8)), Operand::r(src)],
                    vec![0],
                ));
            }
            implicit.push(Reg::v(quad, 4));
            let half = |part| Reg::Virt {
                vreg: quad,
                part,
                width: 2,
            };
            (half(0), Some(half(2)))
        } else if cas {
            let c = self.reg_src(&ops[val_i + 1], words)?;
            let pair = self.tmp(2);
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(Reg::part(pair, 0)), Operand::r(b)],
                vec![0],
            ));
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(Reg::part(pair, 1)), Operand::r(c)],
                vec![0],
            ));
            implicit.push(Reg::v(pair, 2));
            (Reg::part(pair, 0), Some(Reg::part(pair, 1)))
        } else {
            (b, None)
        };
        let mnemonic = sass_op(
            node,
            &match (space, is_red) {
                (MemSpace::Shared, _) => format!("ATOMS.{op}{suffix}"),
                (MemSpace::Global, false) => format!("ATOMG.E.{op}{suffix}.STRONG.{strong}"),
                (MemSpace::Global, true) if self.target.forms.redg => {
                    format!("REDG.E.{op}{suffix}.STRONG.{strong}")
                }
                (MemSpace::Global, true) => format!("RED.E.{op}{suffix}.STRONG.{strong}"),
                // Generic reductions are atomics with `RZ` as destination (ptxas emits no generic
                // `RED`).
                (_, _) => format!("ATOM.E.{op}{suffix}.STRONG.{strong}"),
            },
        )?;
        if release {
            self.fence(node, "fence", &fence_mods)?;
        }
        let mut inst = if is_red {
            if shared {
                Inst::new(mnemonic, vec![Operand::rz(), mem, Operand::r(b)], vec![])
            } else if space == MemSpace::Generic {
                Inst::new(
                    mnemonic,
                    vec![Operand::pt(), Operand::rz(), mem, Operand::r(b)],
                    vec![],
                )
            } else {
                Inst::new(mnemonic, vec![mem, Operand::r(b)], vec![])
            }
        } else {
            // The old value goes to a fresh register (the atomic reads `b`/`c` as it writes).
            let tv = self.tmp(words);
            let t = Reg::v(tv, words);
            let mut operands = if shared {
                vec![Operand::r(t), mem, Operand::r(b)]
            } else {
                vec![Operand::pt(), Operand::r(t), mem, Operand::r(b)]
            };
            if let Some(c) = c {
                operands.push(Operand::r(c));
            }
            let d_i = if shared { 0 } else { 1 };
            let mut i = Inst::new(mnemonic, operands, vec![d_i]);
            i.implicit_uses = implicit.clone();
            self.push(i);
            if acquire {
                self.fence(node, "fence", &fence_mods)?;
            }
            let d = self.dst(&ops[0], words)?;
            self.copy_words(d, tv, words);
            return Ok(());
        };
        inst.implicit_uses = implicit;
        self.push(inst);
        if acquire {
            self.fence(node, "fence", &fence_mods)?;
        }
        Ok(())
    }

    /// A generic-address `add` of a float or 64-bit integer, or a 64-bit `and`/`or`/`xor`/
    /// `min`/`max`/`exch`: `QSPC.E.S` tells a shared-window address, which takes the shared
    /// compare-and-swap loop ([`Cx::shared_rmw_loop`]) on its shared address; any other
    /// address takes the generic `atom` (`ATOM.E.OP...`).
    /// ptxas 13.0.88 instead tries the generic atomic first and reads its predicate result
    /// (set when the hardware performed it) before falling back by space; both reach the
    /// same memory operation for global and shared addresses (PTX allows no others).
    #[allow(clippy::too_many_arguments)]
    fn generic_rmw(
        &mut self,
        atom: Opcode,
        op: &str,
        ty: &str,
        words: u8,
        mem: Operand,
        b: Reg,
        implicit: Vec<Reg>,
    ) -> ir::VReg {
        use ir::Guard;
        let Operand::Mem { base, offset, desc } = mem else {
            unreachable!("a memory operand")
        };
        let a = if offset == 0 {
            base
        } else {
            let t = self.tmp(2);
            self.add64(
                [Reg::part(t, 0), Reg::part(t, 1)],
                [
                    Operand::r(crate::sub(base, 0)),
                    Operand::r(crate::sub(base, 1)),
                ],
                [
                    Operand::Imm(i64::from(offset)),
                    Operand::Imm(i64::from(offset >> 31)),
                ],
            );
            Reg::v(t, 2)
        };
        let guard = self.guard.take();
        let skip = guard.map(|g| self.skip_unless(g));
        let result = self.tmp(words);
        let in_shared = Reg::v(self.ptmp(), 1);
        let mut q = Inst::new(
            op!("QSPC.E.S"),
            vec![
                Operand::r(in_shared),
                Operand::rz(),
                Operand::Mem {
                    base: crate::sub(a, 0),
                    offset: 0,
                    desc: None,
                },
            ],
            vec![0],
        );
        q.implicit_uses.push(a);
        self.push(q);
        let shared_path = self.f.new_block();
        let done = self.f.new_block();
        let mut to_shared = Inst::new(op!("BRA"), vec![Operand::Label(shared_path)], vec![]);
        to_shared.guard = Some(Guard {
            pred: in_shared,
            negated: false,
        });
        self.push(to_shared);
        let global_path = self.f.new_block();
        self.start_block(global_path);
        let mut i = Inst::new(
            atom,
            vec![
                Operand::pt(),
                Operand::r(Reg::v(result, words)),
                Operand::Mem {
                    base: a,
                    offset: 0,
                    desc,
                },
                Operand::r(b),
            ],
            vec![1],
        );
        i.implicit_uses = implicit;
        self.push(i);
        self.push(Inst::new(op!("BRA"), vec![Operand::Label(done)], vec![]));
        self.start_block(shared_path);
        let sa = self.shared_of_generic(a);
        let old = self.shared_rmw_loop(
            op,
            ty,
            words,
            Operand::Mem {
                base: sa,
                offset: 0,
                desc: None,
            },
            b,
        );
        self.copy_words(Reg::v(result, words), old, words);
        self.start_block(done);
        if let Some(end) = skip {
            self.start_block(end);
        }
        result
    }

    /// A shared-memory read-modify-write as ptxas 13.0.88 makes it (sm_80, sm_90) for `add`
    /// of a float or 64-bit integer and the 64-bit logic, min/max and exchange: a loop of
    /// `LDS` of the old value, the new value (`FADD`/`DADD`/a 64-bit add; `LOP3.LUT` per
    /// word; an `ISETP` pair and `SEL`s; `b` itself), `ATOMS.CAST.SPIN[.64]` storing it only
    /// if the word still holds the old value (result 1 if it did), `ISETP` and a branch back.
    /// The old value is the atomic's result. `add.f32` uses `FADD.FTZ` (PTX flushes
    /// `atom.add.f32`'s subnormal inputs and results; ptxas's loop uses a plain `FADD`).
    /// A guarded atomic branches around the loop.
    fn shared_rmw_loop(&mut self, op: &str, ty: &str, words: u8, mem: Operand, b: Reg) -> ir::VReg {
        use ir::Guard;
        let guard = self.guard.take();
        let skip = guard.map(|g| self.skip_unless(g));
        let head = self.f.new_block();
        self.start_block(head);
        let old = self.tmp(words);
        let new = self.tmp(words);
        let done = self.tmp(words);
        let (o, n) = (Reg::v(old, words), Reg::v(new, words));
        let load = if words == 2 {
            op!("LDS.64")
        } else {
            op!("LDS")
        };
        self.push(Inst::new(load, vec![Operand::r(o), mem.clone()], vec![0]));
        match (op, ty) {
            ("AND" | "OR" | "XOR", _) => {
                let lut = match op {
                    "AND" => 0xc0,
                    "OR" => 0xfc,
                    _ => 0x3c,
                };
                for k in 0..2 {
                    self.push(Inst::new(
                        op!("LOP3.LUT"),
                        vec![
                            Operand::r(Reg::part(new, k)),
                            Operand::r(Reg::part(old, k)),
                            Operand::r(crate::sub(b, k)),
                            Operand::rz(),
                            Operand::Hex(lut),
                            Operand::not(Reg::Zero(ir::Class::P)),
                        ],
                        vec![0],
                    ));
                }
            }
            ("MIN" | "MAX", _) => {
                // `old < b` over 64 bits (the high words signed for `.s64`), then each word
                // from `old` or `b`.
                let p = Reg::v(self.ptmp(), 1);
                self.push(Inst::new(
                    op!("ISETP.LT.U32.AND"),
                    vec![
                        Operand::r(p),
                        Operand::pt(),
                        Operand::r(Reg::part(old, 0)),
                        Operand::r(crate::sub(b, 0)),
                        Operand::pt(),
                    ],
                    vec![0],
                ));
                self.push(Inst::new(
                    if ty == ".s64" {
                        op!("ISETP.LT.AND.EX")
                    } else {
                        op!("ISETP.LT.U32.AND.EX")
                    },
                    vec![
                        Operand::r(p),
                        Operand::pt(),
                        Operand::r(Reg::part(old, 1)),
                        Operand::r(crate::sub(b, 1)),
                        Operand::pt(),
                        Operand::r(p),
                    ],
                    vec![0],
                ));
                let (if_less, otherwise) = if op == "MIN" { (o, b) } else { (b, o) };
                for k in 0..2 {
                    self.push(Inst::new(
                        op!("SEL"),
                        vec![
                            Operand::r(Reg::part(new, k)),
                            Operand::r(crate::sub(if_less, k)),
                            Operand::r(crate::sub(otherwise, k)),
                            Operand::r(p),
                        ],
                        vec![0],
                    ));
                }
            }
            ("EXCH", _) => {
                for k in 0..words {
                    self.push(Inst::new(
                        op!("MOV"),
                        vec![Operand::r(Reg::part(new, k)), Operand::r(crate::sub(b, k))],
                        vec![0],
                    ));
                }
            }
            (_, ".f32") => self.push(Inst::new(
                op!("FADD.FTZ"),
                vec![Operand::r(n), Operand::r(o), Operand::r(b)],
                vec![0],
            )),
            (_, ".f64") => self.push(Inst::new(
                op!("DADD"),
                vec![Operand::r(n), Operand::r(o), Operand::r(b)],
                vec![0],
            )),
            _ => self.add64(
                [Reg::part(new, 0), Reg::part(new, 1)],
                [Operand::r(Reg::part(old, 0)), Operand::r(Reg::part(old, 1))],
                [Operand::r(crate::sub(b, 0)), Operand::r(crate::sub(b, 1))],
            ),
        }
        let cas = if words == 2 {
            op!("ATOMS.CAST.SPIN.64")
        } else {
            op!("ATOMS.CAST.SPIN")
        };
        self.push(Inst::new(
            cas,
            vec![
                Operand::r(Reg::v(done, words)),
                mem,
                Operand::r(o),
                Operand::r(n),
            ],
            vec![0],
        ));
        let p = Reg::v(self.ptmp(), 1);
        self.push(Inst::new(
            op!("ISETP.EQ.U32.AND"),
            vec![
                Operand::r(p),
                Operand::pt(),
                Operand::r(Reg::part(done, 0)),
                Operand::Hex(1),
                Operand::pt(),
            ],
            vec![0],
        ));
        if words == 2 {
            self.push(Inst::new(
                op!("ISETP.EQ.U32.AND.EX"),
                vec![
                    Operand::r(p),
                    Operand::pt(),
                    Operand::r(Reg::part(done, 1)),
                    Operand::rz(),
                    Operand::pt(),
                    Operand::r(p),
                ],
                vec![0],
            ));
        }
        let mut back = Inst::new(op!("BRA"), vec![Operand::Label(head)], vec![]);
        back.guard = Some(Guard {
            pred: p,
            negated: true,
        });
        self.push(back);
        let after = self.f.new_block();
        self.start_block(after);
        if let Some(end) = skip {
            self.start_block(end);
        }
        old
    }
}

/// A vector atomic (`atom.global.v4.f32.add`, sm_90): what [`Cx::atom`] parsed.
struct VectorAtom<'a> {
    is_red: bool,
    space: MemSpace,
    op: &'a str,
    ty: &'a str,
    n: u8,
    scope: &'a str,
    release: bool,
    acquire: bool,
}

impl Cx {
    /// sm_90's vector atomic adds, ptxas 13.0.88's forms: `atom.global.v4.f32.add` →
    /// `ATOMG.E.ADD.F32x4.FTZ.RN.STRONG.GPU PT, d, [a], b` (`REDG.E...` for `red`, generic
    /// `ATOM.E...` with `RZ` for `red`), `.v2.f16x2` → `.F16x4.RN`, `.v4.bf16x2` →
    /// `.BF16x8.RN`; the elements in aligned register groups. Refused: `min`/`max` (ptxas
    /// refuses them for sm_90), vectors of scalar halves (ptxas packs them with `PRMT`), shared
    /// memory.
    fn vector_atom(
        &mut self,
        node: &SyntaxNode,
        v: &VectorAtom<'_>,
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        if !self.target.forms.vector_atomics {
            return Err(unsupported(node, "vector atomics before sm_90"));
        }
        let elems_per_word: u8 = match v.ty {
            ".f32" => 1,
            ".f16x2" | ".bf16x2" => 2,
            _ => return Err(unsupported(node, format!("vector atomics of {}", v.ty))),
        };
        if v.op != "ADD" {
            return Err(unsupported(
                node,
                format!("vector atom.{}", v.op.to_lowercase()),
            ));
        }
        if v.space == MemSpace::Shared {
            return Err(unsupported(node, "vector atomics on shared memory"));
        }
        let words = v.n;
        if words > 4 {
            return Err(malformed(node, "a vector atomic of more than 128 bits"));
        }
        let lanes = words * elems_per_word;
        let suffix = match v.ty {
            ".f32" => format!(".F32x{lanes}.FTZ.RN"),
            ".f16x2" => format!(".F16x{lanes}.RN"),
            _ => format!(".BF16x{lanes}.RN"),
        };
        let strong = match v.scope {
            ".cta" => "SM",
            ".sys" => "SYS",
            _ => "GPU",
        };
        let addr_i = usize::from(!v.is_red);
        let (name, off) = self.address_name(&ops[addr_i])?;
        let offset = i32::try_from(off)
            .ok()
            .filter(|o| (-(1 << 23)..(1 << 23)).contains(o))
            .ok_or_else(|| unsupported(ops[addr_i].syntax(), "address offset out of range"))?;
        let base = self.global_base(&name, &ops[addr_i])?;
        self.needs_desc = true;
        let desc_operand = self.target.forms.desc_operand;
        let mem = Operand::Mem {
            base: Reg::v(base, 2),
            offset,
            desc: desc_operand.then(desc_reg),
        };
        let implicit: Vec<Reg> = if desc_operand {
            vec![]
        } else {
            vec![desc_reg()]
        };
        let vec_of = |o: &ast::Operand| -> Result<Vec<ast::Operand>, LowerError> {
            match o {
                ast::Operand::Vector(v) => Ok(v.elements().collect()),
                _ => Err(malformed(o.syntax(), "a vector operand")),
            }
        };
        let srcs = vec_of(&ops[addr_i + 1])?;
        if srcs.len() != usize::from(words) {
            return Err(malformed(node, "vector operand of another length"));
        }
        // The values in an aligned group.
        let b = self.tmp(words);
        for (k, e) in srcs.iter().enumerate() {
            let r = self.reg_src(e, 1)?;
            self.push(Inst::new(
                op!("MOV"),
                vec![Operand::r(Reg::part(b, k as u8)), Operand::r(r)],
                vec![0],
            ));
        }
        let fence_mods = [".acq_rel".to_string(), v.scope.to_string()];
        if v.release {
            self.fence(node, "fence", &fence_mods)?;
        }
        let generic = v.space == MemSpace::Generic;
        let mnemonic = sass_op(
            node,
            &match (generic, v.is_red) {
                (false, true) => format!("REDG.E.ADD{suffix}.STRONG.{strong}"),
                (false, false) => format!("ATOMG.E.ADD{suffix}.STRONG.{strong}"),
                (true, _) => format!("ATOM.E.ADD{suffix}.STRONG.{strong}"),
            },
        )?;
        let bval = Operand::r(Reg::v(b, words));
        if v.is_red {
            let operands = if generic {
                vec![Operand::pt(), Operand::rz(), mem, bval]
            } else {
                vec![mem, bval]
            };
            let mut i = Inst::new(mnemonic, operands, vec![]);
            i.implicit_uses = implicit;
            self.push(i);
        } else {
            let d = self.tmp(words);
            let mut i = Inst::new(
                mnemonic,
                vec![Operand::pt(), Operand::r(Reg::v(d, words)), mem, bval],
                vec![1],
            );
            i.implicit_uses = implicit;
            self.push(i);
            let dsts = vec_of(&ops[0])?;
            if dsts.len() != usize::from(words) {
                return Err(malformed(node, "vector operand of another length"));
            }
            for (k, e) in dsts.iter().enumerate() {
                if matches!(e, ast::Operand::Name(n) if n.is_sink()) {
                    continue;
                }
                let r = self.dst(e, 1)?;
                self.push(Inst::new(
                    op!("MOV"),
                    vec![Operand::r(r), Operand::r(Reg::part(d, k as u8))],
                    vec![0],
                ));
            }
        }
        if v.acquire {
            self.fence(node, "fence", &fence_mods)?;
        }
        Ok(())
    }
}
