//! Modifier flags: single bits whose effect on an instruction's text is a fixed edit, so that
//! encodings learned for some modifier combinations decode the others.
//!
//! The probe learns one [`crate::Encoding`] per combination of modifier bits that the seeds
//! reach (`DFMA R, -R, R, R` and `DFMA R, R, R, |R|` are two encodings). A word that sets both
//! bits matches neither, although its text is predictable: each bit is a *flag* of the opcode
//! (`F` lines of the table: bit 72 of opcode 0x22b puts `-` before operand 1, bit 73 wraps
//! operand 3 in `|..|`). `cargo xtask sass-probe` finds flags from pairs of encodings that
//! differ in one bit and whose texts differ by one [`Edit`], and keeps for each encoding the
//! flags whose combinations nvdisasm confirms (its `X` line). The decoder falls back to them
//! only for words no encoding matches ([`crate::Table::decode`]).

use std::collections::BTreeMap;

/// What setting a flag bit does to an encoding's template.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Edit {
    /// Operand `index` (0-based in the comma-separated operand list; negative counts from
    /// the end, -1 being the last, for a bit that edits the same source operand of forms
    /// with different numbers of destinations: `IADD3 R, R, R, -R` and
    /// `IADD3 R, P, P, R, R, -R`) becomes `pre` + operand + `post` (a reuse marker `^k`
    /// stays last).
    Operand {
        index: i8,
        pre: String,
        post: String,
    },
    /// The mnemonic's dot-separated token `old` becomes `new` (`AND` -> `XOR`).
    Replace { old: String, new: String },
    /// `token` is inserted into the mnemonic after its first `after` tokens.
    Insert { after: u8, token: String },
}

/// A template split into mnemonic tokens and operands (each operand without and with its
/// reuse marker).
pub struct Parts<'a> {
    tokens: Vec<&'a str>,
    operands: Vec<(&'a str, &'a str)>,
}

fn split_marker(op: &str) -> (&str, &str) {
    let b = op.as_bytes();
    if b.len() >= 2 && b[b.len() - 2] == b'^' && b[b.len() - 1].is_ascii_digit() {
        op.split_at(op.len() - 2)
    } else {
        (op, "")
    }
}

/// `template` split into its mnemonic tokens and operands.
pub fn parts(template: &str) -> Parts<'_> {
    let (mnemonic, rest) = template.split_once(' ').unwrap_or((template, ""));
    let operands = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(", ").map(split_marker).collect()
    };
    Parts {
        tokens: mnemonic.split('.').collect(),
        operands,
    }
}

/// Characters nvdisasm puts before an operand to negate or complement it.
const SIGNS: [char; 3] = ['-', '!', '~'];

fn is_signs(s: &str) -> bool {
    s.chars().all(|c| SIGNS.contains(&c))
}

/// An operand's leading signs and the rest.
fn split_signs(op: &str) -> (&str, &str) {
    let n = op.len() - op.trim_start_matches(SIGNS).len();
    op.split_at(n)
}

/// A mnemonic token an edit may carry: no separators of the template or the table format.
fn plain(s: &str) -> bool {
    !s.is_empty() && !s.contains([' ', ',', '%', '^', '.'])
}

/// Text an operand edit may put around an operand (`_` stands for "nothing" in the table).
fn affix(s: &str) -> bool {
    !s.contains([' ', ',', '%', '^', '_'])
}

impl Edit {
    /// The edit that turns template `base` into `variant`, when they differ by exactly one.
    pub fn between(base: &str, variant: &str) -> Option<Edit> {
        let (a, b) = (parts(base), parts(variant));
        if a.tokens == b.tokens {
            if a.operands.len() != b.operands.len() {
                return None;
            }
            let mut diff = a
                .operands
                .iter()
                .zip(&b.operands)
                .enumerate()
                .filter(|(_, (x, y))| x != y);
            let (index, ((core, marker), (vcore, vmarker))) = diff.next()?;
            if diff.next().is_some() || marker != vmarker {
                return None;
            }
            let index = i8::try_from(index).ok()?;
            let (signs, body) = split_signs(core);
            let (vsigns, vbody) = split_signs(vcore);
            let (pre, post) = if body == vbody {
                // More signs in front: `-R`, `!P`, `-|R|`.
                (vsigns.strip_suffix(signs)?, "")
            } else if signs == vsigns {
                // Text around the operand after its signs: `|R|`, `R.H1`.
                let at = vbody.find(body)?;
                if vbody[at + 1..].contains(body) {
                    return None;
                }
                (&vbody[..at], &vbody[at + body.len()..])
            } else {
                return None;
            };
            if (pre.is_empty() && post.is_empty()) || !affix(pre) || !affix(post) {
                return None;
            }
            return Some(Edit::Operand {
                index,
                pre: pre.to_string(),
                post: post.to_string(),
            });
        }
        if a.operands != b.operands || a.tokens[0] != b.tokens[0] {
            return None;
        }
        if a.tokens.len() == b.tokens.len() {
            let mut diff = a.tokens.iter().zip(&b.tokens).filter(|(x, y)| x != y);
            let (old, new) = diff.next()?;
            if diff.next().is_some() || !plain(old) || !plain(new) || a.tokens.contains(new) {
                return None;
            }
            // The old token must be unambiguous.
            if a.tokens.iter().filter(|t| *t == old).count() != 1 {
                return None;
            }
            return Some(Edit::Replace {
                old: old.to_string(),
                new: new.to_string(),
            });
        }
        if a.tokens.len() + 1 == b.tokens.len() {
            let at = a
                .tokens
                .iter()
                .zip(&b.tokens)
                .position(|(x, y)| x != y)
                .unwrap_or(a.tokens.len());
            if a.tokens[at..] != b.tokens[at + 1..] || !plain(b.tokens[at]) {
                return None;
            }
            return Some(Edit::Insert {
                after: u8::try_from(at).ok()?,
                token: b.tokens[at].to_string(),
            });
        }
        None
    }

    /// Whether the edit can apply to `template`.
    pub fn applies_to(&self, template: &str) -> bool {
        let p = parts(template);
        match self {
            Edit::Operand { index, .. } => operand_at(*index, p.operands.len()).is_some(),
            Edit::Replace { old, new } => {
                p.tokens.iter().filter(|t| *t == old).count() == 1 && !p.tokens.contains(&&**new)
            }
            Edit::Insert { after, token } => {
                usize::from(*after) >= 1
                    && usize::from(*after) <= p.tokens.len()
                    && !p.tokens.contains(&&**token)
            }
        }
    }

    /// The table-format text (`O index pre post`, `R old new`, `I after token`; `_` for an
    /// empty string).
    pub fn to_text(&self) -> String {
        let s = |x: &str| {
            if x.is_empty() {
                "_".to_string()
            } else {
                x.to_string()
            }
        };
        match self {
            Edit::Operand { index, pre, post } => format!("O {index} {} {}", s(pre), s(post)),
            Edit::Replace { old, new } => format!("R {old} {new}"),
            Edit::Insert { after, token } => format!("I {after} {token}"),
        }
    }

    /// Parses [`Edit::to_text`].
    pub fn parse(text: &str) -> Option<Edit> {
        let f: Vec<&str> = text.split(' ').collect();
        let s = |x: &str| {
            if x == "_" {
                String::new()
            } else {
                x.to_string()
            }
        };
        match f.as_slice() {
            ["O", i, pre, post] => Some(Edit::Operand {
                index: i.parse().ok()?,
                pre: s(pre),
                post: s(post),
            }),
            ["R", old, new] => Some(Edit::Replace {
                old: old.to_string(),
                new: new.to_string(),
            }),
            ["I", after, token] => Some(Edit::Insert {
                after: after.parse().ok()?,
                token: token.to_string(),
            }),
            _ => None,
        }
    }
}

/// Applies edits to a template: token replacements, then insertions (at the same place in
/// the order given), then operand edits — per operand, wraps (`|..|`) before prefixes and
/// suffixes, so that a negated absolute value prints `-|R|` as nvdisasm does. `None` when an
/// edit does not apply.
pub fn apply(template: &str, edits: &[&Edit]) -> Option<String> {
    let p = parts(template);
    let mut tokens: Vec<String> = p.tokens.iter().map(|t| t.to_string()).collect();
    for e in edits {
        if let Edit::Replace { old, new } = e {
            let i = p.tokens.iter().position(|t| t == old)?;
            tokens[i] = new.clone();
        }
    }
    // Insertions refer to positions in the base mnemonic.
    let mut inserted: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for e in edits {
        if let Edit::Insert { after, token } = e {
            let at = usize::from(*after);
            if at == 0 || at > p.tokens.len() {
                return None;
            }
            inserted.entry(at).or_default().push(token);
        }
    }
    let mut mnemonic = String::new();
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 {
            mnemonic.push('.');
        }
        mnemonic.push_str(t);
        if let Some(ins) = inserted.get(&(i + 1)) {
            for t in ins {
                mnemonic.push('.');
                mnemonic.push_str(t);
            }
        }
    }
    // Per operand: its signs and its body; sign edits go in front of the signs, the others
    // around the body (wraps first), so that `-` and `|..|` make `-|R|` in either order.
    let mut operands: Vec<(String, String)> = p
        .operands
        .iter()
        .map(|(c, _)| {
            let (s, b) = split_signs(c);
            (s.to_string(), b.to_string())
        })
        .collect();
    for pass in 0..4 {
        for e in edits {
            if let Edit::Operand { index, pre, post } = e {
                let kind = match (pre.is_empty(), post.is_empty()) {
                    (false, true) if is_signs(pre) => 3,
                    (false, false) => 0,
                    (false, true) => 1,
                    _ => 2,
                };
                if kind != pass {
                    continue;
                }
                let at = operand_at(*index, operands.len())?;
                let (signs, body) = &mut operands[at];
                if kind == 3 {
                    *signs = format!("{pre}{signs}");
                } else {
                    *body = format!("{pre}{body}{post}");
                }
            }
        }
    }
    let operands: Vec<String> = operands.into_iter().map(|(s, b)| s + &b).collect();
    let mut out = mnemonic;
    for (i, (op, (_, marker))) in operands.iter().zip(&p.operands).enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        out.push_str(op);
        out.push_str(marker);
    }
    Some(out)
}

/// Undoes `edit` in `template` (the template of an encoding whose flag bit is set, for a
/// word with it clear); `None` when the template does not show the edit.
pub fn unapply(template: &str, edit: &Edit) -> Option<String> {
    let p = parts(template);
    let mut tokens: Vec<&str> = p.tokens.clone();
    let mut operands: Vec<String> = p.operands.iter().map(|(c, _)| c.to_string()).collect();
    match edit {
        Edit::Operand { index, pre, post } => {
            let at = operand_at(*index, operands.len())?;
            let op = &mut operands[at];
            let (signs, body) = split_signs(op);
            let new = if post.is_empty() && is_signs(pre) {
                format!("{}{body}", signs.strip_prefix(pre.as_str())?)
            } else {
                let inner = body
                    .strip_prefix(pre.as_str())?
                    .strip_suffix(post.as_str())?;
                if inner.is_empty() {
                    return None;
                }
                format!("{signs}{inner}")
            };
            *op = new;
        }
        Edit::Replace { old, new } => {
            if tokens.iter().filter(|t| *t == new).count() != 1 || tokens.contains(&old.as_str()) {
                return None;
            }
            let i = tokens.iter().position(|t| t == new)?;
            tokens[i] = old;
        }
        Edit::Insert { after, token } => {
            let at = usize::from(*after);
            if tokens.get(at) != Some(&token.as_str()) {
                return None;
            }
            tokens.remove(at);
        }
    }
    let mut out = tokens.join(".");
    for (i, (op, (_, marker))) in operands.iter().zip(&p.operands).enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        out.push_str(op);
        out.push_str(marker);
    }
    Some(out)
}

/// Whether `target` shows `edit` made to `base` (a necessary condition for
/// `apply(base, [.., edit, ..]) == target`; used to find the flags that explain a text).
pub fn shows(base: &str, target: &str, edit: &Edit) -> bool {
    shows_in(&parts(base), &parts(target), edit)
}

/// [`shows`] on templates already split by [`parts`].
pub fn shows_in(b: &Parts<'_>, t: &Parts<'_>, edit: &Edit) -> bool {
    match edit {
        Edit::Operand { index, pre, post } => {
            if b.operands.len() != t.operands.len() {
                return false;
            }
            let Some(i) = operand_at(*index, b.operands.len()) else {
                return false;
            };
            let ((bc, _), (tc, _)) = (b.operands[i], t.operands[i]);
            let ((bs, bb), (ts, tb)) = (split_signs(bc), split_signs(tc));
            if post.is_empty() && is_signs(pre) {
                ts.len() > bs.len() && ts.starts_with(pre.as_str())
            } else {
                tb.len() > bb.len() && tb.starts_with(pre.as_str()) && tb.ends_with(post.as_str())
            }
        }
        Edit::Replace { new, .. } => t.tokens.contains(&new.as_str()),
        Edit::Insert { token, .. } => t.tokens.contains(&token.as_str()),
    }
}

/// The position of operand `index` (negative: from the end) among `n` operands.
fn operand_at(index: i8, n: usize) -> Option<usize> {
    let at = if index < 0 {
        n.checked_sub(usize::from(index.unsigned_abs()))?
    } else {
        usize::from(index.unsigned_abs())
    };
    (at < n).then_some(at)
}

/// A place of a template that an edit changes: its mnemonic, or one operand (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Mnemonic,
    Operand(usize),
}

impl Edit {
    /// The one place this edit changes in a template of `n` operands (`None` for an operand
    /// index outside them: no template of that shape takes the edit).
    pub fn place(&self, n: usize) -> Option<Place> {
        match self {
            Edit::Operand { index, .. } => operand_at(*index, n).map(Place::Operand),
            Edit::Replace { .. } | Edit::Insert { .. } => Some(Place::Mnemonic),
        }
    }
}

/// The places where two templates differ (mnemonics, and operands without reuse markers);
/// `None` when their operand counts differ.
pub fn differing_places(a: &str, b: &str) -> Option<Vec<Place>> {
    let (a, b) = (parts(a), parts(b));
    if a.operands.len() != b.operands.len() {
        return None;
    }
    let mut out = Vec::new();
    if a.tokens != b.tokens {
        out.push(Place::Mnemonic);
    }
    for (k, (x, y)) in a.operands.iter().zip(&b.operands).enumerate() {
        if x.0 != y.0 {
            out.push(Place::Operand(k));
        }
    }
    Some(out)
}

impl Edit {
    /// The same edit with its operand counted from the end of `template`'s operands (other
    /// edits unchanged).
    pub fn from_end(&self, template: &str) -> Edit {
        match self {
            Edit::Operand { index, pre, post } if *index >= 0 => {
                let n = parts(template).operands.len() as i64;
                match i8::try_from(i64::from(*index) - n) {
                    Ok(back) => Edit::Operand {
                        index: back,
                        pre: pre.clone(),
                        post: post.clone(),
                    },
                    Err(_) => self.clone(),
                }
            }
            _ => self.clone(),
        }
    }
}

/// What setting a flag bit does: one edit, or for some bits another edit when the mnemonic
/// has a given token (bit 75 of `IADD3` negates its last source, `-R`, but complements it
/// in `IADD3.X`, `~R`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagEdit {
    pub edit: Edit,
    /// `(token, edit)`: the edit for templates whose mnemonic has `token`.
    pub when: Option<(String, Edit)>,
}

impl FlagEdit {
    pub fn plain(edit: Edit) -> FlagEdit {
        FlagEdit { edit, when: None }
    }

    /// The edit the bit makes to `template` (the mnemonic decides).
    pub fn edit_for(&self, template: &str) -> &Edit {
        match &self.when {
            Some((token, alt)) if has_token(template, token) => alt,
            _ => &self.edit,
        }
    }
}

/// The mnemonic tokens these flag edits can write: an applied `Replace` writes `new`, an
/// undone one `old`; an `Insert` writes its token (operand edits never touch the mnemonic).
pub fn written_tokens<'e>(edits: impl Iterator<Item = &'e FlagEdit>) -> Vec<&'e str> {
    let mut out: Vec<&str> = Vec::new();
    for f in edits {
        for e in std::iter::once(&f.edit).chain(f.when.as_ref().map(|(_, e)| e)) {
            match e {
                Edit::Replace { old, new } => out.extend([old.as_str(), new.as_str()]),
                Edit::Insert { token, .. } => out.push(token),
                Edit::Operand { .. } => {}
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether flags could make, from `base`, a template whose mnemonic is `key`'s: every token
/// of `key`'s mnemonic must be one of `base`'s or one the flags write ([`written_tokens`]).
/// A necessary condition only, cheap enough to rule out most encodings of a shape before
/// [`crate::Table`]'s composed search builds any template.
pub fn mnemonic_reachable(base: &str, key: &str, written: &[&str]) -> bool {
    let base_mnemonic = base.split(' ').next().unwrap_or("");
    key.split(' ')
        .next()
        .unwrap_or("")
        .split('.')
        .all(|t| base_mnemonic.split('.').any(|b| b == t) || written.binary_search(&t).is_ok())
}

/// Whether `template`'s mnemonic has the dot-separated token `token`.
pub fn has_token(template: &str, token: &str) -> bool {
    let mnemonic = template.split(' ').next().unwrap_or("");
    mnemonic.split('.').any(|t| t == token)
}

/// The first mnemonic token and the number of operands of a template.
pub fn shape(template: &str) -> (&str, usize) {
    let p = parts(template);
    (p.tokens[0], p.operands.len())
}

/// What no combination of flags changes in a template: each operand's span from its first
/// to its last slot (`%][%` of `c[%][%]`, `%` of `-|%|.H1`, nothing for an operand without a
/// slot), joined by `, `. Operand edits only add or remove text around an operand's body,
/// mnemonic edits only touch the mnemonic, and neither may write a `%` ([`Edit::Operand`]'s
/// affixes, [`Edit::Replace`]'s and [`Edit::Insert`]'s tokens), so templates that flags make
/// of one another have equal spans. Reuse markers are ignored.
pub fn slot_spans(template: &str) -> String {
    let rest = template.split_once(' ').map_or("", |(_, r)| r);
    let mut out = String::with_capacity(rest.len());
    for (k, op) in rest.split(", ").filter(|s| !s.is_empty()).enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let op = split_marker(op).0;
        if let (Some(i), Some(j)) = (op.find('%'), op.rfind('%')) {
            out.push_str(&op[i..=j]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonic_reachable_asks_for_every_token() {
        let replace = FlagEdit::plain(Edit::Replace {
            old: "ADD".into(),
            new: "INC".into(),
        });
        let insert = FlagEdit::plain(Edit::Insert {
            after: 1,
            token: "64".into(),
        });
        let operand = FlagEdit::plain(Edit::Operand {
            index: 1,
            pre: "-".into(),
            post: String::new(),
        });
        let written = written_tokens([&replace, &insert, &operand].into_iter());
        assert_eq!(written, ["64", "ADD", "INC"]);
        let base = "ATOMG.E.ADD.STRONG.GPU %, %, [%], %";
        // Tokens of the base, or written by a flag (made or undone), in any order.
        assert!(mnemonic_reachable(
            base,
            "ATOMG.E.INC.STRONG.GPU %, %, [%], %",
            &written
        ));
        assert!(mnemonic_reachable(
            base,
            "ATOMG.E.64.ADD %, %, [%], %",
            &written
        ));
        // A token nothing writes.
        assert!(!mnemonic_reachable(
            base,
            "ATOMG.E.EXCH.STRONG.GPU %, %, [%], %",
            &written
        ));
        assert!(!mnemonic_reachable(
            base,
            "ATOMG.E.INC.STRONG.GPU %, %, [%], %",
            &[]
        ));
    }

    #[test]
    fn flags_keep_slot_spans() {
        let base = "IMAD %^0, %^1, c[%][%], %";
        assert_eq!(slot_spans(base), "%, %, %][%, %");
        let edits = [
            Edit::Operand {
                index: 1,
                pre: "-".into(),
                post: String::new(),
            },
            Edit::Operand {
                index: 3,
                pre: "|".into(),
                post: "|.H1".into(),
            },
            Edit::Insert {
                after: 1,
                token: "WIDE".into(),
            },
        ];
        let edited = apply(base, &edits.iter().collect::<Vec<_>>()).expect("applies");
        assert_eq!(edited, "IMAD.WIDE %^0, -%^1, c[%][%], |%|.H1");
        assert_eq!(slot_spans(&edited), slot_spans(base));
        assert_ne!(slot_spans("IMAD %, %, %, %"), slot_spans(base));
        assert_eq!(slot_spans("EXIT"), "");
    }

    fn not_last() -> Edit {
        Edit::Operand {
            index: 4,
            pre: "!".into(),
            post: String::new(),
        }
    }

    fn abs_first_operand() -> Edit {
        Edit::Operand {
            index: 2,
            pre: "|".into(),
            post: "|".into(),
        }
    }

    #[test]
    fn operands_counted_from_the_end() {
        let base = "IADD3 %, %^0, %^1, %^2";
        let neg = Edit::between(base, "IADD3 %, %^0, %^1, -%^2").unwrap();
        let back = neg.from_end(base);
        assert_eq!(back.to_text(), "O -1 - _");
        assert_eq!(Edit::parse("O -1 - _"), Some(back.clone()));
        // The same edit on the form with two carry-out predicates.
        assert_eq!(
            apply("IADD3 %, %, %, %^0, %^1, %^2", &[&back]).unwrap(),
            "IADD3 %, %, %, %^0, %^1, -%^2"
        );
        assert_eq!(
            unapply("IADD3 %, %, %, %^0, %^1, -%^2", &back).unwrap(),
            "IADD3 %, %, %, %^0, %^1, %^2"
        );
        assert!(shows(
            "IADD3 %, %, %^0, %^1, %^2",
            "IADD3 %, %, %^0, %^1, -%^2",
            &back
        ));
        assert!(!back.applies_to("NOP"));
    }

    #[test]
    fn a_flag_may_depend_on_a_mnemonic_token() {
        let flag = FlagEdit {
            edit: Edit::parse("O -1 - _").unwrap(),
            when: Some(("X".into(), Edit::parse("O -3 ~ _").unwrap())),
        };
        assert_eq!(
            flag.edit_for("IADD3 %, %^0, %^1, %^2").to_text(),
            "O -1 - _"
        );
        assert_eq!(
            flag.edit_for("IADD3.X %, %^0, %^1, %^2, %, %").to_text(),
            "O -3 ~ _"
        );
        // A token of an operand is not one of the mnemonic.
        assert!(!has_token("IADD3 X, %", "X"));
    }

    #[test]
    fn edits_between_templates() {
        let base = "DFMA %, %^0, %^1, %^2";
        let neg = Edit::between(base, "DFMA %, -%^0, %^1, %^2").unwrap();
        assert_eq!(neg.to_text(), "O 1 - _");
        let abs = Edit::between(base, "DFMA %, %^0, %^1, |%|^2").unwrap();
        assert_eq!(abs.to_text(), "O 3 | |");
        assert_eq!(
            apply(base, &[&neg, &abs]).unwrap(),
            "DFMA %, -%^0, %^1, |%|^2"
        );
        // A negated absolute value: the wrap goes on first whatever the order.
        let neg3 = Edit::between(base, "DFMA %, %^0, %^1, -%^2").unwrap();
        assert_eq!(
            apply(base, &[&neg3, &abs]).unwrap(),
            "DFMA %, %^0, %^1, -|%|^2"
        );
        let xor = Edit::between(
            "ISETP.NE.U32.AND %, %, %^0, %, %",
            "ISETP.NE.U32.XOR %, %, %^0, %, %",
        )
        .unwrap();
        assert_eq!(xor.to_text(), "R AND XOR");
        let not = Edit::between(
            "ISETP.NE.U32.AND %, %, %^0, %, %",
            "ISETP.NE.U32.AND %, %, %^0, %, !%",
        )
        .unwrap();
        assert_eq!(
            apply("ISETP.NE.U32.AND %, %, %^0, %, %", &[&xor, &not]).unwrap(),
            "ISETP.NE.U32.XOR %, %, %^0, %, !%"
        );
        let ftz = Edit::between("FADD %, %, %", "FADD.FTZ %, %, %").unwrap();
        assert_eq!(
            ftz,
            Edit::Insert {
                after: 1,
                token: "FTZ".into()
            }
        );
        assert_eq!(
            apply("FADD.RZ %, %, %", &[&ftz]).unwrap(),
            "FADD.FTZ.RZ %, %, %"
        );
        for e in [&neg, &abs, &xor, &not, &ftz] {
            assert_eq!(Edit::parse(&e.to_text()).as_ref(), Some(e));
        }
        // An absolute value around an already negated operand, and the other way round.
        let abs_of_neg = Edit::between(
            "DSETP.LT.AND %, %, -%^0, %, %",
            "DSETP.LT.AND %, %, -|%|^0, %, %",
        )
        .unwrap();
        assert_eq!(abs_of_neg, abs_first_operand());
        let neg_of_abs =
            Edit::between("DFMA %, |%|^0, %^1, %^2", "DFMA %, -|%|^0, %^1, %^2").unwrap();
        assert_eq!(neg_of_abs, neg);
        // Undoing an edit (a word with the flag bit clear, the encoding with it set).
        assert_eq!(
            unapply("ISETP.NE.XOR %, %, %^0, %^1, !%", &not_last()).unwrap(),
            "ISETP.NE.XOR %, %, %^0, %^1, %"
        );
        assert_eq!(
            unapply("DFMA %, %^0, %^1, -|%|^2", &abs).unwrap(),
            "DFMA %, %^0, %^1, -%^2"
        );
        assert_eq!(
            unapply("FADD.FTZ.RZ %, %, %", &ftz).unwrap(),
            "FADD.RZ %, %, %"
        );
        assert_eq!(unapply("FADD.RZ %, %, %", &ftz), None);
        assert_eq!(
            unapply("ISETP.NE.U32.XOR %, %, %^0, %, %", &xor).unwrap(),
            "ISETP.NE.U32.AND %, %, %^0, %, %"
        );
        // Two differences, or a change that is not an insertion, is no edit.
        assert_eq!(Edit::between(base, "DFMA %, -%^0, -%^1, %^2"), None);
        assert_eq!(Edit::between("IADD3 %, %, %", "IADD3.X %, %, %, %"), None);
        assert_eq!(Edit::between("MOV %, %", "MOV %, 0x1"), None);
    }
}
