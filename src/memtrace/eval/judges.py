"""Judges decide whether a prediction answers a question correctly; every verdict is recorded.

Each call is one memtrace operation `judge` (category `evaluation`) reading the question, the gold
answers and the prediction and writing the verdict, so the evaluation stage sits in the same graph
as the pipeline it judges (and an LLM judge's own model call, `judge.llm`, nests inside it). With nothing
recording, the operation is a no-op.

Malformed LLM judge output is never turned into a silent "wrong": the judge asks once more with a
format reminder, then raises `JudgeOutputError` (the `judge` op is recorded with status `error`).
Pass `on_malformed="f1"` to score such cases by token F1 instead; the verdict's method then says
`llm-malformed-f1` so they can be counted and re-judged. A client that itself gives up on invalid JSON
(its error carries the `reply`) counts as a malformed reply too. `make_judge` uses `f1`, so a weak
judge model never aborts a run.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import JudgeOutputError
from ..trace import op as record_op
from .scoring import Gold, as_gold_list, is_unanswerable, score_answer


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judgement: correct or not, the score behind it (F1, or 1/0 for an LLM), how, and why."""

    correct: bool
    score: float
    method: str
    explanation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class Judge(Protocol):
    """Anything that gives a verdict on one prediction; `prediction_var` links the recorded answer."""

    def judge(
        self,
        question: str,
        gold: Gold | None,
        prediction: str,
        *,
        category: str | int | None = None,
        prediction_var: str | None = None,
    ) -> Verdict: ...


class ChatReply(Protocol):
    """The part of `memtrace.llm`'s reply a judge needs: the text, and the parsed JSON when asked for."""

    @property
    def text(self) -> str: ...

    @property
    def data(self) -> Any: ...


class ChatClient(Protocol):
    """The part of `memtrace.llm`'s client a judge needs (defined here so eval does not import llm)."""

    def chat(
        self, messages: list[dict[str, str]], *, schema: dict | None = None, name: str = "llm.chat"
    ) -> ChatReply: ...


class RecordingJudge:
    """What every judge shares: `verdict` decides without recording, `judge` records the decision
    as a `judge` operation with its inputs and the verdict as output."""

    method: str = "judge"

    def verdict(
        self, question: str, gold: Gold | None, prediction: str, category: str | int | None = None
    ) -> Verdict:
        raise NotImplementedError

    def recorded_settings(self) -> dict[str, Any]:
        """Settings stored on the recorded operation beside the judge's name (none by default)."""
        return {}

    def judge(
        self,
        question: str,
        gold: Gold | None,
        prediction: str,
        *,
        category: str | int | None = None,
        prediction_var: str | None = None,
    ) -> Verdict:
        """Judge and record one prediction; a model call, if any, nests inside the `judge` operation."""
        settings = {"judge": self.method, **self.recorded_settings(), "question_category": category}
        with record_op("judge", category="evaluation", **settings) as op:
            op.input("question", question, category="query")
            op.input("gold_answers", as_gold_list(gold), category="gold_answer")
            if prediction_var is not None:
                op.use(prediction_var)
            else:
                op.input("prediction", prediction, category="prediction")
            verdict = self.verdict(question, gold, prediction, category)
            op.output("verdict", verdict.to_dict(), category="verdict")
            op.set(method=verdict.method, correct=verdict.correct, score=verdict.score)
        return verdict


class F1Judge(RecordingJudge):
    """Correct when LoCoMo's score (token F1 by category; the phrase rule for unanswerables) >= threshold.

    Offline, free and reproducible, but blind to paraphrase: "in May" vs "last spring" scores 0.
    """

    method = "f1"

    def __init__(self, threshold: float = 0.5) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"the F1 threshold must lie in [0, 1], got {threshold}")
        self.threshold = threshold

    def recorded_settings(self) -> dict[str, Any]:
        return {"threshold": self.threshold}

    def verdict(
        self, question: str, gold: Gold | None, prediction: str, category: str | int | None = None
    ) -> Verdict:
        """The verdict without recording anything (used by `judge` and as the LLM judge's fallback)."""
        golds = as_gold_list(gold)
        score, matched = score_answer(prediction, golds, category)
        correct = score >= self.threshold
        if is_unanswerable(golds, category):
            says = "says" if correct else "does not say"
            why = f"unanswerable question; the prediction {says} the information is not available"
        else:
            relation = ">=" if correct else "<"
            why = f"token F1 {score:.2f} {relation} {self.threshold:g} against gold {matched!r}"
        return Verdict(correct=correct, score=float(score), method=self.method, explanation=why)


JUDGE_PROMPT = """\
You grade answers given by an assistant about a long conversation between people.
You see a question, the gold (reference) answer and the assistant's predicted answer.
Decide whether the prediction is correct: it must state the same fact as the gold answer.
Be generous about form: other wording, extra correct detail, a different date format or a relative
date that points to the same day or period all count as correct. It is wrong when it names a
different fact, misses the key part of the gold answer, or only hedges between several options.
When there are several gold answers, matching any one of them is enough.
When the question is marked unanswerable, the prediction is correct only if it says that the
information is not available (not mentioned, unknown, cannot be determined, ...).
Reply with only a JSON object: {"correct": true or false, "reason": "one short sentence"}."""

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"correct": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["correct", "reason"],
    "additionalProperties": False,
}

_RETRY = 'That reply was not in the required format. Reply with only {"correct": true|false, "reason": "..."}'
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)
_TRUE = {"true", "yes", "correct", "right", "1"}
_FALSE = {"false", "no", "wrong", "incorrect", "0"}


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().casefold()
        return True if word in _TRUE else False if word in _FALSE else None
    return None


def _json_object(text: str) -> Any:
    """The JSON object in a reply, tolerating code fences and prose around it; None when there is none."""
    text = _FENCE.sub("", text.strip())
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1]):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def parse_judge_reply(reply: ChatReply) -> tuple[bool, str] | None:
    """(correct, reason) from a judge reply, or None when it is malformed.

    Accepts parsed data or JSON text, `correct` as a boolean or a yes/no word, and the `label`:
    CORRECT/WRONG convention of Mem0-style judge prompts.
    """
    data = getattr(reply, "data", None)
    if not isinstance(data, dict):
        data = _json_object(getattr(reply, "text", "") or "")
    if not isinstance(data, dict):
        return None
    correct = _as_bool(data.get("correct", data.get("label")))
    if correct is None:
        return None
    reason = data.get("reason", data.get("explanation", ""))
    return correct, "" if reason is None else str(reason)


class LLMJudge(RecordingJudge):
    """Asks an LLM whether the prediction matches the gold answer; JSON `{"correct", "reason"}` out.

    Sees paraphrases that F1 misses, at the cost of one model call per question (cached by the LLM
    client). The prompt is a tunable: pass `prompt=` to change it.
    """

    method = "llm"

    def __init__(
        self,
        client: ChatClient,
        *,
        prompt: str = JUDGE_PROMPT,
        retries: int = 1,
        on_malformed: Literal["raise", "f1"] = "raise",
        fallback: F1Judge | None = None,
    ) -> None:
        if on_malformed not in ("raise", "f1"):
            raise ValueError(f"on_malformed must be 'raise' or 'f1', got {on_malformed!r}")
        self.client = client
        self.prompt = prompt
        self.retries = max(0, retries)
        self.on_malformed = on_malformed
        self.fallback = fallback if fallback is not None else F1Judge()

    def messages(
        self, question: str, golds: list[str], prediction: str, category: str | int | None
    ) -> list[dict[str, str]]:
        """The chat messages sent to the model for one prediction."""
        if is_unanswerable(golds, category):
            gold_text = "(none: the question is unanswerable from the conversation)"
        elif len(golds) == 1:
            gold_text = golds[0]
        else:
            gold_text = "any of: " + "; ".join(golds)
        user = f"Question: {question}\nGold answer: {gold_text}\nPredicted answer: {prediction}"
        return [{"role": "system", "content": self.prompt}, {"role": "user", "content": user}]

    def verdict(
        self, question: str, gold: Gold | None, prediction: str, category: str | int | None = None
    ) -> Verdict:
        """Ask the model (retrying on malformed output) without opening a `judge` operation."""
        golds = as_gold_list(gold)
        if not golds and not is_unanswerable(golds, category):
            raise ValueError("cannot judge without a gold answer (and the question is not adversarial)")
        messages = self.messages(question, golds, prediction, category)
        text = ""
        for attempt in range(self.retries + 1):
            try:
                reply = self.client.chat(messages, schema=JUDGE_SCHEMA, name="judge.llm")
            except Exception as exc:  # the client's invalid-JSON error keeps the reply it gave up on
                if not hasattr(exc, "reply"):
                    raise
                text = str(exc.reply or "")
                parsed = None
            else:
                parsed = parse_judge_reply(reply)
                text = str(getattr(reply, "text", "") or "")
            if parsed is not None:
                correct, reason = parsed
                return Verdict(correct, 1.0 if correct else 0.0, self.method, reason or None)
            if attempt < self.retries:
                reminder = [{"role": "assistant", "content": text}, {"role": "user", "content": _RETRY}]
                messages = [*messages, *reminder]
        if self.on_malformed == "raise":
            raise JudgeOutputError(
                f"the LLM judge did not reply with {{'correct': bool, 'reason': str}} after "
                f"{self.retries + 1} attempt(s); last reply: {text[:300]!r}"
            )
        base = self.fallback.verdict(question, golds, prediction, category)
        return Verdict(
            base.correct,
            base.score,
            "llm-malformed-f1",
            f"LLM judge output unusable ({text[:120]!r}); {base.explanation}",
        )
