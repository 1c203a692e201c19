"""Verifying a ResponseError, which no replay can test: the item check on the recorded context.

Confirmed when every item of the gold answer is in the answer's context by both the judge's rule and
flow's, refuted when neither finds one. An inferred answer's items are its annotated evidence turns;
by elimination is left for an answer no turn states whose case annotates no turn.
"""

from __future__ import annotations

from ...eval import says_unanswerable
from ...graph import Case, GraphQueries
from ...vocabulary import Verdict
from ..evidence.anatomy import case_anatomy
from ..evidence.support import Target
from ..model import Attribution, PathRole, PathStep
from .confirm import context_part
from .items import check_for, item_line
from .verdicts import Verification


def settled(
    attribution: Attribution, verdict: str, why: str, reason: str, checked: list[str] | None = None
) -> Verification:
    """A verdict reached without a (further) replay, with its reason and what was checked."""
    return Verification(attribution, verdict, reason, why=why, checked=checked or [])


def response_verdict(
    graph: GraphQueries, case: Case, attribution: Attribution, target: Target | None
) -> Verification:
    """A ResponseError, checked on the recorded context: refuted when an item of the answer is missing
    (both rules), confirmed when every item is held and a part carries it (named on the path), by
    elimination only for an inferred answer, when flow's rule is all that can speak."""
    no_replay = "no replay: an answer step has no upstream repair to replay"
    if case.gold and all(says_unanswerable(g) for g in case.gold):
        return settled(
            attribution,
            Verdict.NOT_VERIFIABLE,
            "unanswerable",
            "an unanswerable question: there is no information to carry, the answer step should have"
            " abstained; no part is claimed and none can be named",
            [no_replay],
        )
    if target is None:
        return settled(
            attribution,
            Verdict.NOT_VERIFIABLE,
            "no-carrying-part",
            "no evidence to find in the context (e.g. an unanswerable question); no part can be named",
            [no_replay],
        )
    check = check_for(graph, case)
    context = list(graph.values(case_anatomy(graph, case).context_vars).values())
    status = check.status(context) if check.has_items else {}
    missing = [item for item, state in status.items() if state == "missing"]
    if missing and check.turns:  # a memory may split a turn into facts: its absence whole proves nothing
        return settled(
            attribution,
            Verdict.NOT_VERIFIABLE,
            "turns-not-whole",
            f"the answer is inferred, and no part of the answer's context holds {', '.join(missing)}"
            " whole: neither confirmed nor refuted",
            [item_line(check, context), no_replay],
        )
    if missing:  # both rules agree the context lacks an item: the claim's premise is false
        return settled(
            attribution,
            Verdict.REFUTED,
            "context-lacks-item",
            f"no part of the answer's context holds {', '.join(missing)} (neither the judge's rule nor"
            " flow's finds it): the context did not hold the information",
            [item_line(check, context), no_replay],
        )
    disputed = [item for item, state in status.items() if state == "disputed"]
    if disputed:
        return settled(
            attribution,
            Verdict.NOT_VERIFIABLE,
            "items-disputed",
            f"the judge's rule and flow's disagree on whether the context holds {', '.join(disputed)}",
            [item_line(check, context), no_replay],
        )
    found = context_part(graph, case, target)
    if status and found is not None:  # every item held by both rules
        return settled(
            attribution,
            Verdict.FLOW_CONFIRMED,
            "context-holds-every-item",
            (
                "every annotated evidence turn is in the answer's context, whole, by the judge's rule and"
                " flow's: an ideal answer step would have inferred the answer from them"
                if check.turns
                else "every item of the answer is in the answer's context by the judge's rule, and a part"
                " carries the evidence by flow's: an ideal answer step would have answered"
            ),
            [f"carrying part {found.text!r} of {found.var_id}", item_line(check, context), no_replay],
        )
    if found is None:
        return settled(
            attribution,
            Verdict.NOT_VERIFIABLE,
            "no-carrying-part",
            "no single part of the answer's context carries the evidence"
            + (" and states the gold answer, which the evidence states" if target.answer_required else ""),
            [no_replay],
        )
    step = next(
        (s for s in attribution.steps(PathRole.IN_CONTEXT) if s.id == found.var_id and s.part == found.text),
        None,
    )
    why, reason = "part-named", "the named part carries the evidence"
    if step is None:
        why, reason = "part-found", "a part of the answer's context carries the evidence"
        version = graph.var(found.var_id) if found.var_id else None
        step = next((s for s in attribution.path if s.kind == "var" and s.id == found.var_id), None)
        if step is None:
            step = PathStep(
                "var", found.var_id or "?", version.seq if version else -1, "in the answer's context", True
            )
            attribution.path.append(step)
        step.role, step.part = PathRole.IN_CONTEXT, found.text
    answer_note = "states the gold answer" if found.states_answer else "does not state the gold answer itself"
    checked = [
        f"carrying part {found.text!r} of {found.var_id} (support {found.support:.2f}; {answer_note})",
        item_line(check, []) if not check.has_items else "the judge's rule finds every item",
        no_replay,
    ]
    return settled(attribution, Verdict.BY_ELIMINATION, why, reason, checked)
