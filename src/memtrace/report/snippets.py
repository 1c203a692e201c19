"""Values of the decisive operation cut down for reading, keeping the part that matters in view.

A retrieved context or a prompt runs to thousands of characters; cutting it at the start would often
hide exactly the line the example is about. So a cut keeps the first mention of the gold answer or of
an evidence message id in view (with "…" where text was left out), and a long list keeps the items that
mention them besides its first ones, in their original order. The lines that mention them are marked,
so the renderers can highlight the evidence line.
"""

from __future__ import annotations

import re
from typing import Any

from ..attribution.model import Attribution, PathRole
from ..eval import says_unanswerable
from ..graph import Case, VariableVersion
from ..graph.values import value_text
from .model import ValueSnippet

SNIPPET_CHARS = 280
LIST_ITEMS = 6
#: The question and the answer mention the gold by design (or by luck): never marked as evidence.
UNMARKED = frozenset({"query", "question", "prediction"})
#: An item restates an evidence text when it shares this share of the evidence's words (a memory written
#: from the message), or the evidence holds this share of the item's (a retrieved chunk of it).
RESTATED = 0.6
CONTAINED = 0.8
#: ... provided the evidence is at most this many times longer, and the item has this many words.
COMPARABLE = 3
MIN_WORDS = 3


def focus_terms(case: Case, attribution: Attribution) -> list[str]:
    """What a reader looks for in the values: the gold answers, then the evidence message ids."""
    gold = [g for g in case.gold if g.strip() and not says_unanswerable(g)]
    evidence = [s.id.rsplit("@", 1)[0] for s in attribution.steps(PathRole.EVIDENCE)]
    return list(dict.fromkeys([*gold, *evidence, *case.evidence]))


def evidence_texts(values: list[Any]) -> list[str]:
    """The text of each value that carries the evidence (a message, or a memory unit's `memory` field)."""
    texts = []
    for value in values:
        if isinstance(value, dict):
            value = value.get("memory") or value.get("text") or value
        texts.append(" ".join(value_text(value).split()))
    return [t for t in texts if t]


def snippet(
    version: VariableVersion,
    value: Any,
    focus: list[str] | None = None,
    width: int = SNIPPET_CHARS,
    evidence: list[str] | None = None,
) -> ValueSnippet:
    """A version's value for reading: a list as items, one per line; else one line; deletions say so.

    Lines that mention a focus term or restate an `evidence` text are kept in view and marked.
    """
    focus, evidence = focus or [], evidence or []
    if version.deleted:
        return ValueSnippet(id=version.id, category=version.category, text="(deleted)")
    marked: list[int] = []
    if version.category in UNMARKED:
        focus, evidence = [], []  # keep the cut as before, but the question or answer is not the evidence
    if isinstance(value, list) and len(value) > 1:
        text, cut, marked = _items(value, width // 2, focus, evidence)
    elif value is None:
        text, cut = "(no value)", False
    else:
        text, cut = line(value, width, focus)
        whole = " ".join(value_text(value).split())
        marked = [0] if _first_hit(whole, focus) is not None or _restates(whole, evidence) else []
    return ValueSnippet(id=version.id, category=version.category, text=text, truncated=cut, marked=marked)


def line(value: Any, width: int, focus: list[str] | None = None) -> tuple[str, bool]:
    """One line of a value; when too long, a window that keeps the first focus term in view."""
    text = " ".join(value_text(value).split())
    if len(text) <= width:
        return text, False
    size = f" ({len(text)} chars)"
    hit = _first_hit(text, focus or [])
    if hit is None or hit[0] + hit[1] <= width - 1:
        return text[: width - 1] + "…" + size, True
    start = max(0, min(hit[0] - width // 3, len(text) - (width - 2)))
    end = start + width - 2
    return "…" + text[start:end] + ("…" if end < len(text) else "") + size, True


def _items(
    items: list[Any], width: int, focus: list[str], evidence: list[str]
) -> tuple[str, bool, list[int]]:
    """The first items and those holding the evidence, one per line; which lines hold the evidence."""
    texts = [" ".join(value_text(item).split()) for item in items]
    hits = [i for i, t in enumerate(texts) if _first_hit(t, focus) is not None or _restates(t, evidence)]
    keep = sorted(set(hits[:LIST_ITEMS]) | set(range(max(0, LIST_ITEMS - len(hits[:LIST_ITEMS])))))
    keep = [i for i in keep if i < len(items)]
    lines: list[str] = []
    marked: list[int] = []
    cut, previous = len(keep) < len(items), -1
    for i in keep:
        if i > previous + 1:
            lines.append(f"… {i - previous - 1} item(s)")
        text, shortened = line(items[i], width, focus)
        if i in hits:
            marked.append(len(lines))
        lines.append(f"- {text}")
        cut = cut or shortened
        previous = i
    if previous < len(items) - 1:
        lines.append(f"… {len(items) - previous - 1} more item(s)")
    return "\n".join(lines), cut, marked


def _restates(text: str, evidence: list[str]) -> bool:
    """Does `text` say what an evidence text says: most of its words, or most of the evidence's?"""
    words = _words(text)
    for source in evidence:
        needed = _words(source)
        shared = len(words & needed)
        if not needed or len(words) < MIN_WORDS:
            continue
        comparable = len(needed) <= COMPARABLE * len(words)  # not a whole transcript holding everything
        if shared >= RESTATED * len(needed) or (comparable and shared >= CONTAINED * len(words)):
            return True
    return False


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def _first_hit(text: str, focus: list[str]) -> tuple[int, int] | None:
    """(position, length) of the earliest focus term in the text, case-insensitive."""
    lowered = text.lower()
    found = [(lowered.find(term.lower()), len(term)) for term in focus if term]
    found = [pair for pair in found if pair[0] >= 0]
    return min(found) if found else None
