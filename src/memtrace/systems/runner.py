"""Run a memory system over a conversation as one recorded run: messages in, questions answered, judged.

Messages enter the graph as variables named by their dialogue id (`D3:1@1`, category `message`),
which is what gold evidence ids and MemTraceBench annotations point at. Each question becomes a
case whose prediction variable, verdict and token usage are recorded. After every session and
after construction the runner saves a snapshot of the system's state (snapshots.py), so a replay
can restart from there instead of from the first message.

A weak model's unusable reply (invalid or cut-off JSON, an unreadable body) never aborts a run: after
the client's own retries the step is recorded as a failed operation, the run goes on with the next
message or question, and the failure is counted in `RunResult.failures`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import trace
from ..datasets import Conversation, Question
from ..errors import RECOVERABLE_ERRORS
from ..eval import Judge, make_judge
from ..llm import usage_scope
from ..llm.ahead import served_from
from ..trace import Recorder
from .ahead import answers_ahead
from .base import MemorySystem, Message
from .snapshots import MarkerWriter, SnapshotWriter


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
    #: The context the answer step read (verification checks whether a repair delivered the evidence).
    context: list[str] = field(default_factory=list)


@dataclass(slots=True)
class RunResult:
    """What one system did on one conversation."""

    run_id: str
    system: str
    conversation: str
    cases: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)  # model calls given up on, one line each
    #: Model replies fetched ahead for the question stage, and how many of them no call asked for.
    fetched_ahead: int = 0
    unused_ahead: int = 0

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
    snapshots: bool = True,
    run_id: str | None = None,
    ahead: int = 1,
) -> RunResult:
    """Record `system` ingesting `conversation` and answering its questions into `workspace` (as run
    `run_id` when given: a parallel `memtrace run` fixes ids so they do not depend on the executor).
    With `ahead` > 1 and a model, the questions' model calls are fetched `ahead` at a time before the
    question stage records them in order (systems/ahead.py): the same graph, less waiting."""
    judge = judge if judge is not None else make_judge(client=system.llm)
    started = time.perf_counter()
    with trace.run(
        workspace,
        name=name or f"{system.name}/{conversation.id}",
        system=system.name,
        dataset=dataset,
        conversation=conversation.id,
        config=system.tunables(),
        metadata={"llm": getattr(system.llm, "model", None) or "offline", **(metadata or {})},
        run_id=run_id,
    ) as run:
        result = RunResult(run.id, system.name, conversation.id)
        keep = snapshots and system.snapshots and run.id
        writer = SnapshotWriter(workspace, run, conversation) if keep else None
        system.start(run, conversation)
        steps = sum(len(s.turns) for s in conversation.sessions) + len(conversation.questions)
        construct(
            system, conversation, run, writer=writer, progress=progress, steps=steps, failures=result.failures
        )
        replies = answers_ahead(system, conversation.questions, judge, ahead)
        with served_from(replies):
            result.cases = answer_questions(
                system,
                conversation.questions,
                run,
                judge,
                progress=progress,
                steps=steps,
                failures=result.failures,
            )
        if replies is not None:
            result.fetched_ahead, result.unused_ahead = replies.fetched, replies.unused
    result.seconds = time.perf_counter() - started
    return result


def construct(
    system: MemorySystem,
    conversation: Conversation,
    run: Recorder,
    *,
    from_session: int = 0,
    writer: SnapshotWriter | MarkerWriter | None = None,
    progress: Progress | None = None,
    steps: int = 0,
    failures: list[str] | None = None,
) -> None:
    """The construction stage, from session `from_session` on (a replay resumes mid-conversation).

    With a `failures` list, a step whose model reply was unusable is noted there and skipped.
    """
    done = sum(len(s.turns) for s in conversation.sessions[:from_session])
    for position, session in enumerate(conversation.sessions[from_session:], start=from_session):
        with trace.op("load_session", category="construction", session=session.index) as op:
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
            _surviving(failures, f"ingesting {message.turn.dia_id}", system.ingest, message)
            done += 1
            if progress:
                progress("construction", done, steps)
        _surviving(failures, f"ending session {session.index}", system.end_session, session)
        if writer is not None and position + 1 < len(conversation.sessions):
            writer.save(system, f"session-{position + 1}", position + 1)
    _surviving(failures, "finishing construction", system.finish)
    system.ready()
    if writer is not None:
        writer.save(system, "construction", len(conversation.sessions))


def answer_questions(
    system: MemorySystem,
    questions: Iterable[Question],
    run: Recorder,
    judge: Judge,
    *,
    progress: Progress | None = None,
    steps: int = 0,
    failures: list[str] | None = None,
) -> list[CaseResult]:
    """The question stage: one recorded case per question, answered and judged.

    With a `failures` list, a question whose model reply was unusable is recorded as a wrong case
    (prediction empty, `llm_failure` in its metadata) and the next question follows.
    """
    results = []
    questions = list(questions)
    done = steps - len(questions)
    for question in questions:
        case = run.case(
            question.question,
            gold=question.answers,
            evidence=question.evidence,
            category=question.category,
            id=question.id,
            metadata={"category_raw": question.category_raw},
        )
        context: list[str] = []  # what the answer step read; empty when answering failed
        try:
            with usage_scope(f"case {question.id}") as usage, trace.op("question", category="query") as op:
                op.output("question", question.question, category="query")
                answer = system.answer(question)
                context = list(answer.context)
                verdict = judge.judge(
                    question.question,
                    question.answers,
                    answer.text,
                    category=question.category_raw
                    if question.category_raw is not None
                    else question.category,
                    prediction_var=answer.var,
                )
            text, var, correct, score = answer.text, answer.var, verdict.correct, verdict.score
            case.predict(text, var=var)
            case.judge(correct, score, method=verdict.method)
        except RECOVERABLE_ERRORS as exc:
            if failures is None:
                raise
            failures.append(f"question {question.id}: {exc}")
            text, correct, score = "", False, 0.0
            case.predict(text)
            case.judge(correct, score, method="failed", llm_failure=str(exc))
        results.append(
            CaseResult(
                question.id,
                question.question,
                question.category,
                question.answers,
                text,
                correct,
                score,
                usage.usage.input_tokens,
                usage.usage.output_tokens,
                context=context,
            )
        )
        done += 1
        if progress:
            progress("questions", done, steps)
    return results


def _surviving(failures: list[str] | None, step: str, action: Callable[..., Any], *args: Any) -> None:
    """Run one construction step; an unusable model reply is noted in `failures` instead of raised."""
    try:
        action(*args)
    except RECOVERABLE_ERRORS as exc:
        if failures is None:
            raise
        failures.append(f"{step}: {exc}")
