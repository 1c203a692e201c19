"""What `memtrace verify` prints: confirmed shares first, elimination beside them, reasons for the rest.

The headline never sums levels into one "verified" number: flow-confirmed and answer-confirmed are
shares of the claims a repair can test (every determined error type but ResponseError); by
elimination is a share of the ResponseErrors; what fell short is counted by its reason.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ..vocabulary import NOT_VERIFIED, VERDICTS, ErrorType


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def headline(summary: dict[str, Any]) -> str:
    """One line: the confirmed shares of replayable claims, and elimination of ResponseErrors apart."""
    claims, responses = summary["claims"], summary["responses"]
    return (
        f"Claims a repair can test: {claims}; flow-confirmed {_share(summary['flow_confirmed'], claims)} "
        f"({summary['flow_confirmed']}), answer-confirmed {_share(summary['answer_confirmed'], claims)} "
        f"({summary['answer_confirmed']}). Beside them, ResponseErrors by elimination (carrying part named): "
        f"{summary['by_elimination']} of {responses} ({_share(summary['by_elimination'], responses)})."
    )


def verdict_table(summary: dict[str, Any], title: str) -> Table:
    """Per error type: verdict counts and the two confirmation levels."""
    table = Table(title=title, title_justify="left")
    columns = ["error type", *VERDICTS, NOT_VERIFIED, "flow-confirmed share", "answer-confirmed share"]
    for column in columns:
        table.add_column(column, justify="left" if column == "error type" else "right")
    for kind, counts in summary["by_type"].items():
        total = counts.get("total", 0)
        replayable = kind not in (ErrorType.RESPONSE, ErrorType.UNDETERMINED)
        table.add_row(
            kind,
            *(str(counts.get(v, 0)) for v in (*VERDICTS, NOT_VERIFIED)),
            _share(counts.get("flow_confirmed", 0), total) if replayable else "-",
            _share(counts.get("answer_confirmed", 0), total) if replayable else "-",
        )
    return table


def reasons_table(summary: dict[str, Any]) -> Table | None:
    """Why the attributions that are neither confirmed nor by elimination fell short, counted."""
    if not summary["reasons"]:
        return None
    table = Table(title="Not confirmed, by reason", title_justify="left")
    table.add_column("error type: reason")
    table.add_column("attributions", justify="right")
    for reason, count in summary["reasons"].items():
        table.add_row(reason, str(count))
    return table
