"""One rule for empty input (no line, or only blank / comment lines), every command:

* training on it is one error line naming the file (there is nothing to learn from);
* evaluating on it is one error line naming the file (a score of zero items is undefined: never NaN);
* predicting on it writes nothing (no sentence, no stray blank line) and exits 0, as Unix filters and
  CRFsuite do, so that a pipeline over a file split into parts does not fail on an empty part. A parser and
  a tagger echo their input line for line (decision 0063), so their output of a file of blank lines is those
  blank lines (n-best lists: nothing).
"""
import pytest

from .cli_helpers import MODELS, one_error, run

EMPTY_CONTENTS = {"empty": "", "blank": "\n \n\n"}
TAGGING_MODELS = ["tagger-pos.npz", "chain-crf.npz", "chain-m3n.npz"]
ALL_MODELS = ["lr.npz", "maxent.npz", *TAGGING_MODELS, "parser-crf.npz"]


@pytest.fixture(params=sorted(EMPTY_CONTENTS))
def empty(request, tmp_path):
    path = tmp_path / f"{request.param}.txt"
    path.write_text(EMPTY_CONTENTS[request.param])
    return path


TRAIN_COMMANDS = [["train"], ["train", "--format", "events"], ["train", "--format", "conll2000-chunk"],
                  ["train", "--format", "conll2000-pos"], ["train", "--format", "brown"],
                  ["tag", "train", "--task", "pos"], ["tag", "train", "--task", "chunk", "--model", "crf"],
                  ["tag", "train", "--task", "ner"], ["tag", "train", "--task", "ner", "--model", "maxent"],
                  ["tag", "train", "--task", "pos", "--format", "columns", "--model", "m3n"],
                  ["parse", "train"], ["parse", "train", "--model", "m3n"]]


def nothing_predicted(model, empty):
    """The output of predicting on ``empty``: nothing, or its blank lines from a parser or a tagger (an echo of
    the input, line for line)."""
    echoes = model.startswith("parser") or model in TAGGING_MODELS
    return "\n" * len(empty.read_text().splitlines()) if echoes else ""


@pytest.mark.parametrize("command", TRAIN_COMMANDS, ids=" ".join)
def test_training_on_an_empty_file_is_one_error_naming_it(command, empty, tmp_path, capsys):
    model = tmp_path / "m.npz"
    code, out, err = run(capsys, *command, empty, "-o", model)
    one_error(code, err, str(empty))
    assert not model.exists()


EVALUATE_COMMANDS = ([(["evaluate"], m, []) for m in ALL_MODELS]
                     + [(["tag", "evaluate"], m, []) for m in TAGGING_MODELS]
                     + [(["tag", "evaluate"], "chain-crf.npz", ["--format", "columns"]),
                        (["parse", "evaluate"], "parser-crf.npz", [])])


@pytest.mark.parametrize("verb, model, options", EVALUATE_COMMANDS,
                         ids=lambda x: " ".join(x) if isinstance(x, list) else x)
@pytest.mark.parametrize("as_json", [False, True])
def test_evaluating_on_an_empty_file_is_one_error_naming_it(verb, model, options, as_json, empty, capsys):
    code, out, err = run(capsys, *verb, MODELS / model, empty, *options, *(["--json"] if as_json else []))
    one_error(code, err, str(empty), "no ")
    assert out == "" and "nan" not in err.lower()


PREDICT_COMMANDS = ([["predict", m] for m in ALL_MODELS] + [["tag", "run", m] for m in TAGGING_MODELS]
                    + [["parse", "run", "parser-crf.npz"]])


@pytest.mark.parametrize("command", PREDICT_COMMANDS, ids=" ".join)
def test_predicting_on_an_empty_file_writes_nothing_and_succeeds(command, empty, capsys):
    *verb, model = command
    code, out, err = run(capsys, *verb, MODELS / model, empty)
    assert code == 0, err
    assert out == nothing_predicted(model, empty) and err == ""


@pytest.mark.parametrize("options", [["--input-format", "conll"], ["--input-format", "text"], ["--nbest", "3"],
                                     ["--keep-labels"]])
def test_tag_run_options_on_an_empty_file_write_nothing(options, empty, capsys):
    code, out, err = run(capsys, "tag", "run", MODELS / "chain-crf.npz", empty, *options)
    assert code == 0, err
    assert out == ("" if "--nbest" in options else nothing_predicted("chain-crf.npz", empty))


@pytest.mark.parametrize("options", [["--nbest", "3"], ["--keep-heads"]])
def test_parse_run_options_on_an_empty_file_write_nothing(options, empty, capsys):
    code, out, err = run(capsys, "parse", "run", MODELS / "parser-crf.npz", empty, *options)
    assert code == 0, err
    assert out == nothing_predicted("parser-crf.npz", empty)


def test_parse_run_echoes_a_file_of_comments_only(tmp_path, capsys):
    comments = tmp_path / "comments.conllu"
    comments.write_text("# newdoc id = d1\n# nothing else\n")
    code, out, err = run(capsys, "parse", "run", MODELS / "parser-crf.npz", comments)
    assert code == 0, err
    assert out.splitlines() == ["# newdoc id = d1", "# nothing else"]


def test_predict_probabilities_of_an_empty_file_is_the_header_only(empty, capsys):
    code, out, err = run(capsys, "predict", MODELS / "lr.npz", empty, "--proba")
    assert code == 0, err
    assert len(out.splitlines()) == 1 and out.startswith("labels ")


def test_predict_to_a_file_on_empty_input_writes_an_empty_file(empty, tmp_path, capsys):
    for model in ("lr.npz", "chain-crf.npz", "parser-crf.npz"):
        output = tmp_path / f"{model}.out"
        code, _, err = run(capsys, "predict", MODELS / model, empty, "-o", output)
        assert code == 0, err
        assert output.read_text() == nothing_predicted(model, empty)


@pytest.mark.parametrize("options", [["--task", "chunk"], ["--task", "chunk", "--model", "crf"],
                                     ["--task", "pos", "--model", "maxent", "--features", "ner"]])
def test_tag_train_test_file_empty_or_missing_fails_before_training_naming_it(options, empty, tmp_path, capsys):
    from .cli_helpers import chunk_corpus
    corpus = chunk_corpus(tmp_path / "train.txt")
    model = tmp_path / "m.npz"
    for test in (empty, tmp_path / "missing.txt"):
        code, out, err = run(capsys, "tag", "train", *options, corpus, "--test", test, "-o", model, "--max-iter", "3")
        one_error(code, err, str(test))
        assert not model.exists()
