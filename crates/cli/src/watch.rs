//! `kiln watch FILES|DIRS --arch sm_90 [--arch sm_80] [-o DIR]`: recompiles PTX files when
//! they change, in one long-lived database, so that only the kernels an edit touched compile
//! again.
//!
//! The parent folders are watched (editors save by writing a temporary file and renaming it
//! over the original); events are gathered until 15 ms pass without one, then every changed
//! `.ptx` file the user named (or that lies in a folder the user named) is rebuilt. Cubins are
//! written as `<stem>.<sm>.cubin` beside the PTX or into `-o DIR`, through a temporary file
//! and a rename, so a reader never sees half a cubin; they are not `.ptx` files, so the
//! watcher's own writes never trigger it. Each rebuild prints one line per kernel whose
//! resources changed (`saxpy sm_90: 32 → 40 regs, +12 instrs`); bad input prints its
//! diagnostics, keeps the previous cubins and goes on watching.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

use crate::{Status, render};

#[derive(clap::Args)]
pub struct Args {
    /// PTX files, or folders whose `.ptx` files to watch.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Target SM (repeat for several: `--arch sm_90 --arch sm_80`).
    #[arg(long = "arch", required = true, value_parser = parse_arch)]
    archs: Vec<db::Sm>,
    /// Folder for the cubins (default: beside each PTX file).
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Register budget per thread (as ptxas's `--maxrregcount`).
    #[arg(long)]
    maxrregcount: Option<u32>,
    /// Optimization level, as ptxas's `-O0`..`-O3` (default 3).
    #[arg(short = 'O', default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: u8,
}

fn parse_arch(s: &str) -> Result<db::Sm, String> {
    let sm = db::Sm::parse(s).ok_or_else(|| format!("`{s}` is not an SM name"))?;
    if db::codegen_supported(sm) {
        Ok(sm)
    } else {
        Err(format!(
            "code generation supports {} and their `a` variants, not {sm}",
            db::codegen_sms()
        ))
    }
}

/// Time without events after which a burst of events is handled.
const QUIET: Duration = Duration::from_millis(15);

struct Watch {
    db: db::RootDatabase,
    targets: Vec<db::Target>,
    output: Option<PathBuf>,
    /// Files named on the command line (absolute).
    files: BTreeSet<PathBuf>,
    /// Folders named on the command line (absolute).
    dirs: BTreeSet<PathBuf>,
    sources: HashMap<PathBuf, (db::SourceFile, Vec<u8>)>,
    /// The last statistics of each (file, kernel, SM).
    stats: HashMap<(PathBuf, String, db::Sm), db::KernelStats>,
}

pub fn run(args: Args) -> Status {
    let mut w = Watch {
        db: db::RootDatabase::default(),
        targets: args
            .archs
            .iter()
            .map(|&sm| db::Target {
                sm,
                opt_level: args.opt_level,
                max_registers: args.maxrregcount,
                ..db::Target::new(sm)
            })
            .collect(),
        output: args.output.clone(),
        files: BTreeSet::new(),
        dirs: BTreeSet::new(),
        sources: HashMap::new(),
        stats: HashMap::new(),
    };
    if let Some(out) = &args.output
        && let Err(e) = std::fs::create_dir_all(out)
    {
        eprintln!("kiln watch: cannot create {}: {e}", out.display());
        return Status::Failure;
    }
    for p in &args.paths {
        let abs = match std::path::absolute(p) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("kiln watch: {}: {e}", p.display());
                return Status::Failure;
            }
        };
        if abs.is_dir() {
            w.dirs.insert(abs);
        } else if abs.is_file() {
            w.files.insert(abs);
        } else {
            eprintln!("kiln watch: {}: no such file or folder", p.display());
            return Status::Failure;
        }
    }
    let (tx, rx) = mpsc::channel();
    let mut watcher = match notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    }) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("kiln watch: cannot watch files: {e}");
            return Status::Failure;
        }
    };
    let folders: BTreeSet<PathBuf> = w
        .files
        .iter()
        .filter_map(|f| f.parent().map(Path::to_path_buf))
        .chain(w.dirs.iter().cloned())
        .collect();
    for f in &folders {
        if let Err(e) = watcher.watch(f, RecursiveMode::NonRecursive) {
            eprintln!("kiln watch: cannot watch {}: {e}", f.display());
            return Status::Failure;
        }
    }
    let mut initial: Vec<PathBuf> = w.files.iter().cloned().collect();
    for d in &w.dirs {
        if let Ok(entries) = std::fs::read_dir(d) {
            initial.extend(entries.flatten().map(|e| e.path()).filter(|p| is_ptx(p)));
        }
    }
    initial.sort();
    initial.dedup();
    println!(
        "kiln watch: {} file(s) in {} folder(s) for {}; Ctrl-C to stop",
        initial.len(),
        folders.len(),
        w.targets
            .iter()
            .map(|t| t.sm.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for p in initial {
        w.rebuild(&p);
    }
    loop {
        // Wait for a change to a watched file; other events (reads of the folder's files,
        // the watcher's own cubins) neither start nor prolong a burst.
        let mut changed = BTreeSet::new();
        let mut last_change: Option<Instant> = None;
        loop {
            let event = match last_change {
                None => match rx.recv() {
                    Ok(e) => e,
                    Err(_) => return Status::Ok,
                },
                Some(t) => match rx.recv_timeout(QUIET.saturating_sub(t.elapsed())) {
                    Ok(e) => e,
                    Err(mpsc::RecvTimeoutError::Timeout) => break,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return Status::Ok,
                },
            };
            match event {
                Ok(e) if !matches!(e.kind, notify::EventKind::Access(_)) => {
                    let watched: Vec<PathBuf> =
                        e.paths.into_iter().filter(|p| w.is_watched(p)).collect();
                    if !watched.is_empty() {
                        changed.extend(watched);
                        last_change = Some(Instant::now());
                    }
                }
                Ok(_) => {}
                Err(e) => eprintln!("kiln watch: {e}"),
            }
            if last_change.is_some_and(|t| t.elapsed() >= QUIET) {
                break;
            }
        }
        for p in changed {
            if p.is_file() {
                w.rebuild(&p);
            }
        }
    }
}

fn is_ptx(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "ptx")
}

impl Watch {
    fn is_watched(&self, p: &Path) -> bool {
        self.files.contains(p) || (is_ptx(p) && p.parent().is_some_and(|d| self.dirs.contains(d)))
    }

    fn cubin_path(&self, ptx: &Path, sm: db::Sm) -> PathBuf {
        let stem = ptx.file_stem().unwrap_or_default().to_string_lossy();
        let dir = self
            .output
            .clone()
            .or_else(|| ptx.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        dir.join(format!("{stem}.{sm}.cubin"))
    }

    fn rebuild(&mut self, path: &Path) {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("kiln watch: cannot read {}: {e}", path.display());
                return;
            }
        };
        let start = Instant::now();
        let file = match self.sources.get_mut(path) {
            Some((_, old)) if *old == bytes => return,
            Some((file, old)) => {
                let file = *file;
                *old = bytes.clone();
                let (text, _) = syntax::decode_utf8(&bytes);
                self.db.set_text(file, &text);
                file
            }
            None => {
                let file = self.db.add_file(path, &bytes);
                self.sources.insert(path.to_path_buf(), (file, bytes));
                file
            }
        };
        self.db.stamp_source_files(file);
        let shown = path.display().to_string();
        let mut diagnostics = db::diagnostics(&self.db, file).clone();
        let mut outputs = Vec::new();
        for t in &self.targets {
            diagnostics.extend(db::target_diagnostics(&self.db, file, t.sm));
            let out = db::cubin(&self.db, db::FileTarget::new(&self.db, file, t.clone()));
            diagnostics.extend(out.diagnostics.iter().cloned());
            if let Some(bytes) = &out.bytes {
                outputs.push((t.sm, bytes.clone()));
            }
        }
        diagnostics.sort_by_key(|d| (d.range.start(), d.range.end()));
        diagnostics.dedup();
        let color = render::stderr_color();
        let text = file.text(&self.db);
        for d in &diagnostics {
            eprint!("{}", render::render(&shown, text, d, color));
        }
        let errors = diagnostics
            .iter()
            .filter(|d| d.severity == db::Severity::Error)
            .count();
        if errors > 0 || outputs.len() != self.targets.len() {
            println!("{shown}: {errors} error(s); previous cubins kept");
            return;
        }
        for (sm, bytes) in outputs {
            let dest = self.cubin_path(path, sm);
            if let Err(e) = write_atomically(&dest, &bytes) {
                eprintln!("kiln watch: cannot write {}: {e}", dest.display());
            }
        }
        let mut lines = Vec::new();
        for t in &self.targets {
            for kt in db::kernel_targets(&self.db, file, t) {
                let Ok(s) = db::kernel_stats(&self.db, kt) else {
                    continue;
                };
                let key = (path.to_path_buf(), s.name.clone(), t.sm);
                let line = match self.stats.get(&key) {
                    Some(old) if old == s => None,
                    Some(old) => Some(delta(t.sm, old, s)),
                    None => Some(format!(
                        "{} {}: {} regs, {} instrs",
                        s.name, t.sm, s.registers, s.instructions
                    )),
                };
                lines.extend(line);
                self.stats.insert(key, s.clone());
            }
        }
        for l in &lines {
            println!("{l}");
        }
        println!(
            "{shown}: {} kernel(s) changed; cubins written in {:.1} ms",
            lines.len(),
            start.elapsed().as_secs_f64() * 1e3
        );
    }
}

/// `saxpy sm_90: 32 → 40 regs, +12 instrs, 0 → 16 B spills`.
fn delta(sm: db::Sm, old: &db::KernelStats, new: &db::KernelStats) -> String {
    let mut parts = Vec::new();
    if old.registers != new.registers {
        parts.push(format!("{} → {} regs", old.registers, new.registers));
    }
    if old.instructions != new.instructions {
        let d = new.instructions as i64 - old.instructions as i64;
        parts.push(format!("{d:+} instrs"));
    }
    let spills = |s: &db::KernelStats| s.spill_stores + s.spill_loads;
    if spills(old) != spills(new) {
        parts.push(format!("{} → {} B spills", spills(old), spills(new)));
    }
    if old.stack_frame != new.stack_frame {
        parts.push(format!("{} → {} B stack", old.stack_frame, new.stack_frame));
    }
    if old.shared_bytes != new.shared_bytes {
        parts.push(format!(
            "{} → {} B smem",
            old.shared_bytes, new.shared_bytes
        ));
    }
    if parts.is_empty() {
        parts.push("same resources, new code".into());
    }
    format!("{} {sm}: {}", new.name, parts.join(", "))
}

/// Writes `bytes` to `dest` through a temporary file in the same folder and a rename.
fn write_atomically(dest: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = dest.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dest.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dest)
}
