"""A setting's search grid and the engines that read it, declared on the config field itself.

    class RAGConfig(SystemConfig):
        top_k: Annotated[int, Grid(1, 2, 3, 5, 8)] = 5

The optimiser (optimize/tunables.py) moves a setting along its grid and skips a setting its mode
cannot change: `reads="offline"` for one only the rule engines read, `reads="llm"` for one only the
LLM engines read. A field without a Grid is not searched offline; `*_prompt` text fields are
prompt tunables, read by the LLM engines only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

Engines = Literal["both", "offline", "llm"]


@dataclass(frozen=True, slots=True, init=False)
class Grid:
    """The ordered values an offline search tries for a setting (booleans and strings: unordered choices)."""

    values: tuple[Any, ...]
    reads: Engines

    def __init__(self, *values: Any, reads: Engines = "both") -> None:
        if not values:
            raise ValueError("a Grid needs at least one value")
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "reads", reads)


def grids(config: type[BaseModel] | BaseModel) -> dict[str, Grid]:
    """Every field of a config class that declares a Grid, by field name."""
    cls = config if isinstance(config, type) else type(config)
    found: dict[str, Grid] = {}
    for name, info in cls.model_fields.items():
        grid = next((m for m in info.metadata if isinstance(m, Grid)), None)
        if grid is not None:
            found[name] = grid
    return found


def grid(config: type[BaseModel] | BaseModel, name: str) -> Grid | None:
    """The Grid declared on field `name`, or None."""
    return grids(config).get(name)
