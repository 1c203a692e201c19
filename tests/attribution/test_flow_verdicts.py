"""A verified flow claim's confidence moves by what blind labels measured for its verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attrhelpers import pets_run

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.engine import attribute
from memtrace.attribution.methods.flow_confidence import fit_calibration, shipped_calibration
from memtrace.attribution.methods.flow_verdicts import (
    MIN_CLAIMS,
    VerdictCounts,
    confidence_after_verify,
    fit_verdicts,
    shipped_verdicts,
)
from memtrace.attribution.model import load_attributions, settings_key
from memtrace.attribution.verify import verify_all
from memtrace.errors import FormatError

TABLE = fit_calibration([("RetrievalError", "mem0", True)] * 24 + [("RetrievalError", "mem0", False)] * 6)


def _counts() -> VerdictCounts:
    """RetrievalError: right 19 times in 20 when verify confirmed it, 5 in 10 when it could not, and
    one refuted claim the labels happened to agree with."""
    return fit_verdicts(
        [("RetrievalError", "flow-confirmed", True)] * 15
        + [("RetrievalError", "answer-confirmed", True)] * 4
        + [("RetrievalError", "flow-confirmed", False)]
        + [("RetrievalError", "not-verifiable", True)] * 5
        + [("RetrievalError", "not-verifiable", False)] * 5
        + [("RetrievalError", "refuted", True)]
    )


def test_the_verdict_moves_the_confidence_the_way_the_labels_measured() -> None:
    counts = _counts()
    assert counts.by_type_verdict[("RetrievalError", "confirmed")].claims == 20  # both confirmations
    before = TABLE.confidence("RetrievalError", "mem0")
    confirmed = counts.confidence_after(TABLE, "RetrievalError", "mem0", "flow-confirmed")
    disputed = counts.confidence_after(TABLE, "RetrievalError", "mem0", "not-verifiable")
    assert confirmed is not None and disputed is not None
    assert disputed < before < confirmed < 1.0


def test_a_verdict_seen_too_rarely_or_never_moves_nothing() -> None:
    counts = _counts()
    assert counts.by_type_verdict[("RetrievalError", "refuted")].claims < MIN_CLAIMS
    assert (
        counts.confidence_after(TABLE, "RetrievalError", "mem0", "refuted") is None
    )  # one agreed refutation
    assert counts.confidence_after(TABLE, "RetrievalError", "mem0", None) is None  # not verified
    assert counts.confidence_after(TABLE, "UpdateError", "mem0", "flow-confirmed") is None


def test_an_unknown_verdict_is_an_error_not_a_skipped_row() -> None:
    with pytest.raises(ValueError, match="unknown verdict 'confirmed-ish'"):
        fit_verdicts([("RetrievalError", "confirmed-ish", True)])


def test_the_counts_read_back_as_written_and_bad_ones_are_refused_by_name() -> None:
    counts = _counts()
    again = VerdictCounts.from_dict(json.loads(json.dumps(counts.to_dict())))
    assert again == counts
    with pytest.raises(FormatError, match=r"my\.json.*field .format."):
        VerdictCounts.from_dict({"format": "other/1"}, "my.json")
    with pytest.raises(FormatError, match=r"my\.json.*.RetrievalError/maybe."):
        VerdictCounts.from_dict(
            {"format": counts.to_dict()["format"], "by_type_verdict": {"RetrievalError/maybe": [1, 2]}},
            "my.json",
        )


def test_the_shipped_counts_say_a_claim_verify_could_not_check_is_right_less_often() -> None:
    """What the blind development labels measured, shipped beside flow's table and fitted on its sets."""
    counts, table = shipped_verdicts(), shipped_calibration()
    assert counts.fitted_on == table.fitted_on
    for kind in ("RetrievalError", "ExtractionError", "ResponseError"):
        confirmed = counts.confidence_after(table, kind, None, "flow-confirmed")
        disputed = counts.confidence_after(table, kind, None, "not-verifiable")
        assert confirmed is not None and disputed is not None and disputed < confirmed


def test_a_verified_default_flow_claim_has_a_confidence_after_verification(tmp_path: Path) -> None:
    """Only flow's default claims: the shipped table measured those; other settings get none."""
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        attribute(ws, "flow")
        attribute(ws, FlowMethod(evidence="gold"))
    verify_all(tmp_path)
    with mt.open(tmp_path) as ws:
        stored = {a.settings_key: a for a in load_attributions(ws.store, run_id, "flow")}
    default = stored.pop(settings_key(FlowMethod().settings()))
    (other,) = stored.values()
    assert default.error_type == "RetrievalError" and default.verified is not None
    after = confidence_after_verify(default, "mem0")
    assert after is not None and after != default.confidence
    assert after == shipped_verdicts().confidence_after(
        shipped_calibration(), "RetrievalError", "mem0", default.verified
    )
    assert other.verified is not None and confidence_after_verify(other, "mem0") is None
    assert FlowMethod(k=4).settings()["confidence"] == "rules"  # the table measured k=8 only
