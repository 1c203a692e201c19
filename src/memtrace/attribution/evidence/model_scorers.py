"""Support scorers that judge a part as a whole, by a model: embeddings (cosine) or an LLM yes/no.

They share the overlap scorer's target (`support.Target`) and its target-wide carrying rule (see
`support.best_part`); kept apart so the default scorer's module stays the rule and its words.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...graph.values import value_text
from .support import OverlapScorer, Target, answer_rule, content_stems


class EmbeddingScorer:
    """Cosine similarity to the evidence under any `Embedder` (a real embedding model is semantic).

    List values (a long-context memory, a retrieved context) are scored element by element, so one
    relevant entry is not diluted by hundreds of others.
    """

    name = "embedding"

    def __init__(self, embedder: Any, threshold: float = 0.6) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self._vectors: dict[str, Any] = {}

    def prepare(
        self, question: str, gold: list[str], evidence: list[tuple[str, str]], speakers: Iterable[str] = ()
    ) -> Target:
        texts = [text for _, text in evidence] + [f"{question} {' '.join(gold)}"]
        target = Target(
            [content_stems(t) for t in texts],
            frozenset(),
            [label for label, _ in evidence],
            [],
            *answer_rule(gold, evidence),
        )
        target.vectors = self._embed(texts)  # type: ignore[attr-defined]
        return target

    def score(self, target: Target, value: Any) -> float:
        parts = [value_text(v) for v in value] if isinstance(value, (list, tuple)) else [value_text(value)]
        parts = [p for p in parts if p.strip()]
        if not parts:
            return 0.0
        vectors = self._embed(parts)
        return float((vectors @ target.vectors.T).max())  # type: ignore[attr-defined]

    def _embed(self, texts: list[str]) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                norm = float(np.linalg.norm(vector)) or 1.0
                self._vectors[text] = np.asarray(vector, dtype=np.float32) / norm
        return np.stack([self._vectors[t] for t in texts])


LLM_SUPPORT_PROMPT = (
    "A question about a conversation needs this information:\n{evidence}\n"
    "Gold answer: {answer}\nQuestion: {question}\n\n"
    "Does the following text still contain that information (enough to answer)?\n---\n{text}\n---\n"
    'Reply as JSON: {{"carries": true or false}}'
)
_LLM_SUPPORT_SCHEMA = {
    "type": "object",
    "properties": {"carries": {"type": "boolean"}},
    "required": ["carries"],
}


class LLMScorer:
    """An LLM yes/no judge of whether a value still carries the information (1.0 or 0.0)."""

    name = "llm"

    def __init__(self, client: Any, threshold: float = 0.5, max_chars: int = 6000) -> None:
        self.client = client
        self.threshold = threshold
        self.max_chars = max_chars
        self._answers: dict[tuple[int, str], float] = {}

    def prepare(
        self, question: str, gold: list[str], evidence: list[tuple[str, str]], speakers: Iterable[str] = ()
    ) -> Target:
        target = Target(
            [content_stems(t) for _, t in evidence],
            frozenset(),
            [label for label, _ in evidence],
            [],
            *answer_rule(gold, evidence),
        )
        target.question, target.gold = question, gold  # type: ignore[attr-defined]
        target.evidence_text = "\n".join(t for _, t in evidence)  # type: ignore[attr-defined]
        return target

    def score(self, target: Target, value: Any) -> float:
        text = value_text(value)[-self.max_chars :]
        key = (id(target), text)
        if key not in self._answers:
            prompt = LLM_SUPPORT_PROMPT.format(
                evidence=target.evidence_text,  # type: ignore[attr-defined]
                answer=", ".join(target.gold),  # type: ignore[attr-defined]
                question=target.question,  # type: ignore[attr-defined]
                text=text,
            )
            reply = self.client.chat(
                [{"role": "user", "content": prompt}], schema=_LLM_SUPPORT_SCHEMA, name="attribution.support"
            )
            self._answers[key] = 1.0 if reply.data.get("carries") else 0.0
        return self._answers[key]


def make_scorer(kind: str, llm: Any = None) -> Any:
    """The flow method's support scorer: overlap (default), embedding (an endpoint's, else lexical hashing),
    minilm (all-MiniLM-L6-v2 on the CPU), or an LLM yes/no judge."""
    if kind == "overlap":
        return OverlapScorer()
    if kind == "embedding":
        from ...retrieval import HashingEmbedder

        return EmbeddingScorer(llm if llm is not None else HashingEmbedder())
    if kind == "minilm":  # a real sentence model on the CPU (memtrace[local]), no endpoint
        from ...retrieval.minilm import LocalSentenceEmbedder

        return EmbeddingScorer(LocalSentenceEmbedder())
    if kind == "llm":
        if llm is None:
            from ...errors import MemtraceError

            raise MemtraceError("the llm support scorer needs an LLM: pass --llm openai --model ...")
        return LLMScorer(llm)
    from ...errors import MemtraceError

    raise MemtraceError(f"unknown support scorer {kind!r} (choose overlap, embedding, minilm or llm)")
