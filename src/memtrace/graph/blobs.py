"""The blobs table: every recorded value once, under its content hash, shared by all runs."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import NotFoundError
from .inserts import insert_rows, insert_values
from .values import decode_value

#: Column order of the blob tuples writers pass in.
BLOB_COLUMNS = "hash, encoding, data"

_INSERT = f"INSERT OR IGNORE INTO blobs({BLOB_COLUMNS})"

#: Hashes asked for per query when many blobs are read at once (SQLite's variable limit is larger).
_CHUNK = 500


def insert_blobs_in(conn: sqlite3.Connection, blobs: Sequence[tuple]) -> None:
    """Insert blob tuples inside the caller's transaction; a hash already stored is kept as it is."""
    insert_rows(conn, _INSERT, 3, blobs)


def insert_blob_values_in(conn: sqlite3.Connection, values: list[object]) -> None:
    """`insert_blobs_in` for blobs given flat (hash, encoding, data, hash, ...); the list is consumed."""
    insert_values(conn, _INSERT, 3, values)


def load_blob_value(conn: sqlite3.Connection, db_path: Path, blob_hash: str | None) -> Any:
    """The decoded value stored under a content hash (None for a value-less version)."""
    if blob_hash is None:
        return None
    row = conn.execute("SELECT encoding, data FROM blobs WHERE hash=?", (blob_hash,)).fetchone()
    if row is None:
        raise NotFoundError(f"{db_path}: blob {blob_hash} is missing")
    return decode_value(row[0], row[1])


def has_blob(conn: sqlite3.Connection, blob_hash: str) -> bool:
    return conn.execute("SELECT 1 FROM blobs WHERE hash=?", (blob_hash,)).fetchone() is not None


def load_blob_values(conn: sqlite3.Connection, hashes: Iterable[str]) -> dict[str, Any]:
    """Decoded values of many blobs in few round trips."""
    wanted = list({h for h in hashes if h})
    out: dict[str, Any] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for h, encoding, data in conn.execute(
            f"SELECT hash, encoding, data FROM blobs WHERE hash IN ({marks})", chunk
        ):
            out[h] = decode_value(encoding, data)
    return out
