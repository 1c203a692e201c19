"""What the UI marks (issue 19): a context's item as carrying the evidence only when the attribution's
path names it (a step "in context"), and a suspected annotation error as such, with its reason, never as
a memory fault: on its case page, in the cases table and in the runs table."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memtrace.attribution.model import PathRole, load_attributions
from memtrace.graph import Workspace
from memtrace.ui import create_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from reporthelpers import DOG_MEMORY, record_marks_run

CARRIES = '<mark class="carries"'


def _client(path: Path) -> TestClient:
    return TestClient(create_app(path, port=8765), base_url="http://127.0.0.1:8765")


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, str]:
    path = tmp_path_factory.mktemp("ui-marks") / "ws"
    run = record_marks_run(path)
    return _client(path), run


def _context_card(page: str) -> str:
    return re.findall(r'<section class="card" id="context">.*?</section>', page, re.S)[0]


def test_only_the_item_the_path_names_is_marked_as_carrying(marks: tuple[TestClient, str]) -> None:
    client, run = marks
    (held,) = client.get(f"/api/runs/{run}/cases/q1").json()["context"]
    assert [i["text"] for i in held["items"] if i["carries"]] == [DOG_MEMORY]
    card = _context_card(client.get(f"/runs/{run}/cases/q1").text)
    assert card.count(CARRIES) == 1 and f"★ {DOG_MEMORY}</mark>" in card and 'id="carrying-legend"' in card
    (missed,) = client.get(f"/api/runs/{run}/cases/q2").json()["context"]
    assert any("Pepper" in i["text"] for i in missed["items"])  # it mentions the gold ...
    assert not any(i["carries"] for i in missed["items"])  # ... and carries nothing: a RetrievalError
    assert CARRIES not in _context_card(client.get(f"/runs/{run}/cases/q2").text)


def test_a_suspected_annotation_error_is_shown_as_one_with_its_reason(marks: tuple[TestClient, str]) -> None:
    client, run = marks
    page = client.get(f"/runs/{run}/cases/q3").text
    why = re.findall(r'<section class="card" id="attribution">.*?</section>', page, re.S)[0]
    assert 'id="suspected-annotation"' in why and "suspected annotation error" in why
    assert "which no turn of the conversation mentions" in why and "not a memory fault" in why
    assert "et-AnnotationError" not in why and "blamed-op" not in why
    (shown,) = client.get(f"/api/runs/{run}/cases/q3").json()["attributions"]
    assert shown["suspected_annotation"] is True and shown["op_id"] is None
    rows = {r["id"]: r for r in client.get(f"/api/runs/{run}/cases").json()}
    assert rows["q3"]["suspected_annotation"] and not rows["q1"]["suspected_annotation"]
    table = client.get(f"/runs/{run}").text
    (q3,) = [row for row in table.split("<tr>") if "/cases/q3" in row]
    assert "⚑ suspected annotation error" in q3 and "et-AnnotationError" not in q3
    (listed,) = client.get("/api/runs").json()
    assert listed["failures"] == {"ResponseError": 1, "RetrievalError": 1}
    assert listed["suspected_annotation_errors"] == 1
    assert "⚑ suspected annotation errors 1" in client.get("/").text


def test_on_the_sample_every_carrying_mark_is_named_by_the_path(sample_ws: Path) -> None:
    client = _client(sample_ws)
    (run,) = client.get("/api/runs").json()
    with Workspace(sample_ws) as ws:
        flow = {a.case_id: a for a in load_attributions(ws.store, run["id"]) if a.method == "flow"}
    marked = 0
    for row in client.get(f"/api/runs/{run['id']}/cases?verdict=wrong").json():
        named = {(s.id, s.part) for s in flow[row["id"]].steps(PathRole.IN_CONTEXT)}
        for item in client.get(f"/api/runs/{run['id']}/cases/{row['id']}").json()["context"]:
            for part in item["items"]:
                assert part["carries"] == ((item["id"], part["text"]) in named), (row["id"], part)
                marked += part["carries"]
    assert marked > 0
