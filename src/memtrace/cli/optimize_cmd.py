"""`memtrace optimize`: tune a system's blamed prompts and settings, keep what validation confirms.

Prints one line per round as it ends, then the history and the holdout delta as rich tables; the
history is saved as `optimize-history-<system>.json` and `.md` in the workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from .consoles import styled
from .executor_options import ExecutorOption, RayAddressOption, WorkersOption, executor_spec
from .llm_options import (
    DEFAULT_CONCURRENCY,
    ConcurrencyOption,
    JudgeBaseUrlOption,
    JudgeModelOption,
    JudgeOption,
    LLMLimits,
    MaxTokensOption,
    RetriesOption,
    TimeoutOption,
    choose_judge,
    closing_client,
    probe_judge,
)
from .run_cmd import parse_overrides
from .workspace_arg import CommandLineError, WorkspaceAlias, WorkspaceArgument, resolve_workspace

if TYPE_CHECKING:
    from ..optimize import OptimizeResult, RoundRecord


def optimize(
    workspace_arg: WorkspaceArgument = None,
    system: Annotated[
        str | None, typer.Option(help="long_context, rag, mem0, evermemos or a plugin.")
    ] = None,
    dataset: Annotated[
        str, typer.Option(help="locomo:PATH, longmemeval:PATH, or sample (seeded sample conversations).")
    ] = "sample",
    train: Annotated[int, typer.Option(help="Training conversations (the first N, in dataset order).")] = 4,
    validation: Annotated[int, typer.Option(help="Validation conversations (the next N).")] = 2,
    holdout: Annotated[int, typer.Option(help="Holdout conversations (the next N).")] = 2,
    rounds: Annotated[int, typer.Option(help="Optimisation rounds at most.")] = 3,
    candidates: Annotated[int, typer.Option(help="Proposals evaluated on validation per round.")] = 4,
    verify_limit: Annotated[int, typer.Option(help="Replays to verify attributions per round.")] = 100,
    seed: Annotated[
        int | None, typer.Option(help="Shuffle the conversations with this seed before splitting.")
    ] = None,
    questions: Annotated[int | None, typer.Option(help="Use the first N questions of each.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Start from the defaults with KEY=VALUE changed (repeatable)."),
    ] = None,
    llm: Annotated[
        str, typer.Option(help="offline, or openai (any OpenAI-compatible endpoint).")
    ] = "offline",
    model: Annotated[str | None, typer.Option(help="Model name for --llm openai.")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Endpoint for --llm openai (or OPENAI_BASE_URL).")
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
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the history JSON here.")] = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Optimise a memory system: attribute training failures, tune the blamed tunables, check on holdout."""
    from ..datasets import load_dataset
    from ..optimize import history_paths
    from ..optimize import optimize as run_optimize
    from ..systems.registry import system_names
    from . import common as cli  # the shared console, progress bar and LLM client factory

    workspace = resolve_workspace(workspace_arg, workspace_alias)
    if system is None:
        raise CommandLineError(f"missing option --system ({', '.join(system_names())})")
    limits = LLMLimits(timeout, retries, max_tokens, concurrency)
    with (
        closing_client(cli.llm_client(llm, model, base_url, workspace, limits)) as client,
        choose_judge(
            judge,
            client,
            model=model,
            base_url=base_url,
            judge_model=judge_model,
            judge_base_url=judge_base_url,
            workspace=workspace,
            limits=limits,
        ) as choice,
    ):
        with cli.progress() as progress:
            task = progress.add_task("optimising", total=None)

            def advance(stage: str, done: int, total: int) -> None:
                progress.update(task, description=f"{system} · {stage}", completed=done, total=total)

            def round_done(record: RoundRecord) -> None:
                style = "green" if record.kept else "yellow"
                progress.console.print(
                    f"round {record.round}: train {record.train_accuracy:.4f},",
                    styled(record.decision, style),
                    highlight=False,
                )

            result = run_optimize(
                system,
                dataset,
                workspace,
                train=train,
                validation=validation,
                holdout=holdout,
                rounds=rounds,
                llm=client,
                judge=choice.judge,
                seed=seed,
                candidates=candidates,
                verify_limit=verify_limit,
                start=parse_overrides(set_),
                questions=questions,
                progress=advance,
                on_round=round_done,
                executor=executor_spec(workers, executor, ray_address),
            )
        cli.console.print(history_table(result))
        cli.console.print(holdout_table(result))
        json_path, md_path = history_paths(workspace, system)
        cli.console.print(f"history: {json_path} and {md_path}")
        # an LLM judge that accepts nonsense answers makes every accuracy above meaningless: say so
        probe_judge(choice, load_dataset(dataset, conversations=1, questions=questions), cli.console)
    cli.write_json(json_out, result.to_dict())


def history_table(result: OptimizeResult) -> Table:
    """Per round: training accuracy, the proposals and their validation scores, the decision, tokens."""
    table = Table(
        title=f"Optimisation of {result.system} ({result.llm}), "
        f"start validation {result.start_validation:.4f}",
        title_justify="left",
    )
    for column in ("round", "train", "proposal", "validation", "decision", "tokens"):
        table.add_column(
            column, justify="right" if column in ("round", "train", "validation", "tokens") else "left"
        )
    for record in result.rounds:
        total = record.tokens.get("total", {})
        spent = str(total.get("input_tokens", 0) + total.get("output_tokens", 0))
        proposals = record.proposals or [None]
        for i, p in enumerate(proposals):
            score = "-" if p is None or p.validation is None else f"{p.validation:.4f}"
            if p is not None and p.status == "rejected":
                score = "rejected"
            first = i == 0
            table.add_row(
                str(record.round) if first else "",
                f"{record.train_accuracy:.4f}" if first else "",
                "-" if p is None else p.label(),
                score,
                _verdict(record) if first else "",
                spent if first else "",
            )
    return table


def _verdict(record: RoundRecord) -> Text:
    """The decision in a few words (the full reason is printed per round and saved in the history)."""
    if record.kept and record.validation_after is not None:
        return styled(f"kept ({record.validation_after - record.validation_before:+.4f})", "green")
    if not record.proposals:  # "no failures to learn from" or "no proposal left"
        return styled(record.decision.partition(":")[0] or "no proposal left", "yellow")
    return styled("rolled back", "yellow")


def holdout_table(result: OptimizeResult) -> Table:
    """Holdout accuracy of the starting and final configs, the delta and its bootstrap interval."""
    table = Table(title="Holdout: starting vs final config", title_justify="left")
    for column in ("system", "questions", "start", "final", "delta", "95% CI", "changes"):
        table.add_column(column, justify="left" if column in ("system", "changes") else "right")
    h = result.holdout
    changes = ", ".join(
        f"{name} (prompt)" if isinstance(new, str) and len(new) > 40 else f"{name} {old} -> {new}"
        for name, (old, new) in result.changes.items()
    )
    if h is not None:
        table.add_row(
            result.system,
            str(h.questions),
            f"{h.start_accuracy:.4f}",
            f"{h.final_accuracy:.4f}",
            f"{h.delta:+.4f}",
            f"[{h.low:+.4f}, {h.high:+.4f}]",
            changes or "none kept",
        )
    return table
