"""The second-order linear chain (label trigrams) as a structure, in one file.

    f(x, y) = sum_t f_state(x, t, y_t) + sum_{t>0} f_bi(y_{t-1}, y_t) + sum_{t>1} f_tri(y_{t-2}, y_{t-1}, y_t)

State features as in a first-order chain (the attribute map of ChainProblem);
then K x K transition weights w[n_state + y' K + y] and K^3 trigram weights
w[n_state + K^2 + (y'' K + y') K + y]. A sentence's part block is n K node
scores U[t, y], then K x K edge scores E[y', y] and K^3 triple scores
T[y'', y', y], both shared by all positions (as the chain's edge block).

Inference runs the first-order recursions on label pairs (y_{t-1}, y_t):
alpha[t, a, b] = log sum of the paths y_0..y_t with y_{t-1} = a, y_t = b;
O(n K^3) per sentence in log space; Viterbi is the same chart with max. The
Hamming loss (per token) and everything the trainers need come from the
structure contract (loglin.structured.contract), so every structured solver
trains this model unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from ..csr import offsets
from . import contract as sc
from .chain import add_chain_labelling, register_sentence_contract
from .objective import ChainObjective
from .problem import ChainProblem

NEG_INF = -np.inf


class Chain2Data(NamedTuple):
    """A second-order chain problem's arrays as one structure value (fields as ChainData)."""
    seq_ptr: np.ndarray
    tok_ptr: np.ndarray
    tok_attr: np.ndarray
    tok_val: np.ndarray
    map_ptr: np.ndarray
    map_label: np.ndarray
    map_feat: np.ndarray
    gold: np.ndarray
    n_state: int
    K: int
    max_len: int


@dataclass
class SecondOrderChainProblem(ChainProblem):
    """A ChainProblem whose labellings also score label trigrams (K^3 more features)."""

    @property
    def n_features(self) -> int:
        K = self.n_labels
        return self.n_state + K * K + K ** 3

    @property
    def part_ptr(self) -> np.ndarray:
        K = self.n_labels
        return offsets(np.diff(self.seq_ptr) * K + K * K + K ** 3)

    def _structure_data(self):
        max_len = int(np.diff(self.seq_ptr).max(initial=1)) or 1
        return Chain2Data(self.seq_ptr, self.tok_ptr, self.tok_attr, self._val_or_empty(), self.map_ptr,
                          self.map_label, self.map_feat, self.gold, int(self.n_state), self.n_labels, max_len)

    def objective(self, C: float, loss: str = "ll"):
        return SecondOrderChainObjective(self, C, loss=loss)

    @classmethod
    def from_chain(cls, p: ChainProblem) -> "SecondOrderChainProblem":
        """The same sentences, attributes and labels with trigram features added."""
        return cls(seq_ptr=p.seq_ptr, tok_ptr=p.tok_ptr, tok_attr=p.tok_attr, tok_val=p.tok_val, map_ptr=p.map_ptr,
                   map_label=p.map_label, map_feat=p.map_feat, n_state=p.n_state, labels=p.labels, gold=p.gold,
                   weight=p.weight, attributes=p.attributes)


class SecondOrderChainObjective(ChainObjective):
    """CRF / M3N primal of a SecondOrderChainProblem."""

    kind = "chain2"
    structure = "second-order chain"


# ------------------------------------------------------------------ inference on one sentence
@njit(cache=True)
def _lse_max(v, m):
    """log sum exp(v) given m = max v (-inf for an empty support)."""
    if m == NEG_INF:
        return NEG_INF
    s = 0.0
    for k in range(v.shape[0]):
        s += np.exp(v[k] - m)
    return m + np.log(s)


@njit(cache=True)
def forward2(U, n, E, T, alpha, tmp):
    """Log forward messages on label pairs alpha[t, y_{t-1}, y_t] (t >= 1); returns log Z."""
    K = U.shape[1]
    if n == 1:
        for y in range(K):
            tmp[y] = U[0, y]
        return _lse_max(tmp, tmp.max())
    for a in range(K):
        for b in range(K):
            alpha[1, a, b] = U[0, a] + U[1, b] + E[a, b]
    for t in range(2, n):
        for b in range(K):
            for c in range(K):
                for a in range(K):
                    tmp[a] = alpha[t - 1, a, b] + T[a, b, c]
                alpha[t, b, c] = _lse_max(tmp, tmp.max()) + E[b, c] + U[t, c]
    m = NEG_INF
    for a in range(K):
        for b in range(K):
            m = max(m, alpha[n - 1, a, b])
    s = 0.0
    for a in range(K):
        for b in range(K):
            s += np.exp(alpha[n - 1, a, b] - m)
    return m + np.log(s)


@njit(cache=True)
def backward2(U, n, E, T, beta, tmp):
    """Log backward messages beta[t, y_{t-1}, y_t] (beta[n-1] = 0)."""
    K = U.shape[1]
    beta[n - 1, :, :] = 0.0
    for t in range(n - 2, 0, -1):
        for a in range(K):
            for b in range(K):
                for c in range(K):
                    tmp[c] = T[a, b, c] + E[b, c] + U[t + 1, c] + beta[t + 1, b, c]
                beta[t, a, b] = _lse_max(tmp, tmp.max())


@njit(cache=True)
def marginals2(U, n, E, T, alpha, beta, log_z, mu, edge, tri):
    """Node marginals mu[t, y], and pair / triple marginals summed over positions into edge and tri."""
    K = U.shape[1]
    mu[:n, :] = 0.0
    edge[:, :] = 0.0
    tri[:, :, :] = 0.0
    if n == 1:
        for y in range(K):
            mu[0, y] = np.exp(U[0, y] - log_z)
        return
    for t in range(1, n):
        for a in range(K):
            for b in range(K):
                p = np.exp(alpha[t, a, b] + beta[t, a, b] - log_z)
                edge[a, b] += p
                mu[t, b] += p
                if t == 1:
                    mu[0, a] += p
    for t in range(2, n):
        for a in range(K):
            for b in range(K):
                for c in range(K):
                    tri[a, b, c] += np.exp(alpha[t - 1, a, b] + T[a, b, c] + E[b, c] + U[t, c] + beta[t, b, c]
                                           - log_z)


@njit(cache=True)
def viterbi2(U, n, E, T, delta, back, out):
    """Best labelling into out[0:n] by max-product on label pairs; returns its score."""
    K = U.shape[1]
    if n == 1:
        best, arg = NEG_INF, 0
        for y in range(K):
            if U[0, y] > best:
                best, arg = U[0, y], y
        out[0] = arg
        return best
    for a in range(K):
        for b in range(K):
            delta[1, a, b] = U[0, a] + U[1, b] + E[a, b]
    for t in range(2, n):
        for b in range(K):
            for c in range(K):
                best, arg = NEG_INF, 0
                for a in range(K):
                    v = delta[t - 1, a, b] + T[a, b, c]
                    if v > best:
                        best, arg = v, a
                delta[t, b, c] = best + E[b, c] + U[t, c]
                back[t, b, c] = arg
    best, ba, bb = NEG_INF, 0, 0
    for a in range(K):
        for b in range(K):
            if delta[n - 1, a, b] > best:
                best, ba, bb = delta[n - 1, a, b], a, b
    out[n - 2], out[n - 1] = ba, bb
    for t in range(n - 1, 1, -1):
        out[t - 2] = back[t, out[t - 1], out[t]]
    return best


@njit(cache=True)
def score2(U, n, E, T, labels):
    s = 0.0
    for t in range(n):
        s += U[t, labels[t]]
        if t > 0:
            s += E[labels[t - 1], labels[t]]
        if t > 1:
            s += T[labels[t - 2], labels[t - 1], labels[t]]
    return s


# ------------------------------------------------------------------ the structure contract for Chain2Data
@njit(cache=True, inline="always")
def _shared_block(data):
    return data.K * data.K + data.K ** 3


# sentences, node parts, the Hamming loss and the shared blocks as a first-order chain's
register_sentence_contract(Chain2Data, _shared_block)


def _is_chain2(data):
    return sc.is_structure(data, Chain2Data)


@njit(cache=True, inline="always")
def _len(data, i):
    return data.seq_ptr[i + 1] - data.seq_ptr[i]


@njit(cache=True, inline="always")
def _views(s, n, K):
    o = n * K
    return (s[:o].reshape((n, K)), s[o:o + K * K].reshape((K, K)),
            s[o + K * K:o + K * K + K * K * K].reshape((K, K, K)))


@njit(cache=True, inline="always")
def _cubes(fws, L, K):
    c = L * K * K
    return (fws[:c].reshape((L, K, K)), fws[c:2 * c].reshape((L, K, K)), fws[2 * c:3 * c].reshape((L, K, K)),
            fws[3 * c:3 * c + K])


@overload(sc.workspace_size)
def _workspace_size(data):
    if _is_chain2(data):
        return lambda data: (3 * data.max_len * data.K * data.K + data.K, data.max_len * data.K * data.K)


@overload(sc.log_partition)
def _log_partition(data, i, s, fws, iws, mu, want_marginals, reuse):
    if _is_chain2(data):
        def impl(data, i, s, fws, iws, mu, want_marginals, reuse):
            n, K = _len(data, i), data.K
            U, E, T = _views(s, n, K)
            alpha, beta, _, tmp = _cubes(fws, data.max_len, K)
            log_z = forward2(U, n, E, T, alpha, tmp)
            if want_marginals:
                backward2(U, n, E, T, beta, tmp)
                node, edge, tri = _views(mu, n, K)
                marginals2(U, n, E, T, alpha, beta, log_z, node, edge, tri)
            return log_z
        return impl


@overload(sc.argmax)
def _argmax(data, i, s, fws, iws, labels):
    if _is_chain2(data):
        def impl(data, i, s, fws, iws, labels):
            n, K, L = _len(data, i), data.K, data.max_len
            U, E, T = _views(s, n, K)
            return viterbi2(U, n, E, T, _cubes(fws, L, K)[2], iws[:L * K * K].reshape((L, K, K)), labels)
        return impl


@overload(sc.labelling_score)
def _labelling_score(data, i, s, labels):
    if _is_chain2(data):
        def impl(data, i, s, labels):
            n = _len(data, i)
            U, E, T = _views(s, n, data.K)
            return score2(U, n, E, T, labels)
        return impl


@overload(sc.add_labelling)
def _add_labelling(data, i, labels, c, coef):
    if _is_chain2(data):
        def impl(data, i, labels, c, coef):
            add_chain_labelling(data, i, labels, c, coef)
            n, K = _len(data, i), data.K
            o = n * K + K * K
            for t in range(2, n):
                coef[o + (labels[t - 2] * K + labels[t - 1]) * K + labels[t]] += c
        return impl
