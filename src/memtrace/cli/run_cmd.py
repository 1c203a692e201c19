"""`memtrace run`: run memory systems over a dataset into a workspace and print accuracy tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ..errors import MemtraceError
from .consoles import styled
from .llm_options import LLMLimits, choose_judge, probe_judge
from .progress import progress_bar
from .run_figures import accuracy_table, headline_note

if TYPE_CHECKING:
    from ..executors import ExecutorSpec
    from ..llm.limiter import LocalLimiters
    from ..systems import RunResult

# The datasets and the systems (numpy, bm25s) load when a command runs, not when the CLI starts.


def run_command(
    workspace: Path,
    system: str,
    dataset: str,
    *,
    conversations: int | None,
    questions: int | None,
    overrides: list[str] | None,
    client: Any,
    judge: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    model: str | None,
    base_url: str | None,
    limits: LLMLimits,
    console: Console,
    executor: ExecutorSpec | None = None,
) -> dict[str, Any]:
    """`memtrace run`: run, print accuracy, the model calls given up on and whether an LLM judge is
    reliable (probed after the runs, so a dead endpoint still leaves its run recorded as incomplete;
    the table waits for the probe, since an unreliable judge's figure is not the headline)."""
    from ..datasets import load_dataset

    names = system_names(system, offline=client is None)
    settings = parse_overrides(overrides)
    choice = choose_judge(
        judge,
        client,
        model=model,
        base_url=base_url,
        judge_model=judge_model,
        judge_base_url=judge_base_url,
        workspace=workspace,
        limits=limits,
    )
    with choice:
        results = run_systems(
            names,
            dataset,
            workspace,
            conversations=conversations,
            questions=questions,
            llm=client,
            console=console,
            overrides=settings,
            judge=choice.judge,
            executor=executor,
            limiters=limits.limiters if client is not None else None,
        )
        data = load_dataset(dataset, conversations=conversations, questions=questions)
        check = probe_judge(choice, data, console)
    kind = choice.kind or "strict"  # with no judge chosen the runner judges strictly (offline)
    table, payload = accuracy_table(results, kind, check)
    console.print(table)
    if note := headline_note(payload, kind):
        console.print(styled(note, "bold red"), highlight=False)
    console.print(f"{len(results)} run(s) recorded into {workspace}")
    failures = [line for result in results for line in result.failures]
    if failures:
        said = f"{len(failures)} model call(s) gave unusable replies and were recorded as failed operations"
        console.print(
            styled(f"{said}; the runs went on.", "yellow"), f"First: {failures[0]}", highlight=False
        )
    if check is not None:
        for row in payload.values():
            row["judge_check"] = check.to_dict()
    return payload


def system_names(spec: str, *, offline: bool | None = None) -> list[str]:
    """The systems `--system` names (comma-separated, or `all`: every registered one that can run in
    this mode, so a system needing a model is left out of an offline `all`); an unknown one raises."""
    from ..systems.registry import loadable_systems, system_class

    if spec == "all":
        names = [n for n, cls in loadable_systems().items() if not offline or cls.runs_offline]
    else:
        names = [s.strip() for s in spec.split(",") if s.strip()]
    for name in names:
        cls = system_class(name)
        if offline and not cls.runs_offline:
            raise MemtraceError(f"system {name!r} needs a model: pass --llm openai --model ... --base-url")
    return names


def parse_overrides(items: list[str] | None) -> dict[str, Any]:
    """`KEY=VALUE` pairs; a value is read as JSON when it parses (numbers, true/false), else as text."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise MemtraceError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


def configured(name: str, overrides: dict[str, Any], systems: list[str]) -> Any:
    """System `name` with the `--set` overrides its config has (every key must fit some system)."""
    from ..systems.registry import system_class

    cls = system_class(name)
    fields = cls.Config.model_fields
    unknown = [k for k in overrides if not any(k in system_class(s).Config.model_fields for s in systems)]
    if unknown:
        raise MemtraceError(f"--set {unknown[0]}: no setting of that name in {', '.join(systems)}")
    try:
        return cls.Config(**{k: v for k, v in overrides.items() if k in fields})
    except ValueError as exc:  # pydantic's ValidationError: a wrong type or value
        first = str(exc).splitlines()
        raise MemtraceError(f"--set for {name}: {' '.join(first[1:3]).strip() or first[0]}") from None


def run_systems(
    systems: list[str],
    dataset: str,
    workspace: Path,
    *,
    conversations: int | None,
    questions: int | None,
    llm: Any,
    console: Console,
    overrides: dict[str, Any] | None = None,
    judge: Any = None,
    executor: ExecutorSpec | None = None,
    limiters: LocalLimiters | None = None,
) -> list[RunResult]:
    """One recorded run per conversation and system, with progress bars; run ids are derived from what
    each run is, so the store is the same whichever executor recorded it. With a model, workers make
    their own clients and share `limiters` (the driver's clients' own) through the executor."""
    from ..datasets import load_dataset
    from ..executors import ExecutorSpec
    from ..graph import Store
    from ..systems.run_tasks import RunTask, derived_run_id, model_recipes, why_in_process

    spec = executor if executor is not None else ExecutorSpec(workers=1)
    configs = {name: configured(name, overrides or {}, systems) for name in systems}
    data = load_dataset(dataset, conversations=conversations, questions=questions)
    if conversations is not None and len(data) < conversations:
        console.print(
            f"note: {dataset} has {len(data)} conversation(s), fewer than the {conversations} asked for; "
            f"running {len(data)}",
            highlight=False,
        )
    if llm is not None and not spec.in_process and (why := why_in_process(llm, judge)):
        console.print(f"note: {why}: the runs go on in this process; --workers is ignored", highlight=False)
        spec = ExecutorSpec(workers=1)
    store = Store(workspace)
    try:
        taken = {run.id for run in store.runs()}
    finally:
        store.close()
    tasks: list[RunTask] = []
    for name in systems:
        for conversation in data:
            config = configs[name]
            run_id = derived_run_id(name, conversation.id, dataset, config.model_dump(), taken)
            taken.add(run_id)
            tasks.append(RunTask(name, config, conversation, dataset, run_id, judge))
    with progress_bar(console) as progress:
        overall = progress.add_task("runs", total=len(tasks))
        with model_recipes(tasks, llm, spec, limiters, workspace):
            if spec.runs_here(len(tasks)):
                return [_run_here(task, workspace, llm, progress, overall) for task in tasks]
            return _run_in_workers(tasks, workspace, spec, lambda: progress.advance(overall), llm is not None)


def _run_here(task: Any, workspace: Path, llm: Any, progress: Any, overall: Any) -> RunResult:
    """The run records straight into the workspace, with a bar of its own."""
    from ..systems import run_conversation
    from ..systems.registry import system_class
    from ..systems.run_tasks import task_clients

    bar = progress.add_task(f"{task.system} · {task.conversation.id}", total=None)

    def advance(stage: str, done: int, total: int) -> None:
        progress.update(bar, completed=done, total=total)

    with task_clients(task, workspace, llm) as (client, judge):
        system = system_class(task.system)(task.config, llm=client)
        result = run_conversation(
            system,
            task.conversation,
            workspace,
            judge=judge,
            dataset=task.dataset,
            progress=advance,
            run_id=task.run_id,
            ahead=task.ahead,
        )
    progress.remove_task(bar)
    progress.advance(overall)
    return result


def _run_in_workers(
    tasks: list[Any], workspace: Path, spec: ExecutorSpec, advance: Any, model: bool
) -> list[RunResult]:
    """Each run records in a worker's scratch workspace; its journal is ingested here, in task order.
    With a model the workers start with the OpenAI SDK imported (a second or two each otherwise)."""
    from ..systems.run_tasks import record_runs

    results: list[RunResult] = []

    def done(index: int, result: RunResult) -> None:
        results.append(result)
        advance()

    record_runs(tasks, workspace, spec, done, preload=["memtrace.llm.openai_backend"] if model else [])
    return results


def write_json(path: Path, payload: Any) -> None:
    path.write_text(json.dumps(payload, indent=2))
