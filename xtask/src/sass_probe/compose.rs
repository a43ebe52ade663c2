//! Modifier flags of a learned table (`sass::compose`): single bits whose effect on the text is
//! one fixed edit, found from pairs of encodings and kept per encoding only in the
//! combinations nvdisasm confirms.
//!
//! 1. Flags: for every pair of encodings of one opcode whose values differ in exactly one bit
//!    `b` (clear in the first) and whose slots and guard agree, the edit between their
//!    templates (`sass::compose::Edit::between`). A bit whose pairs all show the same edit is
//!    a flag of the opcode; a bit with conflicting edits is none. A bit without pairs in one
//!    operand form (opcode bits 9..11) takes the edit the other forms agree on.
//! 2. Candidates: for each encoding, the flags of its opcode that its mask fixes: to 0 when
//!    the edit applies to its template, to 1 when the template shows the edit (a word with the
//!    bit clear undoes it).
//! 3. Validation against nvdisasm, decoding with the whole table (exact encodings first, as
//!    the decoder does): each flag alone (2 words with random operand fields), every pair of
//!    flags (all pairs up to 12 flags, else a sample), and random sets of 3 to 5. A flag that
//!    prints wrong alone or is never confirmed is dropped; then, while a combination fails,
//!    the flag in most failing combinations is dropped. Words nvdisasm calls illegal or prints
//!    with `???` prove nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use sass::compose::{Edit, FlagEdit};
use sass::table::{OPCODE_MASK, Table};

use super::nvdisasm;

/// Version of this method (recorded in the table header).
pub const COMPOSE_VERSION: u32 = 2;

/// Flag bits are operand-area bits: past the opcode and guard, before the control field.
const FIRST_FLAG_BIT: u8 = 16;
const LAST_FLAG_BIT: u8 = 104;

/// Control field of the validation words (that of a plain `NOP`: stall 0, no scoreboards).
const CONTROL: u128 = 0x000f_c000_0000_0000 << 64;

/// Finds the flags of `table`, validates them and stores them in it; returns (flags kept,
/// encodings with flags).
pub fn compose(sm: &str, table: &mut Table) -> Result<(usize, usize), String> {
    table.set_flags(BTreeMap::new(), vec![0; table.encodings.len()]);
    let flags = find_flags(table);
    eprintln!("compose: {} flag bits", flags.len());
    let mut cand: Vec<Vec<u8>> = table
        .encodings
        .iter()
        .map(|e| {
            let op = (e.value & OPCODE_MASK) as u16;
            let template = sass::table::strip_reuse_markers(&e.template);
            // Clear bits whose edit applies, set bits whose edit the template shows (a word
            // with the bit clear undoes it).
            (FIRST_FLAG_BIT..=LAST_FLAG_BIT)
                .filter(|&b| e.mask >> b & 1 == 1)
                .filter(|&b| {
                    flags.get(&(op, b)).is_some_and(|flag| {
                        let ed = flag.edit_for(&template);
                        if e.value >> b & 1 == 0 {
                            ed.applies_to(&template)
                        } else {
                            sass::compose::unapply(&template, ed).is_some()
                        }
                    })
                })
                .collect()
        })
        .collect();
    let mut rnd = super::learn::xorshift(0x9e37_79b9_7f4a_7c15);
    // Round 1: single flags and combinations, judged together.
    for round in 0..3 {
        let mut tests: Vec<(usize, u128)> = Vec::new();
        for (i, c) in cand.iter().enumerate() {
            if c.is_empty() {
                continue;
            }
            let bit = |b: u8| 1u128 << b;
            for &b in c {
                tests.push((i, bit(b)));
                tests.push((i, bit(b)));
            }
            let n = c.len();
            let mut pairs: Vec<(usize, usize)> = Vec::new();
            for x in 0..n {
                for y in x + 1..n {
                    pairs.push((x, y));
                }
            }
            if pairs.len() > 66 {
                for k in 0..66 {
                    let j = k + (rnd() as usize) % (pairs.len() - k);
                    pairs.swap(k, j);
                }
                pairs.truncate(66);
            }
            for (x, y) in pairs {
                tests.push((i, bit(c[x]) | bit(c[y])));
            }
            if n >= 3 {
                for _ in 0..4 {
                    let k = 3 + (rnd() as usize) % 3;
                    let mut set = 0u128;
                    for _ in 0..k.min(n) {
                        set |= bit(c[(rnd() as usize) % n]);
                    }
                    tests.push((i, set));
                }
            }
        }
        let composable: Vec<u128> = cand
            .iter()
            .map(|c| c.iter().fold(0u128, |m, &b| m | 1u128 << b))
            .collect();
        let used: BTreeMap<(u16, u8), FlagEdit> = flags.clone();
        table.set_flags(used, composable);
        let words: Vec<u128> = tests
            .iter()
            .map(|&(i, set)| random_word(table, i, &mut rnd) ^ set)
            .collect();
        eprintln!(
            "compose round {round}: {} encodings with flags, {} test words",
            cand.iter().filter(|c| !c.is_empty()).count(),
            words.len()
        );
        let texts = nvdisasm::texts(sm, &words)?;
        // Verdicts per (base encoding, flag set) the decoder actually used.
        let mut good: BTreeSet<(usize, u128)> = BTreeSet::new();
        let mut bad: BTreeSet<(usize, u128)> = BTreeSet::new();
        for (idx, ((w, t), &(i, set))) in words.iter().zip(&texts).zip(&tests).enumerate() {
            let Some(t) = t else { continue };
            if t.contains("???") {
                continue;
            }
            let pc = (idx * 16) as u64;
            let t = super::normalize(t);
            // A verdict on a composition from a decoded word.
            let mut judge = |base: usize, set: u128| {
                let ok = table
                    .decode_composed(base, set, *w, pc)
                    .is_some_and(|d| super::normalize(&d.text(&|_| None)) == t);
                if ok {
                    good.insert((base, set));
                } else {
                    bad.insert((base, set));
                }
            };
            // The composition itself, for words that are the base encoding's own without the
            // flags (random operands may make another encoding's alias: `PT` left out).
            if table.lookup_index(*w ^ set) == Some(i) {
                judge(i, set);
            }
            // And the composition the decoder picks, when no encoding matches the word.
            if table.lookup_index(*w).is_none()
                && let Some((base, e)) = table.compose_lookup(*w)
            {
                let s2 = e.value ^ table.encodings[base].value;
                if (base, s2) != (i, set) {
                    judge(base, s2);
                }
            }
        }
        let mut changed = false;
        for (i, c) in cand.iter_mut().enumerate() {
            if c.is_empty() {
                continue;
            }
            let before = c.len();
            // Singles: confirmed and never wrong.
            c.retain(|&b| {
                let s = 1u128 << b;
                good.contains(&(i, s)) && !bad.contains(&(i, s))
            });
            // Combinations: drop the flag in most failing ones until none fails.
            loop {
                let mask = c.iter().fold(0u128, |m, &b| m | 1u128 << b);
                let failing: Vec<u128> = bad
                    .range((i, 0)..=(i, u128::MAX))
                    .map(|&(_, s)| s)
                    .filter(|s| s.count_ones() > 1 && s & !mask == 0)
                    .collect();
                if failing.is_empty() {
                    break;
                }
                let worst = *c
                    .iter()
                    .max_by_key(|&&b| (failing.iter().filter(|s| *s >> b & 1 == 1).count(), b))
                    .expect("a failing set has flags");
                c.retain(|&b| b != worst);
            }
            // A single flag left proves nothing about combinations; it still decodes words
            // that differ from the encoding in that bit only.
            changed |= c.len() != before;
        }
        if !changed {
            break;
        }
    }
    let composable: Vec<u128> = cand
        .iter()
        .map(|c| c.iter().fold(0u128, |m, &b| m | 1u128 << b))
        .collect();
    let mut used: BTreeMap<(u16, u8), FlagEdit> = BTreeMap::new();
    for (e, c) in table.encodings.iter().zip(&cand) {
        let op = (e.value & OPCODE_MASK) as u16;
        for &b in c {
            used.insert((op, b), flags[&(op, b)].clone());
        }
    }
    let n_flags = used.len();
    let n_enc = composable.iter().filter(|&&c| c != 0).count();
    table.set_flags(used, composable);
    table.header.retain(|h| !h.starts_with("composition "));
    table.header.push(format!(
        "composition {COMPOSE_VERSION}; flags {n_flags}; encodings with flags {n_enc}"
    ));
    Ok((n_flags, n_enc))
}

/// Flags per (opcode, bit): bits whose encoding pairs all show one edit. An operand edit
/// whose pairs disagree on the operand's index but agree counted from the end (the same source
/// operand of forms with one, two or no carry-out predicates) is kept in that form. A bit
/// whose pairs show two edits, split by a mnemonic token that every base of one has and no
/// base of the other (`-R` in `IADD3`, `~R` in `IADD3.X`), is kept with that condition.
fn find_flags(table: &Table) -> BTreeMap<(u16, u8), FlagEdit> {
    let mut by_value: HashMap<u128, Vec<usize>> = HashMap::new();
    for (i, e) in table.encodings.iter().enumerate() {
        by_value.entry(e.value).or_default().push(i);
    }
    // Per (opcode, bit): the edits seen, as found and counted from the end.
    let mut seen: BTreeMap<(u16, u8), [BTreeSet<Edit>; 2]> = BTreeMap::new();
    // Per (opcode, bit) and edit (counted from the end): the mnemonics of its bases.
    let mut bases: BTreeMap<(u16, u8), BTreeMap<Edit, BTreeSet<String>>> = BTreeMap::new();
    for e in &table.encodings {
        let op = (e.value & OPCODE_MASK) as u16;
        let base = sass::table::strip_reuse_markers(&e.template);
        for b in FIRST_FLAG_BIT..=LAST_FLAG_BIT {
            let bit = 1u128 << b;
            if e.mask & bit == 0 || e.value & bit != 0 {
                continue;
            }
            let Some(list) = by_value.get(&(e.value | bit)) else {
                continue;
            };
            for &j in list {
                let v = &table.encodings[j];
                if v.mask & bit == 0 || v.guard != e.guard || v.slots != e.slots {
                    continue;
                }
                let variant = sass::table::strip_reuse_markers(&v.template);
                let [fwd, back] = seen.entry((op, b)).or_default();
                match Edit::between(&base, &variant) {
                    Some(ed) => {
                        let mnemonic = base.split(' ').next().unwrap_or("").to_string();
                        bases
                            .entry((op, b))
                            .or_default()
                            .entry(ed.from_end(&base))
                            .or_default()
                            .insert(mnemonic);
                        back.insert(ed.from_end(&base));
                        fwd.insert(ed);
                    }
                    // Another kind of change (a different alias): not a flag.
                    None if base != variant => {
                        let other = Edit::Replace {
                            old: String::new(),
                            new: String::new(),
                        };
                        fwd.insert(other.clone());
                        back.insert(other);
                    }
                    None => {}
                }
            }
        }
    }
    // Other operand forms of the same instruction (opcode bits 9..11: register, immediate,
    // constant, uniform register) usually keep their modifier bits: a bit with no pair in
    // one form borrows the edit most of its other forms show (validation has the last word).
    let mut family: BTreeMap<(u16, u8), Vec<[BTreeSet<Edit>; 2]>> = BTreeMap::new();
    for ((op, b), sets) in &seen {
        family
            .entry((op & 0x1ff, *b))
            .or_default()
            .push(sets.clone());
    }
    let opcodes: BTreeSet<u16> = table
        .encodings
        .iter()
        .map(|e| (e.value & OPCODE_MASK) as u16)
        .collect();
    for &op in &opcodes {
        for ((fop, b), forms) in family.range((op & 0x1ff, 0)..=(op & 0x1ff, u8::MAX)) {
            debug_assert_eq!(*fop, op & 0x1ff);
            if let Some(sets) = borrowed(forms) {
                seen.entry((op, *b)).or_insert(sets);
            }
        }
    }
    let not_alias = |ed: &Edit| !matches!(ed, Edit::Replace { old, .. } if old.is_empty());
    seen.into_iter()
        .filter_map(|(k, [fwd, back])| {
            if fwd.len() == 1 {
                return Some((k, FlagEdit::plain(fwd.into_iter().next()?)));
            }
            if back.len() == 1 {
                return Some((k, FlagEdit::plain(back.into_iter().next()?)));
            }
            if back.len() == 2 && back.iter().all(not_alias) {
                let by_edit = bases.get(&k)?;
                return split_by_token(by_edit).map(|f| (k, f));
            }
            None
        })
        .filter(|(_, f)| not_alias(&f.edit))
        .collect()
}

/// The edit a form borrows from the other forms of its instruction, which may have other
/// numbers of operands (`HFMA2.MMA R, R, R, R` and `HFMA2.MMA R, R, 0.5, 0.5, R`): each form
/// whose pairs agree votes for its edit counted from the start and from the end; the edit with
/// most votes wins, on a tie the one nearer its end (the destination and first sources from
/// the start, the last sources from the end).
fn borrowed(forms: &[[BTreeSet<Edit>; 2]]) -> Option<[BTreeSet<Edit>; 2]> {
    let mut votes: BTreeMap<&Edit, usize> = BTreeMap::new();
    for [fwd, back] in forms {
        let mut mine: BTreeSet<&Edit> = BTreeSet::new();
        for set in [fwd, back] {
            if set.len() == 1 {
                mine.extend(set.iter());
            }
        }
        for e in mine {
            *votes.entry(e).or_default() += 1;
        }
    }
    let reach = |e: &Edit| match e {
        Edit::Operand { index, .. } => index.unsigned_abs(),
        _ => 0,
    };
    let (best, _) = votes
        .into_iter()
        .max_by_key(|&(e, n)| (n, std::cmp::Reverse(reach(e))))?;
    let one: BTreeSet<Edit> = [best.clone()].into();
    Some([one.clone(), one])
}

/// Two edits of one bit told apart by a mnemonic token: every base of one has it, no base of
/// the other does. Only operand edits (a token edit would change the condition).
fn split_by_token(by_edit: &BTreeMap<Edit, BTreeSet<String>>) -> Option<FlagEdit> {
    let v: Vec<(&Edit, &BTreeSet<String>)> = by_edit.iter().collect();
    let [(e0, m0), (e1, m1)] = v.as_slice() else {
        return None;
    };
    if !matches!(e0, Edit::Operand { .. }) || !matches!(e1, Edit::Operand { .. }) {
        return None;
    }
    let tokens =
        |m: &String| -> BTreeSet<String> { m.split('.').skip(1).map(str::to_string).collect() };
    let all = |set: &BTreeSet<String>| -> BTreeSet<String> {
        let mut it = set.iter().map(tokens);
        let first = it.next().unwrap_or_default();
        it.fold(first, |a, t| a.intersection(&t).cloned().collect())
    };
    for (with, with_m, without, without_m) in [(e0, m0, e1, m1), (e1, m1, e0, m0)] {
        let token = all(with_m)
            .into_iter()
            .find(|t| without_m.iter().all(|m| !tokens(m).contains(t)));
        if let Some(token) = token {
            return Some(FlagEdit {
                edit: (*without).clone(),
                when: Some((token, (*with).clone())),
            });
        }
    }
    None
}

/// A word of encoding `i` with random operand fields and guard.
fn random_word(table: &Table, i: usize, rnd: &mut dyn FnMut() -> u64) -> u128 {
    let e = &table.encodings[i];
    let free = super::learn::operand_bits(e);
    let r = u128::from(rnd()) | u128::from(rnd()) << 64;
    (e.value | e.defaults | (r & free & !e.mask)) & !sass::control::CONTROL_MASK | CONTROL
}
