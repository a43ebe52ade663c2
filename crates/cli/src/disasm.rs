//! `kiln disasm FILE.cubin [--hex] [--json] [--control] [--arch sm_XX]`: prints each kernel's
//! SASS like `nvdisasm -c` (`--hex`: like `nvdisasm -c -hex`), or as JSON, optionally with
//! the decoded control field of every instruction.
//!
//! JSON schema: `{"arch": "sm_90", "functions": [{"name": "...", "instructions": [{"pc": 0,
//! "word": "0x<32 hex>", "text": "LDC R1, c[0x0][0x28]", "known": true, "control": {"stall":
//! 1, "yield": true, "write_sb": 7, "read_sb": 7, "wait_mask": 0, "reuse": 0}}]}]}`
//! (scoreboard 7 = none; `known` is false for `.unknown` lines).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

#[derive(Args)]
pub struct DisasmArgs {
    /// The cubin to disassemble.
    file: PathBuf,
    /// Also print each instruction's two 64-bit words, like `nvdisasm -hex`.
    #[arg(long)]
    hex: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Annotate each instruction with its control field (`[B------:R-:W-:Y:S01]`).
    #[arg(long)]
    control: bool,
    /// SM to decode for (default: from the cubin's ELF header).
    #[arg(long)]
    arch: Option<String>,
}

pub fn run(a: &DisasmArgs) -> Result<(), String> {
    let data = std::fs::read(&a.file).map_err(|e| format!("{}: {e}", a.file.display()))?;
    let (sm, funcs) = read_cubin(&data).map_err(|e| format!("{}: {e}", a.file.display()))?;
    let sm = a.arch.clone().unwrap_or(sm);
    let table = sass::table(&sm)
        .filter(|t| !t.encodings.is_empty())
        .ok_or_else(|| format!("{}: no SASS table for {sm}", a.file.display()))?;
    let mut labels = sass::listing::Labels::default();
    let mut out = String::new();
    if a.json {
        let _ = write!(out, "{{\"arch\": \"{sm}\", \"functions\": [");
    }
    let words: Vec<Vec<u128>> = funcs.iter().map(|f| sass::words(&f.code)).collect();
    let codes: Vec<sass::listing::FunctionCode<'_>> = funcs
        .iter()
        .zip(&words)
        .map(|(f, words)| sass::listing::FunctionCode {
            words,
            symbols: &f.symbols,
            indirect: &f.indirect,
            relocs: &f.relocs,
        })
        .collect();
    let listings = table.listings(&codes, &mut labels);
    for (fi, (Function { name, .. }, lines)) in funcs.iter().zip(listings).enumerate() {
        if a.json {
            let _ = write!(
                out,
                "{}{{\"name\": {}, \"instructions\": [",
                if fi > 0 { ", " } else { "" },
                json_str(name)
            );
            for (i, l) in lines.iter().enumerate() {
                let c = sass::Control::from_word(l.word);
                let _ = write!(
                    out,
                    "{}{{\"pc\": {}, \"word\": \"0x{:032x}\", \"text\": {}, \"known\": {}, \"control\": {{\"stall\": {}, \"yield\": {}, \"write_sb\": {}, \"read_sb\": {}, \"wait_mask\": {}, \"reuse\": {}}}}}",
                    if i > 0 { ", " } else { "" },
                    l.pc,
                    l.word,
                    json_str(&l.text),
                    l.known,
                    c.stall,
                    c.yield_bit,
                    c.write_sb,
                    c.read_sb,
                    c.wait_mask,
                    c.reuse
                );
            }
            out.push_str("]}");
            continue;
        }
        let _ = writeln!(
            out,
            "//--------------------- .text.{name} --------------------------"
        );
        let _ = writeln!(out, ".text.{name}:");
        for l in &lines {
            if let Some(label) = &l.label {
                let _ = writeln!(out, "{label}:");
            }
            let (guard, body) = match l.text.strip_prefix('@') {
                Some(_) => l.text.split_once(' ').unwrap_or((&l.text, "")),
                None => ("", l.text.as_str()),
            };
            let mut line = format!("        /*{:04x}*/ {guard:>17} {body} ;", l.pc);
            if a.control {
                let pad = 80usize.saturating_sub(line.len());
                let c = table.decode(l.word, l.pc).map_or_else(
                    || sass::Control::from_word(l.word),
                    |d| table.full_control(&d, l.pc),
                );
                let _ = write!(line, "{:pad$} // {}", "", c.to_text());
            }
            if a.hex {
                let pad = 80usize.saturating_sub(line.len());
                let _ = write!(line, "{:pad$} /* 0x{:016x} */", "", l.word as u64);
                let _ = write!(line, "\n{:81} /* 0x{:016x} */", "", (l.word >> 64) as u64);
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    if a.json {
        out.push_str("]}\n");
    }
    use std::io::Write as _;
    match std::io::stdout().write_all(out.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("writing output: {e}")),
        _ => Ok(()),
    }
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A function's name, code, the (offset, name) of the code symbols in its section and its
/// indirect branches (EIATTR_INDIRECT_BRANCH_TARGETS).
/// One `.text.<function>` section: the function's name, code bytes, the (address, name) of
/// the functions its section defines, its indirect branches and its code relocations.
struct Function {
    name: String,
    code: Vec<u8>,
    symbols: Vec<(u64, String)>,
    indirect: Vec<sass::listing::IndirectBranch>,
    relocs: Vec<sass::listing::CodeReloc>,
}

/// The SM named by a cubin's ELF header and its `.text.<function>` sections in file order,
/// read through `crates/cubin` (bounds-checked: a corrupt file is an error, never a panic).
fn read_cubin(data: &[u8]) -> Result<(String, Vec<Function>), String> {
    let cubin = cubin::read(data).map_err(|e| format!("not a valid cubin: {e}"))?;
    let symbols = cubin.symbols();
    let facts = cubin.functions();
    let mut funcs = Vec::new();
    for (index, s) in cubin.sections.iter().enumerate() {
        let Some(f) = s.name.strip_prefix(".text.") else {
            continue;
        };
        let cubin::SectionData::Bytes(bytes) = &s.data else {
            continue;
        };
        // STT_FUNC symbols defined in this section.
        let mut syms: Vec<(u64, String)> = symbols
            .iter()
            .filter(|y| usize::from(y.shndx) == index && y.kind() == 2)
            .map(|y| (y.value, y.name.clone()))
            .collect();
        syms.sort();
        let indirect = facts
            .iter()
            .find(|x| x.name == f)
            .map(|x| x.indirect_branches.clone())
            .unwrap_or_default();
        let relocs = cubin
            .code_relocs(index)
            .into_iter()
            .map(|r| sass::listing::CodeReloc {
                offset: r.offset,
                rtype: r.rtype,
                symbol: r.symbol,
                target_here: r.target_here,
            })
            .collect();
        funcs.push(Function {
            name: f.to_string(),
            code: bytes.clone(),
            symbols: syms,
            indirect,
            relocs,
        });
    }
    Ok((format!("sm_{}", cubin.header.sm()), funcs))
}
