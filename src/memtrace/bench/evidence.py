"""`memtrace bench evidence`: how well retrieval finds the gold evidence messages (recall@k).

Attribution starts from evidence messages; without gold ids it starts from retrieved pseudo evidence,
so the quality of that retrieval bounds everything after it. This measures it the way the paper's
`eval_retrieval_performance.py` does, over every case with gold evidence:

- macro recall@k: the mean over cases of |found ∩ gold| / |gold|;
- micro recall@k: all gold messages found / all gold messages.

Gold ids are compared as message names (`D3:1@1` and `D3:1` are the same message). Gold ids that
name no message of the run cannot be found by any retriever: they are counted and reported as
`unresolved_gold` and left out of the denominators; a case none of whose gold ids resolves is
counted in `cases_without_gold_message` and skipped.

The input is a workspace, or a MemTraceBench directory loaded into a temporary workspace.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ..attribution.evidence.locate import EvidenceLocator, build_query
from ..attribution.evidence.locator_settings import DEFAULT_K, DEFAULT_QUERY_MODES, QUERY_MODES, RETRIEVERS
from ..errors import MemtraceError
from ..graph import Case, Workspace
from ..graph.store import db_path_for
from ..retrieval import Embedder

#: The query modes measured by default: with the gold answer (the paper's) and without it.

CaseProgress = Callable[[int, int], None]


def _names(values: Iterable[str], allowed: Sequence[str], what: str) -> list[str]:
    """Validated, de-duplicated choices; "a,b" items are split so CLI lists can be comma-separated."""
    out: list[str] = []
    for value in values:
        for item in str(value).split(","):
            item = item.strip()
            if not item:
                continue
            if item not in allowed:
                raise MemtraceError(f"unknown {what} {item!r} (choose {', '.join(allowed)})")
            if item not in out:
                out.append(item)
    if not out:
        raise MemtraceError(f"no {what} given")
    return out


def _open_source(source: Workspace | str | Path, stack: ExitStack, splits: Sequence[str] | None) -> Workspace:
    """The workspace to measure: as given, a workspace folder, or a MemTraceBench dir in a temp workspace."""
    if isinstance(source, Workspace):
        return source
    path = Path(source)
    if db_path_for(path).exists():
        return stack.enter_context(Workspace(path))
    if not path.is_dir():
        raise MemtraceError(f"{path}: neither a memtrace workspace nor a MemTraceBench directory")
    from ..interop import load_memtracebench
    from ..systems.registry import memtracebench_splits

    folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="memtrace-bench-"))
    ws = stack.enter_context(Workspace(folder, create=True))
    load_memtracebench(ws.store, path, splits=splits, systems=memtracebench_splits())
    return ws


def evidence_recall(
    source: Workspace | str | Path,
    *,
    k: int = DEFAULT_K,
    methods: Sequence[str] = RETRIEVERS,
    query_modes: Sequence[str] = DEFAULT_QUERY_MODES,
    embedder: Embedder | None = None,
    failed_only: bool = False,
    splits: Sequence[str] | None = None,
    progress: CaseProgress | None = None,
) -> dict[str, Any]:
    """Macro and micro recall@k of gold evidence for each retrieval method and query mode.

    `source` is a Workspace, a workspace folder or a MemTraceBench directory (`splits` picks its
    splits). `failed_only` restricts to wrong cases (MemTraceBench holds only those anyway).
    `progress(done, total)` is called after each case.
    """
    if k < 1:
        raise MemtraceError(f"k must be >= 1, got {k}")
    methods = _names(methods, RETRIEVERS, "retrieval method")
    query_modes = _names(query_modes, QUERY_MODES, "query mode")
    started = time.perf_counter()
    with ExitStack() as stack:
        ws = _open_source(source, stack, splits)
        by_run: dict[str, list[Case]] = {}
        for case in ws.cases():
            if case.evidence and (case.failed or not failed_only):
                by_run.setdefault(case.run_id, []).append(case)
        total = sum(len(cases) for cases in by_run.values())
        keys = [(m, q) for q in query_modes for m in methods]
        sums = {key: [0.0, 0, 0, 0] for key in keys}  # recall sum, found, gold, cases
        unresolved = skipped = done = 0
        for run_id, cases in by_run.items():
            locator = EvidenceLocator(ws.view(run_id), embedder)
            for case in cases:
                gold_versions, missing = locator.resolve(case.evidence)
                unresolved += len(missing)
                gold = {v.name for v in gold_versions}
                if gold:
                    for method, mode in keys:
                        hits = locator.retrieve(build_query(case, mode), method, k)
                        found = len(gold & {v.name for v, _ in hits})
                        acc = sums[method, mode]
                        acc[0] += found / len(gold)
                        acc[1] += found
                        acc[2] += len(gold)
                        acc[3] += 1
                else:
                    skipped += 1
                done += 1
                if progress is not None:
                    progress(done, total)
    rows = [
        {
            "method": method,
            "query_mode": mode,
            "macro": acc[0] / acc[3] if acc[3] else None,
            "micro": acc[1] / acc[2] if acc[2] else None,
            "found": acc[1],
            "gold": acc[2],
            "cases": acc[3],
        }
        for (method, mode), acc in sums.items()
    ]
    return {
        "source": str(source.path if isinstance(source, Workspace) else source),
        "k": k,
        "embedder": "hashing" if embedder is None else type(embedder).__name__,
        "runs": len(by_run),
        "cases": total - skipped,
        "cases_without_gold_message": skipped,
        "unresolved_gold": unresolved,
        "results": rows,
        "seconds": round(time.perf_counter() - started, 3),
    }
