"""The one result every attribution method returns, and the interface methods share.

An `Attribution` names the decisive operation of a failed case and its error type, says how sure
the method is and why (with the concrete values involved), shows the evidence path it followed,
and what it cost. Attributions are stored in the workspace keyed by (run, case, method, settings),
so asking again with the same inputs and settings is answered from the store.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

from ..graph import Case, GraphQueries, Store
from ..graph.attributions import AttributionRow
from ..vocabulary import ErrorType, Verdict


class PathRole(StrEnum):
    """What a path step is to the critical information; verification and reports read these, never
    the note (display text only)."""

    EVIDENCE = "evidence"  # a message the information comes from
    FIRST_CARRIER = "first carrier"  # the first memory unit version that carried it
    LAST_CARRIER = "last carrier"  # the last version carrying it before the change that lost it
    LIVE_AT_QUESTION = "live at question time"  # a live memory unit carrying it when the question came
    IN_CONTEXT = "in context"  # a part of the answer step's context carrying it


@dataclass(slots=True)
class PathStep:
    """One stop of the evidence path: a variable version or operation, and what happened there."""

    kind: Literal["var", "op"]
    id: str
    seq: int
    note: str  # for people to read; code reads `role`
    carries: bool | None = None  # does this node still hold the critical information?
    part: str | None = None  # the text of the part that carries the information (a line of a context)
    role: PathRole | None = None


#: The fixed notes the flow method wrote before path steps had roles (stored attributions keep them).
_LEGACY_ROLES = (
    ("evidence", PathRole.EVIDENCE),
    ("first memory unit version carrying it", PathRole.FIRST_CARRIER),
    ("last version carrying it", PathRole.LAST_CARRIER),
    ("in memory at question time", PathRole.LIVE_AT_QUESTION),
    ("in the answer's context", PathRole.IN_CONTEXT),
)


def path_step_from_dict(data: dict[str, Any]) -> PathStep:
    """A stored path step. Steps stored before roles existed get theirs from flow's fixed notes (the
    only method whose steps verification used then); an unknown role is a clear error."""
    data = dict(data)
    if "role" not in data:
        note = str(data.get("note", ""))
        data["role"] = next(
            (role for prefix, role in _LEGACY_ROLES if note == prefix or note.startswith(f"{prefix} (")),
            None,
        )
    elif data["role"] is not None:
        try:
            data["role"] = PathRole(data["role"])
        except ValueError:
            known = ", ".join(repr(r.value) for r in PathRole)
            raise ValueError(
                f"path step {data.get('id')!r} has unknown role {data['role']!r} (known: {known})"
            ) from None
    return PathStep(**data)


@dataclass(slots=True)
class Cost:
    """What an attribution cost: LLM calls and tokens, and wall time."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0


#: Raised with every change to verification that can change a stored verdict (1: an inferred answer's
#: turns placed by the repair itself confirm nothing, 7dbccca; 2: so do a window's kept lines, which
#: the retrieval hands over whole). A verdict stamped with another number, or none, came from another
#: verifier: `memtrace verify` renews it, and nothing fitted on this verifier's verdicts is read from it.
VERIFIER_VERSION = 2


@dataclass(slots=True)
class Attribution:
    """The decisive faulty operation of one failed case, or Undetermined with the reason."""

    run_id: str
    case_id: str
    op_id: str | None
    error_type: ErrorType
    confidence: float
    explanation: str
    method: str
    path: list[PathStep] = field(default_factory=list)
    cost: Cost = field(default_factory=Cost)
    #: The verdict of replay verification (verdicts.py): answer-confirmed, flow-confirmed, by-elimination,
    #: refuted or not-verifiable; None until verified.
    verified: Verdict | None = None
    replay_run: str | None = None
    #: Written by verifiers before issue 10, which moved refuted claims to the answer step; no longer set.
    revised_from: dict[str, Any] | None = None
    #: The repair replay delivered the evidence into the answer step's context (None: not checked).
    flow_confirmed: bool | None = None
    #: The repair replay's real answer flipped to correct (None: no repair replay ran).
    answer_confirmed: bool | None = None
    #: How verification reached its verdict: reason, what it checked, a second (later) fault beside it.
    verification: dict[str, Any] | None = None
    #: The method settings it was stored under (None until stored): verification saves it back there.
    settings_key: str | None = None

    @property
    def determined(self) -> bool:
        return self.error_type != ErrorType.UNDETERMINED

    @property
    def verdict_stale(self) -> bool:
        """Verified, but by another verifier than this one (see VERIFIER_VERSION)."""
        stamp = (self.verification or {}).get("verifier")
        return self.verified is not None and stamp != VERIFIER_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def steps(self, role: PathRole) -> list[PathStep]:
        """The path's steps with this role, in path order."""
        return [step for step in self.path if step.role == role]

    def step(self, role: PathRole) -> PathStep | None:
        """The first path step with this role, or None."""
        return next((step for step in self.path if step.role == role), None)


class AttributionMethod(Protocol):
    """Every method: a name, the settings that change its answer, and attribute(one case)."""

    name: str

    def settings(self) -> dict[str, Any]: ...

    def attribute(self, graph: GraphQueries, case: Case) -> Attribution: ...


def settings_key(settings: dict[str, Any]) -> str:
    """A short stable key of a method's settings (part of the store key)."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def undetermined(graph: GraphQueries, case: Case, method: str, reason: str, **extra: Any) -> Attribution:
    """An honest 'cannot decide', with the reason in the explanation."""
    return Attribution(graph.run.id, case.id, None, ErrorType.UNDETERMINED, 0.0, reason, method, **extra)


# -- storage: the store owns the attributions table (graph/attributions.py); these convert ----------


def save_attribution(store: Store, attribution: Attribution, key: str) -> None:
    """Store (or replace) an attribution under (run, case, method, settings)."""
    store.save_attribution(
        AttributionRow(
            run_id=attribution.run_id,
            case_id=attribution.case_id,
            method=attribution.method,
            settings_key=key,
            op_id=attribution.op_id,
            error_type=attribution.error_type,
            confidence=attribution.confidence,
            verified=attribution.verified,
            replay_run=attribution.replay_run,
            explanation=attribution.explanation,
            path=[asdict(step) for step in attribution.path],
            cost=asdict(attribution.cost),
            created_at=time.time(),
            revised_from=attribution.revised_from,
            flow_confirmed=attribution.flow_confirmed,
            answer_confirmed=attribution.answer_confirmed,
            verification=attribution.verification,
        )
    )


def load_attribution(store: Store, run_id: str, case_id: str, method: str, key: str) -> Attribution | None:
    row = store.attribution(run_id, case_id, method, key)
    return None if row is None else _from_row(row)


def load_attributions(
    store: Store, run_id: str | None = None, method: str | None = None
) -> list[Attribution]:
    """Stored attributions, optionally of one run and/or one method."""
    return [_from_row(row) for row in store.attributions(run_id, method)]


def _from_row(row: AttributionRow) -> Attribution:
    return Attribution(
        run_id=row.run_id,
        case_id=row.case_id,
        method=row.method,
        op_id=row.op_id,
        error_type=row.error_type,
        confidence=row.confidence,
        verified=row.verified,
        replay_run=row.replay_run,
        explanation=row.explanation,
        path=[path_step_from_dict(step) for step in row.path],
        cost=Cost(**row.cost),
        revised_from=row.revised_from,
        flow_confirmed=row.flow_confirmed,
        answer_confirmed=row.answer_confirmed,
        verification=row.verification,
        settings_key=row.settings_key,
    )
