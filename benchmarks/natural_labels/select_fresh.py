"""Pick fresh cases from the conversations kept aside, none of them in `cases.json`: labelled later, by a
reader who has not seen the others, they score the fixes made after the first labels were read.

Same stratification as select_cases.py (by system and by flow's claimed type at selection time).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

from select_cases import case_row

import memtrace as mt

HERE = Path(__file__).parent
PER_SYSTEM = 10
SEED = 2019


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workspace", type=Path)
    parser.add_argument("attributions", type=Path)
    args = parser.parse_args()
    earlier = json.loads((HERE / "cases.json").read_text())
    aside = {row["conversation"] for row in earlier if row["split"] == "aside"}
    taken = {(row["run"], row["case_id"]) for row in earlier}
    claimed = {
        (a["run_id"], a["case_id"]): a["error_type"] for a in json.loads(args.attributions.read_text())
    }
    rng = random.Random(SEED)
    pools: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    with mt.open(args.workspace) as ws:
        for run in ws.runs():
            if run.parent_run or run.conversation not in aside:
                continue
            for case in ws.cases(run.id):
                kind = claimed.get((run.id, case.id))
                if kind is None or case.category == "adversarial" or (run.name, case.id) in taken:
                    continue
                pools[run.system][kind].append({**case_row(run, case), "split": "fresh-aside"})
    chosen: list[dict] = []
    for system in sorted(pools):
        kinds = pools[system]
        others = sorted((k for k in kinds if k != "ResponseError"), key=lambda k: (len(kinds[k]), k))
        spare = PER_SYSTEM // 2
        for i, kind in enumerate([*others, "ResponseError"]):
            left = len(others) - i
            want = spare // left if kind != "ResponseError" and left else spare + PER_SYSTEM - PER_SYSTEM // 2
            pool = sorted(kinds.get(kind, []), key=lambda r: r["case_id"])
            take = rng.sample(pool, min(want, len(pool)))
            if kind != "ResponseError":
                spare -= len(take)
            chosen.extend(take)
    chosen.sort(key=lambda r: (r["system"], r["case_id"]))
    for n, row in enumerate(chosen, 1):
        row["label_id"] = f"F{n:03d}"
    (HERE / "fresh_cases.json").write_text(json.dumps(chosen, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(chosen)} fresh cases from {sorted(aside)}")


if __name__ == "__main__":
    main()
