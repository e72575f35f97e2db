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

# the svmlight reader builds SciPy sparse matrices: imported on first use, so that a command that reads no
# svmlight file (--help, the taggers' and parsers' option parsing) does not load SciPy's sparse module for it
_SVMLIGHT = ("read_svmlight", "write_svmlight")


def __getattr__(name):
    if name in _SVMLIGHT:
        from . import svmlight
        return getattr(svmlight, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["reading_encoding", 
    "read_svmlight", "write_svmlight",
    "Events", "read_events", "write_events",
    "read_columns", "read_conll2000", "Sentence", "read_conllx", "write_conllx", "is_projective",
    "read_brown", "read_brown_files", "brown_corpus_files", "simplify_brown_tag",
    "shared_data_dir", "require_shared",
]
