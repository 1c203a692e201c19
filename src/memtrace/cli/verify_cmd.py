"""`memtrace verify` (registered in app.py) and what it prints: confirmed shares first, the ResponseErrors'
item check beside them, refuted claims listed, reasons for the rest.

The headline never sums levels into one "verified" number: flow-confirmed and answer-confirmed are
shares of the claims a repair can test (the memory error types but ResponseError); a ResponseError is
confirmed or refuted by the item check, or kept by elimination (an inferred answer), counted apart;
suspected annotation errors are no claim at all. What fell short is counted by its reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from ..errors import MemtraceError
from ..graph import Workspace
from ..vocabulary import NOT_VERIFIED, VERDICTS, ErrorType, Verdict
from .consoles import JsonOption, console, styled, write_json
from .executor_options import ExecutorOption, RayAddressOption, WorkersOption, executor_spec
from .llm_options import (
    DEFAULT_CONCURRENCY,
    ConcurrencyOption,
    LLMLimits,
    MaxTokensOption,
    RetriesOption,
    TimeoutOption,
    closing_client,
    llm_client,
)
from .progress import progress_bar
from .workspace_arg import WorkspaceAlias, WorkspaceArgument, resolve_workspace

if TYPE_CHECKING:
    from ..attribution.model import Attribution


def verify(
    workspace_arg: WorkspaceArgument = None,
    method: Annotated[str, typer.Option(help="Verify this method's stored attributions.")] = "flow",
    llm: Annotated[str, typer.Option(help="offline, or openai when the runs used a model.")] = "offline",
    model: Annotated[str | None, typer.Option(help="Model name for --llm openai.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Endpoint for --llm openai.")] = None,
    timeout: TimeoutOption = None,
    retries: RetriesOption = None,
    max_tokens: MaxTokensOption = None,
    concurrency: ConcurrencyOption = DEFAULT_CONCURRENCY,
    oracle: Annotated[
        bool,
        typer.Option(
            help="When a repair does not deliver the evidence, test the answer step (a second fault)."
        ),
    ] = True,
    run: Annotated[
        list[str] | None, typer.Option(help="Only this run's attributions (repeatable; id, name or prefix).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Verify at most N (the rest stay unverified).")] = None,
    refresh: Annotated[bool, typer.Option(help="Verify again those already verified.")] = False,
    workers: WorkersOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    json_out: JsonOption = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Replay each attributed run with the blamed operation repaired: flow- and answer-confirmation."""
    from ..attribution.model import load_attributions
    from ..attribution.registry import check_method_name
    from ..attribution.verify.claims import claim_key
    from ..attribution.verify.counterfactual import verification_summary
    from ..attribution.verify_tasks import verify_workspace

    check_method_name(method)
    if limit is not None and limit < 0:  # a slice by it would verify all but the last -N
        raise MemtraceError(f"--limit must be 0 or more, not {limit}")
    spec = executor_spec(workers, executor, ray_address)
    workspace = resolve_workspace(workspace_arg, workspace_alias)
    where = f" of run(s) {', '.join(run)}" if run else ""
    with Workspace(workspace) as ws:
        chosen = None if run is None else {ws.run(ref).id for ref in run}
        stored = load_attributions(ws.store, method=method)
        stored = [a for a in stored if chosen is None or a.run_id in chosen]
        if not stored:  # not an error: a workspace with no failure has nothing to attribute either
            runs = "".join(f" --run {ref}" for ref in run or [])
            console.print(
                f"nothing to verify: no {method} attributions{where} in {workspace}"
                f" (`memtrace attribute {workspace}{runs} --method {method}` makes them)",
                markup=False,
            )
            write_json(json_out, {**summary_json([]), "verified_now": 0})
            return
        # Verdicts another verifier made are verified again on a plain pass (VERIFIER_VERSION).
        stale = {claim_key(a) for a in stored if a.verdict_stale}
    limits = LLMLimits(timeout, retries, max_tokens, concurrency)
    if llm != "offline" and not spec.in_process:
        console.print("note: --llm openai verifies in this process for now; --workers is ignored")
    with (
        closing_client(llm_client(llm, model, base_url, workspace, limits)) as client,
        progress_bar(console) as progress,
    ):
        task = progress.add_task(f"verifying ({method})", total=None)
        outcomes = verify_workspace(
            workspace,
            method=method,
            llm=client,
            oracle=oracle,
            runs=run,
            limit=limit,
            refresh=refresh,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
            executor=spec,
        )
    with Workspace(workspace) as ws:
        scope = [
            a for a in load_attributions(ws.store, method=method) if chosen is None or a.run_id in chosen
        ]
        systems = {r.id: r.system for r in ws.runs()}
    summary = verification_summary(scope)
    console.print(verdict_table(summary, f"Verification of {method} attributions{where} in {workspace}"))
    for table in (reasons_table(summary), refuted_table(scope)):
        if table is not None:
            console.print(table)
    console.print(headline(scope), highlight=False)
    moved = confidence_after(scope, systems)
    line = confidence_line(moved)
    if line:
        console.print(line, highlight=False)
    renewed = sum(claim_key(outcome.attribution) in stale for outcome in outcomes)
    left = len(stale) - renewed
    said = f"; {renewed} of them verdict(s) of another verifier" if renewed else ""
    said += f"; {left} verdict(s) of another verifier left to verify" if left else ""
    console.print(
        styled(f"verified now: {len(outcomes)}{said} (--refresh verifies stored verdicts again)", "dim")
    )
    write_json(
        json_out,
        {
            **summary_json(scope),
            "confidence_after_verify": moved,
            "verified_now": len(outcomes),
            "verdicts_of_another_verifier": {"verified_again": renewed, "left": left},
        },
    )


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def confidence_after(attributions: list[Attribution], systems: dict[str, str | None]) -> dict[str, Any]:
    """Per verdict, the mean confidence after verification of the claims that have one (flow's
    default claims, measured by its verdict counts), and how many: what each verdict did to them."""
    from ..attribution.methods.flow_verdicts import confidence_after_verify

    by_verdict: dict[str, list[float]] = {}
    for a in attributions:
        after = confidence_after_verify(a, systems.get(a.run_id))
        if after is not None:
            by_verdict.setdefault(str(a.verified), []).append(after)
    return {
        verdict: {"mean": sum(values) / len(values), "claims": len(values)}
        for verdict, values in sorted(by_verdict.items(), key=lambda kv: -len(kv[1]))
    }


def confidence_line(moved: dict[str, Any]) -> str | None:
    """`confidence_after` as one line (None when no claim has a confidence after verification)."""
    if not moved:
        return None
    parts = [f"{verdict} {m['mean']:.2f} ({m['claims']})" for verdict, m in moved.items()]
    return "confidence after verification, mean per verdict (claims): " + ", ".join(parts)


def headline(attributions: list[Any]) -> str:
    """The claims a repair can test, the ResponseErrors under the item check and the suspected
    annotation errors, one line each: never one "verified" number (report/verification.py)."""
    from ..report.verification import summary_lines, verification_figures

    return "\n".join(summary_lines(verification_figures(attributions)))


def summary_json(attributions: list[Any]) -> dict[str, Any]:
    """verify's --json: the per-type summary, the figures of each population, and the refuted cases."""
    from ..attribution.verify.counterfactual import verification_summary
    from ..report.verification import verification_figures

    refuted = [a for a in attributions if a.verified == Verdict.REFUTED]
    return {
        **verification_summary(attributions),
        **verification_figures(attributions).model_dump(),
        "refuted_cases": [
            {
                "run_id": a.run_id,
                "case_id": a.case_id,
                "error_type": a.error_type,
                "op_id": a.op_id,
                "reason": (a.verification or {}).get("reason"),
            }
            for a in refuted
        ],
    }


def refuted_table(attributions: list[Any]) -> Table | None:
    """Every claim verification refuted, with why (None when it refuted none)."""
    refuted = [a for a in attributions if a.verified == Verdict.REFUTED]
    if not refuted:
        return None
    table = Table(title=f"Refuted: {len(refuted)}", title_justify="left")
    for column in ("run", "case", "error type", "operation", "why"):
        table.add_column(column)
    for a in refuted:
        reason = (a.verification or {}).get("reason") or "-"
        table.add_row(a.run_id[:12], a.case_id, a.error_type, a.op_id or "-", reason)
    return table


def verdict_table(summary: dict[str, Any], title: str) -> Table:
    """Per error type: verdict counts and the two confirmation levels."""
    table = Table(title=title, title_justify="left")
    columns = ["error type", *VERDICTS, NOT_VERIFIED, "flow-confirmed share", "answer-confirmed share"]
    for column in columns:
        table.add_column(column, justify="left" if column == "error type" else "right")
    for kind, counts in summary["by_type"].items():
        total = counts.get("total", 0)
        replayable = kind not in (ErrorType.RESPONSE, ErrorType.UNDETERMINED, ErrorType.ANNOTATION)
        label = {
            ErrorType.ANNOTATION: "AnnotationError (suspected: no claim)",
            ErrorType.RESPONSE: "ResponseError (item check, no replay)",
        }.get(kind, kind)
        table.add_row(
            label,
            *(str(counts.get(v, 0)) for v in (*VERDICTS, NOT_VERIFIED)),
            _share(counts.get("flow_confirmed", 0), total) if replayable else "-",
            _share(counts.get("answer_confirmed", 0), total) if replayable else "-",
        )
    return table


def reasons_table(summary: dict[str, Any]) -> Table | None:
    """Why the attributions that are neither confirmed nor by elimination fell short, counted."""
    if not summary["reasons"]:
        return None
    table = Table(title="Not confirmed, by reason", title_justify="left")
    table.add_column("error type: reason")
    table.add_column("attributions", justify="right")
    for reason, count in summary["reasons"].items():
        table.add_row(reason, str(count))
    return table
