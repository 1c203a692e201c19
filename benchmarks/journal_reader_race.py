"""Recorder against a reader loop: how many short runs lose what they recorded (issue 12).

A second process opens and closes the workspace as fast as it can while this one records N
one-operation runs. A run is lost when it is not `complete` with its one operation after both end.

    .venv/bin/python benchmarks/journal_reader_race.py 3000
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import tempfile
from multiprocessing.synchronize import Event

import memtrace as mt


def open_in_a_loop(workspace: str, stop: Event) -> None:
    """The reader: every open may find a journal that a recorder has just made."""
    while not stop.is_set():
        try:
            mt.open(workspace).close()
        except Exception as exc:  # reported, not hidden: a reader error is a finding too
            print(f"reader error: {exc}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=int, nargs="?", default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memtrace-race-") as workspace:
        stop = mp.Event()
        reader = mp.Process(target=open_in_a_loop, args=(workspace, stop))
        reader.start()
        try:
            for i in range(args.runs):
                with mt.run(workspace, name=f"r{i}"), mt.op("step") as op:
                    op.output("y", i)
        finally:
            stop.set()
            reader.join()
        with mt.open(workspace) as ws:
            runs = ws.runs()
            lost = sum(1 for r in runs if r.status != "complete" or ws.store.count("ops", r.id) != 1)
            print(f"runs recorded: {args.runs}, found: {len(runs)}, lost: {lost + args.runs - len(runs)}")


if __name__ == "__main__":
    main()
