"""Start-up: the helpers that replaced slow-to-compile kernels agree with their references, and the `loglin`
command does not import scikit-learn."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from loglin.kernels.maxent import _max, log_softmax_inplace, softmax_inplace
from loglin.label_rows import _segment_argsort


def test_segment_argsort_is_a_stable_argsort_within_each_segment():
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 9, size=60)
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    a = rng.integers(0, 5, size=ptr[-1]).astype(np.int32)          # many ties
    expected = np.concatenate([lo + np.argsort(a[lo:hi], kind="mergesort") for lo, hi in zip(ptr[:-1], ptr[1:])])
    assert np.array_equal(_segment_argsort(ptr, a), expected)


@pytest.mark.parametrize("values", [[0.5, -2.0, 3.0, 3.0], [-np.inf, -np.inf], [1.0, np.nan, 7.0], [np.nan, 2.0], [4.0]])
def test_loop_max_matches_numpy(values):
    s = np.array(values)
    m = _max(s)
    assert m == s.max() or (np.isnan(m) and np.isnan(s.max()))


def test_softmax_kernels_match_numpy():
    s = np.random.default_rng(0).normal(size=23) * 30
    log_t = np.log(np.exp(s - s.max()).sum()) + s.max()
    p = s.copy()
    assert softmax_inplace(p) == pytest.approx(log_t, rel=1e-14)
    assert p == pytest.approx(np.exp(s - log_t), rel=1e-12)
    q = s.copy()
    log_softmax_inplace(q)
    assert q == pytest.approx(s - log_t, rel=1e-12, abs=1e-12)


def test_the_command_does_not_import_sklearn():
    probe = ("import sys, loglin.cli\n"
             "code = loglin.cli.main()\n"
             "import loglin.estimators as e, loglin.tagging.estimator\n"
             "print(code, 'sklearn' in sys.modules, e.HAVE_SKLEARN)\n")
    out = subprocess.run([sys.executable, "-c", probe, "solvers"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-3:] == ["0", "False", "False"]


def test_library_use_keeps_sklearn_bases():
    pytest.importorskip("sklearn")
    probe = "import loglin.estimators as e; from sklearn.base import BaseEstimator as B; print(issubclass(e.LogisticRegression, B))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "True"


PARSER_TREEBANK = Path(__file__).parent / "data" / "parse_en.conllu"
HEAVY_MODULES = ("matplotlib", "distributed", "dask", "sklearn", "scipy.optimize")


@pytest.mark.parametrize("argv", [["parse", "train", "--help"],
                                  ["parse", "train", str(PARSER_TREEBANK), "--max-iter", "2", "-o", "{out}",
                                   "--quiet"]])
def test_parse_train_imports_no_plotting_cluster_or_sklearn(tmp_path, argv):
    argv = [a.format(out=tmp_path / "p.npz") for a in argv]
    probe = ("import sys, loglin.cli\n"
             "sys.argv = ['loglin'] + sys.argv[1:]\n"
             "try:\n    code = loglin.cli.main()\nexcept SystemExit as exc:\n    code = exc.code or 0\n"
             f"heavy = [m for m in sys.modules if m.split('.')[0] in {HEAVY_MODULES!r} or m in {HEAVY_MODULES!r}]\n"
             "print(code, sorted(set(m.split('.')[0] for m in heavy)) or 'none')\n")
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["0", "none"], out.stdout[-500:]



# what OPENBLAS_THREAD_TIMEOUT holds when NumPy is first imported (OpenBLAS reads it as it loads)
NUMPY_IMPORT_PROBE = ("import os, sys\n"
                      "class Watch:\n"
                      "    seen = 'numpy not imported'\n"
                      "    def find_spec(self, name, path=None, target=None):\n"
                      "        if name == 'numpy' and Watch.seen == 'numpy not imported':\n"
                      "            Watch.seen = os.environ.get('OPENBLAS_THREAD_TIMEOUT', 'unset')\n"
                      "sys.meta_path.insert(0, Watch())\n"
                      "import loglin.cli\n"
                      "print(Watch.seen)\n")


@pytest.mark.parametrize("user_value", [None, "20"])
def test_the_command_lets_idle_openblas_threads_sleep_unless_the_user_set_the_timeout(user_value):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if user_value is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = user_value
    out = subprocess.run([sys.executable, "-c", NUMPY_IMPORT_PROBE], capture_output=True, text=True, timeout=300,
                         env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == ("4" if user_value is None else user_value)


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"], ["parse", "train", "--help"]])
def test_help_imports_neither_numba_nor_scipy_sparse(argv):
    probe = ("import sys, loglin.cli\n"
             "sys.argv = ['loglin'] + sys.argv[1:]\n"
             "try:\n    code = loglin.cli.main()\nexcept SystemExit as exc:\n    code = exc.code or 0\n"
             "loaded = [m for m in ('numba', 'scipy.sparse') if m in sys.modules]\n"
             "import loglin.data\n"
             "print(code, ','.join(loaded) or 'none', callable(loglin.data.read_svmlight), 'scipy.sparse' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-4:] == ["0", "none", "True", "True"], out.stdout[-500:]


def test_the_estimators_are_loglin_attributes_loaded_on_first_use():
    """`from loglin import LogisticRegression` (scikit-learn's habit) works, and `import loglin` alone loads no
    kernel: each estimator's module is imported when the name is first asked for."""
    probe = ("import sys, loglin\n"
             "before = 'numba' in sys.modules\n"
             "from loglin import (LogisticRegression, LogisticRegressionCV, MaxentClassifier, MaxentClassifierCV,\n"
             "                    Parser, Tagger)\n"
             "import loglin.estimators, loglin.selection\n"
             "print(before, LogisticRegression is loglin.estimators.LogisticRegression,\n"
             "      MaxentClassifierCV is loglin.selection.MaxentClassifierCV,\n"
             "      set(loglin.__all__) <= set(dir(loglin)))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True", "True"], out.stdout
