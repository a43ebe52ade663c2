//! The module's item list: kernels, functions, globals and module directives, with spans.

use syntax::ast::{self, AstNode, DeclLike};
use syntax::{SyntaxKind, TextRange};

use crate::function::{Function, FunctionSyntax};
use crate::{Db, SourceFile, parse};

/// What kind of top-level item a [`ItemSummary`] describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// `.entry`: a kernel.
    Kernel,
    /// `.func`: a device function (definition or declaration).
    DeviceFunction,
    /// A module-scope variable (`.global`, `.const`, `.shared`, `.tex`, ...).
    Global,
    Version,
    Target,
    AddressSize,
    /// `.file`, `.section`, `.alias`, `.pragma` and other module-level directives.
    Directive,
}

/// One top-level item: its kind, name (if it has one) and spans in the file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ItemSummary {
    pub kind: ItemKind,
    pub name: Option<String>,
    /// The whole item, trivia around it excluded.
    pub range: TextRange,
    /// The name's token, for go-to-definition and diagnostics.
    pub name_range: Option<TextRange>,
}

/// The items of a module, in source order, and one tracked [`Function`] per `.entry`/`.func`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct ModuleItems<'db> {
    pub items: Vec<ItemSummary>,
    pub functions: Vec<Function<'db>>,
}

impl<'db> ModuleItems<'db> {
    /// The kernels (`.entry` functions) of the module.
    pub fn kernels(&self, db: &'db dyn Db) -> impl Iterator<Item = Function<'db>> + '_ {
        self.functions
            .iter()
            .copied()
            .filter(move |f| f.is_entry(db))
    }
}

/// The module's items. Re-executes on every edit of the file (it reads the parse), but only
/// functions whose tokens changed get a new `syntax` value; see the crate docs.
#[salsa::tracked(returns(ref))]
pub fn module_items(db: &dyn Db, file: SourceFile) -> ModuleItems<'_> {
    let parsed = parse(db, file);
    let root = parsed.syntax_node();
    let mut items = Vec::new();
    let mut functions = Vec::new();
    for node in root.children() {
        let range = node.text_range();
        let summary = match node.kind() {
            SyntaxKind::FUNCTION => {
                let Some(f) = ast::Function::cast(node.clone()) else {
                    continue;
                };
                let name_token = f.name();
                let name = name_token.as_ref().map(|t| t.text().to_string());
                let is_entry = f.is_entry();
                if let Some(name) = &name {
                    functions.push(Function::new(
                        db,
                        file,
                        name.clone(),
                        is_entry,
                        FunctionSyntax::from_node(&node),
                    ));
                }
                ItemSummary {
                    kind: if is_entry {
                        ItemKind::Kernel
                    } else {
                        ItemKind::DeviceFunction
                    },
                    name,
                    range,
                    name_range: name_token.map(|t| t.text_range()),
                }
            }
            SyntaxKind::GLOBAL_VAR => {
                let decl = ast::GlobalVar::cast(node.clone());
                let name_token = decl.and_then(|d| d.name());
                ItemSummary {
                    kind: ItemKind::Global,
                    name: name_token.as_ref().map(|t| t.text().to_string()),
                    range,
                    name_range: name_token.map(|t| t.text_range()),
                }
            }
            SyntaxKind::VERSION_DIRECTIVE => ItemSummary {
                kind: ItemKind::Version,
                name: None,
                range,
                name_range: None,
            },
            SyntaxKind::TARGET_DIRECTIVE => ItemSummary {
                kind: ItemKind::Target,
                name: None,
                range,
                name_range: None,
            },
            SyntaxKind::ADDRESS_SIZE_DIRECTIVE => ItemSummary {
                kind: ItemKind::AddressSize,
                name: None,
                range,
                name_range: None,
            },
            SyntaxKind::ERROR => continue,
            _ => ItemSummary {
                kind: ItemKind::Directive,
                name: None,
                range,
                name_range: None,
            },
        };
        items.push(summary);
    }
    ModuleItems { items, functions }
}
