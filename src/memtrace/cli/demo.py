"""The built-in example: a tiny rule-based memory pipeline, recorded so there is something to inspect.

A conversation of two dated sessions goes through extraction (one fact per sentence), an update
decision per fact (add, update or delete by the subject it is about), keyword retrieval and an
extractive answer, then each question is judged by gold-answer containment. Most answers are wrong
on purpose: updates overwrite facts still needed (the first city, the dog's name) and quitting the
band deletes what Melanie played, so there are failures to trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import memtrace as mt

SESSIONS = [
    (
        "2023-05-08",
        [
            ("D1:1", "Caroline", "I moved to Boston last month."),
            ("D1:2", "Melanie", "Nice! I play drums in a band called The Pines."),
            ("D1:3", "Caroline", "I adopted a dog named Oscar."),
        ],
    ),
    (
        "2023-07-14",
        [
            ("D2:1", "Melanie", "I quit the band in June."),
            ("D2:2", "Caroline", "I moved to Paris for a new job."),
            ("D2:3", "Caroline", "Oscar loves the park near the river."),
        ],
    ),
]

QUESTIONS = [
    ("What is the name of Caroline's dog?", "Oscar", ["D1:3"]),
    ("Where did Caroline move in 2023 first?", "Boston", ["D1:1"]),
    ("Which city does Caroline live in now?", "Paris", ["D2:2"]),
    ("What did Melanie play in The Pines?", "drums", ["D1:2"]),
]

# Subject keys decide which memory a fact updates: a later fact about the same key replaces it.
SUBJECT_PATTERNS = {
    r"\bmoved to\b": "home",
    r"\bband\b": "band",
    r"\bdog\b|\bOscar\b": "pet",
}
STOPWORDS = {"the", "a", "an", "of", "in", "is", "did", "does", "what", "which", "where", "now", "to", "i"}


def tokens(text: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOPWORDS}


def subject(speaker: str, fact: str) -> str | None:
    for pattern, key in SUBJECT_PATTERNS.items():
        if re.search(pattern, fact):
            return f"{speaker}:{key}"
    return None


def record_demo(workspace: str | Path) -> str:
    """Record the example pipeline into `workspace` and return the run id."""
    with mt.run(workspace, name="demo", system="toy-mem", dataset="built-in") as run:
        memory = ToyMemory()
        for date, turns in SESSIONS:
            for dia_id, speaker, text in turns:
                with mt.op("ingest_message", category="construction") as op:
                    message = op.output(dia_id, f"{speaker}: {text}", category="message", date=date)
                with mt.op("extract_facts", category="extraction") as op:
                    op.use(message)
                    fact = f"{speaker} said on {date}: {text}"
                    op.output("extracted_facts", [fact])
                with mt.op("update_memory_decision", category="update") as op:
                    memory.decide(run, op, subject(speaker, text), fact, quits="quit" in text)
        for question, gold, evidence in QUESTIONS:
            case = run.case(question, gold=gold, evidence=evidence)
            with mt.op("search", category="retrieval", top_k=1) as op:
                op.input("query", question, category="query")
                ranked = sorted(
                    memory.store.items(), key=lambda item: -len(tokens(question) & tokens(item[1]))
                )
                for unit_id, _ in ranked[:1]:
                    op.use(run.memory(unit_id).latest_id)
                retrieved = [fact for _, fact in ranked[:1]]
                context = op.output("retrieved", retrieved, category="retrieved")
            with mt.op("answer", category="response") as op:
                op.use(context)
                answer = retrieved[0].split(": ", 1)[-1] if retrieved else "I don't know"
                prediction = op.output("prediction", answer, category="prediction")
            case.predict(answer, var=prediction)
            correct = gold.lower() in answer.lower()
            case.judge(correct, score=1.0 if correct else 0.0)
        return run.id


@dataclass
class ToyMemory:
    """The pipeline's own memory store: unit id -> fact, and which unit holds each subject."""

    store: dict[str, str] = field(default_factory=dict)
    by_subject: dict[str, str] = field(default_factory=dict)
    created: int = 0

    def decide(
        self,
        run: mt.trace.Recorder,
        op: mt.trace.OpScope | mt.trace.NoopOp,
        key: str | None,
        fact: str,
        *,
        quits: bool,
    ) -> None:
        """ADD a new unit, UPDATE the unit about the same subject, or DELETE it when the fact ends it."""
        if key in self.by_subject and quits:
            unit_id = self.by_subject.pop(key)
            del self.store[unit_id]
            run.memory(unit_id).delete(by=op)
            op.set(event="DELETE", subject=key)
        elif key in self.by_subject:
            unit_id = self.by_subject[key]
            self.store[unit_id] = fact
            run.memory(unit_id).update({"memory": fact}, by=op)
            op.set(event="UPDATE", subject=key)
        else:
            self.created += 1
            unit_id = f"mem-{self.created}"
            self.store[unit_id] = fact
            if key:
                self.by_subject[key] = unit_id
            run.memory(unit_id).create({"memory": fact}, by=op)
            op.set(event="ADD", subject=key)
