"""Helpers for the dataset tests: small fixtures and answer checks."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from memtrace.datasets import Conversation, Question

#: Words an answer may use without the evidence containing them.
STOPWORDS = {"a", "an", "the", "and", "or", "no", "yes", "at", "in", "of", "to"}

#: Relative day phrases the sample uses, as offsets from the session date.
RELATIVE_DAYS = {"today": 0, "yesterday": -1, "two days ago": -2}


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def day_text(day: date) -> str:
    return f"{day.day} {day:%B} {day.year}"


def derivable(conv: Conversation, q: Question) -> bool:
    """Every gold answer's content words are in the evidence turns, or it is a date they imply."""
    turns = conv.evidence_turns(q)
    text = " ".join(f"{t.speaker} {t.text} {t.image_caption or ''}" for t in turns)
    for answer in q.answers:
        if words(answer) - STOPWORDS <= words(text):
            continue
        dates = set()
        for t in turns:
            session = next(s for s in conv.sessions if s.index == t.session)
            assert session.when is not None
            day = session.when.date()
            dates |= {day_text(day + timedelta(days=n)) for p, n in RELATIVE_DAYS.items() if p in t.text}
            if "last week" in t.text:
                dates.add(f"the week before {day_text(day)}")
        if answer not in dates:
            return False
    return True


def locomo_record(sample_id: str = "conv-x", **changes: Any) -> dict[str, Any]:
    """A small LoCoMo-format conversation with the quirks of the real file."""
    record: dict[str, Any] = {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Porto."},
                {
                    "speaker": "Bob",
                    "dia_id": "D1:2",
                    "text": "Look at this!",
                    "img_url": ["http://example.invalid/x.jpg"],
                    "blip_caption": "a photo of a dog",
                },
            ],
            "session_2_date_time": "9:00 am on 20 May, 2023",
            "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "I got a cat in 2022."}],
            "session_10_date_time": "10:00 am on 1 July, 2023",
            "session_10": [{"speaker": "Bob", "dia_id": "D10:1", "text": "I quit the band."}],
            "session_3_date_time": "9:00 am on 1 June, 2023",
            "session_3": [],
            "session_11_date_time": "9:00 am on 9 July, 2023",
        },
        "qa": [
            {"question": "Where did Ann move?", "answer": "Porto", "evidence": ["D1:1"], "category": 4},
            {"question": "When did Ann get a cat?", "answer": 2022, "evidence": ["D2:1"], "category": 2},
            {
                "question": "What did Bob quit?",
                "adversarial_answer": "chess",
                "evidence": ["D10:1"],
                "category": 5,
            },
            {
                "question": "Is it Ann's dog?",
                "adversarial_answer": "Yes",
                "answer": "No",
                "evidence": [],
                "category": 5,
            },
            {
                "question": "Which?",
                "answer": "Porto, cat",
                "evidence": ["D1:1; D2:1", "D:10:1"],
                "category": 1,
            },
        ],
        "observation": {},
        "session_summary": {},
    }
    record.update(changes)
    return record


def lme_instance(question_id: str = "q1", **changes: Any) -> dict[str, Any]:
    """A small LongMemEval instance: three sessions out of date order, one turn marked as evidence."""
    record: dict[str, Any] = {
        "question_id": question_id,
        "question_type": "single-session-user",
        "question": "What is my dog's name?",
        "answer": "Rex",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": ["s_late", "answer_s1", "s_early"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/10 (Wed) 09:00", "2023/05/01 (Mon) 08:30"],
        "haystack_sessions": [
            [{"role": "user", "content": "Plan a trip."}, {"role": "assistant", "content": "Sure."}],
            [
                {"role": "user", "content": "My dog Rex loves the park.", "has_answer": True},
                {"role": "assistant", "content": "Rex sounds lovely."},
            ],
            [{"role": "user", "content": "Hello."}],
        ],
        "answer_session_ids": ["answer_s1"],
    }
    record.update(changes)
    return record
