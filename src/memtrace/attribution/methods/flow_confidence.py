"""Flow's confidence, measured: how often blind readers agreed with a claim of its kind.

The rules behind a claim carry no probability of their own, so the confidence flow reports is the
agreement rate of blind hand labels with flow's claims of the same error type on the same system
(`flow_calibration.json`, fitted by `benchmarks/natural_labels/calibrate.py` on the development label
sets only). Rates are smoothed towards the type's, and the type's towards all claims', so a kind
seen a few times is not reported as certain; a system the labels never saw gets its type's rate.

Verification moves it: the table also counts, per error type, how often the labels agreed with claims
`verify` confirmed, could not verify or refuted, and `verified_confidence` applies that verdict's
odds to the claim's confidence (a claim verify could not check is right less often than one it
confirmed).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

CALIBRATION_FORMAT = "memtrace-flow-calibration/1"
#: Pseudo-counts pulling a type's rate towards all claims' and a (type, system) rate towards its type's.
TYPE_PRIOR = 4.0
SYSTEM_PRIOR = 10.0
#: Pseudo-claims pulling a (type, verdict) rate towards its type's.
VERDICT_PRIOR = 10.0
#: Verify's verdicts, grouped as the table counts them: every confirmation is one group.
VERDICT_GROUPS = {
    "flow-confirmed": "confirmed",
    "answer-confirmed": "confirmed",
    "by-elimination": "confirmed",
    "not-verifiable": "not-verifiable",
    "refuted": "refuted",
}


@dataclass(frozen=True, slots=True)
class Tally:
    """Claims of one kind the labels scored, and how many of them the labels agreed with."""

    agreed: int
    claims: int

    def rate(self, prior: float, strength: float) -> float:
        """The agreement rate, smoothed towards `prior` by `strength` pseudo-claims."""
        return (self.agreed + strength * prior) / (self.claims + strength)


@dataclass(frozen=True, slots=True)
class Calibration:
    """Agreement counts per error type and per (error type, system), and what they were fitted on."""

    overall: Tally
    by_type: Mapping[str, Tally]
    by_type_system: Mapping[tuple[str, str], Tally]
    fitted_on: tuple[str, ...] = ()
    #: Agreement per (error type, verdict group) of the verified development claims.
    by_type_verdict: Mapping[tuple[str, str], Tally] = field(default_factory=dict)

    def confidence(self, error_type: str, system: str | None) -> float:
        """The smoothed agreement rate for a claim of `error_type` on `system`, rounded down to two
        places: a kind the labels always agreed with is still no certainty."""
        everything = self.overall.agreed / self.overall.claims if self.overall.claims else 0.5
        of_type = self.by_type.get(error_type)
        type_rate = of_type.rate(everything, TYPE_PRIOR) if of_type else everything
        of_system = self.by_type_system.get((error_type, system or ""))
        rate = of_system.rate(type_rate, SYSTEM_PRIOR) if of_system else type_rate
        return math.floor(rate * 100) / 100

    def verified_confidence(self, error_type: str, system: str | None, verdict: str | None) -> float | None:
        """The confidence once `verify` gave `verdict`: the claim's odds times how much likelier the
        labels agreed with claims of its type given that verdict; None when the table has no count
        for it (not verified, or a verdict the development claims never got)."""
        group = VERDICT_GROUPS.get(str(verdict)) if verdict else None
        given = self.by_type_verdict.get((error_type, group)) if group else None
        of_type = self.by_type.get(error_type)
        if given is None or of_type is None or not self.overall.claims:
            return None
        type_rate = of_type.rate(self.overall.agreed / self.overall.claims, TYPE_PRIOR)
        odds = _logit(self.confidence(error_type, system)) + _logit(given.rate(type_rate, VERDICT_PRIOR))
        rate = 1 / (1 + math.exp(-(odds - _logit(type_rate))))
        return min(0.99, max(0.01, math.floor(rate * 100) / 100))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": CALIBRATION_FORMAT,
            "fitted_on": list(self.fitted_on),
            "overall": [self.overall.agreed, self.overall.claims],
            "by_type": {kind: [t.agreed, t.claims] for kind, t in sorted(self.by_type.items())},
            "by_type_system": {
                f"{kind}/{system}": [t.agreed, t.claims]
                for (kind, system), t in sorted(self.by_type_system.items())
            },
            "by_type_verdict": {
                f"{kind}/{verdict}": [t.agreed, t.claims]
                for (kind, verdict), t in sorted(self.by_type_verdict.items())
            },
        }

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> Calibration:
        if payload.get("format") != CALIBRATION_FORMAT:
            raise ValueError(f"not a {CALIBRATION_FORMAT} table (field 'format')")
        pairs = payload["by_type_system"].items()
        return cls(
            Tally(*payload["overall"]),
            {kind: Tally(*counts) for kind, counts in payload["by_type"].items()},
            {tuple(key.split("/", 1)): Tally(*counts) for key, counts in pairs},  # type: ignore[misc]
            tuple(payload.get("fitted_on", ())),
            {
                tuple(key.split("/", 1)): Tally(*counts)  # type: ignore[misc]
                for key, counts in payload.get("by_type_verdict", {}).items()
            },
        )


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def fit_calibration(
    scored: Iterable[tuple[str, str, bool]],
    fitted_on: Iterable[str] = (),
    verified: Iterable[tuple[str, str, bool]] = (),
) -> Calibration:
    """Count (error type, system, labels agreed on type and operation) rows into a calibration, and
    `verified` (error type, verify's verdict, agreed) rows into its verdict counts."""
    by_verdict: dict[tuple[str, str], list[int]] = {}
    for error_type, verdict, agreed in verified:
        group = VERDICT_GROUPS.get(verdict)
        if group is not None:
            counts = by_verdict.setdefault((error_type, group), [0, 0])
            counts[0] += int(agreed)
            counts[1] += 1
    overall = [0, 0]
    by_type: dict[str, list[int]] = {}
    by_type_system: dict[tuple[str, str], list[int]] = {}
    for error_type, system, agreed in scored:
        for counts in (
            overall,
            by_type.setdefault(error_type, [0, 0]),
            by_type_system.setdefault((error_type, system), [0, 0]),
        ):
            counts[0] += int(agreed)
            counts[1] += 1
    return Calibration(
        Tally(*overall),
        {kind: Tally(*counts) for kind, counts in by_type.items()},
        {key: Tally(*counts) for key, counts in by_type_system.items()},
        tuple(fitted_on),
        {key: Tally(*counts) for key, counts in by_verdict.items()},
    )


#: The verdict counts ship apart: they move no confidence flow stores, so refitting them leaves
#: `shipped_calibration_digest` (and every stored attribution) as it was.
VERDICTS_FILE = "flow_verdicts.json"
VERDICTS_FORMAT = "memtrace-flow-verdicts/1"


@functools.cache
def _shipped_text(name: str = "flow_calibration.json") -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def split_for_shipping(table: Calibration) -> tuple[dict[str, Any], dict[str, Any]]:
    """The table as its two shipped files: what flow's stored confidences use, and the verdict counts."""
    whole = table.to_dict()
    verdicts = {
        "format": VERDICTS_FORMAT,
        "fitted_on": whole["fitted_on"],
        "by_type_verdict": whole.pop("by_type_verdict"),
    }
    return whole, verdicts


@functools.cache
def shipped_calibration() -> Calibration:
    """The table shipped with memtrace (fitted on the development label sets of locomo-dev)."""
    payload = json.loads(_shipped_text())
    verdicts = json.loads(_shipped_text(VERDICTS_FILE))
    if verdicts.get("format") != VERDICTS_FORMAT:
        raise ValueError(f"{VERDICTS_FILE}: not a {VERDICTS_FORMAT} table (field 'format')")
    return Calibration.from_dict({**payload, "by_type_verdict": verdicts["by_type_verdict"]})


def shipped_calibration_digest() -> str:
    """A short digest of the shipped table: in flow's settings, so a refitted table is not served
    from attributions stored under the old one."""
    return hashlib.sha256(_shipped_text().encode()).hexdigest()[:12]
