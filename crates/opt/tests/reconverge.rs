//! Convergence barriers and if-conversion on small kernels (`test-data/reconverge/regions.ptx`),
//! printed after optimization. Each was compared with ptxas 13.0.88's SASS for the same file
//! (`ptxas -arch=sm_90`, `nvdisasm -c`):
//! * `if_then`: ptxas keeps the branch over the load (`BSSY B0` before the branch on `%tid.x`,
//!   `BSYNC B0` at the join); kiln predicates the load (`@!P LDG`), one region and three
//!   instructions fewer;
//! * `loop_exit` (trip count from `%tid.x`): `BSSY B0` before the loop, `BSYNC B0` after it;
//! * `uniform_loop` (trip count a parameter): no barrier;
//! * `early_exit`: `@P0 EXIT`, no barrier, and neither a `WARPSYNC` before the `BAR.SYNC`
//!   nor before the `SHFL` (the warp's remaining lanes are converged);
//! * `nested` (two branches meeting at one block): one `BSSY B0`/`BSYNC B0` for both, no
//!   `WARPSYNC` before the `SHFL` after it (ptxas keeps the inner branch over the load; kiln
//!   predicates it);
//! * `if_else`: both sides predicated (`@!P0 LDG`/`@P0 LDG`), no branch, no barrier;
//! * `guarded_loop` (a zero-trip test and a loop on a loaded count): ptxas `BSSY B0` before
//!   the test, `BSYNC B0` where both end (and `B1` around its unrolled loop); kiln one
//!   region for both;
//! * `shfl_under_branch`: the branch around a shuffle stays (collectives are never
//!   predicated), with no region: its `WARPSYNC.ALL` joins the warp (as ptxas writes it).

use syntax::SyntaxKind;

fn optimized(name: &str) -> String {
    let text = include_str!("../../../test-data/reconverge/regions.ptx");
    let parse = syntax::parse(text);
    let function = parse
        .syntax_node()
        .children()
        .filter(|n| n.kind() == SyntaxKind::FUNCTION)
        .find(|n| n.text().to_string().contains(&format!(".entry {name}(")))
        .unwrap();
    let mut l = lower::lower_kernel(
        &function,
        lower::LowerTarget::for_sm(90, true),
        &lower::ModuleVars::default(),
        &lower::Functions::default(),
    )
    .unwrap();
    opt::optimize(&mut l.func, target::Profile::of(90).unwrap(), 3);
    ir::verify(&l.func).unwrap();
    ir::print(&l.func, None)
}

#[test]
fn if_then() {
    expect_test::expect![[r#"
        func if_then
        bb0:
            LDC R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x208]
            S2R %r1, SR_TID.X
            MOV %r2, RZ
            ISETP.GE.U32.AND %p1, PT, %r1, 0x10, PT
            MOV v27, 0x4
            IMAD.WIDE.U32 %rd3.0, %r1, v27, c[0x0][0x210]
            @!%p1 LDG.E %r2, desc[UR4][%rd3.0.64]
            MOV v28, 0x4
            IMAD.WIDE.U32 %rd3.0, %r1, v28, c[0x0][0x210]
            STG.E desc[UR4][%rd3.0.64+0x100], %r2
            EXIT
    "#]]
    .assert_eq(&optimized("if_then"));
}

#[test]
fn loop_exit() {
    expect_test::expect![[r#"
        func loop_exit
        bb0:
            LDC R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x208]
            S2R %r1, SR_TID.X
            MOV %r2, RZ
            MOV %r3, RZ
            BSSY B0, bb3
        bb1:
            IADD3 %r2, %r2, %r3, RZ
            IADD3 %r3, %r3, 0x1, RZ
            ISETP.LT.U32.AND %p1, PT, %r3, %r1, PT
            @%p1 BRA bb1
        bb2:
            BSYNC B0
        bb3:
            MOV v23, 0x4
            IMAD.WIDE.U32 %rd3.0, %r1, v23, c[0x0][0x210]
            STG.E desc[UR4][%rd3.0.64], %r2
            EXIT
    "#]]
    .assert_eq(&optimized("loop_exit"));
}

#[test]
fn uniform_loop() {
    expect_test::expect![[r#"
        func uniform_loop
        bb0:
            LDC R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x208]
            S2R %r1, SR_TID.X
            MOV %r2, RZ
            MOV %r3, RZ
        bb1:
            IADD3 %r2, %r2, %r1, RZ
            IADD3 %r3, %r3, 0x1, RZ
            ISETP.LT.U32.AND %p1, PT, %r3, c[0x0][0x218], PT
            @%p1 BRA bb1
        bb2:
            MOV v23, 0x4
            IMAD.WIDE.U32 %rd3.0, %r1, v23, c[0x0][0x210]
            STG.E desc[UR4][%rd3.0.64], %r2
            EXIT
    "#]]
    .assert_eq(&optimized("uniform_loop"));
}

#[test]
fn early_exit() {
    expect_test::expect![[r#"
        func early_exit
        bb0:
            LDC R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x208]
            S2UR UR7, SR_CgaCtaId
            UMOV UR6, 0x400
            ULEA UR6, UR7, UR6, 0x18
            S2R %r1, SR_TID.X
            ISETP.GE.U32.AND %p1, PT, %r1, 0x28, PT
            @%p1 EXIT
        bb1:
            MOV %r2, UR6
            LEA %r2~1, %r1, %r2, 0x2
            STS [%r2~1], %r1
            BAR.SYNC.DEFER_BLOCKING 0x0
            LDS %r4, [%r2~1+0x4]
            SHFL.BFLY PT, v16, %r4, 0x1, 0x1f
            MOV v26, 0x4
            IMAD.WIDE.U32 %rd3.0, %r1, v26, c[0x0][0x210]
            STG.E desc[UR4][%rd3.0.64], v16
        bb2:
            EXIT
    "#]]
    .assert_eq(&optimized("early_exit"));
}

#[test]
fn nested() {
    expect_test::expect![[r#"
        func nested
        bb0:
            LDC R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x208]
            S2R %r1, SR_TID.X
            MOV v27, 0x4
            IMAD.WIDE.U32 %rd3.0, %r1, v27, c[0x0][0x210]
            LDG.E %r2, desc[UR4][%rd3.0.64]
            ISETP.GE.U32.AND %p1, PT, %r1, 0x10, PT
            BSSY B0, bb3
            @%p1 BRA bb2
        bb1:
            IADD3 %r2, %r2, 0x3, RZ
            ISETP.GE.U32.AND %p2, PT, %r2, 0x9, PT
            @!%p2 LDG.E %r2, desc[UR4][%rd3.0.64+0x4]
        bb2:
            BSYNC B0
        bb3:
            SHFL.BFLY PT, v20, %r2, 0x1, 0x1f
            STG.E desc[UR4][%rd3.0.64], v20
            EXIT
    "#]]
    .assert_eq(&optimized("nested"));
}

#[test]
fn if_else() {
    expect_test::expect![[r#"
        func if_else
        bb0:
            LDC R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x208]
            S2R %r1, SR_TID.X
            MOV v27, 0x4
            IMAD.WIDE.U32 %rd3.0, %r1, v27, c[0x0][0x210]
            ISETP.GE.U32.AND %p1, PT, %r1, 0x10, PT
            @!%p1 LDG.E %r2, desc[UR4][%rd3.0.64]
            @!%p1 IMAD %r2~1, %r2, 0x3, RZ
            @%p1 LDG.E %r2~2, desc[UR4][%rd3.0.64+0x100]
            @%p1 IADD3 %r2~1, %r2~2, -0x7, RZ
            STG.E desc[UR4][%rd3.0.64], %r2~1
            EXIT
    "#]]
    .assert_eq(&optimized("if_else"));
}

#[test]
fn guarded_loop() {
    expect_test::expect![[r#"
        func guarded_loop
        bb0:
            LDC R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x208]
            S2R %r1, SR_TID.X
            MOV v25, 0x4
            IMAD.WIDE.U32 %rd3.0, %r1, v25, c[0x0][0x210]
            LDG.E %r4, desc[UR4][%rd3.0.64]
            MOV %r2, RZ
            MOV %r3, RZ
            ISETP.EQ.U32.AND %p1, PT, %r4, RZ, PT
            BSSY B0, bb5
            @%p1 BRA bb4
        bb1:
        bb2:
            IADD3 %r2, %r2, %r3, RZ
            IADD3 %r3, %r3, 0x1, RZ
            ISETP.LT.U32.AND %p2, PT, %r3, %r4, PT
            @%p2 BRA bb2
        bb3:
        bb4:
            BSYNC B0
        bb5:
            STG.E desc[UR4][%rd3.0.64+0x100], %r2
            EXIT
    "#]]
    .assert_eq(&optimized("guarded_loop"));
}

#[test]
fn shfl_under_branch() {
    expect_test::expect![[r#"
        func shfl_under_branch
        bb0:
            LDC R1, c[0x0][0x28]
            ULDC.64 UR4, c[0x0][0x208]
            S2R %r1, SR_TID.X
            MOV v24, 0x4
            IMAD.WIDE.U32 %rd3.0, %r1, v24, c[0x0][0x210]
            LDG.E %r2, desc[UR4][%rd3.0.64]
            ISETP.GE.U32.AND %p1, PT, %r2, 0x10, PT
            @%p1 BRA bb2
        bb1:
            WARPSYNC.ALL
            SHFL.BFLY PT, v17, %r2, 0x1, 0x1f
            MOV %r2, v17
        bb2:
            STG.E desc[UR4][%rd3.0.64], %r2
            EXIT
    "#]]
    .assert_eq(&optimized("shfl_under_branch"));
}
