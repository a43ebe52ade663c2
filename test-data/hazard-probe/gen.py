#!/usr/bin/env python3
"""Writes ptx/*.ptx: kernels that make ptxas show the hazard learner
(`cargo xtask hazard-learn --also test-data/hazard-probe`) dependences the corpus rarely has.

- chains_*.ptx: one long dependence chain per kernel through a seeded random sequence of
  fixed-latency ALU operations (f32, f16x2, bf16x2, integer, logic, conversions), each
  consuming the previous result in a random operand position. A chain leaves ptxas nothing
  to interleave, so it issues each operation as soon as its operand is ready: the distances
  are the latencies ptxas's model needs for those producer/consumer pairs and operand slots.
- pressure_*.ptx: many independent variable-latency operations (bit counts and reversals,
  f64 conversions and arithmetic, MUFU functions, shuffles, shared-memory loads and
  atomics, barrier reductions, redux, match) in a seeded random order, all live at once, so
  that ptxas runs out of scoreboards and leaves some results unscoreboarded, relying on the
  order in which the hardware completes them; and shared atomics followed by overwrites of
  their sources (write-after-read orderings).

Never-seen PTX (test-data/holdout) is not derived from these: they only widen what the
learned tables have observed. Deterministic (fixed seeds): rerunning rewrites the same files.

Run: python3 test-data/hazard-probe/gen.py
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))

HEAD = """// Hazard-learner probe kernels, written by test-data/hazard-probe/gen.py (edit that, not
// this); see its docstring.
.version 8.0
.target {target}
.address_size 64

"""

# Fixed-latency chain steps: (name, min target, template). `{d}` is the destination b32, `{a}`
# the chain value (b32), `{x}`/`{y}` independent loaded b32 inputs; `{fa}` etc. are f32 views.
# Templates may use the scratch registers f<0-3> (f32), h<0-1> (b16), q (pred), w<0-1> (b64).
CHAIN = [
    ("add.f32", 75, "mov.b32 f0, {a}; mov.b32 f1, {x}; add.f32 f2, {o0}; mov.b32 {d}, f2;"),
    ("mul.f32", 75, "mov.b32 f0, {a}; mov.b32 f1, {x}; mul.f32 f2, {o0}; mov.b32 {d}, f2;"),
    ("fma.f32", 75, "mov.b32 f0, {a}; mov.b32 f1, {x}; mov.b32 f3, {y}; fma.rn.f32 f2, {o1}; mov.b32 {d}, f2;"),
    ("min.f32", 75, "mov.b32 f0, {a}; mov.b32 f1, {x}; min.f32 f2, {o0}; mov.b32 {d}, f2;"),
    ("max.f32", 75, "mov.b32 f0, {a}; mov.b32 f1, {x}; max.f32 f2, {o0}; mov.b32 {d}, f2;"),
    ("setp.f32", 75, "mov.b32 f0, {a}; mov.b32 f1, {x}; setp.lt.f32 q, f0, f1; selp.b32 {d}, {a}, {y}, q;"),
    ("add.f16x2", 75, "add.rn.f16x2 {d}, {o0r};"),
    ("mul.f16x2", 75, "mul.rn.f16x2 {d}, {o0r};"),
    ("fma.f16x2", 75, "fma.rn.f16x2 {d}, {o1r};"),
    ("min.f16x2", 80, "min.f16x2 {d}, {o0r};"),
    ("fma.bf16x2", 80, "fma.rn.bf16x2 {d}, {o1r};"),
    ("add.u32", 75, "add.u32 {d}, {o0r};"),
    ("mul.lo.u32", 75, "mul.lo.u32 {d}, {o0r};"),
    ("mad.lo.u32", 75, "mad.lo.u32 {d}, {o1r};"),
    ("mul.hi.u32", 75, "mul.hi.u32 {d}, {o0r};"),
    ("xor.b32", 75, "xor.b32 {d}, {o0r};"),
    ("lop3", 75, "lop3.b32 {d}, {a}, {x}, {y}, 0x96;"),
    ("shl.b32", 75, "and.b32 {d}, {x}, 15; shl.b32 {d}, {a}, {d};"),
    ("shf", 75, "shf.l.wrap.b32 {d}, {a}, {x}, {y};"),
    ("min.s32", 75, "min.s32 {d}, {o0r};"),
    ("bfe.u32", 75, "bfe.u32 {d}, {a}, 3, 11;"),
    ("bfi.b32", 75, "bfi.b32 {d}, {a}, {x}, 5, 9;"),
    ("prmt", 75, "prmt.b32 {d}, {a}, {x}, 0x5140;"),
    ("setp.u32", 75, "setp.lt.u32 q, {a}, {x}; selp.b32 {d}, {y}, {a}, q;"),
    ("cvt.f16x2.f32", 80, "mov.b32 f0, {a}; mov.b32 f1, {x}; cvt.rn.f16x2.f32 {d}, f0, f1;"),
    ("cvt.f32.u32", 75, "cvt.rn.f32.u32 f0, {a}; mov.b32 {d}, f0;"),
    ("cvt.f32.f16", 75, "mov.b32 {{h0, h1}}, {a}; cvt.f32.f16 f0, h1; mov.b32 {d}, f0;"),
    ("mul.wide", 75, "mul.wide.u32 w0, {a}, {x}; mov.b64 {{{d}, p0}}, w0; xor.b32 {d}, {d}, p0;"),
    ("add.u64", 75, "mov.b64 w0, {{{a}, {x}}}; mov.b64 w1, {{{y}, {a}}}; add.u64 w0, w0, w1; mov.b64 {{{d}, p0}}, w0; add.u32 {d}, {d}, p0;"),
    ("abs.s32", 75, "abs.s32 {d}, {a};"),
    ("sad", 75, "sad.u32 {d}, {a}, {x}, {y};"),
    ("fns", 75, "mov.b32 f0, {a}; ex2.approx.ftz.f32 f0, f0; mov.b32 {d}, f0;"),
]


def chain_operands(rng, tmpl, a, x, y):
    """Fills `{o0}` (two f32 operands), `{o1}` (three), `{o0r}`/`{o1r}` (b32 forms) with the
    chain value in a random position."""
    two_f = ["f0, f1", "f1, f0"]
    three_f = ["f0, f1, f3", "f1, f0, f3", "f1, f3, f0"]
    two_r = [f"{a}, {x}", f"{x}, {a}"]
    three_r = [f"{a}, {x}, {y}", f"{x}, {a}, {y}", f"{x}, {y}, {a}"]
    return (
        rng.choice(two_f),
        rng.choice(three_f),
        rng.choice(two_r),
        rng.choice(three_r),
    )


KPRO = """.visible .entry {name}(.param .u64 in, .param .u64 out)
{{
  .reg .b32 t, v<{nv}>, i<8>, p0;
  .reg .b16 h<2>;
  .reg .f32 f<4>;
  .reg .f64 e<4>;
  .reg .b64 rin, rout, off, w<2>;
  .reg .pred q, pq<4>;
  .reg .b32 a<5>, r<5>, z<5>, sbase;
{shared}  ld.param.u64 rin, [in];
  ld.param.u64 rout, [out];
  cvta.to.global.u64 rin, rin;
  cvta.to.global.u64 rout, rout;
  mov.u32 t, %tid.x;
  mul.wide.u32 off, t, 32;
  add.u64 rin, rin, off;
  add.u64 rout, rout, off;
  ld.global.v4.u32 {{i0, i1, i2, i3}}, [rin];
  ld.global.v4.u32 {{i4, i5, i6, i7}}, [rin+16];
"""


def chain_kernel(rng, name, sm, steps=CHAIN, n=48):
    ops = [c for c in steps if c[1] <= sm]
    lines = []
    cur = "i0"
    for k in range(n):
        nm, _, tmpl = rng.choice(ops)
        x = f"i{rng.randrange(1, 8)}"
        y = f"i{rng.randrange(1, 8)}"
        d = f"v{k}"
        o0, o1, o0r, o1r = chain_operands(rng, tmpl, cur, x, y)
        body = tmpl.format(a=cur, x=x, y=y, d=d, o0=o0, o1=o1, o0r=o0r, o1r=o1r)
        lines.append(f"  // {nm}\n  {body}")
        cur = d
    out = KPRO.format(name=name, nv=n, shared="")
    out += "\n".join(lines) + "\n"
    out += f"  st.global.u32 [rout], {cur};\n  ret;\n}}\n\n"
    return out


# Variable-latency operations: (name, min target, template) producing b32 `{d}` from the
# independent inputs `{x}`, `{y}`; `{k}` is a unique index (for scratch names and addresses).
VARIABLE = [
    ("brev", 75, "brev.b32 {d}, {x};"),
    ("clz", 75, "clz.b32 {d}, {x};"),
    ("popc", 75, "popc.b32 {d}, {x};"),
    ("bfind", 75, "bfind.u32 {d}, {x};"),
    ("popc64", 75, "mov.b64 w0, {{{x}, {y}}}; popc.b64 {d}, w0;"),
    ("cvt.rni.s32.f64", 75, "mov.b64 e0, {{{x}, {y}}}; cvt.rni.s32.f64 {d}, e0;"),
    ("cvt.rn.f32.f64", 75, "mov.b64 e0, {{{x}, {y}}}; cvt.rn.f32.f64 f0, e0; mov.b32 {d}, f0;"),
    ("cvt.f64.f32", 75, "mov.b32 f0, {x}; cvt.f64.f32 e0, f0; mov.b64 {{{d}, p0}}, e0; xor.b32 {d}, {d}, p0;"),
    ("cvt.rn.f64.s32", 75, "cvt.rn.f64.s32 e0, {x}; mov.b64 {{{d}, p0}}, e0; xor.b32 {d}, {d}, p0;"),
    ("cvt.rzi.s32.f32", 75, "mov.b32 f0, {x}; cvt.rzi.s32.f32 {d}, f0;"),
    ("cvt.rni.f32.f32", 75, "mov.b32 f0, {x}; cvt.rni.f32.f32 f0, f0; mov.b32 {d}, f0;"),
    ("cvt.rn.f32.s64", 75, "mov.b64 w0, {{{x}, {y}}}; cvt.rn.f32.s64 f0, w0; mov.b32 {d}, f0;"),
    ("add.f64", 75, "mov.b64 e0, {{{x}, {y}}}; add.f64 e0, e0, e0; mov.b64 {{{d}, p0}}, e0; xor.b32 {d}, {d}, p0;"),
    ("fma.f64", 75, "mov.b64 e0, {{{x}, {y}}}; mov.b64 e1, {{{y}, {x}}}; fma.rn.f64 e0, e0, e1, e1; mov.b64 {{{d}, p0}}, e0; xor.b32 {d}, {d}, p0;"),
    ("setp.f64", 75, "mov.b64 e0, {{{x}, {y}}}; mov.b64 e1, {{{y}, {x}}}; setp.lt.f64 q, e0, e1; selp.b32 {d}, {x}, {y}, q;"),
    ("ex2", 75, "mov.b32 f0, {x}; ex2.approx.ftz.f32 f0, f0; mov.b32 {d}, f0;"),
    ("rsqrt", 75, "mov.b32 f0, {x}; rsqrt.approx.ftz.f32 f0, f0; mov.b32 {d}, f0;"),
    ("sin", 75, "mov.b32 f0, {x}; sin.approx.ftz.f32 f0, f0; mov.b32 {d}, f0;"),
    ("lg2", 75, "mov.b32 f0, {x}; lg2.approx.ftz.f32 f0, f0; mov.b32 {d}, f0;"),
    ("rcp", 75, "mov.b32 f0, {x}; rcp.approx.ftz.f32 f0, f0; mov.b32 {d}, f0;"),
    ("shfl", 75, "shfl.sync.bfly.b32 {d}, {x}, 1, 31, -1;"),
    ("shfl.idx", 75, "shfl.sync.idx.b32 {d}, {x}, {y}, 31, -1;"),
    ("ld.shared", 75, "and.b32 p0, {x}, 255; shl.b32 p0, p0, 2; ld.shared.u32 {d}, [sm+{k4}];"),
    ("atom.shared", 75, "atom.shared.add.u32 {d}, [sm+{k4}], {x};"),
    ("bar.red.popc", 75, "setp.ne.u32 q, {x}, 0; bar.red.popc.u32 {d}, 0, q;"),
    ("vote.ballot", 75, "setp.ne.u32 q, {x}, 0; vote.sync.ballot.b32 {d}, q, -1;"),
    ("match.any", 75, "match.any.sync.b32 {d}, {x}, -1;"),
    ("redux.add", 80, "redux.sync.add.u32 {d}, {x}, -1;"),
    ("redux.min", 80, "redux.sync.min.s32 {d}, {x}, -1;"),
    ("clock", 75, "mov.u32 {d}, %clock;"),
    ("smid", 75, "mov.u32 {d}, %smid;"),
    ("ld.global", 75, "ld.global.u32 {d}, [rin+{k4}];"),
    ("ld.const", 75, "ld.const.u32 {d}, [cb+{k4}];"),
    ("div.f32", 75, "mov.b32 f0, {x}; mov.b32 f1, {y}; div.approx.f32 f0, f0, f1; mov.b32 {d}, f0;"),
]


def pressure_kernel(rng, name, sm):
    ops = [c for c in VARIABLE if c[1] <= sm]
    n = rng.randrange(10, 18)
    lines = []
    for k in range(n):
        nm, _, tmpl = rng.choice(ops)
        x = f"i{rng.randrange(0, 8)}"
        y = f"i{rng.randrange(0, 8)}"
        body = tmpl.format(d=f"v{k}", x=x, y=y, k4=4 * k)
        lines.append(f"  // {nm}\n  {body}")
    # Combine in a random order: results are consumed long after they were produced.
    order = list(range(n))
    rng.shuffle(order)
    acc = f"v{order[0]}"
    comb = []
    for k in order[1:]:
        op = rng.choice(["xor.b32", "add.u32", "or.b32"])
        comb.append(f"  {op} {acc}, {acc}, v{k};")
    # Write-after-read: a shared-memory reduction or atomic whose address register dies there,
    # then another variable-latency result, which the register allocator often puts in that
    # register (overwriting a source still being read, unless the order makes it safe).
    war = []
    for j in range(rng.randrange(2, 5)):
        x = f"i{rng.randrange(0, 8)}"
        y = f"i{rng.randrange(0, 8)}"
        war.append(f"  and.b32 a{j}, {x}, 60; add.u32 a{j}, a{j}, sbase;")
        war.append(
            rng.choice(
                [
                    f"  red.shared.add.u32 [a{j}], {y};",
                    f"  atom.shared.inc.u32 r{j}, [a{j}], 1000; xor.b32 {acc}, {acc}, r{j};",
                    # Adding 1: ptxas counts the active lanes (ATOMS.POPC.INC).
                    f"  red.shared.add.u32 [a{j}], 1;",
                    f"  atom.shared.add.u32 r{j}, [a{j}], 1;",
                    f"  atom.shared.exch.b32 r{j}, [a{j}], {y}; xor.b32 {acc}, {acc}, r{j};",
                ]
            )
        )
        nm, _, tmpl = rng.choice(ops)
        war.append(f"  // {nm}\n  " + tmpl.format(d=f"z{j}", x=y, y=x, k4=4 * (48 + j)))
        war.append(f"  xor.b32 {acc}, {acc}, z{j};")
    shared = "  .shared .align 4 .b32 sm[64];\n  mov.u32 sbase, sm;\n"
    out = KPRO.format(name=name, nv=n, shared=shared)
    out += "\n".join(lines) + "\n" + "\n".join(comb) + "\n" + "\n".join(war) + "\n"
    out += f"  st.global.u32 [rout], {acc};\n  ret;\n}}\n\n"
    return out


# Video and saturating-conversion chain steps (`vabsdiff4` is `VABSDIFF4`; `.sat` of SIMD
# video forms and `cvt.sat` between integers are `I2I...SAT`), mixed with common ALU steps so
# that both their producer and consumer distances show. In their own files with their own
# seeds, so that the files above stay as they were.
VIDEO = [
    ("vabsdiff4", 75, "vabsdiff4.u32.u32.u32 {d}, {o0r}, {y};"),
    ("vabsdiff4.add", 75, "vabsdiff4.u32.u32.u32.add {d}, {o1r};"),
    ("vabsdiff4.s.add", 75, "vabsdiff4.u32.s32.s32.add {d}, {o1r};"),
    ("vadd4.sat", 75, "vadd4.u32.u32.u32.sat {d}, {o1r};"),
    ("vmin2.sat", 75, "vmin2.s32.s32.s32.sat {d}, {o1r};"),
    ("cvt.sat.u8.s32", 75, "cvt.sat.u8.s32 {d}, {a};"),
    ("cvt.sat.s16.s32", 75, "cvt.sat.s16.s32 {d}, {a};"),
    ("cvt.sat.s8.u32", 75, "cvt.sat.s8.u32 {d}, {a};"),
    ("add.u32", 75, "add.u32 {d}, {o0r};"),
    ("lop3", 75, "lop3.b32 {d}, {a}, {x}, {y}, 0x96;"),
    ("prmt", 75, "prmt.b32 {d}, {a}, {x}, 0x5140;"),
    ("mad.lo.u32", 75, "mad.lo.u32 {d}, {o1r};"),
    ("setp.u32", 75, "setp.lt.u32 q, {a}, {x}; selp.b32 {d}, {y}, {a}, q;"),
]


def main():
    os.makedirs(os.path.join(HERE, "ptx"), exist_ok=True)
    for sm in (75, 80):
        target = f"sm_{sm}"
        rng = random.Random(1000 + sm)
        text = HEAD.format(target=target)
        for k in range(40):
            text += chain_kernel(rng, f"chain_{sm}_{k}", sm)
        with open(os.path.join(HERE, "ptx", f"chains_sm{sm}.ptx"), "w") as f:
            f.write(text)
        rng = random.Random(2000 + sm)
        text = HEAD.format(target=target)
        text += ".const .align 4 .b32 cb[64];\n\n"
        for k in range(60):
            text += pressure_kernel(rng, f"pressure_{sm}_{k}", sm)
        with open(os.path.join(HERE, "ptx", f"pressure_sm{sm}.ptx"), "w") as f:
            f.write(text)
        rng = random.Random(3000 + sm)
        text = HEAD.format(target=target)
        for k in range(30):
            text += chain_kernel(rng, f"video_{sm}_{k}", sm, VIDEO, 40)
        with open(os.path.join(HERE, "ptx", f"video_sm{sm}.ptx"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
