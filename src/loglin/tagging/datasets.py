"""The NLP data sets of Huang et al. (2010, section 5.1, Table 3) and Yu et al. (2011, section 6.2).

* ``conll2000-pos`` (CoNLL2000-P): POS tagging of CoNLL-2000 (WSJ 15-18 train, 20 test), 44 tags;
* ``conll2000-chunk`` (CoNLL2000-C): chunking with the given POS tags as input, 22 chunk tags;
* ``brown`` (BROWN): POS tagging of the Brown corpus with the tag modifiers fw, tl, nc, hl
  dropped; a random 4/5 of the articles (files) train, the rest test.

Predicates are OpenNLP's defaults (see :mod:`loglin.features.templates`):
spelling predicates for every word, as OpenNLP's tagger has them without a
word dictionary, and a cut-off of 5 events. With these settings the training
statistics of Table 3 are reproduced (see :func:`statistics_table`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import DataUnavailable, InvalidInputError
from ..features.extract import SPECIALS, FeatureExtractor
from ..problem import MaxentProblem
from .beam import DecodeInput, beam_decode
from .conlleval import conlleval

NAMES = ("conll2000-pos", "conll2000-chunk", "brown")
PAPER_NAMES = {"conll2000-pos": "CoNLL2000-P", "conll2000-chunk": "CoNLL2000-C", "brown": "BROWN"}
# Huang et al. (2010) Table 3 = Yu et al. (2011) Table 4: X, Y, n, #nz
PAPER_STATS = {"conll2000-pos": (197_979, 44, 168_674, 48_030_163),
               "conll2000-chunk": (197_252, 22, 273_680, 53_396_844),
               "brown": (935_137, 185, 626_726, 601_216_661)}
BROWN_TRAIN_FRACTION = 0.8


@dataclass
class Corpus:
    """Sentences as parallel lists: words, input POS tags (chunking) and gold labels."""

    words: list
    labels: list
    tags: list | None = None

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.words)


@dataclass
class NlpDataset:
    """A training problem plus the held-out test set it is evaluated on."""

    name: str
    task: str
    problem: MaxentProblem
    extractor: FeatureExtractor
    test: Corpus
    metric_name: str
    eval_beam: int = 1
    iob_constraint: bool = False
    info: dict = field(default_factory=dict)
    _decode_input: DecodeInput | None = field(default=None, repr=False)
    _gold: np.ndarray | None = field(default=None, repr=False)

    def decode_input(self) -> DecodeInput:
        if self._decode_input is None:
            tokens = self.extractor.encode(self.test.words, self.test.tags)
            self._decode_input = DecodeInput.build(self.extractor, tokens)
            index = {y: i for i, y in enumerate(self.extractor.labels)}
            self._gold = np.array([index.get(y, -1) for s in self.test.labels for y in s], dtype=np.int64)
        return self._decode_input

    def predict(self, w, beam: int | None = None, tag_dictionary: bool = False) -> np.ndarray:
        """Label ids of the test tokens decoded with weights ``w`` (flat)."""
        p = self.problem
        return beam_decode(self.extractor, w, p.map_ptr, p.map_label, p.map_feat, self.decode_input(),
                           beam=self.eval_beam if beam is None else beam, tag_dictionary=tag_dictionary,
                           iob_constraint=self.iob_constraint)

    def evaluate(self, w, beam: int | None = None) -> float:
        """Test accuracy (%) for POS tagging, chunk F1 for chunking (greedy decoding by default)."""
        guess = self.predict(w, beam)
        if self.task == "pos":
            return float(100.0 * np.mean(guess == self._gold))
        return float(chunk_f1(self.extractor.labels, guess, self.test.labels))

    def stats(self) -> dict:
        """Table 3 quantities: contexts (as the papers count them), labels, features, #nz."""
        p = self.problem
        per_pred = np.diff(p.map_ptr)
        row = np.repeat(np.arange(p.n_contexts), np.diff(p.ctx_ptr))
        nnz_ctx = np.bincount(row, weights=per_pred[p.ctx_pred], minlength=p.n_contexts)
        events = np.diff(p.obs_ptr)
        return {"name": self.name, "contexts": int(events.sum()), "merged_contexts": p.n_contexts,
                "labels": p.n_labels, "features": p.n_features, "nnz": int((nnz_ctx * events).sum()),
                "nnz_merged": p.nnz(), "predicates": p.n_predicates, **self.info}


def chunk_f1(labels, guess_ids, gold_sentences) -> float:
    """conlleval F1 of flat guessed label ids against gold chunk tag sentences."""
    names = np.asarray(labels, dtype=object)[guess_ids]
    guessed, at = [], 0
    for s in gold_sentences:
        guessed.append(list(names[at:at + len(s)]))
        at += len(s)
    return conlleval(gold_sentences, guessed)["f1"]


# ---------------------------------------------------------------------- corpora


def _corpus_dir(data_dir, folder: str) -> Path:
    from ..data.paths import require_shared
    base = require_shared(data_dir=data_dir)
    for candidate in (base / folder, base):
        if (candidate / "train.txt").is_file() or (folder == "brown" and (candidate / "ca01").is_file()):
            return candidate
    raise DataUnavailable(base / folder, f"no {folder} corpus there")


def conll2000_corpus(path, task: str) -> Corpus:
    """A CoNLL-2000 file as a POS corpus (words -> POS) or a chunking corpus (words, POS -> chunk)."""
    from ..data import read_conll2000
    sentences = read_conll2000(path)
    words = [[t[0] for t in s] for s in sentences]
    pos = [[t[1] for t in s] for s in sentences]
    if task == "pos":
        return Corpus(words, pos)
    return Corpus(words, [[t[2] for t in s] for s in sentences], pos)


def brown_split_files(names, seed: int = 0) -> tuple[list, list]:
    """(train, test) file names: a random 4/5 of the Brown files (fixed seed) and the rest, each sorted."""
    names = sorted(names)
    order = np.random.default_rng(seed).permutation(len(names))
    n_train = int(round(BROWN_TRAIN_FRACTION * len(names)))
    return sorted(names[i] for i in order[:n_train]), sorted(names[i] for i in order[n_train:])


def brown_split(directory, seed: int = 0) -> tuple[Corpus, Corpus, dict]:
    """Brown with simplified tags; a random 4/5 of the files train (fixed seed), the rest test."""
    from ..data import read_brown_files
    files = read_brown_files(directory, simplify_tags=True)
    train_files, test_files = brown_split_files(files, seed)

    def corpus(file_names):
        sents = [s for f in file_names for s in files[f]]
        return Corpus([[w for w, _ in s] for s in sents], [[t for _, t in s] for s in sents])

    train, test = corpus(train_files), corpus(test_files)
    all_tags = {t for s in train.labels + test.labels for t in s}
    return train, test, {"train_files": len(train_files), "test_files": len(test_files),
                         "tags_in_corpus": len(all_tags)}


def load_corpora(name: str, data_dir=None, seed: int = 0) -> tuple[Corpus, Corpus, dict]:
    """(train, test, info) of a data set by name."""
    if name not in NAMES:
        raise InvalidInputError(f"unknown data set {name!r}; choose from {', '.join(NAMES)}")
    if name == "brown":
        return brown_split(_corpus_dir(data_dir, "brown"), seed)
    task = "pos" if name == "conll2000-pos" else "chunk"
    directory = _corpus_dir(data_dir, "conll2000")
    return conll2000_corpus(directory / "train.txt", task), conll2000_corpus(directory / "test.txt", task), {}


def build_dataset(name: str, data_dir=None, cutoff: int = 5, seed: int = 0, *,
                  rare_threshold: int | None = None, eval_beam: int = 1, all_pairs: bool = False) -> NlpDataset:
    """Build a data set of the papers by name: ``conll2000-pos``, ``conll2000-chunk`` or ``brown``.

    ``data_dir``: the shared data folder (holding ``conll2000/`` and
    ``brown/``) or the corpus folder itself; default
    :func:`loglin.data.paths.shared_data_dir`. ``cutoff``: predicate cut-off
    (OpenNLP's 5). ``rare_threshold``: None gives spelling predicates to
    every word (OpenNLP, the papers); 5 is Ratnaparkhi's rare-word rule.
    ``all_pairs``: a weight for every (predicate, label) pair instead of the
    pairs seen in training (not the papers' setting). ``seed`` picks the Brown train/test files. ``evaluate`` decodes greedily
    (``eval_beam``), chunking with OpenNLP's IOB constraint. Nothing is
    cached on disk.
    """
    t0 = time.perf_counter()
    train, test, info = load_corpora(name, data_dir, seed)
    t1 = time.perf_counter()
    task = "pos" if name != "conll2000-chunk" else "chunk"
    extractor = FeatureExtractor(task, cutoff=cutoff, rare_threshold=rare_threshold)
    problem, fit_stats = extractor.fit(train.words, train.labels, train.tags, all_pairs=all_pairs)
    t2 = time.perf_counter()
    info.update(train_tokens=fit_stats["tokens"], test_tokens=test.n_tokens, cutoff=cutoff,
                read_seconds=round(t1 - t0, 2), extract_seconds=round(t2 - t1, 2))
    if task == "pos":
        known = set(extractor.words.strings[len(SPECIALS):])
        info["test_unknown_words"] = sum(w not in known for s in test.words for w in s)
    return NlpDataset(name, task, problem, extractor, test, "accuracy" if task == "pos" else "F1",
                      eval_beam=eval_beam, iob_constraint=task == "chunk", info=info)


def statistics_table(names=NAMES, data_dir=None, build: Callable = build_dataset) -> str:
    """Markdown table of our training statistics next to Huang et al. (2010), Table 3."""
    rows = ["| data set | X (ours / paper) | merged contexts | Y (ours / paper) | n (ours / paper) "
            "| #nz (ours / paper) | extraction s |", "|---|---|---|---|---|---|---|"]
    for name in names:
        st = build(name, data_dir).stats()
        X, Y, n, nz = PAPER_STATS[name]
        rows.append(f"| {PAPER_NAMES[name]} | {st['contexts']:,} / {X:,} | {st['merged_contexts']:,} "
                    f"| {st['labels']} / {Y} | {st['features']:,} / {n:,} | {st['nnz']:,} / {nz:,} "
                    f"| {st['extract_seconds']} |")
    return "\n".join(rows) + "\n\n" + TABLE_NOTES


TABLE_NOTES = """\
X counts distinct (context, label) events, as OpenNLP's indexer merges events and as the
papers count them; the problem solved merges identical contexts whatever their label
("merged contexts"; the same objective). #nz = sum over events of the features that are
non-zero (Huang et al. eq. 4); `problem.nnz()` is the same sum over merged contexts.
Predicates are OpenNLP's defaults: spelling predicates for every word, cut-off 5 counted
over events, with a word shorter than 4 letters counted once per repetition as its own
longer affixes (OpenNLP lists it 4 times); with these rules CoNLL2000-P and CoNLL2000-C
are reproduced exactly. BROWN cannot be: no 4/5 split of the 500 files of the NLTK corpus
(1,161,192 tokens, 2,148-2,587 per file) has the >= 935,137 training tokens that X
implies (splits have 927,609-930,692 tokens), so the papers' copy of the corpus differed;
dropping the modifiers fw, tl, nc, hl leaves 190 of the 472 tags here (185 in the papers)."""


def bundled_conll2000_small() -> tuple[Path, Path]:
    """(train, test) paths of the CoNLL-2000 slice shipped with loglin (2,000 / 500 sentences)."""
    base = Path(__file__).resolve().parents[1] / "datasets" / "conll2000-small"
    return base / "train.txt", base / "test.txt"
