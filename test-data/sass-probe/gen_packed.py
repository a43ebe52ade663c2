#!/usr/bin/env python3
"""Writes ptx/probe_packed*.ptx: seeds for the SASS tables (`cargo xtask sass-probe --collect
--also test-data/sass-probe`) of packed half-precision arithmetic and rounding modes with
per-thread operands, so that ptxas emits the register, immediate-pair and constant forms of
HADD2/HMUL2/HFMA2(.MMA)/HMNMX2/HSETP2 in f16x2 and bf16x2, and F2F/FADD/FMUL/FFMA/DADD in
every rounding mode (the corpus's packed code mostly has register operands, and its
conversions mostly round to nearest; test-data/holdout showed the other forms missing,
2026-11-26).

Each operation reads values loaded per thread and is stored, so nothing folds away.
Deterministic: rerunning rewrites the same files.

Run: python3 test-data/sass-probe/gen_packed.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

IMMS_F16 = ["0x38003800", "0x3C003C00", "0x3E003E00", "0xBC00BC00", "0x40004000", "0x3800BC00"]
IMMS_BF16 = ["0x3F003F00", "0x3F803F80", "0x3FA03FA0", "0xBF80BF80", "0x40004000"]


def kernel(target, version, name, body_fn):
    out = []
    out.append("// Written by test-data/sass-probe/gen_packed.py (edit that, not this).")
    out.append(f".version {version}")
    out.append(f".target {target}")
    out.append(".address_size 64")
    out.append(f".visible .entry {name}(.param .u64 out, .param .u64 in)")
    out.append("{")
    out.append("  .reg .b32 %r<64>; .reg .b64 %rd<16>; .reg .f32 %f<64>; .reg .f64 %fd<32>;")
    out.append("  .reg .b16 %h<32>; .reg .pred %p<16>;")
    out.append("  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];")
    out.append("  cvta.to.global.u64 %rd3, %rd1; cvta.to.global.u64 %rd4, %rd2;")
    out.append("  mov.u32 %r1, %tid.x;")
    out.append("  mul.wide.u32 %rd5, %r1, 64;")
    out.append("  add.s64 %rd6, %rd4, %rd5; add.s64 %rd7, %rd3, %rd5;")
    out.append("  ld.global.b32 %r2, [%rd6]; ld.global.b32 %r3, [%rd6+4]; ld.global.b32 %r4, [%rd6+8];")
    out.append("  ld.global.f32 %f1, [%rd6+12]; ld.global.f32 %f2, [%rd6+16]; ld.global.f32 %f3, [%rd6+20];")
    out.append("  ld.global.f64 %fd1, [%rd6+24]; ld.global.f64 %fd2, [%rd6+32];")
    out.append("  mov.b32 {%h1, %h2}, %r2; mov.b32 {%h3, %h4}, %r3;")
    n = [0]

    def st32(reg):
        out.append(f"  st.global.b32 [%rd7+{4 * (n[0] % 16)}], {reg};")
        n[0] += 1

    body_fn(out, st32)
    out.append("  ret;")
    out.append("}")
    return "\n".join(out) + "\n"


def emitter(out, st32):
    """`emit(line)`: appends `line` with `%D` naming the next result register (%r10..%r59,
    round robin) and stores that register."""
    r = [10]

    def emit(line):
        d = f"%r{r[0]}"
        out.append(line.replace("%D", d))
        st32(d)
        r[0] = r[0] % 50 + 10

    return emit


def packed_body(bf16, sm90):
    def body(out, st32):
        t = "bf16x2" if bf16 else "f16x2"
        imms = IMMS_BF16 if bf16 else IMMS_F16
        emit = emitter(out, st32)
        for imm in imms:
            for op in ["add", "sub", "mul"]:
                if bf16 and not sm90:
                    continue
                rnd = ".rn" if bf16 else ""
                emit(f"  mov.b32 %r60, {imm}; {op}{rnd}.{t} %D, %r2, %r60;")
                if not bf16:
                    emit(f"  mov.b32 %r60, {imm}; {op}.ftz.{t} %D, %r3, %r60;")
                    emit(f"  mov.b32 %r60, {imm}; {op}.sat.{t} %D, %r3, %r60;")
            emit(f"  mov.b32 %r60, {imm}; fma.rn.{t} %D, %r2, %r3, %r60;")
            emit(f"  mov.b32 %r60, {imm}; fma.rn.{t} %D, %r2, %r60, %r4;")
            emit(f"  mov.b32 %r60, {imm}; fma.rn.relu.{t} %D, %r2, %r60, %r3;")
            if not bf16:
                emit(f"  mov.b32 %r60, {imm}; fma.rn.sat.{t} %D, %r3, %r60, %r2;")
            emit(f"  mov.b32 %r60, {imm}; neg.{t} %D, %r2; fma.rn.{t} %D, %D, %r60, %r4;")
        for op in ["min", "max"]:
            for mod in ["", ".NaN"]:
                emit(f"  {op}{mod}.{t} %D, %r2, %r3;")
                emit(f"  mov.b32 %r60, {imms[1]}; {op}{mod}.{t} %D, %r2, %r60;")
        if not bf16 or sm90:
            for cmp in ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "gtu", "num", "nan"]:
                out.append(f"  setp.{cmp}.{t} %p1|%p2, %r2, %r3;")
                emit(f"  selp.b32 %D, %r2, %r4, %p1; selp.b32 %D, %D, %r3, %p2;")
                out.append(f"  mov.b32 %r60, {imms[2]}; setp.{cmp}.{t} %p3|%p4, %r2, %r60;")
                emit(f"  selp.b32 %D, %r2, %r4, %p3; selp.b32 %D, %D, %r3, %p4;")
    return body


def cvt_body(sm90):
    def body(out, st32):
        emit = emitter(out, st32)
        for rnd in ["rn", "rz", "rm", "rp"]:
            emit(f"  cvt.{rnd}.f16.f32 %h10, %f1; mov.b32 %D, {{%h10, %h10}};")
            emit(f"  cvt.{rnd}.bf16.f32 %h11, %f2; mov.b32 %D, {{%h11, %h11}};")
            emit(f"  cvt.{rnd}.f16.f64 %h12, %fd1; mov.b32 %D, {{%h12, %h12}};")
            if sm90:
                emit(f"  cvt.{rnd}.bf16.f64 %h13, %fd2; mov.b32 %D, {{%h13, %h13}};")
            emit(f"  cvt.{rnd}.f32.f64 %f10, %fd1; mov.b32 %D, %f10;")
            for op in ["add", "sub", "mul"]:
                emit(f"  {op}.{rnd}.f32 %f11, %f1, %f2; mov.b32 %D, %f11;")
                emit(f"  {op}.{rnd}.f32 %f12, %f1, 0f3FC00000; mov.b32 %D, %f12;")
                emit(f"  {op}.{rnd}.f64 %fd10, %fd1, %fd2; cvt.rn.f32.f64 %f13, %fd10; mov.b32 %D, %f13;")
            emit(f"  fma.{rnd}.f32 %f14, %f1, %f2, %f3; mov.b32 %D, %f14;")
            emit(f"  fma.{rnd}.f32 %f15, %f1, 0f3FC00000, %f3; mov.b32 %D, %f15;")
            if rnd in ("rn", "rz"):
                emit(f"  cvt.{rnd}.f16x2.f32 %D, %f1, %f2;")
            if rnd == "rn":
                emit(f"  cvt.rn.bf16x2.f32 %D, %f1, %f2;")
                emit(f"  cvt.rn.relu.f16x2.f32 %D, %f1, %f3;")
    return body


def narrow_body(level):
    """Conversions to 16 bits stored as 16 bits (a pair built with `mov.b32 {h, h}` makes
    ptxas pack with F2FP instead: `F2F.F16.F32.RZ` only shows this way), in every rounding
    mode. `level` 75 leaves out what sm_75 lacks (bf16, f16x2 conversions)."""

    def body(out, st32):
        emit = emitter(out, st32)
        off = [128]

        def st16(h):
            out.append(f"  st.global.b16 [%rd7+{off[0]}], {h};")
            off[0] += 2

        for rnd in ["rn", "rz", "rm", "rp"]:
            out.append(f"  cvt.{rnd}.f16.f32 %h10, %f1;")
            st16("%h10")
            out.append(f"  cvt.{rnd}.f16.f64 %h12, %fd1;")
            st16("%h12")
            if level >= 80:
                out.append(f"  cvt.{rnd}.bf16.f32 %h11, %f2;")
                st16("%h11")
            if level >= 90:
                out.append(f"  cvt.{rnd}.bf16.f64 %h13, %fd2;")
                st16("%h13")
            # Twelve independent conversions: ptxas balances pipes (sm_75 makes some
            # `cvt.rz.f16.f32` an `HADD2 R, R.F32, -RZ.H0_H0`, others `F2F.F16.F32.RZ`).
            for t in ["f16"] + (["bf16"] if level >= 80 else []):
                for i in range(12):
                    out.append(f"  ld.global.f32 %f{40 + i}, [%rd6+{4 * i}];")
                for i in range(12):
                    out.append(f"  cvt.{rnd}.{t}.f32 %h{14 + i}, %f{40 + i};")
                for i in range(12):
                    st16(f"%h{14 + i}")
            # A 16-bit result used as an integer is converted with F2F where a stored one
            # takes HADD2 (sm_75: `F2F.F16.F32.RZ`).
            for t in ["f16"] + (["bf16"] if level >= 80 else []):
                for src in ["%f1", "%fd1"] if level >= 90 or t == "f16" else ["%f1"]:
                    w = "f64" if src == "%fd1" else "f32"
                    emit(f"  cvt.{rnd}.{t}.{w} %h26, {src}; cvt.u32.u16 %r61, %h26; mul.lo.u32 %D, %r61, 7;")
            if level == 75:
                emit(f"  cvt.{rnd}.f32.f64 %f10, %fd1; mov.b32 %D, %f10;")
                for op in ["add", "sub", "mul"]:
                    emit(f"  {op}.{rnd}.f32 %f11, %f1, %f2; mov.b32 %D, %f11;")
                    emit(f"  {op}.{rnd}.f32 %f12, %f1, 0f3FC00000; mov.b32 %D, %f12;")
                    emit(f"  {op}.{rnd}.f64 %fd10, %fd1, %fd2; cvt.rn.f32.f64 %f13, %fd10; mov.b32 %D, %f13;")
                emit(f"  fma.{rnd}.f32 %f14, %f1, %f2, %f3; mov.b32 %D, %f14;")
                emit(f"  fma.{rnd}.f32 %f15, %f1, 0f3FC00000, %f3; mov.b32 %D, %f15;")

    return body


def small_body(sm90):
    """A few packed operations with immediates and nothing else to schedule: ptxas then
    issues them on the FMA pipe (`HFMA2.BF16_V2 R, R, R, 1.25, 1.25`), where longer code
    goes to the MMA pipe (`HFMA2.MMA...`)."""

    def body(out, st32):
        r = 10
        ops = [
            ("fma.rn.bf16x2", "%r2, %r3, %r60", "0x3FA03FA0"),
            ("fma.rn.bf16x2", "%r2, %r60, %r3", "0x3F803F80"),
            ("fma.rn.relu.bf16x2", "%r2, %r3, %r60", "0x3FA03FA0"),
            ("fma.rn.f16x2", "%r2, %r3, %r60", "0x3D003D00"),
            ("fma.rn.f16x2", "%r2, %r60, %r3", "0x38003800"),
            ("fma.rn.relu.f16x2", "%r2, %r60, %r3", "0x3C00BC00"),
            ("mul.rn.f16x2", "%r2, %r60", "0x38003800"),
            ("add.rn.f16x2", "%r2, %r60", "0xBC00BC00"),
        ]
        if sm90:
            ops += [
                ("mul.rn.bf16x2", "%r2, %r60", "0x3F003F00"),
                ("add.rn.bf16x2", "%r2, %r60", "0xBF80BF80"),
                ("sub.rn.bf16x2", "%r2, %r60", "0x40004000"),
            ]
        for op, args, imm in ops:
            out.append(f"  mov.b32 %r60, {imm}; {op} %r{r}, {args};")
            st32(f"%r{r}")
            r += 1

    return body


def wide_body(sm90):
    """Each packed operation with an immediate twelve times on independent values: ptxas then
    spreads them over the FMA and the MMA pipe (`HFMA2.BF16_V2` and `HFMA2.MMA.BF16_V2` with
    immediates, `HMUL2 R, R, 0.5, 0.5`, ...), which one operation alone or a chain of
    dependent ones does not show (test-data/holdout showed the FMA-pipe forms missing)."""

    def body(out, st32):
        ops = [
            ("fma.rn.bf16x2", "%A, %B, %r60", "0x3FA03FA0"),
            ("fma.rn.bf16x2", "%A, %r60, %B", "0x3F803F80"),
            ("fma.rn.relu.bf16x2", "%A, %B, %r60", "0x3FA03FA0"),
            ("fma.rn.f16x2", "%A, %B, %r60", "0x3D003D00"),
            ("fma.rn.f16x2", "%A, %r60, %B", "0x38003800"),
            ("fma.rn.relu.f16x2", "%A, %r60, %B", "0x3C00BC00"),
            ("mul.rn.f16x2", "%A, %r60", "0x38003800"),
            ("add.rn.f16x2", "%A, %r60", "0xBC00BC00"),
            ("max.f16x2", "%A, %B", None),
            ("min.f16x2", "%A, %B", None),
        ]
        if sm90:
            ops += [
                ("mul.rn.bf16x2", "%A, %r60", "0x3F003F00"),
                ("add.rn.bf16x2", "%A, %r60", "0xBF80BF80"),
                ("sub.rn.bf16x2", "%A, %r60", "0x40004000"),
                ("max.bf16x2", "%A, %B", None),
                ("min.bf16x2", "%A, %B", None),
            ]
        for i in range(12):
            out.append(f"  ld.global.b32 %r{40 + i}, [%rd6+{4 * i}];")
        off = 64
        for op, args, imm in ops:
            if imm:
                out.append(f"  mov.b32 %r60, {imm};")
            for i in range(12):
                a = args.replace("%A", f"%r{40 + i}").replace("%B", f"%r{40 + (i + 5) % 12}")
                out.append(f"  {op} %r{10 + i}, {a};")
            for i in range(12):
                out.append(f"  st.global.b32 [%rd7+{off}], %r{10 + i};")
                off += 4

    return body


FILES = [
    ("probe_packed_wide.ptx", "sm_80", "7.8", "probe_packed_wide", wide_body(False)),
    ("probe_packed_wide_sm90.ptx", "sm_90", "7.8", "probe_packed_wide_sm90", wide_body(True)),
    ("probe_packed_f16.ptx", "sm_80", "7.8", "probe_packed_f16", packed_body(False, False)),
    ("probe_packed_bf16.ptx", "sm_80", "7.8", "probe_packed_bf16", packed_body(True, False)),
    ("probe_packed_bf16_sm90.ptx", "sm_90", "7.8", "probe_packed_bf16_sm90", packed_body(True, True)),
    ("probe_packed_small.ptx", "sm_80", "7.8", "probe_packed_small", small_body(False)),
    ("probe_packed_small_sm90.ptx", "sm_90", "7.8", "probe_packed_small_sm90", small_body(True)),
    ("probe_narrow_sm75.ptx", "sm_75", "7.8", "probe_narrow_sm75", narrow_body(75)),
    ("probe_narrow.ptx", "sm_80", "7.8", "probe_narrow", narrow_body(80)),
    ("probe_narrow_sm90.ptx", "sm_90", "7.8", "probe_narrow_sm90", narrow_body(90)),
    ("probe_round.ptx", "sm_80", "7.8", "probe_round", cvt_body(False)),
    ("probe_round_sm90.ptx", "sm_90", "7.8", "probe_round_sm90", cvt_body(True)),
]

def single_ops(sm90):
    """One packed operation with an immediate per kernel (pipe choice differs again)."""
    ops = ["fma.rn.bf16x2 %r10, %r2, %r3, %r60;", "fma.rn.bf16x2 %r10, %r2, %r60, %r3;",
           "fma.rn.f16x2 %r10, %r2, %r3, %r60;", "fma.rn.f16x2 %r10, %r2, %r60, %r3;",
           "mul.rn.f16x2 %r10, %r2, %r60;", "add.rn.f16x2 %r10, %r2, %r60;"]
    if sm90:
        ops += ["mul.rn.bf16x2 %r10, %r2, %r60;", "add.rn.bf16x2 %r10, %r2, %r60;"]
    bodies = []
    for k, op in enumerate(ops):
        imm = "0x3FA03FA0" if "bf16" in op else "0x3D003D00"

        def body(out, st32, op=op, imm=imm):
            out.append(f"  mov.b32 %r60, {imm}; {op}")
            st32("%r10")

        bodies.append((f"single{k}", body))
    return bodies


if __name__ == "__main__":
    os.makedirs(os.path.join(HERE, "ptx"), exist_ok=True)
    for fname, target, version, name, body in FILES:
        with open(os.path.join(HERE, "ptx", fname), "w") as f:
            f.write(kernel(target, version, name, body))
    for fname, target, sm90 in [
        ("probe_packed_single.ptx", "sm_80", False),
        ("probe_packed_single_sm90.ptx", "sm_90", True),
    ]:
        text = ""
        for name, body in single_ops(sm90):
            k = kernel(target, "7.8", f"probe_{name}", body)
            if text:
                k = k[k.index(".visible"):]
            text += k
        with open(os.path.join(HERE, "ptx", fname), "w") as f:
            f.write(text)
