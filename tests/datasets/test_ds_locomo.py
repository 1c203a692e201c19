"""The LoCoMo loader on a small file with the real file's quirks (no shared data needed)."""

from __future__ import annotations

from pathlib import Path

from dshelpers import locomo_record, write_json

from memtrace.datasets import NOT_MENTIONED, load_locomo


def test_sessions_turns_and_captions(tmp_path: Path) -> None:
    (conv,) = load_locomo(write_json(tmp_path / "l.json", [locomo_record()]))
    assert conv.id == "conv-x" and conv.source == "locomo" and conv.speakers == ["Ann", "Bob"]
    # numeric order (10 after 2), the empty session 3 and the dangling session_11 date skipped
    assert [s.index for s in conv.sessions] == [1, 2, 10]
    assert conv.sessions[2].date == "10:00 am on 1 July, 2023" and conv.sessions[2].when is not None
    assert [t.dia_id for t in conv.turns()] == ["D1:1", "D1:2", "D2:1", "D10:1"]
    bob = conv.turn("D1:2")
    assert bob is not None and bob.image_caption == "a photo of a dog" and bob.text == "Look at this!"
    assert bob.session == 1 and bob.date == "1:56 pm on 8 May, 2023"


def test_questions(tmp_path: Path) -> None:
    (conv,) = load_locomo(write_json(tmp_path / "l.json", [locomo_record()]))
    q = conv.questions
    assert [x.id for x in q] == [f"conv-x-q{i}" for i in range(5)]
    assert [x.category for x in q] == ["single-hop", "temporal", "adversarial", "adversarial", "multi-hop"]
    assert [x.category_raw for x in q] == [4, 2, 5, 5, 1]
    assert q[1].answers == ["2022"]  # numbers become strings
    assert q[2].answers == [NOT_MENTIONED] and q[2].unanswerable
    assert q[2].metadata["adversarial_answer"] == "chess"
    assert q[3].answers == ["No"] and q[3].metadata["adversarial_answer"] == "Yes" and not q[3].unanswerable
    assert q[4].evidence == ["D1:1", "D2:1", "D10:1"]  # "a; b" split, "D:10:1" repaired
    assert q[4].metadata["evidence_raw"] == ["D1:1; D2:1", "D:10:1"]
    assert "evidence_raw" not in q[0].metadata
    assert conv.broken_evidence() == []


def test_single_conversation_object_and_string_category(tmp_path: Path) -> None:
    record = locomo_record(qa=[{"question": "?", "answer": "a", "evidence": [], "category": "2"}])
    (conv,) = load_locomo(write_json(tmp_path / "one.json", record))
    assert conv.questions[0].category == "temporal" and conv.questions[0].category_raw == 2


def test_unknown_category_number_is_kept(tmp_path: Path) -> None:
    record = locomo_record(qa=[{"question": "?", "answer": "a", "evidence": [], "category": 9}])
    (conv,) = load_locomo(write_json(tmp_path / "l.json", [record]))
    assert conv.questions[0].category == "category-9" and conv.questions[0].category_raw == 9
