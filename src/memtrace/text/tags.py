"""Message-id tags on memory lines ('[D1:7] Clara: ...'): how provenance travels inside plain text.

The systems write them into memories and contexts; attribution reads them back to tell the evidence
message from another one that happens to mention the same words.
"""

from __future__ import annotations

import re

from .dates import format_date

_TAG = re.compile(r"^\[(?P<id>[^\]\s]+)\] ")


def tagged_line(message: object) -> str:
    """A message as a memory line: '[D1:7] Clara: text [said on 16 April 2023]'.

    The leading message id keeps each line's provenance, so an attributor can tell the evidence
    message from another one that happens to mention the same words.
    """
    turn, when = message.turn, message.session.when  # type: ignore[attr-defined]
    text = message.text  # type: ignore[attr-defined]
    return tag_lines(turn.dia_id, f"{text.rstrip()} [said on {format_date(when)}]" if when else text)


def tag_lines(message_id: str, text: str) -> str:
    """Every non-blank line of a message's text prefixed with its id: '[D1:7] ...'.

    A multi-line message must not leave untagged continuation lines behind: those (a bare
    '[said on 8 May 2023]', say) would pass for any message's line.
    """
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    return "\n".join(f"[{message_id}] {line}" for line in lines) or f"[{message_id}] "


def untag(line: str) -> tuple[str | None, str]:
    """(message id, the line without its id tag)."""
    match = _TAG.match(line)
    return (match.group("id"), line[match.end() :]) if match else (None, line)


def untagged(text: str) -> str:
    """A text without the message-id tags on its lines."""
    return "\n".join(untag(line)[1] for line in text.split("\n"))
