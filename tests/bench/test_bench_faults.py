"""Fault injection end to end on the sample, and counterfactual verification of attributions."""

from __future__ import annotations

import json
from pathlib import Path

import memtrace as mt
from memtrace.attribution.engine import attribute
from memtrace.attribution.verify import verify_all
from memtrace.bench.fault_bench import fault_benchmark
from memtrace.bench.memtracebench import evaluate_memtracebench
from memtrace.datasets import sample_conversation
from memtrace.systems import run_conversation
from memtrace.systems.long_context import LongContext, LongContextConfig


def test_injected_faults_flip_answers_and_are_written_as_a_benchmark(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = fault_benchmark(
        ["long_context", "rag"], "sample", tmp_path / "ws", out, per_type=2, methods=["flow", "last-op"]
    )
    assert result["labelled"] >= 8
    flow, last = result["results"]["flow"]["all"], result["results"]["last-op"]["all"]
    assert flow["op_accuracy"] > last["op_accuracy"]
    assert set(result["results"]["flow"]["by_type"]) >= {"RetrievalError", "ResponseError", "ExtractionError"}
    assert json.loads((out / "faults.json").read_text())["labelled"] == result["labelled"]
    assert (out / "faults.png").stat().st_size > 1000
    again = evaluate_memtracebench(out / "memtracebench", method="flow")
    assert again["all"]["cases"] == result["labelled"]
    assert again["all"]["op_accuracy"] == flow["op_accuracy"]
    ws = mt.open(tmp_path / "ws")
    replays = [r for r in ws.runs() if r.parent_run]
    assert replays and all("patches" in r.metadata["replay"] for r in replays)


def test_trimming_update_errors_are_checked_by_replay(tmp_path: Path) -> None:
    """Keeping the version before a trim rescues an answer only if no later trim drops it again."""
    run = run_conversation(LongContext(LongContextConfig(max_tokens=600)), sample_conversation(0), tmp_path)
    attribute(mt.open(tmp_path), "flow")
    outcomes = verify_all(tmp_path, method="flow")
    verdicts = {(o.attribution.error_type, o.verdict) for o in outcomes}
    assert ("UpdateError", "true") in verdicts and ("UpdateError", "false") in verdicts
    assert ("ResponseError", "by-elimination") in verdicts
    verified = next(o for o in outcomes if o.verdict == "true")
    replayed = mt.open(tmp_path).run(verified.replay_run)
    assert replayed.parent_run == verified.attribution.run_id
    stored = attribute(mt.open(tmp_path), "flow", run=run.run_id)  # replays have failed cases of their own
    assert all(a.verified in ("true", "false", "by-elimination", "not-verifiable") for a in stored)
