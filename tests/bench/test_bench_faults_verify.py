"""`bench faults --verify`: the verifier scored against planted faults, whose truth no rule decides."""

from __future__ import annotations

from pathlib import Path

from memtrace.bench.fault_bench import fault_benchmark
from memtrace.bench.fault_verify import verification_scores


def _case(injected: tuple[str, str], **predicted: tuple[str, str, str]) -> dict:
    return {
        "injected_op": injected[0],
        "injected_type": injected[1],
        "predicted": {
            m: {"op": op, "type": kind, "verdict": v, "why": "x"} for m, (op, kind, v) in predicted.items()
        },
    }


def test_claims_are_right_only_when_they_name_the_planted_operation_and_type() -> None:
    cases = [
        _case(
            ("a#1", "RetrievalError"),
            flow=("a#1", "RetrievalError", "flow-confirmed"),
            rand=("a#1", "ExtractionError", "flow-confirmed"),
        ),
        _case(
            ("b#2", "UpdateError"),
            flow=("b#3", "UpdateError", "refuted"),
            rand=("c#4", "Undetermined", "not-verifiable"),
        ),
    ]
    scores = verification_scores(cases, ["flow", "rand"])["by_method"]
    assert scores["flow"]["right"]["confirmed"] == 1 and scores["flow"]["wrong"]["refuted"] == 1
    assert scores["rand"]["wrong"] == {  # the undetermined claim is no claim
        "claims": 1,
        "confirmed": 1,
        "by_elimination": 0,
        "refuted": 0,
        "not_verifiable": 0,
        "confirmed_share": 1.0,
    }
    assert scores["all"]["wrong"]["claims"] == 2


def test_the_verifier_refutes_baseline_claims_and_confirms_the_planted_ones(tmp_path: Path) -> None:
    result = fault_benchmark(
        ["mem0", "long_context"],
        "sample",
        tmp_path / "ws",
        tmp_path / "out",
        per_type=1,
        methods=["flow", "last-op", "random"],
        verify=True,
    )
    assert result["labelled"] >= 6
    for case in result["cases"]:
        assert all("verdict" in got for got in case["predicted"].values())
    scores = result["verification"]["by_method"]
    wrong, right = scores["all"]["wrong"], scores["all"]["right"]
    assert wrong["refuted"] >= wrong["claims"] // 2, wrong  # a verifier that can say no
    assert right["confirmed"] >= right["claims"] // 2, right
    assert wrong["confirmed_share"] < right["confirmed_share"]
