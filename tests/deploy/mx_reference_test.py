#!/usr/bin/env python3
"""MX quantisation checked bit for bit against a reference written straight
from the OCP Microscaling Formats (MX) Specification v1.0 (§5 the formats,
§6.3 the conversion), in exact rational arithmetic with Python's standard
library only — independent of graphc's C++ (ir/Mx.cpp), which
graphc_mx_codec runs.

For each of the five element formats, on random blocks of many magnitudes
and on adversarial ones — all zero, negative zeros, f32 subnormals, NaN
and ±Inf, ±FLT_MAX, values exactly halfway between two elements (ties to
even), values just under and over the element's max normal (saturation),
a row whose length is not a multiple of 32 — the packed elements, the
E8M0 scales and the dequantised f32 values must be the reference's, byte
for byte.

    mx_reference_test.py path/to/graphc_mx_codec
"""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
from fractions import Fraction

BLOCK = 32
# name: (exponent bits, mantissa bits, bias, has a NaN at the top code (E4M3), has Inf (E5M2))
FORMATS = {
    "mxfp8_e4m3": (4, 3, 7),
    "mxfp8_e5m2": (5, 2, 15),
    "mxfp6_e3m2": (3, 2, 3),
    "mxfp6_e2m3": (2, 3, 1),
    "mxfp4_e2m1": (2, 1, 1),
}


def finite_values(ebits, mbits, bias, name):
    """Every non-negative finite value of the element format, with its code (§5.3)."""
    out = []
    for e in range(1 << ebits):
        for m in range(1 << mbits):
            if name == "mxfp8_e4m3" and e == 15 and m == 7:
                continue  # NaN
            if name == "mxfp8_e5m2" and e == 31:
                continue  # Inf and NaN
            if e == 0:
                v = Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
            else:
                v = (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)
            out.append((v, (e << mbits) | m))
    return sorted(out)


def round_to_element(x, table):
    """x (a Fraction ≥ 0) to the nearest element, ties to the even code;
    saturating at the largest (§6.3: normal values beyond max clamp)."""
    if x >= table[-1][0]:
        return table[-1][1]
    for (lo, lo_code), (hi, hi_code) in zip(table, table[1:]):
        if lo <= x <= hi:
            if x - lo < hi - x:
                return lo_code
            if hi - x < x - lo:
                return hi_code
            return lo_code if lo_code % 2 == 0 else hi_code  # even mantissa
    raise AssertionError("unreachable")


def emax_of(table, bias, mbits):
    """The exponent of the largest normal: floor(log2(max))."""
    top = table[-1][0]
    e = 0
    while Fraction(2) ** (e + 1) <= top:
        e += 1
    return e


FLT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]


def f32(x):
    """x rounded to f32 (beyond FLT_MAX: FLT_MAX, keeping the sign)."""
    if math.isfinite(x) and abs(x) > FLT_MAX:
        return math.copysign(FLT_MAX, x)
    return struct.unpack("<f", struct.pack("<f", x))[0]


def reference(name, values, cols):
    ebits, mbits, bias = FORMATS[name]
    bits = 1 + ebits + mbits
    table = finite_values(ebits, mbits, bias, name)
    emax = emax_of(table, bias, mbits)
    rows = len(values) // cols
    elements, scales, dequantised = bytearray(), bytearray(), []
    for r in range(rows):
        row = values[r * cols:(r + 1) * cols]
        codes = [0] * cols
        for b in range(0, cols, BLOCK):
            block = row[b:b + BLOCK]
            if any(math.isnan(v) or math.isinf(v) for v in block):
                scales.append(0xFF)  # the block reads back as NaN
                dequantised += [math.nan] * len(block)
                continue
            amax = max(abs(Fraction(v)) for v in block)
            if amax == 0:
                shared = -127
            else:
                shared = math.floor(math.log2(amax))
                while Fraction(2) ** shared > amax:  # exact floor(log2)
                    shared -= 1
                while Fraction(2) ** (shared + 1) <= amax:
                    shared += 1
                shared = max(-127, min(127, shared - emax))
            scales.append(shared + 127)
            X = Fraction(2) ** shared
            for i, v in enumerate(block):
                magnitude_code = round_to_element(abs(Fraction(v)) / X, table)
                sign = 1 if math.copysign(1.0, v) < 0 else 0
                codes[b + i] = (sign << (bits - 1)) | magnitude_code
                value = dict((c, val) for val, c in table)[magnitude_code] * X
                dequantised.append(-float(value) if sign else float(value))
        packed = 0
        for i, c in enumerate(codes):
            packed |= c << (i * bits)
        elements += packed.to_bytes((cols * bits + 7) // 8, "little")
    return bytes(elements), bytes(scales), dequantised


def blocks(rng):
    """Rows of 64 values (two blocks each), random then adversarial."""
    rows = []
    for scale in [1e-30, 1e-6, 1e-3, 0.1, 1.0, 3.0, 100.0, 1e4, 1e20, 1e38]:
        for _ in range(3):
            rows.append([f32(rng.gauss(0, 1) * scale) for _ in range(64)])
    rows.append([0.0] * 64)
    rows.append([-0.0] * 32 + [0.0] * 31 + [-0.0])
    tiny = struct.unpack("<f", struct.pack("<I", 1))[0]  # the smallest f32 subnormal
    rows.append([tiny * k for k in range(64)])
    rows.append([f32(rng.uniform(-1, 1) * 1e-39) for _ in range(64)])  # subnormal blocks
    rows.append([math.nan] + [1.0] * 31 + [2.0] * 32)
    rows.append([1.0] * 32 + [math.inf] + [-1.0] * 31)
    rows.append([-math.inf] * 64)
    fmax = FLT_MAX
    rows.append([fmax, -fmax] * 32)
    rows.append([fmax] + [1.0] * 63)
    # Ties and saturation: every value k/16 of a binade with the block's
    # max pinned so the scale is 1 (element values then face the grid).
    for top in [448.0, 57344.0, 28.0, 7.5, 6.0]:
        rows.append([top] + [f32(top * k / 63) for k in range(63)])
        rows.append([top] + [f32(top * (1 + k / 64) / 1.75) for k in range(63)])
        rows.append([f32(top * 1.99)] + [f32(top * 1.9 * rng.random()) for _ in range(63)])
    for base in [1.0, 2.0, 4.0]:
        rows.append([8.0] + [base + k * 0.0625 for k in range(63)])  # halfway points of coarse grids
    return rows


def main():
    codec = sys.argv[1]
    rng = random.Random(20261205)
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for cols, rows in [(64, blocks(rng)), (40, [[f32(rng.gauss(0, 3)) for _ in range(40)] for _ in range(8)])]:
            values = [v for row in rows for v in row]
            path = os.path.join(tmp, "in.f32")
            with open(path, "wb") as f:
                f.write(struct.pack(f"<{len(values)}f", *values))
            for name in FORMATS:
                outs = [os.path.join(tmp, f"{name}.{kind}") for kind in ("elements", "scales", "values")]
                subprocess.run([codec, name, str(cols), path, *outs], check=True)
                got = [open(p, "rb").read() for p in outs]
                want_elements, want_scales, want_values = reference(name, values, cols)
                if got[1] != want_scales:
                    bad = next(i for i in range(len(want_scales)) if got[1][i] != want_scales[i])
                    sys.exit(f"{name}: scale {bad} is {got[1][bad]}, the spec says {want_scales[bad]}")
                if got[0] != want_elements:
                    bad = next(i for i in range(len(want_elements)) if got[0][i] != want_elements[i])
                    sys.exit(f"{name}: element byte {bad} is {got[0][bad]:#04x}, the spec says {want_elements[bad]:#04x}")
                got_values = struct.unpack(f"<{len(values)}f", got[2])
                for i, (g, w) in enumerate(zip(got_values, want_values)):
                    same = (math.isnan(g) and math.isnan(w)) or struct.pack("<f", g) == struct.pack("<f", w)
                    if not same:
                        sys.exit(f"{name}: value {i} ({values[i]!r}) dequantises to {g!r}, the spec says {w!r}")
                checked += len(values)
    print(f"mx reference: {checked} values over {len(FORMATS)} formats match the spec bit for bit")


if __name__ == "__main__":
    main()
