//! `kiln build`: the embedded example compiles for sm_80 and sm_90 (a readable cubin with the
//! kernel), `-v` prints ptxas's report format, and unsupported input fails with exit code 1,
//! a spanned diagnostic and no output file.

use std::process::{Command, Output};

fn kiln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .output()
        .expect("kiln runs")
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("kiln-build-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn embedded_example_builds_for_both_sms() {
    for sm in ["sm_80", "sm_90"] {
        let out_path = tmp(&format!("saxpy.{sm}.cubin"));
        let out = kiln(&[
            "build",
            "--arch",
            sm,
            "-o",
            out_path.to_str().unwrap(),
            "-v",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("Compiling entry function 'saxpy'"),
            "{stdout}"
        );
        assert!(stdout.contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"));
        assert!(stdout.contains(" registers, used 0 barriers"), "{stdout}");
        // saxpy's 8 registers: the warps limit 256-thread blocks (cuda_occupancy.h's rules).
        assert!(
            stdout.contains(
                "kiln info    : Occupancy 100% at 256 threads: 8 blocks, 64 of 64 warps per SM, \
                 limited by warps\n"
            ),
            "{stdout}"
        );
        // The static performance model's line (`crates/perfmodel`), for the SMs it has
        // figures for.
        let model = stdout
            .lines()
            .find(|l| l.starts_with("kiln info    : Model: "));
        if matches!(sm, "sm_80" | "sm_90") {
            let m = model.unwrap_or_else(|| panic!("no model line: {stdout}"));
            assert!(m.ends_with("issue slots per warp (static estimate; loops counted 8 times)"));
        }
        let bytes = std::fs::read(&out_path).unwrap();
        let c = cubin::read(&bytes).expect("a readable cubin");
        let f = c.functions();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].name, "saxpy");
    }
}

#[test]
fn unsupported_input_fails_closed() {
    let src = tmp("bfe.ptx");
    std::fs::write(
        &src,
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n    .reg .b32 %r<3>; .reg .b64 %rd<3>;\n    ld.param.u64 %rd1, [a];\n    pmevent 1;\n    ret;\n}\n",
    )
    .unwrap();
    let out_path = tmp("bfe.cubin");
    let out = kiln(&[
        "build",
        src.to_str().unwrap(),
        "--arch",
        "sm_80",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(":8:5: error: kernel `k`: unsupported: instruction `pmevent`"),
        "{stderr}"
    );
    assert!(!out_path.exists(), "no cubin is written");
}

/// `kiln sass --control-codes` prints each instruction's control field as `kiln disasm
/// --control` decodes it from the cubin `kiln build` writes (two independent paths: the
/// listing's words, and the ELF read back).
#[test]
fn sass_control_codes_match_the_cubin() {
    let ptx = "../../test-data/examples/saxpy.ptx";
    for arch in ["sm_80", "sm_90"] {
        let cubin =
            std::env::temp_dir().join(format!("kiln-cc-{arch}-{}.cubin", std::process::id()));
        let st = Command::new(env!("CARGO_BIN_EXE_kiln"))
            .args(["build", "--arch", arch, "-o"])
            .arg(&cubin)
            .arg(ptx)
            .status()
            .unwrap();
        assert!(st.success());
        let sass = Command::new(env!("CARGO_BIN_EXE_kiln"))
            .args(["sass", "--control-codes", "--arch", arch, ptx])
            .output()
            .unwrap();
        let disasm = Command::new(env!("CARGO_BIN_EXE_kiln"))
            .args(["disasm", "--control"])
            .arg(&cubin)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&cubin);
        let ours: Vec<(String, String)> = String::from_utf8(sass.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| {
                let l = l.trim();
                let (control, rest) = l.split_once("] ")?;
                Some((
                    format!("{control}]"),
                    rest.split_whitespace().next()?.to_string(),
                ))
            })
            .collect();
        let theirs: Vec<(String, String)> = String::from_utf8(disasm.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| {
                let (code, control) = l.split_once("// ")?;
                let pc = code.split_whitespace().next()?.to_string();
                Some((control.trim().to_string(), pc))
            })
            .collect();
        assert!(ours.len() > 10, "{arch}: {ours:?}");
        assert_eq!(ours, theirs, "{arch}");
    }
}

/// Kernels compile in parallel (`KILN_JOBS` threads); the cubin and the report do not depend
/// on it.
#[test]
fn parallel_build_is_byte_identical() {
    let mut ptx = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    for k in 0..12 {
        ptx.push_str(&format!(
            ".visible .entry k{k}(.param .u64 p, .param .u32 n)\n{{\n\
             .reg .pred %p<2>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<5>;\n\
             ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [n];\ncvta.to.global.u64 %rd2, %rd1;\n\
             mov.u32 %r2, %tid.x;\nsetp.ge.u32 %p1, %r2, %r1;\n@%p1 bra DONE;\n\
             mul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u32 %r3, [%rd4];\n\
             mul.lo.u32 %r4, %r3, {};\nadd.u32 %r5, %r4, %r2;\nst.global.u32 [%rd4], %r5;\n\
             DONE:\nret;\n}}\n",
            k + 3
        ));
    }
    let dir = std::env::temp_dir().join(format!("kiln-par-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("m.ptx");
    std::fs::write(&src, &ptx).unwrap();
    for arch in ["sm_80", "sm_90"] {
        let build = |jobs: &str| {
            let out = dir.join(format!("{arch}-{jobs}.cubin"));
            let o = Command::new(env!("CARGO_BIN_EXE_kiln"))
                .env("KILN_JOBS", jobs)
                .args(["build", "--arch", arch, "-v", "-o"])
                .arg(&out)
                .arg(&src)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            (std::fs::read(&out).unwrap(), o.stdout)
        };
        let serial = build("1");
        assert_eq!(serial.0, build("3").0, "{arch}: cubin");
        assert_eq!(serial.1, build("3").1, "{arch}: -v report");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Under a make jobserver (`MAKEFLAGS=--jobserver-auth=fifo:PATH`), kiln takes the tokens it
/// can without waiting and gives every one back; with none it compiles serially. The cubin is
/// the same either way.
#[test]
fn make_jobserver_tokens_are_returned() {
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::env::temp_dir().join(format!("kiln-js-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ptx = String::from(".version 8.0\n.target sm_90\n.address_size 64\n");
    for k in 0..6 {
        ptx.push_str(&format!(
            ".visible .entry k{k}(.param .u64 p)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<3>;\n\
             ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n\
             mul.lo.u32 %r2, %r1, {};\nst.global.u32 [%rd2], %r2;\nret;\n}}\n",
            k + 2
        ));
    }
    let src = dir.join("m.ptx");
    std::fs::write(&src, &ptx).unwrap();
    let build = |name: &str, makeflags: Option<String>| {
        let out = dir.join(format!("{name}.cubin"));
        let mut c = Command::new(env!("CARGO_BIN_EXE_kiln"));
        c.env_remove("KILN_JOBS").env_remove("MAKEFLAGS");
        if let Some(m) = makeflags {
            c.env("MAKEFLAGS", m);
        }
        let o = c
            .args(["build", "--arch", "sm_90", "-o"])
            .arg(&out)
            .arg(&src)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(&out).unwrap()
    };
    let plain = build("plain", None);
    for tokens in [0usize, 2] {
        let fifo = dir.join(format!("fifo{tokens}"));
        let _ = std::fs::remove_file(&fifo);
        assert!(
            Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // Kept open: a FIFO's bytes last only while a descriptor does. O_NONBLOCK (Linux).
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(0o4000)
            .open(&fifo)
            .unwrap();
        f.write_all(&vec![b'+'; tokens]).unwrap();
        let flags = format!("-j3 --jobserver-auth=fifo:{}", fifo.display());
        assert_eq!(
            build(&format!("js{tokens}"), Some(flags)),
            plain,
            "{tokens} tokens"
        );
        let mut buf = [0u8; 16];
        let back = f.read(&mut buf).unwrap_or(0);
        assert_eq!(back, tokens, "tokens given back");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The occupancy line is at the kernel's `.reqntid` or `.maxntid` when it declares one, and
/// `kiln ptxas -v` prints none (ptxas prints no occupancy).
#[test]
fn occupancy_at_the_declared_block_size() {
    let src = tmp("occupancy.ptx");
    let body = "{\n    .reg .b32 %r<3>; .reg .b64 %rd<3>;\n    ld.param.u64 %rd1, [a];\n    \
                cvta.to.global.u64 %rd2, %rd1;\n    mov.u32 %r1, %tid.x;\n    \
                st.global.u32 [%rd2], %r1;\n    ret;\n}\n";
    std::fs::write(
        &src,
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry req(.param .u64 a) .reqntid 32, 2\n{body}\
             .visible .entry max(.param .u64 a) .maxntid 1024\n{body}"
        ),
    )
    .unwrap();
    let out_path = tmp("occupancy.cubin");
    let out = kiln(&[
        "build",
        "--arch",
        "sm_90",
        "-v",
        "-o",
        out_path.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.contains("Occupancy")).collect();
    // 64 threads: 2 warps a block, 32 blocks (the most an sm_90 SM holds) = 64 warps;
    // 1024 threads: 32 warps a block, 2 blocks.
    assert_eq!(
        lines,
        [
            "kiln info    : Occupancy 100% at 64 threads (.reqntid): 32 blocks, 64 of 64 warps \
             per SM, limited by warps, blocks",
            "kiln info    : Occupancy 100% at 1024 threads (.maxntid): 2 blocks, 64 of 64 warps \
             per SM, limited by warps",
        ],
        "{stdout}"
    );
    let out = kiln(&[
        "ptxas",
        "-arch=sm_90",
        "-v",
        "-o",
        out_path.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Used "), "{stderr}");
    assert!(!stderr.to_lowercase().contains("occupancy"), "{stderr}");
}
