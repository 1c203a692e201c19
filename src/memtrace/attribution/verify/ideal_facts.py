"""What a correct extraction writes for an evidence message: the fact an extraction repair restores.

A fact must stand on its own: it names the speaker (a question about Clara cannot find "I adopted a
dog"), is dated with relative dates resolved, and, when the message answers a question the other
speaker just asked ("Pepperoni of course!"), says what it answers, as a conversation-aware extractor
does ("What's your favorite pizza?"). Only messages the repaired operation read are used.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ...graph import GraphQueries, VariableVersion
from ...systems.rules import third_person
from ...text import parse_when, resolve_date, sentences
from ..evidence.locate import message_text, said_when

_TURN = re.compile(r"^(?P<session>.*?)(?P<turn>\d+)$")


def ideal_fact(graph: GraphQueries, message: VariableVersion, read: Collection[str] = ()) -> str:
    """An evidence message as a correct extraction writes it: the speaker's words in the third person,
    naming the speaker, dated ('Clara adopted a dog last week [on 1 May 2023]'), and the question it
    answers when the operation also read that question (see `answered_question`)."""
    text = message_text(graph.value(message.id))
    speaker, said = text.split(": ", 1) if ": " in text[:40] else ("", text)
    when = said_when(graph, message)
    fact = third_person(said, speaker) if speaker else said
    if speaker and speaker not in fact:
        fact = f"{speaker} said: {fact}"
    asked = answered_question(graph, message, speaker, read)
    if asked is not None:
        fact = f"{fact} (answering {asked})"
    day = parse_when(when) if when else None
    resolved = resolve_date(said, day)
    stamp = f"on {resolved}" if resolved else f"said on {when}" if when else ""
    return f"{fact} [{stamp}]" if stamp else fact


def answered_question(
    graph: GraphQueries, message: VariableVersion, speaker: str, read: Collection[str]
) -> str | None:
    """The question the turn just before `message` asked, as 'Diego: What's your favorite pizza?', when
    another speaker said it, the operation read it (as a message or inside a value it read), and it
    asks something; else None."""
    match = _TURN.match(message.name)
    if match is None or int(match["turn"]) == 0:
        return None
    turn = match["turn"]  # 'D9:18', LongMemEval's zero-based 's1:1', a padded 'turn_010'
    previous = str(int(turn) - 1)
    if turn.startswith("0"):  # padded ids keep their width; 'D9:10' follows 'D9:9', not 'D9:09'
        previous = previous.zfill(len(turn))
    previous_name = f"{match['session']}{previous}"
    versions = [v for v in graph.versions(previous_name) if v.seq <= message.seq]
    if not versions:
        return None
    before = versions[-1]
    if before.id not in read and not _read_inside(graph, previous_name, read):
        return None
    text = message_text(graph.value(before.id))
    asker, said = text.split(": ", 1) if ": " in text[:40] else ("", text)
    if not asker or asker == speaker:
        return None
    questions = [s for s in sentences(said) if s.endswith("?")]
    return f"{asker}: {' '.join(questions)}" if questions else None


def _read_inside(graph: GraphQueries, name: str, read: Collection[str]) -> bool:
    """Whether a value the operation read holds a line tagged with message `name` ('[D9:17] ...', or
    with several ids, '[D9:17,D9:18] ...', as Mem0's memories are)."""
    for var_id in read:
        if not graph.has_var(var_id):
            continue
        for tags in _TAGS.findall(str(graph.value(var_id))):
            if name in tags.split(","):
                return True
    return False


_TAGS = re.compile(r"\[([^\]\s]+)\]")
