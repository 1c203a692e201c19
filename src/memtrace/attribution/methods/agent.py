"""The attribution agent: an LLM explores the graph with tools and names the decisive faulty operation.

It follows the paper's iterative subgraph tracing with what its agent lacked: it starts from the flow
method's evidence path (and the case's evidence messages) instead of from scratch; it may look
anywhere, not only in time order; every tool answer is a few thousand characters, and observations
older than the last `keep_observations` are elided from the prompt (the model's own thoughts stay),
so a step costs about the same at step 3 as at step 30; hard step and token budgets end the search
with the seed's answer, marked as such, or Undetermined - never with a silent guess. Each step is one
structured-output call ({thought, tool, args}), so any OpenAI-compatible server works, with or
without native tool calling.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from ...errors import RECOVERABLE_ERRORS
from ...graph import Case, GraphQueries
from ...llm import LLMClient, usage_scope
from ...vocabulary import MEMORY_ERROR_TYPES, CaseVerdict, ErrorType
from ..model import Attribution, AttributionMethod, Cost, PathStep, undetermined
from .agent_tools import MAX_FRONTIER, TOOL_DOCS, AgentTools, Finish
from .render import clip, preview
from .roles import add_roles

SYSTEM_PROMPT = """You find why an LLM memory system answered a question wrongly: the earliest decisive \
faulty operation and its error type, by exploring the run's recorded graph with tools.

Graph: operations (ids like extract_facts#29; categories construction, extraction, update, deletion, \
retrieval, response, evaluation, llm) read and write variable versions (ids name@version: messages \
like D1:7@1, memory units like mem-4@2). sN is the global record order (seq). A memory unit's versions \
are its lifecycle: created, updated, deleted.

Error types - check in this order; the first that applies is the answer:
1. ExtractionError: the needed information (gold answer, evidence messages) never entered any memory \
unit. Blame the extraction that read the evidence message and dropped or garbled it.
2. UpdateError: a unit held it and a later update lost or degraded it. Blame that update.
3. DeletionError: a unit holding it was deleted. Blame the deletion.
4. RetrievalError: the memory held it at question time but the retrieved context did not. Blame the \
question's retrieval operation.
5. ResponseError: the retrieved context held it and the answer is still wrong. Blame the response op.
Decisive: repairing that operation's output alone would rescue the answer. Earliest: the first such \
operation in seq order. Use Undetermined (op_id null) only when the graph cannot tell.

Tools:
{tools}

Each turn reply with one JSON object: {{"thought": "...", "tool": "<name>", "args": {{...}}}}. \
Keep the thought short and put in it what you learned: results of older steps are elided. You have \
{max_steps} steps; be economical, expand only what you need, and finish as soon as the evidence is clear."""

STEP_SCHEMA: dict[str, Any] = {
    "title": "AgentStep",
    "type": "object",
    "properties": {
        "thought": {"type": "string"},
        "tool": {"type": "string", "enum": list(TOOL_DOCS)},
        "args": {"type": "object"},
    },
    "required": ["thought", "tool", "args"],
    "additionalProperties": False,
}

PROMPT_VERSION = hashlib.blake2b((SYSTEM_PROMPT + json.dumps(TOOL_DOCS)).encode(), digest_size=6).hexdigest()


@dataclass(slots=True)
class Step:
    """One tool call of the transcript: what the model thought and called, what it got back."""

    number: int
    thought: str
    tool: str
    args: dict[str, Any]
    result: str
    nodes: list[str] = field(default_factory=list)

    def call_text(self) -> str:
        args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in self.args.items())
        return f"{self.tool}({args})"

    def summary(self, width: int = 200) -> str:
        thought = clip(self.thought, 160)
        return f"{self.number}. {self.call_text()} - {thought} => {preview(self.result, width)}"


class AgentMethod:
    """LLM-guided subgraph tracing under a step and a token budget (see the module docstring)."""

    name = "agent"

    def __init__(
        self,
        client: LLMClient,
        *,
        max_steps: int = 30,
        max_tokens: int = 30_000,
        seed_method: AttributionMethod | None = None,
        page_chars: int = 4000,
        keep_observations: int = 2,
        temperature: float = 0.0,
    ) -> None:
        self.client = client
        self.max_steps = max_steps
        self.max_tokens = max_tokens
        self.seed_method = seed_method
        self.page_chars = page_chars
        self.keep_observations = keep_observations
        self.temperature = temperature

    def settings(self) -> dict[str, Any]:
        seed = None
        if self.seed_method is not None:
            seed = {"name": self.seed_method.name, **self.seed_method.settings()}
        return {
            "model": self.client.model,
            "max_steps": self.max_steps,
            "max_tokens": self.max_tokens,
            "page_chars": self.page_chars,
            "keep_observations": self.keep_observations,
            "temperature": self.temperature,
            "seed_method": seed,
            "prompt": PROMPT_VERSION,
        }

    def attribute(self, graph: GraphQueries, case: Case, seed: Attribution | None = None) -> Attribution:
        """Explore from the seed's path (or the evidence) until `finish` or a budget runs out."""
        started = time.perf_counter()
        if case.verdict == CaseVerdict.CORRECT:
            why = "the case was answered correctly: nothing to attribute"
            return undetermined(graph, case, self.name, why)
        if seed is None and self.seed_method is not None:
            seed = self.seed_method.attribute(graph, case)
        tools = AgentTools(graph, case, page_chars=self.page_chars)
        tools.t_start(_seed_nodes(tools, case, seed))
        system = SYSTEM_PROMPT.format(
            tools="\n".join(f"- {doc}" for doc in TOOL_DOCS.values()), max_steps=self.max_steps
        )
        intro = _intro(tools, case, seed)
        steps: list[Step] = []
        failed_calls: set[str] = set()
        with usage_scope(f"agent {case.run_id}/{case.id}") as usage:
            stop = f"step budget ({self.max_steps} steps) exhausted"
            for number in range(1, self.max_steps + 1):
                messages = self._messages(system, intro, steps, tools, usage.usage.total_tokens)
                estimate = sum(len(m["content"]) for m in messages) // 4
                if usage.usage.total_tokens + estimate > self.max_tokens:
                    stop = (
                        f"token budget ({self.max_tokens:,}) exhausted after {number - 1} steps "
                        f"({usage.usage.total_tokens:,} used, next prompt ~{estimate:,})"
                    )
                    break
                try:
                    reply = self.client.chat(
                        messages, schema=STEP_SCHEMA, temperature=self.temperature, name="attribution.agent"
                    )
                except RECOVERABLE_ERRORS as exc:  # invalid or cut JSON, or a garbled reply
                    attempts = getattr(exc, "attempts", None)
                    why = f"after {attempts} attempts" if attempts else f"({exc})"
                    stop = f"the model gave no usable step {why}"
                    break
                data = reply.data
                tool, args = data["tool"], data.get("args") or {}
                observation = tools.call(tool, args)
                thought = str(data.get("thought", ""))
                steps.append(Step(number, thought, tool, args, observation.text, observation.nodes))
                if observation.finish is not None:
                    cost = _cost(usage.usage, started)
                    return _answer(graph, case, observation.finish, steps, cost, seed)
                if observation.failed:
                    call = json.dumps([tool, args], sort_keys=True, default=str)
                    if call in failed_calls:  # it read the error and asked again: it will not learn
                        stop = f"the model repeated a failing call {preview(call, 120)} after its error"
                        break
                    failed_calls.add(call)
            cost = _cost(usage.usage, started)
        return _fallback(graph, case, seed, stop, steps, cost)

    def _messages(
        self, system: str, intro: str, steps: list[Step], tools: AgentTools, used: int
    ) -> list[dict[str, str]]:
        """The conversation so far, with observations older than the last few elided."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": intro}]
        keep_from = len(steps) - self.keep_observations
        for i, step in enumerate(steps):
            call = {"thought": step.thought, "tool": step.tool, "args": step.args}
            messages.append({"role": "assistant", "content": json.dumps(call, ensure_ascii=False)})
            if i >= keep_from:
                result = step.result
            else:
                result = f"[elided: {preview(step.result, 160)}]"
            messages.append({"role": "user", "content": result})
        status = (
            f"[step {len(steps) + 1}/{self.max_steps}; ~{used:,}/{self.max_tokens:,} tokens used; "
            f"frontier ({len(tools.frontier)}/{MAX_FRONTIER}): {', '.join(tools.frontier) or '(empty)'}]"
        )
        messages[-1] = {**messages[-1], "content": f"{messages[-1]['content']}\n\n{status}"}
        return messages


def _seed_nodes(tools: AgentTools, case: Case, seed: Attribution | None) -> list[str]:
    """The first frontier: the seed's path when there is one, else the evidence and the prediction."""
    nodes: list[str] = []
    if seed is not None:
        nodes = [step.id for step in seed.path]
    if not nodes:
        nodes = [*_evidence_ids(tools, case)]
        if case.prediction_var:
            nodes.append(case.prediction_var)
    ordered = [n for n in dict.fromkeys(nodes) if tools.graph.has_var(n) or tools.graph.has_op(n)]
    return ordered[:MAX_FRONTIER]


def _evidence_ids(tools: AgentTools, case: Case) -> list[str]:
    found = []
    for name in case.evidence:
        try:
            found.append(tools.resolve(name))
        except Exception:
            continue
    return found


def _intro(tools: AgentTools, case: Case, seed: Attribution | None) -> str:
    """The case as the model first sees it: question, answers, evidence, the seed and the frontier."""
    graph = tools.graph
    lines = [
        f"Failed case {case.id} of run {graph.run.id} (system {graph.run.system or '?'})",
        f"question: {case.question}",
        f"gold answer(s): {' | '.join(case.gold) or '(none)'}",
        f"prediction: {case.prediction!r}",
    ]
    if case.prediction_var and graph.has_var(case.prediction_var):
        made = graph.producers(case.prediction_var)
        if made:
            answer = made[0]
            parent = f" inside {answer.parent_op}" if answer.parent_op else ""
            lines.append(
                f"prediction variable {case.prediction_var}, written by {answer.id} (s{answer.seq}){parent};"
                f" the memory at question time is memory_state({answer.seq})"
            )
    evidence = _evidence_ids(tools, case)
    if evidence:
        lines.append("evidence messages:")
        lines += [f"  {tools.line(e, 300)}" for e in evidence]
    elif case.evidence:
        lines.append(f"evidence ids (not found in the graph): {', '.join(case.evidence)}")
    if seed is not None:
        where = f"at {seed.op_id}" if seed.op_id else ""
        said = clip(seed.explanation, 400).rstrip(".")
        lines.append(
            f"A rule-based tracer ({seed.method}) says: {seed.error_type} {where} (confidence "
            f"{seed.confidence:.2f}): {said}. Check it; do not trust it blindly."
        )
        if seed.path:
            lines.append("its evidence path:")
            for step in seed.path[:20]:
                carries = "" if step.carries is None else (" holds it" if step.carries else " lost it")
                lines.append(f"  {step.kind} {step.id} s{step.seq}{carries}: {clip(step.note, 160)}")
    lines.append(f"frontier ({len(tools.frontier)} nodes, from the seed path or the evidence):")
    lines += [f"  {tools.line(node, 120)}" for node in tools.frontier]
    return "\n".join(lines)


def _cost(usage: Any, started: float) -> Cost:
    return Cost(usage.calls, usage.input_tokens, usage.output_tokens, time.perf_counter() - started)


def _path(steps: list[Step], graph: GraphQueries) -> list[PathStep]:
    """The nodes the agent looked at, in the order it looked (each once), with why it looked."""
    path, seen = [], set()
    for step in steps:
        for node in step.nodes:
            if node in seen:
                continue
            seen.add(node)
            is_var = graph.has_var(node)
            seq = graph.var(node).seq if is_var else graph.op(node).seq
            note = f"{step.tool}: {clip(step.thought, 200)}"
            path.append(PathStep("var" if is_var else "op", node, seq, note))
    return path


def _transcript(steps: list[Step]) -> str:
    return f"Agent transcript ({len(steps)} steps):\n" + "\n".join(step.summary() for step in steps)


def _answer(
    graph: GraphQueries, case: Case, finish: Finish, steps: list[Step], cost: Cost, seed: Attribution | None
) -> Attribution:
    explanation = f"{finish.reason}\n\n{_transcript(steps)}"
    path = _path(steps, graph)
    if finish.error_type == ErrorType.UNDETERMINED:
        return undetermined(graph, case, AgentMethod.name, explanation, path=path, cost=cost)
    if path and path[-1].id == finish.op_id:
        path[-1].note = f"blamed ({finish.error_type}): {clip(finish.reason, 200)}"
    claim = Attribution(
        graph.run.id,
        case.id,
        finish.op_id,
        finish.error_type,
        finish.confidence,
        explanation,
        AgentMethod.name,
        path=path,
        cost=cost,
    )
    return add_roles(graph, case, claim, seed)  # the steps a repair reads, so it verifies like flow's


def _fallback(
    graph: GraphQueries, case: Case, seed: Attribution | None, why: str, steps: list[Step], cost: Cost
) -> Attribution:
    """Out of budget: the seed's answer, said to be the seed's, or an honest Undetermined."""
    transcript = _transcript(steps)
    if seed is not None and seed.determined and seed.error_type in MEMORY_ERROR_TYPES and seed.op_id:
        explanation = (
            f"Agent stopped without an answer ({why}); returning the seed ({seed.method}) answer unchanged. "
            f"Seed explanation: {seed.explanation}\n\n{transcript}"
        )
        return Attribution(
            graph.run.id,
            case.id,
            seed.op_id,
            seed.error_type,
            seed.confidence,
            explanation,
            AgentMethod.name,
            path=list(seed.path),
            cost=cost,
        )
    reason = f"Agent stopped without an answer ({why}) and had no seed answer to fall back on."
    reason = f"{reason}\n\n{transcript}"
    return undetermined(graph, case, AgentMethod.name, reason, path=_path(steps, graph), cost=cost)
