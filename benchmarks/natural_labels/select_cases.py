"""Pick the failed cases to hand-label: stratified by system and by flow's claimed type, blind to the rest.

Reads a workspace recorded with `memtrace run WS --system all --dataset locomo:.../locomo-dev.json` and
the `memtrace attribute WS --json ATTR` output (used only to stratify). Writes `cases.json`, which holds
no attribution: it is what a labeller gets. Two conversations, drawn by the seed, are kept aside.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

import memtrace as mt
from memtrace.graph import Case, Run

PER_SYSTEM = 32
SEED = 19


def case_row(run: Run, case: Case) -> dict:
    """What a labeller gets of one case: where it is and what was asked, answered and expected."""
    return {
        "run_id": run.id,
        "run": run.name,
        "system": run.system,
        "conversation": run.conversation,
        "case_id": case.id,
        "question": case.question,
        "gold": case.gold,
        "prediction": case.prediction,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workspace", type=Path)
    parser.add_argument("attributions", type=Path)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("cases.json"))
    args = parser.parse_args()

    claimed = {
        (a["run_id"], a["case_id"]): a["error_type"] for a in json.loads(args.attributions.read_text())
    }
    rng = random.Random(SEED)
    pools: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    conversations: set[str] = set()
    with mt.open(args.workspace) as ws:
        for run in ws.runs():
            if run.parent_run:
                continue
            conversations.add(run.conversation)
            for case in ws.cases(run.id):
                kind = claimed.get((run.id, case.id))
                if kind is None or case.category == "adversarial":
                    continue
                pools[run.system][kind].append(case_row(run, case))
    aside = set(rng.sample(sorted(conversations), 2))
    chosen: list[dict] = []
    for system in sorted(pools):
        kinds = pools[system]
        # Smallest pools first, so what a small pool cannot give passes to the next non-Response type.
        others = sorted((k for k in kinds if k != "ResponseError"), key=lambda k: (len(kinds[k]), k))
        quota = {"ResponseError": PER_SYSTEM // 2}
        for i, kind in enumerate(others):
            quota[kind] = (PER_SYSTEM // 2) // len(others) + (1 if i < (PER_SYSTEM // 2) % len(others) else 0)
        spare = 0
        for kind in [*others, "ResponseError"]:
            pool = sorted(kinds.get(kind, []), key=lambda r: (r["run"], r["case_id"]))
            want = quota.get(kind, 0) + spare
            take = rng.sample(pool, min(want, len(pool)))
            spare = want - len(take)
            chosen.extend(take)
    for row in chosen:
        row["split"] = "aside" if row["conversation"] in aside else "tuned"
    chosen.sort(key=lambda r: (r["system"], r["conversation"], r["case_id"]))
    for n, row in enumerate(chosen, 1):
        row["label_id"] = f"L{n:03d}"
    args.out.write_text(json.dumps(chosen, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(chosen)} cases, aside conversations {sorted(aside)} -> {args.out}")


if __name__ == "__main__":
    main()
