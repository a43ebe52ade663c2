//! `opt::narrow` and the constant pair beside an immediate (`opt::facts`): register pairs
//! ptxas never holds.
//!
//! * A shared address computed in 64 bits (`mul.wide.u32`, `add.s64` of the array's
//!   address) is read by `STS`/`LDS` as its low word only: it becomes one 32-bit register
//!   (`IMAD.SHL.U32 R3, R7, 0x4, RZ` in ptxas 13.0.88's sm_80 code for the same PTX); a
//!   global address, read whole, stays a pair.
//! * sm_80: a pointer parameter added to a scaled index is read as the constant pair
//!   itself, the scale in a register (ptxas: `IMAD.WIDE R2, R4, R7, c[0x0][0x168]` with
//!   `R7 = 4`), instead of two registers holding the pointer.

mod common;

fn optimized(text: &str, sm: u32) -> String {
    common::lines_starting(
        &common::lower_and_optimize(text, sm),
        &["IMAD", "MOV", "LD", "ST", "IADD3", "bb"],
    )
}

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

#[test]
fn shared_addresses_computed_in_64_bits_use_one_register() {
    let text = format!(
        "{HEADER}
.visible .entry k(.param .u64 pa)
{{
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  .shared .align 4 .b8 sdata[512];
  ld.param.u64 %rd1, [pa];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  mov.u64 %rd5, sdata;
  add.s64 %rd6, %rd5, %rd3;
  st.shared.f32 [%rd6], %f1;
  bar.sync 0;
  ld.shared.f32 %f2, [%rd6+4];
  st.global.f32 [%rd4], %f2;
  ret;
}}"
    );
    expect_test::expect![[r#"
        bb0:
            MOV R1, c[0x0][0x28]
            MOV v27, 0x4
            IMAD.WIDE.U32 %rd4.0, %r1, v27, c[0x0][0x160]
            LDG.E %f1, [%rd4.0.64]
            IMAD.SHL.U32 %rd6, %r1, 0x4, RZ
            STS [%rd6], %f1
            LDS %f2, [%rd6+0x4]
            STG.E [%rd4.0.64], %f2
    "#]]
    .assert_eq(&optimized(&text, 80));
}
