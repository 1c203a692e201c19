"""`memtrace run` reports the mean token F1 beside the judge's accuracy: F1 stays a score after the strict
verdict became the default."""

from __future__ import annotations

import json
from pathlib import Path

import memtrace as mt
from memtrace.eval import score_answer
from test_cli import memtrace


def test_run_prints_and_writes_the_mean_token_f1_of_its_answers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    result = memtrace("run", ws, "--system", "rag", "--questions", "8", "--json", tmp_path / "run.json")
    assert "mean F1" in result.stdout
    with mt.open(ws) as workspace:
        (run,) = workspace.runs()
        cases = workspace.cases(run.id)
    expected = sum(score_answer(c.prediction, c.gold, c.category)[0] for c in cases) / len(cases)
    written = json.loads((tmp_path / "run.json").read_text())["rag"]
    assert written["mean_f1"] == expected
    assert 0 < expected < 1 and written["accuracy"]["all"] != expected  # a score apart from the verdicts
    assert f"{expected:.3f}" in result.stdout
