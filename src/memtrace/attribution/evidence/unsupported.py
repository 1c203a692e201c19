"""A gold answer the conversation does not support: it names something no turn mentions.

LoCoMo has such golds (an answer from world knowledge, an image, a mistake). A name in the gold that
no turn of the conversation says, not even in a plan, makes the case a suspected annotation error,
never a memory failure; a month or weekday is how a gold says when, not such a name.
"""

from __future__ import annotations

import difflib
import re

from ...eval.strict import strip_dates
from ...graph import Case
from .words import content_stems, unplanned

#: Calendar words are how a gold answer says when, not a name the conversation should mention.
_CALENDAR = frozenset(
    re.findall(
        r"\w+",
        "january february march april may june july august september october november december"
        " monday tuesday wednesday thursday friday saturday sunday",
    )
)
#: A word starting with a letter, not the unit of a number ("5K" names no "K").
_NAME = re.compile(r"(?<![\w'\u2019-])[A-Za-z][\w'\u2019-]*")


def _calendar_word(token: str) -> bool:
    """A month or weekday, also as a gold answer misspells it ("21Janury, 2022"): a letter or two off,
    never longer than the word ("Augusta" is a name)."""
    word = token.casefold()
    if word in _CALENDAR:
        return True
    close = difflib.get_close_matches(word, _CALENDAR, 1, 0.85) if len(word) >= 5 else []
    return bool(close) and len(word) <= len(close[0])


def unmentioned_name(case: Case, turns: list[frozenset[str]], stated: int = 0) -> str | None:
    """A name in the gold answer (all capitals, or capitalised past an item's first word) that no turn
    mentions: the answer comes from outside the conversation (world knowledge, an image, a mistake).

    A word said in a plan is still said ("I want to work on my old area, West County"), and the rest
    of a name the conversation begins ("LeBron" for "LeBron James") completes it, it is no new name.
    A list whose items turns mostly state (`stated` of them) is no annotation error for a title only an
    image shows: the stated items are what the answer needs, and readers trace those."""
    said = frozenset().union(*(unplanned(words) for words in turns)) if turns else frozenset()
    known = said | content_stems(case.question)
    for gold in case.gold:
        items = _quoted_items(strip_dates(gold, keep_case=True))
        unsaid = [found for found in (_unsaid_name(item, known) for item in items) if found is not None]
        mostly_stated = 2 * len(unsaid) < len(items) and 2 * stated > len(items)
        if unsaid and not mostly_stated:
            return f"the gold answer names {unsaid[0]!r}, which no turn of the conversation mentions"
    return None


_QUOTED = re.compile(r'"[^"]*"')
_SEPARATOR = re.compile(r",|;|\band\b")


def _quoted_items(gold: str) -> list[str]:
    """The items of a list answer; a quoted title is one item ("A Court of Thorns and Roses")."""
    titles: list[str] = []

    def hide(match: re.Match[str]) -> str:
        titles.append(match.group(0))
        return f"\x00{len(titles) - 1}\x00"

    masked = _QUOTED.sub(hide, gold)
    restore = re.compile(r"\x00(\d+)\x00")
    items = [restore.sub(lambda m: titles[int(m.group(1))], part) for part in _SEPARATOR.split(masked)]
    return [item for item in items if item.strip()]


def _unsaid_name(item: str, known: frozenset[str]) -> str | None:
    """The first name in one gold item that is not among the `known` words."""
    tokens = [t for t in _NAME.findall(item) if not _calendar_word(t)]
    for position, token in enumerate(tokens):
        named = (token.isupper() and len(token) > 1) or (position > 0 and token[0].isupper())
        stems = content_stems(token)
        begun = position > 0 and tokens[position - 1][0].isupper()
        if begun and content_stems(tokens[position - 1]) <= known:
            continue
        if named and stems and not stems & known:
            return token
    return None
