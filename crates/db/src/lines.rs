//! Line information for a kernel's code: for each SASS instruction, the line of the PTX it
//! came from and the source position of the `.loc` directive in force there. The cubin's line
//! tables (`.nv_debug_line_sass`, `.debug_line`) and the editor's SASS view read the same
//! mapping ([`sass_origins`]).

use syntax::ast::{self, AstNode};

use cubin::lines::Row as LineTableRow;

use crate::codegen::{CodegenError, kernel_node, sass_origins};
use crate::{Db, KernelTarget, SourceFile, parse};

/// Where one SASS instruction came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LineRow {
    /// 1-based line of the PTX file holding the instruction (for an inlined callee's code,
    /// the `call`).
    pub ptx_line: u32,
    /// The last `.loc` before that PTX instruction in the kernel, if any.
    pub loc: Option<SourceLoc>,
    /// The code before the kernel's first instruction with an origin (the stack pointer's
    /// and the memory descriptor's loads): at the body's `{` line, with no `.loc`.
    pub prologue: bool,
}

/// A `.loc file line column` position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SourceLoc {
    pub file: u32,
    pub line: u32,
    pub column: u32,
}

/// A `.file index "path"[, mtime, size]` directive.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceFileEntry {
    pub index: u32,
    /// The path as written, without quotes (escapes as written).
    pub path: String,
    pub mtime: Option<u64>,
    pub size: Option<u64>,
}

/// A source file's modification time (seconds since the Unix epoch) and size in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FileStamp {
    pub path: String,
    pub mtime: u64,
    pub size: u64,
}

/// A kernel's line information ([`kernel_lines`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelLines {
    /// For each instruction of the kernel's code (in [`crate::encoded`]'s order: the listing
    /// without the header), its [`LineRow`]: the code before the first instruction with an
    /// origin is the body's `{` line; `None` for scheduling `NOP`s, the closing branch and
    /// padding.
    pub rows: Vec<Option<LineRow>>,
    /// The kernel's first `.loc` (where its `.debug_line` sequence starts).
    pub first_loc: Option<SourceLoc>,
}

/// Where each instruction of a kernel's code came from ([`KernelLines`]).
#[salsa::tracked(returns(ref))]
pub fn kernel_lines(db: &dyn Db, kt: KernelTarget<'_>) -> Result<KernelLines, CodegenError> {
    let origins = sass_origins(db, kt)?;
    let node = kernel_node(db, kt)
        .ok_or_else(|| CodegenError::plain("the kernel is no longer in the file"))?;
    let text = kt.function(db).file(db).text(db);
    // `.loc` directives of the kernel in text order, with their offsets.
    let locs: Vec<(u32, SourceLoc)> = node
        .descendants()
        .filter_map(ast::Directive::cast)
        .filter_map(|d| {
            let l = d.loc()?;
            Some((
                u32::from(d.syntax().text_range().start()),
                SourceLoc {
                    file: l.file,
                    line: l.line,
                    column: l.column,
                },
            ))
        })
        .collect();
    let line_starts: Vec<u32> = std::iter::once(0)
        .chain(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        )
        .collect();
    let line_of = |at: u32| line_starts.partition_point(|&s| s <= at) as u32;
    let mut rows: Vec<Option<LineRow>> = origins
        .iter()
        .skip(1) // the header line
        .map(|o| {
            let start = u32::from(o.as_ref()?.start());
            let k = locs.partition_point(|(at, _)| *at < start);
            let loc = k.checked_sub(1).map(|k| locs[k].1);
            Some(LineRow {
                ptx_line: line_of(start),
                loc,
                prologue: false,
            })
        })
        .collect();
    // The code before the first instruction with an origin (the stack pointer's and the
    // memory descriptor's loads) is the body's opening `{` line, with no `.loc`, as ptxas
    // 13.0.88 attributes it.
    let body = node
        .children()
        .find(|c| c.kind() == syntax::SyntaxKind::BLOCK)
        .map(|b| u32::from(b.text_range().start()));
    if let Some(body) = body {
        let prologue = LineRow {
            ptx_line: line_of(body),
            loc: None,
            prologue: true,
        };
        for r in rows.iter_mut().take_while(|r| r.is_none()) {
            *r = Some(prologue);
        }
    }
    Ok(KernelLines {
        rows,
        first_loc: locs.first().map(|l| l.1),
    })
}

/// The module's `.file` directives, in text order.
#[salsa::tracked(returns(ref))]
pub fn source_files(db: &dyn Db, file: SourceFile) -> Vec<SourceFileEntry> {
    parse(db, file)
        .tree()
        .items()
        .filter_map(|i| match i {
            ast::Item::FileDirective(f) => Some(f),
            _ => None,
        })
        .filter_map(|f| {
            let path = f.path()?;
            let path = path.text();
            let path = path
                .strip_prefix('"')
                .and_then(|p| p.strip_suffix('"'))
                .unwrap_or(path);
            let numbers: Vec<u64> = f
                .syntax()
                .children_with_tokens()
                .filter_map(rowan::NodeOrToken::into_token)
                .filter(|t| t.kind() == syntax::SyntaxKind::INT_NUMBER)
                .filter_map(|t| parse_number(t.text()))
                .collect();
            Some(SourceFileEntry {
                index: u32::try_from(*numbers.first()?).ok()?,
                path: path.to_string(),
                mtime: numbers.get(1).copied(),
                size: numbers.get(2).copied(),
            })
        })
        .collect()
}

fn parse_number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.trim_end_matches(['U', 'u']).parse().ok(),
    }
}

/// Whether the module carries line information: ptxas 13.0.88 writes line tables when the PTX
/// has a `.loc` directive and `.version` is 4.0 or later, with or without `-lineinfo`, and so
/// does kiln.
#[salsa::tracked]
pub(crate) fn has_line_info(db: &dyn Db, file: SourceFile) -> bool {
    let tree = parse(db, file).tree();
    let recent = tree
        .version()
        .and_then(|v| v.major_minor())
        .is_some_and(|(major, _)| major >= 4);
    recent
        && tree
            .syntax()
            .descendants()
            .filter_map(ast::Directive::cast)
            .any(|d| d.loc().is_some())
}

/// A kernel's line-table rows, `.debug_line`'s (CUDA source lines, files by their `.file`
/// index) and `.nv_debug_line_sass`'s (PTX lines, file 0), as ptxas 13.0.88 writes them: the
/// sequence starts at offset 0 (the PTX table with the prologue's `{` line, the source table
/// with the kernel's first `.loc`), then a row wherever the line number changes (a file change
/// alone makes none). Where the first instruction with a line repeats the start line, ptxas
/// writes a bare advance before sm_90 (`target::CubinLayout::line_start_advance`) and nothing
/// from sm_90 on.
pub(crate) fn kernel_line_rows(
    db: &dyn Db,
    kt: KernelTarget<'_>,
) -> Result<(Vec<LineTableRow>, Vec<LineTableRow>), CodegenError> {
    let lines = kernel_lines(db, kt).as_ref().map_err(Clone::clone)?;
    let start_advance = ::target::Profile::of(u32::from(kt.target(db).sm.number))
        .is_some_and(|p| p.cubin.line_start_advance);
    let mut ptx: Vec<LineTableRow> = Vec::new();
    let mut source: Vec<LineTableRow> = Vec::new();
    // The line of the last row written, and whether the first instruction with a line (after
    // the prologue) is still to come, per table.
    let (mut ptx_line, mut ptx_first) = (None, true);
    let (mut source_line, mut source_first) = (None, true);
    if let Some(l) = lines.first_loc.filter(|l| l.line != 0) {
        source.push(LineTableRow::new(0, l.file, l.line));
        source_line = Some(l.line);
    }
    let advance = |offset, file, line| LineTableRow {
        advance_only: true,
        ..LineTableRow::new(offset, file, line)
    };
    for (k, row) in lines.rows.iter().enumerate() {
        let Some(row) = row else { continue };
        let offset = 16 * k as u64;
        if ptx_line.is_none() {
            ptx.push(LineTableRow::new(0, 0, row.ptx_line));
            ptx_line = Some(row.ptx_line);
        } else if !row.prologue {
            if ptx_line != Some(row.ptx_line) {
                ptx.push(LineTableRow::new(offset, 0, row.ptx_line));
                ptx_line = Some(row.ptx_line);
            } else if ptx_first && start_advance && offset > 0 {
                ptx.push(advance(offset, 0, row.ptx_line));
            }
            ptx_first = false;
        }
        let Some(loc) = row.loc.filter(|l| l.line != 0) else {
            continue;
        };
        if source_line != Some(loc.line) {
            source.push(LineTableRow::new(offset, loc.file, loc.line));
            source_line = Some(loc.line);
        } else if source_first && start_advance && offset > 0 {
            source.push(advance(offset, loc.file, loc.line));
        }
        source_first = false;
    }
    Ok((source, ptx))
}

/// The module-level line tables: `.debug_line`'s directories and files from the `.file`
/// directives in index order (a path splits at its last `/` or `\` into directory and name
/// when that is not its first character; the modification time and size are the directive's
/// when it gives a non-zero time, else the file's on disk as the driver stamped it
/// ([`SourceFile::file_stamps`]), else 0) and `.nv_debug_ptx_txt`.
pub(crate) fn module_line_tables(db: &dyn Db, file: SourceFile) -> cubin::builder::LineTables {
    let mut t = cubin::builder::LineTables::default();
    let stamps = file.file_stamps(db);
    let mut files: Vec<&SourceFileEntry> = source_files(db, file).iter().collect();
    files.sort_by_key(|f| f.index);
    for f in files {
        let stamp = stamps.iter().find(|s| s.path == f.path);
        let (dir, name) = match f.path.rfind(['/', '\\']) {
            Some(i) if i > 0 => (Some(&f.path[..i]), &f.path[i + 1..]),
            _ => (None, f.path.as_str()),
        };
        let dir = match dir {
            Some(d) => match t.include_dirs.iter().position(|x| x == d.as_bytes()) {
                Some(i) => i as u64 + 1,
                None => {
                    t.include_dirs.push(d.as_bytes().to_vec());
                    t.include_dirs.len() as u64
                }
            },
            None => 0,
        };
        let (mtime, size) = match f.mtime {
            Some(ts) if ts != 0 => (ts & 0xffff_ffff, f.size.unwrap_or(0)),
            _ => stamp.map_or((0, 0), |s| (s.mtime, s.size)),
        };
        t.files.push(cubin::lines::LineFile {
            name: name.as_bytes().to_vec(),
            dir,
            mtime,
            size,
        });
    }
    t.inline_names = parse(db, file)
        .syntax_node()
        .descendants()
        .filter_map(ast::Directive::cast)
        .any(|d| d.loc().is_some_and(|l| l.inlined_at.is_some()));
    t.ptx_text = ptx_debug_text(file.text(db));
    t
}

/// `.nv_debug_ptx_txt` as ptxas 13.0.88 writes it: the file's lines, each NUL-terminated, so
/// that string `n` is line `n` of the file. A line ends at its first `\r`; leading spaces and
/// tabs are removed and everything else kept (trailing comments included); a line that then
/// starts with `//`, or with the word `.loc`, `.file`, `.b8`, `.b16`, `.b32` or `.b64` (the data
/// of `.section` blocks), is emptied; empty lines at the end are dropped.
pub fn ptx_debug_text(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut pending_empty = 0usize;
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.ends_with('\n') {
        lines.pop();
    }
    for raw in lines {
        let line = raw.split('\r').next().unwrap_or("");
        let content = line.trim_start_matches([' ', '\t']);
        let word = content
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .next()
            .unwrap_or("");
        let empty = content.is_empty()
            || content.starts_with("//")
            || matches!(word, ".loc" | ".file" | ".b8" | ".b16" | ".b32" | ".b64");
        if empty {
            pending_empty += 1;
            continue;
        }
        out.extend(std::iter::repeat_n(0u8, pending_empty));
        pending_empty = 0;
        out.extend_from_slice(content.as_bytes());
        out.push(0);
    }
    out
}
