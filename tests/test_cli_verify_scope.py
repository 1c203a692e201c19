"""`memtrace verify` on nothing to verify (says so and how to attribute), and on a case attributed under
two settings of one method (each attribution is verified and stored under its own setting)."""

from __future__ import annotations

import json
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
    result = memtrace(
        "verify", ws, "--method", "last-op", "--run", "rag/sample-0", "--json", tmp_path / "v.json"
    )
    said = " ".join(result.stdout.split())  # not an error: a workspace without failures has none either
    assert "nothing to verify: no last-op attributions of run(s) rag/sample-0" in said
    assert "memtrace attribute" in said and "--run rag/sample-0 --method last-op" in said
    assert json.loads((tmp_path / "v.json").read_text())["verified_now"] == 0


def test_two_settings_of_one_method_each_keep_their_attribution_and_verdict(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    memtrace("run", ws, "--system", "rag", "--questions", "6")
    memtrace("attribute", ws, "--method", "random", "--seed", "1")
    memtrace("attribute", ws, "--method", "random", "--seed", "2")
    claims = {(run, case, key): (op, kind) for run, case, _, key, op, kind, _ in _rows(ws)}
    assert len({key for _, _, key in claims}) == 2
    memtrace("verify", ws, "--method", "random")
    after = _rows(ws)
    # every row keeps the claim made under its own setting, and now has a verdict of its own
    assert {(run, case, key): (op, kind) for run, case, _, key, op, kind, _ in after} == claims
    assert all(verdict is not None for *_, verdict in after)


def test_a_negative_limit_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    memtrace("run", ws, "--system", "rag", "--questions", "4")
    memtrace("attribute", ws)
    before = _rows(ws)
    result = memtrace("verify", ws, "--limit", "-1", check=False)
    assert result.returncode == 1 and "--limit must be 0 or more, not -1" in result.stderr
    assert _rows(ws) == before  # before, it verified all but the last one
