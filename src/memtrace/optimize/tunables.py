"""The tunables an optimiser may change, and the grid each setting is searched on.

A system's tunables are the fields of its pydantic Config: prompt texts (fields ending in `_prompt`,
read only by the LLM engines) and settings. Offline search moves a setting along its grid, so that
steps are meaningful for each (a top_k of 5 -> 8, a threshold of 0.5 -> 0.55); a value that is not
on the grid (a user's own start) is added to it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

#: Search grids by setting name, ordered; booleans and strings are choices without an order.
GRIDS: dict[str, tuple[Any, ...]] = {
    # every system: the offline answerer abstains below this support
    "min_answer_support": (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9),
    # long_context
    "max_tokens": (4_000, 8_000, 12_000, 16_000, 24_000, 32_000, 48_000, 64_000),
    # rag
    "chunk_tokens": (64, 128, 192, 256, 384, 512, 768),
    "retrieval": ("bm25", "hybrid"),
    "split_sessions": (True, False),
    # rag, mem0, evermemos
    "top_k": (1, 2, 3, 5, 8, 10, 12, 15, 20, 30),
    # mem0
    "batch_size": (1, 2, 3, 4, 6),
    "update_search_k": (3, 5, 8, 10, 15),
    "update_search": ("lexical", "dense"),
    "duplicate_threshold": (0.6, 0.7, 0.8, 0.85, 0.9, 0.95),
    "update_threshold": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
    "merge_lines": (1, 2, 3, 4, 5, 6),
    "search_method": ("bm25", "hybrid"),
    # evermemos
    "max_episode_messages": (4, 6, 8, 12, 16, 24),
    "topic_shift_threshold": (0.05, 0.1, 0.15, 0.2, 0.3),
    "min_episode_messages": (2, 3, 4, 6, 8),
    "extract_foresight": (True, False),
    "sufficiency_threshold": (0.5, 0.6, 0.67, 0.75, 0.85, 1.0),
    "max_followups": (0, 1, 2, 3, 4, 5),
    "candidates": (2, 3, 4, 6, 8),
    "rrf_k": (10, 30, 60, 100),
}


#: Settings only the offline (rule) engines read: an LLM run ignores them, so LLM mode never tunes them.
OFFLINE_ONLY = frozenset(
    {
        "min_answer_support",
        "duplicate_threshold",
        "update_threshold",
        "merge_lines",
        "topic_shift_threshold",
        "min_episode_messages",
        "sufficiency_threshold",
    }
)
#: Settings only the LLM engines read (offline, plans are recognised by their wording).
LLM_ONLY = frozenset({"extract_foresight"})


def applies(name: str, *, offline: bool) -> bool:
    """Whether changing this tunable can change a run in this mode (prompts: LLM mode only)."""
    if name.endswith("_prompt") or name in LLM_ONLY:
        return not offline
    return not (name in OFFLINE_ONLY and not offline)


def is_prompt(config: BaseModel, name: str) -> bool:
    """Prompt tunables are the `*_prompt` text fields; only an LLM engine reads them."""
    return name.endswith("_prompt") and isinstance(getattr(config, name, None), str)


def is_setting(config: BaseModel, name: str) -> bool:
    """A setting the offline search can move: a config field with a grid."""
    return name in type(config).model_fields and name in GRIDS


def is_choice(name: str) -> bool:
    return any(isinstance(v, bool | str) for v in GRIDS.get(name, ()))


def grid_of(name: str, current: Any) -> list[Any]:
    """The setting's grid with the current value on it (choices keep their order)."""
    grid = list(GRIDS[name])
    if current not in grid:
        grid.append(current)
        if not is_choice(name):
            grid.sort()
    return grid


def moves(name: str, current: Any, direction: int, *, decisive: bool = True) -> list[Any]:
    """Every other grid value in the order to try them, nearest first.

    With a decisive `direction` (+1 larger, -1 smaller) the two nearest that way come first, then
    alternately the nearest the other way and the next along; an undecided one (0, or a split vote:
    `decisive=False`) alternates from the start, its own way first. A rejected direction is thus
    soon tried the other way. A choice setting (bm25/hybrid, True/False) offers its other values.
    """
    grid = grid_of(name, current)
    if is_choice(name):
        return [v for v in grid if v != current]
    at = grid.index(current)
    up, down = grid[at + 1 :], list(reversed(grid[:at]))
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
