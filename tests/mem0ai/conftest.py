"""mem0ai tests: mem0 is imported with telemetry off and its home folder in a temporary directory.

mem0 reads MEM0_DIR and MEM0_TELEMETRY once, at import (it writes ~/.mem0/config.json otherwise), so
they are set here, before any test module of this folder imports it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llm"))

if "mem0" not in sys.modules:
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = tempfile.mkdtemp(prefix="memtrace-test-mem0-home-")
