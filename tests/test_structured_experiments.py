"""Smoke tests of the Collins et al. (2008) reproductions on quick slices (real data; without it the
experiments raise DataUnavailable, which conftest.py reports as a skip)."""
import pytest


@pytest.mark.slow
def test_conll_m3n_quick(tmp_path):
    from loglin.experiments.collins2008 import REPRODUCE
    REPRODUCE["collins2008-conll-m3n"](tmp_path, quick=True)
    text = (tmp_path / "summary.md").read_text()
    assert "cutting plane" in text and "nan" not in text
    assert (tmp_path / "m3n_objectives_time.png").stat().st_size > 0


@pytest.mark.slow
def test_mnist_path_quick(tmp_path):
    from loglin.experiments.collins2008 import REPRODUCE
    REPRODUCE["collins2008-mnist-path"](tmp_path, quick=True)
    text = (tmp_path / "summary.md").read_text()
    assert "MNIST (train pixels reconstructed)" in text
    assert (tmp_path / "table2.json").exists()


@pytest.mark.slow
def test_conll_crf_sgd_quick_picks_eta0_by_token_error(tmp_path):
    from loglin.experiments.collins2008 import REPRODUCE
    REPRODUCE["collins2008-conll-crf"](tmp_path, quick=True, its=2, solvers=("SGD",))
    text = (tmp_path / "summary.md").read_text()
    assert "SGD eta0 = None" not in text and "| SGD |" in text
    assert (tmp_path / "sgd.csv").stat().st_size > 0
