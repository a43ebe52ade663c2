//! Semantic checks of PTX: what `ptxas` rejects (or warns about) after parsing.
//!
//! The API is pure and salsa-free: AST in, diagnostics out.
//!
//! * [`ModuleScope::new`] reads the module-level facts (`.version`, `.target`,
//!   `.address_size`, global variables, function signatures) and reports module-level problems.
//! * [`check_function`] checks one `.entry`/`.func` against a [`ModuleScope`]: name resolution
//!   (registers including parameterized `%r<N>` ones, labels, parameters, globals, functions,
//!   nested block scopes), duplicate definitions, operand typing with PTX's relaxed rules,
//!   vector shapes, `.target`/`.version` gating of instructions from the [`ptx`] ISA table,
//!   calls against the callee's signature.
//! * [`check_module`] runs both over a whole file.
//!
//! Messages follow ptxas's wording (so that a user who knows ptxas recognizes them) and add
//! what ptxas leaves out (which operand, which type).

#![forbid(unsafe_code)]

pub mod contract;
pub mod fold;
mod func;
mod module;
pub mod names;
mod rules;
mod types;
mod video;

pub use func::check_function;
pub use module::{FuncSig, GlobalVar, ModuleScope};
pub use syntax::TextRange;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    Error,
    Warning,
}

/// One finding, with the source range it is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub range: TextRange,
}

impl Diagnostic {
    pub fn error(range: TextRange, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            range,
        }
    }
    pub fn warning(range: TextRange, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            message: message.into(),
            range,
        }
    }
}

/// Checks a whole parsed file: module-level checks, then every function with a body.
pub fn check_module(file: &syntax::ast::SourceFile) -> Vec<Diagnostic> {
    let (scope, mut diags) = ModuleScope::new(file);
    for f in file.functions() {
        diags.extend(check_function(&scope, &f));
    }
    diags.sort_by_key(|d| (d.range.start(), d.severity == Severity::Warning));
    diags
}

#[cfg(test)]
mod tests;
