//! Where tests and benches find their shared inputs, in one place.
//!
//! * the PTX corpus: `$KILN_CORPUS`, else `<workspace>/../shared/corpus`;
//! * NVIDIA's oracle tools (`ptxas`, `nvdisasm`, `cuobjdump`, installed by `cargo xtask
//!   oracle`): `$KILN_PTXAS` for ptxas, else `$KILN_ORACLE_BIN/<tool>`, else
//!   `$HOME/.cache/kiln-oracle/13.0.88/bin/<tool>`;
//! * committed test data under `<workspace>/test-data`.
//!
//! The `*_or_skip` functions print the `skipping: <reason>` line the project requires when an
//! input is absent and return `None`; the caller then returns (the test passes without having
//! checked anything, and says so). Used only as a dev-dependency.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

pub mod raw_nvdisasm;

/// The ptxas version whose tools `cargo xtask oracle` installs.
pub const ORACLE_VERSION: &str = "13.0.88";

/// The workspace root (this crate lives in `<root>/crates/test-support`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where the corpus should be: `$KILN_CORPUS`, else `<workspace>/../shared/corpus` (whether
/// or not it exists).
pub fn corpus_path() -> PathBuf {
    match std::env::var_os("KILN_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => workspace_root().join("../shared/corpus"),
    }
}

/// The corpus folder, if it exists.
pub fn corpus_dir() -> Option<PathBuf> {
    let d = corpus_path();
    d.is_dir().then_some(d)
}

/// The corpus folder, or `None` after printing why the caller skips.
pub fn corpus_or_skip() -> Option<PathBuf> {
    let d = corpus_dir();
    if d.is_none() {
        println!(
            "skipping: corpus not found at {} (set KILN_CORPUS)",
            corpus_path().display()
        );
    }
    d
}

/// Every `.ptx` file under `dir`, recursively, in sorted order (empty if `dir` is absent).
pub fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(dir, &mut out);
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "ptx") {
            out.push(path);
        }
    }
}

/// Where the oracle tools should be: `$KILN_ORACLE_BIN`, else
/// `$HOME/.cache/kiln-oracle/<version>/bin` (whether or not it exists).
fn oracle_bin_path() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("KILN_ORACLE_BIN") {
        return Some(PathBuf::from(d));
    }
    let home = std::env::var_os("HOME")?;
    Some(
        Path::new(&home)
            .join(".cache/kiln-oracle")
            .join(ORACLE_VERSION)
            .join("bin"),
    )
}

/// The folder holding all three oracle tools (`ptxas`, `cuobjdump`, `nvdisasm`), if they are
/// installed there.
pub fn oracle_bin_dir() -> Option<PathBuf> {
    let dir = oracle_bin_path()?;
    ["ptxas", "cuobjdump", "nvdisasm"]
        .iter()
        .all(|t| dir.join(t).is_file())
        .then_some(dir)
}

/// The oracle tool `name` (`ptxas`, `nvdisasm`, `cuobjdump`) if installed. `$KILN_PTXAS`
/// overrides the path of ptxas.
pub fn oracle_tool(name: &str) -> Option<PathBuf> {
    if name == "ptxas"
        && let Some(p) = std::env::var_os("KILN_PTXAS")
    {
        return Some(PathBuf::from(p));
    }
    let p = oracle_bin_path()?.join(name);
    p.is_file().then_some(p)
}

/// The oracle tool `name`, or `None` after printing why the caller skips.
pub fn oracle_tool_or_skip(name: &str) -> Option<PathBuf> {
    let p = oracle_tool(name);
    if p.is_none() {
        println!("skipping: {name} not installed (run `cargo xtask oracle` or set KILN_PTXAS)");
    }
    p
}

/// ptxas's cubin of `src` for `arch` with `flags` (e.g. `-g`), compiled in a fresh temporary
/// folder (tests run in parallel); `None` after printing why the caller skips when ptxas is
/// not installed. Panics when ptxas rejects the file (the test's input is wrong).
pub fn ptxas_cubin(src: &Path, arch: &str, flags: &[&str]) -> Option<Vec<u8>> {
    let ptxas = oracle_tool_or_skip("ptxas")?;
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kiln-ptxas-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let out = dir.join("out.cubin");
    let st = std::process::Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .args(flags)
        .arg(src)
        .arg("-o")
        .arg(&out)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("ptxas runs");
    assert!(
        st.success(),
        "ptxas {flags:?} failed on {} for {arch}",
        src.display()
    );
    let bytes = std::fs::read(&out).expect("ptxas wrote the cubin");
    let _ = std::fs::remove_dir_all(&dir);
    Some(bytes)
}

/// `<workspace>/test-data/<rel>`, or `None` after printing why the caller skips.
pub fn test_data_or_skip(rel: &str) -> Option<PathBuf> {
    let d = workspace_root().join("test-data").join(rel);
    if d.exists() {
        Some(d)
    } else {
        println!("skipping: {} is absent", d.display());
        None
    }
}

/// The Language Server Protocol position of byte offset `at` in `text`: (line, column in
/// UTF-16 code units), both 0-based — what a test client sends.
pub fn lsp_position(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, text[start..at].encode_utf16().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_files_are_recursive_sorted_and_only_ptx() {
        let root = std::env::temp_dir().join(format!("kiln-test-support-{}", std::process::id()));
        std::fs::create_dir_all(root.join("b/c")).unwrap();
        for f in ["b/c/z.ptx", "a.ptx", "b/y.ptx", "b/notes.txt"] {
            std::fs::write(root.join(f), "").unwrap();
        }
        let got: Vec<String> = ptx_files(&root)
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(got, ["a.ptx", "b/c/z.ptx", "b/y.ptx"]);
        assert!(ptx_files(&root).is_empty());
    }

    #[test]
    fn test_data_is_found() {
        assert!(test_data_or_skip("sema-mutations").is_some());
        assert!(test_data_or_skip("no-such-folder").is_none());
    }
}
