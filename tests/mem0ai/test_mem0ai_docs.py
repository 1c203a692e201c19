"""docs/mem0ai.md runs as written, against the scripted endpoint, with whichever mem0ai is installed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mem0helpers import Mem0Script, Mem0Server

pytest.importorskip("mem0", reason="mem0ai is not installed (pip install 'memtrace[mem0ai]')")


DOC = Path(__file__).resolve().parents[2] / "docs" / "mem0ai.md"


def test_the_mem0ai_doc_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)
    assert blocks
    monkeypatch.chdir(tmp_path)
    with Mem0Server(Mem0Script(facts={"moved to Boston": ["Caroline lives in Boston"]})) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        namespace: dict[str, object] = {"__name__": "doc_mem0ai"}
        for number, block in enumerate(blocks, 1):
            exec(compile(block, f"mem0ai.md block {number}", "exec"), namespace)
        memory = namespace["memory"]
        memory.close()  # type: ignore[attr-defined]
        memory.vector_store.client.close()  # type: ignore[attr-defined]
    assert namespace["prediction"] == "Boston"
