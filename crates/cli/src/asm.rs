//! `kiln asm FILE.sass --arch sm_XX -o OUT.bin`: assembles nvdisasm-format SASS text into raw
//! little-endian 128-bit words (the functions of the text one after another).
//!
//! Accepted lines: `/*0040*/ @P0 IADD3 R0, R1, R2, RZ ; // [B------:R-:W-:Y:S01]` (address
//! comment, `;` and the `--control` comment optional; a leading `[...]` control field works
//! too), label definitions `.L_x_3:` (branch operands `` `(.L_x_3) `` resolve to them),
//! `//` comments, blank lines, and `.text.NAME:` / `//----` headers as printed by
//! `kiln disasm`. Without a control field the control bits are zero.

use std::collections::HashMap;
use std::path::PathBuf;

use clap::Args;

#[derive(Args)]
pub struct AsmArgs {
    /// SASS text to assemble.
    file: PathBuf,
    /// Target SM (e.g. sm_90).
    #[arg(long)]
    arch: String,
    /// Output file for the raw instruction words.
    #[arg(short = 'o', long)]
    output: PathBuf,
}

pub fn run(a: &AsmArgs) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&a.file).map_err(|e| format!("{}: {e}", a.file.display()))?;
    let table = sass::table(&a.arch)
        .filter(|t| !t.encodings.is_empty())
        .ok_or_else(|| format!("no SASS table for {}", a.arch))?;
    // Pass 1: instruction lines and label addresses.
    let mut insts: Vec<(usize, String)> = Vec::new();
    let mut labels: HashMap<String, i128> = HashMap::new();
    for (n, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with("//") || l.starts_with(".text.") {
            continue;
        }
        if let Some(name) = l.strip_suffix(':') {
            labels.insert(name.to_string(), (insts.len() * 16) as i128);
            continue;
        }
        let mut body = l;
        if let Some(rest) = body.strip_prefix("/*") {
            body = rest.split_once("*/").map_or(rest, |x| x.1).trim_start();
        }
        let (code, comment) = match body.split_once("//") {
            Some((c, k)) => (c.trim(), k.trim()),
            None => (body, ""),
        };
        let code = code.trim_end_matches(';').trim_end();
        let line = if comment.starts_with('[') {
            format!("{comment} {code}")
        } else {
            code.to_string()
        };
        insts.push((n + 1, line));
    }
    // Pass 2: encode.
    let mut bytes = Vec::with_capacity(insts.len() * 16);
    for (i, (n, line)) in insts.iter().enumerate() {
        let w = sass::encode::assemble_line(table, line, (i * 16) as u64, &|name| {
            labels.get(name).copied()
        })
        .map_err(|e| format!("{}:{n}: {e}", a.file.display()))?;
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    std::fs::write(&a.output, &bytes).map_err(|e| format!("{}: {e}", a.output.display()))
}
