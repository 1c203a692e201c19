"""The workspace database's schema: every table's DDL, versioned, migrated forward when a store opens.

One place for the tables (runs, ops, vars, edges, blobs, cases, attributions, annotations, journal
state, memory checkpoints, pending prefixes, verification claims); the store (store.py and the table
modules beside it) is the only code that reads or writes them.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from ..errors import WorkspaceError

_log = logging.getLogger("memtrace")

SCHEMA_VERSION = 8

_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, system TEXT, dataset TEXT, conversation TEXT,
        parent_run TEXT, status TEXT NOT NULL, error TEXT, config TEXT, metadata TEXT,
        created_at REAL NOT NULL, finished_at REAL
    );
    CREATE INDEX runs_name ON runs(name);
    CREATE TABLE ops (
        run TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, parent_op TEXT,
        name TEXT NOT NULL, category TEXT NOT NULL, started_at REAL, ended_at REAL,
        status TEXT NOT NULL DEFAULT 'ok', metadata TEXT,
        PRIMARY KEY (run, id)
    ) WITHOUT ROWID;
    CREATE INDEX ops_seq ON ops(run, seq);
    CREATE TABLE vars (
        run TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
        seq INTEGER NOT NULL, category TEXT NOT NULL, blob TEXT, deleted INTEGER NOT NULL DEFAULT 0,
        created_at REAL, metadata TEXT,
        PRIMARY KEY (run, id)
    ) WITHOUT ROWID;
    CREATE INDEX vars_name ON vars(run, name, version);
    CREATE INDEX vars_memory ON vars(run, seq) WHERE category = 'memory_entry';
    CREATE TABLE edges (
        run TEXT NOT NULL, op TEXT NOT NULL, var TEXT NOT NULL, role TEXT NOT NULL,
        source TEXT, metadata TEXT
    );
    CREATE INDEX edges_op ON edges(run, op);
    CREATE INDEX edges_var ON edges(run, var);
    CREATE TABLE blobs (hash TEXT PRIMARY KEY, encoding TEXT NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE cases (
        run TEXT NOT NULL, id TEXT NOT NULL, question TEXT NOT NULL, gold TEXT, prediction TEXT,
        prediction_var TEXT, verdict TEXT, score REAL, evidence TEXT, category TEXT, metadata TEXT,
        PRIMARY KEY (run, id)
    );
    CREATE TABLE attributions (
        id INTEGER PRIMARY KEY, run TEXT NOT NULL, case_id TEXT NOT NULL, method TEXT NOT NULL,
        settings_key TEXT NOT NULL DEFAULT '', op TEXT, error_type TEXT NOT NULL,
        confidence REAL, verified TEXT, replay_run TEXT, explanation TEXT, path TEXT, cost TEXT,
        created_at REAL,
        UNIQUE (run, case_id, method, settings_key)
    );
    CREATE TABLE annotations (
        id INTEGER PRIMARY KEY, run TEXT NOT NULL, case_id TEXT NOT NULL, error_type TEXT,
        op TEXT, note TEXT, author TEXT, created_at REAL
    );
    """,
    # 2: recording journals, memory-state checkpoints, nested-operation lookups, edge indexes
    # that include the role (a prompt read by 100k operations made every producer lookup scan
    # them all), and blobs moved to a rowid table (large payloads inline in a WITHOUT ROWID
    # b-tree made inserts 60% slower).
    2: """
    CREATE TABLE journal_state (run TEXT PRIMARY KEY, offset INTEGER NOT NULL);
    CREATE TABLE memory_checkpoints (
        run TEXT NOT NULL, seq INTEGER NOT NULL, state BLOB NOT NULL, PRIMARY KEY (run, seq)
    );
    CREATE INDEX ops_parent ON ops(run, parent_op) WHERE parent_op IS NOT NULL;
    DROP INDEX edges_op;
    DROP INDEX edges_var;
    CREATE INDEX edges_op ON edges(run, op, role);
    CREATE INDEX edges_var ON edges(run, var, role);
    CREATE TABLE blobs_v2 (hash TEXT PRIMARY KEY, encoding TEXT NOT NULL, data BLOB NOT NULL);
    INSERT INTO blobs_v2(hash, encoding, data) SELECT hash, encoding, data FROM blobs;
    DROP TABLE blobs;
    ALTER TABLE blobs_v2 RENAME TO blobs;
    """,
    # 3: an attribution that replay revised keeps the claim it replaced (JSON).
    3: """
    ALTER TABLE attributions ADD COLUMN revised_from TEXT;
    """,
    # 4: a replayed run's prefix is copied from its parent when first read (copying.py).
    4: """
    CREATE TABLE IF NOT EXISTS pending_prefixes (
        run TEXT PRIMARY KEY, source TEXT NOT NULL, upto_seq INTEGER NOT NULL
    );
    """,
    # 5: verification's two levels per attribution (flow-confirmed: the repair delivers the evidence
    # into the answer's context; answer-confirmed: the real answer flips) and how it got there (JSON).
    # Earlier verdicts mixed the levels and moved refuted claims to the answer step, against the
    # decisive criterion: those revised attributions are dropped (attributing again recomputes them)
    # and every other verdict is cleared, so that `memtrace verify` replays them again.
    5: """
    ALTER TABLE attributions ADD COLUMN flow_confirmed INTEGER;
    ALTER TABLE attributions ADD COLUMN answer_confirmed INTEGER;
    ALTER TABLE attributions ADD COLUMN verification TEXT;
    DELETE FROM attributions WHERE revised_from IS NOT NULL;
    UPDATE attributions SET verified = NULL, replay_run = NULL;
    """,
    # 6: human labels are read per case (the web UI's case page), in the order recorded.
    6: """
    CREATE INDEX IF NOT EXISTS annotations_case ON annotations(run, case_id, id);
    """,
    # 7: one verifier per claim (claims.py): the process verifying an attribution holds its row, and
    # when it finished, so concurrent `memtrace verify` processes never replay a claim twice.
    7: """
    CREATE TABLE IF NOT EXISTS verify_claims (
        run TEXT NOT NULL, case_id TEXT NOT NULL, method TEXT NOT NULL, settings_key TEXT NOT NULL,
        holder TEXT NOT NULL, claimed_at REAL NOT NULL, finished_at REAL,
        PRIMARY KEY (run, case_id, method, settings_key)
    ) WITHOUT ROWID;
    """,
    # 8: memory-state checkpoints are built by the first memory-state query after new versions, not
    # by the open that indexes them (checkpoints.py); a run listed here has versions they miss.
    # Workspaces of earlier versions have every checkpoint built already, so the table starts empty.
    8: """
    CREATE TABLE IF NOT EXISTS stale_checkpoints (run TEXT PRIMARY KEY);
    """,
}


def schema_version_of(conn: sqlite3.Connection) -> int:
    """The schema version a database is at (0 for a new file)."""
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 0


def check_schema_readable(conn: sqlite3.Connection, path: Path) -> None:
    """A read-only workspace cannot be migrated: it must already have this memtrace's schema."""
    current = schema_version_of(conn)
    if current != SCHEMA_VERSION:
        raise WorkspaceError(
            f"{path}: read-only workspace with schema version {current}; this memtrace reads"
            f" {SCHEMA_VERSION}, so make it writable once to migrate it"
        )


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring a writable database to SCHEMA_VERSION, one transaction per version."""
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    current = schema_version_of(conn)
    if current > SCHEMA_VERSION:
        raise WorkspaceError(
            f"{path}: schema version {current} is newer than this memtrace "
            f"({SCHEMA_VERSION}); upgrade memtrace to read it"
        )
    for version in range(current + 1, SCHEMA_VERSION + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while this one waited for the write lock.
            if schema_version_of(conn) < version:
                for statement in _MIGRATIONS[version].split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version),)
                )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    if 0 < current < SCHEMA_VERSION:
        _log.info(
            "memtrace: %s: workspace schema migrated from version %d to %d (an older memtrace can no"
            " longer open it)",
            path,
            current,
            SCHEMA_VERSION,
        )
