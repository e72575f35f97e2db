"""`loglin demo` end to end on a cut-down copy of the bundled slice."""
from pathlib import Path

from loglin.cli import main


def test_demo_runs_and_writes_its_outputs(tmp_path, monkeypatch, capsys):
    from loglin.tagging import datasets
    train, test = datasets.bundled_conll2000_small()
    small = []
    for src, n_sentences in ((train, 150), (test, 40)):
        blocks = Path(src).read_text().split("\n\n")[:n_sentences]
        dst = tmp_path / Path(src).name
        dst.write_text("\n\n".join(blocks) + "\n")
        small.append(dst)
    monkeypatch.setattr(datasets, "bundled_conll2000_small", lambda: tuple(small))
    assert main(["demo", "--out", str(tmp_path / "out"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "held-out chunk F1" in out and "training time" in out
    f1 = float(out.split("held-out chunk F1 ")[1].split()[0])
    assert 40 < f1 <= 100
    png = (tmp_path / "out" / "convergence.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "out" / "trace.csv").read_text().startswith("solver,iteration")
    baseline = (tmp_path / "out" / "trace-lbfgs.csv").read_text().splitlines()    # the comparison curve
    assert baseline[0].startswith("solver,iteration") and len(baseline) > 2
    assert "lbfgs: objective" in out
