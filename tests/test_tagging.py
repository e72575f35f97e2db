"""Beam decoding against brute force, the MaxentTaggerModel API, model files and the `loglin tag` command."""
import itertools
import json
import zipfile

import numpy as np
import pytest

from loglin.data import read_conll2000
from loglin.errors import InvalidInputError, ModelFormatError
from loglin.features import FeatureExtractor
from loglin.model_io import load_npz_model, save_npz_model
from loglin.tagging import MaxentTaggerModel
from loglin.tagging.beam import DecodeInput, beam_decode
from loglin.tagging.cli import tag_main
from loglin.tagging.datasets import bundled_conll2000_small
from loglin.training import ConvergenceWarning

VOCAB = ["the", "dog", "runs", "Fast", "x-ray", "12", "a", "cat"]


def _synthetic(task, rng, n=60):
    words, labels, tags = [], [], []
    names = ["A", "B", "C"] if task == "pos" else ["B-NP", "I-NP", "O"]
    for _ in range(n):
        L = int(rng.integers(1, 6))
        words.append([VOCAB[i] for i in rng.integers(len(VOCAB), size=L)])
        labels.append([names[i] for i in rng.integers(3, size=L)])
        tags.append([["DT", "NN", "VB"][i] for i in rng.integers(3, size=L)])
    return words, labels, (tags if task == "chunk" else None)


def _position_logprobs(fx, problem, w, words, tags, seq):
    """log P(. | context_i(seq_<i)) at every position, from predicate names (the vectorized path)."""
    names = fx.event_predicates([words], [list(seq)], None if tags is None else [tags])
    if not hasattr(fx, "_test_index"):
        fx._test_index = {n: i for i, n in enumerate(fx.predicate_names())}
    index = fx._test_index
    out = []
    for preds in names:
        s = np.zeros(fx.n_labels)
        for name in preds:
            p = index[name]
            for j in range(problem.map_ptr[p], problem.map_ptr[p + 1]):
                s[problem.map_label[j]] += w[problem.map_feat[j]]
        out.append(s - (np.log(np.exp(s - s.max()).sum()) + s.max()))
    return out


def _sequence_logprob(fx, problem, w, words, tags, seq):
    logp = _position_logprobs(fx, problem, w, words, tags, seq)
    return sum(lp[fx.labels.index(y)] for lp, y in zip(logp, seq))


@pytest.mark.parametrize("task", ["pos", "chunk"])
def test_wide_beam_is_exact_and_beam_one_is_greedy(task):
    rng = np.random.default_rng(1)
    words, labels, tags = _synthetic(task, rng)
    fx = FeatureExtractor(task, cutoff=1)
    problem, _ = fx.fit(words, labels, tags)
    w = rng.normal(scale=1.5, size=problem.n_features)
    test_w = [s for s in words if len(s) >= 3][:4]
    test_t = None if tags is None else [t for s, t in zip(words, tags) if len(s) >= 3][:4]
    data = DecodeInput.build(fx, fx.encode(test_w, test_t))
    exact = beam_decode(fx, w, problem.map_ptr, problem.map_label, problem.map_feat, data, beam=81)
    greedy = beam_decode(fx, w, problem.map_ptr, problem.map_label, problem.map_feat, data, beam=1)
    at = 0
    for k, s in enumerate(test_w):
        t = None if test_t is None else test_t[k]
        scores = {seq: _sequence_logprob(fx, problem, w, s, t, seq)
                  for seq in itertools.product(fx.labels, repeat=len(s))}
        best = max(scores, key=scores.get)
        assert [fx.labels[y] for y in exact[at:at + len(s)]] == list(best)
        # greedy: extend the best label at each step
        seq = []
        for i in range(len(s)):      # labels after i do not enter position i's context
            padded = seq + [fx.labels[0]] * (len(s) - i)
            seq.append(fx.labels[int(np.argmax(_position_logprobs(fx, problem, w, s, t, padded)[i]))])
        assert [fx.labels[y] for y in greedy[at:at + len(s)]] == seq
        at += len(s)


def test_tag_dictionary_restricts_known_words():
    rng = np.random.default_rng(2)
    words, labels, _ = _synthetic("pos", rng)
    words.append(["zebra", "the"])
    labels.append(["C", "A"])
    fx = FeatureExtractor("pos", cutoff=1)
    problem, _ = fx.fit(words, labels)
    w = rng.normal(size=problem.n_features)
    data = DecodeInput.build(fx, fx.encode([["zebra", "zebra", "dog"]]))
    out = beam_decode(fx, w, problem.map_ptr, problem.map_label, problem.map_feat, data, beam=3,
                      tag_dictionary=True)
    assert fx.labels[out[0]] == "C" and fx.labels[out[1]] == "C"
    seen_dog = {y for s, t in zip(words, labels) for a, y in zip(s, t) if a == "dog"}
    assert fx.labels[out[2]] in seen_dog
    with pytest.raises(InvalidInputError):
        beam_decode(fx, w, problem.map_ptr, problem.map_label, problem.map_feat, data, beam=0)


@pytest.fixture(scope="module")
def small_corpus():
    train, test = bundled_conll2000_small()
    return read_conll2000(train)[:250], read_conll2000(test)[:100]


@pytest.fixture(scope="module")
def pos_tagger(small_corpus):
    train, _ = small_corpus
    return MaxentTaggerModel.train([[(w, p) for w, p, _ in s] for s in train], "pos", cutoff=1, max_iter=40, tol=1e-2)


def test_tagger_scores_agree_with_its_own_tags(pos_tagger, small_corpus):
    _, test = small_corpus
    gold = [[(w, p) for w, p, _ in s] for s in test]
    result = pos_tagger.evaluate(gold)
    guess = pos_tagger.tag([[w for w, _ in s] for s in gold])
    flat_g = [p for s in gold for _, p in s]
    flat_h = [p for s in guess for p in s]
    assert result["accuracy"] == pytest.approx(100 * np.mean(np.array(flat_g) == np.array(flat_h)))
    assert result["accuracy"] > 80.0 and result["tokens_per_second"] > 0
    # tuples whose first field is the word are accepted too
    assert pos_tagger.tag([[(w, p) for w, p in s] for s in gold[:3]]) == guess[:3]
    assert pos_tagger.tag([]) == []


def test_model_file_roundtrip_and_rejections(pos_tagger, small_corpus, tmp_path):
    _, test = small_corpus
    sents = [[w for w, _, _ in s] for s in test[:20]]
    path = tmp_path / "pos.npz"
    pos_tagger.save(path)
    loaded = MaxentTaggerModel.load(path)
    assert loaded.tag(sents) == pos_tagger.tag(sents)
    assert loaded.labels == pos_tagger.labels and loaded.beam == pos_tagger.beam
    # truncated file
    raw = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ModelFormatError):
        MaxentTaggerModel.load(tmp_path / "cut.npz")
    # not a zip at all
    (tmp_path / "junk.npz").write_bytes(b"\x00garbage" * 50)
    with pytest.raises(ModelFormatError):
        MaxentTaggerModel.load(tmp_path / "junk.npz")
    meta, arrays = load_npz_model(path, "loglin-tagger", 1)
    # newer version
    save_npz_model(tmp_path / "new.npz", dict(meta, format_version=99), arrays)
    with pytest.raises(ModelFormatError, match="newer"):
        MaxentTaggerModel.load(tmp_path / "new.npz")
    # labels out of range / inconsistent index / missing vocabulary
    bad = dict(arrays, map_label=arrays["map_label"] + 1000)
    save_npz_model(tmp_path / "bad1.npz", meta, bad)
    with pytest.raises(ModelFormatError):
        MaxentTaggerModel.load(tmp_path / "bad1.npz")
    save_npz_model(tmp_path / "bad2.npz", meta, dict(arrays, feat_group_ptr=arrays["feat_group_ptr"][:-1]))
    with pytest.raises(ModelFormatError):
        MaxentTaggerModel.load(tmp_path / "bad2.npz")
    broken = json.loads(json.dumps(meta))
    del broken["features"]["words"]
    save_npz_model(tmp_path / "bad3.npz", broken, arrays)
    with pytest.raises(ModelFormatError):
        MaxentTaggerModel.load(tmp_path / "bad3.npz")
    # a pickle inside is never loaded
    with zipfile.ZipFile(tmp_path / "pickle.npz", "w") as z:
        z.writestr("__meta__.npy", raw[:10])
    with pytest.raises(ModelFormatError):
        MaxentTaggerModel.load(tmp_path / "pickle.npz")


def test_training_input_errors():
    with pytest.raises(InvalidInputError):
        MaxentTaggerModel.train([[("a", "X")]], "ner")
    with pytest.raises(InvalidInputError):
        MaxentTaggerModel.train([[("a",)]], "pos")
    with pytest.raises(InvalidInputError):
        MaxentTaggerModel.train([[("a", "X")], [("b", "Y")]], "pos", C=-1)


def _write_conll(path, sentences):
    path.write_text("".join("".join(" ".join(t) + "\n" for t in s) + "\n" for s in sentences))


def test_cli_train_evaluate_run(small_corpus, tmp_path, capsys):
    train, test = small_corpus
    _write_conll(tmp_path / "train.txt", train[:100])
    _write_conll(tmp_path / "test.txt", test[:30])
    model = tmp_path / "chunk.npz"
    assert tag_main(["train", "--task", "chunk", str(tmp_path / "train.txt"), "-o", str(model),
                     "--sigma2", "10", "--cutoff", "1", "--max-iter", "15", "--tol", "1e-2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["task"] == "chunk" and report["C"] == 10.0 and model.is_file()
    assert tag_main(["evaluate", str(model), str(tmp_path / "test.txt"), "--json", "--beam", "1"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert {"precision", "recall", "f1", "tokens_per_second"} <= set(scores)
    # `loglin tag MODEL INPUT` on CoNLL input appends a column; on text input writes word/POS/CHUNK
    assert tag_main([str(model), str(tmp_path / "test.txt"), "-o", str(tmp_path / "out.txt")]) == 0
    lines = [line.split() for line in (tmp_path / "out.txt").read_text().splitlines() if line]
    assert len(lines) == sum(len(s) for s in test[:30]) and all(len(f) == 4 for f in lines)
    (tmp_path / "plain.txt").write_text("He/PRP reckons/VBZ the/DT deficit/NN ./.\n")
    assert tag_main(["run", str(model), str(tmp_path / "plain.txt")]) == 0
    out = capsys.readouterr().out.split()
    assert len(out) == 5 and out[0].startswith("He/PRP/")
    with pytest.raises(ModelFormatError):
        tag_main([str(tmp_path / "test.txt"), str(tmp_path / "plain.txt")])


def test_iob_constraint_gives_well_formed_chunks():
    rng = np.random.default_rng(3)
    words, labels, tags = _synthetic("chunk", rng, n=80)
    labels = [[y if y == "O" else rng.choice(["B-", "I-"]) + rng.choice(["NP", "VP"]) for y in s] for s in labels]
    fx = FeatureExtractor("chunk", cutoff=1)
    problem, _ = fx.fit(words, labels, tags)
    w = rng.normal(scale=3.0, size=problem.n_features)
    data = DecodeInput.build(fx, fx.encode(words, tags))
    free = beam_decode(fx, w, problem.map_ptr, problem.map_label, problem.map_feat, data, beam=3)
    out = beam_decode(fx, w, problem.map_ptr, problem.map_label, problem.map_feat, data, beam=3,
                      iob_constraint=True)

    def violations(flat):
        bad, at = 0, 0
        for s in words:
            seq = [fx.labels[y] for y in flat[at:at + len(s)]]
            prev = "O"
            for y in seq:
                bad += y.startswith("I-") and (prev == "O" or prev[2:] != y[2:])
                prev = y
            at += len(s)
        return bad

    assert violations(free) > 0 and violations(out) == 0


def test_training_records_held_out_score(small_corpus):
    train, test = small_corpus
    with pytest.warns(ConvergenceWarning):
        tagger = MaxentTaggerModel.train([[(w, p) for w, p, _ in s] for s in train[:120]], "pos", max_iter=6,
                              evaluate=[[(w, p) for w, p, _ in s] for s in test[:40]], tol=1e-6)
    metric = tagger.result.trace.column("metric")
    assert len(metric) == tagger.result.iterations + 1
    assert metric[-1] > metric[0]
    # the last recorded score is the final model's greedy score
    assert metric[-1] == pytest.approx(tagger.evaluate([[(w, p) for w, p, _ in s] for s in test[:40]],
                                                       beam=1)["accuracy"])


def test_restrictions_that_exclude_every_label_fall_back_to_none():
    # "ink" was only ever I-NP: after O the dictionary and the IOB constraint together allow nothing
    words = [["the", "ink"], ["ink", "dries"], ["a", "the"]]
    tags = [["DT", "NN"], ["NN", "VB"], ["DT", "DT"]]
    labels = [["B-NP", "I-NP"], ["I-NP", "O"], ["O", "B-NP"]]
    fx = FeatureExtractor("chunk", cutoff=1)
    problem, _ = fx.fit(words, labels, tags)
    w = np.random.default_rng(4).normal(size=problem.n_features)
    data = DecodeInput.build(fx, fx.encode([["dries", "ink", "the"]], [["VB", "NN", "DT"]]))
    free = beam_decode(fx, w, problem.map_ptr, problem.map_label, problem.map_feat, data, beam=2)
    for beam in (1, 2):
        out = beam_decode(fx, w, problem.map_ptr, problem.map_label, problem.map_feat, data, beam=beam,
                          tag_dictionary=True, iob_constraint=True)
        assert fx.labels[out[0]] == "O"            # "dries" was only O
        assert 0 <= out.min() and out.max() < fx.n_labels
        assert fx.labels[out[2]] in ("B-NP", "O")  # "the" was B-NP or O
    assert len(free) == 3


def test_cli_brown_split_reads_the_papers_file_split(tmp_path, capsys):
    from loglin.tagging.datasets import brown_split
    names = [f"c{g}{k:02d}" for g in "ab" for k in range(1, 6)]
    for n, name in enumerate(names):
        (tmp_path / name).write_text(f"\tThe/at {name}/np-tl ran/vbd {n}/cd ./.\n\n\tIt/pps fell/vbd ./.\n")
    train, test, _ = brown_split(tmp_path, seed=0)
    model, trace = tmp_path / "brown.npz", tmp_path / "trace.json"
    assert tag_main(["train", "--format", "brown", str(tmp_path), "--split", "train", "-o", str(model),
                     "--cutoff", "1", "--max-iter", "3", "--tol", "1e-9", "--clock", "cpu",
                     "--trace", str(trace), "--test", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["train_tokens"] == train.n_tokens == 8 * 8
    assert report["test"]["tokens"] == test.n_tokens == 2 * 8
    records = json.loads(trace.read_text())["records"]
    assert [r["iteration"] for r in records] == list(range(report["iterations"] + 1))
    assert tag_main(["evaluate", str(model), str(tmp_path), "--format", "brown", "--split", "test", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tokens"] == test.n_tokens
    with pytest.raises(InvalidInputError, match="--split"):
        tag_main(["evaluate", str(model), str(tmp_path / "ca01"), "--format", "brown", "--split", "test"])


def test_n_best_lists_the_beams_hypotheses_best_first():
    from loglin.data import read_conll2000
    from loglin.tagging.datasets import bundled_conll2000_small
    from loglin.tagging.tagger import MaxentTaggerModel
    train, test = bundled_conll2000_small()
    sentences = read_conll2000(train)[:150]
    tagger = MaxentTaggerModel.train(sentences, "chunk", C=10.0, max_iter=30)
    inputs = [[t[:2] for t in s] for s in read_conll2000(test)[:20]]
    lists = tagger.tag_n_best(inputs, 3)
    best = tagger.tag(inputs)
    for candidates, top in zip(lists, best):
        assert 1 <= len(candidates) <= 3 and candidates[0][0] == top
        scores = [score for _, score in candidates]
        assert scores == sorted(scores, reverse=True) and all(score <= 0 for score in scores)
        assert len({tuple(labels) for labels, _ in candidates}) == len(candidates)
    assert any(len(c) == 3 for c in lists)
