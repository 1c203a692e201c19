"""`memtrace bench faults`: inject labelled faults, keep those that flip the answer, score attributors.

Runs each system on the dataset, plans injections on correctly answered cases (faults.py),
replays each one, keeps the flips, attributes them with every method, and reports operation and
error-type accuracy per method, system and error type, with a confusion matrix. The JSON lists each
labelled case (what was injected where, what each method named) and, per system, the cases kept of
those planned for every error type it can make, naming the types that fell short and why. With
`memtracebench` the labelled cases are also written in the MemTraceBench layout.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ..attribution.engine import make_method
from ..datasets import load_dataset
from ..errors import MemtraceError
from ..graph import Workspace
from ..graph.journal import ingest_journal, journal_path
from ..interop import export_smartcomment
from ..progress import Progress, no_progress
from ..systems import run_conversation
from ..systems.registry import system_class
from ..systems.replay import replay
from ..text import safe_filename
from ..vocabulary import CaseVerdict, ErrorType
from .faults import Injection, Injector


def fault_benchmark(
    systems: list[str],
    dataset: str,
    workspace: Path,
    out: Path,
    *,
    per_type: int = 10,
    seed: int = 0,
    methods: list[str] | None = None,
    conversations: int | None = None,
    llm: Any = None,
    progress: Progress | None = None,
    memtracebench: bool = False,
    keep_replays: bool = False,
) -> dict[str, Any]:
    """Inject, replay, keep flips, attribute, score; write JSON and a plot (and, when asked, the
    MemTraceBench layout and the labelled replays).

    Each replay is attributed as soon as it flips and then dropped from the workspace (unless
    `keep_replays`): a replay read back holds a full copy of its run, and hundreds of them made the
    workspace gigabytes. `result["written"]` lists what was written where.
    """
    if per_type < 1:  # it would record every system and label nothing
        raise MemtraceError(f"--per-type must be 1 or more, not {per_type}")
    report = progress or no_progress
    methods = methods or ["flow", "last-op", "random"]
    coverage: dict[str, dict[str, dict[str, int]]] = {}
    attributors = {name: make_method(name, llm=llm, seed=seed) for name in methods}
    data = load_dataset(dataset, conversations=conversations)
    rng = random.Random(seed)
    labelled: list[tuple[str, Injection]] = []
    rows: dict[str, list[tuple[str, Injection, Any]]] = {name: [] for name in methods}
    layout = out / "memtracebench"
    out.mkdir(parents=True, exist_ok=True)
    for system_name in systems:
        cls = system_class(system_name)
        runs = []
        report(f"{system_name}: recording", 0, len(data))
        for conversation in data:
            runs.append(run_conversation(cls(llm=llm), conversation, workspace, dataset=dataset))
            report(f"{system_name}: recording", len(runs), len(data))
        plans = _plans(workspace, runs)
        rng.shuffle(plans)
        kept: Counter[str] = Counter()
        counts = coverage[system_name] = _coverage_start(workspace, runs, plans)
        report(f"{system_name}: injecting", 0, len(plans))
        with Workspace(workspace) as ws:
            for tried, injection in enumerate(plans, 1):
                report(f"{system_name}: injecting", tried, len(plans))
                if kept[injection.error_type] >= per_type:
                    continue
                result = replay(ws, injection.run_id, injection.patch, cases=[injection.case_id], llm=llm)
                injection.replay_run = result.run_id
                injection.flipped = not result.case(injection.case_id).correct and bool(result.patched)
                counts[injection.error_type]["tried"] += 1
                if injection.flipped:
                    kept[injection.error_type] += 1
                    counts[injection.error_type]["kept"] += 1
                    labelled.append((system_name, injection))
                    ingest_journal(ws.store, journal_path(ws.path, result.run_id))
                    if "deleted_unit" in injection.meta:
                        injection.op_id = _deletion_step(ws, injection)
                    for name, method in attributors.items():
                        rows[name].append((system_name, injection, _attribute(ws, method, injection)))
                    if memtracebench:
                        _write_memtracebench(ws, system_name, injection, layout)
                if not (injection.flipped and keep_replays):
                    _discard(ws, result.run_id)
    result = {
        "dataset": dataset,
        "seed": seed,
        "per_type": per_type,
        "methods": methods,
        "labelled": len(labelled),
        "results": {name: _accuracy(method_rows) for name, method_rows in rows.items()},
        "coverage": coverage,
        "missing": _missing(coverage, per_type),
        "cases": _case_rows(labelled, rows),
    }
    (out / "faults.json").write_text(json.dumps(result, indent=2))
    _plot(result, out / "faults.png")
    written = [out / "faults.json", out / "faults.png", workspace, *([layout] if memtracebench else [])]
    result["written"] = {str(path): _size(path) for path in written if path.exists()}
    return result


def _plans(workspace: Path, runs: list[Any]) -> list[Injection]:
    plans: list[Injection] = []
    with Workspace(workspace) as ws:
        for run in runs:
            graph = ws.view(run.run_id)
            injector = Injector(graph)
            for case in ws.cases(run.run_id):
                if case.verdict == CaseVerdict.CORRECT:
                    plans.extend(injector.plan(case))
    return plans


_EXHIBITED_BY = {  # operation categories that let a system make each error type
    ErrorType.EXTRACTION: ("extraction",),
    ErrorType.UPDATE: ("update",),
    ErrorType.DELETION: ("update", "deletion"),
    ErrorType.RETRIEVAL: ("retrieval",),
    ErrorType.RESPONSE: ("response",),
}


def _coverage_start(workspace: Path, runs: list[Any], plans: list[Injection]) -> dict[str, dict[str, int]]:
    """Per error type the system can make: how many injections were planned (then tried and kept).

    A type counts as one the system can make when its recorded runs hold an operation of a category
    that makes it, or when an injection of it could be planned (long context extracts in `update`)."""
    with Workspace(workspace) as ws:
        categories = {op.category for run in runs for op in ws.store.ops(run.run_id)}
    planned = Counter(p.error_type for p in plans)
    return {
        str(kind): {"planned": planned[kind], "tried": 0, "kept": 0}
        for kind, made_by in _EXHIBITED_BY.items()
        if planned[kind] or categories.intersection(made_by)
    }


def _missing(coverage: dict[str, dict[str, dict[str, int]]], per_type: int) -> list[dict[str, Any]]:
    """Error types a system can make that got fewer labelled cases than asked, with why."""
    missing = []
    for system_name, kinds in coverage.items():
        for kind, n in kinds.items():
            if n["kept"] >= per_type:
                continue
            if not n["planned"]:
                why = "no correct answer admitted such an injection"
            else:
                tried = f"{n['kept']} of {n['tried']} tried injections"
                why = f"{tried} flipped the answer ({n['planned']} planned)"
            missing.append({"system": system_name, "error_type": kind, "kept": n["kept"], "why": why})
    return missing


def _case_rows(
    labelled: list[tuple[str, Injection]], rows: dict[str, list[tuple[str, Injection, Any]]]
) -> list[dict[str, Any]]:
    """One row per labelled case: what was injected where, and what each method named."""
    picks = {name: {id(i): got for _, i, got in method_rows} for name, method_rows in rows.items()}
    return [
        {
            "system": system_name,
            "run": injection.run_id,
            "case": injection.case_id,
            "injected_type": str(injection.error_type),
            "injected_op": injection.op_id,
            "injection": injection.description,
            "predicted": {
                name: {"op": got.op_id, "type": str(got.error_type)}
                for name, by_injection in picks.items()
                if (got := by_injection.get(id(injection))) is not None
            },
        }
        for system_name, injection in labelled
    ]


def _deletion_step(ws: Workspace, injection: Injection) -> str:
    """The step of the replay that deleted the unit inside the injected decision (the true label)."""
    assert injection.replay_run is not None
    unit = injection.meta["deleted_unit"]
    for op in ws.store.ops(injection.replay_run):
        if op.parent_op == injection.op_id and op.category == "deletion" and op.metadata.get("unit") == unit:
            return op.id
    return injection.op_id  # the decision deleted it itself


def _attribute(ws: Workspace, method: Any, injection: Injection) -> Any:
    """One method's attribution of an injected failure, read from its (just ingested) replay."""
    assert injection.replay_run is not None
    graph = ws.view(injection.replay_run)
    case = ws.case(injection.replay_run, injection.case_id)
    return method.attribute(graph, case)


def _discard(ws: Workspace, run_id: str) -> None:
    """Drop a replay from the workspace: its rows, and its journal if not yet ingested."""
    ws.store.delete_run(run_id)
    journal_path(ws.path, run_id).unlink(missing_ok=True)


def _size(path: Path) -> int:
    """Bytes on disk of a file or a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _accuracy(rows: list[tuple[str, Injection, Any]]) -> dict[str, Any]:
    def summary(items: list[tuple[str, Injection, Any]]) -> dict[str, Any]:
        n = len(items)
        return {
            "cases": n,
            "op_accuracy": sum(g.op_id == i.op_id for _, i, g in items) / n if n else None,
            "type_accuracy": sum(g.error_type == i.error_type for _, i, g in items) / n if n else None,
            "undetermined": sum(g.error_type == ErrorType.UNDETERMINED for _, _, g in items),
        }

    by_system: dict[str, list] = defaultdict(list)
    by_type: dict[str, list] = defaultdict(list)
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        by_system[row[0]].append(row)
        by_type[row[1].error_type].append(row)
        confusion[row[1].error_type][row[2].error_type] += 1
    return {
        "all": summary(rows),
        "by_system": {k: summary(v) for k, v in sorted(by_system.items())},
        "by_type": {k: summary(v) for k, v in sorted(by_type.items())},
        "confusion": {k: dict(v) for k, v in sorted(confusion.items())},
    }


def _write_memtracebench(ws: Workspace, system_name: str, injection: Injection, root: Path) -> None:
    """The replayed run as a smartcomment graph with its injected fault as the gold annotation."""
    assert injection.replay_run is not None
    case = ws.case(injection.replay_run, injection.case_id)
    graph = ws.graph(injection.replay_run)
    data = export_smartcomment(ws.store, injection.replay_run)
    data["data"]["annotations"] = [
        {
            "query_id": case.id,
            "query": case.question,
            "golden_answers": case.gold,
            "golden_answers_id": None,
            "prediction": case.prediction,
            "prediction_id": case.prediction_var,
            "source_evidence_ids": [graph.versions(e)[-1].id for e in case.evidence if graph.versions(e)],
            "final_error_type": injection.error_type,
            "final_op_id": injection.op_id,
        }
    ]
    folder = root / safe_filename(system_name)
    folder.mkdir(parents=True, exist_ok=True)
    name = safe_filename(f"{injection.case_id}-{injection.error_type}-{injection.replay_run}")
    (folder / f"{name}.json").write_text(json.dumps(data))


def _plot(result: dict[str, Any], path: Path) -> None:
    """Operation and error-type accuracy per method and system, as a PNG (needs memtrace[plot])."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    methods = list(result["results"])
    systems = sorted({s for m in methods for s in result["results"][m]["by_system"]})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    width = 0.8 / max(1, len(methods))
    for ax, key, title in zip(
        axes, ("op_accuracy", "type_accuracy"), ("operation", "error type"), strict=True
    ):
        for i, method in enumerate(methods):
            values = [result["results"][method]["by_system"].get(s, {}).get(key) or 0 for s in systems]
            ax.bar([x + i * width for x in range(len(systems))], values, width, label=method)
        ax.set_xticks([x + width * (len(methods) - 1) / 2 for x in range(len(systems))], systems)
        ax.set_title(f"{title} accuracy on injected faults")
        ax.set_ylim(0, 1)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
