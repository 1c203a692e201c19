"""Errors that carry one readable line: what went wrong and in which file."""

from __future__ import annotations

from pathlib import Path


class MemtraceError(Exception):
    """Base of every error memtrace raises on purpose; its text is meant for the user as is."""


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

    def __init__(self, where: str | Path, name: str, candidates: list[str]) -> None:
        self.name = name
        self.candidates = candidates
        super().__init__(
            f"{where}: run name {name!r} is ambiguous, {len(candidates)} runs have it: "
            + "; ".join(candidates)
            + ". Give one of these run ids."
        )
