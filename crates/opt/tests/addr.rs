//! `opt::addr`: constants added to addresses go into the memory operands. Each expectation
//! was compared with ptxas 13.0.88's SASS for the same PTX (`ptxas -arch=sm_80`, `nvdisasm
//! -c`): ptxas reads `[R2.64+0x10]`, `[R2.64+-0x8]` and `[R0+0x40]` for the folded accesses
//! below too; the cases left alone are the ones where folding would read another address.

mod common;

fn optimized(text: &str, sm: u32) -> String {
    // The memory accesses and the adds that made addresses are what this test is about.
    common::lines_starting(
        &common::lower_and_optimize(text, sm),
        &["LD", "ST", "IADD3", "bb"],
    )
}

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// Offsets (positive, negative, and an add of an add) fold; the pairs of adds disappear.
#[test]
fn constant_offsets_fold_into_global_accesses() {
    let text = format!(
        "{HEADER}
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd1, %rd1, %rd5;
  add.s64 %rd2, %rd1, 16;
  add.s64 %rd3, %rd2, 16;
  add.s64 %rd4, %rd1, -8;
  setp.lt.u32 %p1, %r1, 17;
  mov.u32 %r2, 0;
  @%p1 ld.global.b32 %r2, [%rd2];
  ld.global.b32 %r3, [%rd3+4];
  ld.global.b32 %r4, [%rd4];
  add.s32 %r5, %r2, %r3;
  add.s32 %r5, %r5, %r4;
  st.global.b32 [%rd3], %r5;
  ret;
}}"
    );
    expect_test::expect![[r#"
        bb0:
            @%p1 LDG.E %r2, [%rd1.0.64+0x10]
            LDG.E %r3, [%rd1.0.64+0x24]
            LDG.E %r4, [%rd1.0.64+-0x8]
            IADD3 %r5~1, %r2, %r3, %r4
            STG.E [%rd1.0.64+0x20], %r5~1
    "#]]
    .assert_eq(&optimized(&text, 80));
}

/// The base is reassigned in the loop after the address was made: the access inside the
/// loop must keep reading the address register, not the new base.
#[test]
fn a_base_written_since_the_add_is_not_read_instead() {
    let text = format!(
        "{HEADER}
.visible .entry k(.param .u64 p, .param .u32 n)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  add.s64 %rd2, %rd1, 16;
LOOP:
  ld.global.b32 %r3, [%rd2];
  add.s32 %r2, %r2, %r3;
  add.s64 %rd1, %rd1, 4;
  add.s32 %r1, %r1, -1;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra LOOP;
  st.global.b32 [%rd1], %r2;
  ret;
}}"
    );
    let out = optimized(&text, 80);
    assert!(out.contains("LDG.E %r3, [%rd2.0.64]"), "{out}");
}

/// 32-bit shared addresses fold too; an offset the access cannot encode does not.
#[test]
fn shared_offsets_fold_and_huge_offsets_stay() {
    let text = format!(
        "{HEADER}
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b8 buf[1024];
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r2;
  add.s32 %r5, %r4, 64;
  st.shared.b32 [%r4], %r1;
  bar.sync 0;
  ld.shared.b32 %r6, [%r5];
  add.s64 %rd2, %rd1, 1099511627776;
  st.global.b32 [%rd2], %r6;
  ret;
}}"
    );
    let out = optimized(&text, 80);
    assert!(out.contains("LDS %r6, [%r4+0x40]"), "{out}");
    assert!(out.contains("STG.E [%rd2.0.64]"), "{out}");
}
