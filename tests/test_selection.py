"""Model selection over C (loglin.selection): folds, the warm-started path, the CV estimators, -C auto."""
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from conftest import random_sparse
from loglin.errors import ConvergenceWarning, InvalidInputError
from loglin.estimators import LogisticRegression, MaxentClassifier
from loglin.selection import (LogisticRegressionCV, MaxentClassifierCV, c_grid, cross_validation_path,
                              stratified_folds)


def _blobs(seed=0, n=150, classes=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, size=n)
    X = rng.normal(size=(n, 6)) + 1.5 * np.eye(classes, 6)[y]
    return X, y


def test_stratified_folds_partition_the_rows_and_spread_each_class():
    y = np.array([0] * 30 + [1] * 12 + [2] * 7)
    folds = stratified_folds(y, 4, random_state=3)
    rows = np.concatenate(folds)
    assert sorted(rows.tolist()) == list(range(len(y)))
    for c in (0, 1, 2):
        per_fold = [np.count_nonzero(y[f] == c) for f in folds]
        assert max(per_fold) - min(per_fold) <= 1
    assert [f.tolist() for f in stratified_folds(y, 4, random_state=3)] == [f.tolist() for f in folds]
    with pytest.raises(InvalidInputError):
        stratified_folds(y, 1)


def test_path_scores_are_those_of_independent_cold_fits(serial_numba):
    X, y = _blobs()
    Cs = [0.01, 0.1, 1.0]
    path = cross_validation_path(MaxentClassifier(tol=1e-7), X, y, Cs, cv=3, random_state=5)
    folds = stratified_folds(y, 3, random_state=5)
    for j, C in enumerate(Cs):
        for f, test in enumerate(folds):
            train = np.setdiff1d(np.arange(len(y)), test)
            cold = MaxentClassifier(C=C, tol=1e-7).fit(X[train], y[train])
            assert path.scores[f, j] == pytest.approx(cold.score(X[test], y[test]))
    assert path.best_C == Cs[int(np.argmax(path.scores.mean(axis=0)))]


def test_best_c_prefers_the_most_regularized_of_ties_and_patience_stops_the_path(serial_numba):
    X, y = _blobs(seed=1)
    path = cross_validation_path(LogisticRegression(), X, (y > 0).astype(int), np.logspace(-3, 3, 13), cv=3,
                                 patience=2)
    assert len(path.Cs) < 13
    means = path.mean
    assert means[path.best_index] == means.max() and np.all(means[:path.best_index] < means.max())
    assert "<- best" in path.table()


def test_c_grid_and_bad_cs():
    np.testing.assert_allclose(c_grid(3), [1e-4, 1.0, 1e4])
    np.testing.assert_array_equal(c_grid([2.0, 0.5, 2.0]), [0.5, 2.0])
    for bad in (0, [], [-1.0], [np.nan]):
        with pytest.raises(InvalidInputError):
            c_grid(bad)


def test_cv_estimators_pick_c_refit_and_follow_scikit_learn_conventions(serial_numba):
    X, y = _blobs(seed=2)
    est = MaxentClassifierCV(Cs=[0.001, 0.1, 10.0], cv=3).fit(X, y)
    assert est.C_ in est.Cs_ and est.scores_.shape == (3, 3)
    direct = MaxentClassifier(C=est.C_).fit(X, y)
    np.testing.assert_allclose(est.coef_, direct.coef_, rtol=1e-6, atol=1e-8)
    assert est.get_params()["Cs"] == [0.001, 0.1, 10.0] and est.C == 1.0
    Xs = random_sparse(120, 20, 0.3, seed=4)
    ys = (np.asarray(Xs.sum(axis=1)).ravel() > np.median(np.asarray(Xs.sum(axis=1)))).astype(int)
    l1 = LogisticRegressionCV(Cs=4, cv=3, penalty="l1").fit(Xs, ys)
    assert l1.model_.info["penalty"] == "l1" and l1.coef_.shape == (1, 20)


def test_cv_estimators_pass_check_estimator():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_estimator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(LogisticRegressionCV(Cs=3, cv=3))
        check_estimator(MaxentClassifierCV(Cs=2, cv=2))


def test_cli_c_auto_trains_the_model_at_the_cross_validated_c(tmp_path):
    X, y = _blobs(seed=3, n=120)
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{c} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row)) + "\n"
                            for c, row in zip(y, X)))
    out = subprocess.run([sys.executable, "-m", "loglin.cli", "train", str(data), "-C", "auto", "--cv", "3",
                          "-o", str(tmp_path / "m.npz"), "--cv-plot", str(tmp_path / "p.png"), "--json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["C"] == res["cv"]["best_C"] and res["cv"]["best_C"] in res["cv"]["Cs"]
    assert (tmp_path / "p.png").stat().st_size > 1000
    jobs = subprocess.run([sys.executable, "-m", "loglin.cli", "train", str(data), "-C", "auto", "--cv", "3",
                           "--jobs", "2", "-o", str(tmp_path / "m2.npz"), "--json"],
                          capture_output=True, text=True, timeout=600)
    assert jobs.returncode == 0, jobs.stderr
    assert json.loads(jobs.stdout.strip().splitlines()[-1])["cv"] == res["cv"]
    bad = subprocess.run([sys.executable, "-m", "loglin.cli", "train", str(data), "-C", "abc", "-o",
                          str(tmp_path / "m.npz")], capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and "expected a number or 'auto'" in bad.stderr


def test_warm_start_along_the_path_reaches_the_cold_optimum(serial_numba):
    X, y = _blobs(seed=4)
    warm = MaxentClassifier(C=0.1, tol=1e-7, warm_start=True).fit(X, y)
    warm.set_params(C=3.0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        cold = MaxentClassifier(C=3.0, tol=1e-7).fit(X, y)
    assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-8)
    assert warm.n_iter_ <= cold.n_iter_


def test_a_signal_during_one_fit_stops_the_whole_path(monkeypatch, serial_numba):
    import loglin.selection as S
    X, y = _blobs(seed=5)
    fits = []
    real_fit = MaxentClassifier.fit

    def counting_fit(self, *args, **kwargs):
        fits.append(1)
        return real_fit(self, *args, **kwargs)
    monkeypatch.setattr(MaxentClassifier, "fit", counting_fit)
    monkeypatch.setattr(S, "received", lambda mark: 2 if fits else None)     # as if SIGINT hit the first fit
    with pytest.raises(KeyboardInterrupt):
        cross_validation_path(MaxentClassifier(), X, y, [0.1, 1.0, 10.0], cv=3)
    assert len(fits) == 1


def test_tag_train_c_auto_cross_validates_over_sentences(tmp_path):
    from loglin.tagging.datasets import bundled_conll2000_small
    train_file, _ = bundled_conll2000_small()
    blocks = train_file.read_text().split("\n\n")[:60]
    (tmp_path / "train.txt").write_text("\n\n".join(blocks) + "\n")
    out = subprocess.run([sys.executable, "-m", "loglin.cli", "tag", "train", "--task", "chunk", "--model", "crf",
                          str(tmp_path / "train.txt"), "-C", "auto", "--cv", "2", "--jobs", "2", "--max-iter", "30", "-o",
                          str(tmp_path / "crf.npz"), "--json"], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert "<- best" in out.stderr
    best = float(next(line.split()[0] for line in out.stderr.splitlines() if "<- best" in line))
    assert json.loads(out.stdout.strip().splitlines()[-1])["C"] == pytest.approx(best)


def test_grouped_path_scores_each_fold_on_its_held_out_items():
    from loglin.selection import grouped_path
    items = list(range(20))
    seen = []

    def fit(train, C):
        seen.append((len(train), C))
        return (set(train), C)

    def score(model, test):
        assert not model[0] & set(test)          # held-out items never trained on
        return -abs(np.log2(model[1]) - 3)       # best at C = 8

    path = grouped_path(items, fit, score, Cs=[1, 2, 4, 8, 16, 32, 64, 128], cv=4, patience=2)
    assert path.best_C == 8 and list(path.Cs) == [1, 2, 4, 8, 16, 32]
    assert all(n == 15 for n, _ in seen)


def test_folds_in_worker_processes_give_the_serial_path(serial_numba):
    X, y = _blobs(seed=6)
    Cs = [0.01, 0.3, 10.0]
    serial = cross_validation_path(MaxentClassifier(tol=1e-7), X, y, Cs, cv=3, random_state=2)
    parallel = cross_validation_path(MaxentClassifier(tol=1e-7), X, y, Cs, cv=3, random_state=2, n_jobs=2)
    np.testing.assert_array_equal(parallel.scores, serial.scores)
    np.testing.assert_array_equal(parallel.iterations, serial.iterations)
    assert parallel.best_C == serial.best_C and np.all(serial.iterations > 0)
    one = LogisticRegressionCV(Cs=[0.01, 1.0], cv=2).fit(X, y == 0)
    two = LogisticRegressionCV(Cs=[0.01, 1.0], cv=2, n_jobs=-1).fit(X, y == 0)
    assert two.C_ == one.C_ and two.get_params()["n_jobs"] == -1
    np.testing.assert_array_equal(two.scores_, one.scores_)
    np.testing.assert_array_equal(two.coef_, one.coef_)
    with pytest.raises(InvalidInputError, match="module-level functions"):
        cross_validation_path(MaxentClassifier(), X, y, Cs, cv=2, n_jobs=2, scoring=lambda est, X, y: 1.0)


def test_n_workers_follows_scikit_learn():
    from loglin.selection import n_workers
    assert n_workers(None, 5) == 1 and n_workers(1, 5) == 1 and n_workers(3, 2) == 2
    assert 1 <= n_workers(-1, 64) <= 64 and n_workers(-1000, 5) == 1
    for bad in (0, 1.5, "2", True):
        with pytest.raises(InvalidInputError, match="n_jobs"):
            n_workers(bad, 5)


def _warm_and_cold_paths(make, X, y, Cs):
    """grouped_path of estimators made by make(C), once warm-started along C within each fold, once cold."""
    from loglin.selection import grouped_path
    items = list(zip(X, y))

    def cold(train, C):
        return make(C).fit([x for x, _ in train], [t for _, t in train])

    def warm(train, C, previous):
        model = make(C).set_params(warm_start=True) if previous is None else previous.set_params(C=C)
        return model.fit([x for x, _ in train], [t for _, t in train])

    def score(model, test):
        return model.score([x for x, _ in test], [t for _, t in test])
    return (grouped_path(items, warm, score, Cs=Cs, cv=3, warm_start=True),
            grouped_path(items, cold, score, Cs=Cs, cv=3))


@pytest.mark.parametrize("family", ["chain", "tree"])
def test_warm_started_chain_and_tree_paths_match_cold_ones_in_fewer_iterations(family, serial_numba):
    import loglin
    from pathlib import Path
    from loglin.data import read_columns
    from loglin.data.conll import read_conllx
    data = Path(__file__).parent / "data"
    if family == "chain":
        sentences = read_columns(data / "ner_multilingual_train.txt")
        X, y = [[t[:-1] for t in s] for s in sentences], [[t[-1] for t in s] for s in sentences]

        def make(C):
            return loglin.Tagger(features=["w[-1..1]", "shape[0]", "cap[0]"], C=C, tol=1e-7, max_iter=3000)
    else:
        trees = read_conllx(data / "parse_en.conllu")
        X, y = [list(zip(s.forms, s.pos)) for s in trees], [s.heads for s in trees]

        def make(C):
            return loglin.Parser(C=C, solver="lbfgs", tol=1e-7, max_iter=3000)
    warm, cold = _warm_and_cold_paths(make, X, y, [0.05, 0.2, 0.8, 3.2])
    assert warm.best_C == cold.best_C
    np.testing.assert_allclose(warm.scores, cold.scores, atol=0.02)
    assert warm.iterations[0] == cold.iterations[0]                  # the first C starts cold in both
    assert warm.iterations[1:].sum() < cold.iterations[1:].sum()


def test_grouped_path_stops_at_its_time_limit():
    """grouped_path had no time limit of its own (decision 0063's leftover): 8 Cs x 4 folds of 0.1 s fits ran
    3.2 s whatever the caller wanted. With time_limit=0.35 no fit starts after the limit and the call raises
    TimeLimitBeforeTraining naming the option; a bad limit is refused before any fit."""
    import time
    from loglin.errors import TimeLimitBeforeTraining
    from loglin.selection import grouped_path
    calls = []

    def fit(train, C):
        calls.append(C)
        time.sleep(0.1)
        return C

    started = time.perf_counter()
    with pytest.raises(TimeLimitBeforeTraining, match="time_limit"):
        grouped_path(list(range(20)), fit, lambda model, test: 1.0, Cs=[1, 2, 4, 8, 16, 32, 64, 128], cv=4,
                     time_limit=0.35)
    assert time.perf_counter() - started < 1.0 and 3 <= len(calls) <= 5
    for bad in (0, -1.0):
        with pytest.raises(InvalidInputError, match="time_limit"):
            grouped_path(list(range(20)), fit, lambda model, test: 1.0, Cs=[1, 2], cv=2, time_limit=bad)
    assert 3 <= len(calls) <= 5
    full = grouped_path(list(range(20)), lambda train, C: C, lambda model, test: float(model), Cs=[1, 2], cv=2,
                        time_limit=60.0)
    assert full.best_C == 2
