//! Builder tests that need no oracle (the oracle checks are in `tests/oracle.rs`).

use cubin::builder::{Builder, CodeReloc, Constant, Function, Global, Kernel, Param, R_CUDA_64};
use cubin::eiattr::{AttrValue, code};
use cubin::{SectionData, sht};

fn program(sm: u32) -> Builder {
    let mut b = Builder::new(sm);
    b.kernels.push(Kernel {
        name: "k".into(),
        code: vec![0; 64],
        params: vec![Param { size: 4, align: 4 }, Param { size: 8, align: 8 }],
        registers: 12,
        shared_size: 512,
        local_size: 24,
        frame_size: 16,
        exit_offsets: vec![0x30],
        s2rctaid_offsets: vec![0x10],
        reqntid: Some([128, 1, 1]),
        relocs: vec![CodeReloc {
            offset: 0x20,
            symbol: "g".into(),
            rtype: 0x39,
            addend: 4,
        }],
        ..Kernel::default()
    });
    b.functions.push(Function {
        name: "f".into(),
        code: vec![0; 32],
        registers: 6,
        ..Function::default()
    });
    b.globals.push(Global {
        name: "g".into(),
        size: 8,
        align: 8,
        init: Some(vec![7; 8]),
    });
    b.globals.push(Global {
        name: "z".into(),
        size: 16,
        align: 4,
        init: None,
    });
    b.constants.push(Constant {
        name: "c".into(),
        align: 4,
        bytes: vec![1, 2, 3, 4],
    });
    b.address_table = vec!["z".into(), "g".into()];
    b
}

#[test]
fn built_cubin_round_trips_and_has_the_facts() {
    for sm in [75, 80, 86, 89, 90, 100, 120] {
        let c = program(sm).build().unwrap();
        let bytes = cubin::write(&c);
        let back = cubin::read(&bytes).unwrap();
        assert_eq!(back, c, "sm_{sm}: read(write(c)) == c");
        assert_eq!(back.header.sm(), sm);
        let k = back.symbols().iter().find(|s| s.name == "k").unwrap();
        assert!(k.is_entry());
        assert_eq!(k.size, 64);
        let f = back.symbols().iter().find(|s| s.name == "f").unwrap();
        assert!(!f.is_entry());
        let SectionData::Attributes(r) = &back.section(".nv.info.k").unwrap().data else {
            panic!()
        };
        let pc = r
            .iter()
            .find(|r| r.code == code::PARAM_CBANK)
            .unwrap()
            .value();
        assert!(
            matches!(pc, AttrValue::ParamCbank { offset, size: 16, .. } if u32::from(offset) == param_base(sm))
        );
        assert_eq!(
            back.section(".nv.constant0.k").unwrap().size(),
            u64::from(param_base(sm)) + 16
        );
        assert_eq!(back.section(".nv.shared.k").unwrap().size(), 512);
        let facts = back.functions();
        let kf = facts.iter().find(|f| f.name == "k").unwrap();
        assert_eq!(
            (kf.registers, kf.frame_size, kf.shared_size, kf.local_size),
            (Some(12), Some(16), 512, 24)
        );
        assert_eq!(
            (kf.exit_offsets.clone(), kf.s2rctaid_offsets.clone()),
            (vec![0x30], vec![0x10])
        );
        assert_eq!(kf.reqntid, Some([128, 1, 1]));
        assert_eq!(kf.params.len(), 2);
        assert_eq!(back.section(".nv.global").unwrap().sh_type, sht::NOBITS);
        let SectionData::Relocs { relocs, .. } = &back.section(".rela.text.k").unwrap().data else {
            panic!()
        };
        let g = back.symbols().iter().position(|s| s.name == "g").unwrap() as u32;
        assert_eq!(
            (
                relocs[0].offset,
                relocs[0].sym,
                relocs[0].rtype,
                relocs[0].addend
            ),
            (0x20, g, 0x39, 4)
        );
        // The address table: one 8-byte slot per variable, filled by R_CUDA_64 relocations
        // (ptxas's `.nv.constant4` / `.rela.nv.constant4`).
        assert_eq!(back.section(".nv.constant4").unwrap().size(), 16);
        let SectionData::Relocs { relocs, .. } = &back.section(".rela.nv.constant4").unwrap().data
        else {
            panic!()
        };
        let z = back.symbols().iter().position(|s| s.name == "z").unwrap() as u32;
        let table: Vec<_> = relocs.iter().map(|r| (r.offset, r.sym, r.rtype)).collect();
        assert_eq!(table, vec![(0, z, R_CUDA_64), (8, g, R_CUDA_64)]);
        // ptxas 13.0.88 writes `.nv.compat` for sm_90, sm_100 and sm_120.
        assert_eq!(
            back.section(".nv.compat").is_some(),
            matches!(sm, 90 | 100 | 120)
        );
        assert!(back.layout_is_rule_based());
    }
}

#[test]
fn builder_rejects_bad_input() {
    let mut b = program(90);
    b.kernels[0].relocs[0].symbol = "nope".into();
    assert!(b.build().unwrap_err().0.contains("unknown symbol `nope`"));
    let mut b = program(90);
    b.functions[0].name = "k".into();
    assert!(b.build().unwrap_err().0.contains("defined twice"));
}

#[test]
fn reserved_smem_attribute_and_resolved_symbols() {
    use cubin::builder::ReservedSymbol;
    let kernel = |name: &str, used: bool, resolved: Vec<ReservedSymbol>| Kernel {
        name: name.into(),
        code: vec![0; 32],
        params: vec![Param { size: 8, align: 8 }],
        reserved_smem_used: used,
        reserved_smem_resolved: resolved,
        ..Kernel::default()
    };
    for sm in [80, 90] {
        let mut b = Builder::new(sm);
        b.kernels = vec![
            kernel(
                "a",
                true,
                vec![ReservedSymbol::Offset0, ReservedSymbol::Begin],
            ),
            kernel("b", false, vec![]),
            kernel("c", true, vec![ReservedSymbol::Begin, ReservedSymbol::Cap]),
        ];
        let c = b.build().unwrap();
        let back = cubin::read(&cubin::write(&c)).unwrap();
        assert_eq!(back, c);
        for (k, used) in [("a", true), ("b", false), ("c", true)] {
            let SectionData::Attributes(r) = &back.section(&format!(".nv.info.{k}")).unwrap().data
            else {
                panic!()
            };
            let codes: Vec<u8> = r.iter().map(|r| r.code).collect();
            // ptxas's place: right after the KPARAM_INFO records, before MAXREG_COUNT.
            let want: Vec<u8> = if used {
                vec![
                    code::CUDA_API_VERSION,
                    code::KPARAM_INFO,
                    0x41,
                    code::MAXREG_COUNT,
                ]
            } else {
                vec![
                    code::CUDA_API_VERSION,
                    code::KPARAM_INFO,
                    code::MAXREG_COUNT,
                ]
            };
            assert_eq!(&codes[..want.len()], &want[..], "sm_{sm} {k}");
            let f = back.functions().into_iter().find(|f| f.name == k).unwrap();
            assert_eq!(f.reserved_smem_used, used);
        }
        // Symbols after each text section symbol, up to the next section symbol.
        let syms = back.symbols();
        let after = |sec: &str| -> Vec<(String, u8, u8)> {
            let i = syms.iter().position(|s| s.name == sec).unwrap();
            syms[i + 1..]
                .iter()
                .take_while(|s| s.info != 0x03)
                .map(|s| (s.name.clone(), s.info, s.other))
                .collect()
        };
        let blank = (String::new(), 0, 1);
        let alias = ("__nv_reservedSMEM_offset_0_alias".to_string(), 0x20, 0xa0);
        if matches!(sm, 90) {
            // offset0 blanked in place, begin after `a` (its first user), cap after `c`.
            assert_eq!(after(".text.a"), vec![blank.clone(), alias, blank.clone()]);
            assert_eq!(after(".text.b"), vec![]);
            assert_eq!(after(".text.c"), vec![blank]);
            for (k, rela) in [("a", true), ("b", false), ("c", true)] {
                let s = back.section(&format!(".rela.text.{k}"));
                assert_eq!(s.is_some(), rela, "{k}");
                if let Some(s) = s {
                    assert!(
                        matches!(&s.data, SectionData::Relocs { relocs, .. } if relocs.is_empty())
                    );
                }
            }
        } else {
            // Before sm_90 nothing is linked: no symbols, no relocation sections.
            assert!(
                syms.iter()
                    .all(|s| !s.name.is_empty() || s.info != 0 || s.other != 1)
            );
            assert!(back.section(".rela.text.a").is_none());
            assert_eq!(after(".text.a"), vec![]);
        }
    }
}

/// The SM's parameter base (`target::Profile`).
fn param_base(sm: u32) -> u32 {
    target::Profile::of(sm).expect("a known SM").param_base
}
