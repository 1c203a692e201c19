"""Evidence location: the messages a failed question needed, where attribution starts walking.

REFERENCE.md ("Their attribution method", step 1): start from the case's gold evidence ids when the
dataset has them, otherwise retrieve pseudo evidence among the run's `message` variables with the
query "question + gold answer", by BM25, dense embeddings, or both fused by reciprocal rank (k = 60,
each retriever contributing limit x 2 candidates); 8 starting points by default.

Gold ids name messages either by dialogue id (`D3:1`, as datasets give them) or by full node id
(`D3:1@1`, as MemTraceBench annotations give them); both resolve here. An id naming no message is
reported in `Evidence.unresolved`, never dropped silently. A run's messages are indexed once per
graph object, however many of its cases are located.

    from memtrace.attribution.evidence.locate import locate_evidence
    ev = locate_evidence(ws.view("conv-26"), case)          # gold when present, else BM25
    ev.ids, ev.texts, ev.source, ev.unresolved
"""

from __future__ import annotations

import ast
import copy
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from ...graph import Case, GraphQueries, GraphView, VariableVersion
from ...graph.values import value_text
from ...retrieval import DEFAULT_RRF_K, BM25Index, DenseIndex, Embedder, HashingEmbedder, HybridIndex
from ...text import format_date, parse_when
from .fields import Reading, read_text, read_value
from .locator_settings import DEFAULT_K, METHODS, QUERY_MODES, RETRIEVERS

Method = Literal["auto", "gold", "bm25", "dense", "hybrid"]
#: How many candidates each retriever gives hybrid fusion per requested hit (the paper's code: 2).
HYBRID_CANDIDATES = 2

_CATEGORY_WORDS = re.compile(r"[a-z0-9_]+")


def is_message_category(category: str | None) -> bool:
    """True for a conversation message: `message`, but not MemTraceBench's `message & query` queries.

    Categories are compared word by word, so `message_buffer` (a RAG buffer) is not a message either.
    """
    words = _CATEGORY_WORDS.findall((category or "").lower())
    return "message" in words and "query" not in words


def _all_message_versions(graph: GraphQueries) -> list[VariableVersion]:
    """Every live message version of the run in seq order (a loaded view is read without SQL)."""
    if isinstance(graph, GraphView):
        versions = sorted(graph.vars.values(), key=lambda v: v.seq)
    else:
        store = graph.store  # Graph and GraphView both hold their store
        versions = store.variables(graph.run.id, "AND category LIKE ?", ("%message%",))
    return [v for v in versions if not v.deleted and is_message_category(v.category)]


def message_versions(graph: GraphQueries) -> list[VariableVersion]:
    """The run's messages: the latest live version of each message variable, in seq order."""
    return _latest_per_name(_all_message_versions(graph))


def _latest_per_name(versions: Iterable[VariableVersion]) -> list[VariableVersion]:
    latest: dict[str, VariableVersion] = {}
    for version in versions:
        current = latest.get(version.name)
        if current is None or version.version > current.version:
            latest[version.name] = version
    return sorted(latest.values(), key=lambda v: v.seq)


def message_text(value: Any) -> str:
    """A message value as text: what it says, never its JSON (see `fields`). Imported graphs keep
    `repr()`-quoted strings, which are unquoted; a dict or its dump reads by its text fields."""
    return _reading(value).text


def _reading(value: Any) -> Reading:
    """A message value read by its fields (text, date), whatever form it was stored in."""
    if value is None:
        return Reading("")
    if isinstance(value, str):
        stripped = value.strip()
        if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
            try:
                inner = ast.literal_eval(stripped)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                inner = None
            if isinstance(inner, str):
                value = inner
        return read_value(value) or read_text(value)
    reading = read_value(value)
    if reading is not None:
        return reading
    if isinstance(value, (list, tuple)):
        return Reading("\n".join(t for t in (message_text(item) for item in value) if t))
    return Reading(value_text(value))


def said_when(graph: GraphQueries, version: VariableVersion) -> str | None:
    """The date a recorded message was said ('8 May 2023'): its own time field, else its session's
    date; None if unknown."""
    own = _reading(graph.value(version.id)).when
    if own is not None:
        return own
    for op in graph.producers(version.id):
        dates = [v for v in graph.outputs(op.id) if v.category == "session_date"]
        when = parse_when(graph.value(dates[0].id)) if dates else None
        if when is not None:
            return format_date(when)
    return None


def dated_message(graph: GraphQueries, version: VariableVersion) -> str:
    """A message as memories hold it: its text and, when known, '[said on 8 May 2023]'.

    Answers to "when" questions are usually the day the message was said, which is in the session's
    date (or the message's own time field) and in every memory's stamp, not in the message text.
    """
    text = message_text(graph.value(version.id))
    when = said_when(graph, version)
    return f"{text} [said on {when}]" if when else text


def _raw_name(version: VariableVersion) -> str:
    """The smartcomment node name without its `class_name:` prefix (imported graphs keep the class)."""
    class_name = version.metadata.get("class_name") if version.metadata else None
    if isinstance(class_name, str) and version.name.startswith(f"{class_name}:"):
        return version.name[len(class_name) + 1 :]
    return version.name


@dataclass(slots=True)
class Evidence:
    """The starting points for one case: message versions, their texts, and how they were found.

    `source` is "gold" (the dataset's evidence ids) or the retriever used; `scores` are 1.0 for gold
    and retrieval scores otherwise (RRF scores for hybrid). `names` are the message variable names:
    recall compares those, so `D3:1@1` and the latest `D3:1@2` count as the same message.
    """

    run_id: str
    case_id: str
    source: str
    ids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    query: str | None = None
    query_mode: str | None = None
    #: The message versions themselves, for walking the graph from them (left out of `to_dict`).
    versions: list[VariableVersion] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def problem(self) -> str | None:
        """Why there is no evidence to start from (None when there is some)."""
        if self.ids:
            return None
        if self.unresolved:
            return f"gold evidence {', '.join(self.unresolved)} names no message of the run"
        if self.source == "gold":
            return "the case has no gold evidence ids"
        return "no message matched the query"

    def to_dict(self) -> dict[str, Any]:
        return {f.name: copy.copy(getattr(self, f.name)) for f in fields(self) if f.name != "versions"}


def build_query(case: Case, mode: str = "question+answer") -> str:
    """The retrieval query of a case: the question, plus its gold answers or its prediction."""
    if mode not in QUERY_MODES:
        raise ValueError(f"unknown query mode {mode!r} (choose {', '.join(QUERY_MODES)})")
    parts = [case.question]
    if mode == "question+answer":
        parts.extend(case.gold)
    elif mode == "question+prediction" and case.prediction:
        parts.append(case.prediction)
    return "\n".join(p for p in parts if p)


class EvidenceLocator:
    """One run's messages, indexed once (lazily, per retriever), to locate evidence for its cases."""

    def __init__(self, graph: GraphQueries, embedder: Embedder | None = None) -> None:
        self.graph = graph
        self.embedder = embedder
        every = _all_message_versions(graph)
        self.versions = _latest_per_name(every)
        values = graph.values(every)
        self._texts = {v.id: message_text(values[v.id]) for v in every}
        self.texts = [self._texts[v.id] for v in self.versions]
        # Resolution table: name, raw name, and each version's id (with and without class prefix).
        self._refs: dict[str, VariableVersion] = {}
        for version in every:
            raw = _raw_name(version)
            self._refs.setdefault(version.id, version)
            self._refs.setdefault(f"{raw}@{version.version}", version)
        for version in self.versions:
            self._refs[version.name] = version
            self._refs.setdefault(_raw_name(version), version)
        self._lock = threading.Lock()
        self._indexes: dict[str, Any] = {}

    def resolve(self, evidence_ids: Iterable[str]) -> tuple[list[VariableVersion], list[str]]:
        """Gold ids -> message versions (a bare name gives its latest version), and the unresolved ids."""
        found: list[VariableVersion] = []
        unresolved: list[str] = []
        seen: set[str] = set()
        for ref in evidence_ids:
            key = str(ref).strip()
            version = self._refs.get(key)
            if version is None:
                unresolved.append(str(ref))
            elif version.id not in seen:
                seen.add(version.id)
                found.append(version)
        return found, unresolved

    def index(self, method: str) -> BM25Index | DenseIndex | HybridIndex:
        """The index of one retriever over the messages, built on first use; hybrid reuses the others."""
        if method not in RETRIEVERS:
            raise ValueError(f"unknown retrieval method {method!r} (choose {', '.join(RETRIEVERS)})")
        with self._lock:
            return self._index_locked(method)

    def _index_locked(self, method: str) -> BM25Index | DenseIndex | HybridIndex:
        if method not in self._indexes:
            if method == "bm25":
                self._indexes[method] = BM25Index(self.texts)
            elif method == "dense":
                embedder = self.embedder if self.embedder is not None else HashingEmbedder()
                self._indexes[method] = DenseIndex(embedder, texts=self.texts)
            else:
                self._indexes[method] = HybridIndex(
                    bm25=self._index_locked("bm25"),
                    dense=self._index_locked("dense"),
                    candidates=HYBRID_CANDIDATES,
                    rrf_k=DEFAULT_RRF_K,
                )
        return self._indexes[method]

    def retrieve(self, query: str, method: str, k: int = DEFAULT_K) -> list[tuple[VariableVersion, float]]:
        """The best `k` messages for a query by one retriever, best first."""
        hits = self.index(method).search(query, k)
        return [(self.versions[hit.index], hit.score) for hit in hits]

    def default_retriever(self) -> str:
        """BM25 offline; hybrid once a (semantic) embedder is given.

        With the lexical hashing embedder, fusion scores below BM25 alone on LoCoMo evidence recall
        (retrieval/hybrid.py), so hybrid is only the default when an embedder was chosen.
        """
        return "bm25" if self.embedder is None else "hybrid"

    def locate(
        self,
        case: Case,
        *,
        method: str = "auto",
        query_mode: str = "question+answer",
        k: int = DEFAULT_K,
    ) -> Evidence:
        """Gold evidence when asked for (or, with "auto", when any gold id resolves); else retrieval.

        Gold evidence is never cut to `k`: it is what the dataset says the question needed.
        """
        if method not in METHODS:
            raise ValueError(f"unknown evidence method {method!r} (choose {', '.join(METHODS)})")
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        run_id = self.graph.run.id
        if case.run_id and case.run_id != run_id:
            raise ValueError(f"case {case.id} belongs to run {case.run_id}, not to run {run_id}")
        gold, unresolved = self.resolve(case.evidence)
        if method == "gold" or (method == "auto" and gold):
            return Evidence(
                run_id,
                case.id,
                "gold",
                [v.id for v in gold],
                [v.name for v in gold],
                [self._texts[v.id] for v in gold],
                [1.0] * len(gold),
                unresolved,
                versions=gold,
            )
        retriever = self.default_retriever() if method == "auto" else method
        query = build_query(case, query_mode)
        hits = self.retrieve(query, retriever, k)
        return Evidence(
            run_id,
            case.id,
            retriever,
            [v.id for v, _ in hits],
            [v.name for v, _ in hits],
            [self._texts[v.id] for v, _ in hits],
            [score for _, score in hits],
            unresolved,
            query,
            query_mode,
            [v for v, _ in hits],
        )


def locator_for(graph: GraphQueries, embedder: Embedder | None = None) -> EvidenceLocator:
    """The cached locator of a graph object (pass the same object to reuse its indexes)."""
    key = ("evidence-locator", None if embedder is None else id(embedder))
    with _LOCATORS_LOCK:
        return graph.derived(key, lambda: EvidenceLocator(graph, embedder))


_LOCATORS_LOCK = threading.Lock()


def run_speakers(graph: GraphQueries) -> frozenset[str]:
    """Who speaks in the run's messages ('Clara: ...'): their names are on every line they said, so
    they show nothing about a line's source (the support target leaves them out)."""
    texts = locator_for(graph).texts
    return graph.derived(
        "run-speakers", lambda: frozenset(t.split(": ", 1)[0] for t in texts if ": " in t[:40])
    )


def turn_speakers(graph: GraphQueries) -> dict[str, str]:
    """Who said each turn (the name before its ': '), by version id, cached per graph."""

    def build() -> dict[str, str]:
        turns = message_versions(graph)
        values = graph.values(turns)
        said = {}
        for v in turns:
            head, sep, _ = message_text(values[v.id]).partition(": ")
            if sep and len(head) <= 40:
                said[v.id] = head
        return said

    return graph.derived("turn-speakers", build)


def locate_evidence(
    graph: GraphQueries,
    case: Case,
    *,
    method: str = "auto",
    query_mode: str = "question+answer",
    k: int = DEFAULT_K,
    embedder: Embedder | None = None,
) -> Evidence:
    """The starting points of attribution for one case; see `EvidenceLocator.locate`."""
    return locator_for(graph, embedder).locate(case, method=method, query_mode=query_mode, k=k)


_DIALOGUE_ID = re.compile(r"^(?P<session>D\d+):\d+$")


def session_of(version: VariableVersion) -> str | None:
    """The session of a LoCoMo turn ('D3' of 'D3:5'); None for other naming schemes."""
    match = _DIALOGUE_ID.match(version.name)
    return match.group("session") if match else None
