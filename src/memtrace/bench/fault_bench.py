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
from ..attribution.tasks import MethodRecipe
from ..datasets import Conversation, load_dataset
from ..errors import MemtraceError
from ..executors import ExecutorSpec
from ..graph import Store, Workspace
from ..progress import Progress, no_progress
from ..systems import RunResult, run_conversation
from ..systems.registry import system_class
from ..systems.run_tasks import RunTask, derived_run_id, record_runs
from ..text import safe_filename
from ..vocabulary import CaseVerdict, ErrorType
from .fault_tasks import FaultOutcome, Injecting, inject_all
from .fault_verify import verification_scores
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
    executor: ExecutorSpec | None = None,
    verify: bool = False,
) -> dict[str, Any]:
    """Inject, replay, keep flips, attribute, score; write JSON and a plot (and, when asked, the
    MemTraceBench layout and the labelled replays).

    Each injection is replayed and attributed in a scratch workspace of its own (fault_tasks.py), so
    only the labelled replays asked for reach the workspace: hundreds of replays, each holding a full
    copy of its run, made it gigabytes. `executor` runs the recordings and the injections in workers
    (default, and always with a model client: this process). With `verify`, every method's claim is
    verified too (fault_verify.py). `result["written"]` lists what was written where.
    """
    if per_type < 1:  # it would record every system and label nothing
        raise MemtraceError(f"--per-type must be 1 or more, not {per_type}")
    report = progress or no_progress
    methods = methods or ["flow", "last-op", "random"]
    for name in methods:  # an unknown method, or one needing a model, fails before anything runs
        make_method(name, llm=llm, seed=seed)
    spec = executor if executor is not None and llm is None else ExecutorSpec(workers=1)
    data = load_dataset(dataset, conversations=conversations)
    rng = random.Random(seed)
    layout = out / "memtracebench"
    out.mkdir(parents=True, exist_ok=True)
    recorded = _record(systems, data, dataset, workspace, spec, llm, report)
    coverage: dict[str, dict[str, dict[str, int]]] = {}
    recipes = [MethodRecipe(name, seed=seed) for name in methods]
    job = Injecting([], recipes, per_type, memtracebench, keep_replays, verify)
    for system_name in systems:
        plans = _plans(workspace, recorded[system_name])
        rng.shuffle(plans)
        coverage[system_name] = _coverage_start(workspace, recorded[system_name], plans)
        job.planned.append((system_name, plans))

    def tally(system_name: str, injection: Injection, outcome: FaultOutcome) -> None:
        counts = coverage[system_name][injection.error_type]
        counts["tried"] += 1
        counts["kept"] += int(outcome.flipped)
        if outcome.graph is not None:
            _write_graph(layout, system_name, injection, outcome.graph)

    with Workspace(workspace) as ws:
        inject_all(job, ws, spec, llm=llm, progress=report, on_outcome=tally)
    labelled = [(job.planned[s][0], job.planned[s][1][i]) for s, i in sorted(job.flipped)]
    verdicts = {id(job.planned[s][1][i]): job.flipped[(s, i)].verdicts for s, i in sorted(job.flipped)}
    rows = {
        name: [
            (job.planned[s][0], job.planned[s][1][i], job.flipped[(s, i)].attributions[name])
            for s, i in sorted(job.flipped)
        ]
        for name in methods
    }
    result = {
        "dataset": dataset,
        "seed": seed,
        "per_type": per_type,
        "methods": methods,
        "labelled": len(labelled),
        "results": {name: _accuracy(method_rows) for name, method_rows in rows.items()},
        "coverage": coverage,
        "missing": _missing(coverage, per_type),
        "cases": _case_rows(labelled, rows, verdicts),
    }
    if verify:
        result["verification"] = verification_scores(result["cases"], methods)
    (out / "faults.json").write_text(json.dumps(result, indent=2))
    _plot(result, out / "faults.png")
    written = [out / "faults.json", out / "faults.png", workspace, *([layout] if memtracebench else [])]
    result["written"] = {str(path): _size(path) for path in written if path.exists()}
    return result


def _record(
    systems: list[str],
    data: list[Conversation],
    dataset: str,
    workspace: Path,
    spec: ExecutorSpec,
    llm: Any,
    report: Progress,
) -> dict[str, list[RunResult]]:
    """Every system on every conversation with its default config, under ids derived from what each
    run is (so the labels name the same runs whatever the executor)."""
    store = Store(workspace)
    try:
        taken = {run.id for run in store.runs()}
    finally:
        store.close()
    tasks = []
    for name in systems:
        config = system_class(name).Config()
        for conversation in data:
            run_id = derived_run_id(name, conversation.id, dataset, config.model_dump(), taken)
            taken.add(run_id)
            tasks.append(RunTask(name, config, conversation, dataset, run_id))
    results: dict[str, list[RunResult]] = {name: [] for name in systems}
    for name in systems:
        report(f"{name}: recording", 0, len(data))

    def done(index: int, result: RunResult) -> None:
        name = tasks[index].system
        results[name].append(result)
        report(f"{name}: recording", len(results[name]), len(data))

    if spec.runs_here(len(tasks)):
        for index, task in enumerate(tasks):
            system = system_class(task.system)(task.config, llm=llm)
            done(
                index,
                run_conversation(system, task.conversation, workspace, dataset=dataset, run_id=task.run_id),
            )
    else:
        record_runs(tasks, workspace, spec, done)
    return results


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
    labelled: list[tuple[str, Injection]],
    rows: dict[str, list[tuple[str, Injection, Any]]],
    verdicts: dict[int, dict[str, dict[str, str]]],
) -> list[dict[str, Any]]:
    """One row per labelled case: what was injected where, what each method named (and, verified,
    the verifier's verdict on it)."""
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
                name: {"op": got.op_id, "type": str(got.error_type), **verdicts[id(injection)].get(name, {})}
                for name, by_injection in picks.items()
                if (got := by_injection.get(id(injection))) is not None
            },
        }
        for system_name, injection in labelled
    ]


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


def _write_graph(root: Path, system_name: str, injection: Injection, data: dict[str, Any]) -> None:
    """One labelled replay's MemTraceBench graph, in its system's folder of the layout."""
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
    verified = result.get("verification")
    fig, axes = plt.subplots(1, 3 if verified else 2, figsize=(16 if verified else 11, 4), sharey=True)
    width = 0.8 / max(1, len(methods))
    for ax, key, title in zip(
        axes[:2], ("op_accuracy", "type_accuracy"), ("operation", "error type"), strict=True
    ):
        for i, method in enumerate(methods):
            values = [result["results"][method]["by_system"].get(s, {}).get(key) or 0 for s in systems]
            ax.bar([x + i * width for x in range(len(systems))], values, width, label=method)
        ax.set_xticks([x + width * (len(methods) - 1) / 2 for x in range(len(systems))], systems)
        ax.set_title(f"{title} accuracy on injected faults")
        ax.set_ylim(0, 1)
    axes[0].legend()
    if verified:
        _plot_verdicts(axes[2], verified["by_method"])
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_verdicts(ax: Any, by_method: dict[str, Any]) -> None:
    """Per method, the shares of its right and its wrong claims the verifier confirmed and refuted."""
    bars = [
        (f"{method}\n{side}", row)
        for method, sides in by_method.items()
        for side, row in sides.items()
        if row["claims"]
    ]
    for i, (_, row) in enumerate(bars):
        confirmed, refuted = row["confirmed"] / row["claims"], row["refuted"] / row["claims"]
        ax.bar(i, confirmed, color="tab:green", label="confirmed" if i == 0 else None)
        ax.bar(i, refuted, bottom=confirmed, color="tab:red", label="refuted" if i == 0 else None)
    ax.set_xticks(range(len(bars)), [label for label, _ in bars], fontsize=7)
    ax.set_title("verify on planted faults: right vs wrong claims")
    ax.legend()
