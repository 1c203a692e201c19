"""With a model in the loop: how many model calls a one-operation replay makes, against the full run.

Offline, a replay's cost is the rules re-executed after the patch. With a model it is the calls
whose prompts the patch changed: the rest come from the record/replay cache. This records Mem0
in LLM mode on the first locomo-dev conversation against the scripted OpenAI-compatible test
server (deterministic replies: one fact per message, every fact added, a fixed answer), counts
the calls, then patches one extraction in the middle of construction and one answer and counts
the calls each replay sends. Call latency dominates with a real model (hundreds of ms against
the microseconds of the rules), so the ratio of calls is the ratio of time.

    .venv/bin/python benchmarks/replay_model_calls.py [--questions 199] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "llm"))

from llmhelpers import Reply, ScriptedOpenAIServer, scripted_client  # noqa: E402  (the test double)

import memtrace as mt  # noqa: E402
from memtrace.datasets import load_dataset, sample_conversation  # noqa: E402
from memtrace.eval import make_judge  # noqa: E402
from memtrace.systems import run_conversation  # noqa: E402
from memtrace.systems.mem0 import Mem0System  # noqa: E402
from memtrace.systems.mem0_prompts import FACT_EXTRACTION_PROMPT, UPDATE_PROMPT  # noqa: E402
from memtrace.systems.replay import replay  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo-dev.json"


def scripted_model(body: dict[str, Any]) -> Reply:
    """A deterministic stand-in model: a fact per message line, every new fact added, one answer."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    if system.startswith(FACT_EXTRACTION_PROMPT[:40]):
        lines = [line.split(": ", 1)[-1] for line in user.splitlines() if ": " in line]
        return Reply(json.dumps({"facts": [" ".join(line.split()[:14]) for line in lines if line]}))
    if system.startswith(UPDATE_PROMPT[:40]):
        facts = json.loads(user.rpartition("New facts:\n")[2])
        facts = facts if isinstance(facts, list) else [facts]
        return Reply(json.dumps({"memory": [{"id": "new", "text": f, "event": "ADD"} for f in facts]}))
    match = re.search(r"Question: (.*)", user)
    return Reply(f"Not mentioned ({match.group(1)[:20] if match else ''})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if LOCOMO.exists():
        (conversation,) = load_dataset(f"locomo:{LOCOMO}", conversations=1, questions=args.questions)
    else:
        conversation = sample_conversation(0)
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer(default=scripted_model) as server:
        workspace = Path(tmp)
        system = Mem0System(llm=scripted_client(server, workspace=workspace))
        result = run_conversation(system, conversation, workspace, judge=make_judge("f1"))
        full = len(server.chat_requests)
        with mt.open(workspace) as ws:
            graph = ws.graph(result.run_id)
            extractions = graph.ops_by_category("extraction")
            middle = extractions[len(extractions) // 2]
            case = next(c for c in ws.cases(result.run_id) if c.id == result.cases[len(result.cases) // 2].id)
            answer = graph.producers(case.prediction_var)[-1]
        patches = {
            "answer of one question": {answer.id: {"outputs": {"prediction": "patched"}}},
            "extraction in mid-construction": {middle.id: {"outputs": {"extracted_facts": ["A new fact."]}}},
        }
        figures: dict[str, Any] = {"conversation": conversation.id, "full_run_calls": full}
        table = Table(
            title=f"Model calls: Mem0 on {conversation.id} ({len(conversation.questions)} questions)"
        )
        for column in ("patch", "calls sent", "full run calls", "ratio"):
            table.add_column(column, justify="left" if column == "patch" else "right")
        for label, patch in patches.items():
            before = len(server.chat_requests)
            replay(
                workspace,
                result.run_id,
                patch,
                cases=[case.id],
                llm=scripted_client(server, workspace=workspace),
            )
            sent = len(server.chat_requests) - before
            figures[label] = sent
            table.add_row(label, str(sent), str(full), f"{full / sent:.0f}x" if sent else "all cached")
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
