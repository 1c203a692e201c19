"""Workspaces for the report tests: the four systems over the bundled sample, recorded once per session.

`attributed_workspace()` holds flow attributions; `verified_workspace()` is the same verified by replay,
so it also holds replay runs and verification outcomes. Tests copy them before changing them.
`record_marks_run()` records a small hand-made run whose failures the report and the UI must mark.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

import memtrace as mt
from memtrace import Workspace
from memtrace.attribution.engine import attribute
from memtrace.attribution.verify.counterfactual import verify_all
from memtrace.datasets import load_dataset
from memtrace.systems import run_conversation
from memtrace.systems.registry import BUILTIN_SYSTEMS, system_class

_CACHE: dict[str, Path] = {}


def record_sample(workspace: Path, systems: list[str] | None = None) -> list[str]:
    """Run systems (default: the offline built-ins) over sample conversation 0 into `workspace`."""
    (conversation,) = load_dataset("sample")
    offline = [name for name in BUILTIN_SYSTEMS if system_class(name).runs_offline]
    return [
        run_conversation(system_class(name)(), conversation, workspace, dataset="sample").run_id
        for name in systems or offline
    ]


def _build() -> None:
    """Record the sample once; keep an attributed copy, then verify the original."""
    folder = Path(tempfile.mkdtemp(prefix="memtrace-report-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    workspace = folder / "verified"
    record_sample(workspace)
    with Workspace(workspace) as ws:
        attribute(ws, "flow")
    _CACHE["attributed"] = copy_workspace(workspace, folder / "attributed")
    verify_all(workspace, method="flow")
    _CACHE["verified"] = workspace


def attributed_workspace() -> Path:
    """The four systems over the sample with flow attributions, not verified (do not modify)."""
    if "attributed" not in _CACHE:
        _build()
    return _CACHE["attributed"]


def verified_workspace() -> Path:
    """The same, verified by replay: it holds replay runs and verification outcomes (do not modify)."""
    if "verified" not in _CACHE:
        _build()
    return _CACHE["verified"]


def copy_workspace(source: Path, target: Path) -> Path:
    """A private copy of a workspace folder (its database and snapshots)."""
    shutil.copytree(source, target)
    return target


PEPPER = "Diego: We adopted a dog named Pepper last spring, she loves the park."
DOG_MEMORY = "Diego adopted a dog named Pepper last spring"


def _asked(run: Any, question: str, gold: str, evidence: str, retrieved: list[str], answer: str) -> None:
    """One question: a retrieval handing `retrieved` to an answer step that answers `answer`, judged wrong."""
    case = run.case(question, gold=gold, evidence=[evidence])
    with mt.op("search", category="retrieval") as op:
        found = op.output("retrieved", retrieved, category="retrieved")
    with mt.op("answer", category="response") as op:
        op.use(found)
        prediction = op.output("prediction", answer, category="prediction")
    case.predict(answer, var=prediction)
    case.judge(False)


def record_marks_run(workspace: Path) -> str:
    """A hand-recorded run with one failure of each kind the report and the UI mark: q1 a ResponseError
    whose context's second item carries the dog, q2 a RetrievalError whose context mentions Pepper but
    not the dog, q3 a suspected annotation error (no turn mentions the gold 'UNO'). Attributed by flow."""
    with mt.run(workspace, name="marks", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            pepper = op.output("D1:3", PEPPER, category="message")
            uno = op.output("D8:3", "Kofi: We played that card game with colours again.", category="message")
        for message, text, unit in ((pepper, DOG_MEMORY, "mem-1"), (uno, "Kofi played a card game", "mem-2")):
            with mt.op("extract_facts", category="extraction") as op:
                op.use(message)
                run.memory(unit).create({"memory": text}, by=op)
        context = ["Diego likes the park", DOG_MEMORY, "Kofi played a card game"]
        _asked(run, "What pet does Diego have?", "a dog named Pepper", "D1:3", context, "a cat")
        mentions = ["Pepper is a name Diego likes", "Kofi played a card game"]
        _asked(
            run,
            "What pet does Diego have, and its name?",
            "a dog named Pepper",
            "D1:3",
            mentions,
            "a hamster",
        )
        _asked(run, "Which card game did Kofi play?", "UNO", "D8:3", ["Kofi played a card game"], "poker")
    with Workspace(workspace) as ws:
        attribute(ws, "flow")
    return run.id
