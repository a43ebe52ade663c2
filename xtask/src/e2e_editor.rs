//! `cargo xtask e2e-editor`: the VS Code extension's end-to-end test in a real VS Code
//! (code-server driven by Chromium through playwright-core), `editors/code/e2e/run.sh`. It
//! installs what it needs on first use (under `target/editor-e2e/`), packages the extension,
//! and prints `RESULT editor-e2e checks=<n> passed=<n> failed=<n>` (editors/code/README.md).

use std::process::Command;

use crate::corpus;

pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!("e2e-editor: unknown argument `{a}`"));
    }
    let root = corpus::workspace_root();
    let status = Command::new("bash")
        .arg(root.join("editors/code/e2e/run.sh"))
        .current_dir(&root)
        .status()
        .map_err(|e| format!("e2e-editor: running editors/code/e2e/run.sh: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "e2e-editor: editors/code/e2e/run.sh failed ({status})"
        ))
    }
}
