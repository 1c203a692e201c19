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

import json
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..attribution.evidence import DEFAULT_K, QUERY_MODES, RETRIEVERS, EvidenceLocator, build_query
from ..graph import Case, MemtraceError, Workspace
from ..graph.store import db_path_for
from ..progress import progress_bar
from ..retrieval import Embedder

#: The query modes measured by default: with the gold answer (the paper's) and without it.
DEFAULT_QUERY_MODES = ("question+answer", "question")

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
    from ..graph.io import load_memtracebench
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


def evidence_table(result: dict[str, Any]) -> Table:
    """The recall table: one row per (query mode, method), best macro recall of each mode in bold."""
    k = result["k"]
    table = Table(title=f"Evidence recall@{k} ({result['cases']} cases, {result['runs']} runs)")
    table.add_column("query")
    table.add_column("method")
    table.add_column(f"macro R@{k}", justify="right")
    table.add_column(f"micro R@{k}", justify="right")
    table.add_column("found / gold", justify="right")
    best: dict[str, float] = {}
    for row in result["results"]:
        if row["macro"] is not None:
            best[row["query_mode"]] = max(best.get(row["query_mode"], 0.0), row["macro"])
    for row in result["results"]:
        macro, micro = row["macro"], row["micro"]
        macro_text = Text("-" if macro is None else f"{macro:.3f}")
        if macro is not None and macro == best.get(row["query_mode"]):
            macro_text.stylize("bold")
        table.add_row(
            row["query_mode"],
            row["method"],
            macro_text,
            "-" if micro is None else f"{micro:.3f}",
            f"{row['found']} / {row['gold']}",
        )
    notes = [f"dense: {result['embedder']} embedder", f"{result['seconds']:.1f}s"]
    if result["unresolved_gold"]:
        notes.append(f"{result['unresolved_gold']} gold id(s) name no message (not counted)")
    if result["cases_without_gold_message"]:
        notes.append(f"{result['cases_without_gold_message']} case(s) with no resolvable gold skipped")
    table.caption = "; ".join(notes)
    return table


def evidence_command(
    source: Path,
    k: int = DEFAULT_K,
    methods: Sequence[str] = RETRIEVERS,
    json_out: Path | None = None,
    console: Console | None = None,
    *,
    query_modes: Sequence[str] = DEFAULT_QUERY_MODES,
    failed_only: bool = False,
    splits: Sequence[str] | None = None,
) -> dict[str, Any]:
    """`memtrace bench evidence`: measure with a progress bar, print the table, write JSON if asked."""
    console = console if console is not None else Console(markup=False)
    if not Path(source).exists():
        raise MemtraceError(f"{source}: no such file or directory")
    with progress_bar(console) as bar:
        task = bar.add_task("locating evidence", total=None)
        result = evidence_recall(
            source,
            k=k,
            methods=methods,
            query_modes=query_modes,
            failed_only=failed_only,
            splits=splits,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    console.print(evidence_table(result))
    if json_out is not None:
        Path(json_out).write_text(json.dumps(result, indent=2, ensure_ascii=False))
        console.print(f"wrote {json_out}")
    return result
