"""`memtrace bench ...`: run a benchmark of bench/ with progress bars and print its tables.

The benchmarks themselves (bench/) return plain dicts and report progress through a callback; the
bars and tables that show them live here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..attribution.evidence.locator_settings import DEFAULT_K, DEFAULT_QUERY_MODES, RETRIEVERS
from ..errors import MemtraceError
from ..vocabulary import MEMORY_ERROR_TYPES, ErrorType
from .consoles import JsonOption, console, write_json
from .executor_options import ExecutorOption, RayAddressOption, WorkersOption, executor_spec
from .llm_options import DEFAULT_CONCURRENCY, ConcurrencyOption, LLMLimits, closing_client, llm_client
from .progress import progress_bar, rich_progress
from .workspace_arg import CommandLineError, WorkspaceAlias, resolve_workspace

bench_app = typer.Typer(
    help="Benchmarks: evidence location, MemTraceBench attribution accuracy, injected faults.",
    no_args_is_help=True,
)


@bench_app.command("memtracebench")
def bench_memtracebench(
    directory: Annotated[
        Path, typer.Argument(metavar="DIRECTORY", help="MemTraceBench layout: <dir>/<split>/*.json.")
    ],
    workspace_arg: Annotated[
        Path | None,
        typer.Argument(metavar="WORKSPACE", help="Keep the imported graphs in this workspace."),
    ] = None,
    method: Annotated[
        str, typer.Option(help="flow, agent, all-at-once, last-op, random or a plugin.")
    ] = "flow",
    split: Annotated[list[str] | None, typer.Option(help="Splits to evaluate (default all).")] = None,
    workspace_alias: WorkspaceAlias = None,
    llm: Annotated[str, typer.Option(help="offline, or openai for the LLM methods.")] = "offline",
    model: Annotated[str | None, typer.Option(help="Model name for --llm openai.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Endpoint for --llm openai.")] = None,
    concurrency: ConcurrencyOption = DEFAULT_CONCURRENCY,
    scorer: Annotated[
        str, typer.Option(help="flow's support scorer: overlap, embedding, minilm or llm.")
    ] = "overlap",
    evidence: Annotated[
        str, typer.Option(help="flow's starting points: auto, gold, bm25, dense or hybrid.")
    ] = "auto",
    seed: Annotated[
        int, typer.Option(help="Seed of the random baseline (the same seed, the same picks).")
    ] = 0,
    cases_json: Annotated[
        Path | None, typer.Option("--cases-json", help="Write one row per case here (gold, predicted, why).")
    ] = None,
    workers: WorkersOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    json_out: JsonOption = None,
) -> None:
    """Attribution accuracy against MemTraceBench gold labels, per split, with a confusion matrix."""
    from ..bench.memtracebench import evaluate_memtracebench

    workspace = workspace_arg  # optional here: without one the graphs go to a temporary folder
    if workspace_alias is not None:
        workspace = resolve_workspace(str(workspace_arg) if workspace_arg else None, workspace_alias)
    limits = LLMLimits(concurrency=concurrency)
    client = llm_client(llm, model, base_url, workspace or Path("."), limits) if llm != "offline" else None
    with closing_client(client), rich_progress(console) as progress:
        result = evaluate_memtracebench(
            directory,
            method=method,
            splits=split,
            workspace=workspace,
            llm=client,
            progress=progress,
            scorer=scorer,
            evidence=evidence,
            seed=seed,
            executor=executor_spec(workers, executor, ray_address),
        )
    console.print(memtracebench_table(result))
    console.print(confusion_table(result))
    if workspace is not None:
        console.print(f"attributions stored in {workspace} (memtrace report {workspace} --method {method})")
    write_json(cases_json, result["cases"])
    write_json(json_out, result)


@bench_app.command("evidence")
def bench_evidence(
    source: Annotated[Path, typer.Argument(help="A workspace or a MemTraceBench directory.")],
    k: Annotated[int, typer.Option("--k", help="Evidence messages retrieved per case.")] = 8,
    method: Annotated[list[str] | None, typer.Option(help="bm25, dense, hybrid (repeatable).")] = None,
    query_mode: Annotated[
        list[str] | None, typer.Option(help="question+answer, question, question+prediction.")
    ] = None,
    failed_only: Annotated[bool, typer.Option(help="Only failed cases.")] = False,
    json_out: JsonOption = None,
) -> None:
    """Macro and micro recall@k of the gold evidence ids for each retrieval method."""
    options: dict[str, Any] = {"failed_only": failed_only}
    if query_mode:
        options["query_modes"] = query_mode
    evidence_command(source, k, method or ["bm25", "dense", "hybrid"], json_out, console, **options)


@bench_app.command("faults")
def bench_faults(
    workspace_arg: Annotated[
        str | None,
        typer.Argument(metavar="WORKSPACE", help="Workspace for the runs (default: OUT/workspace)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Where the JSON, the plot and (--memtracebench) the layout go (default: WORKSPACE/faults)."
        ),
    ] = None,
    system: Annotated[str, typer.Option(help="Systems: a comma list or all.")] = "all",
    dataset: Annotated[str, typer.Option(help="sample[:SEED] or locomo:PATH.")] = "sample",
    conversations: Annotated[
        int | None, typer.Option(help="Use the first N conversations (sample: N seeded variants).")
    ] = None,
    per_type: Annotated[int, typer.Option(help="Labelled cases to keep per system and error type.")] = 10,
    seed: Annotated[
        int, typer.Option(help="Shuffles which cases are injected, and seeds the random baseline.")
    ] = 0,
    method: Annotated[str, typer.Option(help="Comma list of methods to score.")] = "flow,last-op,random",
    memtracebench: Annotated[
        bool, typer.Option(help="Also write each labelled replay as a MemTraceBench graph (large).")
    ] = False,
    keep_replays: Annotated[
        bool, typer.Option(help="Keep the labelled replays in the workspace (each holds a full run).")
    ] = False,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Also verify every method's claim, and score the verifier against the planted faults.",
        ),
    ] = False,
    workers: WorkersOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    json_out: JsonOption = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Inject faults into correct answers, keep those that flip, and score attribution methods on them."""
    from ..bench.fault_bench import fault_benchmark
    from .run_cmd import system_names

    if workspace_arg is None and workspace_alias is None:
        if out is None:
            raise CommandLineError("give a WORKSPACE or --out DIR")
        workspace = out / "workspace"
    else:
        workspace = resolve_workspace(workspace_arg, workspace_alias)
    out = out if out is not None else workspace / "faults"
    with rich_progress(console) as progress:
        result = fault_benchmark(
            system_names(system, offline=True),  # fault injection replays offline
            dataset,
            workspace,
            out,
            per_type=per_type,
            seed=seed,
            methods=[m.strip() for m in method.split(",") if m.strip()],
            conversations=conversations,
            progress=progress,
            memtracebench=memtracebench,
            keep_replays=keep_replays,
            executor=executor_spec(workers, executor, ray_address),
            verify=verify,
        )
    for table in fault_tables(result):
        console.print(table)
    for gap in result["missing"]:
        console.print(
            f"note: {gap['system']}: {gap['kept']} {gap['error_type']} case(s),"
            f" fewer than --per-type {per_type}: {gap['why']}",
            markup=False,
        )
    for path, size in result["written"].items():
        console.print(f"wrote {path} ({size / 2**20:.1f} MiB)")
    write_json(json_out, result)


# -- tables ----------------------------------------------------------------------------------


def evidence_table(result: dict[str, Any]) -> Table:
    """The recall table: one row per (query mode, method), best macro recall of each mode in bold."""
    k = result["k"]
    table = Table(title=f"Evidence recall@{k} ({result['cases']} cases, {result['runs']} runs)")
    table.add_column("query")
    table.add_column("method")
    table.add_column(f"macro R@{k}", justify="right")
    table.add_column(f"micro R@{k}", justify="right")
    table.add_column("found / gold", justify="right")
    best: dict[str, float] = {}
    for row in result["results"]:
        if row["macro"] is not None:
            best[row["query_mode"]] = max(best.get(row["query_mode"], 0.0), row["macro"])
    for row in result["results"]:
        macro, micro = row["macro"], row["micro"]
        macro_text = Text("-" if macro is None else f"{macro:.3f}")
        if macro is not None and macro == best.get(row["query_mode"]):
            macro_text.stylize("bold")
        table.add_row(
            row["query_mode"],
            row["method"],
            macro_text,
            "-" if micro is None else f"{micro:.3f}",
            f"{row['found']} / {row['gold']}",
        )
    notes = [f"dense: {result['embedder']} embedder", f"{result['seconds']:.1f}s"]
    if result["unresolved_gold"]:
        notes.append(f"{result['unresolved_gold']} gold id(s) name no message (not counted)")
    if result["cases_without_gold_message"]:
        notes.append(f"{result['cases_without_gold_message']} case(s) with no resolvable gold skipped")
    table.caption = "; ".join(notes)
    return table


def evidence_command(
    source: Path,
    k: int = DEFAULT_K,
    methods: Sequence[str] = RETRIEVERS,
    json_out: Path | None = None,
    console: Console | None = None,
    *,
    query_modes: Sequence[str] = DEFAULT_QUERY_MODES,
    failed_only: bool = False,
    splits: Sequence[str] | None = None,
) -> dict[str, Any]:
    """`memtrace bench evidence`: measure with a progress bar, print the table, write JSON if asked."""
    from ..bench.evidence import evidence_recall

    console = console if console is not None else Console(markup=False)
    if not Path(source).exists():
        raise MemtraceError(f"{source}: no such file or directory")
    with progress_bar(console) as bar:
        task = bar.add_task("locating evidence", total=None)
        result = evidence_recall(
            source,
            k=k,
            methods=methods,
            query_modes=query_modes,
            failed_only=failed_only,
            splits=splits,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    console.print(evidence_table(result))
    if json_out is not None:
        Path(json_out).write_text(json.dumps(result, indent=2, ensure_ascii=False))
        console.print(f"wrote {json_out}")
    return result


def memtracebench_table(result: dict[str, Any]) -> Table:
    table = Table(title=f"MemTraceBench: {result['method']} on {result['directory']}", title_justify="left")
    for column in ("split", "cases", "op acc.", "type acc.", "undetermined", "tokens/case", "s/case"):
        table.add_column(column, justify="left" if column == "split" else "right")
    rows = [*result["splits"].items(), ("all", result["all"])]
    for split, s in rows:
        table.add_row(
            split,
            str(s["cases"]),
            _pct(s["op_accuracy"]),
            _pct(s["type_accuracy"]),
            _pct(s["undetermined_rate"]),
            "-" if s["avg_tokens"] is None else f"{s['avg_tokens']:.0f}",
            "-" if s["avg_seconds"] is None else f"{s['avg_seconds']:.3f}",
        )
    return table


def confusion_table(result: dict[str, Any]) -> Table:
    predicted = [*MEMORY_ERROR_TYPES, ErrorType.UNDETERMINED]
    table = Table(title="Confusion (rows gold, columns attributed)", title_justify="left")
    table.add_column("gold")
    for kind in predicted:
        table.add_column(kind.replace("Error", ""), justify="right")
    for gold, row in result["all"]["confusion"].items():
        table.add_row(gold, *(str(row.get(kind, 0)) for kind in predicted))
    return table


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def fault_tables(result: dict[str, Any]) -> list[Table]:
    tables = []
    main = Table(title=f"Injected faults: {result['labelled']} labelled cases", title_justify="left")
    for column in ("method", "scope", "cases", "op acc.", "type acc.", "undetermined"):
        main.add_column(column, justify="left" if column in ("method", "scope") else "right")
    for method, scores in result["results"].items():
        rows = [("all", scores["all"])]
        rows += [(f"system {k}", v) for k, v in scores["by_system"].items()]
        rows += [(f"type {k}", v) for k, v in scores["by_type"].items()]
        for scope, s in rows:
            main.add_row(
                method,
                scope,
                str(s["cases"]),
                _pct(s["op_accuracy"]),
                _pct(s["type_accuracy"]),
                str(s["undetermined"]),
            )
    tables.append(main)
    first = next(iter(result["results"].values()), None)
    if first:
        confusion = Table(
            title=f"Confusion of {next(iter(result['results']))} (rows injected)", title_justify="left"
        )
        kinds = [*MEMORY_ERROR_TYPES, ErrorType.UNDETERMINED]
        confusion.add_column("injected")
        for kind in kinds:
            confusion.add_column(kind.replace("Error", ""), justify="right")
        for gold, row in first["confusion"].items():
            confusion.add_row(gold, *(str(row.get(k, 0)) for k in kinds))
        tables.append(confusion)
    if result.get("coverage"):
        tables.append(coverage_table(result["coverage"]))
    if result.get("verification"):
        tables.append(fault_verification_table(result["verification"]))
    return tables


def fault_verification_table(verification: dict[str, Any]) -> Table:
    """The verifier on planted faults: per method, its verdicts on the right claims and on the wrong ones."""
    table = Table(
        title="Verify on planted faults (right: names the injected operation and type)", title_justify="left"
    )
    for column in ("method", "claims that are", "claims", "confirmed", "by elimination", "refuted", "open"):
        table.add_column(column, justify="left" if column in ("method", "claims that are") else "right")
    for scope, sides in verification["by_method"].items():
        for side in ("right", "wrong"):
            row = sides.get(side)
            if not row or not row["claims"]:
                continue
            table.add_row(
                scope,
                side,
                str(row["claims"]),
                f"{row['confirmed']} ({_pct(row['confirmed_share'])})",
                str(row["by_elimination"]),
                str(row["refuted"]),
                str(row["not_verifiable"]),
            )
    return table


def coverage_table(coverage: dict[str, dict[str, dict[str, int]]]) -> Table:
    """Labelled cases per system and error type it can make (kept of planned); '-' where it cannot."""
    table = Table(title="Labelled cases per system (kept / planned injections)", title_justify="left")
    table.add_column("system")
    for kind in MEMORY_ERROR_TYPES:
        table.add_column(kind.replace("Error", ""), justify="right")
    for system_name, kinds in coverage.items():
        cells = [kinds.get(str(k)) for k in MEMORY_ERROR_TYPES]
        table.add_row(system_name, *("-" if n is None else f"{n['kept']} / {n['planned']}" for n in cells))
    return table


from .bench_labels_cmd import bench_labels  # noqa: E402

bench_app.command("labels")(bench_labels)
