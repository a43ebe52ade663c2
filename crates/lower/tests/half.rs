//! Packed half-precision arithmetic (`half.rs`): ptxas's forms per SM, and the refusals.

use syntax::SyntaxKind;

/// The kernel's instructions (those starting with `prefix`), one a line.
fn lower_with(body: &str, sm: u32, prefix: &str) -> Result<String, String> {
    let text = format!(
        ".version 8.0\n.target sm_{sm}\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<8>;\n.reg .b16 %rs<4>;\n.reg .f32 %f<4>;\n{body}\nret;\n}}\n"
    );
    let parse = syntax::parse(&text);
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
    .map_err(|e| e.message)?;
    ir::verify(&l.func).unwrap();
    let text = ir::print(&l.func, None);
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(prefix) && !l.ends_with(':') && !l.starts_with("func"))
        .map(|l| format!("{l}\n"))
        .collect())
}

fn lower(body: &str, sm: u32) -> Result<String, String> {
    lower_with(body, sm, "H")
}

const ARITH: &str = "add.f16x2 %r3, %r1, %r2;\nsub.rn.f16x2 %r4, %r1, %r2;\n\
    mul.f16x2 %r5, %r1, %r2;\nfma.rn.f16x2 %r6, %r1, %r2, %r3;\n\
    fma.rn.bf16x2 %r7, %r1, %r2, %r3;";

#[test]
fn f16x2_forms_sm80() {
    expect_test::expect![[r#"
        HADD2 %r3, %r1, %r2
        HADD2 %r4, %r1, -%r2
        HMUL2 %r5, %r1, %r2
        HFMA2.MMA %r6, %r1, %r2, %r3
        HFMA2.BF16_V2 %r7, %r1, %r2, %r3
    "#]]
    .assert_eq(&lower(ARITH, 80).unwrap());
}

#[test]
fn f16x2_forms_sm90() {
    let bf = "add.bf16x2 %r3, %r1, %r2;\nsub.bf16x2 %r4, %r1, %r2;\nmul.rn.bf16x2 %r5, %r1, %r2;";
    expect_test::expect![[r#"
        HADD2 %r3, %r1, %r2
        HADD2 %r4, %r1, -%r2
        HMUL2 %r5, %r1, %r2
        HFMA2 %r6, %r1, %r2, %r3
        HFMA2.BF16_V2 %r7, %r1, %r2, %r3
        HADD2.BF16_V2 %r3, %r1, %r2
        HADD2.BF16_V2 %r4, %r1, -%r2
        HMUL2.BF16_V2 %r5, %r1, %r2
    "#]]
    .assert_eq(&lower(&format!("{ARITH}\n{bf}"), 90).unwrap());
}

#[test]
fn f16_registers_hold_halves() {
    let body = "{ .reg .f16 lo, hi;\nmov.b32 {lo, hi}, %r1;\nmov.b16 %rs1, hi;\n\
        cvt.rn.f16.f32 lo, %f1;\nmov.b32 %r2, {lo, hi}; }\ncvt.f32.f16 %f2, %rs1;";
    expect_test::expect![[r#"
        LDC R1, c[0x0][0x28]
        SHF.R.U32.HI v18, RZ, 0x10, %r1
        MOV v19, %r1
        MOV lo, v19
        MOV hi, v18
        MOV %rs1, hi
        F2FP.F16.F32.PACK_AB lo, RZ, %f1
        MOV v20, 0x5410
        PRMT %r2, lo, v20, hi
        HADD2.F32 %f2, -RZ, %rs1.H0_H0
        EXIT
    "#]]
    .assert_eq(&lower_with(body, 90, "").unwrap());
}

#[test]
fn refusals() {
    let e = |body: &str, sm| lower(body, sm).unwrap_err();
    assert_eq!(
        e("add.bf16x2 %r3, %r1, %r2;", 80),
        "unsupported: add.bf16x2 before sm_90"
    );
}

/// Forms the half family has no code for come from ptxas's learned code (`data/ops.tsv`,
/// checked against the oracle by `cargo xtask isa-forms`): the mnemonic ptxas uses appears.
#[test]
fn other_forms_lower_from_the_learned_table() {
    for (body, sm, sass) in [
        ("add.ftz.f16x2 %r3, %r1, %r2;", 90, "HFMA2.MMA.FTZ"),
        ("fma.rn.sat.f16x2 %r3, %r1, %r2, %r1;", 90, "HFMA2.MMA.SAT"),
        (
            "fma.rn.relu.bf16x2 %r3, %r1, %r2, %r1;",
            90,
            "HFMA2.MMA.BF16_V2.RELU",
        ),
        (
            "fma.rn.relu.bf16x2 %r3, %r1, %r2, %r1;",
            80,
            "HFMA2.BF16_V2.RELU",
        ),
        ("neg.f16x2 %r3, %r1;", 90, "HADD2"),
        ("add.f16 %rs1, %rs2, %rs3;", 90, "HADD2"),
    ] {
        let code = lower(body, sm).unwrap_or_else(|e| panic!("{body} on sm_{sm}: {e}"));
        assert!(
            code.lines()
                .any(|l| l.trim().starts_with(&format!("{sass} "))),
            "{body} on sm_{sm}: no {sass} in\n{code}"
        );
    }
}
