"""Values of the decisive operation cut down for reading, keeping the part that matters in view.

A retrieved context or a prompt runs to thousands of characters; cutting it at the start would often
hide exactly the line the example is about. So a cut keeps the first mention of the gold answer or of
an evidence message id in view (with "…" where text was left out), and a long list keeps the items that
mention them besides its first ones, in their original order. The lines that mention them are marked,
so the renderers can highlight the evidence line.

A context the answer step read is different: an item of it is marked only as *carrying* the evidence,
and only when the attribution's path names it (a step "in context" with that part). An item that merely
mentions the gold or an evidence id may hold one item of a list answer, or none of what was asked.
"""

from __future__ import annotations

import re
from typing import Any

from ..attribution.evidence.support import value_parts
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


def carrying_parts(attribution: Attribution, var_id: str) -> list[str]:
    """The parts of a context variable the attribution's path names as carrying the evidence."""
    return [s.part for s in attribution.steps(PathRole.IN_CONTEXT) if s.id == var_id and s.part]


def snippet(
    version: VariableVersion,
    value: Any,
    focus: list[str] | None = None,
    width: int = SNIPPET_CHARS,
    evidence: list[str] | None = None,
    carrying: list[str] | None = None,
) -> ValueSnippet:
    """A version's value for reading: a list as items, one per line; else one line; deletions say so.

    Lines that mention a focus term or restate an `evidence` text are kept in view and marked. With
    `carrying` (a context: the parts its path names) only those parts are marked, as carrying.
    """
    focus, evidence = focus or [], evidence or []
    if version.deleted:
        return ValueSnippet(id=version.id, category=version.category, text="(deleted)")
    if carrying is not None and value is not None:
        return _context_snippet(version, value, focus, width, carrying)
    marked: list[int] = []
    if version.category in UNMARKED:
        focus, evidence = [], []  # keep the cut as before, but the question or answer is not the evidence
    if isinstance(value, list) and len(value) > 1:
        texts = [" ".join(value_text(item).split()) for item in value]
        hits = [i for i, t in enumerate(texts) if _first_hit(t, focus) is not None or _restates(t, evidence)]
        text, cut, shown = _items(value, width // 2, focus, hits)
        marked = [at for at, _ in shown]
    elif value is None:
        text, cut = "(no value)", False
    else:
        text, cut = line(value, width, focus)
        whole = " ".join(value_text(value).split())
        marked = [0] if _first_hit(whole, focus) is not None or _restates(whole, evidence) else []
    return ValueSnippet(id=version.id, category=version.category, text=text, truncated=cut, marked=marked)


def _context_snippet(
    version: VariableVersion, value: Any, focus: list[str], width: int, carrying: list[str]
) -> ValueSnippet:
    """A context as its parts (items, lines), the ones the path names marked as carrying; parts that
    mention a focus term are kept in view, unmarked."""
    texts = [text for _, text in value_parts(value)]
    named = set(carrying)
    if len(texts) <= 1:
        text, cut = line(texts[0] if texts else value, width, [*carrying, *focus])
        held = [0] if texts and texts[0] in named else []
        return ValueSnippet(id=version.id, category=version.category, text=text, truncated=cut, carrying=held)
    hits = [i for i, t in enumerate(texts) if t in named]
    seen = [i for i, t in enumerate(texts) if i not in hits and _first_hit(t, focus) is not None]
    text, cut, lines = _items(texts, width // 2, focus, [*hits, *seen])
    held = [at for at, i in lines if i in hits]
    return ValueSnippet(id=version.id, category=version.category, text=text, truncated=cut, carrying=held)


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
    items: list[Any], width: int, focus: list[str], hits: list[int]
) -> tuple[str, bool, list[tuple[int, int]]]:
    """The first items and the `hits` (the first LIST_ITEMS of them, in the order given), one per line;
    (line, item index) of each hit shown."""
    first = list(dict.fromkeys(hits))[:LIST_ITEMS]
    keep = sorted(set(first) | set(range(max(0, LIST_ITEMS - len(first)))))
    keep = [i for i in keep if i < len(items)]
    lines: list[str] = []
    shown: list[tuple[int, int]] = []
    cut, previous = len(keep) < len(items), -1
    for i in keep:
        if i > previous + 1:
            lines.append(f"… {i - previous - 1} item(s)")
        text, shortened = line(items[i], width, focus)
        if i in hits:
            shown.append((len(lines), i))
        lines.append(f"- {text}")
        cut = cut or shortened
        previous = i
    if previous < len(items) - 1:
        lines.append(f"… {len(items) - previous - 1} more item(s)")
    return "\n".join(lines), cut, shown


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
