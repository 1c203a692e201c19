"""Build the structured report of a workspace: read runs, cases and attributions, aggregate them.

Attributions come from the store (the chosen method, latest per case); failed cases without one are
attributed with the flow method now (stored, so the next report reuses them) and the report says so.
The funnel always uses flow attributions, whose error types are the funnel's stage tests.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from .. import __version__
from ..attribution.engine import attribute
from ..attribution.evidence.anatomy import case_anatomy
from ..attribution.evidence.locate import locator_for
from ..attribution.methods.flow_verdicts import confidence_after_verify
from ..attribution.model import Attribution, load_attributions
from ..errors import MemtraceError, NotFoundError
from ..graph import Case, Graph, Run, Workspace
from ..progress import Progress
from ..vocabulary import ErrorType
from .funnel import FunnelEntry, funnel_entry, summarize_funnels
from .model import (
    Example,
    FailureRecord,
    Report,
    RunRef,
    SuspectedAnnotation,
)
from .patterns import build_example, carrying_part, group_patterns
from .summary import by_operation, headline_numbers, system_name, system_summaries
from .timing import RunClock, timing_histogram

Key = tuple[str, str]


def select_runs(ws: Workspace, refs: list[str] | None = None) -> list[Run]:
    """The runs named by id, id prefix or name (comma lists allowed); by default every non-replay run."""
    runs = ws.runs()
    wanted = [part.strip() for ref in refs or [] for part in ref.split(",") if part.strip()]
    if not wanted:
        chosen = [r for r in runs if r.parent_run is None]
    else:
        chosen, seen = [], set()
        for ref in wanted:
            matches = [r for r in runs if r.id == ref or r.id.startswith(ref) or r.name == ref]
            if not matches:
                raise NotFoundError(f"{ws.path}: no run matches {ref!r}")
            for run in matches:
                if run.id not in seen:
                    seen.add(run.id)
                    chosen.append(run)
    if not chosen:
        raise MemtraceError(f"{ws.path}: no runs to report on (record some with `memtrace run`)")
    return chosen


def anchor_of(run_id: str, case_id: str) -> str:
    """The HTML anchor of a case: unique across runs (case ids repeat between systems)."""
    return "case-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{run_id}-{case_id}")


def build_report(
    ws: Workspace, *, runs: list[str] | None = None, method: str = "flow", progress: Progress | None = None
) -> Report:
    """The structured report of the selected runs (see the module docstring)."""
    chosen = select_runs(ws, runs)
    notes: list[str] = []
    replays = sum(1 for r in ws.runs() if r.parent_run is not None and r.id not in {c.id for c in chosen})
    if replays:
        notes.append(f"{replays} replay run(s) created by `memtrace verify` are left out.")
    cases = {run.id: ws.store.cases(run.id) for run in chosen}
    failed = [c for run_cases in cases.values() for c in run_cases if c.failed]
    flow = _flow_attributions(ws, failed, notes, progress)
    picked = flow if method == "flow" else _latest(ws, method, failed)
    missing = [c for c in failed if (c.run_id, c.id) not in picked]
    if missing:
        notes.append(
            f"{len(missing)} failed case(s) had no stored {method} attribution: "
            "the flow method's attribution is shown for them (method=flow)."
        )
        picked.update({(c.run_id, c.id): flow[c.run_id, c.id] for c in missing})
    records, suspects, entries = _read_runs(ws, chosen, cases, picked, flow, progress)
    unjudged = sum(1 for run_cases in cases.values() for c in run_cases if c.verdict is None)
    if unjudged:
        notes.append(f"{unjudged} question(s) were not judged; accuracy counts judged questions only.")
    systems = list(dict.fromkeys(system_name(r) for r in chosen))
    summaries = system_summaries(chosen, cases, records, systems, suspects)
    headline = headline_numbers(chosen, cases, records, summaries, suspects)
    waiting = headline.verification.get("not verified", 0)
    if waiting:
        notes.append(
            f"{waiting} of {len(records)} attributions are not verified yet: "
            f"`memtrace verify {ws.path}` replays them."
        )
    if suspects:
        notes.append(
            f"{len(suspects)} failed case(s) are suspected annotation errors (the conversation does not "
            "support the gold answer): listed with the reason under Suspected annotation errors, and kept "
            "out of every error count, pattern and funnel."
        )
    revised = sum(r.revised_from is not None for r in records)
    if revised:
        notes.append(
            f"{revised} attribution(s) were revised by verification to the answer step: repairing the "
            "blamed operation did not rescue the answer and the answer stayed wrong with the evidence in "
            "its context. The funnel places them by their original claim."
        )
    case_index = {(c.run_id, c.id): c for run_cases in cases.values() for c in run_cases}
    graphs: dict[str, Graph] = {}

    def example(record: FailureRecord) -> Example:
        if record.run_id not in graphs:  # SQL-backed: only the chosen examples' operations are read
            graphs[record.run_id] = ws.graph(record.run_id)
        key = (record.run_id, record.case_id)
        return build_example(graphs[record.run_id], case_index[key], picked[key], record)

    own = {s.system: s.failures - s.suspected_annotation_errors for s in summaries}  # the system's own
    patterns = group_patterns(records, picked, own, example)
    return Report(
        workspace=str(ws.path),
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        memtrace_version=__version__,
        method=method,
        runs=[
            RunRef(
                id=r.id,
                name=r.name,
                system=system_name(r),
                conversation=r.conversation,
                questions=len(cases[r.id]),
            )
            for r in chosen
        ],
        headline=headline,
        systems=summaries,
        failures_by_operation=by_operation(records),
        funnel=summarize_funnels(entries, systems),
        timing=timing_histogram(records),
        patterns=patterns,
        failures=records,
        suspected_annotation_errors=suspects,
        notes=notes,
    )


def revised_claim(item: Attribution) -> str | None:
    """The claim verification replaced, as "ErrorType at op", or None when it was not revised."""
    revised = getattr(item, "revised_from", None)
    if not isinstance(revised, dict):
        return None
    return f"{revised.get('error_type', '?')} at {revised.get('op_id') or '-'}"


def _latest(ws: Workspace, method: str, failed: list[Case]) -> dict[Key, Attribution]:
    """The latest stored attribution of `method` for each failed case (any settings)."""
    wanted = {(c.run_id, c.id) for c in failed}
    found: dict[Key, Attribution] = {}
    for item in load_attributions(ws.store, method=method):  # ordered by id: later ones win
        if (item.run_id, item.case_id) in wanted:
            found[item.run_id, item.case_id] = item
    return found


def _flow_attributions(
    ws: Workspace, failed: list[Case], notes: list[str], progress: Progress | None
) -> dict[Key, Attribution]:
    """Stored flow attributions, computing (and storing) those that are missing."""
    found = _latest(ws, "flow", failed)
    missing = [c for c in failed if (c.run_id, c.id) not in found]
    if not missing:
        return found
    runs = list(dict.fromkeys(c.run_id for c in missing))
    goal, offset = sum(1 for c in failed if c.run_id in runs), 0
    for run_id in runs:

        def advance(done: int, _total: int, offset: int = offset) -> None:
            if progress:
                progress("attributing (flow)", offset + done, goal)

        for result in attribute(ws, "flow", run=run_id, progress=advance):  # stored ones are reused
            found.setdefault((result.run_id, result.case_id), result)
        offset += sum(1 for c in failed if c.run_id == run_id)
    notes.append(
        f"{len(missing)} failed case(s) had no stored flow attribution: attributed them now with the "
        "flow method (stored in the workspace)."
    )
    return found


def _read_runs(
    ws: Workspace,
    runs: list[Run],
    cases: dict[str, list[Case]],
    picked: dict[Key, Attribution],
    flow: dict[Key, Attribution],
    progress: Progress | None,
) -> tuple[list[FailureRecord], list[SuspectedAnnotation], list[FunnelEntry]]:
    """One pass per run (one in-memory graph at a time): failure records, the suspected annotation
    errors kept apart from them, and funnel entries."""
    records: list[FailureRecord] = []
    suspects: list[SuspectedAnnotation] = []
    entries: list[FunnelEntry] = []
    for done, run in enumerate(runs, 1):
        view = ws.view(run.id)
        locator, clock, system = locator_for(view), RunClock(view), system_name(run)
        for case in cases[run.id]:
            key = (run.id, case.id)
            entry = funnel_entry(system, case, locator, flow.get(key))
            if entry is not None:
                entries.append(entry)
            if not case.failed:
                continue
            item = picked[key]
            if item.error_type == ErrorType.ANNOTATION:  # no memory fault: not a failure record
                suspects.append(_suspect(run.id, system, case, item))
                continue
            op = view.op(item.op_id) if item.op_id and view.has_op(item.op_id) else None
            question_seq = case_anatomy(view, case).question_seq
            question_seq = None if question_seq >= 2**62 else question_seq
            record = FailureRecord(
                run_id=run.id,
                system=system,
                case_id=case.id,
                anchor=anchor_of(run.id, case.id),
                question=case.question,
                category=case.category,
                error_type=item.error_type,
                method=item.method,
                op_id=item.op_id,
                op_name=op.name if op else None,
                op_category=op.category if op else None,
                op_seq=op.seq if op else None,
                question_seq=question_seq,
                confidence=item.confidence,
                verified=item.verified,
                confidence_after_verify=confidence_after_verify(item, run.system),
                funnel_stage=entry.stage if entry is not None else None,
                revised_from=revised_claim(item),
                flow_confirmed=item.flow_confirmed,
                answer_confirmed=item.answer_confirmed,
                verification_reason=(item.verification or {}).get("reason"),
                verdict_stale=item.verdict_stale,
                carrying_part=carrying_part(item),
            )
            if op is not None and question_seq is not None:
                place = clock.place(op.seq, question_seq)
                record.at_question_time = place.at_question_time
                record.sessions_before_question = place.sessions_before_question
                record.position = place.position
            records.append(record)
        if progress:
            progress("reading runs", done, len(runs))
    return records, suspects, entries


def _suspect(run_id: str, system: str, case: Case, item: Attribution) -> SuspectedAnnotation:
    """A suspected annotation error with its reason (the attribution's explanation says why)."""
    return SuspectedAnnotation(
        run_id=run_id,
        system=system,
        case_id=case.id,
        anchor=anchor_of(run_id, case.id),
        question=case.question,
        gold=list(case.gold),
        prediction=case.prediction,
        method=item.method,
        reason=item.explanation,
    )
