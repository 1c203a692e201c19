"""Stored data is text, never markup: a run whose names, questions, memories, dates and labels are
HTML attacks renders on every page as escaped text. Turning the UI's Jinja autoescape off fails this.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

import memtrace as mt
from memtrace.ui import create_app

PORT = 8765
SCRIPT = '<script>alert("stored")</script>'
IMAGE = '"><img src=x onerror=alert(1)>'
QUOTE = "' onmouseover='alert(2)' x='"
SVG = '"onerror=alert(3)><svg onload=alert(4)>'
PAYLOADS = (SCRIPT, IMAGE, QUOTE, SVG)


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, as a browser's tokenizer would split them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.script_text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.script_text.append(data)


def injected(page: str) -> list[str]:
    """What of the page a browser would run or fetch that the templates never write."""
    parser = Tags()
    parser.feed(page)
    found = [f"inline script {text[:60]!r}" for text in parser.script_text]
    for tag, attrs in parser.tags:
        if tag in ("img", "iframe", "object", "embed"):  # the case page's timeline is an <svg> of its own
            found.append(f"<{tag}>")
        if tag == "script" and not (attrs.get("src") or "").startswith("/static/"):
            found.append(f"script from {attrs.get('src')!r}")
        found += [f"{tag} {name}=" for name in attrs if name.startswith("on")]
    return found


@pytest.fixture(scope="module")
def hostile_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose every recorded text that a page shows is one of the PAYLOADS."""
    path = tmp_path_factory.mktemp("escaping") / "ws"
    with mt.run(path, name=SCRIPT, system="toy", dataset=IMAGE) as run:
        with mt.op("ingest", category="construction") as op:
            op.output("date", SVG, category="session_date")
            message = op.output("message", IMAGE, category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(message)
            run.memory("mem-1").create({"memory": SCRIPT}, by=op)
            run.memory("mem-2").create({"memory": QUOTE}, by=op)
        with mt.op("update_memory", category="update") as op:
            run.memory("mem-1").update({"memory": f"{SCRIPT} {IMAGE}"}, by=op)
        with mt.op("delete_memory", category="deletion") as op:
            run.memory("mem-2").delete(by=op)
        with mt.op("search", category="retrieval") as op:
            op.input("query", SCRIPT, category="query")
            op.output("retrieved", [IMAGE, SVG], category="retrieved")
        with mt.op("answer", category="response") as op:
            op.input("retrieved", [IMAGE, SVG], category="retrieved")
            prediction = op.output("prediction", QUOTE, category="prediction")
        case = run.case(SCRIPT, gold=IMAGE, evidence=["D1:1"], category=SVG)
        case.predict(QUOTE, var=prediction)
        case.judge(False, score=0.0)
    return path


@pytest.fixture(scope="module")
def client(hostile_ws: Path) -> Iterator[TestClient]:
    app = create_app(hostile_ws, port=PORT)
    client = TestClient(app, base_url=f"http://127.0.0.1:{PORT}")
    (run,) = client.get("/api/runs").json()
    (case,) = client.get(f"/api/runs/{run['id']}/cases").json()
    label = {"error_type": "JudgeError", "note": SCRIPT + QUOTE, "author": IMAGE}
    assert client.post(f"/api/runs/{run['id']}/cases/{quote(case['id'])}/annotations", json=label).is_success
    yield client
    app.state.ui.ws.close()


def pages(client: TestClient) -> list[str]:
    """Every page the hostile run has: runs, cases, the case, each operation, memory with a diff."""
    (run,) = client.get("/api/runs").json()
    r = quote(run["id"])
    (case,) = client.get(f"/api/runs/{r}/cases").json()
    graph = client.get(f"/api/runs/{r}/cases/{quote(case['id'])}/graph").json()
    ops = sorted(n["data"]["id"] for n in graph["nodes"] if "op" in n["classes"].split())
    assert ops, "the case's subgraph has operations"
    memory = client.get(f"/api/runs/{r}/memory").json()
    return [
        "/",
        f"/runs/{r}",
        f"/runs/{r}?verdict=wrong&q=alert",
        f"/runs/{r}/cases/{quote(case['id'])}",
        *(f"/runs/{r}/ops/{quote(op, safe='')}" for op in ops),
        f"/runs/{r}/memory?since=0",
        f"/runs/{r}/memory?seq={memory['max_seq'] // 2}&since={memory['max_seq']}",
    ]


def test_stored_markup_is_shown_as_text_on_every_page(client: TestClient) -> None:
    shown: set[str] = set()
    for path in pages(client):
        response = client.get(path)
        assert response.status_code == 200, path
        assert injected(response.text) == [], path
        assert not any(p in response.text for p in PAYLOADS), path  # each only ever escaped
        text = html.unescape(response.text)
        shown |= {p for p in PAYLOADS if p in text}
    assert shown == set(PAYLOADS)  # every attack reached a page, as text


@pytest.mark.parametrize("payload", [IMAGE, QUOTE, SVG])  # a "/" would not reach the route
def test_markup_in_the_url_is_escaped_on_the_error_page(client: TestClient, payload: str) -> None:
    (run,) = client.get("/api/runs").json()
    response = client.get(f"/runs/{quote(run['id'])}/cases/{quote(payload, safe='')}")
    assert response.status_code == 404
    assert injected(response.text) == [] and payload not in response.text
    assert payload in html.unescape(response.text)


def test_the_pages_have_no_inline_script_or_handler(client: TestClient) -> None:
    """The content policy allows scripts from /static only; a page relying on inline code breaks."""
    for path in pages(client):
        parser = Tags()
        parser.feed(client.get(path).text)
        assert parser.script_text == [], path
        assert [(t, a) for t, attrs in parser.tags for a in attrs if a.startswith("on")] == [], path
