"""Malformed dataset files: one FormatError line naming the file and the first bad record."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dshelpers import lme_instance, locomo_record, write_json

from memtrace.datasets import load_dataset, load_locomo, load_longmemeval
from memtrace.errors import FormatError, MemtraceError

Loader = Callable[[Path], Any]


def _error(loader: Loader, path: Path) -> str:
    with pytest.raises(FormatError) as info:
        loader(path)
    message = str(info.value)
    assert "\n" not in message
    assert info.value.path == str(path) and message.startswith(f"{path}: ")
    assert isinstance(info.value, MemtraceError)
    return info.value.problem


@pytest.mark.parametrize("loader", [load_locomo, load_longmemeval])
def test_file_level_problems(tmp_path: Path, loader: Loader) -> None:
    assert _error(loader, tmp_path / "missing.json") == "no such file"
    assert _error(loader, tmp_path) == "is a directory, expected a JSON file"
    truncated = tmp_path / "truncated.json"
    truncated.write_text('[\n  {"sample_id": "conv-1",\n    "qa": [', encoding="utf-8")
    assert _error(loader, truncated) == "not valid JSON (Expecting value: line 3 column 12)"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'["\xff\xfe"]')
    assert _error(loader, binary) == "not UTF-8 text (byte 2)"
    assert (
        _error(loader, write_json(tmp_path / "str.json", "hello"))
        == "the top level is a string, expected a list"
    )


def _broken(edit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """Three good conversations with the last one edited."""
    records = [locomo_record(f"conv-{n}") for n in (1, 2, 42)]
    edit(records[2])
    return records


LABEL = "conversation 2 (sample_id conv-42)"

LOCOMO_CASES: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (lambda r: r["qa"][1].pop("question"), f"{LABEL}: qa[1] has no 'question'"),
    (
        lambda r: r["qa"][0].update(question=["x"]),
        f"{LABEL}: qa[0] has 'question' as a list, expected a string",
    ),
    (
        lambda r: r["qa"][0].update(evidence="D1:1"),
        f"{LABEL}: qa[0] has 'evidence' as a string, expected a list",
    ),
    (
        lambda r: r["qa"][0].update(evidence=[1]),
        f"{LABEL}: qa[0] has evidence[0] as a number, expected a string",
    ),
    (lambda r: r["qa"][0].pop("category"), f"{LABEL}: qa[0] has no 'category'"),
    (
        lambda r: r["qa"][0].update(category=None),
        f"{LABEL}: qa[0] has 'category' as null, expected a string or a number",
    ),
    (
        lambda r: r["qa"][0].update(category=True),
        f"{LABEL}: qa[0] has 'category' as true/false, expected a string or a number",
    ),
    (lambda r: r["qa"][0].pop("answer"), f"{LABEL}: qa[0] has no 'answer'"),
    (
        lambda r: r["qa"][0].update(answer={"a": 1}),
        f"{LABEL}: qa[0] answer is an object, expected a string or a number",
    ),
    (
        lambda r: r["qa"][0].update(answer=["a", None]),
        f"{LABEL}: qa[0] answer[1] is null, expected a string or a number",
    ),
    (lambda r: r["qa"].__setitem__(3, "oops"), f"{LABEL}: qa[3] is a string, expected an object"),
    (lambda r: r.pop("qa"), f"{LABEL} has no 'qa'"),
    (lambda r: r.update(qa={}), f"{LABEL} has 'qa' as an object, expected a list"),
    (lambda r: r.pop("conversation"), f"{LABEL} has no 'conversation'"),
    (lambda r: r["conversation"].pop("speaker_b"), f"{LABEL}: conversation has no 'speaker_b'"),
    (lambda r: r["conversation"]["session_2"][0].pop("text"), f"{LABEL}: session_2[0] has no 'text'"),
    (
        lambda r: r["conversation"]["session_1"][1].update(blip_caption=3),
        f"{LABEL}: session_1[1] has 'blip_caption' as a number, expected a string",
    ),
    (lambda r: r["conversation"].update(session_2="hi"), f"{LABEL}: session_2 is a string, expected a list"),
    (
        lambda r: r["conversation"]["session_10"].append(None),
        f"{LABEL}: session_10[1] is null, expected an object",
    ),
    (
        lambda r: r["conversation"].update(session_2_date_time=20230520),
        f"{LABEL}: conversation has 'session_2_date_time' as a number, expected a string",
    ),
    (lambda r: r.pop("sample_id"), "conversation 2 has no 'sample_id'"),
]


@pytest.mark.parametrize(("edit", "problem"), LOCOMO_CASES)
def test_locomo_record_problems(tmp_path: Path, edit: Callable[[dict[str, Any]], None], problem: str) -> None:
    path = write_json(tmp_path / "bad.json", _broken(edit))
    assert _error(load_locomo, path) == problem


def test_locomo_first_bad_record_is_named(tmp_path: Path) -> None:
    records = [locomo_record(f"conv-{n}") for n in range(3)]
    records[1]["qa"][2].pop("question")
    records[2]["qa"][0].pop("question")
    path = write_json(tmp_path / "bad.json", records)
    assert _error(load_locomo, path) == "conversation 1 (sample_id conv-1): qa[2] has no 'question'"
    assert (
        _error(load_locomo, write_json(tmp_path / "n.json", [records[0], 7]))
        == "conversation 1 is a number, expected an object"
    )


LME = "instance 1 (question_id q-bad)"

LME_CASES: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (lambda r: r.pop("question"), f"{LME} has no 'question'"),
    (lambda r: r.pop("answer"), f"{LME} has no 'answer'"),
    (lambda r: r.pop("question_type"), f"{LME} has no 'question_type'"),
    (lambda r: r.pop("haystack_sessions"), f"{LME} has no 'haystack_sessions'"),
    (
        lambda r: r.update(haystack_dates="2023/05/20"),
        f"{LME} has 'haystack_dates' as a string, expected a list",
    ),
    (
        lambda r: r["haystack_dates"].pop(),
        f"{LME} has 3 haystack_session_ids, 2 haystack_dates and 3 haystack_sessions; expected equal counts",
    ),
    (
        lambda r: r["haystack_sessions"][1][0].pop("content"),
        f"{LME}: haystack_sessions[1][0] has no 'content'",
    ),
    (
        lambda r: r["haystack_sessions"][1][0].update(has_answer="yes"),
        f"{LME}: haystack_sessions[1][0] has 'has_answer' as a string, expected true/false or a number",
    ),
    (
        lambda r: r["haystack_sessions"].__setitem__(2, {}),
        f"{LME}: haystack_sessions[2] is an object, expected a list",
    ),
    (
        lambda r: r["haystack_session_ids"].__setitem__(0, None),
        f"{LME} has haystack_session_ids[0] as null, expected a string or a number",
    ),
    (
        lambda r: r.update(answer_session_ids="s1"),
        f"{LME} has 'answer_session_ids' as a string, expected a list",
    ),
]


@pytest.mark.parametrize(("edit", "problem"), LME_CASES)
def test_longmemeval_record_problems(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None], problem: str
) -> None:
    bad = copy.deepcopy(lme_instance("q-bad"))
    edit(bad)
    path = write_json(tmp_path / "bad.json", [lme_instance("q-ok"), bad])
    assert _error(load_longmemeval, path) == problem


def test_load_dataset_passes_format_errors_through(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="no such file"):
        load_dataset(f"longmemeval:{tmp_path / 'nope.json'}")


def test_longmemeval_names_first_bad_turn_in_file_order(tmp_path: Path) -> None:
    bad = lme_instance("q-bad")
    bad["haystack_sessions"][0][1].pop("role")
    bad["haystack_sessions"][2][0].pop("role")  # the earliest session by date, read first after sorting
    path = write_json(tmp_path / "bad.json", [bad])
    assert (
        _error(load_longmemeval, path)
        == "instance 0 (question_id q-bad): haystack_sessions[0][1] has no 'role'"
    )
