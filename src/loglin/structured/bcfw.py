"""Block-coordinate Frank-Wolfe on the M3N dual (Lacoste-Julien, Jaggi, Schmidt & Pletscher, ICML 2013).

The dual of P-MM (loglin.structured.objective) in the primal's scale, over one convex combination
alpha_i of labellings per sentence (the simplex of block i):

    D(alpha) = C sum_i c_i E_alpha_i[e(y_i, y)] - 1/2 ||w(alpha)||^2,
    w(alpha) = C sum_i c_i (f(x_i, y_i) - E_alpha_i f(x_i, y)),

the same D = -C Q_MM of loglin.structured.dual (EG's dual, eq. 5 of Collins et al. 2008). As in EG the
labelling distributions are never stored: block i keeps its part marginals mu_i (the structure contract's
part layout, loglin.structured.contract), its expected loss term_i = sum_r mu_ir e_ir, and all blocks share
w(u) = w(alpha) / C. Every quantity of the algorithm is linear in mu_i.

Algorithm 3 (BCFW with line search), one block i at a time:

* the Frank-Wolfe vertex is the loss-augmented argmax y* = argmax_y e(y_i, y) + w . f(x_i, y) (Viterbi,
  Eisner, ... through the contract's ``loss_augment`` + ``argmax``);
* the block gap (the paper's g^(i), eq. (10)'s summand) is
      g_i = C c_i [max_y (e + w.f)(y) - E_mu_i (e + w.f)] >= 0,
  and sum_i g_i at a fixed w equals f(w) - D(alpha) exactly (the driver's duality gap);
* the optimal step along the segment to the vertex is gamma = g_i / (C^2 ||d||^2) clipped to [0, 1],
  d = c_i sum_r (mu_ir - 1[r in y*]) f(x_i, r) the change of w(u) (Algorithm 3, line 6);
* mu_i, term_i and w(u) move by gamma towards the vertex.

``steps="pairwise"`` (default) keeps each mu_i as a combination of at most ATOMS stored labellings (plus a
remainder, e.g. EG's marginals) and moves mass from the worst of them (the away atom) to y* when that gains more
than the plain step: block-coordinate pairwise Frank-Wolfe (Osokin, Alayrac, Lukasewitz, Dokania & Lacoste-Julien,
ICML 2016; its linear rate needs every atom kept, our bounded set folds the lightest into the remainder).
On the test problems its gap fell linearly where Algorithm 3's fell like 1/k (docs/decisions/0040).
``steps="frank-wolfe"``: Algorithm 3 as published.

One driver step is ``passes`` passes over the sentences, each in a new random order (``order="permutation"``;
"random" draws with replacement as in the paper's analysis, "cyclic" keeps the order). The driver's gap is
f(w) - D at the step's end, in the same units as EG's and cutting-plane's: "converged" is the relative gap at the
driver's gap_tol for all three. ``average=True`` also keeps the paper's weighted average of the dual
iterates (bcfw-wavg, weight 2 / (k + 2) per driver step, not per block step) and reports the better primal
and the better dual of the two points. ``state=``: a warm start from an EG dual state
(:class:`~loglin.structured.dual.PartDualState` of loss "mm": its marginals are a point of the same dual),
the "tail" of :func:`eg_then_bcfw` (solver "eg-bcfw").
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..kernels import vector as vk
from ..solvers.base import Step
from ..solvers.eg import REFRESH_EVERY, pick_order
from .contract import (add_labelling, argmax, expected_loss, gold_labels, label_count, label_offset,
                       labelling_score, loss_augment, max_parts, n_instances, part_scores, part_size, scatter,
                       scatter_tracked)
from .objective import StructuredObjective
from .passes import decoder_workspace, instance_weight, touch_bound, tracked_workspace

# a remainder lighter than this is not offered as an away atom (its point is mu minus the atoms, over rest)
REST_EPS = 1e-9
# labellings stored per sentence for pairwise steps (more are folded into the remainder)
ATOMS = 64
STEPS = ("pairwise", "frank-wolfe")


@njit(cache=True)
def _block_workspace(data, n_feat, max_touch):
    """What a pass over blocks works in: the decoder's (fws, iws); per part the scores S, the vertex's part
    counts and the step's coefficients; the vertex's labels; scatter_tracked's (d, mark, touched)."""
    P = max_parts(data)
    fws, iws = decoder_workspace(data)
    d, mark, touched = tracked_workspace(n_feat, max_touch)
    return fws, iws, np.empty(P), np.zeros(P), np.empty(P), np.empty(P, dtype=np.int32), d, mark, touched


@njit(cache=True)
def _frank_wolfe_vertex(data, i, C, wu, mu_flat, base, S, fws, iws, labels):
    """S = the loss-augmented part scores e + w.f of block i, labels = y* = their argmax (the Frank-Wolfe
    vertex); returns (score of y*, E_mu_i of the scores), whose difference times C c_i is the block gap g_i."""
    part_scores(data, i, wu, C, S)              # w . f(x_i, r), w = C w(u)
    loss_augment(data, i, S, 1.0)
    best = argmax(data, i, S, fws, iws, labels)
    current = 0.0
    for r in range(part_size(data, i)):
        current += mu_flat[base + r] * S[r]
    return best, current


@njit(cache=True)
def _step_curvature(data, i, C, coef, d, mark, stamp, touched):
    """d = sum_r coef_r f(x_i, r) over the touched features; returns (their count, C^2 ||d||^2)."""
    m = scatter_tracked(data, i, coef, d, mark, stamp, touched)
    sq = 0.0
    for k in range(m):
        sq += d[touched[k]] * d[touched[k]]
    return m, C * C * sq


@njit(cache=True)
def bcfw_pass(data, part_ptr, picks, C, wu, max_touch, weight, mu_flat, term):
    """Algorithm 3's inner loop over the blocks ``picks``, in that order; mu_flat, term, wu updated in place.

    Returns (sum of the block gaps g_i as each block was visited, blocks that moved, sum of dual changes).
    """
    fws, iws, S, vertex, coef, labels, d, mark, touched = _block_workspace(data, wu.shape[0], max_touch)
    gaps, moved, gain = 0.0, 0, 0.0
    stamp = 0
    for i in picks:
        c = instance_weight(data, i, weight)
        if c == 0.0:
            continue
        base = part_ptr[i]
        n_parts = part_size(data, i)
        best, current = _frank_wolfe_vertex(data, i, C, wu, mu_flat, base, S, fws, iws, labels)
        gap = C * c * (best - current)
        gaps += gap
        if not gap > 0.0:
            continue
        for r in range(n_parts):
            vertex[r] = 0.0
        add_labelling(data, i, labels, 1.0, vertex)
        vertex_loss = expected_loss(data, i, vertex)
        for r in range(n_parts):
            coef[r] = c * (mu_flat[base + r] - vertex[r])
        stamp += 1
        m, curvature = _step_curvature(data, i, C, coef, d, mark, stamp, touched)
        gamma = 1.0 if curvature <= gap else gap / curvature     # the exact maximizer on the segment, clipped
        for k in range(m):
            f = np.uint64(touched[k])
            wu[f] += gamma * d[f]
        for r in range(n_parts):
            mu_flat[base + r] += gamma * (vertex[r] - mu_flat[base + r])
        term[i] += gamma * (vertex_loss - term[i])
        gain += gamma * gap - 0.5 * gamma * gamma * curvature
        moved += 1
    return gaps, moved, gain


@njit(cache=True)
def pairwise_pass(data, part_ptr, picks, C, wu, max_touch, weight, mu_flat, term, atoms, alpha, n_atoms, rest):
    """Pairwise steps (block-coordinate pairwise Frank-Wolfe, Osokin et al. ICML 2016, Algorithm 2 with the
    line search of Lacoste-Julien et al.'s Algorithm 3) over the blocks ``picks``.

    Block i's mu_i is sum_v alpha[i, v] (part counts of labelling atoms[v, lo_i:lo_i + n_i]) + rest[i] m_i,
    with m_i = the remainder (a point of the block's polytope: the marginals an EG warm start brought, or
    atoms folded when the n_atoms[i] slots were full). A step moves mass gamma from the atom of lowest
    loss-augmented score (the away atom, possibly the remainder) to the Frank-Wolfe vertex y*:
        gamma = min(mass of the away atom, g_pw / (C^2 ||d||^2)),  g_pw = C c_i (score(y*) - score(away)),
    d = c_i sum_r (away_r - 1[r in y*]) f(x_i, r). Returns (sum of the Frank-Wolfe block gaps, blocks moved,
    sum of dual changes).
    """
    fws, iws, S, vertex, coef, labels, d, mark, touched = _block_workspace(data, wu.shape[0], max_touch)
    away = np.zeros(max_parts(data))
    atom_score = np.empty(atoms.shape[0])
    gaps, moved, gain = 0.0, 0, 0.0
    stamp = 0
    for p_ in range(picks.shape[0]):
        i = picks[p_]
        c = weight[i]
        n = label_count(data, i)
        if n == 0 or c == 0.0:
            continue
        lo = label_offset(data, i)
        base = part_ptr[i]
        n_parts = part_size(data, i)
        best, current = _frank_wolfe_vertex(data, i, C, wu, mu_flat, base, S, fws, iws, labels)
        gaps += C * c * (best - current)
        # the away atom: the stored labelling or the remainder with the lowest score
        k = n_atoms[i]
        a, a_score, atoms_total = -1, np.inf, 0.0
        for v in range(k):
            atom_score[v] = labelling_score(data, i, S, atoms[v, lo:lo + n])
            atoms_total += alpha[i, v] * atom_score[v]
            if alpha[i, v] > 0.0 and atom_score[v] < a_score:
                a, a_score = v, atom_score[v]
        if rest[i] > REST_EPS:
            rest_score = (current - atoms_total) / rest[i]
            if rest_score < a_score:
                a, a_score = -1, rest_score
        elif a < 0:
            continue
        g_fw = C * c * (best - current)
        g_pw = C * c * (best - a_score)
        if not g_pw > 0.0:
            continue
        for r in range(n_parts):
            vertex[r] = 0.0
            away[r] = 0.0
        add_labelling(data, i, labels, 1.0, vertex)
        # the plain Frank-Wolfe step's exact gain, for when the away atom's mass blocks the pairwise step
        for r in range(n_parts):
            coef[r] = c * (mu_flat[base + r] - vertex[r])
        stamp += 1
        m, curv_fw = _step_curvature(data, i, C, coef, d, mark, stamp, touched)
        gamma_fw = 0.0 if not g_fw > 0.0 else 1.0 if curv_fw <= g_fw else g_fw / curv_fw
        gain_fw = gamma_fw * g_fw - 0.5 * gamma_fw * gamma_fw * curv_fw
        if a >= 0:
            add_labelling(data, i, atoms[a, lo:lo + n], 1.0, away)
            mass = alpha[i, a]
        else:                          # the remainder's point m_i = (mu_i - sum_v alpha_v atom_v) / rest_i
            for r in range(n_parts):
                away[r] = mu_flat[base + r]
            for v in range(k):
                add_labelling(data, i, atoms[v, lo:lo + n], -alpha[i, v], away)
            for r in range(n_parts):
                away[r] /= rest[i]
            mass = rest[i]
        for r in range(n_parts):
            coef[r] = c * (away[r] - vertex[r])
        stamp += 1
        m, curvature = _step_curvature(data, i, C, coef, d, mark, stamp, touched)
        gamma = mass if curvature * mass <= g_pw else g_pw / curvature
        gain_pw = gamma * g_pw - 0.5 * gamma * gamma * curvature
        took_fw = gain_fw > gain_pw
        if took_fw:                    # every atom and the remainder shrink by 1 - gamma_fw; y* gains gamma_fw
            for r in range(n_parts):
                away[r] = mu_flat[base + r]
            gamma, gain_pw = gamma_fw, gain_fw
            for v in range(k):
                alpha[i, v] *= 1.0 - gamma
            rest[i] *= 1.0 - gamma
            stamp += 1
            for r in range(n_parts):
                coef[r] = c * (away[r] - vertex[r])
            m = scatter_tracked(data, i, coef, d, mark, stamp, touched)
        for q in range(m):
            f = np.uint64(touched[q])
            wu[f] += gamma * d[f]
        for r in range(n_parts):
            mu_flat[base + r] += gamma * (vertex[r] - away[r])
        term[i] += gamma * (expected_loss(data, i, vertex) - expected_loss(data, i, away))
        if not took_fw:
            if a >= 0:
                alpha[i, a] = 0.0 if gamma == mass else alpha[i, a] - gamma
            else:
                rest[i] = 0.0 if gamma == mass else rest[i] - gamma
        _add_atom(atoms, alpha, n_atoms, rest, i, lo, n, labels, gamma)
        gain += gain_pw
        moved += 1
    return gaps, moved, gain


@njit(cache=True)
def _add_atom(atoms, alpha, n_atoms, rest, i, lo, n, labels, gamma):
    """alpha[i, y*] += gamma: the slot of labelling y* if stored, else a free slot (an emptied one or a new one);
    when all are taken the lightest atom is folded into the remainder."""
    k = n_atoms[i]
    free = -1
    for v in range(k):
        same = True
        for t in range(n):
            if atoms[v, lo + t] != labels[t]:
                same = False
                break
        if same:
            alpha[i, v] += gamma
            return
        if alpha[i, v] <= 0.0 and free < 0:
            free = v
    if free < 0 and k < atoms.shape[0]:
        free = k
        n_atoms[i] = k + 1
    if free < 0:
        free = 0
        for v in range(k):
            if alpha[i, v] < alpha[i, free]:
                free = v
        rest[i] += alpha[i, free]
    for t in range(n):
        atoms[free, lo + t] = labels[t]
    alpha[i, free] = gamma


@njit(cache=True)
def marginal_counts(data, part_ptr, weight, mu_flat, term, n_feat):
    """sum_i c_i sum_r mu_ir f(x_i, r); term_i = sum_r mu_ir e_ir recomputed (removes incremental drift)."""
    coef = np.empty(max_parts(data))
    total = np.zeros(n_feat)
    for i in range(n_instances(data)):
        if label_count(data, i) == 0:
            term[i] = 0.0
            continue
        base = part_ptr[i]
        n_parts = part_size(data, i)
        for r in range(n_parts):
            coef[r] = mu_flat[base + r]
        term[i] = expected_loss(data, i, coef)
        c = weight[i]
        if c == 0.0:
            continue
        for r in range(n_parts):
            coef[r] *= c
        scatter(data, i, coef, total)
    return total


@njit(cache=True)
def gold_marginals(data, part_ptr, mu_flat):
    """mu_i = the part counts of the gold labelling (alpha_i = the gold vertex: w(alpha) = 0, D = 0)."""
    for i in range(n_instances(data)):
        if label_count(data, i) == 0:
            continue
        base = part_ptr[i]
        add_labelling(data, i, gold_labels(data, i), 1.0, mu_flat[base:base + part_size(data, i)])


@njit(cache=True)
def gold_atoms(data, atoms, alpha, n_atoms):
    """Every sentence's first atom = its gold labelling with mass 1 (Algorithm 3's alpha^(0))."""
    for i in range(n_instances(data)):
        n = label_count(data, i)
        if n == 0:
            continue
        lo = label_offset(data, i)
        gold = gold_labels(data, i)
        for t in range(n):
            atoms[0, lo + t] = gold[t]
        alpha[i, 0] = 1.0
        n_atoms[i] = 1


@njit(cache=True)
def labels_end(data):
    """One past the last entry of the label arrays (the length of an atom row)."""
    end = 0
    for i in range(n_instances(data)):
        end = max(end, label_offset(data, i) + label_count(data, i))
    return end


class FrankWolfeState:
    """The dual point of BCFW: part marginals ``mu`` (convex combinations of labellings' part counts), the
    expected losses ``term`` and w(u), for any structure of the contract.

    Starts at the gold labellings (w = 0, D = 0, Algorithm 3's alpha^(0)), or at ``mu`` given (an EG state's
    marginals: :meth:`from_state`)."""

    def __init__(self, problem, mu=None, steps="pairwise", atoms=ATOMS):
        if steps not in STEPS:
            raise InvalidInputError(f"steps must be one of {STEPS}, got {steps!r}")
        self.problem = problem
        self.steps = steps
        self.part_ptr = np.ascontiguousarray(problem.part_ptr, dtype=np.int64)
        n_parts = int(self.part_ptr[-1])
        if mu is None:
            self.mu = np.zeros(n_parts)
            gold_marginals(problem.data, self.part_ptr, self.mu)
        else:
            self.mu = np.array(mu, dtype=np.float64)
            if self.mu.shape != (n_parts,):
                raise InvalidInputError(f"need {n_parts} part marginals, got {self.mu.shape}")
        self.term = np.zeros(problem.n_sentences)
        self.wu = np.zeros(problem.n_features)
        self._max_touch = None
        if steps == "pairwise":           # the atoms of mu: the gold labellings, or all of mu in the remainder
            n = problem.n_sentences
            self.atoms = np.zeros((int(atoms), int(labels_end(problem.data))), dtype=np.int32)
            self.alpha = np.zeros((n, int(atoms)))
            self.n_atoms = np.zeros(n, dtype=np.int64)
            self.rest = np.ones(n) if mu is not None else np.zeros(n)
            if mu is None:
                gold_atoms(problem.data, self.atoms, self.alpha, self.n_atoms)
        self.refresh()

    @classmethod
    def from_state(cls, state, steps="pairwise"):
        """The point of a max-margin dual state (EG's PartDualState or another FrankWolfeState), copied."""
        if getattr(state, "loss", "mm") != "mm":
            raise InvalidInputError("bcfw continues from a max-margin (loss 'mm') dual state")
        mu = state.marginals() if hasattr(state, "marginals") else state.mu   # EG chains keep s only
        return cls(state.problem, mu, steps)

    @property
    def n_blocks(self):
        return self.problem.n_sentences

    def refresh(self):
        """w(u) and the terms recomputed from mu."""
        p = self.problem
        self.wu = p.emp - marginal_counts(p.data, self.part_ptr, p.weight, self.mu, self.term, p.n_features)

    def visit(self, C, picks):
        """Algorithm 3's steps on the blocks ``picks``: (sum of block gaps, blocks moved, dual gain)."""
        p = self.problem
        if self._max_touch is None:
            self._max_touch = int(touch_bound(p.data))
        picks = np.asarray(picks, dtype=np.int64)
        if self.steps == "pairwise":
            return pairwise_pass(p.data, self.part_ptr, picks, float(C), self.wu, self._max_touch, p.weight, self.mu,
                                 self.term, self.atoms, self.alpha, self.n_atoms, self.rest)
        return bcfw_pass(p.data, self.part_ptr, picks, float(C), self.wu, self._max_touch, p.weight, self.mu,
                         self.term)

    def dual(self, C) -> float:
        """D = C sum_i c_i term_i - C^2/2 ||w(u)||^2 (= -C Q_MM, loglin.structured.dual)."""
        return C * float(vk.dot(self.problem.weight, self.term)) - 0.5 * C * C * float(vk.dot(self.wu, self.wu))

    def primal_weights(self, C) -> np.ndarray:
        return C * self.wu


def _check_objective(objective, name):
    if not isinstance(objective, StructuredObjective) or objective.loss != "mm":
        structure = getattr(objective, "structure", "structured")
        raise InvalidInputError(f"{name} trains the max-margin (M3N) {structure} objective")


def frank_wolfe_state(objective, state=None, steps="pairwise"):
    """A fresh state at the gold labellings, or ``state`` (a FrankWolfeState, used as it is, or an EG dual
    state, whose point is copied) checked against the objective's problem."""
    _check_objective(objective, "bcfw")
    if state is None:
        state = FrankWolfeState(objective.problem, steps=steps)
    else:
        owner = getattr(state.problem, "source", None) or state.problem
        if owner is not objective.problem:
            raise InvalidInputError("the warm-start dual state belongs to another problem")
        state = state if isinstance(state, FrankWolfeState) else FrankWolfeState.from_state(state, steps)
    state.visit(objective.C, np.empty(0, dtype=np.int64))     # compiled with the set-up, before the driver's clock
    return state


def bcfw_steps(objective, w, rng, state, order="permutation", average=False, passes=1):
    """``passes`` passes over the blocks per driver step (the driver's test costs about one pass); see the
    module docstring."""
    if order not in ("random", "cyclic", "permutation"):
        raise InvalidInputError(f"order must be 'random', 'cyclic' or 'permutation', got {order!r}")
    if not (isinstance(passes, (int, np.integer)) and passes >= 1):
        raise InvalidInputError(f"passes must be a positive integer, got {passes!r}")
    C = objective.C
    n = state.n_blocks
    every = np.arange(n, dtype=np.int64)
    cursor, done = 0, 0
    wu_avg, terms_avg = state.wu.copy(), float(vk.dot(objective.problem.weight, state.term))
    while True:
        for _ in range(passes):
            picks, cursor = pick_order(every, rng, order, n, cursor)
            gaps, moved, _ = state.visit(C, picks)
            done += 1
            if done % REFRESH_EVERY == 0:
                state.refresh()
        w[:] = state.primal_weights(C)
        counters = {"effective_iterations": float(done), "moved": int(moved), "block_gaps": float(gaps)}
        if not average:
            yield Step(w=w, dual=lambda: state.dual(C), counters=counters)
            continue
        rho = 2.0 / (done / passes + 1.0)  # bcfw-wavg: the k-th iterate weighted by k (per driver step)
        wu_avg += rho * (state.wu - wu_avg)
        terms_avg += rho * (float(vk.dot(objective.problem.weight, state.term)) - terms_avg)
        dual_avg = C * terms_avg - 0.5 * C * C * float(vk.dot(wu_avg, wu_avg))
        f_last, f_avg = objective.fun(w), objective.fun(C * wu_avg)
        if f_avg < f_last:
            w[:] = C * wu_avg
        yield Step(w=w, f=min(f_last, f_avg), dual=max(state.dual(C), dual_avg),
                   counters={**counters, "averaged_primal": int(f_avg < f_last)})


def structured_bcfw(objective, w, rng, state=None, order="permutation", steps="pairwise", average=False, passes=1):
    return bcfw_steps(objective, w, rng, frank_wolfe_state(objective, state, steps), order=order, average=average,
                      passes=passes)


def eg_then_bcfw(objective, w, rng, eg_epochs=50, order="permutation", steps="pairwise", average=False, passes=1):
    """Online EG (loglin.structured.eg, its defaults) for ``eg_epochs`` epochs, then BCFW from EG's dual point
    (its part marginals): a Frank-Wolfe tail for EG's slow certificate near the M3N optimum."""
    from .dual import PartDualState
    from .eg import eg_online
    _check_objective(objective, "eg-bcfw")
    eg_state = PartDualState(objective.problem, "mm")
    spent = 0.0
    for epoch, step in enumerate(eg_online(objective, w, rng, eg_state, order=order), start=1):
        spent = step.counters["effective_iterations"]
        yield step
        if epoch >= eg_epochs:
            break
    tail = FrankWolfeState.from_state(eg_state, steps)
    for step in bcfw_steps(objective, w, rng, tail, order=order, average=average, passes=passes):
        step.counters["effective_iterations"] += spent
        yield step
