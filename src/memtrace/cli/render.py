"""Rich tables for what `memtrace inspect` shows: runs, operations, memory units, cases."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from rich.table import Table
from rich.text import Text

from ..graph import Graph, Run, Workspace
from ..graph.rows import RunCounts
from ..graph.values import value_text
from ..vocabulary import CaseVerdict
from .consoles import styled


def short(value: Any, width: int = 60) -> str:
    """One line of a value, cut to `width` characters."""
    text = " ".join(value_text(value).split()) if value is not None else ""
    return text if len(text) <= width else text[: width - 1] + "…"


def run_summaries(ws: Workspace) -> list[dict[str, Any]]:
    """Per-run counts for the runs table (and for --json)."""
    counts = ws.store.run_counts()
    out = []
    for run in ws.runs():
        row = {
            "id": run.id,
            "name": run.name,
            "system": run.system,
            "status": run.status,
            "error": run.error,
            "parent_run": run.parent_run,
        }
        sizes = counts.get(run.id, RunCounts())
        row.update(
            ops=sizes.ops, versions=sizes.versions, units=sizes.units, cases=sizes.cases, failed=sizes.failed
        )
        out.append(row)
    return out


def runs_table(summaries: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("run", "name", "system", "status", "ops", "versions", "units", "cases", "failed"):
        table.add_column(column, justify="right" if column in ("ops", "versions", "units") else "left")
    for row in summaries:
        status = row["status"]
        if status == "incomplete":
            status = Text.assemble(styled("incomplete", "red"), f": {short(row['error'], 40)}")
        elif status == "running":
            status = styled("running / not closed", "yellow")
        table.add_row(
            row["id"],
            row["name"],
            row["system"] or "",
            status,
            str(row["ops"]),
            str(row["versions"]),
            str(row["units"]),
            str(row["cases"]),
            styled(str(row["failed"]), "red") if row["failed"] else "0",
        )
    return table


def operations_summary(graph: Graph) -> list[dict[str, Any]]:
    """Operations grouped by category with their names and counts."""
    by_category: dict[str, Counter[str]] = defaultdict(Counter)
    for op in graph.store.ops(graph.run.id):
        by_category[op.category][op.name] += 1
    return [
        {"category": category, "count": sum(names.values()), "names": dict(names.most_common())}
        for category, names in sorted(by_category.items(), key=lambda item: -sum(item[1].values()))
    ]


def operations_table(summary: list[dict[str, Any]]) -> Table:
    table = Table(title="Operations by category", title_justify="left")
    table.add_column("category")
    table.add_column("count", justify="right")
    table.add_column("operations")
    for row in summary:
        names = ", ".join(f"{name} ({n})" for name, n in list(row["names"].items())[:6])
        table.add_row(row["category"], str(row["count"]), names)
    return table


def units_summary(graph: Graph, limit: int) -> list[dict[str, Any]]:
    """Memory units with their lifecycle: versions, the operations that changed them, final state."""
    rows = []
    for name in graph.memory_units()[:limit]:
        life = graph.lifecycle(name)
        last = life[-1]
        live = [e for e in life if e.change != "delete"]
        rows.append(
            {
                "unit": name,
                "versions": len(life),
                "lifecycle": [e.change for e in life],
                "ops": [e.op.id if e.op else None for e in life],
                "state": "deleted" if last.change == "delete" else "live",
                "value": live[-1].value if live else None,
            }
        )
    return rows


def units_table(summary: list[dict[str, Any]], total: int) -> Table:
    shown = f" (first {len(summary)} of {total})" if total > len(summary) else ""
    table = Table(title=f"Memory units by lifecycle{shown}", title_justify="left")
    for column in ("unit", "versions", "lifecycle (op seq)", "state", "latest value"):
        table.add_column(column)
    for row in summary:
        steps = " → ".join(
            f"{change} {op.rsplit('#', 1)[-1] if '#' in op else op}" if op else change
            for change, op in zip(row["lifecycle"], row["ops"], strict=True)
        )
        state = styled("deleted", "red") if row["state"] == "deleted" else styled("live", "green")
        table.add_row(row["unit"], str(row["versions"]), steps, state, short(row["value"], 50))
    return table


def cases_table(cases: list[Any], title: str = "Cases") -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("case", "question", "gold", "prediction", "verdict"):
        table.add_column(column)
    for case in cases:
        verdict: str | Text = case.verdict or "not judged"
        if verdict == CaseVerdict.WRONG:
            verdict = styled(CaseVerdict.WRONG, "red")
        elif verdict == CaseVerdict.CORRECT:
            verdict = styled(CaseVerdict.CORRECT, "green")
        table.add_row(
            case.id,
            short(case.question, 50),
            short(" | ".join(case.gold), 30),
            short(case.prediction, 30),
            verdict,
        )
    return table


def run_header(run: Run) -> Text:
    parts = [f"({run.id})", f"system={run.system or '-'}", f"status={run.status}"]
    if run.dataset:
        parts.append(f"dataset={run.dataset}")
    if run.error:
        parts.append(f"error={run.error}")
    return Text.assemble(styled(run.name, "bold"), " ", "  ".join(parts))


def suspects_table(
    rows: list[tuple[str, str, str, str]], where: str, note: str = "kept out of the error counts"
) -> Table:
    """Suspected annotation errors, one row each: (run or system, case, gold, reason). They are no
    memory fault, so every command shows them apart from the error counts."""
    table = Table(
        title=f"Suspected annotation errors: {len(rows)} ({note})",
        title_justify="left",
    )
    for column in (where, "case", "gold", "reason"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    return table
