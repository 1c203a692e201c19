"""Dict-valued messages read by their fields: the text fields are the text, the time fields the date
('[said on ...]'), other fields neither; a JSON dump of such a dict reads the same, and an escaped
newline never glues two words (issue 19, cause 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.attribution import FlowMethod
from memtrace.attribution.evidence.locate import dated_message, locate_evidence, message_text, said_when
from memtrace.attribution.evidence.support import content_stems, value_parts, value_words

#: A message as MemBase records it: its metadata appended to the content, its time in a field.
MESSAGE = {
    "content": (
        "I adopted a dog named Pepper on 10 May!\nBelow is this message's metadata:\n"
        "Speaker Name: Clara\nSpeaker Role: user\n"
    ),
    "name": "Clara",
    "role": "user",
    "timestamp": "2024-05-12T09:30:00",
}
READ = "Clara: I adopted a dog named Pepper on 10 May! [said on 12 May 2024]"
#: Words a JSON dump of MESSAGE makes that the message never says.
NOT_SAID = {"content", "timestamp", "role", "user", "metadata", "nbelow", "nspeaker", "12t09", "05", "2024"}


def _run(workspace: Path, stored: str) -> str:
    """Mem0-like: the memory keeps the date as said ('on 10 May'); the answer step, reading it, still
    answers wrong. The year of the gold '10 May 2024' is only in the message's timestamp field."""
    value = MESSAGE if stored == "dict" else json.dumps(MESSAGE, indent=4)
    with mt.run(workspace, name=stored, system="toy") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output("D1:1", value, category="message")
            op.output(
                "D1:2",
                "Diego: Cool!\\nBelow is this message's metadata:\\nSpeaker Name: Diego",
                category="message",
            )
        with mt.op("extract_facts", category="extraction") as op:
            op.use(evidence)
            facts = op.output("extracted_facts", ["Clara adopted a dog named Pepper on 10 May"])
        with mt.op("update_memory_decision", category="update") as op:
            op.use(facts)
            run.memory("mem-1").create(
                {"id": "mem-1", "memory": "Clara adopted a dog named Pepper on 10 May"}, by=op
            )
        case = run.case("When did Clara adopt Pepper?", gold="10 May 2024", evidence=["D1:1"])
        with mt.op("question", category="query"):
            with mt.op("search", category="retrieval") as op:
                query = op.input("query", "When did Clara adopt Pepper?", category="query")
                op.use(run.memory("mem-1").latest_id)
                context = op.output(
                    "retrieved", ["Clara adopted a dog named Pepper on 10 May"], category="retrieved"
                )
            with mt.op("answer", category="response") as op:
                op.use(query)
                op.use(context)
                prediction = op.output("prediction", "12 May 2024", category="prediction")
        case.predict("12 May 2024", var=prediction)
        case.judge(False, score=0.0)
        return run.id


@pytest.mark.parametrize("stored", ["dict", "json"])
def test_a_dict_message_reads_as_its_text_and_date(
    tmp_path: Path, stored: str, open_ws: OpenWorkspace
) -> None:
    run_id = _run(tmp_path, stored)
    ws = open_ws(tmp_path)
    (case,) = ws.cases(run_id)
    graph = ws.view(run_id)
    (message,) = locate_evidence(graph, case).versions
    assert dated_message(graph, message) == READ
    assert said_when(graph, message) == "12 May 2024"
    assert not content_stems(dated_message(graph, message)) & (NOT_SAID - {"2024"})
    # The year is the stamp's, not the text's: a memory saying "10 May" carries the gold "10 May 2024",
    # so the answer step that read it is blamed, not the extraction (which kept the date as said).
    for view in (graph, ws.graph(run_id)):
        result = FlowMethod().attribute(view, case)
        assert (result.error_type, view.op(result.op_id).name) == ("ResponseError", "answer"), (
            result.explanation
        )


def test_an_escaped_newline_separates_words(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    """Stored text whose newlines were escaped twice ('\\n' as two characters): the lines are parts,
    and MemBase's appended metadata is no part of a message's text."""
    run_id = _run(tmp_path, "json")
    ws = open_ws(tmp_path)
    graph = ws.view(run_id)
    assert message_text(graph.value("D1:2@1")) == "Diego: Cool!"
    stored = "Clara adopted a dog named Pepper\\nBelow is this memory's metadata:\\nSpeaker Name: Clara"
    words = value_words(stored)
    assert len(words) == 3 and not set().union(*words) & {"nbelow", "nspeaker", "pepper\\nbelow"}
    assert value_parts(stored)[0][1] == "Clara adopted a dog named Pepper"


def test_dict_memories_are_read_by_their_fields_not_their_json() -> None:
    """A memory dict (or its dump) is one part: its text with its date as the stamp; its id, keys and
    other fields are no words of it. A dict with no text field reads as its values, never its keys."""
    memory = {
        "id": "3f2a-77",
        "memory": "Clara adopted Pepper",
        "timestamp": "2024-05-12 09:30",
        "score": 0.8,
    }
    for value in (memory, json.dumps(memory, indent=4)):
        (words,) = value_words(value)
        assert words == content_stems("Clara adopted Pepper [said on 12 May 2024]")
        assert value_parts(value)[0][1] == "Clara adopted Pepper [said on 12 May 2024]"
    (words,) = value_words({"facts": ["Clara adopted Pepper"], "created_at": "2024-05-12"})
    assert words == content_stems("Clara adopted Pepper [said on 12 May 2024]")
