"""What integer run and node keys would save when a journal is indexed, against today's text keys.

Records tracing_overhead.py's pipeline step `--ops` times with memtrace, reads back the rows its
open indexed (ops, variables, edges, blobs), then loads the same rows into two fresh databases, each
in one transaction with the secondary indexes built after the load (as journal_bulk.py does) and
memtrace's multi-row inserts: today's tables (text run id and text op/var ids in every row and index
entry), and tables keyed by integers (a run number, an operation or version by its seq, the edge's
role as 0/1, no separate edge table rowid index). CPU microseconds per operation, median of `--repeat`.

    .venv/bin/python benchmarks/integer_keys.py [--ops 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import memtrace
from memtrace.graph.inserts import insert_rows

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tracing_overhead
from _common import code_version

TODAY = """
CREATE TABLE ops (run TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, parent_op TEXT,
    name TEXT NOT NULL, category TEXT NOT NULL, started_at REAL, ended_at REAL,
    status TEXT NOT NULL DEFAULT 'ok', metadata TEXT, PRIMARY KEY (run, id)) WITHOUT ROWID;
CREATE TABLE vars (run TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
    seq INTEGER NOT NULL, category TEXT NOT NULL, blob TEXT, deleted INTEGER NOT NULL DEFAULT 0,
    created_at REAL, metadata TEXT, PRIMARY KEY (run, id)) WITHOUT ROWID;
CREATE TABLE edges (run TEXT NOT NULL, op TEXT NOT NULL, var TEXT NOT NULL, role TEXT NOT NULL,
    source TEXT, metadata TEXT);
CREATE TABLE blobs (hash TEXT PRIMARY KEY, encoding TEXT NOT NULL, data BLOB NOT NULL)
"""
TODAY_INDEXES = """
CREATE INDEX ops_seq ON ops(run, seq);
CREATE INDEX ops_parent ON ops(run, parent_op) WHERE parent_op IS NOT NULL;
CREATE INDEX vars_name ON vars(run, name, version);
CREATE INDEX vars_memory ON vars(run, seq) WHERE category = 'memory_entry';
CREATE INDEX edges_op ON edges(run, op, role);
CREATE INDEX edges_var ON edges(run, var, role)
"""
INTEGER = """
CREATE TABLE ops (run INTEGER NOT NULL, seq INTEGER NOT NULL, parent_seq INTEGER, name TEXT NOT NULL,
    category TEXT NOT NULL, started_at REAL, ended_at REAL, status TEXT NOT NULL DEFAULT 'ok',
    metadata TEXT, PRIMARY KEY (run, seq)) WITHOUT ROWID;
CREATE TABLE vars (run INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL,
    version INTEGER NOT NULL, category TEXT NOT NULL, blob TEXT, deleted INTEGER NOT NULL DEFAULT 0,
    created_at REAL, metadata TEXT, PRIMARY KEY (run, seq)) WITHOUT ROWID;
CREATE TABLE edges (run INTEGER NOT NULL, op INTEGER NOT NULL, var INTEGER NOT NULL,
    role INTEGER NOT NULL);
CREATE TABLE blobs (hash TEXT PRIMARY KEY, encoding TEXT NOT NULL, data BLOB NOT NULL)
"""
INTEGER_INDEXES = """
CREATE INDEX ops_parent ON ops(run, parent_seq) WHERE parent_seq IS NOT NULL;
CREATE INDEX vars_name ON vars(run, name, version);
CREATE INDEX vars_memory ON vars(run, seq) WHERE category = 'memory_entry';
CREATE INDEX edges_op ON edges(run, op, role);
CREATE INDEX edges_var ON edges(run, var, role)
"""

Rows = dict[str, list[tuple]]


def recorded_rows(ops: int) -> Rows:
    """The rows memtrace indexes for `ops` recorded pipeline steps, read back from its store."""
    workspace = Path(tempfile.mkdtemp(prefix="memtrace-keys-"))
    try:
        messages = tracing_overhead.make_messages(ops, 7)
        with memtrace.run(workspace, name="keys", system="bench") as run:
            tracing_overhead._memtrace_loop(messages)
        with memtrace.open(workspace):  # indexes the journal
            pass
        conn = sqlite3.connect(workspace / "memtrace.db")
        columns = {
            "ops": "run, id, seq, parent_op, name, category, started_at, ended_at, status, metadata",
            "vars": "run, id, name, version, seq, category, blob, deleted, created_at, metadata",
            "edges": "run, op, var, role, source, metadata",
        }
        rows = {
            t: conn.execute(f"SELECT {c} FROM {t} WHERE run=?", (run.id,)).fetchall()
            for t, c in columns.items()
        }
        rows["blobs"] = conn.execute("SELECT hash, encoding, data FROM blobs").fetchall()
        conn.close()
        return rows
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def as_integer_keys(rows: Rows) -> Rows:
    """The same rows keyed by integers: run 1, an operation and a version by their seq."""
    op_seq = {r[1]: r[2] for r in rows["ops"]}
    var_seq = {r[1]: r[4] for r in rows["vars"]}
    return {
        "ops": [(1, r[2], op_seq.get(r[3]), r[4], r[5], r[6], r[7], r[8], r[9]) for r in rows["ops"]],
        "vars": [(1, r[4], r[2], r[3], r[5], r[6], r[7], r[8], r[9]) for r in rows["vars"]],
        "edges": [(1, op_seq[r[1]], var_seq[r[2]], 0 if r[3] == "in" else 1) for r in rows["edges"]],
        "blobs": rows["blobs"],
    }


def load(tables: str, indexes: str, rows: Rows) -> float:
    """CPU seconds to load `rows` into fresh `tables` in one transaction, then build `indexes`."""
    folder = Path(tempfile.mkdtemp(prefix="memtrace-keys-db-"))
    try:
        conn = sqlite3.connect(folder / "x.db", isolation_level=None)
        conn.execute("PRAGMA page_size=16384")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("PRAGMA synchronous=NORMAL")
        for statement in tables.split(";"):
            conn.execute(statement)
        started = time.process_time()
        conn.execute("BEGIN")
        for table, batch in rows.items():
            verb = "IGNORE" if table == "blobs" else "REPLACE"
            insert_rows(conn, f"INSERT OR {verb} INTO {table}", len(batch[0]), batch, range(len(batch[0])))
        for statement in indexes.split(";"):
            conn.execute(statement)
        conn.execute("COMMIT")
        spent = time.process_time() - started
        conn.close()
        return spent
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000, help="pipeline steps recorded (default 10000)")
    parser.add_argument("--repeat", type=int, default=5, help="loads per schema; the median (default 5)")
    args = parser.parse_args(argv)
    today = recorded_rows(args.ops)
    integer = as_integer_keys(today)
    counts = ", ".join(f"{len(v):,} {k}" for k, v in today.items())
    times: dict[str, list[float]] = {"today": [], "integer": []}
    for _ in range(args.repeat):  # alternated, so a drift of the machine's speed hits both
        times["today"].append(load(TODAY, TODAY_INDEXES, today))
        times["integer"].append(load(INTEGER, INTEGER_INDEXES, integer))
    per_op = {k: statistics.median(v) / args.ops * 1e6 for k, v in times.items()}
    print(f"indexing the rows of {args.ops:,} recorded steps ({counts}; {code_version()}), CPU us/op,")
    print(f"median of {args.repeat}, one transaction, indexes built after the load:")
    print(f"  today's schema (text run and node ids)   {per_op['today']:7.2f}")
    print(f"  integer run and node keys                {per_op['integer']:7.2f}")
    print(f"  integer / today: {per_op['integer'] / per_op['today']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
