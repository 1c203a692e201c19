"""Instructions per recorded operation, counted by valgrind: a figure a loaded machine cannot disturb.

Records `--ops` operations of tracing_overhead.py's pipeline (open + record + close), or with `--bare`
only runs the pipeline. Run it under callgrind at two sizes; the difference of the totals divided by
the difference of the sizes is the cost of one operation, start-up and imports cancelled out:

    for n in 1000 3000; do valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python benchmarks/recording_instructions.py --ops $n 2>&1 | grep Collected; done
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import memtrace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tracing_overhead import PROMPT, _memtrace_loop, extract, make_messages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1000, help="operations to record (default 1000)")
    parser.add_argument("--bare", action="store_true", help="run the pipeline without recording")
    args = parser.parse_args(argv)
    messages = make_messages(args.ops, 7)
    if args.bare:
        for message in messages:
            extract(message, PROMPT)
        return 0
    with (
        tempfile.TemporaryDirectory(prefix="memtrace-bench-") as tmp,
        memtrace.run(Path(tmp), name="instructions", system="bench"),
    ):
        _memtrace_loop(messages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
