"""`bench faults --verify`: the verifier scored on planted faults, where the truth is known by construction.

The natural labels judge the verifier only where readers and attributor disagree, a few dozen disputed
cases. A planted fault gives every claim a truth: the injected operation and type. The baselines
(last-op, random) make many wrong claims and flow a few, so verifying every method's claim measures
what matters: of the wrong claims, how many the verifier confirms (it should say no), and of the right
ones, how many it confirms. No label, no reader, and no rule of the attributor decides which is which.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..attribution.model import Attribution
from ..attribution.verify.counterfactual import verify
from ..graph import Workspace
from ..graph.journal import journal_path
from ..vocabulary import ErrorType, Verdict
from .labels import verdict_bucket

_COUNTED = ("confirmed", "by_elimination", "refuted", "not_verifiable")


def verify_in_scratch(ws: Workspace, attribution: Attribution, llm: Any = None) -> dict[str, str]:
    """Verify one claim in a fault task's scratch workspace; its repair replays are removed afterwards
    (the next claim must find the workspace as it was). Returns the verdict and its short reason."""
    if attribution.error_type == ErrorType.UNDETERMINED:
        return {"verdict": str(Verdict.NOT_VERIFIABLE), "why": "undetermined"}
    before = {run.id for run in ws.store.runs()}
    try:
        outcome = verify(ws, attribution, llm=llm)
    finally:
        for run in ws.store.runs():
            if run.id not in before:
                ws.store.delete_run(run.id)
                journal_path(ws.path, run.id).unlink(missing_ok=True)
    return {"verdict": str(outcome.verdict), "why": outcome.why}


def verification_scores(cases: list[dict[str, Any]], methods: list[str]) -> dict[str, Any]:
    """Per method and over all methods: of the claims that name the planted operation and type (right)
    and of the others (wrong), how many the verifier confirmed, refuted, or could not test.

    Undetermined claims are neither: an attributor that says it cannot decide made no claim."""
    tallies: dict[str, dict[str, Counter[str]]] = {}
    whys: Counter[str] = Counter()
    for case in cases:
        for method in methods:
            got = case["predicted"].get(method)
            if got is None or "verdict" not in got or got["type"] == ErrorType.UNDETERMINED:
                continue
            right = got["op"] == case["injected_op"] and got["type"] == case["injected_type"]
            side = "right" if right else "wrong"
            bucket = verdict_bucket(got["verdict"])
            for scope in (method, "all"):
                tallies.setdefault(scope, {"right": Counter(), "wrong": Counter()})[side][bucket] += 1
            if side == "wrong" and bucket == "confirmed":
                whys[f"{method}: {got['type']} ({got['why']})"] += 1
    scores = {
        scope: {side: _shares(counts) for side, counts in sides.items()} for scope, sides in tallies.items()
    }
    return {"by_method": scores, "wrong_confirmed_why": dict(whys.most_common())}


def _shares(counts: Counter[str]) -> dict[str, Any]:
    claims = sum(counts.values())
    row: dict[str, Any] = {"claims": claims}
    row.update({key: counts[key] for key in _COUNTED})
    row["confirmed_share"] = round(counts["confirmed"] / claims, 4) if claims else None
    return row
