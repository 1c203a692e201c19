"""What every traced memory system shares: its config (the tunables), its engines, its life cycle.

A system is driven by the runner (runner.py): `start` for each conversation, `ingest` for each
message, `end_session` after each session, `finish` after the last, then `answer` per question.
Every step it takes is a recorded operation with one of DESIGN.md's categories, so its graph
carries the information an attributor needs. Each step has an LLM implementation and an offline
one (deterministic rules); `self.llm is None` selects the offline one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ..datasets import Conversation, Question, Session, Turn
from ..errors import MemtraceError
from ..llm import LLMClient
from ..retrieval import Embedder, HashingEmbedder
from ..trace import Recorder
from .tunable_routes import ANSWER_ROUTES, Route
from .tunables import Grid

ANSWER_PROMPT = (
    "You answer questions about a long conversation between two people using only the memories "
    "given. Dates matter: resolve relative dates ('yesterday', 'last week') against the date of the "
    "memory. If the memories do not contain the answer, reply exactly: Not mentioned in the "
    "conversation. Answer in a few words, no explanation.\n\nMemories:\n{context}\n\n"
    "Question: {question}\nAnswer:"
)


class SystemConfig(BaseModel):
    """A system's tunables: prompt texts and settings. Defaults are each system's best hand-chosen ones."""

    model_config = ConfigDict(extra="forbid")

    answer_prompt: str = ANSWER_PROMPT
    #: Offline answering: below this support the system says the information is not mentioned.
    min_answer_support: Annotated[
        float, Grid(0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, reads="offline")
    ] = 0.5


@dataclass(slots=True)
class Answer:
    """A system's answer to a question, with the variable that holds it and the context it read."""

    text: str
    var: str | None
    context: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Message:
    """A conversation turn as the system received it: the turn and its recorded message variable."""

    turn: Turn
    var: str
    session: Session

    @property
    def text(self) -> str:
        return f"{self.turn.speaker}: {self.turn.rendered()}"


#: The top_k grid the retrieving systems share.
TOP_K_GRID = Grid(1, 2, 3, 5, 8, 10, 12, 15, 20, 30)


class MemorySystem(ABC):
    """A traced memory system over one conversation at a time; docs/systems.md is its contract.

    Beside its engines a system describes itself, so that replay, the optimiser, the report and
    MemTraceBench need no table of systems: `name` (recorded on every run), `Config` (its tunables,
    with a `Grid` on each searchable setting), `routes` (which tunable to move when an operation
    fails with an error type), `runs_offline` (whether it has rule engines for a run with no model)
    and `memtracebench_split` (the benchmark split whose graphs it produced, if any).
    """

    name: ClassVar[str]
    Config: ClassVar[type[SystemConfig]] = SystemConfig
    #: Operation + error type -> the tunable to move; operations not named fall back on their category.
    routes: ClassVar[tuple[Route, ...]] = ANSWER_ROUTES
    #: False for a system that needs a model (an adapter of a library that always calls one).
    runs_offline: ClassVar[bool] = True
    #: The MemTraceBench split (`<dir>/<split>/*.json`) recorded from this system, if there is one.
    memtracebench_split: ClassVar[str | None] = None
    #: Whether the runner may pickle the system's state for replay (a system wrapping live clients
    #: such as mem0ai's qdrant store cannot be snapshotted, so its runs cannot be replayed).
    snapshots: ClassVar[bool] = True
    #: Whether the runner may answer questions ahead on copies of the state to fetch their model
    #: replies at once (systems/ahead.py): the copy's answers touch nothing outside it.
    fetches_ahead: ClassVar[bool] = True
    #: Whether `answer` only reads the state and may run on several threads at once: fetching ahead
    #: then answers on the system itself, for a state that cannot be copied (mem0ai's live store).
    answers_in_place: ClassVar[bool] = False

    def __init__(
        self,
        config: SystemConfig | None = None,
        *,
        llm: LLMClient | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        if llm is None and not self.runs_offline:
            raise MemtraceError(f"system {self.name!r} has no offline engine: it needs an LLM client")
        self.config = config if config is not None else self.Config()
        self.llm = llm
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self.run: Recorder | None = None
        self.conversation: Conversation | None = None

    @property
    def offline(self) -> bool:
        return self.llm is None

    def start(self, run: Recorder, conversation: Conversation) -> None:
        """Begin a conversation with an empty memory."""
        self.run = run
        self.conversation = conversation
        self.reset()

    @abstractmethod
    def reset(self) -> None:
        """Forget all memory (a new conversation starts)."""

    @abstractmethod
    def ingest(self, message: Message) -> None:
        """Take one message into memory (construction stage)."""

    def end_session(self, session: Session) -> None:
        """A session ended; systems that buffer messages may flush here."""
        return None

    def finish(self) -> None:
        """The conversation ended; flush whatever is still buffered."""
        return None

    def ready(self) -> None:
        """Build what question time needs (indexes) now, so the construction snapshot holds it and a
        replay of a question does not rebuild it."""
        return None

    @abstractmethod
    def answer(self, question: Question) -> Answer:
        """Answer a question from memory (retrieval and response stages)."""

    def tunables(self) -> dict[str, Any]:
        """The prompt texts and settings an optimiser may change."""
        return self.config.model_dump()

    @property
    def recorder(self) -> Recorder:
        if self.run is None:
            raise RuntimeError(f"{self.name}: start() was not called")
        return self.run
