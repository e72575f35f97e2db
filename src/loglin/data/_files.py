"""File plumbing shared by the readers: transparent decompression and line splitting.

Every reader loads the whole file into memory first. The data sets loglin
targets are at most a few hundred MB decompressed, and reading at once lets us
(a) wrap decompression failures in a single place and (b) locate an undecodable
byte by counting newlines before it, which a streaming text decoder cannot do.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import contextvars
import functools
import gzip
import io
import lzma
import os
import re
import stat
import sys
from pathlib import Path
from typing import IO

from ..errors import DataFormatError, InvalidInputError

# Compression is chosen by extension only: sniffing magic bytes would make a
# plain file that happens to start with "BZh" unreadable.
_DECOMPRESSORS = {
    ".gz": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    ".bz2": lambda raw: bz2.BZ2File(raw, mode="rb"),
    ".xz": lambda raw: lzma.LZMAFile(raw, mode="rb"),
}
_COMPRESSED_OPEN = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}

PathLike = str | os.PathLike

# The encoding text readers use when none is passed: UTF-8, or the CLI's --encoding for one command
_ENCODING = contextvars.ContextVar("loglin_text_encoding", default="utf-8")


def check_encoding(encoding: str) -> str:
    """The codec's canonical name; an unknown name is a DataFormatError-free ValueError with one line."""
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise ValueError(f"unknown text encoding {encoding!r} (e.g. utf-8, latin-1, cp1252)") from None


@contextlib.contextmanager
def reading_encoding(encoding: str | None):
    """``with reading_encoding("latin-1"): ...``: text readers decode with it inside the block."""
    if encoding is None:
        yield
        return
    token = _ENCODING.set(check_encoding(encoding))
    try:
        yield
    finally:
        _ENCODING.reset(token)


def read_bytes(path: PathLike, limit: int = -1) -> bytes:
    """Return the (decompressed) content of ``path``, or its first ``limit`` bytes.

    Missing or unreadable files raise the usual ``OSError``; a corrupt or
    truncated compressed stream raises :class:`DataFormatError`.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    with open(path, "rb") as raw:
        mode = os.fstat(raw.fileno()).st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):      # /dev/zero, /dev/urandom: endless, never a data file
            raise DataFormatError(path, None, "expected a data file, got a device")
        if suffix not in _DECOMPRESSORS:
            return raw.read(limit)
        try:
            with _DECOMPRESSORS[suffix](raw) as stream:
                return stream.read(limit)
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise DataFormatError(
                path, None, f"expected a valid {suffix} compressed stream ({exc})"
            ) from None


def split_lines(data: bytes) -> list[bytes]:
    """Split on ``\\n`` only, so line numbers agree with ``wc -l`` and editors.

    (``bytes.splitlines`` would also split on ``\\r``, shifting the count for
    old Mac files; callers strip a trailing ``\\r`` themselves.)
    """
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    return lines


def takes_encoding(reader):
    """Give a text reader an ``encoding=None`` keyword (None: UTF-8 or the one of :func:`reading_encoding`)."""
    @functools.wraps(reader)
    def read(*args, encoding: str | None = None, **kwargs):
        with reading_encoding(encoding):
            return reader(*args, **kwargs)
    return read


def read_text_lines(path: PathLike, encoding: str | None = None) -> list[str]:
    """Decode ``path`` and return its lines (without the ``\\n``); ``encoding`` None: UTF-8 or the one
    set by :func:`reading_encoding`.

    A leading UTF-8 byte-order mark is dropped. Undecodable bytes raise
    :class:`DataFormatError` naming the line and column of the first bad byte.
    """
    return decode_lines(read_bytes(path), path, encoding)


def read_head_lines(path: PathLike, size: int = 1 << 20) -> list[str]:
    """The whole lines within the first ``size`` bytes of ``path`` (decompressed), decoded as :func:`read_text_lines`
    decodes: enough to sniff a file's format without reading all of it (a --workers driver never reads the data)."""
    data = read_bytes(path, size + 1)
    if len(data) <= size:
        return decode_lines(data, path)
    # cut by characters, not at a newline byte: in UTF-16 a b"\n" is half a character
    try:
        text = codecs.getincrementaldecoder(_ENCODING.get())().decode(data[:size], final=False)
    except UnicodeDecodeError:
        return decode_lines(data[:size], path)      # the error naming the line and column of the bad byte
    return _split_lines(text, cut=True)


def decode_lines(data: bytes, path: PathLike, encoding: str | None = None) -> list[str]:
    """:func:`read_text_lines` of bytes already read (``path`` names them in errors): a shard's byte range."""
    encoding = _ENCODING.get() if encoding is None else check_encoding(encoding)
    refuse_wide_text(data, path, encoding)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(
            path,
            line,
            f"expected {encoding.upper()} text, found undecodable byte "
            f"0x{data[exc.start]:02x} at column {exc.start - line_start + 1} (give the file's encoding with "
            f"--encoding, e.g. latin-1)",
        ) from None
    return _split_lines(text)


def _split_lines(text: str, cut: bool = False) -> list[str]:
    """The lines of decoded ``text`` without their ``\\n`` and a leading byte-order mark; ``cut``: the text
    stops inside its last line (or right after it), which is dropped."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if cut or not lines[-1]:
        lines.pop()
    return lines


WHITESPACE = " \t\n\r\x0b\x0c"        # ASCII whitespace: what separates the fields of every text format read
_FIELD_BREAK = re.compile("[ \t\n\r\x0b\x0c]+")


def fields(line: str) -> list[str]:
    """The fields of a line of text as ``line.split()`` gives them, but split at ASCII whitespace only (space,
    tab, CR, ...), as the formats (CoNLL, svmlight, OpenNLP events) and their tools (CRF++, CRFsuite,
    conlleval, LIBLINEAR) define them: a no-break space (U+00A0, "10\u00a0000"), U+0085 (cp1252's ellipsis
    byte read as latin-1), U+2028 or an ideographic space (U+3000) is part of a word, not a column break."""
    if line.isascii():
        return line.split()
    line = line.strip(WHITESPACE)
    return _FIELD_BREAK.split(line) if line else []


def is_blank(line: str) -> bool:
    """Whether a line of text has no field (:func:`fields`): empty or ASCII whitespace only."""
    return not line.strip(WHITESPACE)


def open_text_for_write(path: PathLike, encoding: str = "utf-8") -> IO[str]:
    """Open ``path`` for writing text (UTF-8 unless ``encoding``), compressing by extension.

    ``newline="\\n"`` keeps output byte-identical across platforms.
    """
    path = Path(path)
    opener = _COMPRESSED_OPEN.get(path.suffix.lower())
    if opener is None:
        return open(path, "w", encoding=encoding, newline="\n")
    return opener(path, "wt", encoding=encoding, newline="\n")


def _ascii_compatible(encoding: str) -> bool:
    """Whether text in ``encoding`` is ASCII text where it is ASCII, with no byte-order mark: latin-1, cp1252,
    UTF-8, EUC-JP are; UTF-16, UTF-32 and utf-8-sig are not."""
    try:
        return "\n loglin\n".encode(encoding) == b"\n loglin\n"
    except (LookupError, UnicodeError):
        return False


def field_encoding() -> str:
    """The encoding of the text fields (svmlight's string labels) of bytes that :func:`ascii_bytes` gave: the
    ``--encoding`` in effect when it is ASCII-compatible (latin-1, cp1252, Shift-JIS: the bytes are the file's),
    else UTF-8 (the file was transcoded)."""
    encoding = _ENCODING.get()
    return encoding if _ascii_compatible(encoding) else "utf-8"


# byte-order marks of text that no ASCII-compatible encoding reads (UTF-32's first: FF FE 00 00 starts with FF FE)
_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
              (codecs.BOM_UTF16_BE, "utf-16"))


def refuse_wide_text(data: bytes, path: PathLike, encoding: str) -> None:
    """One error naming ``path`` when its bytes start with a UTF-16 / UTF-32 byte-order mark (Notepad's "Unicode",
    Windows PowerShell's ``>``) but are read in an ASCII-compatible ``encoding``: every other byte is 0, so the
    text decodes to nothing usable (UTF-8: an undecodable 0xff; latin-1, the advice that message gave: lines of
    NULs and misleading column counts; svmlight's bytes: "expected an integer feature index")."""
    if not _ascii_compatible(encoding):
        return
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            raise DataFormatError(path, 1, f"expected {encoding.upper()} text, found a {name.upper()} byte-order mark: "
                                           f"the file is {name.upper()} text; give --encoding {name}")


def ascii_bytes(data: bytes, path: PathLike) -> bytes:
    """``data`` of a byte-level ASCII format (svmlight) as UTF-8 bytes when ``--encoding`` is not ASCII-compatible
    (UTF-16, UTF-32), else as they are."""
    encoding = _ENCODING.get()
    if _ascii_compatible(encoding):
        refuse_wide_text(data, path, encoding)
        return data
    return "\n".join(decode_lines(data, path, encoding)).encode("utf-8")


def refuse_byte_range_encoding(path: PathLike, encoding: str | None = None) -> None:
    """--workers / --scheduler cut the file into byte ranges at newline bytes, which text in an encoding that is not
    ASCII-compatible cannot be cut at: one error naming the file, before any cluster starts. ``encoding``: the
    file's (default: ``--encoding``'s)."""
    encoding = _ENCODING.get() if encoding is None else encoding
    if not _ascii_compatible(encoding):
        raise InvalidInputError(f"{path}: --workers and --scheduler read the file in byte ranges cut at newlines, "
                                f"which {encoding} text cannot be cut at; convert it to UTF-8 first (e.g. iconv -f "
                                f"{encoding} -t utf-8 FILE > NEW_FILE)")


@contextlib.contextmanager
def echo_output(path: PathLike | None):
    """The text stream a command that echoes its input writes to: the file ``path`` (None: standard output), in
    the encoding the input was read with (``--encoding``), so that echoed words keep their bytes (a CoNLL scorer
    compares them with the gold file's); standard output takes UTF-8 in place of an encoding that is not
    ASCII-compatible (UTF-16, UTF-32, a byte-order mark). A character that encoding cannot hold is one error
    naming the output. ``info`` and ``dump`` write a model's labels and features, read from such text, through it
    too: never in the locale's encoding, which (LC_ALL=C without UTF-8 mode) may be ASCII."""
    encoding = _ENCODING.get()
    name = "standard output" if path is None else str(path)
    if path is None and not _ascii_compatible(encoding):
        encoding = "utf-8"              # a terminal or a pipe reads no UTF-16 / UTF-32 (and --json is UTF-8 text)
    try:
        if path is not None:
            with open_text_for_write(path, encoding) as out:
                yield out
        elif (not hasattr(sys.stdout, "buffer")
              or codecs.lookup(getattr(sys.stdout, "encoding", None) or encoding).name == codecs.lookup(encoding).name):
            yield sys.stdout
        else:
            sys.stdout.flush()
            out = io.TextIOWrapper(sys.stdout.buffer, encoding=encoding, newline="\n")
            try:
                yield out
            finally:
                out.flush()
                out.detach()                # sys.stdout keeps its buffer
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{name}: cannot write {exc.object[exc.start:exc.end]!r} in {encoding}, the input's "
                                "encoding (--encoding): a label or feature of the model outside it") from None


def show(token: bytes | str, limit: int = 40) -> str:
    """Render an offending token for an error message (bytes shown safely, long ones cut)."""
    if isinstance(token, bytes):
        token = token.decode("utf-8", errors="backslashreplace")
    if len(token) > limit:
        token = token[: limit - 3] + "..."
    return repr(token)


__all__ = ["fields", "is_blank", "read_bytes", "split_lines", "read_text_lines", "read_head_lines", "decode_lines",
           "open_text_for_write", "echo_output", "show"]
