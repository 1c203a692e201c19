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

Replay (replay.py): the boundary decision, the memcell's `episode`, `facts` and `foresight`, each round's
`retrieved` and the sufficiency decision are produced (`op.produce`), so a patch of any of them changes
what follows; memory units follow `unit.applied`, so only what was recorded (with the value recorded)
reaches the index. Patched values may be any JSON and are read tolerantly.

Offline, every step is a deterministic rule: facts come from `rules.extract_facts`, the episode is
their dated extractive summary, plans are facts worded as plans (so they repeat a fact's text; search
returns one hit per distinct text), the sufficiency check is the top hit's word overlap with the
question and follow-ups are fixed rewrites of the question.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from pydantic import BaseModel

from .. import trace
from ..datasets import Question, Session
from ..errors import RECOVERABLE_ERRORS
from ..retrieval import Hit, HybridIndex, rrf_fuse, tokenize
from ..text import format_date, tag_lines, untagged
from .answering import answer_question
from .base import TOP_K_GRID, Answer, MemorySystem, Message, SystemConfig
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
from .rules import extract_facts, overlap
from .tunable_routes import ANSWER_ROUTES, ANY, EXTRACTION, RETRIEVAL, on
from .tunables import Grid

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


_RETRIEVED = "retrieve retrieve_round1 retrieve_round2"


class EverMemOSConfig(SystemConfig):
    boundary_prompt: str = BOUNDARY_PROMPT
    episode_prompt: str = EPISODE_PROMPT
    event_log_prompt: str = EVENT_LOG_PROMPT
    foresight_prompt: str = FORESIGHT_PROMPT
    sufficiency_prompt: str = SUFFICIENCY_PROMPT
    #: The buffer closes as an episode once it holds this many messages.
    max_episode_messages: Annotated[int, Grid(4, 6, 8, 12, 16, 24)] = 12
    #: Offline topic shift: the new message shares less than this share of its words with the buffer.
    topic_shift_threshold: Annotated[float, Grid(0.05, 0.1, 0.15, 0.2, 0.3, reads="offline")] = 0.15
    #: Offline topic shift needs a buffer at least this long and a new message of at least 4 content words.
    min_episode_messages: Annotated[int, Grid(2, 3, 4, 6, 8, reads="offline")] = 4
    #: LLM mode: also extract foresight (plans); offline, plans are recognised by their wording.
    extract_foresight: Annotated[bool, Grid(True, False, reads="llm")] = True
    #: Memories handed to the answer step (and searched per round). Offline accuracy is flat in k: LoCoMo
    #: dev 0.187 / 0.184 / 0.184 / 0.182 / 0.181 for k = 5 / 6 / 8 / 10 / 12, sample seeds 0-4 0.57-0.58;
    #: 8 leaves an LLM answerer room for multi-hop questions.
    top_k: Annotated[int, TOP_K_GRID] = 8
    #: Offline sufficiency: the best round-1 hit must hold this share of the question's words.
    sufficiency_threshold: Annotated[float, Grid(0.5, 0.6, 0.67, 0.75, 0.85, 1.0, reads="offline")] = 0.67
    max_followups: Annotated[int, Grid(0, 1, 2, 3, 4, 5)] = 3
    #: Candidates each retriever (BM25, dense) contributes per requested hit before RRF fusion.
    candidates: Annotated[int, Grid(2, 3, 4, 6, 8)] = 4
    #: Reciprocal-rank-fusion constant (hybrid search and round-2 fusion).
    rrf_k: Annotated[int, Grid(10, 30, 60, 100)] = 60


class EverMemOSSystem(MemorySystem):
    name = "evermemos"
    Config = EverMemOSConfig
    config: EverMemOSConfig
    routes = (
        *ANSWER_ROUTES,
        on("extract_memcell", EXTRACTION, "event_log_prompt", 0, "the event log missed the fact"),
        on("extract_memcell", EXTRACTION, "episode_prompt", 0, "the episode summary missed it"),
        on("extract_memcell", EXTRACTION, "foresight_prompt", 0, "the plan was not kept"),
        on("extract_memcell detect_boundary", EXTRACTION, "max_episode_messages", -1, "smaller episodes"),
        on("extract_memcell detect_boundary", EXTRACTION, "topic_shift_threshold", 0, "other boundaries"),
        on("detect_boundary", ANY, "boundary_prompt", 0, "the boundary prompt cut the episode badly"),
        on(_RETRIEVED, RETRIEVAL, "top_k", +1, "the memory ranked below top_k: retrieve more"),
        on(_RETRIEVED, RETRIEVAL, "candidates", +1, "fuse more candidates per retriever"),
        on(_RETRIEVED, RETRIEVAL, "sufficiency_threshold", +1, "ask the second round more often"),
        on(_RETRIEVED, RETRIEVAL, "max_followups", +1, "more follow-up queries in round 2"),
        on("check_sufficiency", ANY, "sufficiency_threshold", +1, "the check stopped too early"),
        on("check_sufficiency", ANY, "sufficiency_prompt", 0, "the sufficiency prompt stopped too early"),
    )
    memtracebench_split = "evermemos"

    def reset(self) -> None:
        self.buffer: list[str] = []  # recorded as the `message_buffer` variable
        self.pending: list[Message] = []  # the same messages, with their variables
        self.buffer_var: str | None = None
        self.memcells = 0
        self.index = HybridIndex(self.embedder, candidates=self.config.candidates, rrf_k=self.config.rrf_k)
        self.units: list[str] = []  # unit id of each indexed document, by index position
        self.texts: list[str] = []
        self.sources: list[str] = []  # the message ids each indexed document came from, comma-joined

    # -- construction -----------------------------------------------------------------------

    def ingest(self, message: Message) -> None:
        with trace.op("buffer_message", category="construction") as op:
            op.use(message.var)
            self.pending.append(message)
            self.buffer.append(tag_lines(message.turn.dia_id, message.text))
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

    def ready(self) -> None:
        self.index.fit()

    def _detect_boundary(self) -> tuple[list[Message], str, str | None]:
        """(messages that close as an episode, why, decision variable); no messages when none close."""
        history, new = self.pending[:-1], self.pending[-1]
        with trace.op("detect_boundary", category="construction") as op:
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
            decided = {"boundary": bool(closed), "reason": reason, "messages": len(closed)}
            value, decision = op.produce("boundary", decided, "decision")
            if value is not decided:
                closed, reason = self._patched_boundary(value, reason)
        return list(closed), reason, decision

    def _patched_boundary(self, value: Any, reason: str) -> tuple[list[Message], str]:
        """What a patched boundary decision closes: nothing unless it says boundary, then its first
        `messages` buffered messages (by default all but the newest, or the newest alone)."""
        if not isinstance(value, dict):
            value = {"boundary": value}
        reason = str(value.get("reason") or reason)
        if not value.get("boundary"):
            return [], reason
        count = value.get("messages")
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            count = len(self.pending) - 1 or len(self.pending)
        return list(self.pending[:count]), reason

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
        with trace.op("extract_memcell", category="extraction", memcell=cell, reason=reason) as op:
            op.use(self.buffer_var)
            if decision:
                op.use(decision)
            for message in messages:
                op.use(message.var)
            if self.offline:
                summary, facts, plans = self._offline_memories(messages)
            else:
                try:
                    summary, facts, plans = self._llm_memories(messages, date, op)
                except RECOVERABLE_ERRORS:  # drop the messages, or every later close fails on them again
                    del self.pending[: len(messages)]
                    del self.buffer[: len(messages)]
                    self.buffer_var = op.mutated(self.buffer, name=BUFFER, category="buffer")
                    raise
            op.output(
                cell,
                {"messages": [_line(m) for m in messages], "timestamp": date, "reason": reason},
                category="memcell",
            )
            # The values stored: produced, so a patch of them is what becomes memory.
            episode = op.produce("episode", summary, category="episode")[0]
            facts_out = op.produce("facts", facts, category="facts")[0]
            plans_out = op.produce("foresight", plans, category="foresight")[0]
            new: list[tuple[str, str, str]] = []  # (unit id, text indexed, version)
            sources = [m.turn.dia_id for m in messages]  # provenance: the memcell's messages
            items = []
            if episode is summary or _text(episode):  # a patch may blank the episode out
                items.append(("episode", cell.replace("memcell", "episode"), _text(episode)))
            items += [("fact", f"fact-{self.memcells}.{i}", f) for i, f in _numbered(facts, facts_out)]
            items += [
                ("foresight", f"foresight-{self.memcells}.{i}", p) for i, p in _numbered(plans, plans_out)
            ]
            for kind, unit_id, text in items:
                unit = run.memory(unit_id)
                value = {"memory": text, "kind": kind, "memcell": cell, "timestamp": date, "sources": sources}
                version = unit.create(value, by=op, memcell=cell)
                action, written = unit.applied
                if action == "create" and version is not None:  # not cancelled by a replay patch
                    new.append((unit_id, _text(written), version))
            del self.pending[: len(messages)]
            del self.buffer[: len(messages)]
            self.buffer_var = op.mutated(self.buffer, name=BUFFER, category="buffer")
        with trace.op("index_memcell", category="construction", memcell=cell) as op:
            for _, _, version in new:
                op.use(version)
            if new:
                self.index.add([text for _, text, _ in new])
            self.units.extend(unit_id for unit_id, _, _ in new)
            self.texts.extend(text for _, text, _ in new)
            self.sources.extend(",".join(sources) for _ in new)
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
        extra: list[str] = []  # texts a patch put in `retrieved` that no indexed unit holds
        with trace.op("retrieve_round1", category="retrieval", top_k=k) as op:
            query_var = op.input("question", question.question, category="query")
            hits = self._search(question.question, k)
            hits, retrieved = self._output(op, hits, extra, round=1)
        with trace.op("check_sufficiency", category="retrieval") as op:
            op.use(query_var)
            op.use(retrieved)
            texts = [self._text_of(h.index, extra) for h in hits]
            sufficient, reason, followups = self._sufficiency(question.question, texts, op)
            decided = {"sufficient": sufficient, "reason": reason, "followup_queries": followups}
            value, check = op.produce("sufficiency", decided, category="decision")
            if value is not decided:
                sufficient, followups = self._patched_sufficiency(question.question, value)
        if not sufficient and followups:
            with trace.op("retrieve_round2", category="retrieval", top_k=k, queries=len(followups)) as op:
                op.use(query_var)
                op.use(check)
                rankings = [[h.index for h in hits]]
                rankings += [[h.index for h in self._search(q, k)] for q in followups]
                fused = [Hit(i, s) for i, s in rrf_fuse(rankings, k=self.config.rrf_k)]
                hits, retrieved = self._output(op, self._distinct(fused, k, extra), extra, round=2)
        context = [self._shown(h.index, extra) for h in hits]
        return answer_question(
            question, context, config=self.config, llm=self.llm, context_var=retrieved, query_var=query_var
        )

    def _search(self, query: str, k: int) -> list[Hit]:
        """Hybrid top `k`, one hit per distinct text (an episode of one fact, a plan that is also a fact)."""
        return self._distinct(self.index.search(query, 2 * k), k) if self.texts else []

    def _distinct(self, hits: list[Hit], k: int, extra: list[str] | None = None) -> list[Hit]:
        """The first `k` hits whose texts differ (identical texts score alike, so the first unit wins)."""
        seen: set[str] = set()
        out = []
        for hit in hits:
            text = self._text_of(hit.index, extra)
            if text not in seen:
                seen.add(text)
                out.append(hit)
        return out[:k]

    def _text_of(self, index: int, extra: list[str] | None) -> str:
        """An indexed text, or past the index's end one a patch added (see `_output`)."""
        return self.texts[index] if index < len(self.texts) else (extra or [])[index - len(self.texts)]

    def _shown(self, index: int, extra: list[str] | None) -> str:
        """A retrieved text as the context holds it: each line behind the ids of the messages of its
        memcell, so the context keeps the memory's provenance (a text a patch added has none)."""
        text = self._text_of(index, extra)
        sources = self.sources[index] if index < len(self.sources) else ""
        return tag_lines(sources, text) if sources and " " not in sources else text

    def _output(self, op: Any, hits: list[Hit], extra: list[str], *, round: int) -> tuple[list[Hit], str]:
        """Record the units read (their latest versions) and produce the retrieved texts as `retrieved`.

        Returns the hits to go on with: those found, or the patched texts as hits (an indexed text by
        its first position, any other text appended to `extra` and numbered after the index's end).
        """
        run = self.recorder
        for hit in hits:
            if hit.index < len(self.units):
                op.use(run.memory(self.units[hit.index]).latest_id)
        op.set(units=[self.units[h.index] for h in hits if h.index < len(self.units)])
        found = [self._shown(h.index, extra) for h in hits]
        value, var = op.produce("retrieved", found, category="retrieved", round=round)
        if value is found:
            return hits, var
        position: dict[str, int] = {}
        for i, text in enumerate([*self.texts, *extra]):
            position.setdefault(text, i)
        patched: list[Hit] = []
        for text in dict.fromkeys(untagged(t) for t in _texts(value)):
            if text not in position:
                extra.append(text)
                position[text] = len(self.texts) + len(extra) - 1
            patched.append(Hit(position[text], 1.0 / (len(patched) + 1)))
        return patched, var

    def _patched_sufficiency(self, question: str, value: Any) -> tuple[bool, list[str]]:
        """(sufficient, follow-ups) of a patched decision; insufficient, no queries: the usual ones."""
        if not isinstance(value, dict):
            value = {"sufficient": value}
        if value.get("sufficient"):
            return True, []
        queries = _texts(value.get("followup_queries"))
        speakers = self.conversation.speakers if self.conversation else []
        return False, (queries or followup_queries(question, speakers))[: self.config.max_followups]

    def _sufficiency(self, question: str, texts: list[str], op: Any) -> tuple[bool, str, list[str]]:
        """(sufficient, why, follow-up queries): LLM judgement, or offline the top hit's support."""
        speakers = self.conversation.speakers if self.conversation else []
        if self.offline:
            support = overlap(question, texts[0]) if texts else 0.0
            op.set(support=round(support, 3), threshold=self.config.sufficiency_threshold)
            sufficient = support >= self.config.sufficiency_threshold
            reason, queries = f"top hit support {support:.2f}", []
        else:
            memories = "\n".join(f"{i}. {text}" for i, text in enumerate(texts, 1)) or "(none)"
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


def _text(value: Any) -> str:
    """A (possibly patched) memory value as text: a memory dict's `memory`, other JSON as JSON."""
    if isinstance(value, dict):
        value = value.get("memory", value.get("text"))
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _texts(value: Any) -> list[str]:
    """A (possibly patched) list of memories or queries as non-empty texts."""
    items = value if isinstance(value, list | tuple) else [] if value is None else [value]
    return [text for text in (_text(item) for item in items) if text.strip()]


def _numbered(original: list[str], produced: Any) -> list[tuple[int, str]]:
    """(number, text) of each produced memory: a text the extraction made keeps its number, a new one is
    numbered after them, so a patch's memory overrides (keyed by unit id) still name the same texts."""
    if produced is original:
        return list(enumerate(original, 1))
    free: dict[str, list[int]] = {}
    for number, text in enumerate(original, 1):
        free.setdefault(text, []).append(number)
    numbered, extra = [], len(original)
    for text in _texts(produced):
        if free.get(text):
            numbered.append((free[text].pop(0), text))
        else:
            extra += 1
            numbered.append((extra, text))
    return numbered


def _line(message: Message) -> str:
    """A buffered message as prompts and memcells show it: 'Speaker: text [said on date]'."""
    when = message.session.when
    return f"{message.text} [said on {format_date(when)}]" if when else message.text
