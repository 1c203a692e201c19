"""Every error memtrace raises on purpose, in one place: each reads as one line a user can act on.

This module is the ground of the layers with vocabulary.py (docs/architecture.md): it imports
nothing of memtrace, so graph/ and every layer above raise from here and the CLI catches
`MemtraceError` alone. Exceptions that never leave their module (a damaged journal frame met while
reading, a reply body the backend cannot parse) stay private to it and are turned into these.
"""

from __future__ import annotations

from pathlib import Path


class MemtraceError(Exception):
    """Base of every error memtrace raises on purpose; its text is meant for the user as is."""


# -- files and workspaces (graph/) --------------------------------------------------------------


class FormatError(MemtraceError):
    """A file could not be read as the format it claims to be; names the file and the problem."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class WorkspaceError(MemtraceError):
    """A workspace database is missing, unreadable or from an incompatible version."""


class NotFoundError(MemtraceError):
    """A run, case, operation or variable that was asked for does not exist."""


class AmbiguousRunError(NotFoundError):
    """A run name that several runs share: picking one silently would read the wrong graph."""

    def __init__(
        self,
        where: str | Path,
        name: str,
        candidates: list[str],
        *,
        what: str = "run name",
        how: str = "have it",
    ) -> None:
        self.name = name
        self.candidates = candidates
        super().__init__(
            f"{where}: {what} {name!r} is ambiguous, {len(candidates)} runs {how}: "
            + "; ".join(candidates)
            + ". Give one of these run ids."
        )


# -- model calls (llm/) -------------------------------------------------------------------------


class LLMError(MemtraceError):
    """A model call failed: endpoint unreachable, key rejected, timed out, misconfigured, ..."""


class LLMOutputError(LLMError):
    """The model kept answering with text that is not valid JSON or does not match the schema."""

    def __init__(self, message: str, *, reply: str, attempts: int) -> None:
        self.reply = reply
        self.attempts = attempts
        super().__init__(message)


class CacheMissError(LLMError):
    """Replay (read-only cache) needed a response that was never recorded."""


class ResponseFormatRejected(LLMError):
    """The endpoint refused the `response_format` it was sent; the client falls back to a simpler one."""


class LLMReplyCutError(LLMOutputError):
    """The reply stopped at the `max_tokens` limit (`finish_reason == "length"`) before the JSON closed."""


class MalformedReplyError(LLMError):
    """The endpoint answered 200 with a body the client cannot read (cut JSON, no `choices`)."""


class ContextOverflowError(LLMError):
    """The prompt plus `max_tokens` did not fit the server's context window (llama.cpp: "Context size
    has been exceeded"): the same request fails again, so it is never retried."""


#: Failures of one model call that a run survives: the operation is recorded as failed and the run goes on.
RECOVERABLE_ERRORS: tuple[type[LLMError], ...] = (LLMOutputError, MalformedReplyError, ContextOverflowError)


# -- services and workflows ---------------------------------------------------------------------


class DatasetSpecError(MemtraceError, ValueError):
    """A dataset spec names no known dataset or lacks its path/seed."""


class JudgeOutputError(MemtraceError, ValueError):
    """The LLM judge's reply could not be read as {"correct": bool, "reason": str}."""


class UntrustedSnapshotError(MemtraceError):
    """A snapshot file not signed with the user's key (see systems/signing.py), or changed after it was."""


class NotReplayableError(MemtraceError):
    """A run memtrace cannot re-execute (imported, recorded without the runner, or live clients)."""


class OptimizeError(MemtraceError):
    """The optimiser cannot start: too few conversations, a bad start config, ..."""


class ListenError(MemtraceError):
    """A server cannot listen where asked: the port is taken, out of range or not ours to use."""
