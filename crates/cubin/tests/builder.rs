//! Builder tests that need no oracle (the oracle checks are in `tests/oracle.rs`).

use cubin::builder::{
    Builder, CodeReloc, Constant, Function, Global, Kernel, Param, R_CUDA_64, param_base,
};
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
        assert_eq!(back.section(".nv.compat").is_some(), sm >= 90);
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
