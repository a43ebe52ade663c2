//! The operand selectors of the video instructions (PTX ISA 9.7.18), checked as ptxas 13.0.88
//! checks them: a selector that names no part of a word ("Unknown video selector: '.h4'"),
//! one that does not fit its operand ("Incorrect video selector for operand 1"), one on `c`,
//! a scalar destination selector on `vmad`, without the `c` it merges into or beside a
//! secondary operation (each message and case checked against ptxas).

use ptx::video::{Sel, Video, known_selector as known};
use syntax::TextRange;
use syntax::ast::{self, AstNode};

/// The selector errors of a video instruction's operands, with where they are.
pub(crate) fn check(opcode: &str, mods: &[&str], ops: &[ast::Operand]) -> Vec<(TextRange, String)> {
    let Some(lanes) = Video::decode(opcode).map(|v| v.lanes) else {
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
        // Whether the selector fits operand `k` (0 the destination).
        if Sel::parse(sel, lanes, k == 0).is_none() {
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
