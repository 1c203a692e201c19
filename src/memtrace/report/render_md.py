"""report.md: the structured report as GitHub-flavoured markdown (tables instead of charts).

Markdown is what gets pasted into an issue or a pull request, so every chart of the HTML report
appears here as the table of the numbers it draws.
"""

from __future__ import annotations

import html

from .model import VERIFICATION_OUTCOMES, Example, Pattern, Report, ValueSnippet
from .verification import other_verifier_sentence

#: What the confirmation columns mean (the levels are never summed into one "verified" share).
CONFIRMATION_NOTE = (
    "Flow-confirmed: replaying with the blamed operation repaired delivered the evidence into the answer "
    "step's context. Answer-confirmed: the replayed answer was right. ResponseErrors are never replayed: "
    "confirmed by the item check means every item of the gold answer is in the answer's context by the "
    "strict judge's rule and a named part carries it; refuted means the context lacks an item; by "
    "elimination is left for inferred answers no turn states (the carrying part is named, nothing else "
    "could be checked). The carrying part of each is in report.html's All failures and report.json. "
    "Shares of different populations, shown side by side and never added up."
)


#: What a ResponseError's verdicts are (it is never replayed; the names are the stored verdicts).
RESPONSE_VERDICTS_NOTE = (
    "A ResponseError is never replayed: its flow-confirmed is the item check (every item of the answer in "
    "the context by the judge's rule, a named part carrying it by flow's), its refuted a context lacking "
    "an item, its by-elimination an inferred answer no turn states."
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _text(value: object) -> str:
    """Data as inert markdown on one line: HTML escaped, so `<img onerror=...>` shows as written."""
    return html.escape(" ".join(str(value).split()), quote=False)


def _code(value: object) -> str:
    """Data as an inline code span, whatever backticks it holds (code spans show HTML as text)."""
    text = " ".join(str(value).split())
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (_longest_backtick_run(text) + 1)
    return f"{fence} {text} {fence}"


def _cell(text: object) -> str:
    return _text(text).replace("|", "\\|")


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*out, ""]


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"


def render_markdown(report: Report) -> str:
    """The whole report as one markdown document."""
    h = report.headline
    lines = [
        "# memtrace diagnostic report",
        "",
        f"Workspace {_code(report.workspace)} · {h.runs} run(s) · attribution method `{report.method}` · "
        f"generated {report.generated_at} by memtrace {report.memtrace_version}",
        "",
        "## Headline",
        "",
    ]
    lines += _table(
        [
            "questions",
            "judged",
            "correct",
            "accuracy",
            "failures",
            "attributed",
            "undetermined",
            "suspected annotation errors",
        ],
        [
            [
                h.questions,
                h.judged,
                h.correct,
                _pct(h.accuracy),
                h.failures,
                h.attributed,
                h.undetermined,
                h.suspected_annotation_errors,
            ]
        ],
    )
    lines += _verification_tables(report)
    kinds = report.error_types
    suspects = [s.suspected_annotation_errors for s in report.systems]
    extra = ["suspected annotation errors"] if any(suspects) else []
    lines += ["### By system", ""]
    lines += _table(
        ["system", "runs", "questions", "accuracy", "failures", *kinds, *extra, "verification"],
        [
            [
                s.system,
                len(s.runs),
                s.questions,
                _pct(s.accuracy),
                s.failures,
                *(s.by_error_type.get(k, 0) for k in kinds),
                *([s.suspected_annotation_errors] if extra else []),
                _by_type(s.verification_by_type),
            ]
            for s in report.systems
        ],
    )
    lines += ["### Verification per error type", ""]
    outcomes = [o for o in VERIFICATION_OUTCOMES if any(o in c for c in h.verification_by_type.values())]
    lines += _table(
        ["error type", *outcomes],
        [[kind, *(c.get(o, 0) for o in outcomes)] for kind, c in h.verification_by_type.items()],
    )
    if "ResponseError" in h.verification_by_type:
        lines += [RESPONSE_VERDICTS_NOTE, ""]
    lines += _refuted(report)
    if report.notes:
        lines += ["## Notes", "", *(f"- {_text(note)}" for note in report.notes), ""]
    if report.narrative is not None:
        n = report.narrative
        lines += [f"## Narrative (generated by an LLM: {n.model})", "", f"> **{n.note}**", ">"]
        lines += [
            f"> {html.escape(line, quote=False)}" if line else ">" for line in n.text.strip().splitlines()
        ]
        lines.append("")
    lines += ["## Failures per operation", ""]
    lines += _table(
        ["operation", "failures", "error types", "systems"],
        [
            [f"`{o.op_name}`", o.count, _counts(o.by_error_type), ", ".join(o.systems)]
            for o in report.failures_by_operation
        ],
    )
    lines += _funnel(report)
    t = report.timing
    lines += ["## Failures over conversation time", "", f"Bins: {t.axis}.", ""]
    lines += _table(
        ["when", "failures", "error types"], [[b.label, b.count, _counts(b.by_error_type)] for b in t.bins]
    )
    if t.unknown:
        lines += [
            f"{t.unknown} failure(s) left out: no decisive operation, or no conversation to place it in.",
            "",
        ]
    lines += _suspected(report)
    lines += ["## Failure patterns", ""]
    if not report.patterns:
        lines += ["No failed questions.", ""]
    for i, pattern in enumerate(report.patterns, 1):
        lines += _pattern(i, pattern, report.workspace)
    return "\n".join(lines).rstrip() + "\n"


def _verification_tables(report: Report) -> list[str]:
    """Claims a repair can test and ResponseErrors, each in its own table: never one "verified" number."""
    h = report.headline
    lines = _table(
        ["claims a repair can test", "flow-confirmed", "answer-confirmed", "refuted", "not verifiable"],
        [
            [
                f"{h.claims}{_unverified(h.claims_not_verified)}",
                f"{_pct(h.flow_confirmed_share)} ({h.flow_confirmed})",
                f"{_pct(h.answer_confirmed_share)} ({h.answer_confirmed})",
                h.claims_refuted,
                h.claims_not_verifiable,
            ]
        ],
    )
    lines += _table(
        [
            "ResponseErrors",
            "confirmed by the item check",
            "refuted (context lacks an item)",
            "by elimination (inferred answers)",
            "not verifiable",
        ],
        [
            [
                f"{h.responses}{_unverified(h.responses_not_verified)}",
                f"{_pct(h.responses_confirmed_share)} ({h.responses_confirmed})",
                h.responses_refuted,
                f"{_pct(h.by_elimination_share)} ({h.by_elimination})",
                h.responses_not_verifiable,
            ]
        ],
    )
    if h.verdicts_of_another_verifier:
        lines.append(f"{other_verifier_sentence(h)}\n")
    return [*lines, CONFIRMATION_NOTE, ""]


def _by_type(by_type: dict[str, dict[str, int]]) -> str:
    """Outcomes per error type in one cell: "DeletionError: flow-confirmed 5; ResponseError: ..."."""
    return "; ".join(f"{kind}: {_counts(counts)}" for kind, counts in by_type.items()) or "-"


def _refuted(report: Report) -> list[str]:
    """Every claim verification refuted, with why: a verifier that can say no shows where it did."""
    refuted = report.refuted
    lines = [f"### Refuted by verification: {len(refuted)}", ""]
    if not refuted:
        return [*lines, "Verification refuted no claim.", ""]
    return lines + _table(
        ["system", "case", "error type", "operation", "why"],
        [[f.system, f.case_id, f.error_type, f.op_id or "-", f.verification_reason or "-"] for f in refuted],
    )


def _suspected(report: Report) -> list[str]:
    """The suspected annotation errors, each with its reason: kept out of every count above."""
    suspects = report.suspected_annotation_errors
    lines = [
        f"## Suspected annotation errors: {len(suspects)}",
        "",
        "Wrong answers whose gold answer the conversation does not support: no memory operation could "
        "have delivered it, so they are not counted among the systems' error types, patterns or funnels.",
        "",
    ]
    if not suspects:
        return [*lines, "None.", ""]
    return lines + _table(
        ["system", "case", "question", "gold", "prediction", "reason"],
        [
            [s.system, s.case_id, s.question, " | ".join(s.gold), s.prediction or "-", s.reason]
            for s in suspects
        ],
    )


def _funnel(report: Report) -> list[str]:
    lines = [
        "## Evidence funnel",
        "",
        "Of the questions whose gold evidence exists in the run, how far the information got.",
        "",
    ]
    for f in report.funnel:
        lines += [f"### {_text(f.system)}", ""]
        lines += _table(
            ["stage", "questions", "share"], [[s.label, s.count, _pct(s.share)] for s in f.stages]
        )
        left = [
            f"{n} {what}"
            for n, what in (
                (f.undetermined, "undetermined (placed at the last stage their path proves)"),
                (f.without_evidence, "without gold evidence (left out)"),
                (f.unanswerable, "unanswerable (left out)"),
                (f.suspected_annotation_errors, "suspected annotation errors (left out)"),
            )
            if n
        ]
        if left:
            lines += ["; ".join(left) + ".", ""]
    return lines


def _pattern(i: int, p: Pattern, workspace: str) -> list[str]:
    lines = [
        f"### {i}. {_text(p.system)} · {_code(p.op_name)} · {p.error_type} — {p.count}",
        "",
        _text(p.description),
        "",
        f"Mean confidence {p.mean_confidence:.2f} · verification: {_counts(p.verification)} · "
        f"question categories: {_counts(p.categories)}",
        "",
    ]
    if p.tunables:
        routes = "; ".join(f"`{t.name}` ({t.change()}: {t.why})" for t in p.tunables)
        command = _code(f"memtrace optimize {workspace} --system {p.system}")
        lines += [
            f"**What to change next:** {routes}. {command} "
            "tunes these and keeps a change only if validation improves.",
            "",
        ]
    for example in p.examples:
        lines += _example(example)
    return lines


def _example(e: Example) -> list[str]:
    verified = e.verified or "not verified"
    lines = [
        f"#### Case {_code(e.case_id)} (run {_code(e.run_id)}, anchor {_code(e.anchor)})",
        "",
        f"- **Question:** {_text(e.question)}",
        f"- **Gold:** {_text(' | '.join(e.gold) or '-')}",
        f"- **Prediction:** {_text(e.prediction) if e.prediction is not None else '-'}",
        f"- **Decisive operation:** {_code(e.op_id or '-')}"
        + (f" (seq {e.op_seq})" if e.op_seq is not None else ""),
        f"- **Why:** {_text(e.explanation)}",
        f"- **Confidence:** {e.confidence:.2f}"
        + (
            f" ({e.confidence_after_verify:.2f} after verification)"
            if e.confidence_after_verify is not None
            else ""
        )
        + f" · **verified:** {verified}"
        + (f" ({_text(e.verification_reason)})" if e.verification_reason else ""),
    ]
    if e.carrying_part:
        lines.append(f"- **Carrying part of the context:** {_text(e.carrying_part)}")
    lines += [f"- **Checked:** {_text(c)}" for c in e.checked]
    lines += [f"- **Second fault (later, beside the claim):** {_text(f)}" for f in e.second_faults]
    if e.revised_from:
        lines.append(f"- **Revised by verification from:** {_text(e.revised_from)}")
    lines.append("")
    for title, values, more in (("Input", e.inputs, e.more_inputs), ("Output", e.outputs, e.more_outputs)):
        for v in values:
            fence = _fence(v.text)
            note = " · ▶ marks the evidence or the gold answer" if v.marked else ""
            if v.carrying:
                note += " · ★ carries the evidence (a step of the path names it)"
            heading = f"{title} {_code(v.id)} ({_text(v.category)}){note}:"
            lines += [heading, "", f"{fence}text", _marked(v), fence, ""]
        if more:
            lines += [f"… and {more} more {title.lower()}(s).", ""]
    return lines


def _marked(v: ValueSnippet) -> str:
    """The snippet's text with its marked lines flagged "▶ " and its carrying ones "★ " (a code block
    cannot be highlighted)."""
    if not v.marked and not v.carrying:
        return v.text
    flags = {**{i: "▶ " for i in v.marked}, **{i: "★ " for i in v.carrying}}
    return "\n".join(f"{flags.get(i, '  ')}{text}" for i, text in enumerate(v.text.splitlines()))


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks inside the text."""
    return "`" * max(3, _longest_backtick_run(text) + 1)


def _longest_backtick_run(text: str) -> int:
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def _unverified(count: int) -> str:
    """What a share's denominator holds unchecked, so that 0% is not read as refuted."""
    return f" ({count} not verified yet)" if count else ""
