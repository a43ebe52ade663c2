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
        let label = |t: i128| names.get(&t).cloned();
        decoded
            .iter()
            .zip(words)
            .enumerate()
            .map(|(i, (d, &word))| Line {
                pc: (i * 16) as u64,
                word,
                text: match d {
                    Some(d) => d.text(&label),
                    None => crate::unknown_text(word),
                },
                known: d.is_some(),
                label: names
                    .get(&((i * 16) as i128))
                    .filter(|n| n.starts_with("`(.L_x_"))
                    .map(|n| n[2..n.len() - 1].to_string()),
            })
            .collect()
    }
}
