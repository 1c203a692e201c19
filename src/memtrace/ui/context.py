"""What the UI derives once per run and reuses for every page of it (runs are immutable once done).

A run's session dates and seq range are read on first use, and the content words of memory
versions (for "does this unit carry the evidence?") as cases need them; both are kept for a few
runs, so a case page of a large run costs its own queries only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from ..attribution.evidence.support import value_words
from ..graph import Graph, VariableVersion, Workspace
from .text import display_text

#: Runs kept derived at once (each holds its memory versions' word sets).
KEPT_RUNS = 6


@dataclass(slots=True)
class SessionMark:
    """Where a session starts on the run's seq axis, with its date as recorded."""

    seq: int
    label: str


@dataclass
class RunContext:
    graph: Graph
    sessions: list[SessionMark]
    max_seq: int
    words: dict[str, tuple[frozenset[str], ...]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def words_of(self, versions: list[VariableVersion]) -> dict[str, tuple[frozenset[str], ...]]:
        """Content words per version id, computed once per distinct value."""
        with self.lock:
            missing = [v for v in versions if v.blob and v.blob not in self.words]
            if missing:
                values = self.graph.values(missing)
                for v in missing:
                    self.words[v.blob] = value_words(values[v.id])  # type: ignore[index]
            return {v.id: self.words.get(v.blob, ()) if v.blob else () for v in versions}


class RunContexts:
    """A small least-recently-used cache of RunContext by run id."""

    def __init__(self, ws: Workspace, size: int = KEPT_RUNS) -> None:
        self.ws = ws
        self.size = size
        self._kept: OrderedDict[str, RunContext] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, run_ref: str) -> RunContext:
        run = self.ws.run(run_ref)
        with self._lock:
            found = self._kept.get(run.id)
            if found is not None:
                self._kept.move_to_end(run.id)
                return found
        built = _build(self.ws, run.id)
        with self._lock:
            self._kept[run.id] = built
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return built


def _build(ws: Workspace, run_id: str) -> RunContext:
    graph = ws.graph(run_id)
    store = ws.store
    dates = store.variables(run_id, "AND category=?", ("session_date",))
    values = graph.values(dates)
    sessions = [SessionMark(v.seq, display_text(values[v.id])) for v in dates]
    return RunContext(graph, sessions, store.max_seq(run_id))
