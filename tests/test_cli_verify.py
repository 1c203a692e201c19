"""`memtrace verify`: confirmed shares apart from elimination; --run, --limit, --method, --refresh."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import OpenWorkspace
from memtrace.attribution.model import load_attributions
from test_cli import memtrace


def _attributed(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    memtrace("run", "--workspace", ws, "--system", "rag,mem0", "--questions", "12")
    memtrace("attribute", ws)
    return ws


def test_verify_reports_levels_apart_and_honours_limit_run_and_refresh(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    ws = _attributed(tmp_path)
    attributed = load_attributions(open_ws(ws).store, method="flow")
    first = memtrace("verify", ws, "--limit", "2", "--json", tmp_path / "v2.json").stdout
    summary = json.loads((tmp_path / "v2.json").read_text())
    assert summary["verified_now"] == 2
    assert summary["verdicts"]["not verified"] == len(attributed) - 2
    assert "flow-confirmed" in first and "answer-confirmed" in first and "by elimination" in first
    assert "verified share" not in first  # no single number summing levels
    # What each verdict says of a claim's chance, from flow's measured table, for the claims verified.
    assert "confidence after verification, mean per verdict" in first

    rag = next(r for r in open_ws(ws).runs() if r.system == "rag")
    in_rag = [a for a in attributed if a.run_id == rag.id]
    memtrace("verify", ws, "--run", rag.id, "--json", tmp_path / "rag.json")
    scoped = json.loads((tmp_path / "rag.json").read_text())
    assert sum(counts["total"] for counts in scoped["by_type"].values()) == len(in_rag)
    assert scoped["verdicts"]["not verified"] == 0
    memtrace("verify", ws, "--run", rag.id, "--json", tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text())["verified_now"] == 0
    memtrace("verify", ws, "--run", rag.id, "--refresh", "--limit", "3", "--json", tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["verified_now"] == min(3, len(in_rag))
    claims, confirmed = scoped["claims"], scoped["flow_confirmed"]
    assert 0 <= confirmed <= claims and scoped["answer_confirmed"] <= claims


def test_verify_with_an_unknown_method_is_an_error(tmp_path: Path) -> None:
    ws = _attributed(tmp_path)
    result = memtrace("verify", ws, "--method", "nope", check=False)
    assert result.returncode == 1 and "unknown attribution method 'nope'" in result.stderr
