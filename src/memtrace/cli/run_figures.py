"""`memtrace run`'s accuracy table and JSON: each figure names the judge that produced it.

An LLM judge that accepted nonsense in its probe does not give the headline: the strict verdict on the
same answers does, and the LLM's figure stands beside it with the probe's warning (eval/headline.py).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from .consoles import styled

if TYPE_CHECKING:
    from ..eval import JudgeCheck, JudgeFigure
    from ..systems import RunResult


def token_f1(case: Any) -> float | None:
    """LoCoMo's token F1 of a case's answer, whatever judge gave the verdict (an LLM judge's score is
    1 or 0); None when an answerable question has no gold answer to score against."""
    from ..eval import score_answer

    try:
        return score_answer(case.prediction, case.gold, case.category)[0]
    except ValueError:
        return None


def system_figures(
    results: list[RunResult], kind: str, check: JudgeCheck | None
) -> dict[str, list[JudgeFigure]]:
    """Per system: the run judge's figure and, for an LLM judge, the strict verdict's; headline first."""
    from ..eval import Judged, judge_figures, strict_correct

    cases: dict[str, list[Any]] = defaultdict(list)
    for result in results:
        cases[result.system].extend(result.cases)
    out = {}
    for system, answers in cases.items():
        by_judge = [Judged(c.category, c.correct) for c in answers]
        by_strict = None
        if kind == "llm":  # a rule-based second opinion, free: the answers are already recorded
            by_strict = [
                Judged(c.category, strict_correct(c.question, c.gold, c.prediction, c.category))
                for c in answers
            ]
        out[system] = judge_figures(kind, by_judge, by_strict, check)
    return out


def accuracy_table(
    results: list[RunResult], kind: str = "strict", check: JudgeCheck | None = None
) -> tuple[Table, dict[str, Any]]:
    """Accuracy per system and question category by the headline judge (named in its own column), a
    second judge's figure beside it, the mean token F1 as a score, and wall time."""
    figures = system_figures(results, kind, check)
    f1: dict[str, list[float]] = defaultdict(list)
    seconds: dict[str, float] = defaultdict(float)
    failures: dict[str, list[str]] = defaultdict(list)
    for result in results:
        seconds[result.system] += result.seconds
        failures[result.system].extend(result.failures)
        f1[result.system].extend(s for case in result.cases if (s := token_f1(case)) is not None)
    categories = sorted({c for fs in figures.values() for c in fs[0].accuracy if c != "all"})
    beside = any(len(fs) > 1 for fs in figures.values())
    table = Table(title="Accuracy by system and question category", title_justify="left")
    table.add_column("system")
    for category in [*categories, "all"]:
        table.add_column(category, justify="right")
    table.add_column("judge")
    if beside:
        table.add_column("other judge", justify="right")
    for column in ("mean F1", "questions", "seconds"):
        table.add_column(column, justify="right")
    payload: dict[str, Any] = {}
    for system, (headline, *others) in figures.items():
        row, counts = headline.accuracy, headline.counts
        mean_f1 = sum(f1[system]) / len(f1[system]) if f1[system] else None
        payload[system] = {
            "accuracy": row,
            "accuracy_judge": headline.judge,
            "judges": {item.judge: item.to_dict() for item in (headline, *others)},
            "mean_f1": mean_f1,
            "questions": counts["all"],
            "seconds": seconds[system],
            "failed_operations": len(failures[system]),
            "failures": failures[system],
        }
        cells = [f"{row[c]:.3f} ({counts[c]})" if row.get(c) is not None else "-" for c in categories]
        table.add_row(
            system,
            *cells,
            styled("-" if row["all"] is None else f"{row['all']:.3f}", "bold"),
            headline.judge,
            *([other_cell(others)] if beside else []),
            "-" if mean_f1 is None else f"{mean_f1:.3f}",
            str(counts["all"]),
            f"{seconds[system]:.1f}",
        )
    return table, payload


def other_cell(others: list[JudgeFigure]) -> Text:
    """The second judge's overall figure and name, in red with "unreliable" when its probe failed."""
    if not others:
        return Text("-")
    other = others[0]
    value = "-" if other.accuracy.get("all") is None else f"{other.accuracy['all']:.3f}"
    if other.warning:
        return styled(f"{other.judge} {value} (unreliable)", "red")
    return Text(f"{other.judge} {value}")


def headline_note(payload: dict[str, Any], kind: str) -> str | None:
    """One line saying that the headline is not the run judge's, and why; None when it is."""
    moved = sorted(system for system, row in payload.items() if row["accuracy_judge"] != kind)
    if not moved:
        return None
    judge = payload[moved[0]]["accuracy_judge"]
    return (
        f"accuracy of {', '.join(moved)} is the {judge} verdict: the {kind} judge accepted nonsense answers "
        f"in its probe, so its figure is shown beside it (other judge), not as the headline"
    )
