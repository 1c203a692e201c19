"""Broken smartcomment files: one FormatError line naming the file and the record, nothing written."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from iohelpers import fresh_graph, run_rows

from memtrace.graph import FormatError, Store
from memtrace.interop import import_smartcomment


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    s = Store(tmp_path / "ws")
    yield s
    s.close()


@pytest.fixture
def sc_graph() -> dict:
    """A fresh copy of a graph recorded with the real smartcomment package."""
    return fresh_graph()


def _node(graph: dict, i: int = 0) -> dict:
    return graph["data"]["nodes"][i]


def _edge(graph: dict, i: int = 0) -> dict:
    return graph["data"]["edges"][i]


CORRUPT = {
    "top level list": (lambda g: [g], "expected a smartcomment graph object, found a JSON list"),
    "no graph_id": (lambda g: g.pop("graph_id"), "top level: 'graph_id' is missing"),
    "no data": (lambda g: g.pop("data"), "top level: 'data' is missing"),
    "nodes not a list": (lambda g: g["data"].update(nodes={}), r"data.nodes: must be a list, not dict"),
    "value not a string": (
        lambda g: _node(g).update(value=3),
        r"data.nodes\[0\]: 'value' must be str, not int",
    ),
    "node without name": (lambda g: _node(g).pop("name"), r"data.nodes\[0\]: 'name' is missing"),
    "version zero": (lambda g: _node(g).update(version=0), r"'version' must be >= 1"),
    "bad time": (
        lambda g: _node(g, 2).update(created_at="2026-01-01T00:00:00"),
        r"data.nodes\[2\]: 'created_at'",
    ),
    "duplicate node": (lambda g: g["data"]["nodes"].append(dict(_node(g))), r"duplicate node 'D1:1@1'"),
    "edge to unknown node": (
        lambda g: _edge(g, 1).update(target_full_node_id="ghost@1"),
        r"data.edges\[1\] \(edge-\w+\): target 'ghost@1' is not among data.nodes",
    ),
    "edge of unknown op": (
        lambda g: _edge(g).update(op_id="op-nope"),
        r"op_id 'op-nope' is not among data.operations",
    ),
    "edge without op": (lambda g: _edge(g).pop("op_id"), r"data.edges\[0\] \(edge-\w+\): 'op_id' is missing"),
    "duplicate op": (
        lambda g: g["data"]["operations"].append(dict(g["data"]["operations"][0])),
        r"data.operations\[\d+\]: duplicate op_id",
    ),
    "annotation without query_id": (
        lambda g: g["data"].update(annotations=[{"query": "q"}]),
        r"data.annotations\[0\]: 'query_id' is missing",
    ),
    "annotations not a list": (
        lambda g: g["data"].update(annotations="x"),
        "data.annotations: must be a list",
    ),
}


@pytest.mark.parametrize("name", list(CORRUPT))
def test_corrupt_graph_leaves_the_workspace_untouched(store, sc_graph, tmp_path, name):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(sc_graph))
    first = import_smartcomment(store, good)
    before = run_rows(store, first.id)

    change, message = CORRUPT[name]
    replaced = change(sc_graph)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(replaced if isinstance(replaced, list) else sc_graph))
    with pytest.raises(FormatError, match=message) as err:
        import_smartcomment(store, bad)
    assert str(err.value).startswith(f"{bad}: ") and "\n" not in str(err.value)
    assert [r.id for r in store.runs()] == [first.id]
    assert run_rows(store, first.id) == before


def test_truncated_file_replacing_the_same_graph_keeps_the_old_run(store, sc_graph, tmp_path):
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(sc_graph))
    run = import_smartcomment(store, path)
    before = run_rows(store, run.id)
    path.write_text(json.dumps(sc_graph)[:-200])
    with pytest.raises(FormatError, match=r"not valid JSON \(.* at line 1 column \d+\)"):
        import_smartcomment(store, path)
    assert run_rows(store, run.id) == before
    with pytest.raises(FormatError, match="no such file"):
        import_smartcomment(store, tmp_path / "missing.json")
