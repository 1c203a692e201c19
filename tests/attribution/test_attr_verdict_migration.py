"""Store migration 5: verdicts of the old verifier are cleared, and its downstream revisions dropped."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from memtrace.attribution.model import Attribution, load_attributions, save_attribution
from memtrace.graph.schema import _MIGRATIONS
from memtrace.graph.store import Store


def _version_4_workspace(workspace: Path) -> None:
    workspace.mkdir()
    raw = sqlite3.connect(workspace / "memtrace.db", isolation_level=None)
    raw.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    for version in range(1, 5):
        for statement in _MIGRATIONS[version].split(";"):
            if statement.strip():
                raw.execute(statement)
    raw.execute("INSERT INTO meta VALUES ('schema_version', '4')")
    rows = [
        ("c1", "retrieve#5", "RetrievalError", "true", None),
        ("c2", "answer#9", "ResponseError", "by-elimination", None),
        (
            "c3",
            "answer#12",
            "ResponseError",
            "by-elimination",
            {"op_id": "trim#3", "error_type": "UpdateError"},
        ),
    ]
    for case, op, kind, verified, revised in rows:
        raw.execute(
            "INSERT INTO attributions(run, case_id, method, settings_key, op, error_type, confidence,"
            " verified, replay_run, explanation, path, cost, created_at, revised_from) VALUES"
            " ('r', ?, 'flow', 'k', ?, ?, 0.8, ?, 'replay-1', 'why', '[]', '{}', 0, ?)",
            (case, op, kind, verified, json.dumps(revised) if revised else None),
        )
    raw.close()


def test_old_verdicts_are_cleared_and_claims_moved_downstream_are_dropped(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    _version_4_workspace(workspace)
    with closing(Store(workspace)) as store:
        kept = {a.case_id: a for a in load_attributions(store)}
    assert set(kept) == {"c1", "c2"}  # c3 was an UpdateError the old verifier moved to the answer step
    assert all(a.verified is None and a.replay_run is None for a in kept.values())
    assert all(a.flow_confirmed is None and a.answer_confirmed is None for a in kept.values())


def test_both_levels_and_the_record_round_trip(tmp_path: Path) -> None:
    item = Attribution("r", "c", "trim#3", "UpdateError", 0.8, "why", "flow")
    item.verified, item.flow_confirmed, item.answer_confirmed = "flow-confirmed", True, False
    item.verification = {"reason": "delivered", "second_faults": [{"op_id": "answer#9"}]}
    with closing(Store(tmp_path / "ws")) as store:
        save_attribution(store, item, "k")
        (back,) = load_attributions(store)
    assert back.settings_key == "k"  # verification saves it back under the key it was stored with
    assert (back.verified, back.flow_confirmed, back.answer_confirmed) == ("flow-confirmed", True, False)
    assert back.verification == item.verification
