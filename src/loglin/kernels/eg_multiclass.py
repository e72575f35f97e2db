"""Compiled EG passes for multi-class log-linear and max-margin models (Collins et al. 2008).

Blocks are the observed events of a MaxentProblem: entry j of the observed
label list is (context x_j, label y_j, count c_j). Its dual variables
u_j (a distribution over the K labels) are stored as log u_j, so that the
max-margin duals, whose optimum has zeros, never underflow to a dead 0.

With w = C w(u) the primal weights and v_y = w . f(x_j, y), an EG step is

    Q_LL:  log u_j' = (1 - eta) log u_j + eta v - log Z        (grad/c_j = 1 + log u + w.g)
    Q_MM:  log u_j' = log u_j + eta (e + v) - log Z,  e_y = [y != y_j]

and the exact change of Q = sum_j c_j term_j (+/-) + C/2 ||w(u)||^2 is
    c_j (term' - term) - c_j sum_y d_y v_y + C/2 c_j^2 ||sum_y d_y f(x_j, y)||^2,   d = u' - u.
"""
import numpy as np
from numba import njit, prange

from .eg import eg_proposal, improves, next_rate
from .maxent import _scatter_context, _value, context_scores


@njit(cache=True)
def _block_term(logu, yj, K, mm):
    """LL: sum_y u log u;  MM: sum_y u_y e_y (expected 0/1 loss)."""
    s = 0.0
    for y in range(K):
        if mm:
            if y != yj:
                s += np.exp(logu[y])
        else:
            s += np.exp(logu[y]) * logu[y]
    return s


@njit(cache=True)
def _propose(logu, v, yj, eta, mm, out, G, scratch):
    """The shared EG step (kernels.eg.eg_proposal) with G_y = log u_y - v_y (LL) or -(e_y + v_y) (MM)."""
    K = v.shape[0]
    for y in range(K):
        if mm:
            G[y] = -(v[y] + (1.0 if y != yj else 0.0))
        else:
            G[y] = logu[y] - v[y]
    eg_proposal(logu, G, eta, 0.0, out, scratch)


@njit(cache=True)
def _sq_norm_tracked(x, coef, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, d, mark, stamp, touched):
    """||sum_y coef[y] f(x, y)||^2 with features shared between map entries handled exactly."""
    m = 0
    for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
        p = ctx_pred[k]
        val = _value(ctx_val, k)
        for j in range(map_ptr[p], map_ptr[p + 1]):
            f = map_feat[j]
            if mark[f] != stamp:
                mark[f] = stamp
                touched[m] = f
                m += 1
                d[f] = 0.0
            d[f] += val * coef[map_label[j]]
    s = 0.0
    for i in range(m):
        s += d[touched[i]] * d[touched[i]]
    return s


@njit(cache=True)
def online_pass(picks, eta, adapt, max_trial, C, mm, wu, obs_ctx, obs_label, obs_count, ctx_ptr, ctx_pred, ctx_val,
                map_ptr, map_label, map_feat, logu, term, max_width):
    """EG updates of the blocks in ``picks`` in that order, halving eta[j] until the dual improves
    (x1.05 after an accepted step when ``adapt``; kernels.eg.next_rate). Returns (accepted, trials, sum of
    dual changes). D-LL on a MaxentProblem is also solved by the ``eg`` solver (merged contexts, O(|Y|)
    change (54)); this pass serves D-MM and the dual states of loglin.structured.multiclass."""
    K = logu.shape[1]
    n_feat = wu.shape[0]
    v = np.empty(K)
    new = np.empty(K)
    G = np.empty(K)
    scratch = np.empty(K)
    delta = np.empty(K)
    d = np.zeros(n_feat)
    growth = 1.05 if adapt else 1.0
    mark = np.full(n_feat, -1, dtype=np.int64)
    touched = np.empty(max(max_width, 1), dtype=np.int64)
    accepted, trials, total = 0, 0, 0.0
    stamp = 0
    sign = -1.0 if mm else 1.0
    for p_ in range(picks.shape[0]):
        j = picks[p_]
        c = obs_count[j]
        if c == 0.0:
            continue
        x, yj = obs_ctx[j], obs_label[j]
        context_scores(x, wu, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, v)
        for y in range(K):
            v[y] *= C
        for _ in range(max_trial):
            trials += 1
            _propose(logu[j], v, yj, eta[j], mm, new, G, scratch)
            lin = 0.0
            for y in range(K):
                delta[y] = np.exp(new[y]) - np.exp(logu[j, y])
                lin += delta[y] * v[y]
            stamp += 1
            sq = _sq_norm_tracked(x, delta, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, d, mark,
                                  stamp, touched)
            new_term = _block_term(new, yj, K, mm)
            change = sign * c * (new_term - term[j]) - c * lin + 0.5 * C * c * c * sq
            tol = 1e-13 * (abs(c * new_term) + abs(c * term[j]) + c * abs(lin) + 1.0)
            ok = improves(change, tol)
            next_rate(eta, j, ok, growth)
            if ok:
                for y in range(K):
                    delta[y] *= -c
                    logu[j, y] = new[y]
                _scatter_context(x, delta, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, wu)
                term[j] = new_term
                total += change
                accepted += 1
                break
    return accepted, trials, total


@njit(cache=True, parallel=True)
def batch_proposal(eta, C, mm, wu, bounds, obs_ctx, obs_label, obs_count, ctx_ptr, ctx_pred, ctx_val, map_ptr,
                   map_label, map_feat, logu, out_logu, out_term):
    """All blocks updated from the same w(u) (Figure 1); returns sum_j c_j sum_y u_jy' f(x_j, y).

    eta = 0 recomputes terms and expectations of the current u.
    """
    nb = bounds.shape[0] - 1
    K = logu.shape[1]
    acc = np.zeros((nb, wu.shape[0]))
    for b in prange(nb):
        v = np.empty(K)
        new = np.empty(K)
        G = np.empty(K)
        scratch = np.empty(K)
        for j in range(bounds[b], bounds[b + 1]):
            x, yj, c = obs_ctx[j], obs_label[j], obs_count[j]
            if eta != 0.0:
                context_scores(x, wu, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, v)
                for y in range(K):
                    v[y] *= C
                _propose(logu[j], v, yj, eta, mm, new, G, scratch)
            else:
                for y in range(K):
                    new[y] = logu[j, y]
            for y in range(K):
                out_logu[j, y] = new[y]
            out_term[j] = _block_term(new, yj, K, mm)
            for y in range(K):
                v[y] = c * np.exp(new[y])
            _scatter_context(x, v, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, acc[b])
    out = np.zeros(wu.shape[0])
    for b in range(nb):
        out += acc[b]
    return out


@njit(cache=True, parallel=True)
def hinge_and_subgradient(w, bounds, K, obs_ctx, obs_label, obs_count, ctx_ptr, ctx_pred, ctx_val, map_ptr,
                          map_label, map_feat, want_grad):
    """sum_j c_j max_y [e_y + w.f(x_j, y) - w.f(x_j, y_j)] (Crammer-Singer) and sum_j c_j f(x_j, yhat_j)."""
    nb = bounds.shape[0] - 1
    loss = np.zeros(nb)
    acc = np.zeros((nb if want_grad else 1, w.shape[0]))
    for b in prange(nb):
        v = np.empty(K)
        coef = np.zeros(K)
        for j in range(bounds[b], bounds[b + 1]):
            x, yj, c = obs_ctx[j], obs_label[j], obs_count[j]
            context_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, v)
            best, arg = -np.inf, 0
            for y in range(K):
                s = v[y] + (1.0 if y != yj else 0.0)
                if s > best:
                    best, arg = s, y
            loss[b] += c * (best - v[yj])
            if want_grad:
                coef[arg] = c
                _scatter_context(x, coef, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, acc[b])
                coef[arg] = 0.0
    out = np.zeros(w.shape[0])
    if want_grad:
        for b in range(nb):
            out += acc[b]
    return loss.sum(), out


@njit(cache=True)
def max_row_width(ctx_ptr, ctx_pred, map_ptr):
    """Largest number of map entries a single context touches."""
    best = 0
    for x in range(ctx_ptr.shape[0] - 1):
        m = 0
        for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
            p = ctx_pred[k]
            m += map_ptr[p + 1] - map_ptr[p]
        best = max(best, m)
    return best
