"""The web UI under attack: DNS rebinding (a foreign Host), cross-site writes (a foreign Origin or
Sec-Fetch-Site), numbers SQLite cannot hold, malformed query values and a port someone else holds.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from conftest import record_small_pipeline, run_cli_in_process
from memtrace.errors import WorkspaceError
from memtrace.graph import Workspace
from memtrace.ui import create_app
from memtrace.ui.guard import allowed_hosts
from memtrace.ui.server import serve

PORT = 8765
OWN = f"http://127.0.0.1:{PORT}"
INT64_MAX = 2**63 - 1


@pytest.fixture(scope="module")
def small_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "ws"
    record_small_pipeline(path)
    return path


@pytest.fixture(scope="module")
def client(small_ws: Path) -> Iterator[TestClient]:
    app = create_app(small_ws, port=PORT)
    yield TestClient(app, base_url=OWN)
    app.state.ui.ws.close()


@pytest.fixture(scope="module")
def run_id(client: TestClient) -> str:
    (run,) = client.get("/api/runs").json()
    return run["id"]


@pytest.fixture
def labels_url(client: TestClient, run_id: str) -> str:
    (case,) = client.get(f"/api/runs/{run_id}/cases").json()
    return f"/api/runs/{run_id}/cases/{case['id']}/annotations"


def label_count(small_ws: Path) -> int:
    with Workspace(small_ws) as ws:
        return len(ws.store.annotations())


@pytest.mark.parametrize(
    "host",
    ["rebind.example", "rebind.example:8765", "127.0.0.1:9999", "localhost", "127.0.0.1.nip.io:8765"],
)
def test_a_foreign_host_reads_and_writes_nothing(
    client: TestClient, small_ws: Path, run_id: str, labels_url: str, host: str
) -> None:
    """DNS rebinding: another site's name resolving to 127.0.0.1 still sends that name as Host."""
    page = client.get(f"/runs/{run_id}", headers={"Host": host})
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
    assert "Caroline" not in page.text and str(small_ws) not in page.text  # neither data nor its folder
    api = client.get("/api/runs", headers={"Host": host})
    assert api.status_code == 400 and "Host" in api.json()["error"]
    before = label_count(small_ws)
    write = client.post(labels_url, json={"error_type": "JudgeError"}, headers={"Host": host})
    assert write.status_code == 400 and label_count(small_ws) == before


def test_a_foreign_host_in_markup_is_escaped_in_the_refusal(client: TestClient) -> None:
    refused = client.get("/", headers={"Host": "<img src=x onerror=alert(1)>"})
    assert refused.status_code == 400 and "<img" not in refused.text and "&lt;img" in refused.text


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "LocalHost:8765", "[::1]:8765"])
def test_loopback_names_with_the_servers_port_are_answered(client: TestClient, host: str) -> None:
    assert client.get("/", headers={"Host": host}).status_code == 200


def test_another_interface_is_answered_only_when_the_ui_is_served_there(small_ws: Path) -> None:
    lan = create_app(small_ws, port=9000, host="192.168.1.5")
    try:
        assert TestClient(lan, base_url="http://192.168.1.5:9000").get("/api/runs").status_code == 200
        assert TestClient(lan, base_url="http://127.0.0.1:9000").get("/api/runs").status_code == 200
    finally:
        lan.state.ui.ws.close()
    assert "192.168.1.5:9000" not in allowed_hosts("127.0.0.1", 9000)
    assert allowed_hosts("0.0.0.0", 9000) == allowed_hosts("127.0.0.1", 9000)  # a wildcard names no host
    assert "[::1]:9000" in allowed_hosts("::1", 9000)
    assert "localhost" in allowed_hosts("127.0.0.1", 80)  # a browser leaves port 80 out


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://127.0.0.1:9999"},
        {"Origin": "https://127.0.0.1:8765"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": OWN, "Sec-Fetch-Site": "cross-site"},
    ],
)
def test_a_write_from_another_origin_is_forbidden(
    client: TestClient, small_ws: Path, labels_url: str, headers: dict[str, str]
) -> None:
    """A page on any other site may send the POST (a simple form needs no CORS); it must be refused."""
    kept = client.post(labels_url, json={"error_type": "UpdateError", "note": "kept"})
    assert kept.status_code == 201
    before = label_count(small_ws)
    post = client.post(labels_url, json={"error_type": "JudgeError", "note": "forged"}, headers=headers)
    assert post.status_code == 403 and "refused" in post.json()["error"]
    delete = client.delete(f"/api/annotations/{kept.json()['id']}", headers=headers)
    assert delete.status_code == 403
    assert label_count(small_ws) == before


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl, scripts: no browser, no Origin
        {"Origin": OWN, "Sec-Fetch-Site": "same-origin"},
        {"Origin": f"http://localhost:{PORT}"},
        {"Sec-Fetch-Site": "none"},
    ],
)
def test_a_write_from_the_ui_itself_is_accepted(
    client: TestClient, labels_url: str, headers: dict[str, str]
) -> None:
    created = client.post(labels_url, json={"error_type": "JudgeError"}, headers=headers)
    assert created.status_code == 201
    assert client.delete(f"/api/annotations/{created.json()['id']}", headers=headers).status_code == 204


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("GET", "/", {}, 200),
        ("GET", "/runs/{run}", {}, 200),
        ("GET", "/runs/{run}/memory?seq=3&since=1", {}, 200),
        ("GET", "/api/runs", {}, 200),
        ("GET", "/static/app.css", {}, 200),
        ("GET", "/static/memory.js", {}, 200),
        ("GET", "/runs/{run}/cases/nope", {}, 404),
        ("GET", "/api/runs/nope", {}, 404),
        ("GET", "/runs/{run}/memory?seq=x", {}, 400),
        ("GET", "/", {"Host": "rebind.example"}, 400),
        ("POST", "/api/runs/{run}/cases/x/annotations", {"Origin": "http://evil.example"}, 403),
    ],
)
def test_every_response_carries_the_content_policy_and_nosniff(
    client: TestClient, run_id: str, method: str, path: str, headers: dict[str, str], status: int
) -> None:
    response = client.request(method, path.format(run=run_id), headers=headers)
    assert response.status_code == status
    assert response.headers["x-content-type-options"] == "nosniff"
    policy = {d.split()[0]: d.split()[1:] for d in response.headers["content-security-policy"].split("; ")}
    assert policy["script-src"] == ["'self'"]  # no 'unsafe-inline': nothing in the data can run
    assert policy["object-src"] == ["'none'"] and policy["base-uri"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]


def test_a_crash_is_a_500_with_the_same_headers(small_ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug's 500 is sent outside the guard middleware; it must not lose the policy headers."""

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("memtrace.ui.app.run_rows", broken)
    app = create_app(small_ws, port=PORT)
    try:
        crashing = TestClient(app, base_url=OWN, raise_server_exceptions=False)
        for path in ("/", "/api/runs"):
            response = crashing.get(path)
            assert response.status_code == 500 and "a bug" not in response.text
            assert response.headers["x-content-type-options"] == "nosniff"
            assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert crashing.get("/api/runs").json()["error"].startswith("internal error")
    finally:
        app.state.ui.ws.close()


@pytest.mark.parametrize(
    "query",
    [
        "since=99999999999999999999999",
        f"seq={INT64_MAX + 1}",
        "seq=-1",
        "seq=abc",
        "seq=1.5",
        "since=",
    ],
)
def test_a_bad_memory_query_is_a_400_page(client: TestClient, run_id: str, query: str) -> None:
    """Not a 500 (SQLite's OverflowError) and not FastAPI's raw JSON 422 shown in the browser."""
    response = client.get(f"/runs/{run_id}/memory?{query}")
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html") and "<html" in response.text
    assert query.split("=")[0] in response.text


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"/api/runs/{{run}}/memory/diff?from=0&to={INT64_MAX + 1}"),
        ("GET", "/api/runs/{run}/memory/diff?from=-9223372036854775809&to=1"),
        ("GET", "/api/runs/{run}/memory/diff?from=x&to=1"),
        ("GET", "/api/runs/{run}/memory/diff?to=1"),
        ("GET", "/api/runs/{run}/memory?seq=99999999999999999999999"),
        ("GET", "/api/runs?replays=maybe"),
        ("DELETE", f"/api/annotations/{INT64_MAX + 1}"),
        ("DELETE", "/api/annotations/one"),
    ],
)
def test_a_bad_api_value_is_a_json_400(client: TestClient, run_id: str, method: str, path: str) -> None:
    response = client.request(method, path.format(run=run_id))
    assert response.status_code == 400 and response.json()["error"]


def test_the_largest_sqlite_integer_is_still_answered(client: TestClient, run_id: str) -> None:
    diff = client.get(f"/api/runs/{run_id}/memory/diff", params={"from": 0, "to": INT64_MAX})
    assert diff.status_code == 200 and diff.json()["to"] == INT64_MAX
    assert client.get(f"/runs/{run_id}/memory", params={"seq": INT64_MAX}).status_code == 200
    assert client.delete(f"/api/annotations/{INT64_MAX}").status_code == 404
    assert client.get("/?replays=maybe").status_code == 400


def test_a_malformed_label_body_stays_a_422(client: TestClient, labels_url: str) -> None:
    response = client.post(labels_url, json={"note": "no error type"})
    assert response.status_code == 422 and "error_type" in response.json()["error"]


def test_a_taken_port_is_one_line_and_no_url(small_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, out, err = run_cli_in_process(capsys, "ui", small_ws, "--port", str(port))
    assert code == 1
    assert "http://" not in out + err
    assert f"port {port}" in err and "taken" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_a_port_out_of_range_is_one_line(
    small_ws: Path, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    code, out, err = run_cli_in_process(capsys, "ui", small_ws, "--port", port)
    assert code == 1 and "http://" not in out + err
    assert "not a TCP port" in err and len(err.strip().splitlines()) == 1


class Announced(Exception):
    """Raised by the test's announce callback to stop serve() before uvicorn runs."""


def test_the_url_is_announced_only_once_the_port_listens(small_ws: Path) -> None:
    """Whoever opens the printed URL at once is connected: the socket listens before the line."""
    connected: list[str] = []

    def announce(url: str) -> None:
        host, port = url.removeprefix("http://").rstrip("/").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5):
            connected.append(url)
        raise Announced

    with pytest.raises(Announced):
        serve(small_ws, port=0, announce=announce)
    assert len(connected) == 1 and connected[0].startswith("http://127.0.0.1:")


def test_a_missing_workspace_prints_no_url_and_frees_the_port(tmp_path: Path) -> None:
    """The port is bound before the workspace opens; a bad folder must release it again."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    announced: list[str] = []
    with pytest.raises(WorkspaceError, match="not a memtrace workspace"):
        serve(tmp_path / "nowhere", port=port, announce=announced.append)
    assert announced == []
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))
