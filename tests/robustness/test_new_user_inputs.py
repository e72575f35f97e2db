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


def ud_treebank(path, sentences=24, seed=2):
    """CoNLL-U with document and sentence comments, a multiword token (del = de + el) in every sentence and an
    empty node in some."""
    rng = random.Random(seed)
    blocks = []
    for i in range(sentences):
        subject, verb, noun = rng.choice(["Ella", "Juan"]), rng.choice(["vive", "trabaja"]), rng.choice(["campo", "pueblo"])
        rows = [f"# sent_id = s{i}", f"# text = {subject} {verb} del {noun} .",
                f"1\t{subject}\t{subject.lower()}\tPRON\t_\t_\t2\tnsubj\t2:nsubj\t_",
                f"2\t{verb}\t{verb}\tVERB\t_\t_\t0\troot\t0:root\t_"]
        if i % 3 == 0:
            rows.append(f"2.1\t{verb}\t{verb}\tVERB\t_\t_\t_\t_\t0:root\t_")
        rows += ["3-4\tdel\t_\t_\t_\t_\t_\t_\t_\t_", "3\tde\tde\tADP\t_\t_\t5\tcase\t5:case\t_",
                 "4\tel\tel\tDET\t_\t_\t5\tdet\t5:det\t_", f"5\t{noun}\t{noun}\tNOUN\t_\t_\t2\tobl\t2:obl\tSpaceAfter=No",
                 "6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t2:punct\t_"]
        blocks.append("\n".join(rows))
    path.write_text("# newdoc id = d1\n" + "\n\n".join(blocks) + "\n\n")
    return path


def test_conllu_with_comments_multiword_tokens_and_empty_nodes_trains_parses_and_scores(tmp_path, capsys):
    import json
    bank = ud_treebank(tmp_path / "ud.conllu")
    model = tmp_path / "p.npz"
    code, _, err = run(capsys, "parse", "train", bank, "-o", model, "--quiet")
    assert code == 0, err
    code, out, err = run(capsys, "parse", "evaluate", model, bank, "--json")
    assert code == 0, err
    scores = json.loads(out)
    assert scores["sentences"] == 24 and scores["tokens"] == 24 * 6        # words only: no range, no empty node
    code, out, err = run(capsys, "parse", "run", model, bank)
    assert code == 0, err
    given, written = bank.read_text().splitlines(), out.splitlines()
    assert len(given) == len(written)
    for a, b in zip(given, written):
        first = a.split("\t")[0]
        if not a or a.startswith("#") or "-" in first:
            assert a == b                                          # comments and ranges echoed as they are
        else:
            assert a.split("\t")[:6] == b.split("\t")[:6] and b.split("\t")[8] == "_"      # DEPS not predicted
            if "." in first:
                assert b.split("\t")[6:8] == ["_", "_"]            # an empty node has no basic head
