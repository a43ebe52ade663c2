//! The memory, barrier, special-register and atomic forms of `test-data/codegen/`
//! (`cache_hints.ptx`, `named_barriers.ptx`, `special_regs.ptx`, `special_regs_cluster.ptx`,
//! `atom_half.ptx`, `atom_vector.ptx`, `elect_fence.ptx`) as kiln lowers them, per SM.
//!
//! Every mnemonic-and-modifier word below was compared with ptxas 13.0.88's code for the same
//! file (`ptxas -arch sm_XX`, `nvdisasm -c`): ptxas writes each of these forms (its register
//! allocation and scheduling differ, and it merges neighbouring loads, which kiln does not).
//! Deviations, each a hint: a cache policy that is not a constant (`ld.global.L2::cache_hint
//! ... %rd2` with a parameter) keeps the default descriptor where ptxas moves the policy into
//! uniform registers (`ULDC.64`/`R2UR`), and `%clock_hi` is `CS2R.32 R, SR_CLOCKHI` where ptxas
//! may choose `S2UR`. The db tests (`crates/db/tests/codegen.rs`) run the same files in the
//! emulator against the interpreter and compare nvdisasm's text with kiln's listing.

use syntax::SyntaxKind;

/// The instructions of kernel `kernel` of `file` (a `test-data/codegen/` file) lowered for
/// `sm`, those whose mnemonic starts with one of `prefixes`, one a line.
fn lowered(file: &str, kernel: &str, sm: u32, prefixes: &[&str]) -> Result<String, String> {
    let path = format!(
        "{}/../../test-data/codegen/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let parse = syntax::parse(&text);
    let function = parse
        .syntax_node()
        .children()
        .filter(|n| n.kind() == SyntaxKind::FUNCTION)
        .find(|n| n.text().to_string().contains(&format!(".entry {kernel}(")))
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
        .map(|l| {
            l.split_once(' ')
                .map_or(l, |(g, rest)| if g.starts_with('@') { rest } else { l })
        })
        .filter(|l| prefixes.iter().any(|p| l.starts_with(p)))
        // The kernels' own prologue and vector gathers.
        .filter(|l| !NOISE.iter().any(|p| l.starts_with(p)))
        .map(|l| format!("{l}\n"))
        .collect())
}

/// Instructions of the test kernels that are not the forms under test.
const NOISE: &[&str] = &[
    "MOV v",
    "MOV R1",
    "LDC R1",
    "MOV %rd1.",
    "LDC.64 %rd1.",
    "S2R %r1, SR_TID",
    "IADD3 %rd",
    "IADD3.X",
    "IMAD.WIDE",
    "LDC %r3, c[0x0][RZ]",
    "IMAD %r4, %r2, %r3, %r1",
    "S2R %r2, SR_CTAID.X",
];

const MEM: &[&str] = &["LDG", "STG", "LD.", "ST.", "CCTL", "UMOV"];

#[test]
fn cache_hints_sm80() {
    expect_test::expect![[r#"
        CCTL.E.PF1 [%rd4.0]
        CCTL.E.PF2 [%rd4.0+0x20]
        CCTL.E.PML2 [%rd4.0]
        CCTL.E.PF1 [%rd4.0+0x10]
        CCTL.E.PF1 [%rd4.0]
        LDG.E.NA.128.CONSTANT v80.0, [%rd4.0.64]
        LDG.E.EL.128 v81.0, [%rd4.0.64+0x10]
        LDG.E.EL.LTC256B.64 v82.0, [%rd4.0.64+0x20]
        LDG.E.LTC128B %r8, [%rd4.0.64+0x28]
        LDG.E.LTC128B.CONSTANT %r9, [%rd4.0.64+0x2c]
        LDG.E.EF.LTC64B.U16 %r10, [%rd4.0.64+0x30]
        LDG.E.EU.S8 %r11, [%rd4.0.64+0x32]
        LDG.E.U8 %r12, [%rd4.0.64+0x33]
        LD.E.EL %r13, [%rd4.0.64+0x34]
        LDG.E.EF.64.CONSTANT %rd10.0, [%rd4.0.64+0x38]
        UMOV v83.0, 0x0
        UMOV v83.1, 0x12f00000
        LDG.E.EL %r14, desc[v83.0][%rd4.0.64+0x28]
        UMOV v84.0, 0x0
        UMOV v84.1, 0x15700000
        LDG.E.64.CONSTANT v85.0, desc[v84.0][%rd4.0.64+0x20]
        LDG.E.LTC128B %r17, [%rd4.0.64+0x2c]
        LDG.E.MMIO.SYS %r18, [%rd4.0+0x4]
        LDG.E.EL.STRONG.GPU %r19, [%rd4.0.64+0x8]
        STG.E.NA [%rd6.0.64], %f5
        STG.E.EF.64 [%rd6.0.64+0x8], v86.0
        STG.E.EL.128 [%rd6.0.64+0x10], v87.0
        STG.E.EU.64 [%rd6.0.64+0x20], v88.0
        STG.E [%rd6.0.64+0x28], %r8
        ST.E.EF [%rd6.0.64+0x2c], %r9
        STG.E.EL.U16 [%rd6.0.64+0x30], %r10
        STG.E.NA.U8 [%rd6.0.64+0x32], %r11
        STG.E.U8 [%rd6.0.64+0x33], %r12
        UMOV v89.0, 0x0
        UMOV v89.1, 0x16f00000
        STG.E.EF desc[v89.0][%rd6.0.64+0x34], %r13
        STG.E.64 [%rd6.0.64+0x38], %rd10.0
        UMOV v90.0, 0x0
        UMOV v90.1, 0x12f00000
        STG.E.64 desc[v90.0][%rd6.0.64+0x40], v91.0
        STG.E.64 [%rd6.0.64+0x48], v92.0
        STG.E.MMIO.SYS [%rd6.0+0x50], %r18
        STG.E.EF.STRONG.SYS [%rd6.0.64+0x54], %r19
        STG.E.64 [%rd6.0.64+0x58], %rd7.0
        STG.E.64 [%rd6.0.64+0x60], %rd8.0
        STG.E.64 [%rd6.0.64+0x68], %rd9.0
        STG.E.64 [%rd6.0.64+0x70], %rd11.0
    "#]]
    .assert_eq(&lowered("cache_hints.ptx", "cache_hints", 80, MEM).unwrap());
}

#[test]
fn cache_hints_sm90() {
    expect_test::expect![[r#"
        CCTL.E.PF1 [%rd4.0]
        CCTL.E.PF2 [%rd4.0+0x20]
        CCTL.E.PML2 [%rd4.0]
        CCTL.E.PF1 [%rd4.0+0x10]
        CCTL.E.PF1 [%rd4.0]
        LDG.E.NA.128.CONSTANT v80.0, desc[UR4][%rd4.0.64]
        LDG.E.EL.128 v81.0, desc[UR4][%rd4.0.64+0x10]
        LDG.E.EL.LTC256B.64 v82.0, desc[UR4][%rd4.0.64+0x20]
        LDG.E.LTC128B %r8, desc[UR4][%rd4.0.64+0x28]
        LDG.E.LTC256B.CONSTANT %r9, desc[UR4][%rd4.0.64+0x2c]
        LDG.E.EF.LTC64B.U16 %r10, desc[UR4][%rd4.0.64+0x30]
        LDG.E.EU.S8 %r11, desc[UR4][%rd4.0.64+0x32]
        LDG.E.U8 %r12, desc[UR4][%rd4.0.64+0x33]
        LD.E.EL %r13, desc[UR4][%rd4.0.64+0x34]
        LDG.E.EF.64.CONSTANT %rd10.0, desc[UR4][%rd4.0.64+0x38]
        UMOV v83.0, 0x0
        UMOV v83.1, 0x12f00000
        LDG.E.EL %r14, desc[v83.0][%rd4.0.64+0x28]
        UMOV v84.0, 0x0
        UMOV v84.1, 0x15700000
        LDG.E.64.CONSTANT v85.0, desc[v84.0][%rd4.0.64+0x20]
        LDG.E.LTC128B %r17, desc[UR4][%rd4.0.64+0x2c]
        LDG.E.MMIO.SYS %r18, [%rd4.0+0x4]
        LDG.E.EL.STRONG.GPU %r19, desc[UR4][%rd4.0.64+0x8]
        STG.E.NA desc[UR4][%rd6.0.64], %f5
        STG.E.EF.64 desc[UR4][%rd6.0.64+0x8], v86.0
        STG.E.EL.128 desc[UR4][%rd6.0.64+0x10], v87.0
        STG.E.EU.64 desc[UR4][%rd6.0.64+0x20], v88.0
        STG.E desc[UR4][%rd6.0.64+0x28], %r8
        ST.E.EF desc[UR4][%rd6.0.64+0x2c], %r9
        STG.E.EL.U16 desc[UR4][%rd6.0.64+0x30], %r10
        STG.E.NA.U8 desc[UR4][%rd6.0.64+0x32], %r11
        STG.E.U8 desc[UR4][%rd6.0.64+0x33], %r12
        UMOV v89.0, 0x0
        UMOV v89.1, 0x16f00000
        STG.E.EF desc[v89.0][%rd6.0.64+0x34], %r13
        STG.E.64 desc[UR4][%rd6.0.64+0x38], %rd10.0
        UMOV v90.0, 0x0
        UMOV v90.1, 0x12f00000
        STG.E.64 desc[v90.0][%rd6.0.64+0x40], v91.0
        STG.E.64 desc[UR4][%rd6.0.64+0x48], v92.0
        STG.E.MMIO.SYS [%rd6.0+0x50], %r18
        STG.E.EF.STRONG.SYS desc[UR4][%rd6.0.64+0x54], %r19
        STG.E.64 desc[UR4][%rd6.0.64+0x58], %rd7.0
        STG.E.64 desc[UR4][%rd6.0.64+0x60], %rd8.0
        STG.E.64 desc[UR4][%rd6.0.64+0x68], %rd9.0
        STG.E.64 desc[UR4][%rd6.0.64+0x70], %rd11.0
    "#]]
    .assert_eq(&lowered("cache_hints.ptx", "cache_hints", 90, MEM).unwrap());
}

const BAR: &[&str] = &["BAR", "B2R", "SHF.L.U32", "LOP3.LUT"];

#[test]
fn named_barriers() {
    for (sm, want) in [
        (
            80,
            expect_test::expect![[r#"
                LOP3.LUT %r2, %r1, v36, RZ, 0xc0, !PT
                SHF.L.U32 %r6, %r2, v40, RZ
                BAR.ARV 0x1, 0x40
                BAR.SYNC.DEFER_BLOCKING 0x2, 0x40
                BAR.SYNC.DEFER_BLOCKING 0x1, 0x40
                BAR.ARV 0x2, 0x40
                BAR.SYNC 0x3, 0x20
                LOP3.LUT %r10, %r4, v42, RZ, 0xc0, !PT
                LOP3.LUT %r11, %r10, v43, RZ, 0xfc, !PT
                LOP3.LUT %r11, %r11, v44, RZ, 0xc0, !PT
                SHF.L.U32 %r12, %r11, v45, RZ
                SHF.L.U32 v46, %r12, 0x10, RZ
                LOP3.LUT v47, v46, 0xf, %r11, 0xf8, !PT
                BAR.SYNC.DEFER_BLOCKING v47, v47
                BAR.SYNC.DEFER_BLOCKING %r11, 0x40
                BAR.SYNC.DEFER_BLOCKING 0x5, %r12
                BAR.RED.POPC.DEFER_BLOCKING 0x2, 0x40, %p2
                B2R.RESULT %r13
                SHF.L.U32 v49, %r12, 0x10, RZ
                LOP3.LUT v50, v49, 0xf, %r11, 0xf8, !PT
                BAR.RED.OR.DEFER_BLOCKING v50, v50, %p2
                B2R.RESULT RZ, %p3
                BAR.SYNC.DEFER_BLOCKING 0x0
                --
                LOP3.LUT %r4, %r1, v22, RZ, 0xc0, !PT
                LOP3.LUT %r6, %r2, v24, RZ, 0xc0, !PT
                SHF.L.U32 %r8, %r7, v26, RZ
                SHF.L.U32 %r10, %r3, v27, RZ
                SHF.L.U32 v28, %r8, 0x10, RZ
                LOP3.LUT v29, v28, 0xf, %r5, 0xf8, !PT
                BAR.SYNC.DEFER_BLOCKING v29, v29
                LOP3.LUT %r12, %r3, v30, RZ, 0x3c, !PT
                SHF.L.U32 %r13, %r12, v31, RZ
                BAR.SYNC.DEFER_BLOCKING 0x7, %r8
                BAR.ARV %r5, 0x40
                BAR.SYNC.DEFER_BLOCKING %r5, 0x40
            "#]],
        ),
        (
            90,
            expect_test::expect![[r#"
                LOP3.LUT %r2, %r1, v36, RZ, 0xc0, !PT
                SHF.L.U32 %r6, %r2, v40, RZ
                BAR.ARV 0x1, 0x40
                BAR.SYNC.DEFER_BLOCKING 0x2, 0x40
                BAR.SYNC.DEFER_BLOCKING 0x1, 0x40
                BAR.ARV 0x2, 0x40
                BAR.SYNC.DEFER_BLOCKING 0x3, 0x20
                LOP3.LUT %r10, %r4, v42, RZ, 0xc0, !PT
                LOP3.LUT %r11, %r10, v43, RZ, 0xfc, !PT
                LOP3.LUT %r11, %r11, v44, RZ, 0xc0, !PT
                SHF.L.U32 %r12, %r11, v45, RZ
                SHF.L.U32 v46, %r12, 0x10, RZ
                LOP3.LUT v47, v46, 0xf, %r11, 0xf8, !PT
                BAR.SYNC.DEFER_BLOCKING v47, v47
                BAR.SYNC.DEFER_BLOCKING %r11, 0x40
                BAR.SYNC.DEFER_BLOCKING 0x5, %r12
                BAR.RED.POPC.DEFER_BLOCKING 0x2, 0x40, %p2
                B2R.RESULT %r13
                SHF.L.U32 v49, %r12, 0x10, RZ
                LOP3.LUT v50, v49, 0xf, %r11, 0xf8, !PT
                BAR.RED.OR.DEFER_BLOCKING v50, v50, %p2
                B2R.RESULT RZ, %p3
                BAR.SYNC.DEFER_BLOCKING 0x0
                --
                LOP3.LUT %r4, %r1, v22, RZ, 0xc0, !PT
                LOP3.LUT %r6, %r2, v24, RZ, 0xc0, !PT
                SHF.L.U32 %r8, %r7, v26, RZ
                SHF.L.U32 %r10, %r3, v27, RZ
                SHF.L.U32 v28, %r8, 0x10, RZ
                LOP3.LUT v29, v28, 0xf, %r5, 0xf8, !PT
                BAR.SYNC.DEFER_BLOCKING v29, v29
                LOP3.LUT %r12, %r3, v30, RZ, 0x3c, !PT
                SHF.L.U32 %r13, %r12, v31, RZ
                BAR.SYNC.DEFER_BLOCKING 0x7, %r8
                BAR.ARV %r5, 0x40
                BAR.SYNC.DEFER_BLOCKING %r5, 0x40
            "#]],
        ),
    ] {
        let got = lowered("named_barriers.ptx", "handoff", sm, BAR).unwrap()
            + "--\n"
            + &lowered("named_barriers.ptx", "runtime_ids", sm, BAR).unwrap();
        want.assert_eq(&got);
    }
}

const SREG: &[&str] = &[
    "S2R", "CS2R", "SGXT", "SHF.R", "LDC", "MOV", "IADD3", "I2FP", "FMUL", "F2I", "IMAD",
];

#[test]
fn special_registers() {
    for (sm, want) in [
        (
            80,
            expect_test::expect![[r#"
                S2R %r2, SR_VIRTUALSMID
                MOV %r3, c[0x0][0x10c]
                S2R v44, SR_VIRTID
                SHF.R.U32.HI v45, RZ, 0x8, v44
                SGXT.U32 %r4, v45, 0x7
                MOV %r5, 0x40
                MOV %r6, c[0x0][0x2c]
                S2R v46, SR_SMEMSZ
                IADD3 %r7, -v47, v46, RZ
                MOV %rd4.0, c[0x0][0x30]
                MOV %rd4.1, c[0x0][0x34]
                S2R %r8, SR_EQMASK
                S2R %r9, SR_LTMASK
                S2R %r10, SR_LEMASK
                S2R %r11, SR_GTMASK
                S2R %r12, SR_GEMASK
                CS2R.32 %r13, SR_PM0
                CS2R.32 %r14, SR_PM3
                CS2R.32 %r15, SR_PM7
                CS2R %rd5.0, SR_PM0
                CS2R.32 %r16, SR_CLOCKHI
                CS2R.32 %r17, SR_GLOBALTIMERHI
                CS2R.32 %r18, SR_CLOCKHI
                CS2R.32 %r20, SR_GLOBALTIMERHI
            "#]],
        ),
        (
            90,
            expect_test::expect![[r#"
                S2R %r2, SR_VIRTUALSMID
                LDC %r3, c[0x0][0x10c]
                S2R v44, SR_VIRTID
                SHF.R.U32.HI v45, RZ, 0x8, v44
                SGXT.U32 %r4, v45, 0x7
                S2R v46, SR_VIRTCFG
                SHF.R.U32.HI v47, RZ, 0x8, v46
                SGXT.U32 %r5, v47, 0x8
                LDC %r6, c[0x0][0x2c]
                S2R v48, SR_SMEMSZ
                LDC v49, c[0x0][0x114]
                IADD3 %r7, -v49, v48, RZ
                LDC.64 %rd4.0, c[0x0][0x30]
                S2R %r8, SR_EQMASK
                S2R %r9, SR_LTMASK
                S2R %r10, SR_LEMASK
                S2R %r11, SR_GTMASK
                S2R %r12, SR_GEMASK
                CS2R.32 %r13, SR_PM0
                CS2R.32 %r14, SR_PM3
                CS2R.32 %r15, SR_PM7
                CS2R %rd5.0, SR_PM0
                CS2R.32 %r16, SR_CLOCKHI
                CS2R.32 %r17, SR_GLOBALTIMERHI
                CS2R.32 %r18, SR_CLOCKHI
                CS2R.32 %r20, SR_GLOBALTIMERHI
            "#]],
        ),
    ] {
        want.assert_eq(&lowered("special_regs.ptx", "special_regs", sm, SREG).unwrap());
    }
    expect_test::expect![[r#"
        S2R %r5, SR_CgaCtaId
        LDC %r6, c[0x0][0x188]
        S2R v42, SR_CTAID.X
        I2FP.F32.U32 v44, v42
        LDC v45, c[0x0][0x150]
        FMUL v46, v44, v45
        F2I.U32.TRUNC.NTZ v43, v46
        LDC v47, c[0x0][0x144]
        IADD3 v48, -v43, RZ, RZ
        IMAD %r7, v47, v48, v42
        S2R v49, SR_CTAID.Y
        I2FP.F32.U32 v51, v49
        LDC v52, c[0x0][0x154]
        FMUL v53, v51, v52
        F2I.U32.TRUNC.NTZ v50, v53
        LDC v54, c[0x0][0x148]
        IADD3 v55, -v50, RZ, RZ
        IMAD %r8, v54, v55, v49
        S2R v56, SR_CTAID.Z
        I2FP.F32.U32 v58, v56
        LDC v59, c[0x0][0x158]
        FMUL v60, v58, v59
        F2I.U32.TRUNC.NTZ v57, v60
        LDC v61, c[0x0][0x14c]
        IADD3 v62, -v57, RZ, RZ
        IMAD %r9, v61, v62, v56
        LDC %r10, c[0x0][0x144]
        LDC %r11, c[0x0][0x148]
        LDC %r12, c[0x0][0x14c]
        S2R v63, SR_CTAID.X
        I2FP.F32.U32 v64, v63
        LDC v65, c[0x0][0x150]
        FMUL v66, v64, v65
        F2I.U32.TRUNC.NTZ %r13, v66
        S2R v67, SR_CTAID.Y
        I2FP.F32.U32 v68, v67
        LDC v69, c[0x0][0x154]
        FMUL v70, v68, v69
        F2I.U32.TRUNC.NTZ %r14, v70
        S2R v71, SR_CTAID.Z
        I2FP.F32.U32 v72, v71
        LDC v73, c[0x0][0x158]
        FMUL v74, v72, v73
        F2I.U32.TRUNC.NTZ %r15, v74
        LDC %r16, c[0x0][0x15c]
        LDC %r17, c[0x0][0x160]
        LDC %r18, c[0x0][0x164]
    "#]]
    .assert_eq(&lowered("special_regs_cluster.ptx", "cluster_regs", 90, SREG).unwrap());
}

const ATOM: &[&str] = &["ATOM", "RED"];

#[test]
fn atomics() {
    expect_test::expect![[r#"
        ATOMG.E.ADD.F16x2.RN.STRONG.GPU PT, v30, [%rd5.0.64], %r2
        ATOMG.E.ADD.F16x2.RN.STRONG.GPU PT, v31, [%rd5.0.64+0x4], %r3
        ATOMG.E.ADD.F16x2.RN.STRONG.SM PT, v32, [%rd5.0.64+0x8], %r10
        RED.E.ADD.F16x2.RN.STRONG.GPU [%rd5.0.64+0xc], %r4
        RED.E.ADD.F16x2.RN.STRONG.SYS [%rd5.0.64], %r5
        ATOMG.E.ADD.F16x2.RN.STRONG.SYS PT, v33, [%rd5.0.64+0x4], %r11
    "#]]
    .assert_eq(&lowered("atom_half.ptx", "atom_half", 80, ATOM).unwrap());
    expect_test::expect![[r#"
        ATOMG.E.ADD.F16x2.RN.STRONG.GPU PT, v30, desc[UR4][%rd5.0.64], %r2
        ATOMG.E.ADD.F16x2.RN.STRONG.GPU PT, v31, desc[UR4][%rd5.0.64+0x4], %r3
        ATOMG.E.ADD.F16x2.RN.STRONG.SM PT, v32, desc[UR4][%rd5.0.64+0x8], %r10
        REDG.E.ADD.F16x2.RN.STRONG.GPU desc[UR4][%rd5.0.64+0xc], %r4
        REDG.E.ADD.F16x2.RN.STRONG.SYS desc[UR4][%rd5.0.64], %r5
        ATOMG.E.ADD.F16x2.RN.STRONG.SYS PT, v33, desc[UR4][%rd5.0.64+0x4], %r11
    "#]]
    .assert_eq(&lowered("atom_half.ptx", "atom_half", 90, ATOM).unwrap());
    expect_test::expect![[r#"
        ATOMG.E.ADD.F32x4.FTZ.RN.STRONG.GPU PT, v66.0, desc[UR4][%rd5.0.64], v65.0
        REDG.E.ADD.F32x2.FTZ.RN.STRONG.GPU desc[UR4][%rd5.0.64+0x8], v67.0
        ATOMG.E.ADD.F16x4.RN.STRONG.GPU PT, v69.0, desc[UR4][%rd5.0.64+0x10], v68.0
        REDG.E.ADD.BF16x8.RN.STRONG.GPU desc[UR4][%rd5.0.64+0x20], v70.0
        ATOMG.E.ADD.BF16x2.RN.STRONG.GPU PT, v71, desc[UR4][%rd5.0.64+0x18], %r8
        REDG.E.ADD.BF16x2.RN.STRONG.GPU desc[UR4][%rd5.0.64+0x1c], %r9
        ATOM.E.ADD.F32x4.FTZ.RN.STRONG.GPU PT, v73.0, desc[UR4][%rd5.0.64+0x30], v72.0
        REDG.E.ADD.F16x8.RN.STRONG.GPU desc[UR4][%rd5.0.64+0x40], v74.0
    "#]]
    .assert_eq(&lowered("atom_vector.ptx", "atom_vector", 90, ATOM).unwrap());
}

#[test]
fn elect_and_fences() {
    expect_test::expect![[r#"
        WARPSYNC.ALL
        ELECT %p1, v33, PT
        WARPSYNC.ALL
        ELECT %p2, URZ, PT
        MEMBAR.ALL.GPU
        FENCE.VIEW.ASYNC.S
        FENCE.VIEW.ASYNC.G
        MEMBAR.ALL.CTA
        FENCE.VIEW.ASYNC.S
        MEMBAR.ALL.GPU
        FENCE.VIEW.ASYNC.S
        MEMBAR.SC.SYS
        ERRBAR
        CGAERRBAR
        CCTL.IVALL
        MEMBAR.ALL.GPU
        ERRBAR
        CGAERRBAR
        CCTL.IVALL
        MEMBAR.SC.GPU
        ERRBAR
        CGAERRBAR
        CCTL.IVALL
    "#]]
    .assert_eq(
        &lowered(
            "elect_fence.ptx",
            "elect_fence",
            90,
            &[
                "ELECT",
                "WARPSYNC",
                "MEMBAR",
                "FENCE",
                "ERRBAR",
                "CGAERRBAR",
                "CCTL",
            ],
        )
        .unwrap(),
    );
}

#[test]
fn refusals() {
    let e = |file: &str, kernel: &str, sm| lowered(file, kernel, sm, &[]).unwrap_err();
    assert_eq!(
        e("atom_vector.ptx", "atom_vector", 80),
        "unsupported: vector atomics before sm_90"
    );
    assert_eq!(
        e("elect_fence.ptx", "elect_fence", 80),
        "unsupported: elect.sync before sm_90"
    );
}
