//! Replays parser events into a rowan green tree, putting the trivia tokens back.
//!
//! Trivia attachment rule: trivia (whitespace and comments) between two non-trivia tokens is
//! emitted just before the second token, *outside* any node that starts at that token. In
//! other words, a node begins with its first non-trivia token and ends with its last one;
//! the whitespace and comments around it belong to its parent. Trivia at the very start and
//! end of the file belongs to `SOURCE_FILE`. This keeps every item's subtree independent of
//! the blank lines and comments between items.

use rowan::{GreenNode, GreenNodeBuilder, NodeCache};

use crate::SyntaxKind;
use crate::lexer::Token;
use crate::parser::Event;

pub(crate) fn build_tree(
    text: &str,
    tokens: &[Token],
    mut events: Vec<Event>,
    cache: &mut NodeCache,
) -> GreenNode {
    let mut builder = GreenNodeBuilder::with_cache(cache);
    let mut tok = 0usize; // index into `tokens`
    let mut off = 0usize; // byte offset of tokens[tok]
    let mut depth = 0usize;
    let mut forward: Vec<SyntaxKind> = Vec::new();

    let emit_trivia = |builder: &mut GreenNodeBuilder<'_>, tok: &mut usize, off: &mut usize| {
        while let Some(t) = tokens.get(*tok) {
            if !t.kind.is_trivia() {
                break;
            }
            let end = *off + t.len as usize;
            builder.token(t.kind.into(), &text[*off..end]);
            *off = end;
            *tok += 1;
        }
    };

    for i in 0..events.len() {
        match std::mem::replace(&mut events[i], Event::Tombstone) {
            Event::Start {
                kind,
                forward_parent,
            } => {
                // Collect the chain of forward parents: outermost first.
                forward.clear();
                forward.push(kind);
                let mut fp = forward_parent;
                let mut idx = i;
                while let Some(delta) = fp {
                    idx += delta as usize;
                    fp = match std::mem::replace(&mut events[idx], Event::Tombstone) {
                        Event::Start {
                            kind,
                            forward_parent,
                        } => {
                            forward.push(kind);
                            forward_parent
                        }
                        _ => None,
                    };
                }
                for &kind in forward.iter().rev() {
                    if depth > 0 {
                        emit_trivia(&mut builder, &mut tok, &mut off);
                    }
                    builder.start_node(kind.into());
                    depth += 1;
                }
            }
            Event::Finish => {
                if depth == 1 {
                    // Closing the root: everything left (trailing trivia, and any tokens the
                    // parser did not consume, which it never leaves) goes inside it.
                    while let Some(t) = tokens.get(tok) {
                        let end = off + t.len as usize;
                        builder.token(t.kind.into(), &text[off..end]);
                        off = end;
                        tok += 1;
                    }
                }
                if depth > 0 {
                    builder.finish_node();
                    depth -= 1;
                }
            }
            Event::Token => {
                emit_trivia(&mut builder, &mut tok, &mut off);
                if let Some(t) = tokens.get(tok) {
                    let end = off + t.len as usize;
                    builder.token(t.kind.into(), &text[off..end]);
                    off = end;
                    tok += 1;
                }
            }
            Event::Tombstone => {}
        }
    }
    // The grammar always wraps everything in SOURCE_FILE; close anything left open so the
    // builder cannot panic even if that invariant were broken.
    while depth > 0 {
        builder.finish_node();
        depth -= 1;
    }
    builder.finish()
}
