"""The four memory systems against a REAL OpenAI-compatible model server (issue 11): what completes.

For one endpoint and model, each system runs as its own subprocess,

    memtrace run --system S --dataset sample --questions 3 --llm openai --model M --base-url URL

in a fresh workspace with a timeout, then a second identical time in the same workspace (its
`llm-cache.db` should answer every call). Per system the table says whether the run completed (else
the error line it printed), the model calls and tokens of the first run, its wall time, the cache
hits of the second run, and how many recorded operations failed. Everything is read back from the
workspace the CLI recorded: `llm` operations carry `usage` (calls, input/output tokens, cached calls;
see memtrace/llm/usage.py and client.py), `cached`, and `rejected` (replies that were not valid JSON);
an operation that raised has status `error` and its exception in `metadata.error`.

    .venv/bin/python benchmarks/realmodel_runs.py --base-url http://127.0.0.1:8081/v1 --model smollm2 \\
        [--systems long_context,rag,mem0,evermemos] [--questions 3] [--timeout 900] \\
        [--out realmodel-out] [--label llama-server] [--json results.json]

Nothing here talks to the model itself except `GET /models` (recorded in the JSON for the record);
the numbers are those of the memtrace code checked out (its commit is in the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import memtrace as mt  # noqa: E402
from _common import code_version  # noqa: E402

SYSTEMS = ("long_context", "rag", "mem0", "evermemos")


def memtrace_exe() -> str:
    """The `memtrace` console script of the interpreter running this file (the repo's .venv)."""
    beside = Path(sys.executable).with_name("memtrace")
    return str(beside) if beside.exists() else shutil.which("memtrace") or "memtrace"


def server_models(base_url: str) -> Any:
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=10) as response:
            return json.loads(response.read().decode())
    except (OSError, ValueError, urllib.error.URLError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def error_line(text: str) -> str | None:
    """The line memtrace printed for the failure: `error: ...`, else a traceback's last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("error:"):
            return line
    for line in reversed(lines):
        if "Error" in line or "Exception" in line:
            return line
    return lines[-1] if lines else None


def invoke(cmd: list[str], timeout: float, log: Path) -> dict[str, Any]:
    """Run one `memtrace run`; never raises. Output goes to `log`."""
    started = time.perf_counter()
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    with log.open("w") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True, env=env)
        try:
            code: int | None = process.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            code, timed_out = None, True
    seconds = time.perf_counter() - started
    text = log.read_text(errors="replace")
    if timed_out:
        error = f"timeout: no result after {timeout:g}s (killed)"
    elif code != 0:
        error = error_line(text) or f"exit status {code}"
    else:
        error = None
    return {"exit": code, "timed_out": timed_out, "seconds": round(seconds, 2), "error": error}


def read_runs(workspace: Path, skip: set[str]) -> list[dict[str, Any]]:
    """What the workspace recorded for each run not in `skip`: status, usage, failed operations."""
    if not (workspace / "memtrace.db").exists():
        return []
    out = []
    with mt.open(workspace) as ws:
        for run in ws.runs():
            if run.id in skip:
                continue
            ops = ws.store.ops(run.id)
            usage = {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cached_calls": 0}
            llm_ops = failed_llm = json_rejects = 0
            failed: list[dict[str, str]] = []
            for op in ops:
                meta = op.metadata or {}
                if op.category == "llm":
                    llm_ops += 1
                    for key in usage:
                        usage[key] += int((meta.get("usage") or {}).get(key) or 0)
                    json_rejects += len(meta.get("rejected") or [])
                    failed_llm += op.status == "error"
                if op.status == "error":
                    failed.append(
                        {"op": op.name, "category": op.category, "error": str(meta.get("error", ""))}
                    )
            cases = ws.store.cases(run.id)
            out.append(
                {
                    "run": run.id,
                    "name": run.name,
                    "status": run.status,
                    "error": run.error,
                    "ops": len(ops),
                    "llm_ops": llm_ops,
                    "usage": usage,
                    "json_rejects": json_rejects,
                    "failed_ops": len(failed),
                    "failed_llm_ops": failed_llm,
                    "first_failures": failed[:3],
                    "cases": len(cases),
                    "correct": sum(1 for c in cases if c.verdict == "correct"),
                }
            )
    return out


def total(runs: list[dict[str, Any]], key: str) -> int:
    return sum(int(r["usage"][key]) for r in runs)


def measure(system: str, args: argparse.Namespace, root: Path) -> dict[str, Any]:
    workspace = root / system
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir(parents=True)
    base = [
        memtrace_exe(),
        "run",
        "--workspace",
        str(workspace),
        "--system",
        system,
        "--dataset",
        args.dataset,
        "--questions",
        str(args.questions),
        "--llm",
        "openai",
        "--model",
        args.model,
        "--base-url",
        args.base_url,
        *shlex.split(args.run_args),
    ]
    print(f"[{system}] first run ...", flush=True)
    first = invoke([*base, "--json", str(workspace / "first.json")], args.timeout, workspace / "first.log")
    first_runs = read_runs(workspace, set())
    result: dict[str, Any] = {
        "system": system,
        "command": " ".join(base),
        "first": first,
        "first_runs": first_runs,
    }
    print(f"[{system}] first run: {first['error'] or 'completed'} in {first['seconds']}s", flush=True)
    if (first["timed_out"] and not args.second_after_timeout) or (
        first["error"] and args.skip_second_on_failure
    ):
        result["second"], result["second_runs"] = None, []
        return result
    print(f"[{system}] second identical run ...", flush=True)
    second = invoke([*base, "--json", str(workspace / "second.json")], args.timeout, workspace / "second.log")
    result["second"] = second
    result["second_runs"] = read_runs(workspace, {r["run"] for r in first_runs})
    print(f"[{system}] second run: {second['error'] or 'completed'} in {second['seconds']}s", flush=True)
    return result


def row(result: dict[str, Any]) -> dict[str, Any]:
    first, runs = result["first"], result["first_runs"]
    second, second_runs = result.get("second"), result.get("second_runs") or []
    calls = total(runs, "calls")
    accuracy, judge = None, None
    report = Path(result["command"].split("--workspace ")[1].split(" ")[0]) / "first.json"
    if report.exists():  # the headline and its judge (strict when the LLM judge failed its probe)
        written = json.loads(report.read_text()).get(result["system"], {})
        accuracy, judge = written.get("accuracy", {}).get("all"), written.get("accuracy_judge")
    return {
        "system": result["system"],
        "completed": first["error"] is None,
        "error": first["error"],
        "calls": calls,
        "sent": calls - total(runs, "cached_calls"),
        "input_tokens": total(runs, "input_tokens"),
        "output_tokens": total(runs, "output_tokens"),
        "json_rejects": sum(r["json_rejects"] for r in runs),
        "seconds": first["seconds"],
        "failed_ops": sum(r["failed_ops"] for r in runs),
        "failed_llm_ops": sum(r["failed_llm_ops"] for r in runs),
        "accuracy": accuracy,
        "accuracy_judge": judge,
        "second_completed": None if second is None else second["error"] is None,
        "second_error": None if second is None else second["error"],
        "second_calls": total(second_runs, "calls"),
        "second_cache_hits": total(second_runs, "cached_calls"),
        "second_seconds": None if second is None else second["seconds"],
    }


def markdown(rows: list[dict[str, Any]], title: str) -> str:
    head = (
        "| system | first run | model calls (sent) | tokens in / out | JSON rejects | wall s "
        "| failed ops (llm) | accuracy | 2nd run: cache hits / calls | 2nd run wall s | error |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = [f"### {title}\n", head.rstrip("\n")]
    for r in rows:
        acc = "-" if r["accuracy"] is None else f"{r['accuracy']:.2f}"
        if r["accuracy"] is not None and r.get("accuracy_judge"):
            acc += f" ({r['accuracy_judge']})"
        second = "-" if r["second_completed"] is None else f"{r['second_cache_hits']} / {r['second_calls']}"
        if r["second_completed"] is False:
            second += " (failed)"
        error = (r["error"] or "").replace("|", "\\|")
        if len(error) > 220:
            error = error[:219] + "…"
        lines.append(
            f"| {r['system']} | {'completed' if r['completed'] else 'FAILED'} | {r['calls']} ({r['sent']}) "
            f"| {r['input_tokens']} / {r['output_tokens']} | {r['json_rejects']} | {r['seconds']:.1f} "
            f"| {r['failed_ops']} ({r['failed_llm_ops']}) | {acc} | {second} "
            f"| {'-' if r['second_seconds'] is None else f'{r["second_seconds"]:.1f}'} | {error or '-'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--base-url", required=True, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8081/v1"
    )
    parser.add_argument("--model", required=True, help="Model name sent in every request.")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--dataset", default="sample")
    parser.add_argument(
        "--run-args", default="", help="More `memtrace run` flags, e.g. '--max-tokens 256 --timeout 300'."
    )
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900.0, help="Seconds per `memtrace run`.")
    parser.add_argument(
        "--out", type=Path, default=Path("realmodel-out"), help="Workspaces and logs go here."
    )
    parser.add_argument("--label", default=None, help="Name of this server in the output (default: the URL).")
    parser.add_argument(
        "--json", type=Path, default=None, help="Write the results here (default: OUT/LABEL.json)."
    )
    parser.add_argument(
        "--second-after-timeout",
        action="store_true",
        help="Still do the second run when the first timed out.",
    )
    parser.add_argument(
        "--skip-second-on-failure",
        action="store_true",
        help="No second run when the first failed (it meets the same failure; saves its time).",
    )
    args = parser.parse_args()
    label = args.label or args.base_url
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)
    root = (args.out / safe).resolve()
    root.mkdir(parents=True, exist_ok=True)
    started = time.time()
    results = [measure(s.strip(), args, root) for s in args.systems.split(",") if s.strip()]
    rows = [row(r) for r in results]
    title = f"{label}: `{args.model}` at {args.base_url} (memtrace {code_version()})"
    table = markdown(rows, title)
    print()
    print(table)
    payload = {
        "label": label,
        "base_url": args.base_url,
        "model": args.model,
        "memtrace": code_version(),
        "dataset": args.dataset,
        "questions": args.questions,
        "timeout": args.timeout,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "server_models": server_models(args.base_url),
        "rows": rows,
        "details": results,
        "markdown": table,
    }
    target = args.json or root.parent / f"{safe}.json"
    target.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
