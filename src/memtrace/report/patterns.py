"""Failure patterns: attributions grouped by system, operation name and error type, each with a plain
description and a few example cases showing what the decisive operation read and wrote.

A pattern is what a developer fixes (one prompt, one setting, one component), so the groups are the
unit of the report's "what to do next": each names the tunables `memtrace optimize` routes it to.
Examples are picked to be trustworthy (replay-confirmed and confident first) and different from each
other, within a pattern and across patterns: every system answers the same questions, so without that
each system's pattern would show the same few.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable

from ..attribution.evidence.anatomy import case_anatomy
from ..attribution.model import Attribution
from ..graph import Case, GraphQueries, VariableVersion
from ..systems.registry import system_routes
from ..systems.tunable_routes import routes_for
from ..vocabulary import ErrorType, Verdict
from .model import VERIFICATION_OUTCOMES, Example, FailureRecord, Pattern, TunableRoute, ValueSnippet
from .snippets import carrying_parts, evidence_texts, focus_terms, snippet

EXAMPLES_PER_PATTERN = 3
MAX_INPUTS = 4
MAX_OUTPUTS = 3
#: Categories whose values state the evidence itself (a context or a prompt only contains it).
CARRIER_CATEGORIES = frozenset({"message", "memory_entry"})
#: Categories of what a retrieval hands on: their items are marked only as carrying, by the path.
CONTEXT_CATEGORIES = frozenset({"retrieved", "context"})

_WHAT = {
    ErrorType.EXTRACTION: "consumed the evidence but wrote none of it to memory: the information never "
    "entered any memory unit",
    ErrorType.UPDATE: "overwrote a memory unit that held the needed information with a version that no "
    "longer holds it",
    ErrorType.DELETION: "deleted a memory unit that held the needed information before the question was "
    "asked",
    ErrorType.RETRIEVAL: "left the needed information out of the retrieved context although memory held it "
    "at question time",
    ErrorType.RESPONSE: "answered wrong from a context that the attribution says carries the needed "
    "information (each example shows the carrying part, or says that none was found)",
}
_TRUST = {
    Verdict.ANSWER_CONFIRMED: 0,
    Verdict.FLOW_CONFIRMED: 1,
    Verdict.BY_ELIMINATION: 2,
    None: 3,
    Verdict.NOT_VERIFIABLE: 4,
    Verdict.REFUTED: 5,
}
#: Sentences claiming a context held the information; shown only beside the part that carries it.
_HELD = re.compile(r"\bheld (?:the |all the )?(?:needed )?information\b")


def verification_counts(values: list[str | None]) -> dict[str, int]:
    """Counts per outcome in display order, None counted as "not verified"."""
    counts = Counter(v or "not verified" for v in values)
    return {k: counts[k] for k in VERIFICATION_OUTCOMES if counts[k]}


def describe(
    error_type: ErrorType, op_name: str, system: str, count: int, share: float, reasons: list[str]
) -> str:
    """One or two plain sentences saying what went wrong in this group."""
    cases = f"{count} failed question{'s' if count != 1 else ''} of {system} ({share:.0%} of its failures)"
    if error_type == ErrorType.UNDETERMINED:
        reason = Counter(reasons).most_common(1)[0][0] if reasons else "no reason given"
        return f"{cases}: the attribution method could not decide. Most common reason: {reason}."
    what = _WHAT.get(error_type, f"was blamed with {error_type}")
    return f"{cases}: `{op_name}` {what}."


def group_patterns(
    records: list[FailureRecord],
    attributions: dict[tuple[str, str], Attribution],
    system_failures: dict[str, int],
    example: Callable[[FailureRecord], Example],
    per_pattern: int = EXAMPLES_PER_PATTERN,
) -> list[Pattern]:
    """Patterns, largest first; `example` turns a chosen record into an Example (reads the graph)."""
    groups: dict[tuple[str, str, str], list[FailureRecord]] = defaultdict(list)
    for record in records:
        groups[record.system, record.op_name or "-", record.error_type].append(record)
    order = sorted(groups, key=lambda key: (-len(groups[key]), *key))
    shown: set[str] = set()  # questions already shown by a larger pattern
    patterns = []
    for system, op_name, error_type in order:
        members = groups[system, op_name, error_type]
        share = len(members) / max(system_failures.get(system, 0), len(members))
        reasons = [attributions[r.run_id, r.case_id].explanation for r in members]
        chosen = pick_examples(members, per_pattern, avoid=shown)
        shown |= {question_key(r.question) for r in chosen}
        patterns.append(
            Pattern(
                system=system,
                op_name=op_name,
                error_type=error_type,
                count=len(members),
                share=share,
                description=describe(error_type, op_name, system, len(members), share, reasons),
                mean_confidence=sum(r.confidence for r in members) / len(members),
                verification=verification_counts([r.verified for r in members]),
                categories=dict(Counter(r.category or "-" for r in members).most_common()),
                examples=[example(r) for r in chosen],
                tunables=tunables(system, op_name, members[0].op_category, error_type),
            )
        )
    return patterns


def tunables(system: str, op_name: str, op_category: str | None, error_type: ErrorType) -> list[TunableRoute]:
    """The prompts and settings the optimiser routes this pattern to, one entry per tunable."""
    first: dict[str, TunableRoute] = {}
    for r in routes_for(system_routes(system), op_name, op_category, error_type):
        first.setdefault(r.tunable, TunableRoute(name=r.tunable, direction=r.direction, why=r.why))
    return list(first.values())


def question_key(question: str) -> str:
    return " ".join(question.lower().split())


def pick_examples(
    members: list[FailureRecord], n: int, avoid: set[str] | frozenset[str] = frozenset()
) -> list[FailureRecord]:
    """One per distinct question: questions not in `avoid` first, then confirmed, then confident."""
    ranked = sorted(
        enumerate(members),
        key=lambda item: (
            question_key(item[1].question) in avoid,
            _TRUST.get(item[1].verified, 3),
            -item[1].confidence,
            item[0],
        ),
    )
    chosen: list[FailureRecord] = []
    questions: set[str] = set()
    for _, record in ranked:
        key = question_key(record.question)
        if key in questions:
            continue
        questions.add(key)
        chosen.append(record)
        if len(chosen) == n:
            break
    return chosen


def build_example(
    graph: GraphQueries, case: Case, attribution: Attribution, record: FailureRecord
) -> Example:
    """The example card of a failed case: question, gold, prediction and the decisive op's values."""
    inputs: list[VariableVersion] = []
    outputs: list[VariableVersion] = []
    op_seq = None
    if attribution.op_id and graph.has_op(attribution.op_id):
        op_seq = graph.op(attribution.op_id).seq
        on_path = {step.id for step in attribution.path if step.kind == "var"}
        inputs = sorted(
            graph.inputs(attribution.op_id),
            key=lambda v: (v.id not in on_path, v.category == "memory_entry", v.seq),
        )
        outputs = graph.outputs(attribution.op_id)
    shown_in, shown_out = inputs[:MAX_INPUTS], outputs[:MAX_OUTPUTS]
    values = graph.values([*shown_in, *shown_out])
    focus = focus_terms(case, attribution)
    part = carrying_part(attribution)
    record_of = attribution.verification or {}
    evidence = evidence_texts(_carriers(graph, attribution))
    context = {v.id for v in case_anatomy(graph, case).context_vars}

    def shown(v: VariableVersion) -> ValueSnippet:
        if v.id in context or v.category in CONTEXT_CATEGORIES:  # carrying only where the path says so
            return snippet(v, values[v.id], focus, carrying=carrying_parts(attribution, v.id))
        return snippet(v, values[v.id], focus, evidence=evidence)

    return Example(
        run_id=record.run_id,
        case_id=record.case_id,
        anchor=record.anchor,
        question=case.question,
        gold=list(case.gold),
        prediction=case.prediction,
        op_id=attribution.op_id,
        op_seq=op_seq,
        explanation=honest_explanation(attribution.explanation, part),
        confidence=attribution.confidence,
        verified=attribution.verified,
        confidence_after_verify=record.confidence_after_verify,
        revised_from=record.revised_from,
        carrying_part=part,
        verification_reason=record_of.get("reason"),
        checked=[str(c) for c in record_of.get("checked") or []],
        second_faults=[second_fault_line(f) for f in record_of.get("second_faults") or []],
        inputs=[shown(v) for v in shown_in],
        outputs=[shown(v) for v in shown_out],
        more_inputs=len(inputs) - len(shown_in),
        more_outputs=len(outputs) - len(shown_out),
    )


def carrying_part(attribution: Attribution) -> str | None:
    """The part of the context the path names as carrying the information (PathStep.part), if any."""
    return next((step.part for step in attribution.path if step.part), None)


def honest_explanation(explanation: str, part: str | None) -> str:
    """The explanation, with any "held the information" claim reworded when no carrying part backs it."""
    if part is not None:
        return explanation
    return _HELD.sub(
        "was scored as holding the information (no single part of it shown to carry it)", explanation
    )


def second_fault_line(fault: dict) -> str:
    """A second (later) fault as one line: error type at operation, and what happened."""
    return f"{fault.get('error_type', '?')} at {fault.get('op_id') or '-'}: {fault.get('reason', '')}".rstrip(
        ": "
    )


def _carriers(graph: GraphQueries, attribution: Attribution) -> list[object]:
    """Values of the messages and memory units on the evidence path that still carry the information."""
    ids = [
        step.id
        for step in attribution.path
        if step.kind == "var" and step.carries is not False and graph.has_var(step.id)
    ]
    chosen = [v for v in (graph.var(i) for i in dict.fromkeys(ids)) if v.category in CARRIER_CATEGORIES]
    # A list-valued unit (a long-context buffer) holds everything said so far, not the evidence itself.
    return [value for value in graph.values(chosen).values() if not isinstance(value, list)]
