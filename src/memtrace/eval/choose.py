"""Which judge a run uses: the strict verdict offline, an LLM judge when a client is configured.

It sits above the judges it picks from (judges.py, strict.py), so none of them imports another's chooser.
"""

from __future__ import annotations

from .judges import ChatClient, F1Judge, Judge, LLMJudge
from .strict import StrictJudge


def make_judge(kind: str = "auto", client: ChatClient | None = None, threshold: float = 0.5) -> Judge:
    """The judge to use: `auto` asks the LLM when a client is configured, else the strict verdict.

    `llm` requires a client; `strict` (eval/strict.py) and `f1` (F1 >= threshold) ignore it.
    """
    if kind == "auto":
        kind = "llm" if client is not None else "strict"
    if kind == "strict":
        return StrictJudge(threshold)
    if kind == "f1":
        return F1Judge(threshold)
    if kind == "llm":
        if client is None:
            raise ValueError("an LLM judge needs an LLM client; configure one or use kind='f1'")
        return LLMJudge(client, fallback=F1Judge(threshold), on_malformed="f1")
    raise ValueError(f"unknown judge kind {kind!r}: use 'auto', 'llm', 'strict' or 'f1'")
