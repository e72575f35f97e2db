"""Readers and writers for the data formats loglin trains on.

* :mod:`~loglin.data.svmlight` — sparse ``label index:value`` files (LIBSVM);
* :mod:`~loglin.data.events` — OpenNLP-style ``label pred pred=value`` events;
* :mod:`~loglin.data.conll` — CoNLL-2000 chunking, CoNLL-X / CoNLL-U dependencies;
* :mod:`~loglin.data.brown` — the Brown corpus (``word/tag``).

Every reader raises :class:`loglin.errors.DataFormatError` naming file and
line for malformed input, and reads ``.gz``, ``.bz2`` and ``.xz`` files.
"""

from .brown import brown_corpus_files, read_brown, read_brown_files, simplify_brown_tag
from ._files import reading_encoding
from .conll import Sentence, is_projective, read_columns, read_conll2000, read_conllx, write_conllx
from .events import Events, read_events, write_events
from .paths import require_shared, shared_data_dir
from .svmlight import read_svmlight, write_svmlight

__all__ = ["reading_encoding", 
    "read_svmlight", "write_svmlight",
    "Events", "read_events", "write_events",
    "read_columns", "read_conll2000", "Sentence", "read_conllx", "write_conllx", "is_projective",
    "read_brown", "read_brown_files", "brown_corpus_files", "simplify_brown_tag",
    "shared_data_dir", "require_shared",
]
