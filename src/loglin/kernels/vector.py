"""Fused dense-vector passes for the batch solvers (no NumPy temporaries).

On the NLP problems w has millions of entries, so each NumPy expression like
``q -= a * y`` streams the vectors several times and allocates a fresh
multi-megabyte temporary (page faults on every call). Profiling L-BFGS on the
CoNLL-2000 slice showed its two-loop recursion costing twice the objective
pass. These kernels do each step in one pass over the data they need.

Reductions use reassociation (``fastmath``) so that LLVM vectorizes them; the
sums then differ from ``np.dot`` only by rounding.
"""
import numpy as np
from numba import njit

SUMS = {"reassoc", "contract"}


@njit(cache=True, fastmath=SUMS)
def half_weighted_sq_norm(reg, w):
    """1/2 sum_t r_t w_t^2 (the regularizer)."""
    acc = 0.0
    for i in range(w.shape[0]):
        acc += reg[i] * w[i] * w[i]
    return 0.5 * acc


@njit(cache=True, fastmath=SUMS)
def regularized_gradient_inplace(expect, reg, w, C, emp):
    """expect <- r * w + C (expect - emp): the Maxent gradient from the model expectation."""
    for i in range(w.shape[0]):
        expect[i] = reg[i] * w[i] + C * (expect[i] - emp[i])


@njit(cache=True, fastmath=SUMS)
def add_regularizer_inplace(out, reg, w, scale):
    """out <- r * w + scale * out (gradient and Hessian-vector assembly)."""
    for i in range(w.shape[0]):
        out[i] = reg[i] * w[i] + scale * out[i]


@njit(cache=True, fastmath=SUMS)
def axpy_into(out, w, alpha, d):
    """out <- w + alpha d (a line-search trial point)."""
    for i in range(w.shape[0]):
        out[i] = w[i] + alpha * d[i]


@njit(cache=True, fastmath=SUMS)
def take_step(w, s_row, y_row, alpha, d, g_new, g):
    """s = alpha d, w += s, y = g_new - g, all in one pass; returns (s'y, y'y) for the L-BFGS pair."""
    sy = 0.0
    yy = 0.0
    for i in range(w.shape[0]):
        s = alpha * d[i]
        w[i] += s
        y = g_new[i] - g[i]
        s_row[i] = s
        y_row[i] = y
        sy += s * y
        yy += y * y
    return sy, yy


@njit(cache=True, fastmath=SUMS)
def lbfgs_direction(g, S, Y, rho, gamma, order, d):
    """d = -H g by the two-loop recursion (Nocedal & Wright, Algorithm 7.4), H0 = gamma I.

    ``order`` lists the rows of S, Y (pairs s_i, y_i with rho_i = 1 / s_i'y_i)
    from oldest to newest. Each axpy of one pair is fused with the dot product
    the next pair needs, so both loops stream every stored vector once.
    """
    n = g.shape[0]
    k = order.shape[0]
    if k == 0:
        for i in range(n):
            d[i] = -g[i]
        return
    alpha = np.empty(k)
    s_new = S[order[k - 1]]
    acc = 0.0
    for i in range(n):                      # q = g, and s_newest'q
        d[i] = g[i]
        acc += s_new[i] * g[i]
    a = rho[order[k - 1]] * acc
    b = 0.0
    for t in range(k - 1, -1, -1):          # newest -> oldest: q -= alpha_t y_t
        alpha[t] = a
        y_t = Y[order[t]]
        acc = 0.0
        if t > 0:
            s_next = S[order[t - 1]]
            for i in range(n):
                q = d[i] - a * y_t[i]
                d[i] = q
                acc += s_next[i] * q
            a = rho[order[t - 1]] * acc
        else:                               # r = H0 q, and y_oldest'r for the second loop
            y_first = Y[order[0]]
            for i in range(n):
                q = gamma * (d[i] - a * y_t[i])
                d[i] = q
                acc += y_first[i] * q
            b = rho[order[0]] * acc
    for t in range(k):                      # oldest -> newest: r += (alpha_t - beta_t) s_t
        s_t = S[order[t]]
        c = alpha[t] - b
        if t < k - 1:
            y_next = Y[order[t + 1]]
            acc = 0.0
            for i in range(n):
                q = d[i] + c * s_t[i]
                d[i] = q
                acc += y_next[i] * q
            b = rho[order[t + 1]] * acc
        else:
            for i in range(n):
                d[i] = -(d[i] + c * s_t[i])


@njit(cache=True, inline="always")
def sgd_rate(eta0, k, n):
    """eta_k = eta0 / (1 + k / n), k counting steps over all epochs (Collins et al. 2008, section 7.1.3)."""
    return eta0 / (1.0 + k / n)


@njit(cache=True, inline="always")
def shrunk_scale(w_scaled, scale, factor):
    """SGD's decay w <- factor w in O(1), w = scale * w_scaled (Collins et al. 2008, section 7.1.3): the new
    scale, folded into w_scaled when it nears underflow."""
    scale *= factor
    if scale < 1e-9:
        for t in range(w_scaled.shape[0]):
            w_scaled[t] *= scale
        scale = 1.0
    return scale


@njit(cache=True)
def sum_rows(acc):
    """Sum of the rows of a per-thread accumulator; the row itself (no copy) for one thread."""
    if acc.shape[0] == 1:
        return acc[0]
    out = acc[0].copy()
    for b in range(1, acc.shape[0]):
        out += acc[b]
    return out


@njit(cache=True, fastmath=SUMS)
def dot(a, b):
    """a'b in one vectorized pass (NumPy's BLAS call may wake threads that only spin here)."""
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    return acc


@njit(cache=True, fastmath=SUMS)
def pcg_step(s, r, d, Hd, alpha, m):
    """One step of CG preconditioned by the diagonal m, in one pass: s += alpha d, r -= alpha Hd;
    returns (s'Ms, r'r, r'M^-1 r) for Steihaug's tests (m = 1: plain CG)."""
    sms = 0.0
    rr = 0.0
    rz = 0.0
    for i in range(s.shape[0]):
        si = s[i] + alpha * d[i]
        ri = r[i] - alpha * Hd[i]
        s[i] = si
        r[i] = ri
        sms += m[i] * si * si
        rr += ri * ri
        rz += ri * ri / m[i]
    return sms, rr, rz


@njit(cache=True, fastmath=SUMS)
def pcg_direction(d, r, m, beta):
    """d <- M^-1 r + beta d."""
    for i in range(d.shape[0]):
        d[i] = r[i] / m[i] + beta * d[i]


@njit(cache=True, fastmath=SUMS)
def m_products(s, d, m):
    """(s'Md, s'Ms, d'Md): where the M-norm trust-region boundary crosses s + tau d."""
    sd = 0.0
    ss = 0.0
    dd = 0.0
    for i in range(s.shape[0]):
        sd += m[i] * s[i] * d[i]
        ss += m[i] * s[i] * s[i]
        dd += m[i] * d[i] * d[i]
    return sd, ss, dd


@njit(cache=True, fastmath=SUMS)
def cholesky_solve(h, b, x):
    """Solve H x = b from the lower triangle of H (row-major), factored in place into L (H = L L^T), by rows
    so that every inner product runs over two contiguous row prefixes. False if H is not positive definite.
    Compiled here rather than LAPACK's: on small n, a threaded BLAS spends more time waking threads than
    factoring."""
    n = h.shape[0]
    for j in range(n):
        for i in range(j, n):
            acc = h[i, j]
            for k in range(j):
                acc -= h[i, k] * h[j, k]
            if i == j:
                if not acc > 0.0:
                    return False
                h[j, j] = np.sqrt(acc)
            else:
                h[i, j] = acc / h[j, j]
    for i in range(n):                                  # L y = b
        acc = b[i]
        for k in range(i):
            acc -= h[i, k] * x[k]
        x[i] = acc / h[i, i]
    for i in range(n - 1, -1, -1):                      # L^T x = y
        acc = x[i]
        for k in range(i + 1, n):
            acc -= h[k, i] * x[k]
        x[i] = acc / h[i, i]
    return True
