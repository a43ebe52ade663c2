#!/usr/bin/env python3
"""Triton kernels built by ptxas and by kiln, checked against PyTorch and timed.

usage: triton_suite.py KILN_AS_PTXAS OUT.json [--repeat N]

KILN_AS_PTXAS is kiln's binary under the name `ptxas` (Triton calls it as its assembler
through TRITON_PTXAS_PATH). Each compiler's run is a separate process with its own Triton
cache, so neither reuses the other's cubins. Every kernel's output is compared with PyTorch's
under the kernel's tolerance, `--repeat` times (different rows wrong in different runs is the
signature of a race), and timed with triton.testing.do_bench. A kernel kiln refuses to compile
(`unsupported: ...`) is reported as refused, not as wrong.

OUT.json: {"ptxas": {kernel: {...}}, "kiln": {...}, "verdicts": {kernel: "ok"|"wrong"|...}}.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import torch
import triton
import triton.language as tl


@triton.jit
def vadd(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

@triton.jit
def softmax(o, x, stride, n, B: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, B)
    v = tl.load(x + r * stride + c, mask=c < n, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(o + r * stride + c, e / tl.sum(e, axis=0), mask=c < n)

@triton.jit
def layernorm(x, y, w, b, stride, n, eps, B: tl.constexpr):
    r = tl.program_id(0)
    x += r * stride
    y += r * stride
    s = tl.zeros([B], dtype=tl.float32)
    for k in range(0, n, B):
        c = k + tl.arange(0, B)
        s += tl.load(x + c, mask=c < n, other=0.0).to(tl.float32)
    mean = tl.sum(s, axis=0) / n
    q = tl.zeros([B], dtype=tl.float32)
    for k in range(0, n, B):
        c = k + tl.arange(0, B)
        d = tl.where(c < n, tl.load(x + c, mask=c < n, other=0.0).to(tl.float32) - mean, 0.0)
        q += d * d
    rstd = 1 / tl.sqrt(tl.sum(q, axis=0) / n + eps)
    for k in range(0, n, B):
        c = k + tl.arange(0, B)
        v = tl.load(x + c, mask=c < n, other=0.0).to(tl.float32)
        out = (v - mean) * rstd * tl.load(w + c, mask=c < n) + tl.load(b + c, mask=c < n)
        tl.store(y + c, out.to(y.dtype.element_ty), mask=c < n)

@triton.jit
def atomic_sum(x, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.atomic_add(o, tl.sum(tl.load(x + i, mask=i < n, other=0), axis=0))

@triton.jit
def gelu(x, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + i, mask=i < n)
    tl.store(o + i, v * tl.sigmoid(1.702 * v), mask=i < n)

@triton.jit
def argmax(x, o, stride, n, B: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, B)
    tl.store(o + r, tl.argmax(tl.load(x + r * stride + c, mask=c < n, other=-float("inf")), axis=0))

@triton.jit
def cumsum(x, o, stride, n, B: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, B)
    v = tl.load(x + r * stride + c, mask=c < n, other=0)
    tl.store(o + r * stride + c, tl.cumsum(v, axis=0), mask=c < n)

@triton.jit
def matmul(a, b, c, K, sa, sb, sc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    n = tl.program_id(1) * BN + tl.arange(0, BN)
    k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        acc += tl.dot(tl.load(a + m[:, None] * sa + (k0 + k)[None, :]),
                      tl.load(b + (k0 + k)[:, None] * sb + n[None, :]))
    tl.store(c + m[:, None] * sc + n[None, :], acc.to(tl.float16))


def kernels():
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(7)
    cases = {}

    def case(name, tol):
        def wrap(fn):
            cases[name] = (fn, tol)
            return fn
        return wrap

    @case("vadd", 0.0)
    def _():
        n = 1 << 24
        x, y = torch.rand(n, device=dev, generator=g), torch.rand(n, device=dev, generator=g)
        o = torch.empty_like(x)
        run = lambda: vadd[(triton.cdiv(n, 1024),)](x, y, o, n, B=1024)
        return run, lambda: ((o - (x + y)).abs().max().item(), 0)

    @case("softmax", 1e-6)
    def _():
        x = torch.randn(4096, 1000, device=dev, generator=g)
        o = torch.empty_like(x)
        run = lambda: softmax[(4096,)](o, x, x.stride(0), 1000, B=1024)
        return run, lambda: ((o - torch.softmax(x, 1)).abs().max().item(),
                             int(((o - torch.softmax(x, 1)).abs() > 1e-6).any(1).sum()))

    @case("layernorm", 2e-2)
    def _():
        M = N = 4096
        x = torch.randn(M, N, device=dev, dtype=torch.float16, generator=g)
        w = torch.rand(N, device=dev, dtype=torch.float16, generator=g)
        b = torch.rand(N, device=dev, dtype=torch.float16, generator=g)
        y = torch.empty_like(x)
        ref = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float(), 1e-5)
        run = lambda: layernorm[(M,)](x, y, w, b, x.stride(0), N, 1e-5, B=1024)
        err = lambda: (y.float() - ref).abs()
        return run, lambda: (err().max().item(), int((err() > 2e-2).any(1).sum()))

    @case("atomic_sum", 0.0)
    def _():
        n = 1 << 22
        x = torch.randint(0, 100, (n,), device=dev, dtype=torch.int32, generator=g)
        o = torch.zeros(1, device=dev, dtype=torch.int32)

        def run():
            o.zero_()
            atomic_sum[(triton.cdiv(n, 1024),)](x, o, n, B=1024)
        return run, lambda: (abs(o.item() - x.sum().item()), 0)

    @case("gelu", 1e-5)
    def _():
        n = 1 << 22
        x = torch.randn(n, device=dev, generator=g)
        o = torch.empty_like(x)
        run = lambda: gelu[(triton.cdiv(n, 1024),)](x, o, n, B=1024)
        return run, lambda: ((o - x * torch.sigmoid(1.702 * x)).abs().max().item(), 0)

    @case("argmax", 0.0)
    def _():
        x = torch.randn(4096, 1000, device=dev, generator=g)
        o = torch.empty(4096, device=dev, dtype=torch.int32)
        run = lambda: argmax[(4096,)](x, o, x.stride(0), 1000, B=1024)
        return run, lambda: (float((o.long() != x.argmax(1)).sum().item()), int((o.long() != x.argmax(1)).sum()))

    @case("cumsum", 0.0)
    def _():
        x = torch.randint(-50, 50, (1024, 1000), device=dev, dtype=torch.int32, generator=g)
        o = torch.empty_like(x)
        run = lambda: cumsum[(1024,)](x, o, x.stride(0), 1000, B=1024)
        bad = lambda: (o.long() != x.long().cumsum(1)).any(1)
        return run, lambda: (float(bad().sum().item()), int(bad().sum()))

    @case("matmul", 0.1)
    def _():
        M = N = K = 1024
        a = torch.randn(M, K, device=dev, dtype=torch.float16, generator=g)
        b = torch.randn(K, N, device=dev, dtype=torch.float16, generator=g)
        c = torch.empty(M, N, device=dev, dtype=torch.float16)
        ref = a.float() @ b.float()
        run = lambda: matmul[(M // 64, N // 64)](a, b, c, K, a.stride(0), b.stride(0), c.stride(0), BM=64, BN=64, BK=32)
        return run, lambda: ((c.float() - ref).abs().max().item(), int(((c.float() - ref).abs() > 0.1).any(1).sum()))

    return cases


def one_compiler(label, out_path, repeat):
    """Runs every kernel with the compiler the environment selects; writes OUT.json."""
    results = {}
    for name, (make, tol) in kernels().items():
        t0 = time.time()
        try:
            run, check = make()
            errors, bad_rows = [], []
            for _ in range(repeat):
                run()
                torch.cuda.synchronize()
                e, rows = check()
                errors.append(e)
                bad_rows.append(rows)
            us = triton.testing.do_bench(run, warmup=10, rep=50) * 1000.0
            ok = all(e <= tol for e in errors)
            results[name] = {"status": "ok" if ok else "wrong", "max_err": errors, "bad_rows": bad_rows,
                             "tolerance": tol, "us": round(us, 2)}
        except Exception as exc:  # noqa: BLE001 - a compile failure is a result
            text = f"{type(exc).__name__}: {exc}"
            status = "refused" if "unsupported" in text else "error"
            results[name] = {"status": status, "error": text[-800:]}
        results[name]["wall_s"] = round(time.time() - t0, 1)
        print(label, name, results[name], flush=True)
    json.dump(results, open(out_path, "w"), indent=1)


def main(argv):
    if argv[1] == "--one":
        one_compiler(argv[2], argv[3], int(argv[4]))
        return 0
    kiln, out = argv[1], argv[2]
    repeat = int(argv[4]) if len(argv) > 4 and argv[3] == "--repeat" else 3
    runs = {}
    for label, ptxas in [("ptxas", None), ("kiln", kiln)]:
        env = dict(os.environ)
        env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"triton-{label}-")
        if ptxas:
            env["TRITON_PTXAS_PATH"] = os.path.abspath(ptxas)
        else:
            env.pop("TRITON_PTXAS_PATH", None)
        part = out + f".{label}.json"
        subprocess.run([sys.executable, __file__, "--one", label, part, str(repeat)], env=env, timeout=400)
        runs[label] = json.load(open(part)) if os.path.exists(part) else {}
    verdicts = {}
    for name in sorted(set(runs["ptxas"]) | set(runs["kiln"])):
        p, k = runs["ptxas"].get(name, {}), runs["kiln"].get(name, {})
        if p.get("status") != "ok":
            verdicts[name] = f"ptxas {p.get('status', 'missing')}"
        else:
            verdicts[name] = k.get("status", "missing")
        ratio = (k.get("us") or 0) / p["us"] if p.get("us") and k.get("us") else None
        print(f"{name:12} ptxas {p.get('status')} {p.get('us')} us | kiln {k.get('status')} {k.get('us')} us"
              f" | kiln/ptxas {ratio and round(ratio, 2)} | {verdicts[name]}")
    json.dump({"ptxas": runs["ptxas"], "kiln": runs["kiln"], "verdicts": verdicts}, open(out, "w"), indent=1)
    wrong = [n for n, v in verdicts.items() if v in ("wrong", "error")]
    print(f"RESULT triton kernels={len(verdicts)} ok={sum(v == 'ok' for v in verdicts.values())} "
          f"wrong={sum(v == 'wrong' for v in verdicts.values())} refused={sum(v == 'refused' for v in verdicts.values())} "
          f"errors={sum(v == 'error' for v in verdicts.values())}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
