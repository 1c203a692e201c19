"""Fault injection, command line: hostile data, bad paths, full disks, read-only workspaces and Ctrl-C.

Each prints what the README promises (the data as it is, or one line naming the problem), never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memtrace as mt
from conftest import CTRL_C_AS_IN_A_TERMINAL, OpenWorkspace


def _record_one_op(workspace: Path, name: str, flush_every: int = 1) -> str:
    with mt.run(workspace, name=name) as run:
        run.flush_every = flush_every
        with mt.op("step") as op:
            op.output("x", name)
        return run.id


# -- crashes: markup in data -------------------------------------------------------------------

MEMTRACE = Path(sys.executable).with_name("memtrace")


def memtrace_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The installed entry point in a subprocess, as a user runs it; never raises on failure."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [str(MEMTRACE), *map(str, args)], capture_output=True, text=True, env=env, timeout=120
    )


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


def _record_markup_run(workspace: Path, name: str) -> None:
    with mt.run(workspace, name=name, system="[bold]toy") as run:
        with mt.op("extract_facts", category="extraction") as op:
            message = op.input("message", "Caroline: see [/quote] and [red]this[/red]", category="message")
            run.memory("mem-[/]").create({"memory": "[link=x]Caroline[/link] lives in Boston"}, by=op)
        with mt.op("answer", category="response") as op:
            op.use(message)
            prediction = op.output("prediction", "[/]Paris", category="prediction")
        case = run.case("Where does [b]Caroline[/b] live?", gold="Boston [/]", evidence=["D1:1"])
        case.predict("[/]Paris", var=prediction)
        case.judge(False, score=0.0)


@pytest.mark.parametrize("name", ["[/]"])
def test_markup_in_data_is_printed_as_it_is(tmp_path: Path, name: str) -> None:
    workspace = tmp_path / "ws"
    _record_markup_run(workspace, name)
    for args in (("inspect", workspace), ("inspect", workspace, name), ("attribute", workspace)):
        result = memtrace_cli(*args)
        assert_no_traceback(result)
        assert result.returncode == 0, result.stderr
        assert name in result.stdout
    shown = memtrace_cli("inspect", workspace, name).stdout
    assert "[b]Caroline[/b]" in shown and "[/]Paris" in shown and "[link=x]Caroline[/link]" in shown
    exported = tmp_path / "exported.json"
    assert memtrace_cli("export", name, "-w", workspace, "--out", exported).returncode == 0
    imported = memtrace_cli("import", exported, "-w", tmp_path / "ws2", "--name", name)
    assert_no_traceback(imported)
    assert imported.returncode == 0 and name in imported.stdout


# -- crashes: one line where README promises one -------------------------------------------------


def assert_one_error_line(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert_no_traceback(result)
    assert result.returncode == 1, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def recorded_workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    _record_one_op(workspace, "small")
    mt.open(workspace).close()  # indexed
    return workspace


def test_bad_paths_are_one_line_naming_the_path(recorded_workspace: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a workspace")
    missing = tmp_path / "missing" / "out.json"
    cases = [
        (("inspect", a_file), "is a file, not a workspace folder"),
        (("import", a_file, "-w", a_file), "is a file"),
        (("inspect", recorded_workspace, "--json", tmp_path), "is a folder"),
        (("inspect", recorded_workspace, "--json", missing), "folder does not exist"),
        (("export", "small", "-w", recorded_workspace, "--out", missing), "folder does not exist"),
        (("export", "small", "-w", recorded_workspace, "--out", tmp_path), "is a folder"),
    ]
    for args, fragment in cases:
        assert_one_error_line(memtrace_cli(*args), fragment)
    assert not missing.parent.exists()


def test_a_full_disk_is_one_line(recorded_workspace: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full to simulate a full disk")
    assert_one_error_line(memtrace_cli("inspect", recorded_workspace, "--json", "/dev/full"), "disk full")


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_deeply_nested_json_is_one_line_naming_the_file(tmp_path: Path, suffix: str) -> None:
    source = tmp_path / f"deep{suffix}"
    source.write_text('{"type": "run", "graph_id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    result = memtrace_cli("import", source, "-w", tmp_path / "ws")
    assert_one_error_line(result, str(source), "nested too deeply")


def _unprivileged(*command: str | Path) -> list[str]:
    """The command without the right to write read-only files (root ignores permissions otherwise)."""
    if os.geteuid() != 0:
        return [str(part) for part in command]
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot make a folder read-only")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *map(str, command)]


def test_a_read_only_workspace_can_be_inspected(recorded_workspace: Path, open_ws: OpenWorkspace) -> None:
    pending = _record_one_op(recorded_workspace, "recorded-after-indexing")  # its journal waits
    for path in [recorded_workspace, *recorded_workspace.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
        command = _unprivileged(MEMTRACE, "inspect", recorded_workspace, "small")
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        listing = subprocess.run(
            _unprivileged(MEMTRACE, "inspect", recorded_workspace), capture_output=True, text=True, env=env
        )
    finally:
        for path in [recorded_workspace, *recorded_workspace.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert_no_traceback(result)
    assert result.returncode == 0 and "small" in result.stdout and "complete" in result.stdout
    assert listing.returncode == 0 and pending in listing.stdout
    assert "read-only" in listing.stderr and len(listing.stderr.strip().splitlines()) == 1
    assert open_ws(recorded_workspace).run(pending).status == "complete"  # writable again: indexed


# A real SIGINT, raised in the main thread as the question stage starts. `signal.raise_signal` runs
# Python's handler before it returns, so KeyboardInterrupt comes out of that line every time; a
# process-wide `os.kill` may be taken by another thread (the progress bar's refresh thread) and land later,
# anywhere in the run or after it closed, which made this test flaky under load.
INTERRUPTING_RUN = f"""
import signal, sys
{CTRL_C_AS_IN_A_TERMINAL}  # a runner started in the background passes SIGINT on ignored
import memtrace.systems.runner as runner
def interrupt_then_answer(*args, **kwargs):
    signal.raise_signal(signal.SIGINT)
    sys.exit("the SIGINT did not interrupt the run")
runner.answer_questions = interrupt_then_answer
from memtrace.cli.app import main
sys.argv = ["memtrace", "run", "-w", sys.argv[1], "--system", "rag"]
main()
"""


def test_ctrl_c_says_which_run_was_kept_as_interrupted(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    result = subprocess.run(
        [sys.executable, "-c", INTERRUPTING_RUN, str(workspace)], capture_output=True, text=True, timeout=120
    )
    assert_no_traceback(result)
    assert result.returncode == 130, result.stderr
    with mt.open(workspace) as ws:
        (run,) = ws.runs()
    assert run.status == "incomplete" and "interrupted" in (run.error or "")
    assert [line for line in result.stderr.splitlines() if line.strip()] == [
        f"interrupted; kept as incomplete (interrupted): {run.name} ({run.id})"
    ]


# -- crashes: file names made from data ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rag/sample-0", "rag_sample-0"),
        ("../../x", "_.._x"),
        ("..", "unnamed"),
        ("a\\b:c*d", "a_b_c_d"),
        ("CON", "_CON"),
        (" .hidden ", "hidden"),
        ("conv-26", "conv-26"),
    ],
)
def test_a_file_name_made_from_data_is_one_valid_component(text: str, expected: str) -> None:
    from memtrace.text.filenames import safe_filename

    assert safe_filename(text) == expected


def test_a_very_long_name_is_cut_on_a_character_boundary() -> None:
    from memtrace.text.filenames import MAX_NAME_BYTES, safe_filename

    name = safe_filename("é" * 500)
    assert len(name.encode()) <= MAX_NAME_BYTES and set(name) == {"é"}


@pytest.mark.parametrize("run_name", ["../../escaped", "rag/sample-0"])
def test_export_without_out_writes_inside_the_current_folder(tmp_path: Path, run_name: str) -> None:
    workspace = tmp_path / "ws"
    _record_one_op(workspace, run_name)
    here = tmp_path / "deep" / "cwd"
    here.mkdir(parents=True)
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    result = subprocess.run(
        [str(MEMTRACE), "export", run_name, "-w", str(workspace)],
        capture_output=True,
        text=True,
        env=env,
        cwd=here,
        timeout=120,
    )
    assert_no_traceback(result)
    assert result.returncode == 0, result.stderr
    (written,) = here.iterdir()
    assert written.suffix == ".json" and json.loads(written.read_text())
    assert not (tmp_path / "escaped.json").exists()


# -- crashes: all-or-nothing imports, raw HTML ---------------------------------------------------


def test_a_folder_import_with_one_bad_file_writes_nothing(
    recorded_workspace: Path, tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    from memtrace.interop import load_memtracebench, write_smartcomment

    folder = tmp_path / "bench" / "rag"
    folder.mkdir(parents=True)
    with mt.open(recorded_workspace) as ws:
        write_smartcomment(ws.store, ws.run("small").id, folder / "a-good.json")
    (folder / "z-bad.json").write_text('{"graph_id": "x", "data": ')
    target = tmp_path / "target"
    result = memtrace_cli("import", tmp_path / "bench", "-w", target)
    assert_one_error_line(result, "z-bad.json")
    assert open_ws(target).runs() == []
    (folder / "z-bad.json").unlink()
    with mt.open(target) as ws:
        # benchmark runs are named after their split too
        assert [run.name for run in load_memtracebench(ws.store, tmp_path / "bench")] == ["rag/small"]


def test_verify_says_in_one_line_it_skips_a_tampered_snapshot_and_replays_from_the_start(
    tmp_path: Path,
) -> None:
    """A changed snapshot is never unpickled; the replay re-runs construction instead (the conversation
    is JSON), so verification goes on."""
    import pickle

    from test_fault_injection import CodeRunningPickleDouble

    workspace = tmp_path / "ws"
    assert memtrace_cli("run", "-w", workspace, "--system", "mem0").returncode == 0  # has DeletionErrors
    assert memtrace_cli("attribute", workspace).returncode == 0
    marker = tmp_path / "code-ran"
    snapshots = list((workspace / "snapshots").rglob("*.pkl"))
    assert snapshots
    for snapshot in snapshots:
        snapshot.write_bytes(pickle.dumps(CodeRunningPickleDouble(marker)))
    result = memtrace_cli("verify", workspace)
    assert_no_traceback(result)
    assert not marker.exists()
    assert result.returncode == 0, result.stderr
    (line,) = [text for text in result.stderr.splitlines() if "not signed by your key" in text]
    assert "replaying from the first message" in line


def test_bench_faults_keeps_files_named_from_sample_ids_inside_its_folder(
    tmp_path: Path, locomo_dev: Path
) -> None:
    (conversation, *_) = json.loads(locomo_dev.read_text())
    conversation["sample_id"], conversation["qa"] = "../../escaped/x", conversation["qa"][:40]
    dataset = tmp_path / "data" / "hostile.json"
    dataset.parent.mkdir()
    dataset.write_text(json.dumps([conversation]))
    out = tmp_path / "a" / "b" / "out"
    args = (
        "--system",
        "rag",
        "--per-type",
        "1",
        "--method",
        "flow",
        "--dataset",
        f"locomo:{dataset}",
        "--memtracebench",
    )
    result = memtrace_cli("bench", "faults", "--out", out, *args)
    assert_no_traceback(result)
    assert result.returncode == 0, result.stderr
    written = list((out / "memtracebench" / "rag").glob("*.json"))
    assert written and all(path.name.startswith("_.._escaped_x-") for path in written)
    assert not (tmp_path / "a" / "escaped").exists() and not (tmp_path / "escaped").exists()
