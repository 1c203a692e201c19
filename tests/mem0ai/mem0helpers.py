"""A scripted mem0 endpoint (a test double): mem0's own requests answered from a script over real HTTP.

`Mem0Script` is the server's default reply: it recognises mem0's fact-extraction request (classic
and additive prompts), its update-decision request, memtrace's answer prompt and the LLM judge, and
answers each from the test's script. Embeddings are bags of hashed words, so texts sharing words
are near and every similarity is non-negative (mem0 2.x drops hits under a 0.1 threshold).

    script = Mem0Script(facts={"moved to Boston": ["Caroline moved to Boston"]})
    with Mem0Server(script) as server:
        memory = make_memory(server, tmp_path)
"""

from __future__ import annotations

import atexit
import hashlib
import json
import math
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# mem0 reads MEM0_DIR and MEM0_TELEMETRY once, at import (else it writes ~/.mem0/config.json): the
# test modules import this one before mem0. The folder goes when the test process ends.
if "mem0" not in sys.modules:
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = tempfile.mkdtemp(prefix="memtrace-test-mem0-home-")
    atexit.register(shutil.rmtree, os.environ["MEM0_DIR"], ignore_errors=True)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llm"))

from llmhelpers import Reply, ScriptedOpenAIServer

DIMS = 64
_OLD = re.compile(r"\{'id': '(\d+)', 'text': (['\"])(.*?)\2\}")
_WORD = re.compile(r"[a-z0-9]+")


def word_vector(text: str, dims: int = DIMS) -> list[float]:
    """A unit bag-of-words vector: each word adds 1 at its hashed position."""
    vector = [0.0] * dims
    for word in _WORD.findall(text.casefold()):
        vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


@dataclass
class Decision:
    """What the update decision does with one new fact: ADD it, UPDATE or DELETE an old memory."""

    event: str = "ADD"
    old: str | None = None  # a substring of the old memory an UPDATE or DELETE acts on
    text: str | None = None  # an UPDATE's new text
    also_add: bool = False  # a DELETE that also ADDs the fact itself


@dataclass
class Mem0Script:
    """The replies: facts per message substring, decisions per fact, answers per question."""

    facts: dict[str, list[str]] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)  # the kinds of request answered, in order

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        user = "\n".join(m["content"] for m in messages if m.get("role") == "user")
        if "smart memory manager" in user:
            self.seen.append("decide")
            return Reply(json.dumps(self.decide(user)))
        if "Personal Information Organizer" in system or ("Input:" in user and not system):
            self.seen.append("extract")
            return Reply(json.dumps({"facts": self.extract(user)}))
        if "Memory Extractor" in system:
            self.seen.append("extract")
            new = user.split("## New Messages", 1)[-1].split("## Observation Date", 1)[0]
            facts = self.extract(new)
            return Reply(json.dumps({"memory": [{"id": str(i), "text": f} for i, f in enumerate(facts)]}))
        if "You answer questions" in user:
            self.seen.append("answer")
            return Reply(self.answer(user))
        self.seen.append("other")
        return Reply("ok")

    def extract(self, text: str) -> list[str]:
        return [fact for key, facts in self.facts.items() if key in text for fact in facts]

    def decide(self, prompt: str) -> dict[str, Any]:
        head, _, tail = prompt.partition("The new retrieved facts")
        old = {m.group(1): m.group(3) for m in _OLD.finditer(head)}
        events: list[dict[str, Any]] = []
        touched: set[str] = set()
        for fact, decision in self.decisions.items():
            if fact not in tail:
                continue
            target = next((i for i, t in old.items() if decision.old and decision.old in t), None)
            if decision.event == "UPDATE" and target is not None:
                events.append(
                    {"id": target, "text": decision.text, "event": "UPDATE", "old_memory": old[target]}
                )
                touched.add(target)
            elif decision.event == "DELETE" and target is not None:
                events.append({"id": target, "text": old[target], "event": "DELETE"})
                touched.add(target)
                if decision.also_add:
                    events.append({"id": str(len(old) + len(events)), "text": fact, "event": "ADD"})
            else:
                events.append({"id": str(len(old) + len(events)), "text": fact, "event": "ADD"})
        for fact in re.findall(r"'([^']+)'", tail.split("```")[1] if "```" in tail else ""):
            if fact not in self.decisions:
                events.append({"id": str(len(old) + len(events)), "text": fact, "event": "ADD"})
        events.extend({"id": i, "text": t, "event": "NONE"} for i, t in old.items() if i not in touched)
        return {"memory": events}

    def answer(self, prompt: str) -> str:
        """An ideal answerer: the gold answer when the memories hold it, else it abstains."""
        memories = prompt.split("Memories:", 1)[-1].rsplit("Question:", 1)[0].casefold()
        question = prompt.rsplit("Question:", 1)[-1].split("\n")[0].strip()
        gold = self.answers.get(question)
        if gold and gold.casefold() in memories:
            return gold
        return "Not mentioned in the conversation."


def caroline_script(more_facts: dict[str, list[str]] | None = None) -> Mem0Script:
    """Caroline moves within Boston (an UPDATE) and gives her guitar away (a DELETE), plus `more_facts`
    (message fragment -> facts), as the adapter's sync and async tests script mem0's model."""
    return Mem0Script(
        facts={
            "moved to Boston": ["Caroline lives in Boston"],
            "Back Bay": ["Caroline moved to Back Bay in Boston"],
            "gave away": ["Caroline gave away her guitar"],
            "guitar named": ["Caroline has a guitar named Blue"],
            **(more_facts or {}),
        },
        decisions={
            "Caroline moved to Back Bay in Boston": Decision(
                "UPDATE", old="lives in Boston", text="Caroline lives in Back Bay, Boston"
            ),
            "Caroline gave away her guitar": Decision("DELETE", old="guitar named Blue"),
        },
    )


class Mem0Server(ScriptedOpenAIServer):
    """The scripted OpenAI-compatible server with mem0's script and word-bag embeddings of the size
    each request asks for."""

    def __init__(self, script: Mem0Script, **options: Any) -> None:
        super().__init__(default=script, **options)
        self.script = script

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, dict, dict]:
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        dims = int(body.get("dimensions") or DIMS)  # mem0 asks for its configured embedding size
        data = [
            {"object": "embedding", "index": i, "embedding": word_vector(t, dims)}
            for i, t in enumerate(texts)
        ]
        tokens = sum(len(str(t).split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {}, {"object": "list", "data": data, "model": "scripted-embed", "usage": usage}


def mem0_settings(server: ScriptedOpenAIServer, folder: Path) -> dict[str, Any]:
    """A `Memory.from_config` dict pointing mem0 at the server, its stores inside `folder`."""
    endpoint = {"api_key": "test-key", "openai_base_url": server.url}
    return {
        "llm": {"provider": "openai", "config": {"model": "scripted", **endpoint}},
        "embedder": {
            "provider": "openai",
            "config": {"model": "scripted-embed", "embedding_dims": DIMS, **endpoint},
        },
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "test",
                "path": str(folder / "qdrant"),
                "embedding_model_dims": DIMS,
                "on_disk": True,
            },
        },
        "history_db_path": str(folder / "history.db"),
    }


def make_memory(server: ScriptedOpenAIServer, folder: Path) -> Any:
    from mem0 import Memory

    return Memory.from_config(mem0_settings(server, folder))


def close_memory(memory: Any) -> None:
    """Release mem0's SQLite history and the qdrant folder lock."""
    memory.close()
    client = getattr(memory.vector_store, "client", None)
    if client is not None:
        client.close()
