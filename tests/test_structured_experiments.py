"""Smoke tests of the Collins et al. (2008) reproductions on quick slices (real data; skipped without it)."""
import pytest

from loglin.data.paths import shared_data_dir


def _needs(sub):
    base = shared_data_dir()
    if base is None or not (base / sub).is_dir():
        pytest.skip(f"shared data {sub} not available")


@pytest.mark.slow
def test_conll_m3n_quick(tmp_path):
    _needs("conll2000")
    from loglin.experiments.collins2008 import REPRODUCE
    REPRODUCE["collins2008-conll-m3n"](tmp_path, quick=True)
    text = (tmp_path / "summary.md").read_text()
    assert "cutting plane" in text and "nan" not in text
    assert (tmp_path / "m3n_objectives_time.png").stat().st_size > 0


@pytest.mark.slow
def test_mnist_path_quick(tmp_path):
    _needs("mnist")
    from loglin.experiments.collins2008 import REPRODUCE
    REPRODUCE["collins2008-mnist-path"](tmp_path, quick=True)
    text = (tmp_path / "summary.md").read_text()
    assert "MNIST (train pixels reconstructed)" in text
    assert (tmp_path / "table2.json").exists()
