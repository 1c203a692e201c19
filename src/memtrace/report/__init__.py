"""The diagnostic report of a workspace: headline numbers, charts, the evidence funnel, failures over
conversation time and failure patterns, written as report.json (the source of truth), report.md and a
self-contained report.html; optionally with a narrative an LLM writes from the structured report.

    from memtrace.report import build_report, write_report
    with mt.open("ws/") as ws:
        report = build_report(ws)                 # runs=[...] and method="agent" to choose
    paths = write_report(report, "out/")         # {"json": ..., "md": ..., "html": ...}
"""

from __future__ import annotations

from pathlib import Path

from .build import build_report, select_runs
from .model import Report
from .narrative import write_narrative
from .render_html import render_html
from .render_md import render_markdown

FILES = {"json": "report.json", "md": "report.md", "html": "report.html"}


def write_report(report: Report, out: str | Path) -> dict[str, Path]:
    """Write report.json, report.md and report.html into `out` (created if needed)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {kind: folder / name for kind, name in FILES.items()}
    paths["json"].write_text(report.model_dump_json(indent=2), encoding="utf-8")
    paths["md"].write_text(render_markdown(report), encoding="utf-8")
    paths["html"].write_text(render_html(report), encoding="utf-8")
    return paths


def load_report(path: str | Path) -> Report:
    """A report read back from its report.json (or the folder holding it)."""
    file = Path(path)
    if file.is_dir():
        file = file / FILES["json"]
    return Report.model_validate_json(file.read_text(encoding="utf-8"))


__all__ = [
    "FILES",
    "Report",
    "build_report",
    "load_report",
    "render_html",
    "render_markdown",
    "select_runs",
    "write_narrative",
    "write_report",
]
