"""Tests of loglin.data.events: the name=value rule, errors with line numbers, round trips."""

import gzip
import re

import pytest

from loglin.data import Events, read_events, write_events
from loglin.errors import DataFormatError, InvalidInputError
from conftest import at, write




def test_binary_events_have_no_values(tmp_path):
    events = read_events(write(tmp_path, "yes w=the p=DT\n\nno w=dog x=1\nmaybe\n"))
    assert events.labels == ["yes", "no", "maybe"]
    # "w=the" is a name (no number after "="); "x=1" is value 1.0, still binary
    assert events.contexts == [["w=the", "p=DT"], ["w=dog", "x"], []]
    assert events.values is None
    assert len(events) == 3


@pytest.mark.parametrize(
    "token, name, value",
    [
        ("f=0.5", "f", 0.5),
        ("f=-2", "f", -2.0),
        ("f=1e-3", "f", 1e-3),
        ("f=.5", "f", 0.5),
        ("f=3.", "f", 3.0),
        ("a=b=0.25", "a=b", 0.25),   # split on the last "="
        ("w=foo", "w=foo", 1.0),      # not a number: part of the name
        ("w=1_0", "w=1_0", 1.0),      # Python's float() would accept it; the rule does not
        ("w=0x10", "w=0x10", 1.0),
        ("=3", "=3", 1.0),            # empty name: the whole token is the name
        ("x=", "x=", 1.0),
        ("plain", "plain", 1.0),
    ],
)
def test_predicate_rule(tmp_path, token, name, value):
    events = read_events(write(tmp_path, f"L {token} other=2\n"))
    assert events.contexts == [[name, "other"]]
    assert events.values == [[value, 2.0]]


def test_unicode_and_tabs(tmp_path):
    events = read_events(write(tmp_path, "B-PER\tw=Zoë\t\tsuf=ë=0.5\r\n"))
    assert events.labels == ["B-PER"]
    assert events.contexts == [["w=Zoë", "suf=ë"]]
    assert events.values == [[1.0, 0.5]]


def test_compressed(tmp_path):
    path = tmp_path / "events.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write("a x y=2\nb z\n")
    events = read_events(path)
    assert events.contexts == [["x", "y"], ["z"]] and events.values == [[1.0, 2.0], [1.0]]


@pytest.mark.parametrize("token", ["f=nan", "f=NaN", "f=inf", "f=-Infinity", "f=1e999"])
def test_non_finite_value(tmp_path, token):
    path = write(tmp_path, f"a x\n\nb y {token}\n")
    with pytest.raises(DataFormatError, match=at(path, 3, "finite predicate value")):
        read_events(path)


def test_undecodable_bytes(tmp_path):
    path = write(tmp_path, b"a x\nb y\nc caf\xe9\n")
    with pytest.raises(DataFormatError, match=at(path, 3, r"UTF-8.*0xe9 at column 6")):
        read_events(path)


def test_corrupt_gzip(tmp_path):
    path = write(tmp_path, b"a x\n", name="e.gz")
    with pytest.raises(DataFormatError, match=re.escape(str(path)) + ".*compressed"):
        read_events(path)


def test_round_trip_real_valued(tmp_path):
    events = Events(
        labels=["pos", "neg", "pos"],
        contexts=[["w=a", "len", "x=2"], [], ["bias", "a=b=c"]],
        values=[[1.0, 0.1 + 0.2, 1.0], [], [-3e-12, 1.0]],
    )
    path = tmp_path / "rt.txt"
    write_events(path, events)
    # "x=2" as a plain name must be protected, or it would read back as x with value 2
    assert path.read_text().splitlines()[0] == "pos w=a len=0.30000000000000004 x=2=1.0"
    assert read_events(path) == events


def test_round_trip_binary(tmp_path):
    events = Events(labels=["a", "b"], contexts=[["p", "q=r"], ["s"]])
    path = tmp_path / "rt.txt.bz2"
    write_events(path, events)
    assert read_events(path) == events


@pytest.mark.parametrize(
    "events",
    [
        Events(["a b"], [["x"]]),
        Events([""], [["x"]]),
        Events(["a"], [["x y"]]),
        Events(["a"], [[""]]),
        Events(["a"], [["x"]], [[float("nan")]]),
    ],
)
def test_write_rejects_unwritable_events(tmp_path, events):
    with pytest.raises(InvalidInputError):
        write_events(tmp_path / "bad.txt", events)


def test_inconsistent_events():
    with pytest.raises(InvalidInputError):
        Events(["a", "b"], [["x"]])
    with pytest.raises(InvalidInputError):
        Events(["a"], [["x"]], [[1.0], [2.0]])
    with pytest.raises(InvalidInputError):
        Events(["a"], [["x", "y"]], [[1.0]])
