//! Name resolution as a query: each function's names (`hir::names`) resolved once per change
//! of that function's tokens, on its trivia-free syntax, and addressed by stable ids.
//!
//! [`function_names`] is keyed by the tracked [`Function`], so an edit elsewhere in the file (or
//! a whitespace or comment edit inside the function) reuses it. Its ranges are relative to the
//! trivia-free tree; [`resolved_functions`] maps them to the file of the current parse (one
//! walk per function, `FunctionSyntax::map_ranges`). A declaration's [`DefId`] (its function
//! and its index among the function's declarations) stays the same across edits that leave
//! the function's declarations as they were.

use hir::names::{FunctionNames, resolve_function};
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode};

use crate::{Db, Function, SourceFile, module_items, parse};

/// A name a function declares: the function and the declaration's index in
/// [`function_names`]`(function).defs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DefId<'db> {
    pub function: Function<'db>,
    pub index: u32,
}

/// The names of `function`, resolved on its trivia-free syntax (ranges relative to it).
#[salsa::tracked(returns(ref))]
pub fn function_names<'db>(db: &'db dyn Db, function: Function<'db>) -> FunctionNames {
    ast::Function::cast(function.syntax(db).node())
        .map(|f| resolve_function(&f))
        .unwrap_or_default()
}

/// Every function of the current parse, with its tracked [`Function`] (none for a function
/// without a name, which `module_items` does not track) and its names with ranges in the file.
pub fn resolved_functions<'db>(
    db: &'db dyn Db,
    file: SourceFile,
) -> Vec<(SyntaxNode, Option<Function<'db>>, FunctionNames)> {
    let mut tracked = module_items(db, file).functions.iter().copied();
    parse(db, file)
        .syntax_node()
        .children()
        .filter_map(ast::Function::cast)
        .map(|f| {
            // `module_items` tracks the named functions, in source order.
            let function = f.name().and_then(|_| tracked.next());
            let names = match function {
                Some(function) => in_file(db, function, f.syntax()),
                None => resolve_function(&f),
            };
            (f.syntax().clone(), function, names)
        })
        .collect()
}

/// [`function_names`] with every range mapped onto `node`, the function in the current parse.
fn in_file(db: &dyn Db, function: Function<'_>, node: &SyntaxNode) -> FunctionNames {
    let names = function_names(db, function);
    let mut ranges = Vec::with_capacity(names.defs.len() * 2 + names.uses.len());
    for d in &names.defs {
        ranges.push(d.name_range);
        ranges.push(d.decl_range);
    }
    ranges.extend(names.uses.iter().map(|u| u.range));
    let mapped = function.syntax(db).map_ranges(&ranges, node);
    let mut out = names.clone();
    let mut it = mapped.into_iter();
    for d in &mut out.defs {
        d.name_range = it.next().expect("one per range");
        d.decl_range = it.next().expect("one per range");
    }
    for u in &mut out.uses {
        u.range = it.next().expect("one per range");
    }
    out
}
