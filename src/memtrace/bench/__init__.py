"""Benchmarks that compose the layers below: evidence location (more to come: MemTraceBench, faults)."""

from .evidence import evidence_command, evidence_recall, evidence_table

__all__ = ["evidence_command", "evidence_recall", "evidence_table"]
