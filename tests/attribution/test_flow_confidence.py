"""Flow's confidence is the agreement rate blind labels measured for claims of its kind."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from attrhelpers import pets_run

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.evidence.support import OverlapScorer
from memtrace.attribution.methods.flow_confidence import (
    TYPE_PRIOR,
    Calibration,
    Tally,
    fit_calibration,
    shipped_calibration,
)


def test_a_kind_the_labels_agreed_with_more_often_gets_more_confidence() -> None:
    table = fit_calibration(
        [("ResponseError", "rag", True)] * 18
        + [("ResponseError", "rag", False)] * 2
        + [("RetrievalError", "rag", True)] * 12
        + [("RetrievalError", "rag", False)] * 8
    )
    assert table.by_type["ResponseError"] == Tally(18, 20)
    assert table.confidence("ResponseError", "rag") > table.confidence("RetrievalError", "rag")


def test_few_claims_are_pulled_towards_their_type_and_an_unknown_system_gets_the_type() -> None:
    table = fit_calibration(
        [("ExtractionError", "mem0", True)] * 30
        + [("ExtractionError", "mem0", False)] * 10
        + [("ExtractionError", "evermemos", True)] * 2  # two out of two: not certainty
    )
    of_type = table.confidence("ExtractionError", "my-pipeline")
    assert of_type == math.floor(Tally(32, 42).rate(32 / 42, TYPE_PRIOR) * 100) / 100
    assert of_type < table.confidence("ExtractionError", "evermemos") < 1.0
    assert (
        table.confidence("DeletionError", "mem0") == math.floor(32 / 42 * 100) / 100
    )  # no such claims: all claims'


def test_the_shipped_table_names_only_development_sets_as_fitted_on() -> None:
    """What the table records of its fit: no held-out set named (calibrate.py writes the names)."""
    table = shipped_calibration()
    assert table.overall.claims >= 400 and table.fitted_on
    # The conversations kept aside and the fresh sets drawn from them are never fitted on.
    assert not [name for name in table.fitted_on if "aside" in name or "fresh" in name]
    for kind, system in table.by_type_system:
        assert 0.0 < table.confidence(kind, system) < 1.0


def test_a_table_in_another_format_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="field 'format'"):
        Calibration.from_dict({"format": "something-else/1", "by_type_system": {}})


def test_flow_reports_the_measured_rate_of_its_claims_kind(tmp_path: Path) -> None:
    """Pepper's memory was live and not retrieved: a RetrievalError on a mem0 run, whose confidence is
    the table's for that kind, not a constant of the rule that made it."""
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        (case,) = ws.cases(run_id)
        graph = ws.graph(run_id)
        measured = FlowMethod().attribute(graph, case)
        # The table was measured with the default scorer; another scorer keeps the rule's own figure.
        other = FlowMethod(OverlapScorer(threshold=0.6)).attribute(graph, case)
    assert measured.error_type == "RetrievalError"
    assert measured.confidence == shipped_calibration().confidence("RetrievalError", "mem0")
    assert other.error_type == "RetrievalError" and other.confidence != measured.confidence


def test_the_table_reads_back_as_written() -> None:
    table = shipped_calibration()
    again = Calibration.from_dict(json.loads(json.dumps(table.to_dict())))
    assert again.to_dict() == table.to_dict()
    assert table.by_type_verdict  # the verdict counts ship beside the table


def test_the_shipped_verdict_counts_say_a_claim_verify_could_not_check_is_right_less_often() -> None:
    """What the blind development labels measured: verify's verdicts carry information about a claim."""
    table = shipped_calibration()
    for kind in ("RetrievalError", "ExtractionError"):
        confirmed = table.verified_confidence(kind, None, "flow-confirmed")
        disputed = table.verified_confidence(kind, None, "not-verifiable")
        assert confirmed is not None and disputed is not None and disputed < confirmed


def test_other_evidence_settings_keep_the_rules_figure_and_their_own_cache_key(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        (case,) = ws.cases(run_id)
        graph = ws.graph(run_id)
        measured, annotated = FlowMethod(), FlowMethod(evidence="gold")
        default_claim, annotated_claim = measured.attribute(graph, case), annotated.attribute(graph, case)
    assert measured.settings()["confidence"] != annotated.settings()["confidence"] == "rules"
    if default_claim.error_type == annotated_claim.error_type:
        assert annotated_claim.confidence != default_claim.confidence


def _verdict_table() -> Calibration:
    """RetrievalError claims: right 19 times in 20 when verify confirmed them, 5 in 10 when it could not."""
    claims = [("RetrievalError", "mem0", True)] * 24 + [("RetrievalError", "mem0", False)] * 6
    verified = (
        [("RetrievalError", "flow-confirmed", True)] * 15
        + [("RetrievalError", "answer-confirmed", True)] * 4
        + [("RetrievalError", "flow-confirmed", False)]
        + [("RetrievalError", "not-verifiable", True)] * 5
        + [("RetrievalError", "not-verifiable", False)] * 5
    )
    return fit_calibration(claims, ["dev"], verified)


def test_verify_s_verdict_moves_the_confidence_the_way_the_labels_measured() -> None:
    table = _verdict_table()
    assert table.by_type_verdict[("RetrievalError", "confirmed")] == Tally(19, 20)  # both confirmations
    before = table.confidence("RetrievalError", "mem0")
    confirmed = table.verified_confidence("RetrievalError", "mem0", "flow-confirmed")
    disputed = table.verified_confidence("RetrievalError", "mem0", "not-verifiable")
    assert confirmed is not None and disputed is not None
    assert disputed < before < confirmed < 1.0
    # Not verified, or a verdict the development claims never got: no measured figure to give.
    assert table.verified_confidence("RetrievalError", "mem0", None) is None
    assert table.verified_confidence("RetrievalError", "mem0", "refuted") is None
    assert table.verified_confidence("UpdateError", "mem0", "flow-confirmed") is None


def test_the_verdict_counts_read_back_as_written() -> None:
    table = _verdict_table()
    again = Calibration.from_dict(json.loads(json.dumps(table.to_dict())))
    assert again.by_type_verdict == table.by_type_verdict
    assert again.verified_confidence("RetrievalError", "rag", "not-verifiable") == table.verified_confidence(
        "RetrievalError", "rag", "not-verifiable"
    )


def test_a_verified_flow_claim_shows_its_confidence_after_verification(tmp_path: Path) -> None:
    """Verify a default flow claim: the report, the UI's case data and bench labels' rows read the same
    figure; a claim of other settings (the table never measured them) gets none."""
    from memtrace.attribution.engine import attribute
    from memtrace.attribution.methods.verified_confidence import confidence_after_verify
    from memtrace.attribution.model import load_attributions, settings_key
    from memtrace.attribution.verify import verify_all

    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        attribute(ws, "flow")
        attribute(ws, FlowMethod(evidence="gold"))
    verify_all(tmp_path)
    with mt.open(tmp_path) as ws:
        stored = {a.settings_key: a for a in load_attributions(ws.store, run_id, "flow")}
    assert len(stored) == 2
    default = stored[settings_key(FlowMethod().settings())]
    assert default.verified is not None
    expected = shipped_calibration().verified_confidence(default.error_type, "mem0", default.verified)
    assert expected is not None  # the shipped table counts verdicts of this kind
    assert confidence_after_verify(default, "mem0") == expected
    others = [a for a in stored.values() if a is not default]
    assert all(confidence_after_verify(a, "mem0") is None for a in others)
