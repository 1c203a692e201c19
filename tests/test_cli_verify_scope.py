"""`memtrace verify` on nothing to verify, and on a case attributed under two settings of one method:
a one-line error each, and nothing stored is changed."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from test_cli import memtrace

_ROWS = (
    "SELECT run, case_id, method, settings_key, op, error_type, verified FROM attributions ORDER BY 1, 2, 4"
)


def _rows(workspace: Path) -> list[tuple]:
    with closing(sqlite3.connect(workspace / "memtrace.db")) as conn:
        return conn.execute(_ROWS).fetchall()


def test_a_method_with_no_stored_attributions_says_how_to_make_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    memtrace("run", ws, "--system", "rag", "--questions", "6")
    memtrace("attribute", ws)
    result = memtrace("verify", ws, "--method", "last-op", "--run", "rag/sample-0", check=False)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "no last-op attributions of run(s) rag/sample-0" in result.stderr
    assert "memtrace attribute" in result.stderr and "--run rag/sample-0 --method last-op" in result.stderr


def test_two_settings_of_one_method_are_refused_before_one_overwrites_the_other(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    memtrace("run", ws, "--system", "rag", "--questions", "6")
    memtrace("attribute", ws, "--method", "random", "--seed", "1")
    memtrace("attribute", ws, "--method", "random", "--seed", "2")
    before = _rows(ws)
    result = memtrace("verify", ws, "--method", "random", check=False)
    assert result.returncode == 1 and "under more than one setting" in result.stderr, result.stderr
    assert _rows(ws) == before
