"""Maxent POS tagging and chunking: Ratnaparkhi's model with OpenNLP's features, beam search, conlleval.

* :class:`MaxentTaggerModel` — train / tag / evaluate / save / load;
* :func:`~loglin.tagging.datasets.build_dataset` — the papers' CoNLL2000-P, CoNLL2000-C and BROWN sets;
* :func:`~loglin.tagging.conlleval.conlleval` — chunk precision, recall and F1 as the CoNLL script;
* :func:`~loglin.tagging.beam.beam_decode` — the compiled beam-search decoder.
"""
from .conlleval import chunk_score, chunks, conlleval
from .datasets import NlpDataset, build_dataset, bundled_conll2000_small, statistics_table
from .tagger import MaxentTaggerModel

__all__ = ["MaxentTaggerModel", "build_dataset", "NlpDataset", "statistics_table", "bundled_conll2000_small",
           "conlleval", "chunk_score", "chunks"]
