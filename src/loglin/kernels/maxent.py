"""Compiled passes over Maxent data (see loglin.problem for the layout).

Every pass is written over a block of contexts [lo, hi) returning partial
sums, and a driver splits the contexts into one block per thread and reduces:
the same block function can later run on many machines.

An empty ``val`` array means 0/1 predicate values (no value array stored), and
an empty ``map_feat`` (in the score and gradient passes) means feature j is map
entry j (MaxentProblem.map_feat_or_empty).
"""
import numpy as np
from numba import njit, prange, get_num_threads
from .elementary import exp_v
from .vector import sgd_rate, shrunk_scale, sum_rows


@njit(cache=True, inline="always")
def _value(val, k):
    return 1.0 if val.shape[0] == 0 else val[k]


@njit(cache=True, inline="always")
def _feature(map_feat, j):
    return j if map_feat.shape[0] == 0 else map_feat[j]


@njit(cache=True, inline="always")
def _add_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, out):
    for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
        p = ctx_pred[k]
        v = _value(ctx_val, k)
        for j in range(map_ptr[p], map_ptr[p + 1]):
            out[map_label[j]] += v * w[_feature(map_feat, j)]


@njit(cache=True)
def context_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, out):
    """out[y] = sum_t w_t f_t(x, y)  (the log of S_w(x, y), eq. 1)."""
    out[:] = 0.0
    _add_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, out)


@njit(cache=True)
def _scatter_context(x, coef, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, acc):
    """acc[t] += sum_y coef[y] f_t(x, y)  (transpose of context_scores)."""
    for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
        p = ctx_pred[k]
        v = _value(ctx_val, k)
        for j in range(map_ptr[p], map_ptr[p + 1]):
            acc[_feature(map_feat, j)] += v * coef[map_label[j]]


@njit(cache=True)
def _max(s):
    """s.max() as a plain loop: Numba's array max pulls in generic take/reduce code that is slow to compile."""
    m = s[0]
    for y in range(1, s.shape[0]):
        v = s[y]
        if v > m or v != v:         # NaN propagates, as in np.max
            m = v
            if v != v:
                break
    return m


@njit(cache=True)
def log_softmax_inplace(s):
    """Turn scores into log-probabilities; return log T (log-sum-exp, stable)."""
    m = _max(s)
    total = 0.0
    for y in range(s.shape[0]):
        total += exp_v(s[y] - m)
    log_t = m + np.log(total)
    for y in range(s.shape[0]):
        s[y] -= log_t
    return log_t


@njit(cache=True)
def log_sum_exp_overwrite(s):
    """log T = log sum_y e^{s[y]} (stable); s is overwritten with e^{s[y] - max}.

    For passes that need only the loss: the exps go to s in a loop without a
    sum, which vectorizes (log_softmax_inplace's accumulating loop does not).
    """
    m = _max(s)
    for y in range(s.shape[0]):
        s[y] = exp_v(s[y] - m)
    total = 0.0
    for y in range(s.shape[0]):
        total += s[y]
    return m + np.log(total)


@njit(cache=True)
def softmax_inplace(s):
    """Turn scores into probabilities P_w(y|x) with one exp per label; return log T (stable).

    (log_softmax_inplace followed by exp would take two exps per label.)
    """
    m = _max(s)
    for y in range(s.shape[0]):         # exp_v and no sum in this loop: it vectorizes
        s[y] = exp_v(s[y] - m)
    total = 0.0
    for y in range(s.shape[0]):
        total += s[y]
    inv = 1.0 / total
    for y in range(s.shape[0]):
        s[y] *= inv
    return m + np.log(total)


def _blocks(n):
    nb = max(1, min(get_num_threads(), n // 256 if n >= 256 else 1))
    return np.linspace(0, n, nb + 1).astype(np.int64)


@njit(cache=True)
def empirical_feature_counts(n_features, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat,
                             obs_ptr, obs_label, obs_count):
    """N * Ptilde(f_t) = sum_{x,y} c(x, y) f_t(x, y)."""
    emp = np.zeros(n_features)
    for x in range(ctx_ptr.shape[0] - 1):
        for o in range(obs_ptr[x], obs_ptr[x + 1]):
            y = obs_label[o]
            c = obs_count[o]
            for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
                p = ctx_pred[k]
                v = _value(ctx_val, k)
                for j in range(map_ptr[p], map_ptr[p + 1]):
                    if map_label[j] == y:
                        emp[map_feat[j]] += c * v
    return emp


@njit(cache=True)
def predict_log_proba_rows(w, n_labels, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat):
    """log P_w(y|x) for every row of a (rows x predicates) CSR matrix."""
    n = ctx_ptr.shape[0] - 1
    out = np.empty((n, n_labels))
    s = np.empty(n_labels)
    for x in range(n):
        context_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, s)
        log_softmax_inplace(s)
        out[x, :] = s
    return out


@njit(cache=True)
def decision_rows(w, n_labels, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat):
    """Raw scores sum_t w_t f_t(x, y) for every row."""
    n = ctx_ptr.shape[0] - 1
    out = np.empty((n, n_labels))
    s = np.empty(n_labels)
    for x in range(n):
        context_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, s)
        out[x, :] = s
    return out


@njit(cache=True)
def sgd_epoch(w_scaled, scale, order, eta0, step0, n_ctx_total, lam, weight_per_ctx, n_labels,
              ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, obs_ptr, obs_label, obs_count):
    """One SGD pass over contexts in ``order`` (w = scale * w_scaled).

    Minimizes lam/2 ||w||^2 + mean_x weight(x) loss(x) with
    eta_k = eta0 / (1 + k / n) (Collins et al. 2008, section 7.1.3); the
    shrinkage by (1 - eta lam) is kept in ``scale`` so a step costs O(nnz(x)).
    Returns the new scale and step counter.
    """
    s = np.empty(n_labels)
    g = np.empty(n_labels)
    k = step0
    for x in order:
        eta = sgd_rate(eta0, k, n_ctx_total)
        k += 1
        context_scores(x, w_scaled, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, s)
        for y in range(n_labels):
            s[y] *= scale
        log_softmax_inplace(s)
        c = weight_per_ctx[x]
        total = 0.0
        for o in range(obs_ptr[x], obs_ptr[x + 1]):
            total += obs_count[o]
        for y in range(n_labels):
            g[y] = np.exp(s[y]) * c
        if total > 0:
            for o in range(obs_ptr[x], obs_ptr[x + 1]):
                g[obs_label[o]] -= c * obs_count[o] / total
        scale = shrunk_scale(w_scaled, scale, 1.0 - eta * lam)
        for y in range(n_labels):
            g[y] *= -eta / scale
        _scatter_context(x, g, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, w_scaled)
    return scale, k


# ---------------------------------------------------------------- dense all-pairs layout
# When feature p*K + y is (predicate p, label y) for every p and y (MaxentProblem.dense_pairs),
# w is a dense P x K block W and context_scores is  s = sum_p phi_p(x) W[p, :]  (what
# scikit-learn computes as X @ W): the map's label and feature arrays need not be read, and
# the inner loop over the K labels is contiguous, so LLVM vectorizes it (see _row). The summation order
# is the generic kernels' (predicates of x in order, labels in order), so results agree.


@njit(cache=True, inline="always")
def _row(w, p, n_labels):
    """W[p, :] as a view of w. Indexing the view by the loop label y (known >= 0) drops Numba's
    negative-index wraparound that w[p*K + y] needs, which is what lets LLVM vectorize over y
    (measured 2-3x per pass against w[p*K + y] on the CoNLL slice)."""
    base = p * n_labels
    return w[base:base + n_labels]


@njit(cache=True, inline="always")
def dense_context_scores(x, w, n_labels, ctx_ptr, ctx_pred, ctx_val, out):
    """out[y] = sum_p phi_p(x) w[p*K + y]  (context_scores for the dense layout)."""
    for y in range(n_labels):
        out[y] = 0.0
    if ctx_val.shape[0] == 0:
        for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
            row = _row(w, ctx_pred[k], n_labels)
            for y in range(n_labels):
                out[y] += row[y]
    else:
        for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
            row = _row(w, ctx_pred[k], n_labels)
            v = ctx_val[k]
            for y in range(n_labels):
                out[y] += v * row[y]


@njit(cache=True, inline="always")
def dense_scatter_context(x, coef, n_labels, ctx_ptr, ctx_pred, ctx_val, acc):
    """acc[p*K + y] += phi_p(x) coef[y]  (_scatter_context for the dense layout)."""
    if ctx_val.shape[0] == 0:
        for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
            row = _row(acc, ctx_pred[k], n_labels)
            for y in range(n_labels):
                row[y] += coef[y]
    else:
        for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
            row = _row(acc, ctx_pred[k], n_labels)
            v = ctx_val[k]
            for y in range(n_labels):
                row[y] += v * coef[y]


# ---------------------------------------------------------------- map layout, with label rows
# The passes of problems that are not all-pairs. loglin.label_rows splits each context's predicates:
# those seen with many labels are dense rows of a block W_D (wd), added as in the dense layout; the
# others go through the map (with no row, every predicate does). The split arrays are (dense_ptr,
# dense_row, dense_val, sparse_ptr, sparse_pred, sparse_val), LabelRows.context_arrays().


@njit(cache=True, inline="always")
def rows_context_scores(x, wd, w, n_labels, dense_ptr, dense_row, dense_val, sparse_ptr, sparse_pred, sparse_val,
                        map_ptr, map_label, map_feat, out):
    """context_scores for the label-rows layout (wd = W_D gathered from w)."""
    dense_context_scores(x, wd, n_labels, dense_ptr, dense_row, dense_val, out)
    _add_scores(x, w, sparse_ptr, sparse_pred, sparse_val, map_ptr, map_label, map_feat, out)


@njit(cache=True, inline="always")
def rows_scatter_context(x, coef, n_labels, dense_ptr, dense_row, dense_val, sparse_ptr, sparse_pred, sparse_val,
                         map_ptr, map_label, map_feat, acc_d, acc):
    dense_scatter_context(x, coef, n_labels, dense_ptr, dense_row, dense_val, acc_d)
    _scatter_context(x, coef, sparse_ptr, sparse_pred, sparse_val, map_ptr, map_label, map_feat, acc)


@njit(cache=True, parallel=True)
def loss_and_expectation(wd, w, bounds, n_labels, dense_ptr, dense_row, dense_val, sparse_ptr, sparse_pred,
                         sparse_val, map_ptr, map_label, map_feat, ctx_count, prob_out, want_grad):
    """sum_x c(x) log T_w(x), and (if want_grad) E_t = sum_x c(x) sum_y P(y|x) f_t(x,y).

    Returns (loss, E over the features, E over W_D's entries: the layout's from_pass combines them).
    Writes P_w(y|x) into prob_out (X x K) when it has rows; that is the Hessian's cache.
    """
    nb = bounds.shape[0] - 1
    loss = np.zeros(nb)
    acc = np.zeros((nb if want_grad else 1, w.shape[0]))
    acc_d = np.zeros((nb if want_grad else 1, wd.shape[0]))
    store = prob_out.shape[0] > 0
    for b in prange(nb):
        s = np.empty(n_labels)
        block_loss = 0.0        # one write of loss[b] per block: the blocks' entries share a cache line
        for x in range(bounds[b], bounds[b + 1]):
            rows_context_scores(x, wd, w, n_labels, dense_ptr, dense_row, dense_val, sparse_ptr, sparse_pred,
                                sparse_val, map_ptr, map_label, map_feat, s)
            c = ctx_count[x]
            if not (want_grad or store):
                block_loss += c * log_sum_exp_overwrite(s)
            else:
                block_loss += c * softmax_inplace(s)
                if store:
                    prob_out[x, :] = s
                if want_grad:
                    for y in range(n_labels):
                        s[y] *= c
                    rows_scatter_context(x, s, n_labels, dense_ptr, dense_row, dense_val, sparse_ptr, sparse_pred,
                                         sparse_val, map_ptr, map_label, map_feat, acc_d[b], acc[b])
        loss[b] = block_loss
    return loss.sum(), sum_rows(acc), sum_rows(acc_d)


@njit(cache=True, parallel=True)
def hessian_vector(vd, v, bounds, n_labels, dense_ptr, dense_row, dense_val, sparse_ptr, sparse_pred,
                   sparse_val, map_ptr, map_label, map_feat, ctx_count, prob):
    """sum_x c(x) F_x^T (diag(p) - p p^T) F_x v, with p = P_w(.|x) cached in prob (vd = W_D gathered
    from v); returns (Hv over the features, Hv over W_D's entries)."""
    nb = bounds.shape[0] - 1
    acc = np.zeros((nb, v.shape[0]))
    acc_d = np.zeros((nb, vd.shape[0]))
    for b in prange(nb):
        u = np.empty(n_labels)
        for x in range(bounds[b], bounds[b + 1]):
            rows_context_scores(x, vd, v, n_labels, dense_ptr, dense_row, dense_val, sparse_ptr, sparse_pred,
                                sparse_val, map_ptr, map_label, map_feat, u)
            mean = 0.0
            for y in range(n_labels):
                mean += prob[x, y] * u[y]
            c = ctx_count[x]
            for y in range(n_labels):
                u[y] = c * prob[x, y] * (u[y] - mean)
            rows_scatter_context(x, u, n_labels, dense_ptr, dense_row, dense_val, sparse_ptr, sparse_pred,
                                 sparse_val, map_ptr, map_label, map_feat, acc_d[b], acc[b])
    return sum_rows(acc), sum_rows(acc_d)


@njit(cache=True, parallel=True)
def hessian_diagonal(n_dense, n_map, bounds, n_labels, dense_ptr, dense_row, dense_sq, sparse_ptr, sparse_pred,
                     sparse_sq, map_ptr, map_label, map_feat, ctx_count, prob):
    """diag of sum_x c(x) F_x^T (diag(p) - p p^T) F_x: sum_x c(x) sum_y p_y (1 - p_y) f_t(x, y)^2, exact when
    feature t fires for at most one label of a context (dense_sq / sparse_sq: the squared predicate values,
    empty for 0/1). Returns (over the n_map features, over W_D's n_dense entries), like hessian_vector."""
    nb = bounds.shape[0] - 1
    acc = np.zeros((nb, n_map))
    acc_d = np.zeros((nb, n_dense))
    for b in prange(nb):
        u = np.empty(n_labels)
        for x in range(bounds[b], bounds[b + 1]):
            c = ctx_count[x]
            for y in range(n_labels):
                u[y] = c * prob[x, y] * (1.0 - prob[x, y])
            rows_scatter_context(x, u, n_labels, dense_ptr, dense_row, dense_sq, sparse_ptr, sparse_pred,
                                 sparse_sq, map_ptr, map_label, map_feat, acc_d[b], acc[b])
    return sum_rows(acc), sum_rows(acc_d)
