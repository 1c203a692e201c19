"""LoCoMo loader (snap-research/LoCoMo `locomo10.json` format and subsets of it such as locomo-dev.json).

Mapping to the shared model:

- Sessions are `session_N` in number order (N, not file order, so session_10 follows session_9); the session's
  index is N so that dia_id "D3:4" lives in session 3. Sessions with no turns are skipped; a date key with no
  session (conv-26 has 35 dates for 19 sessions) is ignored.
- `blip_caption` is kept as `Turn.image_caption` (the text itself is unchanged; see `Turn.rendered`).
- Categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial; the number stays in
  `category_raw`. Numbers outside 1-5 become "category-N" rather than failing.
- Answers are strings (LoCoMo writes a few as numbers). An adversarial question without `answer` gets the
  gold `[NOT_MENTIONED]` ("Not mentioned in the conversation"): the conversation does not hold the answer and
  the tempting wrong one is kept as `metadata["adversarial_answer"]`. Two adversarial questions of conv-26
  do carry an `answer` ("No"); that answer is kept as the gold.
- Evidence ids are cleaned of two obvious typos found in the data: several ids in one string
  ("D8:6; D9:17" -> "D8:6", "D9:17") and a stray colon ("D:11:26" -> "D11:26"); the original list is then
  kept as `metadata["evidence_raw"]`. Ids that still name no turn are left as they are (see
  `Conversation.broken_evidence`): in locomo-dev.json three remain ("D10:19" of conv-42 and "D4:36" of
  conv-47 point past the end of their session, and conv-42 has a bare "D").
- Question ids are f"{sample_id}-q{index}" with the index into `qa`, stable across loads.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ._read import Bad, answers_of, check, need, opt, read_records
from .model import (
    ADVERSARIAL,
    MULTI_HOP,
    NOT_MENTIONED,
    OPEN_DOMAIN,
    SINGLE_HOP,
    TEMPORAL,
    Conversation,
    Question,
    Session,
    Turn,
)

#: LoCoMo's category numbers, as the evidence counts of the data show them.
CATEGORIES: dict[int, str] = {1: MULTI_HOP, 2: TEMPORAL, 3: OPEN_DOMAIN, 4: SINGLE_HOP, 5: ADVERSARIAL}

_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_STRAY_COLON = re.compile(r"D:(\d+):(\d+)")


def load_locomo(path: str | Path) -> list[Conversation]:
    """Every conversation of a LoCoMo-format file; FormatError naming the first bad record otherwise."""
    return read_records(path, lambda data: _parse_file(data, str(path)))


def _parse_file(data: Any, path: str) -> list[Conversation]:
    if isinstance(data, dict) and "sample_id" in data:  # a single conversation saved on its own
        data = [data]
    check(data, list, "the top level is")
    return [_conversation(record, i, path) for i, record in enumerate(data)]


def _conversation(record: Any, i: int, path: str) -> Conversation:
    check(record, dict, f"conversation {i} is")
    sample_id = str(need(record, "sample_id", (str, int), f"conversation {i}"))
    label = f"conversation {i} (sample_id {sample_id})"
    conv = need(record, "conversation", dict, label)
    speakers = [need(conv, key, str, f"{label}: conversation") for key in ("speaker_a", "speaker_b")]
    sessions = _sessions(conv, label)
    qa = need(record, "qa", list, label)
    questions = [_question(item, j, sample_id, f"{label}: qa[{j}]") for j, item in enumerate(qa)]
    return Conversation(
        id=sample_id,
        speakers=speakers,
        sessions=sessions,
        questions=questions,
        source="locomo",
        metadata={"path": path},
    )


def _sessions(conv: dict[str, Any], label: str) -> list[Session]:
    numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION_KEY.fullmatch(key)))
    sessions = []
    for n in numbers:
        key = f"session_{n}"
        raw_turns = check(conv[key], list, f"{label}: {key} is")
        date = opt(conv, f"{key}_date_time", str, f"{label}: conversation")
        turns = [_turn(t, n, date, f"{label}: {key}[{j}]") for j, t in enumerate(raw_turns)]
        if turns:
            sessions.append(Session(index=n, date=date, turns=turns))
    return sessions


def _turn(raw: Any, session: int, date: str | None, where: str) -> Turn:
    check(raw, dict, f"{where} is")
    return Turn(
        dia_id=need(raw, "dia_id", str, where),
        speaker=need(raw, "speaker", str, where),
        text=need(raw, "text", str, where),
        session=session,
        date=date,
        image_caption=opt(raw, "blip_caption", str, where),
    )


def _question(raw: Any, j: int, sample_id: str, where: str) -> Question:
    check(raw, dict, f"{where} is")
    question = need(raw, "question", str, where)
    category_raw: int | str = need(raw, "category", (str, int), where)
    if isinstance(category_raw, str) and category_raw.strip().isdigit():
        category_raw = int(category_raw)
    if isinstance(category_raw, int):
        category = CATEGORIES.get(category_raw, f"category-{category_raw}")
    else:
        category = category_raw
    raw_evidence = need(raw, "evidence", list, where)
    for k, item in enumerate(raw_evidence):
        check(item, str, f"{where} has evidence[{k}] as")
    evidence = _clean_evidence(raw_evidence)
    metadata: dict[str, Any] = {}
    if raw.get("adversarial_answer") is not None:
        metadata["adversarial_answer"] = raw["adversarial_answer"]
    if evidence != raw_evidence:
        metadata["evidence_raw"] = list(raw_evidence)
    if raw.get("answer") is not None:
        answers = answers_of(raw["answer"], f"{where} answer")
    elif category == ADVERSARIAL:
        answers = [NOT_MENTIONED]
    else:
        raise Bad(f"{where} has no 'answer'")
    return Question(
        id=f"{sample_id}-q{j}",
        question=question,
        answers=answers,
        evidence=evidence,
        category=category,
        category_raw=category_raw,
        metadata=metadata,
    )


def _clean_evidence(items: list[str]) -> list[str]:
    """Split ids written together and fix the stray colon; everything else is kept verbatim."""
    out: list[str] = []
    for item in items:
        for part in _EVIDENCE_SPLIT.split(item.strip()):
            if part:
                out.append(_STRAY_COLON.sub(r"D\1:\2", part) if _STRAY_COLON.fullmatch(part) else part)
    return out
