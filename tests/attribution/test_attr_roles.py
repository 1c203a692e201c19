"""Path steps carry roles: any method's claim is repaired and verified like flow's; old paths still load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from attrhelpers import attributed_mem0_run

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.attribution.methods.agent import _answer
from memtrace.attribution.methods.agent_tools import Finish
from memtrace.attribution.methods.all_at_once import _result
from memtrace.attribution.model import (
    Attribution,
    Cost,
    PathRole,
    PathStep,
    load_attributions,
    save_attribution,
)
from memtrace.attribution.verify.counterfactual import verify

REPAIRABLE = ("RetrievalError", "DeletionError", "UpdateError")


@pytest.fixture(scope="module")
def mem0_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A Mem0 run with a small top-k over the sample, attributed by flow (retrieval and deletion claims)."""
    path = tmp_path_factory.mktemp("roles")
    return path, attributed_mem0_run(path)


def test_agent_and_all_at_once_claims_are_verified_like_flows(
    mem0_run: tuple[Path, str], tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    source, run_id = mem0_run
    shutil.copytree(source, tmp_path / "ws")
    ws = open_ws(tmp_path / "ws")
    graph = ws.view(run_id)
    claims = [a for a in load_attributions(ws.store, run_id, "flow") if a.error_type in REPAIRABLE]
    assert {a.error_type for a in claims} >= {"RetrievalError", "DeletionError"}
    for flow in claims:
        case = ws.case(run_id, flow.case_id)
        said = {"error_type": flow.error_type, "op_id": flow.op_id, "reason": "the model's reason"}
        at_once = _result(graph, case, said, "all operations shown", Cost())
        agent = _answer(
            graph, case, Finish(flow.error_type, flow.op_id, "the agent's reason", 0.8), [], Cost(), None
        )
        assert at_once.method == "all-at-once" and agent.method == "agent"
        for claim in (at_once, agent):
            # the roles a repair reads are on the path (the model's own step keeps its note, no role)
            assert claim.steps(PathRole.EVIDENCE) == flow.steps(PathRole.EVIDENCE) != []
            needed = (
                PathRole.LIVE_AT_QUESTION if flow.error_type == "RetrievalError" else PathRole.LAST_CARRIER
            )
            assert [s.id for s in claim.steps(needed)] == [s.id for s in flow.steps(needed)] != []
        expected = verify(ws, flow, oracle=False)
        assert expected.replay_run is not None
        for claim in (at_once, agent):
            outcome = verify(ws, claim, oracle=False)
            assert (outcome.verdict, outcome.why, outcome.flow_confirmed, outcome.answer_confirmed) == (
                expected.verdict,
                expected.why,
                expected.flow_confirmed,
                expected.answer_confirmed,
            ), (claim.method, flow.error_type, flow.case_id)


def test_a_claim_on_another_update_gets_that_updates_last_carrier(
    mem0_run: tuple[Path, str], open_ws: OpenWorkspace
) -> None:
    """A claim blaming a different change than flow's keeps the version that change replaced, or none."""
    path, run_id = mem0_run
    ws = open_ws(path)
    graph = ws.view(run_id)
    flow = next(a for a in load_attributions(ws.store, run_id, "flow") if a.error_type == "DeletionError")
    case = ws.case(run_id, flow.case_id)
    other = next(op for op in graph.ops_by_category("extraction"))
    claim = _result(graph, case, {"error_type": "UpdateError", "op_id": other.id, "reason": "?"}, "", Cost())
    # an extraction replaces no memory version: no last carrier, and the graph shows it changed no unit
    # holding the answer, so verification refutes the claim without a replay
    assert claim.steps(PathRole.LAST_CARRIER) == []
    outcome = verify(ws, claim, oracle=False)
    assert (outcome.verdict, outcome.why) == ("refuted", "changed-no-holder")
    assert outcome.replay_run is None


def test_paths_stored_before_roles_get_them_from_flows_notes(workspace: Path, open_ws: OpenWorkspace) -> None:
    with mt.run(workspace, name="t") as run, mt.op("load", category="construction") as op:
        op.output("D1:1", "Clara: I play keyboard.", category="message")
    ws = open_ws(workspace)
    path = [
        PathStep("var", "D1:1@1", 1, "evidence (gold)", True, role=PathRole.EVIDENCE),
        PathStep(
            "var", "mem-1@1", 2, "first memory unit version carrying it", True, role=PathRole.FIRST_CARRIER
        ),
        PathStep("var", "mem-1@1", 2, "last version carrying it", True, role=PathRole.LAST_CARRIER),
        PathStep("var", "mem-2@1", 3, "in memory at question time", True, role=PathRole.LIVE_AT_QUESTION),
        PathStep(
            "var", "ctx@1", 4, "in the answer's context", True, "Clara plays keyboard", PathRole.IN_CONTEXT
        ),
        PathStep("op", "update#2", 5, "lost it (UpdateError)", False),
    ]
    claim = Attribution(run.id, "q1", "update#2", "UpdateError", 0.8, "", "flow", path)
    save_attribution(ws.store, claim, "k")
    stored = json.loads(ws.store.conn.execute("SELECT path FROM attributions").fetchone()[0])
    assert [step["role"] for step in stored] == [*(r.value for r in PathRole), None]
    for step in stored:  # as written before path steps had roles
        del step["role"]
    with ws.store.transaction() as conn:
        conn.execute("UPDATE attributions SET path=?", (json.dumps(stored),))
    (loaded,) = load_attributions(ws.store, run.id)
    assert [s.role for s in loaded.path] == [s.role for s in path]
    assert loaded.step(PathRole.LAST_CARRIER) == path[2]
    stored[0]["role"] = "carrier pigeon"
    with ws.store.transaction() as conn:
        conn.execute("UPDATE attributions SET path=?", (json.dumps(stored),))
    with pytest.raises(ValueError, match="unknown role 'carrier pigeon'"):
        load_attributions(ws.store, run.id)
