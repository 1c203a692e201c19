"""Model-bound runs: `memtrace run --llm openai` against a slow model, 1 worker against N workers.

A scripted stand-in for a model server (`ScriptedModelStandIn`, OpenAI-compatible, on 127.0.0.1)
answers every chat call after `--latency` seconds (300 ms) with the scripted replies the tests use
(tests/executors/scripted_replies.py: JSON matching the schema asked for, built from the request's
own words, so equal requests get equal replies). The work then waits on the model, not on the CPU.
The same command runs three times, as the CLI runs it (a subprocess), into fresh workspaces:

    memtrace run WS --system all --dataset sample --llm openai --model scripted --base-url URL \
        --workers 1 --concurrency 1     # one call at a time: what --workers 1 did before issue 21
    memtrace run WS ... --workers 1     # the default --concurrency 4: questions fetched 4 at a time
    memtrace run WS ... --workers 8 --concurrency 8

`--concurrency` bounds the calls in flight to the endpoint over all workers together; its default,
4, would cap the speed-up at 4x, hence 8 here. The stores are compared (clock columns aside), for
the systems whose runs are deterministic: mem0ai names its memories with random ids.

    .venv/bin/python benchmarks/model_bound.py [--workers 8] [--system all] [--latency 0.3] \
        [-- extra run flags, e.g. --conversations 4]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "executors"))

from _common import code_version

#: The embedding size of the default embedding model (mem0ai's qdrant collection is made with it).
EMBED_DIM = 1536


class ScriptedModelStandIn:
    """A scripted stand-in for an OpenAI-compatible model server: scripted replies after a delay."""

    def __init__(self, latency: float) -> None:
        from scripted_replies import scripted_reply

        self.latency = latency
        self.reply = scripted_reply
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.latency)
            if path.endswith("/embeddings"):
                texts = body.get("input", [])
                texts = [texts] if isinstance(texts, str) else texts
                return {
                    "object": "list",
                    "data": [{"index": i, "embedding": _vector(t)} for i, t in enumerate(texts)],
                    "model": body.get("model", "stand-in"),
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            text = self.reply(body)
            return {
                "id": "stand-in",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "stand-in"),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        finally:
            with self._lock:
                self.in_flight -= 1

    def __enter__(self) -> ScriptedModelStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _vector(text: str) -> list[float]:
    """A deterministic unit-length-ish vector from a text's hash."""
    seed = hashlib.sha256(text.encode()).digest()
    return [(seed[i % 32] - 128) / 128 / 40 for i in range(EMBED_DIM)]


def _handler(server: ScriptedModelStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            data = json.dumps(server.answer(self.path, json.loads(raw or b"{}"))).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


def timed_run(workspace: Path, url: str, system: str, flags: list[str]) -> float:
    command = [str(Path(sys.executable).parent / "memtrace"), "run", str(workspace), "--system", system]
    command += ["--dataset", "sample", "--llm", "openai", "--model", "scripted", "--base-url", url, *flags]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def deterministic_rows(workspace: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The store's rows (clock columns aside) without mem0ai's runs."""
    from store_dump import store_rows

    rows = store_rows(workspace)
    drop = {row[0] for row in rows["runs"] if "mem0ai" in row}
    return {table: [row for row in got if row[0] not in drop] for table, got in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--system", default="all")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the stand-in takes per call")
    parser.add_argument(
        "extra", nargs="*", help="more `memtrace run` flags (after --), e.g. --conversations 4"
    )
    options = parser.parse_args()
    many = str(options.workers)
    setups = {
        "--workers 1 --concurrency 1": ["--workers", "1", "--concurrency", "1"],
        "--workers 1": ["--workers", "1"],
        f"--workers {many} --concurrency {many}": ["--workers", many, "--concurrency", many],
    }
    load_before = os.getloadavg()
    seconds, calls, peaks, stores = {}, {}, {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for number, (label, flags) in enumerate(setups.items()):
            with ScriptedModelStandIn(options.latency) as stand_in:
                workspace = Path(scratch) / f"ws{number}"
                seconds[label] = timed_run(workspace, stand_in.url, options.system, [*flags, *options.extra])
                calls[label], peaks[label] = stand_in.calls, stand_in.max_in_flight
            stores[label] = deterministic_rows(workspace)
    load_after = os.getloadavg()
    extra = " ".join(options.extra)
    print(f"memtrace {code_version()}, {os.cpu_count()} cores, latency {options.latency * 1000:.0f} ms")
    print(f"memtrace run WS --system {options.system} --dataset sample --llm openai ... {extra}")
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f}")
    for label in setups:
        print(
            f"{label}: {seconds[label]:.1f} s, {calls[label]} model calls, at most {peaks[label]} in flight"
        )
    first, default, last = list(setups)
    for base in (first, default):
        ratio = seconds[base] / seconds[last]
        print(f"{last} against {base}: {ratio:.2f}x (goal >= 5x: {'met' if ratio >= 5 else 'not met'})")
    same = all(stores[label] == stores[first] for label in setups)
    print(f"stores identical (mem0ai aside): {same}")


if __name__ == "__main__":
    main()
