//! Line tables read back by NVIDIA's nvdisasm: for every instruction of kiln's cubin,
//! `nvdisasm -g` (`.debug_line`) reports the source line of the `.loc` in force at its PTX
//! instruction and `nvdisasm -gp` (`.nv_debug_line_sass`) that PTX instruction's line, as
//! `db::kernel_lines` says; each PTX line named holds an instruction. cuobjdump accepts the
//! cubin. Prints `skipping: <reason>` without the tools.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use db::{FileTarget, RootDatabase, Sm, Target, kernel_lines, kernel_targets};

/// Per code section (`.text.<kernel>`), instruction address → the line nvdisasm annotates it
/// with (the last `//## File "...", line N` before it).
fn annotated_lines(listing: &str) -> HashMap<String, HashMap<u64, u32>> {
    let mut out: HashMap<String, HashMap<u64, u32>> = HashMap::new();
    let (mut section, mut line) = (String::new(), None);
    for l in listing.lines() {
        let t = l.trim();
        if let Some(rest) = t.strip_prefix(".section\t") {
            section = rest.split(',').next().unwrap_or("").to_string();
            line = None;
        } else if let Some(rest) = t.strip_prefix("//## File ") {
            line = rest
                .rsplit_once("line ")
                .and_then(|(_, n)| n.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse().ok());
        } else if let Some(rest) = t.strip_prefix("/*")
            && let Some((addr, _)) = rest.split_once("*/")
            && let (Ok(a), Some(n)) = (u64::from_str_radix(addr, 16), line)
        {
            out.entry(section.clone()).or_default().insert(a, n);
        }
    }
    out
}

/// A fresh temporary file for `cubin` (the tests run in parallel).
fn temp_cubin(cubin: &[u8]) -> std::path::PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kiln-lines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("t{n}.cubin"));
    std::fs::write(&path, cubin).unwrap();
    path
}

fn nvdisasm(nvdisasm: &Path, cubin: &[u8], flag: &str) -> String {
    let path = temp_cubin(cubin);
    let out = Command::new(nvdisasm)
        .args(["-c", flag])
        .arg(&path)
        .output()
        .expect("nvdisasm runs");
    assert!(
        out.status.success(),
        "nvdisasm {flag} refused kiln's cubin: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn check_file(rel: &str, sm: &str) {
    let (Some(nvdisasm_bin), Some(cuobjdump)) = (
        test_support::oracle_tool_or_skip("nvdisasm"),
        test_support::oracle_tool_or_skip("cuobjdump"),
    ) else {
        return;
    };
    let Some(path) = test_support::test_data_or_skip(rel) else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let mut db = RootDatabase::default();
    let file = db.add_file(&path, text.as_bytes());
    let target = Target {
        sm: Sm::parse(sm).unwrap(),
        opt_level: 3,
        max_registers: None,
        fmad: true,
    };
    let out = db::cubin(&db, FileTarget::new(&db, file, target.clone()));
    let cubin = out.bytes.as_ref().expect("kiln compiles the file");
    let st = Command::new(cuobjdump)
        .arg("-elf")
        .arg(temp_cubin(cubin))
        .output()
        .unwrap();
    assert!(st.status.success(), "cuobjdump refused the cubin");
    let source = annotated_lines(&nvdisasm(&nvdisasm_bin, cubin, "-g"));
    let ptx = annotated_lines(&nvdisasm(&nvdisasm_bin, cubin, "-gp"));
    let ptx_lines: Vec<&str> = text.lines().collect();
    let mut checked = 0;
    for kt in kernel_targets(&db, file, &target) {
        let name = kt.function(&db).name(&db).clone();
        let section = format!(".text.{name}");
        let rows = &kernel_lines(&db, kt).as_ref().expect("lines").rows;
        for (k, row) in rows.iter().enumerate() {
            let Some(row) = row else { continue };
            let addr = 16 * k as u64;
            assert_eq!(
                ptx.get(&section).and_then(|m| m.get(&addr)),
                Some(&row.ptx_line),
                "{rel} {name} /*{addr:04x}*/: nvdisasm -gp's PTX line"
            );
            let instruction = ptx_lines[row.ptx_line as usize - 1].trim();
            assert!(
                !instruction.is_empty()
                    && !instruction.starts_with("//")
                    && !instruction.starts_with(".loc"),
                "{rel} {name} /*{addr:04x}*/: PTX line {} is `{instruction}`",
                row.ptx_line
            );
            if let Some(loc) = row.loc {
                assert_eq!(
                    source.get(&section).and_then(|m| m.get(&addr)),
                    Some(&loc.line),
                    "{rel} {name} /*{addr:04x}*/: nvdisasm -g's source line"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "{rel}: only {checked} instructions checked");
}

#[test]
fn nvdisasm_reads_kiln_line_tables_sm_90() {
    check_file("unseen/ptx/u_ctrl.sm_90.lineinfo.ptx", "sm_90");
    check_file("unseen/ptx/u_warp.sm_90.lineinfo.ptx", "sm_90");
}

#[test]
fn nvdisasm_reads_kiln_line_tables_sm_80() {
    check_file("unseen/ptx/u_ctrl.sm_80.lineinfo.ptx", "sm_80");
    check_file("unseen/ptx/u_atomics.sm_80.lineinfo.ptx", "sm_80");
}

/// The byte sections of a cubin, by name (`cubin::read`).
fn sections(elf: &[u8]) -> HashMap<String, Vec<u8>> {
    cubin::read(elf)
        .expect("a readable cubin")
        .sections
        .into_iter()
        .filter_map(|s| match s.data {
            cubin::SectionData::Bytes(b) => Some((s.name, b)),
            _ => None,
        })
        .collect()
}

fn kiln_cubin(path: &Path, sm: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut db = RootDatabase::default();
    let file = db.add_file(path, text.as_bytes());
    db.stamp_source_files(file);
    let target = Target {
        sm: Sm::parse(sm).unwrap(),
        opt_level: 3,
        max_registers: None,
        fmad: true,
    };
    db::cubin(&db, FileTarget::new(&db, file, target))
        .bytes
        .clone()
        .expect("kiln compiles the file")
}

const LINE_SECTIONS: [&str; 3] = [".debug_line", ".nv_debug_line_sass", ".nv_debug_ptx_txt"];

/// Where kiln's instructions equal ptxas's (an empty kernel: the prologue and `EXIT`), the three line
/// sections are byte-identical to ptxas 13.0.88's, on sm_80 (a bare `advance_pc` where `ret`
/// repeats the start line) and sm_90.
#[test]
fn line_sections_equal_ptxas_where_the_code_is_equal() {
    for sm in ["sm_80", "sm_90"] {
        let Some(path) = test_support::test_data_or_skip(&format!("lines/empty.{sm}.ptx")) else {
            return;
        };
        let Some(theirs) = test_support::ptxas_cubin(&path, sm, &[]) else {
            return;
        };
        let (ours, theirs) = (sections(&kiln_cubin(&path, sm)), sections(&theirs));
        // The same instructions at the same addresses (control codes aside: the stalls may
        // differ).
        let instructions = |code: &[u8]| -> Vec<u128> {
            code.chunks_exact(16)
                .map(|c| u128::from_le_bytes(c.try_into().unwrap()) & ((1u128 << 105) - 1))
                .collect()
        };
        assert_eq!(
            instructions(&ours[".text._Z5emptyv"]),
            instructions(&theirs[".text._Z5emptyv"]),
            "{sm}: the code"
        );
        for s in LINE_SECTIONS {
            assert_eq!(ours[s], theirs[s], "{sm}: {s}");
        }
    }
}

/// On a hand-made module (`.file` indices out of order, a directory, a root file, a directive
/// timestamp, `.loc` with line 0, trailing comments, two kernels) kiln's `.nv_debug_ptx_txt`
/// and `.debug_line` header (directories and files, up to the line program) equal ptxas's.
#[test]
fn line_table_headers_and_ptx_text_equal_ptxas() {
    for sm in ["sm_80", "sm_90"] {
        let Some(path) = test_support::test_data_or_skip(&format!("lines/handmade.{sm}.ptx"))
        else {
            return;
        };
        let Some(theirs) = test_support::ptxas_cubin(&path, sm, &[]) else {
            return;
        };
        let (ours, theirs) = (sections(&kiln_cubin(&path, sm)), sections(&theirs));
        assert_eq!(
            ours[".nv_debug_ptx_txt"], theirs[".nv_debug_ptx_txt"],
            "{sm}: .nv_debug_ptx_txt"
        );
        let header = |s: &[u8]| {
            let length = u32::from_le_bytes(s[6..10].try_into().unwrap()) as usize;
            s[4..10 + length].to_vec()
        };
        assert_eq!(
            header(&ours[".debug_line"]),
            header(&theirs[".debug_line"]),
            "{sm}: .debug_line's header"
        );
    }
}
