//! Parser infrastructure: a cursor over the non-trivia tokens that records *events*
//! (start node / token / finish node) instead of building the tree directly.
//!
//! The grammar (in `grammar/`) drives a [`Parser`]; [`crate::sink`] then replays the events,
//! interleaving the trivia tokens, into a rowan green tree. Keeping the parser free of trivia
//! and tree building makes it small and fast, and lets nodes be started retroactively
//! ([`CompletedMarker::precede`]) for left-recursive constructs such as binary expressions.

use crate::SyntaxKind::{self, *};
use crate::lexer::Token;
use crate::{SyntaxError, TextRange, TextSize};

/// One step of the parse, replayed by the sink.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// Start a node. `forward_parent` links to a later `Start` that must be opened *before*
    /// this one (set by [`CompletedMarker::precede`]).
    Start {
        kind: SyntaxKind,
        forward_parent: Option<u32>,
    },
    /// Emit the next non-trivia token (with the trivia before it).
    Token,
    /// Close the innermost open node.
    Finish,
    /// A `Start` already consumed as a forward parent; ignored by the sink.
    Tombstone,
}

/// The non-trivia tokens the parser sees, with their positions.
pub(crate) struct Input {
    pub kinds: Vec<SyntaxKind>,
    pub starts: Vec<u32>,
    pub ends: Vec<u32>,
    /// Whether a line break occurs between the previous non-trivia token and this one (or the
    /// start of the file and this one).
    pub newline_before: Vec<bool>,
}

impl Input {
    pub fn new(text: &str, tokens: &[Token]) -> Input {
        let n = tokens.len();
        let mut input = Input {
            kinds: Vec::with_capacity(n / 2 + 1),
            starts: Vec::with_capacity(n / 2 + 1),
            ends: Vec::with_capacity(n / 2 + 1),
            newline_before: Vec::with_capacity(n / 2 + 1),
        };
        let bytes = text.as_bytes();
        let mut off = 0u32;
        let mut nl = true;
        for t in tokens {
            let end = off + t.len;
            if t.kind.is_trivia() {
                if !nl && bytes[off as usize..end as usize].contains(&b'\n') {
                    nl = true;
                }
            } else {
                input.kinds.push(t.kind);
                input.starts.push(off);
                input.ends.push(end);
                input.newline_before.push(nl);
                nl = false;
            }
            off = end;
        }
        // EOF sentinel: zero-width at the end of the text, always "on a new line".
        input.kinds.push(EOF);
        input.starts.push(off);
        input.ends.push(off);
        input.newline_before.push(true);
        input
    }
}

/// Maximum nesting of blocks, braces, brackets and parentheses. Deeper input is reported and
/// skipped without recursion, so hostile input cannot overflow the stack.
pub(crate) const MAX_DEPTH: u32 = 200;

pub(crate) struct Parser<'t> {
    text: &'t str,
    input: &'t Input,
    pos: usize,
    pub(crate) events: Vec<Event>,
    pub(crate) errors: Vec<SyntaxError>,
    depth: u32,
    /// Set while parsing instruction operands (see `grammar::name_ref`).
    pub(crate) in_operands: bool,
    /// Set while parsing the inside of an `[address]` operand.
    pub(crate) in_address: bool,
    /// Set while parsing the first operand of an instruction (where `a|b` pairs may appear).
    pub(crate) first_operand: bool,
    /// Set while parsing a constant expression in an operand (no names allowed).
    pub(crate) const_only: bool,
    /// Whether the last `decl_specifiers` saw a type word.
    pub(crate) last_specifiers_had_type: bool,
    /// Whether the last `decl_specifiers` saw a state-space word.
    pub(crate) last_specifiers_had_state_space: bool,
}

impl<'t> Parser<'t> {
    pub fn new(text: &'t str, input: &'t Input) -> Parser<'t> {
        Parser {
            text,
            input,
            pos: 0,
            events: Vec::with_capacity(input.kinds.len() * 2),
            errors: Vec::new(),
            depth: 0,
            in_operands: false,
            in_address: false,
            const_only: false,
            first_operand: false,
            last_specifiers_had_type: false,
            last_specifiers_had_state_space: false,
        }
    }

    /// The kind of the current token (`EOF` at the end).
    #[inline]
    pub fn current(&self) -> SyntaxKind {
        self.nth(0)
    }

    /// The kind of the token `n` ahead of the current one.
    #[inline]
    pub fn nth(&self, n: usize) -> SyntaxKind {
        self.input.kinds.get(self.pos + n).copied().unwrap_or(EOF)
    }

    #[inline]
    pub fn at(&self, kind: SyntaxKind) -> bool {
        self.current() == kind
    }

    /// The text of the token `n` ahead.
    #[inline]
    pub fn nth_text(&self, n: usize) -> &'t str {
        let i = (self.pos + n).min(self.input.kinds.len() - 1);
        &self.text[self.input.starts[i] as usize..self.input.ends[i] as usize]
    }

    #[inline]
    pub fn current_text(&self) -> &'t str {
        self.nth_text(0)
    }

    /// Is there a line break before the token `n` ahead?
    #[inline]
    pub fn nth_newline_before(&self, n: usize) -> bool {
        self.input
            .newline_before
            .get(self.pos + n)
            .copied()
            .unwrap_or(true)
    }

    /// Is the token `n` ahead glued to the one before it (no trivia between)?
    #[inline]
    pub fn nth_joined(&self, n: usize) -> bool {
        let i = self.pos + n;
        i > 0 && i < self.input.kinds.len() && self.input.ends[i - 1] == self.input.starts[i]
    }

    /// Is there a line break before the current token?
    #[inline]
    pub fn at_line_start(&self) -> bool {
        self.nth_newline_before(0)
    }

    pub fn at_eof(&self) -> bool {
        self.at(EOF)
    }

    /// Consumes the current token (no-op at EOF).
    #[inline]
    pub fn bump(&mut self) {
        if self.at_eof() {
            return;
        }
        self.events.push(Event::Token);
        self.pos += 1;
    }

    /// Consumes the current token if it has kind `kind`.
    pub fn eat(&mut self, kind: SyntaxKind) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Consumes a token of kind `kind` or reports that it is missing.
    pub fn expect(&mut self, kind: SyntaxKind, what: &str) -> bool {
        if self.eat(kind) {
            true
        } else {
            self.error_expected(what);
            false
        }
    }

    /// Starts a node; it must be completed or abandoned.
    pub fn start(&mut self) -> Marker {
        let pos = self.events.len() as u32;
        self.events.push(Event::Start {
            kind: ERROR,
            forward_parent: None,
        });
        Marker { pos }
    }

    /// The range of the current token, or an empty range at the end of the previous token
    /// when the current token is on a new line or at EOF (so "expected `;`" points at the end
    /// of the line that lacks it).
    pub fn current_range(&self) -> TextRange {
        let i = self.pos.min(self.input.kinds.len() - 1);
        if (self.input.kinds[i] == EOF || self.input.newline_before[i]) && i > 0 {
            let end = TextSize::from(self.input.ends[i - 1]);
            return TextRange::empty(end);
        }
        TextRange::new(self.input.starts[i].into(), self.input.ends[i].into())
    }

    /// The range of the current token itself (empty at EOF).
    pub fn current_range_strict(&self) -> TextRange {
        let i = self.pos.min(self.input.kinds.len() - 1);
        TextRange::new(self.input.starts[i].into(), self.input.ends[i].into())
    }

    /// Reports an error at `range`.
    pub fn error_at(&mut self, range: TextRange, message: impl Into<String>) {
        self.errors.push(SyntaxError {
            message: message.into(),
            range,
        });
    }

    /// Reports that `what` was expected at the current token.
    pub fn error_expected(&mut self, what: &str) {
        let found = if self.at_line_start() && self.pos > 0 && !self.at_eof() {
            "end of line".to_string()
        } else {
            self.describe_current()
        };
        let range = self.current_range();
        self.error_at(range, format!("expected {what}, found {found}"));
    }

    /// A short description of the current token for diagnostics.
    pub fn describe_current(&self) -> String {
        match self.current() {
            EOF => "end of file".to_string(),
            _ => {
                let t = self.current_text();
                let t: String = t.chars().take(40).collect();
                format!("`{t}`")
            }
        }
    }

    /// Reports `message` and wraps tokens in an `ERROR` node until a recovery point: `;`
    /// (consumed), `{`/`}` or the start of a new line (not consumed), or EOF. Always consumes
    /// at least one token unless at a recovery point already.
    pub fn err_recover_line(&mut self, message: String) {
        let range = self.current_range();
        self.error_at(range, message);
        self.skip_to_line_end();
    }

    /// Reports `message` at the current token, then wraps that token and the rest of its line
    /// (up to and including `;`, or up to `{`/`}`/a new line) in an `ERROR` node. Always
    /// consumes the current token (unless at EOF), even if it is `{` or `}`.
    pub fn err_bump_line(&mut self, message: String) {
        let range = self.current_range_strict();
        self.error_at(range, message);
        if self.at_eof() {
            return;
        }
        let m = self.start();
        let was_semi = self.at(SEMICOLON);
        self.bump();
        if !was_semi {
            loop {
                match self.current() {
                    EOF | L_CURLY | R_CURLY => break,
                    SEMICOLON => {
                        self.bump();
                        break;
                    }
                    _ if self.at_line_start() => break,
                    _ => self.bump(),
                }
            }
        }
        m.complete(self, ERROR);
    }

    /// Like [`Parser::err_recover_line`] without reporting: skips the rest of a malformed line.
    pub fn skip_to_line_end(&mut self) {
        if self.at_eof() {
            return;
        }
        let m = self.start();
        let mut first = true;
        loop {
            match self.current() {
                EOF | L_CURLY | R_CURLY => break,
                SEMICOLON => {
                    self.bump();
                    break;
                }
                _ if !first && self.at_line_start() => break,
                _ => self.bump(),
            }
            first = false;
        }
        m.complete(self, ERROR);
    }

    /// Enters one level of nesting. Returns false (after reporting and skipping the whole
    /// over-deep group flat) when the nesting limit is reached; the caller must then not
    /// parse the group itself.
    pub fn enter(&mut self) -> bool {
        if self.depth < MAX_DEPTH {
            self.depth += 1;
            return true;
        }
        let range = self.current_range();
        self.error_at(range, format!("nesting deeper than {MAX_DEPTH} levels"));
        // Skip the bracketed group starting at the current token, counting brackets without
        // recursion.
        let m = self.start();
        let mut open: u64 = 0;
        loop {
            match self.current() {
                EOF => break,
                L_CURLY | L_PAREN | L_BRACK => open += 1,
                R_CURLY | R_PAREN | R_BRACK => {
                    if open <= 1 {
                        self.bump();
                        break;
                    }
                    open -= 1;
                }
                _ => {}
            }
            self.bump();
            if open == 0 {
                break;
            }
        }
        m.complete(self, ERROR);
        false
    }

    /// Leaves a level entered with [`Parser::enter`].
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Index of the current token, used by loops to check that they made progress.
    pub fn token_pos(&self) -> usize {
        self.pos
    }
}

/// An open node.
pub(crate) struct Marker {
    pos: u32,
}

impl Marker {
    /// Closes the node with `kind`.
    pub fn complete(self, p: &mut Parser<'_>, kind: SyntaxKind) -> CompletedMarker {
        if let Some(Event::Start { kind: k, .. }) = p.events.get_mut(self.pos as usize) {
            *k = kind;
        }
        p.events.push(Event::Finish);
        CompletedMarker { pos: self.pos }
    }
}

/// A closed node that can still be wrapped in a new parent.
#[derive(Clone, Copy)]
pub(crate) struct CompletedMarker {
    pos: u32,
}

impl CompletedMarker {
    /// Starts a new node that will contain this one (and whatever follows).
    pub fn precede(self, p: &mut Parser<'_>) -> Marker {
        let new = p.start();
        if let Some(Event::Start { forward_parent, .. }) = p.events.get_mut(self.pos as usize) {
            *forward_parent = Some(new.pos - self.pos);
        }
        new
    }
}
