"""The vendored front-end libraries: unchanged, licensed permissively, licences shipped beside them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import memtrace.ui

VENDOR = Path(memtrace.ui.__file__).parent / "static" / "vendor"
ROOT = Path(__file__).resolve().parents[2]
PERMISSIVE = {"MIT", "ISC", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "0BSD"}


def test_every_vendored_file_matches_its_recorded_hash_and_has_a_licence() -> None:
    record = json.loads((VENDOR / "VENDORED.json").read_text())
    packages = {entry["package"] for entry in record}
    assert {"cytoscape", "cytoscape-dagre", "@dagrejs/dagre"} <= packages
    for entry in record:
        assert entry["license"] in PERMISSIVE, entry["package"]
        assert any(name.endswith("/LICENSE") for name in entry["files"]), entry["package"]
        for name, digest in entry["files"].items():
            assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name


def test_vendored_versions_are_the_pinned_ones() -> None:
    manifest = json.loads((ROOT / "frontend" / "package.json").read_text())
    lock = json.loads((ROOT / "frontend" / "package-lock.json").read_text())
    for entry in json.loads((VENDOR / "VENDORED.json").read_text()):
        assert manifest["dependencies"][entry["package"]] == entry["version"]
        assert lock["packages"][f"node_modules/{entry['package']}"]["version"] == entry["version"]


def test_pages_load_nothing_from_outside() -> None:
    templates = Path(memtrace.ui.__file__).parent / "templates"
    for page in templates.glob("*.html"):
        text = page.read_text()
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, page.name
