//! Instruction sequences written as SASS text over named temporaries.
//!
//! Math sequences (division, reciprocal, square root) are dozens of instructions with their
//! own branches; writing them as text in nvdisasm's syntax keeps them readable and close to
//! the listings they were checked against. [`Cx::emit_seq`] turns the text into IR:
//!
//! * one instruction per line, `;` optional, `//` comments; `NAME:` starts a block and
//!   `BRA NAME` branches to it (names are local to one sequence);
//! * `@$p` / `@!$p` guards an instruction;
//! * `%x` is a 32-bit register temporary, `%qN` a 64-bit one (an aligned pair) and `$p` a
//!   predicate temporary, created on first use; names given in `binds` stand for the
//!   instruction's operands instead; `%x.0` / `%x.1` is the low / high word of a 64-bit one;
//! * `RZ`, `PT`, `!PT`, `SRZ`; source modifiers `-%x`, `|%x|`, `-|%x|`, `!$p`; half selectors
//!   `%x.H0_H0`, `%x.H1_H1`; `%x.SIGN` (the sign bit as a predicate source);
//! * `0x1f`, `-0x40`: integer immediates; `#0xc0`: a LUT/flag field; `f:1.0`, `f:+INF`,
//!   `f:0x3f800000`: a float immediate (value or bits); `d:0.5`: a 64-bit float immediate.
//!
//! Which operands an instruction writes: the first; also the second for `ISETP`, `FSETP`,
//! `PLOP3`, a `LOP3` writing a predicate and an `IADD3` or `IMAD` writing a carry; none for
//! `BRA`.
//! The text is kiln's own and fixed: a malformed line is a bug in kiln and panics in tests.

use ir::{Class, Guard, Inst, Mnemonic, Opcode, Operand, Reg, op};
use rustc_hash::FxHashMap;

use crate::Cx;

impl Cx {
    /// Emits `text` (see the module docs). An enclosing PTX guard (`@p div...`) guards every
    /// instruction of a straight-line sequence, and becomes a branch around a sequence with
    /// its own blocks or guards.
    pub(crate) fn emit_seq(&mut self, text: &str, binds: &[(&str, Reg)]) {
        let outer = self.guard.take();
        let branches = text.lines().any(|l| {
            let l = l.split("//").next().unwrap_or("").trim();
            l.ends_with(':') || l.starts_with('@')
        });
        let skip = match outer {
            Some(g) if branches => Some(self.skip_unless(g)),
            _ => {
                self.guard = outer;
                None
            }
        };
        let mut names: FxHashMap<String, Reg> =
            binds.iter().map(|(n, r)| ((*n).to_string(), *r)).collect();
        let mut labels: FxHashMap<String, ir::Block> = FxHashMap::default();
        for raw in text.lines() {
            let line = raw.split("//").next().unwrap_or("").trim();
            let line = line.trim_end_matches(';').trim();
            if line.is_empty() {
                continue;
            }
            if let Some(label) = line.strip_suffix(':') {
                let b = *labels
                    .entry(label.to_string())
                    .or_insert_with(|| self.f.new_block());
                self.start_block(b);
                continue;
            }
            let (guard, rest) = match line.strip_prefix('@') {
                Some(r) => {
                    let (g, rest) = r.split_once(' ').expect("guard then instruction");
                    let (neg, g) = match g.strip_prefix('!') {
                        Some(g) => (true, g),
                        None => (false, g),
                    };
                    let pred = self.seq_reg(&mut names, g);
                    (Some(Guard { pred, negated: neg }), rest.trim())
                }
                None => (None, line),
            };
            let (op, args) = rest.split_once(' ').unwrap_or((rest, ""));
            let mut operands = Vec::new();
            for a in args.split(',').map(str::trim).filter(|a| !a.is_empty()) {
                operands.push(self.seq_operand(&mut names, &mut labels, a));
            }
            let op = Opcode::parse(op).expect("kiln's sequences spell opcodes of the SASS tables");
            let base = op.mnemonic();
            let is_pred = |o: &Operand| matches!(o, Operand::Reg { reg, .. } if self.seq_class(*reg) == Class::P);
            let defs = match base {
                Mnemonic::BRA | Mnemonic::WARPSYNC | Mnemonic::EXIT => vec![],
                Mnemonic::ISETP | Mnemonic::FSETP | Mnemonic::DSETP | Mnemonic::PLOP3 => vec![0, 1],
                Mnemonic::LOP3 if operands.first().is_some_and(is_pred) => vec![0, 1],
                Mnemonic::IADD3 | Mnemonic::IMAD if operands.get(1).is_some_and(is_pred) => {
                    vec![0, 1]
                }
                _ => vec![0],
            };
            let is_bra = base == Mnemonic::BRA;
            self.widen_pair_addend(op, &defs, &mut operands);
            let mut inst = Inst::new(op, operands, defs);
            inst.guard = guard;
            self.push(inst);
            if is_bra {
                let next = self.f.new_block();
                self.start_block(next);
            }
        }
        if let Some(end) = skip {
            self.start_block(end);
            self.guard = outer;
        }
    }

    /// `IMAD.HI` and `IMAD.WIDE` read their addend `c` as a register pair (the 64-bit
    /// addend of the 64-bit product; `crates/hazard/data/effects.txt`), which the listings
    /// the sequences copy name by its low word (`IMAD.HI.U32 R10, P1, R9, R13, R10`, written
    /// `%q10.0`): the IR names the pair, so that liveness, allocation and every pass see
    /// both words read.
    fn widen_pair_addend(&self, op: Opcode, defs: &[usize], operands: &mut [Operand]) {
        let wide_addend = op.mnemonic() == Mnemonic::IMAD
            && (op.has(ir::modifier!("HI")) || op.has(ir::modifier!("WIDE")));
        if !wide_addend {
            return;
        }
        let c = (0..operands.len()).filter(|k| !defs.contains(k)).nth(2);
        if let Some(Operand::Reg {
            reg:
                Reg::Virt {
                    vreg,
                    part: 0,
                    width,
                },
            ..
        }) = c.map(|k| &mut operands[k])
            && *width == 1
            && self.f.vregs[*vreg].width >= 2
        {
            *width = 2;
        }
    }

    /// Starts code that runs only where `g` holds: branches on its negation to a new block,
    /// returned for the caller to start after that code.
    pub(crate) fn skip_unless(&mut self, g: Guard) -> ir::Block {
        let end = self.f.new_block();
        let mut bra = Inst::new(op!("BRA"), vec![Operand::Label(end)], vec![]);
        bra.guard = Some(Guard {
            pred: g.pred,
            negated: !g.negated,
        });
        self.push(bra);
        let next = self.f.new_block();
        self.start_block(next);
        end
    }

    fn seq_class(&self, r: Reg) -> Class {
        match r {
            Reg::Virt { vreg, .. } => self.f.vregs[vreg].class,
            Reg::Phys { class, .. } | Reg::Zero(class) => class,
        }
    }

    fn seq_reg(&mut self, names: &mut FxHashMap<String, Reg>, name: &str) -> Reg {
        match name {
            "RZ" => return Reg::Zero(Class::R),
            "PT" => return Reg::Zero(Class::P),
            _ => {}
        }
        if let Some(r) = names.get(name) {
            return *r;
        }
        let r = if name.starts_with('$') {
            Reg::v(self.ptmp(), 1)
        } else {
            assert!(name.starts_with('%'), "sequence operand `{name}`");
            let w = if name.starts_with("%q") { 2 } else { 1 };
            Reg::v(self.tmp(w), w)
        };
        names.insert(name.to_string(), r);
        r
    }

    fn seq_operand(
        &mut self,
        names: &mut FxHashMap<String, Reg>,
        labels: &mut FxHashMap<String, ir::Block>,
        a: &str,
    ) -> Operand {
        if let Some(h) = a.strip_prefix("#0x") {
            return Operand::Hex(u32::from_str_radix(h, 16).expect("hex field"));
        }
        if let Some(d) = a.strip_prefix("d:") {
            let v = match d {
                "+INF" => f64::INFINITY,
                "-INF" => f64::NEG_INFINITY,
                _ => d.parse::<f64>().expect("double literal"),
            };
            return Operand::F64(v.to_bits());
        }
        if let Some(f) = a.strip_prefix("f:") {
            let bits = match f {
                "+INF" => f32::INFINITY.to_bits(),
                "-INF" => f32::NEG_INFINITY.to_bits(),
                _ => match f.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16).expect("float bits"),
                    None => f.parse::<f32>().expect("float literal").to_bits(),
                },
            };
            return Operand::F32(bits);
        }
        let (neg_int, digits) = match a.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, a),
        };
        if let Some(h) = digits.strip_prefix("0x") {
            let v = i64::from_str_radix(h, 16).expect("immediate");
            return Operand::Imm(if neg_int { -v } else { v });
        }
        if a == "SRZ" {
            // `CS2R %q, SRZ`: a 64-bit zero.
            return Operand::Special("SRZ");
        }
        let zero_reg = matches!(a.split('.').next(), Some("RZ" | "PT"));
        if a.starts_with(|c: char| c.is_ascii_uppercase()) && !zero_reg {
            let b = *labels
                .entry(a.to_string())
                .or_insert_with(|| self.f.new_block());
            return Operand::Label(b);
        }
        let mut s = a;
        let (mut neg, mut not, mut abs) = (false, false, false);
        if let Some(r) = s.strip_prefix('-') {
            neg = true;
            s = r;
        }
        if let Some(r) = s.strip_prefix('!') {
            not = true;
            s = r;
        }
        if let Some(r) = s.strip_prefix('|').and_then(|r| r.strip_suffix('|')) {
            abs = true;
            s = r;
        }
        let (s, sel) = if let Some(r) = s.strip_suffix(".H0_H0") {
            (r, ir::Sel::H0H0)
        } else if let Some(r) = s.strip_suffix(".H1_H1") {
            (r, ir::Sel::H1H1)
        } else if let Some(r) = s.strip_suffix(".SIGN") {
            (r, ir::Sel::Sign)
        } else {
            (s, ir::Sel::None)
        };
        let (s, word) = if let Some(r) = s.strip_suffix(".0") {
            (r, Some(0))
        } else if let Some(r) = s.strip_suffix(".1") {
            (r, Some(1))
        } else {
            (s, None)
        };
        let mut reg = self.seq_reg(names, s);
        if let Some(w) = word {
            reg = crate::sub(reg, w);
        }
        Operand::Reg {
            reg,
            neg,
            not,
            abs,
            sel,
        }
    }
}
