"""The traced memory systems: long-context, RAG, Mem0 and EverMemOS, each with LLM and offline engines."""

from .base import Answer, MemorySystem, Message, SystemConfig
from .runner import CaseResult, RunResult, run_conversation

__all__ = ["Answer", "CaseResult", "MemorySystem", "Message", "RunResult", "SystemConfig", "run_conversation"]
