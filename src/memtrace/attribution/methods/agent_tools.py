"""The tools the attribution agent calls: graph questions answered as short, paged text.

Each tool is a method `t_<name>` taking JSON arguments and returning an observation string the model
reads. Every answer is cut to `page_chars`, so a step costs about the same whatever the run's size;
long answers are paged (`page=2`, `offset=`) rather than dropped. Bad arguments never raise: they come
back as an observation that says what was wrong and the expected signature, and the agent goes on.
Obvious argument aliases (`id` for `node_id`, `regex` for `pattern`, ...) are accepted, since small
models keep guessing them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import NotFoundError
from ...graph import Case, GraphQueries
from ...graph.model import OP_CATEGORIES
from ...vocabulary import MEMORY_ERROR_TYPES, ErrorType
from .agent_args import required_args, with_aliases
from .render import (
    all_vars,
    clip,
    full_text,
    lineage_lines,
    op_block,
    op_header,
    op_label,
    paginate,
    preview,
    var_head,
    var_line,
)

MAX_FRONTIER = 16
MAX_DEPTH = 6
_WORD = re.compile(r"[a-z0-9]{3,}")

#: What each operation category can be blamed for; a finish that disagrees is questioned once.
EXPECTED_CATEGORY = {
    ErrorType.EXTRACTION: {"extraction", "construction", "embedding"},
    ErrorType.UPDATE: {"update"},
    ErrorType.DELETION: {"deletion", "update"},
    ErrorType.RETRIEVAL: {"retrieval"},
    ErrorType.RESPONSE: {"response"},
}

#: Signatures and one-line purposes, in the order the system prompt lists them.
TOOL_DOCS: dict[str, str] = {
    "start": "start(node_ids): set the frontier (the nodes you still mean to examine) and preview them",
    "expand": "expand(node_id, page=1): every operation that wrote or read a variable (or one operation),"
    " with inputs/outputs and value previews",
    "view": "view(node_id, regex=null, offset=0): a variable's full value (or regex snippets of it);"
    " an operation's metadata",
    "grep": "grep(pattern, category=null): variable versions whose value matches a regex, in seq order",
    "lifecycle": "lifecycle(unit): every version of a memory unit (or any variable) and the op that made it",
    "ancestors": "ancestors(node_id, depth=2): what the node was derived from, nearest first",
    "descendants": "descendants(node_id, depth=2): what was derived from the node, nearest first",
    "memory_state": "memory_state(seq, query=null): live memory units at a seq, most related to the query"
    " (default: question + gold) first",
    "add_frontier": f"add_frontier(node_ids): add nodes to the frontier (at most {MAX_FRONTIER})",
    "remove_frontier": "remove_frontier(node_ids): drop examined or irrelevant nodes from the frontier",
    "finish": "finish(error_type, op_id, reason, confidence): your answer; op_id null only for Undetermined",
}


@dataclass(slots=True)
class Finish:
    """A validated answer of the agent."""

    error_type: ErrorType
    op_id: str | None
    reason: str
    confidence: float


@dataclass(slots=True)
class Observation:
    """What a tool returned, and the graph nodes it looked at (for the evidence path)."""

    text: str
    nodes: list[str] = field(default_factory=list)
    finish: Finish | None = None

    @property
    def failed(self) -> bool:
        """The call did not work (bad tool, arguments or ids): the text says why."""
        return self.text.startswith("error:")


class AgentTools:
    """Graph tools over one case, with the frontier and the checks `finish` needs."""

    def __init__(self, graph: GraphQueries, case: Case, *, page_chars: int = 4000) -> None:
        self.graph = graph
        self.case = case
        self.page_chars = page_chars
        self.frontier: list[str] = []
        self._questioned: set[tuple[str, str]] = set()
        self._case_path: set[str] | None = None

    # -- dispatch -----------------------------------------------------------------------------

    def call(self, tool: str, args: dict[str, Any]) -> Observation:
        """Run one tool; any problem comes back as an observation, never as an exception."""
        method: Callable[..., Observation] | None = getattr(self, f"t_{tool}", None)
        if method is None or tool not in TOOL_DOCS:
            return Observation(f"error: unknown tool {tool!r}; tools: {', '.join(TOOL_DOCS)}")
        signature = TOOL_DOCS[tool].partition(":")[0]
        if not isinstance(args, dict):
            return Observation(f"error: args must be a JSON object; expected {signature}")
        args = with_aliases(method, args)
        try:
            inspect.signature(method).bind(**args)
        except TypeError as exc:
            problem = str(exc).replace("t_", "", 1) if str(exc).startswith("t_") else str(exc)
            return Observation(
                f"error: bad arguments for {tool} ({problem}); expected {signature}, e.g. "
                f"{tool}({', '.join(f'{k}=...' for k in required_args(method))})"
            )
        try:
            return method(**args)
        except NotFoundError as exc:
            return Observation(f"error: {exc}. Ids look like 'D1:7@1' (variable) or 'extract_facts#13' (op).")
        except (TypeError, ValueError) as exc:
            return Observation(f"error: {exc}; usage: {TOOL_DOCS[tool]}")

    def resolve(self, node_id: Any) -> str:
        """A node id as given, or a variable name's latest version ('D1:7' -> 'D1:7@1')."""
        node_id = str(node_id).strip()
        if self.graph.has_var(node_id) or self.graph.has_op(node_id):
            return node_id
        versions = self.graph.versions(node_id)
        if versions:
            return versions[-1].id
        raise NotFoundError(f"no operation or variable {node_id!r}")

    def line(self, node_id: str, width: int = 160) -> str:
        """One line about a node: a variable with its value preview, or an operation's header."""
        if self.graph.has_var(node_id):
            return var_line(self.graph.var(node_id), self.graph.value(node_id), width)
        return f"op {op_header(self.graph.op(node_id))}"

    def seq_of(self, node_id: str) -> int:
        graph = self.graph
        return graph.var(node_id).seq if graph.has_var(node_id) else graph.op(node_id).seq

    # -- frontier -----------------------------------------------------------------------------

    def t_start(self, node_ids: list[str] | str) -> Observation:
        self.frontier = []
        return self._add(_as_list(node_ids), "frontier set")

    def t_add_frontier(self, node_ids: list[str] | str) -> Observation:
        return self._add(_as_list(node_ids), "added")

    def t_remove_frontier(self, node_ids: list[str] | str) -> Observation:
        gone = [n for n in _as_list(node_ids) if n in self.frontier]
        self.frontier = [n for n in self.frontier if n not in gone]
        return Observation(f"removed {len(gone)}; frontier: {', '.join(self.frontier) or '(empty)'}")

    def _add(self, node_ids: list[str], verb: str) -> Observation:
        found, problems = [], []
        for raw in node_ids:
            try:
                node = self.resolve(raw)
            except NotFoundError:
                problems.append(f"unknown node {raw!r}")
                continue
            if node in self.frontier:
                continue
            if len(self.frontier) >= MAX_FRONTIER:
                problems.append(f"frontier full ({MAX_FRONTIER}); {raw} not added, remove nodes first")
                continue
            self.frontier.append(node)
            found.append(node)
        lines = [f"{verb}: {len(found)} node(s)", *(self.line(n, 120) for n in found), *problems]
        lines.append(f"frontier: {', '.join(self.frontier) or '(empty)'}")
        return Observation("\n".join(lines), found)

    # -- looking around -----------------------------------------------------------------------

    def t_expand(self, node_id: str, page: int = 1) -> Observation:
        node = self.resolve(node_id)
        graph = self.graph
        if graph.has_op(node):
            op = graph.op(node)
            blocks = [op_block(graph, node)]
            if op.parent_op:
                blocks.append(f"parent: op {op_header(graph.op(op.parent_op))}")
            head = f"operation {node}"
        else:
            producers = graph.producers(node)
            consumers = graph.consumers(node)
            on_path = self.case_path()
            consumers.sort(key=lambda op: (op.id not in on_path, op.seq))
            touching = [(op, "output") for op in producers] + [(op, "input") for op in consumers]
            blocks = [op_block(graph, op.id, mark=node, role=role) for op, role in touching]
            head = (
                f"{self.line(node, 300)}\nwritten by {len(producers)} op(s), read by {len(consumers)}"
                " (ops on this case's answer lineage first)"
            )
        pages = paginate(blocks, self.page_chars) or ["(no operation touches it)"]
        page = max(1, min(int(page), len(pages)))
        text = f"{head}\npage {page}/{len(pages)}\n{pages[page - 1]}"
        if page < len(pages):
            text += f"\n(more: expand({node!r}, page={page + 1}))"
        return Observation(text, [node])

    def t_view(self, node_id: str, regex: str | None = None, offset: int = 0) -> Observation:
        node = self.resolve(node_id)
        graph = self.graph
        if graph.has_op(node):
            op = graph.op(node)
            text = f"op {op_label(op)} parent={op.parent_op}\nmetadata: {full_text(op.metadata)}"
            return Observation(clip(text, self.page_chars), [node])
        text = full_text(graph.value(node))
        head = var_head(graph.var(node))
        if regex:
            return Observation(f"{head}\n{_snippets(text, regex, self.page_chars)}", [node])
        offset = max(0, int(offset))
        chunk = text[offset : offset + self.page_chars]
        more = offset + len(chunk)
        tail = f"\n(chars {offset}-{more} of {len(text)}; view({node!r}, offset={more}) for more)"
        return Observation(f"{head} ({len(text)} chars)\n{chunk}{tail if more < len(text) else ''}", [node])

    def t_grep(self, pattern: str, category: str | None = None) -> Observation:
        try:
            rx = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            return Observation(f"error: bad regex {pattern!r}: {exc}")
        versions = [v for v in all_vars(self.graph) if category is None or v.category == category]
        hits: list[str] = []
        total = 0
        for start in range(0, len(versions), 2000):
            chunk = versions[start : start + 2000]
            values = self.graph.values(chunk)
            for version in chunk:
                text = " ".join(full_text(values.get(version.id)).split())
                found = rx.search(text)
                if found is None:
                    continue
                total += 1
                if len(hits) < 25:
                    lo = max(0, found.start() - 60)
                    snippet = clip(text[lo : found.end() + 60], 160)
                    hits.append(f"{version.id} s{version.seq} {version.category}: …{snippet}")
        body = "\n".join(hits) if hits else "(no match)"
        more = ""
        if total > len(hits):
            more = f"\n(+{total - len(hits)} more matches; narrow the pattern or category)"
        return Observation(clip(f"{total} match(es) for /{pattern}/\n{body}{more}", self.page_chars))

    def t_lifecycle(self, unit: str) -> Observation:
        unit = str(unit).strip()
        if self.graph.has_var(unit):
            unit = self.graph.var(unit).name
        entries = self.graph.lifecycle(unit)
        lines = [f"{unit}: {len(entries)} version(s)"]
        for entry in entries:
            by = op_label(entry.op) if entry.op else "(no producer)"
            value = "" if entry.change == "delete" else f": {preview(entry.value, 200)}"
            lines.append(f"{entry.version.id} s{entry.version.seq} {entry.change} by {by}{value}")
        nodes = [e.version.id for e in entries]
        return Observation(clip("\n".join(lines), self.page_chars), nodes)

    def t_ancestors(self, node_id: str, depth: int = 2) -> Observation:
        return self._lineage(node_id, depth, up=True)

    def t_descendants(self, node_id: str, depth: int = 2) -> Observation:
        return self._lineage(node_id, depth, up=False)

    def _lineage(self, node_id: str, depth: int, *, up: bool) -> Observation:
        node = self.resolve(node_id)
        depth = max(1, min(int(depth), MAX_DEPTH))
        walk = self.graph.ancestors if up else self.graph.descendants
        nodes = walk(node, depth)
        shown = nodes[:40]
        lines = [f"{'ancestors' if up else 'descendants'} of {node} to depth {depth}: {len(nodes)} node(s)"]
        lines += lineage_lines(self.graph, shown)
        if len(nodes) > len(shown):
            lines.append(f"(+{len(nodes) - len(shown)} more; use a smaller depth)")
        return Observation(clip("\n".join(lines), self.page_chars), [node])

    def t_memory_state(self, seq: int, query: str | None = None) -> Observation:
        seq = int(seq)
        state = self.graph.memory_values_at(seq)
        words = set(_WORD.findall((query or " ".join([self.case.question, *self.case.gold])).lower()))

        def overlap(item: tuple[str, Any]) -> int:
            return len(words & set(_WORD.findall(preview(item[1], 10_000).lower())))

        ranked = sorted(state.items(), key=lambda item: -overlap(item))
        shown = [item for item in ranked if overlap(item) > 0][:15]
        lines = [f"{len(state)} live memory unit(s) at s{seq}; {len(shown)} related to {sorted(words)}:"]
        lines += [f"{name}: {preview(value, 200)}" for name, value in shown]
        others = [name for name, _ in ranked[len(shown) :]]
        if others:
            lines.append(f"others: {clip(', '.join(others), 400)}")
        return Observation(clip("\n".join(lines), self.page_chars))

    # -- the answer ---------------------------------------------------------------------------

    def t_finish(
        self, error_type: str, op_id: str | None = None, reason: str = "", confidence: float = 0.5
    ) -> Observation:
        """Validate an answer: a known error type and an operation of this graph."""
        answers = (*MEMORY_ERROR_TYPES, ErrorType.UNDETERMINED)
        named = next((kind for kind in answers if kind.lower() == str(error_type).strip().lower()), None)
        if named is None:
            return Observation(f"error: error_type must be one of {', '.join(answers[:-1])} or {answers[-1]}")
        error_type = named
        try:
            confidence = min(1.0, max(0.0, float(confidence)))
        except (TypeError, ValueError):
            return Observation("error: confidence must be a number between 0 and 1")
        if error_type == ErrorType.UNDETERMINED:
            return Observation("finished", finish=Finish(error_type, None, str(reason), confidence))
        op_id = str(op_id or "").strip()
        if not self.graph.has_op(op_id):
            hint = ""
            if op_id and self.graph.has_var(op_id):
                made = ", ".join(op.id for op in self.graph.producers(op_id))
                hint = f"; {op_id} is a variable, written by: {made or 'no operation'}"
            return Observation(f"error: op_id {op_id!r} is not an operation of this run{hint}")
        op = self.graph.op(op_id)
        expected = EXPECTED_CATEGORY[error_type]
        doubtful = op.category in OP_CATEGORIES and op.category not in expected
        if doubtful and (error_type, op_id) not in self._questioned:
            self._questioned.add((error_type, op_id))
            parent = f" (nested in {op.parent_op})" if op.parent_op else ""
            return Observation(
                f"check: {op_label(op)}{parent} is a {op.category} operation, while {error_type} usually"
                f" blames {'/'.join(sorted(expected))} operations. Call finish again to confirm,"
                " or change it."
            )
        return Observation("finished", [op_id], Finish(error_type, op_id, str(reason), confidence))

    # -- helpers ------------------------------------------------------------------------------

    def case_path(self) -> set[str]:
        """Ids of everything the case's prediction was derived from (computed once)."""
        if self._case_path is None:
            var = self.case.prediction_var
            if var and self.graph.has_var(var):
                self._case_path = {n.id for n in self.graph.ancestors(var)} | {var}
            else:
                self._case_path = set()
        return self._case_path


def _as_list(node_ids: list[str] | str) -> list[str]:
    if isinstance(node_ids, str):
        return [node_ids]
    if not isinstance(node_ids, list):
        raise ValueError("node_ids must be a list of ids")
    return [str(n) for n in node_ids]


def _snippets(text: str, regex: str, budget: int, radius: int = 100) -> str:
    """Each match with `radius` characters around it, as many as fit in `budget`."""
    try:
        rx = re.compile(regex, re.IGNORECASE)
    except re.error as exc:
        return f"error: bad regex {regex!r}: {exc}"
    matches = list(rx.finditer(text))
    if not matches:
        return f"no match for /{regex}/ in {len(text)} chars"
    parts, size = [f"{len(matches)} match(es) for /{regex}/:"], 0
    for match in matches:
        lo, hi = max(0, match.start() - radius), min(len(text), match.end() + radius)
        snippet = f"[{lo}] …{' '.join(text[lo:hi].split())}…"
        if size + len(snippet) > budget:
            parts.append(f"(+ more matches; budget of {budget} chars reached)")
            break
        parts.append(snippet)
        size += len(snippet)
    return "\n".join(parts)
