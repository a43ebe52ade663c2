#!/usr/bin/env python3
"""Writes ptx/probe_memory_forms.ptx (sm_80 and later) and ptx/probe_memory_forms_sm90.ptx:
seeds for the SASS tables (`cargo xtask sass-probe --collect --also test-data/sass-probe`)
of the memory forms real PTX uses and the corpus lacks (2026-11-28): cache eviction
priorities and L2 prefetch sizes on `ld`/`st` (`LDG.E.EL.LTC256B.128.CONSTANT`, ...), the
`L2::cache_hint` policy as the access's descriptor (`desc[UR6]`), named barriers with thread
counts (`BAR.SYNC.DEFER_BLOCKING R, R`, `BAR.ARV`, `BAR.RED` on other barriers), the
hardware special registers (`SR_VIRTUALSMID`, `SR_VIRTID`, `CS2R.32 R, SR_PM0`, ...),
half-precision and vector atomics (`ATOMG.E.ADD.F16x2.RN`, `REDG.E.ADD.F32x4.FTZ.RN`),
`prefetch` (`CCTL.E.PF2`), `elect.sync` (`ELECT`) and `fence.proxy.async`
(`FENCE.VIEW.ASYNC.S`).

Every case is its own kernel (one instruction form, its result stored so nothing folds away).
The cases are a cross product; the ones ptxas 13.0.88 rejects are dropped (each candidate
file is compiled, the kernels ptxas names in errors removed, until it compiles), so the
written files need the oracle (`cargo xtask oracle`) only to be regenerated.
Deterministic: rerunning rewrites the same files.

Run: python3 test-data/sass-probe/gen_memory_forms.py
"""
import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PTXAS = os.path.join(
    os.environ.get("KILN_ORACLE_DIR", os.path.expanduser("~/.cache/kiln-oracle/13.0.88")),
    "bin",
    "ptxas",
)

# Types: (PTX type suffix, destination operand builder).
SCALAR = {
    ".u8": "%r10", ".s8": "%r10", ".u16": "%r10", ".s16": "%r10", ".b32": "%r10",
    ".b64": "%rd10",
}
VECTOR = {
    ".v2.b32": "{%r10, %r11}", ".v4.b32": "{%r10, %r11, %r12, %r13}",
    ".v2.b64": "{%rd10, %rd11}", ".v2.f32": "{%f10, %f11}",
}
TYPES = {**SCALAR, **VECTOR}


def store_of(ty, val):
    """A plain store of a loaded value to the output (keeps the load alive)."""
    t = ty if not ty.startswith((".u8", ".s8", ".u16", ".s16")) else ".b32"
    return f"st.global{t} [%rd7], {val};"


def loads():
    out = []
    l1s = ["", ".L1::evict_first", ".L1::evict_last", ".L1::evict_unchanged",
           ".L1::no_allocate", ".cs", ".lu"]
    l2s = ["", ".L2::64B", ".L2::128B", ".L2::256B"]
    # Weak global loads (Triton's and nvcc's): every eviction priority, prefetch size and type.
    for nc in ("", ".nc"):
        for l1 in l1s:
            if nc and l1 == ".lu":
                continue
            for l2 in l2s:
                for ty, d in TYPES.items():
                    out.append(f"ld.global{nc}{l1}{l2}{ty} {d}, [%rd6];\n{store_of(ty, d)}")
    # Generic loads: the priorities and sizes, fewer types.
    for l1 in l1s:
        for ty in (".b32", ".v4.b32"):
            d = TYPES[ty]
            out.append(f"ld{l1}{ty} {d}, [%rd6];\n{store_of(ty, d)}")
    for l2 in l2s[1:]:
        for ty in (".b32", ".v4.b32"):
            d = TYPES[ty]
            out.append(f"ld{l2}{ty} {d}, [%rd6];\n{store_of(ty, d)}")
    # Strong accesses (memory orders, volatile, .cg) with the common hints.
    for sem in (".volatile", ".relaxed.gpu", ".relaxed.sys", ".acquire.gpu", ".cg", ".relaxed.cta"):
        for l1 in ("", ".L1::evict_first", ".L1::evict_last", ".L1::no_allocate"):
            for l2 in ("", ".L2::128B", ".L2::256B"):
                for ty in (".b32", ".b64", ".v4.b32"):
                    d = TYPES[ty]
                    out.append(f"ld.global{sem}{l1}{l2}{ty} {d}, [%rd6];\n{store_of(ty, d)}")
    # The L2 cache policy operand (a parameter, so uniform): the policy is the descriptor.
    for space, ncs in ((".global", ["", ".nc"]), ("", [""])):
        for nc in ncs:
            for l1 in ("", ".L1::evict_first", ".L1::evict_last", ".L1::no_allocate"):
                for l2 in ("", ".L2::128B", ".L2::256B"):
                    for ty in (".u8", ".u16", ".b32", ".b64", ".v2.b32", ".v4.b32"):
                        if not space and (l2 or ty not in (".b32", ".v4.b32")):
                            continue
                        d = TYPES[ty]
                        out.append(
                            f"ld{space}{nc}{l1}{l2}.L2::cache_hint{ty} {d}, [%rd6], %rd9;\n"
                            f"{store_of(ty, d)}"
                        )
    # Memory-mapped I/O (PTX 8.2): `LDG.E.MMIO.SYS R, [R]`.
    for space in (".global", ""):
        for ty in (".u8", ".s16", ".b32", ".b64"):
            d = TYPES[ty] if ty in TYPES else "%r10"
            out.append(f"ld.mmio.relaxed.sys{space}{ty} {d}, [%rd6];\n{store_of(ty, d)}")
            v = "%rd5" if ty == ".b64" else "%r2"
            out.append(f"st.mmio.relaxed.sys{space}{ty} [%rd7], {v};")
    return out


def stores():
    out = []
    l1s = ["", ".L1::evict_first", ".L1::evict_last", ".L1::evict_unchanged",
           ".L1::no_allocate", ".cs", ".wt", ".cg", ".volatile", ".relaxed.gpu", ".relaxed.sys",
           ".release.gpu"]
    tys = {".b8": "%r2", ".b16": "%r2", ".b32": "%r2", ".b64": "%rd5",
           ".v2.b32": "{%r2, %r3}", ".v4.b32": "{%r2, %r3, %r4, %r2}", ".v2.b64": "{%rd5, %rd4}"}
    for l1 in l1s:
        for ty, v in tys.items():
            out.append(f"st.global{l1}{ty} [%rd7], {v};")
        for ty in (".b32", ".v4.b32"):
            out.append(f"st{l1}{ty} [%rd7], {tys[ty]};")
    for sem in (".volatile", ".relaxed.gpu", ".relaxed.sys", ".release.gpu"):
        for evict in (".L1::evict_first", ".L1::evict_last", ".L1::no_allocate"):
            for ty in (".b32", ".v4.b32"):
                out.append(f"st.global{sem}{evict}{ty} [%rd7], {tys[ty]};")
    for evict in ("", ".L1::evict_first", ".L1::evict_last", ".L1::no_allocate"):
        for ty, v in tys.items():
            out.append(f"st.global{evict}.L2::cache_hint{ty} [%rd7], {v}, %rd9;")
        out.append(f"st{evict}.L2::cache_hint.b32 [%rd7], %r2, %rd9;")
    return out


def policies():
    out = []
    prios = [".L2::evict_last", ".L2::evict_normal", ".L2::evict_first", ".L2::evict_unchanged"]
    for p in prios:
        for s in [""] + prios:
            for frac in ("", ", 1.0", ", 0.5", ", 0.25", ", 0.0625", ", 0.7"):
                out.append(
                    f"createpolicy.fractional{p}{s}.b64 %rd10{frac};\n"
                    "ld.global.L2::cache_hint.b32 %r10, [%rd6], %rd10;\n"
                    "st.global.b64 [%rd7], %rd10; st.global.b32 [%rd7+8], %r10;"
                )
    out.append("createpolicy.cvt.L2.b64 %rd10, %rd9;\nst.global.b64 [%rd7], %rd10;")
    return out


def specials(sm90):
    regs = ["%smid", "%nsmid", "%warpid", "%nwarpid", "%dynamic_smem_size",
            "%total_smem_size", "%lanemask_eq", "%lanemask_lt", "%lanemask_le",
            "%lanemask_gt", "%lanemask_ge", "%globaltimer_lo", "%globaltimer_hi", "%clock",
            "%clock_hi"] + [f"%pm{i}" for i in range(8)]
    wide = ["%gridid", "%globaltimer", "%clock64"] + [f"%pm{i}_64" for i in range(8)]
    if sm90:
        regs = ["%cluster_ctarank", "%cluster_nctarank"] + [
            f"%{r}.{a}" for r in ("cluster_ctaid", "cluster_nctaid", "clusterid", "nclusterid")
            for a in "xyz"
        ]
        wide = []
    out = [f"mov.u32 %r10, {r};\nst.global.b32 [%rd7], %r10;" for r in regs]
    out += [f"mov.u64 %rd10, {r};\nst.global.b64 [%rd7], %rd10;" for r in wide]
    if sm90:
        out.append("mov.pred %p1, %is_explicit_cluster;\nselp.u32 %r10, 1, 0, %p1;\n"
                   "st.global.b32 [%rd7], %r10;")
    return out


def barriers():
    out = []
    ids = ["0", "1", "15", "%r5"]
    counts = ["", ", 32", ", 64", ", 1024", ", %r6"]
    for op in ("bar.sync", "barrier.sync", "barrier.sync.aligned", "bar.arrive",
               "barrier.arrive", "barrier.arrive.aligned"):
        for i in ids:
            for c in counts:
                if "arrive" in op and not c:
                    continue
                out.append(f"{op} {i}{c};\nst.global.b32 [%rd7], %r1;")
    for red, dty in ((".popc.u32", "%r10"), (".and.pred", "%p2"), (".or.pred", "%p2")):
        for i in ids:
            for c in counts:
                for p in ("%p1", "!%p1"):
                    st = ("st.global.b32 [%rd7], %r10;" if dty == "%r10" else
                          "selp.u32 %r10, 1, 0, %p2;\nst.global.b32 [%rd7], %r10;")
                    out.append(f"bar.red{red} {dty}, {i}{c}, {p};\n{st}")
    return out


def atomics(sm90):
    out = []
    scopes = ["", ".cta", ".gpu", ".sys"]
    for sc in scopes:
        for space in (".global", ""):
            out.append(f"red{space}{sc}.add.noftz.f16x2 [%rd7], %r2;")
            out.append(f"atom{space}{sc}.add.noftz.f16x2 %r10, [%rd7], %r2;\n"
                       "st.global.b32 [%rd7+64], %r10;")
            if sm90:
                out.append(f"red{space}{sc}.add.noftz.bf16x2 [%rd7], %r2;")
                out.append(f"atom{space}{sc}.add.noftz.bf16x2 %r10, [%rd7], %r2;\n"
                           "st.global.b32 [%rd7+64], %r10;")
    if sm90:
        vecs = [(".v2.f32", "{%f2, %f3}", "{%f10, %f11}"),
                (".v4.f32", "{%f2, %f3, %f4, %f5}", "{%f10, %f11, %f12, %f13}"),
                (".v2.f16x2", "{%r2, %r3}", "{%r10, %r11}"),
                (".v4.f16x2", "{%r2, %r3, %r4, %r5}", "{%r10, %r11, %r12, %r13}"),
                (".v2.bf16x2", "{%r2, %r3}", "{%r10, %r11}"),
                (".v4.bf16x2", "{%r2, %r3, %r4, %r5}", "{%r10, %r11, %r12, %r13}")]
        for sc in scopes:
            for space in (".global", ""):
                for op in (".add", ".min", ".max"):
                    for ty, b, d in vecs:
                        noftz = ".noftz" if "16" in ty and op == ".add" else ""
                        out.append(f"red{space}{sc}{ty}{op}{noftz} [%rd7], {b};")
                        st = "st.global" + (".v4.b32" if d.count(",") == 3 else ".v2.b32")
                        out.append(f"atom{space}{sc}{ty}{op}{noftz} {d}, [%rd7], {b};\n"
                                   f"{st} [%rd7+64], {d};")
    return out


def misc(sm90):
    out = []
    for a in ("[%rd6]", "[%rd6+64]"):
        for p in ("prefetch.global.L1", "prefetch.global.L2", "prefetch.L1", "prefetch.L2",
                  "prefetch.global.L2::evict_last", "prefetch.global.L2::evict_normal",
                  "prefetchu.L1"):
            out.append(f"{p} {a};\nst.global.b32 [%rd7], %r1;")
    out.append("cvt.u32.u64 %r10, %rd6;\nprefetch.local.L1 [%r10];\nst.global.b32 [%rd7], %r1;")
    out.append("cvt.u32.u64 %r10, %rd6;\nprefetch.local.L2 [%r10];\nst.global.b32 [%rd7], %r1;")
    if sm90:
        out.append("elect.sync %r10|%p2, -1;\nselp.u32 %r11, 1, 0, %p2;\n"
                   "st.global.v2.b32 [%rd7], {%r10, %r11};")
        out.append("elect.sync _|%p2, -1;\nselp.u32 %r11, 1, 0, %p2;\n"
                   "st.global.b32 [%rd7], %r11;")
        for f in ("fence.proxy.async", "fence.proxy.async.global", "fence.proxy.async.shared::cta",
                  "fence.proxy.async.shared::cluster"):
            out.append(f"{f};\nst.global.b32 [%rd7], %r1;")
    return out


PER_KERNEL = 8


def placed(case, j):
    """The case's addresses moved 256 bytes per slot, so that the cases of one kernel touch
    disjoint bytes (nothing merges or folds)."""
    case = case.replace("[%rd6]", f"[%rd6+{256 * j}]").replace("[%rd6+64]", f"[%rd6+{256 * j + 64}]")
    case = case.replace("[%rd7]", f"[%rd7+{256 * j}]").replace("[%rd7+64]", f"[%rd7+{256 * j + 64}]")
    return case.replace("[%rd7+8]", f"[%rd7+{256 * j + 8}]")


PRELUDE = """  .reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .f32 %f<16>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in]; ld.param.u64 %rd9, [pol];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, 4096;
  add.s64 %rd6, %rd2, %rd5; add.s64 %rd7, %rd1, %rd5;
  ld.global.b32 %r2, [%rd6]; ld.global.b32 %r3, [%rd6+4]; ld.global.b32 %r4, [%rd6+8];
  ld.global.b32 %r5, [%rd6+12]; ld.global.b32 %r6, [%rd6+16];
  ld.global.f32 %f2, [%rd6+20]; ld.global.f32 %f3, [%rd6+24]; ld.global.f32 %f4, [%rd6+28];
  ld.global.f32 %f5, [%rd6+32]; ld.global.b64 %rd4, [%rd6+40];
  cvt.u64.u32 %rd5, %r2;
  setp.ne.u32 %p1, %r3, 0;
  and.b32 %r5, %r5, 15; and.b32 %r6, %r6, 992;
"""


def render(header, cases, live):
    """The file text and, per line number, the case it belongs to."""
    lines = header.rstrip("\n").split("\n")
    owner = {}
    for k in range(0, len(live), PER_KERNEL):
        group = live[k:k + PER_KERNEL]
        lines.append("")
        lines.append(f".visible .entry probe_{group[0]}(.param .u64 out, .param .u64 in, "
                     ".param .u64 pol)")
        lines.append("{")
        lines.extend(PRELUDE.rstrip("\n").split("\n"))
        for j, i in enumerate(group):
            for l in placed(cases[i], j).split("\n"):
                lines.append("  " + l)
                owner[len(lines)] = i
        lines.append("  ret;")
        lines.append("}")
    return "\n".join(lines) + "\n", owner


def write(name, target, version, cases):
    header = (
        "// Written by test-data/sass-probe/gen_memory_forms.py (edit that, not this).\n"
        f".version {version}\n.target {target}\n.address_size 64\n"
    )
    live = list(range(len(cases)))
    while True:
        text, owner = render(header, cases, live)
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "p.ptx")
            with open(src, "w") as f:
                f.write(text)
            r = subprocess.run([PTXAS, "-arch", target, src, "-o", os.path.join(d, "p.cubin")],
                               capture_output=True, text=True)
        if r.returncode == 0:
            break
        bad = {owner[int(m)] for m in re.findall(r"line (\d+);", r.stderr) if int(m) in owner}
        if not bad:
            raise SystemExit(r.stderr)
        live = [i for i in live if i not in bad]
    with open(os.path.join(HERE, "ptx", name), "w") as f:
        f.write(text)
    print(f"{name}: {len(live)} of {len(cases)} cases")


def main():
    both = loads() + stores() + policies() + specials(False) + barriers() + atomics(False) \
        + misc(False)
    write("probe_memory_forms.ptx", "sm_80", "8.2", both)
    write("probe_memory_forms_sm90.ptx", "sm_90", "8.1",
          specials(True) + atomics(True) + misc(True))


if __name__ == "__main__":
    main()
