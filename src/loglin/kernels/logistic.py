"""Compiled passes for binary logistic regression on a CSR matrix (Yu et al. eq. 1).

Loss per instance: C_i log(1 + exp(-y_i w^T x_i)), y_i in {-1, +1}; the
Hessian's cache is D_i = C_i sigma(y_i z_i)(1 - sigma(y_i z_i)).

Column indices are read as unsigned (``np.uint64(indices[k])``): they are never negative, and an unsigned
index skips Numba's negative-index wraparound (a compare and select per non-zero); same bits, the time
saved is in docs/decisions/0064.
"""
import numpy as np
from numba import njit, prange
from .vector import sgd_rate, shrunk_scale, sum_rows


@njit(cache=True, inline="always")
def sigmoid(t):
    if t >= 0:
        return 1.0 / (1.0 + np.exp(-t))
    e = np.exp(t)
    return e / (1.0 + e)


@njit(cache=True, inline="always")
def loss_and_sigmoid(t):
    """(log(1 + exp(-t)), sigma(t)) from a single exp(-|t|): the loss and the gradient's
    weight of one instance share their transcendental (t = y_i w^T x_i)."""
    e = np.exp(-abs(t))
    if t >= 0:
        return np.log1p(e), 1.0 / (1.0 + e)
    return np.log1p(e) - t, e / (1.0 + e)


@njit(cache=True, inline="always")
def row_dot(i, w, indptr, indices, data):
    """x_i^T w with two partial sums (halves the chain of dependent additions)."""
    lo, hi = indptr[i], indptr[i + 1]
    acc0 = 0.0
    acc1 = 0.0
    k = lo
    while k + 1 < hi:
        acc0 += data[k] * w[np.uint64(indices[k])]
        acc1 += data[k + 1] * w[np.uint64(indices[k + 1])]
        k += 2
    if k < hi:
        acc0 += data[k] * w[np.uint64(indices[k])]
    return acc0 + acc1


@njit(cache=True, parallel=True)
def loss_grad(w, bounds, indptr, indices, data, y, cost, d_out, want_grad):
    """sum_i C_i log(1+exp(-y_i z_i)) and X^T (C_i (sigma(y_i z_i) - 1) y_i)."""
    nb = bounds.shape[0] - 1
    n = w.shape[0]
    loss = np.zeros(nb)
    acc = np.zeros((nb if want_grad else 1, n))
    store = d_out.shape[0] > 0
    for b in prange(nb):
        block_loss = 0.0        # one write of loss[b] per block: the blocks' entries share a cache line
        for i in range(bounds[b], bounds[b + 1]):
            yz = y[i] * row_dot(i, w, indptr, indices, data)
            li, sg = loss_and_sigmoid(yz)
            block_loss += cost[i] * li
            if want_grad or store:
                if store:
                    d_out[i] = cost[i] * sg * (1.0 - sg)
                if want_grad:
                    coef = cost[i] * (sg - 1.0) * y[i]
                    for k in range(indptr[i], indptr[i + 1]):
                        acc[b, np.uint64(indices[k])] += coef * data[k]
        loss[b] = block_loss
    return loss.sum(), sum_rows(acc)


@njit(cache=True, parallel=True)
def hessian_vector(v, bounds, indptr, indices, data, d):
    """X^T D X v in one pass over the rows."""
    nb = bounds.shape[0] - 1
    acc = np.zeros((nb, v.shape[0]))
    for b in prange(nb):
        for i in range(bounds[b], bounds[b + 1]):
            coef = d[i] * row_dot(i, v, indptr, indices, data)
            for k in range(indptr[i], indptr[i + 1]):
                acc[b, np.uint64(indices[k])] += coef * data[k]
    return sum_rows(acc)


@njit(cache=True, parallel=True)
def hessian_diagonal(n, bounds, indptr, indices, data, d):
    """diag(X^T D X) = sum_i d_i x_ij^2."""
    nb = bounds.shape[0] - 1
    acc = np.zeros((nb, n))
    for b in prange(nb):
        for i in range(bounds[b], bounds[b + 1]):
            for k in range(indptr[i], indptr[i + 1]):
                acc[b, np.uint64(indices[k])] += d[i] * data[k] * data[k]
    return sum_rows(acc)


@njit(cache=True)
def decision_rows(w, indptr, indices, data):
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for i in range(n):
        out[i] = row_dot(i, w, indptr, indices, data)
    return out


@njit(cache=True)
def sgd_epoch(w_scaled, scale, order, eta0, step0, n_total, lam, weight, indptr, indices, data, y):
    """One SGD pass for LR; same schedule and scaling trick as the Maxent kernel."""
    k = step0
    for i in order:
        eta = sgd_rate(eta0, k, n_total)
        k += 1
        yz = y[i] * scale * row_dot(i, w_scaled, indptr, indices, data)
        coef = weight[i] * (sigmoid(yz) - 1.0) * y[i]
        scale = shrunk_scale(w_scaled, scale, 1.0 - eta * lam)
        step = -eta * coef / scale
        for kk in range(indptr[i], indptr[i + 1]):
            w_scaled[indices[kk]] += step * data[kk]
    return scale, k


@njit(cache=True, parallel=True)
def hessian_matrix(n, bounds, indptr, indices, data, d, stride):
    """The lower triangle of X^T D X (n x n, dense; sorted column indices) from every ``stride``-th
    row: each row adds d_i x_i x_i^T over its non-zero pairs. The row is copied to a local buffer
    first (the pair loop then reloads nothing from X)."""
    nb = bounds.shape[0] - 1
    acc = np.zeros((nb, n * n))
    width = 0
    for i in range(indptr.shape[0] - 1):
        width = max(width, indptr[i + 1] - indptr[i])
    for b in prange(nb):
        h = acc[b]
        cols = np.empty(width, np.int64)
        vals = np.empty(width)
        for i in range(bounds[b], bounds[b + 1], stride):
            lo = indptr[i]
            m = indptr[i + 1] - lo
            di = d[i]
            for k in range(m):
                cols[k] = indices[lo + k]
                vals[k] = data[lo + k]
            for a in range(m):
                base = cols[a] * n
                v = di * vals[a]
                for q in range(a + 1):
                    h[base + cols[q]] += v * vals[q]
    out = acc[0]
    for b in range(1, nb):
        out += acc[b]
    return out.reshape(n, n)
