"""A file of another format given to a tagging command is refused with one line naming it, never tagged as text."""
import pytest

from .cli_helpers import MODELS, one_error, run, svmlight_rows

TAGGING_MODELS = ["tagger-pos.npz", "chain-crf.npz", "chain-m3n.npz"]


def conllu(path):
    """A small CoNLL-U treebank with comments, a multiword token range and an empty node."""
    path.write_text("# sent_id = 1\n# text = The cat sleeps.\n"
                    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
                    "2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_\n"
                    "3\tsleeps\tsleep\tVERB\tVBZ\t_\t0\troot\t_\tSpaceAfter=No\n"
                    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n\n"
                    "# sent_id = 2\n"
                    "1-2\tdella\t_\t_\t_\t_\t_\t_\t_\t_\n"
                    "1\tdi\tdi\tADP\tE\t_\t3\tcase\t_\t_\n"
                    "2\tla\til\tDET\tRD\t_\t3\tdet\t_\t_\n"
                    "2.1\tx\tx\tX\tX\t_\t_\t_\t3:dep\t_\n"
                    "3\tcasa\tcasa\tNOUN\tS\t_\t0\troot\t_\t_\n\n")
    return path


@pytest.mark.parametrize("model", TAGGING_MODELS)
@pytest.mark.parametrize("command", [["predict"], ["tag", "run"]])
def test_svmlight_file_given_to_a_tagger_is_refused(model, command, tmp_path, capsys):
    data = svmlight_rows(tmp_path / "rows.svm", n=6)
    code, out, err = run(capsys, *command, MODELS / model, data)
    one_error(code, err, str(data), "svmlight")
    assert out == ""


@pytest.mark.parametrize("model", TAGGING_MODELS)
@pytest.mark.parametrize("input_format", ["auto", "conll", "text"])
def test_conllu_file_given_to_a_tagger_is_refused(model, input_format, tmp_path, capsys):
    data = conllu(tmp_path / "bank.conllu")
    code, out, err = run(capsys, "tag", "run", MODELS / model, data, "--input-format", input_format)
    one_error(code, err, str(data), "CoNLL-U")
    assert out == ""


def test_text_that_merely_contains_colons_and_tabs_is_still_tagged(tmp_path, capsys):
    text = tmp_path / "plain.txt"
    text.write_text("3 cats at 10:30 today\nthe\tscore was 2:1\n")
    code, out, err = run(capsys, "tag", "run", MODELS / "tagger-pos.npz", text)
    assert code == 0, err
    assert [len(line.split()) for line in out.splitlines()] == [5, 4]


def test_a_conll_2003_file_with_docstart_is_read_as_columns(tmp_path, capsys):
    """The -DOCSTART- line is no token, and is echoed (with O appended, as every row gets its label) where the
    input has it (decision 0063; it was dropped, with the blank line after it)."""
    data = tmp_path / "ner.txt"
    data.write_text("-DOCSTART- -X- -X- O\n\nThe DT B-NP O\ncat NN I-NP O\nsleeps VBZ B-VP O\n\n"
                    "A DT B-NP O\ndog NN I-NP O\n\n")
    code, out, err = run(capsys, "tag", "run", MODELS / "tagger-pos.npz", data)
    assert code == 0, err
    rows = [line.split() for line in out.splitlines() if line.strip()]
    assert rows[0] == ["-DOCSTART-", "-X-", "-X-", "O", "O"]
    assert [r[0] for r in rows[1:]] == ["The", "cat", "sleeps", "A", "dog"] and all(len(r) == 5 for r in rows)
    assert len(out.splitlines()) == len(data.read_text().splitlines())


CONLL_2003 = ("The DT B-NP O\ncat NN I-NP O\nsleeps VBZ B-VP O\n\n"
              "A DT B-NP O\ndog NN I-NP O\n\n")


@pytest.mark.parametrize("model", TAGGING_MODELS)
@pytest.mark.parametrize("command", [["predict"], ["tag", "run"]])
def test_a_conll_2003_file_without_docstart_is_read_as_columns(model, command, tmp_path, capsys):
    data = tmp_path / "ner.txt"
    data.write_text(CONLL_2003)
    code, out, err = run(capsys, *command, MODELS / model, data)
    assert code == 0, err
    rows = [line.split() for line in out.splitlines() if line.strip()]
    assert [r[0] for r in rows] == ["The", "cat", "sleeps", "A", "dog"] and all(len(r) == 5 for r in rows)
    assert [r[:4] for r in rows] == [line.split() for line in CONLL_2003.splitlines() if line]
    assert out.count("\n\n") == 2                         # the sentence breaks are kept


@pytest.mark.parametrize("text", [
    "the cat sat down\n\na dog ran off\n\nthen it rained hard\n",     # one-line paragraphs of one width
    "the cat sat down\na dog ran off\nthen it rained hard\n",         # one width, no sentence breaks
    "the cat sat down\na dog ran off quickly\n\nthen it rained hard\nand we went home\n",   # widths differ
])
def test_text_of_even_lines_stays_text(text, tmp_path, capsys):
    data = tmp_path / "plain.txt"
    data.write_text(text)
    code, out, err = run(capsys, "tag", "run", MODELS / "tagger-pos.npz", data)
    assert code == 0, err
    written = [line.split() for line in out.splitlines() if line.strip()]
    assert [len(r) for r in written] == [len(line.split()) for line in text.splitlines() if line.strip()]
    assert all(token.count("/") == 1 for r in written for token in r)       # word/TAG: read as text


@pytest.mark.parametrize("task", ["pos", "chunk", "ner"])
@pytest.mark.parametrize("foreign", ["svmlight", "CoNLL-U"])
def test_a_foreign_file_given_to_tag_train_is_refused_not_learnt(task, foreign, tmp_path, capsys):
    """An svmlight file has lines of one width, so it read as columns: a NER model learnt its last column."""
    data = svmlight_rows(tmp_path / "rows.svm", n=30) if foreign == "svmlight" else conllu(tmp_path / "bank.conllu")
    model = tmp_path / "m.npz"
    code, out, err = run(capsys, "tag", "train", "--task", task, "--format", "columns", data, "-o", model)
    one_error(code, err, str(data), foreign)
    assert not model.exists()


@pytest.mark.parametrize("model", ["crf", "maxent"])
@pytest.mark.parametrize("foreign", ["svmlight", "CoNLL-U"])
def test_tag_train_workers_refuses_a_foreign_file_before_its_cluster_starts(model, foreign, tmp_path, capsys,
                                                                             monkeypatch):
    """--workers read the file on the workers (CRF) or after the cluster started (Maxent): the format check of the
    one-process path comes first, so the error is one line naming the file and no worker is started."""
    import loglin.scale

    def no_cluster(*args, **kwargs):
        raise AssertionError("a Dask cluster was started for a file that is refused")
    monkeypatch.setattr(loglin.scale, "DaskBackend", no_cluster)
    data = svmlight_rows(tmp_path / "rows.svm", n=30) if foreign == "svmlight" else conllu(tmp_path / "bank.conllu")
    out = tmp_path / "m.npz"
    code, _, err = run(capsys, "tag", "train", "--task", "chunk", "--model", model, data, "-o", out, "--workers", 2)
    one_error(code, err, str(data), foreign)
    assert not out.exists()


@pytest.mark.parametrize("model", TAGGING_MODELS)
@pytest.mark.parametrize("command", [["evaluate"], ["tag", "evaluate"]])
@pytest.mark.parametrize("foreign", ["svmlight", "CoNLL-U"])
def test_a_foreign_file_given_to_tag_evaluate_is_refused(model, command, foreign, tmp_path, capsys):
    data = svmlight_rows(tmp_path / "rows.svm", n=6) if foreign == "svmlight" else conllu(tmp_path / "bank.conllu")
    code, out, err = run(capsys, *command, MODELS / model, data)
    one_error(code, err, str(data), foreign)


@pytest.mark.parametrize("model", TAGGING_MODELS + ["parser-crf.npz"])
@pytest.mark.parametrize("option", [["--proba"], ["--format", "svmlight"], ["--format", "events"]])
def test_flat_model_options_given_for_a_structured_model_are_refused_not_ignored(model, option, tmp_path, capsys):
    data = conllu(tmp_path / "bank.conllu")
    command = "evaluate" if option == ["--format", "events"] else "predict"
    code, out, err = run(capsys, command, MODELS / model, data, *option)
    one_error(code, err, option[0])
    assert out == ""


@pytest.mark.parametrize("model", ["chain-crf.npz", "chain-m3n.npz"])
@pytest.mark.parametrize("command", ["run", "evaluate"])
@pytest.mark.parametrize("option", [["--beam", "1"], ["--tag-dictionary"], ["--iob-constraint"]])
def test_beam_search_options_for_a_chain_model_are_refused_not_ignored(model, command, option, tmp_path, capsys):
    data = tmp_path / "gold.txt"
    data.write_text("The DT B-NP\ncat NN I-NP\nsleeps VBZ B-VP\n\n")
    code, out, err = run(capsys, "tag", command, MODELS / model, data, *option)
    one_error(code, err, option[0])


def test_beam_search_options_reach_a_template_maxent_tagger(tmp_path, capsys, monkeypatch):
    import loglin
    from .cli_helpers import chunk_corpus
    corpus = chunk_corpus(tmp_path / "train.txt")
    model = tmp_path / "m.npz"
    code, _, err = run(capsys, "tag", "train", "--task", "chunk", "--model", "maxent", "--features", "ner", corpus,
                       "-o", model, "--max-iter", "5", "--quiet")
    assert code == 0, err
    seen = []
    predict = loglin.Tagger.predict

    def recording(self, X, constraints=None, **decoding):
        seen.append(decoding)
        return predict(self, X, constraints, **decoding)
    monkeypatch.setattr(loglin.Tagger, "predict", recording)
    for command in ("run", "evaluate"):
        code, _, err = run(capsys, "tag", command, model, corpus, "--beam", "1", "--no-tag-dictionary",
                           *(["--format", "columns"] if command == "evaluate" else []))
        assert code == 0, err
        assert seen[-1] == {"beam": 1, "tag_dictionary": False}
