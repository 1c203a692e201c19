"""MemBase-style graphs recorded with the real smartcomment 0.1.2, with planted faults and their labels.

They follow the conventions of REFERENCE.md that memtrace's own graphs never exercise: values stored
as `repr()` (quoted strings), content identity (one prediction, score or DELETED node shared by many
cases), search steps linking the query straight to the memory entries they re-emit, an answer step
of category `evaluation`, chained edges inside one operation, JSON text chunks. Each graph carries
MemTraceBench annotations naming the planted faulty operation, so the set doubles as the tuning
fixture of `memtrace bench memtracebench`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smartcomment import (
    comment_graph,
    comment_mutation,
    comment_op,
    comment_op_scope,
    comment_session,
    current_graph,
    current_op,
)

IDK = "I don't know."
DELETED = "DELETED"
Item = tuple[Any, dict[str, Any]]


def stable(name: str) -> Callable[[Any], str]:
    """Identity by a fixed name, so later writes become versions of the same node."""
    return lambda _value: name


@dataclass
class Question:
    """A question of the evaluation stage; `fault` names the planted fault (None: answered right).

    `blame` is the key of the recorded operation a correct attribution names (see `Recorded.ops`).
    """

    text: str
    gold: list[str]
    evidence: list[str]
    found: list[str]
    prediction: str
    fault: str | None = None
    blame: str | None = None
    #: Memories a second retrieval round finds after an LLM sufficiency check (EverMemOS-style).
    second_round: list[str] | None = None


@dataclass
class Recorded:
    """One recorded graph: the export with annotations, and the op ids by their fixture key."""

    graph: dict[str, Any]
    ops: dict[str, str] = field(default_factory=dict)
    queries: dict[str, str] = field(default_factory=dict)
    predictions: dict[str, str] = field(default_factory=dict)


def _node_id(class_name: str | None, value_text: str) -> str:
    """The full id of the latest node with this class name and stored text (content identity)."""
    graph = current_graph()
    assert graph is not None
    ids = [
        n.full_node_id
        for n in graph.get_all_nodes()
        if n.class_name == class_name and n.raw_value == value_text
    ]
    return ids[-1]


def _open_op() -> str:
    op = current_op()
    assert op is not None
    return op.op_id


def _query(question: Question) -> Item:
    return (
        question.text,
        {"class_name": "query", "category": "message & query", "metadata": {"evidence": question.evidence}},
    )


def _message(name: str, text: str) -> Item:
    return (text, {"id_strategy": stable(name), "category": "message"})


def _judge(question: Question) -> None:
    right = question.fault is None
    comment_op(
        op_name="llm-judge",
        category="evaluation",
        inputs=[
            _query(question),
            (question.prediction, {"class_name": "prediction"}),
            (question.gold, {"class_name": "golden_answers"}),
        ],
        outputs=[
            ("CORRECT" if right else "WRONG", {"class_name": "judge_response", "category": "llm_response"}),
            (1.0 if right else 0.0, {"class_name": "judge_score"}),
        ],
    )


def _answer(question: Question, context: list[Item]) -> str:
    """question-answering, categorised `evaluation` as MemBase does; the prediction is content-identified."""
    prompt = ("Answer from the memories.", {"id_strategy": stable("question-answering-prompt")})
    op = comment_op(
        op_name="question-answering",
        category="evaluation",
        inputs=[_query(question), prompt, *context],
        outputs=[(question.prediction, {"class_name": "prediction"})],
    )
    assert op is not None
    return op.op_id


def _annotate(recorded: Recorded, questions: list[Question], graph: dict[str, Any]) -> dict[str, Any]:
    """MemTraceBench annotations for the failed questions, pointing at the planted ops."""
    annotations = []
    for q in questions:
        if q.fault is None:
            continue
        assert q.blame is not None
        annotations.append(
            {
                "query_id": recorded.queries[q.text],
                "query": repr(q.text),
                "golden_answers": q.gold,
                "golden_answers_id": None,
                "prediction": repr(q.prediction),
                "prediction_id": recorded.predictions[q.text],
                "source_evidence_ids": [f"{e}@1" for e in q.evidence],
                "final_error_type": q.fault,
                "final_op_id": recorded.ops[q.blame],
            }
        )
    graph["data"]["annotations"] = annotations
    return graph


# -- Mem0 ---------------------------------------------------------------------------------------


@dataclass
class Mem0Step:
    """One message through Mem0: the facts extraction kept and the update events it led to."""

    message: str
    text: str
    facts: list[str]
    events: list[tuple[str, str, str | None]]


class _Mem0Memory:
    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Any]] = {}

    def item(self, mem_id: str) -> Item:
        return (
            self.entries[mem_id],
            {"id_strategy": stable(mem_id), "category": "memory_entry", "encoding_fn": json.dumps},
        )


def _mem0_extract(step: Mem0Step) -> str:
    """extract_facts: message -> raw LLM response -> code block removed -> facts, chained in one op."""
    with comment_op_scope(op_name="memory_system.extract_facts", category="extraction"):
        prompt = ("Extract personal facts.", {"id_strategy": stable("fact-extraction-system-prompt")})
        raw = "```json\n" + json.dumps({"facts": step.facts}) + "\n```"
        raw_item = (raw, {"class_name": "raw_fact_extraction_response", "category": "llm_response"})
        comment_op(inputs=[_message(step.message, step.text), prompt], outputs=[raw_item])
        cleaned = (
            json.dumps({"facts": step.facts}),
            {"class_name": "fact_extraction_response_with_code_block_removing"},
        )
        comment_op(inputs=[raw_item], outputs=[cleaned])
        comment_op(inputs=[cleaned], outputs=[(step.facts, {"class_name": "extracted_facts"})])
        return _open_op()


def _mem0_update(memory: _Mem0Memory, step: Mem0Step) -> str:
    """update_memory_decision: ADD links to a new entry, UPDATE mutates one, DELETE links to DELETED."""
    with comment_op_scope(op_name="memory_system.update_memory_decision", category="update"):
        decision = json.dumps([{"event": e, "id": i, "text": t} for e, i, t in step.events])
        action = (decision, {"class_name": "update_action", "category": "llm_response"})
        comment_op(inputs=[(step.facts, {"class_name": "extracted_facts"})], outputs=[action])
        for event, mem_id, text in step.events:
            if event == "ADD":
                memory.entries[mem_id] = {"id": mem_id, "memory": text, "timestamp": "2023-05-08"}
                comment_op(inputs=[action], outputs=[memory.item(mem_id)])
            elif event == "UPDATE":
                entry = memory.entries[mem_id]
                with comment_mutation(
                    target=entry,
                    id_strategy=stable(mem_id),
                    category="memory_entry",
                    encoding_fn=json.dumps,
                    inputs=[action],
                    reuse_op=True,
                ):
                    entry["memory"] = text
            elif event == "DELETE":
                comment_op(inputs=[memory.item(mem_id)], outputs=[(DELETED, {"category": "memory_entry"})])
        return _open_op()


def _second_round(memory: _Mem0Memory, q: Question, first: list[Item]) -> list[Item]:
    """An LLM judges the first round insufficient and asks a follow-up query; a second search reads
    the question and the follow-up and returns more memories."""
    follow_up = (f"{q.text} (details)", {"class_name": "follow_up_query", "category": "message & query"})
    comment_op(
        op_name="memory_system.sufficiency_check",
        category="llm",
        inputs=[_query(q), *first],
        outputs=[follow_up],
    )
    assert q.second_round is not None
    more = [memory.item(m) for m in q.second_round]
    with comment_op_scope(op_name="memory_system.search_vector_store", category="retrieval"):
        comment_op(inputs=[_query(q), follow_up], outputs=more, comment="second round")
    return [*first, *more]


def record_mem0(graph_id: str, steps: list[Mem0Step], questions: list[Question]) -> Recorded:
    """A Mem0 run: construction, then search + question-answering, then llm-judge, as three sessions."""
    memory = _Mem0Memory()
    recorded = Recorded({})
    with comment_graph(graph_id=graph_id, metadata={"memtracebench_dataset_source": "locomo"}) as graph:
        with comment_session(session_name="construction"):
            for step in steps:
                recorded.ops[f"extract {step.message}"] = _mem0_extract(step)
                recorded.ops[f"update {step.message}"] = _mem0_update(memory, step)
        with comment_session(session_name="search"):
            for q in questions:
                with comment_op_scope(op_name="memory_system.search_vector_store", category="retrieval"):
                    found = [memory.item(m) for m in q.found]
                    comment_op(inputs=[_query(q)], outputs=found or [], comment="cosine scores")
                    recorded.ops[f"search {q.text}"] = _open_op()
                if q.second_round is not None:
                    found = _second_round(memory, q, found)
                    recorded.ops[f"second search {q.text}"] = _last_op_id("memory_system.search_vector_store")
                recorded.ops[f"answer {q.text}"] = _answer(q, found)
                recorded.queries[q.text] = _node_id("query", repr(q.text))
                recorded.predictions[q.text] = _node_id("prediction", repr(q.prediction))
        with comment_session(session_name="evaluation"):
            for q in questions:
                _judge(q)
        exported = graph.export_graph()
    return _finish(recorded, exported, questions)


def _finish(recorded: Recorded, exported: dict[str, Any], questions: list[Question]) -> Recorded:
    for q in questions:
        if q.fault is not None and q.blame is None:
            q.blame = {"RetrievalError": "search", "ResponseError": "answer"}[q.fault] + f" {q.text}"
    recorded.graph = _annotate(recorded, questions, exported)
    return recorded


MEM0_A_STEPS = [
    Mem0Step(
        "D1:1",
        "Caroline: I adopted a puppy last week, his name is Pepper!",
        ["Caroline adopted a puppy"],  # ExtractionError: the name is dropped
        [("ADD", "mem-1", "Caroline adopted a puppy")],
    ),
    Mem0Step(
        "D1:2",
        "Caroline: I work as a nurse at the children's hospital.",
        ["Caroline works as a nurse at the children's hospital"],
        [("ADD", "mem-2", "Caroline works as a nurse at the children's hospital")],
    ),
    Mem0Step(
        "D1:3",
        "Caroline: My favourite colour has always been emerald green.",
        ["Caroline's favourite colour is emerald green"],
        [("ADD", "mem-3", "Caroline's favourite colour is emerald green")],
    ),
    Mem0Step(
        "D1:4",
        "Caroline: We moved to Boston in March, near the harbour.",
        ["Caroline moved to Boston in March"],
        [("ADD", "mem-4", "Caroline moved to Boston in March")],
    ),
    Mem0Step(
        "D1:5",
        "Caroline: My sister Ana visits every Sunday for dinner.",
        ["Caroline's sister is Ana, she visits every Sunday"],
        [("ADD", "mem-5", "Caroline's sister is Ana, she visits every Sunday")],
    ),
    Mem0Step(
        "D2:1",
        "Caroline: Work has been busy lately, lots of night shifts.",
        ["Caroline works night shifts"],
        # UpdateError: the job is overwritten; DeletionError: the colour is dropped
        [("UPDATE", "mem-2", "Caroline works night shifts"), ("DELETE", "mem-3", None)],
    ),
    Mem0Step(
        "D2:2",
        "Caroline: I finally finished painting the spare room yellow.",
        ["Caroline painted the spare room yellow"],
        [("ADD", "mem-6", "Caroline painted the spare room yellow")],
    ),
]

MEM0_A_QUESTIONS = [
    Question(
        "What is the name of Caroline's puppy?",
        ["Pepper"],
        ["D1:1"],
        ["mem-1"],
        IDK,
        "ExtractionError",
        "extract D1:1",
    ),
    Question(
        "What does Caroline work as?",
        ["nurse"],
        ["D1:2"],
        ["mem-2"],
        "She works night shifts.",
        "UpdateError",
        "update D2:1",
    ),
    Question(
        "What is Caroline's favourite colour?",
        ["emerald green"],
        ["D1:3"],
        ["mem-6"],
        IDK,
        "DeletionError",
        "update D2:1",
    ),
    Question(
        "Where did Caroline move to in March?", ["Boston"], ["D1:4"], ["mem-6"], "Seattle.", "RetrievalError"
    ),
    Question(
        "What is the name of Caroline's sister?", ["Ana"], ["D1:5"], ["mem-5"], "Maria.", "ResponseError"
    ),
    Question(
        "What colour did Caroline paint the spare room?", ["yellow"], ["D2:2"], ["mem-6"], "Yellow.", None
    ),
    # Both rounds miss: the first round is the earliest after which every round missed.
    Question(
        "Which room did Caroline paint?",
        ["the spare room"],
        ["D2:2"],
        ["mem-5"],
        "The kitchen.",
        "RetrievalError",
        second_round=["mem-4"],
    ),
]

MEM0_B_STEPS = [
    Mem0Step(
        "D1:1",
        "Melanie: I signed up for a pottery class on Tuesdays.",
        ["Melanie signed up for a pottery class on Tuesdays"],
        [("ADD", "mem-1", "Melanie signed up for a pottery class on Tuesdays")],
    ),
    Mem0Step(
        "D1:2",
        "Melanie: My son Leo just turned seven and loves dinosaurs.",
        ["Melanie has a son"],  # ExtractionError: name and age dropped
        [("ADD", "mem-2", "Melanie has a son")],
    ),
    Mem0Step(
        "D1:3",
        "Melanie: I drive a red Volvo that I bought in 2019.",
        ["Melanie drives a red Volvo bought in 2019"],
        [("ADD", "mem-3", "Melanie drives a red Volvo bought in 2019")],
    ),
    Mem0Step(
        "D1:4",
        "Melanie: I am allergic to peanuts, so I always carry an epipen.",
        ["Melanie is allergic to peanuts"],
        [("ADD", "mem-4", "Melanie is allergic to peanuts")],
    ),
    Mem0Step(
        "D2:1",
        "Melanie: I might sell the car soon, it needs repairs.",
        ["Melanie might sell her car"],
        # DeletionError: the car is deleted though only a sale was considered; UpdateError on the class
        [("DELETE", "mem-3", None), ("UPDATE", "mem-1", "Melanie takes a class")],
    ),
    Mem0Step(
        "D2:2",
        "Melanie: I started listening to jazz on the way to work.",
        ["Melanie listens to jazz"],
        [("ADD", "mem-5", "Melanie listens to jazz")],
    ),
    Mem0Step(
        "D2:3",
        "Melanie: Actually the jazz thing was my husband, not me.",
        [],
        [("DELETE", "mem-5", None)],  # a second deletion: both link to the one shared DELETED node
    ),
]

MEM0_B_QUESTIONS = [
    # The memory was found, yet the answer abstains: the same "I don't know." node as later failures.
    Question(
        "Why does Melanie carry an epipen?",
        ["she is allergic to peanuts"],
        ["D1:4"],
        ["mem-4"],
        IDK,
        "ResponseError",
    ),
    Question(
        "What day is Melanie's pottery class?",
        ["Tuesday"],
        ["D1:1"],
        ["mem-1"],
        IDK,
        "UpdateError",
        "update D2:1",
    ),
    Question(
        "How old is Melanie's son Leo?",
        ["seven"],
        ["D1:2"],
        ["mem-2"],
        IDK,
        "ExtractionError",
        "extract D1:2",
    ),
    Question(
        "What car does Melanie drive?",
        ["red Volvo"],
        ["D1:3"],
        ["mem-1"],
        IDK,
        "DeletionError",
        "update D2:1",
    ),
    Question("What is Melanie allergic to?", ["peanuts"], ["D1:4"], ["mem-1"], "Cats.", "RetrievalError"),
    Question(
        "Which food allergy does Melanie have?",
        ["peanuts"],
        ["D1:4"],
        ["mem-4"],
        "Shellfish.",
        "ResponseError",
    ),
]


# -- RAG ----------------------------------------------------------------------------------------


def record_rag(
    graph_id: str, messages: list[tuple[str, str]], dropped: set[str], questions: list[Question]
) -> Recorded:
    """A RAG run: a message buffer mutated per turn, documents of two turns stored as JSON text
    chunks (newlines escaped), retrieve linking the query to the documents it returns.

    Messages in `dropped` are cut from their document by `memory_system.add` (an extraction fault).
    """
    recorded = Recorded({})
    documents: dict[str, str] = {}
    buffer: list[str] = []

    def doc_item(doc_id: str) -> Item:
        return (
            documents[doc_id],
            {"id_strategy": stable(doc_id), "category": "memory_entry", "encoding_fn": json.dumps},
        )

    with comment_graph(graph_id=graph_id, metadata={"memtracebench_dataset_source": "locomo"}) as graph:
        with comment_session(session_name="construction"):
            for i, (name, text) in enumerate(messages):
                with comment_mutation(
                    target=buffer,
                    id_strategy=stable("message_buffer"),
                    inputs=[_message(name, text)],
                    mutation_name="memory_system.message_buffer_update",
                ):
                    buffer.append(f"[{name}] {text}")
                if i % 2 == 1:
                    doc_id = f"doc-{i // 2 + 1}"
                    kept = [line for line in buffer if _label(line) not in dropped]
                    documents[doc_id] = "\n".join(kept)
                    op = comment_op(
                        op_name="memory_system.add",
                        category="construction",
                        inputs=[(list(buffer), {"id_strategy": stable("message_buffer")})],
                        outputs=[doc_item(doc_id)],
                    )
                    assert op is not None
                    for line in buffer:
                        recorded.ops[f"add {_label(line)}"] = op.op_id
                    with comment_mutation(
                        target=buffer,
                        id_strategy=stable("message_buffer"),
                        mutation_name="memory_system.message_buffer_update",
                    ):
                        buffer.clear()
        with comment_session(session_name="search"):
            for q in questions:
                found = [doc_item(d) for d in q.found]
                with comment_op_scope(op_name="memory_system.retrieve", category="retrieval"):
                    comment_op(inputs=[_query(q)], outputs=found)
                    recorded.ops[f"search {q.text}"] = _open_op()
                recorded.ops[f"answer {q.text}"] = _answer(q, found)
                recorded.queries[q.text] = _node_id("query", repr(q.text))
                recorded.predictions[q.text] = _node_id("prediction", repr(q.prediction))
        with comment_session(session_name="evaluation"):
            for q in questions:
                _judge(q)
        exported = graph.export_graph()
    return _finish(recorded, exported, questions)


RAG_MESSAGES = [
    ("D1:1", "Jon: I opened my dance studio downtown in June."),
    ("D1:2", "Gina: That is amazing, what is it called?"),
    ("D1:3", "Jon: It is called Rhythm House, after my grandmother's club."),
    ("D1:4", "Gina: I lost my job at the bank, so I am starting an online clothing store."),
    ("D1:5", "Jon: My favourite dance style is the tango."),
    ("D1:6", "Gina: My store will sell vintage jackets."),
]

RAG_QUESTIONS = [
    Question(
        "What is Jon's dance studio called?",
        ["Rhythm House"],
        ["D1:3"],
        ["doc-1"],
        "Jon's Studio.",
        "RetrievalError",
    ),
    Question(
        "Where did Gina work before?", ["the bank"], ["D1:4"], ["doc-2"], "At a school.", "ResponseError"
    ),
    Question(
        "What is Jon's favourite dance style?",
        ["tango"],
        ["D1:5"],
        ["doc-3"],
        IDK,
        "ExtractionError",
        "add D1:5",
    ),
    Question(
        "What will Gina's store sell?", ["vintage jackets"], ["D1:6"], ["doc-3"], "Vintage jackets.", None
    ),
    Question("When did Jon open his dance studio?", ["June"], ["D1:1"], ["doc-1"], "In June.", None),
]


# -- long context -------------------------------------------------------------------------------


def record_long_context(
    graph_id: str, messages: list[tuple[str, str]], window: int, questions: list[Question]
) -> Recorded:
    """A long-context run: one memory unit mutated per message, trimming its oldest messages inside
    the same operation once it holds more than `window`; retrieve re-emits the whole unit."""
    recorded = Recorded({})
    memory: list[str] = []

    def unit() -> Item:
        return (memory, {"id_strategy": stable("memory"), "category": "memory_entry"})

    with comment_graph(graph_id=graph_id, metadata={"memtracebench_dataset_source": "locomo"}) as graph:
        with comment_session(session_name="construction"):
            for name, text in messages:
                trimmed: list[str] = []
                with comment_mutation(
                    target=memory,
                    id_strategy=stable("memory"),
                    category="memory_entry",
                    inputs=[_message(name, text)],
                    mutation_name="memory_system.memory_update",
                    mutation_category="update",
                ):
                    memory.append(f"[{name}] {text}")
                    while len(memory) > window:
                        trimmed.append(memory.pop(0))
                for line in trimmed:
                    recorded.ops[f"trim {_label(line)}"] = _last_op_id("memory_system.memory_update")
        with comment_session(session_name="search"):
            for q in questions:
                with comment_op_scope(op_name="memory_system.retrieve", category="retrieval"):
                    comment_op(inputs=[_query(q)], outputs=[unit()])
                    recorded.ops[f"search {q.text}"] = _open_op()
                recorded.ops[f"answer {q.text}"] = _answer(q, [unit()])
                recorded.queries[q.text] = _node_id("query", repr(q.text))
                recorded.predictions[q.text] = _node_id("prediction", repr(q.prediction))
        with comment_session(session_name="evaluation"):
            for q in questions:
                _judge(q)
        exported = graph.export_graph()
    return _finish(recorded, exported, questions)


def _label(line: str) -> str:
    """The message name a `[D1:3] text` line is tagged with."""
    return line[1:].split("]")[0]


def _last_op_id(op_name: str) -> str:
    graph = current_graph()
    assert graph is not None
    return [op.op_id for op in graph.get_all_operations() if op.op_name == op_name][-1]


LONG_CONTEXT_MESSAGES = [
    ("D1:1", "Nate: I got a turtle called Shelly for my birthday."),
    ("D1:2", "Joanna: I am writing a screenplay about a haunted lighthouse."),
    ("D1:3", "Nate: My favourite game right now is Xenoblade."),
    ("D1:4", "Joanna: I moved my writing desk next to the window."),
    ("D1:5", "Nate: I won my first regional gaming tournament last weekend."),
    ("D1:6", "Joanna: My screenplay got accepted into a film festival in Austin."),
    ("D1:7", "Nate: I dyed my hair purple for the tournament."),
]

LONG_CONTEXT_QUESTIONS = [
    Question("What is the name of Nate's turtle?", ["Shelly"], ["D1:1"], [], IDK, "UpdateError", "trim D1:1"),
    Question(
        "What is Joanna's screenplay about?",
        ["a haunted lighthouse"],
        ["D1:2"],
        [],
        IDK,
        "UpdateError",
        "trim D1:2",
    ),
    Question("What colour did Nate dye his hair?", ["purple"], ["D1:7"], [], "Blue.", "ResponseError"),
    Question(
        "Where is the film festival that accepted Joanna's screenplay?",
        ["Austin"],
        ["D1:6"],
        [],
        "Austin.",
        None,
    ),
    Question(
        "What did Nate win last weekend?",
        ["regional gaming tournament"],
        ["D1:5"],
        [],
        "A raffle.",
        "ResponseError",
    ),
]


def membase_graphs() -> dict[str, list[Recorded]]:
    """The fixture set by split: two Mem0 conversations, one RAG and one long-context conversation."""
    return {
        "mem0": [
            record_mem0("conv-h01", MEM0_A_STEPS, MEM0_A_QUESTIONS),
            record_mem0("conv-h02", MEM0_B_STEPS, MEM0_B_QUESTIONS),
        ],
        "rag": [record_rag("conv-h01", RAG_MESSAGES, {"D1:5"}, RAG_QUESTIONS)],
        "long_context": [record_long_context("conv-h01", LONG_CONTEXT_MESSAGES, 5, LONG_CONTEXT_QUESTIONS)],
    }


def write_membase_bench(root: Path) -> Path:
    """The fixture set in MemTraceBench's layout `<root>/<split>/<graph>.json`; returns root."""
    for split, recorded in membase_graphs().items():
        (root / split).mkdir(parents=True, exist_ok=True)
        for item in recorded:
            name = f"{item.graph['graph_id']}.json"
            item.graph["metadata"]["memtracebench_graph_filename"] = name
            (root / split / name).write_text(json.dumps(item.graph))
    return root


if __name__ == "__main__":
    import sys

    print(write_membase_bench(Path(sys.argv[1])))
