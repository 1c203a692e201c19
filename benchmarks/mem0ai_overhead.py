"""Tracing the real mem0 library: wall time of a traced `mem0.Memory` against the untraced library.

Two fresh Memory objects per round, one untraced and one traced (its run open for the whole round,
as `run --system mem0ai` records a conversation), take the same workload in lockstep: `--messages`
turns of the bundled sample conversations (seeds 0, 1, ... one after the other) as `add()` calls of
two messages, then `--questions` searches. Each call is timed on both, the two alternating who goes
first, so load from other processes falls on both alike. They talk to the tests' scripted
OpenAI-compatible server over real HTTP (one fact per message, ADD decisions, word-bag embeddings)
and keep their qdrant folders locally. The traced time adds `trace()`, opening the run (a new
workspace) and closing it (its rows written to the journal). The goal (issue 14): tracing adds
under 5% to the wall time. Reported per round: traced / untraced total time; per pair of rounds
(each Memory position traced once) their geometric mean; the median over pairs.

    .venv/bin/python benchmarks/mem0ai_overhead.py [--pairs 3] [--messages 200] [--questions 31]
    .venv/bin/python benchmarks/mem0ai_overhead.py --dir /dev/shm   # stores on tmpfs: less disk noise
    .venv/bin/python benchmarks/mem0ai_overhead.py --calibrate      # neither traced: the noise floor
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

import memtrace as mt
from memtrace.adapters.mem0ai import mem0_version, pipeline_for, trace
from memtrace.datasets import sample_conversation

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "llm"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "mem0ai"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mem0helpers import Mem0Script, Mem0Server, close_memory, make_memory

from _common import code_version, goal_status

console = Console(width=None if sys.stdout.isatty() else 150)
_SAID = re.compile(r"(?:user: )?([A-Z][a-z]+): (.+)")


class OneFactPerMessage(Mem0Script):
    """Each message of the exchange becomes one fact ('Caroline said: ...'); every fact is ADDed."""

    def extract(self, text: str) -> list[str]:
        return [f"{m.group(1)} said: {m.group(2).strip()}" for m in _SAID.finditer(text)]


def steps(turns: list[str], questions: list[str], classic: bool) -> list[Callable[[Any], Any]]:
    """The workload as single calls, each applied to a Memory."""
    calls: list[Callable[[Any], Any]] = []
    for start in range(0, len(turns), 2):
        batch = [{"role": "user", "content": t} for t in turns[start : start + 2]]
        calls.append(lambda memory, batch=batch: memory.add(batch, user_id="bench"))
    for question in questions:
        if classic:
            calls.append(lambda memory, q=question: memory.search(q, user_id="bench", limit=10))
        else:
            calls.append(lambda memory, q=question: memory.search(q, filters={"user_id": "bench"}, top_k=10))
    return calls


def one_round(
    server: Mem0Server,
    folder: Path,
    calls: list[Callable[[Any], Any]],
    per_call: list[float],
    trace_first: bool,
    calibrate: bool = False,
) -> tuple[float, float, float]:
    """(untraced seconds, traced seconds, of which opening and closing the run) of the workload run
    in lockstep on two fresh Memories; each call's traced / untraced ratio goes to `per_call`.

    With nothing traced the second Memory made is measurably slower than the first (about 6% here),
    so rounds alternate which of the two is traced and a pair of rounds cancels the position."""
    first, second = make_memory(server, folder / "first"), make_memory(server, folder / "second")
    traced_memory, bare_memory = (first, second) if trace_first else (second, first)
    bare = traced = 0.0
    try:
        started = time.perf_counter()
        if not calibrate:  # --calibrate: neither is traced, the two positions alone are compared
            trace(traced_memory)
        recorder = mt.run(folder / "ws", name="bench", system="mem0ai")
        recorder.__enter__()
        fixed = time.perf_counter() - started
        try:
            for number, call in enumerate(calls):
                spent = {}
                for memory in (bare_memory, traced_memory)[:: 1 if number % 2 else -1]:
                    started = time.perf_counter()
                    call(memory)
                    spent[memory is traced_memory] = time.perf_counter() - started
                bare += spent[False]
                traced += spent[True]
                per_call.append(spent[True] / spent[False])
        finally:
            started = time.perf_counter()
            recorder.__exit__(None, None, None)
            fixed += time.perf_counter() - started
        return bare, traced + fixed, fixed
    finally:
        close_memory(first)
        close_memory(second)


def measure(
    args: argparse.Namespace, home: str
) -> tuple[list[str], list[str], list[tuple[float, float, float]], list[float], int]:
    """Run the warm-up and the paired rounds with every store under `home`: (turns, questions, rounds
    as (untraced s, traced s, run open+close s), per-call ratios, HTTP requests)."""
    os.environ["MEM0_TELEMETRY"] = "False"  # before mem0 is first imported (in make_memory)
    os.environ["MEM0_DIR"] = os.path.join(home, "mem0-home")
    turns: list[str] = []
    seed = 0
    while len(turns) < args.messages:
        turns.extend(f"{t.speaker}: {t.rendered()}" for t in sample_conversation(seed).turns())
        seed += 1
    turns = turns[: args.messages]
    questions = [q.question for q in sample_conversation().questions][: args.questions]
    calls = steps(turns, questions, pipeline_for(mem0_version()) == "classic")
    rounds: list[tuple[float, float, float]] = []
    per_call: list[float] = []
    with Mem0Server(OneFactPerMessage()) as server:
        one_round(server, Path(tempfile.mkdtemp(dir=home)), calls[:2], [], True)  # warm-up
        for number in range(2 * args.pairs):
            folder = Path(tempfile.mkdtemp(dir=home))
            first = number % 2 == 0
            rounds.append(
                one_round(server, folder, calls, per_call, trace_first=first, calibrate=args.calibrate)
            )
        requests = server.request_count
    return turns, questions, rounds, per_call, requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="pairs of rounds (each Memory traced once)")
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--questions", type=int, default=31)
    parser.add_argument("--dir", default=None, help="where the stores and workspaces go (default: temp)")
    parser.add_argument("--calibrate", action="store_true", help="trace neither Memory (the noise floor)")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="memtrace-bench-mem0-", dir=args.dir)
    try:  # the stores of every round go here; removed on success, failure or Ctrl-C alike
        turns, questions, rounds, per_call, requests = measure(args, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    ratios = [traced / bare for bare, traced, _ in rounds]
    pairs = [math.sqrt(ratios[i] * ratios[i + 1]) for i in range(0, len(ratios), 2)]
    ratio = statistics.median(pairs)
    console.print(f"memtrace {code_version()}, mem0ai {mem0_version()}, Python {sys.version.split()[0]}")
    console.print(
        f"{len(turns) // 2} add() calls of 2 messages + {len(questions)} searches per round, on an untraced "
        f"and a traced Memory in lockstep; {2 * args.pairs} rounds ({requests} HTTP requests in all); "
        f"stores in {args.dir or tempfile.gettempdir()}"
    )
    for number, ((bare, traced, fixed), each) in enumerate(zip(rounds, ratios, strict=True), 1):
        console.print(
            f"round {number} (traced Memory made {'first' if number % 2 else 'second'}): untraced "
            f"{bare:.3f} s, traced {traced:.3f} s (run open + close {fixed * 1000:.0f} ms), ratio {each:.3f}"
        )
    console.print(
        f"ratio per pair (geometric mean, position cancelled): {', '.join(f'{p:.3f}' for p in pairs)}; "
        f"median {ratio:.3f}"
    )
    console.print(f"median of the {len(per_call)} per-call ratios: {statistics.median(per_call):.3f}")
    if args.calibrate:
        console.print("calibration: neither Memory was traced; the ratios are the noise of the method")
    else:
        console.print(f"goal: tracing adds < 5% -> {goal_status(ratio < 1.05)} ({(ratio - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
