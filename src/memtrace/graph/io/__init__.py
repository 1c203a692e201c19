"""Import and export of run graphs: smartcomment JSON (MemTraceBench) and memtrace's own JSONL.

OpenTelemetry (OTLP) export and import live in otel*.py beside these and are imported by name, not
from here: they need the `memtrace[otel]` extra.

Every importer validates a whole file before it writes, then writes one run in one transaction:
a broken file raises `FormatError` and leaves the workspace exactly as it was.
"""

from .jsonl import import_jsonl, write_jsonl
from .memtracebench import load_memtracebench, memtracebench_files
from .smartcomment import (
    ImportedRun,
    export_smartcomment,
    import_smartcomment,
    read_smartcomment,
    write_imported,
    write_smartcomment,
)

__all__ = [
    "ImportedRun",
    "export_smartcomment",
    "import_jsonl",
    "import_smartcomment",
    "load_memtracebench",
    "memtracebench_files",
    "read_smartcomment",
    "write_imported",
    "write_jsonl",
    "write_smartcomment",
]
