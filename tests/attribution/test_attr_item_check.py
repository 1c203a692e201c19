"""Verification says no: an independent item check (the judge's rule and flow's rule per item, both
required) refutes a claim whose premise the recorded run contradicts, and confirms only what it finds."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from attrhelpers import pets_run

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.model import Attribution
from memtrace.attribution.verify.counterfactual import verify
from memtrace.attribution.verify.items import check_for, resolve_relative


def test_relative_dates_are_restated_against_their_stamp() -> None:
    assert "25 April 2023" in resolve_relative("I adopted a cat two days ago! [said on 27 April 2023]")
    assert "the week before 6 March 2023" in resolve_relative("Last week she passed away. [on 6 March 2023]")
    assert "15 August 2023" in resolve_relative("We met up on the 15th. [said on 17 August 2023]")
    assert "26 April 2023" in resolve_relative("I ran my first race yesterday [said on 27 April 2023]")
    assert resolve_relative("No stamp, yesterday.") == "No stamp, yesterday."


def _claim(ws: mt.Workspace, run_id: str, kind: str, op_prefix: str) -> Attribution:
    """Flow's attribution of the run's case, rewritten as another method's claim of `kind` at an op."""
    case = ws.cases(run_id)[0]
    flow = FlowMethod().attribute(ws.view(run_id), case)
    op = next(
        o
        for o in ws.graph(run_id).ops_by_category("retrieval") + ws.graph(run_id).ops_by_category("response")
        if o.id.startswith(op_prefix)
    )
    return replace(flow, error_type=kind, op_id=op.id, method="test-claim")


def test_a_response_error_whose_context_lacks_an_item_is_refuted(tmp_path: Path) -> None:
    """The demo's q10 pattern, claimed as a ResponseError: the dog of two pets never reached the context."""
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        outcome = verify(ws, _claim(ws, run_id, "ResponseError", "answer#"))
        assert (outcome.verdict, outcome.why) == ("refuted", "context-lacks-item"), outcome.reason
        assert "pepper" in outcome.reason.lower() and outcome.replay_run is None


def test_a_response_error_whose_context_holds_every_item_is_confirmed(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-1", "mem-2"])
    with mt.open(tmp_path) as ws:
        flow = FlowMethod().attribute(ws.view(run_id), ws.cases(run_id)[0])
        assert flow.error_type == "ResponseError"
        outcome = verify(ws, flow)
        assert (outcome.verdict, outcome.why) == ("flow-confirmed", "context-holds-every-item"), (
            outcome.reason
        )
        assert any("held" in line and "pepper" in line for line in outcome.checked)


def test_a_retrieval_error_whose_context_held_every_item_is_refuted(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-1", "mem-2"])
    with mt.open(tmp_path) as ws:
        outcome = verify(ws, _claim(ws, run_id, "RetrievalError", "search#"))
        assert (outcome.verdict, outcome.why) == ("refuted", "context-had-it"), outcome.reason


def test_an_item_both_rules_disagree_on_concludes_nothing(tmp_path: Path) -> None:
    """Another person's dog named Pepper has every word of the item (the judge's rule sees it) but not
    its statement (flow's rule for the item does not): the item is disputed, neither held nor missing."""
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        graph, case = ws.view(run_id), ws.cases(run_id)[0]
        check = check_for(graph, case)
        dog = next(item.text for item in check.items if "pepper" in item.text)
        look_alike = ["Omar's dog named Pepper ran away"]
        held = ["Diego adopted a dog named Pepper last spring, she loves the park"]
        assert check.status([look_alike])[dog] == "disputed"
        assert check.status([held])[dog] == "held"
        assert check.status([["Diego likes parks"]])[dog] == "missing"
        assert dog in check.lacking([look_alike])  # never held on the judge's word alone
