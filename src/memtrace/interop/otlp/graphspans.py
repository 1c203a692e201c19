"""The run's graph in memtrace's own span attributes, so that importing an export rebuilds it exactly.

GenAI spans say what an operation did (create_memory, search_memory, chat), not which variable
versions it read and wrote, and a memtrace system's answer step is no model call at all: an import
that only reads the conventions loses the prediction and the answer's context. So every exported
span also carries the structure, always (variable ids, categories, seqs, the edges, each case's
prediction variable and evidence ids), and the values (texts, memory records, the case's question,
gold and prediction) only with `content`: attribution follows text, so a round trip that is to be
attributed needs `--content`. The root span says which it was (`memtrace.export.content`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...graph.model import Case, Operation, Run, VariableVersion
from ...graph.queries import GraphQueries

#: Root span: the layout of these attributes (the importer rebuilds the graph when it is present).
GRAPH_VERSION = "memtrace.graph.version"
LAYOUT = 1
#: Root span: whether values went out (`--content`); without them the graph has no text to follow.
EXPORT_CONTENT = "memtrace.export.content"
RUN_SYSTEM = "memtrace.run.system"
RUN_DATASET = "memtrace.run.dataset"
RUN_CONVERSATION = "memtrace.run.conversation"
RUN_STATUS = "memtrace.run.status"
RUN_CONFIG = "memtrace.run.config"  # content: the system's settings and prompts, as JSON
RUN_METADATA = "memtrace.run.metadata"  # content: JSON
#: Operation spans: the version ids read and written (the graph's edges), in recorded order.
OP_INPUTS = "memtrace.op.inputs"
OP_OUTPUTS = "memtrace.op.outputs"
OP_STATUS = "memtrace.op.status"
OP_METADATA = "memtrace.op.metadata"  # content: JSON (rankings, decisions: may quote the run's text)
#: JSON list of the versions a span introduces: {id, category, seq[, deleted][, value, metadata]};
#: a list that grew from the version before it says so instead: {base, drop, append} (see `describe`).
VARS = "memtrace.vars"
#: On a case's event (its judge verdict, or `memtrace.case` for a case never judged).
CASE_EVENT = "memtrace.case"
CASE_ID = "memtrace.case.id"
CASE_PREDICTION_VAR = "memtrace.case.prediction_var"
CASE_VERDICT = "memtrace.case.verdict"
CASE_SCORE = "memtrace.case.score"
CASE_EVIDENCE = "memtrace.case.evidence"
CASE_CATEGORY = "memtrace.case.category"
CASE_QUESTION = "memtrace.case.question"  # content
CASE_GOLD = "memtrace.case.gold"  # content
CASE_PREDICTION = "memtrace.case.prediction"  # content
CASE_METADATA = "memtrace.case.metadata"  # content: JSON


def run_attributes(run: Run, *, content: bool, loose: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The root span's share: the run's identity, whether content went out, and versions no
    operation touched (`loose`), which would otherwise be lost."""
    attributes: dict[str, Any] = {GRAPH_VERSION: LAYOUT, EXPORT_CONTENT: content, RUN_STATUS: run.status}
    for key, value in (
        (RUN_SYSTEM, run.system),
        (RUN_DATASET, run.dataset),
        (RUN_CONVERSATION, run.conversation),
    ):
        if value:
            attributes[key] = value
    if content:
        attributes.update(_json_items({RUN_CONFIG: run.config, RUN_METADATA: run.metadata}))
    if loose:
        attributes[VARS] = dumps(list(loose))
    return attributes


def op_attributes(
    op: Operation,
    inputs: Sequence[VariableVersion],
    outputs: Sequence[VariableVersion],
    introduced: Sequence[dict[str, Any]],
    *,
    content: bool,
) -> dict[str, Any]:
    """An operation span's share: its status, the versions it read and wrote, the ones it introduces."""
    attributes: dict[str, Any] = {OP_STATUS: op.status}
    if inputs:
        attributes[OP_INPUTS] = [v.id for v in inputs]
    if outputs:
        attributes[OP_OUTPUTS] = [v.id for v in outputs]
    if introduced:
        attributes[VARS] = dumps(list(introduced))
    if content:
        attributes.update(_json_items({OP_METADATA: op.metadata}))
    return attributes


def describe(
    version: VariableVersion,
    values: Mapping[str, Any],
    *,
    content: bool,
    previous: tuple[str, Any] | None = None,
) -> dict[str, Any]:
    """One version as the importer reads it back; its value and metadata only with content.

    A list that is the `previous` version's (id, value) with items dropped from its head and added
    at its tail (a context window, a message buffer) goes as that change: written whole, every
    version of a growing window would make the export quadratic in the conversation's length.
    """
    record: dict[str, Any] = {"id": version.id, "category": version.category, "seq": version.seq}
    if version.deleted:
        record["deleted"] = True
    if content:
        if not version.deleted:
            value = values.get(version.id)
            change = _list_change(previous[1], value) if previous is not None else None
            if previous is not None and change is not None:
                record["base"], (record["drop"], record["append"]) = previous[0], change
            else:
                record["value"] = value
        if version.metadata:
            record["metadata"] = version.metadata
    return record


def previous(view: GraphQueries, version: VariableVersion) -> tuple[str, Any] | None:
    """The id and value of the version before this one of the same variable (None: none, or deleted):
    what `describe` may write this one as a change of."""
    earlier = [v for v in view.versions(version.name) if v.version < version.version]
    if not earlier or earlier[-1].deleted:
        return None
    return earlier[-1].id, view.value(earlier[-1].id)


def rebuilt(record: Mapping[str, Any], base: Any) -> list[Any] | None:
    """The list a {base, drop, append} record stands for, given its base's value (None: cannot)."""
    drop, append = record.get("drop"), record.get("append")
    if not isinstance(base, list) or not isinstance(append, list):
        return None
    if not isinstance(drop, int) or isinstance(drop, bool) or not 0 <= drop <= len(base):
        return None
    return base[drop:] + append


def _list_change(before: Any, after: Any) -> tuple[int, list[Any]] | None:
    """(items dropped from the head, items appended) turning `before` into `after`, when both are
    lists and that is shorter than `after` itself."""
    if not isinstance(before, list) or not isinstance(after, list) or not before or not after:
        return None
    for drop in (k for k, item in enumerate(before) if item == after[0]):
        kept = len(before) - drop
        if kept <= len(after) and before[drop:] == after[:kept]:
            return (drop, after[kept:]) if kept > 0 else None
    return None


def introductions(
    ops: Sequence[Operation],
    edges: Mapping[str, tuple[Sequence[VariableVersion], Sequence[VariableVersion]]],
    every: Iterable[VariableVersion],
) -> tuple[dict[str, list[VariableVersion]], list[VariableVersion]]:
    """Which span describes each version: the first operation (in seq order) that writes or reads
    it; versions no operation touches go on the root span (the second list)."""
    seen: set[str] = set()
    by_op: dict[str, list[VariableVersion]] = {}
    for op in ops:
        inputs, outputs = edges[op.id]
        fresh = []
        for version in [*outputs, *inputs]:
            if version.id not in seen:
                seen.add(version.id)
                fresh.append(version)
        by_op[op.id] = fresh
    return by_op, [v for v in every if v.id not in seen]


def case_attributes(case: Case, *, content: bool) -> dict[str, Any]:
    """A case as event attributes: ids, verdict and evidence always; its texts only with content."""
    attributes: dict[str, Any] = {CASE_ID: case.id}
    if case.prediction_var:
        attributes[CASE_PREDICTION_VAR] = case.prediction_var
    if case.verdict is not None:
        attributes[CASE_VERDICT] = str(case.verdict)
    if case.score is not None:
        attributes[CASE_SCORE] = float(case.score)
    if case.evidence:
        attributes[CASE_EVIDENCE] = [str(e) for e in case.evidence]
    if case.category:
        attributes[CASE_CATEGORY] = case.category
    if content:
        attributes[CASE_QUESTION] = case.question
        if case.gold:
            attributes[CASE_GOLD] = [str(g) for g in case.gold]
        if case.prediction is not None:
            attributes[CASE_PREDICTION] = case.prediction
        attributes.update(_json_items({CASE_METADATA: case.metadata}))
    return attributes


def dumps(value: Any) -> str:
    """JSON text of a value (anything JSON cannot hold as its string); a lone surrogate, which no
    OTLP string may hold, is escaped rather than failing the export."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, default=str)
    return text


def _json_items(items: Mapping[str, Any]) -> dict[str, str]:
    return {key: dumps(value) for key, value in items.items() if value}
