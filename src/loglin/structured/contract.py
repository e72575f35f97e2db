"""The structure contract: what a structure supplies so that the trainer passes are written once.

A *structure* (linear chain, projective tree, second-order chain, ...) is a
NamedTuple of arrays and ints (``ChainData``, ``TreeData``, ...) holding the
instances and their gold labellings. It supplies inference on one instance i
only; loglin.structured.passes builds every trainer pass (loss + expectation,
hinge + subgradient, decoding, SGD, EG online / batch) from these functions.

Instance i owns a block of ``part_size(data, i)`` *parts* r, with a layout the
structure defines (chain: n K node parts then K x K edge parts shared by all
positions; tree: (n+1)^2 arc slots). A part vector (scores s, marginals mu,
coefficients) is a float64 array of that block. The score of a labelling y is
sum_{r in y} s_r, where a part shared by several positions counts once per
position (Collins et al. 2008, section 4 / Lemma 1).

The functions below are stubs; each structure module implements them with
``numba.extending.overload`` dispatching on its NamedTuple type, so the passes
keep Numba's on-disk cache (no jitclass or function arguments).

Workspaces: ``workspace_size(data)`` gives (floats, ints) a thread needs; the
passes allocate ``fws`` (float64) and ``iws`` (int64) once per thread and hand
them to inference, which carves its tables from them.
"""
from __future__ import annotations


def _stub(name):
    def stub(*args):
        raise NotImplementedError(f"{name} is a compiled structure contract function; call it from @njit code")
    stub.__name__ = name
    return stub


def is_structure(typ, cls) -> bool:
    """True when the Numba type ``typ`` is the NamedTuple type of structure class ``cls``."""
    from numba.core import types
    return isinstance(typ, types.BaseNamedTuple) and typ.instance_class is cls


#: number of instances
n_instances = _stub("n_instances")
#: (float64 entries, int64 entries) of one thread's inference workspace
workspace_size = _stub("workspace_size")
#: largest part block over the instances
max_parts = _stub("max_parts")
#: part_size(data, i): parts in instance i's block
part_size = _stub("part_size")
#: label_count(data, i), label_offset(data, i): length and start of instance i's labelling in the label arrays
label_count = _stub("label_count")
label_offset = _stub("label_offset")
#: part_scores(data, i, w, scale, s): s[r] = scale * w . f(x_i, r)
part_scores = _stub("part_scores")
#: log_partition(data, i, s, fws, iws, mu, want_marginals, reuse) -> log Z(s); mu = part marginals if asked.
#: reuse: the position-shared parts of s equal those of the previous call on this workspace
log_partition = _stub("log_partition")
#: argmax(data, i, s, fws, iws, labels) -> best score; labels[0:label_count] = the best labelling
argmax = _stub("argmax")
#: loss_augment(data, i, s, weight): s_r += weight * e_r (per-part Hamming loss e_r)
loss_augment = _stub("loss_augment")
#: expected_loss(data, i, mu) -> sum_r mu_r e_r
expected_loss = _stub("expected_loss")
#: gold_labels(data, i) -> the gold labelling of instance i (a view)
gold_labels = _stub("gold_labels")
#: labelling_score(data, i, s, labels) -> sum_{r in y} s_r
labelling_score = _stub("labelling_score")
#: add_labelling(data, i, labels, c, coef): coef_r += c * (times part r occurs in labelling y)
add_labelling = _stub("add_labelling")
#: scatter(data, i, coef, acc): acc += sum_r coef_r f(x_i, r)
scatter = _stub("scatter")
#: scatter_tracked(data, i, coef, d, mark, stamp, touched) -> m: as scatter into d, recording in
#: touched[0:m] each feature on its first touch (mark[f] == stamp; d[f] reset to 0 then)
scatter_tracked = _stub("scatter_tracked")
#: touch_bound(data) -> most feature occurrences of one instance (size of the touched list)
touch_bound = _stub("touch_bound")
