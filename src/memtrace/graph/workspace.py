"""A workspace: one folder, one database, every run recorded or imported into it."""

from __future__ import annotations

from pathlib import Path

from .model import Case, Run
from .queries import Graph
from .store import Store
from .view import GraphView


class Workspace:
    """The entry point for reading what was recorded: runs, their graphs and their cases."""

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = Path(path)
        self.store = Store(self.path, create=create)
        self._views: dict[str, GraphView] = {}

    def runs(self) -> list[Run]:
        return self.store.runs()

    def run(self, ref: str) -> Run:
        """A run by id, by a name no other run shares, or by a unique id prefix; every other lookup
        here goes through this one (a shared name raises AmbiguousRunError listing the runs)."""
        return self.store.run(ref)

    def graph(self, ref: str) -> Graph:
        """SQL-backed queries over one run; nothing is loaded up front."""
        return Graph(self.store, self.run(ref))

    def view(self, ref: str) -> GraphView:
        """The whole run loaded into memory for analyses that walk it many times."""
        return GraphView(self.store, self.run(ref))

    def cached_view(self, run_id: str) -> GraphView:
        """`view(run_id)`, kept for the next call: for workflows that revisit a few finished runs."""
        view = self._views.get(run_id)
        if view is None:
            if len(self._views) >= 4:
                self._views.pop(next(iter(self._views)))
            view = self._views[run_id] = self.view(run_id)
        return view

    def cases(self, ref: str | None = None) -> list[Case]:
        return self.store.cases(None if ref is None else self.run(ref).id)

    def case(self, ref: str, case_id: str) -> Case:
        return self.store.case(self.run(ref).id, case_id)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_workspace(path: str | Path, *, create: bool = False) -> Workspace:
    """Open an existing workspace folder (or create one with `create=True`)."""
    return Workspace(path, create=create)
