"""Tracing overhead: what recording one pipeline operation costs with memtrace, smartcomment and OTel.

The same synthetic pipeline (an `extract_facts` step reading a conversation message and a fixed
prompt, writing a dict of extracted facts) runs N times under each tracer and once bare. Figures are
microseconds per operation net of the bare pipeline, the median of `--repeat` runs.

    .venv/bin/python benchmarks/tracing_overhead.py [--ops 10000] [--smartcomment-ops 2000] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import memtrace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import code_version, goal_status

console = Console(width=None if sys.stdout.isatty() else 150)

PROMPT = (
    "You are a memory extraction assistant. Read the conversation message below and list every "
    "durable personal fact it states about the speaker (places, jobs, people, plans, preferences). "
    "Answer as JSON with a list of short facts."
)

_SPEAKERS = ["Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew", "Nate", "Joanna"]
_PLACES = ["Boston", "Lisbon", "a farm upstate", "the city centre", "Seattle", "her parents' place"]
_THINGS = ["a pottery class", "a new job at the lab", "a charity run", "a camping trip", "a book club"]
_WHEN = ["last week", "yesterday", "in May", "two years ago", "this weekend", "on Friday"]

#: What every phase is timed with: wall time by default; `--clock cpu` takes this process's CPU time,
#: which a machine shared with other jobs disturbs far less (the tracers' file writes are not waited on).
clock: Callable[[], float] = time.perf_counter

#: The goals printed beside the figures.
GOAL_VS_SMARTCOMMENT = 1 / 50
GOAL_VS_OTEL = 1 / 2
GOAL_DISABLED_US = 1.0


def make_messages(n: int, seed: int) -> list[str]:
    """N conversation messages of about 100 characters, each different."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        speaker, place = rng.choice(_SPEAKERS), rng.choice(_PLACES)
        thing, when = rng.choice(_THINGS), rng.choice(_WHEN)
        out.append(
            f"[D{i // 20 + 1}:{i % 20 + 1}] {speaker}: I moved to {place} {when} and signed up for {thing}."
        )
    return out


def extract(message: str, prompt: str) -> dict[str, Any]:
    """The bare pipeline step: a rule-based stand-in for an LLM fact extractor."""
    head, _, text = message.partition("] ")
    speaker, _, body = text.partition(": ")
    first, _, second = body.rstrip(".").partition(" and ")
    return {
        "speaker": speaker,
        "facts": [f"{speaker} {first[2:]}", f"{speaker} {second}"],
        "dia_id": head[1:],
    }


# -- the variants: each runs the whole pipeline and returns phase timings in seconds -------------


def run_bare(messages: list[str], workdir: Path) -> dict[str, float]:
    """(d) The pipeline with no tracing at all."""
    t0 = clock()
    for message in messages:
        extract(message, PROMPT)
    return {"total": clock() - t0}


def _memtrace_loop(messages: list[str]) -> None:
    for message in messages:
        with memtrace.op("extract_facts", category="extraction") as op:
            op.input("message", message, category="message")
            op.input("prompt.extract", PROMPT, category="prompt")
            facts = extract(message, PROMPT)
            op.output("extracted_facts", facts)


def run_memtrace(messages: list[str], workdir: Path) -> dict[str, float]:
    """(a) memtrace: one run, one op per step; total includes opening the run and its close (final flush).

    The recorder appends batches to a journal file; the rows are indexed into SQLite by the next
    `memtrace.open()` of the workspace. That deferred cost is timed separately as "ingest".
    """
    t0 = clock()
    with memtrace.run(workdir, name="overhead", system="bench"):
        t_open = clock()
        _memtrace_loop(messages)
        t_loop = clock()
    t_end = clock()
    with memtrace.open(workdir) as ws:
        t_ingest = clock()
        stored = ws.store.count("vars", ws.run("overhead").id)
    assert stored == len(messages) * 2 + 1, stored
    return {
        "total": t_end - t0,
        "open": t_open - t0,
        "record": t_loop - t_open,
        "close": t_end - t_loop,
        "ingest": t_ingest - t_end,
    }


def run_memtrace_disabled(messages: list[str], workdir: Path) -> dict[str, float]:
    """(e1) The instrumented loop after `memtrace.disable()`."""
    memtrace.disable()
    try:
        t0 = clock()
        _memtrace_loop(messages)
        return {"total": clock() - t0}
    finally:
        memtrace.enable()


def run_memtrace_no_run(messages: list[str], workdir: Path) -> dict[str, float]:
    """(e2) The instrumented loop, recording enabled, but no run open."""
    t0 = clock()
    _memtrace_loop(messages)
    return {"total": clock() - t0}


def run_smartcomment(messages: list[str], workdir: Path) -> dict[str, float]:
    """(b) smartcomment: one `comment_op(op_name=..., inputs=[...], outputs=[...])` call per step.

    This is smartcomment's single-call idiom for an operation with known inputs and outputs (one
    OpRecord plus inputs x outputs edges). Each slot gets a fixed `id_strategy` so that, like memtrace's
    named variables, a changed value becomes a new version of `message` / `extracted_facts` and the
    unchanged prompt reuses its node. smartcomment keeps the graph in memory only; its persistence
    step is `graph.export_graph()` plus writing the JSON, timed as "close".
    """
    from smartcomment import comment_graph, comment_op, comment_session

    msg_opts = {"id_strategy": lambda _v: "message", "category": "message"}
    prompt_opts = {"id_strategy": lambda _v: "prompt.extract", "category": "prompt"}
    facts_opts = {"id_strategy": lambda _v: "extracted_facts", "category": "value"}
    t0 = clock()
    with comment_graph(graph_id="graph-overhead", user_id="bench", project_id="memtrace") as graph:
        with comment_session(session_name="overhead"):
            for message in messages:
                facts = extract(message, PROMPT)
                comment_op(
                    op_name="extract_facts",
                    category="extraction",
                    inputs=[(message, msg_opts), (PROMPT, prompt_opts)],
                    outputs=[(facts, facts_opts)],
                )
        t_loop = clock()
        data = graph.export_graph()
        (workdir / "graph.json").write_text(json.dumps(data))
    t_end = clock()
    return {"total": t_end - t0, "record": t_loop - t0, "close": t_end - t_loop}


def run_otel(messages: list[str], workdir: Path) -> dict[str, float]:
    """(c) OpenTelemetry SDK: one span per step, values as attributes (the facts dict as JSON text,
    since span attributes take only primitives), SimpleSpanProcessor into an InMemorySpanExporter."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    t0 = clock()
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("memtrace.bench")
    for message in messages:
        with tracer.start_as_current_span("extract_facts", attributes={"category": "extraction"}) as span:
            span.set_attribute("input.message", message)
            span.set_attribute("input.prompt.extract", PROMPT)
            facts = extract(message, PROMPT)
            span.set_attribute("output.extracted_facts", json.dumps(facts))
    t_loop = clock()
    provider.shutdown()
    t_end = clock()
    assert len(exporter.get_finished_spans()) == len(messages)
    return {"total": t_end - t0, "record": t_loop - t0, "close": t_end - t_loop}


# -- measurement --------------------------------------------------------------------------------


def at_depth(depth: int, fn: Callable[..., dict[str, float]], *args: Any) -> dict[str, float]:
    """Call `fn` `depth` frames deeper, as in a real application (smartcomment's cost grows with it)."""
    if depth <= 0:
        return fn(*args)
    return at_depth(depth - 1, fn, *args)


def measure(
    fn: Callable[[list[str], Path], dict[str, float]], messages: list[str], repeat: int, depth: int = 0
) -> dict[str, float]:
    """Run a variant `repeat` times in fresh temp folders; the median of each phase, in seconds."""
    samples: list[dict[str, float]] = []
    for _ in range(repeat):
        gc.collect()
        with tempfile.TemporaryDirectory(prefix="memtrace-bench-") as tmp:
            samples.append(at_depth(depth, fn, messages, Path(tmp)))
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


def per_op_us(seconds: float, n: int) -> float:
    return seconds / n * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000, help="operations per run (default 10000)")
    parser.add_argument(
        "--smartcomment-ops",
        type=int,
        default=2_000,
        help="operations for smartcomment, which is slow; its per-op figures are scaled (default 2000)",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per variant; the median counts (default 3)"
    )
    parser.add_argument(
        "--cheap-repeat",
        type=int,
        default=15,
        help="runs for the bare and disabled variants, whose sub-microsecond figures are noisy (default 15)",
    )
    parser.add_argument(
        "--stack-depth",
        type=int,
        default=0,
        help="extra Python frames above the pipeline, as in a real application (default 0)",
    )
    parser.add_argument("--seed", type=int, default=7, help="random seed for the messages (default 7)")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="time phases by wall clock (default) or this process's CPU time (steadier on a loaded machine)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    global clock
    clock = time.process_time if args.clock == "cpu" else time.perf_counter

    n, n_sc = args.ops, min(args.smartcomment_ops, args.ops)
    depth = args.stack_depth
    messages = make_messages(n, args.seed)
    cheap_repeat = max(args.repeat, args.cheap_repeat)
    version = code_version()
    console.print(
        f"[bold]tracing overhead[/bold]: memtrace {memtrace.__version__} ({version}), {n:,} ops "
        f"(smartcomment: {n_sc:,} ops, its per-op figures scaled from those), median of {args.repeat} runs "
        f"({cheap_repeat} for bare/disabled), stack depth +{depth}, {args.clock} clock; "
        f"Python {platform.python_version()}"
    )

    # One untimed warm-up of everything (imports, code paths, first SQLite file).
    warm = messages[: min(200, n)]
    for fn in (
        run_bare,
        run_memtrace,
        run_memtrace_disabled,
        run_memtrace_no_run,
        run_smartcomment,
        run_otel,
    ):
        measure(fn, warm, 1, depth)

    with console.status("bare pipeline"):
        bare = measure(run_bare, messages, cheap_repeat, depth)
        bare_sc = measure(run_bare, messages[:n_sc], cheap_repeat, depth)
    with console.status("memtrace disabled"):
        disabled = measure(run_memtrace_disabled, messages, cheap_repeat, depth)
        no_run = measure(run_memtrace_no_run, messages, cheap_repeat, depth)
    with console.status("memtrace"):
        mt = measure(run_memtrace, messages, args.repeat, depth)
    with console.status("OpenTelemetry"):
        otel = measure(run_otel, messages, args.repeat, depth)
    with console.status(f"smartcomment ({n_sc:,} ops)"):
        sc = measure(run_smartcomment, messages[:n_sc], args.repeat, depth)

    bare_us = per_op_us(bare["total"], n)
    bare_sc_us = per_op_us(bare_sc["total"], n_sc)

    def net(phases: dict[str, float], count: int, base_us: float, key: str = "total") -> float:
        return per_op_us(phases[key], count) - base_us

    m_us = net(mt, n, bare_us)
    ingest_us = per_op_us(mt["ingest"], n)
    sc_us = net(sc, n_sc, bare_sc_us)
    ot_us = net(otel, n, bare_us)
    off_us = max(net(disabled, n, bare_us), net(no_run, n, bare_us))
    figures: dict[str, Any] = {
        "memtrace_version": memtrace.__version__,
        "code_version": version,
        "ops": n,
        "smartcomment_ops": n_sc,
        "repeat": args.repeat,
        "cheap_repeat": cheap_repeat,
        "stack_depth": depth,
        "clock": args.clock,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "bare_us_per_op": bare_us,
        "memtrace": {
            "net_us_per_op": m_us,
            "record_net_us_per_op": net(mt, n, bare_us, "record"),
            "ingest_us_per_op": ingest_us,
            "net_with_ingest_us_per_op": m_us + ingest_us,
            "open_ms": mt["open"] * 1e3,
            "record_ms": mt["record"] * 1e3,
            "close_ms": mt["close"] * 1e3,
            "total_ms": mt["total"] * 1e3,
            "ingest_at_next_open_ms": mt["ingest"] * 1e3,
        },
        "smartcomment": {
            "net_us_per_op": sc_us,
            "record_net_us_per_op": net(sc, n_sc, bare_sc_us, "record"),
            "record_ms": sc["record"] * 1e3,
            "export_ms": sc["close"] * 1e3,
            "total_ms": sc["total"] * 1e3,
        },
        "opentelemetry": {
            "net_us_per_op": ot_us,
            "record_net_us_per_op": net(otel, n, bare_us, "record"),
            "total_ms": otel["total"] * 1e3,
        },
        "memtrace_disabled": {"net_us_per_op": net(disabled, n, bare_us)},
        "memtrace_no_run": {"net_us_per_op": net(no_run, n, bare_us)},
        "ratios": {
            "memtrace_vs_smartcomment": m_us / sc_us,
            "memtrace_vs_opentelemetry": m_us / ot_us,
            "memtrace_with_ingest_vs_smartcomment": (m_us + ingest_us) / sc_us,
            "memtrace_with_ingest_vs_opentelemetry": (m_us + ingest_us) / ot_us,
        },
        "goals": {
            "memtrace_le_1_50_smartcomment": m_us <= sc_us * GOAL_VS_SMARTCOMMENT,
            "memtrace_le_1_2_opentelemetry": m_us <= ot_us * GOAL_VS_OTEL,
            "disabled_lt_1us": off_us < GOAL_DISABLED_US,
        },
    }
    ratios = figures["ratios"]

    table = Table(
        title=f"Tracing cost per op (2 inputs, 1 output), net of the bare pipeline ({bare_us:.2f} us/op)"
    )
    table.add_column("tracer")
    table.add_column("us/op", justify="right")
    table.add_column("us/op before close", justify="right")
    table.add_column("memtrace / this", justify="right")
    table.add_column("ops timed", justify="right")
    table.add_column("what the figure covers")
    table.add_row(
        "memtrace",
        f"{m_us:.2f}",
        f"{figures['memtrace']['record_net_us_per_op']:.2f}",
        "1",
        f"{n:,}",
        f"run open {mt['open'] * 1e3:.1f} ms + recording {mt['record'] * 1e3:.1f} ms + close (final flush to "
        f"the journal) {mt['close'] * 1e3:.1f} ms",
    )
    table.add_row(
        "  + indexing at next open",
        f"{m_us + ingest_us:.2f}",
        "",
        "",
        f"{n:,}",
        f"memtrace.open() moves the journal into SQLite: {mt['ingest'] * 1e3:.1f} ms ({ingest_us:.2f} us/op)",
    )
    table.add_row(
        "smartcomment 0.1.2",
        f"{sc_us:.2f}",
        f"{figures['smartcomment']['record_net_us_per_op']:.2f}",
        f"{ratios['memtrace_vs_smartcomment']:.3f}",
        f"{n_sc:,}",
        f"comment_op per step; + export_graph() and JSON write {sc['close'] * 1e3:.1f} ms; scaled per op",
    )
    table.add_row(
        "OpenTelemetry SDK",
        f"{ot_us:.2f}",
        f"{figures['opentelemetry']['record_net_us_per_op']:.2f}",
        f"{ratios['memtrace_vs_opentelemetry']:.2f}",
        f"{n:,}",
        "one span per step, SimpleSpanProcessor -> InMemorySpanExporter",
    )
    table.add_row(
        "memtrace disabled()",
        f"{figures['memtrace_disabled']['net_us_per_op']:.3f}",
        "",
        "",
        f"{n:,}",
        f"the op() scope and its 3 calls as no-ops; median of {cheap_repeat}",
    )
    table.add_row(
        "memtrace, no run open",
        f"{figures['memtrace_no_run']['net_us_per_op']:.3f}",
        "",
        "",
        f"{n:,}",
        f"recording enabled but nothing to record to; median of {cheap_repeat}",
    )
    console.print(table)

    goals = Table(title="Goals (memtrace = run open + recording + close; indexing at next open shown aside)")
    goals.add_column("goal")
    goals.add_column("figure", justify="right")
    goals.add_column("status")
    goals.add_column("with indexing at next open", justify="right")
    goals.add_row(
        "memtrace <= 1/50 of smartcomment",
        f"1/{1 / ratios['memtrace_vs_smartcomment']:.1f}",
        goal_status(figures["goals"]["memtrace_le_1_50_smartcomment"]),
        f"1/{1 / ratios['memtrace_with_ingest_vs_smartcomment']:.1f}",
    )
    goals.add_row(
        "memtrace <= 1/2 of OpenTelemetry",
        f"{ratios['memtrace_vs_opentelemetry']:.2f}x",
        goal_status(figures["goals"]["memtrace_le_1_2_opentelemetry"]),
        f"{ratios['memtrace_with_ingest_vs_opentelemetry']:.2f}x",
    )
    goals.add_row(
        "disabled < 1 us per op (worse of the two)",
        f"{off_us:.3f} us",
        goal_status(figures["goals"]["disabled_lt_1us"]),
        "",
    )
    console.print(goals)

    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2))
        console.print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
