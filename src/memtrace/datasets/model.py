"""The conversation records every loader produces and every memory system consumes.

Loaders for different benchmarks (LoCoMo, LongMemEval, the bundled sample) all map onto these few
dataclasses, so that systems, judges and attribution never need to know where a conversation came from.

Conventions shared by all loaders:

- A turn's `dia_id` is unique within its conversation and is what gold evidence refers to.
- Dates are kept as the dataset wrote them (`date`) and parsed where possible (`Session.when`).
- A question whose information is not in the conversation (LoCoMo adversarial without an answer,
  LongMemEval abstention, the sample's unanswerable questions) has the gold answer `[NOT_MENTIONED]`;
  whatever the dataset said instead is kept in `Question.metadata`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..text import parse_when

#: The gold answer of a question the conversation cannot answer (one convention for every dataset).
NOT_MENTIONED = "Not mentioned in the conversation"

#: Category names used across datasets (LongMemEval brings its own question types as well).
SINGLE_HOP = "single-hop"
MULTI_HOP = "multi-hop"
TEMPORAL = "temporal"
OPEN_DOMAIN = "open-domain"
ADVERSARIAL = "adversarial"
KNOWLEDGE_UPDATE = "knowledge-update"
UNANSWERABLE = "unanswerable"


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance; immutable so that systems can share and hash turns freely."""

    dia_id: str
    speaker: str
    text: str
    session: int
    date: str | None
    image_caption: str | None = None

    def rendered(self) -> str:
        """The text with the shared image's caption appended, as LoCoMo baselines feed it to models."""
        if self.image_caption:
            return f"{self.text} [shares {self.image_caption}]"
        return self.text


@dataclass(slots=True)
class Session:
    """A dated block of turns; `date` is the raw string, `when` its parse (None if unparseable)."""

    index: int
    date: str | None
    turns: list[Turn]
    when: datetime | None = None

    def __post_init__(self) -> None:
        if self.when is None:
            self.when = parse_when(self.date)


@dataclass(slots=True)
class Question:
    """One benchmark question with its gold answers and the dia_ids of the turns that support them.

    `category` is a normalised name (see the constants above); `category_raw` is what the dataset said.
    """

    id: str
    question: str
    answers: list[str]
    evidence: list[str]
    category: str
    category_raw: int | str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def unanswerable(self) -> bool:
        """True when the gold says the conversation does not hold the answer."""
        return self.answers == [NOT_MENTIONED]


@dataclass(slots=True)
class Conversation:
    """A whole dialogue history with its questions; one memory-system run ingests one of these."""

    id: str
    speakers: list[str]
    sessions: list[Session]
    questions: list[Question]
    source: str
    metadata: dict[str, Any] = field(default_factory=dict)
    _index: dict[str, Turn] = field(default_factory=dict, init=False, repr=False, compare=False)

    def turns(self) -> Iterator[Turn]:
        """Every turn in conversation order (sessions in order, turns in order within each)."""
        for session in self.sessions:
            yield from session.turns

    def turn(self, dia_id: str) -> Turn | None:
        """The turn with this dia_id, or None (LoCoMo has a few evidence ids that name no turn)."""
        found = self._index.get(dia_id)
        if found is None:
            # Built lazily and rebuilt on a miss, so sessions edited after construction are still seen.
            self._index = {}
            for t in self.turns():
                self._index.setdefault(t.dia_id, t)
            found = self._index.get(dia_id)
        return found

    def evidence_turns(self, question: Question) -> list[Turn]:
        """The turns a question's gold evidence names, skipping ids that resolve to nothing."""
        return [t for t in (self.turn(e) for e in question.evidence) if t is not None]

    def broken_evidence(self) -> list[tuple[str, str]]:
        """(question id, dia_id) for every evidence id that names no turn: a dataset-quality check."""
        return [(q.id, e) for q in self.questions for e in q.evidence if self.turn(e) is None]
