//! Decoding words the `crates/sass` tables leave unknown.
//!
//! The tables learn one encoding per combination of pinned operand values seen in the probe's
//! seeds (for example `IMAD` whose printed alias depends on an immediate, so each immediate
//! seen is its own encoding); words with other values decode to `.unknown`. For execution the
//! alias does not matter, only the operand values do. This module merges, per opcode and
//! template, the encodings that differ only in pinned operands: a slot that is a linear field
//! in one member becomes that field in the merged encoding, and the fixed bits are those all
//! members fix to the same value outside every merged field. The merged table is consulted
//! only for words the real table does not decode; a slot every member pins to the same register
//! borrows the field of another encoding of the opcode when every member's fixed bits agree with
//! it; `examples/unknowns.rs` measures it against
//! nvdisasm on corpus words (see docs/arch/emu.md for the figures).

use std::collections::HashMap;
use std::sync::OnceLock;

use sass::table::{Encoding, SlotSpec, Table};
use sass::text::SlotKind;

fn slot_bits(s: &SlotSpec) -> u128 {
    match s {
        SlotSpec::Linear { bits, .. } => bits.iter().fold(0, |m, (b, _)| m | 1u128 << b),
        SlotSpec::Float { bits, .. } => bits.iter().fold(0, |m, b| m | 1u128 << b),
        SlotSpec::Const { .. } => 0,
    }
}

/// A field for slot `i` that every member pins to the same register: borrowed from another
/// encoding of the same opcode (`donors`) that has a field of the same kind at the same slot
/// position, provided every member fixes exactly those bits to the pinned value.
fn borrow_field(members: &[&Encoding], donors: &[&Encoding], i: usize) -> Option<SlotSpec> {
    let SlotSpec::Const { kind, value, .. } = &members[0].slots[i] else {
        return None;
    };
    if !matches!(
        kind,
        SlotKind::R | SlotKind::Ur | SlotKind::Ur8 | SlotKind::P | SlotKind::Up
    ) || *value < 0
    {
        return None;
    }
    for d in donors {
        let Some(SlotSpec::Linear {
            kind: k,
            c: 0,
            pcrel: false,
            bits,
        }) = d.slots.get(i)
        else {
            continue;
        };
        if k != kind {
            continue;
        }
        // Plain binary field: weights 1, 2, 4, ...
        if bits.iter().enumerate().any(|(j, (_, w))| *w != 1i128 << j) {
            continue;
        }
        let fits = members.iter().all(|e| {
            let v: i128 = bits
                .iter()
                .map(|(b, w)| {
                    if e.mask >> b & 1 == 1 && e.value >> b & 1 == 1 {
                        *w
                    } else {
                        0
                    }
                })
                .sum();
            bits.iter().all(|(b, _)| e.mask >> b & 1 == 1) && v == *value
        });
        if fits {
            return Some(d.slots[i].clone());
        }
    }
    None
}

fn merge_with(members: &[&Encoding], donors: &[&Encoding]) -> Option<Encoding> {
    let first = members[0];
    let n = first.slots.len();
    let mut slots = Vec::with_capacity(n);
    for i in 0..n {
        let field = members
            .iter()
            .map(|e| &e.slots[i])
            .find(|s| !matches!(s, SlotSpec::Const { .. }));
        match field {
            Some(f) => {
                // Every member with a field here must agree on it.
                if members
                    .iter()
                    .any(|e| !matches!(e.slots[i], SlotSpec::Const { .. }) && e.slots[i] != *f)
                {
                    return None;
                }
                slots.push(f.clone());
            }
            None => {
                if members.iter().all(|e| e.slots[i] == first.slots[i]) {
                    match borrow_field(members, donors, i) {
                        Some(f) => slots.push(f),
                        None => slots.push(first.slots[i].clone()),
                    }
                } else {
                    slots.push(infer_field(members, i)?);
                }
            }
        }
    }
    let fields = slots.iter().fold(0u128, |m, s| m | slot_bits(s));
    let mut mask = members.iter().fold(u128::MAX, |m, e| m & e.mask) & !fields;
    for e in members {
        mask &= !(e.value ^ first.value);
    }
    Some(Encoding {
        mask,
        value: first.value & mask,
        defaults: first.defaults,
        guard: first.guard,
        template: first.template.clone(),
        slots,
    })
}

/// A slot pinned to different constants in different members: the field is the run of bits
/// at which every member's fixed value holds exactly its constant (the width follows from the
/// slot kind: 8 bits for `R`, 6 for `UR`, 3 for predicates, 4 for `B`).
fn infer_field(members: &[&Encoding], i: usize) -> Option<SlotSpec> {
    let mut kind = None;
    let mut vals = Vec::new();
    for e in members {
        match &e.slots[i] {
            SlotSpec::Const { kind: k, value, .. } if *value >= 0 => {
                if kind.is_some_and(|x| x != *k) {
                    return None;
                }
                kind = Some(*k);
                vals.push(*value as u128);
            }
            _ => return None,
        }
    }
    let kind = kind?;
    let width = match kind {
        SlotKind::R => 8,
        SlotKind::Ur => 6,
        SlotKind::Ur8 => 8,
        SlotKind::P | SlotKind::Up => 3,
        SlotKind::B => 4,
        _ => return None,
    };
    let m = (1u128 << width) - 1;
    let lo = (16..=(104 - width)).find(|&lo| {
        members
            .iter()
            .zip(&vals)
            .all(|(e, v)| (e.mask >> lo) & m == m && (e.value >> lo) & m == *v)
    })?;
    Some(SlotSpec::Linear {
        kind,
        c: 0,
        pcrel: false,
        bits: (0..width).map(|j| ((lo + j) as u8, 1i128 << j)).collect(),
    })
}

/// The template with the `IMAD` print aliases folded: `IMAD.MOV.U32`, `IMAD.IADD`,
/// `IMAD.SHL.U32` and `IMAD.U32` are `IMAD` (`a * b + c`, low 32 bits, so signedness does not
/// matter) with particular operands; `.WIDE`/`.HI`/`.X` forms keep their modifiers. Reuse
/// markers are dropped (they do not change what an instruction computes).
fn semantic_template(t: &str) -> String {
    let t = sass::table::strip_reuse_markers(t);
    let (m, rest) = t.split_at(t.find(' ').unwrap_or(t.len()));
    let parts: Vec<&str> = m.split('.').collect();
    if matches!(parts[0], "IMAD" | "UIMAD")
        && !parts.iter().any(|p| matches!(*p, "WIDE" | "HI" | "X"))
    {
        return format!("{}{rest}", parts[0]);
    }
    t
}

/// Builds the merged table of `t`.
pub fn merged(t: &Table) -> Table {
    let mut groups: HashMap<(u128, String, Option<bool>), Vec<&Encoding>> = HashMap::new();
    for e in &t.encodings {
        groups
            .entry((e.value & 0xfff, semantic_template(&e.template), e.guard))
            .or_default()
            .push(e);
    }
    let mut out = Vec::new();
    let mut keys: Vec<_> = groups.keys().cloned().collect();
    keys.sort();
    for k in keys {
        let g = &groups[&k];
        let donors: Vec<&Encoding> = t.candidates((k.0) as u16).collect();
        if g.len() < 2
            && !g[0]
                .slots
                .iter()
                .any(|s| matches!(s, SlotSpec::Const { .. }))
        {
            continue;
        }
        if let Some(mut e) = merge_with(g, &donors) {
            if g.len() < 2 && e.slots == g[0].slots {
                continue;
            }
            e.template = k.1.clone();
            out.push(e);
        }
    }
    Table::new(&t.sm, vec!["merged".into()], out)
}

/// The merged table for an SM (built once).
pub fn table(sm: &str) -> Option<&'static Table> {
    static CACHE: [OnceLock<Table>; sass::TABLES.len()] =
        [const { OnceLock::new() }; sass::TABLES.len()];
    let key = sass::normalize_sm(sm)?;
    let i = sass::TABLES.iter().position(|(n, _)| *n == key)?;
    let base = sass::table(&key)?;
    Some(CACHE[i].get_or_init(|| merged(base)))
}
