"""The LongMemEval loader on small fixture files written by the tests (no download)."""

from __future__ import annotations

from pathlib import Path

from dshelpers import lme_instance, write_json

from memtrace.datasets import NOT_MENTIONED, UNANSWERABLE, load_dataset, load_longmemeval


def test_one_conversation_per_instance(tmp_path: Path) -> None:
    path = write_json(tmp_path / "lme.json", [lme_instance("q1"), lme_instance("q2")])
    convs = load_longmemeval(path)
    assert [c.id for c in convs] == ["q1", "q2"]
    conv = convs[0]
    assert conv.source == "longmemeval" and conv.speakers == ["user", "assistant"]
    assert conv.metadata["question_date"] == "2023/06/01 (Thu) 10:00"
    (q,) = conv.questions
    assert (q.id, q.question, q.answers) == ("q1", "What is my dog's name?", ["Rex"])
    assert q.category == q.category_raw == "single-session-user"
    assert q.evidence == ["answer_s1:0"]  # only the turn marked has_answer
    assert q.metadata["answer_session_ids"] == ["answer_s1"]


def test_sessions_in_date_order(tmp_path: Path) -> None:
    (conv,) = load_longmemeval(write_json(tmp_path / "lme.json", [lme_instance()]))
    assert conv.metadata["session_ids"] == ["s_early", "answer_s1", "s_late"]
    assert [s.index for s in conv.sessions] == [1, 2, 3]
    assert conv.sessions[0].date == "2023/05/01 (Mon) 08:30"
    assert [s.when.day for s in conv.sessions if s.when] == [1, 10, 20]
    assert [t.dia_id for t in conv.turns()] == [
        "s_early:0",
        "answer_s1:0",
        "answer_s1:1",
        "s_late:0",
        "s_late:1",
    ]
    turn = conv.turn("answer_s1:1")
    assert turn is not None and turn.speaker == "assistant" and turn.session == 2
    assert turn.date == "2023/05/10 (Wed) 09:00"


def test_unparseable_dates_keep_file_order(tmp_path: Path) -> None:
    record = lme_instance(haystack_dates=["later", "2023/05/10 (Wed) 09:00", "earlier"])
    (conv,) = load_longmemeval(write_json(tmp_path / "lme.json", [record]))
    assert conv.metadata["session_ids"] == ["s_late", "answer_s1", "s_early"]
    assert conv.sessions[0].when is None


def test_evidence_falls_back_to_answer_sessions(tmp_path: Path) -> None:
    record = lme_instance()
    for turn in record["haystack_sessions"][1]:
        turn.pop("has_answer", None)
    (conv,) = load_longmemeval(write_json(tmp_path / "lme.json", [record]))
    assert conv.questions[0].evidence == ["answer_s1:0", "answer_s1:1"]
    assert conv.broken_evidence() == []


def test_abstention_is_unanswerable(tmp_path: Path) -> None:
    record = lme_instance("q7_abs", question_type="knowledge-update", answer="You did not mention a cat.")
    (conv,) = load_longmemeval(write_json(tmp_path / "lme.json", [record]))
    (q,) = conv.questions
    assert q.category == UNANSWERABLE and q.category_raw == "knowledge-update"
    assert q.answers == [NOT_MENTIONED] and q.unanswerable
    assert q.metadata["answer_raw"] == "You did not mention a cat."


def test_numbers_duplicates_and_empty_sessions(tmp_path: Path) -> None:
    record = lme_instance(
        answer=3,
        haystack_session_ids=["dup", "answer_s1", "dup"],
        haystack_sessions=[[{"role": "user", "content": "a"}], lme_instance()["haystack_sessions"][1], []],
    )
    (conv,) = load_longmemeval(write_json(tmp_path / "lme.json", record))  # a single instance object
    assert conv.questions[0].answers == ["3"]
    assert conv.metadata["session_ids"] == ["answer_s1", "dup"]
    assert [s.index for s in conv.sessions] == [1, 2]  # the empty session is dropped
    assert [t.dia_id for t in conv.turns()] == ["answer_s1:0", "answer_s1:1", "dup:0"]


def test_load_dataset_spec(tmp_path: Path) -> None:
    path = write_json(tmp_path / "lme.json", [lme_instance(f"q{i}") for i in range(4)])
    convs = load_dataset(f"longmemeval:{path}", conversations=3)
    assert [c.id for c in convs] == ["q0", "q1", "q2"]
