"""memtrace's own OTLP export imported back: the same graph, cases and error types, per demo system.

The demo's four systems record the bundled sample, flow attributes them, each run goes out through
`memtrace export --format otlp --content` and comes back through `memtrace import` into a fresh
workspace; attributing it again must give every case the same error type and operation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

from typer.testing import CliRunner

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.attribution.model import load_attributions
from memtrace.cli.app import app
from memtrace.graph import Workspace
from memtrace.graph.model import VariableVersion
from memtrace.interop.otlp import export
from memtrace.interop.otlp._wire import read_otlp_file
from memtrace.interop.otlp.export import run_spans, write_otlp_file
from memtrace.interop.otlp.graphspans import describe, rebuilt
from memtrace.interop.otlp.importer import import_otlp
from memtrace.interop.otlp.receiver import OtlpReceiver

SYSTEMS = ("long_context", "rag", "mem0", "evermemos")


def _cli(*args: str | Path) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's four systems over the sample conversation, attributed by flow."""
    path = tmp_path_factory.mktemp("demo") / "ws"
    _cli("run", path, "--system", "all", "--dataset", "sample")
    _cli("attribute", path)
    return path


def _blames(path: Path, run_id: str) -> dict[str, tuple[str, str | None, str | None]]:
    """Per case: error type, blamed operation id and that operation's name."""
    with Workspace(path) as ws:
        ops = {op.id: op.name for op in ws.store.ops(run_id)}
        return {
            a.case_id: (str(a.error_type), a.op_id, ops.get(a.op_id or ""))
            for a in load_attributions(ws.store, run_id)
        }


def _round_trip(demo: Path, tmp_path: Path, system: str, *, content: bool, suffix: str = ".json") -> str:
    """Export the system's run to a file and import it into a fresh workspace; the imported run's id."""
    out = tmp_path / f"{system}{suffix}"
    _cli("export", demo, f"{system}/sample-0", "--format", "otlp", "--out", out, *(["--content"] * content))
    _cli("import", tmp_path / "back", out, "--format", "otlp")
    with Workspace(tmp_path / "back") as ws:
        (run,) = ws.runs()
        return run.id


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_case_keeps_its_error_type_and_operation(demo: Path, tmp_path: Path, system: str) -> None:
    suffix = ".pb" if system == "rag" else ".json"  # protobuf and OTLP/JSON files alike
    run_id = _round_trip(demo, tmp_path, system, content=True, suffix=suffix)
    _cli("attribute", tmp_path / "back")
    with Workspace(demo) as ws:
        original_id = ws.run(f"{system}/sample-0").id
    original, back = _blames(demo, original_id), _blames(tmp_path / "back", run_id)
    assert back == original
    determined = [t for t, _, _ in original.values() if t != "Undetermined"]
    assert len(determined) * 2 >= len(original)  # real error types compared, not Undetermined alone


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_round_trip_keeps_the_graph_and_the_cases(demo: Path, tmp_path: Path, system: str) -> None:
    """Every value too: long_context's window and the buffers travel as changes to their last version."""
    run_id = _round_trip(demo, tmp_path, system, content=True)
    with Workspace(demo) as ws, Workspace(tmp_path / "back") as back:
        run = ws.run(f"{system}/sample-0")
        ops = [(o.id, o.seq, o.parent_op, o.name, o.category, o.status) for o in ws.store.ops(run.id)]
        assert [
            (o.id, o.seq, o.parent_op, o.name, o.category, o.status) for o in back.store.ops(run_id)
        ] == ops
        original, graph = ws.view(run.id), back.view(run_id)
        assert {(e.op_id, e.var_id, e.role) for e in graph.edges} == {
            (e.op_id, e.var_id, e.role) for e in original.edges
        }
        assert {v.id: (v.category, v.seq, v.deleted) for v in graph.vars.values()} == {
            v.id: (v.category, v.seq, v.deleted) for v in original.vars.values()
        }
        assert graph.values(graph.vars.values()) == original.values(original.vars.values())
        fields = ("id", "question", "gold", "prediction", "prediction_var", "verdict", "score", "evidence")
        fields += ("category", "metadata")
        cases = [[getattr(c, f) for f in fields] for c in back.store.cases(run_id)]
        assert cases == [[getattr(c, f) for f in fields] for c in ws.store.cases(run.id)]
        imported = back.run(run_id)
        assert (imported.name, imported.system, imported.dataset) == (run.name, run.system, run.dataset)
        assert imported.config == run.config


def test_through_the_receiver_in_many_requests_the_error_types_are_kept(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_ws: OpenWorkspace
) -> None:
    """`export --endpoint` to `import --listen`: the run is rebuilt from every span so far after each
    request (a partial graph in between), and the last request leaves the whole run."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")
    monkeypatch.setattr(export, "EXPORT_BATCH", 40)
    with Workspace(tmp_path / "back", create=True) as back:
        receiver = OtlpReceiver(back.store, "127.0.0.1", 0).start()
        try:
            with Workspace(demo) as ws:
                original_id = ws.run("mem0/sample-0").id
                sent = export.export_otlp(ws.store, original_id, receiver.endpoint, content=True)
        finally:
            receiver.close()
        assert receiver.requests == -(-sent // 40) > 1
    mt.attribute(open_ws(tmp_path / "back"), "flow")
    with Workspace(tmp_path / "back") as back:
        (run,) = back.runs()
    assert _blames(tmp_path / "back", run.id) == _blames(demo, original_id)


def test_the_answer_span_links_to_the_spans_that_wrote_its_context(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "mem0.json"
    _cli("export", demo, "mem0/sample-0", "--format", "otlp", "--out", out)
    spans = read_otlp_file(out)
    by_span = {s.span_id: s for s in spans}
    answers = [s for s in spans if s.attributes.get("memtrace.op.category") == "response"]
    assert len(answers) == 31
    for answer in answers:
        read = answer.attributes["memtrace.op.inputs"]
        linked = {
            attrs["memtrace.var.id"]: by_span[span_id]
            for _trace, span_id, attrs in answer.links
            if attrs.get("memtrace.link.kind") == "context-written-by"
        }
        context = [v for v in read if v.startswith("retrieved@")]
        assert context and set(context) <= set(linked)
        for var_id in context:  # the search that returned it
            assert var_id in linked[var_id].attributes["memtrace.op.outputs"]
            assert linked[var_id].name == "search_memory"


def test_without_content_the_structure_travels_and_the_cli_says_what_is_missing(
    demo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mem0.json"
    _cli("export", demo, "mem0/sample-0", "--format", "otlp", "--out", out)
    text = out.read_text()
    assert "Clara" not in text  # no question, gold, prediction or memory text left the workspace
    imported = _cli("import", tmp_path / "back", out, "--format", "otlp")
    assert "exported without --content" in " ".join(imported.split())
    with Workspace(demo) as ws, Workspace(tmp_path / "back") as back:
        run, (again,) = ws.run("mem0/sample-0"), back.runs()
        assert [o.id for o in back.store.ops(again.id)] == [o.id for o in ws.store.ops(run.id)]
        cases = {c.id: c for c in back.store.cases(again.id)}
        for case in ws.store.cases(run.id):
            kept = cases[case.id]
            assert (kept.prediction_var, kept.verdict, kept.evidence) == (
                case.prediction_var,
                case.verdict,
                case.evidence,
            )
            assert (kept.question, kept.gold, kept.prediction) == ("", [], None)
    attributed = _cli("attribute", tmp_path / "back")
    assert "exported without --content" in " ".join(attributed.split())


@pytest.mark.parametrize(
    ("before", "after", "change"),
    [
        (["a", "b"], ["a", "b", "c"], (0, ["c"])),  # a window that grew
        (["a", "b", "c"], ["b", "c", "d"], (1, ["d"])),  # a window trimmed at its head as it grew
        (["a", "b"], ["x", "y"], None),  # nothing kept: written whole
        ("a b", "a b c", None),  # not lists
        ([], ["a"], None),
    ],
)
def test_a_list_that_grew_travels_as_its_change(before: object, after: object, change: object) -> None:
    version = VariableVersion("r", "w@2", "w", 2, 7, "memory_entry", "hash")
    record = describe(version, {"w@2": after}, content=True, previous=("w@1", before))
    if change is None:
        assert record["value"] == after and "base" not in record
    else:
        assert (record["base"], record["drop"], record["append"]) == ("w@1", *change)
        assert "value" not in record and rebuilt(record, before) == after


def test_a_lone_surrogate_in_a_value_travels_escaped(tmp_path: Path) -> None:
    """Protobuf strings must be UTF-8: a value holding a lone surrogate still exports and comes back."""
    odd = "Caroline \udc80 Boston"
    with mt.run(tmp_path / "ws", name="odd") as run, mt.op("ingest", category="construction") as op:
        op.output("D1:1", odd, category="message")
    with Workspace(tmp_path / "ws") as ws:
        write_otlp_file(run_spans(ws.store, run.id, content=True), tmp_path / "odd.pb")
    with Workspace(tmp_path / "back", create=True) as back:
        (again,) = import_otlp(back.store, tmp_path / "odd.pb")
        assert back.view(again.id).value("D1:1@1") == odd
