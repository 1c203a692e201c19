"""memtrace's native exchange format: one JSON record per line, exact to the last id, seq and byte.

Layout: a `run` record first, then `blob`, `op`, `var`, `edge`, `case` and `annotation` records,
then an `end` record with the counts, so that a file cut short at a line boundary is still
caught. The writer streams from database cursors; the reader validates the whole file before
it writes anything, then writes the run in one transaction. Names ending in `.gz` are gzip.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import sqlite3
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from ..errors import FormatError
from ..graph.model import Annotation, Run
from ..graph.rows import RunRows, dumps_or_none, loads_or
from ..graph.store import CASE_COLUMNS, EDGE_COLUMNS, OP_COLUMNS, VAR_COLUMNS, Store
from ..graph.values import COMPRESSED_SUFFIX, JSON, REPR, TEXT, content_hash
from ..vocabulary import CaseVerdict, ErrorType
from ._common import NESTED_TOO_DEEPLY, open_text, read_snapshot, vocabulary_word

FORMAT = "memtrace-jsonl"
FORMAT_VERSION = 1

_STR, _OSTR = (str,), (str, type(None))
_NUM, _ONUM = (int, float), (int, float, type(None))
_ODICT, _OLIST = (dict, type(None)), (list, type(None))

#: Per record type: (field, accepted JSON types, stored as JSON text), in the table's column order.
_FIELDS: dict[str, list[tuple[str, tuple[type, ...], bool]]] = {
    "op": [
        ("id", _STR, False),
        ("seq", (int,), False),
        ("parent_op", _OSTR, False),
        ("name", _STR, False),
        ("category", _STR, False),
        ("started_at", _ONUM, False),
        ("ended_at", _ONUM, False),
        ("status", _STR, False),
        ("metadata", _ODICT, True),
    ],
    "var": [
        ("id", _STR, False),
        ("name", _STR, False),
        ("version", (int,), False),
        ("seq", (int,), False),
        ("category", _STR, False),
        ("blob", _OSTR, False),
        ("deleted", (bool, int), False),
        ("created_at", _ONUM, False),
        ("metadata", _ODICT, True),
    ],
    "edge": [
        ("op", _STR, False),
        ("var", _STR, False),
        ("role", _STR, False),
        ("source", _OSTR, False),
        ("metadata", _ODICT, True),
    ],
    "case": [
        ("id", _STR, False),
        ("question", _STR, False),
        ("gold", _OLIST, True),
        ("prediction", _OSTR, False),
        ("prediction_var", _OSTR, False),
        ("verdict", _OSTR, False),
        ("score", _ONUM, False),
        ("evidence", _OLIST, True),
        ("category", _OSTR, False),
        ("metadata", _ODICT, True),
    ],
    "annotation": [
        ("case_id", _STR, False),
        ("error_type", _OSTR, False),
        ("op", _OSTR, False),
        ("note", _OSTR, False),
        ("author", _OSTR, False),
        ("created_at", _ONUM, False),
    ],
}
#: Fields whose values are words of the vocabulary: anything else is refused on import.
_WORDS: dict[tuple[str, str], type[StrEnum]] = {
    ("case", "verdict"): CaseVerdict,
    ("annotation", "error_type"): ErrorType,
}
_RUN_FIELDS: list[tuple[str, tuple[type, ...]]] = [
    ("id", _STR),
    ("name", _STR),
    ("system", _OSTR),
    ("dataset", _OSTR),
    ("conversation", _OSTR),
    ("parent_run", _OSTR),
    ("status", _STR),
    ("error", _OSTR),
    ("config", _ODICT),
    ("metadata", _ODICT),
    ("created_at", _NUM),
    ("finished_at", _ONUM),
]
_QUERIES = {
    "op": f"SELECT {OP_COLUMNS} FROM ops WHERE run=? ORDER BY seq",
    "var": f"SELECT {VAR_COLUMNS} FROM vars WHERE run=? ORDER BY seq",
    "edge": f"SELECT {EDGE_COLUMNS} FROM edges WHERE run=? ORDER BY rowid",
    "case": f"SELECT {CASE_COLUMNS} FROM cases WHERE run=? ORDER BY rowid",
    "annotation": "SELECT run, case_id, error_type, op, note, author, created_at FROM annotations"
    " WHERE run=? ORDER BY id",
}
_TYPES = ("run", "blob", *_FIELDS, "end")


# -- writing ----------------------------------------------------------------------------------


@contextmanager
def _output(target: str | Path | IO[str]) -> Iterator[IO[str]]:
    if isinstance(target, (str, Path)):
        with open_text(target, "w") as handle:
            yield handle
    else:
        yield target


def _emit(out: IO[str], record: dict[str, Any]) -> None:
    try:
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    except UnicodeEncodeError:  # lone surrogates survive only as \\u escapes
        out.write(json.dumps(record, separators=(",", ":")) + "\n")


def _blob_record(blob_hash: str, encoding: str, data: bytes) -> dict[str, Any]:
    if not encoding.endswith(COMPRESSED_SUFFIX):
        try:
            return {
                "type": "blob",
                "hash": blob_hash,
                "encoding": encoding,
                "text": bytes(data).decode("utf-8"),
            }
        except UnicodeDecodeError:
            pass
    return {
        "type": "blob",
        "hash": blob_hash,
        "encoding": encoding,
        "base64": base64.b64encode(data).decode(),
    }


def write_jsonl(store: Store, run_id: str, path_or_file: str | Path | IO[str]) -> dict[str, int]:
    """Stream one run to JSONL (a path, `.gz` for gzip, or an open text file); returns the counts."""
    run = store.run(run_id)
    counts: Counter[str] = Counter()
    with read_snapshot(store) as conn, _output(path_or_file) as out:
        _emit(out, {"type": "run", "format": FORMAT, "version": FORMAT_VERSION, **asdict(run)})
        blobs = conn.execute(
            "SELECT hash, encoding, data FROM blobs WHERE hash IN (SELECT blob FROM vars WHERE run=?)",
            (run.id,),
        )
        for blob_hash, encoding, data in blobs:
            _emit(out, _blob_record(blob_hash, encoding, data))
            counts["blob"] += 1
        for kind, fields in _FIELDS.items():
            for row in conn.execute(_QUERIES[kind], (run.id,)):
                record: dict[str, Any] = {"type": kind}
                for (name, types, is_json), value in zip(fields, row[1:], strict=True):
                    if is_json:
                        value = loads_or(value, None)
                    elif bool in types:
                        value = bool(value)
                    record[name] = value
                _emit(out, record)
                counts[kind] += 1
        _emit(out, {"type": "end", "counts": dict(counts)})
    return dict(counts)


# -- reading ----------------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with open_text(path) as handle:
            yield from enumerate(handle, start=1)
    except FileNotFoundError:
        raise FormatError(path, "no such file") from None
    except UnicodeDecodeError as exc:
        raise FormatError(path, f"not UTF-8 text ({exc.reason})") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise FormatError(path, f"truncated or corrupt gzip data ({exc})") from None


def _typed(path: Path, where: str, record: dict[str, Any], name: str, types: tuple[type, ...]) -> Any:
    if name not in record and type(None) not in types:
        raise FormatError(path, f"{where}: '{name}' is missing")
    value = record.get(name)
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        expected = " or ".join("null" if t is type(None) else t.__name__ for t in types)
        raise FormatError(path, f"{where}: '{name}' must be {expected}, not {type(value).__name__}")
    return value


def _blob_row(path: Path, where: str, record: dict[str, Any]) -> tuple[str, str, bytes]:
    blob_hash = _typed(path, where, record, "hash", _STR)
    encoding = _typed(path, where, record, "encoding", _STR)
    if isinstance(record.get("text"), str):
        data = record["text"].encode("utf-8", "surrogatepass")
    else:
        try:
            data = base64.b64decode(_typed(path, where, record, "base64", _STR), validate=True)
        except binascii.Error:
            raise FormatError(path, f"{where}: 'base64' is not valid base64") from None
    raw, base = data, encoding
    if base.removesuffix(COMPRESSED_SUFFIX) not in (TEXT, JSON, REPR):
        raise FormatError(path, f"{where}: unknown encoding {encoding!r}")
    if encoding.endswith(COMPRESSED_SUFFIX):
        base = encoding[: -len(COMPRESSED_SUFFIX)]
        try:
            raw = zlib.decompress(data)
        except zlib.error:
            raise FormatError(path, f"{where}: compressed payload is corrupt") from None
    if content_hash(base, raw) != blob_hash:
        raise FormatError(path, f"{where}: payload does not match its hash {blob_hash}")
    return blob_hash, encoding, data


def _read(path: Path) -> tuple[Run, dict[str, list[tuple]], list[tuple[str, str, bytes]], list[Annotation]]:
    run: Run | None = None
    rows: dict[str, list[tuple]] = {kind: [] for kind in _FIELDS if kind != "annotation"}
    blobs: list[tuple[str, str, bytes]] = []
    annotations: list[Annotation] = []
    edge_lines: list[int] = []
    counts: Counter[str] = Counter()
    ids: dict[str, dict[str, int]] = {"op": {}, "var": {}, "case": {}}
    end_counts: dict[str, Any] | None = None
    last = 0
    for number, line in _lines(path):
        last = number
        where = f"line {number}"
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except RecursionError:
            raise FormatError(path, f"{where}: {NESTED_TOO_DEEPLY}") from None
        except json.JSONDecodeError as exc:
            cut = not line.endswith("\n")
            problem = "truncated record (the file ends mid-line)" if cut else f"not valid JSON ({exc.msg})"
            raise FormatError(path, f"{where}: {problem}") from None
        if not isinstance(record, dict) or record.get("type") not in _TYPES:
            kind = record.get("type") if isinstance(record, dict) else type(record).__name__
            raise FormatError(path, f"{where}: unknown record type {kind!r}")
        kind = record["type"]
        where = f"line {number} ({kind})"
        if end_counts is not None:
            raise FormatError(path, f"{where}: record after the end record")
        if run is None and kind != "run":
            raise FormatError(path, f"{where}: the first record must be the run, not {kind!r}")
        if kind == "run":
            if run is not None:
                raise FormatError(path, f"{where}: a second run record")
            if record.get("format") != FORMAT:
                raise FormatError(path, f"{where}: not a {FORMAT} file (format={record.get('format')!r})")
            if not isinstance(record.get("version"), int) or record["version"] > FORMAT_VERSION:
                raise FormatError(path, f"{where}: unsupported version {record.get('version')!r}")
            values = {name: _typed(path, where, record, name, types) for name, types in _RUN_FIELDS}
            values["config"], values["metadata"] = values["config"] or {}, values["metadata"] or {}
            run = Run(**values)
        elif kind == "blob":
            blobs.append(_blob_row(path, where, record))
        elif kind == "end":
            end_counts = _typed(path, where, record, "counts", (dict,))
        else:
            values = [_typed(path, where, record, name, types) for name, types, _ in _FIELDS[kind]]
            for i, (name, _, _) in enumerate(_FIELDS[kind]):
                word = _WORDS.get((kind, name))
                if word is not None and values[i] is not None:
                    values[i] = vocabulary_word(word, values[i], where, name, path)
            for i, (_, types, is_json) in enumerate(_FIELDS[kind]):
                if is_json:
                    values[i] = dumps_or_none(values[i])
                elif bool in types:
                    values[i] = int(bool(values[i]))
            if kind in ids:
                if values[0] in ids[kind]:
                    raise FormatError(
                        path, f"{where}: duplicate {kind} id {values[0]!r} (line {ids[kind][values[0]]})"
                    )
                ids[kind][values[0]] = number
            if kind == "annotation":
                annotations.append(Annotation(run.id, *values))  # type: ignore[union-attr]
            else:
                rows[kind].append((run.id, *values))  # type: ignore[union-attr]
            if kind == "edge":
                edge_lines.append(number)
        counts[kind] += 1
    if run is None:
        raise FormatError(path, "empty file: no run record")
    if end_counts is None:
        raise FormatError(path, f"truncated: no end record after line {last}")
    for kind, count in end_counts.items():
        if counts.get(kind, 0) != count:
            raise FormatError(
                path, f"truncated or edited: {counts.get(kind, 0)} {kind} records, end says {count}"
            )
    for number, (_, op, var, role, source, _) in zip(edge_lines, rows["edge"], strict=True):
        problem = None
        if role not in ("in", "out"):
            problem = f"role must be 'in' or 'out', not {role!r}"
        elif op not in ids["op"]:
            problem = f"refers to unknown op {op!r}"
        elif var not in ids["var"] or (source is not None and source not in ids["var"]):
            problem = f"refers to unknown variable {(var if var not in ids['var'] else source)!r}"
        if problem:
            raise FormatError(path, f"line {number} (edge): {problem}")
    return run, rows, blobs, annotations


def import_jsonl(store: Store, path: str | Path, *, replace: bool = True) -> Run:
    """Import a run written by `write_jsonl`: same ids, seqs and values; nothing written if invalid."""
    path = Path(path)
    run, rows, blobs, annotations = _read(path)
    known = {h for h, _, _ in blobs}
    missing = sorted({r[6] for r in rows["var"] if r[6] is not None and r[6] not in known})
    for blob_hash in missing:
        if not store.has_blob(blob_hash):
            raise FormatError(path, f"variable value {blob_hash} has no blob record")
    try:
        store.replace_run(
            run,
            RunRows(
                ops=rows["op"],
                variables=rows["var"],
                edges=rows["edge"],
                blobs=blobs,
                cases=rows["case"],
                annotations=annotations,
            ),
            replace=replace,
        )
    except sqlite3.IntegrityError as exc:
        raise FormatError(path, f"inconsistent records ({exc})") from None
    return run
