"""A small recorded pipeline for the OpenTelemetry tests: a model call nested in an extraction that
creates two memory units, an update, a deletion, a search (of a remote store) that returns a unit, and
a wrong answer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import memtrace as mt

QUESTION = "Where does Caroline live?"


def record_memory_pipeline(workspace: Path, name: str = "otel-toy", sinks: Sequence[Any] = ()) -> str:
    extra = {"sinks": sinks} if sinks else {}
    with mt.run(workspace, name=name, system="toy", **extra) as run:
        with mt.op("ingest", category="construction") as op:
            message = op.output("message", "Caroline: I moved to Boston last May.", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(message)
            with mt.op("llm.chat", category="llm", model="toy-model") as chat:
                prompt = [{"role": "user", "content": "Facts of: Boston"}]
                chat.input("llm.chat.prompt", prompt, category="prompt")
                chat.output("llm.chat.response", "Caroline lives in Boston", category="llm_response")
                chat.set(usage={"input_tokens": 12, "output_tokens": 5})
            run.memory("mem-1").create({"memory": "Caroline lives in Boston"}, by=op)
            run.memory("mem-2").create({"memory": "Caroline likes hiking"}, by=op)
        with mt.op("update_memory", category="update") as op:
            run.memory("mem-1").update({"memory": "Caroline lives in Paris"}, by=op)
        with mt.op("delete_memory", category="deletion") as op:
            run.memory("mem-2").delete(by=op)
        with mt.op("question", category="query"):
            # this search asks a memory store behind a server (remote=True): a CLIENT span
            with mt.op("search", category="retrieval", ranking=[["mem-1", 1, 0.75]], remote=True) as op:
                op.input("query", QUESTION, category="query")
                op.use(run.memory("mem-1").latest_id)
                retrieved = op.output("retrieved", ["Caroline lives in Paris"], category="retrieved")
            with mt.op("answer", category="response") as op:
                op.use(retrieved)
                prediction = op.output("prediction", "Paris", category="prediction")
        case = run.case(QUESTION, gold="Boston", id="q1")
        case.predict("Paris", var=prediction)
        case.judge(False, score=0.0)
        return run.id
