//! The lowering of the SAXPY example, printed before register allocation (reviewed by hand
//! against ptxas's SASS for the same PTX: same operations, register-register forms).

use syntax::SyntaxKind;

fn lower_saxpy(sm: u32) -> String {
    let text = include_str!("../../../test-data/examples/saxpy.ptx");
    let parse = syntax::parse(text);
    let function = parse
        .syntax_node()
        .children()
        .find(|n| n.kind() == SyntaxKind::FUNCTION)
        .unwrap();
    let l = lower::lower_kernel(
        &function,
        lower::LowerTarget::for_sm(sm, true),
        &lower::ModuleVars::default(),
        &lower::Functions::default(),
    )
    .unwrap();
    ir::verify(&l.func).unwrap();
    ir::print(&l.func, None)
}

#[test]
fn saxpy_sm80() {
    expect_test::expect![[r#"
        func saxpy
        bb0:
            MOV R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x118]
            MOV %r2, c[0x0][0x160]
            MOV %f1, c[0x0][0x164]
            MOV %rd1.0, c[0x0][0x168]
            MOV %rd1.1, c[0x0][0x16c]
            MOV %rd2.0, c[0x0][0x170]
            MOV %rd2.1, c[0x0][0x174]
            S2R %r3, SR_CTAID.X
            MOV %r4, c[0x0][0x0]
            S2R %r5, SR_TID.X
            IMAD %r1, %r3, %r4, %r5
            ISETP.GE.AND %p1, PT, %r1, %r2, PT
            @%p1 BRA bb2
        bb1:
            MOV %rd3.0, %rd2.0
            MOV %rd3.1, %rd2.1
            MOV %rd4.0, %rd1.0
            MOV %rd4.1, %rd1.1
            MOV v21, 0x4
            IMAD.WIDE %rd5.0, %r1, v21, RZ
            IADD3 %rd6.0, v22, %rd4.0, %rd5.0, RZ
            IADD3.X %rd6.1, %rd4.1, %rd5.1, RZ, v22, !PT
            LDG.E.CONSTANT %f2, [%rd6.0.64]
            IADD3 %rd7.0, v23, %rd3.0, %rd5.0, RZ
            IADD3.X %rd7.1, %rd3.1, %rd5.1, RZ, v23, !PT
            LDG.E %f3, [%rd7.0.64]
            FFMA %f4, %f2, %f1, %f3
            STG.E [%rd7.0.64], %f4
        bb2:
            EXIT
    "#]]
    .assert_eq(&lower_saxpy(80));
}

/// `%envregN`: constant-bank words whose offsets were read from ptxas 13.0.88's code for the
/// same PTX (`MOV R5, c[0x0][0x90]` on sm_80, `LDC R5, c[0x0][0x48]` on sm_90 for
/// `%envreg2`; `c[0x0][0x88]` / `c[0x0][0x40]` for `%envreg0`).
#[test]
fn envregs_read_ptxas_constant_bank_words() {
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>;\n.reg .b64 %q<2>;\n\
        ld.param.u64 %q1, [p];\nmov.u32 %r1, %envreg2;\nmov.u32 %r2, %envreg0;\n\
        st.global.u32 [%q1], %r1;\nst.global.u32 [%q1+4], %r2;\nret;\n}\n";
    for (sm, words) in [
        (80, ["c[0x0][0x90]", "c[0x0][0x88]"]),
        (90, ["c[0x0][0x48]", "c[0x0][0x40]"]),
    ] {
        let parse = syntax::parse(text);
        let function = parse
            .syntax_node()
            .children()
            .find(|n| n.kind() == SyntaxKind::FUNCTION)
            .unwrap();
        let l = lower::lower_kernel(
            &function,
            lower::LowerTarget::for_sm(sm, true),
            &lower::ModuleVars::default(),
            &lower::Functions::default(),
        )
        .unwrap();
        let printed = ir::print(&l.func, None);
        let r1 = printed.find(&format!("%r1, {}", words[0]));
        let r2 = printed.find(&format!("%r2, {}", words[1]));
        assert!(r1.is_some() && r2.is_some(), "sm_{sm}:\n{printed}");
    }
}
