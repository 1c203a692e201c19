"""Counterfactual verification: repair the blamed operation, replay, and check what reached the answer.

The repair follows the error type (repair.py). The replay re-runs everything after the repair
(retrieval included) and is checked at two levels, stored apart: flow-confirmed (the evidence
reached the answer step's context) and answer-confirmed (the real answer flips). A repair that
delivers the evidence while the answer stays wrong keeps the claim and records the answer step's
failure as a second fault beside it. A ResponseError is by elimination only when the part of its
context that carries the evidence is named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import MemtraceError, NotReplayableError, UntrustedSnapshotError
from ...graph import Case, GraphQueries, Workspace
from ...graph.journal import ingest_journal, journal_path
from ...systems.replay import replay, replay_ids
from ...vocabulary import ErrorType, Verdict
from ..evidence.anatomy import case_anatomy
from ..evidence.support import Target, carrying_part
from ..evidence.target import evidence_target
from ..model import Attribution, PathRole, save_attribution
from .claims import VerifyClaims, replay_seed, to_verify
from .confirm import context_part, memory_carries_at_question, placed_by_construction
from .ideal_later import later_ops_ideal_patch, replay_with_ideal_later_ops
from .inherited import inherited_patches_lost
from .items import ItemCheck, check_for, item_line, premise_finding
from .oracle import answer_step_fault, probe_answer_step
from .repair import build_repair
from .response import response_verdict, settled
from .scope import derived_path, never_touched, out_of_place, with_derived_path
from .verdicts import Verification, placed_turns_only, verification_summary

__all__ = [
    "Verdict",
    "Verification",
    "build_repair",
    "verification_summary",
    "verify",
    "verify_all",
]


def verify(ws: Workspace, attribution: Attribution, *, llm: Any = None, oracle: bool = True) -> Verification:
    """Verify one attribution; the claim itself is never changed, only what verification found.

    With `oracle`, a repair that did not deliver the evidence is followed by the context oracle, which
    records the answer step's own failure (if any) as a second fault beside the claim.
    """
    if not attribution.determined:
        return settled(
            attribution, Verdict.NOT_VERIFIABLE, "undetermined", "undetermined: there is nothing to repair"
        )
    graph = ws.cached_view(attribution.run_id)
    case = ws.case(attribution.run_id, attribution.case_id)
    misplaced = out_of_place(graph, case, attribution)
    if misplaced is not None:
        return settled(
            attribution, Verdict.REFUTED, *misplaced, ["no replay: the operation is not where the case ran"]
        )
    derived = with_derived_path(graph, case, attribution, check_for(graph, case))
    if derived is None:
        return _verify(ws, graph, case, attribution, llm, oracle)
    # A claim without a path (a baseline's, an imported one) is checked on steps found in the graph;
    # the stored claim stays as it was made.
    outcome = _verify(ws, graph, case, derived, llm, oracle)
    outcome.attribution = attribution
    found = ", ".join(f"{s.role}: {s.id}" for s in derived.path) or "none"
    outcome.checked.insert(0, f"the claim names no path; steps found in the graph: {found}")
    return outcome


def _verify(
    ws: Workspace, graph: GraphQueries, case: Case, attribution: Attribution, llm: Any, oracle: bool
) -> Verification:
    target = evidence_target(graph, case, attribution)
    if attribution.error_type == ErrorType.RESPONSE:
        return response_verdict(graph, case, attribution, target)
    if target is None:
        return settled(
            attribution,
            Verdict.NOT_VERIFIABLE,
            "no-evidence",
            "the path names no evidence to check a replay against",
        )
    check = check_for(graph, case)
    # Whatever the attributor's path says, the graph must show the operation had the information.
    in_graph = (
        attribution
        if derived_path(attribution)
        else with_derived_path(graph, case, attribution, check, keep_own=False)
    )
    untouched = never_touched(graph, case, in_graph, check) if in_graph is not None else None
    if untouched is not None:
        return settled(attribution, Verdict.REFUTED, *untouched, ["no replay: the graph refutes it"])
    kept = attribution.step(PathRole.LAST_CARRIER)
    kept_value = graph.value(kept.id) if kept is not None and graph.has_var(kept.id) else None
    found = premise_finding(graph, case, attribution.error_type, check, kept_value)
    if found is not None:
        what = "refutes" if found[0] == Verdict.REFUTED else "disputes"
        return settled(attribution, *found, [f"no replay: the recorded run {what} it"])
    patch, repair = build_repair(ws, attribution)
    if patch is None:
        return settled(
            attribution, Verdict.NOT_VERIFIABLE, "no-repair", f"no repair ({repair}); no replay was run"
        )
    try:
        result = replay(ws, attribution.run_id, patch, cases=[attribution.case_id], llm=llm)
    except UntrustedSnapshotError:
        raise  # a tampered workspace stops verification: it is not one unverifiable claim
    except NotReplayableError as exc:
        return settled(attribution, Verdict.NOT_VERIFIABLE, "not-replayable", f"no replay was run: {exc}")
    except MemtraceError as exc:
        return settled(
            attribution, Verdict.NOT_VERIFIABLE, "replay-failed", f"the repair replay failed: {exc}"
        )
    if attribution.op_id not in result.patched:
        return settled(
            attribution,
            Verdict.NOT_VERIFIABLE,
            "repair-not-applied",
            f"the repaired operation did not run in the replay ({result.run_id})",
        )
    lost = inherited_patches_lost(ws, attribution, result.patched)
    if lost:
        return settled(
            attribution,
            Verdict.NOT_VERIFIABLE,
            "inherited-patch-lost",
            f"the run is itself a replay patched at {', '.join(lost)}; the repair replay did not apply"
            " those patches again (the repair moved their operations), so its answer is not this run's",
        )
    answered = result.case(attribution.case_id)
    by_flow_rule = carrying_part(target, [(None, answered.context)])
    replayed = list(answered.context)
    lacking = check.lacking(replayed) if check.has_items else None
    checked = [
        f"repair: {repair}; replayed {result.run_id} ({result.replayed_ops} operations re-run)",
        (
            f"the replayed context carries the evidence: {by_flow_rule.text!r}"
            f" (support {by_flow_rule.support:.2f})"
            if by_flow_rule is not None
            else f"no part of the replayed context ({len(answered.context)} items) carries the evidence"
        )
        + f"; {item_line(check, replayed)}",
        f"replayed answer {answered.prediction!r}: {'correct' if answered.correct else 'still wrong'}",
    ]
    # Flow-confirmed needs the independent check; flow's own carrying rule alone confirms nothing.
    delivered = by_flow_rule if lacking == [] else None
    outcome = Verification(
        attribution,
        Verdict.ANSWER_CONFIRMED,
        "",
        result.run_id,
        answered.prediction,
        flow_confirmed=delivered is not None,
        answer_confirmed=answered.correct,
        checked=checked,
        replayed_ops=result.replayed_ops,
    )
    anatomy = case_anatomy(graph, case)
    if answered.correct:
        outcome.reason, outcome.why = "the repair flips the answer", "answer-flips"
        return outcome
    if delivered is not None:
        outcome.verdict, outcome.why = Verdict.FLOW_CONFIRMED, "answer-step-fails-with-evidence"
        outcome.reason = (
            "the repair delivers the evidence into the answer's context; the answer step still fails"
        )
        if anatomy.answer_op is not None:
            outcome.second_faults.append(
                answer_step_fault(anatomy.answer_op.id, answered.prediction, result.run_id, "repair replay")
            )
        # Only a replayed step finding the turns tests it, not a repair writing them where they land.
        if check.turns and placed_by_construction(graph, case, attribution.error_type):
            return placed_turns_only(outcome)
        return outcome
    if lacking is None and by_flow_rule is not None:
        outcome.verdict, outcome.why = Verdict.NOT_VERIFIABLE, "inferred-answer"
        outcome.reason = (
            "the replayed context carries the evidence by flow's own rule, but the answer is inferred"
            " (no turn states an item of it): no independent check applies, and the answer did not flip"
        )
        return outcome
    _undelivered(ws, graph, case, attribution, target, outcome, check, replayed)
    replayed = None
    if outcome.why == "retrieval-missed-restored" and outcome.replay_run:
        ingest_journal(ws.store, journal_path(ws.store.path.parent, outcome.replay_run))  # lazily indexed
        replayed = (ws.graph(outcome.replay_run), ws.case(outcome.replay_run, case.id))
    ideal = later_ops_ideal_patch(graph, case, attribution, patch, outcome.why, replayed)
    if ideal is not None:
        kept = replay_with_ideal_later_ops(ws, graph, attribution, case, target, ideal, llm, outcome.why)
        if kept is not None:
            kept.checked = [*outcome.checked, *kept.checked]  # the plain repair's replay, then this one
            return kept
    if oracle:
        probed = probe_answer_step(ws, graph, case, attribution, llm=llm)
        if probed is not None:
            outcome.second_faults.append(probed)
        outcome.checked.append(
            "context oracle: "
            + ("the answer step fails even with the evidence" if probed else "it answers right")
        )
    return outcome


def _undelivered(
    ws: Workspace,
    graph: GraphQueries,
    case: Case,
    attribution: Attribution,
    target: Target,
    outcome: Verification,
    check: ItemCheck,
    replayed_context: list[Any],
) -> None:
    """Why a repair did not deliver the evidence. Refuted only when the claim's premise is false (the
    recorded run still had the information where the claim says it was lost); a later operation
    losing it again is a later fault, which the decisive criterion assumes away, so not a refutation."""
    anatomy = case_anatomy(graph, case)
    if attribution.error_type == ErrorType.RETRIEVAL:
        held = context_part(graph, case, target)
        if held is not None:
            outcome.verdict, outcome.why = Verdict.REFUTED, "context-had-it"
            outcome.reason = f"the recorded context already carried the evidence: {held.text!r}"
            return
        memory = attribution.step(PathRole.LIVE_AT_QUESTION)
        value = graph.value(memory.id) if memory is not None else None
        if carrying_part(target, [(None, value)]) is None:
            outcome.verdict, outcome.why = Verdict.NOT_VERIFIABLE, "held-memory-lacks-answer"
            outcome.reason = (
                "no part of the memory the claim names as held at question time carries the information"
                " (when the evidence states the gold answer, the part must state it too), so putting it"
                " in the context cannot deliver it"
            )
            return
        if carrying_part(target, [(None, replayed_context)]) is not None:
            # The repair reached the context; what is short is an item the independent check finds
            # nowhere in it (no memory states it by both rules, or the retrieval returns too few).
            lacking = ", ".join(check.lacking(replayed_context)) if check.has_items else "an item"
            outcome.verdict, outcome.why = Verdict.NOT_VERIFIABLE, "items-still-lacking"
            outcome.reason = (
                "the repair put the evidence-bearing memory in the answer's context, but the item check"
                f" still finds {lacking} missing or disputed there: the whole answer is not shown delivered"
            )
            return
        outcome.verdict, outcome.why = Verdict.NOT_VERIFIABLE, "repair-overridden"
        outcome.reason = (
            "the repaired retrieval output did not reach the answer's context (a later step replaced it)"
        )
        return
    values = graph.memory_values_at(anatomy.question_seq - 1)
    held_then = carrying_part(target, list(values.items()))
    parts_checked = check.has_items and not check.turns  # whole turns are rarely one memory's words
    if held_then is not None and parts_checked and (check.inferred or check.lacking(list(values.values()))):
        # The memory carried the evidence turn's other facts, not the answer's items the claim traced
        # ("Caroline applied to adoption agencies", not her pets' names), or a part of the answer no
        # rule checks may be what was lost: no contradiction of the claim.
        outcome.checked.append(
            f"recorded memory at question time carries the evidence turn ({held_then.text[:80]!r}), but"
            f" {item_line(check, list(values.values()))}"
        )
        held_then = None
    if held_then is not None:
        outcome.verdict, outcome.why = Verdict.REFUTED, "memory-had-it"
        outcome.reason = (
            f"the recorded memory still carried the evidence at question time: {held_then.text!r}"
        )
        return
    held = memory_carries_at_question(ws, outcome.replay_run or "", case.id, target)
    if held is False:
        outcome.verdict, outcome.why = Verdict.NOT_VERIFIABLE, "loss-recurs"
        outcome.reason = (
            "the repair restores the evidence, but a later operation loses it again before the question "
            "(a later fault; with ideal later operations it would survive)"
        )
        outcome.checked.append("replayed memory at question time: no unit carries the evidence")
        return
    outcome.verdict, outcome.why = Verdict.NOT_VERIFIABLE, "retrieval-missed-restored"
    outcome.reason = (
        "the repair restored the evidence in memory, but the replayed retrieval did not return it "
        "(a later retrieval fault; ideal later operations would have delivered it)"
    )
    outcome.checked.append("replayed memory at question time: a unit carries the evidence")
    if anatomy.retrieval_op is not None:
        outcome.second_faults.append(
            {
                "op_id": anatomy.retrieval_op.id,
                "error_type": ErrorType.RETRIEVAL,
                "how": "repair replay",
                "replay_run": outcome.replay_run,
                "reason": "did not retrieve the restored memory in the repair replay",
            }
        )


def verify_all(
    workspace: str | Path,
    *,
    method: str = "flow",
    llm: Any = None,
    progress: Any = None,
    oracle: bool = True,
    runs: list[str] | None = None,
    limit: int | None = None,
    refresh: bool = False,
) -> list[Verification]:
    """Verify a method's stored attributions (of `runs` when given) and store the outcome on each.

    Already verified ones are skipped unless `refresh`; `limit` verifies at most that many, so a
    large workspace can be verified in installments (the rest stay unverified). Concurrent verifiers
    split the work: each attribution is replayed by the one process that claims it (claims.py).
    """
    with Workspace(workspace) as ws, VerifyClaims(ws) as claims:
        attributions = to_verify(ws, method, runs, limit, refresh)
        results = []
        for done, attribution in enumerate(attributions, 1):
            if claims.take(attribution):
                with replay_ids(replay_seed(ws.store, attribution)):  # the same runs in any worker
                    outcome = verify(ws, attribution, llm=llm, oracle=oracle)
                # Back under the settings it was made with: a case attributed under two settings of one
                # method (--scorer, --evidence, --seed) keeps both attributions, each with its verdict.
                save_attribution(ws.store, outcome.record(), attribution.settings_key or "")
                claims.finish(attribution)
                results.append(outcome)
            if progress:
                progress(done, len(attributions))
        return results
