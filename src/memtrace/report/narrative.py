"""The optional narrative: an LLM reads the structured report and writes a few paragraphs about it.

It only ever reads the report (a compact copy of report.json), so every number stays computed and the
structured files never depend on it; the text is stored as a `Narrative`, marked as generated.
"""

from __future__ import annotations

import json
from typing import Any

from ..llm import LLMClient
from .model import Narrative, Report

SYSTEM_PROMPT = (
    "You write the summary section of a diagnostic report about the wrong answers of LLM memory systems. "
    "The user gives the report as JSON: headline numbers, per-system accuracy and error types, an evidence "
    "funnel (how many questions had their evidence extracted into memory, kept through updates and "
    "deletions, retrieved, answered right), when the blamed operations ran, and failure patterns "
    "(system, operation, error type, count, description). Write 3 to 5 short paragraphs of plain prose: "
    "the overall picture, the largest failure patterns and which component they point at, where the "
    "funnel loses the most, how far the attributions are verified, and what to fix first. Use only "
    "numbers that appear in the JSON; do not invent any. No headings, no lists, no preamble."
)

#: Example values are left out of what the model reads: long, and not needed for a summary.
_EXAMPLE_FIELDS = ("case_id", "question", "gold", "prediction", "op_id", "verified")


def narrative_input(report: Report) -> dict[str, Any]:
    """The compact report the model reads: everything aggregated, two short examples per pattern."""
    data = report.to_dict()
    data.pop("failures", None)
    data.pop("narrative", None)
    data.pop("generated_at", None)  # the same report asks the same question (and hits the LLM cache)
    for pattern in data["patterns"]:
        pattern["examples"] = [{k: e[k] for k in _EXAMPLE_FIELDS} for e in pattern["examples"][:2]]
    data["patterns"] = data["patterns"][:15]
    return data


def write_narrative(report: Report, client: LLMClient, *, max_tokens: int = 900) -> Narrative:
    """Ask the model for the narrative; raises LLMError (one line) when the endpoint fails."""
    payload = json.dumps(narrative_input(report), ensure_ascii=False, indent=1)
    reply = client.chat(
        [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": payload},
        ],
        temperature=0.0,
        max_tokens=max_tokens,
        name="report.narrative",
    )
    return Narrative(text=reply.text.strip(), model=reply.model or client.model)
