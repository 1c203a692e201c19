"""A conversation as JSON, so a replay reads the messages it re-runs as data, never as a pickle.

The snapshot writer stores `conversation.json` beside a run's snapshots; a workspace someone else made
can hold anything there, so reading it checks every field's type and names the file when one is wrong.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..datasets import Conversation, Question, Session, Turn
from ..errors import NotReplayableError

FORMAT = "memtrace-conversation-1"


def conversation_to_json(conversation: Conversation) -> str | None:
    """The conversation as JSON text, or None when its metadata would not come back the same."""
    record = {
        "format": FORMAT,
        "id": conversation.id,
        "speakers": conversation.speakers,
        "source": conversation.source,
        "metadata": conversation.metadata,
        "sessions": [
            {
                "index": s.index,
                "date": s.date,
                "when": s.when.isoformat() if s.when is not None else None,
                "turns": [[t.dia_id, t.speaker, t.text, t.session, t.date, t.image_caption] for t in s.turns],
            }
            for s in conversation.sessions
        ],
        "questions": [
            {
                "id": q.id,
                "question": q.question,
                "answers": q.answers,
                "evidence": q.evidence,
                "category": q.category,
                "category_raw": q.category_raw,
                "metadata": q.metadata,
            }
            for q in conversation.questions
        ],
    }
    try:
        text = json.dumps(record, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    try:
        same = conversation_from_json(text, "<memory>") == conversation
    except NotReplayableError:
        same = False
    return text if same else None


def conversation_from_json(text: str, where: str) -> Conversation:
    """The conversation `conversation_to_json` wrote; a `NotReplayableError` naming `where` if not one."""
    try:
        record = json.loads(text)
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} record")
        sessions = [
            Session(
                _typed(s["index"], int),
                _optional(s["date"], str),
                [_turn(t) for t in _typed(s["turns"], list)],
                datetime.fromisoformat(s["when"]) if s["when"] is not None else None,
            )
            for s in _typed(record["sessions"], list)
        ]
        questions = [
            Question(
                _typed(q["id"], str),
                _typed(q["question"], str),
                [_typed(a, str) for a in _typed(q["answers"], list)],
                [_typed(e, str) for e in _typed(q["evidence"], list)],
                _typed(q["category"], str),
                _optional(q["category_raw"], int | str),
                _typed(q["metadata"], dict),
            )
            for q in _typed(record["questions"], list)
        ]
        return Conversation(
            _typed(record["id"], str),
            [_typed(name, str) for name in _typed(record["speakers"], list)],
            sessions,
            questions,
            _typed(record["source"], str),
            _typed(record["metadata"], dict),
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise NotReplayableError(f"{where}: not a conversation memtrace wrote ({str(exc)[:200]})") from None


def _turn(row: Any) -> Turn:
    dia_id, speaker, text, session, date, caption = _typed(row, list)
    return Turn(
        _typed(dia_id, str),
        _typed(speaker, str),
        _typed(text, str),
        _typed(session, int),
        _optional(date, str),
        _optional(caption, str),
    )


def _typed(value: Any, kind: Any) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise TypeError(f"{value!r:.60} is not {getattr(kind, '__name__', kind)}")
    return value


def _optional(value: Any, kind: Any) -> Any:
    return None if value is None else _typed(value, kind)
