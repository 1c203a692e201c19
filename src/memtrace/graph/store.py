"""The SQLite store of a workspace: one `memtrace.db` file (WAL) holding every run's graph.

Writes come in batches of plain tuples (the recorder's buffers) inside one transaction; reads
return the dataclasses of `model`. The schema is versioned and migrated forward on open. Each table's
SQL lives in its own module (runs, steps, blobs, cases, annotations, attributions, checkpoints);
`Store` owns the connection and the transactions and delegates to them.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import WorkspaceError
from .annotations import add_annotation_in, delete_annotation_in, insert_annotations_in, load_annotations
from .attributions import (
    AttributionRow,
    AttributionSummary,
    load_attribution,
    load_attribution_summaries,
    load_attributions,
    save_attribution_in,
)
from .blobs import (
    BLOB_COLUMNS,
    has_blob,
    insert_blob_values_in,
    insert_blobs_in,
    load_blob_value,
    load_blob_values,
)
from .cases import CASE_COLUMNS, load_case, load_cases, upsert_cases_in, verdict_counts
from .checkpoints import is_stale, mark_stale, refresh_checkpoints
from .connect import connect_read_only, connect_writable, is_writable, rollback_journal
from .copying import defer_prefix, latest_versions, materialize_prefix, pending_prefix
from .journal import IngestProgress, ingest_journals, warn_unindexed_journals
from .model import Annotation, Case, Edge, Operation, Run, VariableVersion
from .rows import LatestVersion, RunCounts, RunRows
from .runs import delete_run_in, find_run, finish_run_in, insert_run_in, load_runs, run_counts, run_exists
from .schema import check_schema_readable, migrate, schema_version_of
from .steps import (
    EDGE_COLUMNS,
    OP_COLUMNS,
    VAR_COLUMNS,
    insert_step_values_in,
    insert_steps_in,
    load_edges,
    load_ops,
    load_variables,
    max_seq,
)

# The column orders stay importable from here: importers and exporters write rows in them.
__all__ = [
    "BLOB_COLUMNS",
    "CASE_COLUMNS",
    "DB_FILENAME",
    "EDGE_COLUMNS",
    "OP_COLUMNS",
    "VAR_COLUMNS",
    "Store",
    "db_path_for",
]

DB_FILENAME = "memtrace.db"


def db_path_for(workspace: str | Path) -> Path:
    """The database file of a workspace folder (or the file itself when given one)."""
    path = Path(workspace)
    return path if path.suffix == ".db" else path / DB_FILENAME


class Store:
    """A connection to one workspace database, safe to share between threads (writes serialised)."""

    def __init__(
        self,
        workspace: str | Path,
        *,
        create: bool = True,
        ingest: bool = True,
        progress: IngestProgress | None = None,
    ) -> None:
        self.path = db_path_for(workspace)
        if self.path.parent.exists() and not self.path.parent.is_dir():
            raise WorkspaceError(f"{self.path.parent}: is a file, not a workspace folder")
        if not self.path.exists():
            if not create:
                raise WorkspaceError(f"{self.path.parent}: not a memtrace workspace (no {DB_FILENAME})")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise WorkspaceError(
                    f"{self.path.parent}: cannot create workspace ({exc.strerror})"
                ) from None
        self._lock = threading.RLock()
        #: Opened without writing: the folder or database is read-only (journals wait for a writable open).
        self.read_only = self.path.exists() and not is_writable(self.path)
        try:
            self.conn = connect_read_only(self.path) if self.read_only else connect_writable(self.path)
        except sqlite3.DatabaseError as exc:
            raise self._open_error(exc) from None
        try:
            if self.read_only:
                check_schema_readable(self.conn, self.path)
                warn_unindexed_journals(self.path.parent)
                return
            migrate(self.conn, self.path)
            if ingest:
                ingest_journals(self, self.path.parent, progress)
        except BaseException as exc:  # a store that failed to open leaves no connection behind
            self.conn.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise self._open_error(exc) from None
            raise

    def _open_error(self, exc: sqlite3.DatabaseError) -> WorkspaceError:
        if "full" in str(exc):
            return WorkspaceError(f"{self.path}: disk full while opening; free some space")
        return WorkspaceError(f"{self.path}: not a readable memtrace database ({exc})")

    # -- schema ----------------------------------------------------------------------------

    @property
    def schema_version(self) -> int:
        return schema_version_of(self.conn)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: everything inside commits together or not at all."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def bulk_load(self, wanted: bool) -> Iterator[bool]:
        """Around a large load's transaction: this thread's alone, written through a rollback journal
        when no other connection has the database open (connect.py); yields whether it is."""
        with self._lock:
            if not wanted:
                yield False
                return
            with rollback_journal(self.conn) as switched:
                yield switched

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    # -- writes -------------------------------------------------------------------------------

    def write_batch(
        self,
        *,
        ops: Sequence[tuple] = (),
        variables: Sequence[tuple] = (),
        edges: Sequence[tuple] = (),
        blobs: Sequence[tuple] = (),
        cases: Sequence[tuple] = (),
    ) -> None:
        """Append rows (tuples in the *_COLUMNS order) in one transaction."""
        with self.transaction() as conn:
            self.insert_rows_in(conn, ops=ops, variables=variables, edges=edges, blobs=blobs, cases=cases)

    @staticmethod
    def insert_rows_in(
        conn: sqlite3.Connection,
        *,
        ops: Sequence[tuple] = (),
        variables: Sequence[tuple] = (),
        edges: Sequence[tuple] = (),
        blobs: Sequence[tuple] = (),
        cases: Sequence[tuple] = (),
    ) -> None:
        """Insert rows inside a transaction the caller holds (importers write a whole run at once)."""
        if blobs:
            insert_blobs_in(conn, blobs)
        insert_steps_in(conn, ops=ops, variables=variables, edges=edges)
        if cases:
            upsert_cases_in(conn, cases)

    @staticmethod
    def insert_values_in(
        conn: sqlite3.Connection,
        *,
        ops: list[object],
        variables: list[object],
        edges: list[object],
        blobs: list[object],
        cases: Sequence[tuple] = (),
    ) -> None:
        """`insert_rows_in` for rows given flat (a journal's: graph/journal_shape.py), lists consumed."""
        insert_blob_values_in(conn, blobs)
        insert_step_values_in(conn, ops=ops, variables=variables, edges=edges)
        if cases:
            upsert_cases_in(conn, cases)

    def replace_run(self, run: Run, rows: RunRows, *, replace: bool = True) -> None:
        """Write a whole run (an import) in one transaction, replacing a stored run with its id if asked."""
        with self.transaction() as conn:
            self.replace_run_in(conn, run, rows, replace=replace)

    def replace_run_in(
        self, conn: sqlite3.Connection, run: Run, rows: RunRows, *, replace: bool = True
    ) -> None:
        """`replace_run` inside a transaction the caller holds (a folder of files imports all or nothing)."""
        exists = run_exists(conn, run.id)
        if exists and not replace:
            raise WorkspaceError(
                f"{self.path}: run {run.id} ({run.name}) already exists; import with replace"
            )
        if exists:
            self.delete_run_in(conn, run.id)
        self.insert_run_in(conn, run)
        self.insert_rows_in(
            conn, ops=rows.ops, variables=rows.variables, edges=rows.edges, blobs=rows.blobs, cases=rows.cases
        )
        if rows.annotations:
            self.insert_annotations_in(conn, rows.annotations)
        mark_stale(conn, run.id, drop=True)

    def insert_run(self, run: Run) -> None:
        with self.transaction() as conn:
            self.insert_run_in(conn, run)

    @staticmethod
    def insert_run_in(conn: sqlite3.Connection, run: Run) -> None:
        """Insert a run row inside a transaction the caller holds."""
        insert_run_in(conn, run)

    def start_resumed_run(self, run: Run, parent: str, upto_seq: int) -> list[LatestVersion]:
        """Register a replayed run that starts as run `parent` up to `upto_seq`, in one transaction;
        returns every variable's latest version in that prefix (what the replay resumes from)."""
        self.complete(parent)  # the prefix must come from a complete run
        with self.transaction() as conn:
            self.insert_run_in(conn, run)
            defer_prefix(conn, parent, run.id, upto_seq)
            return [
                LatestVersion(name, version, blob, var_id, bool(deleted))
                for name, version, blob, var_id, deleted, *_ in latest_versions(conn, parent, upto_seq)
            ]

    def finish_run(
        self, run_id: str, status: str, error: str | None, finished_at: float, metadata: dict | None
    ) -> None:
        with self.transaction() as conn:
            finish_run_in(conn, run_id, status, error, finished_at, metadata)

    def delete_run(self, run_id: str) -> None:
        """Remove a run and everything recorded for it (blobs stay: other runs may share them)."""
        with self.transaction() as conn:
            self.delete_run_in(conn, run_id)

    @staticmethod
    def delete_run_in(conn: sqlite3.Connection, run_id: str) -> None:
        """Delete a run inside a transaction the caller holds (re-import replaces atomically)."""
        delete_run_in(conn, run_id)

    # -- annotations (annotations.py) -----------------------------------------------------------

    def write_annotations(self, annotations: Sequence[Annotation]) -> None:
        with self.transaction() as conn:
            self.insert_annotations_in(conn, annotations)

    @staticmethod
    def insert_annotations_in(conn: sqlite3.Connection, annotations: Sequence[Annotation]) -> None:
        """Insert annotations inside a transaction the caller holds."""
        insert_annotations_in(conn, annotations)

    def add_annotation(self, annotation: Annotation) -> Annotation:
        """Record one label (a person's, from the web UI); returns it with its id."""
        with self.transaction() as conn:
            return add_annotation_in(conn, annotation)

    def delete_annotation(self, annotation_id: int) -> bool:
        """Remove one label by id; False when there was none."""
        with self.transaction() as conn:
            return delete_annotation_in(conn, annotation_id)

    def annotations(self, run_id: str | None = None, case_id: str | None = None) -> list[Annotation]:
        """Labels in the order they were recorded: all, one run's, or one case's."""
        return load_annotations(self.conn, run_id, case_id)

    # -- attributions (attributions.py) ---------------------------------------------------------

    def save_attribution(self, row: AttributionRow) -> None:
        """Store (or replace) an attribution under (run, case, method, settings key)."""
        with self.transaction() as conn:
            save_attribution_in(conn, row)

    def attribution(self, run_id: str, case_id: str, method: str, settings_key: str) -> AttributionRow | None:
        return load_attribution(self.conn, run_id, case_id, method, settings_key)

    def attributions(self, run_id: str | None = None, method: str | None = None) -> list[AttributionRow]:
        """Stored attributions in the order first stored, optionally of one run and/or one method."""
        return load_attributions(self.conn, run_id, method)

    def attribution_summaries(self, run_id: str | None = None) -> list[AttributionSummary]:
        """Every stored attribution's verdict without its path: cheap for listing all runs."""
        return load_attribution_summaries(self.conn, run_id)

    # -- reads --------------------------------------------------------------------------------

    def runs(self) -> list[Run]:
        return load_runs(self.conn)

    def run(self, ref: str) -> Run:
        """A run by id, or by its name when no other run has it, or by a unique id prefix, or by the
        name after its split (graph/runs.py `find_run`).

        The one place run references are resolved: a reference several runs match raises
        AmbiguousRunError listing them instead of silently picking one.
        """
        run = find_run(self.conn, self.path, ref)
        self.complete(run.id)
        return run

    def has_run(self, run_id: str) -> bool:
        """Whether a run with exactly this id is stored (no lookup by name or prefix)."""
        return run_exists(self.conn, run_id)

    def complete(self, run_id: str) -> None:
        """Copy a replayed run's deferred prefix (and its source's, first) before anyone reads it."""
        source = pending_prefix(self.conn, run_id)
        if source is None:
            return
        self.complete(source[0])
        with self.transaction() as conn:
            materialize_prefix(conn, run_id)  # a no-op if another thread got there first

    def fresh_checkpoints(self, run_id: str) -> None:
        """Build a run's memory-state checkpoints if versions came since (checkpoints.py); before a
        memory-state query. A read-only store answers without the missing ones, only slower."""
        self.complete(run_id)
        if not self.read_only and is_stale(self.conn, run_id):
            with self.transaction() as conn:
                refresh_checkpoints(conn, run_id)

    def ops(self, run_id: str, where: str = "", params: Iterable[Any] = ()) -> list[Operation]:
        self.complete(run_id)
        return load_ops(self.conn, run_id, where, params)

    def variables(self, run_id: str, where: str = "", params: Iterable[Any] = ()) -> list[VariableVersion]:
        self.complete(run_id)
        return load_variables(self.conn, run_id, where, params)

    def edges(self, run_id: str, where: str = "", params: Iterable[Any] = ()) -> list[Edge]:
        self.complete(run_id)
        return load_edges(self.conn, run_id, where, params)

    def cases(self, run_id: str | None = None) -> list[Case]:
        return load_cases(self.conn, run_id)

    def case(self, run_id: str, case_id: str) -> Case:
        """One case of a run; a missing one is a NotFoundError naming it and the workspace."""
        return load_case(self.conn, self.path, run_id, case_id)

    def blob_value(self, blob_hash: str | None) -> Any:
        """The decoded value stored under a content hash (None for a value-less version)."""
        return load_blob_value(self.conn, self.path, blob_hash)

    def has_blob(self, blob_hash: str) -> bool:
        return has_blob(self.conn, blob_hash)

    def blob_values(self, hashes: Iterable[str]) -> dict[str, Any]:
        """Decoded values of many blobs in few round trips."""
        return load_blob_values(self.conn, hashes)

    def run_counts(self) -> dict[str, RunCounts]:
        """Per-run sizes for listings (runs with nothing recorded are absent), in four queries."""
        return run_counts(self.conn)

    def verdict_counts(self) -> dict[str, dict[str | None, int]]:
        """Per run, how many cases have each verdict (None: not judged), without reading the cases."""
        return verdict_counts(self.conn)

    def max_seq(self, run_id: str) -> int:
        """The last seq given in a run (0 for an empty run): the end of its time axis."""
        self.complete(run_id)
        return max_seq(self.conn, run_id)

    def count(self, table: str, run_id: str) -> int:
        self.complete(run_id)
        return self.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE run=?", (run_id,)).fetchone()[0]
