//! Splitting nvdisasm's instruction text into a template and typed operand slots.
//!
//! `IMAD R3, R0.reuse, UR4, R3` becomes the template `IMAD %, %^, %, %` (`%` = a slot,
//! `^` = where a `.reuse` flag was printed) and the slots `R3 R0 UR4 R3`. The probe learns,
//! per encoding, which bits give each slot its value; the printer substitutes values back; the
//! assembler uses the same split to find the encoding that prints a given text.

/// What kind of value a slot holds, which decides how it is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlotKind {
    /// General register `R<n>`, 255 prints as `RZ`.
    R,
    /// Uniform register `UR<n>` of a 6-bit field (sm_75 to sm_90), 63 prints as `URZ`.
    Ur,
    /// Uniform register `UR<n>` of an 8-bit field (sm_100 and later: UR0 to UR254), 255
    /// prints as `URZ` and 63 as `UR63`.
    Ur8,
    /// Predicate `P<n>`, 7 prints as `PT`.
    P,
    /// Uniform predicate `UP<n>`, 7 prints as `UPT`.
    Up,
    /// Convergence barrier register `B<n>`.
    B,
    /// Scoreboard `SB<n>`.
    Sb,
    /// Integer printed in hex, negative values as `-0x..`.
    Hex,
    /// Floating-point literal (`%.20g` style, `+INF `, `-QNAN ` ...).
    Float,
}

impl SlotKind {
    /// Short name used in table files.
    pub fn name(self) -> &'static str {
        match self {
            SlotKind::R => "R",
            SlotKind::Ur => "UR",
            SlotKind::Ur8 => "UR8",
            SlotKind::P => "P",
            SlotKind::Up => "UP",
            SlotKind::B => "B",
            SlotKind::Sb => "SB",
            SlotKind::Hex => "X",
            SlotKind::Float => "F",
        }
    }

    /// Inverse of [`SlotKind::name`].
    pub fn from_name(s: &str) -> Option<SlotKind> {
        Some(match s {
            "R" => SlotKind::R,
            "UR" => SlotKind::Ur,
            "UR8" => SlotKind::Ur8,
            "P" => SlotKind::P,
            "UP" => SlotKind::Up,
            "B" => SlotKind::B,
            "SB" => SlotKind::Sb,
            "X" => SlotKind::Hex,
            "F" => SlotKind::Float,
            _ => return None,
        })
    }

    /// Prints an integer value of this kind (not for [`SlotKind::Float`]).
    pub fn render(self, v: i128, out: &mut String) {
        use std::fmt::Write;
        let _ = match self {
            SlotKind::R if v == 255 => write!(out, "RZ"),
            SlotKind::R => write!(out, "R{v}"),
            SlotKind::Ur if v == 63 => write!(out, "URZ"),
            SlotKind::Ur8 if v == 255 => write!(out, "URZ"),
            SlotKind::Ur | SlotKind::Ur8 => write!(out, "UR{v}"),
            SlotKind::P if v == 7 => write!(out, "PT"),
            SlotKind::P => write!(out, "P{v}"),
            SlotKind::Up if v == 7 => write!(out, "UPT"),
            SlotKind::Up => write!(out, "UP{v}"),
            SlotKind::B => write!(out, "B{v}"),
            SlotKind::Sb => write!(out, "SB{v}"),
            SlotKind::Hex | SlotKind::Float if v < 0 => write!(out, "-0x{:x}", -v),
            SlotKind::Hex | SlotKind::Float => write!(out, "0x{v:x}"),
        };
    }
}

/// One operand value found in a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    pub kind: SlotKind,
    /// Integer value (register number, immediate); 0 for floats.
    pub value: i128,
    /// The literal text of a float slot.
    pub text: String,
}

/// An instruction text split into guard, template and slots.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// The guard as printed (`@!P0`), empty when none.
    pub guard: String,
    /// The text with each slot replaced by `%` and each `.reuse` by `^`.
    pub template: String,
    pub slots: Vec<Slot>,
}

/// Characters that may not appear in a template literal (they are the slot markers).
pub fn has_marker_chars(s: &str) -> bool {
    s.contains('%') || s.contains('^')
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether an SM's uniform registers have 8-bit fields (`URZ` = 255, slots of kind
/// [`SlotKind::Ur8`]): sm_100 and later (`target::Profile::uniform_register_bits`). Earlier
/// SMs have 6-bit fields (`URZ` = 63).
pub fn wide_uniform_registers(sm: &str) -> bool {
    crate::normalize_sm(sm)
        .and_then(|s| s[3..].parse::<u32>().ok())
        .and_then(target::Profile::of)
        .is_some_and(|p| p.uniform_register_bits == 8)
}

/// Splits one instruction's text as `sm`'s nvdisasm prints it: like [`split`], with uniform
/// registers as [`SlotKind::Ur8`] (`URZ` = 255) where [`wide_uniform_registers`] says so.
pub fn split_for(sm: &str, text: &str) -> Split {
    split_with(text, wide_uniform_registers(sm))
}

/// Splits one instruction's text as nvdisasm prints it (without the address, with or without
/// the trailing ` ;`); uniform registers are 6-bit (`URZ` = 63, sm_75 to sm_90).
pub fn split(text: &str) -> Split {
    split_with(text, false)
}

fn split_with(text: &str, wide_ur: bool) -> Split {
    let mut t = text.trim_start();
    t = t.strip_suffix(';').unwrap_or(t);
    t = t.strip_suffix(' ').unwrap_or(t);
    // A final `+INF `/`-QNAN `/`-0.0 ` literal keeps its trailing space (also when the line
    // was trimmed).
    let owned;
    if t.ends_with("INF") || t.ends_with("NAN") || t.ends_with("-0.0") {
        owned = format!("{t} ");
        t = &owned;
    }
    let mut guard = String::new();
    if t.starts_with('@') {
        let end = t.find(' ').unwrap_or(t.len());
        guard = t[..end].to_string();
        t = t[end..].trim_start();
    }
    // The mnemonic (first word) is literal.
    let mnem_end = t.find(' ').unwrap_or(t.len());
    let mut template = String::with_capacity(t.len());
    template.push_str(&t[..mnem_end]);
    let mut slots = Vec::new();
    let b = t.as_bytes();
    let mut i = mnem_end;
    while i < b.len() {
        let prev = if i > 0 { b[i - 1] } else { b' ' };
        let boundary = !is_ident(prev) && prev != b'.';
        if boundary {
            if let Some((kind, value, len)) = register_at(&b[i..], wide_ur) {
                slots.push(Slot {
                    kind,
                    value,
                    text: String::new(),
                });
                template.push('%');
                i += len;
                continue;
            }
            if let Some(len) = hex_at(&b[i..]) {
                let s = &t[i..i + len];
                let (neg, digits) = match s.strip_prefix('-') {
                    Some(d) => (true, &d[2..]),
                    None => (false, &s[2..]),
                };
                if let Ok(v) = i128::from_str_radix(digits, 16) {
                    let value = if neg { -v } else { v };
                    slots.push(Slot {
                        kind: SlotKind::Hex,
                        value,
                        text: String::new(),
                    });
                    template.push('%');
                    i += len;
                    continue;
                }
            }
            if let Some(len) = float_at(&b[i..]) {
                slots.push(Slot {
                    kind: SlotKind::Float,
                    value: 0,
                    text: t[i..i + len].to_string(),
                });
                template.push('%');
                i += len;
                continue;
            }
        }
        if t[i..].starts_with(".reuse") && !b.get(i + 6).copied().is_some_and(is_ident) {
            template.push('^');
            i += 6;
            continue;
        }
        let ch = t[i..].chars().next().expect("in bounds");
        template.push(ch);
        i += ch.len_utf8();
    }
    Split {
        guard,
        template,
        slots,
    }
}

/// A register token at the start of `b`: (kind, number, length).
fn register_at(b: &[u8], wide_ur: bool) -> Option<(SlotKind, i128, usize)> {
    /// (prefix, kind, special suffix letter and its value).
    type Prefix = (&'static [u8], SlotKind, Option<(u8, i128)>);
    let ur: Prefix = if wide_ur {
        (b"UR", SlotKind::Ur8, Some((b'Z', 255)))
    } else {
        (b"UR", SlotKind::Ur, Some((b'Z', 63)))
    };
    let prefixes: [Prefix; 6] = [
        ur,
        (b"UP", SlotKind::Up, Some((b'T', 7))),
        (b"SB", SlotKind::Sb, None),
        (b"R", SlotKind::R, Some((b'Z', 255))),
        (b"P", SlotKind::P, Some((b'T', 7))),
        (b"B", SlotKind::B, None),
    ];
    for (pre, kind, special) in prefixes {
        if !b.starts_with(pre) {
            continue;
        }
        let rest = &b[pre.len()..];
        let (value, n) = if let Some((c, v)) = special.filter(|(c, _)| rest.first() == Some(c)) {
            let _ = c;
            (v, 1)
        } else {
            let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 || n > 4 {
                continue;
            }
            let v: i128 = std::str::from_utf8(&rest[..n]).ok()?.parse().ok()?;
            (v, n)
        };
        if rest.get(n).copied().is_some_and(is_ident) {
            continue;
        }
        return Some((kind, value, pre.len() + n));
    }
    None
}

/// Length of a `0x..` or `-0x..` token at the start of `b`.
fn hex_at(b: &[u8]) -> Option<usize> {
    let start = usize::from(b.first() == Some(&b'-'));
    if !b[start..].starts_with(b"0x") {
        return None;
    }
    let n = b[start + 2..]
        .iter()
        .take_while(|c| c.is_ascii_hexdigit())
        .count();
    if n == 0 || b.get(start + 2 + n).copied().is_some_and(is_ident) {
        return None;
    }
    Some(start + 2 + n)
}

/// Length of a float literal at the start of `b`: `[-]digits[.digits][e±digits]`, or
/// `±INF `, `±QNAN `, `±SNAN `, `-0.0 ` (nvdisasm prints those with a trailing space).
fn float_at(b: &[u8]) -> Option<usize> {
    for special in [&b"INF "[..], b"QNAN ", b"SNAN ", b"0.0 "] {
        if (b.first() == Some(&b'+') || b.first() == Some(&b'-')) && b[1..].starts_with(special) {
            return Some(1 + special.len());
        }
    }
    let mut i = usize::from(b.first() == Some(&b'-'));
    let d = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if d == 0 {
        return None;
    }
    i += d;
    if b.get(i) == Some(&b'.') {
        let f = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if f == 0 {
            return None;
        }
        i += 1 + f;
    }
    if b.get(i) == Some(&b'e') && matches!(b.get(i + 1), Some(b'+' | b'-')) {
        let e = b[i + 2..].iter().take_while(|c| c.is_ascii_digit()).count();
        if e > 0 {
            i += 2 + e;
        }
    }
    if b.get(i).copied().is_some_and(is_ident) {
        return None;
    }
    Some(i)
}

/// Formats a double as nvdisasm prints float immediates: C's `%.20g` for non-integral
/// values, integers as digits up to 2^31 and as `%.20e` beyond; infinities and NaNs as
/// `+INF `, `-QNAN ` (with the trailing space).
pub fn format_float(v: f64, quiet_nan: bool) -> String {
    let sign = if v.is_sign_negative() { '-' } else { '+' };
    if v.is_infinite() {
        return format!("{sign}INF ");
    }
    if v.is_nan() {
        return format!("{sign}{}NAN ", if quiet_nan { 'Q' } else { 'S' });
    }
    if v == 0.0 {
        // nvdisasm prints negative zero as `-0.0 ` (trailing space, like `+INF `).
        return if v.is_sign_negative() {
            "-0.0 ".into()
        } else {
            "0".into()
        };
    }
    // Integral values: plain digits while they fit in an i32, `%.20e` beyond (seen in
    // nvdisasm output: 16777216 but 2.14748364800000000000e+09).
    if v.fract() == 0.0 {
        if v.abs() < 2147483648.0 {
            return format!("{}", v as i64);
        }
        let e = format!("{v:.20e}");
        let (mant, exp) = e.split_once('e').expect("exponent form");
        let exp: i32 = exp.parse().expect("exponent");
        let (s, a) = if exp < 0 { ('-', -exp) } else { ('+', exp) };
        return format!("{mant}e{s}{a:02}");
    }
    const P: i32 = 20;
    let e = format!("{:.*e}", (P - 1) as usize, v);
    let (mant, exp) = e.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    if !(-4..P).contains(&exp) {
        let mant = strip_zeros(mant);
        let (s, a) = if exp < 0 { ('-', -exp) } else { ('+', exp) };
        format!("{mant}e{s}{a:02}")
    } else {
        let decimals = (P - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_register_width_follows_the_sm() {
        let s = split_for("sm_90", "LDCU URZ, c[0x0][0x370]");
        assert_eq!((s.slots[0].kind, s.slots[0].value), (SlotKind::Ur, 63));
        let s = split_for("sm_100", "LDCU URZ, c[0x0][0x370]");
        assert_eq!((s.slots[0].kind, s.slots[0].value), (SlotKind::Ur8, 255));
        let s = split_for("sm_120", "LDCU UR63, c[0x0][0x370]");
        assert_eq!((s.slots[0].kind, s.slots[0].value), (SlotKind::Ur8, 63));
        let mut out = String::new();
        SlotKind::Ur8.render(63, &mut out);
        out.push(' ');
        SlotKind::Ur8.render(255, &mut out);
        assert_eq!(out, "UR63 URZ");
        assert!(!wide_uniform_registers("sm_90a"));
        assert!(wide_uniform_registers("sm_100a"));
    }

    #[test]
    fn splits_nvdisasm_text() {
        let s = split("@!P2 LOP3.LUT R2, RZ, R0.reuse, RZ, 0x33, !PT ;");
        assert_eq!(s.guard, "@!P2");
        assert_eq!(s.template, "LOP3.LUT %, %, %^, %, %, !%");
        assert_eq!(s.slots.len(), 6);
        assert_eq!(s.slots[1].value, 255);
        let s = split("LDG.E.128 R4, desc[UR4][R18.64+-0x10] ;");
        assert_eq!(s.template, "LDG.E.128 %, desc[%][%.64+%]");
        assert_eq!(s.slots[3].value, -0x10);
        let s = split("FSETP.NEU.FTZ.AND P0, PT, |R0|.reuse, +INF , PT ;");
        assert_eq!(s.template, "FSETP.NEU.FTZ.AND %, %, |%|^, %, %");
        assert_eq!(s.slots[3].text, "+INF ");
        let s = split("HFMA2.MMA R7, -RZ, RZ, -INF , -INF");
        assert_eq!(s.slots[3].text, "-INF ");
        let s = split("S2R R3, SR_TID.X ;");
        assert_eq!(s.template, "S2R %, SR_TID.X");
    }

    /// Float texts seen in `nvdisasm -c` output of sm_90 corpus cubins.
    #[test]
    fn formats_like_nvdisasm() {
        assert_eq!(
            format_float(f64::from(0.1f32), true),
            "0.10000000149011611938"
        );
        assert_eq!(
            format_float(f64::from(1.0f32 / 49.0), true),
            "0.02040816284716129303"
        );
        assert_eq!(
            format_float("-7.688999176025390625e-06".parse().expect("float"), true),
            "-7.688999176025390625e-06"
        );
        assert_eq!(format_float(255.0, true), "255");
        assert_eq!(format_float(0.9375, true), "0.9375");
        assert_eq!(format_float(f64::INFINITY, true), "+INF ");
        assert_eq!(format_float(16777216.0, true), "16777216");
        assert_eq!(format_float(-0.0, true), "-0.0 ");
        assert_eq!(
            format_float(2147483648.0, true),
            "2.14748364800000000000e+09"
        );
        assert_eq!(
            format_float(f64::from(f32::MAX), true),
            "3.40282346638528859812e+38"
        );
        assert_eq!(
            format_float("-18.614999771118164062".parse().expect("float"), true),
            "-18.614999771118164062"
        );
    }
}
