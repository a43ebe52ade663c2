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
    module_header(p);
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

/// Directives allowed after the parameter list of an `.entry`, as ptxas 13.0 parses them
/// (`tests/features.rs` checks every entry of these four tables against ptxas).
pub const ENTRY_HEADER_DIRECTIVES: &[&str] = &[
    ".maxnreg",
    ".maxntid",
    ".reqntid",
    ".minnctapersm",
    ".maxnctapersm",
    ".pragma",
    ".reqnctapercluster",
    ".explicitcluster",
    ".maxclusterrank",
    ".blocksareclusters",
    ".local_maxnreg",
];

/// Directives allowed after the parameter list of a `.func`.
pub const FUNC_HEADER_DIRECTIVES: &[&str] = &[
    ".noreturn",
    ".abi_preserve",
    ".abi_preserve_control",
    ".local_maxnreg",
];

/// Module-scope directives parsed as a generic `DIRECTIVE` (the others have their own nodes).
pub const MODULE_DIRECTIVES: &[&str] = &[".pragma", ".alias"];

/// Function-body directives parsed as a generic `DIRECTIVE` (ptxas accepts `.alias` here too).
pub const BODY_DIRECTIVES: &[&str] = &[
    ".pragma",
    ".loc",
    ".callprototype",
    ".branchtargets",
    ".calltargets",
    ".alias",
];

/// Where a generic directive appears.
#[derive(Clone, Copy)]
enum Scope {
    Module,
    Body,
}

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

/// The module header: `.version` (its number on the same line), then `.target` lines, then an
/// optional `.address_size`. None of the three may appear later at module scope (a parse
/// error in ptxas), though a `.target` inside a function body is accepted, as ptxas does.
fn module_header(p: &mut Parser<'_>) {
    // A missing `.version` or `.target` is not reported here: ptxas reports it as "Missing
    // .version/.target directive at start of file", not as a parse error, and `hir` owns that
    // diagnostic.
    if p.at(DOT_IDENT) && p.current_text() == ".version" {
        version_directive(p);
    }
    // ptxas takes several consecutive `.target` lines.
    while p.at(DOT_IDENT) && p.current_text() == ".target" {
        target_directive(p);
    }
    if p.at(DOT_IDENT) && p.current_text() == ".address_size" {
        address_size_directive(p);
    }
}

fn version_directive(p: &mut Parser<'_>) {
    line_directive(p, VERSION_DIRECTIVE, |p| {
        if !p.at(FLOAT_NUMBER) && !p.at(INT_NUMBER) {
            p.error_expected("a version number like `8.4`");
            return;
        }
        if p.at_line_start() {
            // ptxas: "Missing .version directive" when the number is on the next line.
            let range = p.current_range_strict();
            p.error_at(
                range,
                "the version number must be on the same line as `.version`",
            );
        }
        p.bump();
    });
}

fn target_directive(p: &mut Parser<'_>) {
    line_directive(p, TARGET_DIRECTIVE, |p| {
        if !p.eat(IDENT) {
            p.error_expected("a target name like `sm_90`");
            return;
        }
        while p.eat(COMMA) {
            if !p.eat(IDENT) {
                p.error_expected("a target option");
                return;
            }
        }
    });
}

fn address_size_directive(p: &mut Parser<'_>) {
    line_directive(p, ADDRESS_SIZE_DIRECTIVE, |p| {
        if !p.eat(INT_NUMBER) {
            p.error_expected("an address size (`32` or `64`)");
        }
    });
}

fn item(p: &mut Parser<'_>) {
    match p.current() {
        DOT_IDENT => {}
        IDENT | AT => {
            // An instruction (or stray word) outside a function: report and skip the line, so
            // that it cannot swallow the next item.
            p.err_bump_line(format!(
                "expected a directive or declaration, found {} (instructions belong in a \
                 function body)",
                p.describe_current()
            ));
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
        ".version" | ".target" | ".address_size" => {
            let word = p.current_text();
            let range = p.current_range_strict();
            p.error_at(
                range,
                format!("`{word}` must be at the start of the file, before other items"),
            );
            match word {
                ".version" => version_directive(p),
                ".target" => target_directive(p),
                _ => address_size_directive(p),
            }
        }
        ".file" => file_directive(p),
        ".section" => section(p),
        _ if at_function(p) => function(p),
        t if DECL_START.contains(&t) => var_decl(p, GLOBAL_VAR),
        _ => directive(p, Scope::Module),
    }
}

/// A module directive with a fixed argument shape. PTX is not line-oriented (ptxas accepts
/// `.version 8.4 .target sm_90` on one line and arguments on the next line), so neither the
/// end of the line nor a `;` ends it: the arguments do. After an error in the arguments the
/// rest of the line is skipped.
fn line_directive(p: &mut Parser<'_>, kind: SyntaxKind, body: impl FnOnce(&mut Parser<'_>)) {
    let m = p.start();
    p.bump();
    let errors_before = p.errors.len();
    body(p);
    if p.errors.len() > errors_before && !p.at_line_start() && !p.at(DOT_IDENT) {
        p.skip_to_line_end();
    }
    m.complete(p, kind);
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
        while p.eat(COMMA) {
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

/// `.b8 1, 2` / `.b32 $L__a-$L__b` / `.b64 sym+4`: data in a section. The values end where
/// no `,` follows (one per line in practice; ptxas also takes several on one line).
fn data_directive(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    loop {
        if expr(p).is_none() {
            let msg = format!("expected a value, found {}", p.describe_current());
            if p.at_line_start() || p.at(R_CURLY) || p.at(DOT_IDENT) {
                p.error_expected("a value");
            } else {
                p.err_recover_line(msg);
            }
            break;
        }
        if !p.eat(COMMA) {
            break;
        }
    }
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
        let (allowed, other, this, that) = if is_func {
            (
                FUNC_HEADER_DIRECTIVES,
                ENTRY_HEADER_DIRECTIVES,
                ".func",
                ".entry",
            )
        } else {
            (
                ENTRY_HEADER_DIRECTIVES,
                FUNC_HEADER_DIRECTIVES,
                ".entry",
                ".func",
            )
        };
        let word = p.current_text();
        if !allowed.contains(&word) {
            let msg = if other.contains(&word) {
                format!("`{word}` is only allowed on `{that}`, not on `{this}`")
            } else {
                format!("unknown function header directive `{word}`")
            };
            let range = p.current_range_strict();
            p.error_at(range, msg);
        }
        perf_directive(p);
    }
    match p.current() {
        L_CURLY => block(p),
        SEMICOLON => p.bump(),
        // Old PTX (and ptxas) accept a declaration with no `;` when the next item follows on a
        // new line.
        _ if p.at_line_start() && p.at(DOT_IDENT) => {}
        _ => p.error_expected("`{` or `;` after the function header"),
    }
    m.complete(p, FUNCTION);
}

/// `.maxntid 128, 1, 1`, `.noreturn`, `.pragma "nounroll";`: a word and optional arguments.
fn perf_directive(p: &mut Parser<'_>) {
    let m = p.start();
    let is_pragma = p.current_text() == ".pragma";
    p.bump();
    while matches!(p.current(), INT_NUMBER | STRING | IDENT | FLOAT_NUMBER) {
        p.bump();
        if !p.eat(COMMA) {
            break;
        }
    }
    // `.pragma "..." ;` carries its own `;`; for the others a `;` ends the declaration.
    if is_pragma {
        p.eat(SEMICOLON);
    }
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
    require_type(p);
    if p.at(IDENT) {
        declarator(p, false);
    } else {
        p.error_expected("a parameter name");
    }
    m.complete(p, PARAM);
}

/// Reports a declaration whose specifiers (just parsed) name no type: ptxas rejects
/// `.reg %p<2>;` and `.param x` with a parse error at the name.
fn require_type(p: &mut Parser<'_>) {
    if !p.last_specifiers_had_state_space && (p.at(IDENT) || p.at(SEMICOLON)) {
        // ptxas: "No variable storage specified".
        let range = p.current_range_strict();
        p.error_at(
            range,
            "expected a state space (such as `.reg`, `.param` or `.global`) before the name",
        );
    } else if !p.last_specifiers_had_type && p.at(IDENT) {
        let range = p.current_range_strict();
        p.error_at(
            range,
            "expected a type (such as `.u32` or `.pred`) before the name",
        );
    }
}

/// The dotted words before a declared name: state space, linkage, `.align N`, vector and
/// scalar types, `.ptr`, `.attribute(...)`.
fn decl_specifiers(p: &mut Parser<'_>) {
    let mut saw_type = false;
    p.last_specifiers_had_type = false;
    p.last_specifiers_had_state_space = false;
    while p.at(DOT_IDENT) {
        let word = p.current_text();
        if is_directive_word(word) && !LINKAGE.contains(&word) {
            let range = p.current_range_strict();
            p.error_at(range, format!("unexpected `{word}` in a declaration"));
        }
        if crate::ast::STATE_SPACES.contains(&word) {
            p.last_specifiers_had_state_space = true;
        }
        if crate::ast::TYPES.contains(&word) {
            saw_type = true;
            p.last_specifiers_had_type = true;
        } else if saw_type && matches!(word, ".v2" | ".v4" | ".v8") {
            // PTX: `.v4 .f32 x`, never `.f32 .v4 x` (ptxas: "Parsing error near '.v4'").
            let range = p.current_range_strict();
            p.error_at(
                range,
                format!("vector size `{word}` must come before the element type"),
            );
        }
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
    require_type(p);
    // ptxas accepts a declaration that declares nothing (`.reg .u64 ;`).
    if p.eat(SEMICOLON) {
        m.complete(p, kind);
        return;
    }
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
        declarator(p, true);
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
fn declarator(p: &mut Parser<'_>, allow_initializer: bool) {
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
        // ptxas takes only an integer literal here (`[4]`, `[0x4]`, `[4U]`), not `[2*2]`.
        if !p.at(R_BRACK) {
            if p.at(INT_NUMBER) {
                let l = p.start();
                p.bump();
                l.complete(p, LITERAL);
            } else {
                p.error_expected("an integer array size");
            }
        }
        p.expect(R_BRACK, "`]`");
        d.complete(p, ARRAY_DIM);
    }
    if p.at(EQ) && allow_initializer {
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
            if p.at(IDENT) && p.nth(1) == EQ {
                // Opaque-type field: `{ addr_mode_0 = clamp_to_edge, filter_mode = nearest }`.
                let f = p.start();
                p.bump();
                p.bump();
                init_value(p);
                f.complete(p, FIELD_INIT);
            } else {
                init_value(p);
            }
            if !p.eat(COMMA) {
                break;
            }
            if p.at(R_CURLY) {
                // ptxas rejects a trailing comma.
                p.error_expected("a value after `,`");
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
            } else if t == ".target" {
                // ptxas accepts a `.target` inside a function body (and ignores it).
                target_directive(p);
            } else if t == ".file" {
                // ptxas: "Parsing error near '.file'"; parsed for recovery.
                let range = p.current_range_strict();
                p.error_at(range, "`.file` is only allowed at module scope");
                file_directive(p);
            } else {
                directive(p, Scope::Body);
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

/// Any other directive: `.loc 1 2 3 [, function_name sym, inlined_at 1 2 3]`,
/// `.pragma "nounroll";`, `.alias a, b;`, `.callprototype (...) _ (...);`,
/// `.branchtargets L1, L2;`, `.calltargets f, g;`. Arguments are tokens (parameter lists of
/// `.callprototype` are `RET_PARAM_LIST`/`PARAM_LIST` nodes). Unknown or misplaced
/// directives are reported and skipped up to `;` or the end of the line.
fn directive(p: &mut Parser<'_>, scope: Scope) {
    let m = p.start();
    let name = p.current_text();
    let (allowed, other, here, there) = match scope {
        Scope::Module => (
            MODULE_DIRECTIVES,
            BODY_DIRECTIVES,
            "at module scope",
            "in a function body",
        ),
        Scope::Body => (
            BODY_DIRECTIVES,
            MODULE_DIRECTIVES,
            "in a function body",
            "at module scope",
        ),
    };
    if !allowed.contains(&name) {
        let msg = if other.contains(&name) || ITEM_START.contains(&name) {
            format!("`{name}` is not allowed {here}, only {there}")
        } else {
            format!("unknown directive `{name}`")
        };
        let range = p.current_range_strict();
        p.error_at(range, msg);
        p.skip_to_line_end();
        m.complete(p, DIRECTIVE);
        return;
    }
    p.bump();
    // Each arm reports its own errors; the result only says whether the arguments were
    // complete.
    let _complete = match name {
        ".loc" => loc_args(p),
        ".pragma" => comma_list(p, STRING, "a string") && expect_semicolon_after_args(p),
        ".alias" => {
            expect_or_fail(p, IDENT, "an alias name")
                && expect_or_fail(p, COMMA, "`,`")
                && expect_or_fail(p, IDENT, "the aliased function")
                && expect_semicolon_after_args(p)
        }
        ".branchtargets" => comma_list(p, IDENT, "a label") && expect_semicolon_after_args(p),
        ".calltargets" => comma_list(p, IDENT, "a function name") && expect_semicolon_after_args(p),
        ".callprototype" => {
            if p.at(L_PAREN) {
                param_list(p, RET_PARAM_LIST);
            }
            let ok = expect_or_fail(p, IDENT, "`_`");
            if ok && p.at(L_PAREN) {
                param_list(p, PARAM_LIST);
            }
            while ok && p.at(DOT_IDENT) && FUNC_HEADER_DIRECTIVES.contains(&p.current_text()) {
                perf_directive(p);
            }
            ok && expect_semicolon_after_args(p)
        }
        _ => true,
    };
    m.complete(p, DIRECTIVE);
}

/// `.loc file line column [, function_name sym] [, inlined_at file line column]`. No `;`
/// (ptxas rejects one), and not line-bound.
fn loc_args(p: &mut Parser<'_>) -> bool {
    for what in ["a file index", "a line number", "a column number"] {
        if !expect_or_fail(p, INT_NUMBER, what) {
            return false;
        }
    }
    while p.at(COMMA) {
        p.bump();
        match (p.current(), p.current_text()) {
            (IDENT, "function_name") => {
                p.bump();
                if !expect_or_fail(p, IDENT, "a label") {
                    return false;
                }
            }
            (IDENT, "inlined_at") => {
                p.bump();
                for what in ["a file index", "a line number", "a column number"] {
                    if !expect_or_fail(p, INT_NUMBER, what) {
                        return false;
                    }
                }
            }
            _ => return fail(p, "`function_name` or `inlined_at`"),
        }
    }
    true
}

/// `x (, x)*` of one token kind.
fn comma_list(p: &mut Parser<'_>, kind: SyntaxKind, what: &str) -> bool {
    loop {
        if !expect_or_fail(p, kind, what) {
            return false;
        }
        if !p.eat(COMMA) {
            return true;
        }
    }
}

/// Consumes a `kind` token, or reports `what` as expected and skips the rest of the line
/// (unless the offending token starts a line, where it likely starts the next statement).
fn expect_or_fail(p: &mut Parser<'_>, kind: SyntaxKind, what: &str) -> bool {
    p.eat(kind) || fail(p, what)
}

/// Reports `what` as expected at the current token and skips the rest of the line (unless
/// the token starts a line). Returns false.
fn fail(p: &mut Parser<'_>, what: &str) -> bool {
    p.error_expected(what);
    if !p.at_line_start() && !p.at(R_CURLY) {
        p.skip_to_line_end();
    }
    false
}

/// The `;` after a directive's arguments.
fn expect_semicolon_after_args(p: &mut Parser<'_>) -> bool {
    if p.eat(SEMICOLON) {
        return true;
    }
    expect_semicolon(p);
    false
}

/// `@p opcode.mod.mod operand, operand;`
fn instruction(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at(AT) {
        let g = p.start();
        p.bump();
        p.eat(BANG);
        if p.at(IDENT) {
            // Only glued components here: `@%p bra` must not take a modifier-looking word.
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
        let word = p.current_text();
        if is_directive_word(word) {
            let range = p.current_range_strict();
            p.error_at(
                range,
                format!("`{word}` is a directive, not an instruction modifier"),
            );
        }
        p.bump();
    }
    p.in_operands = true;
    let complete = operands(p, is_call);
    p.in_operands = false;
    if complete {
        expect_semicolon(p);
    }
    m.complete(p, INSTRUCTION);
}

/// The operand list of an instruction. Returns false if an operand was missing (reported, and
/// the rest of the statement skipped).
fn operands(p: &mut Parser<'_>, is_call: bool) -> bool {
    if !p.at(SEMICOLON) && !p.at(R_CURLY) && !p.at_eof() {
        let mut first = true;
        loop {
            p.first_operand = first && !p.at(L_CURLY) && !p.at(L_BRACK);
            first = false;
            let found = operand(p, is_call);
            p.first_operand = false;
            if !found {
                // Already reported: skip the rest of the statement quietly.
                if !p.eat(SEMICOLON) && !p.at_line_start() {
                    p.skip_to_line_end();
                }
                return false;
            }
            if !p.eat(COMMA) {
                break;
            }
        }
    }
    true
}

/// One instruction operand. Returns false (after reporting) if none was found.
fn operand(p: &mut Parser<'_>, is_call: bool) -> bool {
    match p.current() {
        L_CURLY => bracketed_list(p, L_CURLY, R_CURLY, VECTOR_OPERAND),
        L_BRACK => bracketed_list(p, L_BRACK, R_BRACK, ADDRESS),
        L_PAREN if is_call => bracketed_list(p, L_PAREN, R_PAREN, ARG_LIST),
        _ => {
            if !operand_expr(p) {
                p.error_expected("an operand");
                return false;
            }
        }
    }
    true
}

/// A scalar instruction operand, in the shapes ptxas 13.0 parses:
///
/// * a name, optionally negated (`-%r`, `!%p`), with components (`%tid.x`), an index
///   (`arr[1]`), and an offset (`%r+1`, `sym+4`, `[%rd+-8]`), or, as the first operand
///   only, a register pair (`%p|%q` of `setp`, `%r|%p` of `shfl`);
/// * a constant expression without names (`-(1 << 4) * 2`).
///
/// ptxas rejects other mixes of names and operators (`%r-4`, `%r*2`, `4+%r`, `(%r)`), so
/// they end the operand here and the caller reports the unexpected token. Returns false if
/// there is no operand.
fn operand_expr(p: &mut Parser<'_>) -> bool {
    let prefixed_name = matches!(p.current(), MINUS | BANG | PLUS | TILDE) && p.nth(1) == IDENT;
    if !p.at(IDENT) && !prefixed_name {
        return const_expr(p);
    }
    let mut lhs = if prefixed_name {
        let m = p.start();
        let op = p.current();
        let op_range = p.current_range_strict();
        p.bump();
        // `-%r` and `!%p` parse (whether an instruction allows negation is semantic); `+%r`,
        // `~%r` and `[-%rd]` are parse errors in ptxas.
        if matches!(op, PLUS | TILDE) {
            p.error_at(
                op_range,
                "`+` and `~` apply to constants, not to registers or symbols",
            );
        } else if op == MINUS && p.in_address {
            p.error_at(
                op_range,
                "a negated register or symbol is not allowed in an address",
            );
        }
        name_ref(p);
        m.complete(p, PREFIX_EXPR)
    } else {
        name_ref(p)
    };
    if p.at(L_BRACK) {
        // `arr[1]`: an array element. (After a missing comma, `%r [%rd]` parses the same
        // way, as in ptxas, which then reports indexing a non-array.)
        let m = lhs.precede(p);
        p.bump();
        let outer = p.const_only;
        p.const_only = false;
        let found = expr(p).is_some();
        p.const_only = outer;
        if !found {
            p.error_expected("an index");
        }
        p.expect(R_BRACK, "`]`");
        lhs = m.complete(p, INDEX_EXPR);
    }
    if p.at(PLUS) {
        let m = lhs.precede(p);
        p.bump();
        if !const_expr(p) {
            p.error_expected("a constant offset");
        }
        m.complete(p, BIN_EXPR);
    } else if p.at(PIPE) && p.nth(1) == IDENT && p.first_operand {
        let m = lhs.precede(p);
        p.bump();
        name_ref(p);
        m.complete(p, BIN_EXPR);
    }
    true
}

/// A constant expression: no register or symbol names.
fn const_expr(p: &mut Parser<'_>) -> bool {
    let outer = p.const_only;
    p.const_only = true;
    let found = expr(p).is_some();
    p.const_only = outer;
    found
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
    let outer_in_address = p.in_address;
    p.in_address = kind == ADDRESS;
    // `call f, ();` has an empty argument list; `{}` and `[]` are syntax errors in ptxas.
    if !p.at(close) || kind != ARG_LIST {
        loop {
            if !operand(p, false) {
                break;
            }
            if !p.eat(COMMA) {
                break;
            }
        }
    }
    p.in_address = outer_in_address;
    p.expect(close, what);
    m.complete(p, kind);
    p.leave();
}

/// A name used as a value, with components: `%r1`, `%tid.x`, `sym`. In instruction operands
/// ptxas also takes components after whitespace (`%tid .x`, even across lines); elsewhere
/// only glued ones, so that `.b64 sym` followed by `.b8 1` on the next line stays two
/// directives. Inside an address there are none (`[g.x]` is a ptxas parse error). Which
/// selectors are valid (`.x`, `.b0`, ...) is semantic: ptxas reports "Unknown vector selector".
fn name_ref(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump();
    while p.at(DOT_IDENT)
        && !p.in_address
        && (p.nth_joined(0)
            || (p.in_operands && !(p.at_line_start() && starts_statement(p.current_text()))))
    {
        p.bump();
    }
    m.complete(p, NAME_REF)
}

/// Directive names, which ptxas lexes as keywords: never instruction modifiers (unlike
/// state-space words such as `.global`, which are both; `.weak`, a linkage directive and the
/// memory order of `ld.weak`/`st.weak`/`multimem.ld_reduce.weak`; and `.alias`, a directive and
/// the proxy of `fence.proxy.alias`: ptxas 13.0.88 accepts all of these as modifiers).
fn is_directive_word(word: &str) -> bool {
    !matches!(word, ".weak" | ".alias")
        && (matches!(
            word,
            ".entry"
                | ".func"
                | ".version"
                | ".target"
                | ".address_size"
                | ".file"
                | ".section"
                | ".visible"
                | ".extern"
                | ".common"
        ) || BODY_DIRECTIVES.contains(&word)
            || MODULE_DIRECTIVES.contains(&word)
            || ENTRY_HEADER_DIRECTIVES.contains(&word)
            || FUNC_HEADER_DIRECTIVES.contains(&word))
}

/// Dotted words that begin a statement or an item: after a missing `;`, a line starting with
/// one of these is not taken as a component of the last operand.
fn starts_statement(word: &str) -> bool {
    DECL_START.contains(&word)
        || BODY_DIRECTIVES.contains(&word)
        || ITEM_START.contains(&word)
        || matches!(word, ".file" | ".section")
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
    // Each operator wraps `lhs` in one more node, so a long chain is a deep tree: count every
    // level against the nesting limit (rowan drops trees recursively).
    let mut entered = 0u32;
    loop {
        let ternary = p.at(QUESTION) && min_bp <= 1;
        let bp = if ternary { None } else { infix_bp(p.current()) };
        if !ternary && bp.is_none_or(|bp| bp < min_bp) {
            break;
        }
        if !p.enter() {
            break;
        }
        entered += 1;
        let m = lhs.precede(p);
        p.bump();
        if ternary {
            if expr_bp(p, 2).is_none() {
                p.error_expected("an expression");
            }
            p.expect(COLON, "`:`");
            if expr_bp(p, 1).is_none() {
                p.error_expected("an expression");
            }
            lhs = m.complete(p, TERNARY_EXPR);
        } else {
            if expr_bp(p, bp.unwrap_or(0) + 1).is_none() {
                p.error_expected("an expression");
            }
            lhs = m.complete(p, BIN_EXPR);
        }
    }
    for _ in 0..entered {
        p.leave();
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
        // In instruction operands names only appear where `operand_expr` puts them.
        IDENT if !p.const_only => Some((name_ref(p), NAME_REF)),
        // Dotted names are values only in data and initializers (`.b32 .debug_abbrev`); a bare
        // `.y` operand is a syntax error for ptxas.
        DOT_IDENT if !p.in_operands => Some((name_ref(p), NAME_REF)),
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
