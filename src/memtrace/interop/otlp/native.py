"""Rebuild a run that `memtrace export --format otlp` wrote, from the graph its spans carry.

A memtrace export says so on its root span (`memtrace.graph.version`) and every operation span
names the versions it read and wrote (graphspans.py), so the run comes back as it was recorded:
the same operation ids, seqs, categories and edges, each case with its prediction variable, and the
values when the export had `--content`. Nothing is inferred, unlike the GenAI reading of foreign
traces (importer.py). Spans without `memtrace.op.id` (someone else's, in the same trace) are left
out and counted in the run's metadata.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ...errors import FormatError
from ...graph.model import MEMORY_ENTRY, RUN_COMPLETE, Case, Run
from ...graph.rows import RunRows, case_row, dumps_or_none
from ...graph.store import Store
from ...graph.values import encode_value
from ...vocabulary import CaseVerdict
from .._common import stable_id
from . import graphspans as g
from . import spans as keys
from ._wirespan import WireSpan
from .cases import CaseSpec
from .marks import MARK

#: The placeholder category of a version an operation names but no span received describes.
UNDESCRIBED = "undescribed"


def is_memtrace_graph(spans: Sequence[WireSpan]) -> bool:
    """True for a trace memtrace exported with its graph (a layout this reader knows)."""
    return any(s.attributes.get(g.GRAPH_VERSION) == g.LAYOUT for s in spans)


class NativeTrace:
    """One exported trace's spans as the rows of its run."""

    def __init__(self, trace_id: str, spans: Sequence[WireSpan], source: str, name: str | None) -> None:
        self.root = next(s for s in spans if s.attributes.get(g.GRAPH_VERSION) == g.LAYOUT)
        self.spans = sorted((s for s in spans if isinstance(s.attributes.get(keys.OP_ID), str)), key=_seq_of)
        attrs = self.root.attributes
        self.content = attrs.get(g.EXPORT_CONTENT) is True
        metadata = _json(attrs.get(g.RUN_METADATA), {})
        metadata["source"] = {"file": source, "format": "otlp", "trace_id": trace_id, "content": self.content}
        skipped = len(spans) - len(self.spans) - 1
        if skipped > 0:
            metadata["source"]["skipped_spans"] = skipped
        self.run = Run(
            id=stable_id("otel-", trace_id, size=6),
            name=name or str(attrs.get(keys.RUN_NAME) or self.root.name),
            system=_text(attrs.get(g.RUN_SYSTEM)),
            dataset=_text(attrs.get(g.RUN_DATASET)) or "otlp",
            conversation=_text(attrs.get(g.RUN_CONVERSATION)),
            status=_text(attrs.get(g.RUN_STATUS)) or RUN_COMPLETE,
            error=self.root.error,
            config=_json(attrs.get(g.RUN_CONFIG), {}),
            metadata=metadata,
            created_at=self.root.start,
            finished_at=max(s.end for s in spans),
        )
        self.ops: list[tuple] = []
        self.vars: list[tuple] = []
        self.edges: list[tuple] = []
        self.blobs: dict[str, tuple] = {}
        self.lists: dict[str, list[Any]] = {}  # list values by version id: the bases of later changes
        self.cases: list[Case] = []

    def build(self, specs: Sequence[CaseSpec]) -> None:
        """Rows of the operations, versions, edges and cases; a cases file may add gold answers."""
        op_of_span = {s.span_id: s.attributes[keys.OP_ID] for s in self.spans}
        described: dict[str, tuple[dict[str, Any], float]] = {}
        for span in [self.root, *self.spans]:
            for record in _json(span.attributes.get(g.VARS), []):
                if isinstance(record, dict) and isinstance(record.get("id"), str):
                    described.setdefault(record["id"], (record, span.start))
        named: dict[str, int] = {}  # versions the edges name, with the seq of the first op naming them
        for span in self.spans:
            op_id = op_of_span[span.span_id]
            seq = _seq_of(span)
            self.ops.append(self._op_row(span, op_id, seq, op_of_span.get(span.parent_id or "")))
            for key, role in ((g.OP_INPUTS, "in"), (g.OP_OUTPUTS, "out")):
                for var_id in _strings(span.attributes.get(key)):
                    named.setdefault(var_id, seq)
                    self.edges.append((self.run.id, op_id, var_id, role, None, None))
        for var_id, seq in named.items():  # a partial trace (a receiver mid-run): kept, value unknown
            described.setdefault(var_id, ({"id": var_id, "category": UNDESCRIBED, "seq": seq}, 0.0))
        records = sorted(described.values(), key=lambda item: _int(item[0].get("seq")))
        self.vars = [self._var_row(record, start) for record, start in records]  # a base before its change
        for span in [self.root, *self.spans]:
            for event_name, _time, attributes in span.events:
                if _is_case_event(event_name, attributes):
                    self.cases.append(self._case(attributes))
        _apply_specs(self.cases, specs)

    def _op_row(self, span: WireSpan, op_id: str, seq: int, parent: str | None) -> tuple:
        attrs = span.attributes
        metadata = _json(attrs.get(g.OP_METADATA), {})
        status = _text(attrs.get(g.OP_STATUS))
        if status is None:  # an export without it: the span's status, unless memtrace's own mark
            status = "error" if span.error is not None and MARK not in attrs else "ok"
        if status != "ok" and span.error is not None and MARK not in attrs:
            metadata.setdefault("error", span.error)
        if g.OP_METADATA not in attrs:  # no recorded metadata: keep the kind, so an export gives it back
            if span.kind in (keys.CLIENT, keys.INTERNAL):
                metadata[keys.REMOTE] = span.kind == keys.CLIENT
            elif span.kind in keys.OTHER_KINDS:
                metadata[keys.SPAN_KIND] = span.kind
        name = str(attrs.get(keys.OP_NAME) or span.name)
        category = str(attrs.get(keys.OP_CATEGORY) or "operation")
        row = (self.run.id, op_id, seq, parent, name, category, span.start, span.end, status)
        return (*row, dumps_or_none(metadata))

    def _var_row(self, record: dict[str, Any], created_at: float) -> tuple:
        var_id = record["id"]
        name, _, number = var_id.rpartition("@")
        version = int(number) if number.isdigit() and name else 1
        deleted = record.get("deleted") is True
        blob = None
        known, value = "value" in record, record.get("value")
        if not known and "base" in record:  # a list that grew from its version before
            rebuilt = g.rebuilt(record, self.lists.get(str(record["base"])))
            known, value = rebuilt is not None, rebuilt
        if isinstance(value, list):
            self.lists[var_id] = value
        if not known and record.get("category") == MEMORY_ENTRY:
            known, value = True, {"id": name or var_id}  # no content: a record is its id, as in GenAI traces
        if known and not deleted:
            digest, encoding, data = encode_value(value)
            self.blobs.setdefault(digest, (digest, encoding, data))
            blob = digest
        seq = _int(record.get("seq"))
        metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else None
        category = str(record.get("category") or UNDESCRIBED)
        row = (self.run.id, var_id, name or var_id, version, seq, category, blob, int(deleted))
        return (*row, created_at, dumps_or_none(metadata))

    def _case(self, attrs: dict[str, Any]) -> Case:
        verdict = attrs.get(g.CASE_VERDICT)
        score = attrs.get(g.CASE_SCORE)
        return Case(
            self.run.id,
            str(attrs[g.CASE_ID]),
            _text(attrs.get(g.CASE_QUESTION)) or "",
            _strings(attrs.get(g.CASE_GOLD)),
            attrs.get(g.CASE_PREDICTION) if isinstance(attrs.get(g.CASE_PREDICTION), str) else None,
            _text(attrs.get(g.CASE_PREDICTION_VAR)),
            CaseVerdict(verdict) if verdict in tuple(CaseVerdict) else None,
            float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
            _strings(attrs.get(g.CASE_EVIDENCE)),
            _text(attrs.get(g.CASE_CATEGORY)),
            _json(attrs.get(g.CASE_METADATA), {}),
        )

    def write(self, store: Store) -> None:
        store_trace(store, self.run, self.ops, self.vars, self.edges, list(self.blobs.values()), self.cases)


def _is_case_event(name: str, attrs: dict[str, Any]) -> bool:
    """The judge's verdict or a never-judged case: the events that carry a case (not attributions)."""
    if not isinstance(attrs.get(g.CASE_ID), str):
        return False
    return name == g.CASE_EVENT or (
        name == keys.EVALUATION_EVENT and attrs.get(keys.EVALUATION_NAME) == "memtrace.judge"
    )


def _apply_specs(cases: list[Case], specs: Sequence[CaseSpec]) -> None:
    """A cases file fills in what an export without content lacks, matched by question or id."""
    for spec in specs:
        case = next((c for c in cases if (spec.id and c.id == spec.id) or c.question == spec.question), None)
        if case is None:
            continue
        case.question = case.question or spec.question
        case.gold = spec.gold or case.gold
        case.evidence = list(spec.evidence or case.evidence)
        case.verdict = spec.verdict or case.verdict


def _seq_of(span: WireSpan) -> int:
    return _int(span.attributes.get(keys.OP_SEQ))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _json(raw: Any, default: Any) -> Any:
    if not isinstance(raw, str):
        return default
    try:
        parsed = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return default
    return parsed if isinstance(parsed, type(default)) else default


def _strings(raw: Any) -> list[str]:
    return [str(item) for item in raw] if isinstance(raw, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def store_trace(
    store: Store,
    run: Run,
    ops: list[tuple],
    variables: list[tuple],
    edges: list[tuple],
    blobs: list[tuple],
    cases: list[Case],
) -> None:
    """Write one imported trace as its run in one transaction; rows the store refuses (ids the spans
    contradict) are a FormatError naming the file."""
    rows = RunRows(ops=ops, variables=variables, edges=edges, blobs=blobs, cases=[case_row(c) for c in cases])
    try:
        store.replace_run(run, rows)
    except sqlite3.IntegrityError as exc:
        raise FormatError(run.metadata["source"]["file"], f"inconsistent spans ({exc})") from None
