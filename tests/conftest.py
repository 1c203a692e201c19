"""Shared fixtures: temporary workspaces and a small recorded pipeline with a known shape."""

from __future__ import annotations

from pathlib import Path

import pytest

import memtrace as mt

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LOCOMO_DEV = SHARED_DATA / "locomo-dev.json"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def small_run(workspace: Path) -> str:
    """The id of a recorded small pipeline (see `record_small_pipeline`)."""
    return record_small_pipeline(workspace)


def record_small_pipeline(workspace: Path, name: str = "small") -> str:
    """A run with a message, an extraction, a unit created, updated and deleted, and a question."""
    with mt.run(workspace, name=name, system="toy") as run:
        with mt.op("ingest", category="construction") as op:
            message = op.output("message", "Caroline: I moved to Boston last May.", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(message)
            op.output("facts", ["Caroline moved to Boston in May"])
            run.memory("mem-1").create({"memory": "Caroline lives in Boston"}, by=op)
            run.memory("mem-2").create({"memory": "Caroline likes hiking"}, by=op)
        with mt.op("update_memory", category="update") as op:
            run.memory("mem-1").update({"memory": "Caroline lives in Paris"}, by=op)
        with mt.op("delete_memory", category="deletion") as op:
            run.memory("mem-2").delete(by=op)
        with mt.op("search", category="retrieval") as op:
            op.input("query", "Where does Caroline live?", category="query")
            op.output("retrieved", ["Caroline lives in Paris"], category="retrieved")
        with mt.op("answer", category="response") as op:
            op.input("retrieved", ["Caroline lives in Paris"], category="retrieved")
            prediction = op.output("prediction", "Paris", category="prediction")
        case = run.case("Where does Caroline live?", gold="Boston", evidence=["D1:1"], category="single-hop")
        case.predict("Paris", var=prediction)
        case.judge(False, score=0.0)
        return run.id
