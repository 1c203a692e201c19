"""The shared conversation model: immutability, ordering, lookup and date parsing."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest

from memtrace.datasets import NOT_MENTIONED, Conversation, Question, Session, Turn, parse_when


def _conv() -> Conversation:
    s1 = Session(1, "1:56 pm on 8 May, 2023", [Turn("D1:1", "Ann", "hi", 1, "1:56 pm on 8 May, 2023")])
    s2 = Session(
        2, None, [Turn("D2:1", "Bob", "yo", 2, None, "a photo of a cat"), Turn("D2:2", "Ann", "ok", 2, None)]
    )
    questions = [
        Question("c-q0", "?", ["x"], ["D2:1", "D9:9"], "single-hop", 4, {}),
        Question("c-q1", "?", [NOT_MENTIONED], [], "adversarial", 5, {}),
    ]
    return Conversation("c", ["Ann", "Bob"], [s1, s2], questions, "test", {})


def test_turn_is_frozen_and_slotted() -> None:
    turn = Turn("D1:1", "Ann", "hi", 1, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.text = "changed"  # type: ignore[misc]
    assert not hasattr(turn, "__dict__")
    assert turn.rendered() == "hi"
    assert (
        Turn("D1:2", "Ann", "look", 1, None, "a photo of a cat").rendered()
        == "look [shares a photo of a cat]"
    )


def test_turns_in_order_and_lookup() -> None:
    conv = _conv()
    assert [t.dia_id for t in conv.turns()] == ["D1:1", "D2:1", "D2:2"]
    assert conv.turn("D2:1") is not None and conv.turn("D2:1").speaker == "Bob"
    assert conv.turn("D9:9") is None
    conv.sessions[1].turns.append(Turn("D2:3", "Bob", "late", 2, None))
    assert conv.turn("D2:3") is not None  # the index notices turns added after the first lookup


def test_evidence_helpers_and_unanswerable() -> None:
    conv = _conv()
    assert [t.dia_id for t in conv.evidence_turns(conv.questions[0])] == ["D2:1"]
    assert conv.broken_evidence() == [("c-q0", "D9:9")]
    assert [q.unanswerable for q in conv.questions] == [False, True]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("12:05 am on 1 January, 2023", datetime(2023, 1, 1, 0, 5)),
        ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21)),
        ("2023-05-20T02:21:00", datetime(2023, 5, 20, 2, 21)),
        ("sometime in spring", None),
        (None, None),
        ("", None),
    ],
)
def test_parse_when(raw: str | None, expected: datetime | None) -> None:
    assert parse_when(raw) == expected
    assert Session(1, raw, []).when == expected


def test_equality_ignores_the_lookup_cache() -> None:
    a, b = _conv(), _conv()
    a.turn("D1:1")
    assert a == b
