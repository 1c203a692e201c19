"""One workspace convention: WORKSPACE is the first positional of every command, `--workspace/-w` an alias."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrace.cli.app import app
from memtrace.cli.workspace_arg import CommandLineError, split_workspace

runner = CliRunner()

#: Every command that works on a workspace, with the other arguments it needs to show its help.
WORKSPACE_COMMANDS = [
    ["run"],
    ["import"],
    ["export"],
    ["inspect"],
    ["attribute"],
    ["verify"],
    ["report"],
    ["optimize"],
    ["example"],
    ["bench", "faults"],
    ["bench", "memtracebench"],
]


def cli(*args: str | Path) -> str:
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, f"memtrace {args}: {result.output}"
    return result.output


def test_the_positional_comes_first_and_the_rest_follow() -> None:
    assert split_workspace(None, ["ws", "file.json"]) == (Path("ws"), ["file.json"])
    assert split_workspace(None, ["ws", None]) == (Path("ws"), [None])


def test_the_alias_takes_the_workspace_place_and_the_positionals_move_up() -> None:
    assert split_workspace(Path("ws"), ["file.json", None]) == (Path("ws"), ["file.json"])
    assert split_workspace(Path("ws"), [None, None]) == (Path("ws"), [None])
    assert split_workspace(Path("ws"), ["ws", "file.json"]) == (Path("ws"), ["file.json"])


def test_two_different_workspaces_or_none_at_all_are_usage_errors() -> None:
    with pytest.raises(CommandLineError, match="two workspaces"):
        split_workspace(Path("a"), ["b", "file.json"])
    with pytest.raises(CommandLineError, match="missing argument WORKSPACE"):
        split_workspace(None, [None, None])


@pytest.mark.parametrize("command", WORKSPACE_COMMANDS, ids=" ".join)
def test_help_shows_workspace_as_an_argument_and_hides_the_alias(command: list[str]) -> None:
    text = cli(*command, "--help")
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert "WORKSPACE" in usage
    assert "--workspace" not in text


def test_a_missing_workspace_is_a_usage_error_not_a_traceback() -> None:
    result = runner.invoke(app, ["attribute"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 2 and "missing argument WORKSPACE" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_export_and_import_read_the_same_with_either_spelling(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    cli("example", ws)
    cli("export", ws, "demo", "--out", tmp_path / "new.json")
    cli("export", "demo", "--workspace", ws, "--out", tmp_path / "old.json")
    assert (tmp_path / "new.json").read_text() == (tmp_path / "old.json").read_text()
    new_out = cli("import", tmp_path / "new-ws", tmp_path / "new.json")
    old_out = cli("import", tmp_path / "old.json", "-w", tmp_path / "old-ws")
    assert "Imported 1 run(s) into" in new_out and "Imported 1 run(s) into" in old_out
    assert (tmp_path / "new-ws" / "memtrace.db").exists() and (tmp_path / "old-ws" / "memtrace.db").exists()


def test_attribute_and_inspect_accept_the_alias(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    cli("example", ws)
    assert cli("attribute", ws).splitlines()[-1] == cli("attribute", "-w", ws).splitlines()[-1]
    assert "update_memory_decision" in cli("inspect", "--workspace", ws, "demo")


def test_bench_help_names_every_benchmark() -> None:
    text = cli("bench", "--help")
    assert {"evidence", "memtracebench", "faults"} <= set(text.replace(",", " ").split())


def test_example_does_not_write_into_the_folder_make_demo_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cli("example")
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    demo_folder = next(
        line.split("?=")[1].strip() for line in makefile.splitlines() if "WORKSPACE ?=" in line
    )
    assert not (tmp_path / demo_folder).exists()
    assert [p.name for p in tmp_path.iterdir()] == ["example-workspace"]


def test_run_says_when_a_dataset_has_fewer_conversations_than_asked(tmp_path: Path) -> None:
    source = tmp_path / "one.json"
    record = {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Porto."}],
        },
        "qa": [{"question": "Where did Ann move?", "answer": "Porto", "evidence": ["D1:1"], "category": 4}],
    }
    source.write_text(json.dumps([record]))
    dataset = f"locomo:{source}"
    out = cli("run", tmp_path / "ws", "--system", "rag", "--dataset", dataset, "--conversations", "3")
    assert "has 1 conversation(s), fewer than the 3 asked for" in " ".join(out.split())
    assert "1 run(s) recorded" in out
    sample = cli("run", tmp_path / "ws2", "--system", "rag", "--conversations", "2", "--questions", "1")
    assert "2 run(s) recorded" in sample and "fewer than" not in sample
