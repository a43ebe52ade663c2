//! `cargo xtask fuzz codegen [--seconds N] [--seed S] [--arch sm_XX]...`: differential fuzzing
//! of kiln's code generation, Csmith-style.
//!
//! Each program is a random, well-defined PTX kernel ([`generate`]): 32- and 64-bit integer,
//! f32 and f64 arithmetic with edge-value constants (0, -0, ±inf, NaN, subnormals, extremes),
//! comparisons and selects, predicated instructions, forward branches and bounded loops,
//! shared memory written and read across warps with barriers between, warp shuffles and votes
//! (at the kernel's top level, where every thread is converged), and commutative reductions to
//! global memory. Division and remainder get odd divisors; barriers and collectives never sit
//! under divergent control flow; every register is written before it is read. Every value
//! ends in the output buffer.
//!
//! Each program is compiled by kiln for every `--arch` (default sm_80 and sm_90), and its cubin
//! runs in the emulator against the PTX interpreter with the harness's inputs
//! (`harness::compare`, which also runs the interpreter as a sanitizer). A difference is
//! a divergence: it is minimised (statements removed while it persists) and written to
//! `test-data/fuzz-codegen/`, with ptxas's cubin in the emulator as a third opinion (in the
//! file's first line). A program kiln refuses (`unsupported: ...`) is counted, not failed.
//!
//! `--ptxas` also judges the judge on PTX nobody tuned it on: every program is compiled by
//! ptxas too, and ptxas's code must run in the emulator equal to the interpreter and pass the
//! hazard checker with no report. A program where either fails is a *judge divergence* (a gap
//! in the emulator's, the interpreter's or the hazard checker's model of the hardware), kept in
//! `test-data/fuzz-codegen/judge-*.ptx`; a form the emulator cannot run is counted
//! (`judge_unsupported`).
//!
//! `--emit DIR --count N` only writes N programs to DIR (probe kernels for `cargo xtask
//! hazard-learn --also`: ptxas's code for random programs shows orderings the corpus lacks).
//!
//! Last line: `RESULT fuzz codegen programs=<n> compiled=<n> equal=<n> divergences=<n>
//! unsupported=<n> not_comparable=<n> ptxas_equal=<n> judge_divergences=<n>
//! judge_unsupported=<n> seconds=<f> programs_per_second=<f> seed=<s>`; the command fails when
//! a divergence of either kind is found.

use std::fmt::Write as _;
use std::time::Instant;

use crate::corpus;
use crate::fuzz::Rng;

/// Registers per class in every program.
const R32: usize = 8;
const R64: usize = 4;
const F32: usize = 6;
const F64: usize = 4;
const PRED: usize = 4;
/// Threads per CTA the programs are written for (the harness launches 64).
const BLOCK: u32 = 64;

/// Edge values for 32-bit integers.
const INT_EDGES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2147483647",
    "-2147483648",
    "0x80000000",
    "0xffff",
    "31",
    "32",
    "7",
];
/// Edge values for f32 (hex images).
const F32_EDGES: &[&str] = &[
    "0f00000000", // 0
    "0f80000000", // -0
    "0f7F800000", // inf
    "0fFF800000", // -inf
    "0f7FC00000", // NaN
    "0f00000001", // smallest subnormal
    "0f807FFFFF", // largest negative subnormal
    "0f7F7FFFFF", // max
    "0f3F800000", // 1
    "0fBF000000", // -0.5
    "0f4B000001", // 2^23 + 1
];
/// Edge values for f64.
const F64_EDGES: &[&str] = &[
    "0d0000000000000000",
    "0d8000000000000000",
    "0d7FF0000000000000",
    "0dFFF0000000000000",
    "0d7FF8000000000000",
    "0d0000000000000001",
    "0d7FEFFFFFFFFFFFFF",
    "0d3FF0000000000000",
    "0dC000000000000000",
    "0d3CB0000000000000",
];

fn r(i: usize) -> String {
    format!("%r{}", i + 1)
}
fn rd(i: usize) -> String {
    format!("%rd{}", i + 1)
}
fn f(i: usize) -> String {
    format!("%f{}", i + 1)
}
fn fd(i: usize) -> String {
    format!("%fd{}", i + 1)
}
fn p(i: usize) -> String {
    format!("%p{}", i + 1)
}

/// One random program: fixed head (declarations, inputs), random body, fixed tail (outputs).
#[derive(Clone)]
struct Program {
    head: Vec<String>,
    /// Top-level statements, each one or more lines (removed whole by [`minimise`]).
    body: Vec<Vec<String>>,
    tail: Vec<String>,
}

impl Program {
    fn text(&self) -> String {
        let mut s = String::new();
        for l in self
            .head
            .iter()
            .chain(self.body.iter().flatten())
            .chain(&self.tail)
        {
            s.push_str(l);
            s.push('\n');
        }
        s
    }
}

/// Generates a program of about `size` statements.
fn generate(rng: &mut Rng, size: usize) -> Program {
    let mut head = vec![
        ".version 8.0".to_string(),
        ".target sm_80".into(),
        ".address_size 64".into(),
        String::new(),
        ".visible .entry fz(.param .u64 out, .param .u64 in)".into(),
        "{".into(),
        format!("  .reg .pred %p<{}>;", PRED + 2),
        format!("  .reg .b32 %r<{}>;", R32 + 5),
        format!("  .reg .b64 %rd<{}>;", R64 + 4),
        format!("  .reg .f32 %f<{}>;", F32 + 1),
        format!("  .reg .f64 %fd<{}>;", F64 + 1),
        format!("  .shared .align 8 .b32 sm[{BLOCK}];"),
        // %r9 = tid, %r10 = loop counter, %r11 = scratch; %rd5 = in, %rd6 = out, %rd7 = scratch.
        "  mov.u32 %r9, %tid.x;".into(),
        "  ld.param.u64 %rd5, [in];".into(),
        "  ld.param.u64 %rd6, [out];".into(),
        "  mul.wide.u32 %rd7, %r9, 8;".into(),
        "  add.u64 %rd5, %rd5, %rd7;".into(),
    ];
    // Every register gets a value: from the thread's input words or an edge constant.
    for i in 0..R32 {
        if rng.chance(50) {
            head.push(format!("  ld.global.u32 {}, [%rd5+{}];", r(i), 4 * (i % 2)));
            if i >= 2 {
                head.push(format!(
                    "  xor.b32 {}, {}, {};",
                    r(i),
                    r(i),
                    rng.pick(INT_EDGES)
                ));
            }
        } else {
            head.push(format!("  mov.u32 {}, {};", r(i), rng.pick(INT_EDGES)));
        }
    }
    for i in 0..R64 {
        head.push(format!("  ld.global.u64 {}, [%rd5];", rd(i)));
        if rng.chance(50) {
            head.push(format!(
                "  xor.b64 {}, {}, {};",
                rd(i),
                rd(i),
                rng.next() as i64
            ));
        }
    }
    for i in 0..F32 {
        if rng.chance(60) {
            head.push(format!("  ld.global.f32 {}, [%rd5+{}];", f(i), 4 * (i % 2)));
        } else {
            head.push(format!("  mov.b32 {}, {};", f(i), rng.pick(F32_EDGES)));
        }
    }
    for i in 0..F64 {
        if rng.chance(50) {
            head.push(format!("  cvt.f64.f32 {}, {};", fd(i), f(i)));
        } else {
            head.push(format!("  mov.b64 {}, {};", fd(i), rng.pick(F64_EDGES)));
        }
    }
    for i in 0..PRED {
        head.push(format!(
            "  setp.lt.u32 {}, {}, {};",
            p(i),
            r(rng.below(R32)),
            r(rng.below(R32))
        ));
    }
    let mut body = Vec::new();
    let mut labels = 0;
    while body.len() < size {
        let mut stmt = Vec::new();
        top_level(rng, &mut stmt, &mut labels);
        body.push(stmt);
    }
    let mut tail = Vec::new();
    // Results: out[tid * SLOTS + k].
    // Bytes per thread, a multiple of 8 so that every thread's 64-bit stores are aligned.
    let row = (4 * (R32 + 2 * R64 + F32 + 2 * F64 + 1)).div_ceil(8) * 8;
    tail.push(format!("  mul.wide.u32 %rd7, %r9, {row};"));
    tail.push("  add.u64 %rd6, %rd6, %rd7;".into());
    let mut at = 0;
    for i in 0..R32 {
        tail.push(format!("  st.global.u32 [%rd6+{at}], {};", r(i)));
        at += 4;
    }
    for i in 0..R64 {
        tail.push(format!("  st.global.u64 [%rd6+{at}], {};", rd(i)));
        at += 8;
    }
    for i in 0..F32 {
        tail.push(format!("  st.global.f32 [%rd6+{at}], {};", f(i)));
        at += 4;
    }
    for i in 0..F64 {
        tail.push(format!("  st.global.f64 [%rd6+{at}], {};", fd(i)));
        at += 8;
    }
    tail.push("  mov.u32 %r11, 0;".into());
    for i in 0..PRED {
        tail.push(format!("  selp.u32 %r10, {}, 0, {};", 1 << i, p(i)));
        tail.push("  or.b32 %r11, %r11, %r10;".into());
    }
    tail.push(format!("  st.global.u32 [%rd6+{at}], %r11;"));
    tail.push("  ret;".into());
    tail.push("}".into());
    Program { head, body, tail }
}

/// A statement that may sit anywhere (no barrier or collective).
fn plain(rng: &mut Rng, out: &mut Vec<String>) {
    let guard = if rng.chance(15) {
        format!(
            "@{}{} ",
            if rng.chance(50) { "!" } else { "" },
            p(rng.below(PRED))
        )
    } else {
        String::new()
    };
    let (a, b, c) = (rng.below(R32), rng.below(R32), rng.below(R32));
    let src = |rng: &mut Rng, i: usize| -> String {
        if rng.chance(25) {
            rng.pick(INT_EDGES).to_string()
        } else {
            r(i)
        }
    };
    let line = match rng.below(40) {
        0 => format!("add.u32 {}, {}, {};", r(a), r(b), src(rng, c)),
        1 => format!("sub.s32 {}, {}, {};", r(a), r(b), src(rng, c)),
        2 => format!("mul.lo.u32 {}, {}, {};", r(a), r(b), src(rng, c)),
        3 => format!(
            "mad.lo.s32 {}, {}, {}, {};",
            r(a),
            r(b),
            r(c),
            r(rng.below(R32))
        ),
        4 => format!(
            "{}.b32 {}, {}, {};",
            rng.pick(&["and", "or", "xor"]),
            r(a),
            r(b),
            src(rng, c)
        ),
        5 => format!(
            "{} {}, {}, {};",
            rng.pick(&["shl.b32", "shr.u32", "shr.s32"]),
            r(a),
            r(b),
            if rng.chance(50) {
                format!("{}", rng.below(40))
            } else {
                r(c)
            }
        ),
        6 => format!(
            "{}.{} {}, {}, {};",
            rng.pick(&["min", "max"]),
            rng.pick(&["u32", "s32"]),
            r(a),
            r(b),
            r(c)
        ),
        7 => format!(
            "mul.hi.{} {}, {}, {};",
            rng.pick(&["u32", "s32"]),
            r(a),
            r(b),
            r(c)
        ),
        8 => {
            // Odd divisor: never zero.
            let op = rng.pick(&["div.u32", "rem.u32", "div.s32", "rem.s32"]);
            return out.extend([
                format!("  or.b32 %r12, {}, 1;", r(c)),
                format!("  {guard}{op} {}, {}, %r12;", r(a), r(b)),
            ]);
        }
        9 => format!(
            "{}.b32 {}, {};",
            rng.pick(&["not", "popc", "clz", "brev"]),
            r(a),
            r(b)
        ),
        10 => format!(
            "bfe.{} {}, {}, {}, {};",
            rng.pick(&["u32", "s32"]),
            r(a),
            r(b),
            rng.below(33),
            rng.below(33)
        ),
        11 => format!(
            "prmt.b32 {}, {}, {}, {:#x};",
            r(a),
            r(b),
            r(c),
            rng.below(0x10000)
        ),
        12 => format!(
            "setp.{}.{} {}, {}, {};",
            rng.pick(&["lt", "ge", "eq", "ne", "gt", "le"]),
            rng.pick(&["u32", "s32"]),
            p(rng.below(PRED)),
            r(b),
            src(rng, c)
        ),
        13 => format!(
            "selp.b32 {}, {}, {}, {};",
            r(a),
            r(b),
            r(c),
            p(rng.below(PRED))
        ),
        14 => format!(
            "{}.f32 {}, {}, {};",
            rng.pick(&["add", "sub", "mul", "min", "max", "add.rz", "mul.rn"]),
            f(rng.below(F32)),
            f(rng.below(F32)),
            f(rng.below(F32))
        ),
        15 => format!(
            "fma.rn.f32 {}, {}, {}, {};",
            f(rng.below(F32)),
            f(rng.below(F32)),
            f(rng.below(F32)),
            f(rng.below(F32))
        ),
        16 => format!(
            "{}.f32 {}, {};",
            rng.pick(&["neg", "abs"]),
            f(rng.below(F32)),
            f(rng.below(F32))
        ),
        17 => format!(
            "setp.{}.f32 {}, {}, {};",
            rng.pick(&["lt", "ge", "eq", "ne", "gtu", "leu", "nan", "num"]),
            p(rng.below(PRED)),
            f(rng.below(F32)),
            f(rng.below(F32))
        ),
        18 => format!(
            "cvt.rn.f32.{} {}, {};",
            rng.pick(&["s32", "u32"]),
            f(rng.below(F32)),
            r(b)
        ),
        19 => format!(
            "cvt.{}.{}.f32 {}, {};",
            rng.pick(&["rzi", "rni", "rmi"]),
            rng.pick(&["s32", "u32"]),
            r(a),
            f(rng.below(F32))
        ),
        20 => format!("mov.b32 {}, {};", r(a), f(rng.below(F32))),
        21 => format!(
            "{} {}, {}, {};",
            rng.pick(&[
                "add.u64",
                "sub.s64",
                "mul.lo.u64",
                "and.b64",
                "xor.b64",
                "or.b64"
            ]),
            rd(rng.below(R64)),
            rd(rng.below(R64)),
            rd(rng.below(R64))
        ),
        22 => format!(
            "{} {}, {}, {};",
            rng.pick(&["shl.b64", "shr.u64", "shr.s64"]),
            rd(rng.below(R64)),
            rd(rng.below(R64)),
            rng.below(64)
        ),
        23 => match rng.below(3) {
            0 => format!("cvt.u64.u32 {}, {};", rd(rng.below(R64)), r(b)),
            1 => format!("cvt.s64.s32 {}, {};", rd(rng.below(R64)), r(b)),
            _ => format!("cvt.u32.u64 {}, {};", r(a), rd(rng.below(R64))),
        },
        24 => format!(
            "mul.wide.{} {}, {}, {};",
            rng.pick(&["u32", "s32"]),
            rd(rng.below(R64)),
            r(b),
            r(c)
        ),
        25 => format!(
            "{}.f64 {}, {}, {};",
            rng.pick(&["add", "sub", "mul", "min", "max"]),
            fd(rng.below(F64)),
            fd(rng.below(F64)),
            fd(rng.below(F64))
        ),
        26 => format!(
            "fma.rn.f64 {}, {}, {}, {};",
            fd(rng.below(F64)),
            fd(rng.below(F64)),
            fd(rng.below(F64)),
            fd(rng.below(F64))
        ),
        27 => format!(
            "{}.pred {}, {}, {};",
            rng.pick(&["and", "or", "xor"]),
            p(rng.below(PRED)),
            p(rng.below(PRED)),
            p(rng.below(PRED))
        ),
        28 => format!(
            "setp.{}.{}.{} {}, {}, {}, {}{};",
            rng.pick(&["lt", "ge", "ne"]),
            rng.pick(&["and", "or", "xor"]),
            rng.pick(&["s32", "u32"]),
            p(rng.below(PRED)),
            r(b),
            r(c),
            if rng.chance(50) { "!" } else { "" },
            p(rng.below(PRED))
        ),
        29 => format!(
            "bfi.b32 {}, {}, {}, {}, {};",
            r(a),
            r(b),
            r(c),
            rng.below(33),
            rng.below(33)
        ),
        30 => format!("{}.s32 {}, {};", rng.pick(&["abs", "neg"]), r(a), r(b)),
        31 => format!(
            "sad.{} {}, {}, {}, {};",
            rng.pick(&["u32", "s32"]),
            r(a),
            r(b),
            r(c),
            r(rng.below(R32))
        ),
        32 => format!(
            "selp.f32 {}, {}, {}, {};",
            f(rng.below(F32)),
            f(rng.below(F32)),
            f(rng.below(F32)),
            p(rng.below(PRED))
        ),
        33 => format!(
            "{}.{}.f32 {}, {}, {};",
            rng.pick(&["add", "mul", "sub"]),
            rng.pick(&["ftz", "sat", "ftz.sat", "rm", "rp"]),
            f(rng.below(F32)),
            f(rng.below(F32)),
            f(rng.below(F32))
        ),
        34 => format!(
            "{} {}, {};",
            rng.pick(&["cvt.u32.u16", "cvt.s32.s16", "cvt.u32.u8", "cvt.s32.s8"]),
            r(a),
            r(b)
        ),
        35 => format!(
            "testp.{}.f32 {}, {};",
            rng.pick(&[
                "finite",
                "infinite",
                "number",
                "notanumber",
                "normal",
                "subnormal"
            ]),
            p(rng.below(PRED)),
            f(rng.below(F32))
        ),
        36 => format!(
            "copysign.f32 {}, {}, {};",
            f(rng.below(F32)),
            f(rng.below(F32)),
            f(rng.below(F32))
        ),
        37 => format!(
            "cvt.{}.f64 {}, {};",
            rng.pick(&["rzi.s32", "rni.s32", "rzi.u32"]),
            r(a),
            fd(rng.below(F64))
        ),
        38 => format!(
            "{}.u64 {}, {}, {};",
            rng.pick(&["min", "max"]),
            rd(rng.below(R64)),
            rd(rng.below(R64)),
            rd(rng.below(R64))
        ),
        _ => match rng.below(3) {
            0 => format!("cvt.f64.f32 {}, {};", fd(rng.below(F64)), f(rng.below(F32))),
            1 => format!(
                "cvt.rn.f32.f64 {}, {};",
                f(rng.below(F32)),
                fd(rng.below(F64))
            ),
            _ => format!(
                "setp.{}.f64 {}, {}, {};",
                rng.pick(&["lt", "ge", "ne", "equ"]),
                p(rng.below(PRED)),
                fd(rng.below(F64)),
                fd(rng.below(F64))
            ),
        },
    };
    // ptxas drops the guard of a `testp` (kiln refuses a guarded one: lower/src/testp.rs).
    let guard = if line.starts_with("testp") {
        ""
    } else {
        guard.as_str()
    };
    out.push(format!("  {guard}{line}"));
}

/// A top-level statement: plain ones, control flow, or (converged) memory and collectives.
fn top_level(rng: &mut Rng, out: &mut Vec<String>, labels: &mut usize) {
    match rng.below(20) {
        0 | 1 => {
            // if-then over a few plain statements.
            *labels += 1;
            let l = format!("$L_skip{labels}");
            out.push(format!(
                "  @{}{} bra {l};",
                if rng.chance(50) { "!" } else { "" },
                p(rng.below(PRED))
            ));
            for _ in 0..1 + rng.below(4) {
                plain(rng, out);
            }
            out.push(format!("{l}:"));
        }
        2 => {
            // A loop of 1..4 trips (counter %r10).
            *labels += 1;
            let l = format!("$L_loop{labels}");
            out.push(format!("  mov.u32 %r10, {};", 1 + rng.below(4)));
            out.push(format!("{l}:"));
            for _ in 0..1 + rng.below(3) {
                plain(rng, out);
            }
            out.push("  sub.u32 %r10, %r10, 1;".into());
            out.push("  setp.ne.u32 %p5, %r10, 0;".into());
            out.push(format!("  @%p5 bra {l};"));
        }
        3 => {
            // Shared memory across warps: every thread stores, a barrier, a read of another
            // thread's word, a barrier before anyone stores again.
            let (a, b) = (rng.below(R32), rng.below(R32));
            let k = 1 + rng.below(BLOCK as usize - 1);
            out.push("  shl.b32 %r11, %r9, 2;".into());
            out.push("  mov.u32 %r12, sm;".into());
            out.push("  add.u32 %r11, %r12, %r11;".into());
            out.push(format!("  st.shared.u32 [%r11], {};", r(a)));
            out.push("  bar.sync 0;".into());
            out.push(format!("  xor.b32 %r11, %r9, {k};"));
            out.push(format!("  and.b32 %r11, %r11, {};", BLOCK - 1));
            out.push("  shl.b32 %r11, %r11, 2;".into());
            out.push("  add.u32 %r11, %r12, %r11;".into());
            out.push(format!("  ld.shared.u32 {}, [%r11];", r(b)));
            out.push("  bar.sync 0;".into());
        }
        4 => {
            let (a, b) = (rng.below(R32), rng.below(R32));
            let line = match rng.below(4) {
                0 => format!(
                    "shfl.sync.bfly.b32 {}, {}, {}, 31, -1;",
                    r(a),
                    r(b),
                    1 << rng.below(5)
                ),
                1 => format!(
                    "shfl.sync.idx.b32 {}, {}, {}, 31, -1;",
                    r(a),
                    r(b),
                    rng.below(32)
                ),
                2 => format!(
                    "shfl.sync.down.b32 {}, {}, {}, 31, -1;",
                    r(a),
                    r(b),
                    rng.below(32)
                ),
                _ => format!("vote.sync.ballot.b32 {}, {}, -1;", r(a), p(rng.below(PRED))),
            };
            out.push(format!("  {line}"));
        }
        5 => {
            // A commutative reduction to a word of the output no thread stores to (thread 0's
            // slot ends with 4 unused bytes): deterministic. (It went to the first word until
            // 2026-11-28, which thread 0 also stores to: a race between that store and the
            // other threads' reductions, whose outcome the emulator's thread groups changed.)
            out.push(format!(
                "  red.global.add.u32 [%rd6+124], {};",
                r(rng.below(R32))
            ));
        }
        _ => plain(rng, out),
    }
}

#[derive(Default)]
struct Outcome {
    compiled: usize,
    equal: usize,
    unsupported: usize,
    not_comparable: usize,
    divergence: Option<String>,
    /// With `--ptxas`: ptxas's code equal to the interpreter, per arch.
    ptxas_equal: usize,
    judge_unsupported: usize,
    judge_divergence: Option<String>,
}

/// What the judge says of ptxas's code for `text` on `arch`: Ok(true) equal to the
/// interpreter, Ok(false) not comparable or not runnable (counted), Err a judge divergence.
fn judge_ptxas(text: &str, arch: &str, o: &mut Outcome) -> Result<(), String> {
    let bytes = match corpus::ptxas_cubin(text, arch, &[]) {
        Ok(corpus::PtxasOutcome::Ok { cubin, .. }) => {
            std::fs::read(cubin).map_err(|e| format!("{arch}: reading ptxas's cubin: {e}"))?
        }
        Ok(other) => return Err(format!("{arch}: ptxas rejects the program: {other:?}")),
        Err(e) => return Err(format!("{arch}: running ptxas: {e}")),
    };
    let hazards = corpus::hazard::kernel_hazards(&bytes, "fz");
    if let Some(h) = hazards.first() {
        return Err(format!(
            "{arch}: the hazard checker reports {} hazard(s) in ptxas's code, first {h}",
            hazards.len()
        ));
    }
    let cfg = harness::Config::default();
    match corpus::catch(|| harness::compare(text, &bytes, "fz", &cfg)) {
        Ok(harness::Verdict::Equal) => o.ptxas_equal += 1,
        Ok(harness::Verdict::NotComparable(_)) => {}
        Ok(harness::Verdict::Unsupported(u)) => {
            if std::env::var_os("KILN_FUZZ_VERBOSE").is_some() {
                eprintln!("judge unsupported: {u}");
            }
            o.judge_unsupported += 1;
        }
        Ok(harness::Verdict::Differ(d)) => {
            return Err(format!(
                "{arch}: ptxas's code in the emulator differs from the interpreter: {d}"
            ));
        }
        Err(p) => return Err(format!("{arch}: the harness panics on ptxas's code: {p}")),
    }
    Ok(())
}

/// The emulator's verdict on ptxas's code for `text` (the third opinion on a divergence).
fn ptxas_opinion(text: &str, arch: &str) -> String {
    match corpus::ptxas_cubin(text, arch, &[]) {
        Ok(corpus::PtxasOutcome::Ok { cubin, .. }) => match std::fs::read(cubin) {
            Ok(bytes) => {
                let cfg = harness::Config::default();
                match corpus::catch(|| harness::compare(text, &bytes, "fz", &cfg)) {
                    Ok(v) => format!("{v:?}"),
                    Err(p) => format!("panic: {p}"),
                }
            }
            Err(e) => format!("no cubin: {e}"),
        },
        Ok(other) => format!("ptxas: {other:?}"),
        Err(e) => format!("no oracle: {e}"),
    }
}

/// Compiles `text` for every arch and compares; the first divergence's description. With
/// `judge`, ptxas's code is checked too ([`judge_ptxas`]).
fn check(text: &str, archs: &[String], judge: bool) -> Outcome {
    let mut o = Outcome::default();
    for arch in archs {
        if judge
            && o.judge_divergence.is_none()
            && let Err(d) = judge_ptxas(text, arch, &mut o)
        {
            o.judge_divergence = Some(d);
        }
        let Some(sm) = db::Sm::parse(arch) else {
            continue;
        };
        let cubin = corpus::catch(|| {
            let mut database = db::RootDatabase::default();
            let file = database.add_file(std::path::Path::new("fuzz.ptx"), text.as_bytes());
            let out = db::cubin(
                &database,
                db::FileTarget::new(&database, file, db::Target::new(sm)),
            );
            match &out.bytes {
                Some(b) => Ok(b.clone()),
                None => Err(out
                    .diagnostics
                    .first()
                    .map(|d| d.message.clone())
                    .unwrap_or_default()),
            }
        });
        let bytes = match cubin {
            Ok(Ok(b)) => b,
            Ok(Err(m)) if m.contains("unsupported") => {
                if std::env::var_os("KILN_FUZZ_VERBOSE").is_some() {
                    eprintln!("unsupported: {m}");
                }
                o.unsupported += 1;
                continue;
            }
            Ok(Err(m)) => {
                o.divergence = Some(format!("{arch}: kiln rejects the program: {m}"));
                return o;
            }
            Err(p) => {
                o.divergence = Some(format!("{arch}: kiln panics: {p}"));
                return o;
            }
        };
        o.compiled += 1;
        let cfg = harness::Config::default();
        match corpus::catch(|| harness::compare(text, &bytes, "fz", &cfg)) {
            Ok(harness::Verdict::Equal) => o.equal += 1,
            Ok(harness::Verdict::NotComparable(r)) => {
                if std::env::var_os("KILN_FUZZ_VERBOSE").is_some() {
                    eprintln!("not comparable: {r}");
                }
                o.not_comparable += 1
            }
            Ok(harness::Verdict::Differ(d)) => {
                o.divergence = Some(format!("{arch}: {d}"));
                return o;
            }
            Ok(harness::Verdict::Unsupported(u)) => {
                o.divergence = Some(format!("{arch}: the emulator refuses kiln's code: {u}"));
                return o;
            }
            Err(p) => {
                o.divergence = Some(format!("{arch}: the harness panics: {p}"));
                return o;
            }
        }
    }
    o
}

/// Removes top-level statements one at a time while `still` holds of the program (a whole
/// statement, so that the smaller program is as well-defined as the first).
fn minimise_while(mut prog: Program, still: impl Fn(&str) -> bool) -> Program {
    let mut i = 0;
    while i < prog.body.len() {
        let mut trial = Program {
            head: prog.head.clone(),
            body: prog.body.clone(),
            tail: prog.tail.clone(),
        };
        trial.body.remove(i);
        if still(&trial.text()) {
            prog = trial;
        } else {
            i += 1;
        }
    }
    prog
}

/// Removes top-level statements while the program still differs.
fn minimise(prog: Program, archs: &[String]) -> Program {
    minimise_while(prog, |text| {
        check(text, archs, false)
            .divergence
            .is_some_and(|d| d.contains("differs"))
    })
}

/// Writes `count` programs of `seed` (generator size `size`) to `dir`, unchecked: probe
/// kernels for `cargo xtask hazard-learn` (ptxas's code for random programs shows orderings
/// the corpus lacks). The same arguments write the same files.
pub fn emit_programs(
    dir: &std::path::Path,
    seed: u64,
    count: usize,
    size: usize,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut rng = Rng::new(seed);
    for k in 0..count {
        let n = size / 2 + rng.below(size);
        let text = generate(&mut rng, n).text();
        let head = format!(
            "// Written by `cargo xtask fuzz codegen --emit DIR --count {count} --seed {seed}` (program {k}).\n"
        );
        let p = dir.join(format!("fuzz_{seed}_{k:05}.ptx"));
        std::fs::write(&p, head + &text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

/// The generator's default program size (top-level statements, half to one and a half).
pub const DEFAULT_SIZE: usize = 24;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut seconds = 60.0f64;
    let mut seed = 1u64;
    let mut archs: Vec<String> = Vec::new();
    let mut size = DEFAULT_SIZE;
    let mut judge = false;
    let mut emit: Option<std::path::PathBuf> = None;
    let mut count = 0usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--seconds" => seconds = value()?.parse().map_err(|_| "bad --seconds")?,
            "--seed" => seed = value()?.parse().map_err(|_| "bad --seed")?,
            "--arch" => archs.push(value()?),
            "--size" => size = value()?.parse().map_err(|_| "bad --size")?,
            "--ptxas" => judge = true,
            "--emit" => emit = Some(value()?.into()),
            "--count" => count = value()?.parse().map_err(|_| "bad --count")?,
            other => return Err(format!("fuzz codegen: unknown argument `{other}`")),
        }
    }
    if archs.is_empty() {
        archs = vec!["sm_80".into(), "sm_90".into()];
    }
    corpus::quiet_panics();
    let start = Instant::now();
    let mut rng = Rng::new(seed);
    if let Some(dir) = emit {
        emit_programs(&dir, seed, count, size)?;
        println!("fuzz codegen: wrote {count} programs to {}", dir.display());
        return Ok(());
    }
    let (mut programs, mut compiled, mut equal, mut unsupported, mut not_comparable) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    let (mut ptxas_equal, mut judge_unsupported) = (0usize, 0usize);
    let mut divergences = Vec::new();
    let mut judge_divergences = Vec::new();
    let dir = corpus::workspace_root().join("test-data/fuzz-codegen");
    while start.elapsed().as_secs_f64() < seconds {
        let n = size / 2 + rng.below(size);
        let prog = generate(&mut rng, n);
        let text = prog.text();
        programs += 1;
        let o = check(&text, &archs, judge);
        compiled += o.compiled;
        equal += o.equal;
        unsupported += o.unsupported;
        not_comparable += o.not_comparable;
        ptxas_equal += o.ptxas_equal;
        judge_unsupported += o.judge_unsupported;
        if let Some(d) = o.judge_divergence {
            eprintln!("fuzz codegen: judge divergence in program {programs}: {d}");
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            // Minimised while the same kind of judge divergence persists.
            let kind = |d: &str| d.contains("hazard checker");
            let want = kind(&d);
            let small = minimise_while(prog.clone(), |t| {
                check(t, &archs, true)
                    .judge_divergence
                    .is_some_and(|e| kind(&e) == want)
            });
            let text = small.text();
            let again = check(&text, &archs, true).judge_divergence.unwrap_or(d);
            let name = format!("judge-{:016x}.ptx", corpus::fnv1a64(&[text.as_bytes()]));
            std::fs::write(
                dir.join(&name),
                format!("// fuzz codegen judge divergence (seed {seed}): {again}\n{text}"),
            )
            .map_err(|e| e.to_string())?;
            judge_divergences.push(name);
            if judge_divergences.len() >= 5 {
                break;
            }
        }
        if let Some(d) = o.divergence {
            eprintln!("fuzz codegen: divergence in program {programs}: {d}");
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            let original = format!("orig-{:016x}.ptx", corpus::fnv1a64(&[text.as_bytes()]));
            std::fs::write(
                dir.join(&original),
                format!("// fuzz codegen divergence (seed {seed}), as generated: {d}\n{text}"),
            )
            .map_err(|e| e.to_string())?;
            let small = minimise(prog, &archs);
            let text = small.text();
            let again = check(&text, &archs, false).divergence.unwrap_or(d);
            let name = format!("div-{:016x}.ptx", corpus::fnv1a64(&[text.as_bytes()]));
            let mut file = String::new();
            let _ = writeln!(file, "// fuzz codegen divergence (seed {seed}): {again}");
            for arch in &archs {
                let _ = writeln!(
                    file,
                    "// third opinion, ptxas's code for {arch} in the emulator: {}",
                    ptxas_opinion(&text, arch)
                );
            }
            file.push_str(&text);
            std::fs::write(dir.join(&name), file).map_err(|e| e.to_string())?;
            eprintln!(
                "fuzz codegen: minimised to {} statements: test-data/fuzz-codegen/{name}",
                small.body.len()
            );
            divergences.push(name);
            if divergences.len() >= 5 {
                break;
            }
        }
        if programs % 200 == 0 {
            eprintln!(
                "fuzz codegen: {programs} programs ({:.0} s)",
                start.elapsed().as_secs_f64()
            );
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "RESULT fuzz codegen programs={programs} compiled={compiled} equal={equal} \
         divergences={} unsupported={unsupported} not_comparable={not_comparable} \
         ptxas_equal={ptxas_equal} judge_divergences={} judge_unsupported={judge_unsupported} \
         seconds={secs:.1} programs_per_second={:.1} seed={seed}",
        divergences.len(),
        judge_divergences.len(),
        programs as f64 / secs
    );
    if divergences.is_empty() && judge_divergences.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} divergence(s), {} judge divergence(s): {}",
            divergences.len(),
            judge_divergences.len(),
            divergences
                .iter()
                .chain(&judge_divergences)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}
