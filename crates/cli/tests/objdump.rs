//! `kiln objdump` end to end on a committed ptxas cubin.

use std::process::Command;

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cubin/tests/data")
        .join(name)
}

#[test]
fn lists_a_cubin_like_cuobjdump() {
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["objdump"])
        .arg(fixture("copy.sm_90.cubin"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("64-bit ELF: type=ET_EXEC, ABI=8, sm=90, toolkit=13.0, flags=0x6005a04"));
    assert!(text.contains("Value:\tfunction: copy(0x8)\tregister count: 10"));
    let json = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["objdump", "--json"])
        .arg(fixture("copy.sm_90.cubin"))
        .output()
        .unwrap();
    assert!(json.status.success());
    let j = String::from_utf8(json.stdout).unwrap();
    assert!(j.contains("\"name\": \"EIATTR_REGCOUNT\""), "{j}");
}

#[test]
fn corrupt_file_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("kiln-objdump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(fixture("copy.sm_90.cubin")).unwrap();
    let bad = dir.join("truncated.cubin");
    std::fs::write(&bad, &bytes[..1000]).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("objdump")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("not a valid cubin"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
