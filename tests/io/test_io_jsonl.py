"""Native JSONL: exact round trips, gzip, streaming to a file object, and broken files."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from iohelpers import NATIVE_RUN_ID, fresh_graph, run_rows, write_native_run

from memtrace.graph import FormatError, Store
from memtrace.interop import import_jsonl, import_smartcomment, write_jsonl


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    s = Store(tmp_path / "ws")
    yield s
    s.close()


@pytest.fixture
def sc_graph() -> dict:
    """A fresh copy of a graph recorded with the real smartcomment package."""
    return fresh_graph()


@pytest.fixture
def other(tmp_path) -> Iterator[Store]:
    s = Store(tmp_path / "other")
    yield s
    s.close()


def _imported_run(store, sc_graph, tmp_path):
    sc_graph["data"]["annotations"] = [
        {
            "query_id": "q@1",
            "query": "'Where?'",
            "golden_answers": ["Boston"],
            "final_error_type": "UpdateError",
        }
    ]
    path = tmp_path / "g.json"
    path.write_text(json.dumps(sc_graph))
    return import_smartcomment(store, path, system="mem0")


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_round_trip_is_exact(store, other, sc_graph, tmp_path, suffix):
    runs = [write_native_run(store), _imported_run(store, sc_graph, tmp_path)]
    for run in runs:
        path = tmp_path / f"{run.id}{suffix}"
        counts = write_jsonl(store, run.id, path)
        assert counts["var"] == store.count("vars", run.id)
        again = import_jsonl(other, path)
        assert again.id == run.id
        assert run_rows(other, run.id) == run_rows(store, run.id)


def test_write_to_an_open_file_and_reimport_into_the_same_workspace(store, tmp_path):
    write_native_run(store)
    buffer = io.StringIO()
    write_jsonl(store, NATIVE_RUN_ID, buffer)
    lines = buffer.getvalue().splitlines()
    assert json.loads(lines[0])["type"] == "run" and json.loads(lines[-1])["type"] == "end"
    assert {json.loads(line)["type"] for line in lines} == {"run", "blob", "op", "var", "edge", "end"}
    before = run_rows(store, NATIVE_RUN_ID)
    path = tmp_path / "run.jsonl"
    path.write_text(buffer.getvalue())
    import_jsonl(store, path)  # replaces the run with itself
    assert run_rows(store, NATIVE_RUN_ID) == before


def _lines(store, tmp_path) -> list[str]:
    write_native_run(store)
    path = tmp_path / "good.jsonl"
    write_jsonl(store, NATIVE_RUN_ID, path)
    return path.read_text().splitlines(keepends=True)


def _edit(lines: list[str], kind: str, change) -> list[str]:
    out = list(lines)
    i = next(i for i, line in enumerate(out) if json.loads(line)["type"] == kind)
    record = json.loads(out[i])
    change(record)
    out[i] = json.dumps(record) + "\n"
    return out


BROKEN = {
    "cut mid-line": (lambda ls: [*ls[:-3], ls[-3][:20]], r"line \d+: truncated record"),
    "cut at a line end": (lambda ls: ls[:-4], "truncated: no end record"),
    "garbage line": (lambda ls: [ls[0], "{not json\n", *ls[1:]], "line 2: not valid JSON"),
    "no run first": (lambda ls: ls[1:], r"line 1 \(blob\): the first record must be the run"),
    "unknown op": (lambda ls: _edit(ls, "edge", lambda r: r.update(op="ghost")), "unknown op 'ghost'"),
    "unknown var": (
        lambda ls: _edit(ls, "edge", lambda r: r.update(var="ghost@1")),
        "unknown variable 'ghost@1'",
    ),
    "seq not int": (lambda ls: _edit(ls, "op", lambda r: r.update(seq="7")), "'seq' must be int, not str"),
    "missing id": (lambda ls: _edit(ls, "var", lambda r: r.pop("id")), "'id' is missing"),
    "bad blob": (
        lambda ls: _edit(ls, "blob", lambda r: r.update(text="tampered")),
        "does not match its hash",
    ),
    "verdict outside the vocabulary": (
        lambda ls: [
            *ls[:-1],
            json.dumps({"type": "case", "id": "q", "question": "?", "verdict": "maybe"}) + "\n",
        ],
        r"line \d+ \(case\): 'verdict' 'maybe' is not one of correct, wrong",
    ),
    "dropped record": (
        lambda ls: [line for line in ls if '"type":"case"' not in line and '"op-empty"' not in line],
        "7 op records, end says 8",
    ),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_files_are_rejected_before_anything_is_written(store, tmp_path, name):
    lines = _lines(store, tmp_path)
    before = run_rows(store, NATIVE_RUN_ID)
    damage, message = BROKEN[name]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(damage(lines)))
    with pytest.raises(FormatError, match=message) as err:
        import_jsonl(store, path)
    assert str(err.value).startswith(str(path))
    assert run_rows(store, NATIVE_RUN_ID) == before
    assert [r.id for r in store.runs()] == [NATIVE_RUN_ID]


def test_truncated_gzip_is_a_format_error(store, tmp_path):
    write_native_run(store)
    path = tmp_path / "run.jsonl.gz"
    write_jsonl(store, NATIVE_RUN_ID, path)
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(FormatError, match=r"gzip|truncated"):
        import_jsonl(store, path)
