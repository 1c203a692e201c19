"""Fault injection end to end on the sample, and counterfactual verification of attributions."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import OpenWorkspace
from memtrace.attribution.engine import attribute
from memtrace.attribution.verify.counterfactual import verify_all
from memtrace.bench.fault_bench import fault_benchmark
from memtrace.bench.memtracebench import evaluate_memtracebench
from memtrace.datasets import sample_conversation
from memtrace.systems import run_conversation
from memtrace.systems.long_context import LongContext, LongContextConfig
from memtrace.vocabulary import VERDICTS


def test_injected_faults_flip_answers_and_are_written_as_a_benchmark(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    out = tmp_path / "out"
    result = fault_benchmark(
        ["long_context", "rag"],
        "sample",
        tmp_path / "ws",
        out,
        per_type=2,
        methods=["flow", "last-op"],
        memtracebench=True,
        keep_replays=True,
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
    ws = open_ws(tmp_path / "ws")
    replays = [r for r in ws.runs() if r.parent_run]
    assert len(replays) == result["labelled"] and all("patches" in r.metadata["replay"] for r in replays)
    assert set(result["written"]) == {
        str(p) for p in (out / "faults.json", out / "faults.png", tmp_path / "ws")
    } | {str(out / "memtracebench")}


def test_the_benchmark_keeps_only_the_recorded_runs_by_default(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    """Replays read back hold a full copy of their run: kept, hundreds of them made gigabytes."""
    out = tmp_path / "out"
    result = fault_benchmark(["rag"], "sample", tmp_path / "ws", out, per_type=2, methods=["flow", "random"])
    assert result["labelled"] >= 4
    ws = open_ws(tmp_path / "ws")
    assert [r.parent_run for r in ws.runs()] == [None]
    assert not (out / "memtracebench").exists() and not list((tmp_path / "ws" / "journal").glob("*"))
    assert set(result["written"]) == {str(out / "faults.json"), str(out / "faults.png"), str(tmp_path / "ws")}
    again = fault_benchmark(
        ["rag"], "sample", tmp_path / "ws2", tmp_path / "out2", per_type=2, methods=["random"]
    )
    assert again["results"]["random"] == result["results"]["random"]  # reproducible under the seed


def test_trimming_losses_are_confirmed_with_later_trims_keeping_the_message(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    """Keeping the version before one trim alone is undone by the next trim; verification replays the
    repair again with later trims keeping the restored line (the criterion's ideal later operations)."""
    run = run_conversation(LongContext(LongContextConfig(max_tokens=600)), sample_conversation(0), tmp_path)
    attribute(open_ws(tmp_path), "flow")
    outcomes = verify_all(tmp_path, method="flow")
    verdicts = {(o.attribution.error_type, o.verdict) for o in outcomes}
    confirmed = {"flow-confirmed", "answer-confirmed"}
    assert any(kind == "UpdateError" and verdict in confirmed for kind, verdict in verdicts), verdicts
    assert any(
        kind == "ResponseError" and verdict in {*confirmed, "by-elimination"} for kind, verdict in verdicts
    )
    recurring = next(o for o in outcomes if o.why == "kept-by-later-trims")
    assert open_ws(tmp_path).run(recurring.replay_run).parent_run == run.run_id
    stored = attribute(open_ws(tmp_path), "flow", run=run.run_id)  # replays have failed cases of their own
    assert all(a.verified in VERDICTS for a in stored)


def test_an_injected_deletion_is_attributed_and_its_repair_verified(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    """Inject a deletion by replay, attribute the new failure, and repair it by replay again."""
    from memtrace.attribution.verify.counterfactual import verify
    from memtrace.bench.faults import Injector
    from memtrace.systems.replay import replay

    run = run_conversation(LongContext(), sample_conversation(0), tmp_path)
    ws = open_ws(tmp_path)
    injector = Injector(ws.view(run.run_id))
    planned = [
        i for c in ws.cases(run.run_id) if c.verdict == "correct" for i in injector.plan(c)
        if i.error_type == "DeletionError"
    ]  # fmt: skip
    for injection in planned:
        broken = replay(tmp_path, run.run_id, injection.patch, cases=[injection.case_id])
        if not broken.case(injection.case_id).correct:
            break
    else:
        raise AssertionError("no injected deletion flipped an answer")
    ws = open_ws(tmp_path)
    (attribution,) = attribute(ws, "flow", run=broken.run_id)
    assert (attribution.error_type, attribution.op_id) == ("DeletionError", injection.op_id)
    outcome = verify(ws, attribution)
    assert (outcome.verdict, outcome.flow_confirmed) == ("answer-confirmed", True), outcome.reason


def test_an_evermemos_extraction_fault_is_blamed_on_the_memcell_extraction(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    """The buffer holds the raw message (no date); the memcell extraction is where it failed to enter
    memory, and the raw memcell it writes is a dead end retrieval never searches."""
    from memtrace.bench.faults import Injector
    from memtrace.systems.evermemos import EverMemOSSystem
    from memtrace.systems.replay import replay

    run = run_conversation(EverMemOSSystem(), sample_conversation(0), tmp_path)
    ws = open_ws(tmp_path)
    injector = Injector(ws.view(run.run_id))
    planned = [
        i for c in ws.cases(run.run_id) if c.verdict == "correct" for i in injector.plan(c)
        if i.error_type == "ExtractionError"
    ]  # fmt: skip
    flipped = []
    for injection in planned:
        broken = replay(tmp_path, run.run_id, injection.patch, cases=[injection.case_id])
        if not broken.case(injection.case_id).correct:
            flipped.append((injection, broken.run_id))
    assert flipped, "no injected extraction fault flipped an answer"
    ws = open_ws(tmp_path)
    for injection, replay_run in flipped:
        (attribution,) = attribute(ws, "flow", run=replay_run)
        assert (attribution.error_type, attribution.op_id) == ("ExtractionError", injection.op_id)
        assert ws.graph(replay_run).op(attribution.op_id).name == "extract_memcell"
