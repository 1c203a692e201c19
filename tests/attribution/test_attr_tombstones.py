"""A memory unit is deleted only by its own tombstone version: an operation that deletes one unit
deletes nothing else it read or rewrote (issue 19, cause 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.attribution import FlowMethod

FACT = {"memory": "Clara adopted a dog named Pepper"}


def _run(workspace: Path, other_unit: str) -> str:
    """One step deletes mem-2 and, besides, only reads mem-1 (`reads`) or rewrites it (`rewrites`).

    The step also writes MemBase's shared DELETED node, as a pipeline recording MemBase's conventions
    with memtrace does: that node names no unit, so it deletes none.
    """
    with mt.run(workspace, name=other_unit, system="toy") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output("D1:1", "Clara: I adopted a dog named Pepper!", category="message")
            op.output("D1:2", "Clara: I sold my old bike.", category="message")
        with mt.op("extract", category="extraction") as op:
            op.use(evidence)
            run.memory("mem-1").create(FACT, by=op)
            run.memory("mem-2").create({"memory": "Clara has an old bike"}, by=op)
        with mt.op("forget", category="deletion") as op:
            if other_unit == "reads":
                op.use(run.memory("mem-1").latest_id)
            else:
                run.memory("mem-1").update({"memory": "Clara likes long walks"}, by=op)
            run.memory("mem-2").delete(by=op)
            op.output("delete_marker", "DELETED")
        case = run.case("What is the name of Clara's dog?", gold="Pepper", evidence=["D1:1"])
        with mt.op("question", category="query"):
            with mt.op("search", category="retrieval") as op:
                query = op.input("query", "What is the name of Clara's dog?", category="query")
                context = op.output("retrieved", ["Diego loves dogs"], category="retrieved")
            with mt.op("answer", category="response") as op:
                op.use(query)
                op.use(context)
                prediction = op.output("prediction", "Rex", category="prediction")
        case.predict("Rex", var=prediction)
        case.judge(False, score=0.0)
        return run.id


@pytest.mark.parametrize(
    ("other_unit", "error_type", "blamed"),
    [
        # mem-1 was only read: it is live at question time, and the search missed it.
        ("reads", "RetrievalError", "search"),
        # mem-1 was rewritten without the answer: an update lost it, though the step also deleted.
        ("rewrites", "UpdateError", "forget"),
    ],
)
def test_a_step_deleting_one_unit_deletes_no_other(
    tmp_path: Path, other_unit: str, error_type: str, blamed: str, open_ws: OpenWorkspace
) -> None:
    run_id = _run(tmp_path, other_unit)
    ws = open_ws(tmp_path)
    (case,) = ws.cases(run_id)
    for graph in (ws.graph(run_id), ws.view(run_id)):
        result = FlowMethod().attribute(graph, case)
        assert (result.error_type, graph.op(result.op_id).name) == (error_type, blamed), result.explanation
        assert "mem-2" not in result.explanation  # the unit that was deleted holds nothing needed
