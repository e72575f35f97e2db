"""Compiled passes for first-order projective dependency parsing (Collins et al. 2008, section 8).

Parts are arcs r = (h, m): head h in 0..n (0 = the artificial root), modifier
m in 1..n. A sentence with n words owns a block of (n+1)^2 arc *slots*
starting at ``arc_off[i]``; slot h (n+1) + m holds arc (h, m) (slots with
m = 0 or h = m are unused and have no features). ``feat_ptr`` / ``feat_idx``
give each slot's feature ids (CSR over slots, all values 1).

* :func:`inside` / :func:`outside_marginals`: Eisner's (1996) O(n^3) chart in
  log space - log Z over all projective trees and the arc marginals
  mu[h, m] = P(arc (h, m) | x) (the backward pass runs on chart-item
  probabilities, so it needs one exp per split point and no logs);
* :func:`eisner`: the best projective tree (the same chart with max);
* batched passes over sentences (losses, expectations, decoding), the SGD
  epoch and the EG steps on the dual (part-based EG, Figure 3 / Lemma 1).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

NEG_INF = -np.inf


# ------------------------------------------------------------------ one sentence
@njit(cache=True)
def arc_scores(w, scale, i, arc_off, sent_ptr, feat_ptr, feat_idx, S):
    """S[h, m] = scale * w . f(x_i, h, m) for every arc of sentence i; returns n."""
    n = sent_ptr[i + 1] - sent_ptr[i]
    base = arc_off[i]
    for h in range(n + 1):
        for m in range(n + 1):
            r = base + h * (n + 1) + m
            acc = 0.0
            for j in range(feat_ptr[r], feat_ptr[r + 1]):
                acc += w[feat_idx[j]]
            S[h, m] = scale * acc
    return n


@njit(cache=True)
def inside(S, n, IL, IR, CL, CR, B):
    """log Z of the arc-factored distribution over projective trees rooted at 0.

    C[s, t] complete spans (L: head t, R: head s), I[s, t] incomplete spans
    (an arc between s and t); B[s, t] = log sum_r exp(CR[s, r] + CL[r+1, t]).
    """
    for s in range(n + 1):
        CL[s, s] = 0.0
        CR[s, s] = 0.0
    for k in range(1, n + 1):
        for s in range(n + 1 - k):
            t = s + k
            mx = NEG_INF
            for r in range(s, t):
                v = CR[s, r] + CL[r + 1, t]
                if v > mx:
                    mx = v
            if mx == NEG_INF:
                b = NEG_INF
            else:
                acc = 0.0
                for r in range(s, t):
                    acc += np.exp(CR[s, r] + CL[r + 1, t] - mx)
                b = mx + np.log(acc)
            B[s, t] = b
            IR[s, t] = b + S[s, t]
            IL[s, t] = b + S[t, s] if s > 0 else NEG_INF
            mx = NEG_INF
            for r in range(s, t):
                v = CL[s, r] + IL[r, t]
                if v > mx:
                    mx = v
            if mx == NEG_INF:
                CL[s, t] = NEG_INF
            else:
                acc = 0.0
                for r in range(s, t):
                    acc += np.exp(CL[s, r] + IL[r, t] - mx)
                CL[s, t] = mx + np.log(acc)
            mx = NEG_INF
            for r in range(s + 1, t + 1):
                v = IR[s, r] + CR[r, t]
                if v > mx:
                    mx = v
            acc = 0.0
            for r in range(s + 1, t + 1):
                acc += np.exp(IR[s, r] + CR[r, t] - mx)
            CR[s, t] = mx + np.log(acc)
    return CR[0, n]


@njit(cache=True)
def outside_marginals(n, IL, IR, CL, CR, B, mIL, mIR, mCL, mCR, mu):
    """Arc marginals mu[h, m] by back-propagating chart-item probabilities (d log Z / d S)."""
    for s in range(n + 1):
        for t in range(n + 1):
            mIL[s, t] = 0.0
            mIR[s, t] = 0.0
            mCL[s, t] = 0.0
            mCR[s, t] = 0.0
            mu[s, t] = 0.0
    mCR[0, n] = 1.0
    for k in range(n, 0, -1):
        for s in range(n + 1 - k):
            t = s + k
            g = mCL[s, t]
            if g > 0.0:
                for r in range(s, t):
                    p = g * np.exp(CL[s, r] + IL[r, t] - CL[s, t])
                    mCL[s, r] += p
                    mIL[r, t] += p
            g = mCR[s, t]
            if g > 0.0:
                for r in range(s + 1, t + 1):
                    p = g * np.exp(IR[s, r] + CR[r, t] - CR[s, t])
                    mIR[s, r] += p
                    mCR[r, t] += p
            mu[t, s] = mIL[s, t]
            mu[s, t] = mIR[s, t]
            g = mIL[s, t] + mIR[s, t]
            if g > 0.0:
                for r in range(s, t):
                    p = g * np.exp(CR[s, r] + CL[r + 1, t] - B[s, t])
                    mCR[s, r] += p
                    mCL[r + 1, t] += p


@njit(cache=True)
def eisner(S, n, IL, IR, CL, CR, back, heads):
    """Best projective tree: heads[m - 1] = head of word m; returns its score.

    back[0..3, s, t] are the split points of CL, CR, IL / IR (shared), kept for the traceback.
    """
    for s in range(n + 1):
        CL[s, s] = 0.0
        CR[s, s] = 0.0
    for k in range(1, n + 1):
        for s in range(n + 1 - k):
            t = s + k
            best, arg = NEG_INF, s
            for r in range(s, t):
                v = CR[s, r] + CL[r + 1, t]
                if v > best:
                    best, arg = v, r
            back[2, s, t] = arg
            IR[s, t] = best + S[s, t]
            IL[s, t] = best + S[t, s] if s > 0 else NEG_INF
            best, arg = NEG_INF, s
            for r in range(s, t):
                v = CL[s, r] + IL[r, t]
                if v > best:
                    best, arg = v, r
            CL[s, t] = best
            back[0, s, t] = arg
            best, arg = NEG_INF, t
            for r in range(s + 1, t + 1):
                v = IR[s, r] + CR[r, t]
                if v > best:
                    best, arg = v, r
            CR[s, t] = best
            back[1, s, t] = arg
    # traceback with an explicit stack of (s, t, kind): 0 CL, 1 CR, 2 IL, 3 IR
    stack = np.empty((3 * (n + 1) + 4, 3), dtype=np.int64)
    top = 0
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, 1
    top = 1
    while top > 0:
        top -= 1
        s, t, kind = stack[top, 0], stack[top, 1], stack[top, 2]
        if s == t:
            continue
        if kind == 0:
            r = back[0, s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 0
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r, t, 2
            top += 2
        elif kind == 1:
            r = back[1, s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 3
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r, t, 1
            top += 2
        else:
            if kind == 3:
                heads[t - 1] = s
            else:
                heads[s - 1] = t
            r = back[2, s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 1
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r + 1, t, 0
            top += 2
    return CR[0, n]


@njit(cache=True)
def add_hamming(S, n, heads, lo, weight):
    """Loss augmentation: S[h, m] += weight for every arc that is not in the gold tree (per-word Hamming loss)."""
    for m in range(1, n + 1):
        g = heads[lo + m - 1]
        for h in range(n + 1):
            if h != g and h != m:
                S[h, m] += weight


@njit(cache=True)
def tree_score(S, n, heads, lo):
    total = 0.0
    for m in range(1, n + 1):
        total += S[heads[lo + m - 1], m]
    return total


@njit(cache=True)
def scatter_arcs(i, coef, n, arc_off, feat_ptr, feat_idx, acc):
    """acc[f] += coef[h, m] for every feature f of every arc (h, m) of sentence i."""
    base = arc_off[i]
    for h in range(n + 1):
        for m in range(1, n + 1):
            c = coef[h, m]
            if c != 0.0:
                r = base + h * (n + 1) + m
                for j in range(feat_ptr[r], feat_ptr[r + 1]):
                    acc[feat_idx[j]] += c


@njit(cache=True)
def scatter_tree(i, c, n, heads, lo, arc_off, feat_ptr, feat_idx, acc):
    """acc += c f(x_i, y) for the tree y given by heads[lo:lo+n]."""
    base = arc_off[i]
    for m in range(1, n + 1):
        r = base + heads[lo + m - 1] * (n + 1) + m
        for j in range(feat_ptr[r], feat_ptr[r + 1]):
            acc[feat_idx[j]] += c


# ------------------------------------------------------------------ batched passes
@njit(cache=True)
def _charts(L):
    return (np.empty((L, L)), np.empty((L, L)), np.empty((L, L)), np.empty((L, L)), np.empty((L, L)),
            np.empty((L, L)))


@njit(cache=True, parallel=True)
def loss_and_expectation(w, bounds, max_len, sent_ptr, arc_off, feat_ptr, feat_idx, heads, weight, want_grad,
                         mm):
    """CRF: sum_i c_i (log Z_i - score(y_i)), and sum_i c_i E_p f;  M3N (mm): the hinge
    sum_i c_i max_y [e(y_i, y) + score(y) - score(y_i)] and sum_i c_i f(x_i, yhat_i)."""
    nb = bounds.shape[0] - 1
    n_feat = w.shape[0]
    L = max_len + 1
    loss = np.zeros(nb)
    acc = np.zeros((nb if want_grad else 1, n_feat))
    for b in prange(nb):
        S, IL, IR, CL, CR, B = _charts(L)
        mIL, mIR, mCL, mCR, mu, _ = _charts(L)
        back = np.empty((3, L, L), dtype=np.int64)
        pred = np.empty(L, dtype=np.int32)
        for i in range(bounds[b], bounds[b + 1]):
            c = weight[i]
            lo = sent_ptr[i]
            n = arc_scores(w, 1.0, i, arc_off, sent_ptr, feat_ptr, feat_idx, S)
            if n == 0 or c == 0.0:
                continue
            gold = tree_score(S, n, heads, lo)
            if mm:
                add_hamming(S, n, heads, lo, 1.0)
                best = eisner(S, n, IL, IR, CL, CR, back, pred)
                loss[b] += c * (best - gold)
                if want_grad:
                    scatter_tree(i, c, n, pred, 0, arc_off, feat_ptr, feat_idx, acc[b])
            else:
                log_z = inside(S, n, IL, IR, CL, CR, B)
                loss[b] += c * (log_z - gold)
                if want_grad:
                    outside_marginals(n, IL, IR, CL, CR, B, mIL, mIR, mCL, mCR, mu)
                    if c != 1.0:
                        mu *= c
                    scatter_arcs(i, mu, n, arc_off, feat_ptr, feat_idx, acc[b])
    expect = np.zeros(n_feat)
    if want_grad:
        for b in range(nb):
            expect += acc[b]
    return loss.sum(), expect


@njit(cache=True, parallel=True)
def decode_all(w, bounds, max_len, sent_ptr, arc_off, feat_ptr, feat_idx, out):
    """Eisner-decode every sentence; out[sent_ptr[i] + m - 1] = predicted head of word m."""
    nb = bounds.shape[0] - 1
    L = max_len + 1
    for b in prange(nb):
        S, IL, IR, CL, CR, _ = _charts(L)
        back = np.empty((3, L, L), dtype=np.int64)
        pred = np.empty(L, dtype=np.int32)
        for i in range(bounds[b], bounds[b + 1]):
            n = arc_scores(w, 1.0, i, arc_off, sent_ptr, feat_ptr, feat_idx, S)
            if n == 0:
                continue
            eisner(S, n, IL, IR, CL, CR, back, pred)
            for m in range(n):
                out[sent_ptr[i] + m] = pred[m]


@njit(cache=True)
def empirical_counts(n_feat, sent_ptr, arc_off, feat_ptr, feat_idx, heads, weight):
    """sum_i c_i f(x_i, y_i)."""
    emp = np.zeros(n_feat)
    for i in range(sent_ptr.shape[0] - 1):
        n = sent_ptr[i + 1] - sent_ptr[i]
        scatter_tree(i, weight[i], n, heads, sent_ptr[i], arc_off, feat_ptr, feat_idx, emp)
    return emp


@njit(cache=True)
def sgd_epoch(v, scale, order, eta0, step0, n_total, lam, max_len, sent_ptr, arc_off, feat_ptr, feat_idx,
              heads, weight):
    """One SGD pass on sum_i c_i loss_i + lam/2 ||w||^2 with w = scale * v (Collins et al. section 7.1.3)."""
    L = max_len + 1
    S, IL, IR, CL, CR, B = _charts(L)
    mIL, mIR, mCL, mCR, mu, _ = _charts(L)
    k = step0
    for s_ in range(order.shape[0]):
        i = order[s_]
        lo = sent_ptr[i]
        eta = eta0 / (1.0 + k / n_total)
        k += 1
        scale *= (1.0 - eta * lam / n_total)
        if scale < 1e-9:
            v *= scale
            scale = 1.0
        n = arc_scores(v, scale, i, arc_off, sent_ptr, feat_ptr, feat_idx, S)
        if n == 0:
            continue
        log_z = inside(S, n, IL, IR, CL, CR, B)
        outside_marginals(n, IL, IR, CL, CR, B, mIL, mIR, mCL, mCR, mu)
        step = eta * weight[i] / scale
        mu *= -step
        scatter_arcs(i, mu, n, arc_off, feat_ptr, feat_idx, v)
        scatter_tree(i, step, n, heads, lo, arc_off, feat_ptr, feat_idx, v)
        if not np.isfinite(log_z):
            break
    return scale, k


# ------------------------------------------------------------------ EG on the dual (Figure 3, Lemma 1)
@njit(cache=True)
def part_term(S, mu, n, log_z, heads, lo, mm):
    """LL: sum_y u log u = sum_r mu_r s_r - log Z;  MM: the expected Hamming loss sum_r mu_r e_r."""
    if mm:
        t = 0.0
        for m in range(1, n + 1):
            t += 1.0 - mu[heads[lo + m - 1], m]
        return t
    t = -log_z
    for h in range(n + 1):
        for m in range(1, n + 1):
            if mu[h, m] != 0.0:
                t += mu[h, m] * S[h, m]
    return t


@njit(cache=True)
def _proposal(i, eta, C, mm, wu, sent_ptr, arc_off, feat_ptr, feat_idx, heads, s_arc, S, W, ch, mch):
    """s' = s - eta g with g_r = s_r - C w(u).f(r) (LL) or -e_r - C w(u).f(r) (MM); mu', log Z' into ch/mch."""
    n = arc_scores(wu, C, i, arc_off, sent_ptr, feat_ptr, feat_idx, W)
    base = arc_off[i]
    lo = sent_ptr[i]
    for h in range(n + 1):
        for m in range(n + 1):
            s = s_arc[base + h * (n + 1) + m]
            if mm:
                e = 1.0 if (m > 0 and h != m and heads[lo + m - 1] != h) else 0.0
                S[h, m] = s + eta * (e + W[h, m])
            else:
                S[h, m] = s - eta * (s - W[h, m])
    IL, IR, CL, CR, B = ch[0], ch[1], ch[2], ch[3], ch[4]
    log_z = inside(S, n, IL, IR, CL, CR, B)
    outside_marginals(n, IL, IR, CL, CR, B, mch[0], mch[1], mch[2], mch[3], mch[4])
    return n, log_z


@njit(cache=True)
def eg_online_pass(picks, eta, adapt, max_trial, C, mm, wu, max_len, max_touch, sent_ptr, arc_off, feat_ptr,
                   feat_idx, heads, weight, s_arc, mu_arc, term):
    """EG updates of the sentences in ``picks`` one at a time, rate halved until the dual improves.

    The dual change of an update is exact: sign c_i (term_i' - term_i) + C w(u).d + C/2 ||d||^2 with
    d = c_i sum_r (mu_r - mu_r') f(x_i, r). Returns (accepted, trials, total change).
    """
    L = max_len + 1
    n_feat = wu.shape[0]
    S = np.empty((L, L))
    W = np.empty((L, L))
    coef = np.empty((L, L))
    ch = np.empty((5, L, L))
    mch = np.empty((5, L, L))
    d = np.zeros(n_feat)
    mark = np.full(n_feat, -1, dtype=np.int64)
    touched = np.empty(max_touch, dtype=np.int64)
    accepted, trials, total = 0, 0, 0.0
    stamp = 0
    sign = -1.0 if mm else 1.0
    for p_ in range(picks.shape[0]):
        i = picks[p_]
        c = weight[i]
        lo = sent_ptr[i]
        base = arc_off[i]
        if sent_ptr[i + 1] == lo or c == 0.0:
            continue
        for _ in range(max_trial):
            trials += 1
            n, log_z = _proposal(i, eta[i], C, mm, wu, sent_ptr, arc_off, feat_ptr, feat_idx, heads, s_arc, S,
                                 W, ch, mch)
            mu = mch[4]
            new_term = part_term(S, mu, n, log_z, heads, lo, mm)
            stamp += 1
            nt = 0
            for h in range(n + 1):
                for m in range(1, n + 1):
                    r = base + h * (n + 1) + m
                    cf = c * (mu_arc[r] - mu[h, m])
                    for j in range(feat_ptr[r], feat_ptr[r + 1]):
                        f = feat_idx[j]
                        if mark[f] != stamp:
                            mark[f] = stamp
                            d[f] = 0.0
                            touched[nt] = f
                            nt += 1
                        d[f] += cf
            lin, sq = 0.0, 0.0
            for k in range(nt):
                f = touched[k]
                lin += wu[f] * d[f]
                sq += d[f] * d[f]
            change = sign * c * (new_term - term[i]) + C * lin + 0.5 * C * sq
            tol = 1e-13 * (abs(c * new_term) + abs(c * term[i]) + C * abs(lin) + 1.0)
            if np.isfinite(change) and change <= tol:
                for k in range(nt):
                    f = touched[k]
                    wu[f] += d[f]
                for h in range(n + 1):
                    for m in range(n + 1):
                        r = base + h * (n + 1) + m
                        s_arc[r] = S[h, m]
                        mu_arc[r] = mu[h, m]
                term[i] = new_term
                total += change
                accepted += 1
                if adapt:
                    eta[i] *= 1.05
                break
            eta[i] *= 0.5
    return accepted, trials, total


@njit(cache=True, parallel=True)
def eg_batch_proposal(eta, C, mm, wu, bounds, max_len, sent_ptr, arc_off, feat_ptr, feat_idx, heads, weight,
                      s_arc, out_s, out_mu, out_term):
    """Batch EG proposal from the same w(u) for every sentence; returns sum_i c_i E_{p(s_i')} f."""
    nb = bounds.shape[0] - 1
    L = max_len + 1
    n_feat = wu.shape[0]
    acc = np.zeros((nb, n_feat))
    for b in prange(nb):
        S = np.empty((L, L))
        W = np.empty((L, L))
        ch = np.empty((5, L, L))
        mch = np.empty((5, L, L))
        for i in range(bounds[b], bounds[b + 1]):
            lo = sent_ptr[i]
            base = arc_off[i]
            if sent_ptr[i + 1] == lo:
                out_term[i] = 0.0
                continue
            n, log_z = _proposal(i, eta, C, mm, wu, sent_ptr, arc_off, feat_ptr, feat_idx, heads, s_arc, S, W,
                                 ch, mch)
            mu = mch[4]
            out_term[i] = part_term(S, mu, n, log_z, heads, lo, mm)
            for h in range(n + 1):
                for m in range(n + 1):
                    r = base + h * (n + 1) + m
                    out_s[r] = S[h, m]
                    out_mu[r] = mu[h, m]
            mu *= weight[i]
            scatter_arcs(i, mu, n, arc_off, feat_ptr, feat_idx, acc[b])
    expect = np.zeros(n_feat)
    for b in range(nb):
        expect += acc[b]
    return expect


@njit(cache=True)
def touch_bound(sent_ptr, arc_off, feat_ptr):
    """Largest number of feature occurrences in one sentence's arcs (bounds the distinct features touched)."""
    best = 0
    for i in range(sent_ptr.shape[0] - 1):
        n = sent_ptr[i + 1] - sent_ptr[i]
        k = feat_ptr[arc_off[i] + (n + 1) * (n + 1)] - feat_ptr[arc_off[i]]
        if k > best:
            best = k
    return best
