//! `kiln run` end to end: scalars and buffers in, buffers out, clear errors.

use std::process::Command;

fn kiln() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
}

const SCALE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../test-data/interp/scale.ptx"
);

#[test]
fn runs_a_kernel_and_writes_buffers() {
    let dir = std::env::temp_dir().join(format!("kiln-run-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.bin");
    let data: Vec<u8> = (0..8).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(&input, &data).unwrap();
    let out = kiln()
        .args(["run", SCALE, "--kernel", "scale", "--block", "8"])
        .arg("--arg")
        .arg(format!("file:{}", input.display()))
        .args(["--arg", "f32:2.5", "--arg", "u32:6", "--out"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read(dir.join("out/arg0.bin")).unwrap();
    let got: Vec<f32> = got
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // Threads below n = 6 scale their element by 2.5; the others leave it alone.
    let want: Vec<f32> = (0..8)
        .map(|i| if i < 6 { i as f32 * 2.5 } else { i as f32 })
        .collect();
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_of_bounds_is_a_reported_trap() {
    let dir = std::env::temp_dir().join(format!("kiln-run-trap-{}", std::process::id()));
    let out = kiln()
        .args([
            "run", SCALE, "--kernel", "scale", "--block", "8", "--arg", "zero:4", "--arg", "f32:1",
            "--arg", "u32:8", "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("out-of-bounds") && err.contains("line 18"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wrong_argument_count_is_a_usage_error() {
    let out = kiln()
        .args(["run", SCALE, "--kernel", "scale", "--arg", "zero:4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("takes 3 parameter(s) (p, ps, pn), 1 --arg given")
    );
}

#[test]
fn check_reports_a_shared_memory_race_with_its_position() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../test-data/sanitize/exchange_race.ptx"
    );
    let dir = std::env::temp_dir().join(format!("kiln-run-check-{}", std::process::id()));
    let out = kiln()
        .args(["run", file, "--kernel", "exchange", "--block", "64"])
        .args(["--arg", "zero:256", "--check", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    // The load of line 21 reads words the other warp stored at line 19 with no barrier.
    assert!(
        err.contains(
            "exchange_race.ptx:21:3: warning: data race (read after write) on shared memory"
        ),
        "{err}"
    );
    assert!(err.contains("at line 19"), "{err}");
    assert!(err.contains("depends on how threads interleave"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
