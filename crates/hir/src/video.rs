//! The operand selectors of the video instructions (PTX ISA 9.7.18), checked as ptxas 13.0.88
//! checks them: a selector that names no part of a word ("Unknown video selector: '.h4'"),
//! one that does not fit its operand ("Incorrect video selector for operand 1"), one on `c`,
//! a scalar destination selector on `vmad`, without the `c` it merges into or beside a
//! secondary operation (each message and case checked against ptxas).

use syntax::TextRange;
use syntax::ast::{self, AstNode};

/// The lanes of a video instruction (1 for the scalar forms), `None` for other opcodes.
fn lanes(opcode: &str) -> Option<u8> {
    let (stem, lanes) = match opcode.strip_suffix('2') {
        Some(s) => (s, 2),
        None => match opcode.strip_suffix('4') {
            Some(s) => (s, 4),
            None => (opcode, 1),
        },
    };
    let ok = match stem {
        "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vset" => true,
        "vshl" | "vshr" | "vmad" => lanes == 1,
        "vavrg" => lanes > 1,
        _ => false,
    };
    ok.then_some(lanes)
}

/// The digits after `.b` or `.h` (`.h21` → ('h', [2, 1])).
fn parts(sel: &str) -> Option<(char, Vec<u8>)> {
    let kind = match sel.get(..2)? {
        ".b" => 'b',
        ".h" => 'h',
        _ => return None,
    };
    let d = &sel[2..];
    (!d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
        .then(|| (kind, d.bytes().map(|c| c - b'0').collect()))
}

/// Whether ptxas knows `sel` as a video selector at all: bytes 0-7, half-words 0-3, at most
/// four of them.
fn known(sel: &str) -> bool {
    parts(sel)
        .is_some_and(|(k, d)| d.len() <= 4 && d.iter().all(|&p| p < if k == 'b' { 8 } else { 4 }))
}

/// Whether `sel` fits operand `k` (0 the destination) of an instruction with `lanes` lanes.
fn fits(sel: &str, lanes: u8, k: usize) -> bool {
    let Some((kind, d)) = parts(sel) else {
        return false;
    };
    let lane_kind = if lanes == 2 { 'h' } else { 'b' };
    match (lanes, k) {
        (1, 0..=2) => match kind {
            'b' => d.len() == 1 && d[0] < 4,
            _ => d.len() == 1 && d[0] < 2,
        },
        (_, 0) => {
            kind == lane_kind && d.iter().all(|&p| p < lanes) && d.windows(2).all(|w| w[0] > w[1])
        }
        (_, 1 | 2) => {
            kind == lane_kind && d.len() == usize::from(lanes) && d.iter().all(|&p| p < 2 * lanes)
        }
        _ => false,
    }
}

/// The selector errors of a video instruction's operands, with where they are.
pub(crate) fn check(opcode: &str, mods: &[&str], ops: &[ast::Operand]) -> Vec<(TextRange, String)> {
    let Some(lanes) = lanes(opcode) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    for (k, o) in ops.iter().enumerate() {
        let ast::Operand::Name(n) = o else { continue };
        let comps: Vec<_> = n.components().collect();
        let [c] = comps.as_slice() else { continue };
        let sel = c.text();
        let at = o.syntax().text_range();
        if !known(sel) {
            errs.push((at, format!("Unknown video selector: '{sel}'")));
        }
        if k == 3 {
            if !known(sel) {
                errs.push((at, "Incorrect video selector for operand 3".to_string()));
            }
            errs.push((
                at,
                "Video selector is not allowed on 'source C' operand".to_string(),
            ));
            continue;
        }
        if !fits(sel, lanes, k) {
            errs.push((at, format!("Incorrect video selector for operand {k}")));
            continue;
        }
        if k == 0 && lanes == 1 {
            if ops.len() < 4 || opcode == "vmad" {
                errs.push((
                    at,
                    format!(
                        "Video selector is not allowed on destination for instruction '{opcode}'"
                    ),
                ));
            } else if mods.iter().any(|m| matches!(*m, ".add" | ".min" | ".max")) {
                errs.push((
                    at,
                    "Video instruction cannot have destination selector and secondary operation"
                        .to_string(),
                ));
            }
        }
    }
    errs
}
