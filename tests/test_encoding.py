"""--encoding / encoding=: every text reader decodes legacy encodings when told, and names the line when not."""
import subprocess
import sys

import pytest

from loglin.data import read_conll2000, read_conllx, read_events, reading_encoding
from loglin.errors import DataFormatError

TREE = "1\tHola\t_\tNOUN\tNC\t_\t0\tROOT\t_\t_\n2\tniño\t_\tNOUN\tNC\t_\t1\tobj\t_\t_\n\n"


def test_readers_take_an_encoding_and_name_the_line_without_it(tmp_path):
    tree = tmp_path / "t.conll"
    tree.write_bytes(TREE.encode("latin-1"))
    with pytest.raises(DataFormatError, match=r"t.conll:2: expected UTF-8 .*--encoding"):
        read_conllx(tree)
    assert read_conllx(tree, encoding="latin-1")[0].forms[1] == "niño"
    with reading_encoding("iso-8859-1"):
        assert read_conllx(tree)[0].forms[1] == "niño"
    chunks = tmp_path / "c.txt"
    chunks.write_bytes("Señor NNP B-NP\nruns VBZ B-VP\n\n".encode("cp1252"))
    assert read_conll2000(chunks, encoding="cp1252")[0][0][0] == "Señor"
    events = tmp_path / "e.txt"
    events.write_bytes("A w=año\nB w=niño\n".encode("latin-1"))
    assert read_events(events, encoding="latin-1").contexts[0] == ["w=año"]
    with pytest.raises(ValueError, match="unknown text encoding"):
        read_events(events, encoding="no-such-codec")


def test_cli_encoding_option_for_any_command(tmp_path):
    tree = tmp_path / "t.conll"
    tree.write_bytes((TREE * 3).encode("latin-1"))
    run = [sys.executable, "-m", "loglin.cli", "parse"]
    bad = subprocess.run(run + ["train", str(tree), "-o", str(tmp_path / "p.npz")], capture_output=True, text=True,
                         timeout=600)
    assert bad.returncode == 2 and "--encoding" in bad.stderr and "Traceback" not in bad.stderr
    ok = subprocess.run(run + ["train", str(tree), "-o", str(tmp_path / "p.npz"), "--encoding", "latin-1",
                               "--quiet"], capture_output=True, text=True, timeout=600)
    assert ok.returncode == 0, ok.stderr
    score = subprocess.run(run + ["evaluate", str(tmp_path / "p.npz"), str(tree), "--encoding=latin-1"],
                           capture_output=True, text=True, timeout=600)
    assert score.returncode == 0 and "UAS" in score.stdout
    unknown = subprocess.run(run + ["evaluate", str(tmp_path / "p.npz"), str(tree), "--encoding", "klingon"],
                             capture_output=True, text=True, timeout=600)
    assert unknown.returncode == 2 and "unknown text encoding" in unknown.stderr


LATIN_TREE = "1\tEl\tel\td\tDA\t_\t2\tspec\t_\t_\n2\tniño\tniño\tn\tNC\t_\t3\tSUJ\t_\t_\n3\tcomió\tcomer\tv\tVM\t_\t0\tROOT\t_\t_\n\n"


def _forms(data: bytes):
    return [line.split(b"\t")[1] for line in data.splitlines() if line.strip()]


def test_run_commands_write_the_encoding_they_read(tmp_path, capsysbinary):
    """tag run / parse run echo their input: with --encoding latin-1 the output is latin-1 too, so that a
    CoNLL scorer comparing its forms with the gold file's bytes finds them equal."""
    from loglin.cli import main
    tree = tmp_path / "t.conll"
    tree.write_bytes((LATIN_TREE * 3).encode("latin-1"))
    assert main(["parse", "train", str(tree), "-o", str(tmp_path / "p.npz"), "--encoding", "latin-1", "--quiet"]) == 0
    out = tmp_path / "out.conll"
    assert main(["parse", "run", str(tmp_path / "p.npz"), str(tree), "-o", str(out), "--encoding", "latin-1"]) == 0
    assert _forms(out.read_bytes()) == _forms(tree.read_bytes())
    capsysbinary.readouterr()
    assert main(["parse", "run", str(tmp_path / "p.npz"), str(tree), "--encoding", "latin-1"]) == 0
    assert _forms(capsysbinary.readouterr().out) == _forms(tree.read_bytes())
    columns = tmp_path / "ner.txt"
    columns.write_bytes("Año O\nMünchen B-LOC\n\nniño O\nKöln B-LOC\n\n".encode("latin-1") * 4)
    assert main(["tag", "train", "--task", "ner", str(columns), "-o", str(tmp_path / "n.npz"), "--encoding",
                 "latin-1", "--quiet", "--max-iter", "5"]) == 0
    capsysbinary.readouterr()
    tagged = tmp_path / "tagged.txt"
    assert main(["tag", "run", str(tmp_path / "n.npz"), str(columns), "-o", str(tagged), "--encoding", "latin-1"]) == 0
    assert [line.split()[0] for line in tagged.read_bytes().splitlines() if line.strip()] == \
        [line.split()[0] for line in columns.read_bytes().splitlines() if line.strip()]
    assert main(["tag", "run", str(tmp_path / "n.npz"), str(columns), "--encoding", "latin-1"]) == 0
    assert capsysbinary.readouterr().out == tagged.read_bytes()


def test_a_label_the_output_encoding_cannot_hold_is_one_error(tmp_path, capsys):
    from loglin.cli import main
    columns = tmp_path / "ner.txt"
    columns.write_text("Paris B-LOC→\nis O\n\nRome B-LOC→\nis O\n\n" * 3, encoding="utf-8")
    assert main(["tag", "train", "--task", "ner", str(columns), "-o", str(tmp_path / "n.npz"), "--quiet",
                 "--max-iter", "5"]) == 0
    text = tmp_path / "text.txt"
    text.write_text("Paris is\n", encoding="latin-1")
    capsys.readouterr()
    code = main(["tag", "run", str(tmp_path / "n.npz"), str(text), "-o", str(tmp_path / "o.txt"), "--encoding",
                 "latin-1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("loglin: error:") == 1 and "o.txt" in err and "--encoding" in err, err


def test_info_dump_and_scores_write_utf8_whatever_the_locale(tmp_path):
    """A model trained on accented text, inspected in an ASCII locale (LC_ALL=C without Python's UTF-8 mode):
    info, dump and the per-type scores of tag evaluate write UTF-8 as the run commands do, and dump's standard
    output is its -o file byte for byte."""
    import os
    from loglin.cli import main
    columns = tmp_path / "ner.txt"
    columns.write_text("Año O\nMünchen B-LÖC\n\nniño O\nKöln B-LÖC\n\n" * 4, encoding="utf-8")
    model = tmp_path / "n.npz"
    assert main(["tag", "train", "--task", "ner", str(columns), "-o", str(model), "--quiet", "--max-iter", "5"]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIOENCODING"))}
    env.update(LC_ALL="C", PYTHONUTF8="0")
    command = [sys.executable, "-m", "loglin.cli"]
    info = subprocess.run(command + ["info", str(model), "--top", "3"], capture_output=True, env=env, timeout=600)
    assert info.returncode == 0 and b"Traceback" not in info.stderr, info.stderr
    assert "B-LÖC" in info.stdout.decode("utf-8")
    dump = subprocess.run(command + ["dump", str(model)], capture_output=True, env=env, timeout=600)
    assert dump.returncode == 0, dump.stderr
    assert "w[0]=Köln" in dump.stdout.decode("utf-8")
    assert main(["dump", str(model), "-o", str(tmp_path / "dump.tsv")]) == 0
    assert dump.stdout == (tmp_path / "dump.tsv").read_bytes()
    scores = subprocess.run(command + ["tag", "evaluate", str(model), str(columns)], capture_output=True, env=env,
                            timeout=600)
    assert scores.returncode == 0, scores.stderr
    assert "LÖC: precision" in scores.stdout.decode("utf-8")


def test_utf16_input_writes_utf16_files_and_utf8_to_standard_output(tmp_path):
    """UTF-16 is not ASCII-compatible: a file tag run writes keeps the input's encoding, but standard output (the
    summary, --json, tag run without -o) is UTF-8, which a terminal, a pipe or a JSON reader can read."""
    import json
    columns = tmp_path / "ner.txt"
    columns.write_text("Año O\nMünchen B-LOC\n\nniño O\nKöln B-LOC\n\n" * 4, encoding="utf-16")
    model = tmp_path / "n.npz"
    command = [sys.executable, "-m", "loglin.cli", "tag"]
    trained = subprocess.run(command + ["train", "--task", "ner", str(columns), "-o", str(model), "--encoding",
                                        "utf-16", "--max-iter", "5", "--json"], capture_output=True, timeout=600)
    assert trained.returncode == 0, trained.stderr
    assert json.loads(trained.stdout.decode("utf-8"))["model"] == str(model)
    tagged = tmp_path / "tagged.txt"
    ran = subprocess.run(command + ["run", str(model), str(columns), "-o", str(tagged), "--encoding", "utf-16"],
                         capture_output=True, timeout=600)
    assert ran.returncode == 0, ran.stderr
    words = [line.split()[0] for line in columns.read_text(encoding="utf-16").splitlines() if line.strip()]
    assert [line.split()[0] for line in tagged.read_text(encoding="utf-16").splitlines() if line.strip()] == words
    shown = subprocess.run(command + ["run", str(model), str(columns), "--encoding", "utf-16"], capture_output=True,
                           timeout=600)
    assert shown.returncode == 0, shown.stderr
    assert [line.split()[0] for line in shown.stdout.decode("utf-8").splitlines() if line.strip()] == words


def test_utf16_svmlight_trains_as_its_utf8_copy_and_workers_refuse_it_before_starting(tmp_path):
    """svmlight is read as bytes: with --encoding utf-16 it is transcoded first (same model as the UTF-8 file);
    --workers read byte ranges cut at newline bytes, which UTF-16 cannot be cut at: one error line naming the
    file, before any cluster starts, and the same refusal from the sharding API."""
    import numpy as np
    from loglin.cli import main
    from loglin.errors import InvalidInputError
    from loglin.scale.sources import FileSource
    text = "".join(f"{1 if i % 3 else -1} {1 + i % 5}:1 {7 + i % 4}:0.5 12:{i % 7 / 7:.3f}\n" for i in range(60))
    utf8, utf16 = tmp_path / "d8.svm", tmp_path / "d16.svm"
    utf8.write_text(text, encoding="utf-8")
    utf16.write_text(text, encoding="utf-16")
    for data, model, extra in ((utf8, "m8.npz", []), (utf16, "m16.npz", ["--encoding", "utf-16"])):
        assert main(["train", str(data), "-o", str(tmp_path / model), "--quiet"] + extra) == 0
    assert np.array_equal(np.load(tmp_path / "m8.npz")["w"], np.load(tmp_path / "m16.npz")["w"])
    refused = subprocess.run([sys.executable, "-m", "loglin.cli", "train", str(utf16), "-o", str(tmp_path / "w.npz"),
                              "--encoding", "utf-16", "--workers", "2"], capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "d16.svm" in refused.stderr and "UTF-8" in refused.stderr and not (tmp_path / "w.npz").exists()
    with pytest.raises(InvalidInputError, match="byte ranges"):
        FileSource(str(utf16), "svmlight", encoding="utf-16")
    FileSource(str(utf8), "svmlight", encoding="latin-1")
