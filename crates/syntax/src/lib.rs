//! Lossless PTX syntax: a lexer and an event-based, error-tolerant parser producing a
//! [rowan] green tree, plus a typed AST layer ([`ast`]) over it.
//!
//! The design follows rust-analyzer's `syntax`/`parser` crates:
//!
//! * [`lexer`] splits the text into tokens, whitespace and comments included;
//! * the grammar drives a parser over the non-trivia tokens and records events;
//! * the sink replays the events into a rowan green tree, putting trivia back;
//! * [`ast`] gives typed views over the untyped [`SyntaxNode`]s.
//!
//! Every byte of the input ends up in exactly one token of the tree, so
//! `parse(text).syntax_node().to_string() == text` for every input. Malformed input yields
//! [`SyntaxError`]s with ranges and an `ERROR` node, never a panic. No I/O, no salsa.

#![forbid(unsafe_code)]

pub mod ast;
mod grammar;
pub mod lexer;
mod parser;
mod sink;
mod syntax_kind;

#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::sync::Arc;

pub use grammar::{
    BODY_DIRECTIVES, ENTRY_HEADER_DIRECTIVES, FUNC_HEADER_DIRECTIVES, MODULE_DIRECTIVES,
};
pub use rowan::{TextRange, TextSize};
pub use syntax_kind::{PtxLanguage, SyntaxKind};

/// An untyped node of a PTX syntax tree.
pub type SyntaxNode = rowan::SyntaxNode<PtxLanguage>;
/// A token of a PTX syntax tree.
pub type SyntaxToken = rowan::SyntaxToken<PtxLanguage>;
/// A node or a token.
pub type SyntaxElement = rowan::SyntaxElement<PtxLanguage>;

/// A syntax error: a message and the text range it points at.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    pub message: String,
    pub range: TextRange,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.range, self.message)
    }
}

/// The result of parsing: an immutable green tree and the syntax errors found.
///
/// Cheap to clone (both parts are reference counted) and comparable, so it can be stored in
/// an incremental database.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Parse {
    green: rowan::GreenNode,
    errors: Arc<[SyntaxError]>,
}

impl Parse {
    /// The root node (`SOURCE_FILE`) of a fresh red tree over the green tree.
    pub fn syntax_node(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }

    /// All syntax errors (lexer and parser), sorted by position.
    pub fn errors(&self) -> &[SyntaxError] {
        &self.errors
    }

    /// The green tree (position independent, shareable).
    pub fn green(&self) -> rowan::GreenNode {
        self.green.clone()
    }

    /// The typed root.
    pub fn tree(&self) -> ast::SourceFile {
        ast::SourceFile {
            syntax: self.syntax_node(),
        }
    }

    /// An indented dump of the tree: one line per node or token, with kind and range, and the
    /// text of tokens; followed by the errors, if any. Used by `kiln parse` and snapshot tests.
    pub fn debug_tree(&self) -> String {
        let mut out = debug_dump(&self.syntax_node());
        for e in self.errors.iter() {
            let _ = writeln!(out, "error {:?}: {}", e.range, e.message);
        }
        out
    }
}

/// Dumps a subtree in the format of [`Parse::debug_tree`] (without errors).
pub fn debug_dump(node: &SyntaxNode) -> String {
    let mut out = String::new();
    let mut indent = 0usize;
    for event in node.preorder_with_tokens() {
        match event {
            rowan::WalkEvent::Enter(element) => {
                for _ in 0..indent {
                    out.push_str("  ");
                }
                match element {
                    rowan::NodeOrToken::Node(n) => {
                        let _ = writeln!(out, "{:?}@{:?}", n.kind(), n.text_range());
                    }
                    rowan::NodeOrToken::Token(t) => {
                        let _ = writeln!(out, "{:?}@{:?} {:?}", t.kind(), t.text_range(), t.text());
                    }
                }
                indent += 1;
            }
            rowan::WalkEvent::Leave(_) => indent -= 1,
        }
    }
    out
}

/// The largest text the tree can represent (rowan offsets are 32-bit).
pub const MAX_TEXT_LEN: usize = u32::MAX as usize;

/// Parses PTX source text.
///
/// Never panics and always terminates. Texts longer than [`MAX_TEXT_LEN`] bytes are cut at
/// that length (at a character boundary) and an error is reported at the end.
pub fn parse(text: &str) -> Parse {
    parse_with_errors(text, Vec::new())
}

fn parse_with_errors(text: &str, mut errors: Vec<SyntaxError>) -> Parse {
    let text = if text.len() > MAX_TEXT_LEN {
        let mut cut = MAX_TEXT_LEN;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let end = TextSize::from(cut as u32);
        errors.push(SyntaxError {
            message: format!("file is larger than {MAX_TEXT_LEN} bytes; the rest is ignored"),
            range: TextRange::empty(end),
        });
        &text[..cut]
    } else {
        text
    };
    let (tokens, lex_errors) = lexer::lex(text);
    errors.extend(lex_errors.into_iter().map(|e| SyntaxError {
        message: e.message.to_string(),
        range: TextRange::new(e.start.into(), e.end.into()),
    }));
    let input = parser::Input::new(text, &tokens);
    let mut p = parser::Parser::new(text, &input);
    grammar::source_file(&mut p);
    let events = std::mem::take(&mut p.events);
    errors.append(&mut p.errors);
    let green = sink::build_tree(text, &tokens, events);
    errors.sort_by_key(|e| (e.range.start(), e.range.end()));
    Parse {
        green,
        errors: errors.into(),
    }
}

/// Decodes bytes that should be UTF-8 PTX, the one decoder behind [`parse_bytes`] and the
/// database's file inputs.
///
/// Invalid UTF-8 sequences are replaced by U+FFFD (as [`String::from_utf8_lossy`] does) and
/// each is reported as an error naming the bytes and their offset in `bytes`; the error's
/// range covers the replacement character in the decoded text.
pub fn decode_utf8(bytes: &[u8]) -> (String, Vec<SyntaxError>) {
    let mut text = String::with_capacity(bytes.len());
    let mut errors = Vec::new();
    let mut byte_off = 0usize;
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        byte_off += chunk.valid().len();
        let invalid = chunk.invalid();
        if !invalid.is_empty() {
            let start = text.len();
            text.push(char::REPLACEMENT_CHARACTER);
            if start + 3 <= MAX_TEXT_LEN {
                let bad: Vec<String> = invalid.iter().map(|b| format!("{b:#04x}")).collect();
                errors.push(SyntaxError {
                    message: format!(
                        "invalid UTF-8 byte sequence {} at byte offset {byte_off}",
                        bad.join(" ")
                    ),
                    range: TextRange::new((start as u32).into(), ((start + 3) as u32).into()),
                });
            }
            byte_off += invalid.len();
        }
    }
    (text, errors)
}

/// Parses bytes that should be UTF-8 PTX, decoded by [`decode_utf8`] (whose errors come
/// first among the parse's). Returns the decoded text (which the tree round-trips to) and the
/// parse.
pub fn parse_bytes(bytes: &[u8]) -> (String, Parse) {
    let (text, errors) = decode_utf8(bytes);
    let parse = parse_with_errors(&text, errors);
    (text, parse)
}
