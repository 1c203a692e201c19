"""How the attribution agent's tool arguments are read: the names small models guess, and the
parameters a tool cannot do without (shown in the error when a call is wrong)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

#: Names models use for a parameter, by the parameter's real name (renamed only when unambiguous).
ARG_ALIASES: dict[str, tuple[str, ...]] = {
    "node_id": ("id", "node", "nodeid", "nodeId", "var", "var_id", "variable", "op", "operation", "name"),
    "node_ids": ("ids", "nodes", "node_id", "id", "node"),
    "unit": ("unit_id", "memory", "id", "node_id", "name"),
    "pattern": ("regex", "query", "text", "search"),
    "regex": ("pattern",),
    "error_type": ("type", "error"),
    "op_id": ("operation", "op", "node_id", "id"),
    "reason": ("explanation", "why"),
}


def with_aliases(method: Callable[..., Any], args: dict[str, Any]) -> dict[str, Any]:
    """`args` with alias keys renamed to the parameter they stand for, when that one is missing."""
    params = inspect.signature(method).parameters
    out = dict(args)
    for name in params:
        if name in out:
            continue
        for alias in ARG_ALIASES.get(name, ()):
            if alias in out and alias not in params:
                out[name] = out.pop(alias)
                break
    return out


def required_args(method: Callable[..., Any]) -> list[str]:
    """The parameters a tool cannot do without."""
    return [
        name
        for name, param in inspect.signature(method).parameters.items()
        if param.default is inspect.Parameter.empty
    ]
