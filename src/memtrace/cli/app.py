"""The `memtrace` command line: run, import, export, inspect, attribute, verify, bench, example, version.

Every command prints rich tables and takes `--json` for scripts; expected failures (a corrupt
file, a missing run) print one line naming the problem and exit with status 1. This module wires the
typer app; each command lives in its own `*_cmd.py` and imports its heavy parts when it runs.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from .. import __version__
from . import consoles, failures
from .common import (
    DEFAULT_CONCURRENCY,
    ConcurrencyOption,
    JsonOption,
    JudgeBaseUrlOption,
    JudgeModelOption,
    JudgeOption,
    LLMLimits,
    MaxTokensOption,
    RetriesOption,
    TimeoutOption,
    closing_client,
    llm_client,
    write_json,
)
from .executor_options import ExecutorOption, RayAddressOption, WorkersOption, executor_spec
from .workspace_arg import WorkspaceAlias, WorkspaceArgument, resolve_workspace

app = typer.Typer(
    name="memtrace",
    help="Explain, prove and fix the wrong answers of LLM memory systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console, errors = consoles.console, consoles.errors

#: The exit status typer gives Ctrl-C.
INTERRUPTED_EXIT_CODE = 130


def main() -> None:
    """Console entry point: expected errors become one line, not a traceback (see failures.py)."""
    try:
        app()
    except SystemExit as exc:
        if exc.code == INTERRUPTED_EXIT_CODE:  # typer turns Ctrl-C into this exit status
            errors.print(failures.interrupted_line(), highlight=False, soft_wrap=True)
        raise
    except Exception as exc:
        line = failures.failure_line(exc)
        if line is None:
            raise
        errors.print(consoles.styled("error:", "red"), line, highlight=False, soft_wrap=True)
        sys.exit(1)


@app.command()
def version() -> None:
    """Print the memtrace version."""
    console.print(f"memtrace {__version__}")


def run(
    workspace_arg: WorkspaceArgument = None,
    system: Annotated[
        str,
        typer.Option(
            help="long_context, rag, mem0, evermemos, mem0ai (the real mem0 library: needs "
            "'memtrace[mem0ai]' and a model) or a plugin; a comma list, or all."
        ),
    ] = "all",
    dataset: Annotated[str, typer.Option(help="sample[:SEED], locomo:PATH or longmemeval:PATH.")] = "sample",
    conversations: Annotated[
        int | None, typer.Option(help="Use the first N conversations (sample: N seeded variants).")
    ] = None,
    questions: Annotated[int | None, typer.Option(help="Use the first N questions of each.")] = None,
    llm: Annotated[
        str, typer.Option(help="offline, or openai (any OpenAI-compatible endpoint).")
    ] = "offline",
    model: Annotated[str | None, typer.Option(help="Model name for --llm openai.")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Endpoint for --llm openai (or OPENAI_BASE_URL).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Change a setting, KEY=VALUE (repeatable), e.g. top_k=8."),
    ] = None,
    timeout: TimeoutOption = None,
    retries: RetriesOption = None,
    max_tokens: MaxTokensOption = None,
    concurrency: ConcurrencyOption = DEFAULT_CONCURRENCY,
    judge: JudgeOption = None,
    judge_model: JudgeModelOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    workers: WorkersOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    json_out: JsonOption = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Run memory systems over a dataset: one recorded run per conversation and system."""
    from .run_cmd import run_command, system_names

    workspace = resolve_workspace(workspace_arg, workspace_alias)
    system_names(system)  # an unknown system fails before any client is made
    limits = LLMLimits(timeout, retries, max_tokens, concurrency)
    with closing_client(llm_client(llm, model, base_url, workspace, limits)) as client:
        payload = run_command(
            workspace,
            system,
            dataset,
            conversations=conversations,
            questions=questions,
            overrides=set_,
            client=client,
            judge=judge,
            judge_model=judge_model,
            judge_base_url=judge_base_url,
            model=model,
            base_url=base_url,
            limits=limits,
            console=console,
            executor=executor_spec(workers, executor, ray_address),
        )
    write_json(json_out, payload)


from .import_cmd import import_  # noqa: E402

app.command("import")(import_)

from .export_cmd import export  # noqa: E402

app.command()(export)

from .ui_cmd import ui  # noqa: E402

app.command()(ui)

from .inspect_cmd import inspect  # noqa: E402

app.command()(inspect)
app.command()(run)

from .attribute_cmd import attribute  # noqa: E402

app.command()(attribute)

from .verify_cmd import verify  # noqa: E402

app.command()(verify)

from .example_cmd import example  # noqa: E402

app.command()(example)
# `memtrace demo` was this command's first name; `make demo` (the four systems) now owns that word.
app.command("demo", hidden=True)(example)

from .bench_cmd import bench_app  # noqa: E402

app.add_typer(bench_app, name="bench")

from .report_cmd import report  # noqa: E402

app.command()(report)

from .optimize_cmd import optimize  # noqa: E402

app.command()(optimize)


if __name__ == "__main__":
    main()
