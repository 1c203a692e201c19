"""`memtrace bench memtracebench`: score an attribution method against MemTraceBench-style gold labels.

Loads `<dir>/<split>/*.json` (interop), runs the method on every annotated case and reports, per
split: operation accuracy (exact `final_op_id`), error-type accuracy, the Undetermined rate,
average tokens and seconds per case, and a confusion matrix of error types. Non-memory labels
(AnnotationError, JudgeError) are counted apart, as the paper drops them. Every attribution is stored
in the workspace (like `memtrace attribute`), and the result lists each case: gold and predicted
operation and error type, and the method's explanation, so a miss can be read, not only counted.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ..attribution.engine import make_method
from ..attribution.evidence.locate import METHODS as EVIDENCE_METHODS
from ..attribution.model import Attribution, save_attribution, settings_key
from ..attribution.tasks import MethodRecipe, attribute_case, attribute_in_workers
from ..errors import MemtraceError
from ..executors import ExecutorSpec
from ..graph import Case, Workspace
from ..interop import load_memtracebench
from ..progress import Progress, no_progress
from ..systems.registry import memtracebench_splits
from ..vocabulary import ErrorType

NON_MEMORY = (ErrorType.ANNOTATION, ErrorType.JUDGE)


def evaluate_memtracebench(
    directory: Path,
    *,
    method: str = "flow",
    splits: list[str] | None = None,
    workspace: Path | None = None,
    llm: Any = None,
    progress: Progress | None = None,
    scorer: str = "overlap",
    evidence: str = "auto",
    seed: int = 0,
    executor: ExecutorSpec | None = None,
) -> dict[str, Any]:
    """Run `method` on every annotated case, store its attributions and score them against the gold labels.

    `scorer` and `evidence` choose the flow method's support scorer and starting points (gold or
    pseudo evidence); other methods take no evidence option. `seed` seeds the random baseline.
    `executor` attributes one graph's cases per task in workers (default, and with a model client:
    in this process); the attributions are stored and scored in the same order either way.
    """
    if evidence not in EVIDENCE_METHODS:
        raise MemtraceError(f"unknown evidence {evidence!r} (choose {', '.join(EVIDENCE_METHODS)})")
    if evidence != "auto" and method != "flow":
        raise MemtraceError(f"--evidence chooses the flow method's starting points; {method!r} takes none")
    scratch = None
    if workspace is None:
        scratch = tempfile.TemporaryDirectory(prefix="memtracebench-")
        workspace = Path(scratch.name)
    try:
        with Workspace(workspace, create=True) as ws:
            runs = load_memtracebench(ws.store, directory, splits=splits, systems=memtracebench_splits())
            options: dict[str, Any] = {"evidence": evidence} if method == "flow" else {}
            chosen = make_method(method, llm=llm, scorer=scorer, seed=seed, **options)
            key = settings_key(chosen.settings())
            labelled = [(run, a) for run in runs for a in ws.store.annotations(run.id)]
            cases = {(c.run_id, c.id): c for run in runs for c in ws.cases(run.id)}
            found = [
                (run, a, cases[(run.id, a.case_id)]) for run, a in labelled if (run.id, a.case_id) in cases
            ]
            per_split: dict[str, list[tuple[Any, Attribution]]] = defaultdict(list)
            report, stage, done = progress or no_progress, f"attributing ({method})", [0]
            report(stage, 0, len(labelled))

            def keep(attribution: Attribution) -> None:  # called in the order of `found`
                run, label, _ = found[done[0]]
                save_attribution(ws.store, attribution, key)
                per_split[run.system or "?"].append((label, attribution))
                done[0] += 1
                report(stage, done[0], len(labelled))

            spec = executor if executor is not None and llm is None else ExecutorSpec(workers=1)
            if spec.runs_here(len({case.run_id for _, _, case in found})):
                _attribute_here(ws, chosen, [case for _, _, case in found], keep)
            else:
                recipe = MethodRecipe(method, seed, scorer, tuple(options.items()))
                attribute_in_workers(ws, recipe, [case for _, _, case in found], spec, keep)
        return {
            "method": method,
            "directory": str(directory),
            "splits": {split: score(items) for split, items in sorted(per_split.items())},
            "all": score([item for items in per_split.values() for item in items]),
            "settings": chosen.settings(),
            "cases": [case_row(split, g, a) for split, items in sorted(per_split.items()) for g, a in items],
        }
    finally:
        if scratch is not None:
            scratch.cleanup()


def _attribute_here(ws: Workspace, chosen: Any, cases: list[Case], keep: Any) -> None:
    """Each case in this process, one graph in memory at a time."""
    views: dict[str, Any] = {}
    for case in cases:
        if case.run_id not in views:
            views.clear()
            views[case.run_id] = ws.view(case.run_id)
        keep(attribute_case(chosen, views[case.run_id], case))


def case_row(split: str, gold: Any, got: Attribution) -> dict[str, Any]:
    """One case as the per-case JSON lists it: the gold label beside the method's answer and why."""
    return {
        "split": split,
        "run": got.run_id,
        "case": got.case_id,
        "gold_op": gold.op_id,
        "gold_type": gold.error_type,
        "predicted_op": got.op_id,
        "predicted_type": got.error_type,
        "op_correct": got.op_id == gold.op_id,
        "type_correct": got.error_type == gold.error_type,
        "memory_label": gold.error_type not in NON_MEMORY,
        "confidence": got.confidence,
        "explanation": got.explanation,
    }


def score(items: list[tuple[Any, Attribution]]) -> dict[str, Any]:
    """Accuracies, Undetermined rate, cost and confusion matrix over (gold label, attribution) pairs."""
    memory = [(g, a) for g, a in items if g.error_type not in NON_MEMORY]
    n = len(memory)
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for gold, got in memory:
        confusion[gold.error_type or "?"][got.error_type] += 1
    return {
        "cases": n,
        "non_memory_labels": len(items) - n,
        "op_accuracy": _share(sum(a.op_id == g.op_id for g, a in memory), n),
        "type_accuracy": _share(sum(a.error_type == g.error_type for g, a in memory), n),
        "undetermined_rate": _share(sum(a.error_type == ErrorType.UNDETERMINED for _, a in memory), n),
        "avg_tokens": _share(sum(a.cost.input_tokens + a.cost.output_tokens for _, a in memory), n),
        "avg_seconds": _share(sum(a.cost.seconds for _, a in memory), n),
        "confusion": {gold: dict(row) for gold, row in sorted(confusion.items())},
    }


def _share(part: float, whole: int) -> float | None:
    return part / whole if whole else None


def write_result(path: Path, result: dict[str, Any]) -> None:
    path.write_text(json.dumps(result, indent=2))
