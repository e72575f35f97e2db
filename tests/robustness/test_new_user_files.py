"""Files a user brings from elsewhere (decision 0061): words with non-ASCII spaces, legacy-encoded svmlight labels,
a regression target given to a classifier, and -C auto under --time-limit."""
import time

import numpy as np
import pytest

from loglin.data import read_columns, read_svmlight
from loglin.errors import DataFormatError, TimeLimitBeforeTraining
from loglin.model_io import load_model

from .cli_helpers import one_error, run, svmlight_rows, treebank

# a no-break space inside a number, an ideographic space as a token of its own, U+2028 inside a word
ODD_WORDS = [("Marie", "B-PER"), ("Curie", "I-PER"), ("a", "O"), ("10\u00a0000", "O"), ("\u3000", "O"),
             ("livres\u2028", "O"), ("à", "O"), ("Paris", "B-LOC"), (".", "O")]


def ner_file(path, encoding="utf-8", words=ODD_WORDS, sentences=12):
    path.write_bytes("".join("".join(f"{w} {t}\r\n" for w, t in words) + "\r\n" for _ in range(sentences))
                     .encode(encoding))
    return path


def test_columns_split_at_ascii_whitespace_only(tmp_path):
    """str.split() broke words at U+00A0, U+3000, U+2028 (and U+0085, cp1252's "…" byte read as latin-1): a
    "10 000" token became two columns ("expected 2 columns, got 3"), a lone U+3000 token left its line one
    column short, and in text input a word was silently cut in two."""
    sentences = read_columns(ner_file(tmp_path / "ner.txt"))
    assert sentences[0] == ODD_WORDS
    ellipsis = tmp_path / "cp1252.txt"
    ellipsis.write_bytes(b"Attendez\x85 O\nMarie B-PER\n\n")
    assert read_columns(ellipsis, encoding="latin-1") == [[("Attendez\x85", "O"), ("Marie", "B-PER")]]


def test_a_ner_file_with_no_break_spaces_trains_and_is_echoed_word_for_word(tmp_path, capsys):
    data = ner_file(tmp_path / "ner.txt")
    model = tmp_path / "ner.npz"
    code, out, err = run(capsys, "tag", "train", "--task", "ner", data, "-o", model, "--max-iter", "5", "--quiet")
    assert code == 0, err
    code, out, err = run(capsys, "tag", "run", model, data, "--input-format", "conll")
    assert code == 0, err
    echoed = [line.rsplit(" ", 1)[0] for line in out.split("\n") if line]      # (splitlines() breaks at U+2028)
    assert echoed[:len(ODD_WORDS)] == [f"{w} {t}" for w, t in ODD_WORDS]
    text = tmp_path / "text.txt"
    text.write_text("Marie Curie a 10\u00a0000 livres .\n", encoding="utf-8")
    code, out, err = run(capsys, "tag", "run", model, text, "--input-format", "text")
    assert code == 0, err
    assert [token.rsplit("/", 1)[0] for token in out.strip("\n").split(" ")] == ["Marie", "Curie", "a", "10\u00a0000",
                                                                                  "livres", "."]


def test_svmlight_string_labels_are_read_in_the_given_encoding(tmp_path, capsys):
    """--encoding latin-1 was ignored for svmlight labels ("expected a UTF-8 label"); predict writes them back in
    the file's encoding."""
    data = tmp_path / "latin1.svm"
    data.write_bytes("".join(f"{['café', 'thé', 'eau'][i % 3]} {1 + i % 3}:1 {4 + i % 5}:0.5\n"
                             for i in range(30)).encode("latin-1"))
    model = tmp_path / "m.npz"
    code, out, err = run(capsys, "train", data, "-o", model, "--encoding", "latin-1", "--quiet")
    assert code == 0, err
    assert sorted(load_model(model).labels.tolist()) == ["café", "eau", "thé"]
    code, out, err = run(capsys, "train", data, "-o", model)
    one_error(code, err, f"{data}:1", "UTF-8 label", "--encoding")
    assert read_svmlight(data, encoding="cp1252")[1][0] == "café"          # in Python, as the other readers


@pytest.mark.parametrize("workers", [False, True], ids=["one-process", "workers"])
def test_a_regression_target_or_multi_label_lines_are_refused_for_training(workers, tmp_path, capsys):
    """A LIBSVM regression file (housing, ...) trained one Maxent class per distinct value; sklearn's classifiers
    (and loglin's estimators) refuse such labels. --workers also trained multi-label lines as classes named
    "1,2", which the one-process path refuses."""
    rng = np.random.default_rng(0)
    regression = tmp_path / "housing.svm"
    regression.write_text("24.5 1:0.1 2:0.2\n" + "".join(f"{10 + 20 * a:.1f} 1:{a:.3f} 2:{b:.3f}\n"
                                                         for a, b in rng.random((40, 2))))
    multi = tmp_path / "multi.svm"
    multi.write_text("".join(f"{['1', '2', '1,2'][i % 3]} {1 + i % 3}:1\n" for i in range(30)))
    if not workers:
        code, out, err = run(capsys, "train", regression, "-o", tmp_path / "m.npz")
        one_error(code, err, f"{regression}:1", "regression target")
        assert not (tmp_path / "m.npz").exists()
        code, out, err = run(capsys, "train", multi, "-o", tmp_path / "m.npz")
        one_error(code, err, f"{multi}:3", "multi-label")
        _, y = read_svmlight(regression)              # reading alone (and predicting) takes any numbers
        assert y.dtype == np.float64
        return
    from loglin.scale.sources import FileSource, merge_counts
    for path, labels, needle in ((regression, [b"24.5", b"21"], "regression target"),
                                 (multi, [b"1", b"1,2"], "multi-label")):
        with pytest.raises(DataFormatError, match=needle):
            merge_counts(FileSource(str(path), "svmlight"), [{"rows": 2, "n_seen": 2, "labels": labels}])


def test_cross_validated_C_stops_at_the_commands_time_limit(tmp_path, capsys, monkeypatch):
    """-C auto trained its folds without the command's --time-limit: the path ran to its end (here 17 C values
    x 5 folds), then the model got what was left. The limit now bounds the path: exit 124, no model."""
    import loglin.selection as selection
    fit = selection._MatrixFolds.__call__

    def slow_fold(self, f, C, model):
        time.sleep(0.1)
        return fit(self, f, C, model)
    monkeypatch.setattr(selection._MatrixFolds, "__call__", slow_fold)
    data = svmlight_rows(tmp_path / "rows.svm", n=60)
    model = tmp_path / "m.npz"
    # compile the folds' kernels first: on a cold Numba cache the first fold's compilation (seconds, not
    # interruptible) would be timed too, and the bound below is about the limit, not the compiler
    assert run(capsys, "train", data, "-C", "1", "-o", tmp_path / "warm.npz", "--quiet")[0] == 0
    started = time.perf_counter()
    code, out, err = run(capsys, "train", data, "-C", "auto", "-o", model, "--time-limit", "0.5", "--quiet")
    assert time.perf_counter() - started < 2.5
    one_error(code, err, "time limit of 0.5 s", "cross-validating C", "no model written")
    assert code == TimeLimitBeforeTraining.EXIT_STATUS and not model.exists()


def test_a_fold_worker_runs_on_the_commands_clock():
    """Fold worker processes (--jobs) had no command clock: each fold fit got the whole --time-limit afresh."""
    from loglin.signals import command_clock_state, command_time_left, continued_command_clock
    assert command_clock_state() is None
    with continued_command_clock((time.time() - 9.5, 10.0)):      # a command that started 9.5 s ago
        assert command_time_left() <= 0.5
        started, limit = command_clock_state()
        assert time.time() - started >= 9.5 and limit == 10.0
    assert command_time_left() is None
    import pickle
    again = pickle.loads(pickle.dumps(TimeLimitBeforeTraining(1.0, 2.0, "cross-validating C")))
    assert isinstance(again, TimeLimitBeforeTraining) and "cross-validating C" in str(again)


def test_a_treebank_with_one_deprel_trains_its_parser(tmp_path, capsys):
    """Every arc "dep" (an unlabelled conversion), or one-word sentences whose arcs are all "root": the arc
    labeller's Maxent refused one label, and with it the whole command ("need at least two labels to train")."""
    import json
    bank = treebank(tmp_path / "bank.conll", sentences=("The cat sleeps .", "A dog barks loudly .", "Cats sleep ."))
    model = tmp_path / "p.npz"
    code, out, err = run(capsys, "parse", "train", bank, "-o", model, "--max-iter", "5")
    assert code == 0, err
    assert "one DEPREL" in out
    code, out, err = run(capsys, "parse", "run", model, bank)
    assert code == 0, err
    assert {line.split("\t")[7] for line in out.splitlines() if line} == {"dep"}
    code, out, err = run(capsys, "parse", "evaluate", model, bank, "--json")
    assert code == 0, err
    assert json.loads(out)["las"] == json.loads(out)["uas"]


@pytest.mark.parametrize("encoding", [None, "latin-1"])
def test_a_utf16_file_read_without_its_encoding_is_named_as_utf16(encoding, tmp_path, capsys):
    """A UTF-16 file (Notepad's "Unicode", PowerShell's >) read as UTF-8 was "undecodable byte 0xff ... e.g.
    latin-1"; with latin-1 a tagging corpus failed on "expected 5 columns, got 1" and svmlight on "expected an
    integer feature index, got '\\x001\\x00'"."""
    corpus, rows = tmp_path / "ner16.txt", tmp_path / "rows16.svm"
    corpus.write_text("".join(f"{w} {t}\n" for w, t in ODD_WORDS[:3]) + "\n", encoding="utf-16")
    rows.write_text(svmlight_rows(tmp_path / "rows.svm").read_text(), encoding="utf-16")
    extra = [] if encoding is None else ["--encoding", encoding]
    for command in (["tag", "train", "--task", "ner", corpus], ["train", rows]):
        code, out, err = run(capsys, *command, "-o", tmp_path / "m.npz", *extra)
        one_error(code, err, f"{command[-1]}:1", "UTF-16 byte-order mark", "--encoding utf-16")


@pytest.mark.parametrize("command", [["predict"], ["evaluate"], ["info"], ["dump"], ["tag", "run"], ["tag", "evaluate"],
                                     ["parse", "run"], ["parse", "evaluate"], ["train"], ["tag", "train"]],
                         ids=" ".join)
def test_every_command_lists_encoding_in_its_help(command, capsys):
    """Every command takes --encoding, but only the train commands' --help said so."""
    from loglin.cli import main
    with pytest.raises(SystemExit) as stop:
        main(command + ["--help"])
    assert stop.value.code == 0
    assert "--encoding ENC" in capsys.readouterr().out


def test_a_space_separated_conllx_file_is_refused_by_taggers_not_tagged_by_its_ids(tmp_path, capsys):
    """read_conllx reads CoNLL-X lines split at spaces, but the taggers' format check only knew tabs: a
    space-separated treebank was read as columns whose word is the token ID ("1 the the X ... CD")."""
    from .cli_helpers import MODELS
    bank = treebank(tmp_path / "bank.conll")
    spaced = tmp_path / "spaced.conll"
    spaced.write_text(bank.read_text().replace("\t", " "))
    code, out, err = run(capsys, "tag", "run", MODELS / "tagger-pos.npz", spaced)
    one_error(code, err, str(spaced), "CoNLL-U / CoNLL-X treebank")
    code, out, err = run(capsys, "tag", "train", "--format", "columns", spaced, "-o", tmp_path / "m.npz")
    one_error(code, err, str(spaced), "CoNLL-U / CoNLL-X treebank")
    assert not (tmp_path / "m.npz").exists()


def test_feature_dicts_given_to_the_tagger_point_to_the_crfsuite_estimator():
    from loglin.errors import InvalidInputError
    from loglin.tagging.templates import token_columns
    with pytest.raises(InvalidInputError, match="loglin.crfsuite.CRF"):
        token_columns({"bias": 1.0, "word.lower()": "paris", "word.istitle()": True})


@pytest.mark.parametrize("option, name", [("-c", "-C C"), ("-B", "--bias"), ("-v", "--cv"), ("-s", "--penalty")])
def test_a_liblinear_option_names_loglins(option, name, tmp_path, capsys):
    """`loglin train -c 4 a9a` was argparse's "unrecognized arguments: -c a9a" under the top-level usage."""
    data = svmlight_rows(tmp_path / "rows.svm")
    code, out, err = run(capsys, "train", option, "1", data, "-o", tmp_path / "m.npz")
    one_error(code, err, f"{option} is LIBLINEAR's", name)
    assert not (tmp_path / "m.npz").exists()


# ---------------------------------------------------------------- decision 0063: what 0061 left

DOCUMENTS = ("-DOCSTART- -X- -X- O\n\nThe DT B-NP O\ncat NN I-NP B-ANIMAL\nsleeps VBZ B-VP O\n\n"
             "-DOCSTART- -X- -X- O\n\nA DT B-NP O\ndog NN I-NP B-ANIMAL\n\n\n")


def _tagging_model(kind, tmp_path, capsys):
    """A bundled model file, or a loglin.Tagger trained here on a NER file with -DOCSTART- lines."""
    from .cli_helpers import MODELS
    if kind.endswith(".npz"):
        return MODELS / kind
    train = tmp_path / "train.txt"
    train.write_text(DOCUMENTS * 3)
    model = tmp_path / f"{kind}.npz"
    code, out, err = run(capsys, "tag", "train", "--task", "ner", "--model", kind.split("-")[1], train, "-o", model,
                         "--max-iter", "5", "--quiet")
    assert code == 0, err
    return model


@pytest.mark.parametrize("kind", ["tagger-pos.npz", "chain-crf.npz", "chain-m3n.npz", "ner-crf", "ner-maxent"])
def test_tag_run_echoes_docstart_lines_and_lines_up_with_its_input(kind, tmp_path, capsys):
    """`tag run` dropped each -DOCSTART- line and the blank line after it (and runs of blank lines became one), so
    the output had fewer lines than the input and `paste input output` misaligned. Now every input line has its
    output line: a -DOCSTART- line with O appended (as wide as the tagged rows, as conlleval needs), blank lines
    as blank lines; the tokens are tagged exactly as without the -DOCSTART- lines, which stay no token."""
    model = _tagging_model(kind, tmp_path, capsys)
    docs, plain = tmp_path / "docs.txt", tmp_path / "plain.txt"
    docs.write_text(DOCUMENTS)
    plain.write_text(DOCUMENTS.replace("-DOCSTART- -X- -X- O\n\n", ""))
    code, out, err = run(capsys, "tag", "run", model, docs)
    assert code == 0, err
    given, written = DOCUMENTS.split("\n"), out.split("\n")
    assert len(written) == len(given)
    for line, echo in zip(given, written):
        if line.startswith("-DOCSTART-"):
            assert echo == line + " O"
        elif not line.strip():
            assert echo == ""
        else:
            assert echo.split()[:-1] == line.split()
    code, alone, err = run(capsys, "tag", "run", model, plain)
    assert code == 0, err
    assert [line for line in written if line and not line.startswith("-DOCSTART-")] == [line for line in
                                                                                        alone.split("\n") if line]
    code, out, err = run(capsys, "tag", "run", model, docs, "--nbest", "2")       # once each, between sentences
    assert code == 0, err
    assert out.count("-DOCSTART- -X- -X- O O\n\n") == 2 and out.startswith("-DOCSTART-")
    code, alone, err = run(capsys, "tag", "run", model, plain, "--nbest", "2")
    assert out.replace("-DOCSTART- -X- -X- O O\n\n", "") == alone


@pytest.mark.parametrize("kind", ["ner-crf", "ner-maxent"])
def test_docstart_lines_are_still_no_tokens_for_evaluation_and_training(kind, tmp_path, capsys):
    import json
    model = _tagging_model(kind, tmp_path, capsys)
    docs, plain = tmp_path / "docs.txt", tmp_path / "plain.txt"
    docs.write_text(DOCUMENTS)
    plain.write_text(DOCUMENTS.replace("-DOCSTART- -X- -X- O\n\n", ""))
    scores = []
    for data in (docs, plain):
        for command in (["evaluate"], ["tag", "evaluate"]):
            code, out, err = run(capsys, *command, model, data, "--json")
            assert code == 0, err
            got = json.loads(out)
            scores.append({k: got[k] for k in ("f1", "precision", "recall", "accuracy")})
    assert all(s == scores[0] for s in scores)
    assert read_columns(docs) == read_columns(plain)


def test_tag_run_keeps_the_blank_lines_of_text_input(tmp_path, capsys):
    """Text input (a sentence a line) lost its blank lines too: a blank line is an empty output line now."""
    from .cli_helpers import MODELS
    text = tmp_path / "plain.txt"
    text.write_text("the cat sat\n\n\na dog ran\n")
    code, out, err = run(capsys, "tag", "run", MODELS / "tagger-pos.npz", text, "--input-format", "text")
    assert code == 0, err
    lines = out.split("\n")
    assert len(lines) == 5 and lines[1:3] == ["", ""] and lines[-1] == ""
    assert [token.rsplit("/", 1)[0] for token in lines[3].split()] == ["a", "dog", "ran"]


@pytest.mark.slow
def test_folds_stopped_by_the_time_limit_exit_with_one_error_line(tmp_path):
    """When -C auto --jobs 2 ran out of --time-limit, the fold workers were killed and Python's resource tracker
    printed "There appear to be 2 leaked semaphore objects" after loglin's error line: each worker's Numba
    thread launch had registered a named semaphore that only a normal exit releases."""
    import subprocess
    import sys
    from pathlib import Path
    from .cli_helpers import chunk_corpus
    corpus = chunk_corpus(tmp_path / "train.txt", sentences=400)
    model = tmp_path / "m.npz"
    src = Path(__file__).resolve().parents[2] / "src"
    proc = subprocess.run([sys.executable, "-m", "loglin.cli", "tag", "train", "--task", "chunk", "--model", "crf",
                           str(corpus), "-o", str(model), "-C", "auto", "--cv", "2", "--jobs", "2", "--solver", "sgd",
                           "--tol", "0", "--max-iter", "100000000", "--quiet", "--time-limit", "8"],
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "NUMBA_NUM_THREADS": "2"},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == TimeLimitBeforeTraining.EXIT_STATUS, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("loglin: error: time limit of 8 s"), proc.stderr
    assert not model.exists()


def _digits():
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


@pytest.mark.parametrize("call", ["MaxentClassifierCV", "LogisticRegressionCV", "cross_validation_path"])
def test_a_cv_estimators_time_limit_bounds_the_whole_call(call):
    """MaxentClassifierCV(time_limit=T) gave T to every fold fit: 10 C values x 5 folds ran up to 50 T, then the
    refit got T more. T bounds the call now, as --time-limit bounds `loglin train -C auto`."""
    import warnings
    from loglin import LogisticRegression, LogisticRegressionCV, MaxentClassifier, MaxentClassifierCV
    from loglin.selection import cross_validation_path
    X, y = _digits()
    if call == "LogisticRegressionCV":
        y = (y >= 5).astype(int)
    limit, strict = 0.3, {"tol": 1e-12, "max_iter": 10 ** 6, "solver": "lbfgs"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                     # compiled (or loaded from the cache) before the clock
        kind = LogisticRegression if call == "LogisticRegressionCV" else MaxentClassifier
        kind(**{**strict, "max_iter": 2}).fit(X, y).score(X, y)
    estimator = {"MaxentClassifierCV": MaxentClassifierCV, "LogisticRegressionCV": LogisticRegressionCV}.get(call)
    started = time.perf_counter()
    with warnings.catch_warnings(), pytest.raises(TimeLimitBeforeTraining, match="give a larger time_limit"):
        warnings.simplefilter("ignore")
        if estimator is None:
            cross_validation_path(MaxentClassifier(time_limit=limit, **strict), X, y, Cs=10)
        else:
            fitted = estimator(Cs=10, time_limit=limit, **strict)
            fitted.fit(X, y)
    assert time.perf_counter() - started < limit + 1.5           # one more solver step of a fold at most
    if estimator is not None:
        assert not hasattr(fitted, "coef_")


def test_a_cv_estimator_within_its_time_limit_refits_with_what_is_left():
    import warnings
    from loglin import MaxentClassifierCV
    X, y = _digits()
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = MaxentClassifierCV(Cs=[0.1, 1.0], cv=2, time_limit=30.0, solver="lbfgs").fit(X[:400], y[:400])
    assert time.perf_counter() - started < 30.0 and fitted.C_ in (0.1, 1.0) and fitted.coef_.shape == (10, 64)


def test_the_crfsuite_estimator_trains_on_a_single_label(tmp_path):
    """sklearn-crfsuite trains on data with one label and gives it to every token; loglin.crfsuite.CRF refused
    ("need at least two labels"). The log-likelihood is 0 whatever the weights, so the model is w = 0."""
    from loglin.crfsuite import CRF
    X = [[{"w": "Paris", "cap": True}, {"w": "is"}], [{"w": "big", "len": 3.0}]]
    y = [["O", "O"], ["O"]]
    crf = CRF(c1=0.1, model_filename=str(tmp_path / "one.crf")).fit(X, y)
    assert crf.classes_ == ["O"] and crf.n_iter_ == 0
    assert list(crf.predict(X)) == [["O", "O"], ["O"]]
    assert crf.predict_single([{"w": "unseen"}] * 3) == ["O", "O", "O"]
    assert list(crf.predict_marginals(X)) == [[{"O": 1.0}, {"O": 1.0}], [{"O": 1.0}]]
    assert crf.score(X, y) == 1.0
    assert crf.predict_n_best_single(X[0], 3) == [(["O", "O"], pytest.approx(0.0))]
    assert crf.state_features_ == {} and crf.transition_features_ == {}
    assert crf.objective(X, y) == pytest.approx(0.0)
    again = CRF.load(tmp_path / "one.crf")
    assert list(again.predict(X)) == [["O", "O"], ["O"]]


@pytest.mark.parametrize("model", ["crf", "m3n"])
def test_a_chain_tagger_trains_on_a_single_label(model, tmp_path, capsys):
    """loglin.Tagger (and so `tag train`) refused one label as the CRF drop-in did: a NER file without entities
    (every token O) now trains a CRF / M3N that tags O everywhere; a Maxent tagger still needs two labels."""
    from loglin import Tagger
    from loglin.errors import DataContentError
    X, y = [[("Paris",), ("is",)], [("big",)]], [["O", "O"], ["O"]]
    tagger = Tagger(model=model, features="ner").fit(X, y)
    assert tagger.predict(X) == y and tagger.score(X, y) == 1.0 and tagger.n_iter_ == 0
    assert tagger.predict_n_best([X[0]], 3)[0] == [(["O", "O"], pytest.approx(0.0))]
    tagger.save(tmp_path / "t.npz")
    assert Tagger.load(tmp_path / "t.npz").predict([[("Lyon",)]]) == [["O"]]
    with pytest.raises(DataContentError, match="two labels"):
        Tagger(model="maxent", features="ner").fit(X, y)
    corpus = tmp_path / "none.txt"
    corpus.write_text("-DOCSTART- O\n\nNothing O\nhere O\n\nnor there O\n\n".replace("nor there O", "nor O\nthere O"))
    for task in ("ner", "pos"):
        out_model = tmp_path / f"{task}.npz"
        code, out, err = run(capsys, "tag", "train", "--task", task, "--model", model, "--format", "columns", corpus,
                             "-o", out_model, "--quiet")
        assert code == 0, err
        code, out, err = run(capsys, "tag", "run", out_model, corpus, "--input-format", "conll")
        assert code == 0, err
        assert {line.split()[-1] for line in out.split("\n") if line} == {"O"}
