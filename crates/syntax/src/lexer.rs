//! The PTX lexer: splits text into tokens, trivia included, so that concatenating the token
//! texts gives back the input exactly.
//!
//! The lexer works on bytes; every token boundary falls on a UTF-8 character boundary because
//! all token classes except `ERROR_TOKEN` are ASCII, and an `ERROR_TOKEN` always spans one whole
//! character.

use crate::SyntaxKind::{self, *};

/// A lexed token: its kind and its length in bytes. Offsets follow from the lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: SyntaxKind,
    pub len: u32,
}

/// A lexer diagnostic: a message and the byte range it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub message: &'static str,
    pub start: u32,
    pub end: u32,
}

/// Lexes `text` into tokens (trivia included) and diagnostics.
///
/// Texts longer than `u32::MAX` bytes cannot be represented in a rowan tree; callers
/// ([`crate::parse`]) reject them before lexing.
pub fn lex(text: &str) -> (Vec<Token>, Vec<LexError>) {
    let bytes = text.as_bytes();
    let mut tokens = Vec::with_capacity(bytes.len() / 3 + 1);
    let mut errors = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let start = pos;
        let (kind, end) = next_token(bytes, pos, &mut errors);
        // `next_token` always consumes at least one byte; keep that invariant visible here so the
        // loop can never stall even if a future edit breaks it.
        let end = if end > start { end } else { start + 1 };
        let end = end.min(bytes.len());
        let end = round_to_char_boundary(text, end);
        tokens.push(Token {
            kind,
            len: (end - start) as u32,
        });
        pos = end;
    }
    (tokens, errors)
}

fn round_to_char_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[inline]
fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

fn skip_while(bytes: &[u8], mut i: usize, f: impl Fn(u8) -> bool) -> usize {
    while i < bytes.len() && f(bytes[i]) {
        i += 1;
    }
    i
}

fn next_token(bytes: &[u8], pos: usize, errors: &mut Vec<LexError>) -> (SyntaxKind, usize) {
    let b = bytes[pos];
    let peek = |n: usize| bytes.get(pos + n).copied().unwrap_or(0);
    match b {
        // Space, tab, line feed, carriage return, form feed; ptxas rejects a vertical tab.
        b' ' | b'\t' | b'\n' | b'\r' | 0x0c => (
            WHITESPACE,
            skip_while(bytes, pos + 1, |c| {
                matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
            }),
        ),
        b'/' if peek(1) == b'/' => {
            let end = skip_while(bytes, pos + 2, |c| c != b'\n');
            check_ascii(bytes, pos, end, errors);
            (COMMENT, end)
        }
        b'/' if peek(1) == b'*' => {
            let mut i = pos + 2;
            loop {
                if i + 1 >= bytes.len() {
                    errors.push(LexError {
                        message: "unterminated block comment",
                        start: pos as u32,
                        end: bytes.len() as u32,
                    });
                    return (COMMENT, bytes.len());
                }
                if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                    check_ascii(bytes, pos, i + 2, errors);
                    return (COMMENT, i + 2);
                }
                i += 1;
            }
        }
        b'%' => {
            if is_ident_continue(peek(1)) {
                (IDENT, skip_while(bytes, pos + 1, is_ident_continue))
            } else {
                (PERCENT, pos + 1)
            }
        }
        b'_' | b'$' | b'a'..=b'z' | b'A'..=b'Z' => {
            (IDENT, skip_while(bytes, pos + 1, is_ident_continue))
        }
        b'.' => {
            let c = peek(1);
            // A word starts with a letter, `_` or `$`; of those starting with a digit ptxas has
            // only the dimensions `.1d`..`.5d` and `.2dms`. Otherwise (`.4`, `.0f3F..`) the
            // dot stays a `DOT` and what follows lexes as a number, which the parser rejects.
            let word_end = dot_word_end(bytes, pos + 1);
            if is_ident_continue(c)
                && (!c.is_ascii_digit() || is_dimension(&bytes[pos + 1..word_end]))
            {
                (DOT_IDENT, dot_word_end(bytes, pos + 1))
            } else {
                (DOT, pos + 1)
            }
        }
        b'0'..=b'9' => number(bytes, pos, errors),
        b'"' => {
            let mut i = pos + 1;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        check_ascii(bytes, pos, i + 1, errors);
                        return (STRING, i + 1);
                    }
                    // ptxas lets a string run across lines.
                    b'\\' if i + 1 < bytes.len() => i += 2,
                    _ => i += 1,
                }
            }
            let end = i.min(bytes.len());
            errors.push(LexError {
                message: "unterminated string literal",
                start: pos as u32,
                end: end as u32,
            });
            (STRING, end)
        }
        b'{' => (L_CURLY, pos + 1),
        b'}' => (R_CURLY, pos + 1),
        b'(' => (L_PAREN, pos + 1),
        b')' => (R_PAREN, pos + 1),
        b'[' => (L_BRACK, pos + 1),
        b']' => (R_BRACK, pos + 1),
        b';' => (SEMICOLON, pos + 1),
        b',' => (COMMA, pos + 1),
        b':' => (COLON, pos + 1),
        b'@' => (AT, pos + 1),
        b'+' => (PLUS, pos + 1),
        b'-' => (MINUS, pos + 1),
        b'*' => (STAR, pos + 1),
        b'/' => (SLASH, pos + 1),
        b'^' => (CARET, pos + 1),
        b'~' => (TILDE, pos + 1),
        b'?' => (QUESTION, pos + 1),
        b'#' => (HASH, pos + 1),
        b'!' if peek(1) == b'=' => (NEQ, pos + 2),
        b'!' => (BANG, pos + 1),
        b'=' if peek(1) == b'=' => (EQ2, pos + 2),
        b'=' => (EQ, pos + 1),
        b'<' if peek(1) == b'<' => (SHL, pos + 2),
        b'<' if peek(1) == b'=' => (LTEQ, pos + 2),
        b'<' => (LT, pos + 1),
        b'>' if peek(1) == b'>' => (SHR, pos + 2),
        b'>' if peek(1) == b'=' => (GTEQ, pos + 2),
        b'>' => (GT, pos + 1),
        b'&' if peek(1) == b'&' => (AMP2, pos + 2),
        b'&' => (AMP, pos + 1),
        b'|' if peek(1) == b'|' => (PIPE2, pos + 2),
        b'|' => (PIPE, pos + 1),
        _ => {
            // One whole character (the caller rounds up to a char boundary).
            errors.push(LexError {
                message: "unexpected character",
                start: pos as u32,
                end: (pos + utf8_len(b)).min(bytes.len()) as u32,
            });
            (ERROR_TOKEN, pos + utf8_len(b))
        }
    }
}

/// The end of a dotted word starting at `i` (after the dot). Words may contain `::` followed
/// by more word characters, as in `.shared::cta` or `.L2::cache_hint`; and may start with a
/// digit, as in `.1d` or `.2dms`.
fn dot_word_end(bytes: &[u8], i: usize) -> usize {
    let mut i = skip_while(bytes, i, is_ident_continue);
    while i + 2 < bytes.len()
        && bytes[i] == b':'
        && bytes[i + 1] == b':'
        && is_ident_continue(bytes[i + 2])
    {
        i = skip_while(bytes, i + 2, is_ident_continue);
    }
    i
}

/// ptxas rejects any byte outside ASCII, and stops at a NUL byte, even inside comments and
/// strings: report the first such character of a comment or string token.
fn check_ascii(bytes: &[u8], start: usize, end: usize, errors: &mut Vec<LexError>) {
    if let Some(i) = bytes[start..end].iter().position(|&b| b >= 0x80 || b == 0) {
        let at = start + i;
        let message = if bytes[at] == 0 {
            "NUL byte"
        } else {
            "non-ASCII character"
        };
        errors.push(LexError {
            message,
            start: at as u32,
            end: (at + utf8_len(bytes[at])).min(end) as u32,
        });
    }
}

/// `1d`, `2d`, ..., `2dms`: texture and tensor dimensions.
fn is_dimension(word: &[u8]) -> bool {
    matches!(word, [b'1'..=b'5', b'd'] | [b'2', b'd', b'm', b's'])
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

/// Lexes a numeric literal starting at a digit.
///
/// Accepted shapes (PTX ISA "Constants"): `0[xX]hex+U?`, `0[bB][01]+U?`, `0[0-7]+U?` (octal),
/// `[1-9][0-9]*U?` (decimal), `0[fF]hex{8}`, `0[dD]hex{16}`, and decimal floats with a fraction
/// and/or an exponent. As in ptxas, a number ends where its shape ends: `0$L1` is `0` followed
/// by the name `$L1`, and `12abc` is `12` followed by `abc` (which the parser then rejects).
fn number(bytes: &[u8], pos: usize, errors: &mut Vec<LexError>) -> (SyntaxKind, usize) {
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let mut kind = INT_NUMBER;
    let mut ok = true;
    let mut i;
    if at(pos) == b'0' && matches!(at(pos + 1), b'x' | b'X') {
        i = skip_while(bytes, pos + 2, |c| c.is_ascii_hexdigit());
        ok = i > pos + 2;
        if at(i) == b'U' {
            i += 1;
        }
    } else if at(pos) == b'0' && matches!(at(pos + 1), b'b' | b'B') {
        i = skip_while(bytes, pos + 2, |c| c == b'0' || c == b'1');
        ok = i > pos + 2;
        if at(i) == b'U' {
            i += 1;
        }
    } else if at(pos) == b'0' && matches!(at(pos + 1), b'f' | b'F' | b'd' | b'D') {
        kind = FLOAT_NUMBER;
        let want = if matches!(at(pos + 1), b'f' | b'F') {
            8
        } else {
            16
        };
        i = skip_while(bytes, pos + 2, |c| c.is_ascii_hexdigit());
        ok = i - (pos + 2) == want;
    } else {
        i = skip_while(bytes, pos, |c| c.is_ascii_digit());
        if at(i) == b'.' {
            // `1.5`, and `1.` with an empty fraction: like ptxas, a dot after digits always
            // belongs to the number (`9.b8` is `9.` followed by `b8`).
            kind = FLOAT_NUMBER;
            i = skip_while(bytes, i + 1, |c| c.is_ascii_digit());
        }
        if matches!(at(i), b'e' | b'E') {
            let mut j = i + 1;
            if matches!(at(j), b'+' | b'-') {
                j += 1;
            }
            if at(j).is_ascii_digit() {
                kind = FLOAT_NUMBER;
                i = skip_while(bytes, j, |c| c.is_ascii_digit());
            }
        }
        if kind == INT_NUMBER {
            if bytes[pos] == b'0' && i > pos + 1 {
                ok = bytes[pos..i].iter().all(|c| (b'0'..=b'7').contains(c));
            }
            if at(i) == b'U' {
                i += 1;
            }
        }
    }
    if !ok {
        errors.push(LexError {
            message: "malformed numeric literal",
            start: pos as u32,
            end: i as u32,
        });
    }
    (kind, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(SyntaxKind, &str)> {
        let (toks, _) = lex(text);
        let mut off = 0;
        toks.iter()
            .map(|t| {
                let s = &text[off..off + t.len as usize];
                off += t.len as usize;
                (t.kind, s)
            })
            .filter(|(k, _)| *k != WHITESPACE)
            .collect()
    }

    #[test]
    fn numbers() {
        let got = kinds("0 42 0x2A 052 0b101 42U 1.5 1e-3 1. 0f3F800000 0d3FF0000000000000 8.4");
        let kinds_only: Vec<_> = got.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            kinds_only,
            vec![
                INT_NUMBER,
                INT_NUMBER,
                INT_NUMBER,
                INT_NUMBER,
                INT_NUMBER,
                INT_NUMBER,
                FLOAT_NUMBER,
                FLOAT_NUMBER,
                FLOAT_NUMBER,
                FLOAT_NUMBER,
                FLOAT_NUMBER,
                FLOAT_NUMBER
            ]
        );
        assert!(
            lex("0 42 0x2A 052 0b101 42U 1.5 1e-3 0f3F800000")
                .1
                .is_empty()
        );
        assert_eq!(lex("0f3F80").1.len(), 1);
        assert_eq!(lex("089").1.len(), 1);
        assert_eq!(
            kinds("12abc 0$L1"),
            vec![
                (INT_NUMBER, "12"),
                (IDENT, "abc"),
                (INT_NUMBER, "0"),
                (IDENT, "$L1")
            ]
        );
    }

    #[test]
    fn idents_and_dots() {
        assert_eq!(
            kinds("ld.global.u32 %r1, [%rd1+4]; %tid.x _ $L__BB0_1 .b8 % .shared::cta .1d"),
            vec![
                (IDENT, "ld"),
                (DOT_IDENT, ".global"),
                (DOT_IDENT, ".u32"),
                (IDENT, "%r1"),
                (COMMA, ","),
                (L_BRACK, "["),
                (IDENT, "%rd1"),
                (PLUS, "+"),
                (INT_NUMBER, "4"),
                (R_BRACK, "]"),
                (SEMICOLON, ";"),
                (IDENT, "%tid"),
                (DOT_IDENT, ".x"),
                (IDENT, "_"),
                (IDENT, "$L__BB0_1"),
                (DOT_IDENT, ".b8"),
                (PERCENT, "%"),
                (DOT_IDENT, ".shared::cta"),
                (DOT_IDENT, ".1d"),
            ]
        );
    }

    #[test]
    fn trivia_and_errors() {
        assert_eq!(
            kinds("a // c\n/* b */ \"s\\\"\" << >= != é"),
            vec![
                (IDENT, "a"),
                (COMMENT, "// c"),
                (COMMENT, "/* b */"),
                (STRING, "\"s\\\"\""),
                (SHL, "<<"),
                (GTEQ, ">="),
                (NEQ, "!="),
                (ERROR_TOKEN, "é"),
            ]
        );
        assert_eq!(lex("/* open").1[0].message, "unterminated block comment");
        assert_eq!(lex("\"open\nx").1[0].message, "unterminated string literal");
    }
}
