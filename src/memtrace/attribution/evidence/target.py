"""A case's critical information as an attribution's path names it: what every carrying check scores.

Verification and the role finder both start from it, so it lives below them, beside the rule it feeds.
"""

from __future__ import annotations

from ...graph import Case, GraphQueries, VariableVersion
from ..model import Attribution, PathRole
from .locate import dated_message, message_versions, run_speakers
from .support import OverlapScorer, SupportScorer, Target


def evidence_target(
    graph: GraphQueries, case: Case, attribution: Attribution, scorer: SupportScorer | None = None
) -> Target | None:
    """The case's critical information as the attribution's path names it, else (a claim with no path:
    a baseline's, an imported one) as the case annotates it; None without evidence."""
    scorer = scorer or OverlapScorer()
    steps = [s for s in attribution.steps(PathRole.EVIDENCE) if s.kind == "var"]
    versions = [graph.var(s.id) for s in steps if graph.has_var(s.id)] or annotated_turns(graph, case)
    if not versions:
        return None
    evidence = [(v.name, dated_message(graph, v)) for v in versions]
    target = scorer.prepare(case.question, case.gold, evidence, run_speakers(graph))
    return None if target.empty else target


def annotated_turns(graph: GraphQueries, case: Case) -> list[VariableVersion]:
    """The messages the case annotates as its evidence (their latest versions), in the order said."""
    names = {str(e).split("@")[0] for e in case.evidence}
    return [v for v in message_versions(graph) if v.name in names]
