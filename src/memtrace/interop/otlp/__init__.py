"""OpenTelemetry spans in and out: export (file or endpoint), import, the live sink and the HTTP receiver.

Nothing here is imported by `import memtrace`: most of it needs the `memtrace[otel]` extra.
"""
