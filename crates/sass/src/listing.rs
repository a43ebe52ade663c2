//! Printing whole functions as `nvdisasm -c` does: branch targets become `` `(.L_x_N) ``
//! labels, numbered in order of first reference over all functions of a file.

use std::collections::HashMap;

use crate::decode::Value;
use crate::table::Table;

/// Label numbers shared by the functions of one file (nvdisasm numbers on across functions).
#[derive(Debug, Default)]
pub struct Labels {
    next: usize,
}

/// One printed instruction of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub pc: u64,
    pub word: u128,
    /// The text as `nvdisasm -c` prints it (without address and ` ;`), or an `.unknown` line.
    pub text: String,
    /// Whether the table knew the word.
    pub known: bool,
    /// The `.L_x_N` label defined at this address, if a branch targets it.
    pub label: Option<String>,
}

/// An indirect branch (`BRX`) of a function: its code offset and the offsets it may jump to,
/// in the order the cubin lists them (EIATTR_INDIRECT_BRANCH_TARGETS; duplicates kept).
pub type IndirectBranch = (u32, Vec<u32>);

impl Table {
    /// Disassembles one function's code (`words` at addresses 0, 16, ...), naming branch
    /// targets with labels from `labels`. `symbols` are (address, name) of the symbols that
    /// the code section defines (the function itself at 0, internal subroutines): targets at
    /// those addresses print as `` `(name) `` and take no label number, as in nvdisasm.
    pub fn listing(
        &self,
        words: &[u128],
        symbols: &[(u64, String)],
        labels: &mut Labels,
    ) -> Vec<Line> {
        self.listing_with_indirect(words, symbols, &[], labels)
    }

    /// [`Table::listing`] for a function with indirect branches (from its cubin): as nvdisasm
    /// does, the branch instruction is followed by `(*"BRANCH_TARGETS .L_x_a,.L_x_b"*)`
    /// naming its distinct targets in the cubin's order, and labels are numbered after the
    /// direct branch targets: per indirect branch, one number for the branch itself, then one
    /// per listed target (duplicates included); an address that already has a label keeps it
    /// and its number goes unused (read from nvdisasm 13.2's listings of ptxas cubins).
    pub fn listing_with_indirect(
        &self,
        words: &[u128],
        symbols: &[(u64, String)],
        indirect: &[IndirectBranch],
        labels: &mut Labels,
    ) -> Vec<Line> {
        let decoded: Vec<_> = words
            .iter()
            .enumerate()
            .map(|(i, &w)| self.decode(w, (i * 16) as u64))
            .collect();
        let mut names: HashMap<i128, String> = symbols
            .iter()
            .map(|(a, n)| (i128::from(*a), format!("`({n})")))
            .collect();
        for d in decoded.iter().flatten() {
            for v in &d.values {
                if let Value::Target(t) = v {
                    names.entry(*t).or_insert_with(|| {
                        labels.next += 1;
                        format!("`(.L_x_{})", labels.next - 1)
                    });
                }
            }
        }
        for (at, targets) in indirect {
            for a in std::iter::once(at).chain(targets) {
                let n = labels.next;
                labels.next += 1;
                names
                    .entry(i128::from(*a))
                    .or_insert_with(|| format!("`(.L_x_{n})"));
            }
        }
        let mut notes: HashMap<u64, String> = HashMap::new();
        for (at, targets) in indirect {
            let mut seen = Vec::new();
            for t in targets {
                if !seen.contains(t) {
                    seen.push(*t);
                }
            }
            let list: Vec<&str> = seen
                .iter()
                .filter_map(|t| names.get(&i128::from(*t)))
                .map(|n| &n[2..n.len() - 1])
                .collect();
            notes.insert(
                u64::from(*at),
                format!(" (*\"BRANCH_TARGETS {}\"*)", list.join(",")),
            );
        }
        let label = |t: i128| names.get(&t).cloned();
        decoded
            .iter()
            .zip(words)
            .enumerate()
            .map(|(i, (d, &word))| {
                let pc = (i * 16) as u64;
                let mut text = match d {
                    Some(d) => d.text(&label),
                    None => crate::unknown_text(word),
                };
                if let Some(n) = notes.get(&pc) {
                    text.push_str(n);
                }
                Line {
                    pc,
                    word,
                    text,
                    known: d.is_some(),
                    label: names
                        .get(&(pc as i128))
                        .filter(|n| n.starts_with("`(.L_x_"))
                        .map(|n| n[2..n.len() - 1].to_string()),
                }
            })
            .collect()
    }
}
