"""Fit flow's confidence on the development label sets, and score it on the sets kept aside.

Reads the flow attributions stored in WORKSPACE (attribute it first: `memtrace attribute WS`), scores
them against the label sets, fits the agreement table on the development sets only (the tuned
conversations' official labels and dev..devN) and, with `--write`, writes it to
`src/memtrace/attribution/methods/flow_calibration.json` (and the verdict counts to
`flow_verdicts.json` beside it). On the sets never tuned on (the aside
conversations' official labels, fresh, fresh3 and later) it compares the confidence stored on each
attribution with the fitted table's: Brier score, expected calibration error (ECE, ten bins), and a
reliability figure with `--plot`. On a workspace whose flow claims were verified (`memtrace verify`,
or `bench labels --verify`), it also fits the verdict counts and scores the confidence after
verification (`Calibration.verified_confidence`).

    python benchmarks/natural_labels/calibrate.py WS [--write] [--plot FIGURE.png] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import memtrace as mt
from memtrace.attribution.methods.flow_confidence import Calibration, fit_calibration
from memtrace.attribution.methods.flow_verdicts import (
    VERDICT_GROUPS,
    VERDICTS_FILE,
    VerdictCounts,
    fit_verdicts,
)
from memtrace.bench.labels import read_labels, score_labels

HERE = Path(__file__).parent
TABLE = HERE.parents[1] / "src" / "memtrace" / "attribution" / "methods" / "flow_calibration.json"
#: Read and tuned on: the development sets and the official labels of the tuned conversations.
DEVELOPMENT = ["labels.json:tuned", *sorted(p.name for p in HERE.glob("labels_dev*.json"))]
#: Never read: the official labels of the aside conversations and the fresh sets but fresh2, whose
#: misses were read (it is in neither part); a second reader's file is no set of its own.
HELD_OUT = [
    "labels.json:aside",
    *sorted(
        p.name
        for p in HERE.glob("labels_fresh*.json")
        if p.stem not in ("labels_fresh2", "labels_fresh2_second") and not p.stem.endswith("_second")
    ),
]
BINS = 10

Row = dict[str, Any]
Predict = Callable[[Row], float]


def scored_rows(ws: mt.Workspace, names: list[str]) -> list[Row]:
    """One row per labelled case (a case labelled in two sets counts once): claim, system, agreement."""
    rows, seen = [], set()
    for name in names:
        file, _, split = name.partition(":")
        if not (HERE / file).exists():
            continue
        labels = read_labels(HERE / file)
        systems = {(label.run, label.case_id): label.system for label in labels}
        for case in score_labels(ws, labels, split=split or None)["cases"]:
            key = (case["run"], case["case_id"])
            if key not in seen:
                seen.add(key)
                rows.append({**case, "set": name, "system": systems[key]})
    return rows


def brier(rows: list[Row], predict: Predict) -> float:
    """Mean squared gap between the confidence and the labels' verdict (1 agreed, 0 not)."""
    return sum((predict(r) - r["agrees"][1]) ** 2 for r in rows) / len(rows)


def reliability(rows: list[Row], predict: Predict) -> list[tuple[float, float, int]]:
    """Per confidence bin: mean confidence, share the labels agreed with, claims."""
    bins: dict[int, list[Row]] = defaultdict(list)
    for r in rows:
        bins[min(int(predict(r) * BINS), BINS - 1)].append(r)
    return [
        (sum(predict(r) for r in b) / len(b), sum(r["agrees"][1] for r in b) / len(b), len(b))
        for _, b in sorted(bins.items())
    ]


def ece(rows: list[Row], predict: Predict) -> float:
    """Expected calibration error: the claims-weighted gap between said and agreed per bin."""
    return sum(n * abs(said - agreed) for said, agreed, n in reliability(rows, predict)) / len(rows)


def plot(path: Path, rows: list[Row], predictors: dict[str, Predict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="calibrated")
    for (name, predict), marker in zip(predictors.items(), "os^", strict=False):
        points = reliability(rows, predict)
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, label=name)
        for said, agreed, n in points:
            ax.annotate(str(n), (said, agreed), textcoords="offset points", xytext=(4, -10), fontsize=7)
    ax.set(
        xlim=(0.3, 1.02),
        ylim=(0.3, 1.02),
        xlabel="flow's confidence (bin mean)",
        ylabel="share the blind labels agree with (type + operation)",
        title=f"flow's confidence on {len(rows)} held-out labels",
    )
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--write", action="store_true", help="write the fitted table into the package")
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--stored-name", default="stored on the attributions", help="its name in the figure")
    args = parser.parse_args()
    with mt.open(args.workspace) as ws:
        development, held_out = scored_rows(ws, DEVELOPMENT), scored_rows(ws, HELD_OUT)
    if not development or not held_out:
        raise SystemExit(f"{HERE}: no development or no held-out labels to fit and score on")
    fitted = fit_calibration(
        ((r["claim"][0], r["system"], r["agrees"][1]) for r in development),
        sorted({r["set"] for r in development}),
    )
    verdicts = _verdict_counts(development, fitted, args.write)
    _check_roundtrip(fitted, verdicts)

    def after_verify(r: Row) -> float:
        found = verdicts.confidence_after(fitted, r["claim"][0], r["system"], r.get("verdict"))
        return fitted.confidence(r["claim"][0], r["system"]) if found is None else found

    predictors: dict[str, Predict] = {
        args.stored_name: lambda r: r["confidence"],
        "fitted on the development sets": lambda r: fitted.confidence(r["claim"][0], r["system"]),
    }
    if verdicts.by_type_verdict:
        predictors["fitted, then moved by verify's verdict"] = after_verify
    summary = {
        "development_labels": len(development),
        "held_out_labels": len(held_out),
        "held_out_agreement": sum(r["agrees"][1] for r in held_out) / len(held_out),
        **{
            name: {"brier": brier(held_out, p), "ece": ece(held_out, p), "bins": reliability(held_out, p)}
            for name, p in predictors.items()
        },
        "table": fitted.to_dict(),
        "verdicts": verdicts.to_dict(),
    }
    for name in predictors:
        print(
            f"{name}: Brier {summary[name]['brier']:.4f}, ECE {summary[name]['ece']:.4f} on {len(held_out)}"
        )
    print(f"held-out agreement {summary['held_out_agreement']:.3f}; fitted on {len(development)} labels")
    if args.write:
        for path, payload in (
            (TABLE, fitted.to_dict()),
            (TABLE.with_name(VERDICTS_FILE), verdicts.to_dict()),
        ):
            path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
            print(f"wrote {path}")
    if args.plot:
        plot(args.plot, held_out, predictors)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")


def _verdict_counts(development: list[Row], fitted: Calibration, writing: bool) -> VerdictCounts:
    """The verdict counts of the development claims, which must all be verified by this verifier (a
    verdict rate moves the type's rate over all its claims, so a partly verified set would skew every
    figure, and another verifier's verdicts are not this one's)."""
    unverified = sum(r.get("verdict") is None for r in development)
    if unverified and (writing or unverified < len(development)):
        older = sum(r.get("verdict_of_another_verifier") is not None for r in development)
        raise SystemExit(
            f"{unverified} of {len(development)} development claims are not verified by this verifier"
            f" ({older} by another): verify them first (`memtrace bench labels WS SET --verify` for"
            " each set, or `python benchmarks/natural_labels/reverify.py WS --store`)"
        )
    return fit_verdicts(
        ((r["claim"][0], r["verdict"], r["agrees"][1]) for r in development if r.get("verdict")),
        fitted.fitted_on,
    )


def _check_roundtrip(fitted: Calibration, verdicts: VerdictCounts) -> None:
    """The tables, as they will be written, read back to the same confidences (checked before writing)."""
    again = Calibration.from_dict(json.loads(json.dumps(fitted.to_dict())))
    for kind, system in fitted.by_type_system:
        if again.confidence(kind, system) != fitted.confidence(kind, system):
            raise SystemExit(f"{TABLE}: the fitted table does not read back for {kind}/{system}")
    counts = VerdictCounts.from_dict(json.loads(json.dumps(verdicts.to_dict())))
    for kind in fitted.by_type:
        for verdict in VERDICT_GROUPS:
            if counts.confidence_after(again, kind, None, verdict) != verdicts.confidence_after(
                fitted, kind, None, verdict
            ):
                raise SystemExit(f"{VERDICTS_FILE}: the fitted counts do not read back for {kind}/{verdict}")


if __name__ == "__main__":
    main()
