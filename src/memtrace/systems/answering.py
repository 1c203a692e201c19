"""The response step every system shares: answer a question from a list of context passages.

LLM: the system's answer prompt filled with the passages. Offline: extractive rules over the
passages turned into standalone dated facts. Recorded as operation `answer` (category `response`)
with the question and context as inputs and the prediction as output.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime

from .. import trace
from ..datasets import Question
from ..llm import LLMClient
from ..text import untag
from .base import Answer, SystemConfig
from .rules import extract_answer, extract_facts

_SPEAKER_LINE = re.compile(r"^(?P<speaker>[^:\[\]]{1,40}): (?P<text>.*?)(?: \[said on (?P<date>[^\]]+)\])?$")


def answer_question(
    question: Question,
    context: list[str],
    *,
    config: SystemConfig,
    llm: LLMClient | None,
    context_var: str | None,
    query_var: str | None = None,
) -> Answer:
    """Answer from `context` (already retrieved) and record the `answer` operation."""
    with trace.op("answer", category="response") as op:
        if query_var:
            op.use(query_var)
        else:
            op.input("question", question.question, category="query")
        if context_var:
            op.use(context_var)
        if llm is not None:
            prompt = config.answer_prompt.format(context="\n".join(context), question=question.question)
            op.input("answer_prompt", config.answer_prompt, category="prompt")
            text = llm.chat([{"role": "user", "content": prompt}], name="answer.llm").text.strip()
        else:
            text, support = extract_answer(question.question, as_facts(context), config.min_answer_support)
            op.set(support=round(support, 3))
        text, var = op.produce("prediction", text, category="prediction")
    return Answer(text, var, context)


def as_facts(context: list[str]) -> list[str]:
    """Context passages as standalone facts: raw 'Speaker: text' lines get first person rewritten."""
    facts: list[str] = []
    for passage in context:
        for line in passage.splitlines() or [passage]:
            facts.extend(_line_facts(line.strip()))
    return facts


@functools.lru_cache(maxsize=65_536)
def _line_facts(line: str) -> tuple[str, ...]:
    """One context line as facts; cached, since every question of a run reads the same lines."""
    line = untag(line)[1]
    match = _SPEAKER_LINE.match(line)
    if match is None:
        return (line,)
    when = None
    if match.group("date"):
        try:
            when = datetime.strptime(match.group("date"), "%d %B %Y")
        except ValueError:
            when = None
    extracted = extract_facts(match.group("speaker"), match.group("text"), when, min_tokens=1)
    return tuple(extracted) or (line,)
