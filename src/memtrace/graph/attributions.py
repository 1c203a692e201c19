"""The attributions table: its named row type and its reads and writes (the store's, like every table).

attribution/ turns its `Attribution` results into `AttributionRow`s and back; only this module
knows the columns.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from ..vocabulary import ErrorType, Verdict, error_type_or_none, verdict_or_none
from .rows import dumps_or_none, loads_or

_COLUMNS = (
    "run, case_id, method, settings_key, op, error_type, confidence, verified, replay_run,"
    " explanation, path, cost, created_at, revised_from, flow_confirmed, answer_confirmed, verification"
)


@dataclass(slots=True)
class AttributionRow:
    """One stored attribution, keyed by (run, case, method, settings key); JSON columns as Python values."""

    run_id: str
    case_id: str
    method: str
    settings_key: str
    op_id: str | None
    error_type: ErrorType
    confidence: float
    verified: Verdict | None
    replay_run: str | None
    explanation: str
    path: list[dict[str, Any]]
    cost: dict[str, Any]
    created_at: float | None
    revised_from: dict[str, Any] | None = None
    flow_confirmed: bool | None = None
    answer_confirmed: bool | None = None
    verification: dict[str, Any] | None = None


def save_attribution_in(conn: sqlite3.Connection, row: AttributionRow) -> None:
    """Insert or replace the attribution under its key, inside the caller's transaction."""
    conn.execute(
        f"INSERT INTO attributions({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(run, case_id, method, settings_key) DO UPDATE SET op=excluded.op,"
        " error_type=excluded.error_type, confidence=excluded.confidence, verified=excluded.verified,"
        " replay_run=excluded.replay_run, explanation=excluded.explanation, path=excluded.path,"
        " cost=excluded.cost, created_at=excluded.created_at, revised_from=excluded.revised_from,"
        " flow_confirmed=excluded.flow_confirmed, answer_confirmed=excluded.answer_confirmed,"
        " verification=excluded.verification",
        (
            row.run_id,
            row.case_id,
            row.method,
            row.settings_key,
            row.op_id,
            row.error_type,
            row.confidence,
            row.verified,
            row.replay_run,
            row.explanation,
            _json(row.path),
            _json(row.cost),
            row.created_at,
            None if row.revised_from is None else _json(row.revised_from),
            row.flow_confirmed,
            row.answer_confirmed,
            None if row.verification is None else _json(row.verification),
        ),
    )


def load_attribution(
    conn: sqlite3.Connection, run_id: str, case_id: str, method: str, settings_key: str
) -> AttributionRow | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM attributions WHERE run=? AND case_id=? AND method=? AND settings_key=?",
        (run_id, case_id, method, settings_key),
    ).fetchone()
    return None if row is None else _from_row(row)


def load_attributions(
    conn: sqlite3.Connection, run_id: str | None = None, method: str | None = None
) -> list[AttributionRow]:
    """Stored attributions in the order they were first stored, optionally of one run and/or method."""
    where, params = [], []
    if run_id is not None:
        where.append("run=?")
        params.append(run_id)
    if method is not None:
        where.append("method=?")
        params.append(method)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    return [
        _from_row(r) for r in conn.execute(f"SELECT {_COLUMNS} FROM attributions{clause} ORDER BY id", params)
    ]


@dataclass(slots=True, frozen=True)
class AttributionSummary:
    """An attribution's verdict without its path and explanation: what tables list."""

    run_id: str
    case_id: str
    method: str
    op_id: str | None
    error_type: str
    verified: str | None
    #: The number of the verifier that made the verdict (None: unverified, or stored before stamps).
    verifier: int | None = None


def load_attribution_summaries(
    conn: sqlite3.Connection, run_id: str | None = None
) -> list[AttributionSummary]:
    """Stored attributions' verdicts in the order stored, cheap enough for every run at once."""
    sql = (
        "SELECT run, case_id, method, op, error_type, verified, json_extract(verification, '$.verifier')"
        " FROM attributions"
    )
    if run_id is None:
        rows = conn.execute(sql + " ORDER BY id").fetchall()
    else:
        rows = conn.execute(sql + " WHERE run=? ORDER BY id", (run_id,)).fetchall()
    return [AttributionSummary(*row) for row in rows]


def _json(value: Any) -> str:
    return dumps_or_none(value) or ("[]" if isinstance(value, list) else "{}")


def _from_row(row: tuple) -> AttributionRow:
    return AttributionRow(
        run_id=row[0],
        case_id=row[1],
        method=row[2],
        settings_key=row[3],
        op_id=row[4],
        error_type=error_type_or_none(row[5]),  # type: ignore[arg-type]  # the column is NOT NULL
        confidence=row[6],
        verified=verdict_or_none(row[7]),
        replay_run=row[8],
        explanation=row[9],
        path=loads_or(row[10], []),
        cost=loads_or(row[11], {}),
        created_at=row[12],
        revised_from=loads_or(row[13], None),
        flow_confirmed=None if row[14] is None else bool(row[14]),
        answer_confirmed=None if row[15] is None else bool(row[15]),
        verification=loads_or(row[16], None),
    )
