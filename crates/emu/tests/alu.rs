//! Instruction semantics, checked against values computed independently in Rust (from the PTX
//! ISA's definitions of the operations ptxas lowers to these instructions), never against the
//! emulator's own earlier output.
//!
//! Each test runs a snippet on one CTA: a prologue points R2:R3 at the thread's 64-byte slot
//! of an output buffer (R10 = %tid.x), the snippet computes, and `STG` writes chosen registers.

use emu::{EmuError, Launch, load::program_from_text};

const PROLOGUE: &[&str] = &[
    "S2R R10, SR_TID.X",
    "IMAD.MOV.U32 R2, RZ, RZ, c[0x0][0x160]",
    "IMAD.MOV.U32 R3, RZ, RZ, c[0x0][0x164]",
    "IMAD.WIDE.U32 R2, R10, 0x40, R2",
];

/// Runs `body` for `threads` threads and returns, per thread, the values of `outs`.
fn run(body: &[&str], outs: &[&str], threads: u32) -> Result<Vec<Vec<u32>>, EmuError> {
    run_on(80, body, outs, threads, 0)
}

/// [`run`] on `sm` with `dynamic` bytes of dynamic shared memory.
fn run_on(
    sm: u32,
    body: &[&str],
    outs: &[&str],
    threads: u32,
    dynamic: u32,
) -> Result<Vec<Vec<u32>>, EmuError> {
    // The parameter block starts at 0x160 before sm_90, at 0x210 on sm_90.
    let base = target::Profile::of(sm).expect("a known SM").param_base;
    let mut lines: Vec<String> = PROLOGUE
        .iter()
        .map(|s| {
            s.replace("0x160", &format!("{base:#x}"))
                .replace("0x164", &format!("{:#x}", base + 4))
        })
        .collect();
    lines.extend(body.iter().map(|s| s.to_string()));
    for (i, r) in outs.iter().enumerate() {
        lines.push(format!("STG.E [R2.64+{:#x}], {r}", 4 * i));
    }
    lines.push("EXIT".into());
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let prog = program_from_text(sm, &refs, 8).expect("snippet parses");
    let mut mem = interp::Memory::new();
    let buf = mem.alloc("out", vec![0; 64 * threads as usize]);
    let launch = Launch {
        grid: [1, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared: dynamic,
        params: buf.to_le_bytes().to_vec(),
        step_limit: 100_000,
    };
    emu::run(&prog, &mut mem, "k", &launch)?;
    let data = &mem.buffer(buf).expect("buffer").data;
    Ok((0..threads as usize)
        .map(|t| {
            (0..outs.len())
                .map(|i| {
                    let o = t * 64 + 4 * i;
                    u32::from_le_bytes(data[o..o + 4].try_into().unwrap())
                })
                .collect()
        })
        .collect())
}

fn one(body: &[&str], outs: &[&str]) -> Vec<u32> {
    run(body, outs, 1).expect("runs").remove(0)
}

fn mov(r: &str, v: u32) -> String {
    format!("IMAD.MOV.U32 {r}, RZ, RZ, {v:#x}")
}

const SAMPLES: &[(u32, u32, u32)] = &[
    (0x1234_5678, 0x9abc_def0, 0x0f0f_f0f0),
    (0xffff_ffff, 0x0000_0001, 0x8000_0000),
    (0x7fff_ffff, 0xdead_beef, 0x0000_0000),
];

/// A three-input bitwise function.
type Op3 = fn(u32, u32, u32) -> u32;

#[test]
fn lop3_truth_tables() {
    // lut = f(0xf0, 0xcc, 0xaa): the PTX lop3 definition.
    let luts: &[(u32, Op3)] = &[
        (0x96, |a, b, c| a ^ b ^ c),
        (0xe8, |a, b, c| (a & b) | (a & c) | (b & c)),
        (0xc0, |a, b, _| a & b),
        (0xfe, |a, b, c| a | b | c),
        (0x3c, |a, b, _| a ^ b),
        (0x0f, |a, _, _| !a),
    ];
    for &(a, b, c) in SAMPLES {
        for &(lut, f) in luts {
            let body = [
                mov("R4", a),
                mov("R5", b),
                mov("R6", c),
                format!("LOP3.LUT R7, R4, R5, R6, {lut:#x}, !PT"),
                format!("LOP3.LUT P0, R8, R4, R5, R6, {lut:#x}, !PT"),
                "SEL R9, RZ, 0x1, !P0".into(),
            ];
            let b2: Vec<&str> = body.iter().map(String::as_str).collect();
            let got = one(&b2, &["R7", "R9"]);
            let want = f(a, b, c);
            assert_eq!(
                got,
                vec![want, u32::from(want != 0)],
                "lut {lut:#x} on {a:#x} {b:#x} {c:#x}"
            );
        }
    }
}

#[test]
fn iadd3_carry_chains_add_and_subtract_64_bit() {
    for &(a, b, c) in SAMPLES {
        let x = (u64::from(a) << 32) | u64::from(b);
        let y = (u64::from(c) << 32) | u64::from(a ^ b);
        let body = [
            mov("R4", b),
            mov("R5", a),
            mov("R6", a ^ b),
            mov("R7", c),
            // x + y
            "IADD3 R8, P0, R4, R6, RZ".into(),
            "IADD3.X R9, R5, R7, RZ, P0, !PT".into(),
            // x - y: low with -y, high with ~y and the carry (ptxas's sub.cc/subc lowering)
            "IADD3 R11, P1, R4, -R6, RZ".into(),
            "IADD3.X R12, R5, ~R7, RZ, P1, !PT".into(),
        ];
        let b2: Vec<&str> = body.iter().map(String::as_str).collect();
        let g = one(&b2, &["R8", "R9", "R11", "R12"]);
        let sum = x.wrapping_add(y);
        let diff = x.wrapping_sub(y);
        assert_eq!(
            g,
            vec![
                sum as u32,
                (sum >> 32) as u32,
                diff as u32,
                (diff >> 32) as u32
            ]
        );
    }
}

#[test]
fn iadd3_two_carry_outs_sum_three_words() {
    // 3 x 0xffffffff: total carry 2, split over the two carry predicates.
    let body = [
        mov("R4", u32::MAX),
        "IADD3 R5, P0, P1, R4, R4, R4".into(),
        "IADD3.X R6, RZ, RZ, RZ, P0, P1".into(),
    ];
    let b2: Vec<&str> = body.iter().map(String::as_str).collect();
    let total = 3 * u64::from(u32::MAX);
    assert_eq!(
        one(&b2, &["R5", "R6"]),
        vec![total as u32, (total >> 32) as u32]
    );
}

#[test]
fn imad_wide_hi_and_plain() {
    for &(a, b, c) in SAMPLES {
        let body = [
            mov("R4", a),
            mov("R5", b),
            mov("R6", c),
            mov("R7", a ^ c),
            "IMAD R8, R4, R5, R6".into(),
            "IMAD.WIDE.U32 R12, R4, R5, R6".into(),
            "IMAD.WIDE R14, R4, R5, R6".into(),
            "IMAD.HI.U32 R16, R4, R5, RZ".into(),
            "IMAD.HI R17, R4, R5, RZ".into(),
        ];
        let b2: Vec<&str> = body.iter().map(String::as_str).collect();
        let g = one(&b2, &["R8", "R12", "R13", "R14", "R15", "R16", "R17"]);
        let c64 = (u64::from(a ^ c) << 32) | u64::from(c);
        let wu = (u64::from(a) * u64::from(b)).wrapping_add(c64);
        let ws = ((i64::from(a as i32) * i64::from(b as i32)) as u64).wrapping_add(c64);
        let hu = ((u64::from(a) * u64::from(b)) >> 32) as u32;
        let hs = ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32;
        assert_eq!(
            g,
            vec![
                a.wrapping_mul(b).wrapping_add(c),
                wu as u32,
                (wu >> 32) as u32,
                ws as u32,
                (ws >> 32) as u32,
                hu,
                hs
            ]
        );
    }
}

#[test]
fn imad_hi_adds_a_64_bit_pair_like_ptxas_division() {
    // ptxas's 32-bit division refines the reciprocal with `IMAD.HI.U32 Rr, Rr, Rn, Rz`, where
    // Rz = 0 and Rz+1 = Rr, i.e. r + umulhi(r, n): the addend is the register pair. (The ZLUDA
    // `rem` run test, with hardware-recorded output, only passes with this meaning.)
    for &(a, b, c) in SAMPLES {
        let body = [
            mov("R4", c),
            mov("R5", a),
            mov("R6", b),
            "IMAD.HI.U32 R8, R5, R6, R4".into(),
            "IMAD.HI R9, R5, R6, R4".into(),
        ];
        let b2: Vec<&str> = body.iter().map(String::as_str).collect();
        let pair = (u64::from(a) << 32) | u64::from(c);
        let hu = ((u128::from(u64::from(a) * u64::from(b)) + u128::from(pair)) >> 32) as u32;
        let ps = (i64::from(a as i32) * i64::from(b as i32)) as u64;
        let hs = (ps.wrapping_add(pair) >> 32) as u32;
        assert_eq!(one(&b2, &["R8", "R9"]), vec![hu, hs]);
    }
    // The division sequence itself: 21692 % 13 (the ZLUDA `rem` test's input).
    let (x, y) = (21692u32, 13u32);
    let rcp = 1.0f32 / y as f32;
    let body = [
        mov("R8", y),
        mov("R12", x),
        format!("IMAD.MOV.U32 R6, RZ, RZ, {:#x}", rcp.to_bits()),
        "IADD3 R4, R6, 0xffffffe, RZ".into(),
        "F2I.FTZ.U32.TRUNC.NTZ R5, R4".into(),
        "IMAD.MOV.U32 R4, RZ, RZ, RZ".into(),
        "IMAD.MOV R7, RZ, RZ, -R5".into(),
        "IMAD R7, R7, R8, RZ".into(),
        "IMAD.HI.U32 R5, R5, R7, R4".into(),
        "IMAD.HI.U32 R5, R5, R12, RZ".into(),
    ];
    let b2: Vec<&str> = body.iter().map(String::as_str).collect();
    let q = one(&b2, &["R5"])[0];
    // The estimate is the quotient or one below it (ptxas then corrects).
    assert!(q == x / y || q + 1 == x / y, "estimate {q} for {}", x / y);
}

#[test]
fn shf_funnel_shifts_match_ptx_shl_shr() {
    for &(a, b, _) in SAMPLES {
        let x = (u64::from(b) << 32) | u64::from(a);
        for s in [0u32, 1, 13, 31, 32, 40] {
            let body = [
                mov("R4", a),
                mov("R5", b),
                mov("R6", s),
                "SHF.L.U32 R7, R4, R6, RZ".into(),
                "SHF.R.U32.HI R8, RZ, R6, R4".into(),
                "SHF.R.S32.HI R9, RZ, R6, R4".into(),
                "SHF.L.U64.HI R11, R4, R6, R5".into(),
                "SHF.R.U64 R12, R4, R6, R5".into(),
            ];
            let b2: Vec<&str> = body.iter().map(String::as_str).collect();
            let g = one(&b2, &["R7", "R8", "R9", "R11", "R12"]);
            // PTX: shl/shr clamp the amount (>= width gives 0 or the sign fill).
            let shl32 = if s >= 32 { 0 } else { a << s };
            let shr32 = if s >= 32 { 0 } else { a >> s };
            let sar32 = ((a as i32) >> s.min(31)) as u32;
            let shl64 = if s >= 64 { 0 } else { x << s };
            let shr64 = if s >= 64 { 0 } else { x >> s };
            assert_eq!(
                g,
                vec![shl32, shr32, sar32, (shl64 >> 32) as u32, shr64 as u32],
                "shift {s} of {x:#x}"
            );
        }
    }
}

#[test]
fn prmt_selects_bytes_like_ptx_prmt() {
    let (a, b) = (0x4433_2211u32, 0x8877_6655u32);
    for sel in [0x3210u32, 0x7654, 0x0123, 0x5140, 0x9a8b, 0x1111] {
        let body = [
            mov("R4", a),
            mov("R5", b),
            format!("PRMT R6, R4, {sel:#x}, R5"),
        ];
        let b2: Vec<&str> = body.iter().map(String::as_str).collect();
        let bytes = [0x11u8, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88];
        let mut want = 0u32;
        for i in 0..4 {
            let n = (sel >> (4 * i)) & 0xf;
            let mut v = bytes[(n & 7) as usize];
            if n & 8 != 0 {
                v = if v & 0x80 != 0 { 0xff } else { 0 };
            }
            want |= u32::from(v) << (8 * i);
        }
        assert_eq!(one(&b2, &["R6"]), vec![want], "selector {sel:#x}");
    }
}

#[test]
fn lea_forms_compute_64_bit_scaled_addresses() {
    // base + (sext(i) << 3), the lowering of a 64-bit array index.
    let base = 0x0000_0010_ffff_fff0u64;
    for i in [5i32, -3, 0x1000_0000] {
        let body = [
            mov("R4", i as u32),
            mov("R6", base as u32),
            mov("R7", (base >> 32) as u32),
            "LEA R8, P0, R4, R6, 0x3".into(),
            "LEA.HI.X.SX32 R9, R4, R7, 0x3, P0".into(),
        ];
        let b2: Vec<&str> = body.iter().map(String::as_str).collect();
        let want = base.wrapping_add((i64::from(i) << 3) as u64);
        assert_eq!(
            one(&b2, &["R8", "R9"]),
            vec![want as u32, (want >> 32) as u32]
        );
    }
}

#[test]
fn lea_with_a_negated_addend_subtracts_it() {
    // ptxas writes `x * 7` as `LEA R17, R5, -R5, 0x3` (nvdisasm's text in the corpus).
    for x in [5u32, 0, 0x8000_0001, u32::MAX] {
        let body = [mov("R5", x), "LEA R17, R5, -R5, 0x3".into()];
        let b2: Vec<&str> = body.iter().map(String::as_str).collect();
        assert_eq!(one(&b2, &["R17"]), vec![x.wrapping_mul(7)], "{x:#x}");
    }
}

#[test]
fn isetp_ex_chains_compare_64_bit_values() {
    let vals: &[i64] = &[-5, 3, 0x1_0000_0000, -0x1_0000_0000, i64::MAX, 0];
    for &x in vals {
        for &y in vals {
            let body = [
                mov("R4", x as u32),
                mov("R5", (x >> 32) as u32),
                mov("R6", y as u32),
                mov("R7", (y >> 32) as u32),
                "ISETP.LT.U32.AND P0, PT, R4, R6, PT".into(),
                "ISETP.LT.AND.EX P0, PT, R5, R7, PT, P0".into(),
                "ISETP.NE.U32.AND P1, PT, R4, R6, PT".into(),
                "ISETP.NE.AND.EX P1, PT, R5, R7, PT, P1".into(),
                "ISETP.GE.U32.AND P2, PT, R4, R6, PT".into(),
                "ISETP.GE.U32.AND.EX P2, PT, R5, R7, PT, P2".into(),
                "SEL R8, RZ, 0x1, !P0".into(),
                "SEL R9, RZ, 0x1, !P1".into(),
                "SEL R11, RZ, 0x1, !P2".into(),
            ];
            let b2: Vec<&str> = body.iter().map(String::as_str).collect();
            let want = vec![
                u32::from(x < y),
                u32::from(x != y),
                u32::from(x as u64 >= y as u64),
            ];
            assert_eq!(one(&b2, &["R8", "R9", "R11"]), want, "{x} vs {y}");
        }
    }
}

#[test]
fn float_min_max_and_unordered_compares() {
    let nan = 0x7fc0_0000u32;
    let cases: &[(f32, u32)] = &[(1.5, 0xbf80_0000), (-0.0, 0x0000_0000), (2.0, nan)];
    for &(a, b) in cases {
        let body = [
            mov("R4", a.to_bits()),
            mov("R5", b),
            "FMNMX R6, R4, R5, PT".into(),
            "FMNMX R7, R4, R5, !PT".into(),
            "FSETP.GTU.AND P0, PT, R4, R5, PT".into(),
            "SEL R8, RZ, 0x1, !P0".into(),
        ];
        let b2: Vec<&str> = body.iter().map(String::as_str).collect();
        let bf = f32::from_bits(b);
        // PTX min/max: a NaN operand yields the other; -0 < +0.
        let (mn, mx) = if bf.is_nan() {
            (a, a)
        } else if a == 0.0 && bf == 0.0 {
            (-0.0, 0.0)
        } else {
            (a.min(bf), a.max(bf))
        };
        let gtu = bf.is_nan() || a > bf;
        assert_eq!(
            one(&b2, &["R6", "R7", "R8"]),
            vec![mn.to_bits(), mx.to_bits(), u32::from(gtu)]
        );
    }
}

#[test]
fn f2i_saturates_and_maps_nan_to_zero() {
    let cases: &[(f32, i32, u32)] = &[
        (1e10, i32::MAX, u32::MAX),
        (-1e10, i32::MIN, 0),
        (f32::NAN, 0, 0),
        (-2.75, -2, 0),
        (3.99, 3, 3),
    ];
    for &(x, s, u) in cases {
        let body = [
            mov("R4", x.to_bits()),
            "F2I.TRUNC.NTZ R5, R4".into(),
            "F2I.U32.TRUNC.NTZ R6, R4".into(),
        ];
        let b2: Vec<&str> = body.iter().map(String::as_str).collect();
        assert_eq!(one(&b2, &["R5", "R6"]), vec![s as u32, u], "{x}");
    }
}

#[test]
fn shfl_butterfly_reduction_sums_all_lanes() {
    let body = [
        "IMAD R4, R10, R10, 0x1", // lane value t*t + 1
        "SHFL.BFLY PT, R5, R4, 0x10, 0x1f",
        "IADD3 R4, R4, R5, RZ",
        "SHFL.BFLY PT, R5, R4, 0x8, 0x1f",
        "IADD3 R4, R4, R5, RZ",
        "SHFL.BFLY PT, R5, R4, 0x4, 0x1f",
        "IADD3 R4, R4, R5, RZ",
        "SHFL.BFLY PT, R5, R4, 0x2, 0x1f",
        "IADD3 R4, R4, R5, RZ",
        "SHFL.BFLY PT, R5, R4, 0x1, 0x1f",
        "IADD3 R4, R4, R5, RZ",
        "SHFL.UP P0, R6, R10, 0x1, RZ",
        "SEL R7, RZ, 0x1, !P0",
    ];
    let g = run(&body, &["R4", "R6", "R7"], 32).expect("runs");
    let total: u32 = (0..32).map(|t| t * t + 1).sum();
    for (t, v) in g.iter().enumerate() {
        let t = t as u32;
        // shfl.up by 1: lane 0 keeps its own value and reports out of range.
        let (up, ok) = if t == 0 { (0, 0) } else { (t - 1, 1) };
        assert_eq!(v, &vec![total, up, ok], "lane {t}");
    }
}

#[test]
fn divergent_branch_reconverges_at_bsync() {
    // if (t & 1) x = 100 + t; else x = 200 + t;  then y = x + 1 after reconvergence; and a
    // ballot of the odd lanes after BSYNC sees every lane active again.
    let body = [
        "LOP3.LUT R4, R10, 0x1, RZ, 0xc0, !PT",
        "ISETP.NE.U32.AND P0, PT, R4, RZ, PT",
        "BSSY B0, `(@0xc0)",
        "@!P0 BRA `(@0xa0)",
        "IADD3 R5, R10, 0x64, RZ",
        "BRA `(@0xb0)",
        "IADD3 R5, R10, 0xc8, RZ",
        "BSYNC B0",
        "IADD3 R6, R5, 0x1, RZ",
        "VOTE.ANY R7, PT, P0",
    ];
    // Addresses: prologue = 4 instructions (0x00..0x30); the body starts at 0x40.
    let g = run(&body, &["R5", "R6", "R7"], 32).expect("runs");
    for (t, v) in g.iter().enumerate() {
        let t = t as u32;
        let x = if t & 1 == 1 { 100 + t } else { 200 + t };
        assert_eq!(v, &vec![x, x + 1, 0xaaaa_aaaa], "lane {t}");
    }
}

#[test]
fn out_of_bounds_store_traps_with_the_thread() {
    let body = ["IMAD.MOV.U32 R4, RZ, RZ, 0x7", "STG.E [R2.64+0x4000], R4"];
    match run(&body, &[], 2) {
        Err(EmuError::Trap {
            message, thread, ..
        }) => {
            assert!(message.contains("out of bounds"), "{message}");
            assert_eq!(thread, [0, 0, 0]);
        }
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn unknown_instruction_is_reported_by_name() {
    match run(&["BMMA.88128.AND.POPC R4, R8, R12, R4"], &[], 1) {
        Err(EmuError::Unsupported { reason, .. }) => assert!(reason.contains("BMMA"), "{reason}"),
        other => panic!("expected unsupported, got {other:?}"),
    }
}

#[test]
fn exclusive_warpsync_runs_each_member_mask_apart() {
    // A collective whose member mask differs between threads (`redux.sync` with lanes 0..15 on
    // mask 0xffff and lanes 16..31 on 0xffff0000), as ptxas compiles it: R2UR tests whether
    // each lane's mask register equals the first lane's, then WARPSYNC.EXCLUSIVE splits the
    // warp into its groups and REDUX reduces over each group alone.
    let body = [
        "ISETP.LT.U32.AND P0, PT, R10, 0x10, PT",
        "IMAD.MOV.U32 R12, RZ, RZ, 0xffff",
        "@!P0 IMAD.MOV.U32 R12, RZ, RZ, -0x10000",
        "IMAD R4, R10, R10, 0x1",
        "R2UR P1, URZ, R12",
        "SEL R6, RZ, 0x1, !P1",
        "IMAD.MOV.U32 R13, RZ, RZ, 0x7",
        "R2UR P2, UR5, R13",
        "SEL R7, RZ, 0x1, !P2",
        "IMAD.U32 R8, RZ, RZ, UR5",
        "WARPSYNC.EXCLUSIVE R12",
        "REDUX.SUM.S32 UR4, R4",
        "IMAD.U32 R5, RZ, RZ, UR4",
    ];
    let g = run(&body, &["R5", "R6", "R7", "R8"], 32).expect("runs");
    let low: u32 = (0..16).map(|t| t * t + 1).sum();
    let high: u32 = (16..32).map(|t| t * t + 1).sum();
    for (t, v) in g.iter().enumerate() {
        let sum = if t < 16 { low } else { high };
        // The mask register of lanes 16..31 differs from lane 0's (P1), the constant does not
        // (P2).
        let differs = u32::from(t >= 16);
        assert_eq!(v, &vec![sum, differs, 0, 7], "lane {t}");
    }
}

#[test]
fn bra_conv_is_taken_only_by_a_converged_warp() {
    // Lanes 16..31 branch away; lanes 0..15 reach BRA.CONV ~URZ diverged (not taken). After
    // BSYNC the whole warp reaches the second BRA.CONV converged (taken).
    let body = [
        "ISETP.GE.U32.AND P0, PT, R10, 0x10, PT", // 0x40
        "BSSY B0, `(@0xd0)",
        "@P0 BRA `(@0xc0)",
        "BRA.CONV ~URZ, `(@0xa0)",
        "IMAD.MOV.U32 R5, RZ, RZ, 0x1", // 0x80
        "BRA `(@0xd0)",
        "IMAD.MOV.U32 R5, RZ, RZ, 0x2", // 0xa0
        "BRA `(@0xd0)",
        "IMAD.MOV.U32 R5, RZ, RZ, 0x3", // 0xc0
        "BSYNC B0",                     // 0xd0
        "BRA.CONV ~URZ, `(@0x110)",
        "IMAD.MOV.U32 R6, RZ, RZ, 0x1",
        "BRA `(@0x120)",
        "IMAD.MOV.U32 R6, RZ, RZ, 0x2", // 0x110
    ];
    let g = run(&body, &["R5", "R6"], 32).expect("runs");
    for (t, v) in g.iter().enumerate() {
        let first = if t < 16 { 1 } else { 3 };
        assert_eq!(v, &vec![first, 2], "lane {t}");
    }
}

#[test]
fn driver_words_describe_the_reserved_shared_block() {
    // The launch state ptxas's code reads for %reserved_smem_offset_*, %total_smem_size and
    // %dynamic_smem_size (docs/arch/emu.md): with no static and 200 bytes of dynamic shared
    // memory, the user part rounds up to 0x100 and the CTA has 0x500 bytes. Before sm_90 the
    // 1 KiB block follows (0x100..0x500: `_1` = 0x200, `_end` = 0x400); on sm_90 it is 0..0x400
    // (`_1` = 0x100, `_end` = 0x300).
    let read = |sm: u32, end: u32, off1: u32| -> Vec<u32> {
        let body = [
            "S2R R4, SR_SMEMSZ".to_string(),
            format!("LDC R5, c[0x0][{:#x}]", 0x114),
            format!("LDC R6, c[0x0][{end:#x}]"),
            format!("LDC R7, c[0x0][{off1:#x}]"),
            "LDC R8, c[0x0][0x2c]".to_string(),
            // %reserved_smem_offset_1 is a usable shared address: store, load back.
            "IMAD.MOV.U32 R9, RZ, RZ, 0x2a".to_string(),
            "STS [R7+0x10], R9".to_string(),
            "LDS R11, [R7+0x10]".to_string(),
        ];
        let b: Vec<&str> = body.iter().map(String::as_str).collect();
        run_on(sm, &b, &["R4", "R5", "R6", "R7", "R8", "R11"], 1, 200)
            .expect("runs")
            .remove(0)
    };
    assert_eq!(
        read(80, 0x120, 0x124),
        vec![0x500, 0x400, 0x400, 0x200, 200, 0x2a]
    );
    assert_eq!(
        read(90, 0x68, 0x6c),
        vec![0x500, 0x400, 0x300, 0x100, 200, 0x2a]
    );
}

#[test]
fn ldgsts_copies_zero_fills_and_ignores_the_source() {
    // `cp.async` as ptxas 13.0.88 writes it for sm_80 (read from its code for
    // `cp.async.ca/cg ... [, src-size | ignore-src]`): the predicate operand false means
    // `ignore-src` (zeros); `.ZFILL` takes the number of trailing bytes to zero from the
    // source address modulo the size (ptxas adds `(16 - src-size) % 16`).
    let mut body: Vec<String> = Vec::new();
    for (i, v) in [0x1122_3344u32, 0x5566_7788, 0x99aa_bbcc, 0xddee_ff01]
        .iter()
        .enumerate()
    {
        body.push(mov("R12", *v));
        body.push(format!("STG.E [R2.64+{:#x}], R12", 0x20 + 4 * i));
    }
    body.push(mov("R13", 0xffff_ffff));
    body.push("STS [0x10], R13".into());
    body.extend([
        "LDGSTS.E.BYPASS.128 [RZ], [R2.64+0x20]".to_string(),
        "LDGSTS.E [0x10], [R2.64+0x20], !PT".to_string(),
        // 13 bytes of source: the address is 3 past the 16-byte boundary.
        "IADD3 R6, P0, R2, 0x23, RZ".to_string(),
        "IADD3.X R7, RZ, R3, RZ, P0, !PT".to_string(),
        "LDGSTS.E.BYPASS.128.ZFILL [0x20], [R6.64], PT".to_string(),
        "LDGDEPBAR".to_string(),
        "DEPBAR.LE SB0, 0x0".to_string(),
        "LDS.128 R20, [RZ]".to_string(),
        "LDS R24, [0x10]".to_string(),
        "LDS.128 R28, [0x20]".to_string(),
    ]);
    let b: Vec<&str> = body.iter().map(String::as_str).collect();
    let got = run_on(
        80,
        &b,
        &[
            "R20", "R21", "R22", "R23", "R24", "R28", "R29", "R30", "R31",
        ],
        1,
        256,
    )
    .expect("runs")
    .remove(0);
    assert_eq!(
        got,
        vec![
            0x1122_3344,
            0x5566_7788,
            0x99aa_bbcc,
            0xddee_ff01,
            0,
            0x1122_3344,
            0x5566_7788,
            0x99aa_bbcc,
            0x0000_0001
        ]
    );
}

#[test]
fn fset_and_scaled_fmul() {
    let body = [
        mov("R4", 1.5f32.to_bits()),
        mov("R5", (-1.0f32).to_bits()),
        mov("R6", 0x7fc0_0000),
        mov("R7", 3.0f32.to_bits()),
        mov("R8", 5.0f32.to_bits()),
        "FSET.BF.GT.AND R10, R4, RZ, PT".to_string(),
        "FSET.BF.GT.AND R11, R5, RZ, PT".to_string(),
        "FSET.BF.GT.AND R12, R6, RZ, PT".to_string(),
        // `.D2`: the product halved before its one rounding.
        "FMUL.D2 R13, R7, R8".to_string(),
    ];
    let b: Vec<&str> = body.iter().map(String::as_str).collect();
    assert_eq!(
        one(&b, &["R10", "R11", "R12", "R13"]),
        vec![1.0f32.to_bits(), 0, 0, 7.5f32.to_bits()]
    );
}

#[test]
fn r2ur_waterfall_loop_serves_each_distinct_value_once() {
    // ptxas's loop for a texture handle that may differ between threads: each round, the
    // first remaining lane's value becomes uniform (R2UR), the lanes holding it (P0 clear)
    // are served, and `BRA.U.ANY` repeats while any lane is left. R8 = tid & 3, so lane 0's
    // value is served in round 1, lane 1's in round 2, ...
    let body = [
        "LOP3.LUT R8, R10, 0x3, RZ, 0xc0, !PT", // 0x40
        "PLOP3.LUT P1, PT, PT, PT, PT, 0x80, 0x0",
        "PLOP3.LUT P0, PT, PT, PT, PT, 0x80, 0x0",
        "IMAD.MOV.U32 R6, RZ, RZ, RZ",
        "PLOP3.LUT P0, PT, P0, P1, PT, 0xa2, 0x0", // 0x80
        "@P1 R2UR P0, UR4, R8",
        "@!P0 IMAD.U32 R5, RZ, RZ, UR4",
        "@P1 IADD3 R6, R6, 0x1, RZ",
        "@P1 PLOP3.LUT P1, PT, P0, PT, PT, 0x80, 0x0",
        "PLOP3.LUT P0, PT, PT, PT, PT, 0x80, 0x0",
        "@P1 BRA.U.ANY `(@0x80)",
    ];
    let g = run(&body, &["R5", "R6"], 32).expect("runs");
    for (t, v) in g.iter().enumerate() {
        let value = t as u32 & 3;
        assert_eq!(v, &vec![value, value + 1], "lane {t}");
    }
}

#[test]
fn r2ur_or_accumulates_differences_of_both_words() {
    // A 64-bit value in R8:R9 is uniform only where both words equal the first lane's.
    let body = [
        "LOP3.LUT R8, R10, 0x1, RZ, 0xc0, !PT", // low word differs on odd lanes
        "LOP3.LUT R9, R10, 0x2, RZ, 0xc0, !PT", // high word differs on lanes 2, 3 mod 4
        "PLOP3.LUT P0, PT, PT, PT, PT, 0x8, 0x0", // P0 = false
        "R2UR P0, UR4, R8",
        "R2UR.OR P0, UR5, R9",
        "SEL R5, RZ, 0x1, !P0",
        "IMAD.U32 R6, RZ, RZ, UR4",
        "IMAD.U32 R7, RZ, RZ, UR5",
    ];
    let g = run(&body, &["R5", "R6", "R7"], 32).expect("runs");
    for (t, v) in g.iter().enumerate() {
        assert_eq!(v, &vec![u32::from(t % 4 != 0), 0, 0], "lane {t}");
    }
}

#[test]
fn collective_warpsync_runs_each_member_mask_apart_then_jumps_to_its_end() {
    // ptxas's divergent path for a collective (after `BRA.DIV`): WARPSYNC.COLLECTIVE with the
    // member mask (lanes 0..15: 0xffff, lanes 16..31: 0xffff0000), the collective, then
    // ENDCOLLECTIVE, which continues at the WARPSYNC's target (skipping the MOV after it).
    let body = [
        "ISETP.LT.U32.AND P0, PT, R10, 0x10, PT", // 0x40
        "IMAD.MOV.U32 R12, RZ, RZ, 0xffff",
        "@!P0 IMAD.MOV.U32 R12, RZ, RZ, -0x10000",
        "IADD3 R6, R10, 0x64, RZ",
        "BSSY B0, `(@0xf0)", // 0x80
        "WARPSYNC.COLLECTIVE R12, `(@0xf0)",
        "REDUX.SUM.S32 UR4, R6",
        "IMAD.U32 R8, RZ, RZ, UR4",
        "ENDCOLLECTIVE", // 0xc0
        "IMAD.MOV.U32 R8, RZ, RZ, RZ",
        "IMAD.MOV.U32 R8, RZ, RZ, RZ",
        "BSYNC B0", // 0xf0
    ];
    let g = run(&body, &["R8"], 32).expect("runs");
    let low: u32 = (0..16).map(|t| t + 100).sum();
    let high: u32 = (16..32).map(|t| t + 100).sum();
    for (t, v) in g.iter().enumerate() {
        assert_eq!(v[0], if t < 16 { low } else { high }, "lane {t}");
    }
}

#[test]
fn generic_atom_with_a_predicate_result_acts_only_on_global_addresses() {
    // ptxas's generic 64-bit atomics: `ATOM P0, d, [a], b; @P0 BRA done; QSPC.E.S ...`: the
    // atomic happens (and P0 is set) only for a global address. Word 12 of the thread's slot
    // (global) gets 5 added and returns its old value 0; a generic shared address leaves P1
    // clear and the destination alone.
    let shared = interp::mem::SHARED_WINDOW;
    let body = [
        "IMAD.MOV.U32 R6, RZ, RZ, 0x5".to_string(),
        "IMAD.MOV.U32 R7, RZ, RZ, RZ".to_string(),
        "IMAD.MOV.U32 R4, RZ, RZ, 0x77".to_string(),
        "ATOM.E.ADD.64.STRONG.GPU P0, R4, [R2.64+0x30], R6".to_string(),
        "LDG.E R13, [R2.64+0x30]".to_string(),
        mov("R8", shared as u32),
        mov("R9", (shared >> 32) as u32),
        "IMAD.MOV.U32 R12, RZ, RZ, 0x99".to_string(),
        "ATOM.E.ADD.64.STRONG.GPU P1, R12, [R8.64], R6".to_string(),
        "SEL R10, RZ, 0x1, !P0".to_string(),
        "SEL R11, RZ, 0x1, !P1".to_string(),
    ];
    let refs: Vec<&str> = body.iter().map(String::as_str).collect();
    let g = run(&refs, &["R4", "R10", "R11", "R12", "R13"], 1).expect("runs");
    assert_eq!(g[0], vec![0, 1, 0, 0x99, 5]);
}

#[test]
fn a_uniform_base_with_a_32_bit_offset_register_is_a_64_bit_address() {
    // sm_75's `LDG.E.SYS R4, [R10.U32+UR4+0x100]`: UR4:UR5 is the 64-bit base, R10 an unsigned
    // 32-bit offset. Thread 0 stores 0x1234 at word 3 of its slot (the buffer's start) and
    // loads it back through the uniform base plus an offset register of 8 and 0x4.
    let body = [
        "ULDC.64 UR4, c[0x0][0x160]".to_string(),
        mov("R6", 0x1234),
        "STG.E [R2.64+0xc], R6".to_string(),
        mov("R11", 0x8),
        "LDG.E R12, [R11.U32+UR4+0x4]".to_string(),
    ];
    let refs: Vec<&str> = body.iter().map(String::as_str).collect();
    assert_eq!(one(&refs, &["R12"]), vec![0x1234]);
}

/// Runs `lines` on `sm` (one thread) with R4 = `a`, R5 = `b`; they write R7 and R8, which are
/// returned.
fn two_results(sm: u32, a: u32, b: u32, lines: [&str; 2]) -> Vec<u32> {
    let body = [mov("R4", a), mov("R5", b), lines[0].into(), lines[1].into()];
    let body: Vec<&str> = body.iter().map(String::as_str).collect();
    run_on(sm, &body, &["R7", "R8"], 1, 0)
        .expect("runs")
        .remove(0)
}

#[test]
fn viadd_packed_lanes_add_without_carries_between_lanes() {
    // PTX `vadd2` / `vsub4` (no saturation): each halfword / byte lane wraps on its own.
    let lanes = |a: u32, b: u32, bits: u32, sub: bool| -> u32 {
        let mask = (1u64 << bits) - 1;
        (0..32 / bits).fold(0u32, |r, i| {
            let (x, y) = (
                u64::from(a >> (i * bits)) & mask,
                u64::from(b >> (i * bits)) & mask,
            );
            let v = if sub { x + (mask + 1) - y } else { x + y } & mask;
            r | (v as u32) << (i * bits)
        })
    };
    for &(a, b, _) in SAMPLES {
        let got = two_results(
            90,
            a,
            b,
            ["VIADD.16x2 R7, R4, R5", "VIADD.U8x4 R8, R4, -R5"],
        );
        assert_eq!(
            got,
            vec![lanes(a, b, 16, false), lanes(a, b, 8, true)],
            "{a:#x} {b:#x}"
        );
    }
}

#[test]
fn vabsdiff4_packs_or_sums_byte_differences() {
    // PTX `vabsdiff4.u32.u32.u32` (packed |a - b| per unsigned byte) and its `.add` form
    // (`__vsadu4`: the four differences summed, plus c).
    for &(a, b, _) in SAMPLES {
        let diffs: Vec<u32> = (0..4)
            .map(|i| ((a >> (8 * i)) & 0xff).abs_diff((b >> (8 * i)) & 0xff))
            .collect();
        let packed = diffs
            .iter()
            .enumerate()
            .fold(0, |r, (i, d)| r | d << (8 * i));
        let got = two_results(
            80,
            a,
            b,
            [
                "VABSDIFF4.U8 R7, R4, R5, RZ",
                "VABSDIFF4.U8.ACC R8, R4, R5, RZ",
            ],
        );
        assert_eq!(got, vec![packed, diffs.iter().sum()], "{a:#x} {b:#x}");
    }
}

#[test]
fn lanes_that_diverged_do_not_run_together_again_without_a_convergence_point() {
    // if (t & 1) x = 100 + t; else x = 200 + t; then, without BSYNC, a ballot at the join
    // point sees only the lanes of its own path; after WARPSYNC it sees the whole warp.
    let body = [
        "LOP3.LUT R4, R10, 0x1, RZ, 0xc0, !PT", // 0x40
        "ISETP.NE.U32.AND P0, PT, R4, RZ, PT",
        "@!P0 BRA `(@0x80)",
        "BRA `(@0x90)",
        "IADD3 R5, R10, 0xc8, RZ", // 0x80
        "VOTE.ANY R7, PT, PT",     // 0x90: the join point
        "WARPSYNC 0xffffffff",
        "VOTE.ANY R8, PT, PT",
    ];
    let g = run(&body, &["R7", "R8"], 32).expect("runs");
    for (t, v) in g.iter().enumerate() {
        let own = if t & 1 == 1 { 0xaaaa_aaaa } else { 0x5555_5555 };
        assert_eq!(v, &vec![own, 0xffff_ffff], "lane {t}");
    }
}

#[test]
fn a_barrier_reached_by_a_diverged_warp_in_parts_traps() {
    // The hardware counts each execution of BAR by part of a warp as the warp's arrival (kiln's
    // cubins that did so hung or raced on an H100/H200); with WARPSYNC first it is one arrival.
    let diverged = [
        "ISETP.GE.U32.AND P0, PT, R10, 0x10, PT", // 0x40
        "@P0 BRA `(@0x70)",
        "IMAD.MOV.U32 R5, RZ, RZ, 0x1",
        "BAR.SYNC.DEFER_BLOCKING 0x0", // 0x70
    ];
    match run_on(90, &diverged, &[], 64, 0) {
        Err(EmuError::Trap { message, .. }) => {
            assert!(message.contains("diverged warp"), "{message}")
        }
        other => panic!("expected a trap, got {other:?}"),
    }
    let converged = [
        "ISETP.GE.U32.AND P0, PT, R10, 0x10, PT", // 0x40
        "@P0 BRA `(@0x70)",
        "IMAD.MOV.U32 R5, RZ, RZ, 0x1",
        "WARPSYNC.ALL", // 0x70
        "BAR.SYNC.DEFER_BLOCKING 0x0",
    ];
    run_on(90, &converged, &[], 64, 0).expect("runs");
}
