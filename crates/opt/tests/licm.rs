//! `opt::licm` and `opt::fuse::fuse_wide_lea`, on the shape of `getRepresentatives`
//! (cuda-samples' segmentationTreeThrust), whose sm_80 code from ptxas 13.0.88 sets the
//! index scale `0x4` once before the loop and ends with `LEA R2, P0, R0, c[0x0][0x168], 0x2;
//! LEA.HI.X R3, R0, c[0x0][0x16c], RZ, 0x2, P0` for `cvt.u64.u32` + `shl.b64` + `add.s64`.

mod common;

fn optimized(text: &str, sm: u32) -> String {
    common::lines_starting(
        &common::lower_and_optimize(text, sm),
        &["MOV", "IMAD", "LEA", "SHF", "IADD3", "LDG", "STG", "bb"],
    )
}

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// The loop's scale moves before the loop (the loop is not where the kernel's register
/// pressure peaks: the values live across the first load are more); the 64-bit shift and
/// add become `LEA`/`LEA.HI.X`.
#[test]
fn a_loop_constant_is_set_before_the_loop() {
    let text = format!(
        "{HEADER}
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{{
  .reg .pred %p<3>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd5, [a];
  ld.param.u64 %rd4, [b];
  ld.param.u64 %rd12, [c];
  cvta.to.global.u64 %rd1, %rd5;
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd2, %r1;
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd7, %rd1, %rd6;
  ld.global.v4.u32 {{%r4, %r5, %r6, %r7}}, [%rd7];
  add.s32 %r9, %r4, %r5;
  add.s32 %r9, %r9, %r6;
  add.s32 %r9, %r9, %r7;
  cvta.to.global.u64 %rd3, %rd4;
LOOP:
  mov.u32 %r3, %r9;
  mul.wide.u32 %rd8, %r3, 4;
  add.s64 %rd9, %rd1, %rd8;
  ld.global.u32 %r9, [%rd9];
  setp.ne.s32 %p2, %r3, %r9;
  @%p2 bra LOOP;
  shl.b64 %rd10, %rd2, 2;
  add.s64 %rd11, %rd3, %rd10;
  st.global.u32 [%rd11], %r3;
  ret;
}}"
    );
    expect_test::expect![[r#"
        bb0:
            MOV R1, c[0x0][0x28]
            MOV v50, 0x4
            IMAD.WIDE.U32 %rd7.0, %r1, v50, c[0x0][0x160]
            LDG.E.128 v31.0, [%rd7.0.64]
            IADD3 %r9~1, v31.0, v31.1, v31.2
            IADD3 %r9~2, %r9~1, v31.3, RZ
            MOV v51, 0x4
        bb1:
            MOV %r3, %r9~2
            IMAD.WIDE.U32 %rd9.0, %r9~2, v51, c[0x0][0x160]
            LDG.E %r9~2, [%rd9.0.64]
        bb2:
        bb3:
            LEA %rd11.0, v36, %r1, c[0x0][0x168], 0x2
            LEA.HI.X %rd11.1, %r1, c[0x0][0x16c], RZ, 0x2, v36
            STG.E [%rd11.0.64], %r3
    "#]]
    .assert_eq(&optimized(&text, 80));
}
