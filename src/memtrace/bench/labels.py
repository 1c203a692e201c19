"""Score an attribution method, and the verifier, against hand labels of natural failures.

A labels file (`benchmarks/natural_labels/labels.json`, format `memtrace-labels/1`) holds one
MemTraceBench annotation per labelled case, naming its run by name, so it scores any workspace
recorded the same way. Agreement is counted on the error type and on type plus operation; the
verifier's verdicts are counted apart for the claims the labels call right and those they call wrong:
a verifier that confirms the wrong claims as often as the right ones tests nothing.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..attribution.engine import attribute
from ..attribution.methods.flow_verdicts import confidence_after_verify
from ..attribution.model import Attribution, save_attribution
from ..errors import FormatError, NotFoundError
from ..graph import Annotation, Workspace
from ..interop._common import brief
from ..progress import Progress, no_progress
from ..vocabulary import ErrorType, Verdict

LABELS_FORMAT = "memtrace-labels/1"
#: Verdicts that say the replay proved the claim (by-elimination is no replay: counted apart).
REPLAY_CONFIRMED = (Verdict.ANSWER_CONFIRMED, Verdict.FLOW_CONFIRMED)


@dataclass(frozen=True, slots=True)
class Label:
    """One hand label: which case, what the reader named, and how sure they were."""

    label_id: str
    run: str
    case_id: str
    error_type: str
    op_id: str | None
    system: str
    split: str
    sure: bool
    note: str | None = None


def read_labels(path: Path) -> list[Label]:
    """The labels of a `memtrace-labels/1` file; a malformed one is a FormatError naming file and field."""
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FormatError(path, "no such labels file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(path, f"not a JSON labels file ({exc})") from None
    if not isinstance(payload, dict) or payload.get("format") != LABELS_FORMAT:
        raise FormatError(path, f"not a {LABELS_FORMAT} file (field 'format')")
    records = payload.get("labels")
    if not isinstance(records, list):
        raise FormatError(path, f"field 'labels' must be a list, got {brief(records)}")
    labels = []
    known = {str(kind) for kind in ErrorType}
    for n, record in enumerate(records):
        where = f"labels[{n}]"
        meta = record.get("memtrace") if isinstance(record, dict) else None
        if not isinstance(meta, dict):
            raise FormatError(path, f"{where}: field 'memtrace' must be an object")
        kind = record.get("final_error_type")
        if kind not in known:
            raise FormatError(path, f"{where}: unknown final_error_type {brief(kind)}")
        op_id = record.get("final_op_id")
        for field, value in (("run", record.get("run")), ("memtrace.case_id", meta.get("case_id"))):
            if not isinstance(value, str) or not value:
                raise FormatError(
                    path, f"{where}: field {field!r} must be a non-empty string, got {brief(value)}"
                )
        if op_id is not None and not isinstance(op_id, str):
            raise FormatError(
                path, f"{where}: field 'final_op_id' must be a string or null, got {brief(op_id)}"
            )
        labels.append(
            Label(
                str(meta.get("label_id") or f"#{n}"),
                record["run"],
                meta["case_id"],
                kind,
                op_id,
                str(meta.get("system") or record["run"].split("/")[0]),
                str(meta.get("split") or "all"),
                bool(meta.get("sure", True)),
                meta.get("note") if isinstance(meta.get("note"), str) else None,
            )
        )
    return labels


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def wilson_interval(hits: int, total: int, z: float = 1.96) -> tuple[float, float] | None:
    """The 95% Wilson score interval of an agreement rate: a set of 40 labels pins a rate only to
    about +-12 points, which a reader of one set's figure should see beside it."""
    if total <= 0:
        return None
    rate, spread = hits / total, z * z / total
    centre = (rate + spread / 2) / (1 + spread)
    half = z * math.sqrt(rate * (1 - rate) / total + spread / (4 * total)) / (1 + spread)
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


class _Tally:
    """Agreement counts of one group of labels."""

    def __init__(self) -> None:
        self.n = self.type_agree = self.type_op_agree = 0

    def add(self, same_type: bool, same_op: bool) -> None:
        self.n += 1
        self.type_agree += same_type
        self.type_op_agree += same_type and same_op

    def row(self) -> dict[str, Any]:
        return {
            "labels": self.n,
            "type": _rate(self.type_agree, self.n),
            "type_and_operation": _rate(self.type_op_agree, self.n),
            "type_interval": wilson_interval(self.type_agree, self.n),
            "type_and_operation_interval": wilson_interval(self.type_op_agree, self.n),
        }


def agrees(label: Label, claim: Attribution) -> tuple[bool, bool]:
    """(same error type, same operation) of a claim and a label."""
    return str(claim.error_type) == label.error_type, claim.op_id == label.op_id


def verdict_bucket(verdict: str | None) -> str:
    """Where a verdict counts: confirmed by replay, by elimination, refuted, not verifiable, not verified."""
    if verdict in REPLAY_CONFIRMED:
        return "confirmed"
    if verdict == Verdict.BY_ELIMINATION:
        return "by_elimination"
    if verdict == Verdict.REFUTED:
        return "refuted"
    if verdict == Verdict.NOT_VERIFIABLE:
        return "not_verifiable"
    return "not_verified"


def _current_verdict(claim: Attribution) -> str | None:
    """The claim's verdict when this verifier made it; one of another verifier counts as not verified."""
    return None if claim.verified is None or claim.verdict_stale else str(claim.verified)


def _verdict_counts(claims: Iterable[Attribution]) -> dict[str, int]:
    counts = Counter(verdict_bucket(_current_verdict(claim)) for claim in claims)
    return {
        key: counts[key]
        for key in ("confirmed", "by_elimination", "refuted", "not_verifiable", "not_verified")
    }


def score_labels(
    ws: Workspace,
    labels: Sequence[Label],
    method: str = "flow",
    *,
    split: str | None = None,
    progress: Progress | None = None,
    llm: Any = None,
    verify: bool = False,
) -> dict[str, Any]:
    """Agreement of `method`'s stored (or computed) attributions with the labels, and verify's verdicts
    (stored ones, a verdict of another verifier counting as none; with `verify`, each labelled claim
    not verified by this verifier is verified first and stored)."""
    report = progress or no_progress
    chosen = [label for label in labels if split in (None, "all") or label.split == split]
    overall, by_system, by_type = _Tally(), defaultdict(_Tally), defaultdict(_Tally)
    right: list[Attribution] = []
    wrong: list[Attribution] = []
    rows = []
    for done, label in enumerate(chosen, 1):
        try:
            run_id = ws.run(label.run).id
        except NotFoundError:
            raise NotFoundError(f"{ws.path}: no run {label.run!r} (label {label.label_id})") from None
        (claim,) = attribute(ws, method, run=run_id, case=label.case_id, llm=llm)
        if verify and (claim.verified is None or claim.verdict_stale):
            claim = verified(ws, claim, llm)
        same_type, same_op = agrees(label, claim)
        for tally in (overall, by_system[label.system], by_type[label.error_type]):
            tally.add(same_type, same_op)
        if claim.determined and claim.error_type != ErrorType.ANNOTATION:
            (right if same_type and same_op else wrong).append(claim)
        rows.append(
            {
                "label_id": label.label_id,
                "run": label.run,
                "case_id": label.case_id,
                "split": label.split,
                "sure": label.sure,
                "label": [label.error_type, label.op_id],
                "claim": [str(claim.error_type), claim.op_id],
                "confidence": claim.confidence,
                "confidence_after_verify": confidence_after_verify(claim, label.system),
                "verdict": _current_verdict(claim),
                # A verdict another verifier made: shown, never counted (`verify` renews it).
                "verdict_of_another_verifier": str(claim.verified) if claim.verdict_stale else None,
                "agrees": [same_type, same_type and same_op],
            }
        )
        report(f"scoring {method} against labels", done, len(chosen))
    return {
        "method": method,
        "split": split or "all",
        "overall": overall.row(),
        "by_system": {name: tally.row() for name, tally in sorted(by_system.items())},
        "by_label_type": {name: tally.row() for name, tally in sorted(by_type.items())},
        "verification": {
            "claims_labels_call_right": {"claims": len(right), **_verdict_counts(right)},
            "claims_labels_call_wrong": {"claims": len(wrong), **_verdict_counts(wrong)},
        },
        "cases": rows,
    }


def save_labels(ws: Workspace, labels: Sequence[Label]) -> int:
    """Store the labels as annotations of their cases (the web UI shows them beside the attribution);
    a label already stored for a case by the same author is not stored twice. Returns how many were added."""
    added = 0
    for label in labels:
        run_id = ws.run(label.run).id
        have = {(a.error_type, a.op_id, a.author) for a in ws.store.annotations(run_id, label.case_id)}
        author = f"labels:{label.label_id}"
        if any(kind == label.error_type and op == label.op_id and who == author for kind, op, who in have):
            continue
        kind = ErrorType(label.error_type)
        ws.store.add_annotation(Annotation(run_id, label.case_id, kind, label.op_id, label.note, author))
        added += 1
    return added


def verified(ws: Workspace, claim: Attribution, llm: Any = None) -> Attribution:
    """The claim with its verification verdict, stored back under the settings it was made with."""
    from ..attribution.verify.counterfactual import verify as verify_claim

    record = verify_claim(ws, claim, llm=llm).record()
    save_attribution(ws.store, record, claim.settings_key or "")
    return record


def cohen_kappa(pairs: Sequence[tuple[Any, Any]]) -> float | None:
    """Cohen's kappa of two readers' labels (None without pairs; 1.0 when both use one label only)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[key] * second[key] for key in first.keys() | second.keys()) / (n * n)
    return 1.0 if expected == 1 else round((observed - expected) / (1 - expected), 4)


def reader_agreement(first: Sequence[Label], second: Sequence[Label]) -> dict[str, Any]:
    """How two readers agree on the cases both labelled: raw agreement and Cohen's kappa."""
    by_case = {(label.run, label.case_id): label for label in first}
    pairs = [
        (by_case[(label.run, label.case_id)], label)
        for label in second
        if (label.run, label.case_id) in by_case
    ]
    types = [(a.error_type, b.error_type) for a, b in pairs]
    both = [((a.error_type, a.op_id), (b.error_type, b.op_id)) for a, b in pairs]
    return {
        "cases": len(pairs),
        "type": {"agreement": _rate(sum(a == b for a, b in types), len(pairs)), "kappa": cohen_kappa(types)},
        "type_and_operation": {
            "agreement": _rate(sum(a == b for a, b in both), len(pairs)),
            "kappa": cohen_kappa(both),
        },
    }
