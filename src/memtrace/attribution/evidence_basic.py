"""Evidence for the flow method: the gold evidence messages of a case, or retrieved pseudo evidence."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..graph import Case, GraphQueries, VariableVersion


@dataclass(slots=True)
class FoundEvidence:
    versions: list[VariableVersion] = field(default_factory=list)
    source: str = "gold"
    problem: str | None = None


def evidence_versions(graph: GraphQueries, case: Case, *, method: str = "auto", k: int = 8) -> FoundEvidence:
    """Resolve the case's gold evidence ids to message versions (latest version of each name)."""
    versions: list[VariableVersion] = []
    missing: list[str] = []
    for ref in case.evidence:
        name = ref.rsplit("@", 1)[0] if "@" in ref else ref
        found = graph.versions(name)
        if found:
            versions.append(
                found[-1] if "@" not in ref else next((v for v in found if v.id == ref), found[-1])
            )
        else:
            missing.append(ref)
    if not versions:
        problem = (
            f"gold evidence {', '.join(missing)} not in the graph"
            if missing
            else "the case has no evidence ids"
        )
        return FoundEvidence([], "gold", problem)
    return FoundEvidence(versions, "gold")
