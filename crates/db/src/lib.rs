//! kiln's salsa database: every compiler stage as a memoized, incremental query.
//!
//! # The query graph
//!
//! ```text
//! SourceFile (input: path, text)
//!   └ parse(file)                      the lossless syntax tree and syntax errors
//!       └ module_items(file)           kernels, functions, globals, directives, with spans;
//!           │                          creates one tracked `Function` per .entry/.func
//!           └ Function.syntax          [tracked field] the function's trivia-free tree:
//!               │                      the per-kernel value every later stage reads
//!               └ function_outline(f)  [per kernel] parameters, registers, labels, instructions
//!   └ device_functions(file)           `.func` name → `Function` (codegen inlines callees)
//!   └ diagnostics(file)                every diagnostic of the file, with absolute spans
//! KernelTarget (interned: function × target): the key of every code-generation query
//! ```
//!
//! # Why a tracked struct per function
//!
//! `module_items` re-executes after every edit of the file (it reads the parse), but it
//! re-creates each `Function` with the same identity (its name) and a trivia-free `syntax`
//! value. salsa compares that field with the previous revision's: a function whose tokens did
//! not change keeps its old value, so no per-function query of it re-executes. Because the
//! value holds no trivia and no absolute offsets, a whitespace or comment edit — anywhere,
//! including inside the function — changes no per-function value at all. Per-function results
//! therefore carry spans relative to the function's trivia-free tree ([`FunctionSyntax`]);
//! [`FunctionSyntax::map_range`] maps them back to the file through the current parse, which
//! is a cheap module-level step.

#![forbid(unsafe_code)]

mod codegen;
mod function;
pub mod highlight;
mod items;
mod lines;
mod names;
pub mod navigate;
mod pressure;
mod semantics;
mod target;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use codegen::{
    BlockThreads, CodegenError, CubinOutput, DEFAULT_BLOCK_THREADS, DeviceFunctions, FileTarget,
    KernelStats, allocated, codegen_diagnostics, codegen_sm_names, codegen_sms, codegen_supported,
    cubin, device_functions, encoded, kernel_model, kernel_stats, kernel_targets, lowered,
    module_data, module_vars, optimized, sass_origins, sass_text, sass_text_with, scheduled,
};
pub use function::{Function, FunctionOutline, FunctionSyntax, function_outline};
pub use items::{ItemKind, ItemSummary, ModuleItems, module_items};
pub use lines::{
    FileStamp, KernelLines, LineRow, SourceFileEntry, SourceLoc, kernel_lines, source_files,
};
pub use names::{DefId, function_names, resolved_functions};
pub use perfmodel;
pub use pressure::{LinePressure, register_pressure};
use salsa::Database as _;
pub use semantics::{ModuleSemantics, function_diagnostics, module_scope, module_semantics};
pub use syntax::{SyntaxError, TextRange, TextSize};
pub use target::{KernelTarget, Sm, SmVariant, Target, check_arch};
/// The smallest register budget code generation honours (ptxas's lower bound).
pub const MIN_REGISTERS: u32 = regalloc::MIN_REGISTERS;

/// The database trait every query is written against.
#[salsa::db]
pub trait Db: salsa::Database {}

#[salsa::db]
impl Db for RootDatabase {}

/// One PTX source file: the only input of the compiler.
#[salsa::input(debug)]
pub struct SourceFile {
    /// Where the file came from (for diagnostics; never read from disk by queries).
    #[returns(ref)]
    pub path: PathBuf,
    /// The file's text. Invalid UTF-8 has been replaced (see `encoding_errors`).
    #[returns(ref)]
    pub text: Arc<str>,
    /// Byte ranges where the file held invalid UTF-8, reported as errors by `diagnostics`.
    #[returns(ref)]
    pub encoding_errors: Arc<[SyntaxError]>,
    /// Modification time and size of the source files its `.file` directives name, as the
    /// driver found them on disk (`RootDatabase::stamp_source_files`; queries never read the
    /// disk): `.debug_line` records them where the directive gives none, as ptxas does.
    #[returns(ref)]
    pub file_stamps: Arc<[FileStamp]>,
}

/// The parse of a file: the lossless green tree plus syntax errors.
#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn Db, file: SourceFile) -> ParsedFile {
    ParsedFile(syntax::parse(file.text(db)))
}

/// A `syntax::Parse` stored in the database (compared structurally, for backdating).
#[derive(Clone, Debug)]
pub struct ParsedFile(pub syntax::Parse);

impl PartialEq for ParsedFile {
    fn eq(&self, other: &Self) -> bool {
        self.0.green() == other.0.green() && self.0.errors() == other.0.errors()
    }
}
impl Eq for ParsedFile {}

impl ParsedFile {
    pub fn syntax_node(&self) -> syntax::SyntaxNode {
        self.0.syntax_node()
    }
    pub fn tree(&self) -> syntax::ast::SourceFile {
        self.0.tree()
    }
    pub fn errors(&self) -> &[SyntaxError] {
        self.0.errors()
    }
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

/// A diagnostic with an absolute span in its file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub range: TextRange,
}

/// Every diagnostic of a file, sorted by position: encoding errors, syntax errors, module-level
/// semantic errors, and each function's semantic diagnostics mapped back to the file.
///
/// Semantic checks run only on a file without syntax errors: on a broken tree they would
/// mostly report consequences of the syntax error (ptxas, too, stops at syntax errors).
#[salsa::tracked(returns(ref))]
pub fn diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let parsed = parse(db, file);
    let mut out: Vec<Diagnostic> = file
        .encoding_errors(db)
        .iter()
        .chain(parsed.errors())
        .map(|e| Diagnostic {
            severity: Severity::Error,
            message: e.message.clone(),
            range: e.range,
        })
        .collect();
    if out.is_empty() {
        out.extend(module_semantics(db, file).diagnostics.iter().cloned());
        let functions = &module_items(db, file).functions;
        let nodes = parsed
            .syntax_node()
            .children()
            .filter(|n| n.kind() == syntax::SyntaxKind::FUNCTION);
        // module_items creates one Function per named FUNCTION node, in source order.
        let named = nodes.filter(|n| {
            <syntax::ast::Function as syntax::ast::AstNode>::cast(n.clone())
                .and_then(|f| f.name())
                .is_some()
        });
        for (function, node) in functions.iter().zip(named) {
            let syntax = function.syntax(db);
            for d in function_diagnostics(db, *function) {
                out.push(Diagnostic {
                    range: syntax.map_range(d.range, &node),
                    ..d.clone()
                });
            }
        }
    }
    out.sort_by_key(|d| (d.range.start(), d.range.end()));
    out
}

/// The concrete database. Cheap to clone: clones share storage, so a clone is a snapshot
/// handle for another thread (the language server's requests run on such clones while the
/// main loop applies edits; salsa cancels their work when an input changes).
#[salsa::db]
#[derive(Clone, Default)]
pub struct RootDatabase {
    storage: salsa::Storage<Self>,
    executed: Option<ExecutionLog>,
}

#[salsa::db]
impl salsa::Database for RootDatabase {}

/// The queries salsa executed (not merely validated), in order: what incrementality tests
/// assert on. Each entry is `query_name(key)`, e.g. `function_outline(Id(c01))`.
#[derive(Clone, Default)]
pub struct ExecutionLog(Arc<Mutex<Vec<salsa::DatabaseKeyIndex>>>);

impl RootDatabase {
    /// A database that records every `WillExecute` event (for tests and `--timings`).
    pub fn with_execution_log() -> RootDatabase {
        let log = ExecutionLog::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                sink.0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(database_key);
            }
        })));
        RootDatabase {
            storage,
            executed: Some(log),
        }
    }

    /// Takes the log of executed queries as `(query name, key)` pairs, clearing it.
    pub fn take_executed(&self) -> Vec<(String, salsa::Id)> {
        let Some(log) = &self.executed else {
            return Vec::new();
        };
        let keys = std::mem::take(&mut *log.0.lock().unwrap_or_else(|p| p.into_inner()));
        keys.into_iter()
            .map(|k| {
                (
                    self.ingredient_debug_name(k.ingredient_index())
                        .into_owned(),
                    k.key_index(),
                )
            })
            .collect()
    }

    /// Adds a file from its raw bytes (invalid UTF-8 is replaced and reported).
    pub fn add_file(&mut self, path: impl AsRef<Path>, bytes: &[u8]) -> SourceFile {
        let (text, errors) = syntax::decode_utf8(bytes);
        SourceFile::new(
            self,
            path.as_ref().to_path_buf(),
            Arc::from(text),
            Arc::from(errors),
            Arc::from(Vec::new()),
        )
    }

    /// Records the modification time and size of each file `file`'s `.file` directives name
    /// (paths relative to the current directory, as ptxas reads them); files that cannot be
    /// read are left out. For drivers writing cubins; `.debug_line` takes them from here.
    pub fn stamp_source_files(&mut self, file: SourceFile) {
        use salsa::Setter;
        let stamps: Vec<FileStamp> = source_files(self, file)
            .iter()
            .filter_map(|f| {
                let meta = std::fs::metadata(&f.path).ok()?;
                let mtime = meta
                    .modified()
                    .ok()?
                    .duration_since(std::time::UNIX_EPOCH)
                    .ok()?
                    .as_secs();
                Some(FileStamp {
                    path: f.path.clone(),
                    mtime,
                    size: meta.len(),
                })
            })
            .collect();
        if stamps[..] != file.file_stamps(self)[..] {
            file.set_file_stamps(self).to(Arc::from(stamps));
        }
    }

    /// Replaces a file's text (an editor change).
    pub fn set_text(&mut self, file: SourceFile, text: &str) {
        use salsa::Setter;
        file.set_text(self).to(Arc::from(text));
        file.set_encoding_errors(self).to(Arc::from(Vec::new()));
    }
}

/// The file's module for the reference interpreter (`kiln run`), from the database's parse:
/// the file is parsed once. `fmad` as ptxas's `--fmad`. Only for files without syntax errors
/// (callers check `diagnostics` first).
pub fn interp_program(
    db: &dyn Db,
    file: SourceFile,
    fmad: bool,
) -> Result<interp::Program, interp::LowerError> {
    interp::Program::from_tree(file.text(db), &parse(db, file).tree(), fmad)
}

/// The SM a file's `.target` directive names, with the range of its name.
pub fn declared_target(db: &dyn Db, file: SourceFile) -> Option<(Sm, TextRange)> {
    let root = parse(db, file).syntax_node();
    let directive = root
        .children()
        .find(|n| n.kind() == syntax::SyntaxKind::TARGET_DIRECTIVE)?;
    directive
        .descendants_with_tokens()
        .filter_map(rowan::NodeOrToken::into_token)
        .find_map(|t| Sm::parse(t.text()).map(|sm| (sm, t.text_range())))
}

/// Line and column (both 1-based, column in characters) of a byte offset in `text`, as
/// diagnostics print them.
pub fn line_col(text: &str, offset: TextSize) -> (usize, usize) {
    let offset = usize::from(offset).min(text.len());
    let mut cut = offset;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let before = &text[..cut];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// Diagnostics for compiling `file` for `arch`: a `.target` the SM cannot run is an error on
/// the `.target` directive, with ptxas's reason. (A file without `.target` is reported by the
/// semantic checks, not here.)
pub fn target_diagnostics(db: &dyn Db, file: SourceFile, arch: Sm) -> Vec<Diagnostic> {
    match declared_target(db, file) {
        Some((sm, range)) => match check_arch(sm, arch) {
            Ok(()) => Vec::new(),
            Err(message) => vec![Diagnostic {
                severity: Severity::Error,
                message,
                range,
            }],
        },
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_chars() {
        let text = "ab\nc\u{e9}d\n";
        assert_eq!(line_col(text, 0.into()), (1, 1));
        assert_eq!(line_col(text, 3.into()), (2, 1));
        // 'd' is after the two-byte é: byte 6, column 3.
        assert_eq!(line_col(text, 6.into()), (2, 3));
        assert_eq!(line_col(text, 100.into()), (3, 1));
    }
}
