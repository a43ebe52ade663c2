//! `cargo xtask corpus disasm --arch sm_XX [--dir DIR]`: compiles every corpus file whose
//! `.target` allows the arch with ptxas, then compares, instruction by instruction, our
//! decoder's text with `nvdisasm -c` and our re-encoding of our decode with the original word.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use super::{CorpusArgs, PtxasOutcome};
use crate::oracle;

/// The code of a cubin: per `.text.<function>` section in file order, the function name, the
/// code bytes, and the (offset, name) of the symbols defined in the section.
pub type CodeSections = Vec<(String, Vec<u8>, Vec<(u64, String)>)>;

/// Reads a cubin's code sections (ELF glue kept in one place; to be replaced by
/// `crates/cubin`).
pub fn code_sections(cubin: &Path) -> Result<CodeSections, String> {
    use object::{Object, ObjectSection, ObjectSymbol};
    let data = std::fs::read(cubin).map_err(|e| format!("{}: {e}", cubin.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", cubin.display()))?;
    let mut out = Vec::new();
    for s in file.sections() {
        let Ok(name) = s.name() else { continue };
        if let Some(f) = name.strip_prefix(".text.") {
            let bytes = s
                .data()
                .map_err(|e| format!("{}: {name}: {e}", cubin.display()))?;
            let mut syms: Vec<(u64, String)> = file
                .symbols()
                .filter(|y| y.section_index() == Some(s.index()))
                .filter(|y| y.kind() == object::SymbolKind::Text)
                .filter_map(|y| Some((y.address(), y.name().ok()?.to_string())))
                .collect();
            syms.sort();
            out.push((f.to_string(), bytes.to_vec(), syms));
        }
    }
    Ok(out)
}

/// The `.text.<function>` sections of a cubin, in file order: (function name, code bytes).
pub fn text_sections(cubin: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    use object::{Object, ObjectSection};
    let data = std::fs::read(cubin).map_err(|e| format!("{}: {e}", cubin.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", cubin.display()))?;
    let mut out = Vec::new();
    for s in file.sections() {
        let Ok(name) = s.name() else { continue };
        if let Some(f) = name.strip_prefix(".text.") {
            let bytes = s
                .data()
                .map_err(|e| format!("{}: {name}: {e}", cubin.display()))?;
            out.push((f.to_string(), bytes.to_vec()));
        }
    }
    Ok(out)
}

/// Per function name, its indirect branches (EIATTR_INDIRECT_BRANCH_TARGETS), read through
/// `crates/cubin`.
fn indirect_branches(
    cubin: &Path,
) -> Result<BTreeMap<String, Vec<sass::listing::IndirectBranch>>, String> {
    let data = std::fs::read(cubin).map_err(|e| format!("{}: {e}", cubin.display()))?;
    let c = cubin::read(&data).map_err(|e| format!("{}: {e}", cubin.display()))?;
    Ok(c.functions()
        .into_iter()
        .filter(|f| !f.indirect_branches.is_empty())
        .map(|f| (f.name, f.indirect_branches))
        .collect())
}

/// Per function name, the relocations of its code (printed in place of the operands they
/// patch), read through `crates/cubin`.
fn code_relocs(cubin: &Path) -> Result<BTreeMap<String, Vec<sass::listing::CodeReloc>>, String> {
    let data = std::fs::read(cubin).map_err(|e| format!("{}: {e}", cubin.display()))?;
    let c = cubin::read(&data).map_err(|e| format!("{}: {e}", cubin.display()))?;
    Ok(c.sections
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let f = s.name.strip_prefix(".text.")?;
            let relocs: Vec<sass::listing::CodeReloc> = c
                .code_relocs(i)
                .into_iter()
                .map(|r| sass::listing::CodeReloc {
                    offset: r.offset,
                    rtype: r.rtype,
                    symbol: r.symbol,
                    target_here: r.target_here,
                })
                .collect();
            (!relocs.is_empty()).then(|| (f.to_string(), relocs))
        })
        .collect())
}

/// `nvdisasm -c` of a cubin: per function, the instruction texts in address order.
fn oracle_listing(cubin: &Path) -> Result<BTreeMap<String, Vec<String>>, String> {
    let out = Command::new(oracle::tool("nvdisasm")?)
        .arg("-c")
        .arg(cubin)
        .output()
        .map_err(|e| format!("running nvdisasm: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "nvdisasm -c failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cur: Option<String> = None;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(name) = line
            .strip_prefix(".text.")
            .and_then(|l| l.strip_suffix(':'))
        {
            cur = Some(name.to_string());
            map.entry(name.to_string()).or_default();
            continue;
        }
        let l = line.trim_start();
        if let (Some(f), Some(rest)) = (&cur, l.strip_prefix("/*"))
            && let Some((_, text)) = rest.split_once("*/")
        {
            map.get_mut(f).expect("entry").push(text.to_string());
        }
    }
    Ok(map)
}

#[derive(Default)]
struct FileResult {
    kernels: usize,
    instructions: usize,
    text_equal: usize,
    reencode_equal: usize,
    unknown: usize,
    panics: usize,
    /// Known words whose re-encoding needed `:H` (bits nvdisasm does not print).
    hidden: usize,
    /// opcode -> (count, example: ours / nvdisasm's)
    mismatches: BTreeMap<String, (usize, String)>,
    reencode_bad: BTreeMap<String, (usize, String)>,
    error: Option<String>,
}

pub fn run(args: &CorpusArgs) -> Result<(), String> {
    let arch = args.require_arch("disasm")?.to_string();
    let sm = sass::normalize_sm(&arch).ok_or_else(|| format!("bad --arch `{arch}`"))?;
    let table = sass::table(&sm).ok_or_else(|| format!("no SASS table for {sm}"))?;
    if table.encodings.is_empty() {
        return Err(format!(
            "the {sm} table is empty (run cargo xtask sass-probe --arch {sm})"
        ));
    }
    super::quiet_panics();
    let files: Vec<_> = args
        .ptx_files()
        .into_iter()
        .filter(|f| super::is_accepted(f))
        .collect();
    let results = super::par_map("disasm", &files, |rel| {
        let mut r = FileResult::default();
        let text = match super::read_text(&args.dir.join(rel)) {
            Ok(t) => t,
            Err(e) => {
                r.error = Some(e);
                return r;
            }
        };
        let Some(a) = super::arch_for_file(&super::scan_targets(&text), &arch) else {
            return r;
        };
        let cubin = match super::ptxas_cubin(&text, &a, &[]) {
            Ok(PtxasOutcome::Ok { cubin, .. }) => cubin,
            Ok(PtxasOutcome::Rejected(_)) => return r,
            Err(e) => {
                r.error = Some(e);
                return r;
            }
        };
        match (
            code_sections(&cubin),
            indirect_branches(&cubin),
            code_relocs(&cubin),
            oracle_listing(&cubin),
        ) {
            (Ok(secs), Ok(ind), Ok(rel), Ok(oracle)) => {
                compare(table, &secs, &ind, &rel, &oracle, &mut r)
            }
            (Err(e), _, _, _) | (_, Err(e), _, _) | (_, _, Err(e), _) | (_, _, _, Err(e)) => {
                r.error = Some(e)
            }
        }
        r
    });
    let mut tot = FileResult::default();
    let mut errors = 0;
    for r in results {
        if let Some(e) = &r.error {
            errors += 1;
            if errors <= 5 {
                eprintln!("error: {e}");
            }
        }
        tot.kernels += r.kernels;
        tot.instructions += r.instructions;
        tot.text_equal += r.text_equal;
        tot.reencode_equal += r.reencode_equal;
        tot.unknown += r.unknown;
        tot.panics += r.panics;
        tot.hidden += r.hidden;
        for (k, (n, ex)) in r.mismatches {
            let e = tot.mismatches.entry(k).or_insert((0, ex));
            e.0 += n;
        }
        for (k, (n, ex)) in r.reencode_bad {
            let e = tot.reencode_bad.entry(k).or_insert((0, ex));
            e.0 += n;
        }
    }
    print_top("text mismatches by opcode", &tot.mismatches);
    print_top("re-encoding mismatches by opcode", &tot.reencode_bad);
    println!(
        "{} known instructions carry operand-area bits nvdisasm does not print (written :H in \
         the control field for re-encoding)",
        tot.hidden
    );
    if errors > 0 {
        println!("{errors} files could not be compared (errors above)");
    }
    // Decoded words whose text is not nvdisasm's (unknown words are counted apart).
    let mismatched = tot
        .instructions
        .saturating_sub(tot.text_equal + tot.unknown);
    // The RESULT line is exact; the decoded words' figures go on the line before it.
    println!(
        "RESULT disasm-decoded {arch} decoded={} text_equal={} mismatched={mismatched}",
        tot.instructions.saturating_sub(tot.unknown),
        tot.text_equal
    );
    println!(
        "RESULT disasm {arch} kernels={} instructions={} text_equal={} reencode_equal={} unknown={} panics={}",
        tot.kernels, tot.instructions, tot.text_equal, tot.reencode_equal, tot.unknown, tot.panics
    );
    Ok(())
}

fn print_top(title: &str, m: &BTreeMap<String, (usize, String)>) {
    if m.is_empty() {
        return;
    }
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    println!("{title} (top 25 of {}):", v.len());
    for (op, (n, ex)) in v.into_iter().take(25) {
        println!("  {n:>7}  {op:<28} {ex}");
    }
}

fn compare(
    table: &sass::Table,
    secs: &CodeSections,
    indirect: &BTreeMap<String, Vec<sass::listing::IndirectBranch>>,
    relocs: &BTreeMap<String, Vec<sass::listing::CodeReloc>>,
    oracle: &BTreeMap<String, Vec<String>>,
    r: &mut FileResult,
) {
    let mut labels = sass::listing::Labels::default();
    let words: Vec<Vec<u128>> = secs.iter().map(|(_, b, _)| sass::words(b)).collect();
    let codes: Vec<sass::listing::FunctionCode<'_>> = secs
        .iter()
        .zip(&words)
        .map(|((name, _, symbols), words)| sass::listing::FunctionCode {
            words,
            symbols,
            indirect: indirect.get(name).map_or(&[][..], Vec::as_slice),
            relocs: relocs.get(name).map_or(&[][..], Vec::as_slice),
        })
        .collect();
    // Labels are numbered over the whole file, so one panic loses the file.
    let listings = match super::catch(|| table.listings(&codes, &mut labels)) {
        Ok(l) => l,
        Err(_) => {
            r.kernels += secs.len();
            r.panics += 1;
            r.instructions += words.iter().map(Vec::len).sum::<usize>();
            return;
        }
    };
    for ((name, _, _), ours) in secs.iter().zip(listings) {
        r.kernels += 1;
        let theirs = oracle.get(name);
        for (i, line) in ours.iter().enumerate() {
            r.instructions += 1;
            if !line.known {
                r.unknown += 1;
            }
            let t = theirs
                .and_then(|t| t.get(i))
                .map(|t| crate::sass_probe::normalize(t));
            let o = crate::sass_probe::normalize(&line.text);
            let op = t
                .as_deref()
                .map(|t| {
                    let t = if t.starts_with('@') {
                        t.split_once(' ').map_or(t, |x| x.1)
                    } else {
                        t
                    };
                    t.split(' ').next().unwrap_or("").to_string()
                })
                .unwrap_or_default();
            if t.as_deref() == Some(o.as_str()) {
                r.text_equal += 1;
            } else {
                let e = r.mismatches.entry(op.clone()).or_insert((0, String::new()));
                e.0 += 1;
                if e.1.is_empty() {
                    e.1 = format!("ours `{o}` nvdisasm `{}`", t.unwrap_or_default());
                }
            }
            // Re-encode our text (at this pc, branch targets as addresses, with the explicit
            // control field) and compare with the word. Unknown words are not re-encoded.
            if !line.known {
                continue;
            }
            let Some(d) = table.decode(line.word, line.pc) else {
                continue;
            };
            let control = table.full_control(&d, line.pc);
            if control.hidden != 0 {
                r.hidden += 1;
            }
            let text = format!("{} {}", control.to_text(), d.text(&|_| None));
            match super::catch(|| sass::encode::assemble_line(table, &text, line.pc, &|_| None)) {
                Ok(Ok(w)) if w == line.word => r.reencode_equal += 1,
                Ok(res) => {
                    let e = r.reencode_bad.entry(op).or_insert((0, String::new()));
                    e.0 += 1;
                    if e.1.is_empty() {
                        e.1 = match res {
                            Ok(w) => format!("`{o}`: {:032x} != {:032x}", w, line.word),
                            Err(m) => format!("`{o}`: {m}"),
                        };
                    }
                }
                Err(_) => r.panics += 1,
            }
        }
    }
}
