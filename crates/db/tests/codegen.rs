//! Code generation through the database: incrementality of the per-(kernel, target) chain,
//! fail-closed diagnostics, and (when NVIDIA's tools are installed) acceptance of every cubin
//! by `nvdisasm` and `cuobjdump -elf`, with nvdisasm's text equal to our listing and our
//! ELF listing equal to cuobjdump's. Oracle tests print `skipping: <reason>` without tools.

use std::path::{Path, PathBuf};
use std::process::Command;

use db::{FileTarget, RootDatabase, Sm, Target, encoded, kernel_targets, module_items};
use expect_test::{Expect, expect};
use salsa::plumbing::AsId;

const EXAMPLES: &[&str] = &[
    "../../test-data/examples/saxpy.ptx",
    "../../test-data/codegen/vecadd.ptx",
    "../../test-data/codegen/loop.ptx",
    "../../test-data/codegen/intops.ptx",
    "../../test-data/codegen/floatops.ptx",
    "../../test-data/codegen/compare.ptx",
    "../../test-data/codegen/shared.ptx",
    "../../test-data/codegen/vectors.ptx",
    "../../test-data/codegen/dynshared.ptx",
    "../../test-data/codegen/scopes.ptx",
    "../../test-data/codegen/f64.ptx",
    "../../test-data/codegen/widen.ptx",
    "../../test-data/codegen/divrem.ptx",
    "../../test-data/codegen/globals.ptx",
    "../../test-data/codegen/modvars.ptx",
    "../../test-data/codegen/approx.ptx",
    "../../test-data/codegen/fdiv.ptx",
    "../../test-data/codegen/clock.ptx",
    "../../test-data/codegen/warpsync.ptx",
    "../../test-data/codegen/warp.ptx",
    "../../test-data/codegen/bits.ptx",
    "../../test-data/codegen/fence.ptx",
    "../../test-data/codegen/set.ptx",
    "../../test-data/codegen/small.ptx",
    "../../test-data/codegen/cvt_sat_int.ptx",
    "../../test-data/codegen/cache.ptx",
    "../../test-data/codegen/member_mask.ptx",
    "../../test-data/codegen/bitfield.ptx",
    "../../test-data/codegen/params.ptx",
    "../../test-data/codegen/intmisc.ptx",
    "../../test-data/codegen/cvta_shared.ptx",
    "../../test-data/codegen/local.ptx",
    "../../test-data/codegen/atom.ptx",
    "../../test-data/codegen/bar_red.ptx",
    "../../test-data/codegen/orders.ptx",
    "../../test-data/codegen/vote_nosync.ptx",
    "../../test-data/codegen/rsmem.ptx",
    "../../test-data/codegen/cvt_table.ptx",
    "../../test-data/codegen/predicates.ptx",
    "../../test-data/codegen/subvec.ptx",
    "../../test-data/codegen/mad_legacy.ptx",
    "../../test-data/codegen/math_table.ptx",
    "../../test-data/codegen/calls.ptx",
    "../../test-data/codegen/param_addr.ptx",
    "../../test-data/codegen/match.ptx",
    "../../test-data/codegen/extend16.ptx",
    "../../test-data/codegen/pack.ptx",
    "../../test-data/codegen/griddep.ptx",
    "../../test-data/codegen/math_table_64.ptx",
    "../../test-data/codegen/trap.ptx",
    "../../test-data/codegen/cvta_const.ptx",
    "../../test-data/devrt/printf.ptx",
    "../../test-data/devrt/graph_conditional.ptx",
    "../../test-data/codegen/atom_shared_loop.ptx",
    "../../test-data/codegen/generic_atom.ptx",
    "../../test-data/codegen/atom64_loops.ptx",
    "../../test-data/codegen/atom16.ptx",
    "../../test-data/codegen/packed16.ptx",
    "../../test-data/codegen/carry.ptx",
    "../../test-data/codegen/carry_add_sub.ptx",
    "../../test-data/codegen/setp_half.ptx",
    "../../test-data/codegen/cp_async.ptx",
    "../../test-data/codegen/mma.ptx",
    "../../test-data/codegen/mma_int_f64.ptx",
    "../../test-data/codegen/wmma.ptx",
    "../../test-data/codegen/cvt_tf32.ptx",
    "../../test-data/codegen/cvt_fp8.ptx",
    "../../test-data/codegen/stmatrix.ptx",
    "../../test-data/codegen/float_literals.ptx",
    "../../test-data/codegen/mulhi64.ptx",
    "../../test-data/codegen/texture.ptx",
    "../../test-data/codegen/half2.ptx",
    "../../test-data/codegen/half2_bf16.ptx",
    "../../test-data/codegen/shl_in_place.ptx",
    "../../test-data/codegen/testp.ptx",
    "../../test-data/codegen/sat.ptx",
    "../../test-data/codegen/setp_xor.ptx",
    "../../test-data/codegen/approx_f64.ptx",
    "../../test-data/codegen/abs_neg.ptx",
    "../../test-data/codegen/bfi_fold.ptx",
    "../../test-data/codegen/cache_hints.ptx",
    "../../test-data/codegen/named_barriers.ptx",
    "../../test-data/codegen/special_regs.ptx",
    "../../test-data/codegen/special_regs_cluster.ptx",
    "../../test-data/codegen/atom_half.ptx",
    "../../test-data/codegen/atom_vector.ptx",
    "../../test-data/codegen/elect_fence.ptx",
    "../../test-data/codegen/diverged_barrier.ptx",
    "../../test-data/codegen/mbarrier.ptx",
    "../../test-data/codegen/mbarrier_sm80.ptx",
    "../../test-data/codegen/mbarrier_nocomplete.ptx",
    "../../test-data/codegen/video.ptx",
    "../../test-data/codegen/video_sat.ptx",
    "../../test-data/codegen/video_selectors.ptx",
    "../../test-data/codegen/ldu.ptx",
    "../../test-data/codegen/cvt_pack_relu.ptx",
    "../../test-data/codegen/cvt_ftz_f64.ptx",
];

/// The examples every SM before sm_90 refuses (their PTX needs sm_90: `griddepcontrol`,
/// `bf16x2` arithmetic, cluster registers, vector atomics, `elect.sync`, packed 16-bit
/// integers, `mbarrier` transaction counts and `try_wait`).
const NEEDS_SM90: &[&str] = &[
    "griddep.ptx",
    "half2_bf16.ptx",
    "special_regs_cluster.ptx",
    "atom_vector.ptx",
    "elect_fence.ptx",
    "packed16.ptx",
    "stmatrix.ptx",
    "mbarrier.ptx",
];

/// The examples every SM before sm_89 refuses (8-bit float conversions: sm_89 with PTX 8.1).
const NEEDS_SM89: &[&str] = &["cvt_fp8.ptx"];

/// The examples sm_75 refuses: their PTX needs sm_80 (`redux.sync`, bf16 and `f16x2`
/// conversions, `%reserved_smem_offset_*`, `createpolicy`, `cp.async`, the m16n8k16 and
/// m16n8k32 `mma` shapes: ptxas 13.0.88 rejects each for `.target sm_75`).
const NEEDS_SM80: &[&str] = &[
    "cvt_pack_relu.ptx",
    "warp.ptx",
    "member_mask.ptx",
    "rsmem.ptx",
    "cvt_table.ptx",
    "pack.ptx",
    "cp_async.ptx",
    "mma.ptx",
    "mma_int_f64.ptx",
    "cvt_tf32.ptx",
    "half2.ptx",
    "cache_hints.ptx",
    "mbarrier_sm80.ptx",
    "mbarrier_nocomplete.ptx",
];

/// The examples sm_75 refuses at encoding (fail closed), where its SASS table, learned from
/// ptxas's code, lacks the form kiln writes: `ATOM.E.AND.STRONG.CTA` with a register address
/// (ptxas writes `[UR4+0x18]` for this PTX; kiln `[R2+0x1018]`), `HSETP2.EQ.AND` without
/// half selectors (ptxas compares `.H0_H0` with `.H1_H1`), and `S2R SR_VIRTUALSMID`,
/// `BAR.SYNC 0x2, 0x40` and `ATOMG.E.ADD.F16x2.RN`, which ptxas does write for these files
/// but no collect round has seen yet (`cargo xtask sass-probe --arch sm_75 --collect --also
/// DIR` with them); `SULD.D.BA.2D.STRONG.CTA.TRAP` (the table has only the surface stores
/// the corpus's sm_75 files make).
const SM75_TABLE_GAPS: &[&str] = &[
    "atom.ptx",
    "setp_half.ptx",
    "special_regs.ptx",
    "named_barriers.ptx",
    "atom_half.ptx",
    "surface.ptx",
];

/// The PTX an example is compiled from for `sm`: the examples say `.target sm_80` (or
/// older, or sm_90); for sm_75 a `.target sm_80` becomes `.target sm_75`, so that the same
/// kernels are compiled for it (ptxas gets the same text: [`example_path`]).
fn example_text(path: &str, sm: &str) -> String {
    retarget(&std::fs::read_to_string(path).unwrap(), sm)
}

/// `text` with a `.target sm_80` line made `.target sm_75` when compiling for sm_75.
fn retarget(text: &str, sm: &str) -> String {
    if sm != "sm_75" {
        return text.to_string();
    }
    text.lines()
        .map(|l| {
            if l.trim() == ".target sm_80" {
                ".target sm_75"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A file holding [`example_text`] for ptxas: the example itself, or for sm_75 a copy with
/// its target rewritten (in a per-process temporary directory).
fn example_path(path: &str, sm: &str) -> PathBuf {
    if sm != "sm_75" {
        return PathBuf::from(path);
    }
    let dir = std::env::temp_dir().join(format!("kiln-examples-{sm}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(Path::new(path).file_name().unwrap());
    std::fs::write(&out, example_text(path, sm)).unwrap();
    out
}

/// Every SM kiln generates code for (`target::Profile`).
fn sms() -> Vec<String> {
    db::codegen_sm_names()
}

/// How many (example, SM) pairs among `examples` are refused.
fn refusals(examples: &[&str]) -> usize {
    sms()
        .iter()
        .map(|sm| examples.iter().filter(|p| refused(p, sm)).count())
        .sum()
}

/// Examples executed against ptxas's cubin in the emulator instead of the interpreter
/// (`approximate_math_executes_like_ptxas`): approximate math (MUFU), which the interpreter
/// computes exactly, and ptxas's f64 `div`/`rcp`/`sqrt` routines, which kiln reproduces
/// instruction for instruction but which differ from the interpreter's exact results on a
/// few edge inputs (overflow under directed rounding, NaN payloads, one 1-ulp quotient near
/// 2^-992) — an open question between the emulator, the interpreter and the hardware
/// (docs/arch/emu.md).
const APPROXIMATE: &[&str] = &[
    "../../test-data/codegen/approx.ptx",
    "../../test-data/codegen/math_table_64.ptx",
];

/// Examples executed against the interpreter and, as well, against ptxas's cubin in the
/// emulator: single-instruction approximations whose model both sides share
/// (`rcp.approx.ftz.f64` is `MUFU.RCP64H` of the high word).
const ALSO_AGAINST_PTXAS: &[&str] = &[
    "../../test-data/codegen/approx_f64.ptx",
    "../../test-data/codegen/abs_neg.ptx",
    "../../test-data/codegen/testp.ptx",
    "../../test-data/codegen/bfi_fold.ptx",
    "../../test-data/codegen/carry_add_sub.ptx",
    // Not cp_async.ptx: ptxas's sm_80 code for it has `LDGSTS.E.ZFILL [R+o], [R.64+o], P`,
    // which the sm_80 table cannot decode (kiln folds the source offset instead).
    "../../test-data/codegen/mma.ptx",
    "../../test-data/codegen/mma_int_f64.ptx",
    "../../test-data/codegen/float_literals.ptx",
    "../../test-data/codegen/cvt_tf32.ptx",
    "../../test-data/codegen/cvt_fp8.ptx",
    // ptxas writes `I2I...SAT` (the emulator clamps); kiln's code clamps with `IMNMX`.
    "../../test-data/codegen/cvt_sat_int.ptx",
    // The emulator's model of the SYNCS unit's objects is read from ptxas's code: ptxas's
    // cubin running like the interpreter checks the model against ptxas's use of it.
    "../../test-data/codegen/mbarrier.ptx",
    "../../test-data/codegen/mbarrier_sm80.ptx",
    "../../test-data/codegen/mbarrier_nocomplete.ptx",
    // The interpreter's model of the video instructions is read from ptxas's code (its
    // 64-bit intermediate values, its `.sat`); ptxas's cubins check it.
    "../../test-data/codegen/video.ptx",
    "../../test-data/codegen/video_sat.ptx",
    "../../test-data/codegen/video_selectors.ptx",
    "../../test-data/codegen/ldu.ptx",
    "../../test-data/codegen/cvt_pack_relu.ptx",
    // The interpreter's flush of `cvt.ftz.f32.f64` is ptxas's per rounding mode (by the
    // source), read from its code; its cubins on the edge sources check that.
    "../../test-data/codegen/cvt_ftz_f64.ptx",
];

/// Examples whose kernels trap by design (`trap`, failed assertions); every other example
/// must run to its end.
const TRAPPING: &[&str] = &["/trap.ptx", "/devrt/printf.ptx"];

/// Examples of [`ALSO_AGAINST_PTXAS`] whose ptxas code for sm_75 the sm_75 table cannot decode
/// (`I2I.S8.S32.SAT` and its siblings, opcode 0x238: no sm_75 collect round has seen them), so
/// ptxas's cubin is not run there; kiln's is still checked against the interpreter.
const PTXAS_SM75_UNDECODED: &[&str] = &["cvt_sat_int.ptx"];

/// The examples kiln refuses on sm_75 though ptxas compiles them: `wmma` (sm_75's
/// `HMMA.1688` results are scoreboarded; kiln schedules tensor-core results as fixed-latency,
/// as on sm_80 and later, so it refuses every tensor-core instruction there).
/// `video_sat.ptx`: ptxas clamps SIMD video lanes with `I2I...SAT`, which sm_75's SASS table
/// cannot decode (see [`PTXAS_SM75_UNDECODED`]), so the hazard learner has no class and kiln
/// no template for it there.
const SM75_KILN_REFUSES: &[&str] = &["wmma.ptx", "video_sat.ptx"];

/// The examples kiln refuses on sm_90 though ptxas compiles them: `mbarrier.arrive.noComplete`
/// (ptxas writes `SYNCS.ARRIVE.TRANS64.TMASK` forms there, which kiln does not build).
const SM90_KILN_REFUSES: &[&str] = &["mbarrier_nocomplete.ptx"];

fn refused(path: &str, sm: &str) -> bool {
    let needs = |list: &[&str]| list.iter().any(|f| path.ends_with(&format!("/{f}")));
    (sm != "sm_90" && needs(NEEDS_SM90))
        || (!matches!(sm, "sm_89" | "sm_90") && needs(NEEDS_SM89))
        || (sm == "sm_75"
            && (needs(NEEDS_SM80) || needs(SM75_TABLE_GAPS) || needs(SM75_KILN_REFUSES)))
        || (sm == "sm_90" && needs(SM90_KILN_REFUSES))
}

fn target(sm: &str) -> Target {
    Target::new(Sm::parse(sm).unwrap())
}

const MODULE: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.visible .entry alpha(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    st.global.u32 [%rd1], %r1;
    ret;
}

.visible .entry beta(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    .reg .pred %p;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p, %r1, 0;
@%p bra DONE;
    add.u32 %r2, %r1, 7;
    st.global.u32 [%rd1], %r2;
DONE:
    ret;
}
"#;

/// Builds the cubin and returns the executed code-generation queries with kernel names.
fn run_codegen(db: &RootDatabase, file: db::SourceFile, t: &Target) -> String {
    let out = db::cubin(db, FileTarget::new(db, file, t.clone()));
    assert!(out.bytes.is_some(), "{:?}", out.diagnostics);
    let kts = kernel_targets(db, file, t);
    let names: Vec<(salsa::Id, String)> = kts
        .iter()
        .map(|k| (k.as_id(), k.function(db).name(db).clone()))
        .chain(
            module_items(db, file)
                .functions
                .iter()
                .map(|f| (f.as_id(), f.name(db).clone())),
        )
        .collect();
    let mut out = String::new();
    for (query, id) in db.take_executed() {
        if !matches!(
            query.as_str(),
            "lowered" | "allocated" | "scheduled" | "encoded" | "kernel_stats" | "cubin"
        ) {
            continue;
        }
        let key = names
            .iter()
            .find(|(i, _)| *i == id)
            .map_or_else(|| "file".to_string(), |(_, n)| n.clone());
        out.push_str(&format!("{query}({key})\n"));
    }
    out
}

fn check(db: &RootDatabase, file: db::SourceFile, t: &Target, e: Expect) {
    e.assert_eq(&run_codegen(db, file, t));
}

#[test]
fn editing_one_kernel_recompiles_only_that_kernel() {
    let mut db = RootDatabase::with_execution_log();
    let file = db.add_file("m.ptx", MODULE.as_bytes());
    let t = target("sm_90");
    check(
        &db,
        file,
        &t,
        expect![[r#"
            cubin(file)
            lowered(alpha)
            encoded(alpha)
            allocated(alpha)
            scheduled(alpha)
            kernel_stats(alpha)
            lowered(beta)
            encoded(beta)
            allocated(beta)
            scheduled(beta)
            kernel_stats(beta)
        "#]],
    );
    db.set_text(file, &MODULE.replace("%r1, 7;", "%r1, 9;"));
    check(
        &db,
        file,
        &t,
        expect![[r#"
            cubin(file)
            lowered(beta)
            encoded(beta)
            allocated(beta)
            scheduled(beta)
            kernel_stats(beta)
        "#]],
    );
    // Whitespace and comments: no code-generation query runs again except the file's cubin
    // assembly check (its inputs are backdated, so not even that).
    db.set_text(
        file,
        &MODULE.replace("%r1, 7;", "%r1, 9;").replace(
            "    ret;\n}\n\n.visible",
            "    ret; // done\n}\n\n\n.visible",
        ),
    );
    check(
        &db,
        file,
        &t,
        expect![[r#"
        cubin(file)
    "#]],
    );
}

const CALLS: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.func (.param .b32 func_retval0) inc(.param .b32 inc_p)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [inc_p];
    add.u32 %r2, %r1, 1;
    st.param.b32 [func_retval0+0], %r2;
    ret;
}

.func (.param .b32 func_retval0) twice(.param .b32 twice_p)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [twice_p];
    {
    .param .b32 param0;
    st.param.b32 [param0+0], %r1;
    .param .b32 retval0;
    call.uni (retval0), inc, (param0);
    ld.param.b32 %r2, [retval0+0];
    }
    shl.b32 %r2, %r2, 1;
    st.param.b32 [func_retval0+0], %r2;
    ret;
}

.visible .entry direct(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    {
    .param .b32 param0;
    st.param.b32 [param0+0], %r1;
    .param .b32 retval0;
    call.uni (retval0), inc, (param0);
    ld.param.b32 %r2, [retval0+0];
    }
    st.global.u32 [%rd1], %r2;
    ret;
}

.visible .entry indirect(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    {
    .param .b32 param0;
    st.param.b32 [param0+0], %r1;
    .param .b32 retval0;
    call.uni (retval0), twice, (param0);
    ld.param.b32 %r2, [retval0+0];
    }
    st.global.u32 [%rd1], %r2;
    ret;
}

.visible .entry plain(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    add.u32 %r2, %r1, 7;
    st.global.u32 [%rd1], %r2;
    ret;
}
"#;

#[test]
fn editing_a_callee_recompiles_its_callers_only() {
    let mut db = RootDatabase::with_execution_log();
    let file = db.add_file("m.ptx", CALLS.as_bytes());
    let t = target("sm_80");
    run_codegen(&db, file, &t);
    // `inc` is called by `direct`, and by `indirect` through `twice`.
    let text = CALLS.replace("add.u32 %r2, %r1, 1;", "add.u32 %r2, %r1, 2;");
    db.set_text(file, &text);
    check(
        &db,
        file,
        &t,
        expect![[r#"
            cubin(file)
            lowered(direct)
            encoded(direct)
            allocated(direct)
            scheduled(direct)
            kernel_stats(direct)
            lowered(indirect)
            encoded(indirect)
            allocated(indirect)
            scheduled(indirect)
            kernel_stats(indirect)
        "#]],
    );
    // `twice` only by `indirect`.
    let text = text.replace("shl.b32 %r2, %r2, 1;", "shl.b32 %r2, %r2, 2;");
    db.set_text(file, &text);
    check(
        &db,
        file,
        &t,
        expect![[r#"
            cubin(file)
            lowered(indirect)
            encoded(indirect)
            allocated(indirect)
            scheduled(indirect)
            kernel_stats(indirect)
        "#]],
    );
    // A kernel without calls: only itself.
    let text = text.replace("%r1, 7;", "%r1, 9;");
    db.set_text(file, &text);
    check(
        &db,
        file,
        &t,
        expect![[r#"
            cubin(file)
            lowered(plain)
            encoded(plain)
            allocated(plain)
            scheduled(plain)
            kernel_stats(plain)
        "#]],
    );
    // Whitespace and comments inside a callee: nothing.
    let text = text.replace("    ret;\n}\n\n.func", "    ret; // back\n}\n\n\n.func");
    db.set_text(file, &text);
    check(
        &db,
        file,
        &t,
        expect![[r#"
            cubin(file)
        "#]],
    );
    // A new device function changes the table the calling kernels read (they re-lower; the
    // later stages see equal IR and are not re-run); `plain` does not read it.
    let text = text.replace(
        ".visible .entry direct",
        ".func unused()\n{\n    ret;\n}\n\n.visible .entry direct",
    );
    db.set_text(file, &text);
    check(
        &db,
        file,
        &t,
        expect![[r#"
            cubin(file)
            lowered(direct)
            lowered(indirect)
        "#]],
    );
}

#[test]
fn errors_in_a_callee_point_into_the_callee() {
    let src = CALLS.replace("shl.b32 %r2, %r2, 1;", ".reg .b64 %rd9;\n    pmevent 1;");
    let (message, at) = only_refusal(&src);
    assert_eq!(
        message,
        "kernel `indirect`: unsupported: instruction `pmevent`"
    );
    assert_eq!(at, "pmevent 1;");
}

#[test]
fn changing_the_target_compiles_new_keys_only() {
    let mut db = RootDatabase::with_execution_log();
    let file = db.add_file("m.ptx", MODULE.as_bytes());
    run_codegen(&db, file, &target("sm_90"));
    // A new target: new keys; the front end (parse, module_items, ...) is not re-run.
    run_codegen(&db, file, &target("sm_80"));
    let again = run_codegen(&db, file, &target("sm_90"));
    assert_eq!(again, "", "the sm_90 results are still memoized");
    db.take_executed();
    let out = db::cubin(&db, FileTarget::new(&db, file, target("sm_80")));
    assert!(out.bytes.is_some());
    let executed: Vec<String> = db.take_executed().into_iter().map(|(q, _)| q).collect();
    assert!(executed.is_empty(), "{executed:?}");
}

#[test]
fn unsupported_features_fail_closed_with_a_span() {
    let src = MODULE.replace("add.u32 %r2, %r1, 7;", "pmevent 1;");
    let (message, at) = only_refusal(&src);
    assert_eq!(message, "kernel `beta`: unsupported: instruction `pmevent`");
    assert_eq!(at, "pmevent 1;");
    // The emission-time refusal: a form the learned SASS tables cannot encode. ptxas writes
    // an 8-byte `cp.async` with a src-size as `LDGSTS.E.64.ZFILL`, a form the corpus never
    // showed it (so the tables lack it; docs/arch/codegen.md).
    let copy = ".shared .align 8 .b8 buf[64];\n    \
                cp.async.ca.shared.global [buf], [%rd1], 8, %r1;";
    let src = MODULE.replace("add.u32 %r2, %r1, 7;", copy);
    let (message, at) = only_refusal(&src);
    assert!(
        message.starts_with("kernel `beta`: unsupported: encoding of `LDGSTS.E.64.ZFILL [R")
            && message.contains("is known for sm_80"),
        "{message}"
    );
    assert_eq!(at, "cp.async.ca.shared.global [buf], [%rd1], 8, %r1;");
}

/// Compiles `src` for sm_80, which must fail with exactly one diagnostic: its message and the
/// source text it points at.
fn only_refusal(src: &str) -> (String, String) {
    let mut db = RootDatabase::default();
    let file = db.add_file("m.ptx", src.as_bytes());
    let out = db::cubin(&db, FileTarget::new(&db, file, target("sm_80")));
    assert!(out.bytes.is_none());
    assert_eq!(out.diagnostics.len(), 1, "{:?}", out.diagnostics);
    let d = &out.diagnostics[0];
    let r = usize::from(d.range.start())..usize::from(d.range.end());
    (d.message.clone(), src[r].to_string())
}

fn oracle() -> Option<PathBuf> {
    test_support::oracle_bin_dir()
}

fn tool(path: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(path).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The instruction lines of a listing, normalized (`/*0040*/ IADD3 R0, R1, R2, RZ`).
fn instruction_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let start = l.find("/*")?;
            let rest = &l[start..];
            (rest[2..]
                .find("*/")
                .is_some_and(|e| e >= 4 && rest[2..2 + e].chars().all(|c| c.is_ascii_hexdigit())))
            .then(|| {
                let body = rest.split(';').next().unwrap_or(rest);
                body.split_whitespace().collect::<Vec<_>>().join(" ")
            })
        })
        .collect()
}

/// Renames `.L_x_N` labels by order of first appearance, restarting at each function (a line
/// at address 0): nvdisasm numbers labels across the whole file, kiln per kernel.
fn canonical_labels(lines: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    lines
        .iter()
        .map(|l| {
            if l.starts_with("/*0000*/") {
                names.clear();
            }
            let mut out = String::new();
            let mut rest = l.as_str();
            while let Some(i) = rest.find(".L_x_") {
                out.push_str(&rest[..i]);
                let tail = &rest[i + 5..];
                let digits = tail.chars().take_while(char::is_ascii_digit).count();
                let name = &rest[i..i + 5 + digits];
                let k = match names.iter().position(|n| n == name) {
                    Some(k) => k,
                    None => {
                        names.push(name.to_string());
                        names.len() - 1
                    }
                };
                out.push_str(&format!("L{k}"));
                rest = &tail[digits..];
            }
            out.push_str(rest);
            out
        })
        .collect()
}

/// Every example on every SM: `cuobjdump -elf` accepts the cubin and lists what kiln's ELF
/// model lists, and nvdisasm reads every word as kiln's listing shows it. nvdisasm runs on
/// the cubin itself for one SM per example (in rotation, so that each SM's cubins meet it on
/// about a fifth of the examples) and for listings with relocated operands or callees; the other
/// cubins' code goes through one raw-binary nvdisasm run per SM
/// (`test_support::raw_nvdisasm`: nvdisasm starts up in 0.2–0.35 s, which made this test
/// take minutes).
#[test]
fn cubins_are_accepted_by_nvidia_tools_and_listings_match() {
    use test_support::raw_nvdisasm::{self, Entry, KernelCode};
    let Some(bin) = oracle() else {
        println!("skipping: NVIDIA oracle tools not installed (cargo xtask oracle)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("kiln-codegen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sms = sms();
    let mut checked = 0;
    let (mut alone, mut batched) = (0, 0);
    // Per SM: (example, its kernels' code) for the raw nvdisasm run.
    let mut batches: Vec<Vec<(&str, Vec<KernelCode>)>> = sms.iter().map(|_| Vec::new()).collect();
    for (e, path) in EXAMPLES.iter().enumerate() {
        // The SM whose cubin of this example nvdisasm reads whole: the first in rotation
        // from `e` that compiles it.
        let whole = (0..sms.len())
            .map(|i| (e + i) % sms.len())
            .find(|&si| !refused(path, &sms[si]));
        for (si, sm) in sms.iter().map(String::as_str).enumerate() {
            let text = example_text(path, sm);
            let mut db = RootDatabase::default();
            let file = db.add_file(path, text.as_bytes());
            let t = target(sm);
            let out = db::cubin(&db, FileTarget::new(&db, file, t.clone()));
            let Some(bytes) = &out.bytes else {
                // Only the documented refusals.
                assert!(refused(path, sm), "{path} {sm}: {:?}", out.diagnostics);
                continue;
            };
            let cubin_path = dir.join(format!(
                "{}.{sm}.cubin",
                Path::new(path).file_stem().unwrap().to_string_lossy()
            ));
            std::fs::write(&cubin_path, bytes).unwrap();
            let p = cubin_path.to_str().unwrap();
            let (ok, elf, err) = tool(&bin.join("cuobjdump"), &["-elf", p]);
            assert!(ok, "{path} {sm}: cuobjdump: {err}");
            let model = cubin::read(bytes).unwrap();
            cubin::listing::compare_with_cuobjdump(&model, &elf)
                .unwrap_or_else(|e| panic!("{path} {sm}: {e}"));
            let kernels: Vec<KernelCode> = kernel_targets(&db, file, &t)
                .iter()
                .map(|kt| {
                    let enc = encoded(&db, *kt).as_ref().unwrap();
                    KernelCode {
                        code: enc.code.clone(),
                        listing: enc.listing.clone(),
                    }
                })
                .collect();
            let table = sass::table(sm).expect("table");
            let print = |w: u128, pc: u64| table.print(w, pc, &|_| None);
            let raw_ok = raw_nvdisasm::batchable(
                model.sections.iter().map(|s| s.name.as_str()),
                &print,
                &kernels,
            )
            .is_ok();
            if raw_ok && whole != Some(si) {
                batches[si].push((path, kernels));
                batched += 1;
            } else {
                let (ok, nv, err) = tool(&bin.join("nvdisasm"), &["-c", p]);
                assert!(ok && err.trim().is_empty(), "{path} {sm}: nvdisasm: {err}");
                let ours: Vec<String> = kernels
                    .iter()
                    .flat_map(|k| &k.listing)
                    .map(|l| {
                        let b = l.split(';').next().unwrap();
                        b.split_whitespace().collect::<Vec<_>>().join(" ")
                    })
                    .collect();
                assert_eq!(
                    canonical_labels(&instruction_lines(&nv)),
                    canonical_labels(&ours),
                    "{path} {sm}: nvdisasm text differs"
                );
                alone += 1;
            }
            checked += 1;
        }
    }
    for (sm, batch) in sms.iter().zip(&batches) {
        let table = sass::table(sm).expect("table");
        let print = |w: u128, pc: u64| table.print(w, pc, &|_| None);
        let entries: Vec<Entry<'_>> = batch.iter().map(|(_, k)| Entry { kernels: k }).collect();
        let verdicts = raw_nvdisasm::check_batch(
            &bin.join("nvdisasm"),
            &print,
            sm,
            &entries,
            &dir,
            &format!("examples-{sm}"),
        );
        for ((path, _), v) in batch.iter().zip(verdicts) {
            assert!(v.is_none(), "{path} {sm}: {}", v.unwrap_or_default());
        }
    }
    println!("{checked} cubins: {alone} through nvdisasm alone, {batched} in raw batches");
    assert!(
        alone >= EXAMPLES.len(),
        "every example meets nvdisasm on a cubin"
    );
    assert_eq!(checked, sms.len() * EXAMPLES.len() - refusals(EXAMPLES));
}

/// Per `.text.*` section of a cubin, its words' texts (branch targets as addresses) and the
/// words without their control fields.
fn texts_and_words(bytes: &[u8], sm: &str) -> Vec<(String, u128)> {
    let table = sass::table(sm).expect("table");
    let c = cubin::read(bytes).expect("cubin reads");
    let mut out = Vec::new();
    for (i, s) in c.sections.iter().enumerate() {
        if !s.name.starts_with(".text.") {
            continue;
        }
        let data = cubin::write::encode_data(&c.sections[i].data);
        for (k, w) in sass::words(&data).into_iter().enumerate() {
            let text = table.print(w, 16 * k as u64, &|_| None);
            out.push((text, w & !sass::control::CONTROL_MASK));
        }
    }
    out
}

/// Several encodings can print the same text (sm_90's `BAR.SYNC.DEFER_BLOCKING 0x0` with a
/// hidden `RZ` thread count), and the GPU tells them apart. Every instruction kiln writes
/// whose text ptxas also writes for the same example must be ptxas's word bit for bit
/// (outside the control field). The old sm_90 barrier (0x791d) fails this.
#[test]
fn instructions_with_ptxas_text_are_ptxas_words() {
    if oracle().is_none() {
        println!("skipping: NVIDIA oracle tools not installed (cargo xtask oracle)");
        return;
    }
    let mut compared = 0;
    let mut hidden_differs = 0;
    for path in EXAMPLES {
        for sm in sms().iter().map(String::as_str) {
            let text = example_text(path, sm);
            let mut db = RootDatabase::default();
            let file = db.add_file(path, text.as_bytes());
            let out = db::cubin(&db, FileTarget::new(&db, file, target(sm)));
            let Some(bytes) = &out.bytes else { continue };
            let Some(theirs) = test_support::ptxas_cubin(&example_path(path, sm), sm, &[]) else {
                return;
            };
            let theirs: std::collections::HashMap<String, u128> =
                texts_and_words(&theirs, sm).into_iter().collect();
            let table = sass::table(sm).expect("table");
            for (t, w) in texts_and_words(bytes, sm) {
                if let Some(&p) = theirs.get(&t) {
                    // The same encoding; bits nvdisasm prints nowhere (cache hints such as
                    // sm_80 LDG's bit 73) may differ and are counted, not failed.
                    assert_eq!(
                        table.lookup_index(w),
                        table.lookup_index(p),
                        "{path} {sm}: kiln's `{t}` is {w:032x}, ptxas's {p:032x}"
                    );
                    compared += 1;
                    // Branch targets print as addresses, so equal texts at other pcs have
                    // other offsets.
                    let pc_relative = ["BRA ", "BSSY ", "CALL", "BREAK "]
                        .iter()
                        .any(|m| t.contains(m));
                    if w != p && !pc_relative {
                        hidden_differs += 1;
                        println!("hidden bits differ: {path} {sm} `{t}`: {w:032x} ptxas {p:032x}");
                    }
                }
            }
        }
    }
    println!(
        "{compared} instructions compared with ptxas's words, {hidden_differs} with other \
         unprinted bits"
    );
    assert!(compared > 500, "only {compared} instructions compared");
}

/// The register count of ptxas's `-v` report (`Used N registers`).
fn used_registers(report: &str) -> u32 {
    report
        .split("Used ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no register count in: {report}"))
}

#[test]
fn register_count_follows_ptxas_convention() {
    // ptxas reports (highest R index + 1) + 2; check on the oracle with a kernel whose
    // allocation is forced: R1 (stack pointer) alone.
    let Some(bin) = oracle() else {
        println!("skipping: NVIDIA oracle tools not installed (cargo xtask oracle)");
        return;
    };
    let src =
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry e()\n{\n    ret;\n}\n";
    let dir = std::env::temp_dir().join(format!("kiln-codegen-regs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join("e.ptx");
    std::fs::write(&ptx, src).unwrap();
    let (ok, _, err) = tool(
        &bin.join("ptxas"),
        &[
            "-arch=sm_80",
            "-v",
            ptx.to_str().unwrap(),
            "-o",
            dir.join("e.cubin").to_str().unwrap(),
        ],
    );
    assert!(ok);
    let ptxas_regs = used_registers(&err);
    let mut db = RootDatabase::default();
    let file = db.add_file("e.ptx", src.as_bytes());
    let kt = kernel_targets(&db, file, &target("sm_80"))[0];
    let ours = db::kernel_stats(&db, kt).as_ref().unwrap().registers;
    assert_eq!(ours, ptxas_regs, "an EXIT-only kernel");
}

/// Execution: each example kernel, compiled by kiln, runs in the SASS emulator with the same
/// inputs as the PTX interpreter and must leave every buffer byte-identical
/// (`harness::compare`: pointer parameters get their own random buffers, scalars small
/// random values; 2 CTAs of 64 threads).
#[test]
fn compiled_kernels_execute_like_the_interpreter() {
    let mut verified = 0;
    for path in EXAMPLES.iter().filter(|p| !APPROXIMATE.contains(p)) {
        for sm in sms().iter().map(String::as_str) {
            let text = example_text(path, sm);
            let mut db = RootDatabase::default();
            let file = db.add_file(path, text.as_bytes());
            let t = target(sm);
            let out = db::cubin(&db, FileTarget::new(&db, file, t.clone()));
            let Some(bytes) = &out.bytes else {
                assert!(refused(path, sm), "{path} {sm}: {:?}", out.diagnostics);
                continue;
            };
            for kt in kernel_targets(&db, file, &t) {
                let name = kt.function(&db).name(&db).clone();
                for seed in [1u64, 2, 3] {
                    // Only the examples made to trap may: a trap on both sides compares only
                    // the trap status (a kernel storing past its 16 KiB buffer would pass
                    // unchecked).
                    let cfg = harness::Config {
                        seed,
                        require_no_trap: !TRAPPING.iter().any(|f| path.ends_with(f)),
                        ..harness::Config::default()
                    };
                    let v = harness::compare(&text, bytes, &name, &cfg);
                    assert_eq!(v, harness::Verdict::Equal, "{path} {sm} {name} seed {seed}");
                }
            }
            verified += 1;
        }
    }
    // Every (file, SM) pair not refused ran all of its kernels.
    assert_eq!(
        verified,
        sms().len() * (EXAMPLES.len() - APPROXIMATE.len()) - refusals(EXAMPLES)
    );
}

/// Execution of the approximate-math examples: kiln's cubin and ptxas's run in the emulator
/// on the same inputs (the same MUFU model on both sides) and must leave every buffer
/// byte-identical. The inputs include subnormal, huge, zero, infinite and NaN operands.
#[test]
fn approximate_math_executes_like_ptxas() {
    let Some(bin) = oracle() else {
        println!("skipping: NVIDIA oracle tools not installed (cargo xtask oracle)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("kiln-approx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for path in APPROXIMATE.iter().chain(ALSO_AGAINST_PTXAS) {
        for sm in sms().iter().map(String::as_str) {
            let text = example_text(path, sm);
            let mut db = RootDatabase::default();
            let file = db.add_file(path, text.as_bytes());
            let t = target(sm);
            let out = db::cubin(&db, FileTarget::new(&db, file, t.clone()));
            if out.bytes.is_none() && refused(path, sm) {
                continue;
            }
            let bytes = out
                .bytes
                .clone()
                .unwrap_or_else(|| panic!("{path} {sm}: {:?}", out.diagnostics));
            if sm == "sm_75" && ptxas_sm75_undecoded(path) {
                continue;
            }
            let theirs_path = dir.join(format!("ptxas-{sm}.cubin"));
            let (ok, _, err) = tool(
                &bin.join("ptxas"),
                &[
                    &format!("-arch={sm}"),
                    example_path(path, sm).to_str().unwrap(),
                    "-o",
                    theirs_path.to_str().unwrap(),
                ],
            );
            assert!(ok, "ptxas rejected {path}: {err}");
            let theirs = std::fs::read(&theirs_path).unwrap();
            for kt in kernel_targets(&db, file, &t) {
                let name = kt.function(&db).name(&db).clone();
                for seed in [1u64, 2, 3] {
                    let cfg = harness::Config {
                        seed,
                        require_no_trap: true,
                        ..harness::Config::default()
                    };
                    let v = harness::compare_cubins(&text, &bytes, &theirs, &name, &cfg);
                    assert_eq!(v, harness::Verdict::Equal, "{path} {sm} {name} seed {seed}");
                }
            }
            checked += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let sm75 = usize::from(sms().iter().any(|s| s == "sm_75"));
    let undecoded = ALSO_AGAINST_PTXAS
        .iter()
        .filter(|p| ptxas_sm75_undecoded(p))
        .count();
    assert_eq!(
        checked,
        sms().len() * (APPROXIMATE.len() + ALSO_AGAINST_PTXAS.len())
            - refusals(APPROXIMATE)
            - refusals(ALSO_AGAINST_PTXAS)
            - sm75 * undecoded
    );
}

fn ptxas_sm75_undecoded(path: &str) -> bool {
    PTXAS_SM75_UNDECODED
        .iter()
        .any(|f| path.ends_with(&format!("/{f}")))
}

/// Control codes: every example kernel's code passes the hazard checker (`crates/hazard`,
/// latency tables learned from ptxas's output) on the SMs that have a table.
#[test]
fn control_codes_pass_the_hazard_checker() {
    let mut checked = 0;
    for sm in sms().iter().map(String::as_str) {
        if hazard::latency_table(sm).is_none() {
            println!("skipping {sm}: no hazard latency table committed for it");
            continue;
        }
        for path in EXAMPLES {
            let text = example_text(path, sm);
            let mut db = RootDatabase::default();
            let file = db.add_file(path, text.as_bytes());
            let t = target(sm);
            for kt in kernel_targets(&db, file, &t) {
                let Ok(e) = encoded(&db, kt) else {
                    assert!(refused(path, sm), "{path} {sm}");
                    continue;
                };
                let hazards = hazard::check(sm, &sass::words(&e.code)).unwrap();
                assert!(
                    hazards.is_empty(),
                    "{path} {sm} {}: {}",
                    kt.function(&db).name(&db),
                    hazards
                        .iter()
                        .map(|h| h.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                );
                checked += 1;
            }
        }
    }
    println!("{checked} kernels passed the hazard checker");
}

/// The driver-facing traces of `%reserved_smem_offset_*` in kiln's cubin equal ptxas's for the
/// same PTX: which kernels carry EIATTR_RESERVED_SMEM_USED and that it follows their
/// KPARAM_INFO records; on sm_90 which kernels get an (empty) `.rela.text.<k>`, how many
/// resolved link-time symbols are left blanked (null, `other` = 1) and whether
/// `.nv.reservedSmem.offset0` survives. (Which kernel's section symbol a blanked symbol follows
/// depends on the order ptxas processes kernels in, the reverse of kiln's, so it is not
/// compared.)
#[test]
fn reserved_smem_traces_match_ptxas() {
    let Some(bin) = oracle() else {
        println!("skipping: NVIDIA oracle tools not installed (cargo xtask oracle)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("kiln-rsmem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One kernel per register, one reading none, one addressing only dynamic shared memory
    // (ptxas links its 0x400 base through `.nv.reservedSmem.cap` on sm_90).
    let mut text = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    text.push_str(".extern .shared .align 16 .b8 dyn[];\n");
    for r in ["0", "1", "begin", "end", "cap"] {
        text.push_str(&format!(
            ".visible .entry k_{r}(.param .u64 o)\n{{\n .reg .b32 %r<2>;\n .reg .b64 %rd<2>;\n \
             ld.param.u64 %rd1, [o];\n mov.u32 %r1, %reserved_smem_offset_{r};\n \
             st.global.u32 [%rd1], %r1;\n ret;\n}}\n"
        ));
    }
    text.push_str(
        ".visible .entry none(.param .u64 o)\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<2>;\n \
         ld.param.u64 %rd1, [o];\n mov.u32 %r1, %tid.x;\n st.global.u32 [%rd1], %r1;\n ret;\n}\n\
         .visible .entry dynamic(.param .u64 o)\n{\n .reg .b32 %r<3>;\n .reg .b64 %rd<2>;\n \
         ld.param.u64 %rd1, [o];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, dyn;\n \
         st.shared.u32 [%r2], %r1;\n ret;\n}\n",
    );
    let ptx_path = dir.join("rsmem_traces.ptx");
    std::fs::write(&ptx_path, &text).unwrap();
    #[derive(Debug, PartialEq)]
    struct Traces {
        /// Kernels with EIATTR_RESERVED_SMEM_USED right after their KPARAM_INFO records.
        used: Vec<String>,
        /// Kernels with a `.rela.text.<k>` section, and whether it is empty.
        rela: Vec<(String, bool)>,
        blanked: usize,
        offset0_symbol: bool,
    }
    let traces = |bytes: &[u8]| -> Traces {
        let c = cubin::read(bytes).unwrap();
        let mut used = Vec::new();
        let mut rela = Vec::new();
        for s in &c.sections {
            if let Some(k) = s.name.strip_prefix(".nv.info.")
                && let cubin::SectionData::Attributes(r) = &s.data
            {
                let at = r.iter().position(|r| r.code == 0x41);
                if let Some(at) = at {
                    assert_eq!(r[at - 1].code, 0x17, "{k}: after KPARAM_INFO");
                    used.push(k.to_string());
                }
            }
            if let Some(k) = s.name.strip_prefix(".rela.text.") {
                let empty = matches!(&s.data, cubin::SectionData::Relocs { relocs, .. } if relocs.is_empty());
                rela.push((k.to_string(), empty));
            }
        }
        used.sort();
        rela.sort();
        let syms = c.symbols();
        Traces {
            used,
            rela,
            blanked: syms
                .iter()
                .filter(|s| s.name.is_empty() && s.other == 1)
                .count(),
            offset0_symbol: syms.iter().any(|s| s.name == ".nv.reservedSmem.offset0"),
        }
    };
    // Not sm_75: `%reserved_smem_offset_*` needs sm_80.
    for sm in sms().iter().map(String::as_str).filter(|sm| *sm != "sm_75") {
        let mut db = RootDatabase::default();
        let file = db.add_file("rsmem_traces.ptx", text.as_bytes());
        let out = db::cubin(&db, FileTarget::new(&db, file, target(sm)));
        let ours = out
            .bytes
            .clone()
            .unwrap_or_else(|| panic!("{sm}: {:?}", out.diagnostics));
        let theirs_path = dir.join(format!("ptxas-{sm}.cubin"));
        let (ok, _, err) = tool(
            &bin.join("ptxas"),
            &[
                &format!("-arch={sm}"),
                ptx_path.to_str().unwrap(),
                "-o",
                theirs_path.to_str().unwrap(),
            ],
        );
        assert!(ok, "ptxas: {err}");
        let theirs = traces(&std::fs::read(&theirs_path).unwrap());
        assert_eq!(traces(&ours), theirs, "{sm}");
        // The comparison is not vacuous.
        assert_eq!(theirs.used.len(), 5, "{sm}");
        if matches!(sm, "sm_90") {
            // offset0 blanked in place, begin and cap after a kernel's section symbol.
            assert_eq!((theirs.blanked, theirs.offset0_symbol), (3, false));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// kiln's code for cooperative groups' multi-warp tiles (`multi_warp_cg_reduce<T, block,
/// tile>` of the CUDA reduction sample: barrier words and per-warp partial sums in the
/// reserved shared memory, spin loops with `atom.or.acq_rel` / `ld.acquire` /
/// `red.and.release`) runs like the interpreter when launched with the block size each kernel
/// is written for. Where the file does not compile yet it must fail closed on an encoding the
/// SASS tables lack.
#[test]
fn cooperative_groups_tiles_execute_like_the_interpreter() {
    let Some(corpus) = test_support::corpus_or_skip() else {
        return;
    };
    let path = corpus.join("ptx/cuda-samples/reduction__reduction_kernel.sm_80.ptx");
    let text = std::fs::read_to_string(&path).unwrap();
    // Not sm_75: the tiles keep their state in `%reserved_smem_offset_*` (PTX: sm_80).
    for sm in sms().iter().map(String::as_str).filter(|sm| *sm != "sm_75") {
        let mut db = RootDatabase::default();
        let file = db.add_file(path.to_str().unwrap(), text.as_bytes());
        let t = target(sm);
        let out = db::cubin(&db, FileTarget::new(&db, file, t.clone()));
        let Some(bytes) = &out.bytes else {
            let why: Vec<&str> = out.diagnostics.iter().map(|d| d.message.as_str()).collect();
            assert!(
                why.iter().all(|m| m.contains("unsupported: encoding of")),
                "{sm}: {why:?}"
            );
            println!("skipping {sm}: {}", why[0]);
            continue;
        };
        let facts = cubin::read(bytes).unwrap().functions();
        let prog = interp::Program::from_text(&text).unwrap();
        let image = emu::load::decode(bytes).unwrap();
        let mut ran = 0;
        for kt in kernel_targets(&db, file, &t) {
            let name = kt.function(&db).name(&db).clone();
            if !name.starts_with("_Z20multi_warp_cg_reduce") {
                continue;
            }
            // `..._cg_reduceIiLm1024ELm512E...`: block size 1024, tile 512.
            let size = |i: usize| -> u32 {
                name.split("Lm")
                    .nth(i)
                    .and_then(|s| s.split('E').next())
                    .and_then(|s| s.parse().ok())
                    .unwrap()
            };
            let (block, tile) = (size(1), size(2));
            let f = facts.iter().find(|f| f.name == name).unwrap();
            assert_eq!(f.reserved_smem_used, tile > 32, "{sm} {name}");
            for seed in [1u64, 2] {
                let cfg = harness::Config {
                    block: [block, 1, 1],
                    seed,
                    step_limit: 2_000_000,
                    ..harness::Config::default()
                };
                let v = harness::compare_kernel(&prog, &image, &name, &cfg);
                assert_eq!(v, harness::Verdict::Equal, "{sm} {name} seed {seed}");
            }
            ran += 1;
        }
        assert_eq!(ran, 15, "{sm}");
    }
}

/// Spilling (`regalloc::spill`): a kernel keeping 24 values live, compiled under register
/// budgets it does not fit, stays within each budget, reports spill stores and loads, and runs
/// like the interpreter.
#[test]
fn spilled_kernels_execute_like_the_interpreter() {
    let path = "../../test-data/codegen/pressure.ptx";
    for sm in sms().iter().map(String::as_str) {
        let text = example_text(path, sm);
        // 16 is raised to ptxas's lower bound, 24.
        for budget in [32u32, 24, 16] {
            let mut db = RootDatabase::default();
            let file = db.add_file(path, text.as_bytes());
            let mut t = target(sm);
            t.max_registers = Some(budget);
            let out = db::cubin(&db, FileTarget::new(&db, file, t.clone()));
            let bytes = out
                .bytes
                .as_ref()
                .unwrap_or_else(|| panic!("{sm} budget {budget}: {:?}", out.diagnostics));
            let kt = kernel_targets(&db, file, &t)[0];
            let stats = db::kernel_stats(&db, kt).as_ref().unwrap();
            assert!(
                stats.registers <= budget.max(24),
                "{sm} {budget}: {stats:?}"
            );
            assert!(stats.spill_stores > 0 && stats.spill_loads > 0, "{stats:?}");
            assert!(stats.stack_frame >= stats.spill_stores.min(4), "{stats:?}");
            let name = kt.function(&db).name(&db).clone();
            for seed in [1u64, 2] {
                let cfg = harness::Config {
                    seed,
                    ..harness::Config::default()
                };
                let v = harness::compare(&text, bytes, &name, &cfg);
                assert_eq!(
                    v,
                    harness::Verdict::Equal,
                    "{sm} budget {budget} seed {seed}"
                );
            }
        }
    }
}

/// Pressure-driven spilling (`regalloc::spill::relieve_pressure`): a kernel keeping 320
/// values live compiles under the full budget and under 24 registers (where more than 512
/// values find no register: refused before), within each budget, and runs like the
/// interpreter.
#[test]
fn kernels_far_over_the_budget_spill_and_execute_like_the_interpreter() {
    let path = "../../test-data/codegen/pressure_wide.ptx";
    for sm in sms().iter().map(String::as_str) {
        let text = example_text(path, sm);
        for budget in [None, Some(24u32)] {
            let mut db = RootDatabase::default();
            let file = db.add_file(path, text.as_bytes());
            let mut t = target(sm);
            t.max_registers = budget;
            let out = db::cubin(&db, FileTarget::new(&db, file, t.clone()));
            let bytes = out
                .bytes
                .as_ref()
                .unwrap_or_else(|| panic!("{sm} budget {budget:?}: {:?}", out.diagnostics));
            let kt = kernel_targets(&db, file, &t)[0];
            let stats = db::kernel_stats(&db, kt).as_ref().unwrap();
            assert!(
                stats.registers <= budget.unwrap_or(255),
                "{sm} {budget:?}: {stats:?}"
            );
            assert!(stats.spill_stores > 0 && stats.spill_loads > 0, "{stats:?}");
            let name = kt.function(&db).name(&db).clone();
            let cfg = harness::Config {
                seed: 1,
                ..harness::Config::default()
            };
            let v = harness::compare(&text, bytes, &name, &cfg);
            assert_eq!(v, harness::Verdict::Equal, "{sm} budget {budget:?}");
        }
    }
}

/// A kernel whose shuffles read lanes that do not exist in a 4-thread block (undefined in
/// PTX; cuda-samples' `reduce7<T, 4>` does this at every launch). The harness calls it not
/// comparable; with both models reading 0 for such lanes (`Config::zero_undefined_lanes`)
/// kiln's code is compared with the PTX under that one convention, and the interpreter's
/// values follow it: lane 0 adds lane 2's value and lane 16's (absent: 0).
#[test]
fn undefined_shuffle_lanes_compare_under_the_zero_convention() {
    let text = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry partial(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mad.lo.u32 %r2, %r1, 3, 1;
    shfl.sync.down.b32 %r3, %r2, 16, 31, 15;
    shfl.sync.down.b32 %r4, %r2, 2, 31, 15;
    add.u32 %r5, %r3, %r4;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    ret;
}
"#;
    for sm in sms().iter().map(String::as_str) {
        let text = &retarget(text, sm);
        let mut db = RootDatabase::default();
        let file = db.add_file("partial.ptx", text.as_bytes());
        let out = db::cubin(&db, FileTarget::new(&db, file, target(sm)));
        let bytes = out.bytes.clone().expect("compiles");
        let cfg = harness::Config {
            grid: [1, 1, 1],
            block: [4, 1, 1],
            ..harness::Config::default()
        };
        let v = harness::compare(text, &bytes, "partial", &cfg);
        assert!(
            matches!(&v, harness::Verdict::NotComparable(r) if r.contains("SHFL read(s) of lanes outside")),
            "{sm}: {v:?}"
        );
        let zero = harness::Config {
            zero_undefined_lanes: true,
            ..cfg
        };
        let v = harness::compare(text, &bytes, "partial", &zero);
        assert_eq!(v, harness::Verdict::Equal, "{sm}");
    }
    // The interpreter's values under the convention: lane l reads lane l+2 (when it exists,
    // 3(l+2)+1) and lane l+16 (never: 0).
    let mut prog = interp::Program::from_text(text).expect("parses");
    let k = prog.kernel("partial").expect("kernel");
    let mut mem = interp::Memory::new();
    let out = mem.alloc("out", vec![0; 16]);
    prog.load(&mut mem);
    let launch = interp::Launch {
        grid: [1, 1, 1],
        block: [4, 1, 1],
        dynamic_shared: 0,
        params: out.to_le_bytes().to_vec(),
        step_limit: 10_000,
    };
    let options = interp::RunOptions {
        zero_undefined_lanes: true,
        ..interp::RunOptions::default()
    };
    prog.run_with(&mut mem, k, &launch, &options).expect("runs");
    let words: Vec<u32> = mem
        .buffer(out)
        .expect("buffer")
        .data
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, [7, 10, 0, 0]);
}

/// ptxas 13.0.88 drops the guard of a `testp` and always writes the predicate (an unguarded
/// `ISETP` for `@%p4 testp.notanumber.f32 %p1, %f1`): kiln refuses a guarded `testp`, with its
/// span, rather than compute another answer than ptxas's; an unguarded one compiles.
#[test]
fn guarded_testp_is_refused() {
    let guarded = MODULE.replace(
        "add.u32 %r2, %r1, 7;",
        "mov.b32 %f1, %r1;\n    @%p testp.notanumber.f32 %q, %f1;\n    selp.u32 %r2, 1, 0, %q;",
    );
    let src = guarded.replace(
        ".reg .pred %p;",
        ".reg .pred %p;\n    .reg .pred %q;\n    .reg .f32 %f1;",
    );
    let mut db = RootDatabase::default();
    let file = db.add_file("m.ptx", src.as_bytes());
    let out = db::cubin(&db, FileTarget::new(&db, file, target("sm_80")));
    assert!(out.bytes.is_none());
    let d = &out.diagnostics[0];
    assert_eq!(
        d.message,
        "kernel `beta`: unsupported: guarded testp (ptxas 13.0.88 ignores the guard and always writes the predicate)"
    );
    let r = usize::from(d.range.start())..usize::from(d.range.end());
    assert_eq!(&src[r], "@%p testp.notanumber.f32 %q, %f1;");
    let unguarded = src.replace("@%p testp", "testp");
    let mut db = RootDatabase::default();
    let file = db.add_file("m.ptx", unguarded.as_bytes());
    let out = db::cubin(&db, FileTarget::new(&db, file, target("sm_80")));
    assert!(out.bytes.is_some(), "{:?}", out.diagnostics);
}

/// If-converted loads read only under their guard take no register outside it: on
/// `test-data/codegen/ifconv_loop_regs.ptx` (a shared-memory tree sum whose loop body is
/// predicated) kiln uses no more registers than ptxas 13.0.88. An unguarded add of the loaded
/// values once kept one of them live around the loop: 11 registers against ptxas's 10.
#[test]
fn if_converted_loads_cost_no_register_outside_their_guard() {
    let Some(bin) = oracle() else {
        panic!("NVIDIA oracle tools not installed (cargo xtask oracle)");
    };
    let path = "../../test-data/codegen/ifconv_loop_regs.ptx";
    let src = std::fs::read_to_string(path).unwrap();
    let dir = std::env::temp_dir().join(format!("kiln-ifconv-regs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ok, _, err) = tool(
        &bin.join("ptxas"),
        &[
            "-arch=sm_90",
            "-v",
            path,
            "-o",
            dir.join("k.cubin").to_str().unwrap(),
        ],
    );
    assert!(ok, "{err}");
    let ptxas_regs = used_registers(&err);
    let mut db = RootDatabase::default();
    let file = db.add_file(path, src.as_bytes());
    let kt = kernel_targets(&db, file, &target("sm_90"))[0];
    let ours = db::kernel_stats(&db, kt).as_ref().unwrap().registers;
    assert!(
        ours <= ptxas_regs,
        "kiln {ours} registers, ptxas {ptxas_regs}"
    );
}
