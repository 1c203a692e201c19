"""The all-at-once baseline: the whole run as one compact log in one prompt, one answer back.

The paper's baseline flattens the whole log into the prompt (truncated at 600k tokens). This one keeps
the idea and its single call but renders the log compactly: one line per variable, each value shown
once and cut to `value_chars`, operations after the case's own question left out (they cannot have
caused it) and so are the other questions' answer stages. What still does not fit `max_tokens`
(estimated as characters / 4) is dropped from the start, and the prompt says so.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from ...errors import RECOVERABLE_ERRORS
from ...graph import Case, GraphQueries, Operation
from ...llm import LLMClient, usage_scope
from ...vocabulary import MEMORY_ERROR_TYPES, CaseVerdict, ErrorType
from ..model import Attribution, Cost, PathStep, undetermined
from .render import all_ops, clip, log_blocks
from .roles import add_roles

SYSTEM_PROMPT = """You find why an LLM memory system answered a question wrongly. You get the log of \
its run - operations in record order (sN), each with the variable versions it read (in) and wrote \
(out); a value is shown once, later only its id - and the failed question.

Name the earliest decisive faulty operation and its error type. Check in this order; the first that \
applies is the answer:
1. ExtractionError: the needed information never entered any memory unit (blame the extraction that \
read the evidence and dropped it).
2. UpdateError: a memory unit held it, a later update lost or degraded it (blame that update).
3. DeletionError: a unit holding it was deleted (blame the deletion).
4. RetrievalError: memory held it at question time, the retrieved context did not (blame the retrieval).
5. ResponseError: the context held it, the answer is still wrong (blame the response operation).
Decisive: repairing that operation's output alone would rescue the answer. Use Undetermined with \
op_id null when the log cannot tell. op_id must be an operation id exactly as written in the log."""

ANSWER_SCHEMA: dict[str, Any] = {
    "title": "AllAtOnceAttribution",
    "type": "object",
    "properties": {
        "error_type": {"type": "string", "enum": [*MEMORY_ERROR_TYPES, ErrorType.UNDETERMINED]},
        "op_id": {"type": ["string", "null"]},
        "reason": {"type": "string"},
        "confidence": {"type": "number"},
    },
    "required": ["error_type", "op_id", "reason", "confidence"],
    "additionalProperties": False,
}

PROMPT_VERSION = hashlib.blake2b(SYSTEM_PROMPT.encode(), digest_size=6).hexdigest()
CHARS_PER_TOKEN = 4


class AllAtOnceMethod:
    """One LLM call over the compact run log (a baseline for the agent and the flow method)."""

    name = "all-at-once"

    def __init__(
        self,
        client: LLMClient,
        *,
        max_tokens: int = 100_000,
        value_chars: int = 200,
        temperature: float = 0.0,
    ) -> None:
        self.client = client
        self.max_tokens = max_tokens
        self.value_chars = value_chars
        self.temperature = temperature

    def settings(self) -> dict[str, Any]:
        return {
            "model": self.client.model,
            "max_tokens": self.max_tokens,
            "value_chars": self.value_chars,
            "temperature": self.temperature,
            "prompt": PROMPT_VERSION,
        }

    def messages(self, graph: GraphQueries, case: Case) -> tuple[list[dict[str, str]], str]:
        """The prompt for one case and a note on what was cut from it."""
        ops = case_ops(graph, case)
        question = case_text(graph, case)
        budget = self.max_tokens * CHARS_PER_TOKEN - len(SYSTEM_PROMPT) - len(question) - 300
        log, start = fit_log(graph, ops, max(budget, 0), self.value_chars)
        if start:
            note = f"the first {start} of {len(ops)} operations (before s{ops[start].seq}) were cut to fit"
        else:
            note = f"all {len(ops)} operations shown"
        user = f"Run log ({note}):\n{log}\n\n{question}"
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}], note

    def attribute(self, graph: GraphQueries, case: Case) -> Attribution:
        started = time.perf_counter()
        if case.verdict == CaseVerdict.CORRECT:
            return undetermined(
                graph, case, self.name, "the case was answered correctly: nothing to attribute"
            )
        messages, note = self.messages(graph, case)
        with usage_scope(f"all-at-once {case.run_id}/{case.id}") as usage:
            try:
                reply = self.client.chat(
                    messages,
                    schema=ANSWER_SCHEMA,
                    temperature=self.temperature,
                    name="attribution.all_at_once",
                )
                data, problem = reply.data, None
            except RECOVERABLE_ERRORS as exc:  # invalid or cut JSON, or a reply the endpoint garbled
                attempts = getattr(exc, "attempts", None)
                why = f"after {attempts} attempts" if attempts else f"({exc})"
                data, problem = None, f"the model gave no usable answer {why}"
        used = usage.usage
        cost = Cost(used.calls, used.input_tokens, used.output_tokens, time.perf_counter() - started)
        if data is None:
            return undetermined(graph, case, self.name, f"{problem} (prompt: {note})", cost=cost)
        return _result(graph, case, data, note, cost)


def _result(graph: GraphQueries, case: Case, data: dict[str, Any], note: str, cost: Cost) -> Attribution:
    """The model's answer checked against the graph; an unknown op id is Undetermined, with the reason."""
    error_type, op_id = data["error_type"], data.get("op_id")
    reason = str(data.get("reason", "")).strip()
    explanation = f"{reason} (prompt: {note})"
    if error_type == ErrorType.UNDETERMINED:
        return undetermined(graph, case, AllAtOnceMethod.name, explanation, cost=cost)
    if not op_id or not graph.has_op(str(op_id)):
        why = f"the model named {op_id!r}, which is not an operation of this run ({error_type}: {reason})"
        return undetermined(graph, case, AllAtOnceMethod.name, f"{why} (prompt: {note})", cost=cost)
    op = graph.op(str(op_id))
    try:
        confidence = min(1.0, max(0.0, float(data.get("confidence", 0.5))))
    except (TypeError, ValueError):
        confidence = 0.5
    path = [PathStep("op", op.id, op.seq, clip(reason, 300))]
    claim = Attribution(
        graph.run.id, case.id, op.id, error_type, confidence, explanation, AllAtOnceMethod.name, path, cost
    )
    return add_roles(graph, case, claim)  # the steps a repair reads, so it verifies like flow's


def case_text(graph: GraphQueries, case: Case) -> str:
    """The failed question as the prompt ends: question, gold, prediction and evidence ids."""
    lines = [
        f"Failed question ({case.id}): {case.question}",
        f"Gold answer(s): {' | '.join(case.gold) or '(none)'}",
        f"Prediction: {case.prediction!r}"
        + (f" (variable {case.prediction_var})" if case.prediction_var else ""),
    ]
    if case.evidence:
        lines.append(f"Evidence messages: {', '.join(case.evidence)}")
    lines.append("Reply with JSON {error_type, op_id, reason, confidence}.")
    return "\n".join(lines)


def case_ops(graph: GraphQueries, case: Case) -> list[Operation]:
    """The run's operations up to the end of the case's own question, without other questions' stages.

    The case's stage is the top-level operation around the one that wrote the prediction; operations
    after it cannot have caused the answer, and earlier top-level operations of the same name are
    other questions being answered."""
    ops = all_ops(graph)
    var = case.prediction_var
    made = graph.producers(var) if var and graph.has_var(var) else []
    if not made:
        return ops
    by_id = {op.id: op for op in ops}
    roots: dict[str, Operation] = {}

    def root(op: Operation) -> Operation:
        if op.id not in roots:
            parent = by_id.get(op.parent_op) if op.parent_op else None
            roots[op.id] = op if parent is None else root(parent)
        return roots[op.id]

    stage = root(made[0])
    mine = [op for op in ops if root(op) is stage]
    end = max(op.seq for op in mine)
    return [op for op in ops if op.seq <= end and (root(op) is stage or root(op).name != stage.name)]


def fit_log(graph: GraphQueries, ops: list[Operation], budget: int, width: int) -> tuple[str, int]:
    """The log of `ops[start:]` for the smallest `start` that fits `budget` characters, and `start`.

    Values are shown once from the start of what is kept, so dropping operations can make the rest
    longer; a few passes settle it, and a last cut at a line boundary guarantees the budget."""
    start = 0
    blocks = log_blocks(graph, ops, width)
    for _ in range(8):
        sizes = [len(block) + 1 for block in blocks]
        overflow = sum(sizes) - budget
        if overflow <= 0 or len(blocks) <= 1:
            break
        drop, freed = 0, 0
        while freed < overflow and drop < len(blocks) - 1:
            freed += sizes[drop]
            drop += 1
        start += drop
        blocks = log_blocks(graph, ops[start:], width)
    text = "\n".join(blocks)
    if len(text) > budget:
        cut = text[len(text) - budget :]
        text = cut[cut.find("\n") + 1 :] if "\n" in cut else cut
    return text, start


def prompt_tokens(messages: list[dict[str, str]]) -> int:
    """The estimate the budget uses: characters / 4."""
    return sum(len(m["content"]) for m in messages) // CHARS_PER_TOKEN
