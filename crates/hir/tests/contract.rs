//! `hir::contract` on one-pattern kernels. The expected pairs are what ptxas 13.0.88 contracts
//! for the same PTX (`ptxas -arch=sm_80`, FFMA/DFMA in nvdisasm's listing; docs/arch/hardware.md
//! lists the probes); `contractions_agree_with_ptxas` checks the same kernels against the
//! oracle when it is installed.

use syntax::ast::{self, AstNode};

pub const PROBES: &[(&str, &str, usize)] = &[
    // (name, body, contracted add/sub count)
    (
        "single",
        "mul.f32 %f4, %f1, %f2; add.f32 %f5, %f4, %f3; st.global.f32 [%rd1+40], %f5;",
        1,
    ),
    (
        "stored_too",
        "mul.f32 %f4, %f1, %f2; add.f32 %f5, %f4, %f3; st.global.f32 [%rd1+40], %f5; st.global.f32 [%rd1+44], %f4;",
        0,
    ),
    (
        "two_adds",
        "mul.f32 %f4, %f1, %f2; add.f32 %f5, %f4, %f3; sub.f32 %f6, %f3, %f4; st.global.f32 [%rd1+40], %f5; st.global.f32 [%rd1+44], %f6;",
        2,
    ),
    (
        "rounding",
        "mul.rn.f32 %f4, %f1, %f2; add.f32 %f5, %f4, %f3; mul.f32 %f6, %f1, %f3; add.rn.f32 %f7, %f6, %f2; st.global.f32 [%rd1+40], %f5; st.global.f32 [%rd1+44], %f7;",
        0,
    ),
    (
        "ftz_mixed",
        "mul.ftz.f32 %f4, %f1, %f2; add.f32 %f5, %f4, %f3; mul.f32 %f6, %f1, %f3; add.ftz.f32 %f7, %f6, %f2; st.global.f32 [%rd1+40], %f5; st.global.f32 [%rd1+44], %f7;",
        0,
    ),
    (
        "other_block",
        "mul.f32 %f4, %f1, %f2; setp.gt.f32 %q, %f3, 0f00000000; @%q bra L1; add.f32 %f5, %f4, %f3; st.global.f32 [%rd1+40], %f5; L1: st.global.f32 [%rd1+44], %f3;",
        0,
    ),
    (
        "f64",
        "mul.f64 %fd4, %fd1, %fd2; sub.f64 %fd5, %fd4, %fd3; st.global.f64 [%rd1+48], %fd5;",
        1,
    ),
    (
        "sub_reversed",
        "mul.f32 %f4, %f1, %f2; sub.f32 %f5, %f3, %f4; st.global.f32 [%rd1+40], %f5;",
        1,
    ),
    (
        "two_products",
        "mul.f32 %f4, %f1, %f2; mul.f32 %f6, %f3, %f2; add.f32 %f5, %f4, %f6; st.global.f32 [%rd1+40], %f5;",
        1,
    ),
    (
        "saturated_add",
        "mul.f32 %f4, %f1, %f2; add.sat.f32 %f5, %f4, %f3; st.global.f32 [%rd1+40], %f5;",
        1,
    ),
];

pub fn kernel(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
         .reg .f32 %f<12>; .reg .f64 %fd<8>; .reg .b64 %rd<3>; .reg .pred %q;\n\
         ld.param.u64 %rd1, [p];\nld.global.f32 %f1, [%rd1];\nld.global.f32 %f2, [%rd1+4];\n\
         ld.global.f32 %f3, [%rd1+8];\nld.global.f64 %fd1, [%rd1+16];\n\
         ld.global.f64 %fd2, [%rd1+24];\nld.global.f64 %fd3, [%rd1+32];\n{body}\nret;\n}}\n"
    )
}

fn contracted(text: &str) -> Vec<hir::contract::Contraction> {
    let parse = syntax::parse(text);
    let file = ast::SourceFile::cast(parse.syntax_node()).expect("file");
    let f = file
        .syntax()
        .descendants()
        .find_map(ast::Function::cast)
        .expect("function");
    let mut v: Vec<_> = hir::contract::contractions(&f.body().expect("body"))
        .into_iter()
        .collect();
    v.sort_by_key(|(r, _)| r.start());
    v.into_iter().map(|(_, c)| c).collect()
}

#[test]
fn contraction_counts_match_ptxas_probes() {
    for (name, body, want) in PROBES {
        assert_eq!(contracted(&kernel(body)).len(), *want, "{name}");
    }
}

#[test]
fn subtraction_signs() {
    // mul m; sub d, m, c -> fma(a, b, -c); sub d, c, m -> fma(-a, b, c).
    let c = contracted(&kernel(PROBES[6].1));
    assert_eq!(
        (
            c[0].product_operand,
            c[0].negate_product,
            c[0].negate_addend
        ),
        (1, false, true)
    );
    let c = contracted(&kernel(PROBES[7].1));
    assert_eq!(
        (
            c[0].product_operand,
            c[0].negate_product,
            c[0].negate_addend
        ),
        (2, true, false)
    );
}

/// Against the oracle: for each probe, ptxas's listing has as many FFMA/DFMA as the rule
/// contracts pairs (each probe has no fused instruction of its own).
#[test]
fn contractions_agree_with_ptxas() {
    let Some(ptxas) = test_support::oracle_tool_or_skip("ptxas") else {
        return;
    };
    let Some(nvdisasm) = test_support::oracle_tool_or_skip("nvdisasm") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("kiln-contract-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, body, want) in PROBES {
        let ptx = dir.join(format!("{name}.ptx"));
        let cubin = dir.join(format!("{name}.cubin"));
        std::fs::write(&ptx, kernel(body)).unwrap();
        let ok = std::process::Command::new(&ptxas)
            .args(["-arch=sm_80"])
            .arg(&ptx)
            .arg("-o")
            .arg(&cubin)
            .status()
            .unwrap()
            .success();
        assert!(ok, "{name}: ptxas");
        let out = std::process::Command::new(&nvdisasm)
            .arg("-c")
            .arg(&cubin)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let fused = text.matches("FFMA").count() + text.matches("DFMA").count();
        assert_eq!(fused, *want, "{name}: ptxas fused {fused}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
