"""The tunables an optimiser may change, and the grid each setting is searched on.

A system's tunables are the fields of its pydantic Config: prompt texts (fields ending in `_prompt`,
read only by the LLM engines) and settings. Offline search moves a setting along the grid its config
field declares (systems/tunables.py), so that steps are meaningful for each (a top_k of 5 -> 8, a
threshold of 0.5 -> 0.55); a value that is not on the grid (a user's own start) is added to it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

from ..systems.tunables import Grid, grid


def applies(config: BaseModel, name: str, *, offline: bool) -> bool:
    """Whether changing this tunable can change a run in this mode (prompts: LLM mode only)."""
    declared = grid(config, name)
    reads = declared.reads if declared is not None else "both"
    if name.endswith("_prompt") or reads == "llm":
        return not offline
    return not (reads == "offline" and not offline)


def is_prompt(config: BaseModel, name: str) -> bool:
    """Prompt tunables are the `*_prompt` text fields; only an LLM engine reads them."""
    return name.endswith("_prompt") and isinstance(getattr(config, name, None), str)


def is_setting(config: BaseModel, name: str) -> bool:
    """A setting the offline search can move: a config field that declares a Grid."""
    return grid(config, name) is not None


def is_choice(declared: Grid) -> bool:
    return any(isinstance(v, bool | str) for v in declared.values)


def grid_of(declared: Grid, current: Any) -> list[Any]:
    """The setting's grid with the current value on it (choices keep their order)."""
    values = list(declared.values)
    if current not in values:
        values.append(current)
        if not is_choice(declared):
            values.sort()
    return values


def moves(declared: Grid, current: Any, direction: int, *, decisive: bool = True) -> list[Any]:
    """Every other grid value in the order to try them, nearest first.

    With a decisive `direction` (+1 larger, -1 smaller) the two nearest that way come first, then
    alternately the nearest the other way and the next along; an undecided one (0, or a split vote:
    `decisive=False`) alternates from the start, its own way first. A rejected direction is thus
    soon tried the other way. A choice setting (bm25/hybrid, True/False) offers its other values.
    """
    values = grid_of(declared, current)
    if is_choice(declared):
        return [v for v in values if v != current]
    at = values.index(current)
    up, down = values[at + 1 :], list(reversed(values[:at]))
    primary, secondary = (down, up) if direction < 0 else (up, down)
    if direction == 0 or not decisive:
        return _alternate(primary, secondary)
    return primary[:2] + _alternate(secondary, primary[2:])


def _alternate(a: list[Any], b: list[Any]) -> list[Any]:
    out: list[Any] = []
    for i in range(max(len(a), len(b))):
        out.extend(side[i] for side in (a, b) if i < len(side))
    return out


def config_hash(config: BaseModel) -> str:
    """A short stable key of a config's values (the evaluation cache and the history use it)."""
    text = json.dumps(config.model_dump(mode="json"), sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def changed(start: BaseModel, final: BaseModel) -> dict[str, tuple[Any, Any]]:
    """Fields whose values differ: name -> (start value, final value)."""
    a, b = start.model_dump(mode="json"), final.model_dump(mode="json")
    return {k: (a[k], b[k]) for k in a if a[k] != b.get(k)}
