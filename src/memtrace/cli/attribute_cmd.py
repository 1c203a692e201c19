"""`memtrace attribute`: attribute every failed case and print what failed where."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.table import Table

from ..attribution.model import Attribution
from ..graph import Workspace
from ..vocabulary import ErrorType
from .consoles import styled
from .render import short


def attribution_table(ws: Workspace, attributions: list[Attribution], title: str) -> Table:
    """Case, question, error type, operation (name and seq), confidence."""
    cases = {(c.run_id, c.id): c for c in ws.cases()}
    table = Table(title=title, title_justify="left")
    for column in ("run", "case", "question", "error type", "operation", "seq", "conf."):
        table.add_column(column, justify="right" if column in ("seq", "conf.") else "left")
    graphs: dict[str, Any] = {}
    for item in attributions:
        case = cases.get((item.run_id, item.case_id))
        graph = graphs.setdefault(item.run_id, ws.graph(item.run_id))
        op = graph.op(item.op_id) if item.op_id and graph.has_op(item.op_id) else None
        kind = item.error_type if item.determined else styled(item.error_type, "yellow")
        table.add_row(
            graph.run.name,
            item.case_id,
            short(case.question if case else "", 46),
            kind,
            op.name if op else "-",
            str(op.seq) if op else "-",
            f"{item.confidence:.2f}",
        )
    return table


def grouped_table(ws: Workspace, attributions: list[Attribution], title: str) -> Table:
    """Counts by system, error type and operation name: what a long list of cases comes down to."""
    runs = {r.id: r for r in ws.runs()}
    graphs: dict[str, Any] = {}
    groups: Counter[tuple[str, str, str]] = Counter()
    for item in attributions:
        graph = graphs.setdefault(item.run_id, ws.graph(item.run_id))
        op = graph.op(item.op_id) if item.op_id and graph.has_op(item.op_id) else None
        run = runs.get(item.run_id)
        system = (run.system or run.name) if run else item.run_id
        groups[(system, item.error_type, op.name if op else "-")] += 1
    table = Table(title=title, title_justify="left")
    for column in ("system", "error type", "operation", "cases"):
        table.add_column(column, justify="right" if column == "cases" else "left")
    for (system, kind, op_name), count in sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1])):
        table.add_row(
            system, kind if kind != ErrorType.UNDETERMINED else styled(kind, "yellow"), op_name, str(count)
        )
    return table


def summary_line(attributions: list[Attribution]) -> str:
    counts = Counter(a.error_type for a in attributions)
    return ", ".join(f"{kind}: {n}" for kind, n in counts.most_common()) or "no failed cases"
