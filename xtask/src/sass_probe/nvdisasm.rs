//! Running `nvdisasm --binary SMxx` on batches of raw words.

use std::collections::BTreeSet;
use std::process::Command;

use crate::corpus;
use crate::oracle;

/// Decodes `words` (placed at addresses 0, 16, 32, ... in one raw blob) with nvdisasm and
/// returns each word's text (without address, with ` ;`), `None` for words nvdisasm calls
/// illegal. Illegal words make nvdisasm print nothing, so they are replaced by a known-good
/// word and the batch is run again, until it goes through.
pub fn texts(sm: &str, words: &[u128]) -> Result<Vec<Option<String>>, String> {
    if words.is_empty() {
        return Ok(Vec::new());
    }
    // One blob: addresses must be the word's index * 16 (pc-relative operands depend on it).
    texts_chunk(sm, words)
}

fn texts_chunk(sm: &str, words: &[u128]) -> Result<Vec<Option<String>>, String> {
    let nvdisasm = oracle::tool("nvdisasm")?;
    let dir = corpus::cache_dir("sass-probe");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let blob = dir
        .join(format!(
            "batch.{}.{:?}.bin",
            std::process::id(),
            std::thread::current().id()
        ))
        .to_string_lossy()
        .replace(['(', ')'], "");
    let mut illegal: BTreeSet<usize> = BTreeSet::new();
    for _attempt in 0..64 {
        let mut bytes = Vec::with_capacity(words.len() * 16);
        for (i, w) in words.iter().enumerate() {
            // A NOP from ptxas output (sm_80/sm_90: 0x...7918) stands in for illegal words.
            let w = if illegal.contains(&i) { NOP } else { *w };
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        std::fs::write(&blob, &bytes).map_err(|e| format!("{blob}: {e}"))?;
        let o = Command::new(&nvdisasm)
            .arg("--binary")
            .arg(super::binary_name(sm))
            .arg(&blob)
            .output()
            .map_err(|e| format!("running nvdisasm: {e}"))?;
        let stderr = String::from_utf8_lossy(&o.stderr);
        let mut new_illegal = 0;
        for line in stderr.lines() {
            if let Some(a) = line.split("at address 0x").nth(1)
                && let Ok(addr) = usize::from_str_radix(a.trim(), 16)
                && illegal.insert(addr / 16)
            {
                new_illegal += 1;
            }
        }
        if o.status.success() && new_illegal == 0 {
            let _ = std::fs::remove_file(&blob);
            let stdout = String::from_utf8_lossy(&o.stdout);
            let mut res: Vec<Option<String>> = vec![None; words.len()];
            for line in stdout.lines() {
                let l = line.trim_start();
                let Some(rest) = l.strip_prefix("/*") else {
                    continue;
                };
                let Some((addr, text)) = rest.split_once("*/") else {
                    continue;
                };
                let Ok(addr) = usize::from_str_radix(addr, 16) else {
                    continue;
                };
                let i = addr / 16;
                if i < words.len() && !illegal.contains(&i) {
                    res[i] = Some(text.trim_start().to_string());
                }
            }
            return Ok(res);
        }
        if new_illegal == 0 {
            return Err(format!(
                "nvdisasm failed without naming an address: {}",
                stderr.lines().next().unwrap_or("")
            ));
        }
    }
    Err("nvdisasm: too many retries".into())
}

/// `NOP` as ptxas emits it for sm_80 and sm_90 (`0x0000000000007918` /
/// `0x000fc00000000000`).
const NOP: u128 = 0x000fc00000000000_0000000000007918;
