//! Checks on small modules; every expected verdict was confirmed with ptxas 13.0.88.

use expect_test::{Expect, expect};

fn check(text: &str, expect: Expect) {
    let parse = syntax::parse(text);
    assert!(parse.errors().is_empty(), "{:?}", parse.errors());
    let diags = crate::check_module(&parse.tree());
    let mut out = String::new();
    for d in diags {
        let line = text[..usize::from(d.range.start())].matches('\n').count() + 1;
        out.push_str(&format!("{line}: {:?}: {}\n", d.severity, d.message));
    }
    expect.assert_eq(&out);
}

fn kernel(version: &str, target: &str, body: &str) -> String {
    format!(
        ".version {version}\n.target {target}\n.address_size 64\n.visible .entry k(.param .u64 a)\n{{\n.reg .u32 %r<4>;\n.reg .u64 %rd<4>;\n.reg .f32 %f<4>;\n.reg .pred %p<2>;\n{body}\nret;\n}}\n"
    )
}

#[test]
fn clean_kernel_has_no_diagnostics() {
    check(
        &kernel(
            "8.0",
            "sm_80",
            "ld.param.u64 %rd1, [a];\nadd.u32 %r1, %r2, 1;\nsetp.eq.u32 %p1, %r1, %r2;\n@%p1 bra L;\nL:\nst.global.u32 [%rd1], %r1;",
        ),
        expect![[""]],
    );
}

#[test]
fn unknown_symbols_and_duplicates() {
    check(
        &kernel(
            "8.0",
            "sm_80",
            "add.u32 %r1, %r9, 1;\nbra NOWHERE;\n.reg .u32 %r1;",
        ),
        expect![[r#"
            10: Error: Unknown symbol '%r9'
            11: Error: Unknown symbol 'NOWHERE'
            12: Error: Duplicate definition of variable '%r1'
        "#]],
    );
}

#[test]
fn operand_types() {
    check(
        &kernel(
            "8.0",
            "sm_80",
            "add.u32 %r1, %rd1, 1;\nadd.f32 %f1, %r1, %f2;\nld.global.u64 %r1, [%rd2];\nmul.wide.u32 %r1, %r1, %r2;\nsetp.eq.u32 %r1, %r1, %r2;\nand.b32 %r1, %f1, %r1;\nld.global.u16 %r1, [%rd2];",
        ),
        expect![[r#"
            10: Error: Arguments mismatch for instruction 'add': operand 2 is a .u64 register, the instruction needs an integer register of 32 bits
            11: Error: Arguments mismatch for instruction 'add': operand 2 is a .u32 register, the instruction needs a .f32 or .b32 register
            12: Error: Arguments mismatch for instruction 'ld': operand 1 is a .u32 register, the instruction needs an integer register of at least 64 bits
            13: Error: Arguments mismatch for instruction 'mul.wide': operand 1 is a .u32 register, the instruction needs an integer register of 64 bits
            14: Error: Arguments mismatch for instruction 'setp': operand 1 is a .u32 register, the instruction needs a .pred
        "#]],
    );
}

#[test]
fn target_and_version_gating() {
    check(
        &kernel("7.0", "sm_75", "redux.sync.add.u32 %r1, %r2, -1;"),
        expect![[r#"
            10: Error: Feature 'redux' requires .target sm_80 or higher
        "#]],
    );
    check(
        &kernel("8.0", "sm_80", "vote.any.pred %p1, %p0;"),
        expect![[r#"
            10: Error: Instruction 'vote' without '.sync' is not supported on .target sm_70 and higher from PTX ISA version 6.4
        "#]],
    );
    check(
        &kernel("6.5", "sm_80", "ret;"),
        expect![[r#"
            2: Error: PTX .version 6.5 does not support .target sm_80
        "#]],
    );
}

#[test]
fn module_level() {
    check(
        ".version 8.0\n.target sm_80\n.address_size 32\n.global .u32 g[];\n",
        expect![[r#"
            3: Error: 32-Bit compilation is no longer supported
            4: Error: Non-external variable 'g' has incomplete type
        "#]],
    );
    check(
        ".version 2.0\n\n.visible .func f()\n{\nret;\n}\n",
        expect![[r#"
            3: Error: Missing .target directive at start of file (a `.target sm_XX` must follow `.version`)
        "#]],
    );
}

#[test]
fn vectors() {
    check(
        &kernel(
            "8.0",
            "sm_80",
            "ld.global.v2.u32 %r1, [%rd1];\nld.global.u32 {%r1,%r2}, [%rd1];\nmov.v8.u32 {%r0,%r1,%r2,%r3,%r0,%r1,%r2,%r3}, {%r0,%r1,%r2,%r3,%r0,%r1,%r2,%r3};\nmov.u32 %r1, %tid;",
        ),
        expect![[r#"
            10: Error: Argument vector size mismatch for instruction 'ld': the instruction moves 2 element(s), the operand has 1
            11: Error: Argument vector size mismatch for instruction 'ld': the instruction moves 1 element(s), the operand has 2
            12: Error: Illegal vector size: 8 (`.v8` is allowed on ld/st only, not on 'mov')
            13: Error: Argument vector size mismatch for instruction 'mov': %tid is a vector; name a component such as %tid.x
        "#]],
    );
}

#[test]
fn whole_vector_registers_in_ld() {
    check(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n.reg .u64 in;\n.reg .v4 .u32 t;\nld.v4.b64 t, [in];\nld.v4.u32 t, [in];\nret;\n}\n",
        expect![[r#"
            8: Error: Arguments mismatch for instruction 'ld': operand 1 is a .u32 register, the instruction needs a register of at least 64 bits
        "#]],
    );
}

/// Verdicts probed with ptxas 13.0.88: f32 for u32, u64 for u32 and a register of the wrong
/// size are refused; s32 for u32 is accepted; the argument count must match.
#[test]
fn calls_against_signatures() {
    check(
        ".version 8.0\n.target sm_80\n.address_size 64\n.func (.param .u32 r) f(.param .u32 x) { ret; }\n.func (.reg .u32 r) g(.reg .u32 x) { ret; }\n.visible .entry k()\n{\n.reg .u32 %r<4>;\n.reg .u64 %rd<4>;\n.param .u32 p0;\n.param .u64 p2;\n.param .f32 p3;\n.param .s32 p4;\ncall (p0), f, (p3);\ncall (p0), f, (p4);\ncall (p2), f, (p0);\ncall (%r1), g, (%rd2);\ncall (p0), f, (p0, p0);\nret;\n}\n",
        expect![[r#"
            14: Error: Type of argument does not match formal parameter 'x': the argument is .f32, 'x' is .u32
            16: Error: Type of argument does not match formal parameter 'r': the argument is .u64, 'r' is .u32
            17: Error: Type of argument does not match formal parameter 'x': the argument is .u64, 'x' is .u32
            18: Error: Call has wrong number of parameters: 'f' takes 1 return value(s) and 1 argument(s), the call passes 1 and 2
        "#]],
    );
}

/// ptxas 13.0.88 segfaults on `ld.param` from a kernel-body `.param` variable that is not a
/// call result (checked: with and without `::entry`/`::func`, passed to a call or not; the
/// same code in a `.func`, and a read after `call (v), ...`, compile). We warn; the PTX ISA
/// makes the value undefined rather than the program ill-formed.
#[test]
fn kernel_body_param_reads() {
    let module = |kind: &str, body: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.func (.param .b32 r) h()\n{{\nst.param.b32 [r], 1;\nret;\n}}\n.visible {kind} k(.param .u64 a)\n{{\n.reg .b32 %r<2>;\n.param .b32 v;\n{body}\nret;\n}}\n"
        )
    };
    check(
        &module(".entry", "st.param.b32 [v], 5;\nld.param.b32 %r1, [v];"),
        expect![[r#"
            14: Warning: ld.param reads 'v', a .param variable declared in the kernel body that is not the result of a call: the PTX ISA defines such variables only as call arguments and results, so the value read is undefined (and ptxas 13.0.88 crashes on this read)
        "#]],
    );
    check(
        &module(".entry", "call (v), h, ();\nld.param.b32 %r1, [v+0];"),
        expect![[""]],
    );
    check(
        &module(".func", "st.param.b32 [v], 5;\nld.param.b32 %r1, [v];"),
        expect![[""]],
    );
}

/// `st.param` through a register in a kernel: undefined; ptxas 13.0.88 segfaults on
/// `mov.u32 %r1, 16; st.param.u32 [%r1], %r2;` in a kernel without parameters (and on a
/// corpus-derived mutant with parameters), compiles it in other kernels and in a `.func`.
#[test]
fn kernel_st_param_through_register() {
    let module = |kind: &str| {
        format!(
            ".version 9.0\n.target sm_90\n.address_size 64\n.visible {kind} k()\n{{\n.reg .b32 %r<3>;\nmov.u32 %r1, 16;\nmov.u32 %r2, 0;\nst.param.u32 [%r1], %r2;\nret;\n}}\n"
        )
    };
    check(
        &module(".entry"),
        expect![[r#"
            9: Warning: st.param through register '%r1' in a kernel: a register cannot hold the address of a writable .param variable here (kernel parameters are read-only, and mov cannot take the address of a call argument), so the store is undefined (ptxas 13.0.88 crashes on some such stores)
        "#]],
    );
    check(&module(".func"), expect![[""]]);
}

/// Each verdict probed with ptxas 13.0.88 (found by mutating PTX in test-data/unseen).
#[test]
fn bit_field_operand_types() {
    check(
        &kernel(
            "8.0",
            "sm_80",
            "bfi.b64 %rd1, %rd2, %rd3, 32, 32;\nbfi.b64 %rd1, %rd2, 32, 32, %rd3;\nbfi.b32 %r1, %f2, %r3, %r1, %r1;\nbfi.b32 %r1, %r2, %rd3, %r1, %r1;\nbfe.u64 %rd1, %rd2, %rd3, 8;\nbfe.u32 %r1, %f2, 8, 8;\nbfe.u32 %r1, %r2, %r3, 8;",
        ),
        expect![[r#"
            11: Error: Arguments mismatch for instruction 'bfi': operand 5 is a .u64 register, the instruction needs an integer register of 32 bits
            13: Error: Arguments mismatch for instruction 'bfi': operand 3 is a .u64 register, the instruction needs a register of 32 bits
            14: Error: Arguments mismatch for instruction 'bfe': operand 3 is a .u64 register, the instruction needs an integer register of 32 bits
            15: Error: Arguments mismatch for instruction 'bfe': operand 2 is a .f32 register, the instruction needs an integer register of 32 bits
        "#]],
    );
}

/// Debug-info gating and section labels; every verdict probed with ptxas 13.0.88 (found by
/// mutating -lineinfo PTX in test-data/unseen).
#[test]
fn line_info_and_section_labels() {
    let module = |ver: &str, loc: &str, sections: &str| {
        format!(
            ".version {ver}\n.target sm_75\n.address_size 64\n.file 1 \"a.cu\"\n.file 2 \"b.h\"\n.visible .entry k()\n{{\n.loc 1 3 1\n{loc}\nret;\n}}\n{sections}"
        )
    };
    let ok = ".section .debug_str\n{\n$L__s0:\n.b8 102,0\n$L__s1:\n.b8 103,0\n}\n";
    let dup = ".section .debug_str\n{\n$L__s0:\n.b8 102,0\n}\n.section .debug_abbrev\n{\n$L__s0:\n.b8 1\n}\n";
    let inl = ".loc 2 5 1, function_name $L__s0, inlined_at 1 3 1";
    check(&module("7.0", inl, ok), expect![[""]]);
    check(
        &module("6.4", inl, ok),
        expect![[r#"
            9: Error: Feature 'Line information of inline functions' requires PTX ISA .version 7.0 or later
            14: Error: Feature 'Defining labels in .section' requires PTX ISA .version 7.0 or later
            16: Error: Feature 'Defining labels in .section' requires PTX ISA .version 7.0 or later
        "#]],
    );
    check(
        &module("8.0", ".loc 1 4 1", dup),
        expect![[r#"
            19: Error: Duplicate definition of label '$L__s0'
        "#]],
    );
    // A section label may repeat a function name.
    check(
        &module(
            "8.0",
            ".loc 1 4 1",
            ".section .debug_str\n{\nk:\n.b8 102,0\n}\n",
        ),
        expect![[""]],
    );
}

/// `vote` operand types; every verdict probed with ptxas 13.0.88.
#[test]
fn vote_operand_types() {
    check(
        &kernel(
            "8.0",
            "sm_80",
            "vote.sync.ballot.b32 %r1, %p1, %r2;\nvote.sync.ballot.b32 %f1, !%p1, %r2;\nvote.sync.any.pred %p1, %p0, 0xffffffff;\nvote.sync.ballot.b32 %r1, %r2, %p1;\nvote.sync.ballot.b32 %r1, %p1, %f2;\nvote.sync.ballot.b32 %rd1, %p1, %r2;\nvote.sync.any.pred %r1, %p0, %r2;",
        ),
        expect![[r#"
            13: Error: Arguments mismatch for instruction 'vote': operand 2 is a .u32 register, the instruction needs a .pred
            13: Error: Arguments mismatch for instruction 'vote': operand 3 is a .pred register, the instruction needs an integer register of 32 bits
            14: Error: Arguments mismatch for instruction 'vote': operand 3 is a .f32 register, the instruction needs an integer register of 32 bits
            15: Error: Arguments mismatch for instruction 'vote': operand 1 is a .u64 register, the instruction needs a register of 32 bits
            16: Error: Arguments mismatch for instruction 'vote': operand 1 is a .u32 register, the instruction needs a .pred
        "#]],
    );
}

/// Packed `cvt` operand types and 256-bit loads/stores; every verdict probed with ptxas
/// 13.0.88 (found by mutating corpus PTX).
#[test]
fn packed_cvt_and_256_bit_accesses() {
    let k = |v: &str, t: &str, body: &str| {
        format!(
            ".version {v}\n.target {t}\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<9>;\n.reg .u32 %u<2>;\n.reg .f32 %f<3>;\n.reg .f64 %fd<2>;\n.reg .b64 %rd<5>;\n.reg .f16x2 %hh<2>;\n{body}\nret;\n}}\n"
        )
    };
    check(
        &k(
            "8.8",
            "sm_90",
            "cvt.rn.f16x2.f32 %r1, %f1, %f2;\ncvt.rn.f16x2.f32 %rd1, %r1, %f2;\ncvt.rn.f16x2.f32 %hh1, %f1, %rd2;\ncvt.rn.bf16x2.f32 %r1, %f1, %f2;\ncvt.rn.f16x2.f32 %f1, %f1, %f2;\ncvt.rn.bf16x2.f32 %u1, %f1, %f2;\ncvt.rn.f16x2.f32 %r1, %u1, %f2;\ncvt.rn.f16x2.f32 %r1, %f1, %fd1;",
        ),
        expect![[r#"
            16: Error: Arguments mismatch for instruction 'cvt': operand 1 is a .f32 register, the instruction needs a .f16x2 or .b32 register
            17: Error: Arguments mismatch for instruction 'cvt': operand 1 is a .u32 register, the instruction needs a .bf16x2 or .b32 register
            18: Error: Arguments mismatch for instruction 'cvt': operand 2 is a .u32 register, the instruction needs a .f32 or .b32 register
            19: Error: Arguments mismatch for instruction 'cvt': operand 3 is a .f64 register, the instruction needs a .f32 or .b32 register
        "#]],
    );
    let v8 = "ld.global.v8.b32 {%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8}, [%rd1];\nld.v4.b64 {%rd1,%rd2,%rd3,%rd4}, [%rd1];\nld.local.v8.b32 {%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8}, [%rd1];\nld.global.v4.b32 {%r1,%r2,%r3,%r4}, [%rd1];";
    check(
        &k("8.0", "sm_90", v8),
        expect![[r#"
        12: Error: Feature '256 bit wide load/store' requires PTX ISA .version 8.8 or later
        13: Error: Feature '256 bit wide load/store' requires PTX ISA .version 8.8 or later
        14: Error: Feature '256 bit wide load/store' requires PTX ISA .version 8.8 or later
    "#]],
    );
    check(
        &k("8.8", "sm_90", v8),
        expect![[r#"
        12: Error: Feature '256 bit wide load/store' requires .target sm_100 or higher
        13: Error: Feature '256 bit wide load/store' requires .target sm_100 or higher
        14: Error: Feature '256 bit wide load/store' requires .target sm_100 or higher
    "#]],
    );
    check(
        &k("8.8", "sm_100", v8),
        expect![[r#"
        14: Error: global state space expected for feature '256 bit wide load/store'
    "#]],
    );
}

/// A 32-bit register as a generic/global address with `.address_size 64`: ptxas 13.0.88 warns
/// "Program uses 32-bit address ... conflicting with .address_size 64" and fails with its
/// 32-bit error (probed for ld, st, ldu, red, prefetch, cvta); shared addresses are fine.
#[test]
fn thirty_two_bit_address_with_address_size_64() {
    check(
        &kernel(
            "8.0",
            "sm_90",
            "ld.shared.u32 %r1, [%r2];\nld.global.u32 %r1, [%rd2];",
        ),
        expect![[""]],
    );
    check(
        &kernel("8.0", "sm_90", "ld.u32 %r1, [%r2+4];"),
        expect![[r#"
            10: Error: 32-Bit compilation is no longer supported (`%r2` is a 32-bit generic/global address, which conflicts with .address_size 64)
        "#]],
    );
    check(
        &kernel("8.0", "sm_90", "cvta.to.global.u32 %r1, %r2;"),
        expect![[r#"
            10: Error: 32-Bit compilation is no longer supported (`%r1` is a 32-bit generic/global address, which conflicts with .address_size 64)
        "#]],
    );
}

/// Integer constants where a float operand is expected; every verdict probed with ptxas
/// 13.0.88 (found by mutating PTX in test-data/unseen).
#[test]
fn integer_constants_in_float_operands() {
    check(
        &kernel(
            "8.0",
            "sm_90",
            "add.f32 %f1, %f1, 1.5;\nadd.f32 %f1, %f1, 0f3F800000;\ncvt.rn.f32.s32 %f1, 1;\nsetp.eq.b32 %p1, %r1, 1;\nsetp.eq.f32 %p1, %r1, %r2;\nadd.f32 %f1, %f1, 1;\nadd.f32 %f1, %f1, -1;\nsetp.eq.f32 %p1, %f1, 1;\nst.global.f32 [%rd1], 1;\nmov.f32 %f1, 1;",
        ),
        expect![[r#"
            14: Error: Arguments mismatch for instruction 'setp': operand 2 is a .u32 register, the instruction needs a .f32 or .b32 register
            14: Error: Arguments mismatch for instruction 'setp': operand 3 is a .u32 register, the instruction needs a .f32 or .b32 register
            15: Error: Arguments mismatch for instruction 'add': operand 3 is an integer constant, the instruction needs a .f32 or .b32 register (write it as a floating-point constant, e.g. 1.0 or 0f3F800000)
            16: Error: Arguments mismatch for instruction 'add': operand 3 is an integer constant, the instruction needs a .f32 or .b32 register (write it as a floating-point constant, e.g. 1.0 or 0f3F800000)
            17: Error: Arguments mismatch for instruction 'setp': operand 3 is an integer constant, the instruction needs a .f32 or .b32 register (write it as a floating-point constant, e.g. 1.0 or 0f3F800000)
            18: Error: Arguments mismatch for instruction 'st': operand 2 is an integer constant, the instruction needs a .f32 or .b32 register (write it as a floating-point constant, e.g. 1.0 or 0f3F800000)
            19: Error: Arguments mismatch for instruction 'mov': operand 2 is an integer constant, the instruction needs a .f32 or .b32 register (write it as a floating-point constant, e.g. 1.0 or 0f3F800000)
        "#]],
    );
}

/// `.volatile`/`.relaxed`/`.acquire` need global or shared memory (probed with ptxas 13.0.88).
#[test]
fn memory_order_modifiers_and_state_spaces() {
    check(
        &kernel(
            "8.0",
            "sm_90",
            ".local .u32 l;\nld.volatile.shared.u32 %r1, [%rd1];\nld.relaxed.gpu.global.u32 %r1, [%rd1];\nld.volatile.u32 %r1, [%rd1];\nld.volatile.param.u64 %rd1, [a];\nld.relaxed.gpu.local.u32 %r1, [l];",
        ),
        expect![[r#"
            14: Error: Modifier '.volatile' cannot be applied to '.param' space
            15: Error: Modifier '.relaxed' cannot be applied to '.local' space
        "#]],
    );
}

/// Comparison qualifiers against the compared type, boolean combinations without their
/// predicate, and half-precision `set` with an integer result; probed with ptxas 13.0.88.
#[test]
fn comparisons() {
    let k = |v: &str, body: &str| {
        format!(
            ".version {v}\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n.reg .pred %p<3>;\n.reg .b32 %r<3>;\n.reg .s32 %s<3>;\n.reg .u32 %u<3>;\n.reg .f32 %f<3>;\n.reg .b16 %h<3>;\n{body}\nret;\n}}\n"
        )
    };
    check(
        &k(
            "8.0",
            "setp.eq.b32 %p1, %r1, %r2;\nsetp.lt.u32 %p1, %u1, %u2;\nsetp.hs.u32 %p1, %u1, %u2;\nsetp.equ.f32 %p1, %f1, %f2;\nsetp.lt.and.u32 %p1|%p2, %u1, %u2, %p2;\nsetp.lt.b32 %p1, %r1, %r2;\nsetp.lo.s32 %p1, %s1, %s2;\nsetp.num.u32 %p1, %u1, %u2;\nsetp.lo.f32 %p1, %f1, %f2;\nset.lt.u32.b32 %r1, %r1, %r2;\nsetp.lt.and.u32 %p1, %u1, %u2;",
        ),
        expect![[r#"
            17: Error: Mismatch between instruction type and comparison qualifier: .lt does not compare .b32 values
            18: Error: Mismatch between instruction type and comparison qualifier: .lo does not compare .s32 values
            19: Error: Mismatch between instruction type and comparison qualifier: .num does not compare .u32 values
            20: Error: Mismatch between instruction type and comparison qualifier: .lo does not compare .f32 values
            21: Error: Mismatch between instruction type and comparison qualifier: .lt does not compare .b32 values
            22: Error: Arguments mismatch for instruction 'setp': .and combines the comparison with a predicate operand, which is missing
        "#]],
    );
    check(
        &k(
            "6.4",
            "set.lt.u32.f16 %r1, %h1, %h2;\nset.lt.u32.f32 %r1, %f1, %f2;",
        ),
        expect![[r#"
            2: Error: PTX .version 6.4 does not support .target sm_80
            12: Error: Feature 'half precision floating point set instruction with integer result' requires PTX ISA .version 6.5 or later
        "#]],
    );
}

#[test]
fn atom_cache_policy_is_a_64_bit_operand() {
    // ptxas 13.0.88 accepts the policy operand of `atom.add` (found by `cargo xtask
    // isa-forms`), refuses `.L2::cache_hint` on `atom.cas` ("Illegal modifier") and a 32-bit
    // `cas` value given as a 64-bit register.
    check(
        &kernel(
            "8.0",
            "sm_80",
            "createpolicy.fractional.L2::evict_last.b64 %rd3, 1.0;\n\
             atom.global.L2::cache_hint.add.u32 %r1, [%rd1], %r2, %rd3;\n\
             atom.global.L2::cache_hint.cas.b32 %r1, [%rd1], %r2, %r3, %rd3;\n\
             atom.global.cas.b32 %r1, [%rd1], %r2, %rd3;",
        ),
        expect![[r#"
            12: Error: Unexpected instruction types or modifiers specified for 'atom': no form of 'atom.global.L2::cache_hint.cas.b32' exists in PTX ISA 9.0
            13: Error: Arguments mismatch for instruction 'atom': operand 4 is a .u64 register, the instruction needs a register of 32 bits
        "#]],
    );
}

/// The modifier rules of `rules.rs`: one broken rule per line, each line rejected by ptxas
/// 13.0.88 (sm_90, PTX 8.7) with the message our message starts with.
#[test]
fn modifier_rules() {
    check(
        &kernel(
            "8.7",
            "sm_90",
            ".reg .f64 %fd<3>;\n.reg .b16 %h<3>;\ncvt.f32.s32 %f1, %r1;\ncvt.rn.f32.f16 %f1, %h1;\ncvt.ftz.s32.u32 %r1, %r2;\ncvt.sat.u64.u32 %rd1, %r1;\ncvt.ftz.f64.f16 %fd1, %h1;\nsetp.eq.ftz.f64 %p1, %fd1, %fd2;\nset.eq.f16.f16x2 %h1, %r1, %r2;\natom.weak.global.add.u32 %r1, [%rd1], 1;\nred.acquire.gpu.global.add.u32 [%rd1], 1;\natom.shared.add.L2::cache_hint.u32 %r1, [%rd1], 1, %rd2;\natom.global.add.f16 %h1, [%rd1], %h2;\natom.global.min.f32 %f1, [%rd1], %f2;\nred.global.add.noftz.f32 [%rd1], %f2;\nld.relaxed.global.u32 %r1, [%rd1];\nst.weak.gpu.global.u32 [%rd1], %r1;\nld.gpu.global.u32 %r1, [%rd1];\nld.release.gpu.global.u32 %r1, [%rd1];\nld.shared.L1::evict_last.u32 %r1, [%rd1];\nld.global.nc.lu.u32 %r1, [%rd1];\nld.global.L2::evict_last.u32 %r1, [%rd1];\nld.global.pred %p1, [%rd1];\ncvt.rn.f32.s32 %f1, %r1;\ncvt.rni.sat.s32.f32 %r1, %f1;\natom.relaxed.gpu.global.add.noftz.f16 %h1, [%rd1], %h2;\nld.relaxed.gpu.global.L1::evict_last.u32 %r1, [%rd1];",
        ),
        expect![[r#"
            12: Error: Rounding modifier required for instruction 'cvt': an integer-to-float conversion needs a floating-point rounding (.rn, .rz, .rm, .rp) (.f32.s32)
            13: Error: Illegal rounding modifier for instruction 'cvt': .rn does not apply to a widening float conversion, which is exact (.f32.f16)
            14: Error: Illegal modifier '.ftz' for instruction 'cvt': .ftz applies to conversions from or to .f32 (.s32.u32)
            15: Error: Illegal modifier '.sat' for instruction 'cvt': every source value fits the destination type (.u64.u32)
            16: Error: Modifier '.ftz' does not apply to this type of convert operation: .ftz applies to conversions from or to .f32 (.f64.f16)
            17: Error: Illegal modifier '.ftz' for instruction 'setp': .ftz applies to .f32, .f16 and .f16x2 comparisons, not to .f64 operands
            18: Error: Unexpected instruction types specified for 'set': a .f16x2 comparison cannot give a .f16 result
            19: Error: Illegal modifier '.weak' for instruction 'atom': its memory orders are .relaxed, .acquire, .release, .acq_rel
            20: Error: Illegal modifier '.acquire' for instruction 'red': its memory orders are .relaxed, .release
            21: Error: Modifier '.L2::cache_hint' cannot be applied to '.shared' space for instruction 'atom': cache hints are for global memory
            22: Error: '.noftz' modifier required for instruction 'atom' with type '.f16'
            23: Error: Operation .min requires .u32 or .s32 or .u64 or .s64 or .f16 or .f16x2 or .bf16 or .bf16x2 type for instruction 'atom'
            24: Error: Illegal modifier '.noftz' for instruction 'red': it applies to .add, .min and .max of .f16, .f16x2, .bf16 and .bf16x2
            25: Error: Modifier '.relaxed' requires scope with 'ld' instruction (.cta, .cluster, .gpu or .sys)
            26: Error: Modifier '.weak' cannot be combined with modifier '.gpu'
            27: Error: Modifier '.gpu' requires memory order with 'ld' instruction (.relaxed or .acquire)
            28: Error: Illegal modifier '.release' for instruction 'ld': its memory orders are .weak, .volatile, .relaxed, .acquire
            29: Error: Modifier '.evict_last' cannot be applied to '.shared' space for instruction 'ld': cache eviction priorities and hints are for global memory
            30: Error: Illegal cache operation for instruction 'ld.nc': .lu (ld.global.nc takes .ca, .cg or .cs)
            31: Error: Instruction 'ld' requires '.v8.b32/.v4.b64' type with '.L2::evict_last' modifier.
            32: Error: Unexpected instruction types specified for 'ld': .pred is not a type memory can hold
        "#]],
    );
}

/// More of `rules.rs`: target gates on sm_80, then rules of other instructions on sm_90; each
/// line's message checked against ptxas 13.0.88 for the same line and target.
#[test]
fn modifier_rules_more() {
    let regs = ".reg .f64 %fd<3>;\n.reg .b16 %h<3>;\n";
    check(
        &kernel(
            "8.7",
            "sm_80",
            &format!(
                "{regs}atom.relaxed.cluster.global.add.u32 %r1, [%rd1], 1;\nmax.relu.s32 %r1, %r2, %r3;\nmin.xorsign.abs.f32 %f1, %f2, %f3;\ncvt.pack.s16.s32 %r1, %r2, %r3;\natom.global.add.noftz.bf16 %h1, [%rd1], %h2;"
            ),
        ),
        expect![[r#"
            12: Error: Feature '.cluster scope' requires .target sm_90 or higher
            13: Error: Feature 'max.relu' requires .target sm_90 or higher
            14: Error: Feature '.abs' requires .target sm_86 or higher
            15: Error: .sat modifier required for instruction 'cvt.pack'
            16: Error: Instruction 'atom.add.bf16.global' requires .target sm_90 or higher
        "#]],
    );
    check(
        &kernel(
            "8.7",
            "sm_90",
            &format!(
                "{regs}min.relu.u32 %r1, %r2, %r3;\nmin.abs.f16 %h1, %h2, %h1;\nadd.sat.u32 %r1, %r2, %r3;\nmad.lo.sat.s32 %r1, %r2, %r3, %r1;\nmad.f32 %f1, %f2, %f3, %f1;\nslct.ftz.b32.s32 %r1, %r2, %r3, %r1;\nfma.rn.sat.relu.f16 %h1, %h2, %h1, %h1;\nfence.sc;\nex2.approx.ftz.f16 %h1, %h2;\nldu.global.v4.b64 {{%rd1, %rd2, %rd3, %rd1}}, [%rd1];\nvadd2.s32.s32.s32.sat.add %r1, %r2, %r3, %r1;\nmax.f32 %f1, %f2, %f3, %f1;\nmax.relu.s32 %r1, %r2, %r3;\nmad.rn.f32 %f1, %f2, %f3, %f1;\ncvt.pack.sat.s16.s32 %r1, %r2, %r3;\ncvt.rm.relu.bf16.f32 %h1, %f1;"
            ),
        ),
        expect![[r#"
            12: Error: Illegal modifier '.relu' for instruction 'min' with type '.u32'
            13: Error: Modifier '.abs' requires modifier '.xorsign'
            14: Error: Modifier '.sat' does not apply to '.u32' type (only .s32 saturates)
            15: Error: Illegal modifier '.sat' for instruction 'mad.lo': .sat applies to mad.hi.s32
            16: Error: Rounding modifier required for instruction 'mad': mad.f32 for sm_20 and later rounds with .rn, .rz, .rm or .rp
            17: Error: Illegal modifier '.ftz' for instruction 'slct': .ftz applies to an .f32 selector
            18: Error: Modifier '.relu' cannot be combined with modifier '.sat'
            19: Error: Scope modifier required for instruction 'fence' (.cta, .cluster, .gpu or .sys)
            20: Error: Illegal modifier '.ftz' for instruction 'ex2': ex2.approx of .f16 and .f16x2 takes no .ftz
            21: Error: Vector type too large, exceeds 128 bit limit (4 x 64 bits)
            22: Error: Illegal combination of .sat and .add modifiers
            23: Error: Feature 'max.f32 with 3 input operands' requires .target sm_100 or higher
            27: Error: Illegal rounding modifier for instruction 'cvt': .rm (.relu rounds with .rn or .rz)
        "#]],
    );
}

/// The last groups of the isa-forms suite (sm_90): `.xorsign` without `.abs`, `mad.wide.sat`,
/// `sub` of `.s16x2`, immediates of 16x2 `add`, `bfe`/`bfi` field immediates out of [0..255],
/// three-source `min.f32` before sm_100, and `vshl`/`vmad` with two types instead of three.
/// Each message checked against ptxas 13.0.88 for the same line; the last two lines are
/// accepted by ptxas.
#[test]
fn modifier_rules_last() {
    check(
        &kernel(
            "8.7",
            "sm_90",
            "min.xorsign.f32 %f1, %f2, %f3;\nmad.wide.sat.s32 %rd1, %r2, %r3, %rd1;\nsub.s16x2 %r1, %r2, %r3;\nadd.u16x2 %r1, %r2, 5;\nbfe.u32 %r1, %r2, 3, 0x100;\nbfi.b32 %r1, %r2, %r3, -3, 2;\nmin.xorsign.abs.f32 %f1, %f2, %f3, %f1;\nvshl.u32.u32.clamp %r1, %r2, %r3;\nvmad.s32.s32 %r1, %r2, %r3, %r1;\nvshl.u32.u32.u32.clamp %r1, %r2, %r3;\nbfe.u32 %r1, %r2, 255, 255;",
        ),
        expect![[r#"
            10: Error: Modifier '.xorsign' requires modifier '.abs'
            11: Error: Illegal modifier '.sat' for instruction 'mad.wide': .sat applies to mad.hi.s32
            12: Error: Unexpected instruction types specified for 'sub': ptxas 13.0.88 has no sub.u16x2/.s16x2 (add, min and max have them)
            13: Error: Arguments mismatch for instruction 'add': the sources of a .u16x2/.s16x2 'add' are registers
            14: Error: Argument 3 of instruction 'bfe': value '256' out of range, expected to be in range [0..255]
            15: Error: Argument 3 of instruction 'bfi': value '-3' out of range, expected to be in range [0..255]
            16: Error: Feature 'min.f32 with 3 input operands' requires .target sm_100 or higher
            17: Error: Unexpected instruction types or modifiers specified for 'vshl': no form of 'vshl.u32.u32.clamp' exists in PTX ISA 9.0
            18: Error: Unexpected instruction types or modifiers specified for 'vmad': no form of 'vmad.s32.s32' exists in PTX ISA 9.0
        "#]],
    );
}

/// `ld`/`st` combinations the isa-forms suite does not cross (it varies each group alone):
/// cache operators with `.volatile` or an order, `.volatile` with eviction priorities or
/// cache hints, a cache operator with an L1 eviction priority. Each message checked against
/// ptxas 13.0.88 (sm_90) for the same line; the last three lines are accepted by ptxas.
#[test]
fn memory_modifier_combinations() {
    check(
        &kernel(
            "8.7",
            "sm_90",
            "ld.volatile.global.ca.u32 %r1, [%rd1];\nld.relaxed.gpu.global.cg.u32 %r1, [%rd1];\nst.release.sys.global.wt.u32 [%rd1], %r1;\nld.volatile.global.L1::evict_last.u32 %r1, [%rd1];\nld.volatile.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;\nld.global.ca.L1::evict_normal.u32 %r1, [%rd1];\nst.global.wb.L1::evict_last.u32 [%rd1], %r1;\nld.weak.global.ca.u32 %r1, [%rd1];\nld.volatile.global.L2::128B.u32 %r1, [%rd1];\nld.global.ca.L2::cache_hint.u32 %r1, [%rd1], %rd2;",
        ),
        expect![[r#"
            10: Error: Modifier '.volatile' cannot be combined with modifier '.ca'
            11: Error: Modifier '.relaxed' cannot be combined with modifier '.cg'
            12: Error: Modifier '.release' cannot be combined with modifier '.wt'
            13: Error: Modifier '.evict_last' cannot be combined with modifier '.volatile'
            14: Error: Modifier '.L2::cache_hint' cannot be combined with modifier '.volatile'
            15: Error: Modifier '.evict_normal' cannot be combined with modifier '.ca'
            16: Error: Modifier '.evict_last' cannot be combined with modifier '.wb'
        "#]],
    );
}

/// `cvt.frnd2{.relu}{.satfinite}.f16.f32` (the table lacked it: a false error before): the
/// forms compile on sm_90; `.relu` needs sm_80 (ptxas 13.0.88 on sm_75: "Modifier '.relu'
/// requires .target sm_80 or higher", the same line; our wording names the instruction) while
/// `.satfinite` alone compiles on sm_75, as ptxas says.
#[test]
fn cvt_f16_relu_satfinite_forms() {
    let body = ".reg .b16 %h<3>;\ncvt.rn.relu.f16.f32 %h1, %f1;\ncvt.rz.satfinite.f16.f32 %h1, %f1;\ncvt.rn.relu.satfinite.f16.f32 %h1, %f1;";
    check(&kernel("8.7", "sm_90", body), expect![[r#""#]]);
    check(
        &kernel("8.7", "sm_75", body),
        expect![[r#"
        11: Error: Feature 'cvt' requires .target sm_80 or higher
        13: Error: Feature 'cvt' requires .target sm_80 or higher
    "#]],
    );
}

/// `cvt` combinations found by crossing modifiers at random against ptxas 13.0.88 (sm_90):
/// two rounding modifiers, `.relu`/`.satfinite` from other than `.f32`, and the forms the
/// table lacked (`.ftz.f32.bf16`, `.rni.bf16.bf16`: the last two lines, accepted by ptxas).
/// ptxas rejects lines 12-16 too; for 14-16 it says "Unexpected instruction types",
/// "Illegal rounding modifier" and "Illegal modifier '.ftz'", where we give the form table's
/// "no form ... exists" (no form of the table takes these modifiers with these types).
#[test]
fn cvt_random_crossings() {
    check(
        &kernel(
            "8.7",
            "sm_90",
            ".reg .f64 %fd<3>;\n.reg .b16 %h<3>;\ncvt.rn.rni.f32.f32 %f1, %f2;\ncvt.relu.satfinite.f64.bf16 %fd1, %h2;\ncvt.rn.satfinite.f16.f64 %h1, %fd2;\ncvt.rn.bf16.bf16 %h1, %h2;\ncvt.ftz.f64.bf16 %fd1, %h2;\ncvt.rn.ftz.f32.bf16 %f1, %h2;\ncvt.rni.bf16.bf16 %h1, %h2;",
        ),
        expect![[r#"
            12: Error: Multiple rounding modifiers specified for instruction 'cvt'
            13: Error: Unexpected instruction types specified for 'cvt': .relu and .satfinite convert .f32 to .f16 or .bf16, not .bf16 to .f64
            14: Error: Unexpected instruction types or modifiers specified for 'cvt': no form of 'cvt.rn.satfinite.f16.f64' exists in PTX ISA 9.0
            15: Error: Unexpected instruction types or modifiers specified for 'cvt': no form of 'cvt.rn.bf16.bf16' exists in PTX ISA 9.0
            16: Error: Unexpected instruction types or modifiers specified for 'cvt': no form of 'cvt.ftz.f64.bf16' exists in PTX ISA 9.0
        "#]],
    );
}

/// `barrier.cluster` memory orders and `fence.proxy` qualifiers (families the isa-forms suite
/// does not instantiate); each message checked against ptxas 13.0.88 (sm_90) for the same
/// line; the last three lines are accepted by ptxas.
#[test]
fn cluster_barrier_and_proxy_fence_rules() {
    check(
        &kernel(
            "8.7",
            "sm_90",
            "barrier.cluster.arrive.acquire;\nbarrier.cluster.wait.release;\nfence.proxy.alias.global;\nfence.proxy.tensormap::generic;\nbarrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.acquire;\nfence.proxy.async.shared::cluster;",
        ),
        expect![[r#"
            10: Error: Illegal modifier '.acquire' for instruction 'barrier.cluster.arrive': its memory orders are .release, .relaxed
            11: Error: Illegal modifier '.release' for instruction 'barrier.cluster.wait': its memory orders are .acquire
            12: Error: State space incorrect for instruction 'fence.proxy': .global qualifies only fence.proxy.async
            13: Error: .acquire/.release modifier required for instruction 'fence.proxy' with .tensormap::generic
        "#]],
    );
}

/// `red.async` types per operation, `cp.async.bulk` completion mechanisms, `cp.async` sizes
/// and `ldmatrix` types per shape (families the isa-forms suite does not instantiate); each
/// message checked against ptxas 13.0.88 (sm_90) for the same line; the last four lines are
/// accepted by ptxas.
#[test]
fn async_copy_and_ldmatrix_rules() {
    let r = "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes";
    check(
        &kernel(
            "8.7",
            "sm_90",
            &format!(
                ".shared .align 16 .b8 sm[64];\n{r}.inc.s32 [%rd1], %r2, [%rd3];\n{r}.and.u32 [%rd1], %r2, [%rd3];\ncp.async.bulk.global.shared::cta.mbarrier::complete_tx::bytes [%rd1], [sm], 16, [sm];\ncp.async.bulk.global.shared::cta [%rd1], [sm], 16;\ncp.async.cg.shared.global [sm], [%rd1], 8;\nldmatrix.sync.aligned.m8n8.x1.shared.b8 {{%r1}}, [sm];\n{r}.add.s64 [%rd1], %rd2, [%rd3];\ncp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [sm], [%rd1], 16, [sm];\ncp.async.ca.shared.global [sm], [%rd1], 8;\nldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{%r1, %r2}}, [sm];"
            ),
        ),
        expect![[r#"
            11: Error: Incorrect type '.s32' for operation '.inc' in instruction 'red.async' (it takes .u32)
            12: Error: Incorrect type '.u32' for operation '.and' in instruction 'red.async' (it takes .b32)
            13: Error: Illegal modifier '.mbarrier::complete_tx::bytes' for instruction 'cp.async.bulk': a copy to .global completes with .bulk_group
            14: Error: .completion_mechanism modifier required for instruction 'cp.async.bulk': a copy to .global completes with .bulk_group
            15: Error: Argument 2 of instruction 'cp.async': unexpected value '8', expected to be 16
            16: Error: Incorrect instruction type specified for ldmatrix with shape '.m8n8': .b8
        "#]],
    );
}

/// `mbarrier` order/scope pairs and `setmaxnreg` targets; each message checked against ptxas
/// 13.0.88 for the same line (sm_90; `setmaxnreg` compiles on sm_90a, the last check).
#[test]
fn mbarrier_and_setmaxnreg_rules() {
    check(
        &kernel(
            "8.7",
            "sm_90",
            ".shared .align 8 .b64 bar;\nmbarrier.arrive.release.shared::cta.b64 %rd1, [bar];\nmbarrier.expect_tx.cta.shared::cta.b64 [bar], 16;\nsetmaxnreg.inc.sync.aligned.u32 64;\nmbarrier.arrive.release.cta.shared::cta.b64 %rd1, [bar];",
        ),
        expect![[r#"
            11: Error: Modifier '.release' requires scope with 'mbarrier.arrive' instruction (.cta or .cluster)
            12: Error: Modifier '.cta' requires order with 'mbarrier.expect_tx' instruction
            13: Error: Instruction 'setmaxnreg.inc' not supported on .target 'sm_90' (it needs an architecture- or family-specific target such as sm_90a)
        "#]],
    );
    check(
        &kernel("8.7", "sm_90a", "setmaxnreg.dec.sync.aligned.u32 64;"),
        expect![[r#""#]],
    );
}

/// `mma.sync` layouts, `.rn`, bit operations, `.satfinite` and `.dtype`/`.ctype`; each
/// message checked against ptxas 13.0.88 (sm_90) for the same line; the last two lines are
/// accepted by ptxas.
#[test]
fn mma_rules() {
    let (a, f, i) = (
        "{%r1, %r2, %r3, %r1}, {%r1, %r2}",
        "{%f1, %f2, %f3, %f1}",
        "{%r1, %r2, %r3, %r1}",
    );
    check(
        &kernel(
            "8.7",
            "sm_90",
            &format!(
                "mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32 {f}, {a}, {f};\nmma.sync.aligned.m16n8k8.row.col.rn.f32.tf32.tf32.f32 {f}, {a}, {f};\nmma.sync.aligned.m16n8k256.row.col.popc.s32.b1.b1.s32 {i}, {a}, {i};\nmma.sync.aligned.m16n8k32.row.col.satfinite.f32.e4m3.e4m3.f32 {f}, {a}, {f};\nmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {f}, {a}, {{%r1, %r2}};\nmma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32 {i}, {a}, {i};\nmma.sync.aligned.m16n8k256.row.col.and.popc.s32.b1.b1.s32 {i}, {a}, {i};"
            ),
        ),
        expect![[r#"
            10: Error: Illegal blayout '.row' for instruction 'mma' (the B matrix is .col)
            11: Error: Illegal rounding modifier for instruction 'mma': .rn is for .f64
            12: Error: Illegal reduction operation for instruction 'mma': .b1 takes a bit operation (.xor or .and) and .popc
            13: Error: Unexpected instruction types specified for 'mma': .satfinite is for the integer types, not .e4m3
            14: Error: .dtype must be '.f16' when .ctype is '.f16' for 'mma' instruction with shape '.m16n8k16'
        "#]],
    );
}

#[test]
fn a_negated_single_precision_literal_is_a_syntax_error() {
    // ptxas 13.0.88: `-0f3F800000` is "Parsing error near '0f3F800000': syntax error";
    // `-0d...` and `-1.5` are accepted.
    check(
        &kernel(
            "8.0",
            "sm_80",
            "ld.param.u64 %rd1, [a];\nadd.f32 %f1, %f2, -0f3F800000;\nadd.f32 %f1, %f2, -0d3FF8000000000000;\nadd.f32 %f1, %f2, -1.5;\nst.global.f32 [%rd1], %f1;",
        ),
        expect![[r#"
            11: Error: Parsing error near '0f3F800000': syntax error (a 0f literal cannot be negated)
        "#]],
    );
}

/// Special registers, `mma` shapes and `.L2::256B` newer than the target: each message is
/// ptxas 13.0.88's for `.target sm_75` (and `%clusterid` for sm_80), on the same line; the
/// shapes sm_75 has (m16n8k8 f16, m8n8k16 s8) and `.L2::128B` compile.
#[test]
fn special_registers_and_mma_shapes_need_their_target() {
    let body = ".reg .b32 %q<8>;\n.reg .f64 %d<3>;\n\
        mov.u32 %r1, %reserved_smem_offset_0;\n\
        mov.u32 %r1, %clusterid.x;\n\
        mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f0}, {%q1,%q2,%q3,%q4}, {%q5,%q6}, {%f1,%f2,%f3,%f0};\n\
        mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%q1,%q2,%q3,%q4}, {%q1,%q2,%q3,%q4}, {%q5,%q6}, {%q1,%q2,%q3,%q4};\n\
        mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%d1,%d2}, {%d1}, {%d2}, {%d1,%d2};\n\
        mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1,%f2,%f3,%f0}, {%q1,%q2,%q3,%q4}, {%q5,%q6}, {%f1,%f2,%f3,%f0};\n\
        mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f0}, {%q1,%q2}, {%q5}, {%f1,%f2,%f3,%f0};\n\
        mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%q1,%q2}, {%q1}, {%q5}, {%q1,%q2};\n\
        ld.global.L2::256B.u32 %r1, [%rd1];\n\
        ld.global.nc.L2::128B.u32 %r1, [%rd1];";
    check(
        &kernel("8.0", "sm_75", body),
        expect![[r#"
            12: Error: Feature '%reserved_smem_offset_0' requires .target sm_80 or higher
            13: Error: Feature '%clusterid' requires .target sm_90 or higher
            14: Error: Feature '.m16n8k16' requires .target sm_80 or higher
            15: Error: Feature '.m16n8k32' requires .target sm_80 or higher
            16: Error: Feature '.m8n8k4 with double types' requires .target sm_80 or higher
            17: Error: Feature '.tf32' requires .target sm_80 or higher
            20: Error: Modifier '.L2::256B' requires .target sm_80 or higher
        "#]],
    );
    check(
        &kernel("8.0", "sm_80", body),
        expect![[r#"
            13: Error: Feature '%clusterid' requires .target sm_90 or higher
        "#]],
    );
}

/// `mbarrier` forms sm_80 does not have and `.noComplete` without a count; each line's message
/// checked against ptxas 13.0.88 for the same line and target (sm_80, PTX 8.0); the last two
/// lines are legal there.
#[test]
fn mbarrier_rules() {
    check(
        &kernel(
            "8.0",
            "sm_80",
            ".shared .align 8 .b64 bar;\nmbarrier.try_wait.shared.b64 %p1, [bar], %rd1;\nmbarrier.arrive.shared.b64 %rd1, [bar], %r1;\nmbarrier.arrive_drop.shared.b64 %rd1, [bar], %r1;\nmbarrier.arrive.release.cluster.shared.b64 %rd1, [bar];\nmbarrier.arrive.expect_tx.shared.b64 %rd1, [bar], %r1;\nmbarrier.arrive_drop.expect_tx.shared.b64 %rd1, [bar], %r1;\nmbarrier.arrive.noComplete.shared.b64 %rd1, [bar];\nmbarrier.arrive.noComplete.shared.b64 %rd1, [bar], %r1;\nmbarrier.test_wait.parity.shared.b64 %p1, [bar], %r1;",
        ),
        expect![[r#"
            11: Error: Feature 'mbarrier.try_wait' requires .target sm_90 or higher
            12: Error: Feature 'mbarrier.arrive with count argument and without '.noComplete' modifier' requires .target sm_90 or higher
            13: Error: Feature 'mbarrier.arrive_drop with count argument and without '.noComplete' modifier' requires .target sm_90 or higher
            14: Error: Feature '.cluster scope' requires .target sm_90 or higher
            15: Error: Feature 'mbarrier.arrive.expect_tx' requires .target sm_90 or higher
            16: Error: Feature 'mbarrier.arrive_drop.expect_tx' requires .target sm_90 or higher
            17: Error: Illegal modifier '.noComplete' for instruction 'mbarrier.arrive without count argument'
        "#]],
    );
}

/// The video instructions' operand selectors: each message checked against ptxas 13.0.88 for
/// the same line (sm_90, PTX 8.0); the last three lines are legal there.
#[test]
fn video_selectors() {
    check(
        &kernel(
            "8.0",
            "sm_90",
            "vadd.u32.u32.u32 %r1, %r1.h2, %r2;\nvadd2.u32.u32.u32 %r1, %r1.h4, %r2, %r3;\nvadd2.u32.u32.u32 %r1.h01, %r1, %r2, %r3;\nvadd.u32.u32.u32 %r1.h1, %r1, %r2;\nvadd.u32.u32.u32.sat.add %r1.b1, %r1, %r2, %r3;\nvadd.u32.u32.u32 %r1, %r1, %r2, %r3.b1;\nvmad.u32.u32.u32 %r1.b1, %r1, %r2, %r3;\nvadd2.u32.u32.u32.add %r1.h0, %r1, %r2, %r3;\nvadd4.u32.u32.u32 %r1.b30, %r1.b7777, %r2.b0123, %r3;\nvset.u32.u32.lt %r1.h1, %r1.b2, %r2, %r3;",
        ),
        expect![[r#"
            10: Error: Incorrect video selector for operand 1
            11: Error: Unknown video selector: '.h4'
            11: Error: Incorrect video selector for operand 1
            12: Error: Incorrect video selector for operand 0
            13: Error: Video selector is not allowed on destination for instruction 'vadd'
            14: Error: Video instruction cannot have destination selector and secondary operation
            15: Error: Video selector is not allowed on 'source C' operand
            16: Error: Video selector is not allowed on destination for instruction 'vmad'
        "#]],
    );
}
