"""Inline SVG charts for the HTML report: stacked horizontal bars, a funnel, a stacked histogram.

Hand-written SVG keeps report.html one self-contained file that opens offline and prints cleanly,
with no plotting library to install and nothing fetched from a CDN.
"""

from __future__ import annotations

from html import escape

from ..vocabulary import MEMORY_ERROR_TYPES, ErrorType

#: One colour per error type, stable across charts (colour-blind friendly hues).
ERROR_COLOURS = {
    ErrorType.EXTRACTION: "#7b5ea7",
    ErrorType.UPDATE: "#e69f00",
    ErrorType.DELETION: "#d55e00",
    ErrorType.RETRIEVAL: "#0072b2",
    ErrorType.RESPONSE: "#009e73",
    ErrorType.UNDETERMINED: "#9a9a9a",
}
_SPARE = ("#cc79a7", "#56b4e9", "#f0e442", "#444444")
_FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12"'


def colour_of(series: str, order: list[str]) -> str:
    """The colour of an error type (or another series, from a spare palette by position)."""
    if series in ERROR_COLOURS:
        return ERROR_COLOURS[series]
    others = [s for s in order if s not in ERROR_COLOURS]
    return _SPARE[others.index(series) % len(_SPARE)] if series in others else _SPARE[0]


def series_order(present: set[str]) -> list[str]:
    """Error types in taxonomy order, then any others, then Undetermined."""
    known = [t for t in MEMORY_ERROR_TYPES if t in present]
    others = sorted(present - set(MEMORY_ERROR_TYPES) - {ErrorType.UNDETERMINED})
    return known + others + ([ErrorType.UNDETERMINED] if ErrorType.UNDETERMINED in present else [])


def _open(width: int, height: int, title: str) -> list[str]:
    return [
        f'<svg viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width:{width}px" role="img" aria-label="{escape(title)}" {_FONT}>',
        f"<title>{escape(title)}</title>",
    ]


def _legend(series: list[str], y: int, x: int = 8) -> list[str]:
    parts = []
    for name in series:
        parts.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{colour_of(name, series)}"/>')
        parts.append(f'<text x="{x + 14}" y="{y}">{escape(name)}</text>')
        x += 22 + 7 * len(name)
    return parts


def _cut(label: str, chars: int) -> str:
    return label if len(label) <= chars else label[: chars - 1] + "…"


def stacked_bars(rows: list[tuple[str, dict[str, int]]], title: str, label_width: int = 170) -> str:
    """Horizontal bars, one per row, split by series (error types), totals at the bar ends."""
    series = series_order({s for _, counts in rows for s in counts})
    plot, row_h, top = 440, 24, 34
    width, height = label_width + plot + 50, top + row_h * max(len(rows), 1) + 8
    most = max((sum(c.values()) for _, c in rows), default=0) or 1
    parts = _open(width, height, title)
    parts += _legend(series, 16)
    for i, (label, counts) in enumerate(rows):
        y = top + i * row_h
        parts.append(
            f'<text x="{label_width - 6}" y="{y + 15}" text-anchor="end">'
            f"<title>{escape(label)}</title>{escape(_cut(label, label_width // 7))}</text>"
        )
        x = float(label_width)
        for name in series:
            n = counts.get(name, 0)
            if not n:
                continue
            w = plot * n / most
            parts.append(
                f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" '
                f'fill="{colour_of(name, series)}"><title>{escape(label)}: {n} {escape(name)}</title></rect>'
            )
            x += w
        parts.append(f'<text x="{x + 5:.1f}" y="{y + 15}">{sum(counts.values())}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def funnel(stages: list[tuple[str, int, float | None]], title: str) -> str:
    """Centred bars narrowing stage by stage, each with its count and share of the first stage."""
    label_w, plot, row_h, top = 210, 300, 26, 8
    width, height = label_w + plot + 110, top + row_h * len(stages) + 6
    first = stages[0][1] if stages else 0
    parts = _open(width, height, title)
    for i, (label, count, share) in enumerate(stages):
        y = top + i * row_h
        w = plot * count / first if first else 0.0
        x = label_w + (plot - w) / 2
        shade = 0.95 - 0.12 * i
        parts.append(f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end">{escape(label)}</text>')
        parts.append(
            f'<rect x="{x:.1f}" y="{y + 3}" width="{max(w, 1.0):.1f}" height="{row_h - 6}" rx="3" '
            f'fill="#0072b2" fill-opacity="{shade:.2f}"><title>{escape(label)}: {count}</title></rect>'
        )
        pct = f" ({share:.0%})" if share is not None else ""
        parts.append(f'<text x="{label_w + plot + 8}" y="{y + 16}">{count}{pct}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def histogram(bins: list[tuple[str, dict[str, int]]], title: str, axis: str) -> str:
    """Vertical bars (one per bin, stacked by series) with the bin labels and an axis caption below."""
    series = series_order({s for _, counts in bins for s in counts})
    left, plot_h, top = 36, 180, 34
    bar_w = max(28, min(90, 600 // max(len(bins), 1)))
    width, height = left + bar_w * len(bins) + 20, top + plot_h + 48
    width = max(width, 140 + 7 * len(axis), 360)
    most = max((sum(c.values()) for _, c in bins), default=0) or 1
    parts = _open(width, height, title)
    parts += _legend(series, 16)
    base = top + plot_h
    parts.append(f'<line x1="{left}" y1="{base}" x2="{width - 10}" y2="{base}" stroke="#888"/>')
    for i, (label, counts) in enumerate(bins):
        x = left + i * bar_w + 4
        y = float(base)
        for name in series:
            n = counts.get(name, 0)
            if not n:
                continue
            h = plot_h * n / most
            y -= h
            parts.append(
                f'<rect x="{x}" y="{y:.1f}" width="{bar_w - 8}" height="{h:.1f}" '
                f'fill="{colour_of(name, series)}"><title>{escape(label)}: {n} {escape(name)}</title></rect>'
            )
        total = sum(counts.values())
        parts.append(f'<text x="{x + (bar_w - 8) / 2}" y="{y - 4:.1f}" text-anchor="middle">{total}</text>')
        parts.append(
            f'<text x="{x + (bar_w - 8) / 2}" y="{base + 15}" text-anchor="middle">'
            f"{escape(_cut(label, bar_w // 6))}<title>{escape(label)}</title></text>"
        )
    parts.append(f'<text x="{left}" y="{base + 36}" fill="#555">{escape(axis)} (earlier → later)</text>')
    parts.append("</svg>")
    return "\n".join(parts)
