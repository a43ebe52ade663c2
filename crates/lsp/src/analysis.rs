//! What the server shows, computed on a database snapshot: diagnostics, per-kernel CodeLens
//! text, SASS views, symbols. Plain functions of (database, file, configuration), so every
//! feature is the same code in-process, over stdio and in tests.

use db::{
    Diagnostic, FileTarget, ItemKind, KernelStats, RootDatabase, Severity, SourceFile, Target,
    TextRange, TextSize,
};
use serde::{Deserialize, Serialize};

/// The compilation options the user chose (`initializationOptions`, or the `kiln` section of
/// `workspace/didChangeConfiguration`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Config {
    /// Targets to compile for, side by side (`["sm_90", "sm_80"]`); empty: each file's
    /// `.target`.
    pub targets: Vec<String>,
    /// `-O0`..`-O3`.
    pub opt_level: u8,
    /// `--maxrregcount`.
    pub maxrregcount: Option<u32>,
    /// `--fmad`.
    pub fmad: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            targets: Vec::new(),
            opt_level: 3,
            maxrregcount: None,
            fmad: true,
        }
    }
}

impl Config {
    /// The targets a file is compiled for: the configured ones, or the file's `.target` when
    /// kiln generates code for it (none otherwise).
    pub fn targets(&self, db: &RootDatabase, file: SourceFile) -> Vec<Target> {
        let sms: Vec<db::Sm> = if self.targets.is_empty() {
            db::declared_target(db, file)
                .map(|(sm, _)| sm)
                .filter(|sm| db::codegen_supported(*sm))
                .into_iter()
                .collect()
        } else {
            self.targets
                .iter()
                .filter_map(|s| db::Sm::parse(s))
                .collect()
        };
        sms.into_iter()
            .map(|sm| Target {
                sm,
                opt_level: self.opt_level.min(3),
                max_registers: self.maxrregcount,
                fmad: self.fmad,
            })
            .collect()
    }

    /// The configured target names kiln cannot compile for (reported once per file).
    pub fn bad_targets(&self) -> Vec<String> {
        self.targets
            .iter()
            .filter(|s| !db::Sm::parse(s).is_some_and(db::codegen_supported))
            .cloned()
            .collect()
    }
}

/// Every diagnostic of a file: syntax and semantics, then for each target its `.target`
/// rules and code generation (`unsupported: …`, register budget), and spills as warnings.
/// With several targets, code-generation messages name theirs.
pub fn diagnostics(db: &RootDatabase, file: SourceFile, config: &Config) -> Vec<Diagnostic> {
    let mut out = db::diagnostics(db, file).clone();
    let is_error = |d: &Diagnostic| d.severity == Severity::Error;
    if out.iter().any(is_error) {
        return out;
    }
    let targets = config.targets(db, file);
    let several = targets.len() > 1;
    for t in &targets {
        let named = |m: &str| {
            if several {
                format!("{}: {m}", t.sm)
            } else {
                m.to_string()
            }
        };
        let arch = db::target_diagnostics(db, file, t.sm);
        if !arch.is_empty() {
            out.extend(arch.into_iter().map(|d| Diagnostic {
                message: named(&d.message),
                ..d
            }));
            continue;
        }
        let checked = db::codegen_diagnostics(db, FileTarget::new(db, file, t.clone()));
        for d in checked {
            let d = Diagnostic {
                message: named(&d.message),
                ..d.clone()
            };
            if !out.contains(&d) {
                out.push(d);
            }
        }
        for k in kernels(db, file, t) {
            if let Ok(s) = &k.stats
                && s.spill_stores + s.spill_loads > 0
            {
                out.push(Diagnostic {
                    severity: Severity::Warning,
                    message: format!(
                        "{}: {} bytes spill stores, {} bytes spill loads ({} registers)",
                        t.sm, s.spill_stores, s.spill_loads, s.registers
                    ),
                    range: k.name_range,
                });
            }
        }
    }
    out.sort_by_key(|d| (d.range.start(), d.range.end()));
    out
}

/// One kernel compiled for one target.
pub struct KernelView {
    pub name: String,
    /// The kernel's name token.
    pub name_range: TextRange,
    /// The whole kernel.
    pub range: TextRange,
    pub stats: Result<KernelStats, String>,
}

/// Why no code is generated for a file on `t`, as `kiln build` refuses: an error in the file
/// (syntax, semantics) or the `.target` rules.
pub fn refusal(db: &RootDatabase, file: SourceFile, t: &Target) -> Option<String> {
    if let Some(d) = db::diagnostics(db, file)
        .iter()
        .find(|d| d.severity == Severity::Error)
    {
        let text = file.text(db);
        let (line, _) = db::line_col(text, d.range.start());
        return Some(format!("the file has errors (line {line}: {})", d.message));
    }
    db::target_diagnostics(db, file, t.sm)
        .into_iter()
        .next()
        .map(|d| d.message)
}

/// The kernels of a file compiled for `t`, in source order.
pub fn kernels(db: &RootDatabase, file: SourceFile, t: &Target) -> Vec<KernelView> {
    let items = &db::module_items(db, file).items;
    let refused = refusal(db, file, t);
    db::kernel_targets(db, file, t)
        .into_iter()
        .filter_map(|kt| {
            let name = kt.function(db).name(db).clone();
            let item = items
                .iter()
                .find(|i| i.kind == ItemKind::Kernel && i.name.as_deref() == Some(name.as_str()))?;
            let stats = match &refused {
                Some(m) => Err(m.clone()),
                None => db::kernel_stats(db, kt).clone().map_err(|e| e.message),
            };
            Some(KernelView {
                name,
                name_range: item.name_range.unwrap_or(item.range),
                range: item.range,
                stats,
            })
        })
        .collect()
}

/// The CodeLens text of a kernel on a target:
/// `sm_90 · 32 regs · 0 B spills · 0 B stack · 4.0 KiB smem · 146 instrs · occupancy 100% at
/// 256 threads`, the numbers of `kiln build -v` (spills: bytes stored plus bytes loaded; the
/// occupancy at the kernel's `.reqntid`/`.maxntid`, else at 256 threads).
pub fn lens_text(sm: db::Sm, stats: &Result<KernelStats, String>) -> String {
    match stats {
        Ok(s) => {
            let mut text = format!(
                "{sm} · {} regs · {} B spills · {} B stack",
                s.registers,
                s.spill_stores + s.spill_loads,
                s.stack_frame
            );
            if s.shared_bytes > 0 {
                text.push_str(&format!(" · {} smem", bytes(s.shared_bytes)));
            }
            if s.barriers > 0 {
                text.push_str(&format!(" · {} barriers", s.barriers));
            }
            text.push_str(&format!(" · {} instrs", s.instructions));
            text.push_str(&format!(" · {}", s.occupancy_summary()));
            text
        }
        Err(m) => format!("{sm} · not compiled: {m}"),
    }
}

/// `512 B`, `4.0 KiB`.
fn bytes(n: u32) -> String {
    if n < 1024 {
        format!("{n} B")
    } else {
        format!("{:.1} KiB", f64::from(n) / 1024.0)
    }
}

/// CodeLenses of a file: one per kernel and target, above the kernel.
pub fn code_lenses(
    db: &RootDatabase,
    file: SourceFile,
    config: &Config,
) -> Vec<(TextRange, String)> {
    let mut out = Vec::new();
    for t in config.targets(db, file) {
        for k in kernels(db, file, &t) {
            out.push((k.name_range, lens_text(t.sm, &k.stats)));
        }
    }
    out.sort_by_key(|(r, _)| r.start());
    out
}

/// The answer to `kiln/viewSass`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SassView {
    pub kernel: String,
    pub target: String,
    /// The SASS as `kiln sass` prints it; empty when the kernel did not compile.
    pub text: String,
    /// The CodeLens line for the kernel (its statistics, or why it did not compile).
    pub summary: String,
    /// Why the kernel did not compile, if it did not.
    pub error: Option<String>,
    /// For each line of `text`, the 0-based line of the PTX it came from (`None`: the header,
    /// scheduling `NOP`s, the closing branch, padding).
    pub lines: Vec<Option<u32>>,
}

/// The SASS of the kernel named `kernel`, or the kernel around `at`, or the first kernel, for
/// `target` (or the first of the file's targets).
pub fn sass_view(
    db: &RootDatabase,
    file: SourceFile,
    config: &Config,
    kernel: Option<&str>,
    at: Option<TextSize>,
    target: Option<&str>,
    control_codes: bool,
) -> Result<SassView, String> {
    let targets = config.targets(db, file);
    let t = match target {
        Some(name) => {
            let sm = db::Sm::parse(name).ok_or_else(|| format!("`{name}` is not an SM name"))?;
            if !db::codegen_supported(sm) {
                return Err(format!(
                    "kiln generates code for {}, not {sm}",
                    db::codegen_sms()
                ));
            }
            let base = targets.first().cloned().unwrap_or(Target::new(sm));
            Target { sm, ..base }
        }
        None => targets.first().cloned().ok_or(
            "no target: the file's .target has no code generation and no target is configured",
        )?,
    };
    let kts = db::kernel_targets(db, file, &t);
    let items = &db::module_items(db, file).items;
    let range_of = |name: &str| {
        items
            .iter()
            .find(|i| i.kind == ItemKind::Kernel && i.name.as_deref() == Some(name))
            .map(|i| i.range)
    };
    let kt = kts
        .iter()
        .find(|kt| {
            let name = kt.function(db).name(db);
            match (kernel, at) {
                (Some(k), _) => name == k,
                (None, Some(at)) => range_of(name).is_some_and(|r| r.contains_inclusive(at)),
                (None, None) => true,
            }
        })
        .copied()
        .ok_or("no kernel there")?;
    let name = kt.function(db).name(db).clone();
    let (stats, text, error) = match refusal(db, file, &t) {
        Some(m) => (Err(m.clone()), String::new(), Some(m)),
        None => {
            let stats = db::kernel_stats(db, kt).clone().map_err(|e| e.message);
            match db::sass_text_with(db, kt, control_codes) {
                Ok(text) => (stats, text, None),
                Err(e) => (stats, String::new(), Some(e.message)),
            }
        }
    };
    let lines = if error.is_none() {
        ptx_lines(db, file, kt)
    } else {
        Vec::new()
    };
    Ok(SassView {
        kernel: name,
        target: t.sm.to_string(),
        text,
        summary: lens_text(t.sm, &stats),
        error,
        lines,
    })
}

/// The 0-based PTX line of each line of the kernel's SASS text.
fn ptx_lines(db: &RootDatabase, file: SourceFile, kt: db::KernelTarget<'_>) -> Vec<Option<u32>> {
    let text = file.text(db);
    db::sass_origins(db, kt)
        .map(|origins| {
            origins
                .into_iter()
                .map(|o| o.map(|r| db::line_col(text, r.start()).0 as u32 - 1))
                .collect()
        })
        .unwrap_or_default()
}

/// Hover at `offset`: a name's declaration (`db::navigate`), or an instruction's PTX ISA
/// forms followed by the SASS its line became on the file's first target.
pub fn hover(
    db: &RootDatabase,
    file: SourceFile,
    config: &Config,
    offset: TextSize,
) -> Option<(TextRange, String)> {
    let (range, mut markdown) = db::navigate::hover(db, file, offset)?;
    if db::navigate::symbol_at(db, file, offset).is_some() {
        return Some((range, markdown));
    }
    let text = file.text(db);
    let line = db::line_col(text, offset).0 as u32 - 1;
    let t = config.targets(db, file).into_iter().next()?;
    if refusal(db, file, &t).is_some() {
        return Some((range, markdown));
    }
    let items = &db::module_items(db, file).items;
    for kt in db::kernel_targets(db, file, &t) {
        let name = kt.function(db).name(db);
        let inside = items.iter().any(|i| {
            i.kind == ItemKind::Kernel
                && i.name.as_deref() == Some(name.as_str())
                && i.range.contains_inclusive(offset)
        });
        if !inside {
            continue;
        }
        let (Ok(sass), lines) = (db::sass_text(db, kt), ptx_lines(db, file, kt)) else {
            break;
        };
        let mine: Vec<&str> = sass
            .lines()
            .zip(&lines)
            .filter(|(_, l)| **l == Some(line))
            .map(|(s, _)| s.trim())
            .collect();
        if !mine.is_empty() {
            markdown.push_str(&format!(
                "\n\n{} SASS:\n```sass\n{}\n```",
                t.sm,
                mine.join("\n")
            ));
        }
        break;
    }
    Some((range, markdown))
}

/// "Why N registers": for each kernel on the file's first target, the PTX constructs where
/// the live general registers peak, with the PTX registers live there:
/// `(range, "sm_90: 9 of 12 regs live: %r1, %rd4, …")`.
pub fn pressure_peaks(
    db: &RootDatabase,
    file: SourceFile,
    config: &Config,
) -> Vec<(TextRange, String)> {
    let Some(t) = config.targets(db, file).into_iter().next() else {
        return Vec::new();
    };
    if refusal(db, file, &t).is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for kt in db::kernel_targets(db, file, &t) {
        let (Ok(lines), Ok(stats)) = (db::register_pressure(db, kt), db::kernel_stats(db, kt))
        else {
            continue;
        };
        let Some(peak) = lines.iter().map(|l| l.live).max().filter(|&p| p > 0) else {
            continue;
        };
        for l in lines.iter().filter(|l| l.live == peak) {
            let mut values = l
                .values
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if l.values.len() > 8 {
                values.push_str(", …");
            }
            out.push((
                l.range,
                format!(
                    "{}: {} of {} regs live{}{}",
                    t.sm,
                    l.live,
                    stats.registers,
                    if values.is_empty() { "" } else { ": " },
                    values
                ),
            ));
        }
    }
    out
}
