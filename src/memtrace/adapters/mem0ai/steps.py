"""The steps inside mem0's add() that call its LLM: the fact extraction and the classic update decision.

mem0 calls `llm.generate_response` for both; which one a call is follows from what the add() has
recorded so far (AddStep): the first is the extraction, a later one the update decision. The
decision is left open after its call so that the writes its events cause nest in it; add()'s inner
step closes it (sync: in the same context; async: mem0ai_async.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...trace import OpScope
from .parts import Mem0Swallowed, Pipeline, decision_events, extracted_facts
from .state import AddStep, add_step, new_op


class StepsMixin:
    """The tracer's wrapper of mem0's LLM and the extraction and decision operations it records."""

    memory: Any
    pipeline: Pipeline

    def _generate(self, original: Callable[..., Any], messages: Any, *args: Any, **kwargs: Any) -> Any:
        step = add_step.get()
        if step is None:
            return self._llm_call("llm.chat", original, messages, *args, **kwargs)
        if not step.extracted:
            return self._extract(step, original, messages, *args, **kwargs)
        return self._decide(step, original, messages, *args, **kwargs)

    def _llm_call(self, name: str, original: Callable[..., Any], messages: Any, *args: Any, **kw: Any) -> Any:
        with new_op(name, "llm", provider=type(self.memory.llm).__name__) as op:
            op.input(f"{name}.prompt", messages, category="prompt")
            format_ = kw.get("response_format")
            if format_:
                op.set(response_format=format_)
            reply = original(messages, *args, **kw)
            op.output(f"{name}.response", reply, category="llm_response")
            return reply

    def _extract(
        self, step: AddStep, original: Callable[..., Any], messages: Any, *args: Any, **kwargs: Any
    ) -> Any:
        step.extracted = True
        op = new_op("extract_facts", "extraction", pipeline=self.pipeline)
        op.__enter__()
        try:
            for var in step.message_vars:
                op.use(var)
            for var in step.candidate_vars:  # additive: the model sees the old memories too
                op.use(var)
            system = next((m.get("content") for m in messages if m.get("role") == "system"), None)
            if system:
                op.input("fact_extraction_prompt", system, category="prompt")
            reply = self._llm_call("extract_facts.llm", original, messages, *args, **kwargs)
            try:
                facts = [f for f in extracted_facts(reply, self.pipeline) if f]
            except (ValueError, AttributeError) as exc:
                op.output("extracted_facts", [], category="facts")
                self._end(op, f"mem0 could not read the extraction reply and kept no facts: {exc}")
                return reply
            op.output("extracted_facts", facts, category="facts")
            step.facts = facts
            for number, fact in enumerate(facts, 1):
                step.fact_vars[fact] = op.output(f"{op.id}.fact-{number}", fact, category="fact")
            op.set(facts=len(facts))
        except BaseException as exc:
            op.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._end(op)
        return reply

    def _decide(
        self, step: AddStep, original: Callable[..., Any], messages: Any, *args: Any, **kwargs: Any
    ) -> Any:
        """The classic update decision: opened here, left open so the writes it causes nest in it."""
        self._close_decision(step)
        op = new_op("update_memory_decision", "update", pipeline=self.pipeline)
        op.__enter__()
        step.decision = op
        for var in step.fact_vars.values():
            op.use(var)
        for var in step.candidate_vars:
            op.use(var)
        op.input("update_prompt", self._update_prompt(), category="prompt")
        try:
            reply = self._llm_call("update_memory_decision.llm", original, messages, *args, **kwargs)
        except Exception as exc:  # mem0 logs it and decides nothing: the decision failed
            step.decision = None
            self._end(op, f"the update-decision call failed and mem0 went on with no events: {exc!r}")
            raise
        aliases = dict(enumerate(step.shown_ids()))
        try:
            events, skipped = decision_events(reply, {str(i): mid for i, mid in aliases.items()})
        except ValueError as exc:
            op.output("update_events", [], category="update_events")
            step.decision = None
            self._end(op, f"mem0 could not read the update-decision reply and applied nothing: {exc}")
            return reply
        step.events_var = op.output("update_events", events, category="update_events")
        op.set(events=[[e["event"], e["id"]] for e in events])
        if skipped:
            op.set(skipped=skipped, error=f"mem0 skipped {len(skipped)} event(s) it could not apply")
        return reply

    def _update_prompt(self) -> str:
        custom = getattr(self.memory.config, "custom_update_memory_prompt", None)
        if custom:
            return custom
        from mem0.configs.prompts import DEFAULT_UPDATE_MEMORY_PROMPT

        return DEFAULT_UPDATE_MEMORY_PROMPT

    def _close_decision(self, step: AddStep) -> None:
        if step.decision is not None:
            decision, step.decision = step.decision, None
            self._end(decision, decision.metadata.pop("error", None))

    @staticmethod
    def _end(op: OpScope, swallowed: str | None = None) -> None:
        """End an operation entered by hand; an error mem0 swallowed ends it with status `error`."""
        if swallowed:
            op.__exit__(Mem0Swallowed, Mem0Swallowed(swallowed), None)
        else:
            op.__exit__(None, None, None)
