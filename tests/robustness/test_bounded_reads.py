"""Readers and model loading never allocate by a number read from the file: a clear error instead."""
import io
import random
import zipfile

import numpy as np
import pytest

from loglin.errors import ModelFormatError
from loglin.model_io import load_model, load_npz_model, model_format

from .cli_helpers import MODELS, one_error, run, treebank


@pytest.mark.parametrize("power", [28, 33, 40])
def test_svmlight_feature_index_far_beyond_the_data_is_refused(power, tmp_path, capsys):
    data = tmp_path / "big.svm"
    data.write_text(f"1 1:1\n-1 2:1\n1 1:0.5 {2 ** power}:1\n")
    code, _, err = run(capsys, "train", data, "-o", tmp_path / "m.npz")
    one_error(code, err, f"{data}:3", str(2 ** power))


def test_conll_head_too_large_names_file_and_line(tmp_path, capsys):
    bank = treebank(tmp_path / "t.conll", heads_of=lambda words: [2 ** 40] + [0] * (len(words) - 1))
    for argv in (["parse", "train", bank, "-o", tmp_path / "p.npz"],
                 ["parse", "evaluate", MODELS / "parser-crf.npz", bank]):
        code, _, err = run(capsys, *argv)
        one_error(code, err, f"{bank}:1", str(2 ** 40))


def _rewrite_member_header(source, target, shape):
    """Copy a model archive, declaring ``shape`` in the header of its weight member (data unchanged)."""
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in archive.infolist():
            data = archive.read(info.filename)
            if info.filename == "w.npy":
                array = np.load(io.BytesIO(data))
                header = io.BytesIO()
                np.lib.format.write_array_header_1_0(header, {"descr": np.lib.format.dtype_to_descr(array.dtype),
                                                              "fortran_order": False, "shape": shape})
                data = header.getvalue() + data[len(data) - array.nbytes:]
            out.writestr(info.filename, data)


@pytest.mark.parametrize("shape", [(2 ** 40,), (2 ** 20, 2 ** 20), (3,)])
def test_member_header_that_does_not_fit_the_file_is_refused_before_allocating(shape, tmp_path, capsys):
    damaged = tmp_path / "m.npz"
    _rewrite_member_header(MODELS / "lr.npz", damaged, shape)
    with pytest.raises(ModelFormatError, match="does not match"):
        load_model(damaged)
    code, _, err = run(capsys, "info", damaged)
    one_error(code, err, str(damaged))


@pytest.mark.parametrize("name", ["lr.npz", "tagger-pos.npz", "chain-crf.npz"])
def test_single_bit_flips_load_the_same_arrays_or_fail_cleanly(name, tmp_path):
    source = MODELS / name
    raw = source.read_bytes()
    fmt = model_format(source)
    _, reference = load_npz_model(source, fmt, 99)
    rng = random.Random(sum(raw[:64]))
    clean = 0
    for k in range(48):
        flipped = bytearray(raw)
        position = rng.randrange(len(raw))
        flipped[position] ^= 1 << rng.randrange(8)
        path = tmp_path / f"flip{k}.npz"
        path.write_bytes(bytes(flipped))
        try:
            got_format = model_format(path)
            _, arrays = load_npz_model(path, got_format, 99)
        except ModelFormatError:
            continue
        assert got_format == fmt and arrays.keys() == reference.keys(), position
        for key, value in reference.items():          # a flip that loads only touched bytes nobody reads
            assert value.dtype == arrays[key].dtype and np.array_equal(value, arrays[key]), (position, key)
        clean += 1
    assert clean < 48


def test_object_arrays_are_refused_without_suggesting_unsafe_loading(tmp_path, capsys):
    evil = tmp_path / "evil.npz"
    np.savez(evil, __meta__=np.frombuffer(b'{"loglin_format": "loglin-linear", "format_version": 1}', np.uint8),
             w=np.array([object()], dtype=object))
    data = tmp_path / "train.svm"
    data.write_text("1 1:1\n-1 2:1\n")
    npy = tmp_path / "plain.npy"
    np.save(npy, np.arange(3))
    for path in (evil, data, npy):
        code, _, err = run(capsys, "info", path)
        line = one_error(code, err, str(path))
        assert "pickle" not in line.lower()


@pytest.mark.parametrize("argv", [["train", "/dev/zero"], ["train", "/dev/zero", "--format", "events"],
                                  ["tag", "train", "/dev/zero"], ["parse", "train", "/dev/zero"]])
def test_training_on_a_device_is_refused(argv, tmp_path, capsys):
    code, _, err = run(capsys, *argv, "-o", tmp_path / "m.npz")
    one_error(code, err, "/dev/zero")


def test_prediction_input_drops_features_beyond_the_model_before_sizing(tmp_path, capsys):
    small, big = tmp_path / "small.svm", tmp_path / "big.svm"
    small.write_text("-1 1:1\n1 2:1 3:0.5\n")
    big.write_text(f"-1 1:1 {2 ** 40}:1\n1 2:1 3:0.5 {2 ** 30}:7\n")
    outputs = []
    for data in (small, big):
        code, out, err = run(capsys, "predict", MODELS / "lr.npz", data, "--proba")
        assert code == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1]


def test_idx_header_whose_size_product_wraps_is_refused(tmp_path):
    import struct

    from loglin.data.mnist import IMAGE_MAGIC, read_idx_images
    from loglin.errors import DataFormatError
    path = tmp_path / "images.idx"
    path.write_bytes(struct.pack(">iiii", IMAGE_MAGIC, 2 ** 21, 2 ** 21, 2 ** 22))     # 2**64 pixels: 0 in int64
    with pytest.raises(DataFormatError, match="size mismatch"):
        read_idx_images(path)


def test_a_template_range_is_bounded_before_it_is_expanded(tmp_path, capsys):
    from loglin.limits import MAX_TEMPLATE_RANGE
    from loglin.tagging.templates import Template
    assert len(Template.parse(f"w[0..{MAX_TEMPLATE_RANGE - 1}]")) == MAX_TEMPLATE_RANGE
    templates = tmp_path / "wide.txt"
    templates.write_text("w[0]\nw[-100000000..100000000]\n")
    corpus = tmp_path / "ner.txt"
    corpus.write_text("John NNP B-PER\nruns VBZ O\n\nMary NNP B-PER\n\n")
    code, _, err = run(capsys, "tag", "train", "--task", "ner", corpus, "--features", templates, "-o", tmp_path / "m.npz")
    one_error(code, err, "wide.txt", "200,000,001")
