"""Options shared by the commands that call a model: the endpoint's limits and the judge.

Kept apart from app.py so every LLM command offers the same flags with the same meaning, and so the
OpenAI SDK is imported only when a command really makes a client.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import MemtraceError
from .consoles import styled

if TYPE_CHECKING:
    from ..datasets import Conversation
    from ..eval import Judge, JudgeCheck
    from ..llm.limiter import LocalLimiters

JUDGE_KINDS: tuple[str, ...] = ("strict", "f1", "llm")

TimeoutOption = Annotated[
    float | None,
    typer.Option(help="Seconds per model call attempt (or MEMTRACE_LLM_TIMEOUT; default 60)."),
]
RetriesOption = Annotated[
    int | None,
    typer.Option(help="Retries of a failed model call (or MEMTRACE_LLM_RETRIES; default 4; a timeout once)."),
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option(help="Output tokens per model call (or MEMTRACE_LLM_MAX_TOKENS; default 1024)."),
]
#: The default of --concurrency (llm/limiter.py's DEFAULT_CONCURRENCY; not imported: the CLI starts fast).
DEFAULT_CONCURRENCY = 4
ConcurrencyOption = Annotated[
    int,
    typer.Option(
        help="Model calls in flight to one endpoint, counted over all workers together; a 429 or a"
        " Retry-After makes every worker wait."
    ),
]
JudgeOption = Annotated[
    str | None,
    typer.Option(
        help="strict (every part of the answer, dates matching), f1 (token F1 >= 0.5) or llm"
        " (default: llm with a model, else strict; token F1 is reported beside either)."
    ),
]
JudgeModelOption = Annotated[str | None, typer.Option(help="Model for --judge llm (default: --model).")]
JudgeBaseUrlOption = Annotated[
    str | None, typer.Option(help="Endpoint for --judge llm (default: --base-url).")
]


@dataclass(frozen=True, slots=True)
class LLMLimits:
    """Per-call limits from the command line; None leaves the environment or the default. Every
    client made with one `LLMLimits` shares its limiters: `concurrency` calls in flight per endpoint."""

    timeout: float | None = None
    retries: int | None = None
    max_tokens: int | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    _shared: list[LocalLimiters] = field(default_factory=list, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise MemtraceError(f"--concurrency {self.concurrency}: give 1 or more")

    @property
    def limiters(self) -> LocalLimiters:
        """The command's limiters, made on first use (an offline command never makes them)."""
        if not self._shared:
            from ..llm.limiter import LocalLimiters

            self._shared.append(LocalLimiters(self.concurrency))
        return self._shared[0]


def llm_client(
    kind: str, model: str | None, base_url: str | None, workspace: Path, limits: LLMLimits | None = None
) -> Any:
    """The client for `--llm KIND` (None when offline)."""
    if kind == "offline":
        return None
    if kind != "openai":
        raise MemtraceError(f"unknown --llm {kind!r} (choose offline or openai)")
    from ..llm import make_client

    limits = limits or LLMLimits()
    return make_client(
        "openai",
        model=model,
        base_url=base_url,
        workspace=workspace,
        timeout=limits.timeout,
        max_retries=limits.retries,
        max_tokens=limits.max_tokens,
        limiters=limits.limiters,
    )


@contextmanager
def closing_client(client: Any) -> Iterator[Any]:
    """`client` for one `with` block, closed after it (its HTTP pool and LLM-cache database); None
    (offline) passes through."""
    try:
        yield client
    finally:
        if client is not None:
            client.close()


@dataclass(slots=True)
class JudgeChoice:
    """The judge a command uses, and the separate client it opened for it (closed by `close`)."""

    judge: Judge | None
    kind: str | None
    own_client: Any = None

    def close(self) -> None:
        if self.own_client is not None:
            self.own_client.close()

    def __enter__(self) -> JudgeChoice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def choose_judge(
    kind: str | None,
    client: Any,
    *,
    model: str | None,
    base_url: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    workspace: Path,
    limits: LLMLimits | None = None,
) -> JudgeChoice:
    """`--judge KIND` with its optional own model/endpoint; None kind keeps the runner's default."""
    from ..eval import make_judge

    if kind is None and (judge_model or judge_base_url):
        kind = "llm"
    if kind is None:
        if client is None:
            return JudgeChoice(None, None)
        kind = "llm"
    if kind not in JUDGE_KINDS:
        raise MemtraceError(f"unknown --judge {kind!r} (choose {', '.join(JUDGE_KINDS)})")
    own = None
    if kind == "llm" and (judge_model or judge_base_url or client is None):
        if not (judge_model or model):
            raise MemtraceError("--judge llm needs a model: pass --judge-model (or --llm openai --model)")
        own = llm_client("openai", judge_model or model, judge_base_url or base_url, workspace, limits)
    try:
        judge = make_judge(kind, client=own if own is not None else client)
    except ValueError as exc:
        if own is not None:
            own.close()
        raise MemtraceError(f"--judge {kind}: {exc}") from None
    return JudgeChoice(judge, kind, own)


def probe_judge(choice: JudgeChoice, conversations: list[Conversation], console: Any) -> JudgeCheck | None:
    """For an LLM judge: does it reject nonsense answers to the dataset's own questions? Printed in
    one line; a probe the endpoint fails is said so, and the command's results stand."""
    if choice.kind != "llm" or choice.judge is None:
        return None
    from ..eval import KnownCase, check_judge

    cases = [
        KnownCase(q.question, list(q.answers), q.category_raw if q.category_raw is not None else q.category)
        for conversation in conversations
        for q in conversation.questions
    ]
    try:
        check = check_judge(choice.judge, cases)
    except MemtraceError as exc:
        console.print(styled(f"judge not probed: {exc}", "yellow"), highlight=False)
        return None
    style = "green" if check.reliable else "bold red"
    console.print(styled(check.summary(), style), highlight=False)
    return check
