"""Pick fresh cases, none of them labelled before: labelled later, by a reader who has not seen the
others, they score the fixes made after the first labels were read.

By default from the conversations kept aside (`fresh_cases.json`, F001...); with `--from tuned`, from
the tuned conversations, as a development set a later session may tune on (`--prefix D --out
dev_cases.json`). Same stratification as select_cases.py (by system and by flow's claimed type at
selection time).
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
    parser.add_argument("--from", dest="source", choices=("aside", "tuned"), default="aside")
    parser.add_argument("--prefix", default="F", help="label ids: F001, ...")
    parser.add_argument("--out", type=Path, default=HERE / "fresh_cases.json")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    earlier = json.loads((HERE / "cases.json").read_text())
    aside = {row["conversation"] for row in earlier if row["split"] == "aside"}
    taken = {(row["run"], row["case_id"]) for row in earlier}
    for other in HERE.glob("*_cases.json"):  # every other set drawn before: fresh, development
        if other.resolve() == args.out.resolve():
            continue
        taken |= {(row["run"], row["case_id"]) for row in json.loads(other.read_text())}
    split = "fresh-aside" if args.source == "aside" else "dev"
    claimed = {
        (a["run_id"], a["case_id"]): a["error_type"] for a in json.loads(args.attributions.read_text())
    }
    rng = random.Random(args.seed)
    pools: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    with mt.open(args.workspace) as ws:
        for run in ws.runs():
            if run.parent_run or (run.conversation in aside) != (args.source == "aside"):
                continue
            for case in ws.cases(run.id):
                kind = claimed.get((run.id, case.id))
                if kind is None or case.category == "adversarial" or (run.name, case.id) in taken:
                    continue
                pools[run.system][kind].append({**case_row(run, case), "split": split})
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
        row["label_id"] = f"{args.prefix}{n:03d}"
    args.out.write_text(json.dumps(chosen, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(chosen)} {split} cases from {sorted({row['conversation'] for row in chosen})}")


if __name__ == "__main__":
    main()
