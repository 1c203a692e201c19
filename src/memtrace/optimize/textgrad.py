"""Prompt rewrites from grouped attribution feedback: the paper's textual-gradient step.

The model sees the prompt, the failures attributed to operations that read it (grouped by error
type, with verified examples first) and what earlier rounds tried for this prompt and how validation
took it, and returns a rewrite. A rewrite that drops or adds a `{placeholder}` would break the
system's `str.format` call, so it is rejected before it is ever evaluated.
"""

from __future__ import annotations

import string
from typing import Any

from pydantic import BaseModel

from ..errors import RECOVERABLE_ERRORS
from .diagnose import TunableFeedback

REWRITE_PROMPT = """\
You improve one prompt of the LLM memory system "{system}". memtrace ran the system on training
conversations, traced every wrong answer to the earliest operation that caused it and checked the
blame by re-executing the run with that operation repaired. These failures were traced to operations
that use the prompt below ({ops}).

Current prompt `{name}`:
<<<
{prompt}
>>>

Failures by error type ({total} in all; {verified} confirmed by replay or, for ResponseErrors, elimination):
{groups}

Examples:
{examples}

Earlier rounds for this prompt:
{history}

Rewrite the prompt so that these failures are avoided without hurting the questions it already
answers well. Keep every placeholder exactly as written ({placeholders}); add no other braces.
Reply with only a JSON object: {{"prompt": "<the new prompt>", "rationale": "<one sentence>"}}."""


class Rewrite(BaseModel):
    prompt: str
    rationale: str = ""


def placeholders(template: str) -> set[str]:
    """The `{name}` fields `str.format` fills in a template (None when it does not parse)."""
    try:
        return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError:
        return {"<unparseable>"}


def rewrite_request(
    system: str, name: str, prompt: str, feedback: TunableFeedback, history: list[str]
) -> str:
    """The textual-gradient request for one prompt."""
    groups = "\n".join(f"- {kind}: {n}" for kind, n in feedback.errors.most_common())
    examples = "\n".join(
        f"{i}. Q: {e['question']} | gold: {'; '.join(e['gold'])} | answered: {e['prediction']!r} | "
        f"{e['error_type']} at {e['operation']} ({e['verified'] or 'not verified'}): {e['explanation']}"
        for i, e in enumerate(feedback.examples, 1)
    )
    fields = placeholders(prompt)
    return REWRITE_PROMPT.format(
        system=system,
        ops=", ".join(feedback.ops),
        name=name,
        prompt=prompt,
        total=feedback.attributions,
        verified=feedback.verified,
        groups=groups or "- (none)",
        examples=examples or "(none)",
        history="\n".join(f"- {h}" for h in history) or "- none: this is the first rewrite",
        placeholders=", ".join("{" + f + "}" for f in sorted(fields)) or "there are none",
    )


def rewrite_prompt(
    llm: Any, system: str, name: str, prompt: str, feedback: TunableFeedback, history: list[str]
) -> tuple[str | None, str]:
    """(new prompt, why) from the model; (None, why not) when the rewrite is unusable."""
    request = rewrite_request(system, name, prompt, feedback, history)
    try:
        reply = llm.chat([{"role": "user", "content": request}], schema=Rewrite, name="optimize.rewrite")
    except RECOVERABLE_ERRORS as exc:  # one unusable rewrite is a rejected proposal, not a dead run
        return None, f"the model's rewrite was unusable: {exc}"
    data = reply.data
    new = (data.prompt if isinstance(data, Rewrite) else str(data.get("prompt", ""))).strip()
    rationale = data.rationale if isinstance(data, Rewrite) else str(data.get("rationale", ""))
    if not new:
        return None, "the model returned an empty prompt"
    if new == prompt.strip():
        return None, "the model returned the prompt unchanged"
    if placeholders(new) != placeholders(prompt):
        missing = sorted(placeholders(prompt) - placeholders(new))
        extra = sorted(placeholders(new) - placeholders(prompt))
        return None, f"the rewrite changed the placeholders (missing {missing}, extra {extra})"
    return new, rationale.strip() or "rewrite from the grouped feedback"
