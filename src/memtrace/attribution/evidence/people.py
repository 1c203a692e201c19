"""Whose turns an answer about several people rests on: "Did Jon and Gina both compete?" needs each."""

from __future__ import annotations

from ...graph import GraphQueries, VariableVersion
from .locate import turn_speakers
from .words import people_asked_about


def turns_by_person(
    graph: GraphQueries, question: str, annotated: list[VariableVersion]
) -> list[tuple[str, tuple[VariableVersion, ...]]]:
    """The annotated turns of each person a question joins ("Jon and Gina"), when every one of them
    said some: an answer inferred about both rests on each one's turns, as a list on each item.
    Empty when the question asks about one person, or some person asked about said none of them."""
    said_by = turn_speakers(graph)
    asked = people_asked_about(question, set(said_by.values()))
    if len(asked) < 2:
        return []
    groups = {person: tuple(v for v in annotated if said_by.get(v.id) == person) for person in sorted(asked)}
    return list(groups.items()) if all(groups.values()) else []
