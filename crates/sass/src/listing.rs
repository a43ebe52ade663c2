//! Printing whole functions as `nvdisasm -c` does: branch targets become `` `(.L_x_N) ``
//! labels, numbered in order of first reference over all functions of a file, and relocated
//! operands print as the relocation (`32@lo((f + .L_x_0@srel))`, `` `(callee) ``).

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

/// One function of a file to list: its code words (at addresses 0, 16, ...), the (address,
/// name) of the symbols its code section defines, its indirect branches, and the relocations
/// of its code.
#[derive(Debug, Clone, Copy)]
pub struct FunctionCode<'a> {
    pub words: &'a [u128],
    pub symbols: &'a [(u64, String)],
    pub indirect: &'a [IndirectBranch],
    pub relocs: &'a [CodeReloc],
}

/// A relocation of a function's code (the cubin's `.rel(a).text.<function>`), which nvdisasm
/// prints in place of the operand it patches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeReloc {
    /// Address of the patched instruction.
    pub offset: u64,
    /// The `R_CUDA_*` type number.
    pub rtype: u32,
    /// The symbol's name.
    pub symbol: String,
    /// Symbol value + addend when the symbol lies in this function's own section.
    pub target_here: Option<u64>,
}

/// `R_CUDA_ABS32_LO_32` / `R_CUDA_ABS32_HI_32` (56, 57): the low / high half of an absolute
/// address in a 32-bit immediate; nvdisasm prints `32@lo((sym + .L_x_N@srel))` for an address
/// inside the function (device-debug code builds return addresses this way).
const R_CUDA_ABS32_LO_32: u32 = 56;
const R_CUDA_ABS32_HI_32: u32 = 57;
/// `R_CUDA_ABS47_34` (58, sm_75..sm_89) / `R_CUDA_ABS55_16_34` (75, sm_90 on): the absolute
/// target of `CALL.ABS.NOINC`, printed `` `(callee) ``. Numbers and names as
/// `cuobjdump -elf` prints them for ptxas 13.0.88's `-g` cubins.
const R_CUDA_ABS47_34: u32 = 58;
const R_CUDA_ABS55_16_34: u32 = 75;

/// The text of `text` (an instruction whose relocated operand decodes as `0x0`, the last
/// operand) with that operand as nvdisasm prints the relocation; `None` for a form not known
/// (the text then stays as decoded).
fn relocated_text(text: &str, r: &CodeReloc, label: Option<&str>) -> Option<String> {
    let head = text.strip_suffix(" 0x0")?;
    let op = match r.rtype {
        R_CUDA_ABS32_LO_32 | R_CUDA_ABS32_HI_32 => {
            let half = if r.rtype == R_CUDA_ABS32_LO_32 {
                "lo"
            } else {
                "hi"
            };
            format!("32@{half}(({} + {}@srel))", r.symbol, label?)
        }
        R_CUDA_ABS47_34 | R_CUDA_ABS55_16_34 => format!("`({})", r.symbol),
        _ => return None,
    };
    Some(format!("{head} {op}"))
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
        let f = FunctionCode {
            words,
            symbols,
            indirect: &[],
            relocs: &[],
        };
        self.listings(&[f], labels).pop().unwrap_or_default()
    }

    /// Disassembles the functions of one file, in file order, as `nvdisasm -c` does. Labels
    /// are numbered in two passes over all functions (read from nvdisasm 13.2's listings of
    /// ptxas cubins): first the targets of direct branches, in order of first reference;
    /// then, per indirect branch (EIATTR_INDIRECT_BRANCH_TARGETS, in the cubin's order), one
    /// number for the branch itself and one per listed target, duplicates included, where an
    /// address that already has a label keeps it and its number goes unused. The indirect
    /// branch prints its distinct targets after it: `(*"BRANCH_TARGETS .L_x_a,.L_x_b"*)`.
    pub fn listings(&self, funcs: &[FunctionCode<'_>], labels: &mut Labels) -> Vec<Vec<Line>> {
        let decoded: Vec<Vec<_>> = funcs
            .iter()
            .map(|f| {
                f.words
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| self.decode(w, (i * 16) as u64))
                    .collect()
            })
            .collect();
        let mut names: Vec<HashMap<i128, String>> = funcs
            .iter()
            .map(|f| {
                f.symbols
                    .iter()
                    .map(|(a, n)| (i128::from(*a), format!("`({n})")))
                    .collect()
            })
            .collect();
        // Addresses that relocated return-address immediates name take the first numbers,
        // over all functions, in address order (read from nvdisasm 13.2's listings of
        // ptxas -g cubins); then the targets of direct branches.
        for (f, names) in funcs.iter().zip(&mut names) {
            for r in f.relocs {
                if let (R_CUDA_ABS32_LO_32 | R_CUDA_ABS32_HI_32, Some(t)) = (r.rtype, r.target_here)
                {
                    names.entry(i128::from(t)).or_insert_with(|| {
                        labels.next += 1;
                        format!("`(.L_x_{})", labels.next - 1)
                    });
                }
            }
        }
        for (d, names) in decoded.iter().zip(&mut names) {
            for v in d.iter().flatten().flat_map(|d| d.values.iter()) {
                if let Value::Target(t) = v {
                    names.entry(*t).or_insert_with(|| {
                        labels.next += 1;
                        format!("`(.L_x_{})", labels.next - 1)
                    });
                }
            }
        }
        for (f, names) in funcs.iter().zip(&mut names) {
            for (at, targets) in f.indirect {
                for a in std::iter::once(at).chain(targets) {
                    let n = labels.next;
                    labels.next += 1;
                    names
                        .entry(i128::from(*a))
                        .or_insert_with(|| format!("`(.L_x_{n})"));
                }
            }
        }
        funcs
            .iter()
            .zip(&decoded)
            .zip(&names)
            .map(|((f, decoded), names)| {
                let mut notes: HashMap<u64, String> = HashMap::new();
                for (at, targets) in f.indirect {
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
                    .zip(f.words)
                    .enumerate()
                    .map(|(i, (d, &word))| {
                        let pc = (i * 16) as u64;
                        let mut text = match d {
                            Some(d) => d.text(&label),
                            None => crate::unknown_text(word),
                        };
                        if let Some(r) = f.relocs.iter().find(|r| r.offset == pc) {
                            let l = r
                                .target_here
                                .and_then(|t| names.get(&i128::from(t)))
                                .map(|n| &n[2..n.len() - 1]);
                            if let Some(t) = relocated_text(&text, r, l) {
                                text = t;
                            }
                        }
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
            })
            .collect()
    }
}
