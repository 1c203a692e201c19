"""The web UI marks a verdict another verifier made (an older memtrace), on the case and in the list."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import quote

from fastapi.testclient import TestClient

import memtrace as mt
from memtrace.attribution.engine import attribute
from memtrace.attribution.model import load_attributions
from memtrace.attribution.verify import verify_all
from memtrace.ui import create_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "attribution"))
from attrhelpers import pets_run, store_as_if_another_verifier_made_it


def _pages(workspace: Path, run_id: str, case_id: str) -> tuple[dict, dict, str]:
    client = TestClient(create_app(workspace, port=8766), base_url="http://127.0.0.1:8766")
    story = client.get(f"/api/runs/{run_id}/cases/{quote(case_id)}").json()
    (row,) = [r for r in client.get(f"/api/runs/{run_id}/cases").json() if r["id"] == case_id]
    return story["attributions"][0], row, client.get(f"/runs/{run_id}/cases/{quote(case_id)}").text


def test_a_verdict_of_another_verifier_is_marked_until_verify_renews_it(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        (claim,) = attribute(ws, "flow")
    verify_all(tmp_path)
    shown, row, page = _pages(tmp_path, run_id, claim.case_id)
    assert shown["verified"] and shown["verdict_stale"] is False and row["verdict_stale"] is False
    assert 'id="verdict-stale"' not in page
    with mt.open(tmp_path) as ws:
        (stored,) = load_attributions(ws.store, run_id, "flow")
        store_as_if_another_verifier_made_it(ws.store, stored)
    shown, row, page = _pages(tmp_path, run_id, claim.case_id)
    assert shown["verdict_stale"] is True and row["verdict_stale"] is True
    assert 'id="verdict-stale"' in page and shown["confidence_after_verify"] is None
    verify_all(tmp_path)
    shown, row, _ = _pages(tmp_path, run_id, claim.case_id)
    assert shown["verdict_stale"] is False and row["verdict_stale"] is False
