//! Tests on committed ptxas cubins and cuobjdump listings (no oracle needed).

use std::path::PathBuf;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn fixtures() -> Vec<(String, Vec<u8>, String)> {
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(data_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cubin"))
        .collect();
    names.sort();
    for n in names {
        let bytes = std::fs::read(data_dir().join(&n)).unwrap();
        let listing =
            std::fs::read_to_string(data_dir().join(format!("{n}.cuobjdump-elf.txt"))).unwrap();
        out.push((n, bytes, listing));
    }
    assert!(out.len() >= 4);
    out
}

#[test]
fn read_write_is_byte_identical() {
    for (name, bytes, _) in fixtures() {
        let c = cubin::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(c.layout_is_rule_based(), "{name}");
        assert_eq!(cubin::write(&c), bytes, "{name}");
    }
}

#[test]
fn listing_equals_cuobjdump() {
    for (name, bytes, theirs) in fixtures() {
        let c = cubin::read(&bytes).unwrap();
        cubin::listing::compare_with_cuobjdump(&c, &theirs)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn model_facts() {
    let c = cubin::read(&std::fs::read(data_dir().join("copy.sm_90.cubin")).unwrap()).unwrap();
    assert_eq!(c.header.sm(), 90);
    assert_eq!(c.header.os_abi, cubin::ELFOSABI_CUDA);
    assert_eq!(c.header.abi_version, 8);
    let entry: Vec<_> = c.symbols().iter().filter(|s| s.is_entry()).collect();
    assert_eq!(entry.len(), 1);
    assert_eq!(entry[0].name, "copy");
    // ptxas 13.0 writes REGCOUNT into the global .nv.info.
    let cubin::SectionData::Attributes(recs) = &c.section(".nv.info").unwrap().data else {
        panic!()
    };
    assert!(recs.iter().any(|r| r.code == cubin::eiattr::code::REGCOUNT));
    let r =
        cubin::read(&std::fs::read(data_dir().join("copy.sm_80.reloc.cubin")).unwrap()).unwrap();
    assert_eq!(r.header.e_type, 1);
    let m = cubin::read(&std::fs::read(data_dir().join("call_rnd.sm_100.lineinfo.cubin")).unwrap())
        .unwrap();
    assert!(m.section(".nv.capmerc.text.call_rnd").is_some());
    assert!(
        m.sections
            .iter()
            .any(|s| matches!(s.placement, cubin::Placement::Alias(_)))
    );
}

/// Every truncation of every fixture is rejected with an error (or, for lengths that still
/// hold every referenced byte, read) — never a panic.
#[test]
fn truncations_never_panic() {
    for (name, bytes, _) in fixtures() {
        for len in 0..bytes.len() {
            let r =
                std::panic::catch_unwind(|| cubin::read(&bytes[..len]).map(|c| cubin::write(&c)));
            assert!(r.is_ok(), "{name}: panic at length {len}");
        }
        assert!(cubin::read(&bytes[..100]).is_err(), "{name}");
    }
}

/// Single-byte corruptions at every offset of the ELF header and the section header table.
#[test]
fn header_corruptions_never_panic() {
    for (name, bytes, _) in fixtures() {
        let shoff = u64::from_le_bytes(bytes[0x28..0x30].try_into().unwrap()) as usize;
        let spots = (0..64).chain(shoff..bytes.len().min(shoff + 64 * 40));
        for at in spots {
            for v in [0u8, 0xff, 0x80, 0x01] {
                let mut d = bytes.clone();
                if at < d.len() {
                    d[at] = v;
                }
                let r = std::panic::catch_unwind(|| {
                    if let Ok(c) = cubin::read(&d) {
                        let _ = cubin::listing::listing(&c);
                        let _ = cubin::write(&c);
                    }
                });
                assert!(r.is_ok(), "{name}: panic with byte {at:#x} = {v:#x}");
            }
        }
    }
}

#[test]
fn clear_errors() {
    let e = cubin::read(b"not an elf").unwrap_err();
    assert!(e.message.contains("not a 64-bit ELF"), "{e}");
    let mut b = std::fs::read(data_dir().join("copy.sm_90.cubin")).unwrap();
    b[7] = 0; // OS/ABI
    let e = cubin::read(&b).unwrap_err();
    assert!(e.message.contains("not a CUDA ELF"), "{e}");
}

/// The comparison notices a changed value, a dropped record and a changed callgraph edge.
#[test]
fn comparison_is_strict() {
    let (_, bytes, theirs) = fixtures()
        .into_iter()
        .find(|(n, _, _)| n == "copy.sm_90.cubin")
        .unwrap();
    let c = cubin::read(&bytes).unwrap();
    assert!(cubin::listing::compare_with_cuobjdump(&c, &theirs).is_ok());
    for (from, to) in [
        ("register count: 10", "register count: 11"),
        ("EIATTR_MAXREG_COUNT", "EIATTR_MAXREG_COUNTX"),
        (" <0,-3>\n", ""),
        (".nv.constant0.copy\n", ".nv.constant0.cpy\n"),
        ("flags=0x6005a04", "flags=0x6005a05"),
    ] {
        assert!(theirs.contains(from), "{from}");
        let changed = theirs.replacen(from, to, 1);
        assert!(
            cubin::listing::compare_with_cuobjdump(&c, &changed).is_err(),
            "change {from:?} -> {to:?} not noticed"
        );
    }
}

/// Function facts agree with the values in the committed cuobjdump listing of copy.sm_90
/// (`register count: 10`, parameters at 0x0/0x8/0x10 of sizes 8/8/4, `PARAM_CBANK 0x9
/// 0x140210`, `EXIT_INSTR_OFFSETS 0x40 0xc0`).
#[test]
fn function_facts() {
    let c = cubin::read(&std::fs::read(data_dir().join("copy.sm_90.cubin")).unwrap()).unwrap();
    let f = c.functions();
    assert_eq!(f.len(), 1);
    let k = &f[0];
    assert_eq!(
        (k.name.as_str(), k.is_entry, k.code_size),
        ("copy", true, 0x180)
    );
    assert_eq!(k.registers, Some(10));
    assert_eq!((k.frame_size, k.min_stack_size), (Some(0), Some(0)));
    let p: Vec<_> = k
        .params
        .iter()
        .map(|p| (p.ordinal, p.offset, p.size))
        .collect();
    assert_eq!(p, vec![(0, 0, 8), (1, 8, 8), (2, 0x10, 4)]);
    assert_eq!(k.param_block, Some((0x210, 0x14)));
    assert_eq!(k.exit_offsets, vec![0x40, 0xc0]);
    assert_eq!(k.shared_size, 0);
}

/// Cubins of CUDA 12.x toolkits (OS/ABI 0x33, ABI version 7, the SM in `e_flags` bits 0..8):
/// what the ptxas bundled with Triton 3.6 wrote for sm_90a (`tests/data/cuda12/`, from
/// `../shared/hardware/h100-2026-11-27/triton/`). They read, name their SM, write back byte
/// for byte and list as cuobjdump lists them (`64bit elf: ... sm=90a, toolkit=128`: the
/// toolkit is the header's `e_version`, the `a` is `e_flags` bit 11).
#[test]
fn cuda12_cubins_read_write_back_and_list() {
    let dir = data_dir().join("cuda12");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".cubin") {
            continue;
        }
        let bytes = std::fs::read(e.path()).unwrap();
        let c = cubin::read(&bytes).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(c.header.os_abi, cubin::ELFOSABI_CUDA_V1, "{name}");
        assert_eq!(c.header.abi_version, 7, "{name}");
        assert_eq!(c.header.sm(), 90, "{name}");
        assert_eq!(c.arch_name(), "90a", "{name}");
        assert_eq!(cubin::write(&c), bytes, "{name}");
        let theirs =
            std::fs::read_to_string(dir.join(format!("{name}.cuobjdump-elf.txt"))).unwrap();
        cubin::listing::compare_with_cuobjdump(&c, &theirs)
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        n += 1;
    }
    assert_eq!(n, 2);
}
