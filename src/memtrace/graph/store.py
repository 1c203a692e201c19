"""The SQLite store of a workspace: one `memtrace.db` file (WAL) holding every run's graph.

Writes come in batches of plain tuples (the recorder's buffers) inside one transaction; reads
return the dataclasses of `model`. The schema is versioned and migrated forward on open.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import AmbiguousRunError, NotFoundError, WorkspaceError
from .annotations import add_annotation_in, delete_annotation_in, insert_annotations_in, load_annotations
from .attributions import (
    AttributionRow,
    AttributionSummary,
    load_attribution,
    load_attribution_summaries,
    load_attributions,
    save_attribution_in,
)
from .checkpoints import rebuild_checkpoints
from .connect import connect_read_only, connect_writable, is_writable
from .copying import defer_prefix, latest_versions, materialize_prefix, pending_prefix
from .journal import IngestProgress, ingest_journals, warn_unindexed_journals
from .model import MEMORY_ENTRY, Annotation, Case, Edge, Operation, Run, VariableVersion
from .rows import (
    LatestVersion,
    RunCounts,
    RunRows,
    case_from_row,
    dumps_or_none,
    edge_from_row,
    op_from_row,
    run_from_row,
    var_from_row,
)
from .schema import check_schema_readable, migrate, schema_version_of
from .values import decode_value

DB_FILENAME = "memtrace.db"

# Column orders of the tuples that writers pass in (the recorder builds these directly).
OP_COLUMNS = "run, id, seq, parent_op, name, category, started_at, ended_at, status, metadata"
VAR_COLUMNS = "run, id, name, version, seq, category, blob, deleted, created_at, metadata"
EDGE_COLUMNS = "run, op, var, role, source, metadata"
BLOB_COLUMNS = "hash, encoding, data"
CASE_COLUMNS = (
    "run, id, question, gold, prediction, prediction_var, verdict, score, evidence, category, metadata"
)


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
            if self.read_only:
                self.conn = connect_read_only(self.path)
                check_schema_readable(self.conn, self.path)
                warn_unindexed_journals(self.path.parent)
                return
            self.conn = connect_writable(self.path)
            migrate(self.conn, self.path)
            if ingest:
                ingest_journals(self, self.path.parent, progress)
        except sqlite3.DatabaseError as exc:
            if "full" in str(exc):
                raise WorkspaceError(f"{self.path}: disk full while opening; free some space") from None
            raise WorkspaceError(f"{self.path}: not a readable memtrace database ({exc})") from None

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
            conn.executemany(f"INSERT OR IGNORE INTO blobs({BLOB_COLUMNS}) VALUES (?,?,?)", blobs)
        if ops:
            conn.executemany(f"INSERT OR REPLACE INTO ops({OP_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", ops)
        if variables:
            conn.executemany(
                f"INSERT OR REPLACE INTO vars({VAR_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                variables,
            )
        if edges:
            conn.executemany(f"INSERT INTO edges({EDGE_COLUMNS}) VALUES (?,?,?,?,?,?)", edges)
        if cases:
            # An upsert keeps the row (and so the order cases were asked in) when a case is updated.
            conn.executemany(
                f"INSERT INTO cases({CASE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT(run, id) DO UPDATE SET question=excluded.question, gold=excluded.gold,"
                " prediction=excluded.prediction, prediction_var=excluded.prediction_var,"
                " verdict=excluded.verdict, score=excluded.score, evidence=excluded.evidence,"
                " category=excluded.category, metadata=excluded.metadata",
                cases,
            )

    def replace_run(self, run: Run, rows: RunRows, *, replace: bool = True) -> None:
        """Write a whole run (an import) in one transaction, replacing a stored run with its id if asked."""
        with self.transaction() as conn:
            self.replace_run_in(conn, run, rows, replace=replace)

    def replace_run_in(
        self, conn: sqlite3.Connection, run: Run, rows: RunRows, *, replace: bool = True
    ) -> None:
        """`replace_run` inside a transaction the caller holds (a folder of files imports all or nothing)."""
        exists = conn.execute("SELECT 1 FROM runs WHERE id=?", (run.id,)).fetchone() is not None
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
        rebuild_checkpoints(conn, run.id)

    def insert_run(self, run: Run) -> None:
        with self.transaction() as conn:
            self.insert_run_in(conn, run)

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

    @staticmethod
    def insert_run_in(conn: sqlite3.Connection, run: Run) -> None:
        """Insert a run row inside a transaction the caller holds."""
        conn.execute(
            "INSERT INTO runs(id, name, system, dataset, conversation, parent_run, status, error,"
            " config, metadata, created_at, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                run.id,
                run.name,
                run.system,
                run.dataset,
                run.conversation,
                run.parent_run,
                run.status,
                run.error,
                dumps_or_none(run.config),
                dumps_or_none(run.metadata),
                run.created_at,
                run.finished_at,
            ),
        )

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
            conn.execute(
                "UPDATE runs SET status=?, error=?, finished_at=?, metadata=COALESCE(?, metadata) WHERE id=?",
                (status, error, finished_at, dumps_or_none(metadata), run_id),
            )

    def delete_run(self, run_id: str) -> None:
        """Remove a run and everything recorded for it (blobs stay: other runs may share them)."""
        with self.transaction() as conn:
            self.delete_run_in(conn, run_id)

    @staticmethod
    def delete_run_in(conn: sqlite3.Connection, run_id: str) -> None:
        """Delete a run inside a transaction the caller holds (re-import replaces atomically).

        Replays still waiting for their prefix from this run get it copied first: they outlive it.
        """
        waiting = conn.execute("SELECT run FROM pending_prefixes WHERE source=?", (run_id,)).fetchall()
        for (replayed,) in waiting:
            materialize_prefix(conn, replayed)
        for table in (
            "ops",
            "vars",
            "edges",
            "cases",
            "attributions",
            "annotations",
            "memory_checkpoints",
            "journal_state",
            "pending_prefixes",
        ):
            conn.execute(f"DELETE FROM {table} WHERE run=?", (run_id,))
        conn.execute("DELETE FROM runs WHERE id=?", (run_id,))

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
        rows = self.conn.execute(
            "SELECT id, name, system, dataset, conversation, parent_run, status, error, config,"
            " metadata, created_at, finished_at FROM runs ORDER BY created_at, id"
        ).fetchall()
        return [run_from_row(row) for row in rows]

    def run(self, ref: str) -> Run:
        """A run by id, or by its name when no other run has it, or by a unique id prefix.

        The one place run references are resolved: a name shared by several runs raises
        AmbiguousRunError listing them instead of silently picking one.
        """
        cols = (
            "id, name, system, dataset, conversation, parent_run, status, error, config, metadata,"
            " created_at, finished_at"
        )
        row = self.conn.execute(f"SELECT {cols} FROM runs WHERE id=?", (ref,)).fetchone()
        if row is None:
            named = self.conn.execute(
                f"SELECT {cols} FROM runs WHERE name=? ORDER BY created_at, id", (ref,)
            ).fetchall()
            if len(named) > 1:
                raise AmbiguousRunError(self.path, ref, [_run_label(r) for r in named])
            row = named[0] if named else None
        if row is None:
            rows = self.conn.execute(
                f"SELECT {cols} FROM runs WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
                (ref.replace("%", r"\%").replace("_", r"\_") + "%",),
            ).fetchall()
            row = rows[0] if len(rows) == 1 else None
        if row is None:
            raise NotFoundError(f"{self.path}: no run {ref!r}")
        self.complete(row[0])
        return run_from_row(row)

    def complete(self, run_id: str) -> None:
        """Copy a replayed run's deferred prefix (and its source's, first) before anyone reads it."""
        source = pending_prefix(self.conn, run_id)
        if source is None:
            return
        self.complete(source[0])
        with self.transaction() as conn:
            materialize_prefix(conn, run_id)  # a no-op if another thread got there first

    def ops(self, run_id: str, where: str = "", params: Iterable[Any] = ()) -> list[Operation]:
        self.complete(run_id)
        rows = self.conn.execute(
            f"SELECT {OP_COLUMNS} FROM ops WHERE run=? {where} ORDER BY seq", (run_id, *params)
        ).fetchall()
        return [op_from_row(row) for row in rows]

    def variables(self, run_id: str, where: str = "", params: Iterable[Any] = ()) -> list[VariableVersion]:
        self.complete(run_id)
        rows = self.conn.execute(
            f"SELECT {VAR_COLUMNS} FROM vars WHERE run=? {where} ORDER BY seq", (run_id, *params)
        ).fetchall()
        return [var_from_row(row) for row in rows]

    def edges(self, run_id: str, where: str = "", params: Iterable[Any] = ()) -> list[Edge]:
        self.complete(run_id)
        rows = self.conn.execute(
            f"SELECT {EDGE_COLUMNS} FROM edges WHERE run=? {where} ORDER BY rowid", (run_id, *params)
        ).fetchall()
        return [edge_from_row(row) for row in rows]

    def cases(self, run_id: str | None = None) -> list[Case]:
        if run_id is None:
            rows = self.conn.execute(f"SELECT {CASE_COLUMNS} FROM cases ORDER BY run, rowid").fetchall()
        else:
            rows = self.conn.execute(
                f"SELECT {CASE_COLUMNS} FROM cases WHERE run=? ORDER BY rowid", (run_id,)
            ).fetchall()
        return [case_from_row(row) for row in rows]

    def case(self, run_id: str, case_id: str) -> Case:
        """One case of a run; a missing one is a NotFoundError naming it and the workspace."""
        row = self.conn.execute(
            f"SELECT {CASE_COLUMNS} FROM cases WHERE run=? AND id=?", (run_id, case_id)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"{self.path}: run {run_id} has no case {case_id!r}")
        return case_from_row(row)

    def blob_value(self, blob_hash: str | None) -> Any:
        """The decoded value stored under a content hash (None for a value-less version)."""
        if blob_hash is None:
            return None
        row = self.conn.execute("SELECT encoding, data FROM blobs WHERE hash=?", (blob_hash,)).fetchone()
        if row is None:
            raise NotFoundError(f"{self.path}: blob {blob_hash} is missing")
        return decode_value(row[0], row[1])

    def has_blob(self, blob_hash: str) -> bool:
        return self.conn.execute("SELECT 1 FROM blobs WHERE hash=?", (blob_hash,)).fetchone() is not None

    def blob_values(self, hashes: Iterable[str]) -> dict[str, Any]:
        """Decoded values of many blobs in few round trips."""
        wanted = list({h for h in hashes if h})
        out: dict[str, Any] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for h, encoding, data in self.conn.execute(
                f"SELECT hash, encoding, data FROM blobs WHERE hash IN ({marks})", chunk
            ):
                out[h] = decode_value(encoding, data)
        return out

    def run_counts(self) -> dict[str, RunCounts]:
        """Per-run sizes for listings (runs with nothing recorded are absent), in four queries."""
        counts: dict[str, RunCounts] = {}

        def of(run_id: str) -> RunCounts:
            return counts.setdefault(run_id, RunCounts())

        for run_id, n in self.conn.execute("SELECT run, COUNT(*) FROM ops GROUP BY run"):
            of(run_id).ops = n
        for run_id, n in self.conn.execute("SELECT run, COUNT(*) FROM vars GROUP BY run"):
            of(run_id).versions = n
        for run_id, n in self.conn.execute(
            "SELECT run, COUNT(DISTINCT name) FROM vars WHERE category=? GROUP BY run", (MEMORY_ENTRY,)
        ):
            of(run_id).units = n
        for run_id, n, failed in self.conn.execute(
            "SELECT run, COUNT(*), SUM(verdict='wrong') FROM cases GROUP BY run"
        ):
            of(run_id).cases, of(run_id).failed = n, failed or 0
        return counts

    def verdict_counts(self) -> dict[str, dict[str | None, int]]:
        """Per run, how many cases have each verdict (None: not judged), without reading the cases."""
        counts: dict[str, dict[str | None, int]] = {}
        for run_id, verdict, n in self.conn.execute(
            "SELECT run, verdict, COUNT(*) FROM cases GROUP BY run, verdict"
        ):
            counts.setdefault(run_id, {})[verdict] = n
        return counts

    def max_seq(self, run_id: str) -> int:
        """The last seq given in a run (0 for an empty run): the end of its time axis."""
        self.complete(run_id)
        row = self.conn.execute(
            "SELECT MAX(m) FROM (SELECT MAX(seq) AS m FROM ops WHERE run=?"
            " UNION ALL SELECT MAX(seq) FROM vars WHERE run=?)",
            (run_id, run_id),
        ).fetchone()
        return int(row[0] or 0)

    def count(self, table: str, run_id: str) -> int:
        self.complete(run_id)
        return self.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE run=?", (run_id,)).fetchone()[0]


def _run_label(row: Sequence[Any]) -> str:
    """A candidate run for an ambiguity message: id, then what tells it apart (system, source file)."""
    run = run_from_row(row)
    source = run.metadata.get("source") if isinstance(run.metadata.get("source"), dict) else {}
    details = [d for d in (run.system and f"system {run.system}", source.get("file")) if d]
    return run.id + (f" ({', '.join(details)})" if details else "")
