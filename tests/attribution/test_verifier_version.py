"""A verdict says which verifier made it: one from another verifier is verified again by a plain
`memtrace verify`, and nothing fitted on this verifier's verdicts is read from it."""

from __future__ import annotations

import json
from pathlib import Path

from attrhelpers import pets_run, store_as_if_another_verifier_made_it

import memtrace as mt
from memtrace.attribution.engine import attribute
from memtrace.attribution.methods.flow_verdicts import confidence_after_verify
from memtrace.attribution.model import VERIFIER_VERSION, load_attributions
from memtrace.attribution.verify import verify_all


def _as_if_an_older_verifier_made_it(workspace: Path, run_id: str) -> None:
    """Store the run's verified claim again with its verdict unstamped, as before the stamp existed."""
    with mt.open(workspace) as ws:
        (claim,) = load_attributions(ws.store, run_id, "flow")
        store_as_if_another_verifier_made_it(ws.store, claim)


def test_a_verdict_of_another_verifier_is_verified_again_and_moves_no_confidence(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        attribute(ws, "flow")
    assert len(verify_all(tmp_path)) == 1
    with mt.open(tmp_path) as ws:
        (current,) = load_attributions(ws.store, run_id, "flow")
    assert current.verification["verifier"] == VERIFIER_VERSION and not current.verdict_stale
    assert confidence_after_verify(current, "mem0") is not None
    assert verify_all(tmp_path) == []  # a current verdict is not replayed again

    _as_if_an_older_verifier_made_it(tmp_path, run_id)
    with mt.open(tmp_path) as ws:
        (stale,) = load_attributions(ws.store, run_id, "flow")
    assert stale.verified == current.verified and stale.verdict_stale
    assert confidence_after_verify(stale, "mem0") is None  # the counts are this verifier's
    (renewed,) = verify_all(tmp_path)
    assert renewed.attribution.case_id == current.case_id
    with mt.open(tmp_path) as ws:
        (again,) = load_attributions(ws.store, run_id, "flow")
    assert again.verification["verifier"] == VERIFIER_VERSION and not again.verdict_stale


def test_verify_says_how_many_verdicts_of_another_verifier_it_verified_again(tmp_path: Path) -> None:
    from test_cli import memtrace

    run_id = pets_run(tmp_path, ["mem-2"])
    memtrace("attribute", tmp_path)
    memtrace("verify", tmp_path)
    _as_if_an_older_verifier_made_it(tmp_path, run_id)
    held_back = memtrace("verify", tmp_path, "--limit", "0", "--json", tmp_path / "none.json").stdout
    assert "1 verdict(s) of another verifier left to verify" in held_back
    none = json.loads((tmp_path / "none.json").read_text())
    assert none["verified_now"] == 0
    assert none["verdicts_of_another_verifier"] == {"verified_again": 0, "left": 1}
    shown = memtrace("verify", tmp_path, "--json", tmp_path / "again.json").stdout
    assert "verified now: 1; 1 of them verdict(s) of another verifier" in " ".join(shown.split())
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["verified_now"] == 1
    assert again["verdicts_of_another_verifier"] == {"verified_again": 1, "left": 0}
    memtrace("verify", tmp_path, "--json", tmp_path / "third.json")
    third = json.loads((tmp_path / "third.json").read_text())
    assert third["verified_now"] == 0
    assert third["verdicts_of_another_verifier"] == {"verified_again": 0, "left": 0}


def test_labels_count_a_verdict_of_another_verifier_as_none_until_verify_renews_it(tmp_path: Path) -> None:
    from memtrace.bench.labels import read_labels, score_labels

    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        (claim,) = attribute(ws, "flow")
        label = {
            "run": "pets",
            "final_error_type": str(claim.error_type),
            "final_op_id": claim.op_id,
            "memtrace": {"case_id": claim.case_id, "label_id": "L1", "system": "mem0", "note": "why"},
        }
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"format": "memtrace-labels/1", "labels": [label]}))
    verify_all(tmp_path)
    _as_if_an_older_verifier_made_it(tmp_path, run_id)
    with mt.open(tmp_path) as ws:
        shown = score_labels(ws, read_labels(path))
        (row,) = shown["cases"]
        assert row["verdict"] is None and row["verdict_of_another_verifier"] is not None
        assert shown["verification"]["claims_labels_call_right"]["not_verified"] == 1
        renewed = score_labels(ws, read_labels(path), verify=True)
        (row,) = renewed["cases"]
        assert row["verdict"] is not None and row["verdict_of_another_verifier"] is None
        (stored,) = load_attributions(ws.store, run_id, "flow")
    assert not stored.verdict_stale


def test_the_report_says_how_many_verdicts_another_verifier_made(tmp_path: Path) -> None:
    from memtrace.graph import Workspace
    from memtrace.report import build_report
    from memtrace.report.render_md import render_markdown

    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        attribute(ws, "flow")
    verify_all(tmp_path)
    with Workspace(tmp_path) as ws:
        assert build_report(ws).headline.verdicts_of_another_verifier == 0
    _as_if_an_older_verifier_made_it(tmp_path, run_id)
    with Workspace(tmp_path) as ws:
        report = build_report(ws)
    assert report.headline.verdicts_of_another_verifier == 1
    assert "1 of these verdicts were made by another verifier" in render_markdown(report)
