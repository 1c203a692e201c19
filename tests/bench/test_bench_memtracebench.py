"""`memtrace bench memtracebench` on a MemTraceBench-layout directory written from labelled toy runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.bench.memtracebench import evaluate_memtracebench
from memtrace.interop import export_smartcomment

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "attribution"))
from test_attr_flow import build

FAULTS = {
    "extraction": ("ExtractionError", "extract_facts"),
    "update": ("UpdateError", "update_memory_decision"),
    "deletion": ("DeletionError", "delete_memory"),
    "retrieval": ("RetrievalError", "search"),
    "response": ("ResponseError", "answer"),
}


def write_benchmark(root: Path, workspace: Path) -> Path:
    """Each toy run exported as smartcomment JSON with its gold label as a MemTraceBench annotation."""
    bench = root / "bench"
    for fault, (error_type, op_name) in FAULTS.items():
        run_id = build(workspace / fault, fault)
        with mt.open(workspace / fault) as ws:
            graph = ws.graph(run_id)
            (case,) = ws.cases(run_id)
            ops = [o for o in ws.store.ops(run_id) if o.name == op_name]
            gold_op = ops[-1].id
            data = export_smartcomment(ws.store, run_id)
            data["data"]["annotations"] = [
                {
                    "query_id": case.id,
                    "query": case.question,
                    "golden_answers": case.gold,
                    "golden_answers_id": None,
                    "prediction": case.prediction,
                    "prediction_id": case.prediction_var,
                    "source_evidence_ids": [graph.versions(e)[-1].id for e in case.evidence],
                    "final_error_type": error_type,
                    "final_op_id": gold_op,
                }
            ]
        split = "toy-a" if fault in ("extraction", "update") else "toy-b"
        (bench / split).mkdir(parents=True, exist_ok=True)
        (bench / split / f"{fault}.json").write_text(json.dumps(data))
    return bench


def test_flow_scores_perfectly_on_labelled_toy_faults(tmp_path: Path) -> None:
    bench = write_benchmark(tmp_path, tmp_path / "runs")
    result = evaluate_memtracebench(bench, method="flow")
    assert result["all"]["cases"] == 5
    assert result["all"]["op_accuracy"] == 1.0 and result["all"]["type_accuracy"] == 1.0
    assert set(result["splits"]) == {"toy-a", "toy-b"}
    assert result["all"]["confusion"]["UpdateError"] == {"UpdateError": 1}


def test_last_op_baseline_only_gets_response_errors_right(tmp_path: Path) -> None:
    bench = write_benchmark(tmp_path, tmp_path / "runs")
    result = evaluate_memtracebench(bench, method="last-op")
    assert result["all"]["type_accuracy"] == 0.2 and result["all"]["op_accuracy"] == 0.2


def test_cli_prints_the_tables_and_writes_json(tmp_path: Path) -> None:
    import subprocess

    bench = write_benchmark(tmp_path, tmp_path / "runs")
    memtrace = Path(sys.executable).with_name("memtrace")
    out = subprocess.run(
        [str(memtrace), "bench", "memtracebench", str(bench), "--json", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        env={"COLUMNS": "160", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "op acc." in out.stdout and "Confusion" in out.stdout
    assert json.loads((tmp_path / "r.json").read_text())["all"]["cases"] == 5


def test_scorer_and_evidence_are_honoured_and_each_case_is_listed_and_stored(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    from memtrace.attribution.model import load_attributions

    bench = write_benchmark(tmp_path, tmp_path / "runs")
    workspace = tmp_path / "kept"
    result = evaluate_memtracebench(
        bench, method="flow", workspace=workspace, scorer="embedding", evidence="gold"
    )
    assert result["settings"]["scorer"] == "embedding" and result["settings"]["evidence"] == "gold"
    rows = {row["gold_type"]: row for row in result["cases"]}
    assert set(rows) == {kind for kind, _ in FAULTS.values()}
    for row in result["cases"]:
        assert row["op_correct"] == (row["predicted_op"] == row["gold_op"]) and row["explanation"]
    assert sum(r["type_correct"] for r in result["cases"]) == round(result["all"]["type_accuracy"] * 5)
    stored = load_attributions(open_ws(workspace).store, method="flow")
    assert {(a.run_id, a.case_id) for a in stored} == {(r["run"], r["case"]) for r in result["cases"]}


def test_cli_writes_per_case_json_and_rejects_unknown_evidence(tmp_path: Path) -> None:
    import subprocess

    bench = write_benchmark(tmp_path, tmp_path / "runs")
    memtrace = Path(sys.executable).with_name("memtrace")
    env = {"COLUMNS": "160", "PATH": "/usr/bin:/bin"}
    args = [str(memtrace), "bench", "memtracebench", str(bench), "--workspace", str(tmp_path / "ws")]
    out = subprocess.run(
        [*args, "--evidence", "bm25", "--cases-json", str(tmp_path / "cases.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    cases = json.loads((tmp_path / "cases.json").read_text())
    assert len(cases) == 5 and {"case", "gold_op", "gold_type", "predicted_op", "predicted_type"} <= set(
        cases[0]
    )
    bad = subprocess.run([*args, "--evidence", "nope"], capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 1 and "unknown evidence 'nope'" in bad.stderr
