"""Tracing the real mem0 library: wall time of a traced `mem0.Memory` against the untraced library.

The same workload (`--messages` turns of the bundled sample conversations, seeds 0, 1, ... one after
the other, as `add()` calls of two messages, then `--questions` searches) runs on a fresh Memory per
round, untraced and traced in alternation, against the tests' scripted OpenAI-compatible server
over real HTTP (one fact per message, ADD decisions, word-bag embeddings) with a local qdrant
folder. A traced round is one run, as `run --system mem0ai` records a conversation: its time
includes `trace()`, opening the run (a new workspace), recording and closing it. The goal
(issue 14): tracing adds under 5% to the wall time. Reported: the ratio of the median round times,
the median of the per-pair ratios, and process CPU per round.

    .venv/bin/python benchmarks/mem0ai_overhead.py [--rounds 9] [--messages 200] [--questions 31]
    .venv/bin/python benchmarks/mem0ai_overhead.py --dir /dev/shm   # stores on tmpfs: less disk noise
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
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


def workload(memory: Any, turns: list[str], questions: list[str], classic: bool) -> None:
    for start in range(0, len(turns), 2):
        memory.add([{"role": "user", "content": t} for t in turns[start : start + 2]], user_id="bench")
    for question in questions:
        if classic:
            memory.search(question, user_id="bench", limit=10)
        else:
            memory.search(question, filters={"user_id": "bench"}, top_k=10)


def one_round(
    server: Mem0Server, folder: Path, traced: bool, turns: list[str], questions: list[str]
) -> tuple[float, float]:
    """(wall seconds, process CPU seconds, the server thread's included) of one workload."""
    memory = make_memory(server, folder / "mem0")
    try:
        started, cpu = time.perf_counter(), time.process_time()
        if traced:
            tracer = trace(memory)
            with mt.run(folder / "ws", name="bench", system="mem0ai"):
                workload(memory, turns, questions, tracer.pipeline == "classic")
        else:
            workload(memory, turns, questions, pipeline_for(mem0_version()) == "classic")
        return time.perf_counter() - started, time.process_time() - cpu
    finally:
        close_memory(memory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="pairs of rounds (untraced, traced)")
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--dir", default=None, help="where the stores and workspaces go (default: temp)")
    parser.add_argument("--questions", type=int, default=31)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="memtrace-bench-mem0-", dir=args.dir)
    os.environ["MEM0_TELEMETRY"] = "False"  # before mem0 is first imported (in make_memory)
    os.environ["MEM0_DIR"] = os.path.join(home, "mem0-home")
    turns: list[str] = []
    seed = 0
    while len(turns) < args.messages:
        turns.extend(f"{t.speaker}: {t.rendered()}" for t in sample_conversation(seed).turns())
        seed += 1
    turns = turns[: args.messages]
    questions = [q.question for q in sample_conversation().questions][: args.questions]
    bare: list[float] = []
    traced: list[float] = []
    cpu: dict[bool, list[float]] = {False: [], True: []}
    with Mem0Server(OneFactPerMessage()) as server:
        for warm in (False, True):
            one_round(server, Path(tempfile.mkdtemp(dir=home)), warm, turns[:2], questions[:1])
        for number in range(args.rounds):
            order = (False, True) if number % 2 == 0 else (True, False)  # alternate who goes first
            for is_traced in order:
                seconds, used = one_round(
                    server, Path(tempfile.mkdtemp(dir=home)), is_traced, turns, questions
                )
                (traced if is_traced else bare).append(seconds)
                cpu[is_traced].append(used)
        requests = server.request_count
    shutil.rmtree(home, ignore_errors=True)
    ratio = statistics.median(traced) / statistics.median(bare)
    paired = statistics.median(t / b for t, b in zip(traced, bare, strict=True))
    console.print(f"memtrace {code_version()}, mem0ai {mem0_version()}, Python {sys.version.split()[0]}")
    console.print(
        f"{len(turns) // 2} add() calls of 2 messages + {len(questions)} searches per round, "
        f"{args.rounds} rounds each ({requests} HTTP requests in all)"
    )
    console.print(f"untraced: median {statistics.median(bare):.3f} s  (min {min(bare):.3f})")
    console.print(f"traced:   median {statistics.median(traced):.3f} s  (min {min(traced):.3f})")
    console.print(
        f"process CPU per round (client and server threads): untraced {statistics.median(cpu[False]):.3f} s, "
        f"traced {statistics.median(cpu[True]):.3f} s"
    )
    console.print(
        f"ratio of medians {ratio:.3f}, median of paired ratios {paired:.3f}, "
        f"ratio of minima {min(traced) / min(bare):.3f}, stores in {args.dir or tempfile.gettempdir()}"
    )
    console.print(f"goal: tracing adds < 5% -> {goal_status(ratio < 1.05)} (+{(ratio - 1) * 100:.1f}%)")


if __name__ == "__main__":
    main()
