"""Verify labelled claims again with the code as it is, without storing, against their stored verdicts.

For a change to `verify`: which labelled claims it newly confirms or no longer confirms, split by
whether the labels call the claim right. WORKSPACE must hold the flow claims, verified
(`memtrace bench labels WS SET --verify`); each labelled case counts once. With `--store`, each new
verdict is stored on its claim (as `memtrace verify --refresh` would), so calibrate.py can refit the
verdict counts on them.

    python benchmarks/natural_labels/reverify.py WS [--type RetrievalError] [--store] [SET.json ...]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import memtrace as mt
from memtrace.attribution.model import save_attribution
from memtrace.attribution.verify.claims import replay_seed
from memtrace.attribution.verify.counterfactual import verify
from memtrace.bench.labels import read_labels, score_labels
from memtrace.systems.replay import replay_ids
from memtrace.vocabulary import CONFIRMED_VERDICTS

HERE = Path(__file__).parent
CONFIRMED = {str(v) for v in CONFIRMED_VERDICTS} - {"by-elimination"}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("workspace", type=Path)
    parser.add_argument("sets", nargs="*", type=Path, help="label sets (default: every labels*.json here)")
    parser.add_argument("--type", dest="kind", help="only claims of this error type")
    parser.add_argument("--store", action="store_true", help="store each new verdict on its claim")
    args = parser.parse_intermixed_args()
    sets = args.sets or sorted(HERE.glob("labels*.json"))
    seen: set[tuple[str, str]] = set()
    tally: Counter[tuple[bool, bool, bool]] = Counter()
    with mt.open(args.workspace) as ws:
        for path in sets:
            scored = score_labels(ws, read_labels(path), split="all")
            for row in scored["cases"]:
                key = (row["run"], row["case_id"])
                stored = row["verdict"] or row.get("verdict_of_another_verifier")
                if key in seen or (args.kind and row["claim"][0] != args.kind) or stored is None:
                    continue
                seen.add(key)
                run_id = ws.run(row["run"]).id
                (claim,) = [a for a in mt.attribute(ws, run=run_id, case=row["case_id"])]
                with replay_ids(replay_seed(ws.store, claim)):
                    now = verify(ws, claim)
                if args.store:
                    save_attribution(ws.store, now.record(), claim.settings_key or "")
                before, after = stored in CONFIRMED, str(now.verdict) in CONFIRMED
                right = row["agrees"][1]
                tally[(right, before, after)] += 1
                if before != after:
                    print(
                        f"{path.name} {row['run']} {row['case_id']}, labels call it"
                        f" {'right' if right else 'wrong'}: {stored} -> {now.verdict} ({now.why})"
                    )
    for right in (True, False):
        rows = {k: v for k, v in tally.items() if k[0] == right}
        claims = sum(rows.values())
        before = sum(v for (_, b, _), v in rows.items() if b)
        after = sum(v for (_, _, a), v in rows.items() if a)
        print(
            f"claims the labels call {'right' if right else 'wrong'}: {claims}, confirmed {before} -> {after}"
        )


if __name__ == "__main__":
    main()
