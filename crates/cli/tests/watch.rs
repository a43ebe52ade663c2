//! `kiln watch`: rebuilds on save (including save by rename), reports per-kernel deltas,
//! keeps the last good cubins on bad input, writes the same bytes as `kiln build`, and is not
//! triggered by its own outputs.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const MODULE: &str = include_str!("../../../test-data/lsp/two_kernels.ptx");

struct Lines(mpsc::Receiver<String>);

impl Lines {
    /// Lines up to and including the first that satisfies `done`.
    fn until(&self, done: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .0
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("timed out; output so far: {seen:?}"));
            let stop = done(&line);
            seen.push(line);
            if stop {
                return seen;
            }
        }
    }

    /// Lines printed within `d` (none expected when idle).
    fn quiet_for(&self, d: Duration) -> Vec<String> {
        let deadline = Instant::now() + d;
        let mut seen = Vec::new();
        while let Ok(l) = self
            .0
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            seen.push(l);
        }
        seen
    }
}

/// Saves like an editor: a temporary file renamed over the original.
fn save(path: &Path, text: &str) {
    let tmp = path.with_extension("ptx.swp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn kiln_build(ptx: &Path, arch: &str, out: &Path) -> Vec<u8> {
    let st = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["build", "--arch", arch, "-o"])
        .arg(out)
        .arg(ptx)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::read(out).unwrap()
}

#[test]
fn rebuilds_changed_kernels_on_save() {
    let root = std::env::temp_dir().join(format!("kiln-watch-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (src, out) = (root.join("src"), root.join("out"));
    std::fs::create_dir_all(&src).unwrap();
    let ptx = src.join("m.ptx");
    std::fs::write(&ptx, MODULE).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("watch")
        .arg(&src)
        .args(["--arch", "sm_90", "--arch", "sm_80", "-o"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let lines = Lines(rx);
    let written = |l: &str| l.contains("cubins written") || l.contains("cubins kept");

    let first = lines.until(written);
    assert_eq!(
        first.iter().filter(|l| l.contains(" regs, ")).count(),
        4,
        "{first:?}"
    );
    let check_bytes = || {
        for arch in ["sm_90", "sm_80"] {
            let theirs = kiln_build(&ptx, arch, &root.join(format!("b.{arch}.cubin")));
            let ours = std::fs::read(out.join(format!("m.{arch}.cubin"))).unwrap();
            assert!(
                ours == theirs,
                "{arch}: the watched cubin differs from `kiln build`"
            );
        }
    };
    check_bytes();

    // An edit in `second` only: only its lines, with deltas — while another program keeps
    // reading the watched file (its reads are events too, which must not hold a rebuild).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (stop, ptx) = (stop.clone(), ptx.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::read(&ptx);
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    save(
        &ptx,
        &MODULE.replace(
            "add.u32 %r2, %r1, 7;",
            "add.u32 %r2, %r1, 7;\n    mul.lo.u32 %r2, %r2, %r1;",
        ),
    );
    let edit = lines.until(written);
    let kernels: Vec<&String> = edit
        .iter()
        .filter(|l| l.contains(": ") && !written(l))
        .collect();
    assert_eq!(kernels.len(), 2, "{edit:?}");
    assert!(
        kernels
            .iter()
            .all(|l| l.starts_with("second sm_") && l.contains("+1 instrs")),
        "{edit:?}"
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    reader.join().unwrap();
    check_bytes();
    let good = std::fs::read(out.join("m.sm_90.cubin")).unwrap();

    // Bad input: errors, the cubins stay.
    save(&ptx, &MODULE.replace("ret;", "ret"));
    let bad = lines.until(written);
    assert!(
        bad.last()
            .unwrap()
            .contains("error(s); previous cubins kept"),
        "{bad:?}"
    );
    assert_eq!(std::fs::read(out.join("m.sm_90.cubin")).unwrap(), good);

    // Fixed again; then nothing happens while nothing changes (its own writes do not count).
    save(&ptx, MODULE);
    let fixed = lines.until(written);
    assert!(
        fixed.iter().any(|l| l.starts_with("second sm_90: ")),
        "{fixed:?}"
    );
    check_bytes();
    assert_eq!(
        lines.quiet_for(Duration::from_millis(700)),
        Vec::<String>::new()
    );

    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&root);
}
