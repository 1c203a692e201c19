"""Load the MemTraceBench benchmark: `<dir>/<split>/*.json`, one smartcomment graph per file.

Each file becomes one run (system = the system the caller says recorded that split, else the split
name; dataset = the graph's `memtracebench_dataset_source`; name `<split>/<graph>`: splits reuse
conversation names) with its annotations as labelled wrong cases and its other judged questions as
cases too. Which splits belong to which system is the systems' business (each declares its
`memtracebench_split`), so callers pass that map in: graph/ knows no system. The whole load is one
transaction: a broken file stops it with a FormatError naming the file and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..errors import FormatError
from ..graph.model import Run
from ..graph.store import Store
from .smartcomment.graphs import read_smartcomment, write_imported_in

Progress = Callable[[int, int, Path], None]


def memtracebench_files(
    directory: str | Path, splits: Iterable[str] | str | None = None, known: Iterable[str] = ()
) -> list[tuple[str, Path]]:
    """(split, file) pairs to load: the `known` splits first in their order, then the others by name;
    raises FormatError for a missing or empty directory."""
    root = Path(directory)
    if not root.is_dir():
        raise FormatError(root, "no such directory (expected MemTraceBench's <dir>/<split>/*.json)")
    if isinstance(splits, str):
        splits = [splits]
    if splits is None:
        names = sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.json")))
        order = list(known)
        names.sort(key=lambda s: (order.index(s) if s in order else len(order), s))
    else:
        names = list(splits)
        for name in names:
            if not (root / name).is_dir():
                raise FormatError(root / name, "no such split directory")
    files = [(name, path) for name in names for path in sorted((root / name).glob("*.json"))]
    if not files:
        raise FormatError(root, "no MemTraceBench graphs found (expected <dir>/<split>/*.json)")
    return files


def load_memtracebench(
    store: Store,
    directory: str | Path,
    splits: Iterable[str] | str | None = None,
    progress: Progress | None = None,
    systems: Mapping[str, str] | None = None,
) -> list[Run]:
    """Import every graph of the chosen splits (all present splits by default) and return the runs.

    `systems` maps a split to the system that recorded it, in the order to load them (callers take
    it from the system registry: `memtrace.systems.registry.memtracebench_splits()`).
    All or nothing: one transaction, so a bad file leaves the workspace as it was.
    `progress(done, total, path)` is called after each file. Re-loading replaces the same runs.
    """
    systems = dict(systems or {})
    files = memtracebench_files(directory, splits, known=systems)
    runs: list[Run] = []
    with store.transaction() as conn:
        for done, (split, path) in enumerate(files, start=1):
            system = systems.get(split, split)
            imported = read_smartcomment(path, system=system, id_hint=path.name, name_prefix=f"{split}/")
            runs.append(write_imported_in(store, conn, imported))
            if progress is not None:
                progress(done, len(files), path)
    return runs
