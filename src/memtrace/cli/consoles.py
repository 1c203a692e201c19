"""The CLI's consoles: markup off, terminal width on a terminal, full width when piped to a file.

Markup is off so data such as `[/quote]` or a run named `[/]` prints as it is; output that wants
colour builds it with `styled`, never with markup in a string. Rich falls back to 80 columns when it
cannot ask a terminal, which cuts table cells in a saved log; a piped command writes each table as
wide as its content instead (up to PIPED_WIDTH).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

#: The widest a table may grow when nothing limits it; wide enough for every table the CLI prints.
PIPED_WIDTH = 400

#: Rules and headings that fill the line stop here on a piped console rather than at PIPED_WIDTH.
RULE_WIDTH = 100


def output_console(*, stderr: bool = False, **options: Any) -> Console:
    """A console for stdout (or stderr) that prints data as it is and does not truncate piped tables."""
    options.setdefault("markup", False)
    stream = sys.stderr if stderr else sys.stdout
    if os.environ.get("COLUMNS") or _is_terminal(stream):
        return Console(stderr=stderr, **options)
    return Console(stderr=stderr, width=PIPED_WIDTH, **options)


def rule_width(console: Console) -> int:
    """The width of a full-line rule: the terminal's, or RULE_WIDTH when the console is piped wide."""
    return min(console.width, RULE_WIDTH) if console.width >= PIPED_WIDTH else console.width


def styled(text: str, style: str) -> Text:
    """`text` in `style`, whatever brackets it holds."""
    return Text(text, style=style)


def _is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


#: The consoles every command prints to.
console = output_console()
errors = output_console(stderr=True)


#: Every command's `--json PATH`: the result for scripts, beside the tables.
JsonOption = Annotated[Path | None, typer.Option("--json", help="Also write the result as JSON here.")]


def write_json(path: Path | None, payload: Any) -> None:
    """Write `payload` as JSON to `path` (when given) and say so."""
    if path is not None:
        path.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
        console.print(f"wrote {path}")
