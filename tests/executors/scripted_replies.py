"""Replies a scripted model gives to every prompt of the four systems and the judge (a test double).

Chosen by the JSON schema asked for, filled from the request's own words, so equal requests get equal
replies whatever process sends them: runs against it are deterministic.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

_SAID = re.compile(r"^([A-Z][\w' -]{0,30}): (.+)$", re.MULTILINE)


def scripted_reply(body: dict[str, Any]) -> str:
    """The reply text for one chat request: JSON matching its schema, else a short answer."""
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    if "You grade answers" in text:
        gold = text.partition("Gold answer: ")[2].partition("\n")[0].casefold()
        said = text.rpartition("Predicted answer:")[2].casefold()
        return json.dumps({"correct": bool(gold) and gold in said, "reason": "scripted"})
    form = (body.get("response_format") or {}).get("json_schema") or {}
    schema = form.get("schema")
    if schema is None:
        return _phrase(text)
    return json.dumps(_fill(schema, schema, text))


def _fill(node: dict[str, Any], root: dict[str, Any], text: str, name: str = "") -> Any:
    """A value for `node` built from `text` (the request), the same for the same request."""
    if "$ref" in node:
        return _fill(root["$defs"][node["$ref"].rpartition("/")[2]], root, text, name)
    if "anyOf" in node:
        return _fill(node["anyOf"][0], root, text, name)
    kind = node.get("type")
    if kind == "object":
        return {key: _fill(sub, root, text, key) for key, sub in node.get("properties", {}).items()}
    if kind == "array":
        return [_fill(node.get("items", {}), root, text, name)]
    if kind == "boolean":
        return name != "boundary" and _digest(text) % 4 != 0
    if kind in ("integer", "number"):
        return 1
    if "enum" in node:
        return node["enum"][0]
    if name == "event":
        return "ADD"
    if name == "id":
        return "new"
    return _phrase(text)


def _phrase(text: str) -> str:
    """The last thing someone said in the request, shortened: a fact, a summary or an answer."""
    said = _SAID.findall(text)
    speaker, words = said[-1] if said else ("Someone", " ".join(text.split()[-12:]))
    return f"{speaker} said {' '.join(words.split()[:12])}"


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
