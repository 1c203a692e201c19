"""Run a memory system over a conversation as one recorded run: messages in, questions answered, judged.

Messages enter the graph as variables named by their dialogue id (`D3:1@1`, category `message`),
which is what gold evidence ids and MemTraceBench annotations point at. Each question becomes a
case whose prediction variable, verdict and token usage are recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import memtrace as mt

from ..datasets import Conversation
from ..eval import Judge, make_judge
from ..llm import usage_scope
from .base import MemorySystem, Message


@dataclass(slots=True)
class CaseResult:
    """One answered question: what was asked, what came back, and the verdict."""

    id: str
    question: str
    category: str
    gold: list[str]
    prediction: str
    correct: bool
    score: float
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(slots=True)
class RunResult:
    """What one system did on one conversation."""

    run_id: str
    system: str
    conversation: str
    cases: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def accuracy(self) -> float:
        return sum(c.correct for c in self.cases) / len(self.cases) if self.cases else 0.0


Progress = Callable[[str, int, int], None]


def run_conversation(
    system: MemorySystem,
    conversation: Conversation,
    workspace: str | Path,
    *,
    judge: Judge | None = None,
    dataset: str | None = None,
    progress: Progress | None = None,
    name: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> RunResult:
    """Record `system` ingesting `conversation` and answering its questions into `workspace`."""
    import time

    judge = judge if judge is not None else make_judge(client=system.llm)
    started = time.perf_counter()
    turns = sum(len(s.turns) for s in conversation.sessions)
    steps = turns + len(conversation.questions)
    with mt.run(
        workspace,
        name=name or f"{system.name}/{conversation.id}",
        system=system.name,
        dataset=dataset,
        conversation=conversation.id,
        config=system.tunables(),
        metadata={"llm": getattr(system.llm, "model", None) or "offline", **(metadata or {})},
    ) as run:
        result = RunResult(run.id, system.name, conversation.id)
        system.start(run, conversation)
        done = 0
        for session in conversation.sessions:
            with mt.op("load_session", category="construction", session=session.index) as op:
                op.output(f"session_{session.index}.date", session.date, category="session_date")
                messages = [
                    Message(
                        turn,
                        op.output(turn.dia_id, f"{turn.speaker}: {turn.rendered()}", category="message"),
                        session,
                    )
                    for turn in session.turns
                ]
            for message in messages:
                system.ingest(message)
                done += 1
                if progress:
                    progress("construction", done, steps)
            system.end_session(session)
        system.finish()
        for question in conversation.questions:
            case = run.case(
                question.question,
                gold=question.answers,
                evidence=question.evidence,
                category=question.category,
                id=question.id,
                metadata={"category_raw": question.category_raw},
            )
            with usage_scope(f"case {question.id}") as usage, mt.op("question", category="query") as op:
                op.output("question", question.question, category="query")
                answer = system.answer(question)
                verdict = judge.judge(
                    question.question,
                    question.answers,
                    answer.text,
                    category=question.category_raw
                    if question.category_raw is not None
                    else question.category,
                    prediction_var=answer.var,
                )
            case.predict(answer.text, var=answer.var)
            case.judge(verdict.correct, verdict.score, method=verdict.method)
            result.cases.append(
                CaseResult(
                    question.id,
                    question.question,
                    question.category,
                    question.answers,
                    answer.text,
                    verdict.correct,
                    verdict.score,
                    usage.usage.input_tokens,
                    usage.usage.output_tokens,
                )
            )
            done += 1
            if progress:
                progress("questions", done, steps)
    result.seconds = time.perf_counter() - started
    return result
