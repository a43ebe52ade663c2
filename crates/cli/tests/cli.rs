//! End-to-end tests of the `kiln` binary: exit codes, diagnostics format, robustness.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kiln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .output()
        .expect("kiln runs")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn embedded_example_checks_clean() {
    let out = kiln(&["check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    expect_test::expect![[r#"
        test-data/examples/saxpy.ptx (embedded example):
          .entry saxpy: 4 parameters, 20 instructions, 1 label
    "#]]
    .assert_eq(&stdout);
}

#[test]
fn example_files() {
    let dir = workspace().join("test-data/examples");
    let ok = kiln(&[
        "check",
        "--arch",
        "sm_80",
        dir.join("saxpy.ptx").to_str().unwrap(),
    ]);
    assert_eq!(ok.status.code(), Some(0));
    // .target sm_80 cannot run on sm_75.
    let old = kiln(&[
        "check",
        "--arch",
        "sm_75",
        dir.join("saxpy.ptx").to_str().unwrap(),
    ]);
    assert_eq!(old.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&old.stderr)
            .contains("saxpy.ptx:10:9: error: SM version specified by .target")
    );

    let broken = kiln(&["check", dir.join("broken.ptx").to_str().unwrap()]);
    assert_eq!(broken.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(stderr.contains("broken.ptx:7:"), "{stderr}");
    assert!(
        stderr.lines().filter(|l| l.contains(": error: ")).count() >= 3,
        "{stderr}"
    );
}

#[test]
fn usage_and_io_errors_exit_2() {
    assert_eq!(
        kiln(&["check", "/nonexistent/file.ptx"]).status.code(),
        Some(2)
    );
    assert_eq!(
        kiln(&["check", "--arch", "sm_9x", "x.ptx"]).status.code(),
        Some(2)
    );
    assert_eq!(kiln(&["frobnicate"]).status.code(), Some(2));
}

/// Small deterministic generator (xorshift) for mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, mut bytes: Vec<u8>) -> Vec<u8> {
    match rng.below(4) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                if !bytes.is_empty() {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 => bytes.truncate(rng.below(bytes.len() + 1)),
        2 => {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let mut lines: Vec<&str> = text.lines().collect();
            for _ in 0..1 + rng.below(4) {
                let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                if a < lines.len() && b < lines.len() {
                    lines.swap(a, b);
                }
            }
            bytes = lines.join("\n").into_bytes();
        }
        _ => {
            let i = rng.below(bytes.len() + 1);
            let junk: &[&[u8]] = &[
                b"{",
                b"}",
                b";",
                b"[",
                b"\xff\xfe",
                b"@",
                b".reg",
                b"%r<",
                b"/*",
                b"\"",
            ];
            let j = junk[rng.below(junk.len())];
            bytes.splice(i..i, j.iter().copied());
        }
    }
    bytes
}

/// Random mutations of corpus files (byte flips, truncation, line shuffles, insertions) never
/// make `kiln check` exit with anything but 0 or 1.
#[test]
fn mutated_corpus_files_exit_0_or_1() {
    let Some(corpus) = test_support::corpus_or_skip() else {
        return;
    };
    let mut files: Vec<PathBuf> = ["ptx", "rejected"]
        .iter()
        .flat_map(|d| test_support::ptx_files(&corpus.join(d)))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() < 200_000))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus has no .ptx files");
    let tmp = std::env::temp_dir().join(format!("kiln-mutants-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut batch = Vec::new();
    for n in 0..240 {
        let src = &files[rng.below(files.len())];
        let mutant = mutate(&mut rng, std::fs::read(src).unwrap());
        let path = tmp.join(format!("m{n}.ptx"));
        std::fs::write(&path, mutant).unwrap();
        batch.push(path);
    }
    // Several files per process keeps the test fast; each batch is re-run file by file on
    // failure to name the culprit.
    for chunk in batch.chunks(20) {
        let args: Vec<&str> = std::iter::once("check")
            .chain(chunk.iter().map(|p| p.to_str().unwrap()))
            .collect();
        let out = kiln(&args);
        if !matches!(out.status.code(), Some(0 | 1)) {
            for p in chunk {
                let one = kiln(&["check", p.to_str().unwrap()]);
                assert!(
                    matches!(one.status.code(), Some(0 | 1)),
                    "kiln check {} exited with {:?}: {}",
                    p.display(),
                    one.status,
                    String::from_utf8_lossy(&one.stderr)
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
