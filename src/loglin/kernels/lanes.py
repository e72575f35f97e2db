"""Four float64 lanes as one LLVM vector <4 x double>, for sums kept as four partial sums (decision 0065).

A sum kept in LANES partials, the element at position k adding to partial k % LANES, has the same value
whether the partials are four scalars or the lanes of one vector: each lane does the same IEEE operations
in the same order. LLVM vectorizes neither form of such a loop by itself (a reduction it may only
vectorize when allowed to reassociate, which would leave the association to the compiler and the
machine), so the block passes say it: ``F64x4`` values are LLVM vectors, and these intrinsics are single
vector instructions (no fused multiply-add: each lane rounds as the scalar code does).
"""
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, models, register_model

LANES = 4
_DOUBLE = ir.DoubleType()
_VECTOR = ir.VectorType(_DOUBLE, LANES)


class F64x4(types.Type):
    def __init__(self):
        super().__init__(name="F64x4")


f64x4 = F64x4()


@register_model(F64x4)
class _F64x4Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VECTOR)


def _splat(builder, value):
    vec = ir.Constant(_VECTOR, ir.Undefined)
    for k in range(LANES):
        vec = builder.insert_element(vec, value, ir.IntType(32)(k))
    return vec


@intrinsic
def vsplat(typingctx, value):
    """(value, value, value, value)."""
    if not isinstance(value, types.Float):
        return None

    def codegen(context, builder, signature, args):
        return _splat(builder, context.cast(builder, args[0], signature.args[0], types.float64))
    return f64x4(value), codegen


@intrinsic
def vload(typingctx, array, index):
    """array[index : index + LANES] of a contiguous 1-D float64 array (no bounds check: the caller's)."""
    if not (isinstance(array, types.Array) and array.dtype == types.float64 and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), _VECTOR.as_pointer())
        return builder.load(ptr, align=8)
    return f64x4(array, index), codegen


def _binary(op):
    @intrinsic
    def vop(typingctx, a, b):
        if a != f64x4 or b != f64x4:
            return None

        def codegen(context, builder, signature, args):
            return getattr(builder, op)(args[0], args[1])
        return f64x4(a, b), codegen
    return vop


vadd = _binary("fadd")
vsub = _binary("fsub")
vmul = _binary("fmul")
vdiv = _binary("fdiv")


@intrinsic
def vwhere_gt(typingctx, x, threshold, a, b):
    """Per lane: a if x > threshold else b (a select, as the scalar code's ``a if x > t else b``)."""
    if x != f64x4 or a != f64x4 or b != f64x4 or not isinstance(threshold, types.Float):
        return None

    def codegen(context, builder, signature, args):
        t = _splat(builder, context.cast(builder, args[1], signature.args[1], types.float64))
        return builder.select(builder.fcmp_ordered(">", args[0], t), args[2], args[3])
    return f64x4(x, threshold, a, b), codegen


@intrinsic
def vlane(typingctx, v, k):
    """Lane k of v."""
    if v != f64x4 or not isinstance(k, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.extract_element(args[0], args[1])
    return types.float64(v, k), codegen



@intrinsic
def vpack(typingctx, a, b, c, d):
    """(a, b, c, d)."""
    if not all(isinstance(x, types.Float) for x in (a, b, c, d)):
        return None

    def codegen(context, builder, signature, args):
        vec = ir.Constant(_VECTOR, ir.Undefined)
        for k in range(LANES):
            value = context.cast(builder, args[k], signature.args[k], types.float64)
            vec = builder.insert_element(vec, value, ir.IntType(32)(k))
        return vec
    return f64x4(a, b, c, d), codegen


@njit(cache=True, inline="always")
def vtail(a, i, n, fill):
    """a[i:n] (fewer than LANES values) padded with ``fill``."""
    return vpack(a[i] if i < n else fill, a[i + 1] if i + 1 < n else fill, a[i + 2] if i + 2 < n else fill,
                 a[i + 3] if i + 3 < n else fill)


@njit(cache=True, inline="always")
def vsum(v):
    """(v_0 + v_1) + (v_2 + v_3): the lanes' partial sums combined (as combine_lanes of kernels.scaled_scores)."""
    return (vlane(v, 0) + vlane(v, 1)) + (vlane(v, 2) + vlane(v, 3))


@njit(cache=True, inline="always")
def start_lanes(zero):
    """LANES scalar partials, each ``zero`` (a tuple of 0.0: one per sum)."""
    return zero, zero, zero, zero


@njit(cache=True, inline="always")
def add_lane(m, lane, add, count, P):
    """``add(partial, count, P)`` of one context into partial ``lane`` of the scalar lanes m (``add`` is a
    jitted function of a partial's tuple; inlined, the lanes stay locals: registers)."""
    l0, l1, l2, l3 = m
    if lane == 0:
        l0 = add(l0, count, P)
    elif lane == 1:
        l1 = add(l1, count, P)
    elif lane == 2:
        l2 = add(l2, count, P)
    else:
        l3 = add(l3, count, P)
    return l0, l1, l2, l3


@njit(cache=True, inline="always")
def combine_lanes(m, sums):
    """sums[j] = (s_0 + s_1) + (s_2 + s_3) for each sum j of the scalar lanes m (tuples of one length)."""
    l0, l1, l2, l3 = m
    for j in range(len(l0)):
        sums[j] = (l0[j] + l1[j]) + (l2[j] + l3[j])
