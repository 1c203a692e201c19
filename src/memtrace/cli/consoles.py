"""The CLI's consoles, with rich markup off: data such as `[/quote]` or a run named `[/]` prints as it is.

Output that wants colour builds it with `styled`, never with markup in a string.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

console = Console(markup=False)
errors = Console(stderr=True, markup=False)


def styled(text: str, style: str) -> Text:
    """`text` in `style`, whatever brackets it holds."""
    return Text(text, style=style)
