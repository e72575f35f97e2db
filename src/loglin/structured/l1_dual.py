"""The Fenchel dual of a pure-L1 log-linear structured model, for the stopping test's duality gap.

The primal over any structure of the contract (loglin.structured.contract), instance weights c_i:

    F(w) = sum_t l1_t |w_t| + C sum_i c_i [log Z_i(w) - w . f(x_i, y_i)].

With log Z_i(w) = max_{u_i in the simplex over labellings} [sum_y u_i(y) w . f(x_i, y) + H(u_i)],
exchanging min and max and minimizing over w gives the dual

    D(u) = C sum_i c_i H(u_i)   subject to   |C sum_i c_i (E_{u_i} f - f(x_i, y_i))|_t <= l1_t,

so D(u) <= min F at every feasible u. At w, u_i = p_w(. | x_i) makes the constraint's left side the
loss gradient; the mixture q_i = s p_w + (1 - s) delta_{y_i} scales it by s, so s = the largest value
in [0, 1] that satisfies every constraint (penalty.dual_scale) makes q feasible, and q = p at the
optimum. The entropy of the mixture over whole labellings needs only log Z_i, the gold score and
E_p[score] = sum_r mu_r s_r (Lemma 1 of Collins et al. 2008), all of which one inference pass gives:

    H(q) = s [H(p) + p(g) log p(g)] - s (1 - p(g)) log s - q(g) log q(g),
    H(p) = log Z - E_p[score],  p(g) = exp(score(g) - log Z),  q(g) = 1 - s (1 - p(g)).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .contract import log_partition, max_parts, part_size, scatter
from .passes import _sum_rows, decoder_workspace, scored_instance


@njit(cache=True, parallel=True)
def loss_expectation_entropy(data, w, bounds, weight):
    """(sum_i c_i loss_i, sum_i c_i E_p f, H(p_i) per instance, log p_i(y_i) per instance): the CRF pass of
    loglin.structured.passes with each instance's entropy and gold log-probability kept (0 where skipped)."""
    n_inst = weight.shape[0]
    nb = bounds.shape[0] - 1
    n_feat = w.shape[0]
    P = max_parts(data)
    loss = np.zeros(nb)
    acc = np.zeros((nb, n_feat))
    entropy = np.zeros(n_inst)
    log_gold = np.zeros(n_inst)
    for b in prange(nb):
        fws, iws = decoder_workspace(data)
        s = np.empty(P)
        mu = np.zeros(P)
        reuse = False
        for i in range(bounds[b], bounds[b + 1]):
            c, gold_score = scored_instance(data, i, w, weight, s)
            if c == 0.0:
                continue
            log_z = log_partition(data, i, s, fws, iws, mu, True, reuse)    # shared parts equal at fixed w
            reuse = True
            expected_score = 0.0
            for r in range(part_size(data, i)):
                expected_score += mu[r] * s[r]
                mu[r] *= c
            entropy[i] = log_z - expected_score
            log_gold[i] = gold_score - log_z
            loss[b] += c * (log_z - gold_score)
            scatter(data, i, mu, acc[b])
    return loss.sum(), _sum_rows(acc, n_feat, True), entropy, log_gold


@njit(cache=True)
def mixture_entropy(entropy, log_gold, s, weight):
    """sum_i c_i H(q_i), q_i = s p_i + (1 - s) delta_{gold_i}, from H(p_i) and log p_i(gold_i) (module doc)."""
    total = 0.0
    log_s = np.log(s) if s > 0.0 else 0.0
    for i in range(entropy.shape[0]):
        c = weight[i]
        if c == 0.0:
            continue
        lg = min(log_gold[i], 0.0)                  # a gold labelling scores at most log Z
        pg = np.exp(lg)
        off_gold = -np.expm1(lg)                    # 1 - p(g) without cancellation
        rest = max(entropy[i] + pg * lg, 0.0)       # -sum_{y != g} p log p, non-negative up to rounding
        a = s * off_gold                            # 1 - q(g)
        h = s * rest - a * log_s
        if a < 1.0:
            h -= (1.0 - a) * np.log1p(-a)
        total += c * h
    return total


GOLD_ROUNDING = 1e-6     # log p(gold) above this: the gold labelling is not one the model can score


def fun_grad_with_entropy(objective, w):
    """(f(w), grad f(w), terms) of a CRF ``objective`` of loglin.structured.objective, the same numbers as its
    ``fun_grad``, with ``terms`` = (sum_i c_i E_p f, H(p_i), log p_i(y_i)) of the same pass for
    :func:`dual_from_terms`: a solver's evaluation then also pays for the certificate at that point. Callers go
    through the objective's method of the same name, which loglin.scale's sharded objective computes itself."""
    p = objective.parts
    w = np.ascontiguousarray(w, dtype=np.float64)
    loss, expect, entropy, log_gold = loss_expectation_entropy(p.data, w, objective._bounds, p.weight)
    objective.n_fun += 1
    objective.n_grad += 1
    f = objective.regularizer(w) + objective.C * loss
    return f, objective.reg * w + objective.C * (expect - p.emp), (expect, entropy, log_gold)


def entropy_terms(objective, w):
    """The ``terms`` of :func:`fun_grad_with_entropy` alone."""
    p = objective.parts
    w = np.ascontiguousarray(w, dtype=np.float64)
    return loss_expectation_entropy(p.data, w, objective._bounds, p.weight)[1:]


def dual_from_terms(objective, l1, terms, dual_scale):
    """C sum_i c_i H(q_i) at the feasible point of the module doc, from the ``terms`` at w; ``dual_scale(grad,
    l1)`` is penalty's scaling into the constraints. None when some gold labelling lies outside the
    structure's labellings (then delta_gold is not a dual point)."""
    p = objective.parts
    expect, entropy, log_gold = terms
    # of C L(w): the whole smooth part when the penalty is pure L1
    return dual_from_parts(objective.C, objective.C * (expect - p.emp), entropy, log_gold, p.weight, l1, dual_scale)


def dual_from_parts(C, loss_grad, entropy, log_gold, weight, l1, dual_scale):
    """C sum_i c_i H(q_i) from the loss gradient C sum_i c_i (E_p f - f(x_i, y_i)) and H(p_i), log p_i(y_i), c_i per
    instance (in instance order, however they were computed); None as :func:`dual_from_terms`."""
    if np.any(log_gold > GOLD_ROUNDING):            # a gold labelling outside the structure's set (non-projective)
        return None
    s = dual_scale(loss_grad, l1)
    return float(C * mixture_entropy(entropy, log_gold, s, weight))


def shard_terms(objective, w, with_fun_grad):
    """A shard's part of the certificate (loglin.scale.shards.ShardPart): terms = (loss gradient part, H(p_i),
    log p_i(y_i), c_i) of its sentences, for :func:`dual_from_parts` once the driver has added and joined the
    shards' terms in shard order; (f, grad, terms) of one pass ``with_fun_grad``, else terms alone."""
    p = objective.parts
    if with_fun_grad:
        f, g, (expect, entropy, log_gold) = fun_grad_with_entropy(objective, w)
        return f, g, (objective.C * (expect - p.emp), entropy, log_gold, p.weight)
    expect, entropy, log_gold = entropy_terms(objective, w)
    return objective.C * (expect - p.emp), entropy, log_gold, p.weight

