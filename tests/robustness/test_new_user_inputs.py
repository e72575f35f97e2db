"""Inputs a new user writes by hand: LIBSVM files with odd scales, duplicate indices, index 0 and comments."""
import random

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from loglin.model_io import load_model

from .cli_helpers import one_error, run


def odd_scales(path, n=120, seed=5):
    """Two classes told apart by a feature of scale ~1e6 (and one ~1e-6), with trailing comments."""
    rng = random.Random(seed)
    with open(path, "w") as out:
        for i in range(n):
            y = 1 if i % 2 else -1
            big = (2e6 if y > 0 else 1e6) * (1 + 0.3 * rng.random())
            small = (3e-6 if y > 0 else 1e-6) * (1 + 0.3 * rng.random())
            out.write(f"{y} 1:{big:.6g} 2:{small:.6g} 3:{rng.random():.3f}  # row {i}\n")
    return path


def test_odd_scales_warn_once_even_over_a_cross_validated_path(tmp_path, capsys):
    data = odd_scales(tmp_path / "odd.svm")
    code, out, err = run(capsys, "train", data, "-o", tmp_path / "m.npz", "-C", "auto", "--cv", "3", "--quiet")
    assert code == 0, err
    assert sum("feature values span" in line for line in err.splitlines()) == 1, err


def test_odd_scales_reach_the_optimum_with_the_default_solver(tmp_path, capsys):
    data = odd_scales(tmp_path / "odd.svm")
    model = tmp_path / "m.npz"
    code, out, err = run(capsys, "train", data, "-o", model, "--bias", "--quiet")
    assert code == 0, err
    X = np.array([[float(t.split(":")[1]) for t in line.split("#")[0].split()[1:]] + [1.0]
                  for line in data.read_text().splitlines()])
    y = np.array([float(line.split()[0]) for line in data.read_text().splitlines()])
    w = np.asarray(load_model(model).w, dtype=float).ravel()
    assert w.shape == (4,)

    def f(v):                           # 1/2 |w|^2 + C sum log(1 + exp(-y w.x)), C = 1
        return 0.5 * v @ v + np.logaddexp(0, -y * (X @ v)).sum()

    def gradient(v):
        return v - X.T @ (y * expit(-y * (X @ v)))
    best = min(minimize(f, start, jac=gradient, method="BFGS", options={"gtol": 1e-10, "maxiter": 10000}).fun
               for start in (np.zeros(4), w))
    assert f(w) <= best + 1e-6 * abs(best)


def test_duplicate_index_and_index_zero_are_named_with_their_line(tmp_path, capsys):
    dup = tmp_path / "dup.svm"
    dup.write_text("1 1:1 2:3\n-1 2:1 3:1 2:4\n")
    code, _, err = run(capsys, "train", dup, "-o", tmp_path / "m.npz")
    one_error(code, err, f"{dup}:2", "2 twice")
    zero = tmp_path / "zero.svm"
    zero.write_text("1 0:1 2:3\n-1 2:1\n")
    code, _, err = run(capsys, "train", zero, "-o", tmp_path / "m.npz")
    one_error(code, err, f"{zero}:1", "--zero-based")


def test_comments_anywhere_on_a_line_are_ignored(tmp_path, capsys):
    commented = tmp_path / "c.svm"
    commented.write_text("# a header\n1 1:1 2:3 # a comment\n-1 2:1 #another\n1 3:0.5#tight\n-1 1:0.5\n")
    plain = tmp_path / "p.svm"
    plain.write_text("1 1:1 2:3\n-1 2:1\n1 3:0.5\n-1 1:0.5\n")
    for data in (commented, plain):
        code, _, err = run(capsys, "train", data, "-o", tmp_path / f"{data.stem}.npz", "--quiet")
        assert code == 0, err
    assert np.array_equal(load_model(tmp_path / "c.npz").w, load_model(tmp_path / "p.npz").w)
    code, out, err = run(capsys, "predict", tmp_path / "c.npz", commented)
    assert code == 0 and len(out.splitlines()) == 4, err


def iobes_chunks(path, sentences=40, seed=1):
    """word POS chunk columns with IOBES chunk tags (S-X single, B-X I-X E-X longer chunks)."""
    rng = random.Random(seed)
    phrases = [([("the", "DT"), ("big", "JJ"), ("dog", "NN")], "NP"), ([("John", "NNP")], "NP"),
               ([("sees", "VBZ")], "VP"), ([("has", "VBZ"), ("eaten", "VBN")], "VP")]
    with open(path, "w") as out:
        for _ in range(sentences):
            for words, kind in (rng.choice(phrases[:2]), rng.choice(phrases[2:]), rng.choice(phrases[:2])):
                n = len(words)
                tags = [f"S-{kind}"] if n == 1 else [f"B-{kind}"] + [f"I-{kind}"] * (n - 2) + [f"E-{kind}"]
                out.writelines(f"{w} {p} {t}\n" for (w, p), t in zip(words, tags))
            out.write(". . O\n\n")
    return path


def test_iobes_chunks_in_the_conll2000_format_point_to_columns(tmp_path, capsys):
    data = iobes_chunks(tmp_path / "iobes.txt")
    code, _, err = run(capsys, "tag", "train", "--task", "chunk", data, "-o", tmp_path / "m.npz")
    one_error(code, err, f"{data}:", "E-NP", "--format columns")
    code, out, err = run(capsys, "tag", "train", "--task", "chunk", "--format", "columns", data, "-o",
                         tmp_path / "m.npz", "--quiet")
    assert code == 0, err
    code, out, err = run(capsys, "tag", "evaluate", tmp_path / "m.npz", data, "--format", "columns", "--json")
    assert code == 0, err
