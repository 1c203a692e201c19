"""Cases for imported traces: the questions and gold answers a cases file gives, which traces lack."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...errors import FormatError
from ...vocabulary import CaseVerdict
from .._common import NESTED_TOO_DEEPLY, answer_list, brief


@dataclass(slots=True)
class CaseSpec:
    """A question to attach to an imported trace (a cases file entry)."""

    question: str
    gold: list[str]
    id: str | None = None
    evidence: list[str] | None = None
    verdict: CaseVerdict | None = None


def read_cases_file(path: str | Path) -> list[CaseSpec]:
    """Cases for foreign traces: a JSON list of {question, gold, id?, evidence?, verdict?}."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FormatError(path, "no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FormatError(path, f"not valid JSON ({exc})") from None
    except RecursionError:
        raise FormatError(path, NESTED_TOO_DEEPLY) from None
    if not isinstance(document, list):
        raise FormatError(path, "a cases file is a JSON list of {question, gold} objects")
    specs = []
    for number, item in enumerate(document, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            raise FormatError(path, f"case {number}: needs a 'question' string")
        verdict = item.get("verdict")
        if verdict is not None and verdict not in tuple(CaseVerdict):
            wanted = "verdict must be 'correct' or 'wrong'"
            raise FormatError(path, f"case {number}: {wanted}, not {brief(verdict)}")
        verdict = None if verdict is None else CaseVerdict(verdict)
        specs.append(
            CaseSpec(
                item["question"],
                answer_list(item.get("gold")),
                item.get("id") if isinstance(item.get("id"), str) else None,
                [str(e) for e in item.get("evidence") or []],
                verdict,
            )
        )
    return specs
