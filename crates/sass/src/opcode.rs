//! Typed SASS opcodes: a mnemonic and its dot-separated modifiers (`IADD3.X`,
//! `LDG.E.64.CONSTANT`), each an index into the names the committed tables use.
//!
//! The names are generated from `tables/<sm>.txt` ([`names_source`], written by
//! `cargo xtask opcode-names` to `opcode/names.rs`; a test keeps the committed file equal to
//! what the tables give): the mnemonics are the first tokens of the tables' templates, the
//! modifiers every other token of a template or of a modifier flag's edit. An [`Opcode`] is
//! therefore something at least one table spells; whether a given SM encodes it with given
//! operands is the assembler's question.
//!
//! [`op!`](crate::op) builds an opcode from a literal at compile time (an unknown name is a
//! compile error); [`Opcode::parse`] builds one from text at run time.

mod names;

use std::fmt;

/// A SASS mnemonic (`IADD3`). The associated constants (`Mnemonic::IADD3`) name every
/// mnemonic of the committed tables.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mnemonic(u16);

/// A mnemonic's modifier (`X` in `IADD3.X`, `64` in `LDG.E.64`). The associated constants
/// name those spelled as identifiers (`Modifier::X`); [`modifier!`](crate::modifier) names
/// any (`modifier!("64")`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Modifier(u16);

/// The most modifiers an [`Opcode`] holds (the tables' templates have at most 8; a composed
/// encoding may insert a few).
pub const MAX_MODIFIERS: usize = 12;

/// A mnemonic with its modifiers in order. `Copy`, compared and hashed without touching text.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode {
    mnemonic: Mnemonic,
    len: u8,
    /// `mods[len..]` are `Modifier(0)`, so that derived equality is equality of opcodes.
    mods: [Modifier; MAX_MODIFIERS],
}

/// Compares byte strings in `str`'s order (the order the generated name lists are sorted in).
const fn compare(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] < b[i] {
            return std::cmp::Ordering::Less;
        }
        if a[i] > b[i] {
            return std::cmp::Ordering::Greater;
        }
        i += 1;
    }
    if a.len() < b.len() {
        std::cmp::Ordering::Less
    } else if a.len() > b.len() {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Equal
    }
}

/// Index of `name` in the sorted list `names`.
const fn find(names: &[&str], name: &[u8]) -> Option<u16> {
    let (mut lo, mut hi) = (0, names.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        match compare(names[mid].as_bytes(), name) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Some(mid as u16),
        }
    }
    None
}

/// Why a text is not an [`Opcode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ParseError {
    Mnemonic,
    Modifier(usize),
    TooMany,
}

impl Mnemonic {
    /// The mnemonic spelled `name`, if a table has it.
    pub const fn from_name(name: &str) -> Option<Mnemonic> {
        match find(&names::MNEMONICS, name.as_bytes()) {
            Some(i) => Some(Mnemonic(i)),
            None => None,
        }
    }
    pub const fn name(self) -> &'static str {
        names::MNEMONICS[self.0 as usize]
    }
    /// Every mnemonic of the committed tables.
    pub fn all() -> impl Iterator<Item = Mnemonic> {
        (0..names::MNEMONICS.len() as u16).map(Mnemonic)
    }
}

impl Modifier {
    /// The modifier spelled `name`, if a table has it.
    pub const fn from_name(name: &str) -> Option<Modifier> {
        match find(&names::MODIFIERS, name.as_bytes()) {
            Some(i) => Some(Modifier(i)),
            None => None,
        }
    }
    pub const fn name(self) -> &'static str {
        names::MODIFIERS[self.0 as usize]
    }
}

impl Opcode {
    /// The opcode with no modifiers.
    pub const fn new(mnemonic: Mnemonic) -> Opcode {
        Opcode {
            mnemonic,
            len: 0,
            mods: [Modifier(0); MAX_MODIFIERS],
        }
    }

    const fn parse_bytes(text: &[u8]) -> Result<Opcode, ParseError> {
        let mut end = 0;
        while end < text.len() && text[end] != b'.' {
            end += 1;
        }
        let (head, mut rest) = text.split_at(end);
        let mnemonic = match find(&names::MNEMONICS, head) {
            Some(i) => Mnemonic(i),
            None => return Err(ParseError::Mnemonic),
        };
        let mut op = Opcode::new(mnemonic);
        while !rest.is_empty() {
            // `rest` starts with the `.` before the next modifier.
            let (_, tail) = rest.split_at(1);
            let mut end = 0;
            while end < tail.len() && tail[end] != b'.' {
                end += 1;
            }
            let (token, after) = tail.split_at(end);
            if op.len as usize == MAX_MODIFIERS {
                return Err(ParseError::TooMany);
            }
            match find(&names::MODIFIERS, token) {
                Some(i) => {
                    op.mods[op.len as usize] = Modifier(i);
                    op.len += 1;
                }
                None => return Err(ParseError::Modifier(op.len as usize)),
            }
            rest = after;
        }
        Ok(op)
    }

    /// The opcode spelled `text` (`IADD3.X`), in a constant context; `None` when a name is
    /// not one of the tables' or there are more than [`MAX_MODIFIERS`] modifiers.
    pub const fn parse_const(text: &str) -> Option<Opcode> {
        match Opcode::parse_bytes(text.as_bytes()) {
            Ok(op) => Some(op),
            Err(_) => None,
        }
    }

    /// The opcode spelled `text` (`IADD3.X`), or what in it no table spells.
    pub fn parse(text: &str) -> Result<Opcode, String> {
        Opcode::parse_bytes(text.as_bytes()).map_err(|e| match e {
            ParseError::Mnemonic => format!(
                "`{}` is not a SASS mnemonic of the committed tables",
                text.split('.').next().unwrap_or("")
            ),
            ParseError::Modifier(k) => format!(
                "`.{}` of `{text}` is not a SASS modifier of the committed tables",
                text.split('.').nth(k + 1).unwrap_or("")
            ),
            ParseError::TooMany => {
                format!("`{text}` has more than {MAX_MODIFIERS} modifiers")
            }
        })
    }

    pub const fn mnemonic(self) -> Mnemonic {
        self.mnemonic
    }
    pub fn modifiers(&self) -> &[Modifier] {
        &self.mods[..self.len as usize]
    }
    /// Whether `m` is one of the modifiers.
    pub fn has(&self, m: Modifier) -> bool {
        self.modifiers().contains(&m)
    }
    /// This opcode with `m` appended to its modifiers; `None` when it has [`MAX_MODIFIERS`].
    pub fn with(mut self, m: Modifier) -> Option<Opcode> {
        if self.len as usize == MAX_MODIFIERS {
            return None;
        }
        self.mods[self.len as usize] = m;
        self.len += 1;
        Some(self)
    }
    /// This opcode without any modifier `m`.
    pub fn without(self, m: Modifier) -> Opcode {
        let mut out = Opcode::new(self.mnemonic);
        for &x in self.modifiers() {
            if x != m {
                out.mods[out.len as usize] = x;
                out.len += 1;
            }
        }
        out
    }
    /// This opcode with the modifier at `index` replaced by `m`.
    pub fn replaced(mut self, index: usize, m: Modifier) -> Opcode {
        if index < self.len as usize {
            self.mods[index] = m;
        }
        self
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic.name())?;
        for m in self.modifiers() {
            f.write_str(".")?;
            f.write_str(m.name())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op!(\"{self}\")")
    }
}

impl fmt::Display for Mnemonic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Mnemonic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mnemonic::{}", self.name())
    }
}

impl fmt::Display for Modifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Modifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "modifier!(\"{}\")", self.name())
    }
}

/// An [`Opcode`] from a string literal, checked when the program is compiled:
/// `op!("IADD3.X")`.
#[macro_export]
macro_rules! op {
    ($text:literal) => {{
        const OP: $crate::opcode::Opcode = match $crate::opcode::Opcode::parse_const($text) {
            Some(op) => op,
            None => panic!(concat!("not an opcode of the SASS tables: ", $text)),
        };
        OP
    }};
}

/// A [`Modifier`] from a string literal, checked when the program is compiled:
/// `modifier!("64")`.
#[macro_export]
macro_rules! modifier {
    ($text:literal) => {{
        const M: $crate::opcode::Modifier = match $crate::opcode::Modifier::from_name($text) {
            Some(m) => m,
            None => panic!(concat!("not a modifier of the SASS tables: ", $text)),
        };
        M
    }};
}

/// The tokens of the tables' texts (`tables` is `(sm, text of tables/<sm>.txt)`): mnemonics
/// (first tokens of templates) and modifiers (the other tokens of templates, and the tokens
/// modifier flags replace, insert or are conditioned on), each sorted and without repeats.
pub fn table_names(tables: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
    use std::collections::BTreeSet;
    let (mut mnemonics, mut modifiers) = (BTreeSet::new(), BTreeSet::new());
    for (_, text) in tables {
        for line in text.lines() {
            if let Some(template) = line.strip_prefix("T ") {
                let opcode = template.split(' ').next().unwrap_or("");
                let mut tokens = opcode.split('.');
                if let Some(m) = tokens.next() {
                    mnemonics.insert(m.to_string());
                }
                modifiers.extend(tokens.map(str::to_string));
            } else if let Some(flag) = line.strip_prefix("F ") {
                // `F <opcode> <bit> [when TOKEN] R OLD NEW | I AFTER TOKEN | O ...`
                let fields: Vec<&str> = flag.split(' ').collect();
                let mut k = 2;
                if fields.get(k) == Some(&"when") {
                    if let Some(t) = fields.get(k + 1) {
                        modifiers.insert((*t).to_string());
                    }
                    k += 2;
                }
                match fields.get(k) {
                    Some(&"R") => {
                        modifiers.extend(fields[k + 1..].iter().take(2).map(|t| (*t).to_string()))
                    }
                    Some(&"I") => modifiers.extend(fields.get(k + 2).map(|t| (*t).to_string())),
                    _ => {}
                }
            }
        }
    }
    (
        mnemonics.into_iter().collect(),
        modifiers.into_iter().collect(),
    )
}

fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The Rust source of `opcode/names.rs` for the given tables ([`table_names`]).
pub fn names_source(tables: &[(&str, &str)]) -> String {
    use std::fmt::Write;
    let (mnemonics, modifiers) = table_names(tables);
    let sms: Vec<&str> = tables.iter().map(|(sm, _)| *sm).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// Generated by `cargo xtask opcode-names` from crates/sass/tables/{{{}}}.txt; do not edit.",
        sms.join(",")
    );
    let list = |s: &mut String, name: &str, items: &[String]| {
        let _ = writeln!(s, "\npub(super) const {name}: [&str; {}] = [", items.len());
        for i in items {
            let _ = writeln!(s, "    {i:?},");
        }
        let _ = writeln!(s, "];");
    };
    list(&mut s, "MNEMONICS", &mnemonics);
    list(&mut s, "MODIFIERS", &modifiers);
    let consts = |s: &mut String, ty: &str, items: &[String]| {
        let _ = writeln!(s, "\n#[allow(non_upper_case_globals)]\nimpl super::{ty} {{");
        for (i, name) in items.iter().enumerate() {
            if is_identifier(name) {
                let _ = writeln!(s, "    pub const {name}: super::{ty} = super::{ty}({i});");
            }
        }
        let _ = writeln!(s, "}}");
    };
    consts(&mut s, "Mnemonic", &mnemonics);
    consts(&mut s, "Modifier", &modifiers);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_names_are_the_tables_names() {
        let texts: Vec<(String, String)> = crate::TABLES
            .iter()
            .map(|(sm, _)| {
                let text = std::fs::read_to_string(crate::table_source_path(sm))
                    .expect("committed table text");
                ((*sm).to_string(), text)
            })
            .collect();
        let refs: Vec<(&str, &str)> = texts
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let want = names_source(&refs);
        let have = include_str!("opcode/names.rs");
        assert!(
            want == have,
            "crates/sass/src/opcode/names.rs is not what the tables give: run `cargo xtask opcode-names`"
        );
    }

    #[test]
    fn parse_and_print() {
        let op = Opcode::parse("LDG.E.64.CONSTANT").unwrap();
        assert_eq!(op.to_string(), "LDG.E.64.CONSTANT");
        assert_eq!(op.mnemonic(), Mnemonic::LDG);
        assert!(op.has(Modifier::CONSTANT));
        assert!(op.has(crate::modifier!("64")));
        assert!(!op.has(Modifier::X));
        assert_eq!(op, crate::op!("LDG.E.64.CONSTANT"));
        assert_ne!(op, crate::op!("LDG.E.64"));
        assert_eq!(op.without(Modifier::CONSTANT).to_string(), "LDG.E.64");
        assert_eq!(crate::op!("EXIT").to_string(), "EXIT");
        assert_eq!(
            crate::op!("IADD3").with(Modifier::X),
            Some(crate::op!("IADD3.X"))
        );
    }

    #[test]
    fn unknown_names_are_refused() {
        assert!(Opcode::parse("IADD4").unwrap_err().contains("`IADD4`"));
        assert!(Opcode::parse("IADD3.Q").unwrap_err().contains("`.Q`"));
        assert!(Opcode::parse("IADD3.").is_err());
        assert!(Opcode::parse("").is_err());
        let many = format!("IADD3{}", ".X".repeat(MAX_MODIFIERS + 1));
        assert!(Opcode::parse(&many).unwrap_err().contains("more than"));
    }
}
