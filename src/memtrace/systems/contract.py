"""Check that a memory system keeps the contract replay, attribution and the optimiser rely on.

The contract is written in docs/systems.md.

`check_declaration(cls)` reads what the class declares (name, config, grids, routes); `check_system(cls,
workspace)` runs it over the sample conversation and replays that run: unpatched it must reproduce
itself, resumed from a mid-conversation snapshot too (its state pickles and restores), and a patched
question-time context must be what its answer step reads (it called `op.produce()`). Every built-in
system passes it, and so must a user's own: call it from your tests.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..datasets import Conversation, sample_conversation
from ..errors import MemtraceError
from ..graph import Workspace
from .base import MemorySystem, SystemConfig
from .registry import find_system
from .replay import replay
from .runner import run_conversation
from .snapshots import TRANSIENT
from .tunables import grids

RESERVED_NAMES = frozenset({"all"})


class SystemContractError(MemtraceError):
    """A memory system breaks the contract; the message names the system and every broken rule."""


@dataclass(slots=True)
class ContractReport:
    """What `check_system` exercised: the recorded run and the replays that matched it."""

    system: str
    run_id: str
    cases: int
    replays: list[str]


def check_declaration(cls: type[MemorySystem]) -> list[str]:
    """Problems with what a system class declares (empty when it is well formed)."""
    if not (isinstance(cls, type) and issubclass(cls, MemorySystem)):
        return [f"{cls!r} is not a MemorySystem subclass"]
    name = getattr(cls, "name", None)
    problems: list[str] = []
    if not isinstance(name, str) or not name or name in RESERVED_NAMES or set(name) & set(", /"):
        problems.append(f"name {name!r} must be a non-empty word (no comma, space or slash; not 'all')")
    if not (isinstance(cls.Config, type) and issubclass(cls.Config, SystemConfig)):
        return [*problems, "Config must subclass SystemConfig"]
    try:
        config = cls.Config()
    except ValueError as err:
        return [*problems, f"Config() must build from its defaults ({err})"]
    for field, grid in grids(config).items():
        if getattr(config, field) not in grid.values:
            value = getattr(config, field)
            problems.append(f"the default {field}={value!r} is not on its Grid {grid.values}")
    fields = type(config).model_fields
    declared = grids(config)
    for route in cls.routes:
        if route.tunable not in fields:
            problems.append(f"route to {route.tunable!r}: no such config field")
        elif not route.tunable.endswith("_prompt") and route.tunable not in declared:
            problems.append(f"route to {route.tunable!r}: a setting needs a Grid (or a *_prompt name)")
    if not isinstance(cls.runs_offline, bool):
        problems.append("runs_offline must be True or False")
    if cls.memtracebench_split is not None and not (
        isinstance(cls.memtracebench_split, str) and cls.memtracebench_split
    ):
        problems.append("memtracebench_split must be None or a split name")
    return problems


def check_system(
    cls: type[MemorySystem],
    workspace: str | Path,
    *,
    conversation: Conversation | None = None,
    llm: Any = None,
) -> ContractReport:
    """Run and replay `cls` in `workspace`; raise SystemContractError naming every broken rule."""
    name = getattr(cls, "name", cls)
    problems = check_declaration(cls)
    if find_system(getattr(cls, "name", None)) is not cls:
        problems.append("it is not registered under its name: replay finds systems with register_system()")
    if llm is None and not cls.runs_offline:
        problems.append("it has no offline engine: pass llm= to check it")
    _fail(name, problems)
    conversation = conversation if conversation is not None else sample_conversation(0)
    system = cls(llm=llm)
    try:
        result = run_conversation(system, conversation, workspace)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        unpicklable = _unpicklable(system)
        if not unpicklable:
            raise
        _fail(name, [f"its state must pickle for snapshots: {', '.join(unpicklable)} do not ({err})"])
    run_id = result.run_id
    with Workspace(workspace) as ws:
        graph = ws.view(run_id)
        state = graph.memory_values_at()
        cases = [c for c in ws.cases(run_id) if c.prediction_var]
        contexts = {c.id: _context_of(graph, c.prediction_var) for c in cases}
        construction_op = _mid_construction_op(graph)
    expected = {c.id: c.prediction for c in result.cases}
    problems += [f"case {c}: {why}" for c, why in contexts.items() if isinstance(why, str)]
    if not cases or len(cases) != len(conversation.questions):
        missing = len(conversation.questions) - len(cases)
        problems.append(f"{missing} of {len(conversation.questions)} question(s) got no recorded prediction")
    _fail(name, problems)
    if not getattr(cls, "snapshots", True):  # a system that declares it cannot be snapshotted
        return ContractReport(cls.name, run_id, len(cases), [])
    replays = []
    again = replay(workspace, run_id)
    replays.append(again.run_id)
    if {c.id: c.prediction for c in again.cases} != expected or _state(workspace, again.run_id) != state:
        problems.append("an unpatched replay does not reproduce the run (is it deterministic offline?)")
    if construction_op is not None:
        resumed = replay(workspace, run_id, {construction_op: {}})
        replays.append(resumed.run_id)
        if resumed.resumed_after_seq == 0:
            problems.append("a replay mid-construction did not resume from a session snapshot")
        if {c.id: c.prediction for c in resumed.cases} != expected:
            problems.append("a replay resumed from a session snapshot answers differently: state lost")
    case_id, (op_id, var_name) = next((c, ctx) for c, ctx in contexts.items() if not isinstance(ctx, str))
    patched = replay(workspace, run_id, {op_id: {"outputs": {var_name: []}}}, cases=[case_id])
    replays.append(patched.run_id)
    if patched.case(case_id).context:
        problems.append(
            f"the answer read its own context, not the patched `{var_name}`: record it with op.produce()"
        )
    _fail(name, problems)
    return ContractReport(cls.name, run_id, len(cases), replays)


def _context_of(graph: Any, prediction_var: str) -> tuple[str, str] | str:
    """(the operation that produced the context the answer read, that output's name), or what is wrong."""
    answer = graph.producers(prediction_var)[-1]
    retrieved = [v for v in graph.inputs(answer.id) if v.category == "retrieved"]
    if not retrieved:
        return f"its answer operation {answer.name!r} reads no variable of category 'retrieved'"
    producers = graph.producers(retrieved[-1].id)
    if not producers:
        return f"its context {retrieved[-1].name!r} has no producing operation"
    return producers[-1].id, retrieved[-1].name


def _mid_construction_op(graph: Any) -> str | None:
    """An operation of the second session on (a replay patched there resumes from a snapshot)."""
    sessions = [op for op in graph.ops_in_order() if op.name == "load_session"]
    return sessions[1].id if len(sessions) > 1 else None


def _state(workspace: str | Path, run_id: str) -> dict[str, Any]:
    with Workspace(workspace) as ws:
        return ws.view(run_id).memory_values_at()


def _unpicklable(system: MemorySystem) -> list[str]:
    names = []
    for key, value in vars(system).items():
        if key in TRANSIENT:
            continue
        try:
            pickle.dumps(value)
        except Exception:  # any failure to pickle is what we are looking for
            names.append(f"self.{key}")
    return names


def _fail(name: object, problems: list[str]) -> None:
    if problems:
        raise SystemContractError(f"memory system {name}: " + "; ".join(problems))
