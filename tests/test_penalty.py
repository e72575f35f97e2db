"""L1 and elastic-net penalties (loglin.penalty) and OWL-QN, for every model kind.

References independent of OWL-QN and of the pseudo-gradient: the split formulation
w = u - v, u, v >= 0 (a smooth bound-constrained problem) solved by SciPy's L-BFGS-B on the
inner objective, LIBLINEAR -s 6 (L1 LR) and scikit-learn's saga (elastic-net LR).
"""
import warnings

import numpy as np
import pytest
import scipy.optimize as so

from conftest import a9a_rows, random_binary_lr
from loglin import training
from loglin.errors import ConvergenceWarning, InvalidInputError
from loglin.penalty import from_crfsuite, l1_mixing, penalized
from test_training import _problems


def split_reference(objective, rho, C_scale=1.0):
    """min over w = u - v of f(w) - rho/2 sum r w^2 + rho sum r (u + v), by L-BFGS-B with u, v >= 0."""
    r = np.asarray(objective.reg, dtype=float)
    l1 = rho * r
    n = objective.n

    def fg(z):
        u, v = z[:n], z[n:]
        w = u - v
        f, g = objective.fun_grad(w, keep_cache=False)
        f = f - 0.5 * rho * np.dot(r * w, w) + np.dot(l1, u + v)
        g = g - rho * r * w
        return f, np.concatenate([g + l1, -g + l1])

    res = so.minimize(fg, np.zeros(2 * n), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * n),
                      options={"maxiter": 20000, "maxfun": 40000, "ftol": 1e-15, "gtol": 1e-11})
    return res.fun, res.x[:n] - res.x[n:]


@pytest.mark.parametrize("kind, solver", [("maxent", "owlqn"), ("binary", "owlqn"), ("binary", "newglmnet"),
                                          ("chain", "owlqn"), ("tree", "owlqn")])
@pytest.mark.parametrize("penalty, l1_ratio", [("l1", None), ("elasticnet", 0.4)])
def test_l1_solvers_reach_the_split_formulation_optimum(kind, solver, penalty, l1_ratio, small_multiclass,
                                                        serial_numba):
    problem, space = _problems(small_multiclass)[kind]
    C = {"binary": 1.0, "maxent": 1.0, "chain": 5.0, "tree": 0.3}[kind]    # tree: 8 sentences, 2,956 weights
    model, result = training.train(problem, C, solver, space=space, penalty=penalty, l1_ratio=l1_ratio, tol=1e-8,
                                   max_iter=5000, random_state=0)
    assert result.converged
    assert training.default_solver(kind, "ll", penalty) == ("newglmnet" if kind == "binary" else "owlqn")
    objective = training._objective(problem, kind, C, "ll")
    f_ref, w_ref = split_reference(objective, l1_mixing(penalty, l1_ratio))
    assert result.f <= f_ref + 1e-9 * abs(f_ref)
    assert result.f == pytest.approx(f_ref, rel=1e-8)
    F = penalized(objective, penalty, l1_ratio)
    assert F.fun(result.w) == pytest.approx(result.f, rel=1e-12)
    if penalty == "l1":
        assert np.count_nonzero(result.w) < result.w.size        # L1 models are sparse
        assert result.trace.records[-1]["nonzeros"] == np.count_nonzero(result.w)


def test_pseudo_gradient_is_zero_exactly_at_the_optimum_and_matches_one_sided_derivatives(serial_numba):
    problem = random_binary_lr(l=120, n=15, C=0.3)
    F = penalized(problem.objective(), "l1")
    _, result = training.train(problem, penalty="l1", tol=1e-10, max_iter=5000, random_state=0)
    w = result.w
    assert 0 < np.count_nonzero(w) < w.size
    _, pg = F.fun_grad(w, keep_cache=False)
    assert np.linalg.norm(pg) <= 1e-8 * np.linalg.norm(F.fun_grad(np.zeros(F.n), keep_cache=False)[1])
    # away from the optimum: the pseudo-gradient is the minimum-norm element of the one-sided derivatives
    rng = np.random.default_rng(0)
    x = np.where(rng.random(F.n) < 0.4, 0.0, rng.normal(size=F.n))
    _, pg = F.fun_grad(x, keep_cache=False)
    h = 1e-6
    for t in range(F.n):
        e = np.zeros(F.n)
        e[t] = h
        right = (F.fun(x + e) - F.fun(x)) / h            # d/dt+ F
        left = (F.fun(x) - F.fun(x - e)) / h             # d/dt- F
        expected = right if right < 0 else left if left > 0 else 0.0
        assert pg[t] == pytest.approx(expected, abs=1e-4 * max(1.0, abs(expected)))


def _liblinear_l1(X, y, C, eps=1e-10):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    m = liblinear.train(y.astype(float).tolist(), [dict(zip(r.indices + 1, r.data)) for r in X],
                        f"-s 6 -c {C} -e {eps} -q")
    labels = m.get_labels()
    w = np.array([m.get_decfun_coef(j + 1) for j in range(X.shape[1])])
    return w if labels[0] == 1 else -w


def _l1_lr_objective(X, y, C, w):
    return np.abs(w).sum() + C * np.logaddexp(0, -y * (X @ w)).sum()


def test_l1_lr_objective_equals_liblinear_s6_on_synthetic_data(small_binary, serial_numba):
    from loglin.binary import binary_problem
    X, y = small_binary
    for C in (0.1, 1.0, 10.0):
        _, result = training.train(binary_problem(X, y, C), penalty="l1", tol=1e-8, max_iter=10000, random_state=0)
        f_lib = _l1_lr_objective(X, y, C, _liblinear_l1(X, y, C))
        assert result.f == pytest.approx(_l1_lr_objective(X, y, C, result.w), rel=1e-12)
        assert result.f <= f_lib * (1 + 1e-9)
        assert result.f == pytest.approx(f_lib, rel=1e-6)


def test_newglmnet_at_an_unreachable_tol_ends_certified_by_the_duality_gap(small_binary, serial_numba):
    from loglin.binary import binary_problem
    from loglin.solvers.stopping import L1_GAP_FLOOR
    X, y = small_binary
    C = 10.0
    for seed in range(4):           # a tol no arithmetic may reach: the run still ends, certified
        _, result = training.train(binary_problem(X, y, C), penalty="l1", tol=1e-15, max_iter=5000,
                                   random_state=seed)
        last = result.trace.records[-1]
        assert result.iterations < 500 and result.converged
        assert last["duality_gap"] <= L1_GAP_FLOOR * abs(last["objective"])
        assert result.f <= _l1_lr_objective(X, y, C, _liblinear_l1(X, y, C)) * (1 + 1e-9)


@pytest.mark.slow
@pytest.mark.needs_data("a9a")
def test_l1_lr_objective_equals_liblinear_s6_on_a9a():
    from loglin.binary import binary_problem
    X, y = a9a_rows(32561)
    C = 1.0
    _, result = training.train(binary_problem(X, y, C), penalty="l1", tol=1e-8, max_iter=20000)
    f_lib = _l1_lr_objective(X, y, C, _liblinear_l1(X, y, C, eps=1e-8))
    assert result.converged and result.f <= f_lib * (1 + 1e-8)
    assert result.f == pytest.approx(f_lib, rel=1e-6)
    assert np.count_nonzero(result.w) < X.shape[1]


def test_elastic_net_lr_equals_scikit_learn_saga(small_binary, serial_numba):
    sklearn = pytest.importorskip("sklearn.linear_model")
    from loglin.binary import binary_problem
    X, y = small_binary
    C, r = 0.5, 0.3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = sklearn.LogisticRegression(penalty="elasticnet", l1_ratio=r, C=C, solver="saga", tol=1e-12,
                                        max_iter=200000, fit_intercept=False).fit(X, y)
    w_sk = sk.coef_.ravel() * (1 if sk.classes_[1] == 1 else -1)

    def objective(w):
        return r * np.abs(w).sum() + 0.5 * (1 - r) * w @ w + C * np.logaddexp(0, -y * (X @ w)).sum()

    _, result = training.train(binary_problem(X, y, C), penalty="elasticnet", l1_ratio=r, tol=1e-10,
                               max_iter=10000)
    assert result.f == pytest.approx(objective(result.w), rel=1e-12)
    assert result.f == pytest.approx(objective(w_sk), rel=1e-7)


def test_crfsuite_scale_maps_to_the_same_minimizer():
    C, penalty, r = from_crfsuite(0.2, 0.05)
    # -loglik + c1 |w|_1 + c2 |w|^2 = (r |w|_1 + (1 - r)/2 |w|^2 + C (-loglik)) / C
    assert (penalty, 1 / C, r / C, (1 - r) / (2 * C)) == ("elasticnet", pytest.approx(0.3), pytest.approx(0.2),
                                                          pytest.approx(0.05))
    assert from_crfsuite(0.0, 0.5) == (1.0, "l2", None) and from_crfsuite(0.5, 0.0)[1:] == ("l1", None)
    with pytest.raises(InvalidInputError):
        from_crfsuite(0.0, 0.0)


def test_bad_penalty_requests_are_one_clear_error(small_multiclass, serial_numba):
    problems = _problems(small_multiclass)
    problem, _ = problems["maxent"]
    with pytest.raises(InvalidInputError, match="does not handle penalty 'l1'.*owlqn"):
        training.train(problem, solver="tron", penalty="l1")
    with pytest.raises(InvalidInputError, match="needs l1_ratio"):
        training.train(problem, penalty="elasticnet")
    with pytest.raises(InvalidInputError, match=r"in \[0, 1\]"):
        training.train(problem, penalty="elasticnet", l1_ratio=1.5)
    with pytest.raises(InvalidInputError, match="only with penalty 'elasticnet'"):
        training.train(problem, penalty="l1", l1_ratio=0.5)
    with pytest.raises(InvalidInputError, match="penalty must be one of"):
        training.train(problem, penalty="l3")
    chain, space = problems["chain"]
    with pytest.raises(InvalidInputError, match="differentiable loss"):
        training.train(chain, loss="mm", solver="eg", space=space, penalty="l1")


def test_l1_solvers_without_l1_reach_the_l2_optimum(small_multiclass, serial_numba):
    problems = _problems(small_multiclass)
    for kind, solver in (("maxent", "owlqn"), ("binary", "newglmnet")):
        problem, _ = problems[kind]
        _, a = training.train(problem, 2.0, solver, tol=1e-8, random_state=0)
        _, b = training.train(problem, 2.0, "tron", tol=1e-8)
        assert a.converged and a.f == pytest.approx(b.f, rel=1e-9)


def test_huge_l1_gives_the_zero_model_and_says_converged(serial_numba):
    problem = random_binary_lr(l=60, n=8, C=1e-4)
    for solver in ("owlqn", "newglmnet"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            _, result = training.train(problem, solver=solver, penalty="l1")
        assert result.converged and not np.any(result.w)


@pytest.mark.slow
@pytest.mark.needs_data("news20")
def test_l1_lr_objective_equals_liblinear_s6_on_news20_one_class_against_the_rest():
    from loglin.binary import binary_problem
    from loglin.data import read_svmlight
    from conftest import data_file
    X, labels = read_svmlight(data_file("news20", "news20.bz2"))
    X, labels = X[:5000], labels[:5000]             # LIBLINEAR's 100 Newton steps converge on this part
    y = np.where(labels == labels[0], 1, -1)        # a binary news20: the first document's class vs the rest
    C = 4.0
    _, result = training.train(binary_problem(X, y, C), penalty="l1", tol=1e-8, max_iter=20000)
    f_lib = _l1_lr_objective(X, y, C, _liblinear_l1(X, y, C, eps=1e-8))
    assert result.converged and result.f <= f_lib * (1 + 1e-7)
    assert result.f == pytest.approx(f_lib, rel=1e-6)
    assert np.count_nonzero(result.w) < X.shape[1] / 10
    for seed in range(3):       # newGLMNET's steps fall below F's rounding near 1e-8: its stall test ends the run
        _, stalled = training.train(binary_problem(X, y, C), penalty="l1", tol=1e-14, max_iter=20000,
                                    random_state=seed)
        assert stalled.iterations < 1000 and stalled.stop_reason == "solver finished" and stalled.converged
        assert stalled.f <= f_lib * (1 + 1e-7)


def test_estimators_take_penalty_and_l1_ratio_with_scikit_learns_meaning(small_binary, small_multiclass,
                                                                         serial_numba):
    from loglin.estimators import LogisticRegression, MaxentClassifier
    sklearn = pytest.importorskip("sklearn.linear_model")
    X, y = small_binary
    ours = LogisticRegression(C=0.5, penalty="elasticnet", l1_ratio=0.3, fit_intercept=False, tol=1e-10).fit(X, y)
    assert ours.model_.info["solver"] == "newglmnet" and ours.model_.info["penalty"] == "elasticnet"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = sklearn.LogisticRegression(penalty="elasticnet", l1_ratio=0.3, C=0.5, solver="saga", tol=1e-12,
                                        max_iter=200000, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(ours.coef_, sk.coef_, atol=1e-5)
    Xm, ym = small_multiclass
    dense = MaxentClassifier(C=0.5).fit(Xm, ym)
    sparse = MaxentClassifier(C=0.5, penalty="l1").fit(Xm, ym)
    assert np.count_nonzero(sparse.coef_) < np.count_nonzero(dense.coef_)
    with pytest.raises(ValueError, match="does not handle penalty 'l1'"):
        MaxentClassifier(penalty="l1", solver="tron").fit(Xm, ym)


def test_l1_on_a_sharded_objective_equals_one_process(small_multiclass, serial_numba):
    problem, _ = _problems(small_multiclass)["maxent"]
    _, one = training.train(problem, 1.0, penalty="l1", tol=1e-8, max_iter=5000)
    _, two = training.train(problem, 1.0, penalty="l1", tol=1e-8, max_iter=5000, shards=2, backend="inprocess")
    assert one.solver == two.solver == "owlqn" and two.converged
    assert two.f == pytest.approx(one.f, rel=1e-9)


def test_a_thinned_trace_keeps_the_nonzero_count_of_its_record(serial_numba):
    from loglin.penalty import penalized
    from loglin.solvers.base import minimize
    problem = random_binary_lr(l=200, n=30, C=1.0)
    full = minimize(penalized(problem.objective(), "l1"), "owlqn", tol=1e-8, record_spacing=None)
    thin = minimize(penalized(problem.objective(), "l1"), "owlqn", tol=1e-8, record_spacing=1e9)
    assert len(thin.trace.records) < len(full.trace.records)
    assert thin.trace.records[-1]["nonzeros"] == np.count_nonzero(thin.w) == full.trace.records[-1]["nonzeros"]


def test_newglmnet_steps_report_the_objective_and_pseudo_gradient_norm_at_their_iterate(serial_numba):
    """The fused kernels (gradient + pseudo-gradient norms + working set, the line search's
    working-set update of the penalty) against F.fun and F.fun_grad evaluated from scratch."""
    from loglin.solvers.newglmnet import newglmnet
    for penalty, l1_ratio in (("l1", None), ("elasticnet", 0.5)):
        F = penalized(random_binary_lr(seed=3, l=120, n=300, C=0.5).objective(), penalty, l1_ratio)
        w = np.zeros(F.n)
        working_sets, previous = [], np.inf
        for step in newglmnet(F, w, np.random.default_rng(0)):
            f, pg = F.fun_grad(step.w.copy(), keep_cache=False)
            assert step.f == pytest.approx(f, rel=1e-12)
            assert step.grad_norm == pytest.approx(np.linalg.norm(pg), rel=1e-9)
            assert step.f <= previous + 16 * np.finfo(float).eps * abs(previous)   # rounding: pseudo-gradient decides
            previous = step.f
            working_sets.append(step.counters.get("working_set", F.n))
            if step.done or step.grad_norm < 1e-9 or len(working_sets) == 60:
                break
        assert step.grad_norm < 1e-6
        assert min(working_sets) < F.n / 2             # the shrunk working set leaves most zero weights out


def test_newglmnet_with_binary_and_real_valued_columns_reaches_the_split_optimum(serial_numba):
    """Columns of ones take the inner CD's value-free path; mixed with real-valued ones."""
    from loglin.binary import binary_problem
    rng = np.random.default_rng(5)
    X = np.hstack([(rng.uniform(size=(150, 12)) < 0.3).astype(float), rng.normal(size=(150, 8))])
    y = np.where(X @ rng.normal(size=20) + 0.5 * rng.normal(size=150) > 0, 1, -1)
    problem = binary_problem(X, y, 0.8)
    for penalty, l1_ratio in (("l1", None), ("elasticnet", 0.6)):
        _, result = training.train(problem, solver="newglmnet", penalty=penalty, l1_ratio=l1_ratio, tol=1e-9,
                                   max_iter=2000, random_state=0)
        f_ref, _ = split_reference(problem.objective(), l1_mixing(penalty, l1_ratio))
        assert result.converged and result.f == pytest.approx(f_ref, rel=1e-8)
        assert result.f <= f_ref + 1e-9 * abs(f_ref)
