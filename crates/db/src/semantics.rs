//! Semantic checks (`crates/hir`) as queries: one module-level query and one per function.

use std::sync::Arc;

use syntax::ast::AstNode;

use crate::function::Function;
use crate::{Db, Diagnostic, Severity, SourceFile, parse};

/// Module-level facts every function's checks read, with the module-level diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleSemantics {
    pub scope: Arc<hir::ModuleScope>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads `.version`, `.target`, `.address_size`, globals and function signatures, and checks
/// them. Re-executes after every edit of the file.
#[salsa::tracked(returns(ref))]
pub fn module_semantics(db: &dyn Db, file: SourceFile) -> ModuleSemantics {
    let (scope, diags) = hir::ModuleScope::new(&parse(db, file).tree());
    ModuleSemantics {
        scope: Arc::new(scope),
        diagnostics: diags.into_iter().map(convert).collect(),
    }
}

/// The module scope alone: holds no ranges, so it keeps its value (and salsa skips the
/// per-function checks that read it) unless a declaration changes.
#[salsa::tracked(returns(ref))]
pub fn module_scope(db: &dyn Db, file: SourceFile) -> Arc<hir::ModuleScope> {
    module_semantics(db, file).scope.clone()
}

/// The semantic diagnostics of one function, with ranges relative to its trivia-free syntax
/// (map them with [`crate::FunctionSyntax::map_range`]). Per function.
#[salsa::tracked(returns(ref))]
pub fn function_diagnostics<'db>(db: &'db dyn Db, function: Function<'db>) -> Vec<Diagnostic> {
    let scope = module_scope(db, function.file(db));
    let Some(node) = syntax::ast::Function::cast(function.syntax(db).node()) else {
        return Vec::new();
    };
    hir::check_function(scope, &node)
        .into_iter()
        .map(convert)
        .collect()
}

fn convert(d: hir::Diagnostic) -> Diagnostic {
    let severity = match d.severity {
        hir::Severity::Error => Severity::Error,
        hir::Severity::Warning => Severity::Warning,
    };
    Diagnostic {
        severity,
        message: d.message,
        range: d.range,
    }
}
