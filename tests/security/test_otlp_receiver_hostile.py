"""The OTLP/HTTP receiver under hostile or careless senders (issue 20): a real receiver on a loopback
port, real HTTP requests. Each probe gets a 4xx with one line, nothing is stored twice, and the
console shows no traceback."""

from __future__ import annotations

import http.client
import json
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed")

from otlp_traces import body, trace_spans

import memtrace as mt
from memtrace.errors import MemtraceError
from memtrace.graph import Workspace
from memtrace.graph.model import Run
from memtrace.interop.otlp.export import export_otlp
from memtrace.interop.otlp.receiver import MAX_BODY, OtlpReceiver

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    with Workspace(tmp_path / "ws", create=True) as opened:
        yield opened


@pytest.fixture
def imports() -> list[list[Run]]:
    return []


@pytest.fixture
def receiver(ws: Workspace, imports: list[list[Run]]) -> Iterator[OtlpReceiver]:
    receiving = OtlpReceiver(ws.store, "127.0.0.1", 0, on_import=imports.append).start()
    yield receiving
    receiving.close()


def post(receiver: OtlpReceiver, payload: bytes, headers: dict[str, str]) -> tuple[int, str]:
    """POST to the receiver with exactly these headers (Content-Length too, when given)."""
    host, port = receiver.server.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=30)
    try:
        connection.putrequest("POST", "/v1/traces", skip_accept_encoding=True)
        headers = {"Content-Length": str(len(payload)), **headers}
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders(payload or None)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def gzip_bomb(size: int) -> bytes:
    """A gzip body of `size` zero bytes (a few hundred kilobytes for hundreds of megabytes)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    parts = [packer.compress(chunk) for _ in range(size >> 20)]
    return b"".join([*parts, packer.flush()])


def assert_one_line_and_quiet(text: str, capfd: pytest.CaptureFixture[str]) -> None:
    assert text and "\n" not in text and len(text) < 300, text
    assert "Traceback" not in capfd.readouterr().err


def test_a_gzip_bomb_is_refused_with_413_without_inflating_it(
    receiver: OtlpReceiver, capfd: pytest.CaptureFixture[str]
) -> None:
    """4x the body cap of zeros packs into under a megabyte: only the cap is ever inflated, and a
    real gzip body (two members, as gzip allows) is still read whole."""
    bomb = gzip_bomb(4 * MAX_BODY)
    assert len(bomb) < MAX_BODY // 64
    status, text = post(receiver, bomb, {"Content-Encoding": "gzip", **JSON})
    assert status == 413 and "64 MiB" in text
    assert_one_line_and_quiet(text, capfd)
    assert receiver.store.runs() == []
    payload = body(trace_spans(2, 1))
    half = len(payload) // 2
    packed = b"".join(zlib.compress(p, wbits=16 + zlib.MAX_WBITS) for p in (payload[:half], payload[half:]))
    assert post(receiver, packed, {"Content-Encoding": "gzip", **JSON})[0] == 200
    (run,) = receiver.store.runs()
    assert len(receiver.store.ops(run.id)) == 1 + 3 * 3


@pytest.mark.parametrize(
    ("payload", "headers", "status", "says"),
    [
        (b"x", {"Content-Length": "abc"}, 400, "Content-Length 'abc' is not a number"),
        (b"x", {"Content-Length": "-1"}, 400, "not a number"),
        (b"", {"Content-Length": str(MAX_BODY + 1)}, 413, "over the 64 MiB limit"),
        (b"not gzip at all", {"Content-Encoding": "gzip"}, 400, "not valid gzip"),
        (zlib.compress(b"{}", wbits=31)[:-6], {"Content-Encoding": "gzip"}, 400, "not valid gzip"),
        (b"{}", {"Content-Encoding": "br"}, 415, "gzip or none"),
        (b'{"resourceSpans": "x"}', JSON, 400, "resourceSpans: expected a list"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [7]}]}]}', JSON, 400, "spans[0]"),
        (b"[" * 100_000, JSON, 400, "not OTLP trace data"),
    ],
    ids=[
        "length-not-a-number",
        "length-negative",
        "length-over-cap",
        "not-gzip",
        "gzip-cut-short",
        "unknown-encoding",
        "resourceSpans-a-string",
        "span-not-an-object",
        "nested-too-deeply",
    ],
)
def test_a_malformed_request_gets_a_4xx_and_one_line(
    receiver: OtlpReceiver,
    capfd: pytest.CaptureFixture[str],
    payload: bytes,
    headers: dict[str, str],
    status: int,
    says: str,
) -> None:
    """Before: no reply at all (the connection dropped) and a traceback on the receiver's console."""
    answer, text = post(receiver, payload, {"Content-Type": "application/x-protobuf", **headers})
    assert (answer, says in text) == (status, True), text
    assert_one_line_and_quiet(text, capfd)
    assert post(receiver, body(trace_spans(1, 1)), JSON)[0] == 200  # and it keeps serving


def test_a_request_without_content_length_is_refused(
    receiver: OtlpReceiver, capfd: pytest.CaptureFixture[str]
) -> None:
    host, port = receiver.server.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=30)
    try:
        connection.putrequest("POST", "/v1/traces", skip_accept_encoding=True)
        connection.endheaders()
        response = connection.getresponse()
        status, text = response.status, response.read().decode()
    finally:
        connection.close()
    assert status == 411 and "Content-Length" in text
    assert_one_line_and_quiet(text, capfd)


def test_the_same_trace_sent_40_times_is_stored_once(
    receiver: OtlpReceiver, imports: list[list[Run]]
) -> None:
    """Before: 40 x 118 = 4,720 operations, each request slower; a repeat now imports nothing."""
    spans = trace_spans(28, 11)
    assert len(spans) == 118
    for _ in range(40):
        assert post(receiver, body(spans), JSON)[0] == 200
    (run,) = receiver.store.runs()
    assert len(receiver.store.ops(run.id)) == 118
    assert len(receiver.store.cases(run.id)) == 11
    assert (receiver.requests, receiver.repeated, len(imports)) == (40, 39 * 118, 1)


def test_overlapping_batches_add_up_to_each_span_once(receiver: OtlpReceiver) -> None:
    """A retried batch that overlaps the previous one (an exporter's retry) adds only the new spans."""
    spans = trace_spans(4, 2)
    assert post(receiver, body(spans[:12]), JSON)[0] == 200
    assert post(receiver, body(spans[8:]), JSON)[0] == 200
    (run,) = receiver.store.runs()
    assert len(receiver.store.ops(run.id)) == len(spans)
    assert len(receiver.store.cases(run.id)) == 2


def test_a_span_sent_again_with_new_content_replaces_its_earlier_copy(
    receiver: OtlpReceiver, imports: list[list[Run]]
) -> None:
    """A re-export with a new evaluation updates the case instead of adding a second one."""
    assert post(receiver, body(trace_spans(3, 2, label="fail")), JSON)[0] == 200
    assert post(receiver, body(trace_spans(3, 2, label="pass")), JSON)[0] == 200
    (run,) = receiver.store.runs()
    assert len(receiver.store.ops(run.id)) == 1 + 3 * 5
    assert [c.verdict for c in receiver.store.cases(run.id)] == ["correct", "correct"]
    assert len(imports) == 2


def test_memtrace_exporting_a_run_twice_multiplies_nothing(tmp_path: Path, receiver: OtlpReceiver) -> None:
    """`memtrace export --endpoint` run twice (after a new attribution, say) sends the same span ids."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")
    with mt.run(tmp_path / "source", name="twice") as run:
        for n in range(3):
            with mt.op(f"store-{n}", category="update") as op:
                run.memory(f"m{n}").create({"memory": f"fact {n}"}, by=op)
        with mt.op("search", category="retrieval") as op:
            op.input("query", "which facts?", category="query")
            op.use(run.memory("m0").latest_id)
        run_id = run.id
    with Workspace(tmp_path / "source") as source:
        sent = [export_otlp(source.store, run_id, receiver.endpoint) for _ in range(2)]
    (imported,) = receiver.store.runs()
    # the root span is the run itself: memtrace's own export comes back as the operations it recorded
    assert len(receiver.store.ops(imported.id)) + 1 == sent[0] == sent[1]
    assert receiver.repeated == sent[1]


def test_a_non_loopback_address_needs_expose(ws: Workspace) -> None:
    """The receiver has no authentication: listening on every interface must be asked for by name."""
    with pytest.raises(MemtraceError, match=r"not a loopback address.*--expose"):
        OtlpReceiver(ws.store, "0.0.0.0", 0)
    exposed = OtlpReceiver(ws.store, "0.0.0.0", 0, expose=True)
    exposed.server.server_close()


def test_closing_a_receiver_that_never_served_returns(ws: Workspace) -> None:
    """Before: close() waited forever for a serving loop that never started (a bind, then an error)."""
    receiver = OtlpReceiver(ws.store, "127.0.0.1", 0)
    closing = threading.Thread(target=receiver.close, daemon=True)
    closing.start()
    closing.join(timeout=10)
    assert not closing.is_alive()


@pytest.mark.parametrize("port", [99_999, -1])
def test_a_port_out_of_range_is_one_error(ws: Workspace, port: int) -> None:
    """Before: an OverflowError traceback from the socket layer."""
    with pytest.raises(MemtraceError, match="out of range"):
        OtlpReceiver(ws.store, "127.0.0.1", port)


def test_a_reply_to_bad_json_quotes_the_field_briefly(receiver: OtlpReceiver) -> None:
    """A 1 MB bad field comes back as a short quote, not echoed whole to the sender."""
    spans = trace_spans(1, 0)
    spans[0]["traceId"] = "z" * 1_000_000
    status, text = post(
        receiver, json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode(), JSON
    )
    assert status == 400 and "is not hex" in text and len(text) < 400
