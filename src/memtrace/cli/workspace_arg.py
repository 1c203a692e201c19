"""The one workspace convention of the CLI: a positional WORKSPACE first, `--workspace/-w` a hidden alias.

Older scripts wrote `memtrace run --workspace ws` or `memtrace import FILE -w ws`; they keep working
because the alias takes the workspace's place and the other positionals move up by one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


class CommandLineError(typer.BadParameter):
    """A wrong or missing argument, shown with the usage line (typer's own click is private to it)."""

    def format_message(self) -> str:
        return self.message


WORKSPACE_HELP = "Workspace folder (holds memtrace.db)."

WorkspaceArgument = Annotated[
    str | None, typer.Argument(metavar="WORKSPACE", help=WORKSPACE_HELP, show_default=False)
]
WorkspaceAlias = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", hidden=True, help="The same as the WORKSPACE argument."),
]


def resolve_workspace(positional: str | None, alias: Path | None) -> Path:
    """The workspace of a command whose only positional is WORKSPACE."""
    workspace, _ = split_workspace(alias, [positional])
    return workspace


def split_workspace(alias: Path | None, positionals: list[str | None]) -> tuple[Path, list[str | None]]:
    """The workspace and the remaining positionals, whether it came first or as `--workspace`.

    `positionals` are the raw values of WORKSPACE and the arguments after it, in order; with the alias
    the values typer bound shift left, so `import FILE -w ws` means WORKSPACE=ws, SOURCE=FILE.
    """
    given = [value for value in positionals if value is not None]
    slots = len(positionals) - 1
    if alias is not None:
        if len(given) > slots:  # WORKSPACE was written too: it must name the same folder
            if Path(given[0]) != alias:
                raise CommandLineError(
                    f"two workspaces given: {given[0]} and --workspace {alias} (give one, as WORKSPACE)"
                )
            given = given[1:]
        return alias, given + [None] * (slots - len(given))
    if not given:
        raise CommandLineError("missing argument WORKSPACE (the workspace folder)")
    return Path(given[0]), given[1:] + [None] * (slots - len(given) + 1)


def require(value: str | None, name: str) -> str:
    """A positional the alias handling had to declare optional, but the command needs."""
    if value is None:
        raise CommandLineError(f"missing argument {name}")
    return value
