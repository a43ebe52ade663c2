//! Semantic highlighting and folding for the editor: every token classified by what it is
//! (an opcode, a modifier, a register, a parameter, a label, a function, ...), names by their
//! resolution (`hir::names`), and the ranges an editor may fold.

use hir::names::{DefKind, Resolved};
use syntax::ast::{self, AstNode};
use syntax::{SyntaxKind, TextRange};

use crate::{Db, ItemKind, SourceFile, module_items, parse};

/// What a highlighted token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenClass {
    /// An instruction's opcode.
    Opcode,
    /// An instruction's modifier (`.u32`, `.rn`, `.global`).
    Modifier,
    /// A directive or declaration keyword (`.reg`, `.entry`, `.version`).
    Directive,
    Register,
    /// A special register (`%tid.x`).
    SpecialRegister,
    Parameter,
    /// A variable in a state space (function or module scope).
    Variable,
    Label,
    /// A kernel or device function.
    Function,
    Number,
    String,
    Comment,
}

/// The file's tokens worth highlighting, in order, with their class.
pub fn semantic_tokens(db: &dyn Db, file: SourceFile) -> Vec<(TextRange, TokenClass)> {
    let root = parse(db, file).syntax_node();
    let items = &module_items(db, file).items;
    let item_class = |name: &str| {
        items
            .iter()
            .find(|i| i.name.as_deref() == Some(name))
            .map(|i| match i.kind {
                ItemKind::Kernel | ItemKind::DeviceFunction => TokenClass::Function,
                _ => TokenClass::Variable,
            })
    };
    // Names: declarations and uses, resolved per function.
    let mut names: Vec<(TextRange, TokenClass)> = Vec::new();
    for (node, _, resolved) in crate::resolved_functions(db, file) {
        if let Some(n) = ast::Function::cast(node).and_then(|f| f.name()) {
            names.push((n.text_range(), TokenClass::Function));
        }
        let class_of = |k: DefKind| match k {
            DefKind::Param => TokenClass::Parameter,
            DefKind::Register => TokenClass::Register,
            DefKind::Variable => TokenClass::Variable,
            DefKind::Label => TokenClass::Label,
        };
        for d in &resolved.defs {
            names.push((d.name_range, class_of(d.kind)));
        }
        for u in &resolved.uses {
            let class = match u.target {
                Resolved::Local(i) => Some(class_of(resolved.defs[i].kind)),
                Resolved::Module if u.name.starts_with('%') => Some(TokenClass::SpecialRegister),
                Resolved::Module => item_class(&u.name),
            };
            if let Some(c) = class {
                names.push((u.range, c));
            }
        }
    }
    for i in items {
        if let (Some(r), ItemKind::Global) = (i.name_range, i.kind) {
            names.push((r, TokenClass::Variable));
        }
    }
    names.sort_by_key(|(r, _)| r.start());
    let mut out = Vec::new();
    let mut next_name = names.into_iter().peekable();
    for t in root
        .descendants_with_tokens()
        .filter_map(rowan::NodeOrToken::into_token)
    {
        let range = t.text_range();
        while next_name
            .peek()
            .is_some_and(|(r, _)| r.start() < range.start())
        {
            next_name.next();
        }
        if let Some((r, c)) = next_name.peek()
            && *r == range
        {
            out.push((range, *c));
            next_name.next();
            continue;
        }
        let in_instruction = t
            .parent()
            .is_some_and(|p| p.kind() == SyntaxKind::INSTRUCTION);
        let under_instruction = t
            .parent_ancestors()
            .any(|a| a.kind() == SyntaxKind::INSTRUCTION);
        let class = match t.kind() {
            SyntaxKind::COMMENT => TokenClass::Comment,
            SyntaxKind::STRING => TokenClass::String,
            SyntaxKind::INT_NUMBER | SyntaxKind::FLOAT_NUMBER => TokenClass::Number,
            SyntaxKind::DOT_IDENT if under_instruction => TokenClass::Modifier,
            SyntaxKind::DOT_IDENT => TokenClass::Directive,
            SyntaxKind::IDENT if in_instruction => TokenClass::Opcode,
            _ => continue,
        };
        out.push((range, class));
    }
    out
}

/// Ranges an editor may fold: function bodies and nested blocks, and comments spanning
/// several lines.
pub fn folding_ranges(db: &dyn Db, file: SourceFile) -> Vec<TextRange> {
    let root = parse(db, file).syntax_node();
    let mut out: Vec<TextRange> = root
        .descendants()
        .filter(|n| n.kind() == SyntaxKind::BLOCK)
        .map(|n| n.text_range())
        .collect();
    out.extend(
        root.descendants_with_tokens()
            .filter_map(rowan::NodeOrToken::into_token)
            .filter(|t| t.kind() == SyntaxKind::COMMENT && t.text().contains('\n'))
            .map(|t| t.text_range()),
    );
    out.sort_by_key(|r| r.start());
    out
}
