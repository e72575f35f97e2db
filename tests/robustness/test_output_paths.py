"""A bad output path fails at once, naming the path, before any data is read or any training done."""
import os
import time

import pytest

from loglin.cli import main
from loglin.outputs import atomic_write, check_writable
from loglin.errors import LoglinError

MISSING_DATA = "/nonexistent-data/train.txt"      # never read: the output check comes first


def bad_paths(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    return ["/nonexistent/m.npz", str(a_file / "under" / "m.npz"), "/dev/full", str(tmp_path)]


COMMANDS = {
    "train": lambda out: ["train", MISSING_DATA, "-o", out],
    "train --trace": lambda out: ["train", MISSING_DATA, "-o", "/tmp/unused.npz", "--trace", out],
    "predict": lambda out: ["predict", "/nonexistent-model.npz", MISSING_DATA, "-o", out],
    "tag train": lambda out: ["tag", "train", "--task", "chunk", "--format", "conll2000", MISSING_DATA, "-o", out],
    "tag train --trace": lambda out: ["tag", "train", "--task", "chunk", "--format", "conll2000", MISSING_DATA,
                                      "-o", "/tmp/unused.npz", "--trace", out],
    "tag run": lambda out: ["tag", "run", "/nonexistent-model.npz", MISSING_DATA, "-o", out],
    "parse train": lambda out: ["parse", "train", MISSING_DATA, "-o", out],
    "parse train --trace": lambda out: ["parse", "train", MISSING_DATA, "-o", "/tmp/unused.npz", "--trace", out],
    "train --cv-plot": lambda out: ["train", MISSING_DATA, "-o", "/tmp/unused.npz", "-C", "auto", "--cv-plot", out],
    "train (tagging corpus)": lambda out: ["train", MISSING_DATA, "--format", "conll2000-pos", "-o", out],
    "tag train --task ner": lambda out: ["tag", "train", "--task", "ner", MISSING_DATA, "-o", out],
    "tag train --cv-plot": lambda out: ["tag", "train", "--task", "pos", MISSING_DATA, "-o", "/tmp/unused.npz",
                                        "-C", "auto", "--cv-plot", out],
    "parse run": lambda out: ["parse", "run", "/nonexistent-model.npz", MISSING_DATA, "-o", out],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_output_path_fails_first_with_one_line(command, tmp_path, capsys):
    for out in bad_paths(tmp_path):
        start = time.perf_counter()
        code = main(COMMANDS[command](out))
        err = capsys.readouterr().err
        assert time.perf_counter() - start < 1.0
        assert code == 2, (command, out, err)
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("loglin: error: ") and out in lines[0], (command, err)
        assert "Traceback" not in err


def test_check_writable_accepts_new_and_existing_files(tmp_path):
    existing = tmp_path / "m.npz"
    existing.write_text("old")
    check_writable(tmp_path / "new.npz", existing, None, "/dev/null")
    with pytest.raises(LoglinError, match="does not exist"):
        check_writable(tmp_path / "no" / "m.npz")
    assert existing.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "model.npz"
    target.write_bytes(b"complete old model")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as fh:
            fh.write(b"half of a new mo")
            raise RuntimeError("interrupted")
    assert target.read_bytes() == b"complete old model"
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]          # no temporary left behind
    with atomic_write(target) as fh:
        fh.write(b"new")
    assert target.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["model.npz"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only directories")
@pytest.mark.parametrize("command", sorted(c for c in COMMANDS if "train" in c))
def test_read_only_directory_fails_first_for_every_train_command(command, tmp_path, capsys):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        out = str(folder / "m.npz")
        code = main(COMMANDS[command](out))
        err = capsys.readouterr().err
    finally:
        folder.chmod(0o755)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and out in lines[0], (command, err)
    assert not any(folder.iterdir())
