"""The UI in a real browser: Python Playwright driving Debian's chromium against a live uvicorn server.

`.ci/run` installs chromium (apt); without /usr/bin/chromium these tests skip with the reason.
Playwright's own browser download (`playwright install`) is never used.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import uvicorn

from memtrace.graph import Workspace
from memtrace.ui import create_app
from memtrace.ui.server import HOST, free_port

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="needs Debian's chromium (apt-get install -y --no-install-recommends chromium);"
    " .ci/run installs it",
)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launch the system chromium, never a Playwright-downloaded build."""
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
        ],
    }


@pytest.fixture(scope="module")
def live_url(sample_ws: Path) -> Iterator[str]:
    """The app served by uvicorn from a thread on a free loopback port."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(sample_ws, port=port), host=HOST, port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the UI server did not start")
        time.sleep(0.05)
    yield f"http://{HOST}:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def blamed_case(sample_ws: Path) -> tuple[str, str, str]:
    """(run id, case id, blamed op id) of a failed case whose attribution names an operation."""
    from memtrace.attribution.model import load_attributions

    with Workspace(sample_ws) as ws:
        (run,) = [r for r in ws.runs() if not r.parent_run]
        found = [a for a in load_attributions(ws.store, run.id) if a.op_id]
    found.sort(key=lambda a: a.verified is None)
    return run.id, found[0].case_id, found[0].op_id  # type: ignore[return-value]


def test_failed_case_walkthrough(
    page: Any, live_url: str, blamed_case: tuple[str, str, str], output_path: str
) -> None:
    """Open a failed case from the cases table, see the blamed operation highlighted, open it,
    label the case, reload and find the label; every request goes to the app itself."""
    run_id, case_id, op_id = blamed_case
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))

    page.goto(f"{live_url}/runs/{quote(run_id)}?verdict=wrong")
    started = time.perf_counter()
    page.click(f"a[href$='/cases/{quote(case_id)}']:text('{case_id}')")
    page.wait_for_selector("#graph.ready", timeout=20_000)
    render_seconds = time.perf_counter() - started

    assert page.inner_text("#blamed-op") == op_id
    highlighted = page.evaluate("window.caseGraph.nodes('.blamed').map(n => n.id())")
    assert highlighted == [op_id]
    assert page.evaluate("window.caseGraph.edges('.path').length") >= 1
    assert page.locator("#timeline .lane").count() >= 1
    out = Path(output_path)
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / "case-page.png"), full_page=True)
    (out / "timings.json").write_text(json.dumps({"case_page_seconds": render_seconds}))

    page.click("#blamed-op")
    page.wait_for_selector("#op-title")
    assert page.inner_text("#op-title") == op_id
    page.go_back()
    page.wait_for_selector("#annotation-form")

    note = f"checked by hand {time.time():.0f}"
    page.select_option("#annotation-form select[name=error_type]", "JudgeError")
    page.fill("#annotation-form textarea[name=note]", note)
    page.fill("#annotation-form input[name=author]", "playwright")
    page.click("#annotation-form button[type=submit]")
    # A selector, not wait_for_function: the page's Content-Security-Policy forbids evaluating strings.
    page.locator("#annotation-status", has_text="saved").wait_for()
    page.reload()
    page.wait_for_selector("#annotations li")
    labels = page.inner_text("#annotations")
    assert note in labels and "JudgeError" in labels

    step = page.locator("#next-failure, #previous-failure").first
    target = step.get_attribute("href")
    assert target and not target.endswith(f"/cases/{quote(case_id)}")
    step.click()
    page.wait_for_url(f"{live_url}{target}")
    page.wait_for_selector("#graph.ready", timeout=20_000)
    assert page.locator(".verdict.big").inner_text() == "wrong"

    assert requested, "the page made requests"
    foreign = [url for url in requested if not url.startswith(live_url + "/")]
    assert foreign == []


def test_memory_slider_moves_through_seqs(
    page: Any, live_url: str, blamed_case: tuple[str, str, str]
) -> None:
    """Releasing the slider loads the memory state at that seq."""
    run_id = blamed_case[0]
    page.goto(f"{live_url}/runs/{quote(run_id)}/memory?seq=0")
    assert page.inner_text("#seq-now") == "0"
    slider = page.locator("#seq")
    box = slider.bounding_box()
    assert box is not None
    with page.expect_navigation():
        page.mouse.click(box["x"] + box["width"] * 0.6, box["y"] + box["height"] / 2)
    assert int(page.inner_text("#seq-now")) > 0
    assert page.locator("#state tbody tr").count() > 0


def test_pages_work_under_the_content_policy(
    page: Any, live_url: str, blamed_case: tuple[str, str, str]
) -> None:
    """The CSP allows no inline script: the controls moved to /static still act, and no page logs a
    refusal (a leftover inline handler or script would)."""
    run_id, case_id, op_id = blamed_case
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: refused.append(str(error)))

    page.goto(f"{live_url}/")
    assert "script-src 'self'" in page.evaluate(
        "fetch('/').then(r => r.headers.get('content-security-policy'))"
    )
    with page.expect_navigation():
        page.check("#show-replays")
    assert page.url.endswith("?replays=true")

    page.goto(f"{live_url}/runs/{quote(run_id)}")
    with page.expect_navigation():
        page.click(".seg label:has(input[value=wrong])")
    assert "verdict=wrong" in page.url
    kind = page.locator("select[name=error_type] option").nth(1).get_attribute("value")
    with page.expect_navigation():
        page.select_option("select[name=error_type]", kind)
    assert f"error_type={kind}" in page.url

    page.goto(f"{live_url}/runs/{quote(run_id)}/memory")
    assert page.inner_text("#session-at"), "the slider names the session it stands in"
    page.goto(f"{live_url}/runs/{quote(run_id)}/cases/{quote(case_id)}")
    page.wait_for_selector("#graph.ready", timeout=20_000)
    page.goto(f"{live_url}/runs/{quote(run_id)}/ops/{quote(op_id, safe='')}")
    page.wait_for_selector("#op-title")
    assert refused == []
