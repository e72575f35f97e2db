"""The Maxent chunker's I-X-only-after-B-X/I-X decoding constraint must not be imposed on IOB1 training data."""
import random

from loglin.tagging.tagger import MaxentTaggerModel

LEXICON = {"NP": [("the", "DT"), ("dog", "NN"), ("cat", "NN")], "VP": [("saw", "VBD"), ("runs", "VBZ")]}


def _corpus(iob1, seed=3, n=80):
    """The same chunks written in IOB1 (I-X starts a chunk; B-X only right after a chunk of type X) or IOB2."""
    rng, sentences = random.Random(seed), []
    for _ in range(n):
        sentence, previous = [], None
        for _ in range(rng.randint(2, 5)):
            kind = rng.choice(["NP", "VP", "O"])
            if kind == "O":
                sentence.append((".", ".", "O"))
                previous = None
                continue
            for k in range(rng.randint(1, 2)):
                word, pos = rng.choice(LEXICON[kind])
                first = k == 0 and (previous == kind or not iob1)
                sentence.append((word, pos, ("B-" if first else "I-") + kind))
            previous = kind
        sentences.append(sentence)
    return sentences


def test_iob1_training_data_keeps_i_after_o_decodable():
    sentences = _corpus(iob1=True)
    default = MaxentTaggerModel.train(sentences, "chunk", max_iter=200)
    free = MaxentTaggerModel.train(sentences, "chunk", max_iter=200, iob_constraint=False)
    assert default.iob_constraint is False
    assert default.evaluate(sentences)["f1"] == free.evaluate(sentences)["f1"]
    assert MaxentTaggerModel.train(_corpus(iob1=False), "chunk", max_iter=50).iob_constraint is True
