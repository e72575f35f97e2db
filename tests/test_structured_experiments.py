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
