"""Flow's confidence, measured: how often blind readers agreed with a claim of its kind.

The rules behind a claim carry no probability of their own, so the confidence flow reports is the
agreement rate of blind hand labels with flow's claims of the same error type on the same system
(`flow_calibration.json`, fitted by `benchmarks/natural_labels/calibrate.py` on the development label
sets only). Rates are smoothed towards the type's, and the type's towards all claims', so a kind
seen a few times is not reported as certain; a system the labels never saw gets its type's rate.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

CALIBRATION_FORMAT = "memtrace-flow-calibration/1"
#: Pseudo-counts pulling a type's rate towards all claims' and a (type, system) rate towards its type's.
TYPE_PRIOR = 4.0
SYSTEM_PRIOR = 10.0


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

    def confidence(self, error_type: str, system: str | None) -> float:
        """The smoothed agreement rate for a claim of `error_type` on `system`, rounded down to two
        places: a kind the labels always agreed with is still no certainty."""
        everything = self.overall.agreed / self.overall.claims if self.overall.claims else 0.5
        of_type = self.by_type.get(error_type)
        type_rate = of_type.rate(everything, TYPE_PRIOR) if of_type else everything
        of_system = self.by_type_system.get((error_type, system or ""))
        rate = of_system.rate(type_rate, SYSTEM_PRIOR) if of_system else type_rate
        return math.floor(rate * 100) / 100

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
        )


def fit_calibration(scored: Iterable[tuple[str, str, bool]], fitted_on: Iterable[str] = ()) -> Calibration:
    """Count (error type, system, labels agreed on type and operation) rows into a calibration."""
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
    )


@functools.cache
def _shipped_text() -> str:
    return resources.files(__package__).joinpath("flow_calibration.json").read_text(encoding="utf-8")


@functools.cache
def shipped_calibration() -> Calibration:
    """The table shipped with memtrace (fitted on the development label sets of locomo-dev)."""
    return Calibration.from_dict(json.loads(_shipped_text()))


def shipped_calibration_digest() -> str:
    """A short digest of the shipped table: in flow's settings, so a refitted table is not served
    from attributions stored under the old one."""
    return hashlib.sha256(_shipped_text().encode()).hexdigest()[:12]
