"""Time for the case page to render in Chromium (graph laid out) on the largest run of a workspace.

    .venv/bin/python benchmarks/ui_browser.py /tmp/uiws [--cases 8]

Serves the app with uvicorn on a free loopback port, drives Debian's /usr/bin/chromium with
Playwright, opens the run's cases page (untimed, as a person arrives), then for several failed
cases of the largest run measures navigation start to the evidence graph being laid out
(`#graph.ready`), plus the graph's node count. Screenshots go to
benchmarks/out/ui/. Goal (issue 15): under 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from pathlib import Path
from urllib.parse import quote

import uvicorn
from playwright.sync_api import sync_playwright
from rich.console import Console
from rich.table import Table

from memtrace.attribution.model import load_attributions
from memtrace.graph import Workspace
from memtrace.ui import create_app
from memtrace.ui.server import HOST, free_port

try:
    from _common import code_version, goal_status
    from ui_pages import largest_run
except ImportError:  # run from elsewhere
    from benchmarks._common import code_version, goal_status
    from benchmarks.ui_pages import largest_run

GOAL_SECONDS = 2.0
OUT = Path(__file__).parent / "out" / "ui"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--cases", type=int, default=8)
    args = parser.parse_args()
    with Workspace(args.workspace) as ws:
        run_id = largest_run(ws)
        attributions = [a for a in load_attributions(ws.store, run_id) if a.op_id]
    attributions.sort(key=lambda a: (a.verified is None, a.error_type == "ResponseError"))
    cases = [a.case_id for a in attributions[: args.cases]]
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(args.workspace, port=port), host=HOST, port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://{HOST}:{port}"
    OUT.mkdir(parents=True, exist_ok=True)
    table = Table(title=f"Case page in Chromium: run {run_id}")
    for column in ("case", "nodes", "lanes", "render s", "goal"):
        table.add_column(column, justify="left" if column in ("case", "goal") else "right")
    seconds = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
            ],
        )
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        # People reach a case from its run's cases page: the browser and server are warm by then.
        page.goto(f"{base}/runs/{quote(run_id)}?verdict=wrong")
        for i, case_id in enumerate(cases):
            started = time.perf_counter()
            page.goto(f"{base}/runs/{quote(run_id)}/cases/{quote(case_id)}")
            page.wait_for_selector("#graph.ready", timeout=30_000)
            took = time.perf_counter() - started
            seconds.append(took)
            nodes = page.get_attribute("#graph", "data-nodes")
            lanes = page.locator("#timeline .lane").count()
            if i < 2:
                page.screenshot(path=str(OUT / f"case-{i}.png"), full_page=True)
            table.add_row(case_id, nodes or "?", str(lanes), f"{took:.2f}", goal_status(took < GOAL_SECONDS))
        browser.close()
    server.should_exit = True
    thread.join(timeout=10)
    console = Console()
    console.print(table)
    console.print(
        f"median {statistics.median(seconds):.2f} s, slowest {max(seconds):.2f} s"
        f" (goal {GOAL_SECONDS:.0f} s), code {code_version()}"
    )


if __name__ == "__main__":
    main()
