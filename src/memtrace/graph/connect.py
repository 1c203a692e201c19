"""Opening a workspace's SQLite file: WAL for writers, read-only when the folder or file cannot be written.

A first open races other processes creating the same file, and a shared or archived workspace may be
read-only; both must still open (the first after waiting, the second without writing anything).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

#: How long opening waits for other processes that are creating or migrating the same workspace.
BUSY_TIMEOUT_SECONDS = 60.0


#: Bytes per database page of a workspace this memtrace creates (SQLite's default is 4096).
PAGE_SIZE = 16384


def is_writable(db_path: Path) -> bool:
    """Whether this process may write the database (and its WAL files beside it)."""
    folder_ok = os.access(db_path.parent, os.W_OK | os.X_OK)
    return folder_ok and (not db_path.exists() or os.access(db_path, os.W_OK))


def connect_writable(db_path: Path) -> sqlite3.Connection:
    """A read-write connection in WAL mode with the store's pragmas."""
    conn = sqlite3.connect(
        db_path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_SECONDS
    )
    try:
        # Takes effect only when the file is new: fewer, larger b-tree pages to split and balance make
        # the bulk load of a million versions cheaper (benchmarks/RESULTS.md, issue 21).
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        enable_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        _common_pragmas(conn)
    except BaseException:  # a file that is not a database fails here: do not leave it open
        conn.close()
        raise
    return conn


def connect_read_only(db_path: Path) -> sqlite3.Connection:
    """A connection that never writes: `mode=ro`, or `immutable=1` when the WAL files cannot be made.

    SQLite opens a WAL database read-only only if it can create its -shm file, which a read-only
    folder forbids; nobody can write there either, so reading it as immutable is safe.
    """
    uri = f"file:{quote(str(db_path.resolve()))}"
    for options in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(
            f"{uri}?{options}",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_SECONDS,
        )
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            conn.close()
            continue
        except BaseException:
            conn.close()
            raise
        try:
            _common_pragmas(conn)
        except BaseException:
            conn.close()
            raise
        return conn
    raise sqlite3.OperationalError("unable to open the database read-only")


def _common_pragmas(conn: sqlite3.Connection) -> None:
    # Index pages of a million-version run do not fit SQLite's 2 MB default cache.
    conn.execute("PRAGMA cache_size=-65536")
    conn.execute("PRAGMA foreign_keys=OFF")


def enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, retrying while another connection switches the same new file.

    SQLite reports that collision as "database is locked" at once, without waiting on its busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


@contextmanager
def rollback_journal(conn: sqlite3.Connection) -> Iterator[bool]:
    """For a bulk load by the database's only connection: a rollback journal instead of the WAL.

    Pages past the file's end are not journaled, so a large load writes each page once instead of to
    the WAL and again at its checkpoint (a third of a million-version load). `synchronous=FULL`
    meanwhile makes its commit as durable as a WAL one; WAL comes back at the end. Yields False,
    changing nothing, when another connection has the database open (it must keep reading the WAL).
    Must be entered outside a transaction.
    """
    try:
        switched = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    except sqlite3.OperationalError:  # "database is locked": another connection has it open
        switched = False
    if not switched:
        yield False
        return
    try:
        conn.execute("PRAGMA synchronous=FULL")
        yield True
    finally:
        conn.execute("PRAGMA synchronous=NORMAL")
        enable_wal(conn)
