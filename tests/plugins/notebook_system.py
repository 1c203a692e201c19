"""A test double of a user's own memory system: one module written against memtrace's public API only.

Every message becomes a note (a memory unit); a question reads the `top_k` notes sharing the most
words with it. Nothing in memtrace names it: the tests register it with `register_system()` or
through a `memtrace.systems` entry point, then run, replay, verify and optimise it like a built-in.
"""

from __future__ import annotations

from typing import Annotated

import memtrace as mt
from memtrace.datasets import Question
from memtrace.systems import (
    ANSWER_ROUTES,
    RETRIEVAL,
    Answer,
    Grid,
    MemorySystem,
    Message,
    SystemConfig,
    answer_question,
    on,
)


class NotebookConfig(SystemConfig):
    #: Notes handed to the answer step.
    top_k: Annotated[int, Grid(1, 2, 4, 8, 16)] = 8


class NotebookSystem(MemorySystem):
    """Keeps every message as a note; answers from the notes that overlap the question most."""

    name = "test_notebook"
    Config = NotebookConfig
    config: NotebookConfig
    routes = (*ANSWER_ROUTES, on("read_notes", RETRIEVAL, "top_k", +1, "the note ranked below top_k"))

    def reset(self) -> None:
        self.notes: dict[str, str] = {}  # unit id -> the text the recorded memory holds

    def ingest(self, message: Message) -> None:
        with mt.op("write_note", category="extraction") as op:
            op.use(message.var)
            unit = self.recorder.memory(f"note-{len(self.notes) + 1}")
            unit.create(message.text, by=op)
            action, value = unit.applied  # a replay patch may cancel or rewrite the note
            if action != "cancelled":
                self.notes[unit.unit_id] = value

    def answer(self, question: Question) -> Answer:
        words = set(question.question.lower().split())
        with mt.op("read_notes", category="retrieval", top_k=self.config.top_k) as op:
            query = op.input("query", question.question, category="query")
            ranked = sorted(self.notes, key=lambda u: -len(words & set(self.notes[u].lower().split())))
            chosen = ranked[: self.config.top_k]
            for unit in chosen:
                op.use(self.recorder.memory(unit).latest_id)
            # produce(), not output(): a replay's patch of `retrieved` is what the answer reads.
            context, context_var = op.produce(
                "retrieved", [self.notes[u] for u in chosen], category="retrieved"
            )
        return answer_question(
            question, context, config=self.config, llm=self.llm, context_var=context_var, query_var=query
        )
