"""20 Newsgroups tf-idf loader: our tf-idf against scikit-learn's, and the real archive."""
import numpy as np
import pytest

from loglin.data.newsgroups import GROUPS, SPLITS, load_20newsgroups_tfidf, tfidf_matrices, tokenize
from loglin.data.paths import shared_data_dir
from loglin.errors import InvalidInputError

DOCS = ["From: a@b.org\nSubject: GPU drivers 3d\n\nThe GPU drivers crash; the 3d card is new.",
        "Subject: hockey\n\nThe Leafs won 4-2. Hockey night!",
        "the drivers and the hockey card, 1993 season",
        "Nothing in common here: x86 x86 x86",
        "gpu hockey drivers the the"]


def test_tokens_are_lowercase_alphanumeric_runs_with_a_letter():
    assert tokenize("GPU-3d, 1993 x86 a b2 ON") == ["gpu", "3d", "x86", "b2", "on"]


def test_tfidf_matches_scikit_learn():
    feature_extraction = pytest.importorskip("sklearn.feature_extraction.text")
    ref = feature_extraction.TfidfVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None, min_df=2,
                                             smooth_idf=False, norm="l2")
    Xtr_ref = ref.fit_transform(DOCS[:4])
    Xtr, Xte, vocab = tfidf_matrices(DOCS[:4], DOCS[4:], min_df=2)
    assert vocab == list(ref.get_feature_names_out())
    np.testing.assert_allclose(Xtr.toarray(), Xtr_ref.toarray(), atol=1e-12)
    np.testing.assert_allclose(Xte.toarray(), ref.transform(DOCS[4:]).toarray(), atol=1e-12)


def test_class_splits():
    assert sum(SPLITS["comp+sci"](g) for g in GROUPS) == 9
    assert sum(SPLITS["comp"](g) for g in GROUPS) == 5


@pytest.mark.slow
def test_real_archive():
    root = shared_data_dir()
    if root is None or not (root / "20newsgroups" / "20news-bydate.tar.gz").exists():
        pytest.skip("shared data not available")
    Xtr, ytr, Xte, yte = load_20newsgroups_tfidf(root)
    assert Xtr.shape[0] == 11314 and Xte.shape[0] == 7532 and Xtr.shape[1] == Xte.shape[1]
    norms = np.sqrt(np.asarray(Xtr.multiply(Xtr).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms[norms > 0], 1.0)
    assert set(np.unique(ytr)) == {-1, 1}
    _, g, _, _ = load_20newsgroups_tfidf(root, multiclass=True)
    assert np.array_equal(np.where(np.isin(g, [i for i, n in enumerate(GROUPS) if SPLITS["comp+sci"](n)]), 1, -1),
                          ytr)
    with pytest.raises(InvalidInputError):
        load_20newsgroups_tfidf(root, split="nope")
