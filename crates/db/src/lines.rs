//! Line information for a kernel's code: for each SASS instruction, the line of the PTX it
//! came from and the source position of the `.loc` directive in force there. The cubin's line
//! tables (`.nv_debug_line_sass`, `.debug_line`) and the editor's SASS view read the same
//! mapping ([`sass_origins`]).

use syntax::ast::{self, AstNode};

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

/// For each instruction of the kernel's code (in [`crate::encoded`]'s order: the listing
/// without the header), its [`LineRow`]: the code before the first instruction with an
/// origin is the body's `{` line; `None` for scheduling `NOP`s, the closing branch and
/// padding.
#[salsa::tracked(returns(ref))]
pub fn kernel_lines(
    db: &dyn Db,
    kt: KernelTarget<'_>,
) -> Result<Vec<Option<LineRow>>, CodegenError> {
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
            })
        })
        .collect();
    // The code before the first instruction with an origin (the stack pointer's and the
    // memory descriptor's loads) is the body's opening `{` line with the kernel's first
    // `.loc`, as ptxas 13.0.88 attributes it.
    let body = node
        .children()
        .find(|c| c.kind() == syntax::SyntaxKind::BLOCK)
        .map(|b| u32::from(b.text_range().start()));
    if let Some(body) = body {
        let prologue = LineRow {
            ptx_line: line_of(body),
            loc: locs.first().map(|l| l.1),
        };
        for r in rows.iter_mut().take_while(|r| r.is_none()) {
            *r = Some(prologue);
        }
    }
    Ok(rows)
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

/// Whether the module carries line information (a `.loc` or `.file` directive): ptxas then
/// writes line tables whether or not `-lineinfo` is given, and so does kiln.
pub(crate) fn has_line_info(db: &dyn Db, file: SourceFile) -> bool {
    !source_files(db, file).is_empty()
}

/// A line-table row: `(code offset, file, line)`.
pub(crate) type Row = (u64, u32, u32);

/// A kernel's line-table rows: `.debug_line`'s `(offset, file, line)` (files numbered by their
/// position among the module's `.file` directives) and `.nv_debug_line_sass`'s
/// `(offset, 0, PTX line)`, each where the line changes.
pub(crate) fn kernel_line_rows(
    db: &dyn Db,
    kt: KernelTarget<'_>,
) -> Result<(Vec<Row>, Vec<Row>), CodegenError> {
    let files = source_files(db, kt.function(db).file(db));
    let rows = kernel_lines(db, kt).as_ref().map_err(Clone::clone)?;
    let (mut source, mut ptx) = (Vec::new(), Vec::new());
    for (k, row) in rows.iter().enumerate() {
        let Some(row) = row else { continue };
        let offset = 16 * k as u64;
        if ptx.last().is_none_or(|&(_, _, l)| l != row.ptx_line) {
            ptx.push((offset, 0, row.ptx_line));
        }
        if let Some(loc) = row.loc
            && let Some(pos) = files.iter().position(|f| f.index == loc.file)
        {
            let at = (offset, pos as u32 + 1, loc.line);
            if source
                .last()
                .is_none_or(|&(_, f, l)| (f, l) != (at.1, at.2))
            {
                source.push(at);
            }
        }
    }
    Ok((source, ptx))
}

/// The module-level line tables: `.debug_line`'s directories and files from the `.file`
/// directives (a path splits at its last `/` into directory and name; the modification time
/// and size are the directive's, else the file's on disk as the driver stamped it
/// ([`SourceFile::file_stamps`]), else 0) and `.nv_debug_ptx_txt`.
pub(crate) fn module_line_tables(db: &dyn Db, file: SourceFile) -> cubin::builder::LineTables {
    let mut t = cubin::builder::LineTables::default();
    let stamps = file.file_stamps(db);
    for f in source_files(db, file) {
        let stamp = stamps.iter().find(|s| s.path == f.path);
        let (dir, name) = match f.path.rsplit_once('/') {
            Some((d, n)) => (Some(if d.is_empty() { "/" } else { d }), n),
            None => (None, f.path.as_str()),
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
        t.files.push(cubin::lines::LineFile {
            name: name.as_bytes().to_vec(),
            dir,
            mtime: f.mtime.or(stamp.map(|s| s.mtime)).unwrap_or(0),
            size: f.size.or(stamp.map(|s| s.size)).unwrap_or(0),
        });
    }
    t.ptx_text = ptx_debug_text(file.text(db));
    t
}

/// `.nv_debug_ptx_txt`: the PTX text line by line, each line NUL-terminated, so that line `n`
/// of the file is the `n`th string: leading whitespace and comments removed, `.loc` and
/// `.file` lines emptied, and nothing after the last line with content.
pub fn ptx_debug_text(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut pending_empty = 0usize;
    let mut in_block_comment = false;
    for raw in text.split('\n') {
        let mut line = String::new();
        let mut rest = raw.trim_end_matches('\r');
        loop {
            if in_block_comment {
                match rest.find("*/") {
                    Some(i) => {
                        rest = &rest[i + 2..];
                        in_block_comment = false;
                    }
                    None => break,
                }
            }
            let (cut, block) = match (rest.find("//"), rest.find("/*")) {
                (Some(a), Some(b)) if b < a => (b, true),
                (None, Some(b)) => (b, true),
                (Some(a), _) => (a, false),
                (None, None) => {
                    line.push_str(rest);
                    break;
                }
            };
            line.push_str(&rest[..cut]);
            if block {
                rest = &rest[cut + 2..];
                in_block_comment = true;
            } else {
                break;
            }
        }
        let content = line.trim_start();
        let word = content.split_whitespace().next().unwrap_or("");
        let content = if matches!(word, ".loc" | ".file") {
            ""
        } else {
            content
        };
        if content.is_empty() {
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
