"""Mem0 (classic): facts are extracted from each exchange and merged into memory by ADD/UPDATE/DELETE/NONE.

Operations, named and categorised like the paper's Mem0 graphs so attribution reads them the same way:
`extract_facts` (extraction) turns a batch of messages into facts; per fact, `search_memories`
(retrieval) finds the most similar memories and `update_memory_decision` (update) decides and applies
the event, with each deletion in a nested `delete_memory` (deletion) so that a lost fact can be blamed
as an UpdateError or a DeletionError precisely. At question time `search` (retrieval) ranks the live
memories and `answer` (response) reads them. Memory units are `mem-N` holding `{id, memory, timestamp}`.

Replay (replay.py): the outputs later steps act on are produced (`op.produce`), so a patch of
`extracted_facts`, `candidates`, `update_events` or the question-time `retrieved` changes what happens
next; every memory change follows `unit.applied`, so the in-process store, its search indexes and the
id counter stay equal to what was recorded when a patch cancels, deletes or rewrites a change. Patched
values may be any JSON: facts and memories that are not the expected shapes are read as text.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import trace
from ..datasets import Question, Session
from ..llm import LLMClient
from ..retrieval import BM25Index, HybridIndex
from ..text import format_date
from ..trace import NoopOp, OpScope
from .answering import answer_question
from .base import Answer, MemorySystem, Message
from .mem0_config import Mem0Config
from .mem0_decisions import (
    Fact,
    as_texts,
    body,
    context_line,
    decide_offline,
    events_from_reply,
    key_words,
    memory_line,
    memory_text,
    plan_events,
    well_formed_events,
)
from .mem0_prompts import (
    FactList,
    MemoryEvents,
    extraction_request,
    update_request,
)
from .rules import content_stems, extract_facts
from .tunable_routes import ANSWER_ROUTES, ANY, EXTRACTION, RETRIEVAL, UPDATE, on

Op = OpScope | NoopOp


@dataclass(slots=True)
class Candidate:
    """An old memory the update step compares a fact with; `unit` is None when no live unit backs it."""

    unit: str | None
    text: str
    owner: str | None
    timestamp: str | None


class Mem0System(MemorySystem):
    name = "mem0"
    Config = Mem0Config
    config: Mem0Config
    routes = (
        *ANSWER_ROUTES,
        on("extract_facts", EXTRACTION, "fact_extraction_prompt", 0, "the extraction prompt missed it"),
        on("extract_facts", EXTRACTION, "batch_size", 0, "extract from more or less context at once"),
        on("update_memory_decision", UPDATE, "update_threshold", +1, "a stricter update threshold"),
        on("update_memory_decision", UPDATE, "duplicate_threshold", +1, "a stricter duplicate threshold"),
        on("update_memory_decision", UPDATE, "merge_lines", +1, "merged memories keep more lines"),
        on("update_memory_decision delete_memory", UPDATE, "update_prompt", 0, "the update prompt lost it"),
        on("search_memories", ANY, "update_search_k", +1, "compare new facts with more memories"),
        on("search", RETRIEVAL, "top_k", +1, "the memory ranked below top_k: retrieve more"),
        on("search", RETRIEVAL, "search_method", 0, "another ranking"),
    )
    memtracebench_split = "mem0"

    def reset(self) -> None:
        self.pending: list[Message] = []
        self.memories: dict[str, Any] = {}  # unit -> its recorded value ({id, memory, timestamp}), live only
        self.owners: dict[str, str | None] = {}
        self.stems: dict[str, frozenset[str]] = {}
        self.postings: dict[str, set[str]] = {}  # content stem -> units holding it
        self.vectors: dict[str, np.ndarray] = {}
        self.created = 0
        self.facts = 0
        self._index: tuple[BM25Index | HybridIndex, list[str]] | None = None
        speakers = self.conversation.speakers if self.conversation else []
        self.names = frozenset(s for name in speakers for s in content_stems(name))

    # -- construction -------------------------------------------------------------------------

    def ingest(self, message: Message) -> None:
        self.pending.append(message)
        if len(self.pending) >= self.config.batch_size:
            self._flush()

    def end_session(self, session: Session) -> None:
        self._flush()

    def finish(self) -> None:
        self._flush()
        # Build the question index now rather than at the first question: the construction snapshot
        # then holds it ready, and a question-stage replay does not rebuild it.
        index, _ = self._question_index()
        (index.bm25 if isinstance(index, HybridIndex) else index).scores("")  # fits BM25

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        if not batch:
            return
        session = batch[0].session
        date = format_date(session.when) if session.when else session.date
        sources = tuple(m.turn.dia_id for m in batch)
        for fact in self._extract(batch, session, date):
            fact.sources = sources
            candidates, candidates_var = self._search_memories(fact)
            self._decide(fact, candidates, candidates_var, date)

    def _extract(self, batch: list[Message], session: Session, date: str | None) -> list[Fact]:
        run = self.recorder
        with trace.op("extract_facts", category="extraction", messages=len(batch)) as op:
            for message in batch:
                op.use(message.var)
            date_var = run.latest(f"session_{session.index}.date")
            if date_var is not None:
                op.use(date_var[2])
            if self.llm is None:
                found = [
                    (text, m.turn.speaker)
                    for m in batch
                    for text in extract_facts(m.turn.speaker, m.turn.rendered(), session.when)
                ]
            else:
                op.input("fact_extraction_prompt", self.config.fact_extraction_prompt, category="prompt")
                request = extraction_request(date, [m.text for m in batch])
                reply = self.llm.chat(
                    [
                        {"role": "system", "content": self.config.fact_extraction_prompt},
                        {"role": "user", "content": request},
                    ],
                    schema=FactList,
                    name="extract_facts.llm",
                )
                found = [(text.strip(), None) for text in reply.data.facts if text.strip()]
            texts = [text for text, _ in found]
            extracted, _ = op.produce("extracted_facts", texts, category="facts")
            if extracted is not texts:  # patched: owners of the facts kept, guessed for new ones
                owners = dict(reversed(found))
                guess = self.llm is None
                found = [
                    (t, owners[t] if t in owners else _speaker_in(t, batch) if guess else None)
                    for t in as_texts(extracted)
                ]
            facts = []
            for text, owner in found:
                self.facts += 1
                facts.append(Fact(text, op.output(f"fact-{self.facts}", text, category="fact"), owner))
        return facts

    def _search_memories(self, fact: Fact) -> tuple[list[Candidate], str | None]:
        run = self.recorder
        k = self.config.update_search_k
        with trace.op("search_memories", category="retrieval", k=k, method=self.config.update_search) as op:
            if fact.var:
                op.use(fact.var)
            hits = self._similar(fact.text, k)
            for unit, _ in hits:
                op.use(run.memory(unit).latest_id)
            op.set(scores=[[unit, round(score, 4)] for unit, score in hits])
            searched = [self.memories[unit] for unit, _ in hits]
            found, found_var = op.produce("candidates", searched, category="retrieved")
        if found is searched:
            return [self._candidate(unit, self.memories[unit]) for unit, _ in hits], found_var
        return self._patched_candidates(found), found_var

    def _candidate(self, unit: str | None, value: Any) -> Candidate:
        stamp = value.get("timestamp") if isinstance(value, dict) else None
        owner = self.owners.get(unit) if unit is not None else None
        return Candidate(unit, memory_text(value), owner, stamp if isinstance(stamp, str) else None)

    def _patched_candidates(self, found: Any) -> list[Candidate]:
        """Candidates a patch wrote: an item names a live unit by its `id`; other items are text only."""
        candidates = []
        for item in found if isinstance(found, list) else [found]:
            unit = item.get("id") if isinstance(item, dict) else None
            live = isinstance(unit, str) and unit in self.memories
            candidate = self._candidate(unit if live else None, item)
            if candidate.text:
                candidates.append(candidate)
        return candidates

    def _similar(self, text: str, k: int) -> list[tuple[str, float]]:
        """The `k` live memories most similar to `text`, ties broken by age (deterministic)."""
        if self.config.update_search == "dense" and self.vectors:
            units = sorted(self.vectors, key=_number)
            query = np.asarray(self.embedder.embed([body(text)]), dtype=np.float32)[0]
            scores = np.stack([self.vectors[u] for u in units]) @ query
            ranked = sorted(zip(units, scores.tolist(), strict=True), key=lambda p: (-p[1], _number(p[0])))
            return [(u, s) for u, s in ranked[:k] if s > 0]
        stems = key_words(text, self.names)
        shared: Counter[str] = Counter()
        for stem in stems:
            shared.update(self.postings.get(stem, ()))
        scored = [(u, 2 * n / (len(stems) + len(self.stems[u]))) for u, n in shared.items()]
        scored.sort(key=lambda p: (-p[1], _number(p[0])))
        return scored[:k]

    def _decide(
        self, fact: Fact, candidates: list[Candidate], candidates_var: str | None, date: str | None
    ) -> None:
        with trace.op("update_memory_decision", category="update") as op:
            if fact.var:
                op.use(fact.var)
            if candidates_var:
                op.use(candidates_var)
            if self.llm is None:
                seen = [(c.unit, c.text, c.owner) for c in candidates]
                events = decide_offline(fact, seen, self.names, self.config)
                op.set(decided_by="rules")
            elif not candidates:
                events = [{"id": None, "text": fact.text, "event": "ADD"}]
                op.set(decided_by="no candidates")
            else:
                events = self._decide_llm(self.llm, op, fact, candidates, date)
            # Produced before they are carried out, so a patch of the events is what gets applied.
            planned, _ = op.produce(
                "update_events", plan_events(events, self.memories, self.created), category="update_events"
            )
            done = [
                event
                for event in (self._apply(op, fact, e, date) for e in well_formed_events(planned))
                if event
            ]
            op.set(events=[[e["event"], e["id"]] for e in done])

    def _decide_llm(
        self, llm: LLMClient, op: Op, fact: Fact, candidates: list[Candidate], date: str | None
    ) -> list[dict[str, Any]]:
        """Ask the model; its ids are short aliases ("0", "1", ...) mapped back to units, as Mem0 does."""
        op.input("update_prompt", self.config.update_prompt, category="prompt")
        alias = {str(i): c.unit for i, c in enumerate(candidates)}
        old = [(str(i), c.text, c.timestamp) for i, c in enumerate(candidates)]
        reply = llm.chat(
            [
                {"role": "system", "content": self.config.update_prompt},
                {"role": "user", "content": update_request(old, [fact.text], date)},
            ],
            schema=MemoryEvents,
            name="update_memory_decision.llm",
        )
        events, ignored = events_from_reply(reply.data, alias)
        if ignored:
            op.set(ignored=ignored)
        return events

    def _apply(self, op: Op, fact: Fact, event: dict[str, Any], date: str | None) -> dict[str, Any] | None:
        """Carry out one planned event on the memory units and the in-process store.

        None when it no longer applies or a replay patch cancelled it. An ADD always takes the next
        `mem-N` (whatever id a patched event names), so ids never collide; the counter moves on even
        when the creation is cancelled, which keeps later ids equal to the original run's.
        """
        run, kind, unit = self.recorder, event["event"], event.get("id")
        text = event.get("text")
        if kind == "ADD":
            self.created += 1
            unit = f"mem-{self.created}"
            handle = run.memory(unit)
            handle.create(
                {"id": unit, "memory": text, "timestamp": date, "sources": list(fact.sources)}, by=op
            )
            return {**event, "id": unit} if self._follow(unit, handle.applied, fact.owner) else None
        if not isinstance(unit, str) or unit not in self.memories:
            return None
        old = memory_text(self.memories[unit])
        handle = run.memory(unit)
        if kind == "UPDATE":
            previous = self.memories[unit]
            known = previous.get("sources", []) if isinstance(previous, dict) else []
            sources = [*known, *(s for s in fact.sources if s not in known)]
            handle.update({"id": unit, "memory": text or old, "timestamp": date, "sources": sources}, by=op)
        elif kind == "DELETE":
            with trace.op("delete_memory", category="deletion", unit=unit) as deletion:
                if fact.var:
                    deletion.use(fact.var)
                handle.delete(by=deletion)
        if kind != "NONE" and not self._follow(unit, handle.applied, fact.owner):
            return None
        return {"id": unit, "text": text or old, "event": kind, "old_memory": old}

    def _follow(self, unit: str, applied: tuple[str, Any], owner: str | None) -> bool:
        """Make the in-process store say what was recorded; False when the change was cancelled."""
        action, value = applied
        if action == "cancelled":
            return False
        self._forget(unit)
        if action != "delete":
            self._store(unit, value, owner)
        return True

    def _store(self, unit: str, value: Any, owner: str | None) -> None:
        self.memories[unit] = value
        self.owners[unit] = owner
        text = memory_text(value)
        stems = key_words(text, self.names)
        self.stems[unit] = stems
        for stem in stems:
            self.postings.setdefault(stem, set()).add(unit)
        if self.config.update_search == "dense":
            vector = np.asarray(self.embedder.embed([body(text)]), dtype=np.float32)[0]
            self.vectors[unit] = vector / (np.linalg.norm(vector) or 1.0)
        self._index = None

    def _forget(self, unit: str) -> None:
        for stem in self.stems.pop(unit, ()):
            self.postings[stem].discard(unit)
        self.memories.pop(unit, None)
        self.owners.pop(unit, None)
        self.vectors.pop(unit, None)
        self._index = None

    # -- questions ----------------------------------------------------------------------------

    def ready(self) -> None:
        self._question_index()[0].fit()

    def answer(self, question: Question) -> Answer:
        run = self.recorder
        k = self.config.top_k
        with trace.op("search", category="retrieval", top_k=k, method=self.config.search_method) as op:
            query = op.input("query", question.question, category="query")
            index, units = self._question_index()
            hits = index.search(question.question, k) if units else []
            for hit in hits:
                op.use(run.memory(units[hit.index]).latest_id)
            context = [context_line(self.memories[units[hit.index]]) for hit in hits]
            op.set(ranking=[[units[h.index], rank, round(h.score, 4)] for rank, h in enumerate(hits, 1)])
            retrieved, context_var = op.produce("retrieved", context, category="retrieved")
        return answer_question(
            question,
            context if retrieved is context else as_texts(retrieved),
            config=self.config,
            llm=self.llm,
            context_var=context_var,
            query_var=query,
        )

    def _question_index(self) -> tuple[BM25Index | HybridIndex, list[str]]:
        """An index over the live memories, rebuilt only after memory changed."""
        if self._index is None:
            units = sorted(self.memories, key=_number)
            lines = [memory_line(self.memories[u]) for u in units]
            index = HybridIndex(self.embedder) if self.config.search_method == "hybrid" else BM25Index()
            index.add(lines)
            self._index = (index, units)
        return self._index


def _speaker_in(text: str, batch: list[Message]) -> str | None:
    """Offline owner of a fact a patch wrote: the batch speaker it names first, if any."""
    found = [(text.find(m.turn.speaker), m.turn.speaker) for m in batch if m.turn.speaker in text]
    return min(found)[1] if found else None


def _number(unit: str) -> int:
    return int(unit.rpartition("-")[2])
