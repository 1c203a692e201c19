"""Counterfactual verification: repair the blamed operation, replay, and see whether the answer flips.

The repair follows the error type: ExtractionError adds the evidence-bearing fact to what the
operation produced; UpdateError keeps the unit's previous version; DeletionError cancels the
deletion; RetrievalError puts the evidence-bearing memory in place of the lowest-ranked context
item; ResponseError is verified by elimination only (the context already held the evidence).
A refuted repair is followed by the context oracle (oracle.py), which may revise the attribution
to the answer step.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ..graph import MemtraceError, Workspace
from ..graph.values import value_text
from ..systems.replay import CANCEL, replay
from ..systems.signing import UntrustedSnapshotError
from .model import Attribution, load_attributions, save_attribution
from .oracle import memory_as_context, revise
from .verdicts import BY_ELIMINATION, NOT_VERIFIABLE, REFUTED, VERIFIED, Verification

__all__ = [
    "BY_ELIMINATION",
    "NOT_VERIFIABLE",
    "REFUTED",
    "VERIFIED",
    "Verification",
    "build_repair",
    "verified_shares",
    "verify",
    "verify_all",
]


def build_repair(ws: Workspace, attribution: Attribution) -> tuple[dict[str, Any] | None, str]:
    """The patch its error type implies, or None with the reason when none can be built."""
    graph = ws.cached_view(attribution.run_id)
    op_id = attribution.op_id
    if op_id is None or not graph.has_op(op_id):
        return None, "no operation to repair"
    kind = attribution.error_type
    if kind in ("UpdateError", "DeletionError"):
        kept = next((s for s in attribution.path if s.note.startswith("last version carrying")), None)
        if kept is None:
            return None, "the path names no unit version to keep"
        return {op_id: {"memory": {kept.id.rsplit("@", 1)[0]: CANCEL}}}, "keep the previous version"
    if kind == "ExtractionError":
        evidence = [s for s in attribution.path if s.note.startswith("evidence")]
        produced = [v for v in graph.outputs(op_id) if isinstance(graph.value(v.id), list)]
        if not evidence or not produced:
            return None, "the operation produced no list to add the evidence fact to"
        target = produced[0]
        facts = [*graph.value(target.id), *(_as_fact(value_text(graph.value(s.id))) for s in evidence)]
        return {op_id: {"outputs": {target.name: facts}}}, f"add the evidence to {target.name}"
    if kind == "RetrievalError":
        held = next((s for s in attribution.path if s.note == "in memory at question time"), None)
        context = [v for v in graph.outputs(op_id) if v.category == "retrieved"]
        if held is None or not context:
            return None, "no evidence-bearing memory or retrieved context to repair"
        items = list(graph.value(context[-1].id) or [])
        memory = memory_as_context(graph.value(held.id))
        repaired = [*items[:-1], memory] if items else [memory]
        return {op_id: {"outputs": {context[-1].name: repaired}}}, "swap the evidence in for the last item"
    return None, f"no repair for {kind}"


def verify(ws: Workspace, attribution: Attribution, *, llm: Any = None, oracle: bool = True) -> Verification:
    """Replay the run with the repair and judge the case again; on refutation ask the context oracle.

    With `oracle=False` a refuted or unrepairable claim is returned as it is, never revised.
    """
    if attribution.error_type == "ResponseError":
        return Verification(attribution, BY_ELIMINATION, "the context held the evidence")
    if not attribution.determined:
        return Verification(attribution, NOT_VERIFIABLE, "undetermined")
    patch, reason = build_repair(ws, attribution)
    if patch is None:
        claim = Verification(attribution, NOT_VERIFIABLE, reason)
    else:
        try:
            result = replay(ws, attribution.run_id, patch, cases=[attribution.case_id], llm=llm)
        except UntrustedSnapshotError:
            raise  # a tampered workspace stops verification: it is not one unverifiable claim
        except MemtraceError as exc:
            return Verification(attribution, NOT_VERIFIABLE, str(exc))
        answered = result.case(attribution.case_id)
        if answered.correct:
            return Verification(
                attribution,
                VERIFIED,
                f"{reason}; replayed answer {answered.prediction!r}",
                result.run_id,
                answered.prediction,
            )
        claim = Verification(
            attribution,
            REFUTED,
            f"{reason}; replayed answer {answered.prediction!r}",
            result.run_id,
            answered.prediction,
        )
    return revise(ws, attribution, claim, llm=llm) if oracle else claim


def verify_all(
    workspace: str | Path,
    *,
    method: str = "flow",
    llm: Any = None,
    progress: Any = None,
    oracle: bool = True,
    runs: list[str] | None = None,
    limit: int | None = None,
) -> list[Verification]:
    """Verify the stored, not yet verified attributions of a method and store the outcome on each.

    `runs` (ids, names or prefixes) narrows them to those runs; `limit` verifies at most that many,
    so a large workspace can be verified in installments (the rest stay unverified).
    """
    with Workspace(workspace) as ws:
        chosen = None if runs is None else {ws.run(ref).id for ref in runs}
        attributions = [
            a
            for a in load_attributions(ws.store, method=method)
            if a.verified is None and (chosen is None or a.run_id in chosen)
        ][:limit]
        keys = dict(
            ws.store.conn.execute(
                "SELECT run || '/' || case_id, settings_key FROM attributions WHERE method=?", (method,)
            ).fetchall()
        )
        results = []
        for done, attribution in enumerate(attributions, 1):
            outcome = verify(ws, attribution, llm=llm, oracle=oracle)
            checked = outcome.attribution
            checked.verified, checked.replay_run = outcome.verdict, outcome.replay_run
            save_attribution(ws.store, checked, keys.get(f"{checked.run_id}/{checked.case_id}", ""))
            results.append(outcome)
            if progress:
                progress(done, len(attributions))
        return results


def verified_shares(workspace: str | Path, method: str) -> dict[str, dict[str, int]]:
    """Counts of verification outcomes per error type for a method's stored attributions.

    Besides the outcomes, `revised` counts attributions the context oracle turned into this type and
    `revised away` those it turned from this type into another (they are not in the outcomes).
    """
    with Workspace(workspace) as ws:
        table: dict[str, Counter[str]] = defaultdict(Counter)
        for a in load_attributions(ws.store, method=method):
            table[a.error_type][a.verified or "not verified"] += 1
            if a.revised_from is not None:
                table[a.error_type]["revised"] += 1
                table[a.revised_from["error_type"]]["revised away"] += 1
        return {kind: dict(counts) for kind, counts in table.items()}


def _as_fact(message: str) -> str:
    return message.split(": ", 1)[1] if ": " in message[:40] else message
