"""OTLP import at scale, and the OTLP receiver under duplicate spans (issue 20).

Writes OTLP/JSON files as an OpenTelemetry collector's file exporter would (JSON lines, one
ExportTraceServiceRequest of at most 512 spans per line) holding GenAI memory spans of
conversations: per session a model call that extracts a fact and a create, update or delete of a
memory record; per question a memory search (its query and the records it returned) and an answer
carrying a `gen_ai.evaluation.result` event (a case), about 1 kB per span with the attributes
instrumented model clients add. Two shapes for each size (10k and 100k spans by default):
`many`, traces of 1,000 spans (a run per conversation), and `one`, every span in one trace (the
worst case for anything done per case over a trace). Each file is imported by
`memtrace.interop.otlp.importer.import_otlp` into a fresh workspace in a child process, which
reports its wall and CPU time and peak RSS (`ru_maxrss`); the ratio of the times is printed per
shape (CPU time is the steadier figure on a shared machine).

Then the receiver: one 118-span trace POSTed 40 times (OTLP/JSON over HTTP) to an `OtlpReceiver`
on a loopback port: the operations stored and the time of the first and the last request.

    .venv/bin/python benchmarks/otlp_import_scale.py [--sizes 10000 100000] [--shapes many one]
                                                     [--receiver-only] [--keep DIR]

Nothing is written to RESULTS.md; copy the figures there by hand.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import code_version

BATCH = 512
SHAPES = ("many", "one")
NAMES = ("Caroline", "Melanie", "Jon", "Gina", "Nate", "Joanna", "Audrey", "Andrew")
PLACES = ("Boston", "Paris", "Lisbon", "Denver", "Osaka", "Toronto", "Lyon", "Austin")
HOBBIES = ("hiking", "painting", "pottery", "chess", "surfing", "baking", "running", "cello")
FILLER = (
    "We talked for a while about the week, the weather, a film we both saw and what the kids did at"
    " school, and then about plans for the summer holidays and the people we might visit there. She said"
    " the new flat is small but bright, that the neighbours are friendly and the bakery downstairs opens"
    " early, and that she still misses the old place sometimes, mostly the park and the long walks."
)


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _model_call(rng: random.Random) -> dict[str, Any]:
    """What an instrumented model client records besides the messages."""
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "their-model",
        "gen_ai.response.model": "their-model-2025-01-01",
        "gen_ai.response.id": f"chatcmpl-{rng.getrandbits(96):024x}",
        "gen_ai.response.finish_reasons": "stop",
        "gen_ai.request.temperature": 0.0,
        "gen_ai.usage.input_tokens": rng.randint(80, 900),
        "gen_ai.usage.output_tokens": rng.randint(5, 60),
        "server.address": "api.their-models.example",
        "server.port": 443,
    }


class _Trace:
    """The spans of one conversation, with hex ids and start times that increase by a millisecond."""

    def __init__(self, number: int, rng: random.Random) -> None:
        self.trace_id = f"{number + 1:032x}"
        self.rng = rng
        self.spans: list[dict[str, Any]] = []
        self.clock = 1_700_000_000_000_000_000 + number * 10**13
        self.next_id = 1

    def span(
        self,
        name: str,
        parent: str | None,
        attributes: dict[str, Any],
        *,
        kind: int = 1,
        events: list[dict[str, Any]] | None = None,
    ) -> str:
        span_id = f"{self.next_id:016x}"
        self.next_id += 1
        self.clock += 1_000_000
        record: dict[str, Any] = {
            "traceId": self.trace_id,
            "spanId": span_id,
            "name": name,
            "kind": kind,
            "startTimeUnixNano": str(self.clock),
            "endTimeUnixNano": str(self.clock + 500_000),
            "attributes": [_attr(k, v) for k, v in attributes.items()],
        }
        if parent:
            record["parentSpanId"] = parent
        if events:
            record["events"] = events
        self.spans.append(record)
        return span_id


def conversation(number: int, size: int) -> list[dict[str, Any]]:
    """One trace of about `size` spans: sessions stored as memories, then questions about them."""
    rng = random.Random(number)
    trace = _Trace(number, rng)
    store = f"user-{number}-memories"
    root = trace.span("invoke_agent assistant", None, {"gen_ai.operation.name": "invoke_agent"}, kind=2)
    records: dict[str, str] = {}
    questions = max(1, size * 3 // 10 // 3)
    session = 0
    while len(trace.spans) < size - questions * 3:
        session += 1
        person, place, hobby = rng.choice(NAMES), rng.choice(PLACES), rng.choice(HOBBIES)
        said = f"{person}: session {session}. I moved to {place} and took up {hobby}. {FILLER}"
        fact = f"{person} lives in {place} and does {hobby} (session {session})"
        batch = trace.span("add_memories", root, {}, kind=5)
        chat = {
            **_model_call(rng),
            "gen_ai.input.messages": _messages("user", said),
            "gen_ai.output.messages": _messages("assistant", fact),
        }
        trace.span("chat their-model", batch, chat, kind=3)
        roll = rng.random()
        if records and roll < 0.2:
            operation, record_id = "update_memory", rng.choice(sorted(records))
        elif records and roll < 0.3:
            operation, record_id = "delete_memory", rng.choice(sorted(records))
        else:
            operation, record_id = "create_memory", f"rec-{number}-{session}"
        memory = {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": "their-memory-service",
            "server.address": "memory.internal.example",
            "gen_ai.memory.store.id": store,
            "gen_ai.memory.record.id": record_id,
        }
        if operation == "delete_memory":
            records.pop(record_id, None)
        else:
            records[record_id] = fact
            memory["gen_ai.memory.records"] = json.dumps([{"id": record_id, "content": fact}])
        trace.span(operation, batch, memory, kind=3)
    for asked in range(1, questions + 1):
        person = rng.choice(NAMES)
        question = f"Question {asked}: where does {person} live now?"
        parent = trace.span("answer_question", root, {})
        found = rng.sample(sorted(records), min(3, len(records)))
        search = {
            "gen_ai.operation.name": "search_memory",
            "gen_ai.provider.name": "their-memory-service",
            "server.address": "memory.internal.example",
            "gen_ai.memory.store.id": store,
            "gen_ai.memory.query.text": question,
            "gen_ai.memory.record.count": len(found),
            "gen_ai.memory.records": json.dumps([{"id": r, "content": records[r]} for r in found]),
        }
        trace.span("search_memory", parent, search, kind=3)
        context = "\n".join(records[r] for r in found)
        answer = {
            **_model_call(rng),
            "gen_ai.input.messages": _messages("user", f"Memories:\n{context}\n{question}"),
            "gen_ai.output.messages": _messages("assistant", f"{person} lives in {rng.choice(PLACES)}."),
        }
        label = "pass" if rng.random() < 0.6 else "fail"
        event = {
            "name": "gen_ai.evaluation.result",
            "timeUnixNano": str(trace.clock + 400_000),
            "attributes": [
                _attr("gen_ai.evaluation.name", "correctness"),
                _attr("gen_ai.evaluation.score.label", label),
                _attr("memtrace.case.id", f"q{asked}"),
            ],
        }
        trace.span("chat their-model", parent, answer, kind=3, events=[event])
    return trace.spans


def requests_of(spans: list[dict[str, Any]], service: str) -> Iterator[dict[str, Any]]:
    """OTLP/JSON ExportTraceServiceRequests of at most BATCH spans each."""
    for start in range(0, len(spans), BATCH):
        yield {
            "resourceSpans": [
                {
                    "resource": {"attributes": [_attr("service.name", service)]},
                    "scopeSpans": [{"scope": {"name": "their-app"}, "spans": spans[start : start + BATCH]}],
                }
            ]
        }


def write_file(path: Path, total: int, traces: int) -> int:
    """An OTLP/JSON lines file of `traces` conversations making `total` spans; returns its spans."""
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        for number in range(traces):
            spans = conversation(number, total // traces)
            written += len(spans)
            for request in requests_of(spans, "their-app"):
                handle.write(json.dumps(request) + "\n")
    return written


def import_once(path: Path) -> None:
    """In a child process: import one file into a fresh workspace; print seconds, peak RSS, counts."""
    from memtrace.graph import Workspace
    from memtrace.interop.otlp.importer import import_otlp

    with tempfile.TemporaryDirectory() as folder, Workspace(Path(folder) / "ws", create=True) as ws:
        started, cpu_started = time.perf_counter(), time.process_time()
        runs = import_otlp(ws.store, path)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        ops = sum(len(ws.store.ops(run.id)) for run in runs)
        cases = sum(len(ws.store.cases(run.id)) for run in runs)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mb": peak_mb, "ops": ops, "cases": cases}))


def receiver_under_duplicates(sends: int = 40, size: int = 118) -> dict[str, Any]:
    """One trace POSTed `sends` times: operations stored and per-request seconds."""
    from memtrace.graph import Workspace
    from memtrace.interop.otlp.receiver import OtlpReceiver

    spans = conversation(0, size)
    (request,) = list(requests_of(spans, "their-app"))
    body = json.dumps(request).encode()
    times = []
    with tempfile.TemporaryDirectory() as folder, Workspace(Path(folder) / "ws", create=True) as ws:
        receiver = OtlpReceiver(ws.store, "127.0.0.1", 0).start()
        host, port = receiver.server.server_address[:2]
        try:
            for _ in range(sends):
                connection = http.client.HTTPConnection(str(host), int(port), timeout=60)
                started = time.perf_counter()
                connection.request("POST", "/v1/traces", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                times.append(time.perf_counter() - started)
                connection.close()
                assert response.status == 200, response.status
        finally:
            receiver.close()
        (run,) = ws.runs()
        ops, cases = len(ws.store.ops(run.id)), len(ws.store.cases(run.id))
    first, last = times[0], times[-1]
    return {"spans": len(spans), "sends": sends, "ops": ops, "cases": cases, "first": first, "last": last}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--shapes",
        nargs="+",
        choices=SHAPES,
        default=list(SHAPES),
        help="many: traces of 1,000 spans; one: every span in one trace",
    )
    parser.add_argument("--receiver-only", action="store_true", help="only the receiver under duplicates")
    parser.add_argument("--keep", type=Path, help="write the generated files here (kept)")
    parser.add_argument("--import-one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.import_one:
        import_once(args.import_one)
        return
    print(f"code {code_version()}")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="otlp-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for shape in [] if args.receiver_only else args.shapes:
            scale(folder, args.sizes, shape, keep=args.keep is not None)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    duplicates = receiver_under_duplicates()
    print(
        f"receiver: a {duplicates['spans']}-span trace sent {duplicates['sends']} times:"
        f" {duplicates['ops']:,} operations, {duplicates['cases']} cases;"
        f" request 1 {duplicates['first']:.3f} s, request {duplicates['sends']} {duplicates['last']:.3f} s"
    )


def scale(folder: Path, sizes: list[int], shape: str, *, keep: bool) -> None:
    """Write and import one file per size; print each import's figures and the time ratio."""
    seconds: dict[int, float] = {}
    cpu: dict[int, float] = {}
    for total in sizes:
        traces = max(1, total // 1000) if shape == "many" else 1
        path = folder / f"otlp-{total}-{shape}.json"
        spans = write_file(path, total, traces)
        child = subprocess.run(
            [sys.executable, __file__, "--import-one", str(path)], capture_output=True, text=True, check=False
        )
        if child.returncode != 0:
            print(f"{total} spans: import failed\n{child.stderr[-2000:]}")
            continue
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        seconds[total], cpu[total] = figures["seconds"], figures["cpu"]
        size_mb = path.stat().st_size / 1e6
        print(
            f"{shape}: {spans:,} spans in {traces} trace(s) ({size_mb:.0f} MB): import"
            f" {figures['seconds']:.1f} s (CPU {figures['cpu']:.1f} s), peak RSS {figures['peak_mb']:.0f} MB;"
            f" {figures['ops']:,} operations, {figures['cases']:,} cases"
        )
        if not keep:
            path.unlink()
    if len(seconds) >= 2:
        small, large = min(seconds), max(seconds)
        print(
            f"{shape}: time ratio {large:,}/{small:,} spans: {seconds[large] / seconds[small]:.1f}"
            f" (CPU {cpu[large] / cpu[small]:.1f})"
        )


if __name__ == "__main__":
    main()
