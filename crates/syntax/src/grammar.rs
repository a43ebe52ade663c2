//! The PTX grammar: recursive-descent functions over a [`Parser`].
//!
//! Conventions: each function parses one construct starting at the current token and wraps it
//! in a node. Every loop checks that it consumed at least one token per iteration (or exits),
//! and every recursive construct (`{}`, `()`, `[]`, prefix operators) goes through
//! [`Parser::enter`], which bounds the recursion depth.

use crate::SyntaxKind::{self, *};
use crate::parser::{CompletedMarker, Parser};

/// Parses a whole file into a `SOURCE_FILE` node.
pub(crate) fn source_file(p: &mut Parser<'_>) {
    let m = p.start();
    while !p.at_eof() {
        let before = p.token_pos();
        item(p);
        if p.token_pos() == before {
            // An item that consumed nothing: take one token as an error so the loop advances.
            let msg = format!(
                "expected a directive or declaration, found {}",
                p.describe_current()
            );
            let range = p.current_range_strict();
            p.error_at(range, msg);
            let e = p.start();
            p.bump();
            e.complete(p, ERROR);
        }
    }
    m.complete(p, SOURCE_FILE);
}

const LINKAGE: &[&str] = &[".visible", ".extern", ".weak", ".common"];

/// Directive words that begin a variable declaration.
const DECL_START: &[&str] = &[
    ".reg",
    ".sreg",
    ".const",
    ".global",
    ".local",
    ".param",
    ".shared",
    ".tex",
    ".align",
    ".attribute",
    ".extern",
    ".visible",
    ".weak",
    ".common",
];

/// Directive words that begin a module-level item; a function header stops at these.
const ITEM_START: &[&str] = &[
    ".version",
    ".target",
    ".address_size",
    ".file",
    ".section",
    ".entry",
    ".func",
    ".visible",
    ".extern",
    ".weak",
    ".common",
    ".global",
    ".const",
    ".shared",
    ".local",
    ".tex",
    ".reg",
    ".alias",
    ".loc",
];

/// Directives that end at the end of their line rather than with `;`.
const LINE_DIRECTIVES: &[&str] = &[
    ".loc",
    ".file",
    ".version",
    ".target",
    ".address_size",
    ".section",
];

fn is_one_of(p: &Parser<'_>, n: usize, words: &[&str]) -> bool {
    p.nth(n) == DOT_IDENT && words.contains(&p.nth_text(n))
}

/// Is the item at the current token a function (possibly after linkage words)?
fn at_function(p: &Parser<'_>) -> bool {
    let mut k = 0;
    while p.nth(k) == DOT_IDENT {
        match p.nth_text(k) {
            ".entry" | ".func" => return true,
            t if LINKAGE.contains(&t) => k += 1,
            _ => return false,
        }
    }
    false
}

fn item(p: &mut Parser<'_>) {
    match p.current() {
        DOT_IDENT => {}
        IDENT | AT => {
            // Instructions outside a function: parse them so the tree is useful, but report.
            let range = p.current_range_strict();
            p.error_at(range, "instruction outside of a function body");
            statement(p);
            return;
        }
        L_CURLY => {
            let range = p.current_range_strict();
            p.error_at(range, "block outside of a function");
            block(p);
            return;
        }
        _ => {
            let msg = format!(
                "expected a directive or declaration, found {}",
                p.describe_current()
            );
            p.err_bump_line(msg);
            return;
        }
    }
    match p.current_text() {
        ".version" => line_directive(p, VERSION_DIRECTIVE, |p| {
            if !p.eat(FLOAT_NUMBER) && !p.eat(INT_NUMBER) {
                p.error_expected("a version number like `8.4`");
            }
        }),
        ".target" => line_directive(p, TARGET_DIRECTIVE, |p| {
            if !p.eat(IDENT) {
                p.error_expected("a target name like `sm_90`");
                return;
            }
            while p.at(COMMA) && !p.nth_newline_before(0) {
                p.bump();
                if !p.eat(IDENT) {
                    p.error_expected("a target option");
                    return;
                }
            }
        }),
        ".address_size" => line_directive(p, ADDRESS_SIZE_DIRECTIVE, |p| {
            if !p.eat(INT_NUMBER) {
                p.error_expected("an address size (`32` or `64`)");
            }
        }),
        ".file" => file_directive(p),
        ".section" => section(p),
        _ if at_function(p) => function(p),
        t if DECL_START.contains(&t) => var_decl(p, GLOBAL_VAR),
        _ => directive(p),
    }
}

/// A directive that ends at the end of its line (an optional `;` is accepted).
fn line_directive(p: &mut Parser<'_>, kind: SyntaxKind, body: impl FnOnce(&mut Parser<'_>)) {
    let m = p.start();
    let name = p.current_text();
    p.bump();
    if !p.at_line_start() {
        let errors_before = p.errors.len();
        body(p);
        if p.errors.len() > errors_before {
            // Already reported: drop the rest of the line quietly.
            if !p.at_line_start() {
                p.skip_to_line_end();
            }
        } else {
            end_of_line(p);
        }
    } else {
        p.error_expected(&format!("arguments for `{name}`"));
    }
    m.complete(p, kind);
}

/// Ends a line directive: eats an optional `;`, then reports and skips anything else on the
/// line.
fn end_of_line(p: &mut Parser<'_>) {
    if p.at(SEMICOLON) && !p.at_line_start() {
        p.bump();
    }
    if !p.at_line_start() && !p.at_eof() {
        let msg = format!("unexpected {} at end of directive", p.describe_current());
        p.err_recover_line(msg);
    }
}

/// `.file 1 "name" [, timestamp, size]`
fn file_directive(p: &mut Parser<'_>) {
    line_directive(p, FILE_DIRECTIVE, |p| {
        if !p.eat(INT_NUMBER) {
            p.error_expected("a file number");
            return;
        }
        if !p.eat(STRING) {
            p.error_expected("a file name string");
            return;
        }
        while p.at(COMMA) && !p.at_line_start() {
            p.bump();
            if !p.eat(INT_NUMBER) {
                p.error_expected("an integer");
                return;
            }
        }
    });
}

/// `.section .name { labels and data lines }`
fn section(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    if p.at(DOT_IDENT) || p.at(IDENT) {
        p.bump();
    } else {
        p.error_expected("a section name");
    }
    if p.at(L_CURLY) {
        p.bump();
        while !p.at(R_CURLY) && !p.at_eof() {
            let before = p.token_pos();
            match p.current() {
                IDENT if p.nth(1) == COLON => label(p),
                DOT_IDENT if p.nth_text(0).starts_with(".b") || p.nth_text(0).starts_with(".u") => {
                    data_directive(p)
                }
                _ => {
                    let msg = format!(
                        "expected a label or a data directive, found {}",
                        p.describe_current()
                    );
                    p.err_recover_line(msg);
                }
            }
            if p.token_pos() == before {
                p.bump();
            }
        }
        p.expect(R_CURLY, "`}`");
    } else {
        p.error_expected("`{`");
    }
    m.complete(p, SECTION);
}

/// `.b8 1, 2` / `.b32 $L__a-$L__b` / `.b64 sym+4`: data in a section, one line.
fn data_directive(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    if !p.at_line_start() {
        loop {
            if expr(p).is_none() {
                p.error_expected("a value");
                break;
            }
            if p.at(COMMA) && !p.at_line_start() {
                p.bump();
            } else {
                break;
            }
        }
    }
    end_of_line(p);
    m.complete(p, DATA_DIRECTIVE);
}

/// `.entry`/`.func` with linkage, return and parameter lists, performance directives, and a
/// body or `;`.
fn function(p: &mut Parser<'_>) {
    let m = p.start();
    while is_one_of(p, 0, LINKAGE) {
        p.bump();
    }
    let is_func = p.current_text() == ".func";
    p.bump(); // `.entry` / `.func`
    if is_func && p.at(L_PAREN) {
        param_list(p, RET_PARAM_LIST);
    }
    if !p.eat(IDENT) {
        p.error_expected("a function name");
    }
    if p.at(L_PAREN) {
        param_list(p, PARAM_LIST);
    }
    // Performance directives and attributes, up to the body or `;`.
    while p.at(DOT_IDENT) && !is_one_of(p, 0, ITEM_START) {
        if !is_func && p.current_text() == ".noreturn" {
            // ptxas: "Parsing error near '.noreturn'" on kernels.
            let range = p.current_range_strict();
            p.error_at(range, "`.noreturn` is only allowed on `.func`");
        }
        perf_directive(p);
    }
    match p.current() {
        L_CURLY => block(p),
        SEMICOLON => p.bump(),
        // Old PTX (and ptxas) accept a declaration with no `;` when the next item follows on a
        // new line.
        _ if p.at_line_start() && (p.at_eof() || p.at(DOT_IDENT)) => {}
        _ => p.error_expected("`{` or `;` after the function header"),
    }
    m.complete(p, FUNCTION);
}

/// `.maxntid 128, 1, 1`, `.noreturn`, `.pragma "nounroll";`: a word and optional arguments.
fn perf_directive(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    while matches!(p.current(), INT_NUMBER | STRING | IDENT | FLOAT_NUMBER) {
        p.bump();
        if !p.eat(COMMA) {
            break;
        }
    }
    p.eat(SEMICOLON);
    m.complete(p, PERF_DIRECTIVE);
}

/// `( param, param )`
fn param_list(p: &mut Parser<'_>, kind: SyntaxKind) {
    let m = p.start();
    p.bump(); // (
    while !p.at(R_PAREN) && !p.at_eof() {
        let before = p.token_pos();
        param(p);
        if p.at(COMMA) {
            p.bump();
        } else if !p.at(R_PAREN) {
            match p.current() {
                L_CURLY | SEMICOLON | EOF => break,
                _ => {
                    let msg = format!(
                        "expected `,` or `)` in parameter list, found {}",
                        p.describe_current()
                    );
                    let range = p.current_range_strict();
                    p.error_at(range, msg);
                    let e = p.start();
                    while !matches!(p.current(), COMMA | R_PAREN | L_CURLY | SEMICOLON | EOF) {
                        p.bump();
                    }
                    e.complete(p, ERROR);
                    p.eat(COMMA);
                }
            }
        }
        if p.token_pos() == before {
            break;
        }
    }
    p.expect(R_PAREN, "`)`");
    m.complete(p, kind);
}

/// One parameter: `.param .u64 .ptr.global.align 16 name[4]`.
fn param(p: &mut Parser<'_>) {
    let m = p.start();
    decl_specifiers(p);
    if p.at(IDENT) {
        declarator(p);
    } else {
        p.error_expected("a parameter name");
    }
    m.complete(p, PARAM);
}

/// The dotted words before a declared name: state space, linkage, `.align N`, vector and
/// scalar types, `.ptr`, `.attribute(...)`.
fn decl_specifiers(p: &mut Parser<'_>) {
    while p.at(DOT_IDENT) {
        if p.current_text() == ".align" {
            let m = p.start();
            p.bump();
            if !p.eat(INT_NUMBER) {
                p.error_expected("an alignment");
            }
            m.complete(p, ALIGN);
        } else if p.nth(1) == L_PAREN {
            let m = p.start();
            p.bump();
            p.bump(); // (
            while !matches!(p.current(), R_PAREN | EOF | SEMICOLON | L_CURLY | R_CURLY) {
                p.bump();
            }
            p.expect(R_PAREN, "`)`");
            m.complete(p, ATTRIBUTE);
        } else {
            p.bump();
        }
    }
}

/// A variable declaration: specifiers, one or more declarators, `;`.
fn var_decl(p: &mut Parser<'_>, kind: SyntaxKind) {
    let m = p.start();
    decl_specifiers(p);
    loop {
        if !p.at(IDENT) {
            p.error_expected("a variable name");
            // Already reported: skip the rest of the declaration quietly.
            if !p.eat(SEMICOLON) && !p.at_line_start() {
                p.skip_to_line_end();
            }
            m.complete(p, kind);
            return;
        }
        declarator(p);
        if !p.eat(COMMA) {
            break;
        }
    }
    expect_semicolon(p);
    m.complete(p, kind);
}

/// Expects the `;` that ends a statement; on failure reports it and, unless the offending
/// token starts a new line (then it likely starts the next statement), skips the rest of
/// the line.
fn expect_semicolon(p: &mut Parser<'_>) {
    if p.eat(SEMICOLON) {
        return;
    }
    if p.at_line_start() || p.at(R_CURLY) || p.at_eof() {
        p.error_expected("`;`");
    } else {
        let msg = format!("expected `;`, found {}", p.describe_current());
        p.err_recover_line(msg);
    }
}

/// `name<N>[dims] = init`
fn declarator(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(); // name
    if p.at(LT) {
        let c = p.start();
        p.bump();
        if !p.eat(INT_NUMBER) {
            p.error_expected("a register count");
        }
        p.expect(GT, "`>`");
        c.complete(p, PARAM_COUNT);
    }
    while p.at(L_BRACK) {
        let d = p.start();
        p.bump();
        if !p.at(R_BRACK) && expr(p).is_none() {
            p.error_expected("an array size");
        }
        p.expect(R_BRACK, "`]`");
        d.complete(p, ARRAY_DIM);
    }
    if p.at(EQ) {
        let i = p.start();
        p.bump();
        init_value(p);
        i.complete(p, INITIALIZER);
    }
    m.complete(p, DECLARATOR);
}

/// An initializer value: an expression or a braced list of values.
fn init_value(p: &mut Parser<'_>) {
    if p.at(L_CURLY) {
        if !p.enter() {
            return;
        }
        let m = p.start();
        p.bump();
        while !p.at(R_CURLY) && !p.at_eof() && !p.at(SEMICOLON) {
            let before = p.token_pos();
            init_value(p);
            if !p.eat(COMMA) {
                break;
            }
            if p.token_pos() == before {
                break;
            }
        }
        p.expect(R_CURLY, "`}`");
        m.complete(p, INIT_LIST);
        p.leave();
    } else if expr(p).is_none() {
        p.error_expected("an initializer value");
    }
}

/// `{ statements }`
pub(crate) fn block(p: &mut Parser<'_>) {
    if !p.enter() {
        return;
    }
    let m = p.start();
    p.bump(); // {
    while !p.at(R_CURLY) && !p.at_eof() {
        let before = p.token_pos();
        statement(p);
        if p.token_pos() == before {
            let msg = format!("expected a statement, found {}", p.describe_current());
            let range = p.current_range_strict();
            p.error_at(range, msg);
            let e = p.start();
            p.bump();
            e.complete(p, ERROR);
        }
    }
    p.expect(R_CURLY, "`}`");
    m.complete(p, BLOCK);
    p.leave();
}

fn statement(p: &mut Parser<'_>) {
    match p.current() {
        L_CURLY => block(p),
        IDENT if p.nth(1) == COLON => label(p),
        IDENT | AT => instruction(p),
        DOT_IDENT => {
            let t = p.current_text();
            if DECL_START.contains(&t) {
                var_decl(p, VAR_DECL);
            } else if t == ".file" {
                file_directive(p);
            } else {
                directive(p);
            }
        }
        _ => {
            let msg = format!("expected a statement, found {}", p.describe_current());
            p.err_bump_line(msg);
        }
    }
}

/// `name:`
fn label(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    p.bump();
    m.complete(p, LABEL);
}

/// Any other directive: `.loc 1 2 3`, `.pragma "nounroll";`, `.alias a, b;`,
/// `.callprototype (...) _ (...);`, `.branchtargets L1, L2;`. Its arguments are kept as flat
/// tokens (parameter lists of `.callprototype` become `PARAM_LIST`s). It ends with `;` or at
/// the end of its line.
fn directive(p: &mut Parser<'_>) {
    let m = p.start();
    let name = p.current_text();
    let line_directive = LINE_DIRECTIVES.contains(&name);
    let is_proto = name == ".callprototype";
    p.bump();
    let mut first = true;
    let mut terminated = false;
    loop {
        match p.current() {
            EOF | L_CURLY | R_CURLY => break,
            SEMICOLON => {
                p.bump();
                terminated = true;
                break;
            }
            _ if p.at_line_start() => break,
            L_PAREN if is_proto => param_list(p, if first { RET_PARAM_LIST } else { PARAM_LIST }),
            _ => p.bump(),
        }
        first = false;
    }
    if !line_directive && !terminated {
        p.error_expected("`;`");
    }
    m.complete(p, DIRECTIVE);
}

/// `@p opcode.mod.mod operand, operand;`
fn instruction(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at(AT) {
        let g = p.start();
        p.bump();
        p.eat(BANG);
        if p.at(IDENT) {
            name_ref(p);
        } else {
            p.error_expected("a predicate register");
        }
        g.complete(p, GUARD);
    }
    let is_call = p.at(IDENT) && p.current_text() == "call";
    if !p.eat(IDENT) {
        p.error_expected("an instruction opcode");
        p.skip_to_line_end();
        m.complete(p, INSTRUCTION);
        return;
    }
    while p.at(DOT_IDENT) {
        p.bump();
    }
    if !p.at(SEMICOLON) && !p.at(R_CURLY) && !p.at_eof() {
        loop {
            if !operand(p, is_call) {
                // Already reported: skip the rest of the statement quietly.
                if !p.eat(SEMICOLON) && !p.at_line_start() {
                    p.skip_to_line_end();
                }
                m.complete(p, INSTRUCTION);
                return;
            }
            if !p.eat(COMMA) {
                break;
            }
        }
    }
    expect_semicolon(p);
    m.complete(p, INSTRUCTION);
}

/// One instruction operand. Returns false (after reporting) if none was found.
fn operand(p: &mut Parser<'_>, is_call: bool) -> bool {
    match p.current() {
        L_CURLY => bracketed_list(p, L_CURLY, R_CURLY, VECTOR_OPERAND),
        L_BRACK => bracketed_list(p, L_BRACK, R_BRACK, ADDRESS),
        L_PAREN if is_call => bracketed_list(p, L_PAREN, R_PAREN, ARG_LIST),
        _ => {
            if expr(p).is_none() {
                p.error_expected("an operand");
                return false;
            }
        }
    }
    true
}

/// `{a, b}`, `[a+4]`, `[tex, {x, y}]`, `(a, b)`: a bracketed, comma-separated operand list.
fn bracketed_list(p: &mut Parser<'_>, open: SyntaxKind, close: SyntaxKind, kind: SyntaxKind) {
    if !p.enter() {
        return;
    }
    let m = p.start();
    debug_assert!(p.at(open));
    p.bump();
    let what = match close {
        R_CURLY => "`}`",
        R_BRACK => "`]`",
        _ => "`)`",
    };
    if !p.at(close) {
        loop {
            if !operand(p, false) {
                break;
            }
            if !p.eat(COMMA) {
                break;
            }
        }
    }
    p.expect(close, what);
    m.complete(p, kind);
    p.leave();
}

/// A name used as a value, with `.x`-style components glued to it: `%r1`, `%tid.x`, `sym`.
fn name_ref(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump();
    while p.at(DOT_IDENT) && p.nth_joined(0) {
        p.bump();
    }
    m.complete(p, NAME_REF)
}

/// Binding power of a binary operator (higher binds tighter), as in C.
fn infix_bp(kind: SyntaxKind) -> Option<u8> {
    Some(match kind {
        PIPE2 => 2,
        AMP2 => 3,
        PIPE => 4,
        CARET => 5,
        AMP => 6,
        EQ2 | NEQ => 7,
        LT | GT | LTEQ | GTEQ => 8,
        SHL | SHR => 9,
        PLUS | MINUS => 10,
        STAR | SLASH | PERCENT => 11,
        _ => return None,
    })
}

/// A constant expression or operand expression.
pub(crate) fn expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    expr_bp(p, 1)
}

fn expr_bp(p: &mut Parser<'_>, min_bp: u8) -> Option<CompletedMarker> {
    let mut lhs = unary(p)?;
    loop {
        if p.at(QUESTION) && min_bp <= 1 {
            let m = lhs.precede(p);
            p.bump();
            if expr_bp(p, 2).is_none() {
                p.error_expected("an expression");
            }
            p.expect(COLON, "`:`");
            if expr_bp(p, 1).is_none() {
                p.error_expected("an expression");
            }
            lhs = m.complete(p, TERNARY_EXPR);
            continue;
        }
        let Some(bp) = infix_bp(p.current()) else {
            break;
        };
        if bp < min_bp {
            break;
        }
        let m = lhs.precede(p);
        p.bump();
        if expr_bp(p, bp + 1).is_none() {
            p.error_expected("an expression");
        }
        lhs = m.complete(p, BIN_EXPR);
    }
    Some(lhs)
}

fn unary(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    match p.current() {
        MINUS | PLUS | BANG | TILDE => {
            if !p.enter() {
                return None;
            }
            let m = p.start();
            p.bump();
            if unary(p).is_none() {
                p.error_expected("an expression");
            }
            p.leave();
            Some(m.complete(p, PREFIX_EXPR))
        }
        _ => postfix(p),
    }
}

fn postfix(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let (lhs, lhs_kind) = primary(p)?;
    // `generic(sym)`, `mask`-style `0xff(sym)`: a name or number applied to a parenthesised
    // expression.
    if p.at(L_PAREN) && matches!(lhs_kind, NAME_REF | LITERAL) {
        if !p.enter() {
            return Some(lhs);
        }
        let m = lhs.precede(p);
        p.bump();
        if expr(p).is_none() {
            p.error_expected("an expression");
        }
        p.expect(R_PAREN, "`)`");
        p.leave();
        return Some(m.complete(p, CALL_EXPR));
    }
    Some(lhs)
}

fn primary(p: &mut Parser<'_>) -> Option<(CompletedMarker, SyntaxKind)> {
    match p.current() {
        INT_NUMBER | FLOAT_NUMBER => {
            let m = p.start();
            p.bump();
            Some((m.complete(p, LITERAL), LITERAL))
        }
        IDENT | DOT_IDENT => Some((name_ref(p), NAME_REF)),
        L_PAREN => {
            if !p.enter() {
                return None;
            }
            let m = p.start();
            p.bump();
            let kind = if p.at(DOT_IDENT) && p.nth(1) == R_PAREN {
                // A cast: `(.s64) x`.
                p.bump();
                p.bump();
                if unary(p).is_none() {
                    p.error_expected("an expression");
                }
                CAST_EXPR
            } else {
                if expr(p).is_none() {
                    p.error_expected("an expression");
                }
                p.expect(R_PAREN, "`)`");
                PAREN_EXPR
            };
            p.leave();
            Some((m.complete(p, kind), kind))
        }
        _ => None,
    }
}
