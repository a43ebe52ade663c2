#!/usr/bin/env python3
"""Writes zluda_run_tests.json for the kernels in src/: deterministic inputs and the expected
output of each, computed here independently of kiln (exact rational arithmetic with explicit
IEEE rounding for the floating-point kernels, Python integers for the rest).

The file has the format of ../../../shared/corpus/zluda_run_tests.json (see zluda_README.md
there): one CTA of `block_dim_x` threads, 1 KiB dynamic shared memory, parameters (in, out),
output buffer zeroed before the launch and compared byte for byte. Each kernel is listed once
per PTX variant in RUN_VARIANTS.
"""
import json
import random
import struct
from fractions import Fraction
from math import isqrt

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
RUN_VARIANTS = ["sm_80", "sm_90.G", "sm_75.lineinfo"]

# ---- IEEE binary formats: (exponent bits, fraction bits) ------------------------------------
F16, BF16, F32, F64 = (5, 10), (8, 7), (8, 23), (11, 52)
CANON_NAN = {F16: 0x7FFF, BF16: 0x7FFF, F32: 0x7FFFFFFF, F64: 0x7FFFFFFFFFFFFFFF}
NAN, INF = "nan", "inf"


def decode(bits, fmt):
    """(sign, value) with value a Fraction, INF or NAN."""
    e, m = fmt
    sign = bits >> (e + m) & 1
    ex = bits >> m & ((1 << e) - 1)
    fr = bits & ((1 << m) - 1)
    bias = (1 << (e - 1)) - 1
    if ex == (1 << e) - 1:
        return sign, (NAN if fr else INF)
    if ex == 0:
        v = Fraction(fr, 1 << m) * Fraction(2) ** (1 - bias)
    else:
        v = Fraction((1 << m) + fr, 1 << m) * Fraction(2) ** (ex - bias)
    return sign, v


def encode(sign, v, fmt, mode):
    """Rounds sign * v (v a non-negative Fraction, INF or NAN) into fmt with mode rn/rz/ru/rd."""
    e, m = fmt
    bias = (1 << (e - 1)) - 1
    if v == NAN:
        return CANON_NAN[fmt]
    if v == INF:
        return sign << (e + m) | ((1 << e) - 1) << m
    if v == 0:
        return sign << (e + m)
    E = v.numerator.bit_length() - v.denominator.bit_length()
    while Fraction(2) ** E > v:
        E -= 1
    while Fraction(2) ** (E + 1) <= v:
        E += 1
    E = max(E, 1 - bias)
    q = v * Fraction(2) ** (m - E)
    n = q.numerator // q.denominator
    r = q - n
    up = {
        "rn": r > Fraction(1, 2) or (r == Fraction(1, 2) and n & 1),
        "rz": False,
        "ru": r > 0 and not sign,
        "rd": r > 0 and sign,
    }[mode]
    n += up
    if n == 1 << (m + 1):
        n >>= 1
        E += 1
    if E > bias:  # overflow
        to_inf = mode == "rn" or (mode == "ru" and not sign) or (mode == "rd" and sign)
        if to_inf:
            return sign << (e + m) | ((1 << e) - 1) << m
        return sign << (e + m) | ((1 << e) - 2) << m | ((1 << m) - 1)
    if n >= 1 << m:
        return sign << (e + m) | (E + bias) << m | (n - (1 << m))
    return sign << (e + m) | n


def signed(sign, v):
    return -v if sign else v


def round_result(x, fmt, mode, zero_sign):
    """Rounds an exact result x (Fraction, or (sign, INF)/NAN); exact zeros get zero_sign."""
    if x == NAN:
        return CANON_NAN[fmt]
    if isinstance(x, tuple):
        return encode(x[0], INF, fmt, mode)
    if x == 0:
        return encode(zero_sign, Fraction(0), fmt, mode)
    return encode(int(x < 0), abs(x), fmt, mode)


def f_add(a, b, fmt, mode):
    (sa, va), (sb, vb) = a, b
    if NAN in (va, vb):
        return CANON_NAN[fmt]
    if va == INF or vb == INF:
        if va == INF and vb == INF and sa != sb:
            return CANON_NAN[fmt]
        s = sa if va == INF else sb
        return encode(s, INF, fmt, mode)
    x = signed(sa, va) + signed(sb, vb)
    if va == 0 and vb == 0 and sa == sb:
        zs = sa
    else:
        zs = int(mode == "rd")
    return round_result(x, fmt, mode, zs)


def f_mul(a, b, fmt, mode):
    (sa, va), (sb, vb) = a, b
    s = sa ^ sb
    if NAN in (va, vb):
        return CANON_NAN[fmt]
    if va == INF or vb == INF:
        if va == 0 or vb == 0:
            return CANON_NAN[fmt]
        return encode(s, INF, fmt, mode)
    return round_result(signed(s, va * vb), fmt, mode, s)


def f_div(a, b, fmt, mode):
    (sa, va), (sb, vb) = a, b
    s = sa ^ sb
    if NAN in (va, vb) or (va == INF and vb == INF) or (va == 0 and vb == 0):
        return CANON_NAN[fmt]
    if va == INF or vb == 0:
        return encode(s, INF, fmt, mode)
    if vb == INF:
        return encode(s, Fraction(0), fmt, mode)
    return round_result(signed(s, va / vb), fmt, mode, s)


def exact_sqrt(v):
    """A Fraction that rounds like sqrt(v) in every mode for formats of <= 64 bits."""
    P = 200 - (v.numerator.bit_length() - v.denominator.bit_length()) // 2
    scaled = v * Fraction(2) ** (2 * P)
    N = isqrt(scaled.numerator // scaled.denominator)
    inexact = Fraction(N * N) != scaled
    return (Fraction(N) + (Fraction(1, 2) if inexact else 0)) / Fraction(2) ** P


def f_sqrt(a, fmt, mode):
    s, v = a
    if v == NAN or (s and v != 0):
        return CANON_NAN[fmt]
    if v == INF:
        return encode(0, INF, fmt, mode)
    if v == 0:
        return encode(s, Fraction(0), fmt, mode)
    return encode(0, exact_sqrt(v), fmt, mode)


def f_fma(a, b, c, fmt, mode):
    (sa, va), (sb, vb), (sc, vc) = a, b, c
    if NAN in (va, vb, vc):
        return CANON_NAN[fmt]
    sp = sa ^ sb
    if va == INF or vb == INF:
        if va == 0 or vb == 0:
            return CANON_NAN[fmt]
        if vc == INF and sc != sp:
            return CANON_NAN[fmt]
        return encode(sp, INF, fmt, mode)
    if vc == INF:
        return encode(sc, INF, fmt, mode)
    x = signed(sp, va * vb) + signed(sc, vc)
    if va * vb == 0 and vc == 0 and sp == sc:
        zs = sp
    else:
        zs = int(mode == "rd")
    return round_result(x, fmt, mode, zs)


def cvt(a, to, mode):
    s, v = a
    if v == NAN:
        return CANON_NAN[to]
    return encode(s, v, to, mode)


def to_int(a, mode, lo, hi):
    """cvt.r*i.{s,u}32.f*: round to an integer in mode, saturate to [lo, hi], NaN -> 0."""
    s, v = a
    if v == NAN:
        return 0
    if v == INF:
        return lo if s else hi
    x = signed(s, v)
    n = x.numerator // x.denominator  # floor
    r = x - n
    if mode == "rn":
        n += r > Fraction(1, 2) or (r == Fraction(1, 2) and n & 1)
    elif mode == "ru":
        n += r > 0
    elif mode == "rz":
        n += r > 0 and x < 0
    return max(lo, min(hi, n))


def f32_min_max(a_bits, b_bits, want_max):
    (sa, va), (sb, vb) = decode(a_bits, F32), decode(b_bits, F32)
    if va == NAN and vb == NAN:
        return CANON_NAN[F32]
    if va == NAN:
        return b_bits
    if vb == NAN:
        return a_bits
    x, y = (signed(sa, va) if va != INF else (-1) ** sa * 10**400), (
        signed(sb, vb) if vb != INF else (-1) ** sb * 10**400
    )
    assert x != y or a_bits == b_bits, "equal values of different encodings: avoid"
    return (a_bits if x > y else b_bits) if want_max else (a_bits if x < y else b_bits)


# ---- kernels -------------------------------------------------------------------------------


def u_warp(inp):
    out = []
    for t in range(64):
        w, lane = t // 32, t % 32
        warp = inp[32 * w: 32 * w + 32]
        v = inp[t]
        s = sum(warp[: lane + 1]) & M32
        m = max(warp)
        odd = sum(1 << i for i, x in enumerate(warp) if x & 1)
        grp = sum(1 << i for i, x in enumerate(warp) if x & 7 == v & 7)
        third = sum(1 << i for i, x in enumerate(warp) if x % 3 == 0)
        total = sum(inp) & M32
        hist = sum(1 for x in inp if x & 7 == t & 7)
        rsum = (sum(warp[1::2]) & M32) if lane & 1 else 0
        out += [s, m, odd, grp, total, hist, rsum, third]
    return out


def s32(x):
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def u_bits(inp):
    out = []
    for t in range(64):
        a, b = inp[t], inp[64 + t]
        sa, sb = s32(a), s32(b)
        wide = b << 32 | a
        perm = [(wide >> (8 * k)) & 0xFF for k in range(8)]
        sel = b & 0x7777
        bp = sum(perm[(sel >> (4 * n)) & 7] << (8 * n) for n in range(4))
        d = sb | 1
        assert not (sa == -(1 << 31) and d == -1)
        q = tdiv(sa, d)
        ffs = (sa & -sa).bit_length() if sa else 0
        o15 = (((a * b) & M64) >> (t & 31)) & M32
        o15 ^= a >> (t & 7)
        o15 ^= (sa >> (b & 31)) & M32
        out += [
            bin(a).count("1"),
            32 - a.bit_length(),
            int(f"{a:032b}"[::-1], 2),
            ((wide << (t & 31)) >> 32) & M32,
            (wide >> min(t, 32)) & M32,
            bp,
            (a * b) >> 32,
            ((sa * sb) >> 32) & M32,
            a // (b | 1),
            a % (b | 1),
            q & M32,
            (sa - q * d) & M32,
            min(sa, sb) & M32,
            (abs(sa - sb) + t) & M32,
            ffs,
            o15,
        ]
    return out


def u_f32(inp):
    out = []
    one_half = decode(0x3FC00000, F32)
    for t in range(64):
        xb, yb = inp[t], inp[64 + t]
        x, y = decode(xb, F32), decode(yb, F32)
        negx = (x[0] ^ 1, x[1])
        absx = (0, x[1])
        sat = x
        if x[1] == NAN:
            satb = 0
        elif x[0] and x[1] != 0:
            satb = 0
        elif x[1] == INF or x[1] > 1:
            satb = 0x3F800000
        else:
            satb = xb & 0x7FFFFFFF
        out += [
            f_add(x, y, F32, "rn"),
            f_add(x, y, F32, "rz"),
            f_mul(x, y, F32, "ru"),
            f_mul(x, y, F32, "rd"),
            f_div(x, y, F32, "rn"),
            f_div(x, y, F32, "rz"),
            f_sqrt(absx, F32, "rn"),
            f_sqrt(absx, F32, "ru"),
            f_fma(x, y, one_half, F32, "rn"),
            f_fma(x, y, negx, F32, "rz"),
            f32_min_max(xb, yb, False),
            f32_min_max(xb, yb, True),
            satb,
            to_int(x, "rd", -(1 << 31), (1 << 31) - 1) & M32,
            to_int(y, "rn", 0, M32),
            (xb & 0x7FFFFFFF) | (yb & 0x80000000),
        ]
    return out


def u_f64h(inp):
    out = []
    for t in range(64):
        x, y = decode(inp[t], F64), decode(inp[64 + t], F64)
        neg_one = (1, Fraction(1))
        o5_lo = cvt(x, F32, "rz")
        y1000 = decode(f_mul(y, (0, Fraction(1000)), F64, "rn"), F64)
        o5_hi = to_int(y1000, "rn", -(1 << 31), (1 << 31) - 1) & M32

        def f32_of(v):  # f64 -> f32 rn, decoded
            return decode(cvt(v, F32, "rn"), F32)

        def h_of(v32):  # f32 -> f16 rn, decoded
            return decode(cvt(v32, F16, "rn"), F16)

        xf, yf = f32_of(x), f32_of(y)
        halfx = f32_of(decode(f_mul(x, (0, Fraction(1, 2)), F64, "rn"), F64))
        hx = (h_of(xf), h_of(yf))
        hy = (h_of(yf), h_of(halfx))
        hadd = [decode(f_add(hx[i], hy[i], F16, "rn"), F16) for i in range(2)]
        hs = [f_fma(hx[i], hy[i], hadd[i], F16, "rn") for i in range(2)]
        hm = [f_mul(hx[i], hy[i], F16, "rn") for i in range(2)]
        b_of = lambda v32: decode(cvt(v32, BF16, "rn"), BF16)  # noqa: E731
        bx = (b_of(xf), b_of(yf))
        by = (b_of(yf), (0, Fraction(2)))
        bs = [f_add(bx[i], by[i], BF16, "rn") for i in range(2)]
        back = f_add(decode(bs[0], BF16), decode(hm[1], F16), F32, "rn")
        out += [
            f_add(x, y, F64, "rz"),
            f_mul(x, y, F64, "ru"),
            f_div(x, y, F64, "rn"),
            f_sqrt((0, x[1]), F64, "rd"),
            f_fma(x, y, neg_one, F64, "rn"),
            o5_lo | o5_hi << 32,
            hs[0] | hs[1] << 16 | (hm[0] | hm[1] << 16) << 32,
            bs[0] | bs[1] << 16 | back << 32,
        ]
    return out


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def u_calls(inp):
    out = []
    for t in range(64):
        v = inp[t]
        table = [(v * i + i * i) & M32 for i in range(16)]
        lo, hi, w = v, t, 0
        for k in range(v & 7):
            nlo = (lo * 2654435761 + k) & M32
            hi = hi ^ (lo >> 3)
            w = (w + (nlo << 17)) & M64
            lo = nlo
        out += [
            (table[v & 15] + table[(v >> 4) & 15]) & M32,
            lo ^ hi,
            (w >> 7) & M32,
            fib(t & 15),
        ]
    return out


def u_atomics(inp):
    dyn = [0] * 32
    dyn[17] = dyn[20] = M32
    for t, v in enumerate(inp):
        dyn[v & 15] += 1
        dyn[16] = max(dyn[16], v)
        dyn[17] = min(dyn[17], v)
        dyn[18] |= 1 << (v & 31)
        dyn[19] ^= v
        dyn[20] &= ~(1 << (t & 31)) & M32
        dyn[21] = 0 if dyn[21] >= 9 else dyn[21] + 1
        dyn[22] = 7 if dyn[22] == 0 or dyn[22] > 7 else dyn[22] - 1
        dyn[23] = (dyn[23] - (v & 0xFF)) & M32
    total = sum(v * 1000003 for v in inp) & M64
    fsum = f32_bits(float(sum(v & 255 for v in inp)))
    fmax = f32_bits(max(v * 0.5 for v in inp))
    smax = max(0, max(inp) - 300000)
    return dyn + [total & M32, total >> 32, fsum, fmax, smax & M32, smax >> 32, 0, 0]


def u_conv(inp):
    out = []
    i32, u32 = (-(1 << 31), (1 << 31) - 1), (0, M32)
    i64 = (-(1 << 63), (1 << 63) - 1)
    for t in range(64):
        x = decode(inp[t], F64)
        f = decode(cvt(x, F32, "rn"), F32)
        ll = to_int(decode(f_mul(x, (0, Fraction(1 << 32)), F64, "rn"), F64), "rn", *i64)
        llq = (0 if ll >= 0 else 1, Fraction(abs(ll)))
        lo = ll & M32
        rn, ru = to_int(f, "rn", *i32), to_int(f, "ru", *i32)
        sc = to_int(f, "rz", *i32) & 0xFF
        sc = sc - 256 if sc & 0x80 else sc
        ti = s32(t * 0x01234567)
        f1000 = decode(f_mul(f, (0, Fraction(1000)), F32, "rn"), F32)
        hbits = (t * 499) & 0xFFFF
        assert hbits >> 10 & 0x1F != 0x1F, "no half NaN/inf inputs"
        out += [
            to_int(x, "rz", *i32) & M32,
            to_int(x, "ru", *i32) & M32,
            to_int(x, "rd", *u32),
            cvt(x, F32, "ru"),
            cvt(x, F32, "rd"),
            lo,
            (ll >> 32) & M32,
            cvt(llq, F32, "rz"),
            cvt((0, Fraction(lo)), F32, "ru"),
            (rn ^ (ru << 8)) & M32,
            sc & M32,
            cvt(x, F16, "rn") | cvt(f, F16, "rz") << 16,
            cvt(f, BF16, "rn") | cvt(f, BF16, "rz") << 16,
            cvt((int(ti < 0), Fraction(abs(ti))), F32, "rd"),
            to_int(f1000, "rz", *u32) & 0xFFFF,
            cvt(decode(hbits, F16), F32, "rn"),
        ]
    return out


def u_ctrl(inp):
    out = [0] * 260
    accs, stepss = [], []
    for v in inp:
        acc = steps = 0
        x = v | 1
        while x != 1 and steps < 200:
            x = (3 * x + 1) & M32 if x & 1 else x >> 1
            if x & 7 == 5:
                steps += 1
                continue
            acc += x & 0xFF
            if acc > 5000:
                break
            steps += 1
        accs.append(acc)
        stepss.append(steps)
    for t, v in enumerate(inp):
        w = 32 * (t // 32)
        lanes = range(w, w + 32)
        stay = sum(1 << (i - w) for i in lanes if inp[i] % 5 != 0)
        out[t * 4] = accs[t]
        out[t * 4 + 1] = stepss[t]
        out[t * 4 + 2] = sum(1 << (i - w) for i in lanes if accs[i] & 1)
        if v % 5 != 0:
            mine = sum(1 << (i - w) for i in lanes if inp[i] % 5 != 0 and inp[i] & 2)
            out[t * 4 + 3] = mine ^ stay
    out[256] = sum(1 for a in accs if a > 1000)
    out[257] = int(all(s > 3 for s in stepss))
    out[258] = int(any(s == 200 for s in stepss))
    return out


# ---- inputs --------------------------------------------------------------------------------


def f32_bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def f64_bits(f):
    return struct.unpack("<Q", struct.pack("<d", f))[0]


def random_f32(rng):
    return rng.getrandbits(1) << 31 | rng.randint(100, 154) << 23 | rng.getrandbits(23)


def f32_inputs(rng):
    xs = [0x00000000, 0x3F800000, 0xBFC00000, 0x7F800000, 0xFF800000, 0x7FC00000,
          0x00011D24, 0x7F7FFFFF, 0x3F000000, 0x40200000, 0xC0200000, 0x4F000000,
          0xCF000001, 0x3F7FFFFF]
    ys = [0x3F800000, 0x80000000, 0x40400000, 0x00000000, 0x7F800000, 0x3F800000,
          0x00800000, 0x40000000, 0x7FC00000, 0xBF800000, 0x4F800000, 0x3F000000,
          0x3F400000, 0xFF800000]
    while len(xs) < 64:
        xs.append(random_f32(rng))
    while len(ys) < 64:
        ys.append(random_f32(rng))
    return xs + ys


def f64_inputs(rng):
    xs = [1.0, 2.0, -3.0, 0.1, 49.5, -0.3333, 1e-3, 7.0]
    ys = [3.0, -0.5, 0.25, 10.0, -1.0, 4.0, 1e3 / 1e3, -2.75]
    while len(xs) < 64:
        xs.append(rng.uniform(-50, 50))
        ys.append(rng.uniform(-50, 50))
    return [f64_bits(v) for v in xs + ys]


def conv_inputs(rng):
    xs = [2.5, -2.5, 0.5, -0.5, 1.5, -0.0, 0.0, 3e9, -3e9, 5e9, 1e20, -1e20, 65504.0,
          65520.0, 1e-6, -7.75, 1e300, 1.0 / 3, 123456.789, -0.1, 2.0**31, -(2.0**31) - 0.5]
    while len(xs) < 64:
        xs.append(rng.uniform(-1, 1) * 2.0 ** rng.randint(-30, 40))
    return [f64_bits(v) for v in xs]


def le(values, width):
    return b"".join(v.to_bytes(width, "little") for v in values).hex()


def main():
    rng = random.Random(20261122)
    tests = [
        ("u_warp", [rng.getrandbits(20) for _ in range(64)], 4, u_warp, 4),
        ("u_bits", [rng.getrandbits(32) for _ in range(128)], 4, u_bits, 4),
        ("u_f32", f32_inputs(rng), 4, u_f32, 4),
        ("u_f64h", f64_inputs(rng), 8, u_f64h, 8),
        ("u_calls", [rng.getrandbits(32) for _ in range(64)], 4, u_calls, 4),
        ("u_atomics", [rng.getrandbits(20) for _ in range(64)], 4, u_atomics, 4),
        ("u_conv", conv_inputs(rng), 8, u_conv, 4),
        ("u_ctrl", [rng.getrandbits(20) for _ in range(64)], 4, u_ctrl, 4),
    ]
    doc = []
    for name, inp, iw, fn, ow in tests:
        out = fn(inp)
        for variant in RUN_VARIANTS:
            doc.append({
                "name": name,
                "macro": "test_ptx",
                "ptx": f"{name}.{variant}.ptx",
                "block_dim_x": 64,
                "args": "(in_ptr, out_ptr)",
                "input": {"type": f"u{8 * iw}", "count": len(inp), "hex": le(inp, iw)},
                "output": {"type": f"u{8 * ow}", "count": len(out), "hex": le(out, ow)},
                "corpus_path": f"ptx/{name}.{variant}.ptx",
            })
    with open("zluda_run_tests.json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
