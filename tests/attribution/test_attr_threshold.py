"""The carrying threshold is inclusive: a part whose support equals it carries the information.

Until this file, changing `support >= threshold` to `>` in `carrying_part` (support.py) or in flow's
own filter of carrying memories (methods/flow.py) passed every test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.attribution import FlowMethod
from memtrace.attribution.evidence.support import OverlapScorer, Target, best_part, carrying_part

#: The sentence stating the answer has four content words (pepper, labrador, love, walk), so a part
#: repeating two of them, the answer among them, scores exactly 0.5: the default threshold.
EVIDENCE = "Clara: Pepper is a labrador and loves walks."


def breed(threshold: float = 0.5) -> tuple[OverlapScorer, Target]:
    scorer = OverlapScorer(threshold)
    return scorer, scorer.prepare("What breed is Clara's dog?", ["labrador"], [("D1:7", EVIDENCE)])


def test_a_part_whose_support_equals_the_threshold_carries() -> None:
    """The boundary itself: support 0.5 against the default 0.5 carries, through the one rule."""
    scorer, target = breed()
    part = "Pepper the labrador"
    assert scorer.score(target, part) == scorer.threshold == 0.5
    found = carrying_part(target, [("mem-1@1", part)], scorer)
    assert found is not None and found.support == 0.5 and found.var_id == "mem-1@1"
    assert scorer.carries(target, part)


@pytest.mark.parametrize(
    ("threshold", "part"), [(0.25, "Diego saw a labrador"), (0.75, "Pepper the labrador loves")]
)
def test_the_boundary_holds_at_any_threshold(threshold: float, part: str) -> None:
    """Whatever the threshold, a part scoring exactly it carries; a hair above, it does not."""
    scorer, target = breed(threshold)
    best = best_part(target, [(None, part)], scorer)
    assert best is not None and best.support == threshold
    assert carrying_part(target, [(None, part)], scorer) is not None
    stricter, _ = breed(threshold + 1e-9)
    assert carrying_part(target, [(None, part)], stricter) is None


def boundary_run(workspace: Path) -> str:
    """A run whose only memory of the evidence is a part at exactly the threshold, and whose search
    returns another memory: the information was held at question time, so retrieval lost it."""
    with mt.run(workspace, name="boundary", system="toy") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output("D1:7", EVIDENCE, category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(evidence)
            op.output("extracted_facts", ["Pepper the labrador"])
            run.memory("mem-1").create({"memory": "Pepper the labrador"}, by=op)
            run.memory("mem-2").create({"memory": "Diego loves dogs"}, by=op)
        case = run.case("What breed is Clara's dog?", gold="labrador", evidence=["D1:7"])
        with mt.op("question", category="query"):
            with mt.op("search", category="retrieval") as op:
                query = op.input("query", "What breed is Clara's dog?", category="query")
                op.use(run.memory("mem-2").latest_id)
                context = op.output("retrieved", ["Diego loves dogs"], category="retrieved")
            with mt.op("answer", category="response") as op:
                op.use(query)
                op.use(context)
                prediction = op.output("prediction", "poodle", category="prediction")
        case.predict("poodle", var=prediction)
        case.judge(False, score=0.0)
        return run.id


def test_flow_counts_a_memory_at_exactly_the_threshold_as_carrying(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    """Flow's own comparison: a unit at the threshold held the information, so the fault is the search
    that missed it; with `>` it would claim the extraction never stored it."""
    run_id = boundary_run(tmp_path)
    ws = open_ws(tmp_path)
    (case,) = ws.cases(run_id)
    result = FlowMethod().attribute(ws.view(run_id), case)
    assert result.error_type == "RetrievalError", result.explanation
    assert ws.view(run_id).op(result.op_id).name == "search"
