"""Gather the readers' labels into `labels.json` (primary readers) and `second_reader.json`'s labels.

Each label becomes a MemTraceBench annotation (the `export --annotations` record: query, golden
answers, prediction, evidence ids, `final_error_type`, `final_op_id`) plus the reader's own fields
under `memtrace`. Runs are named, not numbered, so the file scores any workspace recorded the same way.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import memtrace as mt
from memtrace.graph.model import Annotation
from memtrace.interop.annotations import annotation_record

HERE = Path(__file__).parent
RECORDED_WITH = "memtrace run WS --system all --dataset locomo:../shared/data/locomo-dev.json"
#: (reader's file in readers/, the cases drawn, the labels written) of each development set.
DEV_SETS = (
    ("r7-dev.json", "dev_cases.json", "labels_dev.json"),
    ("r8-dev2.json", "dev2_cases.json", "labels_dev2.json"),
    ("r9-dev3.json", "dev3_cases.json", "labels_dev3.json"),
    ("r10-dev4.json", "dev4_cases.json", "labels_dev4.json"),
    ("r11-dev5.json", "dev5_cases.json", "labels_dev5.json"),
    # Cases whose attribution changed in a session (2026-12-07), drawn after the change, labelled blind.
    ("r12-changed.json", "changed_cases.json", "labels_changed.json"),
    ("r13-changed2.json", "changed2_cases.json", "labels_changed2.json"),
    ("r14-changed3.json", "changed3_cases.json", "labels_changed3.json"),
    # A sixth development set, drawn at random (session of 2026-12-07, second sitting), labelled blind.
    ("r15-dev6.json", "dev6_cases.json", "labels_dev6.json"),
    # The cases the joint-subject and asked-only rules moved, drawn after them, labelled blind.
    ("r16-changed4.json", "changed4_cases.json", "labels_changed4.json"),
    # The cases the per-person rule moved, drawn after it, labelled blind.
    ("r17-changed5.json", "changed5_cases.json", "labels_changed5.json"),
    # A seventh development set, drawn at random after those rules, labelled blind.
    ("r18-dev7.json", "dev7_cases.json", "labels_dev7.json"),
    # The cases the split-facts rule moved, drawn after it: two blind readers (the first was told an
    # item may be spread over units written from one turn; the second was told nothing of it).
    ("r19-changed6.json", "changed6_cases.json", "labels_changed6.json"),
    ("r19b-changed6-second.json", "changed6_cases.json", "labels_changed6_second.json"),
    ("r20-changed7.json", "changed7_cases.json", "labels_changed7.json"),
    # An eighth development set, drawn at random after the split-facts rule, labelled blind.
    ("r21-dev8.json", "dev8_cases.json", "labels_dev8.json"),
    # The cases the handed-back-question rule moved (seven in the aside conversations), labelled blind.
    ("r22-changed8.json", "changed8_cases.json", "labels_changed8.json"),
    # A ninth development set, drawn at random, labelled blind.
    ("r23-dev9.json", "dev9_cases.json", "labels_dev9.json"),
    # A tenth, drawn at the sitting's last flow commit and scored once, with no change after it.
    ("r24-dev10.json", "dev10_cases.json", "labels_dev10.json"),
    # Session of 2026-12-07, third sitting: an eleventh development set, and a second fresh set from
    # the aside conversations, scored when it arrived and not read (its misses stay unread).
    ("r25-dev11.json", "dev11_cases.json", "labels_dev11.json"),
    ("r26-fresh2.json", "fresh2_cases.json", "labels_fresh2.json"),
    # The cases a topic rule moved (a part must name what the evidence ties the answer to), drawn
    # after it and labelled blind: the readers agreed with it on 4 of 26 and with the code before
    # it on 18, so it was dropped.
    ("r27-changed9.json", "changed9_cases.json", "labels_changed9.json"),
    # A twelfth development set, drawn at b955fa2 and labelled blind.
    ("r28-dev12.json", "dev12_cases.json", "labels_dev12.json"),
    # A third fresh set from the aside conversations, drawn at b955fa2, scored once and not read.
    ("r29-fresh3.json", "fresh3_cases.json", "labels_fresh3.json"),
    # A second blind reader of all of fresh2: how far two readers agree on the set flow did worst on.
    ("r30-fresh2-second.json", "fresh2_cases.json", "labels_fresh2_second.json"),
    # A fourth fresh set from the aside conversations, drawn at ff8ca86 (the sitting's last flow
    # commit), scored once and not read.
    ("r31-fresh4.json", "fresh4_cases.json", "labels_fresh4.json"),
    # A fifth fresh set from the aside conversations, drawn at b10565f, scored once and not read.
    ("r32-fresh5.json", "fresh5_cases.json", "labels_fresh5.json"),
    # A thirteenth development set, drawn at b10565f and labelled blind.
    ("r33-dev13.json", "dev13_cases.json", "labels_dev13.json"),
    # The cases the rule for list items said in other words moved (annotated turns naming a word of
    # the item), drawn after it at 865a983 outside the aside conversations, labelled blind.
    ("r34-changed10.json", "changed10_cases.json", "labels_changed10.json"),
    # A sixth fresh set from the aside conversations, drawn at 865a983, scored once and not read.
    ("r35-fresh6.json", "fresh6_cases.json", "labels_fresh6.json"),
    # A seventh and an eighth fresh set from the aside conversations, drawn at 091c29b (the sitting's
    # last flow commit), four blind readers, scored once and not read.
    ("r36-fresh7.json", "fresh7_cases.json", "labels_fresh7.json"),
    ("r37-fresh8.json", "fresh8_cases.json", "labels_fresh8.json"),
    # A ninth and a tenth, drawn at 914dcb5 (flow's claims as at 091c29b), four blind readers, scored
    # once and not read: the sitting's last draw, reported whatever it scored.
    ("r38-fresh9.json", "fresh9_cases.json", "labels_fresh9.json"),
    ("r39-fresh10.json", "fresh10_cases.json", "labels_fresh10.json"),
    # An eleventh, drawn at 2662036 (flow's claims as at 5c31842), two blind readers, scored once and
    # not read.
    ("r40-fresh11.json", "fresh11_cases.json", "labels_fresh11.json"),
    # A second blind reading of all of fresh11 by two other helpers, made after its first score: how
    # far two readers agree on a set nobody tuned on.
    ("r41-fresh11-second.json", "fresh11_cases.json", "labels_fresh11_second.json"),
)


def records(ws: mt.Workspace, labels: list[dict], cases: dict[str, dict], author: str) -> list[dict]:
    """The labels as annotation records, in label-id order."""
    out = []
    for label in sorted(labels, key=lambda item: item["label_id"]):
        case_row = cases[label["label_id"]]
        (case,) = [c for c in ws.cases(case_row["run_id"]) if c.id == case_row["case_id"]]
        kind = label["error_type"]
        annotation = Annotation(
            case_row["run_id"], case.id, kind, label.get("op_id"), label["evidence"], author
        )
        record = annotation_record(ws.store, case, annotation)
        record["run"] = case_row["run"]
        record["memtrace"].update(
            label_id=label["label_id"],
            system=case_row["system"],
            split=case_row["split"],
            sure=bool(label.get("sure", True)),
            rests_on=label.get("rests_on"),
            gold_turns=label.get("gold_turns", []),
        )
        out.append(record)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workspace", type=Path, help="the workspace the readers labelled")
    parser.add_argument("readers", type=Path, help="the folder of the readers' files (r1-...json)")
    parser.add_argument(
        "--only-dev",
        action="store_true",
        help="build labels_dev.json alone (its cases were drawn from a later recording of the same runs)",
    )
    args = parser.parse_args()
    cases = {row["label_id"]: row for row in json.loads((HERE / "cases.json").read_text())}
    fresh = {row["label_id"]: row for row in json.loads((HERE / "fresh_cases.json").read_text())}
    aside = sorted({row["conversation"] for row in cases.values() if row["split"] == "aside"})
    primary: list[dict] = []
    for name in ("r1-long_context", "r2-rag", "r3-mem0", "r4-evermemos"):
        labels = json.loads((args.readers / f"{name}.json").read_text())
        primary += [dict(label, reader=name[:2]) for label in labels]
    sets = (
        ("labels.json", primary, cases, "reader"),
        (
            "labels_second.json",
            json.loads((args.readers / "r5-second.json").read_text()),
            cases,
            "second-reader",
        ),
        (
            "labels_fresh.json",
            json.loads((args.readers / "r6-fresh.json").read_text()),
            fresh,
            "fresh-reader",
        ),
    )
    # The development sets drawn later from the tuned conversations (D001..., E001...), each read blind.
    dev_sets = []
    for readers, drawn, name in DEV_SETS:
        if (args.readers / readers).exists() and (HERE / drawn).exists():
            rows = {row["label_id"]: row for row in json.loads((HERE / drawn).read_text())}
            dev_sets.append((name, json.loads((args.readers / readers).read_text()), rows, "dev-reader"))
    if args.only_dev and not dev_sets:
        parser.error(f"--only-dev needs a development set's cases and reader's file in {HERE}")
    sets = tuple(dev_sets) if args.only_dev else (*sets, *dev_sets)
    with mt.open(args.workspace) as ws:
        for name, labels, rows, author in sets:
            payload = {
                "format": "memtrace-labels/1",
                "dataset": "locomo-dev",
                "recorded_with": RECORDED_WITH,
                "aside_conversations": aside,
                "labels": records(ws, labels, rows, author),
            }
            (HERE / name).write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
            print(f"{len(payload['labels'])} labels -> {HERE / name}")


if __name__ == "__main__":
    main()
