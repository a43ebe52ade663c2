//! `cargo xtask oracle`: installs the reference tools from NVIDIA's PyPI wheels.
//!
//! The versions are the ones the project measures against: ptxas 13.0.88 (the version the
//! reverse-engineering notes in ../shared/seeds describe) and the oldest nvdisasm/cuobjdump
//! published as separate wheels. The tools run on any x86-64 Linux CPU; no GPU is needed.
//!
//! Cache folder: `$KILN_ORACLE_DIR`, else `$ORACLE_DIR`, else `$XDG_CACHE_HOME/kiln-oracle`,
//! else `~/.cache/kiln-oracle` (the same layout as ../shared/tools/oracle.sh, so either installs
//! for the other).

use std::path::{Path, PathBuf};
use std::process::Command;

pub const PTXAS_VERSION: &str = "13.0.88";
pub const DISASM_VERSION: &str = "13.2.86";
const TOOLS: [&str; 3] = ["ptxas", "nvdisasm", "cuobjdump"];

pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!("oracle takes no arguments (got `{a}`)"));
    }
    let bin = ensure()?;
    println!("{}", bin.display());
    Ok(())
}

/// The folder under which the oracle is (or will be) installed.
pub fn root() -> PathBuf {
    let base = std::env::var_os("KILN_ORACLE_DIR")
        .or_else(|| std::env::var_os("ORACLE_DIR"))
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("kiln-oracle"))
        })
        .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/kiln-oracle")))
        .unwrap_or_else(|| PathBuf::from(".cache/kiln-oracle"));
    base.join(PTXAS_VERSION)
}

/// Returns the folder holding `ptxas`, `nvdisasm` and `cuobjdump`, installing them first if
/// they are missing. Other xtask stages call this before they use the oracle.
pub fn ensure() -> Result<PathBuf, String> {
    let root = root();
    let bin = root.join("bin");
    if TOOLS.iter().all(|t| is_executable(&bin.join(t))) {
        return Ok(bin);
    }
    let wheels = root.join("wheels");
    std::fs::create_dir_all(&wheels).map_err(|e| format!("creating {}: {e}", wheels.display()))?;
    std::fs::create_dir_all(&bin).map_err(|e| format!("creating {}: {e}", bin.display()))?;
    eprintln!(
        "xtask oracle: downloading NVIDIA tool wheels into {}",
        wheels.display()
    );
    let status = Command::new("python3")
        .args(["-m", "pip", "download", "--quiet", "--no-deps", "-d"])
        .arg(&wheels)
        .arg(format!("nvidia-cuda-nvcc=={PTXAS_VERSION}"))
        .arg(format!("nvidia-cuda-nvdisasm=={DISASM_VERSION}"))
        .arg(format!("nvidia-cuda-cuobjdump=={DISASM_VERSION}"))
        .status()
        .map_err(|e| format!("running python3 -m pip: {e}"))?;
    if !status.success() {
        return Err(format!("pip download failed ({status})"));
    }
    // A wheel is a zip file; python's zipfile extracts it without needing `unzip`.
    let unpack = root.join("unpacked");
    for entry in std::fs::read_dir(&wheels).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "whl") {
            let status = Command::new("python3")
                .args([
                    "-c",
                    "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])",
                ])
                .arg(&path)
                .arg(&unpack)
                .status()
                .map_err(|e| format!("running python3: {e}"))?;
            if !status.success() {
                return Err(format!("unpacking {} failed", path.display()));
            }
        }
    }
    for tool in TOOLS {
        let found =
            find_file(&unpack, tool).ok_or_else(|| format!("{tool} missing from the wheels"))?;
        let dest = bin.join(tool);
        std::fs::copy(&found, &dest).map_err(|e| format!("installing {tool}: {e}"))?;
        set_executable(&dest)?;
    }
    let _ = std::fs::remove_dir_all(&unpack);
    let out = Command::new(bin.join("ptxas"))
        .arg("--version")
        .output()
        .map_err(|e| format!("running the installed ptxas: {e}"))?;
    if !out.status.success() {
        return Err("the installed ptxas does not run".into());
    }
    Ok(bin)
}

/// Path of one oracle tool (`ptxas`, `nvdisasm`, `cuobjdump`), installing the oracle if needed.
pub fn tool(name: &str) -> Result<PathBuf, String> {
    Ok(ensure()?.join(name))
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|f| f == name)
                && p.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|f| f == "bin")
            {
                return Some(p);
            }
        }
    }
    None
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn set_executable(p: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("chmod {}: {e}", p.display()))
}
