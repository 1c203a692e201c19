"""A recorded run with the snapshot files its replays start from, as data: what a replay task carries.

A worker rebuilds it in a scratch workspace of its own and replays there, so no filesystem is shared
with the driver; the snapshots stay signed with the user's key and are checked again on load.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..graph import Store
from ..graph.model import Run
from ..graph.rows import RunRows
from ..graph.shipping import run_rows
from .snapshots import snapshot_dir


@dataclass(slots=True)
class ShippedRun:
    """One run's rows and its snapshot folder's files (path relative to the workspace -> bytes)."""

    run: Run
    rows: RunRows
    files: dict[str, bytes] = field(default_factory=dict)
    #: Names this shipment (not the run: the same id may hold other rows elsewhere), so a worker that
    #: gets it with many tasks rebuilds it once.
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def unpack(self, workspace: Path) -> None:
        """Write the run and its snapshots into `workspace` (a fresh scratch one)."""
        store = Store(workspace)
        try:
            store.replace_run(self.run, self.rows)
        finally:
            store.close()
        for relative, data in self.files.items():
            path = workspace / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def ship_run(store: Store, run_id: str) -> ShippedRun:
    """Run `run_id` of `store`'s workspace, with every file of its snapshot folder."""
    run, rows = run_rows(store, run_id)
    workspace = store.path.parent
    folder = snapshot_dir(workspace, run_id)
    files = {
        str(path.relative_to(workspace)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
    return ShippedRun(run, rows, files)
