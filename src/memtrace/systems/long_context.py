"""Long context: one memory unit absorbs every message; the oldest are trimmed to a token budget.

Operations: `memory_update` (update) appends a message to the unit, `trim_memory` (update) drops
the oldest messages once the unit is over budget, `retrieve` (retrieval) hands the whole unit to
`answer` (response). Evidence lost here is lost to trimming: an UpdateError at `trim_memory`.
"""

from __future__ import annotations

from typing import Annotated

from .. import trace
from ..datasets import Question
from ..text import tagged_line
from .answering import answer_question
from .base import Answer, MemorySystem, Message, SystemConfig
from .tunable_routes import ANSWER_ROUTES, RETRIEVAL, UPDATE, on
from .tunables import Grid

UNIT = "long_context_memory"


class LongContextConfig(SystemConfig):
    #: The context window the memory must fit, in tokens (estimated as 4/3 per word).
    max_tokens: Annotated[int, Grid(4_000, 8_000, 12_000, 16_000, 24_000, 32_000, 48_000, 64_000)] = 16_000


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about 4 tokens per 3 English words), stable across models."""
    return (len(text.split()) * 4 + 2) // 3


class LongContext(MemorySystem):
    name = "long_context"
    Config = LongContextConfig
    config: LongContextConfig
    routes = (
        *ANSWER_ROUTES,
        on("trim_memory memory_update", UPDATE, "max_tokens", +1, "trimming dropped it: a larger budget"),
        on("retrieve", RETRIEVAL, "max_tokens", +1, "the unit handed over no longer held it"),
    )
    memtracebench_split = "long_context"

    def reset(self) -> None:
        self.entries: list[str] = []
        self.tokens = 0

    def ingest(self, message: Message) -> None:
        run = self.recorder
        entry = tagged_line(message)
        unit = run.memory(UNIT)
        with trace.op("memory_update", category="update") as op:
            op.use(message.var)
            entries = [*self.entries, entry]
            if unit.exists:
                unit.update(entries, by=op)
            else:
                unit.create(entries, by=op)
            self._follow(unit.applied, entries)
        if self.tokens > self.config.max_tokens:
            with trace.op("trim_memory", category="update", max_tokens=self.config.max_tokens) as op:
                entries, tokens = list(self.entries), self.tokens
                kept = set(run.kept(UNIT))  # a verifying replay may keep restored evidence lines
                while tokens > self.config.max_tokens and len(entries) > 1:
                    oldest = next((i for i, e in enumerate(entries) if e not in kept), None)
                    if oldest is None:
                        break
                    tokens -= estimate_tokens(entries.pop(oldest))
                op.set(dropped=len(self.entries) - len(entries))
                unit.update(entries, by=op)
                self._follow(unit.applied, entries)

    def _follow(self, applied: tuple[str, object], entries: list[str]) -> None:
        """Keep the in-process memory equal to what was recorded (a replay patch may differ)."""
        action, value = applied
        if action == "cancelled":
            return
        self.entries = list(value) if isinstance(value, list) else ([] if action == "delete" else entries)
        self.tokens = sum(estimate_tokens(e) for e in self.entries)

    def answer(self, question: Question) -> Answer:
        unit = self.recorder.memory(UNIT)
        with trace.op("retrieve", category="retrieval") as op:
            query = op.input("query", question.question, category="query")
            if unit.exists:
                op.use(unit.latest_id)
            entries, context = op.produce("retrieved", list(self.entries), category="retrieved")
        return answer_question(
            question,
            entries,
            config=self.config,
            llm=self.llm,
            context_var=context,
            query_var=query,
        )
