"""Helpers shared by the importers and exporters: opening files, time stamps, stable ids, quoting.

Kept here so that every format reports a broken file the same way (one `FormatError` line) and
spells times and ids identically.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import reprlib
import sqlite3
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from ..errors import FormatError
from ..graph.store import Store

#: smartcomment's time stamp format (local time, millisecond resolution when it writes one).
SC_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def open_text(path: str | Path, mode: str = "r") -> IO[str]:
    """Open a text file, transparently gzip-compressed when its name ends in `.gz`."""
    path = Path(path)
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8", newline="\n")
    return path.open(mode, encoding="utf-8", newline="\n")


#: Why a JSON document whose nesting exceeds Python's recursion limit is refused.
NESTED_TOO_DEEPLY = "nested too deeply to read (more levels than Python's recursion limit)"


def load_json_file(path: str | Path) -> Any:
    """Parse a whole JSON file; any failure becomes one FormatError naming the file."""
    path = Path(path)
    try:
        with open_text(path) as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise FormatError(path, "no such file") from None
    except IsADirectoryError:
        raise FormatError(path, "is a directory, not a JSON file") from None
    except json.JSONDecodeError as exc:
        raise FormatError(
            path, f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except UnicodeDecodeError as exc:
        raise FormatError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise FormatError(path, NESTED_TOO_DEEPLY) from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise FormatError(path, f"truncated or corrupt gzip data ({exc})") from None


_time_cache: dict[str, float] = {}


def parse_sc_time(text: str) -> float:
    """Seconds since the epoch of a smartcomment time stamp (raises ValueError when malformed)."""
    cached = _time_cache.get(text)
    if cached is None:
        cached = datetime.strptime(text, SC_TIME_FORMAT).timestamp()
        if len(_time_cache) < 1_000_000:
            _time_cache[text] = cached
    return cached


def format_sc_time(seconds: float | None) -> str:
    """A wall time as smartcomment writes it: local `YYYY-MM-DD HH:MM:SS.fff`."""
    return datetime.fromtimestamp(seconds or 0.0).strftime(SC_TIME_FORMAT)[:-3]


def stable_id(prefix: str, *parts: object, size: int = 16) -> str:
    """A short id that is the same every time for the same parts (re-imports replace, not duplicate)."""
    digest = hashlib.blake2b(
        "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass"), digest_size=size
    )
    return f"{prefix}{digest.hexdigest()}"


def unquote(text: str) -> str:
    """The string inside a `repr()`/JSON quoted string literal; other text is returned unchanged."""
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] != stripped[-1] or stripped[0] not in "'\"":
        return text
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        try:
            value = json.loads(stripped)
        except ValueError:
            return text
    return value if isinstance(value, str) else text


def answer_list(value: Any) -> list[str]:
    """Gold answers as a list of strings, whether given as a list, a repr'd list or a plain string."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in value]
    if not isinstance(value, str):
        return [json.dumps(value, ensure_ascii=False)]
    stripped = value.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        for parse in (ast.literal_eval, json.loads):
            try:
                parsed = parse(stripped)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(parsed, (list, tuple)):
                return answer_list(parsed)
    return [unquote(value)]


#: The most characters of a value an error message quotes: a bad field can be megabytes long.
QUOTE_LIMIT = 200
_SHORT_REPR = reprlib.Repr(maxlevel=3, maxstring=60, maxother=60, maxlist=4, maxdict=4)


def brief(value: Any, limit: int = 80) -> str:
    """A value as an error message quotes it: its repr, cut after `limit` characters (at most
    QUOTE_LIMIT), with a long string's length said, so one bad field never floods a terminal."""
    limit = min(limit, QUOTE_LIMIT - 40)
    is_text = isinstance(value, str)
    text = repr(value[: limit + 1]) if is_text else _SHORT_REPR.repr(value)
    if len(text) > limit:
        text = f"{text[:limit]}..."
    if is_text and len(value) > limit:
        text += f" ({len(value):,} characters)"
    return text


def compact(mapping: dict[str, Any]) -> dict[str, Any]:
    """Drop keys whose value is None or an empty container (keeps 0, False and '')."""
    return {k: v for k, v in mapping.items() if v is not None and v != {} and v != []}


@contextmanager
def read_snapshot(store: Store) -> Iterator[sqlite3.Connection]:
    """A read-only connection holding one read transaction: a consistent view while exporting.

    Writers (a recorder flushing a running run) are not blocked; if a second connection cannot be
    opened the store's own connection is used.
    """
    try:
        conn = sqlite3.connect(f"{Path(store.path).resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        yield store.conn
        return
    try:
        conn.execute("BEGIN")
    except sqlite3.Error:
        conn.close()
        yield store.conn
        return
    try:
        yield conn
    finally:
        conn.rollback()
        conn.close()


def vocabulary_word[T: StrEnum](kind: type[T], text: str, where: str, key: str, path: str | Path) -> T:
    """A word of memtrace's vocabulary (an error type, a verdict), or a FormatError naming the value."""
    try:
        return kind(text)
    except ValueError:
        known = ", ".join(kind)
        raise FormatError(path, f"{where}: '{key}' {text!r} is not one of {known}") from None
