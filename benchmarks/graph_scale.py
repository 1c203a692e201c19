"""Graph scale: record a run with a million variable versions, then time the graph queries on it.

A synthetic memory pipeline (Mem0-like: ingest a message, extract facts with an LLM call, search
memory and add/update/delete memory units, and every few turns answer and judge a question) is
recorded through the public API: `memtrace.run`, `memtrace.op`, `op.input/use/output`,
`run.memory(unit).create/update/delete(by=op)` and `run.case`. Then the workspace is reopened and
lineage, lifecycle, memory state and diff queries are timed on random samples.

    .venv/bin/python benchmarks/graph_scale.py [--versions 1000000] [--samples 50] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

import memtrace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import code_version, goal_status
from memtrace.trace import Recorder

console = Console(width=None if sys.stdout.isatty() else 130)

RUN_NAME = "scale"
GOAL_VERSIONS_PER_S = 100_000
GOAL_QUERY_MEDIAN_MS = 100.0

EXTRACT_PROMPT = (
    "You are a memory extraction assistant. From the message below, list every durable fact about "
    "the speaker (places, jobs, people, plans, preferences) as a JSON list of short sentences."
)
UPDATE_PROMPT = (
    "Compare each new fact with the existing memories. Answer ADD, UPDATE <id>, DELETE <id> or NONE "
    "for each fact, keeping memories short, current and free of duplicates."
)
ANSWER_PROMPT = "Answer the question using only the memories below. Be brief; say 'unknown' if unsure."

_SPEAKERS = ["Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew", "Nate", "Joanna", "Evan", "Sam"]
_VERBS = ["moved to", "started", "visited", "adopted", "signed up for", "finished", "painted", "joined"]
_OBJECTS = [
    "Boston",
    "a pottery class",
    "a new job at the lab",
    "a charity run",
    "a rescue dog called Oscar",
    "the book club",
    "a camping trip to the lake",
    "a portrait of her grandmother",
    "a support group",
    "Lisbon",
    "a cooking course",
    "the city marathon",
]
_WHEN = ["last week", "yesterday", "in May", "two years ago", "this weekend", "on Friday", "last summer"]
TURNS_PER_SESSION = 25
QUESTION_EVERY = 8
#: Action mix of the memory update step, per extracted fact.
ACTIONS = (("create", 0.30), ("update", 0.55), ("delete", 0.07), ("none", 0.08))


@dataclass
class Workload:
    """What the synthetic pipeline produced (counted by the benchmark, checked against the store)."""

    versions: int = 0
    turns: int = 0
    questions: int = 0
    units_created: int = 0
    updates: int = 0
    deletes: int = 0
    live: list[str] = field(default_factory=list)
    live_pos: dict[str, int] = field(default_factory=dict)
    latest: dict[str, str | None] = field(default_factory=dict)

    def add_live(self, unit: str) -> None:
        self.live_pos[unit] = len(self.live)
        self.live.append(unit)

    def remove_live(self, unit: str) -> None:
        i = self.live_pos.pop(unit)
        last = self.live.pop()
        if last != unit:
            self.live[i] = last
            self.live_pos[last] = i


class _NullMemory:
    """Stands in for `run.memory(unit)` in the baseline pass that records nothing."""

    def create(self, value: Any, by: Any = None) -> None:
        return None

    def update(self, value: Any, by: Any = None) -> None:
        return None

    def delete(self, by: Any = None) -> None:
        return None


_NULL_MEMORY = _NullMemory()


def pipeline(run: Recorder | None, target: int, seed: int, tick: Callable[[int], None]) -> Workload:
    """Run the synthetic memory pipeline until about `target` variable versions are recorded.

    With `run=None` nothing records (no run is open, so `memtrace.op` hands out no-op scopes): that
    pass measures the cost of the synthetic pipeline itself.
    """
    rng = random.Random(seed)
    w = Workload()
    actions = [a for a, _ in ACTIONS]
    weights = [p for _, p in ACTIONS]
    last_input: dict[str, Any] = {}

    def fresh_input(op: Any, name: str, value: Any, category: str) -> str | None:
        """`op.input`, counting a version only when one is written (a value equal to the latest is reused)."""
        if name not in last_input or last_input[name] != value:
            w.versions += 1
        last_input[name] = value
        return op.input(name, value, category=category)

    def memory(unit: str) -> Any:
        return run.memory(unit) if run is not None else _NULL_MEMORY

    def fact() -> str:
        return f"{rng.choice(_SPEAKERS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_WHEN)}"

    while w.versions < target:
        before = w.versions
        w.turns += 1
        turn = w.turns
        dia = f"D{turn // TURNS_PER_SESSION + 1}:{turn % TURNS_PER_SESSION + 1}"
        speaker = rng.choice(_SPEAKERS)
        n_facts = rng.choice((1, 2, 2, 3))
        facts = [f"{fact()} (turn {turn}.{k})" for k in range(n_facts)]
        message = f"{speaker}: " + ", and ".join(f[len(f.split()[0]) + 1 :] for f in facts) + "!"

        with memtrace.op("ingest", category="construction") as ingest:
            msg_id = ingest.output(f"msg/{dia}", message, category="message", dia_id=dia)
        w.versions += 1

        with memtrace.op("extract_facts", category="extraction") as extract:
            extract.use(msg_id)
            fresh_input(extract, "prompt.extract", EXTRACT_PROMPT, "prompt")
            with memtrace.op("llm.chat", category="llm", model="offline") as llm:
                fresh_input(llm, "llm.request", f"{EXTRACT_PROMPT}\n\n{message}", "llm_request")
                llm.output("llm.response", json.dumps(facts), category="llm_response")
            facts_id = extract.output("extracted_facts", facts, category="extracted_facts")
        w.versions += 2

        with memtrace.op("update_memory", category="update") as update:
            update.use(facts_id)
            fresh_input(update, "prompt.update", UPDATE_PROMPT, "prompt")
            candidates = rng.sample(w.live, min(3, len(w.live)))
            for unit in candidates:
                update.use(w.latest[unit])
            update.output("update.candidates", candidates, category="retrieved")
            w.versions += 1
            for text in facts:
                action = rng.choices(actions, weights)[0] if w.live else "create"
                if action == "create":
                    unit = f"mem-{w.units_created + 1}"
                    w.units_created += 1
                    w.latest[unit] = memory(unit).create({"memory": text, "source": dia}, by=update)
                    w.add_live(unit)
                elif action == "update":
                    unit = rng.choice(w.live)
                    value = {"memory": f"{text}; previously noted", "source": dia}
                    w.latest[unit] = memory(unit).update(value, by=update)
                    w.updates += 1
                elif action == "delete":
                    unit = rng.choice(w.live)
                    with memtrace.op("delete_memory", category="deletion") as delete:
                        w.latest[unit] = memory(unit).delete(by=delete)
                    w.remove_live(unit)
                    w.deletes += 1
                else:
                    continue
                w.versions += 1

        if turn % QUESTION_EVERY == 0 and w.live:
            w.questions += 1
            subject = rng.choice(_SPEAKERS)
            question = f"What did {subject} do {rng.choice(_WHEN)}? (q{w.questions})"
            with memtrace.op("search", category="retrieval", k=5) as search:
                query_id = fresh_input(search, "query", question, "query")
                hits = rng.sample(w.live, min(5, len(w.live)))
                for unit in hits:
                    search.use(w.latest[unit])
                retrieved_id = search.output("retrieved", hits, category="retrieved")
            with memtrace.op("answer", category="response") as answer:
                answer.use(retrieved_id)
                answer.use(query_id)
                fresh_input(answer, "prompt.answer", ANSWER_PROMPT, "prompt")
                with memtrace.op("llm.chat", category="llm", model="offline") as llm:
                    request = f"{ANSWER_PROMPT}\n{hits}\n{question}"
                    fresh_input(llm, "llm.request", request, "llm_request")
                    prediction = f"{subject} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
                    llm.output("llm.response", prediction, category="llm_response")
                prediction_id = answer.output("prediction", prediction, category="prediction")
            gold = f"{subject} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
            correct = gold == prediction
            with memtrace.op("judge", category="evaluation") as judge:
                judge.use(prediction_id)
                fresh_input(judge, "gold", gold, "gold")
                judge.output("verdict", {"correct": correct, "score": float(correct)}, category="verdict")
            w.versions += 4
            if run is not None:
                case = run.case(question, gold=[gold], evidence=[dia])
                case.predict(prediction, var=prediction_id)
                case.judge(correct, score=float(correct))

        tick(w.versions - before)
    return w


# -- measurement helpers ------------------------------------------------------------------------


def progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        refresh_per_second=4,
    )


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def db_size(workspace: Path) -> int:
    return sum(p.stat().st_size for p in workspace.glob("memtrace.db*"))


def journal_size(workspace: Path) -> int:
    return sum(p.stat().st_size for p in workspace.glob("journal/*") if p.is_file())


def time_queries(
    label: str, samples: list[Any], call: Callable[[Any], Any], size: Callable[[Any], int], progress: Progress
) -> dict[str, Any]:
    """Time `call(sample)` for each sample; median, p95 and mean result size."""
    times: list[float] = []
    sizes: list[int] = []
    task = progress.add_task(label, total=len(samples))
    for sample in samples:
        t0 = time.perf_counter()
        result = call(sample)
        times.append((time.perf_counter() - t0) * 1e3)
        sizes.append(size(result))
        progress.advance(task)
    return {
        "samples": len(samples),
        "median_ms": statistics.median(times),
        "p95_ms": percentile(times, 95),
        "max_ms": max(times),
        "mean_result_size": statistics.fmean(sizes),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--versions", type=int, default=1_000_000, help="variable versions to record (default 1000000)"
    )
    parser.add_argument("--samples", type=int, default=50, help="random samples per query (default 50)")
    parser.add_argument(
        "--depth", type=int, default=4, help="lineage depth for ancestors/descendants (default 4)"
    )
    parser.add_argument(
        "--diff-window", type=int, default=10_000, help="seqs between the two ends of a diff (default 10000)"
    )
    parser.add_argument("--seed", type=int, default=11, help="random seed (default 11)")
    parser.add_argument(
        "--workspace", type=Path, default=None, help="workspace folder to use (default: a temp folder)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp workspace afterwards")
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the pass that times the synthetic pipeline with nothing recording",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this JSON file")
    args = parser.parse_args(argv)

    workspace = args.workspace or Path(tempfile.mkdtemp(prefix="memtrace-scale-"))
    if (workspace / "memtrace.db").exists():
        parser.error(f"{workspace} already holds a workspace; pick an empty folder")
    target = args.versions
    version = code_version()
    console.print(
        f"[bold]graph scale[/bold]: memtrace {memtrace.__version__} ({version}), {target:,} versions "
        f"into {workspace} (Python {platform.python_version()})"
    )
    figures: dict[str, Any] = {
        "memtrace_version": memtrace.__version__,
        "code_version": version,
        "target_versions": target,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "samples": args.samples,
        "depth": args.depth,
        "diff_window": args.diff_window,
    }

    try:
        # 1. The synthetic pipeline alone, so its own cost can be told apart from recording.
        baseline_s = None
        if not args.no_baseline:
            with progress_bar() as progress:
                task = progress.add_task("pipeline, not recording", total=target)
                t0 = time.perf_counter()
                pipeline(None, target, args.seed, lambda n: progress.advance(task, n))
                baseline_s = time.perf_counter() - t0

        # 2. Recording, including the run's close (the final flush to SQLite).
        with progress_bar() as progress:
            task = progress.add_task("recording", total=target)
            t0 = time.perf_counter()
            with memtrace.run(workspace, name=RUN_NAME, system="synthetic-mem0") as run:
                work = pipeline(run, target, args.seed, lambda n: progress.advance(task, n))
                t_loop = time.perf_counter()
            t_end = time.perf_counter()
        record_s, close_s, total_s = t_loop - t0, t_end - t_loop, t_end - t0
        journal_bytes = journal_size(workspace)

        # 3. Reopen (this indexes the run's journal into SQLite) and check what was stored.
        with console.status("reopening the workspace (indexing the journal into SQLite)"):
            t0 = time.perf_counter()
            ws = memtrace.open(workspace)
            graph = ws.graph(RUN_NAME)
            open_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        graph.memory_state_at()  # builds the memory checkpoints where the open defers them
        first_memory_query_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        memtrace.open(workspace).close()
        reopen_again_ms = (time.perf_counter() - t0) * 1e3
        conn = ws.store.conn
        run_id = graph.run.id
        stored = {
            table: conn.execute(f"SELECT COUNT(*) FROM {table} WHERE run=?", (run_id,)).fetchone()[0]
            for table in ("vars", "ops", "edges", "cases")
        }
        memory_versions, units = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT name) FROM vars WHERE run=? AND category='memory_entry'",
            (run_id,),
        ).fetchone()
        max_seq = max(
            conn.execute("SELECT MAX(seq) FROM vars WHERE run=?", (run_id,)).fetchone()[0],
            conn.execute("SELECT MAX(seq) FROM ops WHERE run=?", (run_id,)).fetchone()[0],
        )
        peak_size = db_size(workspace)  # the database plus the WAL the indexing transaction wrote
        versions = stored["vars"]
        figures["recording"] = {
            "versions": versions,
            "ops": stored["ops"],
            "edges": stored["edges"],
            "cases": stored["cases"],
            "memory_versions": memory_versions,
            "memory_units": units,
            "turns": work.turns,
            "max_seq": max_seq,
            "record_s": record_s,
            "close_s": close_s,
            "total_s": total_s,
            "versions_per_s": versions / total_s,
            "pipeline_only_s": baseline_s,
            "versions_per_s_net_of_pipeline": None
            if baseline_s is None
            else versions / (total_s - baseline_s),
            "journal_bytes": journal_bytes,
            "db_plus_wal_bytes_after_indexing": peak_size,
            "first_open_s": open_s,
            "first_memory_query_s": first_memory_query_s,
            "versions_per_s_with_indexing": versions / (total_s + open_s),
            "second_open_ms": reopen_again_ms,
        }
        if versions != work.versions:
            console.print(f"[yellow]note: counted {work.versions:,} versions, the store holds {versions:,}")

        # 4. Queries on random samples (sampling itself is untimed).
        rng = random.Random(args.seed + 1)
        k = args.samples
        var_ids = [
            r[0]
            for r in conn.execute("SELECT id FROM vars WHERE run=? ORDER BY RANDOM() LIMIT ?", (run_id, k))
        ]
        op_ids = [
            r[0]
            for r in conn.execute("SELECT id FROM ops WHERE run=? ORDER BY RANDOM() LIMIT ?", (run_id, k))
        ]
        nodes = rng.sample(var_ids + op_ids, min(k, len(var_ids) + len(op_ids)))
        unit_names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM (SELECT DISTINCT name FROM vars WHERE run=? AND category='memory_entry')"
                " ORDER BY RANDOM() LIMIT ?",
                (run_id, k),
            )
        ]
        seqs = [rng.randint(1, max_seq) for _ in range(k)]
        window = min(args.diff_window, max_seq - 1)
        windows = [(a, a + window) for a in (rng.randint(1, max_seq - window) for _ in range(k))]
        depth = args.depth

        with progress_bar() as progress:
            queries = {
                f"ancestors(node, depth={depth})": time_queries(
                    "ancestors", nodes, lambda n: graph.ancestors(n, depth=depth), len, progress
                ),
                f"descendants(node, depth={depth})": time_queries(
                    "descendants", nodes, lambda n: graph.descendants(n, depth=depth), len, progress
                ),
                "memory_state_at(seq)": time_queries(
                    "memory_state_at", seqs, graph.memory_state_at, len, progress
                ),
                f"diff(seq, seq+{window})": time_queries(
                    "diff",
                    windows,
                    lambda w: graph.diff(*w),
                    lambda d: len(d.created) + len(d.changed) + len(d.deleted),
                    progress,
                ),
                "lifecycle(unit)": time_queries("lifecycle", unit_names, graph.lifecycle, len, progress),
            }
        figures["queries"] = queries
        ws.close()
        size = db_size(workspace)  # the last connection closed: WAL checkpointed and removed
        figures["recording"]["db_bytes"] = size
        figures["recording"]["bytes_per_version"] = size / versions
    finally:
        if args.workspace is None and not args.keep:
            shutil.rmtree(workspace, ignore_errors=True)

    rec = figures["recording"]
    summary = Table(title="Recording (public API, one run)")
    summary.add_column("figure")
    summary.add_column("value", justify="right")
    summary.add_row("variable versions", f"{rec['versions']:,}")
    summary.add_row(
        "  of which memory unit versions", f"{rec['memory_versions']:,} in {rec['memory_units']:,} units"
    )
    summary.add_row("operations / edges / cases", f"{rec['ops']:,} / {rec['edges']:,} / {rec['cases']:,}")
    summary.add_row("recording time (pipeline + memtrace)", f"{rec['record_s']:.1f} s")
    summary.add_row("close (final flush)", f"{rec['close_s'] * 1e3:.0f} ms")
    summary.add_row("versions/s, including close", f"{rec['versions_per_s']:,.0f}")
    if baseline_s is not None:
        summary.add_row("synthetic pipeline alone (nothing recording)", f"{baseline_s:.1f} s")
        summary.add_row(
            "versions/s, net of the synthetic pipeline", f"{rec['versions_per_s_net_of_pipeline']:,.0f}"
        )
    summary.add_row("journal on disk after close", f"{journal_bytes / 2**20:,.1f} MiB")
    summary.add_row("first memtrace.open() + graph (indexes the journal)", f"{open_s:.1f} s")
    summary.add_row("then the first memory-state query (builds checkpoints)", f"{first_memory_query_s:.1f} s")
    summary.add_row("versions/s, recording + close + indexing", f"{rec['versions_per_s_with_indexing']:,.0f}")
    summary.add_row(
        "database on disk (memtrace.db, workspace closed)",
        f"{size / 2**20:,.1f} MiB ({rec['bytes_per_version']:.0f} B/version)",
    )
    summary.add_row(
        "  right after indexing, memtrace.db + WAL",
        f"{peak_size / 2**20:,.1f} MiB",
    )
    summary.add_row("a later memtrace.open()", f"{reopen_again_ms:.1f} ms")
    console.print(summary)

    qt = Table(title=f"Queries after reopening ({k} random samples each, page cache warm)")
    qt.add_column("query")
    qt.add_column("median ms", justify="right")
    qt.add_column("p95 ms", justify="right")
    qt.add_column("max ms", justify="right")
    qt.add_column("mean result size", justify="right")
    qt.add_column(f"goal < {GOAL_QUERY_MEDIAN_MS:.0f} ms median")
    for name, q in queries.items():
        qt.add_row(
            name,
            f"{q['median_ms']:.2f}",
            f"{q['p95_ms']:.2f}",
            f"{q['max_ms']:.2f}",
            f"{q['mean_result_size']:,.1f}",
            goal_status(q["median_ms"] < GOAL_QUERY_MEDIAN_MS),
        )
    console.print(qt)

    goals = {
        "recording_ge_100k_versions_per_s": rec["versions_per_s"] >= GOAL_VERSIONS_PER_S,
        "every_query_median_lt_100ms": all(q["median_ms"] < GOAL_QUERY_MEDIAN_MS for q in queries.values()),
    }
    figures["goals"] = goals
    gt = Table(title="Goals")
    gt.add_column("goal")
    gt.add_column("figure", justify="right")
    gt.add_column("status")
    gt.add_row(
        f">= {GOAL_VERSIONS_PER_S:,} versions/s recording (incl. close and the synthetic pipeline)",
        f"{rec['versions_per_s']:,.0f}/s"
        + (
            ""
            if baseline_s is None
            else f" (net of the pipeline: {rec['versions_per_s_net_of_pipeline']:,.0f}/s)"
        ),
        goal_status(goals["recording_ge_100k_versions_per_s"]),
    )
    slowest = max(queries, key=lambda name: queries[name]["median_ms"])
    gt.add_row(
        f"every query < {GOAL_QUERY_MEDIAN_MS:.0f} ms median",
        f"slowest: {slowest} {queries[slowest]['median_ms']:.1f} ms",
        goal_status(goals["every_query_median_lt_100ms"]),
    )
    console.print(gt)

    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2))
        console.print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
