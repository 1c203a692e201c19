"""load_dataset specs and limits."""

from __future__ import annotations

from pathlib import Path

import pytest
from dshelpers import locomo_record, write_json

from memtrace.datasets import DatasetSpecError, load_dataset, sample_conversation
from memtrace.errors import FormatError, MemtraceError


def test_sample_specs() -> None:
    assert load_dataset("sample") == [sample_conversation(0)]
    assert load_dataset("sample:7") == [sample_conversation(7)]
    assert load_dataset(" Sample:7") == [sample_conversation(7)]


def test_limits(tmp_path: Path) -> None:
    path = write_json(tmp_path / "l.json", [locomo_record(f"c{i}") for i in range(3)])
    assert [c.id for c in load_dataset(f"locomo:{path}", conversations=2)] == ["c0", "c1"]
    convs = load_dataset(f"locomo:{path}", questions=2)
    assert [len(c.questions) for c in convs] == [2, 2, 2]
    assert load_dataset(f"locomo:{path}", conversations=0) == []
    (one,) = load_dataset("sample", questions=3)
    assert [q.id for q in one.questions] == ["sample-0-q0", "sample-0-q1", "sample-0-q2"]
    assert len(sample_conversation(0).questions) > 3  # the limit does not touch the generator's output


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("locomo10", "unknown dataset 'locomo10'"),
        ("", "unknown dataset ''"),
        ("hotpot:x.json", "unknown dataset 'hotpot:x.json'"),
        ("locomo:", "dataset 'locomo:' has no path"),
        ("longmemeval: ", "has no path"),
        ("sample:abc", "the seed must be an integer"),
    ],
)
def test_bad_specs(spec: str, needle: str) -> None:
    with pytest.raises(DatasetSpecError) as info:
        load_dataset(spec)
    assert needle in str(info.value) and "locomo:PATH" in str(info.value)
    assert isinstance(info.value, MemtraceError) and isinstance(info.value, ValueError)


def test_negative_limit() -> None:
    with pytest.raises(DatasetSpecError, match="questions limit"):
        load_dataset("sample", questions=-1)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        load_dataset(f"locomo:{tmp_path / 'nope.json'}")
    assert str(info.value) == f"{tmp_path / 'nope.json'}: no such file"


def test_the_sample_gives_as_many_seeded_conversations_as_asked_for() -> None:
    three = load_dataset("sample:5", conversations=3)
    assert [c.id for c in three] == [sample_conversation(seed).id for seed in (5, 6, 7)]
    assert len({c.id for c in three}) == 3
    assert load_dataset("sample", conversations=0) == []
