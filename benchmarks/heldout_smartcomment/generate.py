"""Generate the held-out MemTraceBench-style set with the real `smartcomment` tracer.

Built from the paper's conventions (MemBase's instrumentation of Mem0, NaiveRAG and long-context), never
from memtrace's importer or attribution code. Three systems (mem0, rag, long_context) run deterministic,
model-free pipelines over three hand-written conversations (conversations.py). Every LLM step is an
oracle: it does the ideal thing unless the fault plan below tells it to fail. Each planted fault hurts
exactly one question, and the gold label is the faulted operation and its type (the paper's decisive
criterion: the earliest operation whose corrected output, earlier operations unchanged and later ones
ideal, would have prevented the wrong answer).

The generator checks its own labels: the set of failed questions (judge_score 0.0) must equal the set of
planted faults, and re-running the pipeline with one fault removed (every other fault kept) must turn
exactly that question into a correct one (and change no other outcome).

    python benchmarks/heldout_smartcomment/generate.py            # writes .../heldout_smartcomment/set/
    python benchmarks/heldout_smartcomment/generate.py --out DIR  # elsewhere

Determinism: smartcomment draws op/edge/session/graph ids from uuid4 and timestamps from datetime.now();
both are replaced here (seeded uuid4, a simulated clock) so the output is byte-identical from run to run.
The simulated clock advances 0.4 ms per record and jumps for "LLM calls", so records inside one step
share milliseconds, as in real fast runs.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import uuid
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import smartcomment.runtime.network as _sc_network  # noqa: E402
import smartcomment.schema.base as _sc_base  # noqa: E402
import smartcomment.schema.operation as _sc_operation  # noqa: E402
import smartcomment.schema.session as _sc_session  # noqa: E402
from conversations import CONVERSATIONS  # noqa: E402
from smartcomment import (  # noqa: E402
    IdentityRegistry,
    comment_graph,
    comment_link,
    comment_mutation,
    comment_op,
    comment_op_scope,
    comment_session,
    comment_variable,
)
from smartcomment.runtime.network import ExecNetwork  # noqa: E402

DATASET_SOURCE = "heldout-handwritten"
LLM_MODEL = "gpt-4.1-mini"
JUDGE_MODEL = "claude-opus-4-5"
EMBED_MODEL = "Qwen3-Embedding-4B"
NOT_FOUND = "Not mentioned in the conversation."
SYSTEMS = ("mem0", "rag", "long_context")
dumps4 = partial(json.dumps, ensure_ascii=False, indent=4, sort_keys=True)

# --------------------------------------------------------------------------------------------------
# Determinism: seeded uuid4 and a simulated clock inside smartcomment.


class _Clock:
    def __init__(self) -> None:
        self.t = datetime(2025, 1, 1)

    def set(self, when: datetime) -> None:
        self.t = when

    def tick(self) -> datetime:
        now = self.t
        self.t += timedelta(microseconds=400)
        return now

    def jump(self, ms: float) -> None:
        self.t += timedelta(milliseconds=ms)


CLOCK = _Clock()
_RNG = random.Random(0)


class _FakeDatetime(datetime):
    @classmethod
    def now(cls, tz=None):
        return CLOCK.tick()


def _seeded_uuid4() -> uuid.UUID:
    return uuid.UUID(int=_RNG.getrandbits(128), version=4)


_sc_base.datetime = _FakeDatetime
_sc_operation.uuid4 = _seeded_uuid4
_sc_session.uuid4 = _seeded_uuid4
_sc_network.uuid4 = _seeded_uuid4


def reseed(key: str) -> None:
    _RNG.seed(key)


def llm_latency(key: str, low: int = 700, high: int = 2600) -> float:
    """A deterministic pseudo latency (ms) for a simulated LLM or embedding call."""
    return low + (sum(map(ord, key)) * 7919) % (high - low)


IdentityRegistry.register("mem0-dict", lambda d: d["id"], exist_ok=True)
IdentityRegistry.register("rag-doc", lambda d: d["id"], exist_ok=True)

# --------------------------------------------------------------------------------------------------
# Fault plans. Keys: (system, conversation). Each fault names the question it breaks and its gold type.
#   drop_fact      mem0 extract_facts at message `at` omits the fact           -> ExtractionError
#   bad_update     mem0 update decision at `at` merges the new fact into the   -> UpdateError
#                  memory of `target` with `text`, losing the old detail
#   bad_delete     mem0 update decision at `at` also DELETEs `target`'s memory -> DeletionError
#   delete_add     mem0 update decision at `at` DELETEs the old memory of the  -> DeletionError
#                  fact's slot and ADDs `text` (losing the old detail)
#   buffer_drop    rag message_buffer_update for `at` does not append it      -> ExtractionError
#   add_drop       rag memory_system.add storing the buffer with `at` omits it -> ExtractionError
#   unit_drop      long_context memory_update for `at` does not append it     -> ExtractionError
#   miss           retrieval for the question leaves out the evidence         -> RetrievalError
#   stale_unit     long_context retrieve returns the unit version from before -> RetrievalError
#                  the evidence was appended
#   wrong_answer   question-answering answers `answer` despite the evidence   -> ResponseError
# long_context also loses old content by trimming to its window: a question whose evidence was trimmed is
# labelled UpdateError at the memory_update that trimmed it (found automatically, verified the same way).

PLANS: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("mem0", "maya_theo"): [
        {"kind": "drop_fact", "q": "q6", "at": "D2:6"},
        {
            "kind": "bad_update",
            "q": "q2",
            "at": "D2:3",
            "target": "lena",
            "text": "Sister Lena is visiting next week with her twins",
        },
        {"kind": "bad_delete", "q": "q5", "at": "D3:3", "target": "pico_toy"},
        {"kind": "bad_delete", "q": "q8", "at": "D3:2", "target": "theo_shift"},
        {"kind": "miss", "q": "q7"},
        {"kind": "wrong_answer", "q": "q9", "answer": "under three hours"},
    ],
    ("mem0", "priya_jonas"): [
        {"kind": "drop_fact", "q": "q2", "at": "D1:5"},
        {
            "kind": "bad_update",
            "q": "q6",
            "at": "D3:4",
            "target": "climb",
            "text": "Jonas's climbing partner is Ines",
        },
        {"kind": "bad_delete", "q": "q4", "at": "D3:1", "target": "cats"},
        {"kind": "bad_delete", "q": "q9", "at": "D3:3", "target": "book"},
        {"kind": "miss", "q": "q1"},
        {"kind": "wrong_answer", "q": "q7", "answer": "Elias"},
    ],
    ("mem0", "sam_rosa"): [
        {"kind": "drop_fact", "q": "q4", "at": "D2:1"},
        {
            "kind": "bad_update",
            "q": "q2",
            "at": "D2:3",
            "target": "pottery",
            "text": "Rosa made a blue glazed teapot in pottery class",
        },
        {
            "kind": "bad_update",
            "q": "q8",
            "at": "D3:2",
            "target": "super",
            "text": "The building's elevator was fixed by the super",
        },
        {
            "kind": "delete_add",
            "q": "q1",
            "at": "D2:4",
            "target": "garden",
            "text": "Sam is replanting his garden with peppers after tomato blight",
        },
        {"kind": "miss", "q": "q9"},
        {"kind": "wrong_answer", "q": "q7", "answer": "Pan Dulce"},
    ],
    ("rag", "maya_theo"): [
        {"kind": "buffer_drop", "q": "q5", "at": "D2:5"},
        {"kind": "add_drop", "q": "q9", "at": "D3:5"},
        {"kind": "miss", "q": "q2"},
        {"kind": "wrong_answer", "q": "q4", "answer": "Denver"},
    ],
    ("rag", "priya_jonas"): [
        {"kind": "buffer_drop", "q": "q4", "at": "D2:2"},
        {"kind": "miss", "q": "q6"},
        {"kind": "miss", "q": "q8"},
        {"kind": "wrong_answer", "q": "q1", "answer": "Porto"},
    ],
    ("rag", "sam_rosa"): [
        {"kind": "add_drop", "q": "q7", "at": "D3:4"},
        {"kind": "miss", "q": "q1"},
        {"kind": "wrong_answer", "q": "q5", "answer": "a blue glazed vase"},
        {"kind": "wrong_answer", "q": "q8", "answer": "Mr. Ortega"},
    ],
    ("long_context", "maya_theo"): [
        {"kind": "unit_drop", "q": "q8", "at": "D2:2"},
        {"kind": "stale_unit", "q": "q9"},
        {"kind": "wrong_answer", "q": "q4", "answer": "Denver"},
    ],
    ("long_context", "priya_jonas"): [
        {"kind": "unit_drop", "q": "q7", "at": "D3:4"},
        {"kind": "stale_unit", "q": "q8"},
        {"kind": "wrong_answer", "q": "q3", "answer": "green"},
    ],
    ("long_context", "sam_rosa"): [
        {"kind": "unit_drop", "q": "q4", "at": "D2:1"},
        {"kind": "stale_unit", "q": "q7"},
        {"kind": "wrong_answer", "q": "q3", "answer": "700 dollars"},
    ],
}

FAULT_TYPE = {
    "drop_fact": "ExtractionError",
    "buffer_drop": "ExtractionError",
    "add_drop": "ExtractionError",
    "unit_drop": "ExtractionError",
    "bad_update": "UpdateError",
    "trim": "UpdateError",
    "bad_delete": "DeletionError",
    "delete_add": "DeletionError",
    "miss": "RetrievalError",
    "stale_unit": "RetrievalError",
    "wrong_answer": "ResponseError",
}

# The question-answering step's category varies between graphs, as in MemBase's evaluation graphs.
QA_CATEGORY = {"maya_theo": "evaluation", "priya_jonas": "response", "sam_rosa": "evaluation"}

FACT_PROMPT = (
    "You are a Personal Information Organizer, specialized in accurately storing facts, user memories, and "
    "preferences. Extract the relevant facts from the conversation and return them in JSON with the key "
    '"facts".'
)
UPDATE_PROMPT = (
    "You are a smart memory manager which controls the memory of a system. You can perform four operations: "
    "(1) add into the memory, (2) update the memory, (3) delete from the memory, and (4) no change. Compare "
    "newly retrieved facts with the existing memory and decide for each element."
)
QA_PROMPT = (
    "You are an intelligent memory assistant tasked with retrieving accurate information from conversation "
    "memories. Answer the question using only the memories below. If they do not contain the answer, say "
    '"Not mentioned in the conversation."\n\nMemories:\n${context}\n\nQuestion: ${question}\nAnswer:'
)
JUDGE_PROMPT = (
    "I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
    "response contains the correct answer. Otherwise, answer no.\n\nQuestion: ${question}\n\nCorrect Answer: "
    "${golden_answers}\n\nModel Response: ${prediction}\n\n"
    "Is the model response correct? Answer yes or no only."
)


# --------------------------------------------------------------------------------------------------
# Helpers


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def overlap(a: str, b: str) -> float:
    wa, wb = set(words(a)), set(words(b))
    return len(wa & wb) / (len(wa | wb) or 1)


def contains_gold(text: str, gold: list[str]) -> bool:
    return any(g.lower() in text.lower() for g in gold)


def msg_text(speaker: str, text: str) -> str:
    return f"{speaker}: {text}"


def all_messages(conv: dict) -> list[dict]:
    out = []
    for s_idx, session in enumerate(conv["sessions"]):
        for dia, speaker, text, facts in session["messages"]:
            out.append(
                {
                    "dia": dia,
                    "speaker": speaker,
                    "text": text,
                    "facts": facts,
                    "date": session["date"],
                    "session": s_idx + 1,
                }
            )
    return out


def emit_message(m: dict):
    return comment_variable(
        msg_text(m["speaker"], m["text"]),
        to_runtime=True,
        id_strategy=lambda _x, dia=m["dia"]: dia,
        category="message",
        comment="A raw message from the conversation.",
        metadata={
            "dia_id": m["dia"],
            "speaker": m["speaker"],
            "timestamp": m["date"],
            "session": f"session_{m['session']}",
        },
    )


def emit_query(q: dict):
    return comment_variable(
        q["question"],
        to_runtime=True,
        variable_name="query",
        class_name="query",
        category="message & query",
        comment="A task query (question) about the conversation.",
        metadata={"evidence": q["evidence"], "question_id": q["qid"], "question_type": "single-hop"},
    )


def restart_graph(graph: ExecNetwork) -> ExecNetwork:
    """Export and re-import, as MemBase does between construction, search and evaluation."""
    data = json.loads(json.dumps(graph.export_graph()))
    return ExecNetwork.import_graph(data)


# --------------------------------------------------------------------------------------------------
# Systems. Each builds memory (construction), retrieves per question (search) and returns, per question,
# the node ids retrieved and the retrieved text. `ops` records op ids of interest for labelling.


class Mem0:
    top_k = 5

    def __init__(self, conv: dict, plan: list[dict]):
        self.conv = conv
        self.plan = plan
        self.store: dict[str, dict] = {}  # mem id -> {"entry": {...}, "slot", "prov": set, "rv"}
        self.slot_of: dict[str, str] = {}  # slot -> mem id
        self.counter = 0
        self.ops: dict[str, str] = {}  # (kind, dia) -> op id

    def _faults(self, kind: str, dia: str | None = None) -> list[dict]:
        return [f for f in self.plan if f["kind"] == kind and (dia is None or f.get("at") == dia)]

    def _new_id(self) -> str:
        self.counter += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"heldout/{self.conv['conv']}/mem0/{self.counter}"))

    def _entry_rv(self, entry: dict):
        return comment_variable(
            dict(entry),
            to_runtime=True,
            id_strategy="mem0-dict",
            encoding_fn=dumps4,
            decoding_fn=json.loads,
            category="memory_entry",
            comment="A memory unit in the memory system.",
        )

    def construct(self) -> None:
        for n, m in enumerate(all_messages(self.conv)):
            msg_rv = emit_message(m)
            facts = list(m["facts"])
            dropped = {f["at"] for f in self._faults("drop_fact")}
            if m["dia"] in dropped:
                facts = facts[1:]
            prompt_rv = comment_variable(
                FACT_PROMPT,
                to_runtime=True,
                id_strategy=lambda _x: "fact-extraction-system-prompt",
                category="prompt",
                comment="A fact extraction system prompt for the memory system.",
                metadata={"op_type": "extraction"},
            )
            CLOCK.jump(llm_latency(m["dia"] + "extract"))
            response = json.dumps({"facts": [t for _, t in facts]}, ensure_ascii=False)
            raw = f"```json\n{response}\n```" if n % 3 == 1 else response
            with comment_op_scope(
                op_name="memory_system.extract_facts",
                category="extraction",
                comment="Extract facts from a conversation snippet using an LLM.",
                metadata={"llm_model": LLM_MODEL},
            ) as op:
                self.ops[("extract", m["dia"])] = op.op_id
                raw_rv = comment_variable(
                    raw,
                    to_runtime=True,
                    class_name="raw_fact_extraction_response",
                    category="llm_response",
                    comment="A raw fact extraction response from a large language model.",
                )
                comment_link(source=msg_rv, target=raw_rv)
                comment_link(source=prompt_rv, target=raw_rv)
                removed_rv = comment_variable(
                    response,
                    to_runtime=True,
                    class_name="fact_extraction_response_with_code_block_removing",
                    id_strategy=lambda _x, name=raw_rv.name: name,
                    category="llm_response",
                    comment="A post-processed fact extraction response from a large language model.",
                )
                comment_link(
                    source=raw_rv,
                    target=removed_rv,
                    comment="A link between the raw response and the post-processed response.",
                )
                facts_rv = comment_variable(
                    [t for _, t in facts],
                    to_runtime=True,
                    id_strategy=lambda _x, name=raw_rv.name: name,
                    class_name="extracted_facts",
                    category="llm_response",
                    comment="A list of extracted facts from a conversation snippet using `json.loads`.",
                )
                comment_link(
                    source=removed_rv,
                    target=facts_rv,
                    comment=f"The large language model extracts {len(facts)} facts.",
                )
            self._update(m, facts, facts_rv)

    def _update(self, m: dict, facts: list, facts_rv) -> None:
        dia, ts = m["dia"], m["date"]
        # Existing memories similar to the new facts (the update prompt's context).
        related: list[str] = []
        for slot, text in facts:
            ranked = sorted(self.store, key=lambda i: -overlap(text, self.store[i]["entry"]["memory"]))
            for mid in ([self.slot_of[slot]] if slot in self.slot_of else []) + ranked[:2]:
                if mid not in related:
                    related.append(mid)
        for f in self._faults("bad_update", dia) + self._faults("bad_delete", dia):
            mid = self.slot_of[f["target"]]
            if mid not in related:
                related.append(mid)
        temp = {str(i): mid for i, mid in enumerate(related)}
        back = {mid: t for t, mid in temp.items()}
        actions = []
        for slot, text in facts:
            bad = self._faults("bad_update", dia)
            da = self._faults("delete_add", dia)
            if bad:
                target = self.slot_of[bad[0]["target"]]
                actions.append(
                    {
                        "id": back[target],
                        "text": bad[0]["text"],
                        "event": "UPDATE",
                        "old_memory": self.store[target]["entry"]["memory"],
                        "_slot": slot,
                    }
                )
            elif da and slot in self.slot_of:
                old = self.slot_of[slot]
                actions.append(
                    {"id": back[old], "text": self.store[old]["entry"]["memory"], "event": "DELETE"}
                )
                actions.append(
                    {
                        "id": str(len(temp) + len(actions)),
                        "text": da[0]["text"],
                        "event": "ADD",
                        "_slot": slot,
                    }
                )
            elif slot in self.slot_of:
                old = self.slot_of[slot]
                actions.append(
                    {
                        "id": back[old],
                        "text": text,
                        "event": "UPDATE",
                        "old_memory": self.store[old]["entry"]["memory"],
                        "_slot": slot,
                    }
                )
            else:
                actions.append(
                    {"id": str(len(temp) + len(actions)), "text": text, "event": "ADD", "_slot": slot}
                )
        for f in self._faults("bad_delete", dia):
            target = self.slot_of[f["target"]]
            actions.append(
                {"id": back[target], "text": self.store[target]["entry"]["memory"], "event": "DELETE"}
            )
        for mid in related:
            if all(a["id"] != back[mid] for a in actions):
                actions.append({"id": back[mid], "text": self.store[mid]["entry"]["memory"], "event": "NONE"})
        decision = {"memory": [{k: v for k, v in a.items() if not k.startswith("_")} for a in actions]}

        if facts:
            CLOCK.jump(llm_latency(dia + "update"))
        with comment_op_scope(
            op_name="memory_system.update_memory_decision",
            category="update",
            comment="Decide how to update the memory store using a large language model.",
            metadata={"llm_model": LLM_MODEL},
        ) as op:
            self.ops[("update", dia)] = op.op_id
            if not facts:
                actions_rv = comment_variable(
                    {},
                    to_runtime=True,
                    class_name="update_action",
                    encoding_fn=json.dumps,
                    decoding_fn=json.loads,
                    category="llm_response",
                    comment="An empty list of memory update actions.",
                )
                comment_link(
                    source=facts_rv,
                    target=actions_rv,
                    comment="No new facts are extracted from the conversation snippet, "
                    "so the memory update actions are empty.",
                )
                return
            old_list = [{"id": t, "text": self.store[mid]["entry"]["memory"]} for t, mid in temp.items()]
            existing_rv = comment_variable(
                old_list,
                to_runtime=True,
                class_name="existing_memories",
                encoding_fn=dumps4,
                category="retrieved_memory",
                comment="Existing memories similar to the newly extracted facts.",
            )
            for mid in related:
                comment_link(
                    source=self.store[mid]["rv"],
                    target=existing_rv,
                    comment=f"The existing memory '{mid}' is retrieved for the update decision.",
                )
            template_rv = comment_variable(
                UPDATE_PROMPT,
                to_runtime=True,
                id_strategy=lambda _x: "custom-update-memory-prompt",
                category="prompt",
                comment="The memory update prompt template.",
                metadata={"op_type": "update"},
            )
            instruction = (
                f"{UPDATE_PROMPT}\n\nOld memory:\n{json.dumps(old_list, ensure_ascii=False)}\n\n"
                f"Retrieved facts: {json.dumps([t for _, t in facts], ensure_ascii=False)}"
            )
            instr_rv = comment_variable(
                instruction,
                to_runtime=True,
                class_name="memory_update_task_instruction",
                category="prompt",
                metadata={"op_type": "update"},
                comment="A concrete memory update task instruction.",
            )
            comment_link(source=facts_rv, target=instr_rv)
            comment_link(source=existing_rv, target=instr_rv)
            comment_link(source=template_rv, target=instr_rv)
            response = json.dumps(decision, ensure_ascii=False)
            raw_rv = comment_variable(
                f"```json\n{response}\n```",
                to_runtime=True,
                class_name="raw_memory_update_decision",
                category="llm_response",
                comment="A raw memory update decision response from a large language model.",
            )
            comment_link(source=instr_rv, target=raw_rv)
            removed_rv = comment_variable(
                response,
                to_runtime=True,
                class_name="memory_update_decision_with_code_block_removing",
                category="llm_response",
            )
            comment_link(source=raw_rv, target=removed_rv)
            actions_rv = comment_variable(
                decision,
                to_runtime=True,
                class_name="update_action",
                encoding_fn=dumps4,
                decoding_fn=json.loads,
                category="llm_response",
                comment="A list of memory update actions generated from an LLM.",
            )
            comment_link(
                source=removed_rv,
                target=actions_rv,
                comment=f"The LLM generates {len(actions)} memory update actions.",
            )
            for a in actions:
                if a["event"] == "ADD":
                    mid = self._new_id()
                    entry = {"id": mid, "memory": a["text"], "timestamp": ts}
                    rv = self._entry_rv(entry)
                    comment_link(
                        source=actions_rv,
                        target=rv,
                        comment=f"Based on the LLM's memory update decision, a new memory entry '{mid}' "
                        "is created and added to the memory store.",
                    )
                    self.store[mid] = {"entry": entry, "slot": a["_slot"], "prov": {dia}, "rv": rv}
                    self.slot_of[a["_slot"]] = mid
                elif a["event"] == "UPDATE":
                    mid = temp[a["id"]]
                    snap = dict(self.store[mid]["entry"])
                    with comment_mutation(
                        target=snap,
                        inputs=[actions_rv],
                        id_strategy="mem0-dict",
                        encoding_fn=dumps4,
                        decoding_fn=json.loads,
                        category="memory_entry",
                        mutation_comment="Based on the LLM's memory update decision, "
                        f"an existing memory unit '{mid}' is updated.",
                        mutation_category="llm_response",
                        reuse_op=True,
                    ) as scope:
                        snap["memory"] = a["text"]
                        snap["timestamp"] = ts
                    rec = self.store[mid]
                    rec["entry"], rec["rv"] = dict(snap), scope.result
                    rec["prov"].add(dia)
                    old_slot = rec["slot"]
                    if a.get("_slot") and a["_slot"] != old_slot:
                        self.slot_of.pop(old_slot, None)
                        rec["slot"] = a["_slot"]
                        self.slot_of[a["_slot"]] = mid
                elif a["event"] == "DELETE":
                    mid = temp[a["id"]]
                    marker = comment_variable(
                        "DELETED",
                        to_runtime=True,
                        class_name="delete_marker",
                        category="marker",
                        comment="It marks the memory unit is deleted successfully.",
                    )
                    comment_link(
                        source=self.store[mid]["rv"],
                        target=marker,
                        comment=f"The memory unit '{mid}' is deleted successfully.",
                    )
                    rec = self.store.pop(mid)
                    if self.slot_of.get(rec["slot"]) == mid:
                        del self.slot_of[rec["slot"]]

    def search(self, q: dict) -> dict:
        q_rv = emit_query(q)
        missing = bool([f for f in self.plan if f["kind"] == "miss" and f["q"] == q["qid"]])
        relevant = [mid for mid, r in self.store.items() if r["prov"] & set(q["evidence"])]
        scored = sorted(
            self.store, key=lambda mid: (-overlap(q["question"], self.store[mid]["entry"]["memory"]), mid)
        )
        chosen = [] if missing else list(relevant)
        for mid in scored:
            if len(chosen) >= self.top_k:
                break
            if mid not in chosen and not (missing and mid in relevant):
                chosen.append(mid)
        CLOCK.jump(llm_latency(q["qid"] + "embed", 40, 160))
        ids = []
        with comment_op_scope(
            op_name="memory_system.search_vector_store",
            category="retrieval",
            comment=f"A task query searches the memory store for top-{self.top_k} relevant memories.",
            metadata={"embedding_model": EMBED_MODEL, "top_k": self.top_k},
        ) as op:
            for rank, mid in enumerate(chosen):
                entry = self.store[mid]["entry"]
                score = (
                    round(0.9 - 0.07 * rank, 4)
                    if mid in relevant
                    else round(overlap(q["question"], entry["memory"]), 4)
                )
                comment_op(
                    inputs=[q_rv],
                    outputs=[
                        (
                            dict(entry),
                            {
                                "id_strategy": "mem0-dict",
                                "category": "memory_entry",
                                "encoding_fn": dumps4,
                                "decoding_fn": json.loads,
                                "comment": "A memory unit in the memory system.",
                            },
                        )
                    ],
                    comment=f"One memory '{mid}' is retrieved from the memory store. The threshold is set to "
                    f"0.0. Its score is {score}.",
                    reuse_op=True,
                )
                ids.append(self.store[mid]["rv"].full_node_id)
        context = "\n".join(
            f"{self.store[mid]['entry']['timestamp']}: {self.store[mid]['entry']['memory']}" for mid in chosen
        )
        return {"op": op.op_id, "node_ids": ids, "context": context}


class Rag:
    chunk_words = 45
    top_k = 2

    def __init__(self, conv: dict, plan: list[dict]):
        self.conv = conv
        self.plan = plan
        self.buffer: list[str] = []
        self.buffer_dias: list[str] = []
        self.docs: list[dict] = []  # {"doc": {...}, "prov": set, "rv"}
        self.ops: dict[tuple, str] = {}
        self.buffer_rv = None

    def _drop(self, kind: str) -> set[str]:
        return {f["at"] for f in self.plan if f["kind"] == kind}

    def _buffer_mutation(self, inputs, name="memory_system.message_buffer_update", reuse=False, comment=None):
        return comment_mutation(
            target=self.buffer,
            inputs=inputs,
            id_strategy=lambda _x: "message_buffer",
            encoding_fn=dumps4,
            decoding_fn=json.loads,
            category="message_buffer",
            mutation_name=None if reuse else name,
            mutation_category="update",
            reuse_op=reuse,
            mutation_comment=comment or "The message buffer is updated with a new message.",
        )

    def _flush(self) -> None:
        if not self.buffer:
            return
        kept = [
            (d, line)
            for d, line in zip(self.buffer_dias, self.buffer, strict=True)
            if d not in self._drop("add_drop")
        ]
        doc = {
            "id": f"doc-{len(self.docs):04d}",
            "content": "\n".join(line for _, line in kept),
            "timestamp": self.last_date,
        }
        CLOCK.jump(llm_latency(doc["id"] + self.conv["conv"], 60, 240))
        with comment_op_scope(
            op_name="memory_system.add",
            category="embedding",
            comment="The message buffer overflows the token limit, so its content is stored as one document.",
            metadata={"embedding_model": EMBED_MODEL, "max_tokens": self.chunk_words},
        ) as op:
            for d in self.buffer_dias:
                self.ops[("add", d)] = op.op_id
            rv = comment_variable(
                doc,
                to_runtime=True,
                id_strategy="rag-doc",
                encoding_fn=dumps4,
                decoding_fn=json.loads,
                category="memory_entry",
                comment="A document (memory unit) in the vector store.",
            )
            comment_op(
                inputs=[self.buffer_rv],
                outputs=[rv],
                reuse_op=True,
                comment=f"The buffered messages are stored as document '{doc['id']}'.",
            )
            with self._buffer_mutation(None, reuse=True, comment="The message buffer is cleared.") as scope:
                self.buffer.clear()
            self.buffer_rv = scope.result
        self.docs.append({"doc": doc, "prov": {d for d, _ in kept}, "rv": rv})
        self.buffer_dias = []

    def construct(self) -> None:
        self.buffer_rv = comment_variable(
            list(self.buffer),
            to_runtime=True,
            id_strategy=lambda _x: "message_buffer",
            encoding_fn=dumps4,
            decoding_fn=json.loads,
            category="message_buffer",
            comment="The message buffer of the RAG memory system.",
        )
        for m in all_messages(self.conv):
            msg_rv = emit_message(m)
            line = f"[{m['date']}] {msg_text(m['speaker'], m['text'])}"
            size = sum(len(words(x)) for x in self.buffer)
            if self.buffer and size + len(words(line)) > self.chunk_words:
                self._flush()
            self.last_date = m["date"]
            with self._buffer_mutation([msg_rv]) as scope:
                if m["dia"] not in self._drop("buffer_drop"):
                    self.buffer.append(line)
                    self.buffer_dias.append(m["dia"])
            self.buffer_rv = scope.result
            self.ops[("buffer", m["dia"])] = self._last_op_of(scope.result)
        self._flush()

    @staticmethod
    def _last_op_of(rv) -> str:
        from smartcomment import current_graph

        g = current_graph()
        edges = [e for e in g._driver.all_edges() if e.target_full_node_id == rv.full_node_id]
        return edges[-1].op_id

    def search(self, q: dict) -> dict:
        q_rv = emit_query(q)
        missing = bool([f for f in self.plan if f["kind"] == "miss" and f["q"] == q["qid"]])
        relevant = [i for i, d in enumerate(self.docs) if d["prov"] & set(q["evidence"])]
        scored = sorted(
            range(len(self.docs)), key=lambda i: (-overlap(q["question"], self.docs[i]["doc"]["content"]), i)
        )
        chosen = [] if missing else list(relevant)
        for i in scored:
            if len(chosen) >= self.top_k:
                break
            if i not in chosen and not (missing and i in relevant):
                chosen.append(i)
        CLOCK.jump(llm_latency(q["qid"] + "embed", 40, 160))
        with comment_op_scope(
            op_name="memory_system.retrieve",
            category="retrieval",
            comment=f"A task query retrieves the top-{self.top_k} relevant documents.",
            metadata={"embedding_model": EMBED_MODEL, "top_k": self.top_k},
        ) as op:
            for rank, i in enumerate(chosen):
                doc = self.docs[i]["doc"]
                comment_op(
                    inputs=[q_rv],
                    outputs=[
                        (
                            dict(doc),
                            {
                                "id_strategy": "rag-doc",
                                "category": "memory_entry",
                                "encoding_fn": dumps4,
                                "decoding_fn": json.loads,
                            },
                        )
                    ],
                    comment=f"Document '{doc['id']}' is retrieved at rank {rank + 1}.",
                    reuse_op=True,
                )
        return {
            "op": op.op_id,
            "node_ids": [self.docs[i]["rv"].full_node_id for i in chosen],
            "context": "\n\n".join(self.docs[i]["doc"]["content"] for i in chosen),
        }


class LongContext:
    window_words = 205

    def __init__(self, conv: dict, plan: list[dict]):
        self.conv = conv
        self.plan = plan
        self.unit: list[str] = []
        self.dias: list[str] = []
        self.versions: list[tuple[str, Any, list[str]]] = []  # (dia appended, rv after, dias held)
        self.ops: dict[tuple, str] = {}
        self.trimmed_by: dict[str, str] = {}  # dia -> op id that trimmed it
        self.protect: set[str] = set()

    def construct(self) -> None:
        drops = {f["at"] for f in self.plan if f["kind"] == "unit_drop"}
        self.protect = {f["at"] for f in self.plan if f["kind"] == "protect"}
        rv = comment_variable(
            list(self.unit),
            to_runtime=True,
            id_strategy=lambda _x: "long_context_memory",
            encoding_fn=dumps4,
            decoding_fn=json.loads,
            category="memory_entry",
            comment="The single memory unit of the long-context memory system.",
        )
        self.versions.append(("", rv, []))
        for m in all_messages(self.conv):
            msg_rv = emit_message(m)
            line = f"[{m['date']}] {msg_text(m['speaker'], m['text'])}"
            with comment_mutation(
                target=self.unit,
                inputs=[msg_rv],
                id_strategy=lambda _x: "long_context_memory",
                encoding_fn=dumps4,
                decoding_fn=json.loads,
                category="memory_entry",
                mutation_name="memory_system.memory_update",
                mutation_category="update",
                mutation_comment="The memory unit absorbs a new message and trims the oldest content to fit "
                "the "
                f"{self.window_words}-token window.",
                mutation_metadata={"max_tokens": self.window_words},
            ) as scope:
                if m["dia"] not in drops:
                    self.unit.append(line)
                    self.dias.append(m["dia"])
                trimmed = []
                while sum(len(words(x)) for x in self.unit) > self.window_words:
                    idx = next((i for i, d in enumerate(self.dias) if d not in self.protect), None)
                    if idx is None:
                        break
                    self.unit.pop(idx)
                    trimmed.append(self.dias.pop(idx))
            op_id = Rag._last_op_of(scope.result)
            self.ops[("update", m["dia"])] = op_id
            for d in trimmed:
                self.trimmed_by[d] = op_id
            self.versions.append((m["dia"], scope.result, list(self.dias)))

    def search(self, q: dict) -> dict:
        q_rv = emit_query(q)
        stale = bool([f for f in self.plan if f["kind"] == "stale_unit" and f["q"] == q["qid"]])
        rv, held = self.versions[-1][1], self.versions[-1][2]
        if stale:
            idx = max(i for i, (d, _, _) in enumerate(self.versions) if d in q["evidence"])
            rv, held = self.versions[idx - 1][1], self.versions[idx - 1][2]
        value = json.loads(rv.raw_value)
        CLOCK.jump(3)
        with comment_op_scope(
            op_name="memory_system.retrieve",
            category="retrieval",
            comment="The long-context memory returns its whole memory unit.",
        ) as op:
            comment_op(
                inputs=[q_rv],
                outputs=[rv],
                reuse_op=True,
                comment="The whole memory unit is returned as the retrieved context.",
            )
        return {"op": op.op_id, "node_ids": [rv.full_node_id], "context": "\n".join(value), "held": held}


SYSTEM_CLASSES = {"mem0": Mem0, "rag": Rag, "long_context": LongContext}


# --------------------------------------------------------------------------------------------------
# One run: construction, search and evaluation sessions, with export/re-import in between.


def questions_of(conv: dict) -> list[dict]:
    return [
        {"qid": qid, "question": text, "gold": gold, "evidence": ev}
        for qid, text, gold, ev in conv["questions"]
    ]


def run(system: str, conv: dict, plan: list[dict]) -> dict:
    key = f"{system}/{conv['conv']}"
    reseed(key)
    base = datetime.strptime(conv["sessions"][-1]["date"], "%Y-%m-%d %H:%M") + timedelta(days=30)
    CLOCK.set(base.replace(hour=9, minute=0, second=0))
    sim = SYSTEM_CLASSES[system](conv, plan)
    user_id = f"{conv['conv']}_{system}"
    with (
        comment_graph(
            graph_id=None, user_id=user_id, project_id="membase-traced", strict=(system == "mem0")
        ) as g,
        comment_session(session_name="memory_construction", category="construction"),
    ):
        sim.construct()
    graph = restart_graph(g)

    CLOCK.set(base.replace(hour=14, minute=0, second=0))
    qs = questions_of(conv)
    searched = {}
    with (
        comment_graph(graph=graph) as g,
        comment_session(session_name="memory_search", category="search"),
    ):
        for q in qs:
            searched[q["qid"]] = sim.search(q)
    graph = restart_graph(g)

    CLOCK.set(base.replace(hour=16, minute=30, second=0))
    qa_cat = QA_CATEGORY[conv["conv"]]
    results = {}
    with (
        comment_graph(graph=graph) as g,
        comment_session(session_name="memory_evaluation", category="evaluation"),
    ):
        qa_prompt_rv = comment_variable(
            QA_PROMPT,
            to_runtime=True,
            id_strategy=lambda _x: "question-answering-prompt",
            category="prompt",
            metadata={"op_type": "response"},
        )
        CLOCK.jump(llm_latency(key + "qa-batch", 3000, 9000))  # one batched QA call
        for q in qs:
            s = searched[q["qid"]]
            wrong = [f for f in plan if f["kind"] == "wrong_answer" and f["q"] == q["qid"]]
            if wrong:
                pred = wrong[0]["answer"]
            elif contains_gold(s["context"], q["gold"]):
                pred = q["gold"][0]
            else:
                pred = NOT_FOUND
            with comment_op_scope(
                op_name="question-answering",
                category=qa_cat,
                comment="Answer the question with the retrieved memories.",
                metadata={"llm_model": LLM_MODEL, "question_id": q["qid"]},
            ) as op:
                q_rv = emit_query(q)
                mem_rvs = [g.get_variable(nid) for nid in s["node_ids"]]
                pred_rv = comment_variable(
                    pred,
                    to_runtime=True,
                    class_name="prediction",
                    category="llm_response",
                    comment="The answer of the question-answering model.",
                )
                comment_op(inputs=[q_rv, qa_prompt_rv, *mem_rvs], outputs=[pred_rv], reuse_op=True)
            results[q["qid"]] = {
                "pred": pred,
                "pred_id": pred_rv.full_node_id,
                "qa_op": op.op_id,
                "query_id": q_rv.full_node_id,
            }
        judge_prompt_rv = comment_variable(
            JUDGE_PROMPT, to_runtime=True, id_strategy=lambda _x: "llm-judge-prompt", category="prompt"
        )
        CLOCK.jump(llm_latency(key + "judge-batch", 3000, 9000))
        for q in qs:
            r = results[q["qid"]]
            ok = contains_gold(r["pred"], q["gold"])
            with comment_op_scope(
                op_name="llm-judge",
                category="evaluation",
                comment="LLM-as-a-judge checks the prediction against the golden answers.",
                metadata={"llm_model": JUDGE_MODEL, "question_id": q["qid"]},
            ):
                q_rv = emit_query(q)
                gold_rv = comment_variable(
                    q["gold"], to_runtime=True, class_name="golden_answers", category="golden_answers"
                )
                pred_rv = g.get_variable(r["pred_id"])
                resp_rv = comment_variable(
                    "yes" if ok else "no",
                    to_runtime=True,
                    class_name="judge_response",
                    category="llm_response",
                )
                comment_op(inputs=[q_rv, gold_rv, pred_rv, judge_prompt_rv], outputs=[resp_rv], reuse_op=True)
                score_rv = comment_variable(
                    1.0 if ok else 0.0, to_runtime=True, class_name="judge_score", category="metric"
                )
                comment_op(inputs=[resp_rv], outputs=[score_rv], reuse_op=True)
            r.update(ok=ok, gold_id=gold_rv.full_node_id, score_id=score_rv.full_node_id)
    graph = g
    return {"graph": graph, "sim": sim, "searched": searched, "results": results, "questions": qs}


# --------------------------------------------------------------------------------------------------
# Labelling and verification.


def label(system: str, out: dict, fault: dict) -> str:
    """The op id of the decisive faulty operation for one planted fault."""
    sim, kind = out["sim"], fault["kind"]
    if kind == "drop_fact":
        return sim.ops[("extract", fault["at"])]
    if kind in ("bad_update", "bad_delete", "delete_add"):
        return sim.ops[("update", fault["at"])]
    if kind == "buffer_drop":
        return sim.ops[("buffer", fault["at"])]
    if kind == "add_drop":
        return sim.ops[("add", fault["at"])]
    if kind == "unit_drop":
        return sim.ops[("update", fault["at"])]
    if kind == "trim":
        return fault["op"]
    if kind in ("miss", "stale_unit"):
        return out["searched"][fault["q"]]["op"]
    if kind == "wrong_answer":
        return out["results"][fault["q"]]["qa_op"]
    raise ValueError(kind)


def faults_with_trims(system: str, conv: dict, plan: list[dict], out: dict) -> list[dict]:
    """The planted faults plus, for long_context, the trims that cost an answer."""
    faults = [dict(f) for f in plan]
    if system == "long_context":
        planted = {f["q"] for f in plan}
        for q in out["questions"]:
            if q["qid"] in planted or out["results"][q["qid"]]["ok"]:
                continue
            trimmed = [out["sim"].trimmed_by[d] for d in q["evidence"] if d in out["sim"].trimmed_by]
            if trimmed:
                faults.append({"kind": "trim", "q": q["qid"], "at": q["evidence"][0], "op": trimmed[0]})
    return faults


def verify(system: str, conv: dict, plan: list[dict], out: dict, faults: list[dict]) -> None:
    failed = {qid for qid, r in out["results"].items() if not r["ok"]}
    labelled = {f["q"] for f in faults}
    if failed != labelled:
        raise SystemExit(f"{system}/{conv['conv']}: failed {sorted(failed)} but labelled {sorted(labelled)}")
    if len(labelled) != len(faults):
        raise SystemExit(f"{system}/{conv['conv']}: two faults on one question")
    # Counterfactual: remove one fault (keep the others) and the question must be answered correctly.
    for f in faults:
        if f["kind"] == "trim":
            cf_plan = [*plan, {"kind": "protect", "at": f["at"]}]
        else:
            cf_plan = [x for x in plan if x is not f and x != f]
        cf = run(system, conv, cf_plan)
        if not cf["results"][f["q"]]["ok"]:
            raise SystemExit(f"{system}/{conv['conv']}: repairing {f} does not fix {f['q']}")
        others = {qid for qid, r in cf["results"].items() if not r["ok"]}
        if f["kind"] != "trim" and others != labelled - {f["q"]}:
            raise SystemExit(
                f"{system}/{conv['conv']}: repairing {f} changes other outcomes: {sorted(others)}"
            )


def relativise(obj: Any) -> Any:
    """Make recorded source file names repository-relative (they are absolute paths from the stack)."""
    if isinstance(obj, dict):
        return {
            k: (_rel(v) if k in ("filename", "trigger_point") and isinstance(v, str) else relativise(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [relativise(v) for v in obj]
    return obj


def _rel(path: str) -> str:
    root = str(REPO) + "/"
    return (
        path.replace(root, "")
        if path.startswith(root)
        else re.sub(r"^.*/site-packages/", "site-packages/", path)
    )


def build(out_dir: Path, check: bool = True) -> dict:
    if out_dir.exists():
        shutil.rmtree(out_dir)
    manifest = {"dataset_source": DATASET_SOURCE, "graphs": []}
    for system in SYSTEMS:
        (out_dir / system).mkdir(parents=True)
        for conv in CONVERSATIONS:
            plan = PLANS[(system, conv["conv"])]
            out = run(system, conv, plan)
            faults = faults_with_trims(system, conv, plan, out)
            if check:
                verify(system, conv, plan, out, faults)
            filename = f"{conv['conv']}.json"
            data = relativise(out["graph"].export_graph())
            data["metadata"] = {
                **data.get("metadata", {}),
                "memtracebench_graph_filename": filename,
                "memtracebench_dataset_source": DATASET_SOURCE,
            }
            qs = {q["qid"]: q for q in out["questions"]}
            annotations = []
            for f in sorted(faults, key=lambda f: int(f["q"][1:])):
                q, r = qs[f["q"]], out["results"][f["q"]]
                annotations.append(
                    {
                        "query_id": r["query_id"],
                        "query": q["question"],
                        "golden_answers": q["gold"],
                        "golden_answers_id": r["gold_id"],
                        "prediction": r["pred"],
                        "prediction_id": r["pred_id"],
                        "source_evidence_ids": [f"{d}@1" for d in q["evidence"]],
                        "final_error_type": FAULT_TYPE[f["kind"]],
                        "final_op_id": label(system, out, f),
                    }
                )
            data["data"]["annotations"] = annotations
            (out_dir / system / filename).write_text(json.dumps(data, ensure_ascii=False) + "\n")
            manifest["graphs"].append(
                {
                    "split": system,
                    "file": f"{system}/{filename}",
                    "questions": len(qs),
                    "correct": sum(r["ok"] for r in out["results"].values()),
                    "faults": [
                        {
                            "question_id": f["q"],
                            "fault": f["kind"],
                            "error_type": FAULT_TYPE[f["kind"]],
                            **({"at": f["at"]} if "at" in f else {}),
                        }
                        for f in faults
                    ],
                }
            )
            print(
                f"{system:13s} {conv['conv']:12s} questions={len(qs)} failures={len(annotations)}", flush=True
            )
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "set")
    parser.add_argument("--no-check", action="store_true", help="skip the counterfactual label check")
    args = parser.parse_args()
    manifest = build(args.out, check=not args.no_check)
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main()
