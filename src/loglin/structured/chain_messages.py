"""Forward-backward on one chain sentence: scaled probability space, log space as the exact fallback.

Node scores U (n x K) and transition scores Tr (K x K, shared by all positions).
In scaled space (Rabiner 1989, section V.A) the potentials are exponentiated
once, shifted by their maxima, and the forward message is renormalized to sum 1
at every position; log Z is the sum of the logs of the normalizers and shifts.
When a sentence's score range (largest node-score range plus transition-score
range) is too wide for that to keep every message in the normal floating-point
range, the sentence is done in log space instead: alpha, beta are log-messages,
the K x K inner product of a step is done on exp(Tr - max) with the previous
message shifted by its maximum, and a sum that underflows is recomputed by an
exact log-sum-exp.
"""
from __future__ import annotations

import numpy as np
from numba import njit

TINY = 1e-280
# Scaled messages lie in [e^-(D_t + D_T) / K, K e^(D_t + D_T)] (D_t: range of the node scores at t,
# D_T: range of the transition scores), so below this bound no message leaves the normal range.
SCALED_RANGE = 600.0


@njit(cache=True)
def transition_tables(Tr, Ecol, colmax, Erow, rowmax):
    """exp(Tr - column max) for the forward pass and exp(Tr - row max) for the backward pass."""
    K = Tr.shape[0]
    for y in range(K):
        m = -np.inf
        for yp in range(K):
            m = max(m, Tr[yp, y])
        colmax[y] = m
        for yp in range(K):
            Ecol[yp, y] = np.exp(Tr[yp, y] - m)
    for yp in range(K):
        m = -np.inf
        for y in range(K):
            m = max(m, Tr[yp, y])
        rowmax[yp] = m
        for y in range(K):
            Erow[yp, y] = np.exp(Tr[yp, y] - m)


@njit(cache=True)
def _logsumexp(v, K):
    m = -np.inf
    for y in range(K):
        m = max(m, v[y])
    if m == -np.inf:
        return m
    s = 0.0
    for y in range(K):
        s += np.exp(v[y] - m)
    return m + np.log(s)


@njit(cache=True)
def forward(U, n, Tr, Ecol, colmax, alpha, tmp):
    """Log forward messages alpha[t, y]; returns log Z."""
    K = U.shape[1]
    for y in range(K):
        alpha[0, y] = U[0, y]
    for t in range(1, n):
        m = -np.inf
        for yp in range(K):
            m = max(m, alpha[t - 1, yp])
        for yp in range(K):
            tmp[yp] = np.exp(alpha[t - 1, yp] - m)
        for y in range(K):
            s = 0.0
            for yp in range(K):
                s += tmp[yp] * Ecol[yp, y]
            if s > TINY:
                alpha[t, y] = U[t, y] + m + colmax[y] + np.log(s)
            else:                                   # exact log-sum-exp for an underflowing sum
                mm = -np.inf
                for yp in range(K):
                    mm = max(mm, alpha[t - 1, yp] + Tr[yp, y])
                s = 0.0
                for yp in range(K):
                    s += np.exp(alpha[t - 1, yp] + Tr[yp, y] - mm)
                alpha[t, y] = U[t, y] + mm + np.log(s)
    for y in range(K):
        tmp[y] = alpha[n - 1, y]
    return _logsumexp(tmp, K)


@njit(cache=True)
def backward(U, n, Tr, Erow, rowmax, beta, tmp):
    """Log backward messages beta[t, y] (beta[n-1] = 0)."""
    K = U.shape[1]
    for y in range(K):
        beta[n - 1, y] = 0.0
    for t in range(n - 2, -1, -1):
        m = -np.inf
        for y in range(K):
            m = max(m, U[t + 1, y] + beta[t + 1, y])
        for y in range(K):
            tmp[y] = np.exp(U[t + 1, y] + beta[t + 1, y] - m)
        for yp in range(K):
            s = 0.0
            for y in range(K):
                s += Erow[yp, y] * tmp[y]
            if s > TINY:
                beta[t, yp] = m + rowmax[yp] + np.log(s)
            else:
                mm = -np.inf
                for y in range(K):
                    mm = max(mm, Tr[yp, y] + U[t + 1, y] + beta[t + 1, y])
                s = 0.0
                for y in range(K):
                    s += np.exp(Tr[yp, y] + U[t + 1, y] + beta[t + 1, y] - mm)
                beta[t, yp] = mm + np.log(s)


@njit(cache=True)
def marginals(U, n, Tr, Ecol, colmax, alpha, beta, log_z, mu, edge_sum, tmp):
    """Node marginals mu[t, y] and edge marginals summed over positions, edge_sum[y', y].

    exp(alpha[t-1, y'] + Tr[y', y] + U[t, y] + beta[t, y] - log Z) is computed as
    exp(alpha - A) * exp(Tr - colmax) * exp(c_y), A = max alpha[t-1]; when c_y is
    so large that the product could lose a non-negligible term, that column is
    exponentiated term by term instead.
    """
    K = U.shape[1]
    for t in range(n):
        for y in range(K):
            mu[t, y] = np.exp(alpha[t, y] + beta[t, y] - log_z)
    edge_sum[:, :] = 0.0
    for t in range(1, n):
        A = -np.inf
        for yp in range(K):
            A = max(A, alpha[t - 1, yp])
        for yp in range(K):
            tmp[yp] = np.exp(alpha[t - 1, yp] - A)
        for y in range(K):
            ub = U[t, y] + beta[t, y]
            c = A + colmax[y] + ub - log_z
            if c < 600.0:
                ec = np.exp(c)
                for yp in range(K):
                    edge_sum[yp, y] += tmp[yp] * Ecol[yp, y] * ec
            else:
                for yp in range(K):
                    edge_sum[yp, y] += np.exp(alpha[t - 1, yp] + Tr[yp, y] + ub - log_z)


@njit(cache=True)
def transition_exp(Tr, E, ET):
    """E = exp(Tr - max Tr) and its transpose ET; returns (max Tr, range of Tr)."""
    K = Tr.shape[0]
    hi, lo = -np.inf, np.inf
    for yp in range(K):
        for y in range(K):
            hi = max(hi, Tr[yp, y])
            lo = min(lo, Tr[yp, y])
    for yp in range(K):
        for y in range(K):
            E[yp, y] = np.exp(Tr[yp, y] - hi)
            ET[y, yp] = E[yp, y]
    return hi, hi - lo


@njit(cache=True)
def scaled_forward(U, n, E, tr_max, tr_range, Ue, a, c):
    """Scaled forward messages a[t] (sum 1), normalizers c[t] and Ue = exp(U - row max); returns log Z.

    alpha[t, y] = a[t, y] prod_{s <= t} c[s] e^(m_s + M) with m_s = max U[s], M = max Tr (no M at s = 0).
    Returns NaN when a row's score range plus tr_range exceeds SCALED_RANGE (then use log space).
    """
    K = U.shape[1]
    limit = SCALED_RANGE - tr_range
    log_z = (n - 1) * tr_max
    for t in range(n):
        hi, lo = -np.inf, np.inf
        for y in range(K):
            hi = max(hi, U[t, y])
            lo = min(lo, U[t, y])
        if not hi - lo <= limit:            # also catches infinite and NaN scores
            return np.nan
        for y in range(K):
            Ue[t, y] = np.exp(U[t, y] - hi)
        if t == 0:
            for y in range(K):
                a[0, y] = Ue[0, y]
        else:
            for y in range(K):
                a[t, y] = 0.0
            for yp in range(K):
                ap = a[t - 1, yp]
                for y in range(K):
                    a[t, y] += ap * E[yp, y]
            for y in range(K):
                a[t, y] *= Ue[t, y]
        s = 0.0
        for y in range(K):
            s += a[t, y]
        inv = 1.0 / s
        for y in range(K):
            a[t, y] *= inv
        c[t] = s
        log_z += hi + np.log(s)
    return log_z


@njit(cache=True)
def scaled_backward_marginals(n, E, ET, Ue, a, c, b, mu, edge_sum, g):
    """Scaled backward messages b (beta[t] = b[t] prod_{s > t} c[s] e^(m_s + M)), node marginals mu = a b
    and edge marginals summed over positions: sum_t a[t-1, y'] E[y', y] Ue[t, y] b[t, y] / c[t]."""
    K = E.shape[0]
    edge_sum[:, :] = 0.0
    for y in range(K):
        b[n - 1, y] = 1.0
    for t in range(n - 1, 0, -1):
        inv = 1.0 / c[t]
        for y in range(K):
            g[y] = Ue[t, y] * b[t, y] * inv
        for yp in range(K):
            b[t - 1, yp] = 0.0
        for y in range(K):                  # b[t-1] = E g as a sum of columns (no reduction to serialize)
            gy = g[y]
            for yp in range(K):
                b[t - 1, yp] += ET[y, yp] * gy
        for yp in range(K):
            ap = a[t - 1, yp]
            for y in range(K):
                edge_sum[yp, y] += ap * g[y]
    for yp in range(K):
        for y in range(K):
            edge_sum[yp, y] *= E[yp, y]
    for t in range(n):
        for y in range(K):
            mu[t, y] = a[t, y] * b[t, y]


@njit(cache=True)
def sentence_inference(U, n, Tr, tables, reuse, want_marginals, mu, edge_sum):
    """log Z (and marginals if asked) of one sentence: scaled space, log space when the range is too wide.

    tables = _tables(...) of a workspace; with reuse its transition tables are those of this Tr.
    """
    alpha, beta, Ue, Ecol, Erow, E, ET, colmax, rowmax, tmp, c, info = tables
    if not reuse:
        info[0], info[1] = transition_exp(Tr, E, ET)
        info[2] = 0.0                                   # log-space tables not built yet
    log_z = scaled_forward(U, n, E, info[0], info[1], Ue, alpha, c)
    if log_z == log_z:
        if want_marginals:
            scaled_backward_marginals(n, E, ET, Ue, alpha, c, beta, mu, edge_sum, tmp)
        return log_z
    if info[2] == 0.0:
        transition_tables(Tr, Ecol, colmax, Erow, rowmax)
        info[2] = 1.0
    log_z = forward(U, n, Tr, Ecol, colmax, alpha, tmp)
    if want_marginals:
        backward(U, n, Tr, Erow, rowmax, beta, tmp)
        marginals(U, n, Tr, Ecol, colmax, alpha, beta, log_z, mu, edge_sum, tmp)
    return log_z
