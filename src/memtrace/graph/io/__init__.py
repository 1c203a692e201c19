"""Moved to `memtrace.interop` (file and wire formats); this path works for one release, with a warning."""

from ...moved import alias_moved_modules

__getattr__ = alias_moved_modules(
    __name__,
    "memtrace.interop",
    {
        "_common": "memtrace.interop._common",
        "_order": "memtrace.interop.smartcomment._order",
        "annotations": "memtrace.interop.annotations",
        "jsonl": "memtrace.interop.jsonl",
        "memtracebench": "memtrace.interop.memtracebench",
        "smartcomment": "memtrace.interop.smartcomment.graphs",
        "_sc_cases": "memtrace.interop.smartcomment._cases",
        "_sc_deletions": "memtrace.interop.smartcomment._deletions",
        "_sc_export": "memtrace.interop.smartcomment._export",
        "_sc_parse": "memtrace.interop.smartcomment._parse",
        "_sc_schema": "memtrace.interop.smartcomment._schema",
        "_sc_values": "memtrace.interop.smartcomment._values",
        "otel": "memtrace.interop.otlp.export",
        "otel_cases": "memtrace.interop.otlp.cases",
        "otel_import": "memtrace.interop.otlp.importer",
        "otel_receiver": "memtrace.interop.otlp.receiver",
        "otel_spans": "memtrace.interop.otlp.spans",
        "_otel_attrs": "memtrace.interop.otlp._attrs",
        "_otlp_wire": "memtrace.interop.otlp._wire",
    },
)
