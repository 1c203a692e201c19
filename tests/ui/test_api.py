"""The UI's JSON API through FastAPI's test client on a real sample workspace."""

from __future__ import annotations

import html
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from memtrace.graph import Workspace
from memtrace.ui import create_app
from memtrace.ui.subgraph import MAX_NODES


@pytest.fixture(scope="module")
def client(sample_ws: Path) -> TestClient:
    return TestClient(create_app(sample_ws, port=8765), base_url="http://127.0.0.1:8765")


@pytest.fixture(scope="module")
def run_id(client: TestClient) -> str:
    (run,) = client.get("/api/runs").json()
    return run["id"]


@pytest.fixture(scope="module")
def failed(client: TestClient, run_id: str) -> dict:
    """A failed case whose attribution names an operation (a verified one when there is one)."""
    rows = [r for r in client.get(f"/api/runs/{run_id}/cases?verdict=wrong").json() if r["op_id"]]
    rows.sort(key=lambda r: r["verified"] is None)
    return rows[0]


def test_runs_lists_accuracy_and_failures_by_error_type(client: TestClient, sample_ws: Path) -> None:
    (run,) = client.get("/api/runs").json()
    with Workspace(sample_ws) as ws:
        cases = ws.cases(run["id"])
    assert run["system"] == "mem0" and run["dataset"] == "sample"
    assert run["questions"] == len(cases)
    assert run["wrong"] == sum(c.verdict == "wrong" for c in cases)
    assert run["accuracy"] == pytest.approx(sum(c.verdict == "correct" for c in cases) / len(cases))
    assert sum(run["failures"].values()) == run["wrong"]
    assert run["replays"] >= 1  # verify replayed some
    assert len(client.get("/api/runs?replays=true").json()) == 1 + run["replays"]


def test_cases_filter_by_verdict_type_and_words(client: TestClient, run_id: str) -> None:
    everything = client.get(f"/api/runs/{run_id}/cases").json()
    wrong = client.get(f"/api/runs/{run_id}/cases?verdict=wrong").json()
    right = client.get(f"/api/runs/{run_id}/cases?verdict=correct").json()
    assert len(wrong) + len(right) == len(everything) and wrong and right
    assert all(r["error_type"] for r in wrong)
    kind = wrong[0]["error_type"]
    typed = client.get(f"/api/runs/{run_id}/cases", params={"error_type": kind}).json()
    assert typed and {r["error_type"] for r in typed} == {kind}
    word = everything[0]["question"].split()[-1].strip("?").lower()
    found = client.get(f"/api/runs/{run_id}/cases", params={"q": word}).json()
    assert found and all(word in r["question"].lower() for r in found)


def test_case_story_has_evidence_lanes_and_attribution(client: TestClient, run_id: str, failed: dict) -> None:
    story = client.get(f"/api/runs/{run_id}/cases/{quote(failed['id'])}").json()
    assert story["case"]["question"] == failed["question"]
    assert story["evidence"]["messages"], "the sample has gold evidence"
    assert story["attributions"][0]["op_id"] == failed["op_id"]
    lanes = story["timeline"]["lanes"]
    assert lanes and all(lane["changes"][0]["change"] == "create" for lane in lanes)
    assert all(
        a["seq"] <= b["seq"]
        for lane in lanes
        for a, b in zip(lane["changes"], lane["changes"][1:], strict=False)
    )
    assert story["timeline"]["sessions"] and story["timeline"]["question_seq"] <= story["timeline"]["max_seq"]
    steps = [story["neighbours"]["previous"], story["neighbours"]["next"]]
    wrong = {r["id"] for r in client.get(f"/api/runs/{run_id}/cases?verdict=wrong").json()}
    assert any(steps) and all(step in wrong for step in steps if step)
    shown = story["attributions"][0]
    assert shown["verified"] and shown["replay_run"]  # the fixture verified this case by a repair replay
    assert shown["replay"]["repair"] and shown["replay"]["answer"] is not None
    # The verified default flow claim shows its measured confidence given the verdict, on the page too.
    assert 0.0 < shown["confidence_after_verify"] < 1.0
    page = client.get(f"/runs/{run_id}/cases/{quote(failed['id'])}").text
    assert f'id="confidence-after-verify">{shown["confidence_after_verify"]:.2f}<' in page


def test_graph_is_the_cases_subgraph_with_the_blamed_operation(
    client: TestClient, run_id: str, failed: dict, sample_ws: Path
) -> None:
    graph = client.get(f"/api/runs/{run_id}/cases/{quote(failed['id'])}/graph").json()
    ids = {n["data"]["id"] for n in graph["nodes"]}
    blamed = [n for n in graph["nodes"] if "blamed" in n["classes"].split()]
    assert [n["data"]["id"] for n in blamed] == [failed["op_id"]]
    assert all(e["data"]["source"] in ids and e["data"]["target"] in ids for e in graph["edges"])
    with Workspace(sample_ws) as ws:
        run_size = ws.store.count("ops", run_id) + ws.store.count("vars", run_id)
    assert len(ids) <= MAX_NODES and len(ids) < run_size / 4


def test_operation_shows_values_and_memory_unit_diffs(
    client: TestClient, run_id: str, sample_ws: Path, failed: dict
) -> None:
    with Workspace(sample_ws) as ws:
        update = next(
            op
            for op in ws.graph(run_id).ops_by_category("update")
            if any(v.is_memory and v.version > 1 for v in ws.graph(run_id).outputs(op.id))
        )
    detail = client.get(f"/api/runs/{run_id}/ops/{quote(update.id, safe='')}").json()
    assert detail["op"]["id"] == update.id and detail["inputs"] and detail["outputs"]
    blamed = client.get(f"/api/runs/{run_id}/ops/{quote(failed['op_id'], safe='')}").json()["blamed_by"]
    assert failed["id"] in [b["case_id"] for b in blamed]
    changed = [d for d in detail["unit_diffs"] if d["change"] == "update"]
    assert changed and changed[0]["from"] is not None
    kinds = {s["kind"] for s in changed[0]["segments"]}
    assert kinds & {"added", "removed"}


def test_memory_state_and_diff(client: TestClient, run_id: str, sample_ws: Path) -> None:
    end = client.get(f"/api/runs/{run_id}/memory").json()
    middle = client.get(f"/api/runs/{run_id}/memory", params={"seq": end["max_seq"] // 2}).json()
    assert end["seq"] == end["max_seq"] and middle["seq"] == end["max_seq"] // 2
    with Workspace(sample_ws) as ws:
        assert middle["count"] == len(ws.graph(run_id).memory_state_at(middle["seq"]))
    diff = client.get(f"/api/runs/{run_id}/memory/diff", params={"from": 0, "to": middle["seq"]}).json()
    assert len(diff["created"]) == middle["count"] and not diff["deleted"] and not diff["changed"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/runs/no-such-run",
        "/api/runs/no-such-run/cases",
        "/api/runs/{run}/cases/no-such-case",
        "/api/runs/{run}/cases/no-such-case/graph",
        "/api/runs/{run}/ops/no-such-op",
        "/api/runs/no-such-run/memory",
    ],
)
def test_unknown_ids_answer_404_with_a_json_error(client: TestClient, run_id: str, path: str) -> None:
    response = client.get(path.format(run=run_id))
    assert response.status_code == 404
    assert "no-such" in response.json()["error"]


def test_unknown_page_is_a_404_page(client: TestClient, run_id: str) -> None:
    response = client.get(f"/runs/{run_id}/cases/no-such-case")
    assert response.status_code == 404 and "no-such-case" in response.text and "<html" in response.text


def test_annotations_are_stored_listed_validated_and_removed(
    client: TestClient, run_id: str, failed: dict, sample_ws: Path
) -> None:
    url = f"/api/runs/{run_id}/cases/{quote(failed['id'])}/annotations"
    body = {
        "error_type": "JudgeError",
        "op_id": failed["op_id"],
        "note": "gold is a synonym",
        "author": "ana",
    }
    created = client.post(url, json=body)
    assert created.status_code == 201
    label = created.json()
    assert client.get(url).json()[-1] == label
    with Workspace(sample_ws) as ws:
        stored = ws.store.annotations(run_id, failed["id"])
    assert [(a.error_type, a.op_id, a.note, a.author) for a in stored][-1] == (
        "JudgeError",
        failed["op_id"],
        "gold is a synonym",
        "ana",
    )
    bad_type = client.post(url, json={"error_type": "Oops"})
    assert bad_type.status_code == 422 and "Oops" in bad_type.json()["error"]
    bad_op = client.post(url, json={"error_type": "UpdateError", "op_id": "nope#1"})
    assert bad_op.status_code == 404
    assert client.delete(f"/api/annotations/{label['id']}").status_code == 204
    assert label["id"] not in [a["id"] for a in client.get(url).json()]
    assert client.delete(f"/api/annotations/{label['id']}").status_code == 404


def test_pages_render(client: TestClient, run_id: str, failed: dict) -> None:
    case_url = f"/runs/{run_id}/cases/{quote(failed['id'])}"
    for path, expected in (
        ("/", "mem0"),
        (f"/runs/{run_id}?verdict=wrong", failed["question"]),
        (case_url, "Memory evolution"),
        (f"/runs/{run_id}/ops/{quote(failed['op_id'], safe='')}", failed["op_id"]),
        (f"/runs/{run_id}/memory?seq=50&since=10", "Changes from seq 10 to 50"),
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        assert expected in html.unescape(response.text), path


def test_openapi_documents_the_api(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/api/runs",
        "/api/runs/{run_id}/cases",
        "/api/runs/{run_id}/cases/{case_id}",
        "/api/runs/{run_id}/cases/{case_id}/graph",
        "/api/runs/{run_id}/ops/{op_id}",
        "/api/runs/{run_id}/memory",
        "/api/runs/{run_id}/memory/diff",
        "/api/runs/{run_id}/cases/{case_id}/annotations",
    ):
        assert path in paths


def test_export_annotations_writes_memtracebench_labels_that_import_back(
    client: TestClient, run_id: str, failed: dict, sample_ws: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from memtrace.cli.app import app

    url = f"/api/runs/{run_id}/cases/{quote(failed['id'])}/annotations"
    client.post(url, json={"error_type": "UpdateError", "note": "first look"})
    client.post(url, json={"error_type": "AnnotationError", "note": "gold is wrong", "author": "bo"})
    target = tmp_path / "labelled.json"
    runner = CliRunner()
    result = runner.invoke(app, ["export", str(sample_ws), run_id, "--annotations", "-o", str(target)])
    assert result.exit_code == 0, result.output
    graph = json.loads(target.read_text())
    labels = graph["data"]["annotations"]
    mine = [a for a in labels if a["memtrace"]["case_id"] == failed["id"]]
    assert len(mine) == 1  # the latest label of the case
    assert mine[0]["final_error_type"] == "AnnotationError" and mine[0]["query"] == failed["question"]
    node_ids = {f"{n['name']}@{n['version']}" for n in graph["data"]["nodes"]}
    assert mine[0]["query_id"] in node_ids and mine[0]["prediction_id"] in node_ids
    imported = tmp_path / "imported"
    result = runner.invoke(app, ["import", str(imported), str(target)])
    assert result.exit_code == 0, result.output
    with Workspace(imported) as ws:
        back = {(a.case_id, a.error_type) for a in ws.store.annotations()}
    assert any(error_type == "AnnotationError" for _, error_type in back)


def test_export_annotations_needs_the_smartcomment_format(
    sample_ws: Path, run_id: str, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from memtrace.cli.app import app

    result = CliRunner().invoke(
        app, ["export", str(sample_ws), run_id, "--annotations", "-f", "jsonl", "-o", str(tmp_path / "x")]
    )
    assert result.exit_code != 0
