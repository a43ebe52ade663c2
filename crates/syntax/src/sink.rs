//! Replays parser events into a rowan green tree, putting the trivia tokens back.
//!
//! Trivia attachment rule: trivia (whitespace and comments) between two non-trivia tokens is
//! emitted just before the second token, *outside* any node that starts at that token. In
//! other words, a node begins with its first non-trivia token and ends with its last one;
//! the whitespace and comments around it belong to its parent. Trivia at the very start and
//! end of the file belongs to `SOURCE_FILE`. This keeps every item's subtree independent of
//! the blank lines and comments between items.

use rowan::{GreenNode, GreenToken, NodeOrToken};

use crate::SyntaxKind;
use crate::lexer::Token;
use crate::parser::Event;

pub(crate) fn build_tree(text: &str, tokens: &[Token], mut events: Vec<Event>) -> GreenNode {
    let mut builder = Builder::new();
    let mut tok = 0usize; // index into `tokens`
    let mut off = 0usize; // byte offset of tokens[tok]
    let mut depth = 0usize;
    let mut forward: Vec<SyntaxKind> = Vec::new();

    let emit_trivia = |builder: &mut Builder, tok: &mut usize, off: &mut usize| {
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

type GreenElement = NodeOrToken<GreenNode, GreenToken>;

/// Builds a green tree bottom-up.
///
/// Unlike `rowan::GreenNodeBuilder` it does not intern nodes, and interns tokens only in a
/// small direct-mapped cache. rowan's `NodeCache` hashes with FxHash, whose low bits depend
/// only on the first bytes of a token; PTX register names (`%r1`, `%r2`, ... share `%r`)
/// then collide massively, and a function with 200k distinct registers took seconds to
/// build. Growing its table also rehashes whole cached subtrees. This builder is linear.
struct Builder {
    children: Vec<GreenElement>,
    parents: Vec<(rowan::SyntaxKind, usize)>,
    tokens: TokenCache,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            children: Vec::with_capacity(64),
            parents: Vec::with_capacity(16),
            tokens: TokenCache::new(),
        }
    }

    fn token(&mut self, kind: rowan::SyntaxKind, text: &str) {
        let token = self.tokens.get(kind, text);
        self.children.push(NodeOrToken::Token(token));
    }

    fn start_node(&mut self, kind: rowan::SyntaxKind) {
        self.parents.push((kind, self.children.len()));
    }

    fn finish_node(&mut self) {
        if let Some((kind, first)) = self.parents.pop() {
            let node = GreenNode::new(kind, self.children.drain(first..));
            self.children.push(NodeOrToken::Node(node));
        }
    }

    /// The root: the single node left after every node is finished.
    fn finish(mut self) -> GreenNode {
        while !self.parents.is_empty() {
            self.finish_node();
        }
        match (self.children.pop(), self.children.is_empty()) {
            (Some(NodeOrToken::Node(root)), true) => root,
            // The grammar always produces exactly one SOURCE_FILE root; should that ever
            // break, wrap whatever is there rather than panic.
            (last, _) => {
                self.children.extend(last);
                GreenNode::new(SyntaxKind::SOURCE_FILE.into(), self.children.drain(..))
            }
        }
    }
}

/// A direct-mapped cache of short tokens: most tokens of a PTX file are whitespace,
/// punctuation, common modifiers and a few hot registers, so reusing them saves most token
/// allocations at the cost of one hash per token. A colliding token replaces the slot.
struct TokenCache {
    slots: Vec<Option<GreenToken>>,
}

const TOKEN_CACHE_SLOTS: usize = 4096;
/// Longer tokens (comments, long names) are rarely repeated; they are not cached.
const MAX_CACHED_TOKEN_LEN: usize = 24;

impl TokenCache {
    fn new() -> TokenCache {
        TokenCache {
            slots: vec![None; TOKEN_CACHE_SLOTS],
        }
    }

    fn get(&mut self, kind: rowan::SyntaxKind, text: &str) -> GreenToken {
        if text.len() > MAX_CACHED_TOKEN_LEN {
            return GreenToken::new(kind, text);
        }
        // FNV-1a over the kind and the bytes, then fold the high bits down: every byte
        // affects the slot index.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ u64::from(kind.0);
        for &b in text.as_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let slot = ((h ^ (h >> 29) ^ (h >> 47)) as usize) % TOKEN_CACHE_SLOTS;
        if let Some(Some(t)) = self.slots.get(slot)
            && t.kind() == kind
            && t.text() == text
        {
            return t.clone();
        }
        let t = GreenToken::new(kind, text);
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Some(t.clone());
        }
        t
    }
}
