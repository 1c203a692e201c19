"""File and wire formats: smartcomment JSON (MemTraceBench), memtrace's own JSONL, annotations, OTLP.

This layer sits directly above `graph/`: it reads and writes runs through the store and knows no
system. OpenTelemetry (OTLP) export, import, the live sink and the receiver live in `otlp/` and are
imported by name, not from here: they need the `memtrace[otel]` extra.

Every importer validates a whole file before it writes, then writes one run in one transaction:
a broken file raises `FormatError` and leaves the workspace exactly as it was.
"""

from .jsonl import import_jsonl, write_jsonl
from .memtracebench import load_memtracebench, memtracebench_files
from .smartcomment.graphs import (
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
