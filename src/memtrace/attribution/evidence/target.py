"""A case's critical information as an attribution's path names it: what every carrying check scores.

Verification and the role finder both start from it, so it lives below them, beside the rule it feeds.
"""

from __future__ import annotations

from ...graph import Case, GraphQueries
from ..model import Attribution, PathRole
from .locate import dated_message, run_speakers
from .support import OverlapScorer, SupportScorer, Target


def evidence_target(
    graph: GraphQueries, case: Case, attribution: Attribution, scorer: SupportScorer | None = None
) -> Target | None:
    """The case's critical information as the attribution's path names it; None without evidence."""
    scorer = scorer or OverlapScorer()
    steps = [s for s in attribution.steps(PathRole.EVIDENCE) if s.kind == "var"]
    versions = [graph.var(s.id) for s in steps if graph.has_var(s.id)]
    if not versions:
        return None
    evidence = [(v.name, dated_message(graph, v)) for v in versions]
    target = scorer.prepare(case.question, case.gold, evidence, run_speakers(graph))
    return None if target.empty else target
