"""Compiled linear-chain passes (Collins et al. 2008, section 4; Lafferty et al. 2001).

Layout (see loglin.structured.problem): sentence i holds tokens
``seq_ptr[i] .. seq_ptr[i+1]``; token t has attributes
``tok_attr[tok_ptr[t]:tok_ptr[t+1]]`` (values ``tok_val``, empty = all 1);
an attribute map (``map_ptr, map_label, map_feat``) sends attribute a to
its (label, state feature) pairs, exactly like the predicate map of a
MaxentProblem. Transition weights follow the ``n_state`` state features as a
K x K block, w[n_state + y' K + y].

A labelling y of a sentence of length n is the set of parts
node (t, y_t), t = 0..n-1, and edge (t, y_{t-1}, y_t), t = 1..n-1.
Every pass takes *potentials* ``U`` (n x K, node parts) and ``Tr``
(K x K, edge parts shared by all positions: the edge features of a chain CRF
are the transition indicators, so the EG variables s_i keep that form too).

Forward-backward is carried in log space: alpha, beta are log-messages. The
K x K inner product of a step is done on exp(Tr - max) with the previous
message shifted by its maximum, so no term overflows; a sum that underflows
(a label every path reaches only with probability < 1e-280 relative to the
best one) is recomputed by an exact log-sum-exp.
"""
import numpy as np
from numba import njit, prange

TINY = 1e-280


@njit(cache=True, inline="always")
def _value(val, k):
    return 1.0 if val.shape[0] == 0 else val[k]


@njit(cache=True)
def unary_scores(lo, hi, w, scale, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, U):
    """U[t - lo, y] = scale * sum of state weights firing at token t with label y."""
    K = U.shape[1]
    for t in range(lo, hi):
        r = t - lo
        for y in range(K):
            U[r, y] = 0.0
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = tok_attr[k]
            v = scale * _value(tok_val, k)
            for j in range(map_ptr[a], map_ptr[a + 1]):
                U[r, map_label[j]] += v * w[map_feat[j]]


@njit(cache=True)
def scatter_node(lo, hi, coef, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, acc):
    """acc[t] += sum over tokens of coef[t - lo, y] f_t(token, y)  (transpose of unary_scores)."""
    for t in range(lo, hi):
        r = t - lo
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = tok_attr[k]
            v = _value(tok_val, k)
            for j in range(map_ptr[a], map_ptr[a + 1]):
                acc[map_feat[j]] += v * coef[r, map_label[j]]


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
def sequence_score(U, n, Tr, labels, lo):
    """sum_t U[t, y_t] + sum_t Tr[y_{t-1}, y_t] for the labelling labels[lo:lo+n]."""
    s = U[0, labels[lo]]
    for t in range(1, n):
        s += U[t, labels[lo + t]] + Tr[labels[lo + t - 1], labels[lo + t]]
    return s


@njit(cache=True)
def viterbi(U, n, Tr, back, delta, out, lo):
    """Best labelling into out[lo:lo+n]; returns its score."""
    K = U.shape[1]
    for y in range(K):
        delta[0, y] = U[0, y]
    for t in range(1, n):
        for y in range(K):
            best, arg = -np.inf, 0
            for yp in range(K):
                v = delta[t - 1, yp] + Tr[yp, y]
                if v > best:
                    best, arg = v, yp
            delta[t, y] = best + U[t, y]
            back[t, y] = arg
    best, arg = -np.inf, 0
    for y in range(K):
        if delta[n - 1, y] > best:
            best, arg = delta[n - 1, y], y
    out[lo + n - 1] = arg
    for t in range(n - 1, 0, -1):
        arg = back[t, arg]
        out[lo + t - 1] = arg
    return best


@njit(cache=True)
def add_hamming(U, n, gold, lo, weight):
    """Loss-augment node potentials: U[t, y] += weight * [y != y_t] (per-token Hamming loss)."""
    K = U.shape[1]
    for t in range(n):
        g = gold[lo + t]
        for y in range(K):
            if y != g:
                U[t, y] += weight


# ------------------------------------------------------------------ batch passes
@njit(cache=True, parallel=True)
def loss_and_expectation(w, n_state, K, bounds, max_len, seq_ptr, tok_ptr, tok_attr, tok_val,
                         map_ptr, map_label, map_feat, gold, weight, want_grad):
    """sum_i c_i (log Z_i - score(y_i)) and (if want_grad) sum_i c_i E_{p(y|x_i)} f(x_i, y)."""
    nb = bounds.shape[0] - 1
    n_feat = w.shape[0]
    Tr = np.ascontiguousarray(w[n_state:n_state + K * K]).reshape((K, K))
    Ecol = np.empty((K, K))
    Erow = np.empty((K, K))
    colmax = np.empty(K)
    rowmax = np.empty(K)
    transition_tables(Tr, Ecol, colmax, Erow, rowmax)
    loss = np.zeros(nb)
    acc = np.zeros((nb if want_grad else 1, n_feat))
    for b in prange(nb):
        U = np.empty((max_len, K))
        alpha = np.empty((max_len, K))
        beta = np.empty((max_len, K))
        mu = np.empty((max_len, K))
        edge = np.empty((K, K))
        tmp = np.empty(K)
        for i in range(bounds[b], bounds[b + 1]):
            lo, hi = seq_ptr[i], seq_ptr[i + 1]
            n = hi - lo
            c = weight[i]
            if n == 0 or c == 0.0:
                continue
            unary_scores(lo, hi, w, 1.0, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, U)
            log_z = forward(U, n, Tr, Ecol, colmax, alpha, tmp)
            loss[b] += c * (log_z - sequence_score(U, n, Tr, gold, lo))
            if want_grad:
                backward(U, n, Tr, Erow, rowmax, beta, tmp)
                marginals(U, n, Tr, Ecol, colmax, alpha, beta, log_z, mu, edge, tmp)
                if c != 1.0:
                    for t in range(n):
                        for y in range(K):
                            mu[t, y] *= c
                scatter_node(lo, hi, mu, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, acc[b])
                for yp in range(K):
                    for y in range(K):
                        acc[b, n_state + yp * K + y] += c * edge[yp, y]
    expect = np.zeros(n_feat)
    if want_grad:
        for b in range(nb):
            expect += acc[b]
    return loss.sum(), expect


@njit(cache=True, parallel=True)
def hinge_and_subgradient(w, n_state, K, bounds, max_len, seq_ptr, tok_ptr, tok_attr, tok_val,
                          map_ptr, map_label, map_feat, gold, weight, want_grad):
    """sum_i c_i max_y [hamming(y_i, y) + score(y) - score(y_i)] (eq. 3) and sum_i c_i f(x_i, y_hat_i)."""
    nb = bounds.shape[0] - 1
    n_feat = w.shape[0]
    Tr = np.ascontiguousarray(w[n_state:n_state + K * K]).reshape((K, K))
    loss = np.zeros(nb)
    acc = np.zeros((nb if want_grad else 1, n_feat))
    pred = np.empty(gold.shape[0], dtype=np.int32)
    for b in prange(nb):
        U = np.empty((max_len, K))
        delta = np.empty((max_len, K))
        back = np.empty((max_len, K), dtype=np.int32)
        onehot = np.zeros((max_len, K))
        for i in range(bounds[b], bounds[b + 1]):
            lo, hi = seq_ptr[i], seq_ptr[i + 1]
            n = hi - lo
            c = weight[i]
            if n == 0 or c == 0.0:
                continue
            unary_scores(lo, hi, w, 1.0, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, U)
            gold_score = sequence_score(U, n, Tr, gold, lo)
            add_hamming(U, n, gold, lo, 1.0)
            best = viterbi(U, n, Tr, back, delta, pred, lo)
            loss[b] += c * (best - gold_score)
            if want_grad:
                for t in range(n):
                    onehot[t, pred[lo + t]] = c
                scatter_node(lo, hi, onehot, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, acc[b])
                for t in range(n):
                    onehot[t, pred[lo + t]] = 0.0
                for t in range(1, n):
                    acc[b, n_state + pred[lo + t - 1] * K + pred[lo + t]] += c
    expect = np.zeros(n_feat)
    if want_grad:
        for b in range(nb):
            expect += acc[b]
    return loss.sum(), expect


@njit(cache=True, parallel=True)
def decode_all(w, n_state, K, bounds, max_len, seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr, map_label,
               map_feat, out):
    """Viterbi labelling of every sentence into out (one label per token)."""
    nb = bounds.shape[0] - 1
    Tr = np.ascontiguousarray(w[n_state:n_state + K * K]).reshape((K, K))
    for b in prange(nb):
        U = np.empty((max_len, K))
        delta = np.empty((max_len, K))
        back = np.empty((max_len, K), dtype=np.int32)
        for i in range(bounds[b], bounds[b + 1]):
            lo, hi = seq_ptr[i], seq_ptr[i + 1]
            if hi > lo:
                unary_scores(lo, hi, w, 1.0, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, U)
                viterbi(U, hi - lo, Tr, back, delta, out, lo)


@njit(cache=True)
def empirical_counts(n_feat, n_state, K, seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat,
                     gold, weight):
    """sum_i c_i f(x_i, y_i)."""
    emp = np.zeros(n_feat)
    for i in range(seq_ptr.shape[0] - 1):
        c = weight[i]
        for t in range(seq_ptr[i], seq_ptr[i + 1]):
            g = gold[t]
            for k in range(tok_ptr[t], tok_ptr[t + 1]):
                a = tok_attr[k]
                v = c * _value(tok_val, k)
                for j in range(map_ptr[a], map_ptr[a + 1]):
                    if map_label[j] == g:
                        emp[map_feat[j]] += v
            if t > seq_ptr[i]:
                emp[n_state + gold[t - 1] * K + g] += c
    return emp


@njit(cache=True)
def sgd_epoch(v, scale, order, eta0, step0, n_total, lam, n_state, K, max_len, seq_ptr, tok_ptr, tok_attr,
              tok_val, map_ptr, map_label, map_feat, gold, weight):
    """One SGD pass, w = scale * v, minimizing sum_i c_i loss_i + lam/2 ||w||^2 (Collins' scale).

    Step on example i: w -= eta (c_i grad loss_i + lam/n w) with eta = eta0/(1 + k/n) (section 7.1.3);
    the shrinkage is kept in ``scale`` so a step costs O(size of sentence i).
    """
    U = np.empty((max_len, K))
    alpha = np.empty((max_len, K))
    beta = np.empty((max_len, K))
    mu = np.empty((max_len, K))
    edge = np.empty((K, K))
    Tr = np.empty((K, K))
    Ecol = np.empty((K, K))
    Erow = np.empty((K, K))
    colmax = np.empty(K)
    rowmax = np.empty(K)
    tmp = np.empty(K)
    k = step0
    for s_ in range(order.shape[0]):
        i = order[s_]
        lo, hi = seq_ptr[i], seq_ptr[i + 1]
        n = hi - lo
        eta = eta0 / (1.0 + k / n_total)
        k += 1
        scale *= (1.0 - eta * lam / n_total)
        if scale < 1e-9:
            v *= scale
            scale = 1.0
        if n == 0:
            continue
        for yp in range(K):
            for y in range(K):
                Tr[yp, y] = scale * v[n_state + yp * K + y]
        transition_tables(Tr, Ecol, colmax, Erow, rowmax)
        unary_scores(lo, hi, v, scale, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, U)
        log_z = forward(U, n, Tr, Ecol, colmax, alpha, tmp)
        backward(U, n, Tr, Erow, rowmax, beta, tmp)
        marginals(U, n, Tr, Ecol, colmax, alpha, beta, log_z, mu, edge, tmp)
        step = eta * weight[i] / scale
        for t in range(n):
            mu[t, gold[lo + t]] -= 1.0
            for y in range(K):
                mu[t, y] *= -step
        scatter_node(lo, hi, mu, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, v)
        for t in range(1, n):
            edge[gold[lo + t - 1], gold[lo + t]] -= 1.0
        for yp in range(K):
            for y in range(K):
                v[n_state + yp * K + y] -= step * edge[yp, y]
    return scale, k


# ------------------------------------------------------------------ EG on the dual (section 4, Figure 3)
@njit(cache=True)
def scatter_tracked(lo, hi, coef, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, d, mark, stamp,
                    touched, m):
    """d[t] += sum coef[t - lo, y] f_t(token, y), recording first-touched features; returns the new count."""
    for t in range(lo, hi):
        r = t - lo
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = tok_attr[k]
            v = _value(tok_val, k)
            for j in range(map_ptr[a], map_ptr[a + 1]):
                f = map_feat[j]
                if mark[f] != stamp:
                    mark[f] = stamp
                    touched[m] = f
                    m += 1
                    d[f] = 0.0
                d[f] += v * coef[r, map_label[j]]
    return m


@njit(cache=True)
def part_values(S, E, n, mu, edge, log_z, gold, lo, mm):
    """LL: sum_y u_y log u_y = sum_r mu_r s_r - log Z;  MM: expected Hamming loss sum_r mu_r e_r."""
    K = S.shape[1]
    v = 0.0
    if mm:
        for t in range(n):
            g = gold[lo + t]
            for y in range(K):
                if y != g:
                    v += mu[t, y]
        return v
    for t in range(n):
        for y in range(K):
            v += mu[t, y] * S[t, y]
    for yp in range(K):
        for y in range(K):
            v += edge[yp, y] * E[yp, y]
    return v - log_z


@njit(cache=True)
def _sentence_marginals(S, E, n, alpha, beta, mu, edge, tabs, tmp):
    K = S.shape[1]
    Ecol, Erow, colmax, rowmax = tabs[0], tabs[1], tabs[2, 0], tabs[3, 0]
    transition_tables(E, Ecol, colmax, Erow, rowmax)
    log_z = forward(S, n, E, Ecol, colmax, alpha, tmp)
    backward(S, n, E, Erow, rowmax, beta, tmp)
    marginals(S, n, E, Ecol, colmax, alpha, beta, log_z, mu, edge, tmp)
    return log_z


@njit(cache=True)
def _proposal(i, eta, C, mm, wu, n_state, seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat,
              gold, s_node, s_edge, S, E, Q, alpha, beta, mu, edge, tabs, tmp):
    """s' = s - eta g with g_r = s_r - w.f(x_i, r) (Q_LL) or g_r = -e_r - w.f(x_i, r) (Q_MM), w = C w(u);
    then the marginals of p(s'). Returns (n, log Z')."""
    lo, hi = seq_ptr[i], seq_ptr[i + 1]
    n = hi - lo
    K = S.shape[1]
    if eta == 0.0:                      # just the marginals of the current s
        for t in range(n):
            for y in range(K):
                S[t, y] = s_node[lo + t, y]
        for yp in range(K):
            for y in range(K):
                E[yp, y] = s_edge[i, yp, y]
        return n, _sentence_marginals(S, E, n, alpha, beta, mu, edge, tabs, tmp)
    unary_scores(lo, hi, wu, C, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, Q)
    for t in range(n):
        g = gold[lo + t]
        for y in range(K):
            s = s_node[lo + t, y]
            if mm:
                S[t, y] = s + eta * (Q[t, y] + (1.0 if y != g else 0.0))
            else:
                S[t, y] = s - eta * (s - Q[t, y])
    for yp in range(K):
        for y in range(K):
            q = C * wu[n_state + yp * K + y]
            s = s_edge[i, yp, y]
            E[yp, y] = s + eta * q if mm else s - eta * (s - q)
    log_z = _sentence_marginals(S, E, n, alpha, beta, mu, edge, tabs, tmp)
    return n, log_z


@njit(cache=True)
def eg_online_pass(picks, eta, adapt, max_trial, C, mm, wu, n_state, max_len, max_touch, seq_ptr, tok_ptr,
                   tok_attr, tok_val, map_ptr, map_label, map_feat, gold, weight, s_node, s_edge, mu_node,
                   mu_edge, term):
    """EG updates of the sentences in ``picks``, one at a time (Figures 2-3, section 7 step sizes).

    For each pick i: propose s_i' with rate eta[i]; the dual change
        c_i (term_i' - term_i) [minus for MM] + C w(u).delta + C/2 ||delta||^2,
        delta = c_i sum_r (mu_r - mu_r') f(x_i, r)   (the change of w(u)),
    is exact; if it is not an improvement halve eta[i] and retry (up to
    max_trial times), otherwise accept and (if adapt) multiply eta[i] by 1.05.
    Returns (accepted, trials, sum of dual changes).
    """
    K = s_node.shape[1]
    n_feat = wu.shape[0]
    S = np.empty((max_len, K))
    Q = np.empty((max_len, K))
    alpha = np.empty((max_len, K))
    beta = np.empty((max_len, K))
    mu = np.empty((max_len, K))
    coef = np.empty((max_len, K))
    E = np.empty((K, K))
    edge = np.empty((K, K))
    tabs = np.empty((4, K, K))
    tmp = np.empty(K)
    d = np.zeros(n_feat)
    mark = np.full(n_feat, -1, dtype=np.int64)
    touched = np.empty(max_touch + K * K, dtype=np.int64)
    accepted, trials, total = 0, 0, 0.0
    stamp = 0
    sign = -1.0 if mm else 1.0
    for p_ in range(picks.shape[0]):
        i = picks[p_]
        lo = seq_ptr[i]
        c = weight[i]
        if seq_ptr[i + 1] == lo or c == 0.0:
            continue
        for _ in range(max_trial):
            trials += 1
            n, log_z = _proposal(i, eta[i], C, mm, wu, n_state, seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr,
                                 map_label, map_feat, gold, s_node, s_edge, S, E, Q, alpha, beta, mu, edge,
                                 tabs, tmp)
            new_term = part_values(S, E, n, mu, edge, log_z, gold, lo, mm)
            for t in range(n):
                for y in range(K):
                    coef[t, y] = c * (mu_node[lo + t, y] - mu[t, y])
            stamp += 1
            m = scatter_tracked(lo, lo + n, coef, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat,
                                d, mark, stamp, touched, 0)
            for yp in range(K):
                for y in range(K):
                    f = n_state + yp * K + y
                    mark[f] = stamp
                    touched[m] = f
                    m += 1
                    d[f] = c * (mu_edge[i, yp, y] - edge[yp, y])
            lin, sq = 0.0, 0.0
            for k in range(m):
                f = touched[k]
                lin += wu[f] * d[f]
                sq += d[f] * d[f]
            dterm = sign * c * (new_term - term[i])
            change = dterm + C * lin + 0.5 * C * sq
            tol = 1e-13 * (abs(c * new_term) + abs(c * term[i]) + C * abs(lin) + 1.0)
            if np.isfinite(change) and change <= tol:
                for k in range(m):
                    f = touched[k]
                    wu[f] += d[f]
                for t in range(n):
                    for y in range(K):
                        s_node[lo + t, y] = S[t, y]
                        mu_node[lo + t, y] = mu[t, y]
                for yp in range(K):
                    for y in range(K):
                        s_edge[i, yp, y] = E[yp, y]
                        mu_edge[i, yp, y] = edge[yp, y]
                term[i] = new_term
                total += change
                accepted += 1
                if adapt:
                    eta[i] *= 1.05
                break
            eta[i] *= 0.5
    return accepted, trials, total


@njit(cache=True, parallel=True)
def eg_batch_proposal(eta, C, mm, wu, n_state, bounds, max_len, seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr,
                      map_label, map_feat, gold, weight, s_node, s_edge, out_s_node, out_s_edge, out_mu_node,
                      out_mu_edge, out_term):
    """All sentences updated at once from the same w(u) (Figure 1); returns sum_i c_i E_{p(s_i')}[f].

    With eta = 0 this just computes the marginals and terms of the current s.
    """
    nb = bounds.shape[0] - 1
    K = s_node.shape[1]
    n_feat = wu.shape[0]
    acc = np.zeros((nb, n_feat))
    for b in prange(nb):
        S = np.empty((max_len, K))
        Q = np.empty((max_len, K))
        alpha = np.empty((max_len, K))
        beta = np.empty((max_len, K))
        mu = np.empty((max_len, K))
        E = np.empty((K, K))
        edge = np.empty((K, K))
        tabs = np.empty((4, K, K))
        tmp = np.empty(K)
        for i in range(bounds[b], bounds[b + 1]):
            lo = seq_ptr[i]
            if seq_ptr[i + 1] == lo:
                out_term[i] = 0.0
                continue
            n, log_z = _proposal(i, eta, C, mm, wu, n_state, seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr,
                                 map_label, map_feat, gold, s_node, s_edge, S, E, Q, alpha, beta, mu, edge,
                                 tabs, tmp)
            out_term[i] = part_values(S, E, n, mu, edge, log_z, gold, lo, mm)
            c = weight[i]
            for t in range(n):
                for y in range(K):
                    out_s_node[lo + t, y] = S[t, y]
                    out_mu_node[lo + t, y] = mu[t, y]
                    Q[t, y] = c * mu[t, y]
            for yp in range(K):
                for y in range(K):
                    out_s_edge[i, yp, y] = E[yp, y]
                    out_mu_edge[i, yp, y] = edge[yp, y]
                    acc[b, n_state + yp * K + y] += c * edge[yp, y]
            scatter_node(lo, lo + n, Q, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, acc[b])
    expect = np.zeros(n_feat)
    for b in range(nb):
        expect += acc[b]
    return expect


@njit(cache=True)
def touch_bound(seq_ptr, tok_ptr, tok_attr, map_ptr):
    """Largest number of map entries one sentence touches (size of the EG scratch list)."""
    best = 0
    for i in range(seq_ptr.shape[0] - 1):
        m = 0
        for t in range(seq_ptr[i], seq_ptr[i + 1]):
            for k in range(tok_ptr[t], tok_ptr[t + 1]):
                a = tok_attr[k]
                m += map_ptr[a + 1] - map_ptr[a]
        best = max(best, m)
    return best


@njit(cache=True)
def simplex_qp_smo(G, b, a, tol, max_steps):
    """min 1/2 a'Ga - b'a over {a >= 0, sum a = const} by pairwise (SMO) steps; a updated in place."""
    m = b.shape[0]
    g = G @ a - b
    steps = 0
    for steps in range(max_steps):
        i, j = 0, -1
        for k in range(m):
            if g[k] < g[i]:
                i = k
            if a[k] > 0.0 and (j < 0 or g[k] > g[j]):
                j = k
        scale = 1.0
        for k in range(m):
            scale = max(scale, abs(g[k]))
        if j < 0 or g[j] - g[i] <= tol * scale:
            break
        curv = G[i, i] + G[j, j] - 2.0 * G[i, j]
        t = a[j] if curv <= 0.0 else min(a[j], (g[j] - g[i]) / curv)
        a[i] += t
        a[j] -= t
        for k in range(m):
            g[k] += t * (G[k, i] - G[k, j])
    return steps
