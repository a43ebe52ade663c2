//! Decoding words with a [`Table`] and printing them as nvdisasm does.

use crate::control::Control;
use crate::table::{Encoding, FloatFormat, GUARD_MASK, SlotSpec, Table, gather};
use crate::text::SlotKind;

/// A typed operand value of a decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'t> {
    /// Register, predicate, barrier or integer immediate (see [`SlotKind`]).
    Int(SlotKind, i128),
    /// A branch target: an absolute code address.
    Target(i128),
    /// A float immediate: its format and raw bits (printed like nvdisasm by [`Value::text`]).
    Float(FloatFormat, u64),
    /// A literal printed the same for every word of the encoding (e.g. a fixed float).
    Fixed(&'t str),
}

/// The guard predicate of an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard {
    pub uniform: bool,
    /// 0..=7, 7 = `PT`.
    pub pred: u8,
    pub negated: bool,
}

/// One decoded instruction: its encoding (template), slot values, guard and control field.
#[derive(Debug, Clone)]
pub struct Instruction<'t> {
    pub word: u128,
    pub encoding: &'t Encoding,
    pub guard: Option<Guard>,
    pub values: Values<'t>,
    pub control: Control,
}

/// Operand values that fit inline (no allocation per decoded instruction); derefs to a
/// slice, in template order.
#[derive(Debug, Clone)]
pub struct Values<'t> {
    len: u8,
    inline: [Value<'t>; INLINE_VALUES],
    /// All values, when there are more than fit inline.
    spill: Vec<Value<'t>>,
}

const INLINE_VALUES: usize = 8;

impl<'t> Values<'t> {
    fn new() -> Values<'t> {
        Values {
            len: 0,
            inline: [Value::Int(SlotKind::Hex, 0); INLINE_VALUES],
            spill: Vec::new(),
        }
    }

    fn push(&mut self, v: Value<'t>) {
        let n = usize::from(self.len);
        if n < INLINE_VALUES && self.spill.is_empty() {
            self.inline[n] = v;
            self.len += 1;
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.inline);
            }
            self.spill.push(v);
        }
    }
}

impl<'t> std::ops::Deref for Values<'t> {
    type Target = [Value<'t>];
    fn deref(&self) -> &[Value<'t>] {
        if self.spill.is_empty() {
            &self.inline[..usize::from(self.len)]
        } else {
            &self.spill
        }
    }
}

impl<'a, 't> IntoIterator for &'a Values<'t> {
    type Item = &'a Value<'t>;
    type IntoIter = std::slice::Iter<'a, Value<'t>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl PartialEq for Values<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Instruction<'_> {
    /// Bits of the word that the printed text does not determine (outside the fixed bits,
    /// operand fields, guard and control field), XOR the table's defaults, plus the payload
    /// bits of a NaN float literal that differ from the assembler's NaN: zero for most words
    /// as the probe saw them.
    pub fn hidden_bits(&self) -> u128 {
        let free = !self.encoding.determined_mask();
        let mut h = (self.word ^ self.encoding.defaults) & free;
        // A NaN literal prints without its payload: the payload bits that differ from the
        // NaN the assembler writes for that text are hidden too.
        for s in &self.encoding.slots {
            if let SlotSpec::Float { format, bits } = s {
                let raw = gather(self.word, bits);
                let canon = crate::encode::float_bits(*format, &format.render(raw)).unwrap_or(raw);
                for (i, b) in bits.iter().enumerate() {
                    if (raw ^ canon) >> i & 1 == 1 {
                        h |= 1u128 << b;
                    }
                }
            }
        }
        h
    }

    /// The control field with [`Control::hidden`] filled in: its text plus the instruction
    /// text re-assembles to exactly this word.
    pub fn full_control(&self) -> Control {
        Control {
            hidden: self.hidden_bits(),
            ..self.control
        }
    }

    /// The mnemonic with its modifiers, e.g. `IMAD.MOV.U32`.
    pub fn opcode(&self) -> &str {
        let t = &self.encoding.template;
        &t[..t.find(' ').unwrap_or(t.len())]
    }

    /// Prints the instruction like `nvdisasm` (guard, mnemonic, operands; no ` ;`). Branch
    /// targets go through `label` (nvdisasm `-c` prints them as `` `(.L_x_N) ``); without a
    /// label they print as hex addresses like `nvdisasm --binary`.
    pub fn text(&self, label: &dyn Fn(i128) -> Option<String>) -> String {
        let mut out = String::with_capacity(48);
        if let Some(g) = self.guard.filter(|g| g.pred != 7 || g.negated) {
            out.push('@');
            if g.negated {
                out.push('!');
            }
            let kind = if g.uniform { SlotKind::Up } else { SlotKind::P };
            kind.render(i128::from(g.pred), &mut out);
            out.push(' ');
        }
        let mut vals = self.values.iter();
        let mut chars = self.encoding.template.chars();
        while let Some(c) = chars.next() {
            match c {
                '%' => match vals.next() {
                    Some(Value::Int(k, v)) => k.render(*v, &mut out),
                    Some(Value::Target(t)) => match label(*t) {
                        Some(l) => out.push_str(&l),
                        None => SlotKind::Hex.render(*t, &mut out),
                    },
                    Some(Value::Float(f, raw)) => out.push_str(&f.render(*raw)),
                    Some(Value::Fixed(t)) => out.push_str(t),
                    None => {}
                },
                '^' => {
                    let k = chars.next().and_then(|d| d.to_digit(10)).unwrap_or(9);
                    if k < 4 && self.control.reuse >> k & 1 == 1 {
                        out.push_str(".reuse");
                    }
                }
                c => out.push(c),
            }
        }
        out
    }
}

impl Table {
    /// Decodes one word at code address `pc`; `None` when no encoding matches (print it with
    /// [`unknown_text`]).
    ///
    /// A word no encoding matches may still decode through an encoding and modifier flags
    /// ([`Table::compose_lookup`]).
    pub fn decode(&self, word: u128, pc: u64) -> Option<Instruction<'_>> {
        match self.lookup_index(word) {
            Some(ei) => Some(self.decode_as(ei, word, pc)),
            None => {
                let (base, e) = self.compose_lookup(word)?;
                Some(self.decode_with(e, self.encodings.fields(base), word, pc))
            }
        }
    }

    /// Decodes `word` at `pc` with encoding `ei` (an index into `encodings`), whether or not
    /// it is the one [`Table::lookup`] would choose (the probe compares candidates).
    /// Decodes `word` at `pc` as encoding `base` with the flag bits `set` applied
    /// ([`Table::compose_with`]); `None` when those flags do not compose.
    pub fn decode_composed(
        &self,
        base: usize,
        set: u128,
        word: u128,
        pc: u64,
    ) -> Option<Instruction<'_>> {
        let e = self.compose_with(base, set)?;
        Some(self.decode_with(e, self.encodings.fields(base), word, pc))
    }

    pub fn decode_as(&self, ei: usize, word: u128, pc: u64) -> Instruction<'_> {
        self.decode_with(&self.encodings[ei], self.encodings.fields(ei), word, pc)
    }

    fn decode_with<'t>(
        &'t self,
        e: &'t Encoding,
        fast: &[Option<(u8, u8, bool)>],
        word: u128,
        pc: u64,
    ) -> Instruction<'t> {
        let guard = e.guard.map(|uniform| Guard {
            uniform,
            pred: ((word >> 12) & 7) as u8,
            negated: (word >> 15) & 1 == 1,
        });
        let mut values = Values::new();
        for (s, f) in e.slots.iter().zip(fast) {
            values.push(match s {
                SlotSpec::Linear {
                    kind,
                    c,
                    pcrel,
                    bits,
                } => {
                    let mut v = *c;
                    if let Some((lo, n, signed)) = *f {
                        let raw = (word >> lo) as u64 & (u64::MAX >> (64 - u32::from(n)));
                        let x = i128::from(raw);
                        v += if signed && raw >> (n - 1) & 1 == 1 {
                            x - (1i128 << n)
                        } else {
                            x
                        };
                    } else {
                        for &(b, w) in bits {
                            if (word >> b) & 1 == 1 {
                                v += w;
                            }
                        }
                    }
                    if *pcrel {
                        Value::Target(v + i128::from(pc))
                    } else {
                        Value::Int(*kind, v)
                    }
                }
                SlotSpec::Float { format, bits } => Value::Float(*format, gather(word, bits)),
                SlotSpec::Const {
                    kind: SlotKind::Float,
                    text,
                    ..
                } => Value::Fixed(text),
                SlotSpec::Const { kind, value, .. } => Value::Int(*kind, *value),
            });
        }
        Instruction {
            word,
            encoding: e,
            guard,
            values,
            control: Control::from_word(word),
        }
    }

    /// The control field of a decoded instruction with [`Control::hidden`] set so that its
    /// text plus the instruction's text (branch targets as addresses) assembles at `pc` to
    /// exactly `d.word`. Usually that is [`Instruction::full_control`]; when another encoding
    /// prints the same text and the assembler would pick it (sm_80 `STL [R1+0x8], R2` exists
    /// as opcode 0x387 and as 0x987 with `URZ`), `hidden` is the word XOR the assembler's
    /// word for the bare text.
    pub fn full_control(&self, d: &Instruction<'_>, pc: u64) -> Control {
        let c = d.full_control();
        let text = d.text(&|_| None);
        let line = |c: Control| format!("{} {text}", c.to_text());
        let asm = |c: Control| crate::encode::assemble_line(self, &line(c), pc, &|_| None);
        if asm(c) == Ok(d.word) {
            return c;
        }
        match asm(Control { hidden: 0, ..c }) {
            Ok(w0) => Control {
                hidden: (d.word ^ w0) & !crate::control::CONTROL_MASK,
                ..c
            },
            Err(_) => c,
        }
    }

    /// The text of `word` at `pc`: the instruction, or an `.unknown` line.
    pub fn print(&self, word: u128, pc: u64, label: &dyn Fn(i128) -> Option<String>) -> String {
        match self.decode(word, pc) {
            Some(i) => i.text(label),
            None => unknown_text(word),
        }
    }
}

/// The line printed for a word no encoding matches.
pub fn unknown_text(word: u128) -> String {
    format!(".unknown 0x{word:032x}")
}

/// Whether an encoding guards with bits 12..=15 (used by the encoder).
pub(crate) fn guard_bits(g: Guard) -> u128 {
    (u128::from(g.pred & 7) | u128::from(g.negated) << 3) << 12 & GUARD_MASK
}
