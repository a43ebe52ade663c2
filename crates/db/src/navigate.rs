//! Navigation for the editor: what a name at an offset is, where it is declared, where it is
//! used, how to rename it, and what to show on hover. Names inside a function resolve with
//! `hir::names` on the current parse of that one function; names a function does not declare
//! resolve to the module's items.

use hir::names::{Def, DefKind, FunctionNames, Resolved};
use syntax::{SyntaxKind, SyntaxNode, TextRange, TextSize};

use crate::{Db, ItemKind, SourceFile, module_items, parse};

/// A name an offset points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Symbol {
    /// Declared in a function (register, parameter, variable, label).
    Local {
        /// The function's range.
        function: TextRange,
        def: Def,
    },
    /// A module item: a kernel, device function or module-scope variable.
    Item {
        name: String,
        kind: ItemKind,
        name_range: TextRange,
        range: TextRange,
    },
}

/// The functions of the current parse with their names resolved (`names`: memoized per
/// function, mapped to the file).
fn functions(db: &dyn Db, file: SourceFile) -> Vec<(SyntaxNode, FunctionNames)> {
    crate::resolved_functions(db, file)
        .into_iter()
        .map(|(node, _, names)| (node, names))
        .collect()
}

fn item_named(db: &dyn Db, file: SourceFile, name: &str) -> Option<Symbol> {
    let items = &module_items(db, file).items;
    // A `.func` may be declared before it is defined: the definition (the last) wins.
    items
        .iter()
        .rev()
        .find(|i| {
            i.name.as_deref() == Some(name)
                && matches!(
                    i.kind,
                    ItemKind::Kernel | ItemKind::DeviceFunction | ItemKind::Global
                )
        })
        .map(|i| Symbol::Item {
            name: name.to_string(),
            kind: i.kind,
            name_range: i.name_range.unwrap_or(i.range),
            range: i.range,
        })
}

/// The symbol at `offset`: a declaration's name, or a use resolved to its declaration.
pub fn symbol_at(db: &dyn Db, file: SourceFile, offset: TextSize) -> Option<Symbol> {
    let items = &module_items(db, file).items;
    if let Some(i) = items
        .iter()
        .find(|i| i.name_range.is_some_and(|r| r.contains_inclusive(offset)))
    {
        return item_named(db, file, i.name.as_deref()?);
    }
    for (node, names) in functions(db, file) {
        if !node.text_range().contains_inclusive(offset) {
            continue;
        }
        if let Some(d) = names.def_at(offset) {
            return Some(Symbol::Local {
                function: node.text_range(),
                def: names.defs[d].clone(),
            });
        }
        let u = names
            .uses
            .iter()
            .find(|u| u.range.contains_inclusive(offset))?;
        return item_named(db, file, &u.name);
    }
    None
}

impl Symbol {
    /// Where the symbol is declared (its name).
    pub fn definition(&self) -> TextRange {
        match self {
            Symbol::Local { def, .. } => def.name_range,
            Symbol::Item { name_range, .. } => *name_range,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Symbol::Local { def, .. } => &def.name,
            Symbol::Item { name, .. } => name,
        }
    }
}

/// Every range naming `symbol`: its declaration first, then its uses in source order.
pub fn references(db: &dyn Db, file: SourceFile, symbol: &Symbol) -> Vec<TextRange> {
    let mut out = vec![symbol.definition()];
    for (node, names) in functions(db, file) {
        match symbol {
            Symbol::Local { function, def } => {
                if node.text_range() != *function {
                    continue;
                }
                if let Some(i) = names.defs.iter().position(|d| d == def) {
                    out.extend(names.uses_of(i).map(|u| u.range));
                }
            }
            Symbol::Item { name, .. } => {
                // A function's own name is a declaration, not a use.
                out.extend(
                    names
                        .uses
                        .iter()
                        .filter(|u| u.target == Resolved::Module && &u.name == name)
                        .map(|u| u.range),
                );
            }
        }
    }
    if let Symbol::Item { name, .. } = symbol {
        // Declarations of the same `.func` (a prototype and its definition).
        for i in &module_items(db, file).items {
            if i.name.as_deref() == Some(name.as_str())
                && let Some(r) = i.name_range
                && !out.contains(&r)
            {
                out.push(r);
            }
        }
        // Module-level uses (initializers naming a variable or function).
        let root = parse(db, file).syntax_node();
        for n in root.children().filter(|n| n.kind() != SyntaxKind::FUNCTION) {
            for t in n
                .descendants()
                .filter(|d| d.kind() == SyntaxKind::NAME_REF)
                .flat_map(|d| d.children_with_tokens().filter_map(|e| e.into_token()))
            {
                if t.kind() == SyntaxKind::IDENT && t.text() == name {
                    out.push(t.text_range());
                }
            }
        }
    }
    out[1..].sort_by_key(|r| r.start());
    out
}

/// The edits renaming `symbol` to `new_name`, or why it cannot be renamed.
pub fn rename(
    db: &dyn Db,
    file: SourceFile,
    symbol: &Symbol,
    new_name: &str,
) -> Result<Vec<TextRange>, String> {
    let valid = {
        let mut chars = new_name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%'))
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$'))
    };
    if !valid {
        return Err(format!("`{new_name}` is not a PTX identifier"));
    }
    if let Symbol::Local { def, .. } = symbol
        && let Some(n) = def.count
    {
        return Err(format!(
            "`{}` is one of the registers of the family `{}<{n}>`: rename the family's declaration",
            def.name, def.name
        ));
    }
    Ok(references(db, file, symbol))
}

/// Hover text (Markdown) at `offset`: a name's declaration, or an instruction's PTX ISA
/// forms.
pub fn hover(db: &dyn Db, file: SourceFile, offset: TextSize) -> Option<(TextRange, String)> {
    let text = file.text(db);
    if let Some(symbol) = symbol_at(db, file, offset) {
        let (decl, what) = match &symbol {
            Symbol::Local { def, .. } => (
                def.decl_range,
                match def.kind {
                    DefKind::Param => "parameter",
                    DefKind::Register => "register",
                    DefKind::Variable => "variable",
                    DefKind::Label => "label",
                },
            ),
            Symbol::Item { kind, range, .. } => (
                *range,
                match kind {
                    ItemKind::Kernel => "kernel",
                    ItemKind::DeviceFunction => "device function",
                    _ => "module variable",
                },
            ),
        };
        let decl_text = &text[decl];
        // A function's declaration: its header only.
        let shown = decl_text.split('{').next().unwrap_or(decl_text).trim();
        let count = references(db, file, &symbol).len() - 1;
        let range = symbol_range_at(db, file, offset).unwrap_or(symbol.definition());
        return Some((
            range,
            format!(
                "{what} `{}`\n\n```ptx\n{shown}\n```\n\n{count} use(s)",
                symbol.name()
            ),
        ));
    }
    instruction_hover(db, file, offset)
}

/// The range of the name token at `offset`.
fn symbol_range_at(db: &dyn Db, file: SourceFile, offset: TextSize) -> Option<TextRange> {
    let root = parse(db, file).syntax_node();
    let t = root.token_at_offset(offset).right_biased()?;
    (t.kind() == SyntaxKind::IDENT).then(|| t.text_range())
}

fn instruction_hover(
    db: &dyn Db,
    file: SourceFile,
    offset: TextSize,
) -> Option<(TextRange, String)> {
    let root = parse(db, file).syntax_node();
    let tok = root.token_at_offset(offset).right_biased()?;
    let inst = tok
        .parent_ancestors()
        .find(|n| n.kind() == SyntaxKind::INSTRUCTION)?;
    let tokens: Vec<_> = inst
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .collect();
    let opcode = tokens.iter().find(|t| t.kind() == SyntaxKind::IDENT)?;
    let mods: Vec<&str> = tokens
        .iter()
        .filter(|t| {
            t.kind() == SyntaxKind::DOT_IDENT
                && t.text_range().start() > opcode.text_range().start()
        })
        .map(|t| t.text())
        .collect();
    let isa = ptx::isa();
    let forms = isa.lookup(opcode.text(), &mods);
    let head = format!("`{}{}`", opcode.text(), mods.concat());
    let mut md = head.clone();
    if forms.is_empty() {
        md.push_str(": no PTX ISA 9.0 form matches these modifiers");
    }
    for f in forms.iter().take(3) {
        md.push_str(&format!(
            "\n\n- PTX ISA §{} — requires PTX {} and {}",
            f.section, f.min_ptx, f.min_sm
        ));
    }
    let range = TextRange::new(
        opcode.text_range().start(),
        tokens
            .iter()
            .filter(|t| t.kind() == SyntaxKind::DOT_IDENT)
            .map(|t| t.text_range().end())
            .max()
            .unwrap_or(opcode.text_range().end())
            .max(opcode.text_range().end()),
    );
    Some((range, md))
}
