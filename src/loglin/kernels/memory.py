"""Software prefetch: ask for an array element's cache line before the loop needs it.

The coordinate methods visit examples in a random order each pass. On a9a (5 MB of rows, most of
them outside the core's caches) a pass of dual CD in random order measured 5x the time of the same
pass in memory order: each row's first read waits for memory. The order is known a pass ahead, so the
kernels ask for the row of the example a few visits ahead while they work on the current one. Rows of
document data (news20: ~80 non-zeros, 15 cache lines) need every line asked for
(:func:`prefetch_lr_visit_lines`, used by the LR passes of dual CD and EG; docs/decisions/0023).

``prefetch(a, i)`` compiles to LLVM's llvm.prefetch (read, high locality, data cache): a hint that
never faults, so an index past the end is harmless (callers still keep it inside the array).
"""
from llvmlite import ir
from llvmlite.binding import llvm_version_info
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


# the intrinsic's name carries its pointer type: i8* before LLVM 15's opaque pointers, ptr since (LLVM
# remangles a mismatched name when it reads the IR, so this only keeps the declaration exact)
_PREFETCH = "llvm.prefetch.p0i8" if llvm_version_info[0] < 15 else "llvm.prefetch.p0"


def _prefetch_codegen(write):
    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        address = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer(), i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _PREFETCH)
        builder.call(fn, [address, i32(write), i32(3), i32(1)])      # read or write, keep in all levels, data
        return context.get_dummy_value()
    return codegen


@intrinsic
def prefetch(typingctx, array, index):
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None
    return types.void(array, index), _prefetch_codegen(0)


@intrinsic
def prefetch_write(typingctx, array, index):
    """As :func:`prefetch`, for a line about to be written (fetched ready for writing)."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None
    return types.void(array, index), _prefetch_codegen(1)


@intrinsic
def scalar_at(typingctx, array, index):
    """array[index] (index >= 0, read unsigned; no bounds check) as one scalar load that LLVM's vectorizers
    leave alone: an unordered atomic load, a plain load instruction on x86-64 and AArch64. A sparse dot
    written with it is never turned into vector gathers, which cost more than scalar loads on the x86 cores
    measured (docs/decisions/0066)."""
    if not (isinstance(array, types.Array) and isinstance(array.dtype, types.Float)
            and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        at = context.cast(builder, args[1], signature.args[1], types.uint64)
        return builder.load_atomic(builder.gep(ary.data, [at]), "unordered", array.dtype.bitwidth // 8)
    return array.dtype(array, index), codegen


LINES_AHEAD = 4     # visits ahead whose row lines the LR passes ask for (docs/decisions/0023)
LINE_INDICES, LINE_VALUES = 16, 8    # int32 indices / float64 values per 64-byte cache line


@njit(cache=True, inline="always")
def prefetch_csr_row_lines(indptr, indices, data, j):
    """Every cache line of row j of a CSR matrix (long document rows: the hardware prefetcher does not
    run ahead of a random jump far enough to hide the whole row)."""
    lo, hi = indptr[j], indptr[j + 1]
    if hi > lo:
        for k in range(lo, hi, LINE_INDICES):
            prefetch(indices, k)
        for k in range(lo, hi, LINE_VALUES):
            prefetch(data, k)
        prefetch(indices, hi - 1)
        prefetch(data, hi - 1)


@njit(cache=True, inline="always")
def prefetch_lr_visit_lines(order, s, ahead, indptr, indices, data, alpha, alpha_c, per_row):
    """Before visit s of an LR pass: every line of the row, the two dual variables and one more per-row
    value (Q_ii or the learning rate) of the instance ``ahead`` visits later."""
    if s + ahead < order.shape[0]:
        j = order[s + ahead]
        prefetch_csr_row_lines(indptr, indices, data, j)
        prefetch(alpha, j)
        prefetch(alpha_c, j)
        prefetch(per_row, j)
