//! `opt::hoist`: in a loop, weak loads move up past the arithmetic before them, so that they
//! issue together as ptxas issues them (ptxas 13.0.88's SASS for the first kernel, `ptxas
//! -arch=sm_80`, `nvdisasm -c`, loads every value of a body before its first `FFMA`; it also
//! unrolls the loop four times, which kiln does not); a store, a load reading a value computed
//! in the body, and code outside loops stay put.

mod common;

fn optimized(text: &str, sm: u32) -> String {
    common::lines_starting(
        &common::lower_and_optimize(text, sm),
        &["LD", "ST", "FFMA", "bb"],
    )
}

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// Two products per iteration: the second pair of loads moves above the first `FFMA`.
#[test]
fn loads_of_a_loop_body_issue_before_its_arithmetic() {
    let text = format!(
        "{HEADER}
.visible .entry dot(.param .u64 pa, .param .u64 pb, .param .u64 po, .param .u32 n)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pb];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  mov.f32 %f1, 0f00000000;
LOOP:
  ld.global.f32 %f2, [%rd1];
  ld.global.f32 %f3, [%rd2];
  fma.rn.f32 %f1, %f2, %f3, %f1;
  ld.global.f32 %f4, [%rd1+4];
  ld.global.f32 %f5, [%rd2+4];
  fma.rn.f32 %f1, %f4, %f5, %f1;
  add.s64 %rd1, %rd1, 8;
  add.s64 %rd2, %rd2, 8;
  add.s32 %r2, %r2, 2;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra LOOP;
  ld.param.u64 %rd3, [po];
  st.global.f32 [%rd3], %f1;
  ret;
}}"
    );
    expect_test::expect![[r#"
        bb0:
        bb1:
            LDG.E %f2, [%rd1.0.64]
            LDG.E %f3, [%rd2.0.64]
            LDG.E %f4, [%rd1.0.64+0x4]
            LDG.E %f5, [%rd2.0.64+0x4]
            FFMA %f1~1, %f2, %f3, %f1
            FFMA %f1, %f4, %f5, %f1~1
        bb2:
            STG.E [%rd3.0.64], %f1
    "#]]
    .assert_eq(&optimized(&text, 80));
}

/// A store between two loads, and a load whose address the body computes from a loaded
/// value, keep their places; the kernel's straight-line code is not touched.
#[test]
fn stores_and_dependent_addresses_stop_a_load() {
    let text = format!(
        "{HEADER}
.visible .entry chase(.param .u64 pa, .param .u32 n)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [pa];
  ld.param.u32 %r1, [n];
  ld.global.f32 %f6, [%rd1+64];
  add.f32 %f6, %f6, %f6;
  ld.global.f32 %f7, [%rd1+128];
  mov.u32 %r2, 0;
LOOP:
  ld.global.u32 %r3, [%rd1];
  mul.wide.u32 %rd4, %r3, 4;
  add.s64 %rd5, %rd1, %rd4;
  ld.global.f32 %f2, [%rd5];
  add.f32 %f2, %f2, %f7;
  st.global.f32 [%rd1+4], %f2;
  ld.global.f32 %f3, [%rd1+8];
  add.f32 %f3, %f3, %f6;
  st.global.f32 [%rd1+12], %f3;
  add.s64 %rd1, %rd1, 16;
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra LOOP;
  ret;
}}"
    );
    expect_test::expect![[r#"
        bb0:
            LDG.E %f6, [%rd1.0.64+0x40]
            LDG.E %f7, [%rd1.0.64+0x80]
        bb1:
            LDG.E %r3, [%rd1.0.64]
            LDG.E %f2, [%rd5.0.64]
            STG.E [%rd1.0.64+0x4], %f2~1
            LDG.E %f3, [%rd1.0.64+0x8]
            STG.E [%rd1.0.64+0xc], %f3~1
        bb2:
    "#]]
    .assert_eq(&optimized(&text, 80));
}
