"""The OpenTelemetry side of `memtrace export` and `memtrace import` (`--format otlp`).

Export sends a run's spans to an OTLP receiver or writes them to a file, with the workspace's stored
attributions as `gen_ai.evaluation.result` events on each failed case's answer span; import reads
an OTLP file, or listens as an OTLP/HTTP receiver, and writes one run per trace.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from ..attribution.model import Attribution, load_attributions
from ..errors import MemtraceError
from ..graph import Workspace
from ..graph.model import Run
from ..interop.otlp.marks import Blame
from ..interop.otlp.spans import EvaluationResult


def attribution_results(
    ws: Workspace, run_id: str, *, content: bool
) -> tuple[list[EvaluationResult], list[Blame]]:
    """Stored attributions of a run as evaluation results (the error type as the label, the blamed
    operation as the explanation) and as blames that mark the blamed operation's span ERROR. The
    attribution's own explanation quotes the run's text, so it goes out only with content."""
    results, blames = [], []
    for attribution in load_attributions(ws.store, run_id):
        why = f"{attribution.error_type} at {attribution.op_id or 'no operation'}"
        if content:
            why += f": {attribution.explanation}"
        if attribution.op_id and attribution.determined:
            blames.append(
                Blame(
                    attribution.op_id,
                    attribution.case_id,
                    attribution.error_type,
                    _blame_why(attribution, content=content),
                )
            )
        results.append(
            EvaluationResult(
                attribution.case_id,
                f"memtrace.attribution.{attribution.method}",
                attribution.confidence,
                attribution.error_type,
                why,
                extra={
                    "memtrace.attribution.op.id": attribution.op_id,
                    "memtrace.attribution.verified": attribution.verified,
                },
            )
        )
    return results, blames


def _blame_why(attribution: Attribution, *, content: bool) -> str:
    """Why a span is marked: the method's own explanation with content, else who said it how surely."""
    if content and attribution.explanation:
        return attribution.explanation
    how = f"{attribution.method}, confidence {attribution.confidence:.2f}"
    if attribution.verified:
        how += f", {attribution.verified}"
    return f"the earliest decisive faulty operation ({how})"


def export_run(
    ws: Workspace,
    run_ref: str,
    *,
    endpoint: str | None,
    out: Path | None,
    protocol: str,
    content: bool,
    timeout: float,
) -> str:
    """Send or write one run's spans; returns the line to print."""
    from ..interop.otlp.export import require_otel, run_spans, send_spans, span_exporter, write_otlp_file

    require_otel()
    if endpoint is None and out is None:
        raise MemtraceError("--format otlp needs --endpoint URL (an OTLP receiver) or --out FILE")
    run = ws.run(run_ref)
    exporter = span_exporter(endpoint, protocol, timeout=timeout) if endpoint else None
    evaluations, blames = attribution_results(ws, run.id, content=content)
    spans = run_spans(ws.store, run.id, content=content, evaluations=evaluations, blames=blames)
    done = []
    if out is not None:
        write_otlp_file(spans, out)
        done.append(f"to {out}")
    if exporter is not None and endpoint is not None:
        send_spans(spans, exporter, endpoint)
        done.append(f"to {endpoint} ({protocol})")
    return f"exported run {run.id} ({run.name}) as {len(spans)} OpenTelemetry spans " + " and ".join(done)


def content_notes(runs: list[Run]) -> list[str]:
    """One line per run that memtrace exported without `--content`: attribution needs the texts."""
    notes = []
    for run in runs:
        source = run.metadata.get("source")
        if isinstance(source, dict) and source.get("format") == "otlp" and source.get("content") is False:
            notes.append(
                f"note: {run.name} ({run.id}) was exported without --content: its cases have no question,"
                " gold answers or prediction and its memory no text, so attribution has nothing to follow;"
                " export it again with --content to attribute it here"
            )
    return notes


def looks_like_otlp(path: Path) -> bool:
    """True for a file that `--format auto` should read as OTLP: a protobuf suffix, or JSON that
    starts with OTLP's `resourceSpans`."""
    if path.suffix in (".pb", ".otlp", ".protobuf"):
        return True
    if path.suffix != ".json" or not path.is_file():
        return False
    with path.open("rb") as handle:
        head = handle.read(256).lstrip()
    return head.startswith(b"{") and b'"resourceSpans"' in head


def import_file(ws: Workspace, source: Path, *, name: str | None, cases: Path | None) -> list[str]:
    """Import an OTLP file; returns the ids of the runs written."""
    from ..interop.otlp.cases import read_cases_file
    from ..interop.otlp.importer import import_otlp

    specs = read_cases_file(cases) if cases is not None else []
    return [run.id for run in import_otlp(ws.store, source, name=name, cases=specs)]


def listen_address(address: str, *, expose: bool, workspace: Path) -> tuple[str, int]:
    """HOST and PORT of `--listen`, checked before anything is opened: a port from 0 to 65535, and
    a loopback host unless `expose` (the receiver has no authentication)."""
    from ..interop._common import brief
    from ..interop.otlp.receiver import is_loopback

    host, _, port_text = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not (port_text.isascii() and port_text.isdigit()) or int(port_text) > 65535:
        raise MemtraceError(
            f"--listen {brief(address)}: give HOST:PORT with a port from 0 to 65535, such as 127.0.0.1:4318"
        )
    if not expose and not is_loopback(host):
        raise MemtraceError(
            f"--listen {brief(address)}: {brief(host)} is not a loopback address, so anyone who can reach"
            f" it could write runs into {workspace} (the receiver has no authentication); add --expose to"
            " listen there anyway, or use 127.0.0.1"
        )
    return host, int(port_text)


def listen(
    ws: Workspace, host: str, port: int, *, cases: Path | None, console: Console, expose: bool = False
) -> None:
    """Serve as an OTLP/HTTP receiver until interrupted, importing each trace as it arrives.

    With `expose` and an address other than loopback, says first what that exposes.
    """
    from ..interop.otlp.cases import read_cases_file
    from ..interop.otlp.receiver import OtlpReceiver, is_loopback

    specs = read_cases_file(cases) if cases is not None else []
    noted: set[str] = set()

    def imported(runs: list[Run]) -> None:
        console.print("imported " + ", ".join(f"{r.id} ({r.name})" for r in runs), highlight=False)
        for run in (r for r in runs if r.id not in noted):  # re-imported with every request: said once
            for note in content_notes([run]):
                noted.add(run.id)
                console.print(note, highlight=False)

    receiver = OtlpReceiver(ws.store, host, port, cases=specs, expose=expose, on_import=imported)
    if not is_loopback(host):
        reach = "any of this machine's network addresses" if host in ("0.0.0.0", "::") else host
        console.print(
            f"exposed: {receiver.endpoint} accepts OTLP traces from anyone who can reach {reach},"
            f" with no authentication; whatever they send is imported into {ws.path}",
            highlight=False,
        )
    console.print(f"receiving OTLP/HTTP traces at {receiver.endpoint} (Ctrl-C stops)", highlight=False)
    try:
        receiver.serve_forever()
    except KeyboardInterrupt:
        repeated = f", {receiver.repeated} repeated span(s) skipped" if receiver.repeated else ""
        console.print(f"stopped after {receiver.requests} request(s){repeated}", highlight=False)
    finally:
        receiver.close()
