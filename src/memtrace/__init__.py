"""memtrace: record memory pipelines as executable graphs and find out why they answered wrong."""

__version__ = "0.1.0"
