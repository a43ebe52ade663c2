//! The assembler: nvdisasm-format text back to 128-bit words.
//!
//! Line syntax: `[CONTROL] [@guard] MNEMONIC operands [;]` where `CONTROL` is the optional
//! explicit control field written by [`Control::to_text`] (`[B------:R-:W-:Y:S04]`; zero when
//! absent). Branch targets are hex addresses or labels resolved by the caller.
//!
//! Every encoding whose template matches the text is tried, most specific first; operand
//! values are solved into bits from the learned weights; the first word that decodes back to
//! the same text wins.

use crate::control::Control;
use crate::decode::{Guard, guard_bits};
use crate::table::{Encoding, FloatFormat, SlotSpec, Table, strip_reuse_markers};
use crate::text::{Slot, SlotKind};

/// Assembles one instruction line at code address `pc`. `label` resolves a `` `(.L_x_N) ``
/// branch-target label to an address. A trailing `(*"..."*)` annotation (nvdisasm's
/// `BRANCH_TARGETS` list after an indirect branch) is a comment: it comes from the cubin's
/// metadata, not from the word.
pub fn assemble_line(
    table: &Table,
    line: &str,
    pc: u64,
    label: &dyn Fn(&str) -> Option<i128>,
) -> Result<u128, String> {
    let mut line = line.trim();
    let mut control = Control::default();
    if line.starts_with('[') {
        let end = line.find(']').ok_or("unterminated control field")?;
        control = Control::parse(&line[..=end])?;
        line = line[end + 1..].trim_start();
    }
    let without_note;
    if let Some(start) = line.find("(*\"") {
        let end = line[start..]
            .find("\"*)")
            .ok_or("unterminated `(*\"...\"*)` annotation")?;
        without_note = format!("{}{}", &line[..start], &line[start + end + 3..]);
        line = without_note.trim_end();
    }
    // Resolve labels to addresses first so that the text splits into plain slots.
    let resolved;
    if let Some(start) = line.find("`(") {
        let end = line[start..].find(')').ok_or("unterminated label")? + start;
        let name = &line[start + 2..end];
        let addr = label(name).ok_or_else(|| format!("unknown label `{name}`"))?;
        resolved = format!("{}0x{addr:x}{}", &line[..start], &line[end + 1..]);
        line = &resolved;
    }
    if let Some(raw) = line.strip_prefix(".unknown ") {
        let raw = raw.trim().trim_start_matches("0x");
        return u128::from_str_radix(raw, 16).map_err(|e| format!("bad .unknown word: {e}"));
    }
    let sp = crate::text::split_for(&table.sm, line);
    let key = strip_reuse_markers(&sp.template);
    let guard = parse_guard(&sp.guard)?;
    let want = normalized(line);
    let mut last_err = format!("no encoding of `{key}` is known for {}", table.sm);
    // When no encoding with this template prints the text, one made of an encoding and
    // modifier flags may (`crate::compose`; built only then).
    let exact: Vec<&Encoding> = table.by_template(&key).collect();
    let mut composed = None;
    let mut k = 0;
    loop {
        let e = match exact.get(k) {
            Some(e) => *e,
            None => {
                let list = composed.get_or_insert_with(|| {
                    let kinds: Vec<SlotKind> = sp.slots.iter().map(|s| s.kind).collect();
                    table.composed_for(&key, Some(&kinds))
                });
                match list.get(k - exact.len()) {
                    Some(e) => *e,
                    None => break,
                }
            }
        };
        k += 1;
        match try_encoding(e, &sp.slots, &sp.template, guard, pc) {
            Ok(w) => {
                // Reuse flags printed as `.reuse` OR those of an explicit control field.
                let reuse = Control::from_word(w).reuse | control.reuse;
                let c = Control { reuse, ..control };
                let w = (w & !crate::control::CONTROL_MASK) | c.to_bits();
                // Hidden bits: the word XOR what the text alone gives (see
                // `Table::full_control`); they may also select another encoding that prints
                // the same text.
                let w = w ^ (control.hidden & !crate::control::CONTROL_MASK);
                let got = table.print(w, pc, &|_| None);
                if normalized(&got) == want {
                    return Ok(w);
                }
                last_err = format!("encoding candidate printed `{got}`");
            }
            Err(m) => last_err = m,
        }
    }
    Err(last_err)
}

fn normalized(t: &str) -> String {
    let t = t.trim();
    let t = t.strip_suffix(';').unwrap_or(t).trim_end();
    t.split(' ')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn parse_guard(g: &str) -> Result<Option<Guard>, String> {
    if g.is_empty() {
        return Ok(None);
    }
    let bad = || format!("bad guard `{g}`");
    let mut r = g.strip_prefix('@').ok_or_else(bad)?;
    let negated = r.starts_with('!');
    if negated {
        r = &r[1..];
    }
    let uniform = r.starts_with('U');
    if uniform {
        r = &r[1..];
    }
    let r = r.strip_prefix('P').ok_or_else(bad)?;
    let pred = if r == "T" {
        7
    } else {
        r.parse::<u8>().ok().filter(|p| *p < 7).ok_or_else(bad)?
    };
    Ok(Some(Guard {
        uniform,
        pred,
        negated,
    }))
}

fn try_encoding(
    e: &Encoding,
    slots: &[Slot],
    text_template: &str,
    guard: Option<Guard>,
    pc: u64,
) -> Result<u128, String> {
    if slots.len() != e.slots.len() {
        return Err("operand count differs".into());
    }
    let mut w = e.value | e.defaults;
    match (e.guard, guard) {
        (Some(u), Some(g)) if u == g.uniform => w |= guard_bits(g),
        (Some(_), Some(_)) => return Err("guard kind differs".into()),
        (Some(_), None) => {
            w |= guard_bits(Guard {
                uniform: false,
                pred: 7,
                negated: false,
            })
        }
        (None, Some(_)) => return Err("this encoding has no guard".into()),
        (None, None) => {}
    }
    // Reuse flags: walk the encoding's template; each `^k` consumed by a `^` of the text.
    let mut reuse = 0u8;
    let mut ti = 0usize;
    let tb = text_template.as_bytes();
    let eb = e.template.as_bytes();
    let mut i = 0;
    while i < eb.len() {
        if eb[i] == b'^' {
            let k = eb.get(i + 1).map_or(0, |d| d.wrapping_sub(b'0'));
            if tb.get(ti) == Some(&b'^') {
                reuse |= 1 << k;
                ti += 1;
            }
            i += 2;
            continue;
        }
        if tb.get(ti) == Some(&b'^') {
            return Err(".reuse where this encoding has none".into());
        }
        ti += 1;
        i += 1;
    }
    w |= u128::from(reuse & 0xf) << 122;
    for (spec, s) in e.slots.iter().zip(slots) {
        match spec {
            SlotSpec::Const { kind, value, text } => {
                let ok = *kind == s.kind
                    && if *kind == SlotKind::Float {
                        *text == s.text
                    } else {
                        *value == s.value
                    };
                if !ok {
                    return Err("fixed operand differs".into());
                }
            }
            SlotSpec::Linear {
                kind,
                c,
                pcrel,
                bits,
            } => {
                if *kind != s.kind {
                    return Err("operand kind differs".into());
                }
                let mut rem = s.value - c - if *pcrel { i128::from(pc) } else { 0 };
                let mut neg: Vec<_> = bits.iter().filter(|(_, w)| *w < 0).collect();
                neg.sort_by_key(|(_, w)| *w);
                for (b, wt) in neg {
                    if rem < 0 {
                        w |= 1u128 << b;
                        rem -= wt;
                    }
                }
                let mut pos: Vec<_> = bits.iter().filter(|(_, w)| *w > 0).collect();
                pos.sort_by_key(|(_, w)| std::cmp::Reverse(*w));
                for (b, wt) in pos {
                    if *wt <= rem {
                        w |= 1u128 << b;
                        rem -= wt;
                    }
                }
                if rem != 0 {
                    return Err(format!("operand value {} does not fit", s.value));
                }
            }
            SlotSpec::Float { format, bits } => {
                if s.kind != SlotKind::Float {
                    return Err("operand kind differs".into());
                }
                let raw = float_bits(*format, &s.text).ok_or("float literal not encodable")?;
                for (i, b) in bits.iter().enumerate() {
                    if raw >> i & 1 == 1 {
                        w |= 1u128 << b;
                    }
                }
            }
        }
    }
    Ok(w)
}

/// Raw bits of a float literal in `format` (checked by printing them back).
pub(crate) fn float_bits(format: FloatFormat, text: &str) -> Option<u64> {
    let t = text.trim_end();
    let v: f64 = match t {
        "+INF" => f64::INFINITY,
        "-INF" => f64::NEG_INFINITY,
        "+QNAN" => f64::NAN,
        "-QNAN" => -f64::NAN,
        "-0.0" => -0.0,
        _ => t.parse().ok()?,
    };
    let raw = match format {
        FloatFormat::F32 => u64::from((v as f32).to_bits()),
        FloatFormat::F64Hi => {
            let b = v.to_bits();
            if b & 0xffff_ffff != 0 {
                return None;
            }
            b >> 32
        }
        FloatFormat::F16 => u64::from(f64_to_f16(v)?),
        FloatFormat::Bf16 => {
            let b = (v as f32).to_bits();
            if b & 0xffff != 0 {
                return None;
            }
            u64::from(b >> 16)
        }
    };
    (format.render(raw) == text).then_some(raw)
}

/// Exact conversion to binary16 (None when the value is not representable): every finite
/// half value, indexed once by its double's bits.
fn f64_to_f16(v: f64) -> Option<u16> {
    use std::collections::HashMap;
    use std::sync::OnceLock;
    static HALVES: OnceLock<HashMap<u64, u16>> = OnceLock::new();
    if v.is_infinite() {
        return Some(if v > 0.0 { 0x7c00 } else { 0xfc00 });
    }
    if v.is_nan() {
        return Some(if v.is_sign_negative() { 0xfe00 } else { 0x7e00 });
    }
    let map = HALVES.get_or_init(|| {
        let mut m = HashMap::new();
        for h in 0..=u16::MAX {
            let (f, _) = crate::table::f16_to_f64(h);
            if f.is_finite() {
                m.entry(f.to_bits()).or_insert(h);
            }
        }
        m
    });
    map.get(&v.to_bits()).copied()
}
