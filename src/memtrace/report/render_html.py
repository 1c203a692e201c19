"""report.html: one self-contained page (inline CSS, inline SVG charts, a few lines of inline script
for sorting tables) that opens offline, from an e-mail attachment or a CI artifact alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from . import svg
from .model import VERIFICATION_OUTCOMES, Report
from .render_md import CONFIRMATION_NOTE, RESPONSE_VERDICTS_NOTE
from .verification import other_verifier_sentence

_TEMPLATES = Path(__file__).with_name("templates")


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(_TEMPLATES),
        autoescape=select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = lambda v: "-" if v is None else f"{v:.1%}"
    env.filters["ticks"] = _ticks
    env.globals["colour_of"] = lambda name: svg.colour_of(name, [])
    return env


def _ticks(text: str) -> Markup:
    """Escape a note and show its `backticked` commands as code."""
    parts = str(escape(text)).split("`")
    return Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)))


def charts(report: Report) -> dict[str, Any]:
    """Every chart of the report as inline SVG markup, keyed by the section that shows it."""
    by_system = [(s.system, s.by_error_type) for s in report.systems]
    by_op = [(o.op_name, o.by_error_type) for o in report.failures_by_operation]
    funnels = [
        (
            f.system,
            Markup(
                svg.funnel([(s.label, s.count, s.share) for s in f.stages], f"Evidence funnel of {f.system}")
            ),
        )
        for f in report.funnel
    ]
    timing = [(b.label, b.by_error_type) for b in report.timing.bins]
    return {
        "error_types": Markup(svg.stacked_bars(by_system, "Failures by error type per system")),
        "operations": Markup(svg.stacked_bars(by_op, "Failures per decisive operation name")),
        "funnels": funnels,
        "timing": Markup(svg.histogram(timing, "Failures over conversation time", report.timing.axis)),
    }


def render_html(report: Report) -> str:
    """The whole report as one HTML document."""
    template = _environment().get_template("report.html.j2")
    examples = {e.anchor for p in report.patterns for e in p.examples}
    return template.render(
        r=report,
        h=report.headline,
        kinds=report.error_types,
        outcomes=[o for o in VERIFICATION_OUTCOMES if o in report.headline.verification],
        charts=charts(report),
        example_anchors=examples,
        confirmation_note=CONFIRMATION_NOTE,
        other_verifier_note=other_verifier_sentence(report.headline),
        response_note=RESPONSE_VERDICTS_NOTE,
    )
