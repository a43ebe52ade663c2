//! The kinds of tokens and nodes in a PTX syntax tree.

/// Declares [`SyntaxKind`] from one list of kinds, together with `SyntaxKind::ALL` (every kind
/// in declaration order, so that `ALL[k as usize] == k`), which turns raw numbers back into
/// kinds. A new kind is added in one place.
macro_rules! syntax_kinds {
    ($($(#[$meta:meta])* $kind:ident,)*) => {
        /// Every token and node kind of the PTX syntax tree.
        ///
        /// Tokens come first (up to [`SyntaxKind::EOF`]), nodes after. The lexer produces only
        /// token kinds; the parser wraps them in nodes. `ERROR` is the node that wraps tokens
        /// the parser could not make sense of; `ERROR_TOKEN` is a character the lexer did not
        /// recognise.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u16)]
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        pub enum SyntaxKind {
            $($(#[$meta])* $kind,)*
        }

        impl SyntaxKind {
            /// Every kind, in declaration order (index = raw value).
            const ALL: &'static [SyntaxKind] = &[$(SyntaxKind::$kind,)*];
        }
    };
}

syntax_kinds! {
    // ---- trivia ----
    /// Spaces, tabs and line breaks.
    WHITESPACE,
    /// `// ...` up to (not including) the line break, or `/* ... */`.
    COMMENT,
    // ---- tokens ----
    /// An identifier: `foo`, `%r1`, `$L__BB0_1`, `_`.
    IDENT,
    /// A word after a dot: `.reg`, `.u32`, `.x`, `.debug_info`.
    DOT_IDENT,
    /// An integer literal: `42`, `0x2A`, `052`, `0b101010`, `42U`.
    INT_NUMBER,
    /// A floating-point literal: `1.5`, `1e-3`, `0f3F800000`, `0d3FF0000000000000`.
    FLOAT_NUMBER,
    /// A string literal: `"nounroll"`.
    STRING,
    L_CURLY,
    R_CURLY,
    L_PAREN,
    R_PAREN,
    L_BRACK,
    R_BRACK,
    SEMICOLON,
    COMMA,
    COLON,
    AT,
    BANG,
    PLUS,
    MINUS,
    STAR,
    SLASH,
    PERCENT,
    LT,
    GT,
    EQ,
    PIPE,
    AMP,
    CARET,
    TILDE,
    QUESTION,
    /// A lone `.` (not followed by a word).
    DOT,
    HASH,
    /// `<<`
    SHL,
    /// `>>`
    SHR,
    /// `&&`
    AMP2,
    /// `||`
    PIPE2,
    /// `==`
    EQ2,
    /// `!=`
    NEQ,
    /// `<=`
    LTEQ,
    /// `>=`
    GTEQ,
    /// A character the lexer does not recognise.
    ERROR_TOKEN,
    /// End of input; never appears in a tree.
    EOF,

    // ---- nodes ----
    /// The whole file.
    SOURCE_FILE,
    /// Tokens the parser could not place.
    ERROR,
    /// `.version 8.4`
    VERSION_DIRECTIVE,
    /// `.target sm_90a, debug`
    TARGET_DIRECTIVE,
    /// `.address_size 64`
    ADDRESS_SIZE_DIRECTIVE,
    /// `.file 1 "a.py"` (module or function scope)
    FILE_DIRECTIVE,
    /// `.section .debug_info { ... }`
    SECTION,
    /// A data line in a section: `.b8 1, 2` or `.b32 $L__a-$L__b`.
    DATA_DIRECTIVE,
    /// `.entry` or `.func`, declaration or definition.
    FUNCTION,
    /// The return parameter list of a `.func`: `(.reg .b32 r)`.
    RET_PARAM_LIST,
    /// The parameter list of a function: `(.param .u64 a, .param .u32 b)`.
    PARAM_LIST,
    /// One parameter in a parameter list.
    PARAM,
    /// A performance tuning directive in a function header: `.maxntid 128, 1, 1`.
    PERF_DIRECTIVE,
    /// `{ statements }`
    BLOCK,
    /// A module-scope variable declaration.
    GLOBAL_VAR,
    /// A variable declaration inside a function body.
    VAR_DECL,
    /// One declared name with its array dimensions, register count and initializer.
    DECLARATOR,
    /// `.align 16`
    ALIGN,
    /// `.attribute(.managed)`
    ATTRIBUTE,
    /// `<100>` in `%r<100>`
    PARAM_COUNT,
    /// `[16]` or `[]`
    ARRAY_DIM,
    /// `= value`
    INITIALIZER,
    /// `{ 1, 2, { 3 } }`
    INIT_LIST,
    /// `name = value` in the initializer of a `.samplerref`/`.texref`/`.surfref`.
    FIELD_INIT,
    /// `name:`
    LABEL,
    /// An instruction statement: guard, opcode, modifiers, operands, `;`.
    INSTRUCTION,
    /// `@p` or `@!p`
    GUARD,
    /// Any other directive statement (`.loc`, `.pragma`, `.alias`, `.callprototype`, ...).
    DIRECTIVE,
    /// A name used as a value: register, symbol or label, with an optional `.x` component.
    NAME_REF,
    /// A numeric literal.
    LITERAL,
    /// `{a, _, c}` in an instruction operand.
    VECTOR_OPERAND,
    /// `[r+4]`
    ADDRESS,
    /// A parenthesised operand list of `call`: `(a, b)`.
    ARG_LIST,
    /// `-x`, `!p`, `~x`
    PREFIX_EXPR,
    /// `a + b`
    BIN_EXPR,
    /// `(a)`
    PAREN_EXPR,
    /// `generic(sym)`, `0xff(sym)`
    CALL_EXPR,
    /// `(.s64) x`
    CAST_EXPR,
    /// `c ? a : b`
    TERNARY_EXPR,
    /// `arr[1]`: an array element operand.
    INDEX_EXPR,
    #[doc(hidden)]
    __LAST,
}

use SyntaxKind::*;

impl SyntaxKind {
    /// Whitespace and comments.
    pub fn is_trivia(self) -> bool {
        matches!(self, WHITESPACE | COMMENT)
    }

    /// True for token kinds, false for node kinds.
    pub fn is_token(self) -> bool {
        (self as u16) <= (EOF as u16)
    }

    fn from_u16(raw: u16) -> SyntaxKind {
        // Raw kinds only come from trees we built, so they are always in range; map anything
        // else to ERROR rather than panicking.
        SyntaxKind::ALL.get(raw as usize).copied().unwrap_or(ERROR)
    }
}

impl From<SyntaxKind> for rowan::SyntaxKind {
    fn from(kind: SyntaxKind) -> Self {
        rowan::SyntaxKind(kind as u16)
    }
}

/// The rowan [`rowan::Language`] of PTX trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PtxLanguage {}

impl rowan::Language for PtxLanguage {
    type Kind = SyntaxKind;
    fn kind_from_raw(raw: rowan::SyntaxKind) -> SyntaxKind {
        SyntaxKind::from_u16(raw.0)
    }
    fn kind_to_raw(kind: SyntaxKind) -> rowan::SyntaxKind {
        kind.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_round_trip_covers_every_kind() {
        for raw in 0..=(__LAST as u16) {
            assert_eq!(SyntaxKind::from_u16(raw) as u16, raw);
        }
        assert_eq!(SyntaxKind::from_u16(u16::MAX), ERROR);
    }
}
