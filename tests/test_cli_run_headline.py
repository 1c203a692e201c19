"""An LLM judge that accepts nonsense gives no headline: `memtrace run` heads with the strict verdict,
shows the LLM's figure beside it with the probe's warning, and names the judge of every figure.

Offline: the LLM judge is a test double (it calls every answer correct, as SmolLM2-135M did against
a real llama-server), so the probe, the runner and the table run exactly as with a model behind them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memtrace as mt
from conftest import run_cli_in_process
from memtrace.cli import run_cmd
from memtrace.cli.llm_options import JudgeChoice
from memtrace.eval import Judged, KnownCase, Verdict, check_judge, headline_judge, judge_figures
from memtrace.eval.judges import RecordingJudge
from memtrace.eval.scoring import Gold


class NonsenseAcceptingJudgeDouble(RecordingJudge):
    """Test double of an LLM judge served by a tiny model: every answer is correct, nonsense included.
    It records `judge` operations like a real judge; `method` is what an LLM judge's verdicts say."""

    method = "llm"

    def verdict(
        self, question: str, gold: Gold | None, prediction: str, category: str | int | None = None
    ) -> Verdict:
        return Verdict(True, 1.0, self.method, "looks right")


class RejectingJudgeDouble(NonsenseAcceptingJudgeDouble):
    """Test double of a sane LLM judge: right only when the gold answer is in the prediction."""

    def verdict(
        self, question: str, gold: Gold | None, prediction: str, category: str | int | None = None
    ) -> Verdict:
        golds = [gold] if isinstance(gold, str) else list(gold or [])
        correct = any(g.casefold() in prediction.casefold() for g in golds)
        return Verdict(correct, float(correct), self.method, "compared")


KNOWN = [
    KnownCase("What breed is Clara's dog?", ["labrador"]),
    KnownCase("Where does Clara live?", ["Boston"]),
]


def test_the_double_fails_the_probe_so_the_strict_figure_is_the_headline() -> None:
    check = check_judge(NonsenseAcceptingJudgeDouble(), KNOWN)
    assert not check.reliable and check.probes == 2
    assert headline_judge("llm", check) == "strict"
    by_llm = [Judged("single-hop", True), Judged("single-hop", True)]
    by_strict = [Judged("single-hop", False), Judged("single-hop", True)]
    first, second = judge_figures("llm", by_llm, by_strict, check)
    assert (first.judge, first.headline, first.accuracy["all"], first.warning) == ("strict", True, 0.5, None)
    assert (second.judge, second.headline, second.accuracy["all"]) == ("llm", False, 1.0)
    assert second.warning == check.summary() and "accepted a nonsense answer in 2 of 2" in second.warning


def test_an_llm_judge_keeps_the_headline_unless_its_probe_caught_it() -> None:
    """Passing the probe, or not probed (the endpoint failed it): nothing showed the judge wrong."""
    answers = [Judged("temporal", True)]
    strict = [Judged("temporal", False)]
    rejecting = check_judge(RejectingJudgeDouble(), KNOWN)
    assert rejecting.reliable
    for check in (rejecting, None):
        first, second = judge_figures("llm", answers, strict, check)
        assert (first.judge, first.headline, first.warning) == ("llm", True, None)
        assert (second.judge, second.headline) == ("strict", False)
    (only,) = judge_figures("strict", strict, None, None)
    assert only.judge == "strict" and only.headline and only.accuracy == {"temporal": 0.0, "all": 0.0}


def test_run_heads_with_the_strict_verdict_when_the_llm_judge_accepts_nonsense(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole `memtrace run`, offline rag on the sample, judged by the double as `--judge llm` would."""

    def llm_judge_double(*args: object, **kwargs: object) -> JudgeChoice:
        return JudgeChoice(NonsenseAcceptingJudgeDouble(), "llm")

    monkeypatch.setattr(run_cmd, "choose_judge", llm_judge_double)
    args = ["run", tmp_path / "ws", "--system", "rag", "--questions", "8", "--json", tmp_path / "run.json"]
    code, out, err = run_cli_in_process(capsys, *args)
    assert code == 0, err
    row = json.loads((tmp_path / "run.json").read_text())["rag"]
    with mt.open(tmp_path / "ws") as ws:
        (run,) = ws.runs()
        cases = ws.cases(run.id)
    assert all(c.verdict == "correct" for c in cases)  # the stored verdicts stay the judge's own
    assert row["accuracy_judge"] == "strict" and set(row["judges"]) == {"strict", "llm"}
    strict, llm = row["judges"]["strict"], row["judges"]["llm"]
    assert strict["headline"] and not llm["headline"] and strict["warning"] is None
    assert llm["accuracy"]["all"] == 1.0 and "accepted a nonsense answer" in llm["warning"]
    assert row["accuracy"] == strict["accuracy"] and row["accuracy"]["all"] < 1.0
    assert row["judge_check"]["reliable"] is False
    flat = " ".join(out.split())
    assert "judge is unreliable: it accepted a nonsense answer" in flat
    assert f"{row['accuracy']['all']:.3f} │ strict │ llm 1.000 (unreliable)" in flat
    assert "accuracy of rag is the strict verdict: the llm judge accepted nonsense answers" in flat


def test_an_offline_run_names_its_strict_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli_in_process(
        capsys, "run", tmp_path / "ws", "--system", "rag", "--questions", "4", "--json", tmp_path / "r.json"
    )
    assert code == 0, err
    row = json.loads((tmp_path / "r.json").read_text())["rag"]
    assert row["accuracy_judge"] == "strict" and list(row["judges"]) == ["strict"]
    assert row["judges"]["strict"]["headline"] and "other judge" not in out and "judge" in out
