"""Running the CLI in-process on generated files and checking that it failed with one clear line."""
import random
from pathlib import Path

from loglin.cli import main

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``loglin ARGV``; an exception escaping main fails the test (a traceback)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error(code, err, *needles):
    """Non-zero status and exactly one ``loglin: error:`` line, containing every needle."""
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("loglin: warning:")]
    assert code != 0, err
    assert len(lines) == 1 and lines[0].startswith("loglin: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert str(needle) in lines[0], (needle, lines[0])
    return lines[0]


def svmlight_rows(path, n=40, d=8, classes=(1, -1), seed=0):
    """A small random svmlight file with the given classes."""
    rng = random.Random(seed)
    with open(path, "w") as out:
        for i in range(n):
            features = sorted(rng.sample(range(1, d + 1), 3))
            out.write(f"{classes[i % len(classes)]} " + " ".join(f"{j}:{rng.random():.3f}" for j in features) + "\n")
    return path


def chunk_corpus(path, sentences=12, seed=0):
    """A CoNLL-2000 style file (word POS chunk) of short random sentences."""
    rng = random.Random(seed)
    lexicon = [("the", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("sees", "VBZ", "B-VP"), ("a", "DT", "B-NP"),
               ("dog", "NN", "I-NP"), ("runs", "VBZ", "B-VP"), ("in", "IN", "B-PP"), (".", ".", "O")]
    with open(path, "w") as out:
        for _ in range(sentences):
            for _ in range(rng.randint(3, 7)):
                out.write(" ".join(rng.choice(lexicon)) + "\n")
            out.write("\n")
    return path


def treebank(path, heads_of=None, sentences=("The cat sleeps .", "A dog barks loudly .")):
    """A CoNLL-X file; heads are a right-branching chain unless ``heads_of(words)`` gives them ('_' allowed)."""
    with open(path, "w") as out:
        for text in sentences:
            words = text.split()
            heads = heads_of(words) if heads_of else [k + 2 if k + 1 < len(words) else 0 for k in range(len(words))]
            for k, (word, head) in enumerate(zip(words, heads), 1):
                out.write(f"{k}\t{word}\t{word.lower()}\tX\tX\t_\t{head}\tdep\t_\t_\n")
            out.write("\n")
    return path
