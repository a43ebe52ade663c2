//! The SAXPY example lowered and optimized, printed before register allocation. Reviewed by
//! hand against ptxas 13.0.88's SASS for the same PTX (`ptxas -arch=sm_XX`, `nvdisasm -c`):
//! the same operations and operand forms (`IMAD` with the `c[0x0][0x0]` / uniform `%ntid.x`,
//! `ISETP` against the parameter, `IMAD.WIDE` with the immediate 4 and the pointer as addend,
//! `FFMA` reading the scalar from the constant bank or a uniform register, the early
//! `@P0 EXIT`); ptxas on sm_80 materializes the 4 in a register to use the pointer as a
//! `c[][]` addend.

mod common;

fn optimized(sm: u32) -> String {
    common::lower_and_optimize(include_str!("../../../test-data/examples/saxpy.ptx"), sm)
}

#[test]
fn saxpy_sm80() {
    expect_test::expect![[r#"
        func saxpy
        bb0:
            MOV R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x118]
            S2R %r3, SR_CTAID.X
            S2R %r5, SR_TID.X
            IMAD %r1, %r3, c[0x0][0x0], %r5
            ISETP.GE.AND %p1, PT, %r1, c[0x0][0x160], PT
            MOV v30, 0x4
            IMAD.WIDE %rd6.0, %r1, v30, c[0x0][0x168]
            @!%p1 LDG.E.CONSTANT %f2, [%rd6.0.64]
            IMAD.WIDE %rd7.0, %r1, v30, c[0x0][0x170]
            @!%p1 LDG.E %f3, [%rd7.0.64]
            @!%p1 FFMA %f4, %f2, c[0x0][0x164], %f3
            @!%p1 STG.E [%rd7.0.64], %f4
            EXIT
    "#]]
    .assert_eq(&optimized(80));
}

#[test]
fn saxpy_sm90() {
    expect_test::expect![[r#"
        func saxpy
        bb0:
            LDC R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x208]
            S2R %r3, SR_CTAID.X
            S2R %r5, SR_TID.X
            IMAD %r1, %r3, c[0x0][0x0], %r5
            ISETP.GE.AND %p1, PT, %r1, c[0x0][0x210], PT
            MOV v30, 0x4
            IMAD.WIDE %rd6.0, %r1, v30, c[0x0][0x218]
            @!%p1 LDG.E.CONSTANT %f2, desc[UR4][%rd6.0.64]
            IMAD.WIDE %rd7.0, %r1, v30, c[0x0][0x220]
            @!%p1 LDG.E %f3, desc[UR4][%rd7.0.64]
            @!%p1 FFMA %f4, %f2, c[0x0][0x214], %f3
            @!%p1 STG.E desc[UR4][%rd7.0.64], %f4
            EXIT
    "#]]
    .assert_eq(&optimized(90));
}
