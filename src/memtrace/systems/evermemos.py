"""EverMemOS: messages grouped into episodes (memcells), each distilled into memories; two-round retrieval.

Construction, per message: `buffer_message` (construction) appends it to the message buffer, then
`detect_boundary` (construction) decides whether it closes the buffered messages as an episode (a topic
shift, or the buffer reaching `max_episode_messages`; a session's end always closes one). A closed
episode goes to `extract_memcell` (extraction), which writes the raw memcell as a variable and its
memories as memory units: `episode-N` (a summary), `fact-N.M` (the event log's atomic facts) and
`foresight-N.M` (plans); `index_memcell` (construction) adds those units to a hybrid index (BM25 and
dense, fused by RRF).

The raw memcell is deliberately not a memory unit: retrieval never searches it, so information only it
holds is not in the searchable store, and losing it there is an ExtractionError, not a RetrievalError.

Question time: `retrieve_round1` (retrieval), `check_sufficiency` (retrieval: are the hits enough?) and,
when they are not, `retrieve_round2` (retrieval: follow-up queries fused with round 1 by RRF); the last
`retrieved` version goes to the shared `answer` (response).

Offline, every step is a deterministic rule: facts come from `rules.extract_facts`, the episode is
their dated extractive summary, plans are facts worded as plans (so they repeat a fact's text; search
returns one hit per distinct text), the sufficiency check is the top hit's word overlap with the
question and follow-ups are fixed rewrites of the question.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

import memtrace as mt

from ..datasets import Question, Session
from ..retrieval import Hit, HybridIndex, rrf_fuse, tokenize
from .answering import answer_question
from .base import Answer, MemorySystem, Message, SystemConfig
from .evermemos_prompts import (
    BOUNDARY_PROMPT,
    EPISODE_PROMPT,
    EVENT_LOG_PROMPT,
    FORESIGHT_PROMPT,
    SUFFICIENCY_PROMPT,
    BoundaryReply,
    EpisodeReply,
    EventLogReply,
    ForesightReply,
    SufficiencyReply,
)
from .rules import extract_facts, format_date, overlap

BUFFER = "message_buffer"

#: After the speaker's name in a rewritten fact, the words of a plan ("Clara is going to ...").
_PLAN = r"(?:is going to|will|plans? to|is planning(?: to| on)?|hopes? to|intends? to|is gonna)\b"
#: A plan without a subject the rules can see: "We're going camping next month".
_NEXT = re.compile(r"\bnext (?:week|weekend|month|year|summer|spring|fall|autumn|winter)\b", re.I)
#: Words that shape a question but name nothing to search for.
_QUESTION_WORDS = frozenset(
    {"what", "when", "where", "who", "whom", "which", "why", "how", "did", "does", "do", "is", "was"}
    | {"were", "are", "has", "have", "had", "can", "could", "would", "will", "kind", "kinds", "type"}
)
_WHEN = ("when", "what date", "what year", "which year", "what month", "how long", "what time")


class EverMemOSConfig(SystemConfig):
    boundary_prompt: str = BOUNDARY_PROMPT
    episode_prompt: str = EPISODE_PROMPT
    event_log_prompt: str = EVENT_LOG_PROMPT
    foresight_prompt: str = FORESIGHT_PROMPT
    sufficiency_prompt: str = SUFFICIENCY_PROMPT
    #: The buffer closes as an episode once it holds this many messages.
    max_episode_messages: int = 12
    #: Offline topic shift: the new message shares less than this share of its words with the buffer.
    topic_shift_threshold: float = 0.15
    #: Offline topic shift needs a buffer at least this long and a new message of at least 4 content words.
    min_episode_messages: int = 4
    #: LLM mode: also extract foresight (plans); offline, plans are recognised by their wording.
    extract_foresight: bool = True
    #: Memories handed to the answer step (and searched per round). Offline accuracy is flat in k: LoCoMo
    #: dev 0.187 / 0.184 / 0.184 / 0.182 / 0.181 for k = 5 / 6 / 8 / 10 / 12, sample seeds 0-4 0.57-0.58;
    #: 8 leaves an LLM answerer room for multi-hop questions.
    top_k: int = 8
    #: Offline sufficiency: the best round-1 hit must hold this share of the question's words.
    sufficiency_threshold: float = 0.67
    max_followups: int = 3
    #: Candidates each retriever (BM25, dense) contributes per requested hit before RRF fusion.
    candidates: int = 4
    #: Reciprocal-rank-fusion constant (hybrid search and round-2 fusion).
    rrf_k: int = 60


class EverMemOSSystem(MemorySystem):
    name = "evermemos"
    Config = EverMemOSConfig
    config: EverMemOSConfig

    def reset(self) -> None:
        self.buffer: list[str] = []  # recorded as the `message_buffer` variable
        self.pending: list[Message] = []  # the same messages, with their variables
        self.buffer_var: str | None = None
        self.memcells = 0
        self.index = HybridIndex(self.embedder, candidates=self.config.candidates, rrf_k=self.config.rrf_k)
        self.units: list[str] = []  # unit id of each indexed document, by index position
        self.texts: list[str] = []

    # -- construction -----------------------------------------------------------------------

    def ingest(self, message: Message) -> None:
        with mt.op("buffer_message", category="construction") as op:
            op.use(message.var)
            self.pending.append(message)
            self.buffer.append(f"[{message.turn.dia_id}] {message.text}")
            self.buffer_var = op.mutated(self.buffer, name=BUFFER, category="buffer")
        closed, reason, decision = self._detect_boundary()
        if closed:
            self._close(closed, reason, decision)

    def end_session(self, session: Session) -> None:
        if self.pending:
            self._close(list(self.pending), "session end", None)

    def finish(self) -> None:
        if self.pending:
            self._close(list(self.pending), "conversation end", None)

    def _detect_boundary(self) -> tuple[list[Message], str, str | None]:
        """(messages that close as an episode, why, decision variable); no messages when none close."""
        history, new = self.pending[:-1], self.pending[-1]
        with mt.op("detect_boundary", category="construction") as op:
            op.use(self.buffer_var)
            shift, reason = False, "first message"
            if history and self.offline:
                shift, reason = self._topic_shift(history, new, op)
            elif history:
                prompt = self.config.boundary_prompt.format(
                    history="\n".join(_line(m) for m in history), new_message=_line(new)
                )
                op.input("boundary_prompt", self.config.boundary_prompt, category="prompt")
                reply: BoundaryReply = self._ask(prompt, BoundaryReply, "detect_boundary.llm")
                shift, reason = reply.boundary, reply.reason or "llm"
            closed = history if shift else []
            if not closed and len(self.pending) >= self.config.max_episode_messages:
                closed, reason = list(self.pending), "buffer full"
            decision = op.output(
                "boundary", {"boundary": bool(closed), "reason": reason, "messages": len(closed)}, "decision"
            )
        return list(closed), reason, decision

    def _topic_shift(self, history: list[Message], new: Message, op: Any) -> tuple[bool, str]:
        """Offline: a long enough buffer and a substantive new message sharing few of its words."""
        short = len(tokenize(new.turn.text, stopwords=True)) < 4
        if short or len(history) < self.config.min_episode_messages:
            return False, "continues"
        support = overlap(new.turn.rendered(), " ".join(m.turn.rendered() for m in history))
        op.set(similarity=round(support, 3))
        if support < self.config.topic_shift_threshold:
            return True, f"topic shift ({support:.2f})"
        return False, "same topic"

    def _close(self, messages: list[Message], reason: str, decision: str | None) -> None:
        """Turn closed messages into a memcell and its memories, drop them from the buffer, index them."""
        run = self.recorder
        self.memcells += 1
        cell = f"memcell-{self.memcells}"
        session = messages[0].session
        date = format_date(session.when) if session.when else (session.date or "")
        with mt.op("extract_memcell", category="extraction", memcell=cell, reason=reason) as op:
            op.use(self.buffer_var)
            if decision:
                op.use(decision)
            for message in messages:
                op.use(message.var)
            if self.offline:
                summary, facts, plans = self._offline_memories(messages)
            else:
                summary, facts, plans = self._llm_memories(messages, date, op)
            op.output(
                cell,
                {"messages": [_line(m) for m in messages], "timestamp": date, "reason": reason},
                category="memcell",
            )
            new: list[tuple[str, str, str]] = []  # (unit id, text, version)
            items = [("episode", cell.replace("memcell", "episode"), summary)]
            items += [("fact", f"fact-{self.memcells}.{i}", f) for i, f in enumerate(facts, 1)]
            items += [("foresight", f"foresight-{self.memcells}.{i}", p) for i, p in enumerate(plans, 1)]
            for kind, unit_id, text in items:
                value = {"memory": text, "kind": kind, "memcell": cell, "timestamp": date}
                new.append((unit_id, text, run.memory(unit_id).create(value, by=op, memcell=cell)))
            del self.pending[: len(messages)]
            del self.buffer[: len(messages)]
            self.buffer_var = op.mutated(self.buffer, name=BUFFER, category="buffer")
        with mt.op("index_memcell", category="construction", memcell=cell) as op:
            for _, _, version in new:
                op.use(version)
            self.index.add([text for _, text, _ in new])
            self.units.extend(unit_id for unit_id, _, _ in new)
            self.texts.extend(text for _, text, _ in new)
            op.set(indexed=len(new), index_size=len(self.texts))

    def _offline_memories(self, messages: list[Message]) -> tuple[str, list[str], list[str]]:
        """Facts by rules; the episode is their extractive summary (each line dated); plans by wording."""
        facts: list[str] = []
        plans: list[str] = []
        for m in messages:
            said = extract_facts(m.turn.speaker, m.turn.rendered(), m.session.when)
            plan = re.compile(rf"\b{re.escape(m.turn.speaker)} {_PLAN}")
            facts.extend(said)
            plans.extend(f for f in said if plan.search(f) or _NEXT.search(f))
        summary = "\n".join(facts) if facts else "\n".join(_line(m) for m in messages)
        return summary, facts, plans

    def _llm_memories(self, messages: list[Message], date: str, op: Any) -> tuple[str, list[str], list[str]]:
        """Episode summary, event-log facts and foresight, one LLM call each; every memory gets the date."""
        lines = "\n".join(m.text for m in messages)
        stamp = f" [said on {date}]" if date else ""
        calls: list[tuple[str, str, type[BaseModel]]] = [
            ("episode", self.config.episode_prompt, EpisodeReply),
            ("event_log", self.config.event_log_prompt, EventLogReply),
        ]
        if self.config.extract_foresight:
            calls.append(("foresight", self.config.foresight_prompt, ForesightReply))
        replies: dict[str, Any] = {}
        for kind, template, schema in calls:
            op.input(f"{kind}_prompt", template, category="prompt")
            content = template.format(date=date or "an unknown date", messages=lines)
            replies[kind] = self._ask(content, schema, f"extract_memcell.{kind}")
        summary = replies["episode"].summary.strip() + stamp
        facts = [f.strip() + stamp for f in replies["event_log"].facts if f.strip()]
        foresight = replies["foresight"].foresight if "foresight" in replies else []
        plans = [p.strip() + stamp for p in foresight if p.strip()]
        return summary, facts, plans

    def _ask(self, prompt: str, schema: type[BaseModel], name: str) -> Any:
        """One LLM call with a validated JSON reply; the client records it as an `llm` op under ours."""
        if self.llm is None:
            raise RuntimeError(f"{self.name}: {name} needs an LLM client")
        return self.llm.chat([{"role": "user", "content": prompt}], schema=schema, name=name).data

    # -- question time ----------------------------------------------------------------------

    def answer(self, question: Question) -> Answer:
        k = self.config.top_k
        with mt.op("retrieve_round1", category="retrieval", top_k=k) as op:
            query_var = op.input("question", question.question, category="query")
            hits = self._search(question.question, k)
            retrieved = self._output(op, hits, round=1)
        with mt.op("check_sufficiency", category="retrieval") as op:
            op.use(query_var)
            op.use(retrieved)
            sufficient, reason, followups = self._sufficiency(question.question, hits, op)
            check = op.output(
                "sufficiency",
                {"sufficient": sufficient, "reason": reason, "followup_queries": followups},
                category="decision",
            )
        if not sufficient and followups:
            with mt.op("retrieve_round2", category="retrieval", top_k=k, queries=len(followups)) as op:
                op.use(query_var)
                op.use(check)
                rankings = [[h.index for h in hits]]
                rankings += [[h.index for h in self._search(q, k)] for q in followups]
                fused = [Hit(i, s) for i, s in rrf_fuse(rankings, k=self.config.rrf_k)]
                hits = self._distinct(fused, k)
                retrieved = self._output(op, hits, round=2)
        context = [self.texts[h.index] for h in hits]
        return answer_question(
            question, context, config=self.config, llm=self.llm, context_var=retrieved, query_var=query_var
        )

    def _search(self, query: str, k: int) -> list[Hit]:
        """Hybrid top `k`, one hit per distinct text (an episode of one fact, a plan that is also a fact)."""
        return self._distinct(self.index.search(query, 2 * k), k) if self.texts else []

    def _distinct(self, hits: list[Hit], k: int) -> list[Hit]:
        """The first `k` hits whose texts differ (identical texts score alike, so the first unit wins)."""
        seen: set[str] = set()
        out = []
        for hit in hits:
            if self.texts[hit.index] not in seen:
                seen.add(self.texts[hit.index])
                out.append(hit)
        return out[:k]

    def _output(self, op: Any, hits: list[Hit], *, round: int) -> str:
        """Record the units read (their latest versions) and the retrieved texts as `retrieved`."""
        run = self.recorder
        for hit in hits:
            op.use(run.memory(self.units[hit.index]).latest_id)
        op.set(units=[self.units[h.index] for h in hits])
        return op.output("retrieved", [self.texts[h.index] for h in hits], category="retrieved", round=round)

    def _sufficiency(self, question: str, hits: list[Hit], op: Any) -> tuple[bool, str, list[str]]:
        """(sufficient, why, follow-up queries): LLM judgement, or offline the top hit's support."""
        speakers = self.conversation.speakers if self.conversation else []
        if self.offline:
            support = overlap(question, self.texts[hits[0].index]) if hits else 0.0
            op.set(support=round(support, 3), threshold=self.config.sufficiency_threshold)
            sufficient = support >= self.config.sufficiency_threshold
            reason, queries = f"top hit support {support:.2f}", []
        else:
            memories = "\n".join(f"{i}. {self.texts[h.index]}" for i, h in enumerate(hits, 1)) or "(none)"
            op.input("sufficiency_prompt", self.config.sufficiency_prompt, category="prompt")
            prompt = self.config.sufficiency_prompt.format(question=question, memories=memories)
            reply: SufficiencyReply = self._ask(prompt, SufficiencyReply, "check_sufficiency.llm")
            sufficient, reason = reply.sufficient, reply.reason
            queries = [q.strip() for q in reply.followup_queries if q.strip()]
        if sufficient:
            return True, reason, []
        # Insufficient without usable queries (always offline): the deterministic variants.
        return False, reason, (queries or followup_queries(question, speakers))[: self.config.max_followups]


def followup_queries(question: str, speakers: list[str]) -> list[str]:
    """Deterministic follow-ups: the key entities alone, keywords with the speaker, a time-focused variant."""
    words = re.findall(r"[A-Za-z0-9][\w'-]*", question)
    keywords = [w.removesuffix("'s") for w in words if w.lower() not in _QUESTION_WORDS]
    keywords = [w for w in keywords if tokenize(w, stopwords=True)]
    entities = [w.removesuffix("'s") for w in words[1:] if w[0].isupper()]
    named = [s for s in speakers if s.lower() in question.lower()] or list(speakers)
    queries = [" ".join(entities)] if entities else []
    queries.append(" ".join(dict.fromkeys([*named, *keywords])))
    if question.lower().startswith(_WHEN):
        queries.append(" ".join([*keywords, "date", "day", "week", "month", "year", "ago", "yesterday"]))
    seen = {question.strip().lower()}
    out = []
    for q in queries:
        if q and q.lower() not in seen:
            seen.add(q.lower())
            out.append(q)
    return out


def _line(message: Message) -> str:
    """A buffered message as prompts and memcells show it: 'Speaker: text [said on date]'."""
    when = message.session.when
    return f"{message.text} [said on {format_date(when)}]" if when else message.text
