"""A flow claim's confidence once `verify` has judged it: the measured table's, given the verdict.

Only claims made with flow's default settings get one: the table measured those (see
flow_confidence.py). The stored confidence stays what flow said; this is derived when shown, so a
refitted table applies to claims verified before it.
"""

from __future__ import annotations

import functools

from ..model import Attribution, settings_key
from .flow import FlowMethod
from .flow_confidence import shipped_calibration


@functools.cache
def _measured_settings() -> str:
    """The settings key of flow's default claims, the only ones the shipped table measured."""
    return settings_key(FlowMethod().settings())


def confidence_after_verify(attribution: Attribution, system: str | None) -> float | None:
    """The confidence of a verified default-flow claim given its verdict; None for any other claim."""
    if (
        attribution.method != FlowMethod.name
        or not attribution.determined
        or attribution.verified is None
        or attribution.settings_key != _measured_settings()
    ):
        return None
    return shipped_calibration().verified_confidence(
        str(attribution.error_type), system, str(attribution.verified)
    )
