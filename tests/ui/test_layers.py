"""The web UI sits at the top beside the CLI: nothing below it imports memtrace.ui."""

from __future__ import annotations

import re
from pathlib import Path

import memtrace

PACKAGE = Path(memtrace.__file__).parent
IMPORTS_UI = re.compile(r"^\s*(from\s+(memtrace|\.+)\.?ui\b|import\s+memtrace\.ui\b)", re.MULTILINE)


def test_only_the_cli_imports_the_ui() -> None:
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.parts[len(PACKAGE.parts)] not in ("ui", "cli") and IMPORTS_UI.search(path.read_text())
    ]
    assert offenders == []


def test_the_ui_pattern_sees_a_ui_import() -> None:
    assert IMPORTS_UI.search("    from ..ui.server import serve\n")
    assert IMPORTS_UI.search("import memtrace.ui\n")
    assert not IMPORTS_UI.search("from ..graph import Workspace\n")
