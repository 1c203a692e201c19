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
