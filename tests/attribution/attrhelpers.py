"""Recordings several attribution test modules share."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.engine import attribute
from memtrace.attribution.model import Attribution, save_attribution
from memtrace.datasets import sample_conversation
from memtrace.datasets.model import Conversation, Question, Session, Turn
from memtrace.graph import Store
from memtrace.systems import run_conversation
from memtrace.systems.registry import system_class
from memtrace.trace.memory import MemoryUnit
from memtrace.trace.recorder import Recorder


def attributed_mem0_run(path: Path) -> str:
    """Mem0 with top-k 2 over sample conversation 0, attributed by flow: its small retrievals make
    retrieval, deletion and response claims. Returns the run id."""
    mem0 = system_class("mem0")
    run = run_conversation(mem0(mem0.Config(top_k=2)), sample_conversation(0), path)
    with mt.open(path) as ws:
        attribute(ws, "flow")
    return run.run_id


def answer_wrongly(
    run: Recorder, context: str, question: str, gold: str, evidence: list[str], said: str
) -> None:
    """The case asked of `run`: an answer step reading `context` says `said`, and is judged wrong."""
    case = run.case(question, gold=gold, evidence=evidence)
    with mt.op("answer", category="response") as op:
        op.use(context)
        prediction = op.output("prediction", said, category="prediction")
    case.predict(said, var=prediction)
    case.judge(False)


def answer_window_wrongly(
    run: Recorder, kept: list[str], question: str, *, gold: str, evidence: list[str], said: str
) -> None:
    """The case asked of a window-like `run`: an answer step reading the lines `kept` (recorded as its
    context input) says `said`, and is judged wrong."""
    case = run.case(question, gold=gold, evidence=evidence)
    with mt.op("answer", category="response") as op:
        op.input("context", kept, category="context")
        prediction = op.output("prediction", said, category="prediction")
    case.predict(said, var=prediction)
    case.judge(False)


def mem0_case(
    workspace: Path,
    turns: dict[str, str],
    facts: dict[str, tuple[str, str]],
    retrieved: list[str],
    case: tuple[str, str, list[str], str],
) -> str:
    """Mem0-like: the turns, one extraction per turn writing its facts ({unit: (memory, turn)}), a search
    returning `retrieved`, and the case (question, gold, evidence, prediction) answered wrong."""
    with mt.run(workspace, name="mem0-case", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            messages = {name: op.output(name, text, category="message") for name, text in turns.items()}
        for name in dict.fromkeys(turn for _, turn in facts.values()):
            with mt.op("extract_facts", category="extraction") as op:
                op.use(messages[name])
                for unit, (memory, turn) in facts.items():
                    if turn == name:
                        run.memory(unit).create({"memory": memory}, by=op)
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", retrieved, category="retrieved")
        answer_wrongly(run, found, *case)
        return run.id


def window_of(run: Recorder, lines: list[tuple[str, str]]) -> tuple[MemoryUnit, list[str]]:
    """Long-context-like: each turn is recorded, then appended to one `window` unit as "[id] text".
    Returns the unit and its lines, for the test's own trims."""
    window = run.memory("window")
    kept: list[str] = []
    for message_id, text in lines:
        with mt.op("load", category="construction") as op:
            message = op.output(message_id, text, category="message")
        with mt.op("memory_update", category="update") as op:
            op.use(message)
            kept = [*kept, f"[{message_id}] {text}"]
            (window.update if window.exists else window.create)(kept, by=op)
    return window, kept


def trim_oldest(window: MemoryUnit, kept: list[str], times: int) -> tuple[list[str], list[str]]:
    """`times` trims of a `window_of` window, each dropping its oldest line: the lines left and the
    trims' operation ids, oldest first."""
    trims = []
    for _ in range(times):
        with mt.op("trim_memory", category="update") as op:
            kept = kept[1:]
            window.update(kept, by=op)
            trims.append(op.id)
    return kept, trims


def one_session(
    name: str,
    speakers: list[str],
    turns: list[tuple[str, str, str]],
    when: str,
    date: str,
    questions: list[Question],
) -> Conversation:
    """A one-session conversation of (id, speaker, text) turns said at `when` ("1:56 pm on 8 May,
    2023"), each dated `date` ("8 May 2023"), asked `questions`."""
    session = Session(1, when, [Turn(i, speaker, text, 1, date) for i, speaker, text in turns])
    return Conversation(name, speakers, [session], questions, "test")


def store_as_if_another_verifier_made_it(store: Store, claim: Attribution) -> None:
    """Store `claim` again with its verdict unstamped, as an older memtrace stored verdicts."""
    older = {k: v for k, v in (claim.verification or {}).items() if k != "verifier"}
    save_attribution(store, replace(claim, verification=older), claim.settings_key or "")


def window_claim(
    workspace: Path,
    lines: list[tuple[str, str]],
    trims: int,
    question: str,
    *,
    gold: str,
    evidence: list[str],
    said: str,
) -> tuple[Attribution, list[str]]:
    """Long-context-like: `lines` appended to a window, its oldest `trims` lines trimmed one per
    operation, then `question` answered wrongly from what is left. Flow's claim, and the trims' ids."""
    with mt.run(workspace, name="window", system="long_context") as run:
        window, kept = window_of(run, lines)
        kept, trim_ids = trim_oldest(window, kept, trims)
        answer_window_wrongly(run, kept, question, gold=gold, evidence=evidence, said=said)
    with mt.open(workspace) as ws:
        (case,) = ws.cases(run.id)
        return FlowMethod().attribute(ws.view(run.id), case), trim_ids


def flow_claim(workspace: Path, run_id: str) -> tuple[str, str | None, str]:
    """Flow's (error type, operation, explanation) for the one case of a run."""
    with mt.open(workspace) as ws:
        (case,) = ws.cases(run_id)
        result = FlowMethod().attribute(ws.graph(run_id), case)
    return result.error_type, result.op_id, result.explanation


PEPPER = "Diego: We adopted a dog named Pepper last spring, she loves the park."
WHISKERS = "Diego: And last month we adopted a cat named Whiskers too."


def pets_run(workspace: Path, retrieved: list[str]) -> str:
    """Mem0-like: one memory per fact, both live at question time; the search returns `retrieved`."""
    with mt.run(workspace, name="pets", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            pepper = op.output("D1:3", PEPPER, category="message")
            whiskers = op.output("D2:5", WHISKERS, category="message")
        memories = {
            "mem-1": "Diego adopted a dog named Pepper last spring",
            "mem-2": "Diego adopted a cat named Whiskers last month",
        }
        for (unit, text), message in zip(memories.items(), (pepper, whiskers), strict=True):
            with mt.op("extract_facts", category="extraction") as op:
                op.use(message)
                run.memory(unit).create({"memory": text}, by=op)
        with mt.op("search", category="retrieval") as op:
            op.input("query", "What pets does Diego have?", category="query")
            found = op.output("retrieved", [memories[unit] for unit in retrieved], category="retrieved")
        case = run.case(
            "What pets does Diego have?",
            gold="a dog named Pepper and a cat named Whiskers",
            evidence=["D1:3", "D2:5"],
        )
        with mt.op("answer", category="response") as op:
            op.use(found)
            prediction = op.output("prediction", "a cat", category="prediction")
        case.predict("a cat", var=prediction)
        case.judge(False)
        return run.id
