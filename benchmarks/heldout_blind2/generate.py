"""heldout_blind2: a blind, held-out set of memory-failure execution graphs.

Run from the repository root:

    /work/main/.venv/bin/python benchmarks/heldout_blind2/generate.py          # writes set/ + README.md
    /work/main/.venv/bin/python benchmarks/heldout_blind2/generate.py --check  # validates set/ only

The generator

1. builds invented conversations (corpus.py) with planted memory faults (the GRAPHS plan below),
2. simulates three MemBase memory pipelines (Mem0, NaiveRAG, long-context) deterministically,
   with an "ideal" LLM everywhere except at the planted faults,
3. labels every failed question by replay: the earliest operation whose repair (every earlier
   operation as recorded, every later operation ideal) makes the answer right,
4. records the run with the real `smartcomment` package, instrumented the way MemBase does it,
   in three stages (construction, search, evaluation) with an export / re-import between stages,
5. writes one MemTraceBench-style JSON per graph with `data.annotations`, and checks the output.

Nothing here calls a model or the network. Ids and timestamps come from seeded sources, so the
output is byte-identical across runs.
"""

import argparse
import ast
import copy
import datetime as _dt
import hashlib
import inspect
import json
import math
import os
import random
import re
import sys
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import partial
from string import Template

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SET_DIR = os.path.join(HERE, "set")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import corpus as C  # noqa: E402
import smartcomment.runtime.network as _sc_net  # noqa: E402

# --------------------------------------------------------------------------------------------
# Determinism: smartcomment stamps every record with datetime.now() and uuid4(). Both are
# redirected to seeded sources (a simulated clock and a seeded UUID stream).
# --------------------------------------------------------------------------------------------
import smartcomment.schema.base as _sc_base  # noqa: E402
import smartcomment.schema.operation as _sc_op  # noqa: E402
import smartcomment.schema.session as _sc_sess  # noqa: E402
from smartcomment import (  # noqa: E402
    IdentityRegistry,
    comment_graph,
    comment_link,
    comment_mutation,
    comment_op,
    comment_op_scope,
    comment_session,
    comment_variable,
    current_context,
)
from smartcomment.runtime import ExecNetwork  # noqa: E402


class _Clock:
    """Simulated wall clock: 0-2 ms per record, explicit jumps for model latency and pauses."""

    def __init__(self):
        self.t = _dt.datetime(2025, 1, 1)
        self.rng = random.Random(0)

    def reset(self, start, seed):
        self.t = start
        self.rng = random.Random(seed)

    def tick(self):
        self.t += _dt.timedelta(milliseconds=self.rng.randint(0, 2))
        return self.t

    def advance(self, lo_ms, hi_ms=None):
        self.t += _dt.timedelta(milliseconds=lo_ms if hi_ms is None else self.rng.randint(lo_ms, hi_ms))


CLOCK = _Clock()


class _SimDateTime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return CLOCK.tick()


class _Ids:
    def __init__(self):
        self.rng = random.Random(0)

    def reset(self, seed):
        self.rng = random.Random(seed)

    def uuid4(self):
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)


IDS = _Ids()
_sc_base.datetime = _SimDateTime
_sc_op.uuid4 = IDS.uuid4
_sc_sess.uuid4 = IDS.uuid4
_sc_net.uuid4 = IDS.uuid4


def _mem0_dict_identity(variable):
    if not isinstance(variable, dict):
        raise TypeError(f"The provided variable '{variable}' is not a dictionary.")
    if "id" in variable:
        return f"memory-unit-{variable['id']}"
    raise ValueError(f"It is unable to extract the identity from '{variable}'.")


IdentityRegistry.register("mem0-dict", _mem0_dict_identity, exist_ok=True)
IdentityRegistry.register("naive-rag-dict", _mem0_dict_identity, exist_ok=True)

JSON_ENC = partial(json.dumps, ensure_ascii=False, indent=4, sort_keys=True)

# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_STOP = set(
    "the a an of to in on at for and or is are was were be been has have had do does did with by "
    "from that this it its i you he she they we my your his her their our me what which who where "
    "when how many much ever now year new so just still any can".split()
)


def ntok(text):
    return len(_TOKEN_RE.findall(text))


def _words(text):
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1}


def lexsim(a, b):
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / math.sqrt(len(wa) * len(wb))


def hfloat(*parts):
    h = hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()
    return int(h[:8], 16) / 0xFFFFFFFF


def det_uuid(*parts):
    h = hashlib.sha1("|".join(map(str, parts)).encode()).digest()[:16]
    return str(uuid.UUID(bytes=h, version=4))


def fmt_date(d):
    return f"{d.day} {d.strftime('%B')} {d.year}"


def fix_articles(text):
    """'a apprentice' -> 'an apprentice' in texts filled from templates."""
    return re.sub(r"\b([Aa]) (?=[aeiouAEIOU])", lambda m: m.group(1) + "n ", text)


def join_and(items):
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def remove_code_blocks(content: str) -> str:
    """Strip a surrounding ``` fence (with an optional language tag) from a model response."""
    pattern = r"^\s*```[a-zA-Z0-9_-]*\n([\s\S]*?)\n```\s*$"
    match = re.match(pattern, content)
    stripped = match.group(1) if match else content
    return stripped.strip()


def extract_json(text: str) -> str:
    """Return the outermost {...} span of a response that has prose around its JSON."""
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end == -1 or end < start:
        return text
    return text[start : end + 1]


REMOVE_CODE_BLOCKS_SRC = inspect.getsource(remove_code_blocks)
EXTRACT_JSON_SRC = inspect.getsource(extract_json)

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# --------------------------------------------------------------------------------------------
# Scenario model
# --------------------------------------------------------------------------------------------


@dataclass
class Fact:
    slot: str
    value: str
    text: str  # the fact as an ideal extractor would write it (Mem0)
    anchor: str  # where the value is stated inside the message text
    check: str  # what a memory holding this fact must contain
    retract: bool = False


@dataclass
class Msg:
    speaker: str
    role: str
    content: str
    facts: list = field(default_factory=list)
    session: int = 0
    id: str = ""
    ts: str = ""
    dt: object = None
    index: int = 0
    meta: dict = field(default_factory=dict)
    task: object = None  # a Question when this message is an online task


@dataclass
class Exchange:
    session: int
    frac: float
    msgs: list


@dataclass
class Person:
    name: str
    role: str
    subj: str  # subject of extracted facts
    first_person: bool  # questions asked in the first person


@dataclass
class Question:
    text: str
    kind: str
    needs: list  # [(slot, true value)]
    tmpl: dict  # 'p' / 'n' / 'o' templates with the value placeholder left open
    truth: dict  # slot -> value per the conversation
    gold_values: dict  # slot -> value per the annotation (differs only for AnnotationError)
    gold_text: str
    wrong_pred: str
    evidence: list  # Msg objects
    annot: bool = False
    case: object = None
    qid: str = ""
    qtype: str = ""
    meta: dict = field(default_factory=dict)
    task: object = None
    gold_pred: str = ""


@dataclass
class Fault:
    key: tuple
    kind: str
    slot: str = None
    params: dict = field(default_factory=dict)
    role: str = "case"  # case / decoy
    case: object = None
    desc: str = ""


@dataclass
class Case:
    idx: int
    arch: str
    outcome: str
    owner: Person
    other: Person
    main: list = field(default_factory=list)
    facts: list = field(default_factory=list)
    restate: Msg = None
    trigger: Msg = None
    lookalike: object = None
    question: Question = None
    intended: str = None
    first: bool = False
    aux: dict = field(default_factory=dict)


def render(q, values):
    """The ideal answer to question `q` given what the context says about each needed slot."""
    t = q.tmpl
    slots = [s for s, _ in q.needs]
    if q.kind in ("single", "updated", "date"):
        v = values.get(slots[0])
        return t["n"] if v is None else fix_articles(t["p"].replace("{VAL}", v))
    if q.kind == "list":
        present = [values[s] for s in slots if values.get(s) is not None]
        return t["n"] if not present else t["p"].replace("{VAL}", join_and(present))
    if q.kind == "count":
        n = sum(1 for s in slots if values.get(s) is not None)
        return t["p"].replace("{VAL}", str(n))
    if q.kind == "yesno":
        v = values.get(slots[0])
        if v is None:
            return t["n"]
        return t["p"] if v == t["base"] else t["o"]
    raise ValueError(q.kind)


def is_correct(q, pred):
    return pred == q.gold_pred


# --------------------------------------------------------------------------------------------
# Flavours: the dataset-reader conventions a graph follows
# --------------------------------------------------------------------------------------------

FLAVORS = {
    # LoCoMo reader: two speakers, ids U<n>:D<s>:<t>, ISO session timestamps, list golds
    "locomo": dict(two=True, first_person=False, dataset="LoCoMo"),
    # a user-defined two-speaker reader: ids chat<n>.<s>.<t>, raw "6:42 pm on 14 March, 2024"
    "chat": dict(two=True, first_person=False, dataset="ChatLog"),
    # LongMemEval reader: user/assistant haystack, one question, has_answer metadata
    "lme": dict(two=False, first_person=True, dataset="LongMemEval"),
    # a user-defined diary reader: one named user + assistant, a timestamp per message
    "diary": dict(two=False, first_person=False, dataset="Diary"),
    # online evaluation (RealMem style): questions are task messages inside the stream
    "online": dict(two=False, first_person=True, dataset="OnlineTasks"),
}

QTYPES = {
    "locomo": {
        "single": ("single-hop", 4),
        "updated": ("temporal", 2),
        "list": ("multi-hop", 1),
        "count": ("multi-hop", 1),
        "date": ("temporal", 2),
        "yesno": ("open-domain", 3),
    },
    "other": {
        "single": "single-session-user",
        "updated": "knowledge-update",
        "list": "multi-session",
        "count": "multi-session",
        "date": "temporal-reasoning",
        "yesno": "single-session-user",
    },
}


# --------------------------------------------------------------------------------------------
# Building one conversation with its questions and planted faults
# --------------------------------------------------------------------------------------------

IMAGE_CAPTIONS = [
    "a photo of a bowl of soup on a wooden table",
    "a photo of a wet street with bicycles",
    "a photo of a dog asleep on a sofa",
    "a photo of a bookshelf with plants",
    "a photo of a mountain path in fog",
    "a photo of a cake with candles",
]


class Scenario:
    """Everything the simulations, the recorder and the checks need about one graph."""

    def __init__(self, spec):
        self.spec = spec
        self.name = spec["name"]
        self.system = spec["system"]
        self.flavor = spec["flavor"]
        self.seed = spec["seed"]
        self.online = self.flavor == "online"
        self.sessions = []  # list of dicts: id, dt, msgs, meta
        self.messages = []
        self.questions = []
        self.faults = []
        self.cases = []
        self.cfg = dict(spec.get("cfg", {}))
        self.people = []
        self.traj_id = ""
        self.traj_meta = {}


class Builder:
    def __init__(self, spec):
        self.spec = spec
        self.scn = Scenario(spec)
        self.rng = random.Random(spec["seed"] * 7919 + 13)
        self.fl = FLAVORS[spec["flavor"]]
        self.system = spec["system"]
        self.S = spec.get("sessions", 4)
        self.used = []
        self.used_names = set()
        self.exchanges = []
        self.cases = []
        self.bg = []  # background fact messages
        self.used_openers = set()
        names = self.rng.sample(C.FIRST_NAMES, 8)
        self.spare_names = names[3:]
        if self.fl["two"]:
            self.A = Person(names[0], "user", names[0], False)
            self.B = Person(names[1], "user", names[1], False)
            self.people = [self.A, self.B]
        else:
            if spec["flavor"] == "lme":
                self.A = Person("user", "user", "User", True)
            elif spec["flavor"] == "online":
                self.A = Person(names[0], "user", "User", True)
            else:
                self.A = Person(names[0], "user", names[0], False)
            self.B = Person("assistant", "assistant", "Assistant", False)
            self.people = [self.A]
        for p in (self.A, self.B):
            self.used_names.add(p.name)
        # session start times
        y = self.rng.choice([2023, 2024, 2025])
        t = _dt.datetime(
            y,
            self.rng.randint(1, 10),
            self.rng.randint(1, 26),
            self.rng.randint(8, 21),
            self.rng.choice([0, 5, 12, 20, 26, 34, 41, 47, 53]),
        )
        self.sdt = []
        for _ in range(self.S):
            self.sdt.append(t)
            t = t + _dt.timedelta(
                days=self.rng.randint(3, 17), hours=self.rng.randint(-4, 4), minutes=self.rng.randint(0, 50)
            )

    # ---- values ---------------------------------------------------------------------------
    def take(self, pool):
        items = list(C.POOLS[pool])
        self.rng.shuffle(items)
        for it in items:
            parts = [it] if isinstance(it, str) else list(it)
            ok = True
            for p in parts:
                low = p.lower()
                for u in self.used:
                    if low in u or u in low:
                        ok = False
            if ok:
                self.used.extend(x.lower() for x in parts)
                return it
        raise RuntimeError(f"pool {pool} exhausted in {self.scn.name}")

    def spare_name(self):
        return self.spare_names.pop()

    # ---- placement ------------------------------------------------------------------------
    def last_fact_session(self):
        return self.S - 2 if self.scn.online else self.S - 1

    def pos(self, lo=0, hi=None, after=None, first=False):
        hi = self.last_fact_session() if hi is None else hi
        if first:
            return (0, 0.30 + self.rng.random() * 0.02)
        if after is not None:
            s0, f0 = after
            lo = max(lo, s0)
            if lo > hi:
                raise RuntimeError("no room to place a dependent message")
            s = self.rng.randint(lo, hi)
            if s == s0:
                return (s, f0 + 0.02 + self.rng.random() * max(0.0, 0.93 - f0 - 0.02))
            f_lo = 0.42 if (self.system == "long_context" and s == 0) else 0.12
            return (s, f_lo + self.rng.random() * (0.92 - f_lo))
        s = self.rng.randint(lo, hi)
        f_lo = 0.42 if (self.system == "long_context" and s == 0) else 0.12
        return (s, f_lo + self.rng.random() * (0.92 - f_lo))

    def fact_exchange(self, speaker, text, facts, where, tail=True):
        s, f = where
        if self.fl["two"]:
            other = self.B if speaker is self.A else self.A
            m = Msg(speaker.name, speaker.role, text, facts, session=s)
            r = Msg(other.name, other.role, self.rng.choice(C.REACTIONS), [], session=s)
            msgs = [m, r]
        else:
            if tail and self.rng.random() < 0.6:
                text = text + self.rng.choice(C.ASK_TAILS)
            m = Msg(self.A.name, "user", text, facts, session=s)
            r = Msg(self.B.name, "assistant", self.rng.choice(C.FACT_ASSISTANT_REPLIES), [], session=s)
            msgs = [m, r]
        self.exchanges.append(Exchange(s, f, msgs))
        return m

    # ---- cases ----------------------------------------------------------------------------
    def owner_for(self, idx):
        if not self.fl["two"]:
            return self.A
        return self.A if idx % 2 == 0 else self.B

    def other_of(self, p):
        return self.B if p is self.A else self.A

    def templates(self, A, owner):
        if owner.first_person:
            return A["q1"], A["p2"], A.get("n2"), A.get("o2")
        return A["q3"], A["p3"], A.get("n3"), A.get("o3")

    def add_case(self, arch, outcome, owner=None, look_q=None):
        A = C.ARCHETYPES[arch]
        kind = A["kind"]
        idx = len(self.cases)
        owner = owner or self.owner_for(idx)
        case = Case(idx, arch, outcome, owner, self.other_of(owner))
        self.cases.append(case)
        slot = f"c{idx}.{arch}"
        first = self.system == "long_context" and outcome in ("U:overtrim", "U+P")
        case.first = first
        qt, pt, nt, ot = self.templates(A, owner)
        N = owner.name
        needs_restate = outcome in ("X+R", "X+P", "decoyX")
        if kind == "single":
            v = self.take(A["pool"])
            r = self.rng.choice(C.POOLS["sibling_role"]) if "role_pool" in A else ""
            text = self.rng.choice(A["say"]).format(v=v, r=r)
            fact = Fact(slot, v, A["fact"].format(F=owner.subj, v=v, r=r), v, v)
            where = self.pos(
                hi=self.last_fact_session()
                - (1 if needs_restate or outcome in ("D", "U:overwrite", "U+P") else 0),
                first=first,
            )
            m = self.fact_exchange(owner, text, [fact], where)
            case.main, case.facts = [m], [fact]
            case.aux["where"] = where
            case.aux["r"] = r
            q = Question(
                qt.format(N=N, r=r),
                kind,
                [(slot, v)],
                {"p": pt.format(N=N, r=r, v="{VAL}"), "n": nt.format(N=N, r=r)},
                {slot: v},
                {slot: v},
                v,
                "",
                [m],
            )
            need_look = outcome in ("U:overwrite", "P", "U+P", "X+P", "R+P") or (
                self.fl["two"] and self.rng.random() < 0.35
            )
            if need_look:
                w = self.take(A["pool"])
                if self.fl["two"]:
                    other = case.other
                    ltext = self.rng.choice(A["say"]).format(v=w, r=r)
                    lfact = Fact(f"c{idx}.look", w, A["fact"].format(F=other.subj, v=w, r=r), w, w)
                    lm = self.fact_exchange(other, ltext, [lfact], self.pos(after=where))
                    lq = None
                    if look_q is not False and outcome not in ("U:overwrite", "U+P"):
                        lqt, lpt, lnt, _ = self.templates(A, other)
                        lq = Question(
                            lqt.format(N=other.name, r=r),
                            kind,
                            [(lfact.slot, w)],
                            {
                                "p": lpt.format(N=other.name, r=r, v="{VAL}"),
                                "n": lnt.format(N=other.name, r=r),
                            },
                            {lfact.slot: w},
                            {lfact.slot: w},
                            w,
                            "",
                            [lm],
                        )
                else:
                    fr = self.spare_name()
                    ftext, ffact = A["friend"]
                    lfact = Fact(f"c{idx}.look", w, ffact.format(F=owner.subj, fr=fr, w=w, r=r), w, w)
                    lm = self.fact_exchange(
                        owner, ftext.format(fr=fr, w=w, r=r), [lfact], self.pos(after=where)
                    )
                    lq = None
                case.lookalike = (lm, lfact, lq)
                q.wrong_pred = q.tmpl["p"].replace("{VAL}", w)
            else:
                alt = self.take(A["pool"])
                case.aux["alt_plain"] = alt
                q.wrong_pred = q.tmpl["p"].replace("{VAL}", alt)
            if needs_restate:
                rtext = self.rng.choice(A["restate"]).format(v=v, r=r)
                rfact = Fact(slot, v, fact.text, v, v)
                case.restate = self.fact_exchange(owner, rtext, [rfact], self.pos(after=where))
                q.evidence.append(case.restate)
            if outcome == "D":
                ttext, tfact = A["trigger"]
                tword = max(re.findall(r"[A-Za-z]{5,}", ttext), key=len)
                tf = Fact(f"c{idx}.trig", "t", tfact.format(F=owner.subj, r=r), tword, tword)
                case.trigger = self.fact_exchange(owner, ttext.format(r=r), [tf], self.pos(after=where))
            if outcome in ("E:distort", "decoyE"):
                alt = self.take(A["pool"])
                case.aux["alt"] = Fact(slot, alt, A["fact"].format(F=owner.subj, v=alt, r=r), alt, alt)
            if outcome == "annot":
                galt = case.lookalike[1].value if case.lookalike else self.take(A["pool"])
                q.gold_values = {slot: galt}
                q.gold_text = galt
                q.annot = True
        elif kind == "updated":
            pair = self.take(A["pool"])
            if isinstance(pair, tuple):
                v1, v2 = pair
            else:
                v1, v2 = pair, self.take(A["pool"])
            w1 = self.pos(hi=self.last_fact_session() - 1)
            fa = fix_articles
            m1 = self.fact_exchange(
                owner,
                fa(self.rng.choice(A["say1"]).format(v1=v1)),
                [Fact(slot, v1, fa(A["fact1"].format(F=owner.subj, v1=v1)), v1, v1)],
                w1,
            )
            w2 = self.pos(lo=w1[0] + 1)
            f2 = Fact(slot, v2, fa(A["fact2"].format(F=owner.subj, v1=v1, v2=v2)), v2, v2)
            m2 = self.fact_exchange(owner, fa(self.rng.choice(A["say2"]).format(v1=v1, v2=v2)), [f2], w2)
            case.main, case.facts = [m1, m2], [m1.facts[0], f2]
            case.aux["wrong2"] = fa(A["wrong2"].format(F=owner.subj, v1=v1, v2=v2))
            case.aux["v1"] = v1
            q = Question(
                qt.format(N=N),
                kind,
                [(slot, v2)],
                {"p": pt.format(N=N, v="{VAL}"), "n": nt.format(N=N)},
                {slot: v2},
                {slot: v2},
                v2,
                "",
                [m2],
            )
            q.wrong_pred = fa(q.tmpl["p"].replace("{VAL}", v1))
            if outcome == "annot":
                q.gold_values, q.gold_text, q.annot = {slot: v1}, v1, True
        elif kind == "list":
            a, b = self.take(A["pool"]), self.take(A["pool"])
            says = self.rng.sample(A["say"], 2)
            wa = self.pos(hi=self.last_fact_session() - 1, first=first)
            wb = self.pos(lo=wa[0] + 1)
            sa, sb = f"{slot}.1", f"{slot}.2"
            ma = self.fact_exchange(
                owner, says[0].format(v=a), [Fact(sa, a, A["fact"].format(F=owner.subj, v=a), a, a)], wa
            )
            mb = self.fact_exchange(
                owner, says[1].format(v=b), [Fact(sb, b, A["fact"].format(F=owner.subj, v=b), b, b)], wb
            )
            case.main, case.facts = [ma, mb], [ma.facts[0], mb.facts[0]]
            q = Question(
                qt.format(N=N),
                kind,
                [(sa, a), (sb, b)],
                {"p": pt.format(N=N, x="{VAL}"), "n": nt.format(N=N)},
                {sa: a, sb: b},
                {sa: a, sb: b},
                join_and([a, b]),
                "",
                [ma, mb],
            )
            q.wrong_pred = q.tmpl["p"].replace("{VAL}", a)
            if outcome in ("E:distort",):
                alt = self.take(A["pool"])
                case.aux["alt"] = Fact(sa, alt, A["fact"].format(F=owner.subj, v=alt), alt, alt)
            if outcome == "annot":
                c = self.take(A["pool"])
                q.gold_values, q.gold_text, q.annot = {sa: a, sb: c}, join_and([a, c]), True
        elif kind == "count":
            n = self.rng.choice(self.spec.get("counts", [2, 3]))
            items = [self.take(A["pool"]) for _ in range(n)]
            says = [self.rng.choice(A["say"]) for _ in range(n)]
            slots = [f"{slot}.{i + 1}" for i in range(n)]
            msgs = []
            prev = None
            for i in range(n):
                w = self.pos(lo=(prev[0] if prev else 0), hi=self.last_fact_session())
                if prev is not None and w <= prev:
                    w = self.pos(after=prev)
                prev = w
                msgs.append(
                    self.fact_exchange(
                        owner,
                        says[i].format(v=items[i]),
                        [
                            Fact(
                                slots[i],
                                items[i],
                                A["fact"].format(F=owner.subj, v=items[i]),
                                items[i],
                                items[i],
                            )
                        ],
                        w,
                    )
                )
            case.main, case.facts = msgs, [m.facts[0] for m in msgs]
            q = Question(
                qt.format(N=N),
                kind,
                list(zip(slots, items)),
                {"p": pt.format(N=N, n="{VAL}")},
                dict(zip(slots, items)),
                dict(zip(slots, items)),
                str(n),
                "",
                list(msgs),
            )
            q.wrong_pred = q.tmpl["p"].replace("{VAL}", str(n + 1 if self.rng.random() < 0.5 else n - 1))
            if outcome == "annot":
                # the annotation counts one item more than the conversation contains
                q.gold_pred = q.tmpl["p"].replace("{VAL}", str(n + 1))
                q.gold_text = str(n + 1)
                q.annot = True
        elif kind == "date":
            obj = self.take(A["pool"])
            phrase, k = obj if isinstance(obj, tuple) else (obj, obj)
            where = self.pos(hi=self.last_fact_session() - (1 if needs_restate else 0), first=first)
            sdate = self.sdt[where[0]].date()
            rel, d = self.rel_date(sdate, A)
            ds = fmt_date(d)
            text = self.rng.choice(A["say"]).format(v=phrase, rel=rel)
            fact = Fact(slot, ds, A["fact"].format(F=owner.subj, v=phrase, d=ds), rel, ds)
            m = self.fact_exchange(owner, text, [fact], where)
            case.main, case.facts = [m], [fact]
            q = Question(
                qt.format(N=N, k=k, v=phrase),
                kind,
                [(slot, ds)],
                {"p": pt.format(N=N, k=k, v=phrase, d="{VAL}"), "n": nt.format(N=N, k=k, v=phrase)},
                {slot: ds},
                {slot: ds},
                ds,
                "",
                [m],
            )
            wd = fmt_date(d - _dt.timedelta(days=7))
            q.wrong_pred = q.tmpl["p"].replace("{VAL}", wd)
            case.aux["alt"] = Fact(slot, wd, A["fact"].format(F=owner.subj, v=phrase, d=wd), rel, wd)
            if outcome == "annot":
                ga = fmt_date(d + _dt.timedelta(days=1))
                q.gold_values, q.gold_text, q.annot = {slot: ga}, ga, True
        elif kind == "yesno":
            base = A["value"]
            if A["pool"]:
                v = self.take(A["pool"])
                anchor = v
            else:
                v = ""
                anchor = A["anchor"]
            where = self.pos(first=first)
            text = self.rng.choice(A["say"]).format(v=v)
            fact = Fact(slot, base, A["fact"].format(F=owner.subj, v=v), anchor, anchor)
            m = self.fact_exchange(owner, text, [fact], where)
            case.main, case.facts = [m], [fact]
            q = Question(
                qt.format(N=N, v=v),
                kind,
                [(slot, base)],
                {"p": pt.format(N=N, v=v), "n": nt.format(N=N, v=v), "o": ot.format(N=N, v=v), "base": base},
                {slot: base},
                {slot: base},
                "Yes" if base == "yes" else "No",
                "",
                [m],
            )
            q.wrong_pred = q.tmpl["o"]
            if outcome == "annot":
                other_v = "no" if base == "yes" else "yes"
                q.gold_values = {slot: other_v}
                q.gold_text = "No" if base == "yes" else "Yes"
                q.annot = True
        else:
            raise ValueError(kind)
        q.case = case
        if not q.gold_pred:
            q.gold_pred = render(q, q.gold_values)
        case.question = q
        if case.lookalike and case.lookalike[2] is not None:
            lq = case.lookalike[2]
            lq.gold_pred = render(lq, lq.gold_values)
            lq.wrong_pred = q.tmpl["p"].replace("{VAL}", "?")
        fixed = {
            "ok": None,
            "decoyX": None,
            "annot": "AnnotationError",
            "E+R": "ExtractionError",
            "E+P": "ExtractionError",
            "X+R": "RetrievalError",
            "X+P": "ResponseError",
            "U+P": "UpdateError",
            "R+P": "RetrievalError",
            "D": "DeletionError",
            "R": "RetrievalError",
            "P": "ResponseError",
        }
        case.intended = (
            fixed[outcome]
            if outcome in fixed
            else {"E": "ExtractionError", "U": "UpdateError"}[outcome.split(":")[0]]
        )
        return case

    def rel_date(self, sdate, A):
        opts = ["yesterday", "two days ago", "last"]
        choice = self.rng.choice(opts)
        if choice == "yesterday":
            return "yesterday", sdate - _dt.timedelta(days=1)
        if choice == "two days ago":
            return "two days ago", sdate - _dt.timedelta(days=2)
        wd = self.rng.randint(0, 6)
        back = (sdate.weekday() - wd) % 7
        if back < 2:
            back += 7
        return f"last {WEEKDAYS[wd]}", sdate - _dt.timedelta(days=back)

    def add_background(self, n_bg, n_plans):
        items = self.rng.sample(C.BACKGROUND, n_bg)
        out = []
        for i, (ftext, mtext) in enumerate(items):
            owner = self.rng.choice(self.people)
            anchor = max(re.findall(r"[A-Za-z]{6,}", mtext), key=len)
            f = Fact(
                f"bg{i}", "bg", ftext.format(F=owner.subj), anchor, ftext.format(F=owner.subj).split()[-1]
            )
            m = self.fact_exchange(owner, mtext, [f], self.pos(), tail=False)
            out.append(m)
        for i, (plan, say, cancel) in enumerate(self.rng.sample(C.PLANS, n_plans)):
            owner = self.rng.choice(self.people)
            w = self.pos(hi=self.last_fact_session() - 1)
            f1 = Fact(f"plan{i}", "planned", f"{owner.subj} plans {plan}", plan.split()[1], plan.split()[1])
            self.fact_exchange(owner, say, [f1], w, tail=False)
            cw = max(re.findall(r"[A-Za-z]{5,}", cancel), key=len)
            f2 = Fact(f"plan{i}", "cancelled", f"{owner.subj} cancelled {plan}", cw, cw, retract=True)
            self.fact_exchange(owner, cancel, [f2], self.pos(after=w), tail=False)
        self.bg = out
        return out

    # ---- assembling the conversation ------------------------------------------------------
    def filler(self, s, frac):
        if self.fl["two"]:
            x = self.rng.choice([self.A, self.B])
            y = self.other_of(x)
            pool = [o for o in C.OPENERS if o not in self.used_openers] or list(C.OPENERS)
            op = self.rng.choice(pool)
            self.used_openers.add(op)
            msgs = [
                Msg(x.name, x.role, op.format(o=y.name), [], session=s),
                Msg(y.name, y.role, self.rng.choice(C.REPLIES), [], session=s),
            ]
        else:
            pool = [o for o in C.USER_SMALLTALK if o not in self.used_openers] or list(C.USER_SMALLTALK)
            op = self.rng.choice(pool)
            self.used_openers.add(op)
            msgs = [
                Msg(self.A.name, "user", op, [], session=s),
                Msg(self.B.name, "assistant", self.rng.choice(C.ASSISTANT_REPLIES), [], session=s),
            ]
        return Exchange(s, frac, msgs)

    def finalize(self):
        scn, spec, rng, S = self.scn, self.spec, self.rng, self.S
        fl = spec["flavor"]
        n = spec["conv_no"]
        questions = []
        for case in self.cases:
            questions.append(case.question)
            if case.lookalike and case.lookalike[2] is not None:
                questions.append(case.lookalike[2])
        rng.shuffle(questions)
        if fl == "online":
            fr = sorted(rng.uniform(0.66, 0.98) for _ in questions)
            for q, f in zip(questions, fr):
                tm = Msg(self.A.name, "user", q.text, [], session=S - 1, task=q)
                q.task = tm
                self.exchanges.append(Exchange(S - 1, f, [tm]))
        per = [[] for _ in range(S)]
        for ex in self.exchanges:
            per[ex.session].append(ex)
        lo, hi = spec.get("len", (10, 14))
        for s in range(S):
            if self.system == "long_context" and s == 0:
                for i in range(spec.get("lead", 4)):
                    per[s].append(self.filler(s, 0.01 + 0.02 * i))
            count = sum(len(ex.msgs) for ex in per[s])
            target = rng.randint(lo, hi)
            while count < target:
                per[s].append(self.filler(s, rng.random()))
                count += 2
        # flatten; keep two-speaker turns alternating with a short bridging line when needed
        index = 0
        for s in range(S):
            exs = sorted(per[s], key=lambda e: e.frac)
            msgs = []
            for ex in exs:
                if self.fl["two"] and msgs and msgs[-1].speaker == ex.msgs[0].speaker:
                    other = self.B if ex.msgs[0].speaker == self.A.name else self.A
                    msgs.append(Msg(other.name, other.role, rng.choice(C.BRIDGES), [], session=s))
                msgs.extend(ex.msgs)
            sdt = self.sdt[s]
            if fl == "locomo":
                sid = f"locomo-{n}-session-{s + 1}"
            elif fl == "chat":
                sid = f"chat-{n}-s{s + 1}"
            elif fl == "lme":
                ev_ids = {id(m) for q in questions for m in q.evidence}
                has = any(id(m) in ev_ids for m in msgs)
                sid = f"answer_{rng.getrandbits(32):08x}_{s + 1}" if has else f"{rng.getrandbits(40):010x}"
            elif fl == "diary":
                sid = f"diary-{n}-day{s + 1}"
            else:
                sid = f"ses-{rng.getrandbits(32):08x}"
            minute = 0
            for t, m in enumerate(msgs, start=1):
                m.index = index
                index += 1
                m.session = s
                if fl == "locomo":
                    m.id = f"U{n}:D{s + 1}:{t}"
                    m.dt = sdt
                    m.ts = sdt.isoformat()
                    tag = "speaker_a" if m.speaker == self.A.name else "speaker_b"
                    m.meta = {"speaker_tag": tag, "dia_id": f"D{s + 1}:{t}"}
                    if spec.get("images") and not m.facts and rng.random() < 0.15:
                        cap = rng.choice(IMAGE_CAPTIONS)
                        m.meta.update(
                            {
                                "img_url": [f"https://img.invalid/{rng.getrandbits(48):012x}.jpg"],
                                "blip_caption": cap,
                                "query": " ".join(cap.split()[3:6]),
                            }
                        )
                elif fl == "chat":
                    m.id = f"chat{n}.{s + 1}.{t}"
                    m.dt = sdt
                    hour = sdt.hour % 12 or 12
                    ampm = "am" if sdt.hour < 12 else "pm"
                    m.ts = f"{hour}:{sdt.minute:02d} {ampm} on {sdt.day} {sdt.strftime('%B')}, {sdt.year}"
                    m.meta = {"turn": t}
                elif fl == "lme":
                    m.id = f"longmemeval-message-{n}-{s + 1}-{t}"
                    m.dt = sdt
                    m.ts = sdt.isoformat()
                    m.meta = {"has_answer": False}
                elif fl == "diary":
                    minute += rng.randint(1, 3)
                    m.dt = sdt + _dt.timedelta(minutes=minute)
                    m.id = f"d{n}-{s + 1}-{t}"
                    m.ts = m.dt.strftime("%a %d %b %Y %H:%M")
                    m.meta = {"entry": t}
                else:
                    minute += rng.randint(1, 2)
                    m.dt = sdt + _dt.timedelta(minutes=minute, seconds=rng.randint(0, 59))
                    m.id = f"{sid}-{t}"
                    m.ts = m.dt.strftime("%Y-%m-%d %H:%M:%S")
                    m.meta = {"is_task": False}
                scn.messages.append(m)
            smeta = {}
            if fl == "locomo":
                smeta = {
                    "session_summary": f"{self.A.name} and {self.B.name} caught up on {sdt.strftime('%d %B %Y')}.",
                    "session_observation": {},
                }
            elif fl == "online":
                smeta = {"session_type": "task" if s == S - 1 else "chat"}
            scn.sessions.append(dict(id=sid, dt=sdt, msgs=msgs, meta=smeta))
        # question ids and metadata
        for j, q in enumerate(questions, start=1):
            ev = [m.id for m in q.evidence]
            if fl == "locomo":
                q.qid = f"locomo-qa-{n}-{j}"
                qt, cat = QTYPES["locomo"][q.kind]
                q.qtype = qt
                q.meta = {
                    "question_type": qt,
                    "category_id": cat,
                    "evidence": ev,
                    "speaker_names": [self.A.name, self.B.name],
                }
            elif fl == "chat":
                q.qid = f"chat{n}-q{j:02d}"
                q.qtype = QTYPES["other"][q.kind]
                q.meta = {"question_type": q.qtype, "evidence": ev}
            elif fl == "lme":
                q.qid = f"{rng.getrandbits(32):08x}"
                q.qtype = QTYPES["other"][q.kind]
                sess = sorted({scn.sessions[m.session]["id"] for m in q.evidence})
                q.meta = {"question_type": q.qtype, "answer_session_ids": sess, "evidence": ev}
                for m in q.evidence:
                    m.meta["has_answer"] = True
            elif fl == "diary":
                q.qid = f"diary{n}-{j}"
                q.qtype = QTYPES["other"][q.kind]
                q.meta = {"question_type": q.qtype, "evidence": ev}
            else:
                q.qid = q.task.id
                q.qtype = QTYPES["other"][q.kind]
                q.meta = {
                    "is_task": True,
                    "question_type": q.qtype,
                    "ref_traj": q.gold_text,
                    "evidence": ev,
                    "session_type": "task",
                    "topic": q.case.arch,
                }
                q.task.meta = dict(q.meta)
        scn.questions = questions
        scn.cases = self.cases
        scn.people = self.people
        scn.traj_id = {
            "locomo": f"locomo-{n}",
            "chat": f"chat-{n}",
            "diary": f"diary-{n}",
            "online": f"online-{self.A.name.lower()}",
            "lme": f"longmemeval-{questions[0].qid}" if questions else "longmemeval",
        }[fl]
        scn.traj_meta = {"speaker_a": self.A.name, "speaker_b": self.B.name} if self.fl["two"] else {}
        self.make_faults()
        return scn

    # ---- faults ---------------------------------------------------------------------------
    def make_faults(self):
        scn = self.scn
        sysname = self.system
        ext = {"mem0": "extract", "rag": "buffer", "long_context": "absorb"}[sysname]

        def add(key, kind, slot=None, role="case", case=None, desc="", **params):
            f = Fault(key, kind, slot, params, role, case, desc)
            scn.faults.append(f)
            if case is not None:
                case.aux.setdefault("faults", []).append(f)
            return f

        def e_fault(case, msg, fact, kind=None, role="case", why=""):
            if sysname == "mem0":
                kind = kind or "drop"
                if kind == "distort":
                    return add((ext, msg.id), "distort", fact.slot, role, case, why, alt=case.aux["alt"])
                return add((ext, msg.id), "drop", fact.slot, role, case, why)
            kind = kind or "trunc"
            if kind == "trunc":
                return add((ext, msg.id), "trunc", fact.slot, role, case, why, anchor=fact.anchor)
            if kind == "drop":
                return add((ext, msg.id), "drop", fact.slot, role, case, why)
            if kind == "docdrop":
                return add(("buffer", "?"), "docdrop", fact.slot, role, case, why, target=msg.id)
            raise ValueError(kind)

        def r_fault(case, q, pairs, role="case"):
            return add(
                ("search", q.qid),
                "miss",
                None,
                role,
                case,
                "retrieval ranks the needed memory out of the top-k",
                miss=[list(p) for p in pairs],
            )

        def p_fault(case, q, role="case"):
            return add(
                ("answer", q.qid),
                "wrong",
                None,
                role,
                case,
                "the answer step answers wrong from a complete context",
                pred=q.wrong_pred,
            )

        def later_msg(msg, gap_lo, gap_hi):
            cands = [
                m
                for m in scn.messages
                if msg.index + gap_lo <= m.index <= msg.index + gap_hi and m.task is None and not m.facts
            ]
            return self.rng.choice(cands)

        for case in self.cases:
            o = case.outcome
            q = case.question
            kindq = q.kind
            tgt = case.main[1] if kindq == "updated" else case.main[0]
            tfact = tgt.facts[0]
            key_pair = (tfact.slot, tfact.value)
            if kindq == "list":
                key_pair = (case.facts[1].slot, case.facts[1].value)
            if o in ("ok", "annot"):
                continue
            if o.startswith("E:"):
                e_fault(
                    case,
                    tgt,
                    tfact,
                    o.split(":")[1],
                    why="the fact is lost or distorted when the message is taken in",
                )
            elif o == "U:overwrite":
                lm, lf, _ = case.lookalike
                add(
                    ("update", lm.id),
                    "overwrite",
                    tfact.slot,
                    "case",
                    case,
                    "the update step overwrites the right memory with a look-alike fact",
                    carrier=lf.slot,
                )
            elif o == "U:wrongval":
                add(
                    ("update", case.main[1].id),
                    "wrongval",
                    tfact.slot,
                    "case",
                    case,
                    "the update step rewrites the memory with a wrong value",
                    text=case.aux["wrong2"],
                    value=case.aux["v1"],
                )
            elif o == "U:stale":
                add(
                    ("update", case.main[1].id),
                    "stale",
                    tfact.slot,
                    "case",
                    case,
                    "the update step keeps the outdated memory (NONE instead of UPDATE)",
                )
            elif o == "U:overtrim":
                lm = later_msg(tgt, 5, 12)
                add(
                    ("absorb", lm.id),
                    "overtrim",
                    tfact.slot,
                    "case",
                    case,
                    "the window update trims held messages beyond the budget",
                    target=tgt.id,
                )
            elif o == "D":
                add(
                    ("update", case.trigger.id),
                    "delete",
                    tfact.slot,
                    "case",
                    case,
                    "the update step deletes a memory that is still true",
                )
            elif o == "R":
                r_fault(case, q, [key_pair])
            elif o == "P":
                p_fault(case, q)
            elif o == "E+R":
                e_fault(case, case.main[0], case.facts[0], why="first list item lost when taken in")
                r_fault(case, q, [(case.facts[1].slot, case.facts[1].value)])
            elif o == "E+P":
                e_fault(case, case.main[0], case.facts[0], why="first list item lost when taken in")
                p_fault(case, q)
            elif o == "X+R":
                e_fault(
                    case, case.main[0], case.facts[0], why="first mention lost; the fact is restated later"
                )
                r_fault(case, q, [(tfact.slot, tfact.value)])
            elif o == "X+P":
                e_fault(
                    case, case.main[0], case.facts[0], why="first mention lost; the fact is restated later"
                )
                p_fault(case, q)
            elif o == "U+P":
                if sysname == "mem0":
                    lm, lf, _ = case.lookalike
                    add(
                        ("update", lm.id),
                        "overwrite",
                        tfact.slot,
                        "case",
                        case,
                        "the update step overwrites the right memory with a look-alike fact",
                        carrier=lf.slot,
                    )
                else:
                    lm = later_msg(tgt, 5, 12)
                    add(
                        ("absorb", lm.id),
                        "overtrim",
                        tfact.slot,
                        "case",
                        case,
                        "the window update trims held messages beyond the budget",
                        target=tgt.id,
                    )
                p_fault(case, q)
            elif o == "R+P":
                r_fault(case, q, [key_pair])
                p_fault(case, q)
            elif o == "decoyX":
                e_fault(
                    case,
                    case.main[0],
                    case.facts[0],
                    role="decoy",
                    why="first mention lost, but the fact is restated and stored later",
                )
            else:
                raise ValueError(o)
        # graph-level decoys
        bg = sorted(self.bg, key=lambda m: m.index)
        for d in self.spec.get("decoys", []):
            if d == "bgE":
                m = bg[0]
                e_fault(None, m, m.facts[0], role="decoy", why="a background fact nobody asks about is lost")
            elif d == "bgU":
                a, b = bg[0], bg[-1]
                add(
                    ("update", b.id),
                    "overwrite",
                    a.facts[0].slot,
                    "decoy",
                    None,
                    "a background memory nobody asks about is overwritten",
                    carrier=b.facts[0].slot,
                )
            elif d == "fillT":
                used = {f.key for f in scn.faults}
                cands = [
                    m
                    for m in scn.messages
                    if not m.facts
                    and m.task is None
                    and m.index > 3
                    and len(m.content) > 40
                    and (ext, m.id) not in used
                ]
                m = self.rng.choice(cands)
                w = max(re.findall(r"[A-Za-z]{4,}", m.content[len(m.content) // 3 :]), key=len)
                add((ext, m.id), "trunc", None, "decoy", None, "a small-talk message is clipped", anchor=w)
            elif d == "trimF":
                first_fact = min(m.index for m in scn.messages if m.facts)
                m_t = scn.messages[2]
                used = {f.key for f in scn.faults}
                m_op = next(
                    m
                    for m in scn.messages[first_fact + 3 :]
                    if ("absorb", m.id) not in used and m.task is None
                )
                add(
                    ("absorb", m_op.id),
                    "overtrim",
                    None,
                    "decoy",
                    None,
                    "the window update trims a few old small-talk messages too early",
                    target=m_t.id,
                )
            else:
                raise ValueError(d)
        keys = [f.key for f in scn.faults if f.kind != "docdrop"]
        assert len(keys) == len(set(keys)), f"two faults on one operation in {scn.name}"


# --------------------------------------------------------------------------------------------
# Simulated pipelines. An "ideal" model everywhere; a planted fault changes one operation.
# The same code runs for labelling (no tracing) and for recording (log=True).
# --------------------------------------------------------------------------------------------


def build_context(cfg, texts):
    style = cfg.get("ctx_builder", "default")
    if style == "idx":
        return "\n\n".join(f"---- idx {i} ----\n{t}" for i, t in enumerate(texts, start=1))
    if style == "bracket":
        return "\n\n".join(f"[{i}] {t}" for i, t in enumerate(texts, start=1))
    return "\n\n".join(f"### Memory {i}:\n{t}" for i, t in enumerate(texts, start=1))


CTX_BUILDER_SRC = {
    "default": (
        'context_builder = lambda memories: "\\n\\n".join(\n'
        '    f"### Memory {i + 1}:\\n{mem.formatted_content or mem.content}"\n'
        "    for i, mem in enumerate(memories)\n)\n"
    ),
    "idx": (
        "context_parts = []\n"
        "for i, entry in enumerate(retrieved_memories, start=1):\n"
        "    text = entry.formatted_content or entry.content\n"
        '    context_parts.append(f"---- idx {i} ----\\n{text}")\n'
        'context = "\\n\\n".join(context_parts)\n'
    ),
    "bracket": (
        "def numbered_context(memories):\n"
        '    return "\\n\\n".join(\n'
        '        f"[{i}] {m.formatted_content or m.content}" for i, m in enumerate(memories, start=1)\n'
        "    )\n"
    ),
}


class SimBase:
    system = ""

    def __init__(self, scn, active, log=False):
        self.scn = scn
        self.cfg = scn.cfg
        self.active = active
        self.logging = log
        self.log = []
        self.order = []
        self.preds = {}
        self.retrieved = {}
        self.contexts = {}

    def op(self, key):
        self.order.append(key)
        return self.active.get(key)

    def emit(self, entry):
        if self.logging:
            self.log.append(entry)

    def run(self):
        for s_i, sess in enumerate(self.scn.sessions):
            self.emit(("session", s_i))
            for m in sess["msgs"]:
                if m.task is not None:
                    self.search(m.task)
                    self.answer(m.task)
                self.add_message(m)
            self.emit(("session_end", s_i))
        self.emit(("final_session",))
        self.flush()
        self.emit(("construction_end",))
        if not self.scn.online:
            for q in self.scn.questions:
                self.search(q)
            self.emit(("search_end",))
            for q in self.scn.questions:
                self.answer(q)
            self.emit(("eval_end",))
        return self.preds

    def flush(self):
        pass

    def answer(self, q):
        f = self.op(("answer", q.qid))
        units = self.retrieved[q.qid]
        values = self.resolve(q, units)
        pred = render(q, values)
        if f is not None:
            pred = f.params["pred"]
        self.preds[q.qid] = pred
        self.emit(("answer", q, self.contexts[q.qid], self.trace_ids(units), pred))


class Mem0Sim(SimBase):
    system = "mem0"

    def __init__(self, scn, active, log=False):
        super().__init__(scn, active, log)
        self.items = OrderedDict()

    def memdict(self, iid):
        it = self.items[iid]
        return {"id": iid, "memory": it["text"], "timestamp": it["ts"]}

    def slot_item(self, slot):
        found = [iid for iid, it in self.items.items() if it["slot"] == slot]
        return found[-1] if found else None

    def similar(self, facts, fault):
        chosen = []
        live = list(self.items)
        for fa in facts:
            ranked = sorted(
                live,
                key=lambda iid: (
                    -lexsim(fa.text, self.items[iid]["text"]),
                    hfloat(self.scn.seed, fa.text, iid),
                ),
            )
            for iid in ranked[:5]:
                if iid not in chosen:
                    chosen.append(iid)
            same = self.slot_item(fa.slot)
            if same is not None and same not in chosen:
                chosen.append(same)
        if fault is not None and fault.slot is not None:
            t = self.slot_item(fault.slot)
            if t is not None and t not in chosen:
                chosen.append(t)
        return chosen

    def extraction_response(self, texts):
        style = self.cfg.get("extract_style", "plain")
        body = {"facts": texts}
        if style == "fenced":
            return "```json\n" + json.dumps(body, ensure_ascii=False, indent=2) + "\n```"
        if style == "preamble":
            return "Here are the facts I extracted from the conversation:\n" + json.dumps(
                body, ensure_ascii=False
            )
        return json.dumps(body, ensure_ascii=False)

    def decision_response(self, body):
        if self.cfg.get("decision_style", "plain") == "fenced":
            return "```json\n" + json.dumps(body, ensure_ascii=False, indent=2) + "\n```"
        return json.dumps(body, ensure_ascii=False)

    def add_message(self, m):
        fe = self.op(("extract", m.id))
        facts = list(m.facts)
        if fe is not None:
            if fe.kind == "drop":
                facts = [x for x in facts if x.slot != fe.slot]
            elif fe.kind == "distort":
                facts = [fe.params["alt"] if x.slot == fe.slot else x for x in facts]
        texts = [x.text for x in facts]
        raw = self.extraction_response(texts)
        fu = self.op(("update", m.id))
        if not facts:
            self.emit(("mem0_msg", m, raw, texts, None, None, []))
            return
        old_ids = self.similar(facts, fu)
        tid = {iid: str(i) for i, iid in enumerate(old_ids)}
        events = OrderedDict(
            (iid, {"id": tid[iid], "text": self.items[iid]["text"], "event": "NONE"}) for iid in old_ids
        )
        upd = {}
        adds = []
        for fa in facts:
            same = self.slot_item(fa.slot)
            if fa.retract:
                if same is not None:
                    events[same] = {"id": tid[same], "text": self.items[same]["text"], "event": "DELETE"}
                else:
                    adds.append(fa)
            elif same is not None:
                if self.items[same]["value"] != fa.value:
                    events[same] = {
                        "id": tid[same],
                        "text": fa.text,
                        "event": "UPDATE",
                        "old_memory": self.items[same]["text"],
                    }
                    upd[same] = fa
            else:
                adds.append(fa)
        if fu is not None:
            target = self.slot_item(fu.slot) if fu.slot else None
            if fu.kind == "overwrite":
                carrier = [fa for fa in adds if fa.slot == fu.params["carrier"]]
                if target is not None and carrier:
                    adds.remove(carrier[0])
                    events[target] = {
                        "id": tid[target],
                        "text": carrier[0].text,
                        "event": "UPDATE",
                        "old_memory": self.items[target]["text"],
                    }
                    upd[target] = carrier[0]
            elif fu.kind == "wrongval":
                wf = Fact(
                    fu.slot, fu.params["value"], fu.params["text"], fu.params["value"], fu.params["value"]
                )
                if target is not None:
                    events[target] = {
                        "id": tid[target],
                        "text": wf.text,
                        "event": "UPDATE",
                        "old_memory": self.items[target]["text"],
                    }
                    upd[target] = wf
                else:
                    adds = [wf if fa.slot == fu.slot else fa for fa in adds]
            elif fu.kind == "stale":
                if target is not None:
                    events[target] = {"id": tid[target], "text": self.items[target]["text"], "event": "NONE"}
                    upd.pop(target, None)
                else:
                    adds = [fa for fa in adds if fa.slot != fu.slot]
            elif fu.kind == "delete":
                if target is not None:
                    events[target] = {
                        "id": tid[target],
                        "text": self.items[target]["text"],
                        "event": "DELETE",
                    }
                    upd.pop(target, None)
        old_list = [{"id": tid[iid], "text": self.items[iid]["text"]} for iid in old_ids]
        body = {
            "memory": list(events.values())
            + [{"id": str(len(old_ids) + j), "text": fa.text, "event": "ADD"} for j, fa in enumerate(adds)]
        }
        decision = self.decision_response(body)
        actions = []
        for iid, ev in events.items():
            if ev["event"] == "UPDATE":
                before = self.memdict(iid)
                fa = upd[iid]
                self.items[iid].update(
                    slot=fa.slot, value=fa.value, text=fa.text, check=fa.check, ts=m.ts, order=m.index
                )
                actions.append({"event": "UPDATE", "before": before, "after": self.memdict(iid)})
            elif ev["event"] == "DELETE":
                actions.append({"event": "DELETE", "before": self.memdict(iid)})
                del self.items[iid]
        for j, fa in enumerate(adds):
            iid = det_uuid(self.scn.seed, m.id, j, fa.slot)
            self.items[iid] = dict(
                slot=fa.slot, value=fa.value, text=fa.text, check=fa.check, ts=m.ts, order=m.index
            )
            actions.append({"event": "ADD", "after": self.memdict(iid)})
        # the order in which mem0 walks the decision list: listed entries first, then additions
        self.emit(("mem0_msg", m, raw, texts, old_list, decision, actions))

    def search(self, q):
        f = self.op(("search", q.qid))
        k = self.cfg["top_k"]
        needed = {s for s, _ in q.needs}
        miss = {tuple(p) for p in f.params["miss"]} if f is not None else set()
        scored = []
        for iid, it in self.items.items():
            lex = lexsim(q.text, it["text"])
            j = hfloat(self.scn.seed, q.qid, iid)
            if (it["slot"], it["value"]) in miss:
                sc = 0.04 + 0.12 * lex + 0.03 * j
            elif it["slot"] in needed:
                sc = 0.61 + 0.27 * lex + 0.05 * j
            else:
                sc = 0.16 + 0.40 * lex + 0.05 * j
            scored.append((round(sc, 4), iid))
        scored.sort(key=lambda x: (-x[0], x[1]))
        top = scored[:k]
        snaps = [dict(self.items[iid], id=iid) for _, iid in top]
        self.retrieved[q.qid] = snaps
        texts = [f"Memory: {s['text']}\nTime: {s['ts']}" for s in snaps]
        self.contexts[q.qid] = build_context(self.cfg, texts)
        self.emit(("search", q, [(self.memdict(iid), sc) for sc, iid in top]))

    def resolve(self, q, units):
        values = {}
        for slot, _ in q.needs:
            cands = [u for u in units if u["slot"] == slot]
            values[slot] = max(cands, key=lambda u: u["order"])["value"] if cands else None
        return values

    def trace_ids(self, units):
        return [f"memory-unit-{u['id']}" for u in units]


def present_facts(msg, text):
    return [f for f in msg.facts if f.anchor in text]


class RagSim(SimBase):
    system = "rag"

    def __init__(self, scn, active, log=False):
        super().__init__(scn, active, log)
        self.buffer = []  # [(msg, text)]
        self.total = 0
        self.docs = []  # dicts: id, content, entries

    def snapshot(self):
        return {"message_buffer": [t for _, t in self.buffer], "buffer_total_tokens": self.total}

    def trim(self):
        ov = self.cfg["overlap"]
        while len(self.buffer) > ov:
            _, t = self.buffer.pop(0)
            self.total -= ntok(t)
        mx = self.cfg["max_tokens"]
        while mx is not None and self.total > mx and self.buffer:
            _, t = self.buffer.pop(0)
            self.total -= ntok(t)

    def add_message(self, m):
        f = self.op(("buffer", m.id))
        text = f"Speaker {m.speaker} (role: {m.role}) says: {m.content}\nTimestamp: {m.ts}"
        etext = text
        if f is not None and f.kind == "trunc":
            etext = text[: text.index(f.params["anchor"])].rstrip(" ,;:-")
        sep = self.cfg["sep"]
        before = self.snapshot()
        doc_entries = None
        if self.cfg["deferred"]:
            new = ntok(etext)
            if self.total + new > self.cfg["max_tokens"] and self.buffer:
                doc_entries = list(self.buffer)
                if f is not None and f.kind == "docdrop":
                    doc_entries = [e for e in doc_entries if e[0].id != f.params["target"]]
                self.trim()
            self.buffer.append((m, etext))
            self.total += new
        else:
            doc_entries = list(self.buffer) + [(m, etext)]
            self.buffer.append((m, etext))
            self.total += ntok(etext)
            self.trim()
        after = self.snapshot()
        doc = None
        if doc_entries is not None:
            doc = self.new_doc(doc_entries, sep, m.id)
        self.emit(("rag_msg", m, text, before, after, doc))

    def new_doc(self, entries, sep, origin):
        did = det_uuid(self.scn.seed, "doc", origin, len(self.docs))
        d = {"id": did, "content": sep.join(t for _, t in entries), "entries": list(entries)}
        self.docs.append(d)
        return d

    def flush(self):
        if not self.cfg["deferred"]:
            return
        before = self.snapshot()
        doc = None
        if self.buffer:
            doc = self.new_doc(self.buffer, self.cfg["sep"], "flush")
        self.buffer = []
        self.total = 0
        self.emit(("rag_flush", before, self.snapshot(), doc))

    def doc_facts(self, d):
        out = []
        for msg, text in d["entries"]:
            for fa in present_facts(msg, text):
                out.append((fa, msg))
        return out

    def search(self, q):
        f = self.op(("search", q.qid))
        k = self.cfg["top_k"]
        needed = {s for s, _ in q.needs}
        miss = {tuple(p) for p in f.params["miss"]} if f is not None else set()
        want = {(s, v) for s, v in q.needs}
        # an ideal retriever ranks first the documents that together cover every needed fact
        cover = {}
        pool = [d for d in self.docs if not any((fa.slot, fa.value) in miss for fa, _ in self.doc_facts(d))]
        covered = set()
        rank = 0
        while True:
            best, gain = None, 0
            for d in pool:
                if d["id"] in cover:
                    continue
                g = len({(fa.slot, fa.value) for fa, _ in self.doc_facts(d)} & (want - covered))
                if g > gain:
                    best, gain = d, g
            if best is None:
                break
            cover[best["id"]] = rank
            rank += 1
            covered |= {(fa.slot, fa.value) for fa, _ in self.doc_facts(best)}
        scored = []
        for d in self.docs:
            fs = self.doc_facts(d)
            lex = lexsim(q.text, d["content"])
            j = hfloat(self.scn.seed, q.qid, d["id"])
            if any((fa.slot, fa.value) in miss for fa, _ in fs):
                sc = 0.05 + 0.10 * lex + 0.03 * j
            elif d["id"] in cover:
                sc = 0.84 - 0.04 * cover[d["id"]] + 0.03 * j
            elif any(fa.slot in needed for fa, _ in fs):
                sc = 0.50 + 0.20 * lex + 0.05 * j
            else:
                sc = 0.14 + 0.40 * lex + 0.05 * j
            scored.append((round(sc, 4), d["id"]))
        scored.sort(key=lambda x: (-x[0], x[1]))
        top = scored[:k]
        by_id = {d["id"]: d for d in self.docs}
        units = [by_id[i] for _, i in top]
        self.retrieved[q.qid] = units
        self.contexts[q.qid] = build_context(self.cfg, [u["content"] for u in units])
        self.emit(("search", q, [({"content": by_id[i]["content"], "id": i}, sc) for sc, i in top]))

    def resolve(self, q, units):
        values = {}
        for slot, _ in q.needs:
            best = None
            for u in units:
                for fa, msg in self.doc_facts(u):
                    if fa.slot == slot and (best is None or msg.index > best[1]):
                        best = (fa.value, msg.index)
            values[slot] = best[0] if best else None
        return values

    def trace_ids(self, units):
        return [f"memory-unit-{u['id']}" for u in units]


class LCSim(SimBase):
    system = "long_context"

    def __init__(self, scn, active, log=False):
        super().__init__(scn, active, log)
        self.buffer = []
        self.total = 0

    def doc(self):
        return self.cfg["sep"].join(t for _, t in self.buffer)

    def add_message(self, m):
        f = self.op(("absorb", m.id))
        text = f"Speaker {m.speaker} (role: {m.role}) says: {m.content}\nTimestamp: {m.ts}"
        before = self.doc()
        etext = text
        if f is not None and f.kind == "trunc":
            etext = text[: text.index(f.params["anchor"])].rstrip(" ,;:-")
        if not (f is not None and f.kind == "drop"):
            self.buffer.append((m, etext))
            self.total += ntok(etext)
        while self.total > self.cfg["window"] and self.buffer:
            _, t = self.buffer.pop(0)
            self.total -= ntok(t)
        if f is not None and f.kind == "overtrim":
            while any(e[0].id == f.params["target"] for e in self.buffer):
                _, t = self.buffer.pop(0)
                self.total -= ntok(t)
        self.emit(("lc_msg", m, text, before, self.doc()))

    def search(self, q):
        self.op(("search", q.qid))
        history = self.doc()
        unit = {"entries": list(self.buffer), "content": history}
        self.retrieved[q.qid] = [unit]
        formatted = (
            "The following content enclosed in <long_context_memory> tags is the user's "
            "historical interaction trajectory so far:\n"
            f"<long_context_memory>\n{history}\n</long_context_memory>\n"
            "This interaction trajectory is your long-term memory."
        )
        self.contexts[q.qid] = build_context(self.cfg, [formatted])
        self.emit(("search", q, history))

    def resolve(self, q, units):
        values = {}
        for slot, _ in q.needs:
            best = None
            for msg, text in units[0]["entries"]:
                for fa in present_facts(msg, text):
                    if fa.slot == slot and (best is None or msg.index > best[1]):
                        best = (fa.value, msg.index)
            values[slot] = best[0] if best else None
        return values

    def trace_ids(self, units):
        return ["memory-unit"]


SIMS = {"mem0": Mem0Sim, "rag": RagSim, "long_context": LCSim}


# --------------------------------------------------------------------------------------------
# Labelling by replay
# --------------------------------------------------------------------------------------------

ERROR_TYPE = {
    ("mem0", "extract"): "ExtractionError",
    ("mem0", "search"): "RetrievalError",
    ("mem0", "answer"): "ResponseError",
    ("rag", "buffer"): "ExtractionError",
    ("rag", "search"): "RetrievalError",
    ("rag", "answer"): "ResponseError",
    ("long_context", "answer"): "ResponseError",
}


def error_type(system, fault):
    stage = fault.key[0]
    if system == "mem0" and stage == "update":
        return "DeletionError" if fault.kind == "delete" else "UpdateError"
    if system == "long_context" and stage == "absorb":
        return "UpdateError" if fault.kind == "overtrim" else "ExtractionError"
    return ERROR_TYPE[(system, stage)]


class Labeler:
    def __init__(self, scn):
        self.scn = scn
        self.cache = {}
        self.by_key = {f.key: f for f in scn.faults}

    def run(self, keys):
        keys = frozenset(keys)
        if keys not in self.cache:
            sim = SIMS[self.scn.system](self.scn, {k: self.by_key[k] for k in keys})
            preds = sim.run()
            self.cache[keys] = (preds, sim.order)
        return self.cache[keys]

    def resolve_docdrops(self):
        """A buffer document drop happens at the operation that emits the document."""
        for f in self.scn.faults:
            if f.kind != "docdrop":
                continue
            others = {g.key: g for g in self.scn.faults if g.kind != "docdrop"}
            sim = RagSim(self.scn, others, log=True)
            sim.run()
            for entry in sim.log:
                if entry[0] == "rag_msg" and entry[5] is not None:
                    if any(mm.id == f.params["target"] for mm, _ in entry[5]["entries"]):
                        f.key = ("buffer", entry[1].id)
                        break
            else:
                raise RuntimeError("docdrop target never emitted")
        self.by_key = {f.key: f for f in self.scn.faults}
        keys = [f.key for f in self.scn.faults]
        assert len(keys) == len(set(keys)), f"two faults on one operation in {self.scn.name}"

    def label(self):
        scn = self.scn
        all_keys = [f.key for f in scn.faults]
        full, order = self.run(all_keys)
        ideal, _ = self.run([])
        pos = {}
        for i, k in enumerate(order):
            pos.setdefault(k, i)
        for f in scn.faults:
            assert f.key in pos, f"{scn.name}: fault {f.key} is on no operation"
        faults = sorted(scn.faults, key=lambda f: pos[f.key])
        results = {}
        for q in scn.questions:
            if q.annot:
                assert not is_correct(q, ideal[q.qid]), f"{scn.name}/{q.qid}: annotation case judged right"
                assert full[q.qid] == ideal[q.qid], f"{scn.name}/{q.qid}: annotation case touched by a fault"
                results[q.qid] = ("AnnotationError", None)
                continue
            assert is_correct(q, ideal[q.qid]), (
                f"{scn.name}/{q.qid}: the ideal pipeline fails ({ideal[q.qid]!r} vs {q.gold_pred!r})"
            )
            if is_correct(q, full[q.qid]):
                results[q.qid] = (None, None)
                continue
            label = None
            for f in faults:
                earlier = [g.key for g in faults if pos[g.key] < pos[f.key]]
                fixed, _ = self.run(earlier)
                kept, _ = self.run(earlier + [f.key])
                if is_correct(q, fixed[q.qid]) and not is_correct(q, kept[q.qid]):
                    label = f
                    break
            assert label is not None, f"{scn.name}/{q.qid}: failed but no planted fault is decisive"
            results[q.qid] = (error_type(scn.system, label), label)
        # which questions each fault touches (decisive or not)
        touched = {}
        for f in faults:
            alone_preds, _ = self.run([f.key])
            without, _ = self.run([g.key for g in faults if g is not f])
            touched[f.key] = sorted(
                q.qid
                for q in scn.questions
                if alone_preds[q.qid] != ideal[q.qid] or without[q.qid] != full[q.qid]
            )
        return results, touched, full, pos


# --------------------------------------------------------------------------------------------
# Prompt texts (written for this set)
# --------------------------------------------------------------------------------------------

EXTRACTION_PROMPTS = {
    "a": (
        "You organise personal memories. Read the conversation snippet and list every durable fact "
        "about the people in it: jobs, places they live or grew up, family, pets, plans, purchases, "
        'hobbies, health details, trips and dates. Resolve relative dates ("yesterday", "last '
        'Friday") against the message timestamp. Name the person each fact is about. Skip greetings '
        'and small talk. Answer with JSON only: {"facts": ["...", "..."]}. If there is nothing '
        'worth keeping, answer {"facts": []}.'
    ),
    "b": (
        "Role: memory curator for a long-running chat assistant.\n"
        "Task: extract short, self-contained facts from the input messages that will still matter in a "
        "few weeks (identity, relationships, work, home, routines, preferences, events with dates).\n"
        "Rules:\n- one fact per string, third person, include who it is about;\n"
        "- convert relative time expressions to calendar dates using the timestamp;\n"
        "- ignore chit-chat, questions to the assistant and generic advice.\n"
        'Output format: {"facts": [<string>, ...]} and nothing else.'
    ),
}

UPDATE_PROMPTS = {
    "a": (
        "You maintain a memory store. Compare newly retrieved facts with the existing memories and "
        "choose one operation per item:\n"
        "- ADD: the fact is new information; give it a new id.\n"
        "- UPDATE: the fact refines or supersedes an existing memory about the same thing; keep the "
        "memory id, write the merged text and put the previous text in old_memory.\n"
        "- DELETE: the fact shows an existing memory is no longer true; keep its id.\n"
        "- NONE: the memory already says this; leave it unchanged.\n"
        "Only use ids that appear in the existing memories for UPDATE, DELETE and NONE."
    ),
    "b": (
        "Memory reconciliation instructions. For each existing memory decide NONE, UPDATE or DELETE; "
        "for each new fact that matches no memory decide ADD. Prefer UPDATE when a fact changes a "
        "value the memory already holds (a new job, a new address). Use DELETE only when a fact "
        "cancels or contradicts a memory. Never invent ids for existing memories."
    ),
}

QA_PROMPTS = {
    "a": (
        "You are answering a question about a person's past conversations using retrieved memories.\n\n"
        "Memories:\n$context\n\nQuestion: $question\n\n"
        "Answer in one short sentence. Use only the memories; if they do not contain the answer, say so. "
        "When memories disagree, trust the most recent one."
    ),
    "b": (
        "# Context\n$context\n\n# Instructions\nAnswer the user's question from the context above. "
        "Dates should be written as day month year. Be brief.\n\n# Question\n$question\n\n# Answer\n"
    ),
    "c": (
        "Below are excerpts of earlier chats between the user and you.\n$context\n\n"
        "Using them, respond to: $question\nReply with a single sentence and no preamble."
    ),
}

JUDGE_PROMPTS = {
    "label": (
        "Decide whether the generated answer matches the gold answer for the question.\n"
        "Question: $question\nGold answer: $golden_answers\nGenerated answer: $prediction\n"
        "Be generous with wording but strict about names, places, numbers and dates. "
        'Return JSON with a single key "label" whose value is CORRECT or WRONG.'
    ),
    "yesno": (
        "I will give you a question, a correct answer, and a response from a model. Answer yes if "
        "the response contains the correct answer (equivalent wording is fine) and no otherwise. "
        "If the response only gives part of a multi-part answer, answer no.\n\n"
        "Question: $question\nCorrect Answer: $golden_answers\nModel Response: $prediction\n\n"
        "Is the model response correct? Answer yes or no only."
    ),
    "right": (
        "Grade the assistant's answer.\nQuestion: $question\nReference: $golden_answers\n"
        "Answer: $prediction\nReply RIGHT if the answer agrees with the reference, otherwise reply "
        "WRONG followed by a short reason."
    ),
    "score": (
        "Score the response against the reference trajectory.\nQuery: $question\n"
        "Reference: $golden_answers\nResponse: $prediction\n"
        'Give a JSON object in a ```json block with keys "score" (1 if the response is correct, 0 '
        'otherwise) and "reason".'
    ),
}

PARSE_SRC = {
    "label": (
        "    @classmethod\n    def parse_judge_response(cls, content: str) -> float:\n"
        '        return float("correct" in content.lower())\n'
    ),
    "yesno": (
        "    @classmethod\n    def parse_judge_response(cls, content: str) -> float:\n"
        '        return float("yes" in content.lower())\n'
    ),
    "right": (
        "    @classmethod\n    def parse_judge_response(cls, content: str) -> float:\n"
        '        return 1.0 if content.strip().upper().startswith("RIGHT") else 0.0\n'
    ),
    "score": (
        "    @classmethod\n    def parse_judge_response(cls, content: str) -> float:\n"
        '        m = re.search(r"```json\\s*(.*?)\\s*```", content, re.DOTALL)\n'
        '        if m:\n            return float(json.loads(m.group(1)).get("score", 0))\n'
        "        return 0.0\n"
    ),
}

FLAVOR_JUDGE = {"locomo": "label", "chat": "label", "lme": "yesno", "diary": "right", "online": "score"}


def judge_response(style, q, pred, correct, verbose):
    if style == "label":
        if verbose:
            why = (
                "The generated answer gives the same information as the gold answer."
                if correct
                else f"The generated answer does not match the gold answer '{q.gold_text}'."
            )
            return json.dumps({"reasoning": why, "label": "CORRECT" if correct else "WRONG"})
        return json.dumps({"label": "CORRECT" if correct else "WRONG"})
    if style == "yesno":
        return "yes" if correct else "no"
    if style == "right":
        return "RIGHT" if correct else f"WRONG - the reference says {q.gold_text}."
    if style == "score":
        body = {
            "score": 1 if correct else 0,
            "reason": "Consistent with the reference." if correct else f"The reference is {q.gold_text}.",
        }
        return "```json\n" + json.dumps(body, ensure_ascii=False) + "\n```"
    raise ValueError(style)


def judge_template_name(scn, q):
    fl = scn.flavor
    if fl == "locomo":
        return "locomo-judge"
    if fl == "chat":
        return "chatlog-judge"
    if fl == "lme":
        return f"longmemeval-{q.qtype}"
    if fl == "diary":
        return "diary-exact-match"
    return "online-lm-score"


# --------------------------------------------------------------------------------------------
# Recording with smartcomment, instrumented the way MemBase instruments its layers and runners
# --------------------------------------------------------------------------------------------

PROJECT = {"mem0": "Mem0", "rag": "NaiveRAG", "long_context": "Long-Context"}

MSG_COMMENT = (
    "An input message fed into the memory pipeline. It triggers the memory system to extract "
    "valuable information that is worth storing in the memory store. The name denotes the "
    "speaker of the message, the role denotes the role of the speaker, and the timestamp "
    "denotes the time when the message is sent."
)
QUERY_COMMENT = "A task query which requires the memory system to retrieve relevant memories."
MEM_COMMENT = "A memory unit in the memory system."


class _LCLayer:
    """The long-context memory unit (the object a mutation is recorded on)."""

    def __init__(self, sep):
        self.sep = sep
        self.doc_text = ""

    def doc(self):
        return self.doc_text


def _exit(cm):
    cm.__exit__(None, None, None)


def _roundtrip(graph):
    data = json.loads(json.dumps(graph.export_graph(), ensure_ascii=False))
    return ExecNetwork.import_graph(data)


class Recorder:
    def __init__(self, scn, log):
        self.scn = scn
        self.cfg = scn.cfg
        self.log = log
        self.op_ids = {}
        self.qa_ops = {}
        self.judge_ops = {}
        self.search_ops = {}
        self.pred_nodes = {}
        self.gold_nodes = {}
        self.judge_scores = {}
        self.lc_layer = _LCLayer(self.cfg.get("sep", "\n"))
        self.flavor_judge = FLAVOR_JUDGE[scn.flavor]

    # ---- driver ---------------------------------------------------------------------------
    def record(self):
        scn, cfg = self.scn, self.cfg
        rs = random.Random(scn.seed * 31 + 7)
        start = _dt.datetime(
            2026,
            rs.randint(1, 4),
            rs.randint(1, 27),
            rs.randint(9, 22),
            rs.randint(0, 59),
            rs.randint(0, 59),
            rs.randint(0, 999) * 1000,
        )
        CLOCK.reset(start, scn.seed)
        IDS.reset(scn.seed * 1000003 + 11)
        entries = iter(self.log)
        meta = {
            "save_dir": f"{cfg['save_root']}/{scn.traj_id}",
            "layer_type": PROJECT[scn.system],
            "traj_metadata": scn.traj_meta,
            "traced_data_save_dir": "traced_data",
            "dataset_cls": FLAVORS[scn.flavor]["dataset"],
        }
        with comment_graph(
            user_id=scn.traj_id, project_id=PROJECT[scn.system], strict=True, metadata=meta
        ) as graph:
            self.graph = graph
            sess_cm = None
            for e in entries:
                tag = e[0]
                if tag == "session":
                    s = scn.sessions[e[1]]
                    sess_cm = comment_session(
                        session_id=s["id"],
                        comment=f"It is the {e[1] + 1}th conversational session.",
                        category="memory_construction",
                        metadata=s["meta"],
                    )
                    sess_cm.__enter__()
                elif tag == "session_end":
                    _exit(sess_cm)
                    sess_cm = None
                elif tag == "final_session":
                    sess_cm = comment_session(
                        comment=(
                            "It is the finalization stage of memory construction. This stage ensures all "
                            "messages have been fully ingested into the memory layer and the internal "
                            "memory state is consistent."
                        ),
                        category="memory_construction",
                    )
                    sess_cm.__enter__()
                elif tag == "construction_end":
                    if sess_cm is not None:
                        _exit(sess_cm)
                    break
                elif tag == "mem0_msg":
                    self.mem0_message(*e[1:])
                    CLOCK.advance(200, 260)
                elif tag == "rag_msg":
                    self.rag_message(*e[1:])
                    CLOCK.advance(200, 260)
                elif tag == "rag_flush":
                    self.rag_flush(*e[1:])
                elif tag == "lc_msg":
                    self.lc_message(*e[1:])
                    CLOCK.advance(200, 260)
                elif tag == "search":  # online evaluation inside the construction stage
                    self.online_search(e[1], e[2])
                elif tag == "answer":
                    self.online_answer(*e[1:])
                else:
                    raise ValueError(tag)
        if scn.online:
            self.final_graph = graph
            return graph
        # ---- search stage ----
        CLOCK.advance(4 * 60_000, 40 * 60_000)
        g2 = _roundtrip(graph)
        with comment_graph(graph=g2) as graph:
            self.graph = graph
            with comment_session(
                category="memory_search",
                comment="Based on a list of questions, we search the memory for each question.",
                metadata={"top_k": cfg["top_k"], "strict": False},
            ):
                for e in entries:
                    if e[0] == "search_end":
                        break
                    assert e[0] == "search"
                    self.search(e[1], e[2], online=False)
                    CLOCK.advance(30, 400)
        # ---- evaluation stage ----
        CLOCK.advance(2 * 60_000, 25 * 60_000)
        g3 = _roundtrip(graph)
        with comment_graph(graph=g3) as graph:
            self.graph = graph
            with comment_session(
                category="memory_evaluation",
                comment=(
                    "Evaluate the memory layer by checking whether the question-answering model can "
                    "generate the correct answer based on the retrieved memories."
                ),
                metadata={
                    "qa_model": cfg["qa_model"],
                    "judge_model": cfg["judge_model"],
                    "qa_batch_size": cfg.get("qa_batch", 4),
                    "judge_batch_size": cfg.get("judge_batch", 4),
                    "add_question_timestamp": False,
                },
            ):
                runtime_qa_template = comment_variable(
                    QA_PROMPTS[cfg["qa_prompt"]],
                    to_runtime=True,
                    id_strategy=lambda v: cfg["qa_prompt_name"],
                    comment=(
                        "The prompt template for the question-answering model. It is a `string.Template` "
                        "object with `$question` and `$context` placeholders."
                    ),
                    category="prompt",
                    metadata={"op_type": "question-answering"},
                )
                answers = []
                for e in entries:
                    if e[0] == "eval_end":
                        break
                    assert e[0] == "answer"
                    answers.append(e[1:])
                CLOCK.advance(1500, 9000)  # the batched question-answering calls
                for q, context, trace_ids, pred in answers:
                    self.qa_op(
                        q,
                        context,
                        trace_ids,
                        pred,
                        runtime_qa_template,
                        CTX_BUILDER_SRC[cfg.get("ctx_builder", "default")],
                    )
                # the judge runs per template group, in order of first appearance
                groups = OrderedDict()
                for q, _, _, pred in answers:
                    groups.setdefault(judge_template_name(scn, q), []).append((q, pred))
                for tname, items in groups.items():
                    runtime_judge_template = comment_variable(
                        JUDGE_PROMPTS[self.flavor_judge],
                        to_runtime=True,
                        id_strategy=lambda _: tname,
                        comment=(
                            "The prompt template for the judge model. It is a `string.Template` object with "
                            "`$question`, `$prediction`, and `$golden_answers` placeholders."
                        ),
                        category="prompt",
                        class_name="judge_prompt",
                        metadata={"op_type": "llm-judge"},
                    )
                    CLOCK.advance(1200, 6000)
                    for q, pred in items:
                        self.judge_op(q, pred, runtime_judge_template)
        self.final_graph = graph
        return graph

    # ---- Mem0 -------------------------------------------------------------------------------
    def update_instruction(self, old_list, facts):
        template = UPDATE_PROMPTS[self.cfg.get("update_prompt", "a")]
        comment_variable(
            template,
            variable_name="custom_update_memory_prompt",
            id_strategy=lambda x: "memory-update-decision-prompt",
            category="prompt",
            comment=(
                "A prompt template for the memory system to decide whether to add, update, "
                "delete, or not change the memory based on the new extracted facts and the "
                "existing memories similar to them."
            ),
            metadata={"op_type": "update"},
        )
        comment_variable(
            f"Find {len(old_list)} existing memories similar to the new extracted facts.",
            variable_name="existing_memories",
            category="similar_memories",
            class_name="existing_memories",
            comment=(
                "For each fact, the memory system retrieves top-k similar memories from the "
                "existing memory store and merges them into this variable. It only states how "
                "many were found; the instruction below carries their text."
            ),
        )
        if old_list:
            current = (
                "Below is the current content of my memory which I have collected till now. "
                f"You have to update it in the following format only:\n\n```\n{old_list}\n```\n"
            )
        else:
            current = "Current memory is empty.\n"
        return (
            f"{template}\n\n{current}\nThe new retrieved facts are mentioned in the triple backticks. "
            "You have to analyze the new retrieved facts and determine whether these facts should be added, "
            f"updated, or deleted in the memory.\n\n```\n{facts}\n```\n\n"
            'Return JSON only: {"memory": [{"id": "<id>", "text": "<content>", '
            '"event": "ADD|UPDATE|DELETE|NONE", "old_memory": "<previous content, UPDATE only>"}]}'
        )

    def mem0_message(self, m, raw, texts, old_list, decision, actions):
        cfg = self.cfg
        if cfg.get("raw_input_style") == "string":
            payload = (
                f"{m.content}\nBelow is this message's metadata:\nSpeaker Name: {m.speaker}\n"
                f"Speaker Role: {m.role}\nTimestamp: {m.ts}\n"
            )
            comment_variable(
                payload,
                variable_name="raw_input_1",
                id_strategy=lambda _: m.id,
                category="message",
                metadata={**m.meta, "timestamp": m.ts, "speakers": m.speaker},
                comment=MSG_COMMENT,
            )
        else:
            text = (
                f"{m.content}\nBelow is this message's metadata:\nSpeaker Name: {m.speaker}\n"
                f"Speaker Role: {m.role}\n"
            )
            comment_variable(
                {"content": text, "name": m.speaker, "role": m.role, "timestamp": m.ts},
                variable_name="raw_input_1",
                id_strategy=lambda _: m.id,
                encoding_fn=JSON_ENC,
                category="message",
                metadata={**m.meta, "timestamp": m.ts, "speakers": m.speaker},
                comment=MSG_COMMENT,
            )
        ctx = current_context()
        raw_inputs = ctx.query_variables(category="message")
        runtime_system_prompt = comment_variable(
            EXTRACTION_PROMPTS[cfg.get("extract_prompt", "a")],
            to_runtime=True,
            id_strategy=lambda x: "fact-extraction-system-prompt",
            category="prompt",
            comment=(
                "A fact extraction system prompt for the memory system to extract a list of facts from a "
                "given conversation snippet."
            ),
            metadata={"op_type": "extraction"},
        )
        link_comment = (
            "The large language model extracts facts from a conversation snippet based on the given "
            "conversation snippet and the fact extraction system prompt."
        )
        with comment_op_scope(
            op_name="memory_system.extract_facts",
            category="extraction",
            comment=(
                "Extract facts from a conversation snippet using an LLM. Please note that these extracted "
                "facts are initially without timestamps, which will be added later when the memory unit "
                "is created or updated."
            ),
            metadata={"llm_model": cfg["llm_model"]},
        ) as op:
            self.op_ids[("extract", m.id)] = op.op_id
            CLOCK.advance(500, 2600)
            runtime_raw = comment_variable(
                raw,
                to_runtime=True,
                class_name="raw_fact_extraction_response",
                category="llm_response",
                comment="A raw fact extraction response from a large language model.",
            )
            if cfg.get("link_order") == "prompt_first":
                comment_link(source=runtime_system_prompt, target=runtime_raw, comment=link_comment)
                for ri in raw_inputs:
                    comment_link(source=ri, target=runtime_raw, comment=link_comment)
            else:
                for ri in raw_inputs:
                    comment_link(source=ri, target=runtime_raw, comment=link_comment)
                comment_link(source=runtime_system_prompt, target=runtime_raw, comment=link_comment)
            removed = remove_code_blocks(raw)
            runtime_removed = comment_variable(
                removed,
                to_runtime=True,
                class_name="fact_extraction_response_with_code_block_removing",
                id_strategy=lambda x: runtime_raw.name,
                category="llm_response",
                comment="A post-processed fact extraction response from a large language model.",
            )
            comment_link(
                source=runtime_raw,
                target=runtime_removed,
                comment=(
                    "A link between the raw response and the post-processed response using the "
                    "function `remove_code_blocks`."
                ),
                edge_metadata={"source_code": REMOVE_CODE_BLOCKS_SRC},
            )
            try:
                facts = json.loads(removed)["facts"]
                runtime_facts = comment_variable(
                    facts,
                    to_runtime=True,
                    id_strategy=lambda x: runtime_raw.name,
                    class_name="extracted_facts",
                    category="llm_response",
                    comment="A list of extracted facts from a conversation snippet using the function `json.loads`.",
                )
                comment_link(
                    source=runtime_removed,
                    target=runtime_facts,
                    comment=f"The large language model extracts {len(facts)} facts from a conversation snippet.",
                )
            except json.JSONDecodeError:
                extracted = extract_json(removed)
                facts = json.loads(extracted)["facts"]
                runtime_extracted = comment_variable(
                    extracted,
                    to_runtime=True,
                    class_name="fact_extraction_response_with_code_block_removing_and_json_content_extraction",
                    category="llm_response",
                    comment="A post-processed fact extraction response from a large language model.",
                )
                comment_link(
                    source=runtime_removed,
                    target=runtime_extracted,
                    comment=(
                        "If direct JSON parsing fails due to `json.JSONDecodeError`, the memory system "
                        "extracts the JSON content from the response using the function `extract_json`."
                    ),
                    edge_metadata={"source_code": EXTRACT_JSON_SRC},
                )
                runtime_facts = comment_variable(
                    facts,
                    to_runtime=True,
                    id_strategy=lambda x: runtime_raw.name,
                    class_name="extracted_facts",
                    category="llm_response",
                    comment="A list of extracted facts from a conversation snippet using the function `json.loads`.",
                )
                comment_link(
                    source=runtime_extracted,
                    target=runtime_facts,
                    comment=f"The large language model extracts {len(facts)} facts from a conversation snippet.",
                )
        assert facts == texts
        CLOCK.advance(15, 120)  # embedding + similarity search over the store (untraced)
        with comment_op_scope(
            op_name="memory_system.update_memory_decision",
            category="update",
            comment="Decide how to update the memory store using a large language model.",
            metadata={"llm_model": cfg["llm_model"]},
        ) as op:
            self.op_ids[("update", m.id)] = op.op_id
            if facts:
                instruction = self.update_instruction(old_list, facts)
                runtime_fcp = comment_variable(
                    instruction,
                    to_runtime=True,
                    class_name="memory_update_task_instruction",
                    category="prompt",
                    comment=(
                        "A concrete memory update task instruction that merges the newly extracted facts, the "
                        "retrieved existing memories, and the memory update prompt template."
                    ),
                    metadata={"op_type": "update"},
                )
                runtime_existing = ctx.get_variable("existing_memories")
                runtime_template = ctx.get_variable("custom_update_memory_prompt")
                comment_link(
                    source=runtime_facts,
                    target=runtime_fcp,
                    comment=(
                        "The newly extracted facts are inserted into the concrete memory update task "
                        "instruction so the model can compare them against the existing memory store."
                    ),
                )
                comment_link(
                    source=runtime_existing,
                    target=runtime_fcp,
                    comment=(
                        "The retrieved existing memories are inserted into the concrete memory update "
                        "task instruction."
                    ),
                )
                comment_link(
                    source=runtime_template,
                    target=runtime_fcp,
                    comment="The memory update prompt template provides the decision rules.",
                )
                ctx.remove_variable("existing_memories")
                ctx.remove_variable("custom_update_memory_prompt")
                CLOCK.advance(800, 3400)
                runtime_rawd = comment_variable(
                    decision,
                    to_runtime=True,
                    class_name="raw_memory_update_decision",
                    category="llm_response",
                    comment="A raw memory update decision response from a large language model.",
                )
                comment_link(
                    source=runtime_fcp,
                    target=runtime_rawd,
                    comment=(
                        "The large language model reads the concrete memory update task instruction "
                        "and generates a memory update decision."
                    ),
                )
                removed_d = remove_code_blocks(decision)
                actions_dict = json.loads(removed_d)
                runtime_removed_d = comment_variable(
                    removed_d,
                    to_runtime=True,
                    class_name="memory_update_decision_with_code_block_removing",
                    category="llm_response",
                    comment="A post-processed memory update decision response from a large language model.",
                )
                comment_link(
                    source=runtime_rawd,
                    target=runtime_removed_d,
                    comment=(
                        "A link between the raw response and the post-processed memory update decision "
                        "response using the function `remove_code_blocks`."
                    ),
                    edge_metadata={"source_code": REMOVE_CODE_BLOCKS_SRC},
                )
                runtime_actions = comment_variable(
                    actions_dict,
                    variable_name="new_memories_with_actions",
                    to_runtime=True,
                    class_name="update_action",
                    encoding_fn=JSON_ENC,
                    decoding_fn=json.loads,
                    category="llm_response",
                    comment="A list of memory update actions generated from a large language model.",
                )
                comment_link(
                    source=runtime_removed_d,
                    target=runtime_actions,
                    comment=(
                        f"The LLM generates {len(actions_dict.get('memory', []))} memory update actions. "
                        "Note that some actions may be invalid; invalid actions are ignored."
                    ),
                )
            else:
                runtime_actions = comment_variable(
                    {},
                    variable_name="new_memories_with_actions",
                    to_runtime=True,
                    class_name="update_action",
                    encoding_fn=json.dumps,
                    decoding_fn=json.loads,
                    category="llm_response",
                    comment="An empty list of memory update actions.",
                )
                comment_link(
                    source=runtime_facts,
                    target=runtime_actions,
                    comment=(
                        "No new facts are extracted from the conversation snippet, so the memory update "
                        "actions are empty."
                    ),
                )
            mem_opts = {
                "id_strategy": "mem0-dict",
                "category": "memory_entry",
                "encoding_fn": JSON_ENC,
                "decoding_fn": json.loads,
                "comment": MEM_COMMENT,
            }
            for act in actions:
                if act["event"] == "ADD":
                    mid = act["after"]["id"]
                    comment_link(
                        source=runtime_actions,
                        target=(act["after"], dict(mem_opts)),
                        comment=(
                            f"Based on the LLM's memory update decision, a new memory entry '{mid}' is "
                            "created and added to the memory store."
                        ),
                    )
                elif act["event"] == "UPDATE":
                    snapshot = dict(act["before"])
                    with comment_mutation(
                        target=snapshot,
                        inputs=[ctx.get_variable("new_memories_with_actions")],
                        id_strategy="mem0-dict",
                        encoding_fn=JSON_ENC,
                        decoding_fn=json.loads,
                        mutation_comment=(
                            f"Based on the LLM's memory update decision, an existing memory unit "
                            f"'{snapshot['id']}' is updated."
                        ),
                        mutation_category="llm_response",
                        reuse_op=True,
                    ):
                        snapshot["memory"] = act["after"]["memory"]
                        snapshot["timestamp"] = act["after"]["timestamp"]
                elif act["event"] == "DELETE":
                    marker = comment_variable(
                        "DELETED",
                        to_runtime=True,
                        comment="It marks the memory unit is deleted successfully.",
                        class_name="delete_marker",
                        category="marker",
                    )
                    comment_link(
                        source=(act["before"], dict(mem_opts)),
                        target=marker,
                        comment=f"The memory unit '{act['before']['id']}' is deleted successfully.",
                    )
        ctx.remove_variable("new_memories_with_actions")
        ctx.remove_variable("raw_input_1")

    # ---- NaiveRAG --------------------------------------------------------------------------
    def rag_meta(self):
        c = self.cfg
        return {
            "deferred": c["deferred"],
            "max_tokens": c["max_tokens"],
            "num_overlap_msgs": c["overlap"],
            "message_separator": c["sep"],
            "llm_model_for_tokenizer": c["llm_model"],
        }

    def raw_input(self, m, text):
        return comment_variable(
            {"content": text, "name": m.speaker, "role": m.role, "timestamp": m.ts},
            to_runtime=True,
            id_strategy=lambda _: m.id,
            encoding_fn=JSON_ENC,
            decoding_fn=json.loads,
            category="message",
            metadata={**m.meta, "timestamp": m.ts, "speakers": m.speaker},
            comment=MSG_COMMENT,
        )

    def rag_add_doc(self, doc, runtime_doc):
        comment_op(
            inputs=[runtime_doc],
            outputs=[
                (
                    {"content": doc["content"], "id": doc["id"]},
                    {
                        "id_strategy": "naive-rag-dict",
                        "category": "memory_entry",
                        "encoding_fn": JSON_ENC,
                        "decoding_fn": json.loads,
                    },
                )
            ],
            op_name="memory_system.add",
            category="update",
            comment="The buffered document is embedded into a memory unit. The memory unit is added into the memory store.",
        )

    def rag_message(self, m, text, before, after, doc):
        cfg = self.cfg
        runtime_raw_input = self.raw_input(m, text)
        buffer_snapshot = copy.deepcopy(before)
        runtime_buffer = comment_variable(
            buffer_snapshot,
            to_runtime=True,
            id_strategy=lambda _: "message-buffer",
            encoding_fn=JSON_ENC,
            decoding_fn=json.loads,
            category="message_buffer",
            comment="A message buffer that stores messages not yet processed by the memory system. Its data structure is a list.",
        )
        with comment_op_scope(
            op_name="memory_system.message_buffer_update",
            category="update",
            comment=(
                "Merge a new input message into the current message buffer and, when the buffer is ready, "
                "emit a memory unit that aggregates recent messages for the memory system to store."
            ),
            metadata=self.rag_meta(),
        ) as op:
            self.op_ids[("buffer", m.id)] = op.op_id
            with comment_mutation(
                target=buffer_snapshot,
                inputs=[runtime_raw_input],
                id_strategy=lambda _: "message-buffer",
                encoding_fn=JSON_ENC,
                decoding_fn=json.loads,
                category="message_buffer",
                mutation_comment=(
                    "Add a new input message into the current message buffer. The message buffer is "
                    "updated and the oldest messages may be trimmed so that the buffer stays within "
                    f"the configured overlap ({cfg['overlap']}) and max-token budgets ({cfg['max_tokens']})."
                ),
                mutation_category="update",
                reuse_op=True,
            ):
                buffer_snapshot["message_buffer"] = list(after["message_buffer"])
                buffer_snapshot["buffer_total_tokens"] = after["buffer_total_tokens"]
            if doc is not None:
                CLOCK.advance(40, 300)
                runtime_doc = comment_variable(
                    doc["content"],
                    to_runtime=True,
                    class_name="temporary_variable",
                    category="temporary_variable",
                    comment=(
                        "A temporary variable that holds the buffered document emitted from the message buffer. "
                        "It will serve as the content of a memory unit."
                    ),
                )
                comment_op(
                    inputs=[runtime_raw_input, runtime_buffer],
                    outputs=[runtime_doc],
                    category="extraction",
                    comment="The new input message joins the previous message buffer state to produce a buffered document.",
                    reuse_op=True,
                )
                self.rag_add_doc(doc, runtime_doc)

    def rag_flush(self, before, after, doc):
        buffer_snapshot = copy.deepcopy(before)
        runtime_buffer = comment_variable(
            buffer_snapshot,
            to_runtime=True,
            encoding_fn=JSON_ENC,
            id_strategy=lambda _: "message-buffer",
            category="message_buffer",
            comment="A message buffer that stores messages not yet processed by the memory system. Its data structure is a list.",
        )
        with comment_op_scope(
            op_name="memory_system.message_buffer_update",
            category="update",
            comment=(
                "Finalize the current message buffer at the end of the conversation. Any remaining buffered "
                "messages are aggregated into a last buffered document that forms a new memory unit, and "
                "the message buffer is then cleared."
            ),
            metadata=self.rag_meta(),
        ):
            if doc is not None:
                CLOCK.advance(40, 300)
                runtime_doc = comment_variable(
                    doc["content"],
                    to_runtime=True,
                    class_name="temporary_variable",
                    category="temporary_variable",
                    comment=(
                        "A temporary variable that holds the buffered document emitted from the message buffer. "
                        "It will serve as the content of a memory unit."
                    ),
                )
                comment_op(
                    inputs=[runtime_buffer],
                    outputs=[runtime_doc],
                    op_name="memory_system.finalize_memory_unit",
                    category="extraction",
                    comment=(
                        "The memory system finalizes the remaining buffered messages into a concrete "
                        "buffered document because the conversation is ending."
                    ),
                    reuse_op=True,
                )
                self.rag_add_doc(doc, runtime_doc)
                with comment_mutation(
                    target=buffer_snapshot,
                    id_strategy=lambda _: "message-buffer",
                    encoding_fn=JSON_ENC,
                    decoding_fn=json.loads,
                    category="message_buffer",
                    mutation_comment=(
                        "After the remaining messages are flushed into a buffered document, the "
                        "memory system clears the message buffer."
                    ),
                    mutation_category="update",
                    reuse_op=True,
                ):
                    buffer_snapshot["message_buffer"] = list(after["message_buffer"])
                    buffer_snapshot["buffer_total_tokens"] = after["buffer_total_tokens"]

    # ---- long-context ----------------------------------------------------------------------
    def lc_message(self, m, text, before, after):
        cfg = self.cfg
        runtime_raw_input = self.raw_input(m, text)
        layer = self.lc_layer
        assert layer.doc_text == before
        scope = comment_mutation(
            target=layer,
            inputs=[runtime_raw_input],
            comment="A memory unit of the memory system.",
            category="memory_entry",
            id_strategy=lambda _: "memory-unit",
            encoding_fn=lambda _: layer.doc(),
            mutation_name="memory_system.memory_update",
            mutation_category="update",
            mutation_comment=(
                "Merge a new input message into the memory unit. If the resulting token count exceeds "
                "the max-token budget, the oldest messages are trimmed so that the memory stays within "
                "the budget."
            ),
            mutation_metadata={
                "context_window": cfg["window"],
                "message_separator": cfg["sep"],
                "llm_model_for_tokenizer": cfg["llm_model"],
            },
        )
        with scope:
            layer.doc_text = after
        new_id = scope.result.full_node_id
        edges = self.graph._driver.get_edges_by_node(new_id, direction="incoming")
        self.op_ids[("absorb", m.id)] = edges[0].op_id

    # ---- search -----------------------------------------------------------------------------
    def search(self, q, results, online):
        cfg, scn = self.cfg, self.scn
        ctx = current_context()
        comment_variable(
            q.text,
            variable_name="query",
            id_strategy=lambda _: q.qid,
            category="message & query",
            class_name="query",
            comment=QUERY_COMMENT,
            metadata=q.meta,
        )
        runtime_query = ctx.get_variable("query")
        k = cfg["top_k"]
        CLOCK.advance(20, 180)
        if scn.system == "mem0":
            with comment_op_scope(
                op_name="memory_system.search_vector_store",
                comment=f"A task query searches the memory store for top-{k} relevant memories.",
                category="retrieval",
                metadata={"embedding_model": cfg["embedding_model"], "top_k": k},
            ) as op:
                self.search_ops[q.qid] = op.op_id
                for memd, score in results:
                    comment_op(
                        inputs=[runtime_query],
                        outputs=[
                            (
                                memd,
                                {
                                    "id_strategy": "mem0-dict",
                                    "category": "memory_entry",
                                    "encoding_fn": JSON_ENC,
                                    "decoding_fn": json.loads,
                                    "comment": MEM_COMMENT,
                                },
                            )
                        ],
                        comment=(
                            f"One memory '{memd['id']}' is retrieved from the memory store. "
                            f"The threshold is set to 0.0. Its score is {score}."
                        ),
                        reuse_op=True,
                    )
        elif scn.system == "rag":
            with comment_op_scope(
                op_name="memory_system.retrieve",
                category="retrieval",
                comment=f"A task query searches the memory store for top-{k} relevant memories.",
                metadata={"top_k": k, "embedding_model": cfg["embedding_model"]},
            ) as op:
                self.search_ops[q.qid] = op.op_id
                for memd, score in results:
                    comment_op(
                        inputs=[runtime_query],
                        outputs=[
                            (
                                memd,
                                {
                                    "id_strategy": "naive-rag-dict",
                                    "category": "memory_entry",
                                    "encoding_fn": JSON_ENC,
                                    "decoding_fn": json.loads,
                                },
                            )
                        ],
                        comment=f"One memory '{memd['id']}' is retrieved from the memory store. Its score is {score}.",
                        reuse_op=True,
                    )
        else:
            op = comment_op(
                inputs=[runtime_query],
                outputs=[
                    (
                        results,
                        {
                            "id_strategy": lambda _: "memory-unit",
                            "encoding_fn": lambda s: s,
                            "category": "memory_entry",
                        },
                    )
                ],
                op_name="memory_system.retrieve",
                category="retrieval",
                comment=f"A task query searches the memory store for top-{k} relevant memories.",
                metadata={"top_k": k},
            )
            self.search_ops[q.qid] = op.op_id
        ctx.remove_variable("query")

    # ---- question answering and judging -------------------------------------------------------
    def qa_op(self, q, context, trace_ids, pred, runtime_qa_template, builder_src):
        with comment_op_scope(
            op_name="question-answering",
            category="evaluation",
            comment=(
                "The question-answering model generates an answer based on the question, the "
                "context retrieved from the memory system, and a question-answering prompt."
            ),
        ) as op:
            self.qa_ops[q.qid] = op.op_id
            inputs = [
                ({"id": t}, {"id_strategy": lambda v: v["id"], "identity_only": True}) for t in trace_ids
            ]
            context_var = (
                context,
                {
                    "class_name": "context",
                    "category": "memory_context",
                    "comment": "The formatted memory context.",
                },
            )
            comment_op(
                inputs=inputs,
                outputs=[context_var],
                metadata={"source_code": builder_src},
                comment=(
                    "The formatted context is constructed from the retrieved memories. Depending on the "
                    "memory system implementation, the resulting context may include only selected "
                    "portions of those memories rather than the full content of every retrieved memory."
                ),
                reuse_op=True,
            )
            comment_op(
                inputs=[
                    (q.text, {"class_name": "query", "id_strategy": lambda _: q.qid}),
                    context_var,
                    runtime_qa_template,
                ],
                outputs=[
                    (
                        pred,
                        {
                            "class_name": "prediction",
                            "category": "llm_response",
                            "comment": "The model's response to the question.",
                        },
                    )
                ],
                comment=(
                    "The question-answering model generates an answer based on the question, the context "
                    "retrieved from the memory system, and a question-answering prompt."
                ),
                reuse_op=True,
            )
        fn = IdentityRegistry.resolve(pred)
        self.pred_nodes[q.qid] = self.graph._driver.get_latest_node(f"prediction:{fn(pred)}").full_node_id

    def judge_op(self, q, pred, runtime_judge_template):
        correct = is_correct(q, pred)
        content = judge_response(self.flavor_judge, q, pred, correct, self.cfg.get("judge_verbose", False))
        score = 1.0 if correct else 0.0
        golden = [q.gold_text]
        with comment_op_scope(
            op_name="llm-judge",
            category="evaluation",
            comment=(
                "The judge model judges whether the model's prediction is correct or not based "
                "on a list of golden answers."
            ),
        ) as op:
            self.judge_ops[q.qid] = op.op_id
            judge_var = (
                content,
                {
                    "class_name": "judge_response",
                    "category": "llm_response",
                    "comment": "The judge model's judgment.",
                },
            )
            comment_op(
                inputs=[
                    (q.text, {"class_name": "query", "id_strategy": lambda _: q.qid}),
                    (
                        golden,
                        {
                            "class_name": "golden_answers",
                            "encoding_fn": lambda v: ", ".join(v),
                            "category": "golden_answers",
                            "comment": "The golden answers for the question.",
                        },
                    ),
                    runtime_judge_template,
                    (
                        pred,
                        {
                            "class_name": "prediction",
                            "category": "llm_response",
                            "comment": "The model's response to the question.",
                        },
                    ),
                ],
                outputs=[judge_var],
                comment="The judge model gives its judgment based on the question, the golden answers, and the instruction.",
                reuse_op=True,
            )
            comment_link(
                source=judge_var,
                target=(score, {"class_name": "judge_score", "comment": "The judgement score."}),
                comment="Use a function to convert the judge model's response to a float score.",
                edge_metadata={"source_code": PARSE_SRC[self.flavor_judge]},
            )
        fn = IdentityRegistry.resolve(golden)
        self.gold_nodes[q.qid] = self.graph._driver.get_latest_node(
            f"golden_answers:{fn(golden)}"
        ).full_node_id
        self.judge_scores[q.qid] = score

    # ---- online evaluation (task messages inside the construction stage) -----------------------
    def online_search(self, q, results):
        cfg = self.cfg
        with comment_session(
            category="memory_search",
            comment="Based on the provided question, we search the memory for it.",
            metadata={"top_k": cfg["top_k"], "retrieval_kwargs": {}},
        ):
            self.search(q, results, online=True)

    def online_answer(self, q, context, trace_ids, pred):
        cfg = self.cfg
        with comment_session(
            category="memory_evaluation",
            comment=(
                "Evaluate the memory layer by checking whether the question-answering model can generate "
                "the correct answer based on the retrieved memories."
            ),
            metadata={
                "qa_model": cfg["qa_model"],
                "judge_model": cfg["judge_model"],
                "qa_batch_size": 1,
                "judge_batch_size": 1,
                "generation_kwargs": {"temperature": 0.0},
            },
        ):
            runtime_qa_template = comment_variable(
                QA_PROMPTS[cfg["qa_prompt"]],
                to_runtime=True,
                id_strategy=lambda _: cfg["qa_prompt_name"],
                comment=(
                    "The prompt template for the question-answering model. It is a `string.Template` object "
                    "with `$question` and `$context` placeholders."
                ),
                category="prompt",
                metadata={"op_type": "question-answering"},
            )
            CLOCK.advance(700, 3000)
            self.qa_op(
                q,
                context,
                trace_ids,
                pred,
                runtime_qa_template,
                CTX_BUILDER_SRC[cfg.get("ctx_builder", "idx")],
            )
            runtime_judge_template = comment_variable(
                JUDGE_PROMPTS[self.flavor_judge],
                to_runtime=True,
                id_strategy=lambda v: judge_template_name(self.scn, q),
                comment=(
                    "The prompt template for the judge model. It is a `string.Template` object with `$question`, "
                    "`$prediction`, and `$golden_answers` placeholders."
                ),
                category="prompt",
                class_name="judge_prompt",
                metadata={"op_type": "llm-judge"},
            )
            CLOCK.advance(600, 2500)
            self.judge_op(q, pred, runtime_judge_template)


# --------------------------------------------------------------------------------------------
# The plan: 22 graphs. A case is "archetype:outcome"; outcomes name the planted fault(s):
#   ok | annot | E:<kind> | U:<kind> | D | R | P | E+R | E+P | X+R | X+P | U+P | R+P | decoyX
# (X = an extraction-stage fault on a first mention that is later restated: not decisive.)
# --------------------------------------------------------------------------------------------

_MEM0 = dict(
    llm_model="gpt-4o-mini",
    embedding_model="text-embedding-3-small",
    qa_model="gpt-4.1-mini",
    judge_model="gpt-4.1-mini",
    qa_prompt="a",
    qa_prompt_name="question-answering-prompt",
    save_root="outputs/mem0",
)
_RAG = dict(
    llm_model="gpt-4o-mini",
    embedding_model="all-MiniLM-L6-v2",
    qa_model="gpt-4.1-mini",
    judge_model="gpt-4.1-mini",
    qa_prompt="b",
    qa_prompt_name="question-answering-prompt",
    sep="\n",
    save_root="outputs/naive_rag",
)
_LC = dict(
    llm_model="gpt-4o-mini",
    qa_model="gpt-4.1-mini",
    judge_model="gpt-4.1-mini",
    qa_prompt="a",
    qa_prompt_name="question-answering-prompt",
    sep="\n",
    top_k=10,
    save_root="outputs/long_context",
)


def _spec(name, system, flavor, seed, conv_no, cases, base, **kw):
    if system == "mem0":
        kw.setdefault("len", (8, 12))
    cfg = dict(base)
    cfg.update(kw.pop("cfg", {}))
    d = dict(name=name, system=system, flavor=flavor, seed=seed, conv_no=conv_no, cases=cases, cfg=cfg)
    d.update(kw)
    return d


GRAPHS = [
    # ------------------------------------------------------------------ Mem0
    _spec(
        "mem0_locomo_14",
        "mem0",
        "locomo",
        101,
        14,
        [
            "employer:E:drop",
            "pet:ok",
            "moved:U:stale",
            "countries:R",
            "adopted:P",
            "instrument:D",
            "hometown:ok",
            "races:ok",
            "dish:ok",
        ],
        _MEM0,
        decoys=["bgE"],
        cfg=dict(top_k=8, extract_style="fenced", decision_style="fenced"),
    ),
    _spec(
        "mem0_locomo_27",
        "mem0",
        "locomo",
        102,
        27,
        [
            "sibling_city:U:overwrite",
            "allergy:E:distort",
            "hobbies:E+R",
            "course_start:ok",
            "visited:P",
            "dish:annot",
            "car:ok",
            "language:D",
            "books:ok",
        ],
        _MEM0,
        cfg=dict(top_k=6, extract_prompt="b", llm_model="gpt-4.1-mini", judge_verbose=True),
    ),
    _spec(
        "mem0_chat_05",
        "mem0",
        "chat",
        103,
        5,
        [
            "org:R",
            "jobtitle:U:wrongval",
            "kids:ok",
            "books:P",
            "trip_back:E:distort",
            "never_swum:ok",
            "employer:X+R",
            "pet:D",
            "garden:ok",
        ],
        _MEM0,
        decoys=["bgU"],
        sessions=5,
        cfg=dict(
            top_k=10,
            extract_style="preamble",
            link_order="prompt_first",
            update_prompt="b",
            qa_prompt="c",
            qa_prompt_name="chat-qa-prompt",
        ),
    ),
    _spec(
        "mem0_longmemeval_03",
        "mem0",
        "lme",
        104,
        3,
        ["hobbies:E:drop"],
        _MEM0,
        sessions=5,
        bg=(3, 1),
        cfg=dict(top_k=5, extract_style="fenced", qa_prompt="c"),
    ),
    _spec(
        "mem0_online_01",
        "mem0",
        "online",
        105,
        1,
        [
            "dish:R",
            "adopted:E:distort",
            "allergy:D",
            "moved:ok",
            "races:P",
            "language:annot",
            "garden:ok",
            "employer:ok",
        ],
        _MEM0,
        sessions=5,
        cfg=dict(top_k=6, ctx_builder="idx", qa_prompt="b", qa_prompt_name="online-question-answering"),
    ),
    _spec(
        "mem0_locomo_33",
        "mem0",
        "locomo",
        106,
        33,
        [
            "hometown:U:overwrite",
            "car:D",
            "garden:R",
            "instrument:U+P",
            "kids:P",
            "visited:ok",
            "trip_back:ok",
            "org:annot",
            "language:decoyX",
        ],
        _MEM0,
        images=True,
        cfg=dict(top_k=8, extract_style="fenced", decision_style="fenced", judge_verbose=True),
    ),
    _spec(
        "mem0_diary_08",
        "mem0",
        "diary",
        107,
        8,
        [
            "pet:E:drop",
            "jobtitle:ok",
            "countries:P",
            "course_start:R",
            "never_swum:ok",
            "allergy:ok",
            "car:U:overwrite",
            "org:ok",
        ],
        _MEM0,
        decoys=["bgE"],
        cfg=dict(
            top_k=5,
            raw_input_style="string",
            ctx_builder="bracket",
            extract_prompt="b",
            qa_prompt_name="diary-qa",
        ),
    ),
    _spec(
        "mem0_locomo_41",
        "mem0",
        "locomo",
        108,
        41,
        [
            "employer:U:overwrite",
            "books:R",
            "hobbies:ok",
            "adopted:ok",
            "moved:ok",
            "sibling_city:D",
            "visited:E:drop",
            "races:annot",
            "language:ok",
        ],
        _MEM0,
        decoys=["bgU"],
        sessions=5,
        cfg=dict(top_k=10, update_prompt="b"),
    ),
    # ------------------------------------------------------------------ NaiveRAG
    _spec(
        "rag_locomo_09",
        "rag",
        "locomo",
        201,
        9,
        [
            "employer:E:trunc",
            "countries:R",
            "adopted:P",
            "pet:ok",
            "hometown:ok",
            "kids:ok",
            "car:ok",
            "never_swum:ok",
        ],
        _RAG,
        decoys=["fillT"],
        cfg=dict(deferred=True, max_tokens=180, overlap=1, top_k=3),
    ),
    _spec(
        "rag_locomo_22",
        "rag",
        "locomo",
        202,
        22,
        [
            "allergy:R",
            "moved:R",
            "races:P",
            "instrument:E:trunc",
            "visited:ok",
            "dish:annot",
            "org:ok",
            "pet:ok",
        ],
        _RAG,
        cfg=dict(deferred=False, max_tokens=400, overlap=2, top_k=4, judge_verbose=True),
    ),
    _spec(
        "rag_longmemeval_11",
        "rag",
        "lme",
        203,
        11,
        ["course_start:R"],
        _RAG,
        sessions=5,
        bg=(3, 1),
        cfg=dict(deferred=True, max_tokens=256, overlap=0, top_k=2),
    ),
    _spec(
        "rag_online_02",
        "rag",
        "online",
        204,
        2,
        ["hobbies:E:trunc", "trip_back:P", "org:R", "employer:ok", "car:ok", "garden:annot", "visited:ok"],
        _RAG,
        sessions=5,
        cfg=dict(
            deferred=False,
            max_tokens=300,
            overlap=1,
            top_k=4,
            ctx_builder="idx",
            qa_prompt_name="online-question-answering",
        ),
    ),
    _spec(
        "rag_diary_12",
        "rag",
        "diary",
        205,
        12,
        ["jobtitle:R", "pet:E:docdrop", "books:ok", "never_swum:P", "language:X+R", "allergy:ok", "dish:ok"],
        _RAG,
        counts=[2],
        cfg=dict(
            deferred=True,
            max_tokens=240,
            overlap=0,
            top_k=3,
            sep="\n\n",
            qa_prompt="c",
            qa_prompt_name="diary-qa",
        ),
    ),
    _spec(
        "rag_locomo_36",
        "rag",
        "locomo",
        206,
        36,
        [
            "sibling_city:P",
            "kids:E+R",
            "visited:E:trunc",
            "dish:annot",
            "course_start:ok",
            "races:ok",
            "hometown:decoyX",
        ],
        _RAG,
        images=True,
        cfg=dict(deferred=True, max_tokens=120, overlap=1, top_k=5),
    ),
    _spec(
        "rag_chat_17",
        "rag",
        "chat",
        207,
        17,
        [
            "hometown:R",
            "adopted:E:trunc",
            "countries:R+P",
            "instrument:P",
            "employer:ok",
            "moved:ok",
            "org:ok",
        ],
        _RAG,
        decoys=["fillT"],
        sessions=5,
        cfg=dict(
            deferred=True, max_tokens=200, overlap=2, top_k=3, qa_prompt="a", qa_prompt_name="chat-qa-prompt"
        ),
    ),
    # ------------------------------------------------------------------ long-context
    _spec(
        "lc_locomo_06",
        "long_context",
        "locomo",
        301,
        6,
        [
            "employer:E:trunc",
            "moved:ok",
            "countries:U:overtrim",
            "adopted:P",
            "pet:ok",
            "hobbies:ok",
            "allergy:ok",
        ],
        _LC,
        decoys=["trimF"],
        len=(8, 11),
    ),
    _spec(
        "lc_locomo_30",
        "long_context",
        "locomo",
        302,
        30,
        [
            "instrument:U:overtrim",
            "allergy:E:drop",
            "races:P",
            "visited:ok",
            "kids:E+P",
            "dish:annot",
            "car:ok",
        ],
        _LC,
        len=(8, 11),
        cfg=dict(sep="\n\n", judge_verbose=True),
    ),
    _spec(
        "lc_longmemeval_19",
        "long_context",
        "lme",
        303,
        19,
        ["countries:E:trunc"],
        _LC,
        sessions=5,
        bg=(3, 1),
        len=(8, 11),
        cfg=dict(qa_prompt="c"),
    ),
    _spec(
        "lc_online_04",
        "long_context",
        "online",
        304,
        4,
        [
            "hometown:U:overtrim",
            "trip_back:E:trunc",
            "garden:P",
            "org:ok",
            "car:ok",
            "language:annot",
            "races:ok",
        ],
        _LC,
        sessions=5,
        len=(8, 11),
        cfg=dict(ctx_builder="idx", qa_prompt="b", qa_prompt_name="online-question-answering"),
    ),
    _spec(
        "lc_diary_21",
        "long_context",
        "diary",
        305,
        21,
        [
            "course_start:E:trunc",
            "pet:U:overtrim",
            "books:P",
            "never_swum:ok",
            "employer:X+P",
            "allergy:ok",
            "visited:ok",
        ],
        _LC,
        len=(8, 11),
        counts=[2, 3],
        cfg=dict(ctx_builder="bracket", qa_prompt_name="diary-qa"),
    ),
    _spec(
        "lc_locomo_44",
        "long_context",
        "locomo",
        306,
        44,
        [
            "sibling_city:P",
            "hobbies:U+P",
            "visited:E:drop",
            "moved:ok",
            "dish:ok",
            "adopted:E:trunc",
            "races:annot",
        ],
        _LC,
        decoys=["bgE"],
        len=(8, 11),
        images=True,
        cfg=dict(sep="\n\n"),
    ),
    _spec(
        "lc_chat_25",
        "long_context",
        "chat",
        307,
        25,
        [
            "kids:U:overtrim",
            "employer:E:trunc",
            "countries:P",
            "instrument:ok",
            "allergy:ok",
            "hometown:ok",
            "adopted:ok",
        ],
        _LC,
        decoys=["trimF"],
        len=(8, 11),
        cfg=dict(qa_prompt="c", qa_prompt_name="chat-qa-prompt"),
    ),
]

LABEL_FAULT_INDEX = {"X+R": 1, "X+P": 1}


# --------------------------------------------------------------------------------------------
# Building, labelling, recording and writing one graph
# --------------------------------------------------------------------------------------------


def wrapped(m):
    return f"Speaker {m.speaker} (role: {m.role}) says: {m.content}\nTimestamp: {m.ts}"


def build_scenario(spec):
    b = Builder(spec)
    b.add_background(*spec.get("bg", (2, 1)))
    for cs in spec["cases"]:
        arch, outcome = cs.split(":", 1)
        b.add_case(arch, outcome)
    scn = b.finalize()
    if scn.system == "long_context":
        first_fact = min(m.index for m in scn.messages if m.facts)
        need = sum(ntok(wrapped(m)) for m in scn.messages if m.index >= first_fact)
        scn.cfg["window"] = int(math.ceil((need + b.rng.randint(0, 25)) / 10.0) * 10)
    return scn


def check_intentions(scn, results):
    """The computed labels must be the ones the plan meant to plant."""
    case_q = {}
    for case in scn.cases:
        q = case.question
        case_q[q.qid] = case
        typ, f = results[q.qid]
        assert typ == case.intended, (
            f"{scn.name}/{q.qid} ({case.arch}:{case.outcome}): got {typ}, meant {case.intended}"
        )
        if typ not in (None, "AnnotationError"):
            want = case.aux["faults"][LABEL_FAULT_INDEX.get(case.outcome, 0)]
            assert f is want, f"{scn.name}/{q.qid}: labelled with another fault than planned"
    for q in scn.questions:
        if q.qid not in case_q:
            assert results[q.qid][0] is None, f"{scn.name}/{q.qid}: an unplanned failure ({results[q.qid]})"


def needed_strings(scn, q):
    """Strings that a memory (Mem0) or a stored message (RAG / long-context) carrying q's answer holds."""
    out = []
    for slot, _ in q.needs:
        for m in scn.messages:
            for fa in m.facts:
                if fa.slot == slot and fa.value == q.truth[slot]:
                    out.append(fa.check if scn.system == "mem0" else fa.anchor)
    return sorted(set(out))


def make_graph(spec):
    scn = build_scenario(spec)
    lab = Labeler(scn)
    lab.resolve_docdrops()
    results, touched, full, pos = lab.label()
    check_intentions(scn, results)
    sim = SIMS[scn.system](scn, {f.key: f for f in scn.faults}, log=True)
    preds = sim.run()
    assert preds == full
    rec = Recorder(scn, sim.log)
    graph = rec.record()
    data = graph.export_graph()

    # op id of each fault
    def op_of(key):
        if key[0] == "search":
            return rec.search_ops[key[1]]
        if key[0] == "answer":
            return rec.qa_ops[key[1]]
        return rec.op_ids[key]

    ops_by_id = {o["op_id"]: o for o in data["data"]["operations"]}
    annotations = []
    cases_out = []
    for q in scn.questions:
        typ, f = results[q.qid]
        score = rec.judge_scores[q.qid]
        assert (score == 0.0) == (typ is not None), f"{scn.name}/{q.qid}: judge score and label disagree"
        case = q.case if q.case and q.case.question is q else None
        entry = {
            "query_id": q.qid,
            "question": q.text,
            "kind": q.kind,
            "gold": q.gold_text,
            "prediction": preds[q.qid],
            "outcome": case.outcome if case else "ok (look-alike)",
            "label": typ,
            "needed": needed_strings(scn, q),
            "evidence": [m.id for m in q.evidence],
        }
        if typ is None:
            cases_out.append(entry)
            continue
        op_id = rec.judge_ops[q.qid] if typ == "AnnotationError" else op_of(f.key)
        ann = {
            "query_id": q.qid,
            "query": q.text,
            "golden_answers": [q.gold_text]
            if scn.cfg.get("gold_as_list", scn.flavor in ("locomo", "chat", "online"))
            else q.gold_text,
            "golden_answers_id": rec.gold_nodes[q.qid],
            "prediction": preds[q.qid],
            "prediction_id": rec.pred_nodes[q.qid],
            "source_evidence_ids": [f"{m.id}@1" for m in q.evidence],
            "final_error_type": typ,
            "final_op_id": op_id,
        }
        annotations.append(ann)
        entry.update(final_op_id=op_id, final_op_name=ops_by_id[op_id]["op_name"])
        if f is not None:
            entry["fault_key"] = list(f.key)
            entry["fault_kind"] = f.kind
            if f.key[0] in ("buffer", "absorb", "extract", "update"):
                tgt = f.params.get("target") or f.key[1]
                tm = next(m for m in scn.messages if m.id == tgt)
                entry["fault_message"] = tm.id
                entry["fault_message_text"] = wrapped(tm)
        cases_out.append(entry)
    faults_out = []
    for f in sorted(scn.faults, key=lambda f: pos[f.key]):
        decisive = sorted(qid for qid, (t, g) in results.items() if g is f)
        faults_out.append(
            {
                "op_id": op_of(f.key),
                "op_name": ops_by_id[op_of(f.key)]["op_name"],
                "key": list(f.key),
                "kind": f.kind,
                "planted_for": f.role,
                "what": f.desc,
                "error_type_if_decisive": error_type(scn.system, f),
                "decisive_for": decisive,
                "touches": touched[f.key],
                "params": {k: (v if not isinstance(v, Fact) else v.text) for k, v in f.params.items()},
            }
        )
    # post-process: repository-relative source paths, MemTraceBench fields, annotations
    here = os.path.abspath(__file__)
    rel = os.path.relpath(here, REPO)

    def fix(rec_):
        if rec_.get("filename") == here:
            rec_["filename"] = rel
        if isinstance(rec_.get("trigger_point"), str) and rec_["trigger_point"].startswith(here + ":"):
            rec_["trigger_point"] = rel + rec_["trigger_point"][len(here) :]

    for part in ("nodes", "edges", "operations", "sessions"):
        for r in data["data"][part]:
            fix(r)
    data["metadata"]["memtracebench_graph_filename"] = f"{scn.name}.json"
    data["metadata"]["memtracebench_dataset_source"] = FLAVORS[scn.flavor]["dataset"]
    data["data"]["annotations"] = annotations
    manifest = {
        "graph": scn.name,
        "system": scn.system,
        "flavor": scn.flavor,
        "file": f"{scn.system}/{scn.name}.json",
        "config": {k: v for k, v in scn.cfg.items() if k != "save_root"},
        "n_messages": len(scn.messages),
        "n_questions": len(scn.questions),
        "faults": faults_out,
        "cases": cases_out,
    }
    return data, manifest


# --------------------------------------------------------------------------------------------
# Checking the written set (also run after generation)
# --------------------------------------------------------------------------------------------


def check_set(set_dir=SET_DIR):
    with open(os.path.join(set_dir, "manifest.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    problems = []
    n_ann = 0
    for g in manifest["graphs"]:
        path = os.path.join(set_dir, g["file"])
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        name = g["graph"]
        nodes = {n["full_node_id"]: n for n in data["data"]["nodes"]}
        ops = {o["op_id"]: o for o in data["data"]["operations"]}
        edges_by_op = {}
        for e in data["data"]["edges"]:
            edges_by_op.setdefault(e["op_id"], []).append(e)
            for end in ("source_full_node_id", "target_full_node_id"):
                if e[end] not in nodes:
                    problems.append(f"{name}: edge {e['edge_id']} points at a missing node {e[end]}")
            if e["op_id"] not in ops:
                problems.append(f"{name}: edge {e['edge_id']} has an unknown op")

        def io(op_id):
            es = edges_by_op.get(op_id, [])
            srcs = {e["source_full_node_id"] for e in es}
            tgts = {e["target_full_node_id"] for e in es}
            return srcs - tgts, tgts

        # failed questions according to the judge steps
        failed = set()
        for op in ops.values():
            if op["op_name"] == "llm-judge" and op["category"] == "evaluation":
                ins, outs = io(op["op_id"])
                score = [
                    nodes[t]["value"]
                    for e in edges_by_op[op["op_id"]]
                    for t in [e["target_full_node_id"]]
                    if nodes[t]["class_name"] == "judge_score"
                ]
                qn = [i for i in ins if nodes[i]["class_name"] == "query"]
                if len(score) != 1 or len(qn) != 1:
                    problems.append(f"{name}: judge op {op['op_id']} is malformed")
                    continue
                if score[0] == "0.0":
                    failed.add(nodes[qn[0]]["name"])
        anns = data["data"].get("annotations", [])
        n_ann += len(anns)
        if {a["query_id"] for a in anns} != failed:
            problems.append(f"{name}: annotated questions differ from those judged 0.0")
        cases = {c["query_id"]: c for c in g["cases"]}
        for a in anns:
            qid = a["query_id"]
            c = cases[qid]
            for k in (
                "query_id",
                "query",
                "golden_answers",
                "golden_answers_id",
                "prediction",
                "prediction_id",
                "source_evidence_ids",
                "final_error_type",
                "final_op_id",
            ):
                if k not in a:
                    problems.append(f"{name}/{qid}: annotation lacks {k}")
            op = ops.get(a["final_op_id"])
            if op is None:
                problems.append(f"{name}/{qid}: final_op_id is not an operation of the graph")
                continue
            for ev in a["source_evidence_ids"]:
                if ev not in nodes or nodes[ev]["category"] != "message":
                    problems.append(f"{name}/{qid}: evidence {ev} is not a message node")
            for k in ("prediction_id", "golden_answers_id"):
                if a[k] not in nodes:
                    problems.append(f"{name}/{qid}: {k} missing from graph")
            if nodes.get(a["prediction_id"], {}).get("value") != repr(a["prediction"]):
                problems.append(f"{name}/{qid}: prediction node value differs")
            qnode = f"query:{qid}@1"
            if qnode not in nodes or nodes[qnode]["category"] != "message & query":
                problems.append(f"{name}/{qid}: no query node")
            problems.extend(
                f"{name}/{qid}: {p}" for p in causal_problems(g, c, a, op, nodes, io, edges_by_op)
            )
    return problems, n_ann


def texts_of(value):
    """String leaves of a stored value (JSON objects, repr() strings or plain text)."""
    v = value
    try:
        if v[:1] in ("'", '"'):
            v = ast.literal_eval(v)
        elif v[:1] in ("{", "["):
            v = json.loads(v)
    except (ValueError, SyntaxError):
        return [value]
    out = []

    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
        elif isinstance(x, list):
            for y in x:
                walk(y)

    walk(v)
    return out


def causal_problems(g, c, a, op, nodes, io, edges_by_op):
    """The planted fault's effect must be visible at the labelled operation."""
    out = []
    typ = a["final_error_type"]
    name = op["op_name"]
    ins, outs = io(op["op_id"])
    qnode = f"query:{a['query_id']}@1"
    needed = c["needed"]
    system = g["system"]
    vals = lambda ids: [nodes[i]["value"] for i in ids]
    if typ == "AnnotationError":
        if name != "llm-judge" or qnode not in ins:
            out.append("annotation label does not point at the question's judge step")
        return out
    if typ == "ResponseError":
        if name != "question-answering" or a["prediction_id"] not in outs:
            out.append("response label does not point at the question's answering step")
        ctx = [nodes[i]["value"] for i in outs if nodes[i]["class_name"] == "context"]
        if not ctx or not all(s in ctx[0] for s in needed):
            out.append("the answering step's context does not hold every needed item")
        return out
    if typ == "RetrievalError":
        if name not in ("memory_system.search_vector_store", "memory_system.retrieve") or qnode not in ins:
            out.append("retrieval label does not point at the question's search step")
        got = " ".join(vals(outs))
        if all(s in got for s in needed):
            out.append("the search step returned every needed item")
        t_op = op["created_at"]
        stored = [
            n
            for n in nodes.values()
            if n["category"] == "memory_entry"
            and n["created_at"] <= t_op
            and any(s in n["value"] for s in needed)
        ]
        if not stored:
            out.append("no stored memory held the missed item")
        return out
    msg = c.get("fault_message")
    mtext = c.get("fault_message_text", "")
    if system == "mem0" and typ == "ExtractionError":
        if name != "memory_system.extract_facts" or f"{msg}@1" not in ins:
            out.append("extraction label does not point at the evidence message's extraction")
        facts = [nodes[i]["value"] for i in outs if nodes[i]["class_name"] == "extracted_facts"]
        if not facts or any(s in facts[0] for s in needed):
            out.append("the extracted facts still carry the needed item")
        return out
    if system == "mem0" and typ in ("UpdateError", "DeletionError"):
        if name != "memory_system.update_memory_decision":
            out.append("update label does not point at an update decision")
        es = edges_by_op[op["op_id"]]
        if typ == "DeletionError":
            ok = any(
                nodes[e["target_full_node_id"]]["class_name"] == "delete_marker"
                and any(s in nodes[e["source_full_node_id"]]["value"] for s in needed)
                for e in es
            )
            if not ok:
                out.append("the update decision deletes no memory holding the needed item")
            return out
        lost = any(
            e["source_full_node_id"].startswith("memory-unit-")
            and e["target_full_node_id"].startswith("memory-unit-")
            and any(s in nodes[e["source_full_node_id"]]["value"] for s in needed)
            and not all(s in nodes[e["target_full_node_id"]]["value"] for s in needed)
            for e in es
        )
        facts_in = [nodes[i]["value"] for i in ins if nodes[i]["class_name"] == "extracted_facts"]
        ignored = (
            facts_in
            and any(s in facts_in[0] for s in needed)
            and not any(
                any(s in nodes[t]["value"] for s in needed) for t in outs if t.startswith("memory-unit-")
            )
        )
        if not (lost or ignored):
            out.append("the update decision neither overwrites nor ignores the needed item")
        return out
    if system == "rag" and typ == "ExtractionError":
        if name != "memory_system.message_buffer_update":
            out.append("extraction label does not point at a buffer update")
        if any(mtext in t for i in outs for t in texts_of(nodes[i]["value"])):
            out.append("the buffer update still passes the message on in full")
        if not any(mtext in t for i in ins for t in texts_of(nodes[i]["value"])):
            out.append("the buffer update did not receive the message in full")
        return out
    if system == "long_context":
        if name != "memory_system.memory_update":
            out.append("label does not point at a memory-unit update")
        produced = [v for i, v in zip(outs, vals(outs)) if i.startswith("memory-unit@")]
        consumed = [v for i, v in zip(ins, vals(ins)) if i.startswith("memory-unit@")]
        if not produced or mtext in produced[0]:
            out.append("the updated memory unit still holds the message in full")
        if typ == "UpdateError" and (not consumed or mtext not in consumed[0]):
            out.append("the memory unit did not hold the message before the update")
        if typ == "ExtractionError" and f"{msg}@1" not in ins:
            out.append("the update did not take in the evidence message")
        return out
    out.append(f"no check for {system}/{typ}")
    return out


# --------------------------------------------------------------------------------------------
# README
# --------------------------------------------------------------------------------------------

TYPES = ["ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"]
SYSTEM_TYPES = {
    "mem0": TYPES,
    "rag": ["ExtractionError", "RetrievalError", "ResponseError"],
    "long_context": ["ExtractionError", "UpdateError", "ResponseError"],
}


def counts_table(manifest):
    rows = []
    tot = {k: 0 for k in TYPES + ["AnnotationError", "mem", "correct", "graphs", "two", "decoys", "faults"]}
    for system in ("mem0", "rag", "long_context"):
        gs = [g for g in manifest["graphs"] if g["system"] == system]
        c = {k: 0 for k in tot}
        c["graphs"] = len(gs)
        for g in gs:
            for case in g["cases"]:
                if case["label"] is None:
                    c["correct"] += 1
                elif case["label"] == "AnnotationError":
                    c["AnnotationError"] += 1
                else:
                    c[case["label"]] += 1
                    c["mem"] += 1
            for f in g["faults"]:
                c["faults"] += 1
                if not f["decisive_for"]:
                    c["decoys"] += 1
            c["two"] += sum(1 for case in g["cases"] if "+" in case["outcome"])
        for k in tot:
            tot[k] += c[k]
        cells = [system, str(c["graphs"])]
        for t in TYPES:
            cells.append(str(c[t]) if t in SYSTEM_TYPES[system] else "–")
        cells += [str(c["AnnotationError"]), str(c["mem"]), str(c["correct"])]
        rows.append(cells)
    rows.append(
        ["**total**", str(tot["graphs"])]
        + [str(tot[t]) for t in TYPES]
        + [str(tot["AnnotationError"]), str(tot["mem"]), str(tot["correct"])]
    )
    head = (
        "| system | graphs | ExtractionError | UpdateError | DeletionError | RetrievalError | ResponseError "
        "| AnnotationError | memory failures | answered correctly |\n|" + "---|" * 10 + "\n"
    )
    return head + "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n", tot


README_TEMPLATE = """# heldout_blind2 — a second blind held-out set of memory-failure graphs

**Do not tune on this set.** It exists to score an attribution method that was written without looking
at it. While developing or tuning a method, do not open `generate.py`, `corpus.py`, `set/manifest.json`,
or the `data.annotations` of the graphs. Run the method on the graphs, then score it against the
annotations — once.

## What it is

{n_graphs} execution graphs recorded with the real `smartcomment` 0.1.2 package, in the MemTraceBench
layout: one exported graph per file, `set/<system>/<conversation>.json`
(`graph_id, user_id, project_id, storage_path, strict, driver_type, created_at, metadata, data: {{nodes, edges, operations, sessions}}`),
graph `metadata` carrying `memtracebench_graph_filename` and `memtracebench_dataset_source`, and one
annotation per failed question in `data.annotations`
(`query_id, query, golden_answers, golden_answers_id, prediction, prediction_id, source_evidence_ids, final_error_type, final_op_id`).

{table}
(– = the system has no such step: NaiveRAG neither updates nor deletes stored documents, the
long-context memory has no retrieval choice and no deletion.)

- {n_mem} planted memory failures and {n_annot} `AnnotationError` cases (the gold answer is not what the
  conversation says; the pipeline answered from the conversation). Their `final_op_id` points at that
  question's `llm-judge` operation: score the error type only for those.
- {n_correct} questions answered correctly are left in the graphs (judge score 1.0, no annotation).
- {n_faults} planted faults in all: {n_decoy} of them decide no answer (non-decisive second faults, decoy
  faults on facts nobody asks about, faults on a first mention that is restated later, a window that
  trims a little too early); {n_two} failed questions carry two planted faults on their path, of which
  only one (the earliest decisive one) is the label.
- Total size: {size_mb:.1f} MB.

## How it was built

`generate.py` (with the invented text in `corpus.py`) simulates, deterministically, the three
pipelines that MemBase traces and records them with MemBase's instrumentation:

- **mem0** — per message: a `message` node (id = the message id, JSON value, or a plain string in one
  graph), `memory_system.extract_facts` (prompt variable `fact-extraction-system-prompt`,
  `raw_fact_extraction_response` → `fact_extraction_response_with_code_block_removing`
  [→ `..._and_json_content_extraction` when the model wrapped the JSON in prose] → `extracted_facts`),
  then `memory_system.update_memory_decision` (`memory-update-decision-prompt`, `existing_memories`,
  `memory_update_task_instruction`, `raw_memory_update_decision`, `update_action`; ADD links to a new
  `memory-unit-<uuid>` entry, UPDATE is a mutation giving the entry a new version, DELETE is an edge
  from the entry to the shared `delete_marker` node). The ideal update step also makes legitimate
  UPDATEs (a person moves, is promoted) and DELETEs (a plan is cancelled). Search:
  `memory_system.search_vector_store`, edges from the `query` node straight to the returned entries,
  scores in the edge comments.
- **rag** (NaiveRAG) — per message `memory_system.message_buffer_update` (a mutation of
  `message-buffer`); when a document is emitted, a `temporary_variable` and `memory_system.add`
  storing a `memory-unit-<uuid>` entry; a finalization session flushes the rest (deferred mode).
  Search: `memory_system.retrieve`.
- **long_context** — one `memory-unit`, one `memory_system.memory_update` mutation per message that
  trims the oldest messages to the window in the same operation; `memory_system.retrieve` returns the
  whole unit.
- Stages as in MemBase's runners: construction (one session per conversation session plus a
  finalization session, strict graph), export and re-import for the search stage (`query` nodes,
  category `message & query`, `metadata.evidence`), export and re-import again for the evaluation
  stage (`question-answering` with `context` and `prediction`, then `llm-judge` grouped by judge
  template with `golden_answers`, `judge_response`, `judge_score`). In the online graphs (one per
  system) questions are task messages inside the conversation: each gets its own `memory_search` and
  `memory_evaluation` session in the construction graph and is then added to memory, as MemBase's
  online evaluation does. Identity is by content, so equal predictions, judge responses, empty fact
  lists and so on share one node.
- Every model step (extraction, update decision, answering, judging) is ideal unless a planted fault
  applies to that operation. The fault is applied inside the same recording code path, so a faulty
  operation looks like any other except for its content. Ids come from a seeded UUID stream and
  timestamps from a simulated clock (0–2 ms per record, model latencies, the runner's 0.2 s pause per
  message, minutes between stages), so regeneration is byte-identical and timestamps collide at
  millisecond resolution as in fast real runs. The `filename` / `lineno` of records point at
  `generate.py` (the recorder), identically for faulty and ideal operations.

### Conventions varied across graphs

{conventions}

### Conversations

All people, places, organisations, books and races are invented for this set (`corpus.py`). Each graph
has 4–5 sessions (38–75 messages) of small talk or user/assistant exchanges around 6–23 fact-bearing
messages:
single facts, values that change over time (a move, a promotion), two-item lists, counts over
sessions, relative dates ("last Tuesday", "two days ago") that must be resolved against the session
date, yes/no facts, look-alike facts about the other speaker or a friend, background facts nobody
asks about, and plans that are later cancelled.

## Labelling rule

Labels are computed by replay, not typed. For a failed question, the label is the **earliest operation
whose repair makes the answer right, with every earlier operation as recorded and every later operation
ideal** — and whose fault, kept under the same conditions, still makes the answer wrong (the decisive
criterion of the MemTrace paper). The error type follows from that operation and its fault:

| operation | fault | type |
|---|---|---|
| `memory_system.extract_facts` | a fact dropped or distorted | ExtractionError |
| `memory_system.update_memory_decision` | a right memory overwritten with a look-alike or wrong value, or an update ignored | UpdateError |
| `memory_system.update_memory_decision` | a live, still-true memory deleted | DeletionError |
| `memory_system.message_buffer_update` | a message clipped when buffered, or left out of the emitted document | ExtractionError |
| `memory_system.memory_update` | the new message clipped or not taken in | ExtractionError |
| `memory_system.memory_update` | held messages trimmed beyond the window budget | UpdateError |
| search / retrieve | a live, relevant memory ranked out of the top-k | RetrievalError |
| `question-answering` | a context holding every needed item answered wrong | ResponseError |
| (none) | gold answer not supported by the conversation | AnnotationError (`final_op_id` = the judge step) |

List questions mostly fail partially (the context holds one item of two) and count questions by one.
`generate.py` asserts that every computed label is the one planned, that the ideal pipeline answers
every question right (except the annotation-error ones), and that no unplanned question fails.

## Checks

After writing, the generator re-reads `set/` and fails loudly unless, for every graph: all edges end
in existing nodes and operations; the annotated questions are exactly those whose `llm-judge` score is
0.0; every annotation has all nine fields, its `final_op_id` is an operation of the graph, its evidence
ids are message nodes and its prediction / gold ids exist; and the fault's effect is visible at the
labelled operation (extraction: the evidence message goes in and the needed fact does not come out;
update: a memory holding the needed item is overwritten, ignored or linked to the delete marker;
buffer / window: the message goes in whole and comes out clipped or missing; retrieval: a stored
memory holds the needed item and the search output does not; response: the context holds every
needed item; annotation: the judge step of that question).

`set/manifest.json` lists every planted fault (operation, kind, whether decisive and for which
questions, which questions it touches) and every question with its outcome. It is for scoring and
auditing only.

## Regenerate

```
/work/main/.venv/bin/python benchmarks/heldout_blind2/generate.py          # writes set/ and this README
/work/main/.venv/bin/python benchmarks/heldout_blind2/generate.py --check  # validates set/ only
```

Run from the repository root; a full run takes about 15 seconds and is byte-identical each time.
"""

CONVENTIONS = """- Dataset-reader conventions: LoCoMo-style two-speaker conversations (`U<n>:D<s>:<t>` ids,
  `speaker_tag` / `dia_id` metadata, ISO session timestamps, image metadata on some turns), a custom
  two-speaker reader (`chat<n>.<s>.<t>` ids, raw `"6:42 pm on 14 March, 2024"` timestamps), a
  LongMemEval-style user/assistant haystack with one question and `has_answer` metadata, a diary
  reader with a timestamp per message (`"Thu 14 Mar 2024 18:42"`), and online task messages.
- Mem0: top-k 5, 6, 8 and 10; plain, code-fenced and prose-wrapped extraction output; plain or fenced
  update decisions; two extraction and two update prompts; message node as JSON or as a plain string;
  the order of the prompt → response and message → response links.
- NaiveRAG: deferred and eager buffering; 120–400 token budgets; overlap of 0, 1 or 2 messages;
  top-k 2–5; `\\n` or blank-line separators.
- Long-context: window sized per conversation (the oldest small talk is trimmed legitimately);
  `\\n` or blank-line separators.
- Evaluation: three question-answering prompts and several prompt variable names; context builders
  `### Memory i:`, `---- idx i ----` and `[i]`; judge styles `{"label": ...}` (bare or with reasoning),
  `yes`/`no`, `RIGHT`/`WRONG - reason`, and a fenced JSON score; judge templates grouped per question
  type for the LongMemEval-style graphs; golden answers stored as a list or a string.
- Questions: single values, current values after a change, two-item lists, counts, dates from relative
  expressions, yes/no (including a negative fact), questions about the other speaker next to the
  failing one."""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="only validate set/")
    ap.add_argument("--only", help="build only graphs whose name contains this (no files written)")
    args = ap.parse_args()
    if args.check:
        problems, n = check_set()
        for p in problems:
            print("PROBLEM:", p)
        if problems:
            sys.exit(1)
        print(f"set/ is consistent: {n} annotations checked")
        return
    if args.only:
        for spec in GRAPHS:
            if args.only in spec["name"]:
                data, man = make_graph(spec)
                print(
                    spec["name"],
                    len(data["data"]["nodes"]),
                    "nodes",
                    len(data["data"]["annotations"]),
                    "annotations",
                )
                for c in man["cases"]:
                    print("  ", c["query_id"], c["outcome"], "->", c["label"], "|", c["prediction"])
        return
    import shutil

    if os.path.isdir(SET_DIR):
        shutil.rmtree(SET_DIR)
    manifest = {
        "note": "Planted faults and outcomes. For scoring and auditing only: do not read while developing a method.",
        "graphs": [],
    }
    total_bytes = 0
    for spec in GRAPHS:
        data, man = make_graph(spec)
        path = os.path.join(SET_DIR, man["file"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        total_bytes += len(text.encode("utf-8"))
        manifest["graphs"].append(man)
        print(
            f"{spec['name']:<24} {len(data['data']['nodes']):>5} nodes {len(data['data']['edges']):>5} edges "
            f"{len(data['data']['annotations']):>3} annotations {len(text) / 1e6:6.2f} MB"
        )
    with open(os.path.join(SET_DIR, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, ensure_ascii=False, indent=1)
    problems, n = check_set()
    for p in problems:
        print("PROBLEM:", p)
    if problems:
        sys.exit(1)
    table, tot = counts_table(manifest)
    readme = README_TEMPLATE.format(
        n_graphs=len(GRAPHS),
        table=table,
        n_mem=tot["mem"],
        n_annot=tot["AnnotationError"],
        n_correct=tot["correct"],
        n_faults=tot["faults"],
        n_decoy=tot["decoys"],
        n_two=tot["two"],
        size_mb=total_bytes / 1e6,
        conventions=CONVENTIONS,
    )
    with open(os.path.join(HERE, "README.md"), "w", encoding="utf-8") as fh:
        fh.write(readme)
    print(table)
    print(f"{n} annotations checked; {total_bytes / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
