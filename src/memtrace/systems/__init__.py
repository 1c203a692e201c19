"""The traced memory systems: long-context, RAG, Mem0 and EverMemOS, each with LLM and offline engines.

A memory system of your own subclasses `MemorySystem`, describes its tunables on its `SystemConfig`
(a `Grid` per searchable setting) and its `routes`, and calls `register_system()` (or declares a
`memtrace.systems` entry point); docs/systems.md is the contract.
"""

from .answering import answer_question
from .base import Answer, MemorySystem, Message, SystemConfig
from .registry import register_system, system_class, system_names
from .runner import CaseResult, RunResult, run_conversation
from .tunable_routes import ANSWER_ROUTES, ANY, CASE, EXTRACTION, RESPONSE, RETRIEVAL, UPDATE, Route, on
from .tunables import Grid

__all__ = [
    "ANSWER_ROUTES",
    "ANY",
    "CASE",
    "EXTRACTION",
    "RESPONSE",
    "RETRIEVAL",
    "UPDATE",
    "Answer",
    "CaseResult",
    "Grid",
    "MemorySystem",
    "Message",
    "Route",
    "RunResult",
    "SystemConfig",
    "answer_question",
    "on",
    "register_system",
    "run_conversation",
    "system_class",
    "system_names",
]
