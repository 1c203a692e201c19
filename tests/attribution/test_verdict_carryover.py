"""A verdict belongs to the claim: the same claim computed under other settings keeps it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attrhelpers import pets_run, store_as_if_another_verifier_made_it

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.engine import attribute
from memtrace.attribution.model import Attribution, load_attributions, settings_key
from memtrace.attribution.verify import verify_all
from memtrace.graph import Case, GraphQueries
from memtrace.vocabulary import ErrorType


class RefittedFlowDouble(FlowMethod):
    """Test double: flow under other settings (as after a confidence table is refitted)."""

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "confidence": "a refitted table"}


class OtherClaimDouble(RefittedFlowDouble):
    """Test double: other settings that decide the case differently (the answer step is blamed)."""

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "confidence": "another claim"}

    def attribute(self, graph: GraphQueries, case: Case) -> Attribution:
        made = super().attribute(graph, case)
        answer = graph.ops_by_category("response")[0]
        made.error_type, made.op_id = ErrorType.RESPONSE, answer.id
        return made


def test_the_same_claim_under_other_settings_keeps_its_verdict(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        (first,) = attribute(ws, "flow")
    verify_all(tmp_path)
    with mt.open(tmp_path) as ws:
        (verified,) = load_attributions(ws.store, run_id, "flow")
        (again,) = attribute(ws, RefittedFlowDouble())
        (other,) = attribute(ws, OtherClaimDouble())
        stored = {a.settings_key: a for a in load_attributions(ws.store, run_id, "flow")}
    assert verified.verified is not None and verified.verification
    assert (again.error_type, again.op_id) == (first.error_type, first.op_id)
    assert again.settings_key != verified.settings_key
    assert (again.verified, again.verification, again.replay_run) == (
        verified.verified,
        verified.verification,
        verified.replay_run,
    )
    assert stored[settings_key(RefittedFlowDouble().settings())].verified == verified.verified  # as stored
    # A different claim is not the verified one: it waits for its own replay.
    assert other.op_id != first.op_id and other.verified is None and other.verification is None


class ThirdSettingsDouble(RefittedFlowDouble):
    """Test double: flow under yet other settings, deciding the case the same way."""

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "confidence": "a third table"}


def test_a_verdict_of_this_verifier_is_carried_before_one_of_another(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        attribute(ws, "flow")
    verify_all(tmp_path)
    with mt.open(tmp_path) as ws:
        (carried,) = attribute(ws, RefittedFlowDouble())  # stored under its own key, stamp and all
        assert not carried.verdict_stale
        default = next(
            a
            for a in load_attributions(ws.store, run_id, "flow")
            if a.settings_key == settings_key(FlowMethod().settings())
        )
        store_as_if_another_verifier_made_it(ws.store, default)
        (third,) = attribute(ws, ThirdSettingsDouble())
    assert third.verified == carried.verified and not third.verdict_stale
