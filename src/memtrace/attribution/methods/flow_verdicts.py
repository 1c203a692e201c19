"""What verify's verdict says of a flow claim, measured: the confidence of a claim once verified.

Blind development labels agreed with the claims verify confirmed far more often than with those it
could not verify (`flow_verdicts.json`, fitted by `benchmarks/natural_labels/calibrate.py` beside
flow's own table). So a verified claim's confidence is its measured confidence with the odds moved by
how much likelier the labels agreed with claims of its type given that verdict. It is derived when
shown, never stored over the claim's own, and a verdict the labels saw fewer than `MIN_CLAIMS` times
moves nothing: one refuted claim the labels happened to agree with says nothing of refutations.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ...errors import FormatError
from ...vocabulary import CONFIRMED_VERDICTS, Verdict
from ..model import Attribution, settings_key
from .flow import FlowMethod
from .flow_confidence import TYPE_PRIOR, Calibration, Tally, shipped_calibration

VERDICTS_FORMAT = "memtrace-flow-verdicts/1"
VERDICTS_FILE = "flow_verdicts.json"
#: Pseudo-claims pulling a (type, verdict) rate towards its type's.
VERDICT_PRIOR = 10.0
#: Fewer claims of a (type, verdict) than this and the verdict leaves the confidence as it was.
MIN_CLAIMS = 10
#: Verify's verdicts as the counts group them: the confirmed levels together, the rest apart.
VERDICT_GROUPS: dict[str, str] = {
    **{str(verdict): "confirmed" for verdict in CONFIRMED_VERDICTS},
    str(Verdict.NOT_VERIFIABLE): "not-verifiable",
    str(Verdict.REFUTED): "refuted",
}


def _logit(p: float) -> float:
    """Log-odds, kept finite: a rate of 0 or 1 from the table is no certainty."""
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


@dataclass(frozen=True, slots=True)
class VerdictCounts:
    """Agreement per (error type, verdict group) of the verified development claims."""

    by_type_verdict: Mapping[tuple[str, str], Tally]
    fitted_on: tuple[str, ...] = ()

    def confidence_after(
        self, table: Calibration, error_type: str, system: str | None, verdict: str | None
    ) -> float | None:
        """`table`'s confidence for the claim with its odds moved by the verdict; None when the
        verdict is unknown to the counts or they saw it fewer than `MIN_CLAIMS` times for the type."""
        group = VERDICT_GROUPS.get(str(verdict)) if verdict is not None else None
        given = self.by_type_verdict.get((error_type, group)) if group else None
        of_type = table.by_type.get(error_type)
        if given is None or given.claims < MIN_CLAIMS or of_type is None or not table.overall.claims:
            return None
        type_rate = of_type.rate(table.overall.agreed / table.overall.claims, TYPE_PRIOR)
        moved = _logit(given.rate(type_rate, VERDICT_PRIOR)) - _logit(type_rate)
        rate = 1 / (1 + math.exp(-(_logit(table.confidence(error_type, system)) + moved)))
        return min(0.99, max(0.01, math.floor(rate * 100) / 100))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": VERDICTS_FORMAT,
            "fitted_on": list(self.fitted_on),
            "by_type_verdict": {
                f"{kind}/{group}": [t.agreed, t.claims]
                for (kind, group), t in sorted(self.by_type_verdict.items())
            },
        }

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any], source: str = VERDICTS_FILE) -> VerdictCounts:
        """The counts of a `to_dict` payload; a FormatError naming `source` for anything else."""
        if payload.get("format") != VERDICTS_FORMAT:
            raise FormatError(source, f"not a {VERDICTS_FORMAT} table (field 'format')")
        counts: dict[tuple[str, str], Tally] = {}
        for key, pair in dict(payload.get("by_type_verdict") or {}).items():
            kind, _, group = str(key).partition("/")
            if group not in VERDICT_GROUPS.values() or not isinstance(pair, list) or len(pair) != 2:
                raise FormatError(source, f"by_type_verdict: {key!r} is no 'Type/verdict': [agreed, claims]")
            counts[(kind, group)] = Tally(*pair)
        return cls(counts, tuple(payload.get("fitted_on", ())))


def fit_verdicts(rows: Iterable[tuple[str, str, bool]], fitted_on: Iterable[str] = ()) -> VerdictCounts:
    """Count (error type, verify's verdict, labels agreed) rows; an unknown verdict is an error."""
    counts: dict[tuple[str, str], list[int]] = {}
    for error_type, verdict, agreed in rows:
        if verdict not in VERDICT_GROUPS:
            raise ValueError(f"unknown verdict {verdict!r} (one of {', '.join(VERDICT_GROUPS)})")
        tally = counts.setdefault((error_type, VERDICT_GROUPS[verdict]), [0, 0])
        tally[0] += int(agreed)
        tally[1] += 1
    return VerdictCounts({key: Tally(*pair) for key, pair in counts.items()}, tuple(fitted_on))


@functools.cache
def shipped_verdicts() -> VerdictCounts:
    """The counts shipped beside flow's table; they must have been fitted on the same label sets."""
    source = resources.files(__package__).joinpath(VERDICTS_FILE)
    try:
        payload = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FormatError(str(source), f"cannot read the verdict counts ({exc})") from exc
    counts = VerdictCounts.from_dict(payload, str(source))
    if counts.fitted_on != shipped_calibration().fitted_on:
        raise FormatError(str(source), "fitted on other label sets than flow_calibration.json: refit both")
    return counts


@functools.cache
def _measured_settings() -> str:
    """The settings key of flow's claims whose confidence the shipped table gives (its defaults)."""
    return settings_key(FlowMethod().settings())


def confidence_after_verify(attribution: Attribution, system: str | None) -> float | None:
    """The confidence of a verified flow claim given its verdict. None for a claim not verified or
    verified by another verifier (the counts are this verifier's), a suspected annotation error (no
    memory claim), a claim of other flow settings or stored under an older table (its confidence is
    not the shipped table's), and a verdict the labels rarely saw."""
    if (
        attribution.method != FlowMethod.name
        or not attribution.determined
        or attribution.error_type == "AnnotationError"
        or attribution.verified is None
        or attribution.verdict_stale
        or attribution.settings_key != _measured_settings()
    ):
        return None
    return shipped_verdicts().confidence_after(
        shipped_calibration(), str(attribution.error_type), system, str(attribution.verified)
    )
