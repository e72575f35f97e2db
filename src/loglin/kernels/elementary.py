"""exp written in arithmetic that LLVM can vectorize.

Without Intel's SVML, Numba compiles ``np.exp``/``np.log`` to one libm call per
element, which stops the loops over labels from vectorizing; on the Maxent
passes these calls are most of the arithmetic (one exp per (context, label)).
This version uses only multiply-adds and bit moves between a double and its
64-bit pattern, all of which have vector instructions. Measured on the CoNLL-2000
slice: 1.25 ns per element against 6.2 ns for np.exp in the same loop, and the
Maxent value+gradient pass 42 -> 32-37 ms (one exp per (context, label)).

Accuracy (tested against NumPy): relative error within one unit in the last
place for -708 <= x <= 709; 0 below -708 and +inf above 709 (where the softmax
kernels never go: their exponents are <= 0 after the usual max shift); NaN stays
NaN.

It is compiled without fast-math on purpose: the rounding trick
((x * log2(e) + 1.5 * 2^52) - 1.5 * 2^52) must not be "simplified" away. It is a
plain (not Numba-inlined) function so that a caller's fast-math flags never
apply to its instructions; LLVM still inlines it into the loops.
"""
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01         # ln 2 split so that k * LN2_HI is exact (fdlibm)
LN2_LO = 1.90821492927058770002e-10
ROUND = 6755399441055744.0                  # 1.5 * 2^52: adding it rounds to an integer in the low bits


@intrinsic
def _bits_to_float(typingctx, bits):
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _float_to_bits(typingctx, x):
    if not isinstance(x, types.Float):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@njit(cache=True)
def exp_v(x):
    """e^x = 2^k e^r with k = round(x / ln 2), |r| <= ln(2) / 2; e^r by its Taylor series to r^13."""
    xc = min(max(x, -708.0), 709.0)
    t = xc * LOG2E + ROUND
    k = t - ROUND                           # round(x / ln 2), exactly
    r = (xc - k * LN2_HI) - k * LN2_LO
    p = 1.0 / 6227020800.0                  # 1/13!
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = _bits_to_float((_float_to_bits(t) + 1023) << 52)     # 2^k from the low bits of t
    out = p * scale
    if x < -708.0:                          # selects, not branches: the loop still vectorizes
        out = 0.0
    if x > 709.0:
        out = np.inf
    if x != x:
        out = x
    return out
