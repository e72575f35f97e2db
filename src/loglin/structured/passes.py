"""The trainer passes of structured models, written once against the structure contract.

Every pass takes ``data``, a structure NamedTuple (loglin.structured.contract),
and calls only the contract's per-instance inference, so the same compiled
pass trains chains, trees and any new structure (Collins et al. 2008):

* :func:`loss_and_expectation` / :func:`hinge_and_subgradient`: the CRF and M3N
  losses (P-LL, P-MM) and sum_i c_i E f or sum_i c_i f(x_i, yhat_i), one source (:func:`_loss_pass`);
* :func:`decode_all`, :func:`empirical_counts`, :func:`all_part_scores`;
* :func:`sgd_epoch`: SGD on P-LL (section 7.1.3);
* :func:`eg_online_pass` / :func:`eg_batch_proposal`: part-based EG on the duals
  (Figures 1-3, Lemma 1) over flat part variables s with instance i's block at
  ``part_ptr[i]``; :func:`touch_bound`, :func:`decoder_workspace`, :func:`tracked_workspace` (also BCFW's).

A structure registers its contract implementations when its module is imported,
which happens before any of its NamedTuple values exists. Numba's on-disk cache
keys these passes on the content of this file only: after editing a structure
file, delete this file's entries in ``__pycache__`` (touching it is not enough;
docs/decisions/0001-structure-contract.md).
"""
import numpy as np
from numba import njit, prange

from ..kernels.vector import sgd_rate, shrunk_scale
from .contract import (add_labelling, argmax, expected_loss, gold_labels, label_count, label_offset,
                       labelling_score, log_partition, loss_augment, max_parts, n_instances, part_scores, part_size,
                       scatter, scatter_tracked, workspace_size)
from .contract import touch_bound as _touch_bound


@njit(cache=True)
def decoder_workspace(data):
    """(floats, ints) a thread's log_partition / argmax calls work in."""
    nf, ni = workspace_size(data)
    return np.empty(nf), np.empty(ni, dtype=np.int64)


@njit(cache=True, inline="always")
def instance_weight(data, i, weight):
    """c_i, or 0 for an instance with no parts (an empty sentence): every pass skips both."""
    return weight[i] if label_count(data, i) > 0 else 0.0


@njit(cache=True, inline="always")
def scored_instance(data, i, w, weight, s):
    """(c_i, the gold labelling's score) with s = instance i's part scores at w; (0, 0) and s untouched for an
    instance the passes skip (:func:`instance_weight`)."""
    c = instance_weight(data, i, weight)
    if c == 0.0:
        return 0.0, 0.0
    part_scores(data, i, w, 1.0, s)
    return c, labelling_score(data, i, s, gold_labels(data, i))


@njit(cache=True)
def tracked_workspace(n_feat, max_touch):
    """(d, mark, touched) of scatter_tracked: a zero change vector, its stamps (none yet) and the touched list."""
    return np.zeros(n_feat), np.full(n_feat, -1, dtype=np.int64), np.empty(max_touch, dtype=np.int64)


@njit(cache=True)
def _sum_rows(acc, n_feat, want):
    """The per-thread accumulators added in a fixed order (a zero vector when not wanted)."""
    total = np.zeros(n_feat)
    if want:
        for b in range(acc.shape[0]):
            total += acc[b]
    return total


@njit(cache=True)
def _ll_term(S, mu, P, log_z):
    """sum_y u_y log u_y = sum_r mu_r s_r - log Z  (Lemma 1)."""
    v = 0.0
    for r in range(P):
        v += mu[r] * S[r]
    return v - log_z


# ------------------------------------------------------------------ batch passes at fixed w
def _loss_pass(mm):
    """The data term of P-LL or (mm) P-MM and, if want_grad, its w-dependent gradient part.

    P-LL: sum_i c_i (log Z_i - score(y_i)) and sum_i c_i E_{p(y|x_i)} f(x_i, y);
    P-MM: sum_i c_i max_y [e(y_i, y) + score(y) - score(y_i)] (eq. 3) and sum_i c_i f(x_i, yhat_i).
    ``mm`` is a closure constant, so each loss compiles without the other's branch (a run-time flag
    cost small instances, decision 0024); the on-disk cache keys on its value.
    """
    @njit(cache=True, parallel=True)
    def loss_pass(data, w, bounds, weight, want_grad):
        nb = bounds.shape[0] - 1
        n_feat = w.shape[0]
        P = max_parts(data)
        loss = np.zeros(nb)
        acc = np.zeros((nb if want_grad else 1, n_feat))
        for b in prange(nb):
            fws, iws = decoder_workspace(data)
            s = np.empty(P)
            coef = np.zeros(P)              # P-LL: the marginals; P-MM: the counts of yhat_i
            pred = np.empty(P if mm else 0, dtype=np.int32)
            reuse = False
            for i in range(bounds[b], bounds[b + 1]):
                c, gold_score = scored_instance(data, i, w, weight, s)
                if c == 0.0:
                    continue
                if mm:
                    loss_augment(data, i, s, 1.0)
                    loss[b] += c * (argmax(data, i, s, fws, iws, pred) - gold_score)
                    if want_grad:
                        add_labelling(data, i, pred, c, coef)
                else:
                    # at fixed w the position-shared parts are the same for every instance (decision 0001)
                    loss[b] += c * (log_partition(data, i, s, fws, iws, coef, want_grad, reuse) - gold_score)
                    reuse = True
                    if want_grad and c != 1.0:
                        for r in range(part_size(data, i)):
                            coef[r] *= c
                if want_grad:
                    scatter(data, i, coef, acc[b])
                    if mm:
                        for r in range(part_size(data, i)):
                            coef[r] = 0.0
        return loss.sum(), _sum_rows(acc, n_feat, want_grad)
    return loss_pass


loss_and_expectation = _loss_pass(False)      # (data, w, bounds, weight, want_grad): CRF
hinge_and_subgradient = _loss_pass(True)      # the same for M3N


@njit(cache=True, parallel=True)
def decode_all(data, w, bounds, out):
    """The argmax labelling of every instance into out[label_offset(i) : + label_count(i)]."""
    nb = bounds.shape[0] - 1
    P = max_parts(data)
    for b in prange(nb):
        fws, iws = decoder_workspace(data)
        s = np.empty(P)
        pred = np.empty(P, dtype=np.int32)
        for i in range(bounds[b], bounds[b + 1]):
            n = label_count(data, i)
            if n == 0:
                continue
            part_scores(data, i, w, 1.0, s)
            argmax(data, i, s, fws, iws, pred)
            lo = label_offset(data, i)
            for t in range(n):
                out[lo + t] = pred[t]


@njit(cache=True)
def empirical_counts(data, weight, n_feat):
    """sum_i c_i f(x_i, y_i)."""
    emp = np.zeros(n_feat)
    coef = np.zeros(max_parts(data))
    for i in range(n_instances(data)):
        add_labelling(data, i, gold_labels(data, i), weight[i], coef)
        scatter(data, i, coef, emp)
        for r in range(part_size(data, i)):
            coef[r] = 0.0
    return emp


@njit(cache=True)
def all_part_scores(data, w, part_ptr, out):
    """out[part_ptr[i] + r] = w . f(x_i, r): the part variables of u_i = p(y | x_i; w)."""
    s = np.empty(max_parts(data))
    for i in range(n_instances(data)):
        part_scores(data, i, w, 1.0, s)
        base = part_ptr[i]
        for r in range(part_size(data, i)):
            out[base + r] = s[r]


@njit(cache=True)
def touch_bound(data):
    return _touch_bound(data)


# ------------------------------------------------------------------ SGD (section 7.1.3)
@njit(cache=True)
def sgd_epoch(data, v, scale, order, eta0, step0, n_total, lam, weight):
    """One SGD pass, w = scale * v, minimizing sum_i c_i loss_i + lam/2 ||w||^2 (Collins' scale).

    Step on example i: w -= eta (c_i grad loss_i + lam/n w) with eta = eta0/(1 + k/n) (section 7.1.3);
    the shrinkage is kept in ``scale`` so a step costs O(size of instance i).
    """
    k = step0
    P = max_parts(data)
    fws, iws = decoder_workspace(data)
    s = np.empty(P)
    mu = np.empty(P)
    for i in order:
        eta = sgd_rate(eta0, k, n_total)
        k += 1
        scale = shrunk_scale(v, scale, 1.0 - eta * lam / n_total)
        if label_count(data, i) == 0:
            continue
        part_scores(data, i, v, scale, s)
        log_z = log_partition(data, i, s, fws, iws, mu, True, False)
        step = eta * weight[i] / scale
        add_labelling(data, i, gold_labels(data, i), -1.0, mu)      # E f - f(x_i, y_i)
        for r in range(part_size(data, i)):
            mu[r] *= -step
        scatter(data, i, mu, v)
        if not np.isfinite(log_z):
            break
    return scale, k


# ------------------------------------------------------------------ EG on the dual (Figures 1-3, Lemma 1)
@njit(cache=True)
def _proposal(data, i, eta, C, mm, wu, s_flat, base, S, W, fws, iws, mu):
    """s' = s - eta g with g_r = s_r - C w(u).f(x_i, r) (Q_LL) or g_r = -e_r - C w(u).f(x_i, r) (Q_MM)
    into S; mu = the marginals of p(s'). Returns (parts, log Z')."""
    P = part_size(data, i)
    if eta == 0.0:                      # just the marginals of the current s
        for r in range(P):
            S[r] = s_flat[base + r]
    else:
        part_scores(data, i, wu, C, W)
        if mm:
            loss_augment(data, i, W, 1.0)
            for r in range(P):
                S[r] = s_flat[base + r] + eta * W[r]
        else:
            for r in range(P):
                s = s_flat[base + r]
                S[r] = s - eta * (s - W[r])
    return P, log_partition(data, i, S, fws, iws, mu, True, False)


@njit(cache=True)
def eg_online_pass(data, part_ptr, picks, eta, adapt, max_trial, C, mm, wu, max_touch, weight, s_flat, mu_flat,
                   term, floor):
    """EG updates of the instances in ``picks``, one at a time (Figures 2-3, section 7 step sizes).

    For each pick i: propose s_i' with rate eta[i]; the dual change
        c_i (term_i' - term_i) [minus for MM] + C w(u).delta + C/2 ||delta||^2,
        delta = c_i sum_r (mu_r - mu_r') f(x_i, r)   (the change of w(u)),
    is exact; if it is not an improvement halve eta[i] and retry (up to
    max_trial times, and not below ``floor``: a visit that reaches it ends without a step), otherwise accept
    and (if adapt) multiply eta[i] by 1.05. Returns (accepted, trials, sum of dual changes).
    An empty ``mu_flat`` means the marginals are not stored: those of the current s_i are recomputed at
    each visit (one more forward-backward, the same numbers as the stored ones).
    """
    n_feat = wu.shape[0]
    P = max_parts(data)
    fws, iws = decoder_workspace(data)
    S = np.empty(P)
    W = np.empty(P)
    mu = np.empty(P)
    stored = mu_flat.shape[0] > 0
    mu_old = mu_flat if stored else np.empty(P)
    coef = np.empty(P)
    d, mark, touched = tracked_workspace(n_feat, max_touch)
    accepted, trials, total = 0, 0, 0.0
    stamp = 0
    sign = -1.0 if mm else 1.0
    for i in picks:
        c = instance_weight(data, i, weight)
        if c == 0.0:
            continue
        base = part_ptr[i]
        at = base
        if not stored:
            _proposal(data, i, 0.0, C, mm, wu, s_flat, base, S, W, fws, iws, mu_old)
            at = 0
        for _ in range(max_trial):
            trials += 1
            n_parts, log_z = _proposal(data, i, eta[i], C, mm, wu, s_flat, base, S, W, fws, iws, mu)
            new_term = expected_loss(data, i, mu) if mm else _ll_term(S, mu, n_parts, log_z)
            for r in range(n_parts):
                coef[r] = c * (mu_old[at + r] - mu[r])
            stamp += 1
            m = scatter_tracked(data, i, coef, d, mark, stamp, touched)
            lin, sq = 0.0, 0.0
            for k in range(m):
                f = np.uint64(touched[k])
                lin += wu[f] * d[f]
                sq += d[f] * d[f]
            change = sign * c * (new_term - term[i]) + C * lin + 0.5 * C * sq
            tol = 1e-13 * (abs(c * new_term) + abs(c * term[i]) + C * abs(lin) + 1.0)
            if np.isfinite(change) and change <= tol:
                for k in range(m):
                    f = np.uint64(touched[k])
                    wu[f] += d[f]
                for r in range(n_parts):
                    s_flat[base + r] = S[r]
                if stored:
                    for r in range(n_parts):
                        mu_flat[base + r] = mu[r]
                term[i] = new_term
                total += change
                accepted += 1
                if adapt:
                    eta[i] *= 1.05
                break
            eta[i] *= 0.5
            if eta[i] < floor:
                eta[i] = floor
                break
    return accepted, trials, total


@njit(cache=True, parallel=True)
def eg_batch_proposal(data, part_ptr, eta, C, mm, wu, bounds, weight, s_flat, out_s, out_mu, out_term):
    """All instances updated at once from the same w(u) (Figure 1); returns sum_i c_i E_{p(s_i')}[f].

    With eta = 0 this just computes the marginals and terms of the current s. An empty ``out_mu``: marginals
    not stored.
    """
    nb = bounds.shape[0] - 1
    n_feat = wu.shape[0]
    P = max_parts(data)
    acc = np.zeros((nb, n_feat))
    for b in prange(nb):
        fws, iws = decoder_workspace(data)
        S = np.empty(P)
        W = np.empty(P)
        mu = np.empty(P)
        for i in range(bounds[b], bounds[b + 1]):
            if label_count(data, i) == 0:
                out_term[i] = 0.0
                continue
            base = part_ptr[i]
            n_parts, log_z = _proposal(data, i, eta, C, mm, wu, s_flat, base, S, W, fws, iws, mu)
            out_term[i] = expected_loss(data, i, mu) if mm else _ll_term(S, mu, n_parts, log_z)
            c = weight[i]
            for r in range(n_parts):
                out_s[base + r] = S[r]
                W[r] = c * mu[r]
            if out_mu.shape[0] > 0:
                for r in range(n_parts):
                    out_mu[base + r] = mu[r]
            scatter(data, i, W, acc[b])
    return _sum_rows(acc, n_feat, True)
