#!/usr/bin/env python3
"""Writes ptx/mma.ptx: tensor-core kernels for the emulator's form tests
(crates/emu/tests/forms.rs). Each kernel fills its fragments from a per-lane hash of %tid.x
and the input buffer (or loads them from the input buffer, for wmma), runs the matrix
operations, and stores every result register. Operand values are chosen so that the sums are
exact in f32 where ptxas may split a product into several HMMA steps (tf32), so that the
interpreter's one rounding and the hardware's per-step roundings agree.

Run: python3 test-data/emu-forms/gen_mma.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

HEAD = """// Tensor-core forms for the emulator's form tests (crates/emu/tests/forms.rs), written by
// gen_mma.py (edit that, not this). ptxas 13.0.88 compiles them to HMMA (16816, 1688, 1684;
// F32, F16, BF16, TF32), IMMA (16816, 16832), DMMA.8x8x4, LDSM and the wmma load/store code.
.version 8.0
.target sm_80
.address_size 64

"""

PRO = """.visible .entry {name}(.param .u64 in, .param .u64 out)
{{
  .reg .b32 t, x, y, h<4>, s<4>, ra<16>, rb<8>, rc<8>, rd<8>;
  .reg .f32 fa<8>, fc<8>, fd<8>;
  .reg .f64 da, db, dc<2>, dd<2>;
  .reg .b64 rin, rout, off, base;
  .reg .pred p;
  ld.param.u64 rin, [in];
  ld.param.u64 rout, [out];
  cvta.to.global.u64 rin, rin;
  cvta.to.global.u64 rout, rout;
  mov.u32 t, %tid.x;
  mul.wide.u32 off, t, 4;
  add.u64 base, rin, off;
  ld.global.u32 x, [base];
  add.u64 rout, rout, off;
  // h0..h3: well-mixed words per lane.
  mad.lo.u32 h0, t, -1640531527, x;
  xor.b32 h0, h0, -2048144789;
  mul.lo.u32 h0, h0, -1028477387;
  shr.u32 y, h0, 15;
  xor.b32 h0, h0, y;
  mad.lo.u32 h1, h0, 668265263, t;
  shr.u32 y, h1, 13;
  xor.b32 h1, h1, y;
  mad.lo.u32 h2, h1, 374761393, 7;
  shr.u32 y, h2, 16;
  xor.b32 h2, h2, y;
  mad.lo.u32 h3, h2, -1640531527, 11;
  shr.u32 y, h3, 15;
  xor.b32 h3, h3, y;
"""


def small_f32(dst, src, shift):
    """dst = a small float (an integer in [-16, 15] divided by 4) from bits of src."""
    return f"""  shr.u32 y, {src}, {shift};
  and.b32 y, y, 31;
  add.s32 y, y, -16;
  cvt.rn.f32.s32 {dst}, y;
  mul.rn.f32 {dst}, {dst}, 0f3E800000;
"""


def f16x2_from(dst, src, k):
    """dst = two f16 of small magnitude (integers in [-16, 15] / 4) from bits of src."""
    return small_f32("fa0", src, k) + small_f32("fa1", src, k + 5) + f"""  cvt.rn.f16x2.f32 {dst}, fa0, fa1;
"""


def bf16x2_from(dst, src, k):
    return small_f32("fa0", src, k) + small_f32("fa1", src, k + 5) + f"""  cvt.rn.bf16x2.f32 {dst}, fa0, fa1;
"""


def store(regs, start=0):
    out = ""
    for i, r in enumerate(regs):
        out += f"  st.global.b32 [rout+{(start + i) * 256}], {r};\n"
    return out


def kernel(name, body):
    return PRO.format(name=name) + body + "  ret;\n}\n\n"


def vec(prefix, n):
    return "{" + ", ".join(f"{prefix}{i}" for i in range(n)) + "}"


ptx = HEAD

# mma.sync m16n8k16 f16 -> f32, with random f16 bits in A (exact sums not needed: one HMMA).
body = ""
for i in range(4):
    body += f"  xor.b32 ra{i}, h{i}, {0x1234 * (i + 1)};\n  and.b32 ra{i}, ra{i}, 0x3bff3bff;\n"
for i in range(2):
    body += f"  xor.b32 rb{i}, h{i + 2}, {0x4321 * (i + 1)};\n  and.b32 rb{i}, rb{i}, 0xbbffbbff;\n"
for i in range(4):
    body += small_f32(f"fc{i}", f"h{i}", 3)
body += f"  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {vec('fd', 4)}, {vec('ra', 4)}, {vec('rb', 2)}, {vec('fc', 4)};\n"
body += "".join(f"  mov.b32 rd{i}, fd{i};\n" for i in range(4)) + store([f"rd{i}" for i in range(4)])
# bf16 -> f32 and f16 -> f16.
for i in range(4):
    body += bf16x2_from(f"ra{i}", f"h{i}", 2 + i)
for i in range(2):
    body += bf16x2_from(f"rb{i}", f"h{i + 1}", 7 + i)
body += f"  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {vec('fd', 4)}, {vec('ra', 4)}, {vec('rb', 2)}, {vec('fc', 4)};\n"
body += "".join(f"  mov.b32 rd{i}, fd{i};\n" for i in range(4)) + store([f"rd{i}" for i in range(4)], 4)
for i in range(4):
    body += f16x2_from(f"ra{i}", f"h{i}", 1 + i)
for i in range(2):
    body += f16x2_from(f"rb{i}", f"h{3 - i}", 4 + i)
    body += f16x2_from(f"rc{i}", f"h{i}", 9 + i)
body += f"  mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {vec('rd', 2)}, {vec('ra', 4)}, {vec('rb', 2)}, {vec('rc', 2)};\n"
body += store(["rd0", "rd1"], 8)
body += f"  mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {vec('fd', 4)}, {vec('ra', 2)}, {{rb0}}, {vec('fc', 4)};\n"
body += "".join(f"  mov.b32 rd{i}, fd{i};\n" for i in range(4)) + store([f"rd{i}" for i in range(4)], 10)
ptx += kernel("mma_half", body)

# tf32: m16n8k8 and m16n8k4 with small values (exact sums).
body = ""
for i in range(4):
    body += small_f32(f"fa{i}", f"h{i}", 4) + f"  mov.b32 ra{i}, fa{i};\n"
for i in range(2):
    body += small_f32(f"fa{4 + i}", f"h{i}", 9) + f"  mov.b32 rb{i}, fa{4 + i};\n"
for i in range(4):
    body += small_f32(f"fc{i}", f"h{3 - i}", 14)
body += f"  mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {vec('fd', 4)}, {vec('ra', 4)}, {vec('rb', 2)}, {vec('fc', 4)};\n"
body += "".join(f"  mov.b32 rd{i}, fd{i};\n" for i in range(4)) + store([f"rd{i}" for i in range(4)])
body += f"  mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {vec('fd', 4)}, {vec('ra', 2)}, {{rb1}}, {vec('fc', 4)};\n"
body += "".join(f"  mov.b32 rd{i}, fd{i};\n" for i in range(4)) + store([f"rd{i}" for i in range(4)], 4)
ptx += kernel("mma_tf32", body)

# Integers: m16n8k16 u8/s8 and m16n8k32 s8/u8 (with random bytes), satfinite too.
body = ""
for i in range(4):
    body += f"  xor.b32 ra{i}, h{i}, {0x5a5a5a5a ^ (i * 0x01010101)};\n"
for i in range(2):
    body += f"  xor.b32 rb{i}, h{3 - i}, {0x3c3c3c3c ^ (i * 0x01010101)};\n"
for i in range(4):
    body += f"  mov.b32 rc{i}, h{(i + 1) % 4};\n"
body += f"  mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32 {vec('rd', 4)}, {vec('ra', 2)}, {{rb0}}, {vec('rc', 4)};\n"
body += store([f"rd{i}" for i in range(4)])
body += f"  mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {vec('rd', 4)}, {vec('ra', 4)}, {vec('rb', 2)}, {vec('rc', 4)};\n"
body += store([f"rd{i}" for i in range(4)], 4)
body += f"  mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {vec('rd', 4)}, {vec('ra', 4)}, {vec('rb', 2)}, {vec('rc', 4)};\n"
body += store([f"rd{i}" for i in range(4)], 8)
ptx += kernel("mma_int", body)

# f64 m8n8k4.
body = small_f32("fa0", "h0", 3) + small_f32("fa1", "h1", 8) + small_f32("fc0", "h2", 5) + small_f32("fc1", "h3", 6)
body += """  cvt.f64.f32 da, fa0;
  cvt.f64.f32 db, fa1;
  cvt.f64.f32 dc0, fc0;
  cvt.f64.f32 dc1, fc1;
  mul.rn.f64 da, da, 0d3FF199999999999A;
  mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {dd0, dd1}, {da}, {db}, {dc0, dc1};
  mov.b64 {rd0, rd1}, dd0;
  mov.b64 {rd2, rd3}, dd1;
"""
body += store([f"rd{i}" for i in range(4)])
ptx += kernel("mma_f64", body)

# ldmatrix: every lane writes an 8-byte row piece to shared memory, then x1/x2/x4 and .trans.
ld = """  .shared .align 16 .b8 tile[1024];
  .reg .b32 sa, sb;
  mov.u32 sa, tile;
  shl.b32 sb, t, 4;
  add.u32 sb, sa, sb;
  st.shared.v4.b32 [sb], {h0, h1, h2, h3};
  bar.sync 0;
  and.b32 y, t, 31;
  shl.b32 y, y, 4;
  add.u32 sb, sa, y;
  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {rd0}, [sb];
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {rd1, rd2}, [sb];
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {rd3, rd4, rd5, rd6}, [sb];
  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {ra0, ra1, ra2, ra3}, [sb];
"""
ptx += kernel("ldmatrix_forms", ld + store([f"rd{i}" for i in range(7)] + [f"ra{i}" for i in range(4)]))

# wmma: load from the input buffer (row and col layouts, explicit stride), mma, scale, store.
WMMA = [
    # (name, shape, atype, regs a, regs b, ctype, regs c, mma types)
    ("wmma_f16", "m16n16k16", "f16", 8, 8, "f32", 8, ".f32.f32"),
    ("wmma_f16_m32n8", "m32n8k16", "f16", 8, 8, "f32", 8, ".f32.f32"),
    ("wmma_f16_acc16", "m8n32k16", "f16", 8, 8, "f16", 4, ".f16.f16"),
    ("wmma_bf16", "m16n16k16", "bf16", 4, 4, "f32", 8, ".f32.bf16.bf16.f32"),
    ("wmma_u8", "m16n16k16", "u8", 2, 2, "s32", 8, ".s32.u8.u8.s32"),
    ("wmma_s8_m8n32", "m8n32k16", "s8", 1, 4, "s32", 8, ".s32.s8.s8.s32"),
    ("wmma_tf32", "m16n16k8", "tf32", 4, 4, "f32", 8, ".f32.tf32.tf32.f32"),
    ("wmma_f64", "m8n8k4", "f64", 1, 1, "f64", 2, ".f64.f64.f64.f64.rn"),
]
for name, shape, at, na, nb, ct, nc, mt in WMMA:
    areg = "da" if at == "f64" else None
    body = ""
    # The input buffer is 16 KiB: A at +0, B at +4096, C at +8192 (strides in elements; PTX
    # requires each stride to be a multiple of 16 bytes, so 48 and 64 elements for all types).
    if at == "f64":
        avec, bvec, cvec, dvec = "{da}", "{db}", "{dc0, dc1}", "{dd0, dd1}"
    else:
        avec, bvec = vec("ra", na), vec("rb", nb)
        cvec = vec("fc", nc) if ct == "f32" else vec("rc", nc)
        dvec = vec("fd", nc) if ct == "f32" else vec("rd", nc)
    body += f"""  wmma.load.a.sync.aligned.row.{shape}.global.{at} {avec}, [rin], 48;
  wmma.load.b.sync.aligned.col.{shape}.global.{at} {bvec}, [rin+4096], 64;
  wmma.load.c.sync.aligned.row.{shape}.global.{ct} {cvec}, [rin+8192];
  wmma.mma.sync.aligned.row.col.{shape}{mt} {dvec}, {avec}, {bvec}, {cvec};
"""
    if ct == "f32":
        body += "".join(f"  mul.rn.f32 fd{i}, fd{i}, 0f3F400000;\n" for i in range(nc))
    elif ct == "s32":
        body += "".join(f"  add.s32 rd{i}, rd{i}, 3;\n" for i in range(nc))
    body += f"""  wmma.store.d.sync.aligned.col.{shape}.global.{ct} [rout], {dvec}, 48;
  wmma.mma.sync.aligned.row.col.{shape}{mt} {dvec}, {avec}, {bvec}, {dvec};
  wmma.store.d.sync.aligned.row.{shape}.global.{ct} [rout+8192], {dvec};
"""
    # The kernel's rout is per thread (+4·tid): wmma needs one address for the warp.
    body = body.replace("[rout]", "[rbase]").replace("[rout+8192]", "[rbase+8192]")
    body = "  .reg .b64 rbase;\n  ld.param.u64 rbase, [out];\n  cvta.to.global.u64 rbase, rbase;\n" + body
    ptx += kernel(name, body)

with open(os.path.join(HERE, "ptx", "mma.ptx"), "w") as f:
    f.write(ptx)
