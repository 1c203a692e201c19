"""RAG: messages buffered into token-limited documents, documents indexed, top-k hybrid retrieval.

Operations: `buffer_message` (construction) appends a message to the buffer; `add_document`
(construction) turns a full buffer into a document memory unit and indexes it; `retrieve`
(retrieval) ranks documents for the question; `answer` (response). Evidence that never reached
a document is a construction loss; evidence in a document that ranked below top-k is a
RetrievalError at `retrieve`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from .. import trace
from ..datasets import Question, Session
from ..retrieval import BM25Index, HybridIndex
from ..text import tagged_line
from .answering import answer_question
from .base import TOP_K_GRID, Answer, MemorySystem, Message, SystemConfig
from .long_context import estimate_tokens
from .tunable_routes import ANSWER_ROUTES, EXTRACTION, RETRIEVAL, on
from .tunables import Grid

BUFFER = "message_buffer"


class RAGConfig(SystemConfig):
    #: Tokens per document; a message that would overflow the buffer starts a new document.
    chunk_tokens: Annotated[int, Grid(64, 128, 192, 256, 384, 512, 768)] = 256
    #: Documents handed to the answer step.
    top_k: Annotated[int, TOP_K_GRID] = 5
    #: BM25 alone is the better offline choice: the hashing embedder is lexical and adds noise.
    retrieval: Annotated[Literal["bm25", "hybrid"], Grid("bm25", "hybrid")] = "bm25"
    #: Close the buffer at the end of each session, so documents never straddle two dates.
    split_sessions: Annotated[bool, Grid(True, False)] = True


class RAGSystem(MemorySystem):
    name = "rag"
    Config = RAGConfig
    config: RAGConfig
    routes = (
        *ANSWER_ROUTES,
        on("retrieve", RETRIEVAL, "top_k", +1, "the document ranked below top_k: retrieve more"),
        on("retrieve", RETRIEVAL, "chunk_tokens", +1, "larger documents carry more around each hit"),
        on("retrieve", RETRIEVAL, "retrieval", 0, "another ranking"),
        on("buffer_message add_document", EXTRACTION, "chunk_tokens", 0, "documents cut the evidence"),
        on("buffer_message add_document", EXTRACTION, "split_sessions", 0, "documents cut the evidence"),
    )
    memtracebench_split = "rag"

    def reset(self) -> None:
        self.buffer: list[tuple[str, str]] = []  # (message variable, line)
        self.buffer_tokens = 0
        self.buffer_var: str | None = None
        self.documents: list[str] = []
        self.doc_units: list[str] = []
        self.index: BM25Index | HybridIndex = (
            HybridIndex(self.embedder) if self.config.retrieval == "hybrid" else BM25Index()
        )

    def ingest(self, message: Message) -> None:
        line = tagged_line(message)
        tokens = estimate_tokens(line)
        if self.buffer and self.buffer_tokens + tokens > self.config.chunk_tokens:
            self._add_document()
        with trace.op("buffer_message", category="construction") as op:
            op.use(message.var)
            self.buffer.append((message.var, line))
            self.buffer_tokens += tokens
            self.buffer_var = op.output(BUFFER, [text for _, text in self.buffer], category="buffer")

    def end_session(self, session: Session) -> None:
        if self.config.split_sessions and self.buffer:
            self._add_document()

    def finish(self) -> None:
        if self.buffer:
            self._add_document()

    def _add_document(self) -> None:
        run = self.recorder
        with trace.op("add_document", category="construction", chunk_tokens=self.config.chunk_tokens) as op:
            if self.buffer_var:
                op.use(self.buffer_var)
            for var, _ in self.buffer:
                op.use(var)
            text = "\n".join(line for _, line in self.buffer)
            unit_id = f"doc-{len(self.doc_units) + 1}"
            unit = run.memory(unit_id)
            unit.create(text, by=op)
            action, value = unit.applied
            if action != "cancelled" and isinstance(value, str):
                self.index.add([value])
                self.documents.append(value)
                self.doc_units.append(unit_id)
            self.buffer_var = op.output(BUFFER, [], category="buffer")
        self.buffer, self.buffer_tokens = [], 0

    def ready(self) -> None:
        self.index.fit()

    def answer(self, question: Question) -> Answer:
        run = self.recorder
        with trace.op("retrieve", category="retrieval", top_k=self.config.top_k) as op:
            query = op.input("query", question.question, category="query")
            hits = self.index.search(question.question, self.config.top_k)
            for hit in hits:
                op.use(run.memory(self.doc_units[hit.index]).latest_id)
            context = [self.documents[hit.index] for hit in hits]
            op.set(ranking=[[self.doc_units[h.index], round(h.score, 4)] for h in hits])
            context, context_var = op.produce("retrieved", context, category="retrieved")
        return answer_question(
            question, context, config=self.config, llm=self.llm, context_var=context_var, query_var=query
        )
