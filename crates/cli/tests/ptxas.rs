//! The ptxas-compatible driver (`kiln ptxas ...`, or the binary run under the name `ptxas`):
//! ptxas's option spellings, its default output name, its `-v` report format (compared with
//! the real ptxas line by line, numbers aside), `sm_90a` cubins that cuobjdump names `sm=90a`,
//! the version line Triton parses, and exit status 255 on every failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kiln-ptxas-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn example() -> PathBuf {
    test_support::workspace_root().join("test-data/examples/saxpy.ptx")
}

fn kiln_ptxas(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("ptxas")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("kiln runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn same_cubin_as_kiln_build_and_default_output_name() {
    let dir = tmp_dir("same");
    let ex = example();
    let out = kiln_ptxas(&dir, &["-arch=sm_90", ex.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // ptxas writes `elf.o` when no output file is named.
    let ptxas_mode = std::fs::read(dir.join("elf.o")).expect("elf.o written");
    let built = dir.join("built.cubin");
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["build", ex.to_str().unwrap(), "--arch", "sm_90", "-o"])
        .arg(&built)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(ptxas_mode, std::fs::read(&built).unwrap());
}

#[test]
fn invoked_as_ptxas_reports_the_release_triton_reads() {
    let dir = tmp_dir("symlink");
    let link = dir.join("ptxas");
    let _ = std::fs::remove_file(&link);
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kiln"), &link).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(env!("CARGO_BIN_EXE_kiln"), &link).unwrap();
    let out = Command::new(&link).arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    // Triton: re.search(r".*release (\d+\.\d+).*", output) must find the CUDA release.
    assert!(text.contains("release 13.0, V13.0.88"), "{text}");
    // And a full compile through the symlink, with ptxas's option spellings.
    let cubin = dir.join("k.cubin");
    let out = Command::new(&link)
        .args([
            "--gpu-name",
            "sm_80",
            "-O3",
            "-maxrregcount",
            "64",
            "-lineinfo",
        ])
        .arg(example())
        .arg("-o")
        .arg(&cubin)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let c = cubin::read(&std::fs::read(&cubin).unwrap()).expect("a readable cubin");
    assert_eq!(c.header.sm(), 80);
}

#[test]
fn failures_exit_255_with_ptxas_fatal_lines() {
    let dir = tmp_dir("fail");
    let ex = example();
    let ex = ex.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["-arch=sm_90", "--bogus", ex], "Unknown option '--bogus'"),
        (
            &["-arch=sm_90", "-c", ex],
            "unsupported option '--compile-only'",
        ),
        (&[ex], "no GPU name given"),
        (
            &["-arch=sm_100", ex],
            "unsupported: code generation for sm_100",
        ),
        (
            &["-arch=sm_90", "missing.ptx"],
            "Input file 'missing.ptx' could not be opened",
        ),
        (
            &["-arch=sm_90", "-O", "7", ex],
            "Value '7' is not defined for option 'opt-level'",
        ),
    ];
    for (args, message) in cases {
        let out = kiln_ptxas(&dir, args);
        assert_eq!(out.status.code(), Some(255), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
    // Bad PTX: kiln's spanned diagnostic, then ptxas's closing line.
    let bad = dir.join("bad.ptx");
    std::fs::write(
        &bad,
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { add.u32 %r1, 1, 2; ret; }\n",
    )
    .unwrap();
    let out = kiln_ptxas(
        &dir,
        &["-arch=sm_90", bad.to_str().unwrap(), "-o", "x.cubin"],
    );
    assert_eq!(out.status.code(), Some(255));
    let err = stderr(&out);
    assert!(err.contains("bad.ptx:4:31: error:"), "{err}");
    assert!(
        err.contains("ptxas fatal   : Ptx assembly aborted due to errors"),
        "{err}"
    );
    assert!(!dir.join("x.cubin").exists());
}

/// Replaces every run of digits by `#`: the report's shape without its numbers.
fn shape(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let mut out = String::new();
            let mut in_number = false;
            for c in l.chars() {
                if c.is_ascii_digit() || (in_number && c == '.') {
                    if !in_number {
                        out.push('#');
                    }
                    in_number = true;
                } else {
                    in_number = false;
                    out.push(c);
                }
            }
            out
        })
        .collect()
}

#[test]
fn verbose_report_has_ptxas_format_and_sm_90a_cubins_say_so() {
    let Some(ptxas) = test_support::oracle_tool_or_skip("ptxas") else {
        return;
    };
    let Some(cuobjdump) = test_support::oracle_tool_or_skip("cuobjdump") else {
        return;
    };
    let dir = tmp_dir("oracle");
    let ex = example();
    for arch in ["sm_80", "sm_90a"] {
        let arch_opt = format!("--gpu-name={arch}");
        let theirs = Command::new(&ptxas)
            .args([
                arch_opt.as_str(),
                "-v",
                ex.to_str().unwrap(),
                "-o",
                "theirs.cubin",
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(theirs.status.code(), Some(0));
        let ours = kiln_ptxas(
            &dir,
            &[&arch_opt, "-v", ex.to_str().unwrap(), "-o", "ours.cubin"],
        );
        assert_eq!(ours.status.code(), Some(0), "{}", stderr(&ours));
        assert_eq!(shape(&stderr(&ours)), shape(&stderr(&theirs)), "{arch}");
        // cuobjdump's header line names the same target for both cubins.
        let header = |f: &str| {
            let o = Command::new(&cuobjdump)
                .args(["-elf", f])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            let line = text
                .lines()
                .find(|l| l.contains("64-bit ELF"))
                .unwrap_or("")
                .to_string();
            line.split(", ")
                .find(|p| p.starts_with("sm="))
                .unwrap_or("")
                .to_string()
        };
        assert_eq!(header("ours.cubin"), header("theirs.cubin"), "{arch}");
        assert_eq!(header("ours.cubin"), format!("sm={}", &arch[3..]));
    }
}
