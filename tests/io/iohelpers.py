"""Helpers for the import/export tests: a graph recorded with the real smartcomment, a native run."""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Callable
from typing import Any

from smartcomment import (
    comment_fn,
    comment_graph,
    comment_link,
    comment_mutation,
    comment_op,
    comment_op_scope,
    comment_session,
    comment_variable,
)

from memtrace.graph import Edge, Operation, Run, Store, VariableVersion
from memtrace.graph.model import RUN_COMPLETE
from memtrace.graph.rows import edge_row, op_row, var_row
from memtrace.graph.values import encode_value


def stable(name: str) -> Callable[[Any], str]:
    """A smartcomment identity strategy that gives versions instead of content ids."""
    return lambda _value: name


@comment_fn(
    op_name="tokenize",
    category="nlp",
    param_options={"text": {"id_strategy": stable("text")}, "-o": {"id_strategy": stable("tokens")}},
)
def tokenize(text: str) -> list[str]:
    """Split text on whitespace."""
    return text.split()


def fresh_graph() -> dict[str, Any]:
    """A deep copy of the graph below, recorded once per test session."""
    return copy.deepcopy(_recorded_graph())


@functools.cache
def _recorded_graph() -> dict[str, Any]:
    return build_graph()


def build_graph() -> dict[str, Any]:
    """A small but complete graph: 3 sessions, versions, mutations, links, sentinels, QA + judge."""
    with comment_graph(graph_id="graph-test", user_id="alice", project_id="proj", metadata={"k": 1}) as graph:
        with comment_session(session_name="construction", comment="ingest messages"):
            msg1 = comment_variable(
                "Caroline moved to Boston", id_strategy=stable("D1:1"), category="message", to_runtime=True
            )
            comment_variable("She likes tea", id_strategy=stable("D1:2"), category="message")
            score = comment_variable(0.5, id_strategy=stable("score"), to_runtime=True)
            with comment_op_scope(op_name="memory_system.extract_facts", category="extraction"):
                comment_op(
                    inputs=[msg1],
                    outputs=[(["Caroline lives in Boston"], {"class_name": "extracted_facts"})],
                )
            toks = tokenize("hello big world")
            comment_op(op_name="seed", inputs=[], outputs=[(42, {"id_strategy": stable("seed")})])
            memory = ["Caroline lives in NYC"]
            comment_variable(memory, id_strategy=stable("mem-1"), category="memory_entry")
            with comment_mutation(
                target=memory,
                id_strategy=stable("mem-1"),
                category="memory_entry",
                inputs=[(toks, {"id_strategy": stable("tokens")})],
                mutation_name="memory.update",
            ):
                memory[0] = "Caroline lives in Boston"
        with comment_session(session_name="process"):
            comment_op(op_name="rescore", inputs=[score], outputs=[(0.7, {"id_strategy": stable("score")})])
            cfg = {"lr": 0.1}
            with comment_mutation(target=cfg, id_strategy=stable("cfg"), mutation_name="cfg.update"):
                cfg["lr"] = 0.01
            with comment_op_scope(op_name="fanout"):
                comment_link(
                    source=(memory, {"id_strategy": stable("mem-1"), "category": "memory_entry"}),
                    target=("summary: 1 item", {"id_strategy": stable("summary")}),
                    category="primary",
                )
        with comment_session(session_name="evaluation"):
            for question, gold, prediction, verdict in (
                ("Where did Caroline move?", ["Boston"], "NYC", "0.0"),
                ("What does she like?", ["tea"], "tea", "1.0"),
            ):
                query = (
                    question,
                    {
                        "class_name": "query",
                        "category": "message & query",
                        "metadata": {"evidence": ["D1:1"], "category": 1},
                    },
                )
                comment_op(
                    op_name="question-answering",
                    category="response",
                    inputs=[query, (memory, {"id_strategy": stable("mem-1"), "category": "memory_entry"})],
                    outputs=[(prediction, {"class_name": "prediction"})],
                )
                comment_op(
                    op_name="llm-judge",
                    category="evaluation",
                    inputs=[
                        query,
                        (prediction, {"class_name": "prediction"}),
                        (gold, {"class_name": "golden_answers"}),
                    ],
                    outputs=[
                        (f"verdict {verdict}", {"class_name": "judge_response"}),
                        (float(verdict), {"class_name": "judge_score"}),
                    ],
                )
            comment_op(
                op_name="final_score",
                inputs=[(0.7, {"id_strategy": stable("score")})],
                outputs=[(0.9, {"id_strategy": stable("score")})],
            )
            comment_op(
                op_name="emit", inputs=[("summary: 1 item", {"id_strategy": stable("summary")})], outputs=[]
            )
            comment_link(
                source=(0.9, {"id_strategy": stable("score")}),
                target=("report.md", {"id_strategy": stable("report")}),
            )
    return graph.export_graph()


NATIVE_RUN_ID = "run-native-1"


def write_native_run(store: Store, run_id: str = NATIVE_RUN_ID) -> Run:
    """A run as the recorder writes it: bipartite edges with no variable->variable source."""
    t0 = time.time()
    run = Run(
        id=run_id,
        name="conv-native",
        system="mem0",
        dataset="locomo",
        status=RUN_COMPLETE,
        created_at=t0,
        finished_at=t0 + 1,
        metadata={"note": "native"},
    )
    values = {
        "message@1": ("message", "Caroline moved to Boston", False),
        "facts@1": ("extracted_facts", ["Caroline lives in Boston"], False),
        "mem-1@1": ("memory_entry", {"id": "mem-1", "memory": "Caroline lives in Boston"}, False),
        "mem-1@2": ("memory_entry", None, True),
        "question@1": ("query", "Where did Caroline move?", False),
        "prediction@1": ("prediction", "Boston", False),
        "counter@1": ("variable", 7, False),
    }
    variables, blobs = [], {}
    for seq, (var_id, (category, value, deleted)) in enumerate(values.items(), start=1):
        name, version = var_id.rsplit("@", 1)
        blob = None
        if value is not None:
            digest, encoding, data = encode_value(value)
            blobs[digest] = (digest, encoding, data)
            blob = digest
        variables.append(
            VariableVersion(
                run_id,
                var_id,
                name,
                int(version),
                seq * 10,
                category,
                blob,
                deleted,
                t0 + seq / 100,
                {"session": "question"} if category == "query" else {},
            )
        )
    op_specs = [
        ("op-ingest", "ingest", "construction", None, [], ["message@1"], 5),
        ("op-extract", "extract_facts", "extraction", None, ["message@1"], ["facts@1"], 15),
        ("op-add", "update_memory", "update", None, ["facts@1"], ["mem-1@1"], 25),
        ("op-del", "update_memory", "deletion", None, ["mem-1@1"], ["mem-1@2"], 35),
        ("op-answer", "answer", "response", None, ["question@1", "mem-1@1"], ["prediction@1"], 55),
        ("op-llm", "llm.chat", "llm", "op-answer", ["prediction@1"], [], 56),
        ("op-count", "count", "construction", None, [], ["counter@1"], 65),
        ("op-empty", "noop", "construction", None, [], [], 75),
    ]
    ops, edges = [], []
    for op_id, name, category, parent, inputs, outputs, seq in op_specs:
        meta = {"session": "question"} if name in ("answer", "llm.chat") else {}
        ops.append(
            Operation(
                run_id,
                op_id,
                seq,
                name,
                category,
                parent,
                t0 + seq / 1000,
                t0 + seq / 1000 + 0.001,
                metadata=meta,
            )
        )
        edges += [Edge(run_id, op_id, v, "in") for v in inputs]
        edges += [Edge(run_id, op_id, v, "out") for v in outputs]
    store.insert_run(run)
    store.write_batch(
        ops=[op_row(o) for o in ops],
        variables=[var_row(v) for v in variables],
        edges=[edge_row(e) for e in edges],
        blobs=list(blobs.values()),
    )
    return run


def run_rows(store: Store, run_id: str) -> dict[str, list[tuple]]:
    """Every stored row of a run (and the blobs it uses), for exact comparisons."""
    conn = store.conn
    out = {
        table: sorted(conn.execute(f"SELECT * FROM {table} WHERE run=?", (run_id,)).fetchall(), key=repr)
        for table in ("ops", "vars", "cases")
    }
    out["runs"] = conn.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchall()
    out["edges"] = conn.execute("SELECT * FROM edges WHERE run=? ORDER BY rowid", (run_id,)).fetchall()
    out["annotations"] = conn.execute(
        "SELECT run, case_id, error_type, op, note, author, created_at FROM annotations"
        " WHERE run=? ORDER BY id",
        (run_id,),
    ).fetchall()
    out["blobs"] = sorted(
        conn.execute(
            "SELECT * FROM blobs WHERE hash IN (SELECT blob FROM vars WHERE run=?)", (run_id,)
        ).fetchall()
    )
    return out
