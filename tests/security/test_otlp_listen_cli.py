"""`memtrace import --format otlp --listen` given a bad or dangerous address (issue 20): one line and
exit 1, never a traceback; every interface only with `--expose`, which says what it exposes."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed")

from conftest import run_cli_in_process
from memtrace.interop.otlp.receiver import OtlpReceiver


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Serving stops as soon as it starts (old code would serve forever: the test would hang)."""
    endpoints: list[str] = []

    def serve_once(receiver: OtlpReceiver) -> None:
        endpoints.append(receiver.endpoint)
        threading.Thread(target=receiver.server.shutdown).start()  # waits for the loop, then ends it
        receiver.server.serve_forever(poll_interval=0.05)

    monkeypatch.setattr(OtlpReceiver, "serve_forever", serve_once)
    return endpoints


def listen(capsys: pytest.CaptureFixture[str], workspace: Path, *args: str) -> tuple[int, str, str]:
    return run_cli_in_process(capsys, "import", workspace, "--format", "otlp", "--listen", *args)


@pytest.mark.parametrize("address", ["127.0.0.1:99999", "127.0.0.1:http", "127.0.0.1:"])
def test_a_bad_port_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, served: list[str], address: str
) -> None:
    """Before: 99999 was an OverflowError traceback from the socket layer."""
    code, _, err = listen(capsys, tmp_path / "ws", address)
    assert code == 1 and served == []
    assert err.count("\n") == 1 and "port from 0 to 65535" in err and "Traceback" not in err
    assert not (tmp_path / "ws").exists()  # refused before the workspace is made


def test_a_port_in_use_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, served: list[str]
) -> None:
    """Before: an OSError traceback (address already in use)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = listen(capsys, tmp_path / "ws", f"127.0.0.1:{port}")
    assert code == 1 and served == []
    assert err.count("\n") == 1 and f"cannot listen at 127.0.0.1:{port}" in err


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0", "my-host.example:0"])
def test_every_interface_needs_expose(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, served: list[str], address: str
) -> None:
    """Before: 0.0.0.0 bound every interface, unauthenticated, without a word. Loopback still
    needs no flag and says nothing of exposure."""
    code, out, err = listen(capsys, tmp_path / "ws", address)
    assert (code, served, out) == (1, [], "")
    assert err.count("\n") == 1 and "not a loopback address" in err and "--expose" in err
    assert not (tmp_path / "ws").exists()
    code, out, err = listen(capsys, tmp_path / "ws", "localhost:0")
    assert code == 0 and len(served) == 1 and "exposed" not in out


def test_expose_says_what_it_exposes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, served: list[str]
) -> None:
    """With --expose it listens, after a line naming the endpoint, the missing authentication and
    the workspace."""
    code, out, err = listen(capsys, tmp_path / "ws", "0.0.0.0:0", "--expose")
    assert code == 0, err
    (endpoint,) = served
    exposed = next(line for line in out.splitlines() if line.startswith("exposed:"))
    assert endpoint in exposed and "no authentication" in exposed and str(tmp_path / "ws") in exposed


def test_expose_without_listen_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--expose alone would silently do nothing; say what it goes with."""
    source = tmp_path / "trace.json"
    source.write_text('{"resourceSpans": []}')
    code, _, err = run_cli_in_process(
        capsys, "import", tmp_path / "ws", source, "--format", "otlp", "--expose"
    )
    assert code == 1 and "--expose goes with --listen" in err
