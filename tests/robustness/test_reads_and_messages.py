"""No silently wrong read, no valid input refused, no misleading message; every data error names its file."""
import json

import numpy as np
import pytest

from loglin.data import read_svmlight
from loglin.errors import ModelFormatError
from loglin.model_io import load_npz_model, save_npz_model
from loglin.parsing.model import ParserModel
from loglin.solvers.stopping import advice
from loglin.training import DEFAULT_MM_SOLVERS

from .cli_helpers import MODELS, chunk_corpus, one_error, run, svmlight_rows, treebank


# ------------------------------------------------------------------ silently wrong reads
def test_utf8_bom_is_not_part_of_the_first_label(tmp_path):
    plain = svmlight_rows(tmp_path / "plain.svm", n=6)
    with_bom = tmp_path / "bom.svm"
    with_bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    X, y = read_svmlight(with_bom)
    X0, y0 = read_svmlight(plain)
    assert y.dtype == y0.dtype and np.array_equal(y, y0) and (X != X0).nnz == 0


def test_parser_model_with_unsorted_unsigned_keys_is_refused(tmp_path):
    meta, arrays = load_npz_model(MODELS / "parser-crf.npz", "loglin-parser", 99)
    assert arrays["keys"].dtype == np.uint64
    order = np.random.default_rng(0).permutation(len(arrays["keys"]))
    arrays["keys"], arrays["w"] = arrays["keys"][order], arrays["w"][order]
    save_npz_model(tmp_path / "shuffled.npz", meta, arrays)
    with pytest.raises(ModelFormatError, match="inconsistent"):
        ParserModel.load(tmp_path / "shuffled.npz")


@pytest.mark.parametrize("model, fmt", [("lr.npz", []), ("maxent.npz", ["--format", "events"])])
def test_evaluate_on_an_empty_file_is_an_error_naming_it(model, fmt, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    code, out, err = run(capsys, "evaluate", MODELS / model, empty, *fmt)
    one_error(code, err, str(empty))
    assert "nan" not in out.lower()


# ------------------------------------------------------------------ valid input accepted
def test_parse_run_accepts_head_underscore(tmp_path, capsys):
    text = treebank(tmp_path / "text.conll", heads_of=lambda words: ["_"] * len(words))
    code, out, err = run(capsys, "parse", "run", MODELS / "parser-crf.npz", text)
    assert code == 0, err
    heads = [int(line.split("\t")[6]) for line in out.splitlines() if line.strip()]
    assert len(heads) == 9 and heads.count(0) == 2


def test_mixed_head_underscore_is_refused_with_its_line(tmp_path, capsys):
    text = treebank(tmp_path / "mixed.conll", heads_of=lambda words: ["_"] + [0] * (len(words) - 1))
    code, _, err = run(capsys, "parse", "run", MODELS / "parser-crf.npz", text)
    one_error(code, err, f"{text}:2")


@pytest.mark.parametrize("name, model", [("chain-crf.npz", "crf"), ("chain-m3n.npz", "m3n")])
def test_info_describes_chain_models(name, model, capsys):
    code, out, err = run(capsys, "info", MODELS / name, "--json")
    assert code == 0, err
    assert json.loads(out)["model"] == model


def test_m3n_tagger_trains_without_naming_a_solver(tmp_path, capsys):
    corpus = chunk_corpus(tmp_path / "train.txt")
    code, out, err = run(capsys, "tag", "train", "--task", "chunk", corpus, "-o", tmp_path / "m.npz", "--model", "m3n",
                         "--max-iter", "2", "--json")
    assert code == 0, err
    assert json.loads(out)["solver"] == DEFAULT_MM_SOLVERS["chain"]      # the declared M3N chain default


# ------------------------------------------------------------------ misleading behaviour
def test_plain_text_is_not_read_as_conll_columns(tmp_path, capsys):
    text = tmp_path / "plain.txt"
    text.write_text("I love you\nYou love me\nwe see it\n")
    code, out, err = run(capsys, "tag", "run", MODELS / "tagger-pos.npz", text)
    assert code == 0, err
    assert [len(line.split()) for line in out.splitlines()] == [3, 3, 3]
    assert all(token.count("/") == 1 for token in out.split())


def test_conll_columns_with_gold_tags_are_still_detected(tmp_path, capsys):
    columns = tmp_path / "gold.txt"
    columns.write_text("The DT\ncat NN\nsleeps VBZ\n")                # one sentence, no trailing blank line
    code, out, err = run(capsys, "tag", "run", MODELS / "tagger-pos.npz", columns)
    assert code == 0, err
    assert [len(line.split()) for line in out.splitlines() if line.strip()] == [3, 3, 3]


def test_advice_after_tron_does_not_suggest_tron():
    for reason in ("max_iter", "time limit", "solver stopped before the optimality test held"):
        text = advice("tron", reason, 10, 1.0, 1e-2, 1.0, 1e-4, False)
        assert "--solver tron" not in text and "try another solver (tron" not in text
    assert "tron" in advice("lbfgs", "max_iter", 10, 1.0, 1e-2, 1.0, 1e-4, False)
    text = advice("cd", "interrupted", 3, 1.0, 1e-2, 1.0, 1e-4, False, signal_name="SIGINT")
    assert "stopped by SIGINT" in text and "stopped by interrupted" not in text


# ------------------------------------------------------------------ messages naming the file
@pytest.mark.parametrize("content", ["", "\n  \n\n", "# only\n# comments\n", "1 1:1\n1 2:1\n"])
@pytest.mark.parametrize("model", ["auto", "lr", "maxent"])
def test_unusable_training_files_are_named(content, model, tmp_path, capsys):
    data = tmp_path / "train.svm"
    data.write_text(content)
    code, _, err = run(capsys, "train", data, "-o", tmp_path / "m.npz", "--model", model)
    one_error(code, err, str(data))


@pytest.mark.parametrize("command", [["tag", "train", "--task", "chunk"], ["tag", "train", "--task", "chunk",
                                                                         "--model", "crf"], ["parse", "train"]])
def test_empty_structured_training_files_are_named(command, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    code, _, err = run(capsys, *command, empty, "-o", tmp_path / "m.npz")
    one_error(code, err, str(empty))


def test_single_tag_training_file_is_named(tmp_path, capsys):
    corpus = tmp_path / "one.txt"
    corpus.write_text("the DT B-NP\ncat DT B-NP\n\n")
    code, _, err = run(capsys, "tag", "train", "--task", "chunk", corpus, "-o", tmp_path / "m.npz")
    one_error(code, err, str(corpus))


def test_cyclic_tree_names_file_and_line(tmp_path, capsys):
    def cyclic(words):               # 1 -> 2 -> 3 -> 1, the rest under 1
        return [2, 3, 1] + [1] * (len(words) - 3)
    bank = treebank(tmp_path / "cyclic.conll", heads_of=cyclic, sentences=("a b c d",))
    code, _, err = run(capsys, "parse", "train", bank, "-o", tmp_path / "p.npz")
    one_error(code, err, f"{bank}:", "cycle")


@pytest.mark.parametrize("model", ["tagger-pos.npz", "chain-crf.npz", "chain-m3n.npz", "parser-crf.npz"])
def test_evaluating_structured_models_on_an_empty_file_names_it(model, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    code, _, err = run(capsys, "evaluate", MODELS / model, empty)
    one_error(code, err, str(empty))


def test_a_directory_or_device_given_as_model_is_not_called_missing(tmp_path, capsys):
    for path in (tmp_path, "/dev/zero"):
        code, _, err = run(capsys, "info", path)
        line = one_error(code, err, str(path))
        assert "no such" not in line


def test_train_refuses_a_multi_label_line_naming_it(tmp_path, capsys):
    data = svmlight_rows(tmp_path / "ml.svm", n=10)
    lines = data.read_text().splitlines()
    lines[4] = "1,-1 " + lines[4].split(" ", 1)[1]
    data.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "train", data, "-o", tmp_path / "m.npz")
    one_error(code, err, "ml.svm:5", "multi-label")
    assert not (tmp_path / "m.npz").exists()


def test_zero_based_svmlight_files_train_and_predict_like_their_one_based_copy(tmp_path, capsys):
    one = svmlight_rows(tmp_path / "one.svm", n=30, classes=(0, 1, 2))
    zero = tmp_path / "zero.svm"
    zero.write_text("".join(line.split(" ", 1)[0] + " " + " ".join(
        f"{int(tok.split(':')[0]) - 1}:{tok.split(':')[1]}" for tok in line.split()[1:]) + "\n"
        for line in one.read_text().splitlines()))
    code, out, err = run(capsys, "train", zero, "-o", tmp_path / "z.npz")
    one_error(code, err, "zero.svm:", "--zero-based")
    for data, flags, model in ((one, [], "o.npz"), (zero, ["--zero-based"], "z.npz")):
        code, out, err = run(capsys, "train", data, *flags, "-o", tmp_path / model, "--quiet")
        assert code == 0, err
    predictions = []
    for data, model in ((one, "o.npz"), (zero, "z.npz")):
        code, out, err = run(capsys, "predict", tmp_path / model, data, "--proba")
        assert code == 0, err
        predictions.append(np.array([[float(x) for x in line.split()[1:]] for line in out.splitlines()]))
    np.testing.assert_allclose(predictions[0], predictions[1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("model", ["chain-crf.npz"])
def test_tag_evaluate_names_gold_labels_the_model_never_saw(model, tmp_path, capsys):
    corpus = chunk_corpus(tmp_path / "gold.txt")
    shifted = tmp_path / "other.txt"        # the same tokens, another tag set in the last column
    shifted.write_text("".join(line + ("X" if line and not line.endswith(" O") else "") + "\n"
                               for line in corpus.read_text().splitlines()))
    code, out, err = run(capsys, "tag", "evaluate", MODELS / model, shifted, "--json")
    assert code == 0, err
    scores = json.loads(out)
    assert scores["unseen_labels"] and all(label.endswith("X") for label in scores["unseen_labels"])
    code, out, err = run(capsys, "tag", "evaluate", MODELS / model, corpus, "--json")
    assert code == 0 and "unseen_labels" not in json.loads(out)


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
def test_a_file_head_is_whole_lines_of_the_decompressed_text(suffix, tmp_path):
    import gzip
    import lzma
    from loglin.data._files import read_head_lines
    lines = [f"línea {k} " + "x" * k for k in range(40)]
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path = tmp_path / f"f.txt{suffix}"
    path.write_bytes({"": bytes, ".gz": gzip.compress, ".xz": lzma.compress}[suffix](data))
    for size in (1, 30, 200, len(data) - 1, len(data), 10 * len(data)):
        head = read_head_lines(path, size)
        ends = np.cumsum([len(line.encode("utf-8")) + 1 for line in lines])     # each line's end, its newline included
        assert head == lines[:int(np.sum(ends <= size))]
        assert len("".join(line + "\n" for line in head).encode("utf-8")) <= size


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-8", "cp1252"])
def test_a_file_head_cuts_between_characters_in_any_encoding(encoding, tmp_path):
    """A newline byte can be half a character (UTF-16): the head of a valid file is never a decoding error."""
    from loglin.data._files import read_head_lines, read_text_lines, reading_encoding
    lines = [f"línea {k} " + "é" * (k % 7) for k in range(60)]
    path = tmp_path / "f.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding=encoding)
    with reading_encoding(encoding):
        assert read_text_lines(path) == lines
        for size in range(1, path.stat().st_size + 2, 7):
            head = read_head_lines(path, size)
            assert head == lines[:len(head)]
            assert not head or len("".join(line + "\n" for line in head).encode(encoding)) <= size
        assert read_head_lines(path, path.stat().st_size) == lines
