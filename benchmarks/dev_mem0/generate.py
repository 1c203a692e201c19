"""Build a small labelled set of Mem0-style memory-failure execution graphs.

Run with the project venv:  .venv/bin/python benchmarks/dev_mem0/generate.py

A rule-based simulator plays MemBase's Mem0 pipeline (extract_facts ->
update_memory_decision per message, search_vector_store per question,
question-answering + llm-judge per question) over the invented conversations
in conversations.py.  Every model step is ideal unless a planted fault applies.
The faulty run is recorded with the real smartcomment package; construction,
search and evaluation stages are separated by export / re-import exactly as
MemBase's runners do.  Labels come from replaying the simulator.

Label rule (transition form of "earliest op whose repair makes the answer
right, earlier ops as recorded, later ops ideal"): for the faulty ops of a run,
in execution order, op p is the decisive one for a failed question when
  * ops before p as recorded, p and everything later ideal  -> answer right, and
  * ops up to p as recorded, everything later ideal          -> answer wrong.
The earliest such p is the label.  (Without the second condition any earlier
irrelevant fault would qualify, since "later ideal" repairs the real cause.)
"""

import hashlib
import json
import random
import re
import string
import sys
import uuid
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import smartcomment  # noqa: E402
import smartcomment.schema.base as sc_base  # noqa: E402
import smartcomment.schema.operation as sc_operation  # noqa: E402
import smartcomment.schema.session as sc_session  # noqa: E402
import smartcomment.runtime.network as sc_network  # noqa: E402
from smartcomment import (  # noqa: E402
    comment_graph,
    comment_session,
    comment_op_scope,
    comment_op,
    comment_variable,
    comment_link,
    comment_mutation,
)
from smartcomment.runtime.network import ExecNetwork  # noqa: E402

from conversations import CONVERSATIONS  # noqa: E402

SEED = 20240603
OUT_DIR = HERE / "set" / "mem0"
DATASET_SOURCE = "dev3-synthetic (invented LoCoMo-style conversations, simulated MemBase Mem0)"

# --------------------------------------------------------------------------- determinism
# smartcomment draws ids from uuid4 and timestamps from datetime.now at record time.
# To make the output reproducible we give it a seeded id source and a simulated clock
# (ms resolution, small random gaps so that some timestamps collide as in fast real runs).


class SimClock:
    def __init__(self):
        self.rng = random.Random(SEED)
        self.t = datetime(2025, 3, 1, 9, 0, 0)

    def reset(self, start, seed):
        self.rng = random.Random(seed)
        self.t = start

    def tick(self):
        self.t += timedelta(milliseconds=self.rng.choice([0, 0, 1, 1, 2, 3]))
        return self.t

    def llm(self, lo=350, hi=2400):
        self.t += timedelta(milliseconds=self.rng.randint(lo, hi))

    def pause(self, seconds):
        self.t += timedelta(seconds=seconds)


CLOCK = SimClock()


class _SimDatetime(datetime):
    @classmethod
    def now(cls, tz=None):  # noqa: D401
        return CLOCK.tick()


class _IdSource:
    def __init__(self):
        self.rng = random.Random(SEED + 1)

    def reset(self, seed):
        self.rng = random.Random(seed)

    def __call__(self):
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)


IDS = _IdSource()
sc_base.datetime = _SimDatetime
sc_operation.uuid4 = IDS
sc_session.uuid4 = IDS
sc_network.uuid4 = IDS

# --------------------------------------------------------------------------- prompts (invented)
EXTRACT_PROMPTS = {
    "A": (
        "You are a personal-information organiser. Read the latest conversation turn and list the "
        "durable facts it reveals about the speakers (names, homes, jobs, pets, plans, preferences, "
        "possessions, changes). Write each fact as a short third-person sentence that names the person. "
        'Ignore greetings and small talk. Reply in JSON as {"facts": [...]}.'
    ),
    "B": (
        "Extract memorable facts from the message below. Keep only information that will still matter "
        "in later conversations: where people live and work, animals, hobbies, plans and their "
        "cancellation, things owned. One fact per string, always mentioning whose fact it is. Return "
        'a JSON object with the key "facts" holding a list of strings; return an empty list if '
        "nothing is worth keeping."
    ),
}
UPDATE_PROMPTS = {
    "A": (
        "You manage a memory store. Compare the newly retrieved facts with the existing memories. "
        "For each fact decide: ADD it as a new memory, UPDATE an existing memory whose information it "
        "changes (keep the same id), DELETE a memory that the fact contradicts or cancels, or NONE if "
        "it is already known. Never change memories about a different person. Answer in JSON: "
        '{"memory": [{"id", "text", "event", "old_memory"}]}.'
    ),
    "B": (
        "Smart memory manager. Existing memories are given with integer ids; new facts follow. "
        "Return the full list of memories after applying the facts, marking each with event ADD, "
        "UPDATE, DELETE or NONE. Use UPDATE only when the same subject's information has changed, and "
        'DELETE only when a fact says something stopped being true. Output JSON with key "memory".'
    ),
}
QA_PROMPT = (
    "You answer questions about a long conversation between two people using only the memories "
    "below, each with a timestamp. Prefer the most recent memory when they disagree. Answer in a "
    "short phrase. If the memories do not contain the answer, say so."
)
JUDGE_PROMPT = (
    "You grade an answer against a gold answer for a question about a conversation. Be generous "
    "with wording, strict with facts. Say whether the generated answer is CORRECT or WRONG."
)

NOT_FOUND = "Not mentioned in the conversation."

# --------------------------------------------------------------------------- helpers


def norm(s):
    s = s.lower().strip()
    s = s.translate(str.maketrans("", "", string.punctuation.replace("-", "")))
    s = re.sub(r"^(the|a|an)\s+", "", s)
    return re.sub(r"\s+", " ", s)


def words(s):
    return {w for w in re.findall(r"[a-z0-9]+", s.lower()) if len(w) > 2 or w.isdigit()}


def jaccard(a, b):
    wa, wb = words(a), words(b)
    return len(wa & wb) / max(1, len(wa | wb))


def gold_list(q):
    return q["gold"] if isinstance(q["gold"], list) else [q["gold"]]


def stable_uuid(*parts):
    h = hashlib.sha1("|".join(parts).encode()).hexdigest()
    return str(uuid.UUID(h[:32], version=4))


def message_index(conv):
    out = []
    for si, s in enumerate(conv["sessions"], 1):
        base = datetime.strptime(s["date"], "%Y-%m-%d %H:%M")
        for ti, (spk, text, facts) in enumerate(s["msgs"], 1):
            out.append(
                {
                    "mid": f"D{si}:{ti}",
                    "session": si,
                    "speaker": conv["speakers"][spk],
                    "text": text,
                    "facts": facts,
                    "time": base + timedelta(minutes=2 * (ti - 1)),
                }
            )
    return out


def fault_position(conv, f):
    """Execution-order position of the op a fault sits on."""
    kind, key = f["op"]
    if kind in ("extract", "update"):
        mids = [m["mid"] for m in message_index(conv)]
        return mids.index(key) * 2 + (0 if kind == "extract" else 1)
    qids = [q["qid"] for q in conv["questions"]]
    return (100000 if kind == "search" else 200000) + qids.index(key)


# --------------------------------------------------------------------------- simulator


def simulate(conv, active):
    """Run the pipeline with the faults whose ids are in `active`; return a full trace."""
    faults = [f for f in conv["faults"] if f["id"] in active]
    by_op = {}
    for f in faults:
        by_op.setdefault(tuple(f["op"]), []).append(f)
    k = conv["conventions"]["top_k"]

    entries = {}  # eid -> dict(id, memory, timestamp, slot, value, live, order)
    slot_live = {}  # slot -> eid
    trace = {"messages": [], "questions": []}

    for m in message_index(conv):
        mid = m["mid"]
        # ---- extract_facts
        facts = [dict(f) for f in m["facts"]]
        for f in by_op.get(("extract", mid), []):
            if f["kind"] == "drop":
                facts = [x for x in facts if x["slot"] != f["fact"]]
            elif f["kind"] == "distort":
                for x in facts:
                    if x["slot"] == f["fact"]:
                        x["text"], x["value"] = f["text"], f["value"]
        mt = {"mid": mid, "msg": m, "facts": facts, "existing": [], "events": []}
        trace["messages"].append(mt)
        if not facts:
            continue
        # ---- update_memory_decision
        ufaults = by_op.get(("update", mid), [])
        # existing memories shown to the model: same-slot entries, fault targets, then nearest by words
        want = []
        for x in facts:
            if x["slot"] in slot_live:
                want.append(slot_live[x["slot"]])
        for f in ufaults:
            if f.get("target") in slot_live:
                want.append(slot_live[f["target"]])
        ftext = " ".join(x["text"] for x in facts)
        rest = sorted(
            (e for e in entries.values() if e["live"] and e["id"] not in want),
            key=lambda e: (-jaccard(ftext, e["memory"]), e["order"]),
        )
        for e in rest:
            if len(want) >= 5:
                break
            if jaccard(ftext, e["memory"]) > 0:
                want.append(e["id"])
        want = list(dict.fromkeys(want))
        mt["existing"] = [(eid, entries[eid]["memory"]) for eid in want]

        events = []
        for i, x in enumerate(facts):
            ev = None
            cur = slot_live.get(x["slot"])
            if x["kind"] == "cancel":
                ev = (
                    {"event": "DELETE", "eid": cur, "slot": x["slot"]}
                    if cur
                    else {"event": "NONE", "eid": None, "slot": x["slot"]}
                )
            elif cur is None:
                ev = {
                    "event": "ADD",
                    "eid": stable_uuid(conv["name"], mid, x["slot"], str(i)),
                    "slot": x["slot"],
                    "text": x["text"],
                    "value": x["value"],
                }
            elif entries[cur]["memory"] == x["text"]:
                ev = {"event": "NONE", "eid": cur, "slot": x["slot"]}
            else:
                ev = {
                    "event": "UPDATE",
                    "eid": cur,
                    "slot": x["slot"],
                    "text": x["text"],
                    "value": x["value"],
                }
            ev["fact"] = x["text"]
            for f in ufaults:
                if f["kind"] == "overwrite" and f["fact"] == x["slot"] and f["target"] in slot_live:
                    ev = {
                        "event": "UPDATE",
                        "eid": slot_live[f["target"]],
                        "slot": f["target"],
                        "text": f["text"],
                        "value": f["value"],
                        "fact": x["text"],
                        "fault": f["id"],
                    }
                elif f["kind"] == "ignore" and f["fact"] == x["slot"]:
                    ev = {"event": "NONE", "eid": cur, "slot": x["slot"], "fact": x["text"], "fault": f["id"]}
                elif f["kind"] == "delete" and f.get("replace_fact") == x["slot"]:
                    ev = {
                        "event": "NONE",
                        "eid": cur,
                        "slot": x["slot"],
                        "fact": x["text"],
                        "fault": f["id"],
                        "silent": True,
                    }
            events.append(ev)
        for f in ufaults:
            if f["kind"] == "delete" and f["target"] in slot_live:
                events.append(
                    {
                        "event": "DELETE",
                        "eid": slot_live[f["target"]],
                        "slot": f["target"],
                        "fact": None,
                        "fault": f["id"],
                    }
                )
        ts = m["time"].strftime("%Y-%m-%dT%H:%M:%S")
        applied = []
        for ev in events:
            if ev.get("silent"):
                continue  # the fact's own (ideal) event is replaced by the wrong DELETE
            e = entries.get(ev["eid"]) if ev["eid"] else None
            if ev["event"] == "ADD":
                entries[ev["eid"]] = {
                    "id": ev["eid"],
                    "memory": ev["text"],
                    "timestamp": ts,
                    "slot": ev["slot"],
                    "value": ev["value"],
                    "live": True,
                    "order": len(entries),
                }
                slot_live[ev["slot"]] = ev["eid"]
            elif ev["event"] == "UPDATE":
                ev["old"] = e["memory"]
                e["memory"], e["value"], e["timestamp"] = ev["text"], ev["value"], ts
            elif ev["event"] == "DELETE":
                ev["old"] = e["memory"]
                e["live"] = False
                slot_live.pop(e["slot"], None)
            elif ev["event"] == "NONE" and e is not None:
                ev["old"] = e["memory"]
            applied.append(ev)
        mt["events"] = applied
        mt["after"] = {eid: dict(e) for eid, e in entries.items()}

    # ---- search, QA, judge
    for q in conv["questions"]:
        live = [e for e in entries.values() if e["live"]]
        assert len(live) > k, (conv["name"], "need more live memories than top_k")
        scored = []
        for e in live:
            j = jaccard(q["q"], e["memory"])
            if e["slot"] in q["slots"]:
                s = 0.78 + 0.15 * j
            elif e["slot"] in q.get("distract", []):
                s = 0.62 + 0.12 * j
            else:
                s = 0.18 + 0.5 * j
            scored.append([e, round(s, 4)])
        scored.sort(key=lambda t: (-t[1], t[0]["order"]))
        for f in by_op.get(("search", q["qid"]), []):
            idx = [i for i, (e, _) in enumerate(scored) if e["slot"] == f["slot"]]
            if idx:
                item = scored.pop(idx[0])
                pos = min(k, len(scored))
                lo = scored[pos][1] if pos < len(scored) else 0.1
                item[1] = round(max(0.05, lo - 0.0123), 4)
                scored.insert(pos, item)
        top = scored[:k]
        ctx = [(e["id"], s, e["memory"], e["timestamp"], e["slot"], e["value"]) for e, s in top]
        vals = []
        for slot in q["slots"]:
            hit = [c for c in ctx if c[4] == slot]
            vals.append(hit[0][5] if hit else None)
        if all(v is not None for v in vals):
            pred = q.get("tmpl", "{0}").format(*vals)
        elif any(v is not None for v in vals):
            pred = " and ".join(v for v in vals if v is not None)
        else:
            pred = NOT_FOUND
        qa_fault = None
        for f in by_op.get(("qa", q["qid"]), []):
            pred, qa_fault = f["prediction"], f["id"]
        correct = norm(pred) in {norm(g) for g in gold_list(q)}
        trace["questions"].append(
            {
                "q": q,
                "top": [(e["id"], s) for e, s in top],
                "ctx": ctx,
                "pred": pred,
                "correct": correct,
                "qa_fault": qa_fault,
            }
        )
    trace["entries"] = entries
    return trace


def outcome(conv, active):
    return {t["q"]["qid"]: t["correct"] for t in simulate(conv, active)["questions"]}


def compute_labels(conv):
    faults = sorted(conv["faults"], key=lambda f: fault_position(conv, f))
    positions = sorted({fault_position(conv, f) for f in faults})
    all_ids = {f["id"] for f in faults}
    recorded = outcome(conv, all_ids)
    ideal = outcome(conv, set())
    assert all(ideal.values()), (conv["name"], "ideal run must answer everything", ideal)
    cache = {}

    def out_upto(p, inclusive):
        key = (p, inclusive)
        if key not in cache:
            act = {
                f["id"]
                for f in faults
                if fault_position(conv, f) < p or (inclusive and fault_position(conv, f) == p)
            }
            cache[key] = outcome(conv, act)
        return cache[key]

    labels = {}
    for qid, ok in recorded.items():
        if ok:
            labels[qid] = None
            continue
        lab = None
        for p in positions:
            if out_upto(p, False)[qid] and not out_upto(p, True)[qid]:
                lab = [f for f in faults if fault_position(conv, f) == p]
                break
        assert lab is not None, (conv["name"], qid, "no decisive op")
        labels[qid] = lab
    return recorded, labels


def error_type(fault_group):
    kinds = {(f["op"][0], f["kind"]) for f in fault_group}
    assert len(kinds) == 1, kinds
    op, kind = kinds.pop()
    if op == "extract":
        return "ExtractionError"
    if op == "update":
        return "DeletionError" if kind == "delete" else "UpdateError"
    if op == "search":
        return "RetrievalError"
    return "ResponseError"


# --------------------------------------------------------------------------- recorder

ENTRY_ID = lambda v: f"memory-unit-{v['id']}"  # noqa: E731


def entry_value(e):
    return {"id": e["id"], "memory": e["memory"], "timestamp": e["timestamp"]}


def entry_rv(val):
    return comment_variable(
        val,
        to_runtime=True,
        id_strategy=ENTRY_ID,
        encoding_fn=json.dumps,
        category="memory_entry",
        identity_only=True,
    )


def judge_text(style, ok, q, pred):
    if style == "json":
        return json.dumps({"label": "CORRECT" if ok else "WRONG"})
    if style == "yesno":
        return "yes" if ok else "no"
    if ok:
        return "CORRECT - the answer matches the gold answer."
    return f"WRONG - the answer '{pred}' does not match the gold answer '{gold_list(q)[0]}'."


def record(conv, trace, gi):
    cv = conv["conventions"]
    name = conv["name"]
    fname = f"{name}.json"
    seed = SEED + 97 * gi
    CLOCK.reset(datetime(2025, 3, 3 + gi, 10, 15, 0), seed)
    IDS.reset(seed + 1)
    ops = {}
    mem = {}  # eid -> live dict mirrored from events (the object smartcomment sees)

    # ---------------- stage 1: construction
    with comment_graph(
        graph_id=f"graph-mem0-{name}",
        user_id=f"{name}",
        project_id="membase-mem0",
        metadata={
            "memtracebench_graph_filename": fname,
            "memtracebench_dataset_source": DATASET_SOURCE,
            "memory_system": "Mem0",
            "speakers": list(conv["speakers"].values()),
        },
    ) as g:
        cur_session = None
        sess_cm = None
        for mt in trace["messages"]:
            m = mt["msg"]
            if m["session"] != cur_session:
                if sess_cm is not None:
                    sess_cm.__exit__(None, None, None)
                    CLOCK.pause(5)
                cur_session = m["session"]
                sess_cm = comment_session(
                    session_name=f"construction-session_{cur_session}",
                    category="construction",
                    metadata={"session_date_time": conv["sessions"][cur_session - 1]["date"]},
                )
                sess_cm.__enter__()
            mid = m["mid"]
            stamp = m["time"].strftime("%I:%M %p on %d %B, %Y")
            if cv["message"] == "json":
                mval, menc = {"text": m["text"], "speaker": m["speaker"], "timestamp": stamp}, json.dumps
            else:
                mval, menc = f"{m['speaker']}: {m['text']}", str
            facts_txt = [x["text"] for x in mt["facts"]]
            body = json.dumps({"facts": facts_txt}, indent=2)
            raw = f"```json\n{body}\n```" if cv["fenced"] else body
            with comment_op_scope(
                op_name="memory_system.extract_facts",
                category="extraction",
                comment="LLM fact extraction from one message",
            ) as op:
                msg_rv = comment_variable(
                    mval,
                    to_runtime=True,
                    id_strategy=lambda v, mid=mid: mid,
                    encoding_fn=menc,
                    category="message",
                    metadata={"speaker": m["speaker"], "session": m["session"]},
                )
                pr_rv = comment_variable(
                    EXTRACT_PROMPTS[cv["prompt"]],
                    to_runtime=True,
                    id_strategy=lambda v: "fact-extraction-system-prompt",
                    category="prompt",
                )
                CLOCK.llm()
                raw_rv = comment_variable(
                    raw, to_runtime=True, class_name="raw_fact_extraction_response", category="llm_response"
                )
                comment_op(inputs=[pr_rv, msg_rv], outputs=[raw_rv])
                clean_rv = comment_variable(
                    body, to_runtime=True, class_name="fact_extraction_response_with_code_block_removing"
                )
                comment_op(inputs=[raw_rv], outputs=[clean_rv])
                facts_rv = comment_variable(
                    facts_txt, to_runtime=True, class_name="extracted_facts", encoding_fn=json.dumps
                )
                comment_op(inputs=[clean_rv], outputs=[facts_rv])
            ops[("extract", mid)] = op.op_id
            if not mt["facts"]:
                continue
            # update decision
            idmap = {eid: str(i) for i, (eid, _) in enumerate(mt["existing"])}
            existing_val = [{"id": idmap[eid], "text": txt} for eid, txt in mt["existing"]]
            decision = [{"id": idmap[eid], "text": txt, "event": "NONE"} for eid, txt in mt["existing"]]
            nxt = len(idmap)
            for ev in mt["events"]:
                if ev["event"] == "ADD":
                    decision.append({"id": str(nxt), "text": ev["text"], "event": "ADD"})
                    nxt += 1
                elif ev["eid"] in idmap:
                    d = next(x for x in decision if x["id"] == idmap[ev["eid"]])
                    d["event"] = ev["event"]
                    if ev["event"] == "UPDATE":
                        d["text"], d["old_memory"] = ev["text"], ev["old"]
            with comment_op_scope(
                op_name="memory_system.update_memory_decision",
                category="update",
                comment="LLM decides ADD/UPDATE/DELETE/NONE against existing memories",
            ) as op:
                up_rv = comment_variable(
                    UPDATE_PROMPTS[cv["prompt"]],
                    to_runtime=True,
                    id_strategy=lambda v: "memory-update-decision-prompt",
                    category="prompt",
                )
                ex_rv = comment_variable(
                    existing_val, to_runtime=True, class_name="existing_memories", encoding_fn=json.dumps
                )
                src = [entry_rv(entry_value(mem[eid])) for eid, _ in mt["existing"]]
                if src:
                    comment_op(inputs=src, outputs=[ex_rv])
                CLOCK.llm(600, 3200)
                rd_rv = comment_variable(
                    json.dumps({"memory": decision}),
                    to_runtime=True,
                    class_name="raw_memory_update_decision",
                    category="llm_response",
                    encoding_fn=str,
                )
                comment_op(inputs=[up_rv, ex_rv, facts_rv], outputs=[rd_rv])
                for ev in mt["events"]:
                    act = {
                        "event": ev["event"],
                        "id": ev["eid"],
                        "text": ev.get("text", ev.get("old")),
                        "old_memory": ev.get("old") if ev["event"] in ("UPDATE", "DELETE") else None,
                    }
                    act_rv = comment_variable(
                        act, to_runtime=True, class_name="update_action", encoding_fn=json.dumps
                    )
                    comment_op(inputs=[rd_rv], outputs=[act_rv])
                    if ev["event"] == "ADD":
                        e = trace_entry_after(mt, ev["eid"])
                        mem[ev["eid"]] = entry_value(e)
                        comment_link(
                            source=act_rv,
                            target=(
                                mem[ev["eid"]],
                                {
                                    "id_strategy": ENTRY_ID,
                                    "encoding_fn": json.dumps,
                                    "category": "memory_entry",
                                },
                            ),
                        )
                    elif ev["event"] == "UPDATE":
                        target = mem[ev["eid"]]
                        with comment_mutation(
                            target=target,
                            inputs=[act_rv],
                            id_strategy=ENTRY_ID,
                            encoding_fn=json.dumps,
                            category="memory_entry",
                            mutation_name="memory_system.update_memory_decision",
                            mutation_category="update",
                            reuse_op=True,
                        ):
                            target["memory"] = ev["text"]
                            target["timestamp"] = m["time"].strftime("%Y-%m-%dT%H:%M:%S")
                    elif ev["event"] == "DELETE":
                        erv = entry_rv(mem[ev["eid"]])
                        comment_link(source=erv, target=("DELETED", {"encoding_fn": str}))
                        comment_link(source=act_rv, target=("DELETED", {"encoding_fn": str}))
            ops[("update", mid)] = op.op_id
        sess_cm.__exit__(None, None, None)
        exported = g.export_graph()

    # ---------------- stage 2: search (re-imported graph)
    CLOCK.pause(40)
    g2 = ExecNetwork.import_graph(json.loads(json.dumps(exported)))
    qrv = {}
    with comment_graph(graph=g2):
        with comment_session(session_name="search", category="search", metadata={"top_k": cv["top_k"]}):
            for qt in trace["questions"]:
                q = qt["q"]
                with comment_op_scope(
                    op_name="memory_system.search_vector_store",
                    category="retrieval",
                    metadata={"top_k": cv["top_k"]},
                ) as op:
                    q_rv = comment_variable(
                        q["q"],
                        to_runtime=True,
                        class_name="query",
                        category="message & query",
                        metadata={"evidence": q["ev"], "question_id": q["qid"]},
                    )
                    CLOCK.llm(40, 160)
                    for eid, score in qt["top"]:
                        comment_link(source=q_rv, target=entry_rv(mem[eid]), comment=f"score: {score:.4f}")
                ops[("search", q["qid"])] = op.op_id
                qrv[q["qid"]] = q_rv.full_node_id
        exported = g2.export_graph()

    # ---------------- stage 3: evaluation (re-imported again)
    CLOCK.pause(25)
    g3 = ExecNetwork.import_graph(json.loads(json.dumps(exported)))
    ids = {}
    with comment_graph(graph=g3):
        with comment_session(session_name="evaluation", category="evaluation"):
            for qt in trace["questions"]:
                q = qt["q"]
                ok = qt["correct"]
                ctx_txt = "\n".join(f"- [{c[3]}] {c[2]}" for c in qt["ctx"])
                with comment_op_scope(op_name="question-answering", category="generation") as op:
                    q_rv = comment_variable(
                        q["q"],
                        to_runtime=True,
                        class_name="query",
                        category="message & query",
                        identity_only=True,
                    )
                    ctx_rv = comment_variable(ctx_txt, to_runtime=True, class_name="context")
                    comment_op(inputs=[entry_rv(mem[c[0]]) for c in qt["ctx"]], outputs=[ctx_rv])
                    qa_rv = comment_variable(
                        QA_PROMPT,
                        to_runtime=True,
                        id_strategy=lambda v: "question-answering-prompt",
                        category="prompt",
                    )
                    CLOCK.llm(500, 1800)
                    pred_rv = comment_variable(
                        qt["pred"], to_runtime=True, class_name="prediction", category="llm_response"
                    )
                    comment_op(inputs=[qa_rv, q_rv, ctx_rv], outputs=[pred_rv])
                ops[("qa", q["qid"])] = op.op_id
                gold = gold_list(q) if cv["golden"] == "list" else gold_list(q)[0]
                with comment_op_scope(op_name="llm-judge", category="evaluation") as op:
                    gold_rv = comment_variable(
                        gold,
                        to_runtime=True,
                        class_name="golden_answers",
                        encoding_fn=json.dumps if isinstance(gold, list) else repr,
                    )
                    jp_rv = comment_variable(
                        JUDGE_PROMPT,
                        to_runtime=True,
                        id_strategy=lambda v: "llm-judge-prompt",
                        category="prompt",
                    )
                    CLOCK.llm(300, 1200)
                    jr_rv = comment_variable(
                        judge_text(cv["judge"], ok, q, qt["pred"]),
                        to_runtime=True,
                        class_name="judge_response",
                        category="llm_response",
                    )
                    comment_op(inputs=[jp_rv, q_rv, gold_rv, pred_rv], outputs=[jr_rv])
                    js_rv = comment_variable(1.0 if ok else 0.0, to_runtime=True, class_name="judge_score")
                    comment_op(inputs=[jr_rv], outputs=[js_rv])
                ops[("judge", q["qid"])] = op.op_id
                ids[q["qid"]] = {
                    "query_id": q_rv.full_node_id,
                    "golden": gold,
                    "golden_id": gold_rv.full_node_id,
                    "prediction_id": pred_rv.full_node_id,
                }
        final = g3.export_graph()
    return final, ops, ids


def trace_entry_after(mt, eid):
    return mt["after"][eid]


# --------------------------------------------------------------------------- validation


def validate(path):
    d = json.loads(Path(path).read_text())
    for key in (
        "graph_id",
        "user_id",
        "project_id",
        "storage_path",
        "strict",
        "driver_type",
        "created_at",
        "metadata",
        "data",
    ):
        assert key in d, key
    assert d["metadata"]["memtracebench_graph_filename"] == Path(path).name
    assert "memtracebench_dataset_source" in d["metadata"]
    data = d["data"]
    ops = {o["op_id"]: o for o in data["operations"]}
    nodes = {n["full_node_id"]: n for n in data["nodes"]}
    # failed judges in the raw graph must match the annotations one to one
    failed_queries = set()
    for o in data["operations"]:
        if o["op_name"] != "llm-judge":
            continue
        es = [e for e in data["edges"] if e["op_id"] == o["op_id"]]
        tgt = [nodes[e["target_full_node_id"]] for e in es]
        if any(n["class_name"] == "judge_score" and n["value"] == "0.0" for n in tgt):
            srcs = {e["source_full_node_id"] for e in es}
            failed_queries |= {s for s in srcs if nodes[s]["category"] == "message & query"}
    ann = data["annotations"]
    assert {a["query_id"] for a in ann} == failed_queries, (path, "annotations vs failed judges")
    expected_op = {
        "ExtractionError": "memory_system.extract_facts",
        "UpdateError": "memory_system.update_memory_decision",
        "DeletionError": "memory_system.update_memory_decision",
        "RetrievalError": "memory_system.search_vector_store",
        "ResponseError": "question-answering",
    }
    for a in ann:
        assert a["final_op_id"] in ops, (path, a["query_id"], "final_op_id not an operation")
        assert ops[a["final_op_id"]]["op_name"] == expected_op[a["final_error_type"]], a
        assert a["query_id"] in nodes and a["prediction_id"] in nodes and a["golden_answers_id"] in nodes
        assert a["source_evidence_ids"], a
        for ev in a["source_evidence_ids"]:
            assert ev in nodes and nodes[ev]["category"] == "message", (path, ev)
    return len(ann)


# --------------------------------------------------------------------------- main


def main():
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    manifest = {"seed": SEED, "split": "mem0", "graphs": []}
    totals = {}
    n_correct = 0
    for gi, conv in enumerate(CONVERSATIONS):
        recorded, labels = compute_labels(conv)
        trace = simulate(conv, {f["id"] for f in conv["faults"]})
        # planned vs replayed labels
        for q in conv["questions"]:
            lab = labels[q["qid"]]
            if q["expect"] is None:
                assert lab is None, (conv["name"], q["qid"], "expected correct", lab)
            else:
                assert lab is not None, (conv["name"], q["qid"], "expected failure")
                got = (error_type(lab), [f["id"] for f in lab])
                assert got[0] == q["expect"][0] and q["expect"][1] in got[1], (conv["name"], q["qid"], got)
        final, ops, ids = record(conv, trace, gi)
        annotations = []
        qrecs = []
        for qt in trace["questions"]:
            q = qt["q"]
            lab = labels[q["qid"]]
            rec = {
                "qid": q["qid"],
                "query": q["q"],
                "golden": q["gold"],
                "prediction": qt["pred"],
                "judge_score": 1.0 if qt["correct"] else 0.0,
                "evidence": q["ev"],
            }
            if lab is not None:
                et = error_type(lab)
                op_id = ops[tuple(lab[0]["op"])]
                totals[et] = totals.get(et, 0) + 1
                annotations.append(
                    {
                        "query_id": ids[q["qid"]]["query_id"],
                        "query": q["q"],
                        "golden_answers": ids[q["qid"]]["golden"],
                        "golden_answers_id": ids[q["qid"]]["golden_id"],
                        "prediction": qt["pred"],
                        "prediction_id": ids[q["qid"]]["prediction_id"],
                        "source_evidence_ids": [f"{e}@1" for e in q["ev"]],
                        "final_error_type": et,
                        "final_op_id": op_id,
                    }
                )
                rec.update(
                    {
                        "final_error_type": et,
                        "decisive_fault": [f["id"] for f in lab],
                        "final_op": list(lab[0]["op"]),
                        "final_op_id": op_id,
                    }
                )
            else:
                n_correct += 1
            qrecs.append(rec)
        final["data"]["annotations"] = annotations
        path = OUT_DIR / f"{conv['name']}.json"
        path.write_text(json.dumps(final, indent=1, ensure_ascii=False))
        decisive = {f for r in qrecs for f in r.get("decisive_fault", [])}
        frecs = []
        for f in conv["faults"]:
            fr = {k: v for k, v in f.items()}
            fr["op_id"] = ops.get(tuple(f["op"]))
            fr["role"] = (
                "decisive"
                if f["id"] in decisive
                else "non-decisive (answer already wrong earlier)"
                if any(
                    f["op"][1] == r["qid"] or f.get("target") in q_slots(conv, r["qid"])
                    for r in qrecs
                    if "decisive_fault" in r
                )
                else "unasked (no question depends on it)"
            )
            frecs.append(fr)
        manifest["graphs"].append(
            {
                "file": str(path.relative_to(HERE)),
                "conversation": conv["name"],
                "speakers": list(conv["speakers"].values()),
                "conventions": conv["conventions"],
                "messages": sum(len(s["msgs"]) for s in conv["sessions"]),
                "sessions": len(conv["sessions"]),
                "faults": frecs,
                "questions": qrecs,
                "legit_events": legit_events(trace),
            }
        )
    for p in sorted(OUT_DIR.glob("*.json")):
        validate(p)
    manifest["counts"] = {"failed": sum(totals.values()), "correct": n_correct, "by_type": totals}
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    print(json.dumps(manifest["counts"], indent=1))


def q_slots(conv, qid):
    return next(q["slots"] for q in conv["questions"] if q["qid"] == qid)


def legit_events(trace):
    out = []
    for mt in trace["messages"]:
        for ev in mt["events"]:
            if ev["event"] in ("UPDATE", "DELETE") and "fault" not in ev:
                out.append(
                    {"msg": mt["mid"], "event": ev["event"], "memory": ev.get("old"), "new": ev.get("text")}
                )
    return out


if __name__ == "__main__":
    main()
