#!/usr/bin/env python
"""Build the blind held-out set of memory-failure graphs (``heldout_blind``).

Every graph is recorded with the real ``smartcomment`` 0.1.2 package, following
the instrumentation conventions of MemBase / zjunlp MemTrace (Mem0, NaiveRAG and
Long-Context layers, the search runner and the evaluation runner with its
``question-answering`` and ``llm-judge`` operations).  Each run has a
construction stage, a search stage and an evaluation stage; the graph is
exported after each stage and re-imported (``ExecNetwork.import_graph``) for the
next one, as MemBase does, so one file holds the three stages as sessions.

Every "LLM" step (fact extraction, update decision, question answering, judge)
is deterministic Python that behaves ideally unless a planted fault applies to
that operation.  Labels are not typed by hand: for every failed question the
script re-runs the pipeline counterfactually (faults of strictly earlier
operations kept, the candidate operation repaired, every later operation ideal)
and takes the earliest operation whose repair flips the question back to
correct (and whose fault, kept with later operations ideal, still fails it).
The result is asserted against the label the plan expects.

Run:  /work/main/.venv/bin/python benchmarks/heldout_blind/generate.py
      (add --check to only validate an existing set/)

Output: set/<system>/<conversation>.json, set/manifest.json.
Do not tune anything on this set.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import inspect
import json
import random
import re
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

import smartcomment
import smartcomment.runtime.network as _sc_network
import smartcomment.schema.base as _sc_base
import smartcomment.schema.operation as _sc_operation
import smartcomment.schema.session as _sc_session
from smartcomment import (
    IdentityRegistry,
    comment_graph,
    comment_link,
    comment_mutation,
    comment_op,
    comment_op_scope,
    comment_session,
    comment_variable,
    current_graph,
    setup_logger,
)
from smartcomment.runtime import ExecNetwork

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "set"
SYSTEMS = ("mem0", "rag", "long_context")

setup_logger("ERROR")

# ---------------------------------------------------------------------------
# Determinism: smartcomment draws ids from uuid4() and times from
# datetime.now().  Both are replaced by a seeded source so that a re-run writes
# byte-identical files.  The clock advances 0-2 ms per timestamp (so fast steps
# collide at millisecond resolution, as in real runs) and jumps for simulated
# LLM latency, the 0.2 s pause MemBase takes between messages, and the gaps
# between the construction, search and evaluation stages.
# ---------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.reset(0, datetime(2025, 1, 1))

    def reset(self, seed: int, start: datetime) -> None:
        self.rng = random.Random(seed)
        self.t = start

    def now(self) -> datetime:
        t = self.t
        self.t += timedelta(microseconds=self.rng.choice((0, 0, 0, 1000, 1000, 2000)))
        return t

    def sleep(self, lo: float, hi: float | None = None) -> None:
        secs = lo if hi is None else self.rng.uniform(lo, hi)
        self.t += timedelta(seconds=secs)

    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)


CLOCK = _Clock()


class _SeededDateTime(datetime):
    @classmethod
    def now(cls, tz=None):
        return CLOCK.now()


_sc_base.datetime = _SeededDateTime
_sc_operation.uuid4 = CLOCK.uuid4
_sc_session.uuid4 = CLOCK.uuid4
_sc_network.uuid4 = CLOCK.uuid4


def _seed(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:12], 16)


# Identity strategies registered by the MemBase layers.
IdentityRegistry.register("mem0-dict", lambda v: f"memory-unit-{v['id']}", exist_ok=True)
IdentityRegistry.register("naive-rag-dict", lambda v: f"memory-unit-{v['id']}", exist_ok=True)

enc_json = partial(json.dumps, ensure_ascii=False, indent=4, sort_keys=True)

LLM_MODEL = "gpt-4.1-mini"
EMB_MODEL = "Qwen3-Embedding-4B"
QA_MODEL = "gpt-4.1-mini"
JUDGE_MODEL = "claude-opus-4-5"

MSG_COMMENT = (
    "An input message fed into the memory pipeline. It triggers the memory system to extract "
    "valuable information that is worth storing in the memory store. The name denotes the speaker "
    "of the message, the role denotes the role of the speaker, and the timestamp denotes the time "
    "when the message is sent."
)

FACT_EXTRACTION_PROMPT = (
    "You are a personal information organiser. Read the conversation message below and write down "
    "concise, self-contained facts about the people in it: things that happened, plans, preferences, "
    "relationships, dates, places and numbers. Use the speaker metadata to decide who each fact is "
    'about and keep people apart. Return JSON of the form {"facts": ["..."]}, or {"facts": []} '
    "when the message holds nothing worth remembering."
)

UPDATE_DECISION_PROMPT = (
    "You are a memory manager. Compare the newly retrieved facts with the existing memories and "
    "decide, for each one, whether to ADD it as a new memory, UPDATE an existing memory (keep its id "
    "and rewrite its text so that no earlier detail is lost), DELETE an existing memory that the new "
    "facts contradict, or do NONE when the fact is already stored."
)

QA_PROMPT = (
    "You are answering a question about a long-running conversation, using only the memories "
    "below.\n\n$context\n\nQuestion: $question\n"
    "Answer in one short sentence. If the memories do not contain the answer, say so."
)

JUDGE_PROMPTS = {
    "locomo-judge": (
        'Your task is to label an answer to a question as "CORRECT" or "WRONG". You will be given '
        "a question, a gold (ground truth) answer and a generated answer. Be generous: the generated "
        "answer may be longer or phrased differently, but it must refer to the same thing as the gold "
        "answer; for dates, the same date or period counts.\n\nQuestion: $question\n"
        "Gold answer: $golden_answers\nGenerated answer: $prediction\n\n"
        'Return a JSON object with the key "label" (and optionally "reasoning").'
    ),
    "longmemeval-knowledge-update": (
        "I will give you a question, a correct answer, and a response from a model. Answer yes if the "
        "response contains the correct answer, otherwise answer no. If the response contains earlier "
        "information together with the updated answer, it counts as correct as long as the updated "
        "answer is the one given as the answer.\n\nQuestion: $question\nCorrect Answer: $golden_answers\n"
        "Model Response: $prediction\n\nIs the model response correct? Answer yes or no only."
    ),
    "longmemeval-multi-session": (
        "I will give you a question, a correct answer, and a response from a model. Answer yes if the "
        "response contains the correct answer, otherwise answer no. If the response only contains a "
        "subset of the information required, answer no.\n\nQuestion: $question\n"
        "Correct Answer: $golden_answers\nModel Response: $prediction\n\n"
        "Is the model response correct? Answer yes or no only."
    ),
    "longmemeval-temporal-reasoning": (
        "I will give you a question, a correct answer, and a response from a model. Answer yes if the "
        "response gives the correct date; do not penalise off-by-one errors in the number of days.\n\n"
        "Question: $question\nCorrect Answer: $golden_answers\nModel Response: $prediction\n\n"
        "Is the model response correct? Answer yes or no only."
    ),
    "longmemeval-single-session-user": (
        "I will give you a question, a correct answer, and a response from a model. Answer yes if the "
        "response contains the correct answer, otherwise answer no.\n\nQuestion: $question\n"
        "Correct Answer: $golden_answers\nModel Response: $prediction\n\n"
        "Is the model response correct? Answer yes or no only."
    ),
}


def remove_code_blocks(content: str) -> str:
    """Strip a surrounding ```lang ... ``` fence and any <think> block."""
    text = content.strip()
    m = re.match(r"^```[a-zA-Z0-9]*\n([\s\S]*?)\n```$", text)
    if m:
        text = m.group(1).strip()
    return re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL).strip()


def build_context(memories):
    return "\n\n".join(f"### Memory {i + 1}:\n{mem['formatted']}" for i, mem in enumerate(memories))


def parse_locomo_judge(content: str) -> float:
    return float("correct" in content.lower())


def parse_lme_judge(content: str) -> float:
    return float("yes" in content.lower())


CONTEXT_BUILDER_SRC = inspect.getsource(build_context)

# ---------------------------------------------------------------------------
# Text utilities: a crude tokenizer (token budgets) and a lexical scorer
# (stand-in for embedding similarity).
# ---------------------------------------------------------------------------

_STOP = set(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "i",
        "you",
        "he",
        "she",
        "it",
        "we",
        "they",
        "me",
        "him",
        "her",
        "us",
        "them",
        "my",
        "your",
        "his",
        "its",
        "our",
        "their",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "there",
        "here",
        "not",
        "no",
        "yes",
        "so",
        "if",
        "then",
        "than",
        "too",
        "very",
        "just",
        "also",
        "up",
        "out",
        "into",
        "over",
        "after",
        "before",
        "again",
        "still",
        "now",
        "some",
        "any",
        "all",
        "both",
        "each",
        "more",
        "most",
        "other",
        "such",
        "only",
        "own",
        "same",
        "can",
        "will",
        "would",
        "could",
        "should",
        "may",
        "might",
        "must",
        "shall",
        "s",
        "t",
        "don",
        "say",
        "says",
        "said",
        "speaker",
        "role",
        "user",
        "assistant",
        "timestamp",
        "memory",
        "time",
        "below",
        "message",
        "metadata",
        "name",
        "get",
        "got",
        "go",
        "going",
        "went",
        "come",
        "came",
    ]
)


def ntok(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


def _words(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[a-z0-9£]+", text.lower()):
        if w in _STOP or len(w) < 2:
            continue
        if len(w) > 4 and w.endswith("s"):
            w = w[:-1]
        out.add(w)
    return out


def lexical(query: str, text: str) -> float:
    q, d = _words(query), _words(text)
    if not q or not d:
        return 0.0
    return len(q & d) / (len(q) ** 0.5 * (len(d) + 4) ** 0.25)


def shown_score(raw: float, boosted: bool, salt: str) -> float:
    jitter = (int(hashlib.md5(salt.encode()).hexdigest()[:4], 16) % 400) / 10000.0
    return round(min(0.93, 0.28 + 0.42 * min(1.0, raw) + (0.12 if boosted else 0.0) + jitter), 4)


def h(text: str) -> int:
    return int(hashlib.md5(text.encode()).hexdigest()[:8], 16)


# ---------------------------------------------------------------------------
# Data model.  An *atom* is one piece of information a turn states (its key is
# what questions require); a turn may state several.  Memory units, documents
# and the long-context unit carry the atoms of the text they really contain,
# which is how the answer step (and the labelling) knows what a context holds.
# ---------------------------------------------------------------------------


@dataclass
class Atom:
    fact: str
    keys: tuple
    supersedes: str | None = None
    merged: str | None = None


def A(fact, *keys, supersedes=None, merged=None) -> Atom:
    return Atom(fact, tuple(keys), supersedes, merged)


@dataclass
class Msg:
    id: str
    ref: str
    name: str
    role: str
    content: str
    timestamp: str
    metadata: dict
    atoms: list
    session_id: str

    @property
    def keys(self) -> set:
        return {k for a in self.atoms for k in a.keys}


@dataclass
class Sess:
    id: str
    timestamp: str
    messages: list
    metadata: dict


@dataclass
class Question:
    key: str
    id: str
    text: str
    gold: list
    need: list
    evidence: list
    correct: str
    kind: str = "single"
    items: dict | None = None
    fallback: str | None = None
    ae: bool = False
    metadata: dict = field(default_factory=dict)
    judge_template: str = "locomo-judge"
    gold_as_str: bool = False


@dataclass
class Conv:
    key: str
    style: str
    user_id: str
    sessions: list
    questions: list
    traj_meta: dict
    dataset_cls: str
    source: str
    string_messages: bool = False

    @property
    def messages(self):
        return [m for s in self.sessions for m in s.messages]

    def msg(self, ref: str) -> Msg:
        for m in self.messages:
            if m.ref == ref:
                return m
        raise KeyError(ref)

    def q(self, key: str) -> Question:
        for q in self.questions:
            if q.key == key:
                return q
        raise KeyError(key)


def t(spk, text, *atoms, img=None, ans=False):
    return {"spk": spk, "text": text, "atoms": list(atoms), "img": img, "ans": ans}


def _locomo_dt_string(iso: str) -> str:
    d = datetime.fromisoformat(iso)
    return (
        f"{d.hour % 12 or 12}:{d.minute:02d} {'am' if d.hour < 12 else 'pm'} "
        f"on {d.day} {d.strftime('%B')}, {d.year}"
    )


def locomo_conv(key, sample, names, sessions, questions, *, bare_ids=False, string_messages=False):
    speaker_a, speaker_b = names[0][1], names[1][1]
    letter = dict(names)
    sess_objs = []
    for s_idx, (ts, turns) in enumerate(sessions, start=1):
        msgs = []
        for t_idx, tu in enumerate(turns, start=1):
            ref = f"D{s_idx}:{t_idx}"
            mid = ref if bare_ids else f"U{sample}:{ref}"
            name = letter[tu["spk"]]
            meta = {"speaker_tag": "speaker_a" if name == speaker_a else "speaker_b", "dia_id": ref}
            if tu["img"]:
                meta["img_url"] = [tu["img"][0]]
                meta["blip_caption"] = tu["img"][1]
            msgs.append(
                Msg(
                    mid,
                    ref,
                    name,
                    "user",
                    tu["text"],
                    ts,
                    meta,
                    tu["atoms"],
                    f"locomo-{sample}-session-{s_idx}",
                )
            )
        sess_objs.append(
            Sess(f"locomo-{sample}-session-{s_idx}", ts, msgs, {"session_date_time": _locomo_dt_string(ts)})
        )
    conv = Conv(
        key,
        "locomo-bare-ids" if bare_ids else "locomo",
        f"locomo-{sample}",
        sess_objs,
        [],
        {"speaker_a": speaker_a, "speaker_b": speaker_b},
        "LoCoMo",
        "synthetic:locomo-style (heldout_blind)",
        string_messages,
    )
    cat_names = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
    for q_idx, qs in enumerate(questions, start=1):
        ev_ids = [r if bare_ids else f"U{sample}:{r}" for r in qs["ev"]]
        cat = qs.get("cat", 4)
        conv.questions.append(
            Question(
                key=qs["key"],
                id=f"locomo-qa-{sample}-{q_idx}",
                text=qs["text"],
                gold=[qs["gold"]],
                need=qs["need"],
                evidence=ev_ids,
                correct=qs["correct"],
                kind=qs.get("kind", "single"),
                items=qs.get("items"),
                fallback=qs.get("fallback"),
                ae=qs.get("ae", False),
                metadata={
                    "question_type": cat_names[cat],
                    "category_id": cat,
                    "evidence": ev_ids,
                    "speaker_names": [speaker_a, speaker_b],
                },
                gold_as_str=qs.get("gold_as_str", q_idx % 3 == 0),
            )
        )
    return conv


def lme_conv(key, sample, qid, qtype, qdate, sessions, question):
    sess_objs, evidence, answer_sessions = [], [], []
    for j, (sid, ts, turns) in enumerate(sessions, start=1):
        msgs = []
        for k, tu in enumerate(turns, start=1):
            mid = f"longmemeval-message-{sample}-{j}-{k}"
            role = "user" if tu["spk"] == "u" else "assistant"
            msgs.append(
                Msg(
                    mid,
                    f"s{j}:{k}",
                    role,
                    role,
                    tu["text"],
                    ts,
                    {"has_answer": bool(tu["ans"])},
                    tu["atoms"],
                    sid,
                )
            )
            if tu["ans"]:
                evidence.append(mid)
                if sid not in answer_sessions:
                    answer_sessions.append(sid)
        sess_objs.append(Sess(sid, ts, msgs, {}))
    conv = Conv(
        key,
        "longmemeval",
        f"longmemeval-{qid}",
        sess_objs,
        [],
        {},
        "LongMemEval",
        "synthetic:longmemeval-style (heldout_blind)",
    )
    conv.questions.append(
        Question(
            key="q1",
            id=qid,
            text=question["text"],
            gold=[question["gold"]],
            need=question["need"],
            evidence=evidence,
            correct=question["correct"],
            kind=question.get("kind", "single"),
            items=question.get("items"),
            fallback=question.get("fallback"),
            metadata={
                "question_type": qtype,
                "answer_session_ids": answer_sessions,
                "evidence": evidence,
                "question_date": qdate,
            },
            judge_template=f"longmemeval-{qtype}",
            gold_as_str=question.get("gold_as_str", True),
        )
    )
    return conv


# ---------------------------------------------------------------------------
# Conversations (written for this set; people, places and topics are invented).
# ---------------------------------------------------------------------------


def conv_ysolde_corentin() -> Conv:
    Y, C = "Y", "C"
    sessions = [
        (
            "2024-01-13T19:05:00",
            [
                t(C, "Ysolde! Happy new year, sorry I went quiet over the holidays."),
                t(
                    Y,
                    "No worries at all. I spent most of the break covered in clay dust, honestly.",
                    A("Ysolde spent the winter holidays doing pottery at home", "y_holiday"),
                ),
                t(C, "Still the little wheel in the box room?"),
                t(
                    Y,
                    "Yes, but big news: I bought a second-hand kiln from the old art department at Marrowby "
                    "Grammar. Forty kilos of steel and it barely fit in the hatchback.",
                    A(
                        "Ysolde bought a second-hand kiln from the art department of Marrowby Grammar",
                        "y_kiln",
                    ),
                ),
                t(C, "That's brilliant. Where's it going to live?"),
                t(
                    Y,
                    "In the shed, once Bram rewires it. Bram's my neighbour, he's an electrician.",
                    A(
                        "Ysolde's neighbour Bram, an electrician, is going to rewire her shed for the kiln",
                        "y_bram",
                    ),
                ),
                t(
                    C,
                    "Speaking of changes, I've been offered a job at a surveying firm in Lindhollow. "
                    "I haven't decided yet.",
                    A(
                        "Corentin was offered a job at a surveying firm in Lindhollow but has not decided whether "
                        "to take it",
                        "c_job_offer",
                    ),
                ),
                t(Y, "Lindhollow is gorgeous. You'd be right by the quarry crags too."),
                t(
                    C,
                    "That's half the appeal. At the moment I boulder three nights a week at Grip Lab.",
                    A("Corentin boulders three nights a week at the Grip Lab climbing gym", "c_griplab"),
                ),
            ],
        ),
        (
            "2024-02-02T12:40:00",
            [
                t(
                    Y,
                    "Guess who has two new housemates? We adopted two ferrets from the rescue in Saltmere on "
                    "Saturday.",
                    A("Ysolde adopted two ferrets from a rescue in Saltmere last Saturday", "y_adopt"),
                ),
                t(C, "Ferrets! What are they called?"),
                t(
                    Y,
                    "Pim and Quill. Pim is the chaotic one.",
                    A("Ysolde's ferrets are named Pim and Quill", "y_pim", "y_quill"),
                ),
                t(
                    C,
                    "Ha. My sister Ottilie has a ferret too, called Biscuit. She'll be thrilled.",
                    A("Corentin's sister Ottilie has a ferret called Biscuit", "c_ottilie_ferret"),
                ),
                t(Y, "We need a ferret playdate. Did you take the Lindhollow job in the end?"),
                t(
                    C,
                    "I did! I start on the 19th of February. Mostly drone surveys.",
                    A(
                        "Corentin accepted the surveying job in Lindhollow and starts on 19 February 2024, mostly "
                        "doing drone surveys",
                        "c_job_start",
                    ),
                ),
                t(Y, "Congratulations! So you'll move?"),
                t(
                    C,
                    "Eventually. For now I'll commute from Vellacourt Lane.",
                    A("Corentin lives on Vellacourt Lane", "c_vellacourt"),
                ),
                t(
                    Y,
                    "[shares a photo] First firing test in the kiln, just bisque tiles.",
                    A("Ysolde did a first bisque test firing in her new kiln", "y_bisque"),
                    img=(
                        "https://photos.example.invalid/kiln_tiles.jpg",
                        "a photo of pale clay tiles on a kiln shelf",
                    ),
                ),
            ],
        ),
        (
            "2024-03-09T16:20:00",
            [
                t(
                    C,
                    "Update: I found a flat in Lindhollow, on Kestrel Quay. Moving on the 1st of April.",
                    A(
                        "Corentin is moving to a flat on Kestrel Quay in Lindhollow on 1 April 2024",
                        "c_kestrel",
                        supersedes="c_vellacourt",
                        merged="Corentin is moving from Vellacourt Lane to a flat on Kestrel Quay in Lindhollow on "
                        "1 April 2024",
                    ),
                ),
                t(
                    Y,
                    "Kestrel Quay, by the old ropeworks? Fancy.",
                    A("Corentin's new flat on Kestrel Quay is by the old ropeworks", "c_ropeworks"),
                ),
                t(C, "That's the one."),
                t(
                    C,
                    "And the climbing gym there, Overhang, is open till midnight.",
                    A(
                        "The Overhang climbing gym in Lindhollow, where Corentin will climb, is open until midnight",
                        "c_overhang",
                    ),
                ),
                t(
                    Y,
                    "Pim escaped into the kiln shed yesterday and came out grey with clay dust.",
                    A("Ysolde's ferret Pim escaped into the kiln shed", "y_pim_escape"),
                ),
                t(C, "Amazing. How's the pottery going?"),
                t(
                    Y,
                    "I've signed up to sell at the Fairhythe spring market in May, did it this morning.",
                    A("Ysolde signed up to sell pottery at the Fairhythe spring market in May", "y_market"),
                ),
                t(C, "What are you making for it?"),
                t(
                    Y,
                    "Mostly mugs with a tenmoku glaze, and a few bud vases.",
                    A(
                        "Ysolde is making tenmoku-glazed mugs and bud vases for the Fairhythe market",
                        "y_mugs",
                        "y_vases",
                    ),
                ),
                t(
                    C,
                    "My colleague Fenwick sells ceramic lamps at Fairhythe, I'll introduce you.",
                    A(
                        "Corentin's colleague Fenwick sells ceramic lamps at the Fairhythe market",
                        "c_fenwick",
                    ),
                ),
            ],
        ),
        (
            "2024-04-20T10:05:00",
            [
                t(Y, "How's the new flat?"),
                t(
                    C,
                    "Love it. Ottilie came to visit, and she's moving to Saltmere next month, which is funny "
                    "given your ferrets.",
                    A("Corentin's sister Ottilie is moving to Saltmere in May 2024", "c_ottilie_move"),
                ),
                t(Y, "Ha, she can visit the rescue. Are you still climbing loads?"),
                t(
                    C,
                    "At Overhang, three times this week already.",
                    A("Corentin climbed at Overhang three times in one week", "c_overhang3"),
                ),
                t(
                    Y,
                    "I sold my old wheel to a student in Marrowby, by the way.",
                    A("Ysolde sold her old pottery wheel to a student in Marrowby", "y_wheel"),
                ),
                t(C, "So the box room is free?"),
                t(
                    Y,
                    "It's the ferret room now. They've claimed the hammock.",
                    A("Ysolde's box room is now the ferret room", "y_ferret_room"),
                ),
                t(
                    C,
                    "Of course he has. We might go to Tarrow Fen for birdwatching over the long weekend, we'll see.",
                    A("Corentin might go birdwatching at Tarrow Fen over the long weekend", "c_tarrow_plan"),
                ),
            ],
        ),
        (
            "2024-05-18T18:30:00",
            [
                t(C, "How did Fairhythe go?"),
                t(
                    Y,
                    "Sold out of mugs by noon! Thirty-two mugs in total.",
                    A("Ysolde sold 32 mugs at the Fairhythe spring market, selling out by noon", "y_sold32"),
                ),
                t(C, "Amazing!"),
                t(Y, "Did you make it to Tarrow Fen?"),
                t(
                    C,
                    "No, we ended up kayaking at Brennock Water instead.",
                    A(
                        "Corentin went kayaking at Brennock Water over the long weekend instead of going to Tarrow Fen",
                        "c_brennock",
                    ),
                ),
                t(
                    C,
                    "Also, Ottilie changed her mind about the flat she viewed. Still moving, just a different street.",
                    A(
                        "Corentin's sister Ottilie changed her mind about the flat she viewed",
                        "c_ottilie_flat",
                    ),
                ),
                t(
                    Y,
                    "The shed wiring is finally finished, so the kiln is officially live.",
                    A("Ysolde's shed wiring is finished, so her kiln is now in use", "y_shed_done"),
                ),
                t(C, "Time for a bigger market, then."),
            ],
        ),
    ]
    questions = [
        dict(
            key="q1",
            text="Where did Ysolde get her kiln?",
            gold="From the art department at Marrowby Grammar",
            need=["y_kiln"],
            ev=["D1:4"],
            correct="She bought it second-hand from the old art department at Marrowby Grammar.",
            fallback="The memories don't say where she got the kiln.",
        ),
        dict(
            key="q2",
            text="What are the names of Ysolde's ferrets?",
            gold="Pim and Quill",
            need=["y_pim", "y_quill"],
            ev=["D2:3"],
            kind="list",
            items={"y_pim": "Pim", "y_quill": "Quill"},
            correct="Pim and Quill.",
            fallback="The memories don't give the ferrets' names.",
        ),
        dict(
            key="q3",
            text="When did Ysolde adopt her ferrets?",
            gold="27 January 2024",
            cat=2,
            need=["y_adopt"],
            ev=["D2:1"],
            correct="On Saturday 27 January 2024.",
            fallback="Sometime in early 2024.",
        ),
        dict(
            key="q4",
            text="Where did Corentin live before he moved to Kestrel Quay?",
            gold="Vellacourt Lane",
            cat=1,
            need=["c_vellacourt"],
            ev=["D2:8"],
            correct="On Vellacourt Lane.",
            fallback="The memories only say that he moved to Kestrel Quay in Lindhollow.",
        ),
        dict(
            key="q5",
            text="When did Corentin start his new job in Lindhollow?",
            gold="19 February 2024",
            cat=2,
            need=["c_job_start"],
            ev=["D2:6"],
            correct="On 19 February 2024.",
            fallback="He was offered the job but had not decided whether to take it.",
        ),
        dict(
            key="q6",
            text="What did Ysolde make to sell at the Fairhythe spring market?",
            gold="Tenmoku-glazed mugs and bud vases",
            need=["y_mugs", "y_vases"],
            ev=["D3:9"],
            kind="list",
            items={"y_mugs": "tenmoku-glazed mugs", "y_vases": "bud vases"},
            correct="Tenmoku-glazed mugs and bud vases.",
            fallback="Pottery; the memories don't say which pieces.",
        ),
        dict(
            key="q7",
            text="How many mugs did Ysolde sell at the Fairhythe market?",
            gold="32",
            need=["y_sold32"],
            ev=["D5:2"],
            correct="32, she sold out by noon.",
            fallback="The memories don't say how many she sold.",
        ),
        dict(
            key="q8",
            text="What did Corentin do over the long weekend in May?",
            gold="He went kayaking at Brennock Water",
            need=["c_brennock"],
            ev=["D5:5"],
            correct="He went kayaking at Brennock Water.",
            fallback="He went birdwatching at Tarrow Fen.",
        ),
        dict(
            key="q9",
            text="Who rewired Ysolde's shed for the kiln?",
            gold="Her neighbour Bram, an electrician",
            need=["y_bram"],
            ev=["D1:6"],
            correct="Her neighbour Bram, who is an electrician.",
            fallback="The memories don't say who did the wiring.",
        ),
        dict(
            key="q10",
            text="Where is Corentin's sister moving to?",
            gold="Saltmere",
            need=["c_ottilie_move"],
            ev=["D4:2"],
            correct="To Saltmere.",
            fallback="The memories don't say where she is moving.",
        ),
        dict(
            key="q11",
            text="Which climbing gym did Corentin use before he moved to Lindhollow?",
            gold="Grip Lab",
            cat=1,
            need=["c_griplab"],
            ev=["D1:9"],
            correct="Grip Lab.",
            fallback="Overhang.",
        ),
        dict(
            key="q12",
            text="What did Ysolde sell to a student in Marrowby?",
            gold="Her kiln",
            need=["y_wheel"],
            ev=["D4:5"],
            correct="Her old pottery wheel.",
            ae=True,
        ),
        dict(
            key="q13",
            text="What landmark is Corentin's new flat on Kestrel Quay next to?",
            gold="The old ropeworks",
            need=["c_ropeworks"],
            ev=["D3:3"],
            correct="The old ropeworks.",
            fallback="The memories don't mention a landmark.",
        ),
    ]
    return locomo_conv("ysolde_corentin", 3, [("Y", "Ysolde"), ("C", "Corentin")], sessions, questions)


def conv_idunn_taavi() -> Conv:
    I, T = "I", "T"
    sessions = [
        (
            "2023-09-02T09:15:00",
            [
                t(T, "Morning! Did the bees survive that heatwave?"),
                t(
                    I,
                    "All three hives made it. I even took off the first honey, about eleven jars.",
                    A("Idunn keeps three beehives", "i_three_hives"),
                    A("Idunn took about eleven jars of honey from her first extraction", "i_honey"),
                ),
                t(T, "Eleven! Where are the hives these days?"),
                t(
                    I,
                    "Still on my allotment plot on Quillon Street, behind the water butts.",
                    A("Idunn keeps her beehives on her allotment plot on Quillon Street", "i_hive_loc"),
                ),
                t(
                    T,
                    "I joined a choir, by the way. The Saltmere Chamber Singers. I'm in the basses.",
                    A("Taavi joined the Saltmere Chamber Singers and sings bass", "t_choir"),
                ),
                t(I, "You, singing! When's the first concert?"),
                t(
                    T,
                    "A carol concert in December at St Brannoc's church.",
                    A(
                        "Taavi's choir gives its first concert, a carol concert, at St Brannoc's church in December",
                        "t_venue",
                    ),
                ),
                t(I, "I'll be there. Work is mad, I've got a translation deadline."),
                t(T, "Which book is it?"),
                t(
                    I,
                    "A Finnish crime novel, Suolahedelmä. The English title will be The Salt Orchard.",
                    A(
                        "Idunn is translating the Finnish crime novel Suolahedelmä, English title The Salt Orchard",
                        "i_novel",
                    ),
                ),
            ],
        ),
        (
            "2023-10-14T17:50:00",
            [
                t(
                    I,
                    "I handed in the manuscript on Thursday! Two days early.",
                    A("Idunn handed in her translation manuscript on Thursday, two days early", "i_handin"),
                ),
                t(T, "Brilliant. Are you celebrating?"),
                t(I, "With a honey cake, obviously."),
                t(
                    T,
                    "I've signed up for the Marrowby half marathon in March. My first one.",
                    A("Taavi signed up for the Marrowby half marathon in March 2024, his first", "t_half"),
                ),
                t(I, "Brave. Are you following a plan?"),
                t(
                    T,
                    "My physio, Dr Anouk Verhaegen, wrote me one. Four runs a week.",
                    A(
                        "Taavi's physio Dr Anouk Verhaegen wrote him a training plan of four runs a week",
                        "t_physio",
                    ),
                ),
                t(
                    I,
                    "My brother Eskil ran that race last year in 1:52.",
                    A("Idunn's brother Eskil ran the Marrowby half marathon last year in 1:52", "i_eskil"),
                ),
                t(
                    T,
                    "Respectable! I'm aiming for under two hours.",
                    A("Taavi is aiming to finish the half marathon in under two hours", "t_goal"),
                ),
                t(
                    I,
                    "One of the hives has gone queenless, I'm worried.",
                    A("One of Idunn's hives has gone queenless", "i_queenless"),
                ),
                t(T, "Can you fix that?"),
                t(
                    I,
                    "I'll probably combine it with the strongest colony.",
                    A(
                        "Idunn plans to combine the queenless hive with her strongest colony",
                        "i_combine_plan",
                    ),
                ),
            ],
        ),
        (
            "2023-12-17T21:05:00",
            [
                t(T, "The carol concert was tonight!"),
                t(
                    I,
                    "I know, I was in row three! You were great in the Rutter piece.",
                    A("Idunn praised Taavi's singing in the Rutter piece at the carol concert", "t_rutter"),
                ),
                t(T, "Ha, thank you!"),
                t(
                    T,
                    "We raised £640 for the food bank.",
                    A("Taavi's carol concert raised £640 for the food bank", "t_640"),
                ),
                t(
                    I,
                    "Amazing. I combined the hives in November, so two colonies are going into winter.",
                    A(
                        "Idunn combined the queenless hive in November and now has two bee colonies",
                        "i_two",
                        supersedes="i_three_hives",
                        merged="Idunn has two bee colonies after combining the queenless hive in November; she "
                        "previously kept three beehives",
                    ),
                ),
                t(T, "Sensible. Any new translation work?"),
                t(
                    I,
                    "A publisher in Kestrel Quay wants me for a poetry collection, but I haven't signed anything.",
                    A(
                        "A Kestrel Quay publisher offered Idunn a poetry collection to translate; she has not signed yet",
                        "i_poetry_offer",
                    ),
                ),
                t(
                    T,
                    "Take it! Training's going well, my longest run was 16 km last Sunday.",
                    A("Taavi's longest training run so far is 16 km", "t_16k"),
                ),
                t(I, "Does the knee hold up?"),
                t(T, "Mostly. Anouk says to keep the long runs slow."),
            ],
        ),
        (
            "2024-03-24T14:30:00",
            [
                t(I, "Well?? How was Marrowby?"),
                t(
                    T,
                    "1:57:32! Under two hours!",
                    A("Taavi finished the Marrowby half marathon in 1:57:32", "t_finish"),
                ),
                t(I, "YES. I'm so proud of you."),
                t(T, "How are the bees?"),
                t(
                    I,
                    "Both colonies came through winter. And I said yes to the poetry book after all, signed last week.",
                    A("Idunn signed the contract to translate the poetry collection", "i_poetry_signed"),
                ),
                t(T, "Congratulations! What's it called?"),
                t(
                    I,
                    "Lichen and Lanternlight. Forty-two poems.",
                    A(
                        "The poetry collection Idunn is translating is Lichen and Lanternlight, 42 poems",
                        "i_poetry_title",
                    ),
                ),
                t(T, "Pretty title."),
                t(
                    T,
                    "The choir is doing a summer concert at Ashgrove Lido in July, can you believe it.",
                    A("Taavi's choir will give a summer concert at Ashgrove Lido in July", "t_lido"),
                ),
                t(I, "A concert at a lido? I'm in."),
            ],
        ),
    ]
    questions = [
        dict(
            key="q1",
            text="How many jars of honey did Idunn get from her first extraction?",
            gold="About eleven",
            need=["i_honey"],
            ev=["D1:2"],
            correct="About eleven jars.",
            fallback="The memories don't say how many jars.",
        ),
        dict(
            key="q2",
            text="Where does Idunn keep her beehives?",
            gold="On her allotment plot on Quillon Street",
            need=["i_hive_loc"],
            ev=["D1:4"],
            correct="On her allotment plot on Quillon Street.",
            fallback="The memories don't say where the hives are.",
        ),
        dict(
            key="q3",
            text="Which choir did Taavi join?",
            gold="The Saltmere Chamber Singers",
            need=["t_choir"],
            ev=["D1:5"],
            correct="The Saltmere Chamber Singers, where he sings bass.",
            fallback="A choir that gives a summer concert at Ashgrove Lido.",
        ),
        dict(
            key="q4",
            text="What novel was Idunn translating in autumn 2023?",
            gold="Suolahedelmä (The Salt Orchard)",
            need=["i_novel"],
            ev=["D1:10"],
            correct="Suolahedelmä, a Finnish crime novel whose English title is The Salt Orchard.",
            fallback="A poetry collection, Lichen and Lanternlight.",
        ),
        dict(
            key="q5",
            text="When did Idunn hand in her translation manuscript?",
            gold="12 October 2023",
            cat=2,
            need=["i_handin"],
            ev=["D2:1"],
            correct="On Thursday 12 October 2023, two days early.",
            fallback="In October 2023.",
        ),
        dict(
            key="q6",
            text="Who wrote Taavi's half-marathon training plan?",
            gold="His physio, Dr Anouk Verhaegen",
            need=["t_physio"],
            ev=["D2:6"],
            correct="His physio, Dr Anouk Verhaegen.",
            fallback="He wrote it himself.",
        ),
        dict(
            key="q7",
            text="What was Taavi's finishing time at the Marrowby half marathon?",
            gold="1:57:32",
            need=["t_finish"],
            ev=["D4:2"],
            correct="1:57:32.",
            fallback="Under two hours.",
        ),
        dict(
            key="q8",
            text="How many beehives did Idunn have before she combined them?",
            gold="Three",
            cat=1,
            need=["i_three_hives"],
            ev=["D1:2"],
            correct="Three.",
            fallback="Two.",
        ),
        dict(
            key="q9",
            text="How much money did the carol concert raise?",
            gold="£640",
            need=["t_640"],
            ev=["D3:4"],
            correct="£640, for the food bank.",
            fallback="The memories don't say.",
        ),
        dict(
            key="q10",
            text="What is the poetry collection Idunn agreed to translate called?",
            gold="Lichen and Lanternlight",
            need=["i_poetry_title"],
            ev=["D4:7"],
            correct="Lichen and Lanternlight.",
            fallback="The memories don't give its title.",
        ),
        dict(
            key="q11",
            text="Where did Taavi's choir give its first concert?",
            gold="St Brannoc's church",
            need=["t_venue"],
            ev=["D1:7"],
            correct="At St Brannoc's church.",
            fallback="At Ashgrove Lido.",
        ),
        dict(
            key="q12",
            text="How long was Taavi's longest training run before Christmas?",
            gold="21 km",
            need=["t_16k"],
            ev=["D3:8"],
            correct="16 km.",
            ae=True,
        ),
        dict(
            key="q13",
            text="Which piece did Idunn praise Taavi for at the carol concert?",
            gold="The Rutter piece",
            need=["t_rutter"],
            ev=["D3:3"],
            correct="The Rutter piece.",
            fallback="The memories don't say which piece.",
        ),
    ]
    return locomo_conv("idunn_taavi", 4, [("I", "Idunn"), ("T", "Taavi")], sessions, questions, bare_ids=True)


def conv_nkechi_wolfram() -> Conv:
    N, W = "N", "W"
    sessions = [
        (
            "2023-04-08T11:00:00",
            [
                t(W, "Nkechi! How's the co-op?"),
                t(
                    N,
                    "Chaotic in the best way. Spokeshave fixed forty bikes last weekend.",
                    A(
                        "Nkechi runs the Spokeshave bike repair co-op, which fixed forty bikes in one weekend",
                        "n_coop",
                    ),
                ),
                t(W, "Forty! Where are you based now?"),
                t(
                    N,
                    "We moved into the old fire station on Harbour Row in Fairhythe.",
                    A(
                        "The Spokeshave co-op is based in the old fire station on Harbour Row in Fairhythe",
                        "n_coop_loc",
                    ),
                ),
                t(
                    W,
                    "That building is gorgeous. I finally launched my dinghy this season, between shifts at my bread "
                    "stall on Fairhythe market.",
                    A("Wolfram runs a bread stall on Fairhythe market", "w_stall"),
                    A("Wolfram launched his dinghy this season", "w_launch"),
                ),
                t(N, "What did you call her in the end?"),
                t(
                    W,
                    "Marigold Tern. She's a little Wayfarer, moored at Saltmere Sailing Club.",
                    A(
                        "Wolfram's dinghy is a Wayfarer called Marigold Tern, moored at Saltmere Sailing Club",
                        "w_dinghy",
                    ),
                ),
                t(
                    N,
                    "Love it. I joined the Fairhythe astronomy society, we meet on Tuesdays.",
                    A("Nkechi joined the Fairhythe astronomy society, which meets on Tuesdays", "n_astro"),
                ),
                t(W, "Seen anything good yet?"),
                t(
                    N,
                    "Saturn, through someone else's telescope. Now I want my own.",
                    A(
                        "Nkechi saw Saturn through someone else's telescope and wants her own telescope",
                        "n_tel_want",
                    ),
                ),
            ],
        ),
        (
            "2023-05-20T19:40:00",
            [
                t(
                    W,
                    "My sourdough starter has a name now. Gustav.",
                    A("Wolfram's sourdough starter is named Gustav", "w_gustav"),
                ),
                t(N, "Of course it does."),
                t(
                    W,
                    "Lioba says the starter gets more attention than she does.",
                    A(
                        "Wolfram's partner Lioba jokes that his starter gets more attention than she does",
                        "w_lioba",
                    ),
                ),
                t(
                    N,
                    "I bought the telescope! An eight-inch Dobsonian, second-hand from a retired teacher in Brennock.",
                    A(
                        "Nkechi bought a second-hand eight-inch Dobsonian telescope from a retired teacher in Brennock",
                        "n_dob",
                    ),
                ),
                t(W, "What was your first target?"),
                t(
                    N,
                    "The Ring Nebula, last night, from the co-op roof.",
                    A(
                        "Nkechi observed the Ring Nebula through her new telescope from the co-op roof",
                        "n_ring",
                    ),
                ),
                t(
                    W,
                    "Incredible. I capsized the dinghy on Sunday, by the way. Twice.",
                    A("Wolfram capsized his dinghy twice on Sunday", "w_capsize"),
                ),
                t(N, "Oh no! Are you alright?"),
                t(
                    W,
                    "Only my pride. The club instructor, Hamish Achterberg, made me practise recoveries all afternoon.",
                    A("Hamish Achterberg is the instructor at Saltmere Sailing Club", "w_hamish"),
                ),
            ],
        ),
        (
            "2023-07-01T13:25:00",
            [
                t(
                    N,
                    "Grandma Adaeze turns ninety next Saturday! We're throwing her a party at the Lindhollow boathouse.",
                    A("Nkechi's grandmother Adaeze turns ninety next Saturday", "n_gran_date"),
                    A(
                        "Nkechi is throwing her grandmother's ninetieth birthday party at the Lindhollow boathouse",
                        "n_gran_party",
                    ),
                ),
                t(W, "Ninety! Tell her happy birthday from me."),
                t(
                    N,
                    "I will. She's insisting on jollof and a ceilidh band.",
                    A("Grandma Adaeze wants jollof and a ceilidh band at her party", "n_gran_food"),
                ),
                t(
                    W,
                    "Perfect. Lioba's grandfather turned ninety last year too, they had a barbecue.",
                    A("Lioba's grandfather turned ninety last year and had a barbecue", "w_lioba_gf"),
                ),
                t(N, "How's the sailing?"),
                t(
                    W,
                    "I've entered the Saltmere regatta in August. Nervous.",
                    A("Wolfram entered the Saltmere regatta in August", "w_regatta_entry"),
                ),
                t(N, "You'll be fine."),
                t(
                    W,
                    "Also, I swapped jobs. I'm head baker at Crumb & Co now.",
                    A(
                        "Wolfram is now head baker at Crumb & Co",
                        "w_crumb",
                        supersedes="w_stall",
                        merged="Wolfram is now head baker at Crumb & Co; he previously ran a bread stall on Fairhythe "
                        "market",
                    ),
                ),
                t(N, "Crumb & Co! Fancy."),
            ],
        ),
        (
            "2023-08-26T10:10:00",
            [
                t(N, "How was the regatta??"),
                t(
                    W,
                    "Third in the Wayfarer class! Hamish nearly cried.",
                    A("Wolfram finished third in the Wayfarer class at the Saltmere regatta", "w_third"),
                ),
                t(N, "Amazing! Were you nervous at the start?"),
                t(W, "How was your grandmother's party?"),
                t(
                    N,
                    "Wonderful. She danced three reels with my cousin Obinna.",
                    A(
                        "Grandma Adaeze danced three reels with Nkechi's cousin Obinna at her party",
                        "n_obinna",
                    ),
                ),
                t(
                    N,
                    "And the co-op got a grant: £4,000 from Fairhythe town council for a second workshop.",
                    A(
                        "Spokeshave got a £4,000 grant from Fairhythe town council for a second workshop",
                        "n_grant",
                    ),
                ),
                t(W, "Brilliant."),
                t(
                    W,
                    "My sourdough starter Gustav has a sibling now: I split him and gave half to my instructor, "
                    "Hamish Achterberg.",
                    A(
                        "Wolfram split his sourdough starter Gustav and gave half to his sailing instructor Hamish "
                        "Achterberg",
                        "w_gustav",
                        "w_hamish",
                    ),
                ),
                t(N, "The sourdough dynasty grows."),
            ],
        ),
    ]
    questions = [
        dict(
            key="q1",
            text="Where is the Spokeshave co-op based?",
            gold="In the old fire station on Harbour Row, Fairhythe",
            need=["n_coop_loc"],
            ev=["D1:4"],
            correct="In the old fire station on Harbour Row in Fairhythe.",
            fallback="The memories don't say where it is based.",
        ),
        dict(
            key="q2",
            text="What is Wolfram's dinghy called?",
            gold="Marigold Tern",
            need=["w_dinghy"],
            ev=["D1:7"],
            correct="Marigold Tern, a Wayfarer.",
            fallback="The memories don't give the dinghy's name.",
        ),
        dict(
            key="q3",
            text="What telescope did Nkechi buy?",
            gold="A second-hand eight-inch Dobsonian",
            need=["n_dob"],
            ev=["D2:4"],
            correct="A second-hand eight-inch Dobsonian.",
            fallback="She hasn't bought one; she only wants her own telescope.",
        ),
        dict(
            key="q4",
            text="What was the first thing Nkechi observed with her new telescope?",
            gold="The Ring Nebula",
            need=["n_ring"],
            ev=["D2:6"],
            correct="The Ring Nebula.",
            fallback="Saturn.",
        ),
        dict(
            key="q5",
            text="What is Wolfram's sourdough starter called?",
            gold="Gustav",
            need=["w_gustav"],
            ev=["D2:1"],
            correct="Gustav.",
            fallback="The memories don't give the starter's name.",
        ),
        dict(
            key="q6",
            text="Who is the instructor at Saltmere Sailing Club?",
            gold="Hamish Achterberg",
            need=["w_hamish"],
            ev=["D2:9"],
            correct="Hamish Achterberg.",
            fallback="The memories only mention 'the club instructor' without a name.",
        ),
        dict(
            key="q7",
            text="When was Nkechi's grandmother's ninetieth birthday?",
            gold="Saturday 8 July 2023",
            cat=2,
            need=["n_gran_date"],
            ev=["D3:1"],
            correct="On Saturday 8 July 2023.",
            fallback="In July 2023.",
        ),
        dict(
            key="q8",
            text="What did Wolfram do for work before he joined Crumb & Co?",
            gold="He ran a bread stall on Fairhythe market",
            cat=1,
            need=["w_stall"],
            ev=["D1:5"],
            correct="He ran a bread stall on Fairhythe market.",
            fallback="The memories only say he is head baker at Crumb & Co.",
        ),
        dict(
            key="q9",
            text="How did Wolfram do at the Saltmere regatta?",
            gold="Third in the Wayfarer class",
            need=["w_third"],
            ev=["D4:2"],
            correct="He finished third in the Wayfarer class.",
            fallback="He entered it, but the result isn't recorded.",
        ),
        dict(
            key="q10",
            text="How much was the co-op's grant, and who gave it?",
            gold="£4,000 from Fairhythe town council",
            need=["n_grant"],
            ev=["D4:6"],
            correct="£4,000, from Fairhythe town council.",
            fallback="The memories don't mention a grant.",
        ),
        dict(
            key="q11",
            text="How many times did Wolfram capsize on that Sunday?",
            gold="Twice",
            need=["w_capsize"],
            ev=["D2:7"],
            correct="Twice.",
            fallback="Once.",
        ),
        dict(
            key="q12",
            text="Where was Nkechi's grandmother's ninetieth birthday party held?",
            gold="The Saltmere boathouse",
            need=["n_gran_party"],
            ev=["D3:1"],
            correct="At the Lindhollow boathouse.",
            ae=True,
        ),
        dict(
            key="q13",
            text="What are Wolfram's dinghy and sourdough starter called?",
            gold="Marigold Tern and Gustav",
            cat=1,
            need=["w_dinghy", "w_gustav"],
            ev=["D1:7", "D2:1"],
            kind="list",
            items={"w_dinghy": "the dinghy is Marigold Tern", "w_gustav": "the starter is Gustav"},
            correct="The dinghy is Marigold Tern and the starter is Gustav.",
            fallback="The memories don't give either name.",
        ),
    ]
    return locomo_conv(
        "nkechi_wolfram", 5, [("N", "Nkechi"), ("W", "Wolfram")], sessions, questions, string_messages=True
    )


def conv_leocadia_oisin() -> Conv:
    L, O = "L", "O"
    sessions = [
        (
            "2024-06-01T20:00:00",
            [
                t(O, "Leocadia, did you get the job?"),
                t(
                    L,
                    "I did! I'm teaching viola at Brennock Hall music school from September.",
                    A("Leocadia will teach viola at Brennock Hall music school from September 2024", "l_job"),
                ),
                t(O, "Viola, not violin?"),
                t(
                    L,
                    "Viola. Violin is my cousin Zosia's department.",
                    A("Leocadia's cousin Zosia plays the violin", "l_zosia"),
                ),
                t(
                    O,
                    "Ha. My thesis is finally moving. Professor Ingrid Soldatova, my supervisor, signed off my chapter "
                    "on crustose lichens.",
                    A("Oisin's PhD supervisor is Professor Ingrid Soldatova", "o_sup"),
                    A("Oisin's supervisor signed off his thesis chapter on crustose lichens", "o_chapter"),
                ),
                t(L, "What's the thesis about again?"),
                t(
                    O,
                    "Lichen communities on coastal gravestones. Very glamorous.",
                    A("Oisin's PhD thesis is about lichen communities on coastal gravestones", "o_thesis"),
                ),
                t(
                    L,
                    "I'm fostering kittens for the Marrowby cat rescue now. Got two on Monday.",
                    A(
                        "Leocadia started fostering kittens for the Marrowby cat rescue and took in two on Monday",
                        "l_foster",
                    ),
                ),
                t(O, "Names?"),
                t(
                    L,
                    "Sprocket and Tansy.",
                    A("Leocadia's first two foster kittens are Sprocket and Tansy", "l_sprocket", "l_tansy"),
                ),
            ],
        ),
        (
            "2024-07-13T15:45:00",
            [
                t(
                    O,
                    "I'm off to Tarrow Fen on Tuesday for fieldwork. Two weeks in a tent.",
                    A("Oisin is leaving for two weeks of fieldwork at Tarrow Fen on Tuesday", "o_field"),
                ),
                t(L, "Bring midge spray."),
                t(
                    L,
                    "The board-game nights at the Meeple & Mortar are a hit, twenty people last Thursday.",
                    A(
                        "Leocadia runs Thursday board-game nights at the Meeple & Mortar cafe, with twenty people last week",
                        "l_games",
                    ),
                ),
                t(O, "Which game is everyone playing?"),
                t(
                    L,
                    "Everyone's obsessed with a co-op game called Lanternfall.",
                    A("The favourite game at Leocadia's board-game nights is Lanternfall", "l_lanternfall"),
                ),
                t(O, "I'll come when I'm back. Are the two kittens still with you?"),
                t(
                    L,
                    "Both adopted! I've got three new ones now.",
                    A(
                        "Leocadia's first two foster kittens were adopted and she is now fostering three new kittens",
                        "l_three_new",
                    ),
                ),
                t(O, "You're a kitten conveyor belt."),
            ],
        ),
        (
            "2024-08-10T11:30:00",
            [
                t(
                    O,
                    "Back from the fen. I found a lichen nobody has recorded in the county before.",
                    A(
                        "Oisin found a lichen never before recorded in the county during his Tarrow Fen fieldwork",
                        "o_found",
                    ),
                ),
                t(L, "That's huge! What is it?"),
                t(O, "A Cladonia of some sort. Ingrid is checking the spores."),
                t(
                    L,
                    "I might take the kittens to a photoshoot for the rescue's calendar.",
                    A(
                        "Leocadia might take the foster kittens to a photoshoot for the rescue calendar",
                        "l_photo_plan",
                    ),
                ),
                t(
                    O,
                    "Also, I'm moving in with my brother Cathal in Saltmere next month.",
                    A("Oisin is moving in with his brother Cathal in Saltmere in September 2024", "o_cathal"),
                ),
                t(L, "Cathal the drummer?", A("Oisin's brother Cathal is a drummer", "o_drummer")),
                t(O, "Yes."),
                t(
                    L,
                    "I passed my grade 8 viola with distinction, while we're sharing news.",
                    A("Leocadia passed grade 8 viola with distinction", "l_grade8"),
                ),
            ],
        ),
        (
            "2024-09-21T18:00:00",
            [
                t(
                    L,
                    "First week at the new job done. Twelve students already.",
                    A(
                        "Leocadia has twelve viola students after her first week at her new teaching job",
                        "l_twelve",
                    ),
                ),
                t(O, "Twelve! Any good?"),
                t(
                    L,
                    "One of them, Ruairi, is nine and already plays Telemann.",
                    A("Leocadia's student Ruairi is nine and already plays Telemann", "l_ruairi"),
                ),
                t(
                    O,
                    "The move to Saltmere went fine, though Cathal has taken over the living room.",
                    A(
                        "Oisin has moved to Saltmere and lives with his brother Cathal, who has taken over the living room",
                        "o_moved",
                        "o_cathal",
                    ),
                ),
                t(L, "How's the lichen?"),
                t(
                    O,
                    "Confirmed! Cladonia peltastica, a first county record. Ingrid wants a paper on it.",
                    A(
                        "Oisin's lichen find was confirmed as Cladonia peltastica, a first county record",
                        "o_species",
                    ),
                    A("Ingrid wants Oisin to write a paper on the lichen find", "o_paper"),
                ),
                t(L, "Amazing."),
                t(
                    L,
                    "I took in two more kittens this week, Moth and Bramble.",
                    A("Leocadia took in two more foster kittens, Moth and Bramble", "l_moth"),
                ),
                t(O, "How many have you fostered in total now?"),
                t(
                    L,
                    "Seven since May.",
                    A("Leocadia has fostered seven kittens in total since May", "l_total7"),
                ),
            ],
        ),
    ]
    questions = [
        dict(
            key="q1",
            text="Where does Leocadia teach viola?",
            gold="Brennock Hall music school",
            need=["l_job"],
            ev=["D1:2"],
            correct="At Brennock Hall music school.",
            fallback="The memories don't say where she teaches.",
        ),
        dict(
            key="q2",
            text="What instrument does Leocadia's cousin Zosia play?",
            gold="The violin",
            need=["l_zosia"],
            ev=["D1:4"],
            correct="The violin.",
            fallback="The viola.",
        ),
        dict(
            key="q3",
            text="What is Oisin's PhD thesis about?",
            gold="Lichen communities on coastal gravestones",
            need=["o_thesis"],
            ev=["D1:7"],
            correct="Lichen communities on coastal gravestones.",
            fallback="Crustose lichens.",
        ),
        dict(
            key="q4",
            text="Who is Oisin's PhD supervisor?",
            gold="Professor Ingrid Soldatova",
            need=["o_sup"],
            ev=["D1:5"],
            correct="Professor Ingrid Soldatova.",
            fallback="Someone called Ingrid.",
        ),
        dict(
            key="q5",
            text="When did Oisin leave for his fieldwork at Tarrow Fen?",
            gold="Tuesday 16 July 2024",
            cat=2,
            need=["o_field"],
            ev=["D2:1"],
            correct="On Tuesday 16 July 2024.",
            fallback="In summer 2024.",
        ),
        dict(
            key="q6",
            text="What game is popular at Leocadia's board-game nights?",
            gold="Lanternfall",
            need=["l_lanternfall"],
            ev=["D2:5"],
            correct="Lanternfall.",
            fallback="The memories don't name a game.",
        ),
        dict(
            key="q7",
            text="What were the names of the first two kittens Leocadia fostered?",
            gold="Sprocket and Tansy",
            need=["l_sprocket", "l_tansy"],
            ev=["D1:10"],
            kind="list",
            items={"l_sprocket": "Sprocket", "l_tansy": "Tansy"},
            correct="Sprocket and Tansy.",
            fallback="Moth and Bramble.",
        ),
        dict(
            key="q8",
            text="Which lichen species did Oisin find at Tarrow Fen?",
            gold="Cladonia peltastica",
            need=["o_species"],
            ev=["D4:6"],
            correct="Cladonia peltastica.",
            fallback="A Cladonia species.",
        ),
        dict(
            key="q9",
            text="Who did Oisin move in with, and where?",
            gold="His brother Cathal, in Saltmere",
            need=["o_cathal"],
            ev=["D3:5"],
            correct="His brother Cathal, in Saltmere.",
            fallback="He moved to Saltmere.",
        ),
        dict(
            key="q10",
            text="What does Oisin's brother Cathal do?",
            gold="He is a drummer",
            need=["o_drummer"],
            ev=["D3:7"],
            correct="He's a drummer.",
            fallback="The memories don't say.",
        ),
        dict(
            key="q11",
            text="How many kittens has Leocadia fostered in total?",
            gold="Seven",
            need=["l_total7"],
            ev=["D4:10"],
            correct="Seven, since May.",
            fallback="The memories don't give a total.",
        ),
        dict(
            key="q12",
            text="What grade did Leocadia pass on viola, and with what result?",
            gold="Grade 8, with distinction",
            need=["l_grade8"],
            ev=["D3:8"],
            correct="Grade 8, with distinction.",
            fallback="She passed a viola exam.",
        ),
        dict(
            key="q13",
            text="Whose music does Leocadia's nine-year-old student Ruairi already play?",
            gold="Vivaldi",
            need=["l_ruairi"],
            ev=["D4:3"],
            correct="Telemann's.",
            ae=True,
        ),
    ]
    return locomo_conv("leocadia_oisin", 7, [("L", "Leocadia"), ("O", "Oisin")], sessions, questions)


def conv_thandiwe_10k() -> Conv:
    u, a = "u", "a"
    sessions = [
        (
            "ultrachat_51872",
            "2023-07-22T08:30:00",
            [
                t(u, "What are some good calf stretches after a run? Mine get really tight."),
                t(
                    a,
                    "Try a wall calf stretch, a bent-knee soleus stretch and slow eccentric heel drops off a step. "
                    "Hold each stretch for about 30 seconds and do them after every run.",
                ),
                t(
                    u,
                    "Thanks. I usually run along the canal path in Fairhythe, it's pretty flat.",
                    A("Usually runs along the canal path in Fairhythe", "u_canal"),
                ),
                t(
                    a,
                    "Flat routes are great for building an aerobic base. Add a hilly route once a week if you can.",
                ),
            ],
        ),
        (
            "answer_6f1d3a92_1",
            "2023-08-05T19:02:00",
            [
                t(
                    u,
                    "I ran my first 10k race last weekend and finished in 52:10! How can I get under 50 minutes?",
                    A("Ran her first 10k race in 52:10", "u_pb_old"),
                    ans=True,
                ),
                t(
                    a,
                    "Congratulations on your first 10k! To go under 50 minutes, add one interval session a week, one "
                    "tempo run and a longer easy run at the weekend.",
                ),
                t(
                    u,
                    "I can do intervals on Tuesdays with the Fairhythe Harriers.",
                    A("Does interval sessions on Tuesdays with the Fairhythe Harriers", "u_harriers"),
                ),
                t(
                    a,
                    "Perfect. Club intervals are ideal, for example 6 x 800 m at 5k pace with 90 seconds of rest.",
                ),
            ],
        ),
        (
            "sharegpt_Rk2pQ8z_0",
            "2023-09-10T12:40:00",
            [
                t(u, "Can you give me a vegetarian meal-prep plan for a busy week?"),
                t(
                    a,
                    "Sure. On Sunday, batch-cook a chickpea and squash curry, a tray of roasted vegetables and a pot of "
                    "lentil soup, then portion them out for lunches.",
                ),
                t(
                    u,
                    "I'm allergic to cashews, so please skip those.",
                    A("Is allergic to cashews", "u_cashew"),
                ),
                t(
                    a,
                    "Noted, here is a cashew-free version: swap the cashew cream for oat cream and use toasted seeds "
                    "as a topping.",
                ),
            ],
        ),
        (
            "answer_6f1d3a92_2",
            "2023-10-21T16:55:00",
            [
                t(
                    u,
                    "Guess what, new 10k PB at the Saltmere 10k this morning: 49:47!",
                    A(
                        "Set a new 10k personal best of 49:47 at the Saltmere 10k",
                        "u_pb_new",
                        supersedes="u_pb_old",
                        merged="Current 10k personal best is 49:47, set at the Saltmere 10k; previous best was 52:10 in "
                        "her first 10k",
                    ),
                    ans=True,
                ),
                t(
                    a,
                    "Fantastic, that's under 50 minutes! Take a few easy days and then think about your next goal.",
                ),
            ],
        ),
        (
            "ultrachat_60433",
            "2023-10-29T10:20:00",
            [
                t(
                    u,
                    "Any podcast recommendations for long runs? My friend Gideon, who ran 47:30 at Saltmere, swears "
                    "by audiobooks.",
                    A(
                        "Her friend Gideon ran 47:30 at the Saltmere 10k and listens to audiobooks on long runs",
                        "u_gideon",
                    ),
                ),
                t(
                    a,
                    "A few ideas: a long-form history podcast, a comedy panel show, or a serialised audiobook like "
                    "Gideon suggests.",
                ),
            ],
        ),
    ]
    return lme_conv(
        "thandiwe_10k",
        101,
        "6f1d3a92",
        "knowledge-update",
        "2023/11/02 (Thu) 09:14",
        sessions,
        dict(
            text="What is my current 10k personal best?",
            gold="49:47",
            need=["u_pb_new"],
            correct="49:47, set at the Saltmere 10k.",
            fallback="I don't have your current 10k time.",
            gold_as_str=False,
        ),
    )


def conv_ignatius_novels() -> Conv:
    u, a = "u", "a"
    sessions = [
        (
            "ultrachat_11290",
            "2024-02-27T18:00:00",
            [
                t(u, "How do I fix a squeaky door hinge without taking the door off?"),
                t(
                    a,
                    "Lift the hinge pin partway out with a nail and a hammer, coat it with a little petroleum jelly or "
                    "silicone spray, tap it back in and swing the door a few times.",
                ),
                t(u, "Worked perfectly, thanks. The whole flat is quieter now."),
                t(a, "Glad to hear it!"),
            ],
        ),
        (
            "answer_b83e0c15_1",
            "2024-03-06T21:30:00",
            [
                t(
                    u,
                    "I just finished The Glass Tidewater. What a last chapter. Can you recommend something similar?",
                    A("Finished reading the novel The Glass Tidewater", "g_tidewater"),
                    ans=True,
                ),
                t(
                    a,
                    "For the same slow-burning mystery, try Orchard of Hours, or Kestrel Winter if you want something "
                    "bleaker.",
                ),
            ],
        ),
        (
            "answer_b83e0c15_2",
            "2024-03-15T08:45:00",
            [
                t(
                    u,
                    "Took your advice: I finished Orchard of Hours on the train yesterday. Loved it.",
                    A("Finished reading the novel Orchard of Hours", "g_orchard"),
                    ans=True,
                ),
                t(a, "Wonderful! Orchard of Hours has a devoted following. Did the twist surprise you?"),
                t(
                    u,
                    "Completely. Also, my wife Sunniva finished Kestrel Winter this week and hated the ending.",
                    A("His wife Sunniva finished Kestrel Winter and disliked the ending", "g_sunniva"),
                ),
                t(a, "It's a divisive ending! Some readers love how unresolved it is."),
            ],
        ),
        (
            "sharegpt_0bZk7Lq_1",
            "2024-03-20T19:00:00",
            [
                t(
                    u,
                    "What's a good way to organise a small bookshelf by colour without losing track of authors?",
                ),
                t(
                    a,
                    "Group the books by colour but keep a simple spreadsheet or a reading-app list sorted by author, so "
                    "you can still find any book quickly.",
                ),
            ],
        ),
        (
            "answer_b83e0c15_3",
            "2024-03-28T22:15:00",
            [
                t(
                    u,
                    "Finished Kestrel Winter last night. I agree with Sunniva about the ending.",
                    A("Finished reading the novel Kestrel Winter", "g_kestrel"),
                    ans=True,
                ),
                t(a, "A strong month of reading! What's next?"),
                t(
                    u,
                    "Next I'm going to start Salt and Vellum.",
                    A("Plans to start reading Salt and Vellum next", "g_salt"),
                ),
                t(a, "Great choice, it's a quick read."),
            ],
        ),
    ]
    return lme_conv(
        "ignatius_novels",
        102,
        "b83e0c15",
        "multi-session",
        "2024/04/02 (Tue) 20:10",
        sessions,
        dict(
            text="How many novels did I finish reading in March?",
            gold="3",
            need=["g_tidewater", "g_orchard", "g_kestrel"],
            kind="count",
            items={
                "g_tidewater": "The Glass Tidewater",
                "g_orchard": "Orchard of Hours",
                "g_kestrel": "Kestrel Winter",
            },
            correct="3: The Glass Tidewater, Orchard of Hours and Kestrel Winter.",
            fallback="I can't tell from the memories.",
        ),
    )


def conv_perpetua_library() -> Conv:
    u, a = "u", "a"
    sessions = [
        (
            "ultrachat_73310",
            "2024-02-18T15:20:00",
            [
                t(
                    u,
                    "Do you have a simple rhubarb crumble recipe? My allotment neighbour gave me a huge bundle.",
                ),
                t(
                    a,
                    "Chop 500 g of rhubarb, toss it with 75 g of sugar and a little orange zest, top with a rubbed-in "
                    "mix of 150 g flour, 100 g butter and 75 g oats, and bake at 190°C for 35 minutes.",
                ),
                t(u, "Lovely, I'll add some ginger too."),
                t(a, "Stem ginger works beautifully with rhubarb."),
            ],
        ),
        (
            "answer_e41c7b27_1",
            "2024-02-29T18:05:00",
            [
                t(
                    u,
                    "I got the archivist job at the Lindhollow library! I start on Monday.",
                    A("Got the archivist job at the Lindhollow library and starts on Monday", "p_job"),
                    ans=True,
                ),
                t(a, "Congratulations! Would you like a few tips for your first week in a new archive?"),
                t(
                    u,
                    "Yes please. My first project is cataloguing the Brennock estate letters.",
                    A(
                        "Her first project at the library is cataloguing the Brennock estate letters",
                        "p_letters",
                    ),
                ),
                t(
                    a,
                    "For a correspondence collection, start with a box-level inventory before item-level description, "
                    "and flag fragile items for conservation.",
                ),
            ],
        ),
        (
            "sharegpt_Ht7vWq2_0",
            "2024-03-10T10:40:00",
            [
                t(u, "How do I stop old paper documents from yellowing?"),
                t(
                    a,
                    "Keep them away from light and heat, store them in acid-free folders and boxes, and keep the "
                    "relative humidity around 40 to 50 percent.",
                ),
                t(
                    u,
                    "My friend Lowenna started at the Marrowby archive on the 11th, I'll pass that on.",
                    A("Her friend Lowenna starts a job at the Marrowby archive on 11 March", "p_lowenna"),
                ),
                t(a, "She'll appreciate it!"),
            ],
        ),
    ]
    return lme_conv(
        "perpetua_library",
        103,
        "e41c7b27",
        "temporal-reasoning",
        "2024/03/20 (Wed) 12:00",
        sessions,
        dict(
            text="On what date did I start my new job at the Lindhollow library?",
            gold="4 March 2024",
            need=["p_job"],
            correct="On Monday 4 March 2024.",
            fallback="On 11 March 2024.",
        ),
    )


def conv_radomir_landlord() -> Conv:
    u, a = "u", "a"
    sessions = [
        (
            "sharegpt_Lp0Xc4e_2",
            "2024-05-02T20:30:00",
            [
                t(
                    u,
                    "My neighbour's landlord, a Mr Talbot Reyne, never answers emails. How should she escalate a "
                    "repair request?",
                    A("His neighbour's landlord is Mr Talbot Reyne", "r_reyne"),
                ),
                t(
                    a,
                    "She should put the request in writing, keep copies, give a reasonable deadline, and contact the "
                    "council's private housing team if nothing happens.",
                ),
            ],
        ),
        (
            "answer_2d9f64ab_1",
            "2024-05-19T11:15:00",
            [
                t(
                    u,
                    "Good news: my landlord, Mrs Gwenllian Pryce, finally agreed to fix the boiler in my flat on "
                    "Quillon Street.",
                    A("His landlord is Mrs Gwenllian Pryce", "r_pryce"),
                    A("Lives in a flat on Quillon Street", "r_quillon"),
                    ans=True,
                ),
                t(
                    a,
                    "That's great news. When you write to confirm, include the date she agreed and ask for a window for "
                    "the engineer's visit.",
                ),
                t(
                    u,
                    "She also said the rent goes up to £875 in June.",
                    A("His rent goes up to £875 in June", "r_rent"),
                ),
                t(a, "Check your tenancy agreement for the notice period required for a rent increase."),
            ],
        ),
        (
            "ultrachat_90211",
            "2024-06-01T17:45:00",
            [
                t(u, "What houseplants are hard to kill in a north-facing room?"),
                t(a, "Snake plants, ZZ plants, pothos and cast-iron plants all tolerate low light."),
            ],
        ),
    ]
    return lme_conv(
        "radomir_landlord",
        104,
        "2d9f64ab",
        "single-session-user",
        "2024/06/12 (Wed) 09:00",
        sessions,
        dict(
            text="What is my landlord's name?",
            gold="Mrs Gwenllian Pryce",
            need=["r_pryce"],
            correct="Mrs Gwenllian Pryce.",
            fallback="Your landlord's name isn't in the memories.",
        ),
    )


def conv_zdenka_balcony() -> Conv:
    u, a = "u", "a"
    sessions = [
        (
            "answer_c7a05e19_1",
            "2024-04-14T09:50:00",
            [
                t(
                    u,
                    "I'm thinking of growing tomatoes on my balcony this year. Is it too windy up on the sixth floor?",
                    A("Is thinking about growing tomatoes on her sixth-floor balcony", "z_tomato_plan"),
                ),
                t(
                    a,
                    "Tomatoes can struggle in wind. Choose compact bush varieties and put up a simple windbreak.",
                ),
            ],
        ),
        (
            "ultrachat_22817",
            "2024-04-28T19:10:00",
            [
                t(u, "Can you recommend a short novel I could read in one evening?"),
                t(a, "Try a novella such as Small Things Like These or The Old Man and the Sea."),
            ],
        ),
        (
            "answer_c7a05e19_2",
            "2024-05-11T10:05:00",
            [
                t(
                    u,
                    "Update: I skipped the tomatoes. I've planted cavolo nero and runner beans in the balcony planters "
                    "instead. What's a good organic feed?",
                    A("Planted cavolo nero and runner beans in her balcony planters", "z_cavolo", "z_beans"),
                    ans=True,
                ),
                t(
                    a,
                    "A seaweed-based liquid feed every two weeks suits both; give the beans canes to climb.",
                ),
                t(
                    u,
                    "My downstairs neighbour grows chillies and strawberries, she's very smug about it.",
                    A("Her downstairs neighbour grows chillies and strawberries", "z_neighbour"),
                ),
                t(a, "A little friendly rivalry never hurt a garden!"),
            ],
        ),
    ]
    return lme_conv(
        "zdenka_balcony",
        105,
        "c7a05e19",
        "single-session-user",
        "2024/05/30 (Thu) 08:30",
        sessions,
        dict(
            text="Which vegetables am I growing in my balcony planters?",
            gold="Cavolo nero and runner beans",
            need=["z_cavolo", "z_beans"],
            kind="list",
            items={"z_cavolo": "cavolo nero", "z_beans": "runner beans"},
            correct="Cavolo nero and runner beans.",
            fallback="Tomatoes.",
        ),
    )


CONVERSATIONS = {
    c.key: c
    for c in (
        conv_ysolde_corentin(),
        conv_idunn_taavi(),
        conv_nkechi_wolfram(),
        conv_leocadia_oisin(),
        conv_thandiwe_10k(),
        conv_ignatius_novels(),
        conv_perpetua_library(),
        conv_radomir_landlord(),
        conv_zdenka_balcony(),
    )
}


# ---------------------------------------------------------------------------
# Faults and runs
# ---------------------------------------------------------------------------


@dataclass
class Fault:
    fid: str
    system: str
    conv: str
    op: tuple
    kind: str
    params: dict
    expect: dict
    touches: list
    why: str


@dataclass
class Fact:
    text: str
    atoms: set
    supersedes: str | None = None
    merged: str | None = None


class Run:
    """One execution of one system over one conversation, traced or not."""

    def __init__(self, conv: Conv, system: str, faults: list, trace: bool) -> None:
        self.conv, self.system, self.T = conv, system, trace
        self.faults = defaultdict(list)
        for f in faults:
            self.faults[f.op].append(f)
        self.order: list = []
        self.op_ids: dict = {}
        self.rng = random.Random(_seed("ids", system, conv.key))
        self.ok: dict = {}
        self.pred: dict = {}
        self.emitted = defaultdict(list)
        self.graph = None

    def op(self, key: tuple) -> list:
        self.order.append(key)
        return self.faults.get(key, [])

    def new_id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))


def long_text(msg: Msg) -> str:
    return f"Speaker {msg.name} (role: {msg.role}) says: {msg.content}\nTimestamp: {msg.timestamp}"


def truncated_text(msg: Msg, keep: int) -> str:
    words = msg.content.split()[:keep]
    return f"Speaker {msg.name} (role: {msg.role}) says: {' '.join(words)}".rstrip()


def raw_message_value(msg: Msg, content: str) -> dict:
    return {"content": content, "name": msg.name, "role": msg.role, "timestamp": msg.timestamp}


def msg_meta(msg: Msg) -> dict:
    return {**msg.metadata, "timestamp": msg.timestamp, "speakers": msg.name}


def select(question: Question, cands: list, k: int, dropped: set) -> list:
    """Ideal retrieval: every needed atom that the store holds is represented, then the
    best lexical matches fill up to k.  A retrieval fault removes every unit carrying one
    of the dropped atoms from the candidates."""
    need = [a for a in question.need if a not in dropped]
    pool = [c for c in cands if not (c[2] & dropped)]
    score = {c[0]: lexical(question.text, c[1]) for c in pool}
    chosen = []
    for a in need:
        carriers = [c for c in pool if a in c[2]]
        if carriers:
            best = max(carriers, key=lambda c: score[c[0]])
            if best[0] not in chosen:
                chosen.append(best[0])
    fill = [c[0] for c in sorted(pool, key=lambda c: -score[c[0]]) if c[0] not in chosen]
    chosen = chosen + fill[: max(0, k - len(chosen))]
    boosted = {c[0] for c in pool if c[2] & set(need)}
    out = [(cid, shown_score(score[cid], cid in boosted, question.id + cid)) for cid in chosen]
    out.sort(key=lambda x: -x[1])
    return out


class Mem0Layer:
    """Mem0 as instrumented in MemBase: per message, memory_system.extract_facts then
    memory_system.update_memory_decision (ADD links, UPDATE mutations, DELETE marker links);
    search is memory_system.search_vector_store with edges query -> memory_entry."""

    layer_type = "Mem0"
    top_k = 6

    def __init__(self, run: Run) -> None:
        self.run = run
        self.store: dict = {}
        self.order: list = []

    def live(self) -> list:
        return [m for m in self.order if m in self.store]

    def snap(self, mid: str) -> dict:
        e = self.store[mid]
        return {"id": mid, "memory": e["memory"], "timestamp": e["timestamp"]}

    @staticmethod
    def entry_opts() -> dict:
        return {
            "id_strategy": "mem0-dict",
            "category": "memory_entry",
            "encoding_fn": enc_json,
            "decoding_fn": json.loads,
            "comment": "A memory unit in the memory system.",
        }

    def holder(self, atom: str):
        for m in self.live():
            if atom in self.store[m]["atoms"]:
                return m
        return None

    def similar(self, text: str, n: int = 5) -> list:
        scored = [(lexical(text, self.store[m]["memory"]), m) for m in self.live()]
        scored = [x for x in scored if x[0] > 0]
        scored.sort(key=lambda x: -x[0])
        return [m for _, m in scored[:n]]

    # -- construction ------------------------------------------------------
    def add_message(self, msg: Msg) -> None:
        run = self.run
        text = f"{msg.content}\nBelow is this message's metadata:\nSpeaker Name: {msg.name}\nSpeaker Role: {msg.role}\n"
        rv_msg = None
        if run.T:
            if run.conv.string_messages:  # older MemBase convention: the raw input is a plain string
                rv_msg = comment_variable(
                    text,
                    to_runtime=True,
                    id_strategy=lambda _: msg.id,
                    category="message",
                    metadata=msg_meta(msg),
                    comment=MSG_COMMENT,
                )
            else:
                rv_msg = comment_variable(
                    raw_message_value(msg, text),
                    to_runtime=True,
                    id_strategy=lambda _: msg.id,
                    encoding_fn=enc_json,
                    category="message",
                    metadata=msg_meta(msg),
                    comment=MSG_COMMENT,
                )
        facts, rv_facts = self.extract(msg, rv_msg)
        self.decide(msg, facts, rv_facts)

    def extract(self, msg: Msg, rv_msg):
        run = self.run
        key = ("extract", msg.ref)
        faults = run.op(key)
        facts = [Fact(a.fact, set(a.keys), a.supersedes, a.merged) for a in msg.atoms]
        for f in faults:
            if f.kind == "drop":
                facts = [x for x in facts if not (x.atoms & set(f.params["atoms"]))]
            elif f.kind == "rewrite":
                for x in facts:
                    if f.params["atom"] in x.atoms:
                        x.text, x.atoms, x.supersedes, x.merged = (
                            f.params["text"],
                            set(f.params["atoms"]),
                            None,
                            None,
                        )
        response = json.dumps({"facts": [x.text for x in facts]}, ensure_ascii=False)
        if h("codeblock" + msg.id) % 4 == 0:
            response = f"```json\n{response}\n```"
        rv_facts = None
        if run.T:
            rv_prompt = comment_variable(
                FACT_EXTRACTION_PROMPT,
                to_runtime=True,
                id_strategy=lambda x: "fact-extraction-system-prompt",
                category="prompt",
                metadata={"op_type": "extraction"},
                comment="A fact extraction system prompt for the memory system to extract a list of facts from a "
                "given conversation snippet.",
            )
            with comment_op_scope(
                op_name="memory_system.extract_facts",
                category="extraction",
                comment="Extract facts from a conversation snippet using an LLM. Please note that these extracted "
                "facts are initially without timestamps, which will be added later when the memory unit is "
                "created or updated.",
                metadata={"llm_model": LLM_MODEL},
            ) as op:
                run.op_ids[key] = op.op_id
                CLOCK.sleep(0.7, 2.4)
                rv_raw = comment_variable(
                    response,
                    to_runtime=True,
                    class_name="raw_fact_extraction_response",
                    category="llm_response",
                    comment="A raw fact extraction response from a large language model.",
                )
                link_comment = (
                    "The large language model extracts facts from a conversation snippet based on the "
                    "given conversation snippet and the fact extraction system prompt."
                )
                comment_link(source=rv_msg, target=rv_raw, comment=link_comment)
                comment_link(source=rv_prompt, target=rv_raw, comment=link_comment)
                cleaned = remove_code_blocks(response)
                rv_clean = comment_variable(
                    cleaned,
                    to_runtime=True,
                    class_name="fact_extraction_response_with_code_block_removing",
                    id_strategy=lambda x: rv_raw.name,
                    category="llm_response",
                    comment="A post-processed fact extraction response from a large language model.",
                )
                comment_link(
                    source=rv_raw,
                    target=rv_clean,
                    comment="A link between the raw response and the post-processed response using the "
                    "function `remove_code_blocks`.",
                    edge_metadata={"source_code": inspect.getsource(remove_code_blocks)},
                )
                fact_list = json.loads(cleaned)["facts"]
                rv_facts = comment_variable(
                    fact_list,
                    to_runtime=True,
                    id_strategy=lambda x: rv_raw.name,
                    class_name="extracted_facts",
                    category="llm_response",
                    comment="A list of extracted facts from a conversation snippet using the function `json.loads`.",
                )
                comment_link(
                    source=rv_clean,
                    target=rv_facts,
                    comment=f"The large language model extracts {len(fact_list)} facts from a conversation "
                    "snippet.",
                )
        return facts, rv_facts

    def decide(self, msg: Msg, facts: list, rv_facts) -> None:
        run = self.run
        key = ("update", msg.ref)
        faults = run.op(key)
        sim: list = []
        for f in facts:
            for mid in self.similar(f.text):
                if mid not in sim:
                    sim.append(mid)
        actions: list = []
        for f in facts:
            holders = [m for m in self.live() if f.atoms and f.atoms <= self.store[m]["atoms"]]
            if holders:
                if holders[0] not in sim:
                    sim.append(holders[0])
                continue
            if f.supersedes:
                hold = self.holder(f.supersedes)
                if hold is not None:
                    if hold not in sim:
                        sim.append(hold)
                    actions.append(
                        dict(
                            event="UPDATE",
                            mid=hold,
                            text=f.merged or f.text,
                            atoms=self.store[hold]["atoms"] | f.atoms,
                            src=set(f.atoms),
                        )
                    )
                    continue
            actions.append(dict(event="ADD", mid=None, text=f.text, atoms=set(f.atoms), src=set(f.atoms)))
        for fl in faults:
            hold = self.holder(fl.params["target"])
            if hold is None:
                continue
            rep = set(fl.params.get("replace_for", []))
            actions = [x for x in actions if x["mid"] != hold and not (x["src"] & rep)]
            if hold not in sim:
                sim.append(hold)
            if fl.kind == "update_lose":
                actions.append(
                    dict(
                        event="UPDATE",
                        mid=hold,
                        text=fl.params["text"],
                        atoms=set(fl.params["atoms"]),
                        src=set(),
                    )
                )
            elif fl.kind == "delete":
                actions.append(
                    dict(event="DELETE", mid=hold, text=self.store[hold]["memory"], atoms=set(), src=set())
                )
        tmp = {mid: str(i) for i, mid in enumerate(sim)}
        entries, n_add = [], 0
        acted = {a["mid"]: a for a in actions if a["mid"] is not None}
        for mid in sim:
            a = acted.get(mid)
            if a is None:
                entries.append({"id": tmp[mid], "text": self.store[mid]["memory"], "event": "NONE"})
            elif a["event"] == "UPDATE":
                entries.append(
                    {
                        "id": tmp[mid],
                        "text": a["text"],
                        "event": "UPDATE",
                        "old_memory": self.store[mid]["memory"],
                    }
                )
            else:
                entries.append({"id": tmp[mid], "text": a["text"], "event": "DELETE"})
        for a in actions:
            if a["event"] == "ADD":
                entries.append({"id": str(len(sim) + n_add), "text": a["text"], "event": "ADD"})
                n_add += 1
        ordered = [a for a in actions if a["event"] != "ADD"] + [a for a in actions if a["event"] == "ADD"]

        if not run.T:
            for a in ordered:
                self.apply(a, msg, None)
            return
        with comment_op_scope(
            op_name="memory_system.update_memory_decision",
            category="update",
            comment="Decide how to update the memory store using a large language model.",
            metadata={"llm_model": LLM_MODEL},
        ) as op:
            run.op_ids[key] = op.op_id
            if facts:
                rv_tpl = comment_variable(
                    UPDATE_DECISION_PROMPT,
                    to_runtime=True,
                    id_strategy=lambda x: "memory-update-decision-prompt",
                    category="prompt",
                    metadata={"op_type": "update"},
                    comment="A prompt template for the memory system to decide whether to add, update, delete, or "
                    "no change the memory based on the new extracted facts and the existing memory similar "
                    "to the new extracted facts.",
                )
                rv_exist = comment_variable(
                    f"Find {len(sim)} existing memories similar to the new extracted facts.",
                    to_runtime=True,
                    category="similar_memories",
                    class_name="existing_memories",
                    comment="For each fact, the memory system retrieves top-k similar memories from the existing "
                    "memory store and merges them into this variable. It only presents the number of "
                    "similar memories; the memories themselves are injected into the task instruction.",
                )
                old = [{"id": tmp[m], "text": self.store[m]["memory"]} for m in sim]
                current = (
                    f"Below is the current content of my memory:\n```\n{old}\n```"
                    if old
                    else "Current memory is empty."
                )
                instruction = (
                    f"{UPDATE_DECISION_PROMPT}\n\n{current}\n\nThe new retrieved facts are in the triple "
                    f"backticks.\n```\n{[x.text for x in facts]}\n```\n\nReturn JSON only: "
                    '{"memory": [{"id": ..., "text": ..., "event": "ADD|UPDATE|DELETE|NONE", '
                    '"old_memory": ...}]}'
                )
                rv_instr = comment_variable(
                    instruction,
                    to_runtime=True,
                    class_name="memory_update_task_instruction",
                    category="prompt",
                    metadata={"op_type": "update"},
                    comment="A concrete memory update task instruction that merges the newly extracted facts, the "
                    "retrieved existing memories, and the memory update prompt template.",
                )
                comment_link(
                    source=rv_facts,
                    target=rv_instr,
                    comment="The newly extracted facts are inserted into the concrete memory update task "
                    "instruction.",
                )
                comment_link(
                    source=rv_exist,
                    target=rv_instr,
                    comment="The retrieved existing memories are inserted into the concrete memory update "
                    "task instruction.",
                )
                comment_link(
                    source=rv_tpl,
                    target=rv_instr,
                    comment="The memory update prompt template provides the decision rules.",
                )
                response = json.dumps({"memory": entries}, ensure_ascii=False, indent=2)
                if h("codeblock-u" + msg.id) % 3 == 0:
                    response = f"```json\n{response}\n```"
                CLOCK.sleep(0.9, 3.1)
                rv_raw = comment_variable(
                    response,
                    to_runtime=True,
                    class_name="raw_memory_update_decision",
                    category="llm_response",
                    comment="A raw memory update decision response from a large language model.",
                )
                comment_link(
                    source=rv_instr,
                    target=rv_raw,
                    comment="The large language model reads the concrete memory update task instruction "
                    "and generates a memory update decision.",
                )
                cleaned = remove_code_blocks(response)
                obj = json.loads(cleaned)
                rv_clean = comment_variable(
                    cleaned,
                    to_runtime=True,
                    class_name="memory_update_decision_with_code_block_removing",
                    category="llm_response",
                    comment="A post-processed memory update decision response from a large language model.",
                )
                comment_link(
                    source=rv_raw,
                    target=rv_clean,
                    comment="A link between the raw response and the post-processed memory update decision "
                    "response using the function `remove_code_blocks`.",
                    edge_metadata={"source_code": inspect.getsource(remove_code_blocks)},
                )
                rv_act = comment_variable(
                    obj,
                    to_runtime=True,
                    class_name="update_action",
                    encoding_fn=enc_json,
                    decoding_fn=json.loads,
                    category="llm_response",
                    comment="A list of memory update actions generated from a large language model.",
                )
                comment_link(
                    source=rv_clean,
                    target=rv_act,
                    comment=f"The LLM generates {len(obj.get('memory', []))} memory update actions. Note "
                    "that some actions may be invalid and will be ignored.",
                )
            else:
                rv_act = comment_variable(
                    {},
                    to_runtime=True,
                    class_name="update_action",
                    encoding_fn=json.dumps,
                    decoding_fn=json.loads,
                    category="llm_response",
                    comment="An empty list of memory update actions.",
                )
                comment_link(
                    source=rv_facts,
                    target=rv_act,
                    comment="No new facts are extracted from the conversation snippet, so the memory update "
                    "actions are empty.",
                )
            for a in ordered:
                self.apply(a, msg, rv_act)

    def apply(self, a: dict, msg: Msg, rv_act) -> None:
        run = self.run
        if a["event"] == "ADD":
            mid = run.new_id()
            self.store[mid] = {"memory": a["text"], "timestamp": msg.timestamp, "atoms": set(a["atoms"])}
            self.order.append(mid)
            if run.T:
                comment_link(
                    source=rv_act,
                    target=(self.snap(mid), self.entry_opts()),
                    comment="Based on the LLM's memory update decision, a new memory entry "
                    f"'{mid}' is created and added to the memory store.",
                )
        elif a["event"] == "UPDATE":
            mid = a["mid"]
            if run.T:
                prev = self.snap(mid)
                with comment_mutation(
                    target=prev,
                    inputs=[rv_act],
                    id_strategy="mem0-dict",
                    encoding_fn=enc_json,
                    decoding_fn=json.loads,
                    mutation_comment=f"Based on the LLM's memory update decision, an existing memory unit '{mid}' "
                    "is updated.",
                    mutation_category="llm_response",
                    reuse_op=True,
                ):
                    prev["memory"] = a["text"]
                    prev["timestamp"] = msg.timestamp
            self.store[mid].update(memory=a["text"], timestamp=msg.timestamp, atoms=set(a["atoms"]))
        elif a["event"] == "DELETE":
            mid = a["mid"]
            if run.T:
                marker = comment_variable(
                    "DELETED",
                    to_runtime=True,
                    class_name="delete_marker",
                    category="marker",
                    comment="It marks the memory unit is deleted successfully.",
                )
                comment_link(
                    source=(self.snap(mid), self.entry_opts()),
                    target=marker,
                    comment=f"The memory unit '{mid}' is deleted successfully.",
                )
            del self.store[mid]

    def flush(self) -> None:
        return None

    # -- search ---------------------------------------------------------------
    def retrieve(self, q: Question, rv_query) -> list:
        run = self.run
        key = ("retrieve", q.id)
        faults = run.op(key)
        dropped = set().union(*[set(f.params["atoms"]) for f in faults]) if faults else set()
        cands = [(m, self.store[m]["memory"], self.store[m]["atoms"]) for m in self.live()]
        chosen = select(q, cands, self.top_k, dropped)
        if run.T:
            CLOCK.sleep(0.03, 0.09)
            with comment_op_scope(
                op_name="memory_system.search_vector_store",
                comment=f"A task query searches the memory store for top-{self.top_k} relevant memories.",
                category="retrieval",
                metadata={"embedding_model": EMB_MODEL, "top_k": self.top_k},
            ) as op:
                run.op_ids[key] = op.op_id
                for mid, score in chosen:
                    comment_op(
                        inputs=[rv_query],
                        outputs=[(self.snap(mid), self.entry_opts())],
                        comment=f"One memory '{mid}' is retrieved from the memory store. The threshold is "
                        f"set to 0.0. Its score is {score}.",
                        reuse_op=True,
                    )
        return [
            dict(
                trace_id=f"memory-unit-{mid}",
                formatted=f"Memory: {self.store[mid]['memory']}\nTime: {self.store[mid]['timestamp']}",
                atoms=set(self.store[mid]["atoms"]),
            )
            for mid, _ in chosen
        ]


BUFFER_COMMENT = (
    "A message buffer that stores messages not yet processed by the memory system. "
    "Its data structure is a list."
)


class NaiveRAGLayer:
    """NaiveRAG as instrumented in MemBase: a deferred, token-limited message buffer
    (memory_system.message_buffer_update, a mutation of 'message-buffer'), a document
    stored by memory_system.add when the buffer overflows, memory_system.retrieve."""

    layer_type = "NaiveRAG"
    top_k = 3
    max_tokens = 150
    overlap = 1

    def __init__(self, run: Run) -> None:
        self.run = run
        self.buf: list = []
        self.total = 0
        self.store: dict = {}
        self.order: list = []

    def snapshot(self) -> dict:
        return {"message_buffer": [e["text"] for e in self.buf], "buffer_total_tokens": self.total}

    def op_meta(self) -> dict:
        return {
            "deferred": True,
            "max_tokens": self.max_tokens,
            "num_overlap_msgs": self.overlap,
            "message_separator": "\n",
            "llm_model_for_tokenizer": LLM_MODEL,
        }

    def trim(self) -> None:
        while len(self.buf) > self.overlap:
            self.total -= ntok(self.buf.pop(0)["text"])
        while self.total > self.max_tokens and self.buf:
            self.total -= ntok(self.buf.pop(0)["text"])

    def add_message(self, msg: Msg) -> None:
        run = self.run
        text = long_text(msg)
        entry = {"text": text, "atoms": set(msg.keys), "ref": msg.ref, "msg": msg}
        key = ("buffer", msg.ref)
        faults = run.op(key)
        snap = self.snapshot()
        state = {"doc": None}

        def mutate():
            new_tokens = ntok(text)
            if self.total + new_tokens > self.max_tokens and self.buf:
                state["doc"] = list(self.buf)
                self.trim()
            self.buf.append(entry)
            self.total += new_tokens
            snap["message_buffer"] = [e["text"] for e in self.buf]
            snap["buffer_total_tokens"] = self.total

        if not run.T:
            mutate()
            if state["doc"]:
                self.emit(state["doc"], faults, key, None, None)
            return
        rv_msg = comment_variable(
            raw_message_value(msg, text),
            to_runtime=True,
            id_strategy=lambda _: msg.id,
            encoding_fn=enc_json,
            decoding_fn=json.loads,
            category="message",
            metadata=msg_meta(msg),
            comment=MSG_COMMENT,
        )
        rv_snap = comment_variable(
            snap,
            to_runtime=True,
            id_strategy=lambda _: "message-buffer",
            encoding_fn=enc_json,
            decoding_fn=json.loads,
            category="message_buffer",
            comment=BUFFER_COMMENT,
        )
        CLOCK.sleep(0.004, 0.02)
        with comment_op_scope(
            op_name="memory_system.message_buffer_update",
            category="update",
            comment="Merge a new input message into the current message buffer and, when the "
            "buffer is ready, emit a memory unit that aggregates recent messages for the "
            "memory system to store.",
            metadata=self.op_meta(),
        ) as op:
            run.op_ids[key] = op.op_id
            with comment_mutation(
                target=snap,
                inputs=[rv_msg],
                id_strategy=lambda _: "message-buffer",
                encoding_fn=enc_json,
                decoding_fn=json.loads,
                category="message_buffer",
                mutation_comment="Add a new input message into the current message buffer. The "
                "message buffer is updated and the oldest messages may be trimmed "
                f"so that the buffer stays within the configured overlap "
                f"({self.overlap}) and max-token budgets ({self.max_tokens}).",
                mutation_category="update",
                reuse_op=True,
            ):
                mutate()
            if state["doc"]:
                self.emit(state["doc"], faults, key, [rv_msg, rv_snap], None)

    def emit(self, entries: list, faults: list, key: tuple, inputs, finalize_input) -> None:
        run = self.run
        lines, atoms = [], set()
        for e in entries:
            fl = [f for f in faults if f.params.get("msg") == e["ref"]]
            if fl and fl[0].kind == "omit":
                continue
            if fl and fl[0].kind == "truncate":
                lines.append(truncated_text(e["msg"], fl[0].params["keep"]))
                continue
            lines.append(e["text"])
            atoms |= e["atoms"]
        doc = "\n".join(lines)
        mid = run.new_id()
        self.store[mid] = {"content": doc, "atoms": atoms}
        self.order.append(mid)
        for e in entries:
            run.emitted[e["ref"]].append(key)
        if not run.T:
            return
        rv_doc = comment_variable(
            doc,
            to_runtime=True,
            class_name="temporary_variable",
            category="temporary_variable",
            comment="A temporary variable that holds the buffered document emitted from the "
            "message buffer. It will serve as the content of a memory unit, forming a "
            "new memory unit that is inserted into the memory store.",
        )
        if finalize_input is not None:
            comment_op(
                inputs=[finalize_input],
                outputs=[rv_doc],
                op_name="memory_system.finalize_memory_unit",
                category="extraction",
                comment="The memory system finalizes the remaining buffered messages into a concrete buffered "
                "document because the conversation is ending.",
                reuse_op=True,
            )
        else:
            comment_op(
                inputs=inputs,
                outputs=[rv_doc],
                category="extraction",
                comment="The new input message joins the previous message buffer state to produce a buffered "
                "document.",
                reuse_op=True,
            )
        CLOCK.sleep(0.02, 0.07)
        comment_op(
            inputs=[rv_doc],
            outputs=[
                (
                    {"content": doc, "id": mid},
                    {
                        "id_strategy": "naive-rag-dict",
                        "category": "memory_entry",
                        "encoding_fn": enc_json,
                        "decoding_fn": json.loads,
                    },
                )
            ],
            op_name="memory_system.add",
            category="update",
            comment="The buffered document is embedded into a memory unit. The memory unit is added into the "
            "memory store.",
        )

    def flush(self) -> None:
        run = self.run
        key = ("flush",)
        faults = run.op(key)
        snap = self.snapshot()
        if not run.T:
            if self.buf:
                entries = list(self.buf)
                self.buf, self.total = [], 0
                self.emit(entries, faults, key, None, None)
            return
        rv_buf = comment_variable(
            snap,
            to_runtime=True,
            encoding_fn=enc_json,
            id_strategy=lambda _: "message-buffer",
            category="message_buffer",
            comment=BUFFER_COMMENT,
        )
        with comment_op_scope(
            op_name="memory_system.message_buffer_update",
            category="update",
            comment="Finalize the current message buffer at the end of the conversation. Any "
            "remaining buffered messages are aggregated into a last buffered document that "
            "forms a new memory unit for the memory system to store, and the message "
            "buffer is then cleared.",
            metadata=self.op_meta(),
        ) as op:
            run.op_ids[key] = op.op_id
            if self.buf:
                entries = list(self.buf)
                self.buf, self.total = [], 0
                self.emit(entries, faults, key, None, rv_buf)
                with comment_mutation(
                    target=snap,
                    id_strategy=lambda _: "message-buffer",
                    encoding_fn=enc_json,
                    decoding_fn=json.loads,
                    category="message_buffer",
                    mutation_comment="After the remaining messages are flushed into a buffered "
                    "document, the memory system clears the message buffer.",
                    mutation_category="update",
                    reuse_op=True,
                ):
                    snap["message_buffer"] = []
                    snap["buffer_total_tokens"] = 0

    def retrieve(self, q: Question, rv_query) -> list:
        run = self.run
        key = ("retrieve", q.id)
        faults = run.op(key)
        dropped = set().union(*[set(f.params["atoms"]) for f in faults]) if faults else set()
        cands = [(m, self.store[m]["content"], self.store[m]["atoms"]) for m in self.order]
        chosen = select(q, cands, self.top_k, dropped)
        if run.T:
            CLOCK.sleep(0.02, 0.06)
            with comment_op_scope(
                op_name="memory_system.retrieve",
                category="retrieval",
                comment=f"A task query searches the memory store for top-{self.top_k} relevant memories.",
                metadata={"top_k": self.top_k, "embedding_model": EMB_MODEL},
            ) as op:
                run.op_ids[key] = op.op_id
                for mid, score in chosen:
                    comment_op(
                        inputs=[rv_query],
                        outputs=[
                            (
                                {"id": mid, "content": self.store[mid]["content"]},
                                {
                                    "id_strategy": "naive-rag-dict",
                                    "category": "memory_entry",
                                    "encoding_fn": enc_json,
                                    "decoding_fn": json.loads,
                                },
                            )
                        ],
                        comment=f"One memory '{mid}' is retrieved from the memory store. Its score is {score}.",
                        reuse_op=True,
                    )
        return [
            dict(
                trace_id=f"memory-unit-{mid}",
                formatted=self.store[mid]["content"],
                atoms=set(self.store[mid]["atoms"]),
            )
            for mid, _ in chosen
        ]


class LongContextLayer:
    """Long-context as instrumented in MemBase: one memory unit ('memory-unit') mutated by
    memory_system.memory_update per message, trimming the oldest messages to the context
    window inside the same operation; memory_system.retrieve returns the whole unit."""

    layer_type = "Long-Context"
    top_k = 10

    def __init__(self, run: Run) -> None:
        self.run = run
        self.buf: list = []
        self.total = 0
        conv = run.conv
        needed = {a for q in conv.questions for a in q.need}
        msgs = conv.messages
        lead = 0
        for m in msgs:
            if m.keys & needed:
                break
            lead += 1
        n0 = min(3, lead)
        assert n0 >= 1, f"{conv.key}: the first message must not carry needed information"
        total = sum(ntok(long_text(m)) for m in msgs)
        self.budget = total - sum(ntok(long_text(m)) for m in msgs[:n0])

    def doc(self) -> str:
        return "\n".join(e["text"] for e in self.buf)

    def add_message(self, msg: Msg) -> None:
        run = self.run
        key = ("lc", msg.ref)
        faults = run.op(key)
        entry = {"text": long_text(msg), "atoms": set(msg.keys), "ref": msg.ref}
        for f in faults:
            if f.kind == "truncate_new":
                entry = {"text": truncated_text(msg, f.params["keep"]), "atoms": set(), "ref": msg.ref}

        def mutate():
            self.buf.append(entry)
            self.total += ntok(entry["text"])
            while self.total > self.budget and self.buf:
                self.total -= ntok(self.buf.pop(0)["text"])
            for f in faults:
                if f.kind == "overtrim":
                    refs = [e["ref"] for e in self.buf]
                    if f.params["until"] in refs:
                        while self.buf:
                            e = self.buf.pop(0)
                            self.total -= ntok(e["text"])
                            if e["ref"] == f.params["until"]:
                                break
                elif f.kind == "drop_msg":
                    for e in list(self.buf):
                        if e["ref"] == f.params["msg"]:
                            self.buf.remove(e)
                            self.total -= ntok(e["text"])

        if not run.T:
            mutate()
            return
        rv_msg = comment_variable(
            raw_message_value(msg, long_text(msg)),
            to_runtime=True,
            id_strategy=lambda _: msg.id,
            encoding_fn=enc_json,
            decoding_fn=json.loads,
            category="message",
            metadata=msg_meta(msg),
            comment=MSG_COMMENT,
        )
        CLOCK.sleep(0.002, 0.012)
        with comment_mutation(
            target=self,
            inputs=[rv_msg],
            comment="A memory unit of the memory system.",
            category="memory_entry",
            id_strategy=lambda _: "memory-unit",
            encoding_fn=lambda _: self.doc(),
            mutation_name="memory_system.memory_update",
            mutation_category="update",
            mutation_comment="Merge a new input message into the memory unit. If the resulting token count exceeds "
            "the max-token budget, the oldest messages are trimmed so that the memory stays within "
            "the budget.",
            mutation_metadata={
                "context_window": self.budget,
                "message_separator": "\n",
                "llm_model_for_tokenizer": LLM_MODEL,
            },
        ) as scope:
            mutate()
        in_edges = current_graph()._driver.get_edges_by_node(scope.result.full_node_id, direction="incoming")
        run.op_ids[key] = in_edges[0].op_id

    def flush(self) -> None:
        return None

    def retrieve(self, q: Question, rv_query) -> list:
        run = self.run
        key = ("retrieve", q.id)
        run.op(key)
        history = self.doc()
        if run.T:
            op = comment_op(
                inputs=[rv_query],
                outputs=[
                    (
                        history,
                        {
                            "id_strategy": lambda _: "memory-unit",
                            "encoding_fn": lambda s: s,
                            "category": "memory_entry",
                        },
                    )
                ],
                op_name="memory_system.retrieve",
                category="retrieval",
                comment=f"A task query searches the memory store for top-{self.top_k} relevant memories.",
                metadata={"top_k": self.top_k},
            )
            run.op_ids[key] = op.op_id
        formatted = (
            "The following content enclosed in <long_context_memory> tags is the user's historical "
            f"interaction trajectory so far:\n<long_context_memory>\n{history}\n</long_context_memory>\n"
            "This interaction trajectory is your long-term memory."
        )
        return [
            dict(
                trace_id="memory-unit",
                formatted=formatted,
                atoms=set().union(*[e["atoms"] for e in self.buf]) if self.buf else set(),
            )
        ]


LAYERS = {"mem0": Mem0Layer, "rag": NaiveRAGLayer, "long_context": LongContextLayer}


# ---------------------------------------------------------------------------
# Question answering and judging (evaluation stage), pipeline driver
# ---------------------------------------------------------------------------


def answer(q: Question, ctx_atoms: set, faults: list) -> str:
    """Ideal answer step: answers from the atoms the context holds.  When some needed
    information is missing it answers with what it has (a partial list / count) or with
    the question's fallback (an abstention or a guess from nearby text)."""
    for f in faults:
        if f.kind == "answer":
            return f.params["text"]
    present = [a for a in q.need if a in ctx_atoms]
    if len(present) == len(q.need):
        return q.correct
    if present and q.kind == "list":
        s = " and ".join(q.items[a] for a in present)
        return s[0].upper() + s[1:] + "."
    if present and q.kind == "count":
        return f"{len(present)}: {' and '.join(q.items[a] for a in present)}."
    return q.fallback or "The memories don't contain this information."


def judge_text(q: Question, ok: bool) -> str:
    if q.judge_template == "locomo-judge":
        if h("reason" + q.id) % 3 == 0:
            reasoning = (
                "The generated answer refers to the same thing as the gold answer."
                if ok
                else "The generated answer does not match the gold answer."
            )
            return json.dumps({"reasoning": reasoning, "label": "CORRECT" if ok else "WRONG"})
        return json.dumps({"label": "CORRECT" if ok else "WRONG"})
    return "yes" if ok else "no"


QA_OP_COMMENT = (
    "The question-answering model generates an answer based on the question, the context retrieved "
    "from the memory system, and a question-answering prompt."
)


def evaluate(run: Run, retrievals: dict) -> None:
    conv, T = run.conv, run.T
    preds = {}
    for q in conv.questions:
        faults = run.op(("answer", q.id))
        atoms = set().union(*[r["atoms"] for r in retrievals[q.id]]) if retrievals[q.id] else set()
        preds[q.id] = answer(q, atoms, faults)
    groups: dict = {}
    for q in conv.questions:
        groups.setdefault(q.judge_template, []).append(q)
    responses = {}
    for tpl, qs in groups.items():
        for q in qs:
            run.op(("judge", q.id))
            ok = preds[q.id] == q.correct and not q.ae
            run.ok[q.id] = ok
            responses[q.id] = judge_text(q, ok)
    run.pred = preds
    if not T:
        return
    with comment_session(
        category="memory_evaluation",
        comment="Evaluate the memory layer by checking whether the question-answering model can "
        "generate the correct answer based on the retrieved memories.",
        metadata={
            "qa_model": QA_MODEL,
            "judge_model": JUDGE_MODEL,
            "qa_batch_size": 4,
            "judge_batch_size": 4,
            "add_question_timestamp": False,
        },
    ):
        rv_tpl = comment_variable(
            QA_PROMPT,
            to_runtime=True,
            id_strategy=lambda v: "question-answering-prompt",
            category="prompt",
            metadata={"op_type": "question-answering"},
            comment="The prompt template for the question-answering model. It is a `string.Template` object with "
            "`$question` and `$context` placeholders.",
        )
        CLOCK.sleep(1.5 * len(conv.questions), 2.5 * len(conv.questions))
        for q in conv.questions:
            ctx_item = (
                build_context(retrievals[q.id]),
                {
                    "class_name": "context",
                    "category": "memory_context",
                    "comment": "The formatted memory context.",
                },
            )
            query_item = (q.text, {"class_name": "query", "id_strategy": lambda _, qid=q.id: qid})
            with comment_op_scope(
                op_name="question-answering", category="evaluation", comment=QA_OP_COMMENT
            ) as op:
                run.op_ids[("answer", q.id)] = op.op_id
                inputs = [
                    ({"id": r["trace_id"]}, {"id_strategy": lambda v: v["id"], "identity_only": True})
                    for r in retrievals[q.id]
                ]
                comment_op(
                    inputs=inputs,
                    outputs=[ctx_item],
                    metadata={"source_code": CONTEXT_BUILDER_SRC},
                    comment="The formatted context is constructed from the retrieved memories. Depending on "
                    "the memory system implementation, the resulting context may include only "
                    "selected portions of those memories rather than the full content of every "
                    "retrieved memory.",
                    reuse_op=True,
                )
                comment_op(
                    inputs=[query_item, ctx_item, rv_tpl],
                    outputs=[
                        (
                            preds[q.id],
                            {
                                "class_name": "prediction",
                                "category": "llm_response",
                                "comment": "The model's response to the question.",
                            },
                        )
                    ],
                    comment=QA_OP_COMMENT,
                    reuse_op=True,
                )
        for tpl, qs in groups.items():
            rv_judge = comment_variable(
                JUDGE_PROMPTS[tpl],
                to_runtime=True,
                id_strategy=lambda _, n=tpl: n,
                category="prompt",
                class_name="judge_prompt",
                metadata={"op_type": "llm-judge"},
                comment="The prompt template for the judge model. It is a `string.Template` object with `$question`, "
                "`$prediction`, and `$golden_answers` placeholders.",
            )
            parse_fn = parse_locomo_judge if tpl == "locomo-judge" else parse_lme_judge
            CLOCK.sleep(1.0 * len(qs), 2.0 * len(qs))
            for q in qs:
                jr = (
                    responses[q.id],
                    {
                        "class_name": "judge_response",
                        "category": "llm_response",
                        "comment": "The judge model's judgment.",
                    },
                )
                with comment_op_scope(
                    op_name="llm-judge",
                    category="evaluation",
                    comment="The judge model judges whether the model's prediction is correct or "
                    "not based on a list of golden answers.",
                ) as op:
                    run.op_ids[("judge", q.id)] = op.op_id
                    comment_op(
                        inputs=[
                            (q.text, {"class_name": "query", "id_strategy": lambda _, qid=q.id: qid}),
                            (
                                q.gold,
                                {
                                    "class_name": "golden_answers",
                                    "encoding_fn": lambda v: ", ".join(v),
                                    "category": "golden_answers",
                                    "comment": "The golden answers for the question.",
                                },
                            ),
                            rv_judge,
                            (preds[q.id], {"class_name": "prediction", "category": "llm_response"}),
                        ],
                        outputs=[jr],
                        comment="The judge model gives its judgment based on the question, the golden "
                        "answers, and the instruction.",
                        reuse_op=True,
                    )
                    comment_link(
                        source=jr,
                        target=(
                            parse_fn(responses[q.id]),
                            {"class_name": "judge_score", "comment": "The judgement score."},
                        ),
                        comment="Use a function to convert the judge model's response to a float score.",
                        edge_metadata={"source_code": inspect.getsource(parse_fn)},
                    )


def _roundtrip(graph: ExecNetwork) -> ExecNetwork:
    """Export the graph to JSON and import it again, as MemBase does between stages."""
    return ExecNetwork.import_graph(json.loads(json.dumps(graph.export_graph(), ensure_ascii=False)))


def execute(conv: Conv, system: str, faults: list, trace: bool = False) -> Run:
    run = Run(conv, system, faults, trace)
    layer = LAYERS[system](run)
    T = trace
    nc = contextlib.nullcontext
    if T:
        start = datetime(2025, 3, 3, 9, 0) + timedelta(minutes=_seed("start", system, conv.key) % 40000)
        CLOCK.reset(_seed("clock", system, conv.key), start)
    graph_meta = {
        "save_dir": f"./outputs/{system}/{conv.user_id}",
        "layer_type": layer.layer_type,
        "traj_metadata": conv.traj_meta,
        "traced_data_save_dir": "./outputs/traced_data",
        "dataset_cls": conv.dataset_cls,
    }
    # Stage 1: construction.
    with (
        comment_graph(user_id=conv.user_id, project_id=layer.layer_type, strict=True, metadata=graph_meta)
        if T
        else nc()
    ) as g:
        for i, s in enumerate(conv.sessions, start=1):
            with (
                comment_session(
                    session_id=s.id,
                    comment=f"It is the {i}th conversational session.",
                    category="memory_construction",
                    metadata=s.metadata,
                )
                if T
                else nc()
            ):
                for m in s.messages:
                    layer.add_message(m)
                    if T:
                        CLOCK.sleep(0.2, 0.26)
        with (
            comment_session(
                comment="It is the finalization stage of memory construction. This stage ensures all "
                "messages have been fully ingested into the memory layer and the internal "
                "memory state is consistent.",
                category="memory_construction",
            )
            if T
            else nc()
        ):
            layer.flush()
    # Stage 2: search (graph re-imported from the exported construction graph).
    retrievals = {}
    if T:
        g = _roundtrip(g)
        CLOCK.sleep(1800, 5400)
    with (
        comment_graph(graph=g) if T else nc() as g,
        comment_session(
            category="memory_search",
            comment="Based on a list of questions, we search the memory for each question.",
            metadata={"top_k": layer.top_k, "strict": False},
        )
        if T
        else nc(),
    ):
        for q in conv.questions:
            rv_q = None
            if T:
                rv_q = comment_variable(
                    q.text,
                    variable_name="query",
                    to_runtime=True,
                    id_strategy=lambda _, qid=q.id: qid,
                    category="message & query",
                    class_name="query",
                    metadata=q.metadata,
                    comment="A task query which requires the memory system to retrieve relevant memories.",
                )
            retrievals[q.id] = layer.retrieve(q, rv_q)
            if T:
                CLOCK.sleep(0.05, 0.3)
    # Stage 3: evaluation (graph re-imported from the exported search graph).
    if T:
        g = _roundtrip(g)
        CLOCK.sleep(600, 2400)
    with comment_graph(graph=g) if T else nc() as g:
        evaluate(run, retrievals)
    if T:
        run.graph = json.loads(json.dumps(g.export_graph(), ensure_ascii=False))
    return run


# ---------------------------------------------------------------------------
# Fault plan.  op: extract/update (mem0, by message ref), lc (long-context
# memory_update, by message ref), rag_doc (NaiveRAG: the buffer operation that
# emits the document holding that message), retrieve/answer (by question key).
# `expect` = the label each question must get from this fault (checked against
# the counterfactual labelling); `touches` = questions this fault also damages
# without being the decisive one.
# ---------------------------------------------------------------------------


def P(op, ref, kind, expect=None, touches=None, why="", **params):
    return {
        "op": op,
        "ref": ref,
        "kind": kind,
        "params": params,
        "expect": expect or {},
        "touches": touches or [],
        "why": why,
    }


EX, UP, DE, RE, RS = "ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"

PLAN = {
    "mem0": {
        "ysolde_corentin": [
            P(
                "extract",
                "D1:4",
                "drop",
                {"q1": EX},
                atoms=["y_kiln"],
                why="The extractor returns no fact for the kiln turn, so where the kiln came from never enters a "
                "memory unit.",
            ),
            P(
                "extract",
                "D2:3",
                "rewrite",
                {"q2": EX},
                atom="y_pim",
                text="One of Ysolde's ferrets is named Pim",
                atoms=["y_pim"],
                why="The fact keeps Pim and loses Quill. Repairing this extraction (later operations ideal) stores "
                "both names and an ideal search returns them, so it is the earliest decisive fault even though "
                "the search for this question is also faulty.",
            ),
            P(
                "retrieve",
                "q2",
                "drop",
                None,
                ["q2"],
                atoms=["y_pim"],
                why="The search leaves out the (already partial) Pim memory. A second, later fault: with the "
                "extraction fault kept and this search ideal the answer still lacks Quill, so not decisive.",
            ),
            P(
                "update",
                "D3:1",
                "update_lose",
                {"q4": UP},
                target="c_vellacourt",
                text="Corentin lives in a flat on Kestrel Quay in Lindhollow from 1 April 2024",
                atoms=["c_kestrel"],
                why="The ideal decision merges the move into the Vellacourt Lane memory and keeps the old address; "
                "the faulty UPDATE overwrites it with the new address only, so the previous address is lost.",
            ),
            P(
                "update",
                "D3:4",
                "update_lose",
                {"q11": UP},
                target="c_griplab",
                replace_for=["c_overhang"],
                text="Corentin climbs at the Overhang gym in Lindhollow, which is open until midnight",
                atoms=["c_overhang"],
                why="Instead of ADDing the Overhang fact, the decision rewrites the Grip Lab memory into it; the name "
                "of the gym he used before the move is lost.",
            ),
            P(
                "retrieve",
                "q6",
                "drop",
                {"q6": RE},
                atoms=["y_mugs", "y_vases"],
                why="The store holds 'tenmoku-glazed mugs and bud vases' at question time; the search does not "
                "return it.",
            ),
            P(
                "retrieve",
                "q8",
                "drop",
                {"q8": RE},
                atoms=["c_brennock"],
                why="The Brennock Water memory is in the store but not retrieved; the Tarrow Fen plan is, and the "
                "answer repeats the plan.",
            ),
            P(
                "update",
                "D5:6",
                "delete",
                {"q10": DE},
                target="c_ottilie_move",
                why="'Ottilie changed her mind about the flat' makes the decision DELETE the memory that she is moving "
                "to Saltmere, although she is still moving; only the new fact is added.",
            ),
            P(
                "answer",
                "q3",
                "answer",
                {"q3": RS},
                text="On Saturday 3 February 2024.",
                why="The context holds the adoption memory ('last Saturday', time 2024-02-02); the answer resolves it "
                "to the following Saturday.",
            ),
        ],
        "idunn_taavi": [
            P(
                "update",
                "D3:5",
                "update_lose",
                {"q8": UP},
                target="i_three_hives",
                text="Idunn has two bee colonies going into winter",
                atoms=["i_two"],
                why="The ideal UPDATE keeps 'previously kept three beehives'; the faulty one rewrites the three-hives "
                "memory to the two colonies only.",
            ),
            P(
                "extract",
                "D4:2",
                "rewrite",
                {"q7": EX},
                atom="t_finish",
                text="Taavi finished the Marrowby half marathon in under two hours",
                atoms=[],
                why="The fact drops the exact time 1:57:32, so no unit ever holds it (the goal 'under two hours' and "
                "Eskil's 1:52 are look-alikes).",
            ),
            P(
                "update",
                "D4:9",
                "delete",
                {"q3": DE},
                target="t_choir",
                why="Reading the summer-concert news, the decision deletes 'Taavi joined the Saltmere Chamber "
                "Singers' as if it were outdated.",
            ),
            P(
                "retrieve",
                "q6",
                "drop",
                {"q6": RE},
                atoms=["t_physio"],
                why="The memory naming Dr Anouk Verhaegen is in the store at question time but not retrieved.",
            ),
            P(
                "answer",
                "q13",
                "answer",
                {"q13": RS},
                text="The Saltmere Chamber Singers' Christmas medley.",
                why="The context holds 'Idunn praised Taavi's singing in the Rutter piece'; the answer names something "
                "else. The annotated evidence is the bare reply 'Ha, thank you!' (D3:3); the neighbouring turn "
                "D3:2 states the answer.",
            ),
        ],
        "nkechi_wolfram": [
            P(
                "update",
                "D3:8",
                "update_lose",
                {"q8": UP},
                target="w_stall",
                text="Wolfram is now head baker at Crumb & Co",
                atoms=["w_crumb"],
                why="The ideal UPDATE keeps 'previously ran a bread stall on Fairhythe market'; the faulty UPDATE "
                "replaces the stall memory with the new job only.",
            ),
            P(
                "extract",
                "D2:9",
                "rewrite",
                None,
                ["q6"],
                atom="w_hamish",
                text="Wolfram's sailing club instructor made him practise capsize recoveries all afternoon",
                atoms=[],
                why="The instructor's name is lost here, but D4:8 restates it and is extracted correctly: with this "
                "fault kept and every later operation ideal q6 is still answered, so it is not decisive.",
            ),
            P(
                "retrieve",
                "q6",
                "drop",
                {"q6": RE},
                atoms=["w_hamish"],
                why="At question time the D4:8 memory names Hamish Achterberg as the instructor; the search leaves it "
                "out. Decisive although an earlier extraction was also faulty.",
            ),
            P(
                "update",
                "D4:2",
                "delete",
                {"q2": DE, "q13": DE},
                target="w_dinghy",
                why="While adding the regatta result, the decision deletes the Marigold Tern memory; both questions "
                "that need the dinghy's name fail.",
            ),
            P(
                "extract",
                "D3:1",
                "rewrite",
                {"q7": EX},
                atom="n_gran_date",
                text="Nkechi's grandmother Adaeze is turning ninety",
                atoms=[],
                why="'next Saturday' is dropped, so no unit says when the birthday is (the party fact from the same "
                "turn is kept).",
            ),
            P(
                "answer",
                "q10",
                "answer",
                {"q10": RS},
                text="£400, from Fairhythe town council.",
                why="The context holds the £4,000 grant; the answer misreads the amount.",
            ),
            P(
                "retrieve",
                "q3",
                "drop",
                {"q3": RE},
                atoms=["n_dob"],
                why="The Dobsonian memory is not retrieved; the earlier wish for a telescope is, and the answer "
                "follows it.",
            ),
        ],
        "leocadia_oisin": [
            P(
                "extract",
                "D1:10",
                "drop",
                {"q7": EX},
                atoms=["l_sprocket", "l_tansy"],
                why="The bare reply 'Sprocket and Tansy.' yields no fact; the kittens' names never enter memory.",
            ),
            P(
                "update",
                "D4:1",
                "update_lose",
                {"q12": UP},
                target="l_grade8",
                replace_for=["l_twelve"],
                text="Leocadia has twelve viola students and recently passed a viola exam",
                atoms=["l_twelve"],
                why="The decision merges the twelve-students fact into the grade-8 memory and degrades it to 'a viola "
                "exam', losing grade 8 and the distinction. A later operation deletes this unit, but this update "
                "is earlier and decisive.",
            ),
            P(
                "update",
                "D4:3",
                "delete",
                None,
                ["q12"],
                target="l_twelve",
                why="Deletes the already degraded unit. Not decisive for q12: with the earlier update fault kept and "
                "this operation ideal, the grade is still lost.",
            ),
            P(
                "update",
                "D4:4",
                "update_lose",
                {"q9": UP},
                target="o_cathal",
                replace_for=["o_moved"],
                text="Oisin has moved to Saltmere",
                atoms=["o_moved"],
                why="The move update overwrites 'moving in with his brother Cathal in Saltmere' and drops Cathal.",
            ),
            P(
                "update",
                "D4:6",
                "delete",
                {"q4": DE},
                target="o_sup",
                why="Adding 'Ingrid wants a paper', the decision deletes the supervisor memory as redundant.",
            ),
            P(
                "retrieve",
                "q10",
                "drop",
                {"q10": RE},
                atoms=["o_drummer"],
                why="The 'Cathal is a drummer' memory (from Leocadia's question, confirmed by the bare reply 'Yes.' "
                "that is the annotated evidence) is in the store but not retrieved.",
            ),
            P(
                "answer",
                "q11",
                "answer",
                {"q11": RS},
                text="Five.",
                why="The context holds 'seven kittens in total since May'; the answer adds up the batches wrongly.",
            ),
            P(
                "answer",
                "q5",
                "answer",
                {"q5": RS},
                text="On 16 August 2024.",
                why="The context holds 'leaving on Tuesday' with time 2024-07-13; the answer shifts the month.",
            ),
        ],
        "thandiwe_10k": [
            P(
                "update",
                "s5:1",
                "delete",
                {"q1": DE},
                target="u_pb_new",
                why="The merged personal-best memory (49:47, previously 52:10) is deleted when the friend's faster "
                "47:30 is mentioned.",
            ),
        ],
        "ignatius_novels": [
            P(
                "extract",
                "s3:1",
                "rewrite",
                {"q1": EX},
                atom="g_orchard",
                text="Is reading Orchard of Hours",
                atoms=[],
                why="A finished book is recorded as in progress, so only two finished novels reach memory.",
            ),
        ],
        "perpetua_library": [
            P(
                "answer",
                "q1",
                "answer",
                {"q1": RS},
                text="On Monday 26 February 2024.",
                why="The context holds 'starts on Monday' with time 2024-02-29; the answer picks the Monday before.",
            ),
        ],
    },
    "rag": {
        "ysolde_corentin": [
            P(
                "rag_doc",
                "D5:2",
                "truncate",
                {"q7": EX},
                keep=5,
                why="The buffered document cuts this message to 'Sold out of mugs by'; the count never enters a "
                "stored document.",
            ),
            P(
                "retrieve",
                "q2",
                "drop",
                {"q2": RE},
                atoms=["y_pim", "y_quill"],
                why="The document with 'Pim and Quill' is stored but not retrieved.",
            ),
            P(
                "retrieve",
                "q9",
                "drop",
                {"q9": RE},
                atoms=["y_bram"],
                why="The document saying Bram will rewire the shed is not retrieved.",
            ),
            P(
                "answer",
                "q5",
                "answer",
                {"q5": RS},
                text="He had been offered the job but hadn't decided whether to take it.",
                why="Both the offer (plan) and the acceptance with the start date are in the context; the answer "
                "follows the earlier hedge.",
            ),
        ],
        "idunn_taavi": [
            P(
                "rag_doc",
                "D2:1",
                "truncate",
                {"q5": EX},
                keep=5,
                why="The buffered document cuts this message to 'I handed in the manuscript'; the day (Thursday) "
                "never enters a stored document.",
            ),
            P(
                "retrieve",
                "q7",
                "drop",
                {"q7": RE},
                atoms=["t_finish"],
                why="The document with 1:57:32 is not retrieved. Decisive although the answer step is also faulty.",
            ),
            P(
                "answer",
                "q7",
                "answer",
                None,
                ["q7"],
                text="1:52.",
                why="The answer would pick Eskil's look-alike time. Later than the retrieval fault, so not decisive.",
            ),
            P(
                "answer",
                "q11",
                "answer",
                {"q11": RS},
                text="At Ashgrove Lido.",
                why="The context holds St Brannoc's church; the answer picks the later summer concert.",
            ),
            P(
                "retrieve",
                "q2",
                "drop",
                {"q2": RE},
                atoms=["i_hive_loc"],
                why="The document saying the hives are on the Quillon Street allotment is not retrieved.",
            ),
        ],
        "nkechi_wolfram": [
            P(
                "rag_doc",
                "D4:2",
                "omit",
                {"q9": EX},
                why="The emitted document leaves this message out entirely; the regatta result is in no document.",
            ),
            P(
                "rag_doc",
                "D2:7",
                "truncate",
                {"q11": EX},
                keep=6,
                why="The document cuts the message before 'Twice.'",
            ),
            P(
                "retrieve",
                "q4",
                "drop",
                {"q4": RE},
                atoms=["n_ring"],
                why="The document with the Ring Nebula is not retrieved; the Saturn one is.",
            ),
            P(
                "answer",
                "q8",
                "answer",
                {"q8": RS},
                text="He was a sailing instructor at Saltmere Sailing Club.",
                why="The context says he ran a bread stall; the answer confuses him with the instructor.",
            ),
            P(
                "answer",
                "q6",
                "answer",
                {"q6": RS},
                text="It isn't stated who the instructor is.",
                why="The context names Hamish Achterberg; the answer abstains.",
            ),
        ],
        "leocadia_oisin": [
            P(
                "rag_doc",
                "D1:5",
                "omit",
                {"q4": EX},
                why="The emitted document leaves out the message naming Professor Ingrid Soldatova as supervisor; "
                "later documents only mention 'Ingrid'.",
            ),
            P(
                "rag_doc",
                "D4:6",
                "truncate",
                {"q8": EX},
                keep=1,
                why="The document keeps only 'Confirmed!' of this message; the species name is lost.",
            ),
            P(
                "retrieve",
                "q1",
                "drop",
                {"q1": RE},
                atoms=["l_job"],
                why="The document with Brennock Hall music school is not retrieved.",
            ),
            P(
                "retrieve",
                "q10",
                "drop",
                {"q10": RE},
                atoms=["o_drummer"],
                why="The document with 'Cathal the drummer?' / 'Yes.' is not retrieved.",
            ),
            P(
                "answer",
                "q11",
                "answer",
                {"q11": RS},
                text="Five.",
                why="The context holds 'Seven since May'; the answer miscounts.",
            ),
        ],
        "thandiwe_10k": [
            P(
                "answer",
                "q1",
                "answer",
                {"q1": RS},
                text="52:10.",
                why="Both times are in the context; the answer gives the superseded one.",
            ),
        ],
        "radomir_landlord": [
            P(
                "retrieve",
                "q1",
                "drop",
                {"q1": RE},
                atoms=["r_pryce"],
                why="The document naming Mrs Gwenllian Pryce is stored but not retrieved; the neighbour's landlord "
                "(a look-alike) shares that document, so it is not retrieved either.",
            ),
        ],
    },
    "long_context": {
        "ysolde_corentin": [
            P(
                "lc",
                "D3:6",
                "drop_msg",
                {"q1": UP},
                msg="D1:4",
                why="The memory unit held the kiln message; the update that absorbs D3:6 also drops it (a "
                "de-duplication bug) although the unit was within its window.",
            ),
            P(
                "lc",
                "D1:6",
                "truncate_new",
                {"q9": EX},
                keep=4,
                why="The message is cut to 'In the shed, once' as it is absorbed; Bram never enters the unit.",
            ),
            P(
                "answer",
                "q8",
                "answer",
                {"q8": RS},
                text="He went birdwatching at Tarrow Fen.",
                why="The unit holds both the plan and what he did; the answer reports the plan.",
            ),
            P(
                "answer",
                "q3",
                "answer",
                {"q3": RS},
                text="On Saturday 3 February 2024.",
                why="The unit holds 'on Saturday' with timestamp 2024-02-02; the answer picks the next Saturday.",
            ),
        ],
        "idunn_taavi": [
            P(
                "lc",
                "D2:5",
                "overtrim",
                {"q1": UP, "q2": UP, "q8": UP},
                until="D1:4",
                why="This update trims far more than the window requires (a token miscount), dropping D1:1-D1:4 "
                "which the unit held.",
            ),
            P(
                "answer",
                "q7",
                "answer",
                {"q7": RS},
                text="1:52.",
                why="The unit holds 1:57:32; the answer takes Eskil's look-alike time.",
            ),
        ],
        "nkechi_wolfram": [
            P(
                "lc",
                "D3:2",
                "drop_msg",
                None,
                ["q5", "q13"],
                msg="D2:1",
                why="Drops the message naming Gustav, but D4:8 restates the starter's name later: with this fault "
                "kept and later operations ideal both questions are answered, so it is not decisive.",
            ),
            P(
                "lc",
                "D4:8",
                "truncate_new",
                {"q5": EX, "q13": EX},
                keep=2,
                why="The restatement is cut to 'My sourdough' as it is absorbed; after the earlier drop, Gustav is in "
                "no part of the unit. Decisive although an earlier update was also faulty; the decisive "
                "operation's fault is that the new message's content never entered the unit, hence "
                "ExtractionError.",
            ),
            P(
                "lc",
                "D3:5",
                "drop_msg",
                {"q4": UP},
                msg="D2:6",
                why="The update drops the Ring Nebula message that the unit held.",
            ),
            P(
                "answer",
                "q10",
                "answer",
                {"q10": RS},
                text="£400, from Fairhythe town council.",
                why="The unit holds £4,000; the answer misreads it.",
            ),
        ],
        "leocadia_oisin": [
            P(
                "lc",
                "D1:7",
                "truncate_new",
                {"q3": EX},
                keep=1,
                why="The thesis message is cut to 'Lichen' as it is absorbed. Decisive; a later update also drops "
                "the truncated remnant.",
            ),
            P(
                "lc",
                "D2:3",
                "drop_msg",
                None,
                ["q3"],
                msg="D1:7",
                why="Drops the (already truncated) thesis message; not decisive.",
            ),
            P(
                "lc",
                "D3:8",
                "drop_msg",
                {"q6": UP},
                msg="D2:5",
                why="The update drops the Lanternfall message that the unit held.",
            ),
            P(
                "answer",
                "q5",
                "answer",
                {"q5": RS},
                text="On 16 August 2024.",
                why="The unit holds 'on Tuesday' with timestamp 2024-07-13; the answer shifts the month.",
            ),
        ],
        "ignatius_novels": [
            P(
                "lc",
                "s4:1",
                "drop_msg",
                {"q1": UP},
                msg="s2:1",
                why="The update drops the message about finishing The Glass Tidewater; the count becomes 2.",
            ),
        ],
        "radomir_landlord": [
            P(
                "lc",
                "s2:1",
                "truncate_new",
                {"q1": EX},
                keep=4,
                why="The message is cut to 'Good news: my landlord,' as it is absorbed; the name never enters the "
                "unit.",
            ),
        ],
        "zdenka_balcony": [
            P(
                "answer",
                "q1",
                "answer",
                {"q1": RS},
                text="Cavolo nero and tomatoes.",
                why="The unit holds cavolo nero and runner beans; the answer mixes in the abandoned tomato plan.",
            ),
        ],
    },
}

ALLOWED_TYPES = {
    "mem0": {EX, UP, DE, RE, RS},
    "rag": {EX, RE, RS},
    "long_context": {EX, UP, RS},
}


# ---------------------------------------------------------------------------
# Counterfactual labelling (the decisive criterion)
# ---------------------------------------------------------------------------


def error_type(op: tuple, faults: list) -> str:
    kind = op[0]
    if kind == "extract" or kind in ("buffer", "flush"):
        return EX
    if kind == "update":
        return DE if any(f.kind == "delete" for f in faults) else UP
    if kind == "lc":
        return EX if any(f.kind == "truncate_new" for f in faults) else UP
    if kind == "retrieve":
        return RE
    if kind == "answer":
        return RS
    raise ValueError(op)


def build_faults(system: str, conv: Conv, specs: list) -> list:
    dry = None
    out = []
    for i, s in enumerate(specs, start=1):
        params = dict(s["params"])
        if s["op"] in ("retrieve", "answer"):
            key = (s["op"], conv.q(s["ref"]).id)
        elif s["op"] == "rag_doc":
            if dry is None:
                dry = execute(conv, system, [])
            keys = dry.emitted[s["ref"]]
            assert len(keys) == 1, f"{conv.key} {s['ref']} is in {len(keys)} documents: {keys}"
            key = keys[0]
            params["msg"] = s["ref"]
        else:
            conv.msg(s["ref"])
            key = (s["op"], s["ref"])
        out.append(
            Fault(
                f"{system}:{conv.key}:F{i:02d}",
                system,
                conv.key,
                key,
                s["kind"],
                params,
                {conv.q(k).id: v for k, v in s["expect"].items()},
                [conv.q(k).id for k in s["touches"]],
                s["why"],
            )
        )
    return out


def label_run(conv: Conv, system: str, faults: list):
    cache: dict = {}

    def sim(fs):
        key = frozenset(f.fid for f in fs)
        if key not in cache:
            cache[key] = execute(conv, system, fs)
        return cache[key]

    base, full = sim([]), sim(faults)
    assert base.order == full.order, "operation structure must not depend on faults"
    pos = {k: i for i, k in enumerate(full.order)}
    fault_ops = sorted({f.op for f in faults}, key=lambda o: pos[o])
    labels = {}
    for q in conv.questions:
        if not base.ok[q.id]:
            assert q.ae, f"{system}/{conv.key}/{q.key} fails without any fault"
            assert not full.ok[q.id]
            labels[q.id] = ("AnnotationError", ("judge", q.id))
            continue
        assert not q.ae, f"{system}/{conv.key}/{q.key} is marked AE but the ideal pipeline answers it"
        if full.ok[q.id]:
            continue
        for op in fault_ops:
            sub = [f for f in faults if pos[f.op] <= pos[op]]
            if not sim(sub).ok[q.id]:
                # sim(faults strictly before op) succeeded in the previous iteration (or is base).
                labels[q.id] = (error_type(op, [f for f in faults if f.op == op]), op)
                break
        else:
            raise AssertionError(f"{system}/{conv.key}/{q.key}: no decisive fault found")
    return labels, base, full


# ---------------------------------------------------------------------------
# Writing graphs, annotations and the manifest
# ---------------------------------------------------------------------------


def _index(data: dict):
    nodes = {n["full_node_id"]: n for n in data["data"]["nodes"]}
    ops = {o["op_id"]: o for o in data["data"]["operations"]}
    by_op = defaultdict(list)
    for e in data["data"]["edges"]:
        by_op[e["op_id"]].append(e)
    latest = {}
    for n in data["data"]["nodes"]:
        if n["full_name"] not in latest or n["version"] > latest[n["full_name"]]["version"]:
            latest[n["full_name"]] = n
    return nodes, ops, by_op, latest


def make_annotations(conv: Conv, run: Run, labels: dict) -> list:
    nodes, ops, by_op, latest = _index(run.graph)
    anns = []
    for q in conv.questions:
        if q.id not in labels:
            continue
        etype, op = labels[q.id]
        qa_op, judge_op = run.op_ids[("answer", q.id)], run.op_ids[("judge", q.id)]
        pred_id = next(
            e["target_full_node_id"]
            for e in by_op[qa_op]
            if nodes[e["target_full_node_id"]]["class_name"] == "prediction"
        )
        gold_id = next(
            e["source_full_node_id"]
            for e in by_op[judge_op]
            if nodes[e["source_full_node_id"]]["class_name"] == "golden_answers"
        )
        anns.append(
            {
                "query_id": q.id,
                "query": q.text,
                "golden_answers": q.gold[0] if q.gold_as_str else list(q.gold),
                "golden_answers_id": gold_id,
                "prediction": run.pred[q.id],
                "prediction_id": pred_id,
                "source_evidence_ids": [latest[mid]["full_node_id"] for mid in q.evidence],
                "final_error_type": etype,
                "final_op_id": run.op_ids[op],
            }
        )
    return anns


def build(out_dir: Path) -> dict:
    manifest = {
        "name": "heldout_blind",
        "description": "Blind held-out memory-failure graphs recorded with smartcomment "
        f"{getattr(smartcomment, '__version__', '0.1.2')} in MemBase style; labels by construction "
        "(planted faults) and the earliest-decisive criterion. Do not tune on this set.",
        "regenerate": "/work/main/.venv/bin/python benchmarks/heldout_blind/generate.py",
        "graphs": [],
        "faults": [],
        "cases": [],
    }
    for system, per_conv in PLAN.items():
        (out_dir / system).mkdir(parents=True, exist_ok=True)
        for conv_key, specs in per_conv.items():
            conv = CONVERSATIONS[conv_key]
            faults = build_faults(system, conv, specs)
            labels, base, full = label_run(conv, system, faults)
            expected = {qid: (typ, f.op) for f in faults for qid, typ in f.expect.items()}
            got = {qid: lab for qid, lab in labels.items() if lab[0] != "AnnotationError"}
            assert got == expected, f"{system}/{conv_key}: labels {got} != plan {expected}"
            for f in faults:
                for qid in f.touches:
                    assert qid in labels and labels[qid][1] != f.op, (f.fid, qid)
            run = execute(conv, system, faults, trace=True)
            assert run.order == full.order and run.ok == full.ok and run.pred == full.pred
            data = run.graph
            data["metadata"]["memtracebench_graph_filename"] = f"{conv_key}.json"
            data["metadata"]["memtracebench_dataset_source"] = conv.source
            data["data"]["annotations"] = make_annotations(conv, run, labels)
            rel = f"set/{system}/{conv_key}.json"
            with open(out_dir / system / f"{conv_key}.json", "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=4, ensure_ascii=False)
            _, ops, _, _ = _index(data)
            qkey = {q.id: q.key for q in conv.questions}
            manifest["graphs"].append(
                {
                    "system": system,
                    "graph": rel,
                    "conversation": conv_key,
                    "style": conv.style,
                    "user_id": conv.user_id,
                    "questions": len(conv.questions),
                    "failed": len(labels),
                    "correct": len(conv.questions) - len(labels),
                    "operations": len(data["data"]["operations"]),
                    "nodes": len(data["data"]["nodes"]),
                    "edges": len(data["data"]["edges"]),
                }
            )
            for f in faults:
                decisive = [
                    qid for qid, lab in labels.items() if lab[1] == f.op and lab[0] != "AnnotationError"
                ]
                manifest["faults"].append(
                    {
                        "fault_id": f.fid,
                        "system": system,
                        "graph": rel,
                        "op_key": list(f.op),
                        "op_id": run.op_ids[f.op],
                        "op_name": ops[run.op_ids[f.op]]["op_name"],
                        "kind": f.kind,
                        "params": f.params,
                        "queries": sorted(set(decisive) | set(f.touches), key=list(qkey).index),
                        "label": error_type(f.op, [f]) if decisive else None,
                        "decisive_for": decisive,
                        "touches_not_decisive": f.touches,
                        "why": f.why,
                    }
                )
            for q in conv.questions:
                if q.ae:
                    manifest["faults"].append(
                        {
                            "fault_id": f"{system}:{conv_key}:AE-{q.key}",
                            "system": system,
                            "graph": rel,
                            "op_key": ["judge", q.id],
                            "op_id": run.op_ids[("judge", q.id)],
                            "op_name": "llm-judge",
                            "kind": "unsupported_gold",
                            "params": {"gold": q.gold, "conversation_says": q.correct},
                            "queries": [q.id],
                            "label": "AnnotationError",
                            "decisive_for": [q.id],
                            "touches_not_decisive": [],
                            "why": f"The gold answer '{q.gold[0]}' is not supported by the conversation: the annotated "
                            f"turn ({', '.join(q.evidence)}) says '{q.correct}'. The pipeline answers from the "
                            "conversation and the judge marks it wrong. final_op_id points at this question's "
                            "llm-judge operation; score the type only.",
                        }
                    )
            for ann in data["data"]["annotations"]:
                qid = ann["query_id"]
                op = labels[qid][1]
                manifest["cases"].append(
                    {
                        "system": system,
                        "graph": rel,
                        "query_id": qid,
                        "query_key": qkey[qid],
                        "query": ann["query"],
                        "final_error_type": ann["final_error_type"],
                        "final_op_id": ann["final_op_id"],
                        "final_op_name": ops[ann["final_op_id"]]["op_name"],
                        "decisive_fault": next(
                            (f.fid for f in faults if f.op == op), f"{system}:{conv_key}:AE-{qkey[qid]}"
                        ),
                        "other_faults": [f.fid for f in faults if qid in f.touches],
                    }
                )
            print(
                f"{rel}: {len(conv.questions)} questions, {len(labels)} failed "
                f"({Counter(lab[0] for lab in labels.values())})",
                flush=True,
            )
    counts = defaultdict(Counter)
    for c in manifest["cases"]:
        counts[c["system"]][c["final_error_type"]] += 1
    manifest["counts"] = {s: dict(sorted(c.items())) for s, c in counts.items()}
    manifest["totals"] = {
        "graphs": len(manifest["graphs"]),
        "memory_failures": sum(1 for c in manifest["cases"] if c["final_error_type"] != "AnnotationError"),
        "annotation_errors": sum(1 for c in manifest["cases"] if c["final_error_type"] == "AnnotationError"),
        "correct_questions": sum(g["correct"] for g in manifest["graphs"]),
        "multi_fault_cases": sum(1 for c in manifest["cases"] if c["other_faults"]),
    }
    with open(out_dir / "manifest.json", "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=2, ensure_ascii=False)
    return manifest


# ---------------------------------------------------------------------------
# Checks on the written set
# ---------------------------------------------------------------------------

OP_NAMES_FOR_TYPE = {
    EX: {"memory_system.extract_facts", "memory_system.message_buffer_update", "memory_system.memory_update"},
    UP: {"memory_system.update_memory_decision", "memory_system.memory_update"},
    DE: {"memory_system.update_memory_decision"},
    RE: {"memory_system.search_vector_store", "memory_system.retrieve"},
    RS: {"question-answering"},
    "AnnotationError": {"llm-judge"},
}


def check(out_dir: Path) -> None:
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    problems = []
    n_ann = 0
    for g in manifest["graphs"]:
        path = out_dir.parent / g["graph"]
        data = json.loads(path.read_text(encoding="utf-8"))
        nodes, ops, by_op, _ = _index(data)
        anns = data["data"].get("annotations", [])
        n_ann += len(anns)
        md = data["metadata"]
        if md.get("memtracebench_graph_filename") != path.name or not md.get("memtracebench_dataset_source"):
            problems.append(f"{path}: graph metadata incomplete")
        # Failed cases are found through llm-judge operations whose judge_score is 0.0.
        failed_queries = set()
        for op_id, o in ops.items():
            if o["op_name"] != "llm-judge" or o["category"] != "evaluation":
                continue
            es = by_op[op_id]
            score = [
                nodes[e["target_full_node_id"]]["value"]
                for e in es
                if nodes[e["target_full_node_id"]]["class_name"] == "judge_score"
            ]
            query = [
                nodes[e["source_full_node_id"]]["name"]
                for e in es
                if nodes[e["source_full_node_id"]]["class_name"] == "query"
            ]
            if score == ["0.0"]:
                failed_queries.update(query)
        if failed_queries != {a["query_id"] for a in anns}:
            problems.append(f"{path}: judge failures {sorted(failed_queries)} != annotations")
        for a in anns:
            if a["final_op_id"] not in ops:
                problems.append(f"{path}: {a['query_id']} final_op_id {a['final_op_id']} is not an operation")
                continue
            if a["final_error_type"] not in ALLOWED_TYPES[g["system"]] | {"AnnotationError"}:
                problems.append(
                    f"{path}: {a['query_id']} type {a['final_error_type']} not possible for {g['system']}"
                )
            if ops[a["final_op_id"]]["op_name"] not in OP_NAMES_FOR_TYPE[a["final_error_type"]]:
                problems.append(
                    f"{path}: {a['query_id']} op {ops[a['final_op_id']]['op_name']} does not fit "
                    f"{a['final_error_type']}"
                )
            if a["final_error_type"] == DE and not any(
                nodes[e["target_full_node_id"]]["class_name"] == "delete_marker"
                for e in by_op[a["final_op_id"]]
            ):
                problems.append(f"{path}: {a['query_id']} DeletionError op deletes nothing")
            for nid in [a["golden_answers_id"], a["prediction_id"], *a["source_evidence_ids"]]:
                if nid not in nodes:
                    problems.append(f"{path}: {a['query_id']} node {nid} missing")
            for nid in a["source_evidence_ids"]:
                if nid in nodes and nodes[nid]["category"] != "message":
                    problems.append(f"{path}: evidence {nid} is not a message node")
            qn = nodes.get(f"query:{a['query_id']}@1")
            if qn is None or qn["category"] != "message & query" or "evidence" not in qn["metadata"]:
                problems.append(f"{path}: query node for {a['query_id']} missing or malformed")
        # QA inputs must resolve to existing memory units.
        for op_id, o in ops.items():
            if o["op_name"] == "question-answering":
                for e in by_op[op_id]:
                    src = nodes[e["source_full_node_id"]]
                    if (
                        nodes[e["target_full_node_id"]]["class_name"] == "context"
                        and src["category"] != "memory_entry"
                    ):
                        problems.append(f"{path}: QA input {src['full_node_id']} is not a memory_entry")
    for f in manifest["faults"]:
        data_path = out_dir.parent / f["graph"]
        ops_in = {o["op_id"] for o in json.loads(data_path.read_text(encoding="utf-8"))["data"]["operations"]}
        if f["op_id"] not in ops_in:
            problems.append(f"manifest fault {f['fault_id']}: op {f['op_id']} not in {f['graph']}")
    if n_ann != len(manifest["cases"]):
        problems.append(f"{n_ann} annotations vs {len(manifest['cases'])} manifest cases")
    if problems:
        print("\n".join(problems))
        raise SystemExit(f"check failed: {len(problems)} problem(s)")
    print(
        f"check ok: {len(manifest['graphs'])} graphs, {n_ann} annotations; every final_op_id, evidence, "
        "prediction and gold node id exists in its graph."
    )


def write_readme(manifest: dict) -> None:
    types = [EX, UP, DE, RE, RS, "AnnotationError"]
    rows = []
    for s in SYSTEMS:
        c = manifest["counts"].get(s, {})
        n_graphs = sum(1 for g in manifest["graphs"] if g["system"] == s)
        n_ok = sum(g["correct"] for g in manifest["graphs"] if g["system"] == s)
        mem = sum(v for k, v in c.items() if k != "AnnotationError")
        rows.append(
            f"| {s} | {n_graphs} | "
            + " | ".join(
                str(c.get(t, 0)) if t in ALLOWED_TYPES[s] or t == "AnnotationError" else "–" for t in types
            )
            + f" | {mem} | {n_ok} |"
        )
    tot = manifest["totals"]
    text = README_TEMPLATE.format(
        table="\n".join(rows),
        graphs=tot["graphs"],
        failures=tot["memory_failures"],
        ae=tot["annotation_errors"],
        correct=tot["correct_questions"],
        multi=tot["multi_fault_cases"],
        n_faults=sum(1 for f in manifest["faults"] if f["kind"] != "unsupported_gold"),
    )
    (HERE / "README.md").write_text(text, encoding="utf-8")


README_TEMPLATE = """# heldout_blind — blind held-out memory-failure graphs

**Do not tune on this set.** It exists to score attribution methods that were written
without looking at it. Do not read `generate.py`, `set/manifest.json` or the
`annotations` of the graphs while developing or tuning a method; run the method, then score.

## What it is

{graphs} execution graphs (`set/<system>/<conversation>.json`) recorded with the real
`smartcomment` 0.1.2 package, in the MemTraceBench layout: one exported graph per file
(`graph_id, user_id, project_id, …, metadata, data: {{nodes, edges, operations, sessions}}`),
graph `metadata` with `memtracebench_graph_filename` and `memtracebench_dataset_source`, and
one annotation per failed question in `data.annotations` (`query_id, query, golden_answers,
golden_answers_id, prediction, prediction_id, source_evidence_ids, final_error_type,
final_op_id`).

- {failures} planted memory failures, {ae} `AnnotationError` cases (gold answer not supported by
  the conversation; `final_op_id` points at that question's `llm-judge` operation — score the
  type only), {correct} correctly answered questions kept in the graphs (judge score 1.0, no
  annotation), {multi} failed questions touched by more than one planted fault.
- {n_faults} planted faults in total (some hit several questions, some are deliberately
  non-decisive second faults).

| system | graphs | ExtractionError | UpdateError | DeletionError | RetrievalError | ResponseError | AnnotationError | memory failures | correct |
|---|---|---|---|---|---|---|---|---|---|
{table}

(– = the system cannot have that type: NaiveRAG has no memory-unit updates or deletions,
long-context has no retrieval choice.)

## How it was built

`generate.py` re-implements, in deterministic Python, the pipelines MemBase traces (the
instrumentation follows the public zjunlp MemBase / MemTrace layers and runners):

- **mem0** — per message: `memory_system.extract_facts` (prompt variable
  `fact-extraction-system-prompt`; `raw_fact_extraction_response` →
  `fact_extraction_response_with_code_block_removing` → `extracted_facts`), then
  `memory_system.update_memory_decision` (`memory_update_task_instruction`,
  `raw_memory_update_decision`, `update_action`; ADD = link to a new `memory_entry`
  `memory-unit-<id>`, UPDATE = a new version of the entry by mutation, DELETE = a link from
  the entry to the shared `delete_marker` node `DELETED`). Search:
  `memory_system.search_vector_store`, edges straight from the query node to the retrieved
  entries, scores in edge comments (top-k 6).
- **rag** (NaiveRAG) — per message `memory_system.message_buffer_update` (a mutation of the
  `message-buffer` variable, deferred mode, 150-token documents, 1 message of overlap); when
  the buffer overflows a `temporary_variable` document is emitted and `memory_system.add`
  stores it; the finalization session flushes the rest. Search: `memory_system.retrieve`
  (top-k 3).
- **long_context** — one unit `memory-unit`, one `memory_system.memory_update` mutation per
  message, trimming the oldest messages to the context window inside the same operation;
  `memory_system.retrieve` returns the whole unit.
- Every run has a construction stage (one session per conversation session plus a
  finalization session), is exported to JSON and re-imported (`ExecNetwork.import_graph`)
  for the search stage (`query` nodes, category `message & query`, `metadata.evidence`), and
  exported/re-imported again for the evaluation stage (`question-answering` and `llm-judge`
  operations, category `evaluation`; `context`, `prediction`, `golden_answers`,
  `judge_response`, `judge_score` nodes). Values are `repr()` / `json.dumps` strings; identity
  is by content, so equal predictions or judge responses share one node.
- Conventions vary as they do in real graphs: LoCoMo-style conversations with ids
  `U<n>:D<s>:<t>`, one with bare `D<s>:<t>` ids, one recorded with the older convention where
  the mem0 raw message is a plain string; LongMemEval-style user/assistant haystacks (one
  question per graph, `has_answer` metadata, sessions named `answer_*`, `sharegpt_*`,
  `ultrachat_*`); messages carrying image metadata; golden answers stored as a list or a
  string; LoCoMo JSON judge responses and LongMemEval yes/no judges; code-fenced LLM outputs.
- The conversations are new (invented people, places and topics). They contain list answers
  with two or three items, counts, explicit and relative dates, plans/hedges next to what was
  actually done, look-alike facts about another person, and questions whose annotated
  evidence turn is a bare reply while the neighbouring turn states the answer.
- Every "LLM" step (extraction, update decision, answering, judging) is deterministic and
  ideal unless a planted fault applies to that operation. Ids and timestamps come from a
  seeded source, so regeneration is byte-identical; timestamps advance 0–2 ms per record
  and therefore collide at millisecond resolution as in fast real runs.

Not included: an EverMemOS-style pipeline (optional in the brief). The `filename` / `lineno`
fields that smartcomment stores on every node, edge and operation point at `generate.py` (the
recorder) rather than at MemBase source files; they carry no label information.

## How the labels were obtained

Labels are computed, not typed: for each failed question the generator replays the pipeline
with the faults of all strictly earlier operations kept, the candidate operation repaired
and every later operation ideal. The label is the earliest operation whose repair makes the
question correct while keeping its fault (later operations ideal) still fails it — the
decisive criterion of DESIGN.md. The error type follows from the operation and the fault
(extraction / buffer / absorbing update losing new information → ExtractionError; a later
update losing held information → UpdateError; a DELETE → DeletionError; the store held it but
search did not return it → RetrievalError; the context held it → ResponseError). The result
is asserted against the plan in `generate.py`, and `--check` verifies every annotation's
`final_op_id`, evidence, prediction and gold node ids exist in its graph and that the
annotated questions are exactly those whose `llm-judge` score is 0.0.

`set/manifest.json` lists every planted fault (system, graph, operation id and name, fault,
queries, label or "not decisive", why) and every case with its decisive fault.

## Regenerate

```
/work/main/.venv/bin/python benchmarks/heldout_blind/generate.py          # writes set/ and this README
/work/main/.venv/bin/python benchmarks/heldout_blind/generate.py --check  # validates set/ only
```
(from `/work/main`; takes about ten seconds.)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only validate an existing set/")
    ap.add_argument("--out", type=Path, default=OUT_DIR)
    args = ap.parse_args()
    if not args.check:
        manifest = build(args.out)
        if args.out == OUT_DIR:
            write_readme(manifest)
        print(json.dumps(manifest["counts"], indent=1), json.dumps(manifest["totals"]))
    check(args.out)


if __name__ == "__main__":
    main()
