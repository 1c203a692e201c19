"""Agent attribution tokens per case on a scripted run (no model needed).

Records Mem0 offline on the sample conversations (and, when present, the first 50 questions of
locomo-dev's first conversation), then runs the LLM agent on every failed case against the
scripted OpenAI-compatible test server, with a fixed 6-step exploration (start, expand the
evidence, expand its extraction, memory state, view the context, finish). Tokens are estimated as
the characters sent / 4 plus the reply tokens: the prompt sizes the agent's tools really produce.

    .venv/bin/python benchmarks/agent_tokens.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "llm"), str(ROOT / "tests" / "attribution")]

from llmhelpers import ScriptedOpenAIServer, scripted_client  # noqa: E402  (the test double)
from test_attr_agent import six_steps  # noqa: E402

import memtrace as mt  # noqa: E402
from memtrace.attribution.methods.agent import AgentMethod  # noqa: E402
from memtrace.datasets import load_dataset, sample_conversation  # noqa: E402
from memtrace.systems import run_conversation  # noqa: E402
from memtrace.systems.mem0 import Mem0System  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo-dev.json"
GOAL = 30_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    conversations = [sample_conversation(seed) for seed in range(3)]
    if LOCOMO.exists():
        conversations += load_dataset(f"locomo:{LOCOMO}", conversations=1, questions=50)
    table = Table(title="Agent tokens per failed case (6 scripted steps)")
    for column in ("conversation", "ops", "failed cases", "mean tokens", "max tokens", "goal"):
        table.add_column(column, justify="left" if column == "conversation" else "right")
    figures = {}
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer() as server:
        method = AgentMethod(scripted_client(server))
        for conversation in conversations:
            result = run_conversation(Mem0System(), conversation, Path(tmp) / conversation.id)
            ws = mt.open(Path(tmp) / conversation.id)
            graph = ws.view(result.run_id)
            tokens = []
            for case in (c for c in ws.cases(result.run_id) if c.failed and c.evidence):
                before = len(server.chat_requests)
                server.enqueue(*six_steps(graph, case))
                attribution = method.attribute(graph, case)
                sent = server.chat_requests[before:]
                chars = sum(len(m["content"]) for r in sent for m in r.messages)
                tokens.append(chars // 4 + attribution.cost.output_tokens)
            mean = statistics.mean(tokens)
            figures[conversation.id] = {
                "ops": len(graph.ops),
                "cases": len(tokens),
                "mean": mean,
                "max": max(tokens),
            }
            table.add_row(
                conversation.id,
                f"{len(graph.ops):,}",
                str(len(tokens)),
                f"{mean:,.0f}",
                f"{max(tokens):,}",
                "met" if mean < GOAL else "not met",
            )
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
