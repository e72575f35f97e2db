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
