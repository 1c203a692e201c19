"""LongMemEval loader (xiaowu0162/LongMemEval: longmemeval_s / _m / _oracle JSON files).

Each instance has its own haystack of user-assistant sessions and one question, so each instance becomes
one `Conversation` with one `Question`, both with the instance's `question_id`.

Mapping to the shared model:

- Sessions are put in date order when every `haystack_dates` entry parses (the oracle file is not sorted),
  else kept in file order; `Session.index` counts from 1 in that order. Empty sessions are skipped;
  `Conversation.metadata["session_ids"]` lists the kept sessions' ids, aligned with `sessions`.
- Turns: speaker is the role ("user" / "assistant"); dia_id is f"{session_id}:{i}" with i the turn's
  0-based position in its session in the file. A session id repeated within an instance gets "#2", "#3".
- Evidence: the turns marked `has_answer: true`; when no turn is marked, every turn of the
  `answer_session_ids` sessions.
- Category: `question_type` (kept in `category_raw`), except abstention questions (question_id ending in
  "_abs"), which are "unanswerable" with the gold `[NOT_MENTIONED]`; their original answer, which explains
  what is missing, is kept as `metadata["answer_raw"]`.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from ..text import parse_when
from ._read import Bad, answers_of, check, need, opt, read_records, text_of
from .model import NOT_MENTIONED, UNANSWERABLE, Conversation, Question, Session, Turn

SPEAKERS = ["user", "assistant"]


def load_longmemeval(path: str | Path) -> list[Conversation]:
    """One conversation per instance of a LongMemEval file; FormatError naming the first bad record."""
    return read_records(path, lambda data: _parse_file(data, str(path)))


def _parse_file(data: Any, path: str) -> list[Conversation]:
    if isinstance(data, dict) and "question_id" in data:  # a single instance saved on its own
        data = [data]
    check(data, list, "the top level is")
    return [_instance(record, i, path) for i, record in enumerate(data)]


def _instance(raw: Any, i: int, path: str) -> Conversation:
    check(raw, dict, f"instance {i} is")
    qid = text_of(need(raw, "question_id", (str, int), f"instance {i}"))
    label = f"instance {i} (question_id {qid})"
    qtype = need(raw, "question_type", str, label)
    question = need(raw, "question", str, label)
    if raw.get("answer") is None:
        raise Bad(f"{label} has no 'answer'")
    answers = answers_of(raw["answer"], f"{label} answer")
    question_date = opt(raw, "question_date", str, label)
    ids = [
        text_of(check(s, (str, int), f"{label} has haystack_session_ids[{k}] as"))
        for k, s in enumerate(need(raw, "haystack_session_ids", list, label))
    ]
    dates = [
        check(d, str, f"{label} has haystack_dates[{k}] as")
        for k, d in enumerate(need(raw, "haystack_dates", list, label))
    ]
    haystack = need(raw, "haystack_sessions", list, label)
    if not len(ids) == len(dates) == len(haystack):
        raise Bad(
            f"{label} has {len(ids)} haystack_session_ids, {len(dates)} haystack_dates "
            f"and {len(haystack)} haystack_sessions; expected equal counts"
        )
    answer_ids = {
        text_of(check(s, (str, int), f"{label} has answer_session_ids[{k}] as"))
        for k, s in enumerate(opt(raw, "answer_session_ids", list, label) or [])
    }

    # Read every session in file order first, so that the first bad record in the file is the one named.
    parsed = [_session(haystack[k], f"{label}: haystack_sessions[{k}]") for k in range(len(ids))]
    original_ids, ids = ids, _unique(ids)
    order = list(range(len(ids)))
    whens = [parse_when(d) for d in dates]
    if all(w is not None for w in whens):
        order.sort(key=lambda k: whens[k] or datetime.min)
    sessions: list[Session] = []
    kept_ids: list[str] = []
    marked: list[str] = []
    in_answer_sessions: list[str] = []
    for k in (k for k in order if parsed[k]):
        index = len(sessions) + 1
        turns = [
            Turn(f"{ids[k]}:{j}", role, content, index, dates[k])
            for j, (role, content, _) in enumerate(parsed[k])
        ]
        marked += [t.dia_id for t, (_, _, has_answer) in zip(turns, parsed[k], strict=True) if has_answer]
        if original_ids[k] in answer_ids:
            in_answer_sessions += [t.dia_id for t in turns]
        sessions.append(Session(index=index, date=dates[k], turns=turns, when=whens[k]))
        kept_ids.append(ids[k])

    metadata: dict[str, Any] = {"question_date": question_date, "answer_session_ids": sorted(answer_ids)}
    category = qtype
    if qid.endswith("_abs"):
        category = UNANSWERABLE
        metadata["answer_raw"] = answers[0] if len(answers) == 1 else answers
        answers = [NOT_MENTIONED]
    q = Question(
        id=qid,
        question=question,
        answers=answers,
        evidence=marked or in_answer_sessions,
        category=category,
        category_raw=qtype,
        metadata=metadata,
    )
    return Conversation(
        id=qid,
        speakers=list(SPEAKERS),
        sessions=sessions,
        questions=[q],
        source="longmemeval",
        metadata={"path": path, "question_date": question_date, "session_ids": kept_ids},
    )


def _session(raw: Any, where: str) -> list[tuple[str, str, bool]]:
    """(role, content, has_answer) of each turn of one haystack session."""
    check(raw, list, f"{where} is")
    out = []
    for j, turn in enumerate(raw):
        at = f"{where}[{j}]"
        check(turn, dict, f"{at} is")
        out.append(
            (
                need(turn, "role", str, at),
                need(turn, "content", str, at),
                bool(opt(turn, "has_answer", (bool, int), at)),
            )
        )
    return out


def _unique(ids: list[str]) -> list[str]:
    """Session ids made unique within an instance, so that dia_ids are unique too."""
    seen: dict[str, int] = {}
    out = []
    for sid in ids:
        seen[sid] = seen.get(sid, 0) + 1
        out.append(sid if seen[sid] == 1 else f"{sid}#{seen[sid]}")
    return out
