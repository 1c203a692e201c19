"""`--executor ray`: the same tasks on Ray with 2 CPUs give what one local worker gives: the store of
`run`, `attribute` and `verify` (its replay runs, ids and seq included), and the files and stores of
`bench faults`, `bench memtracebench` and `optimize`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from outputs import faults, optimized, scored
from store_dump import store_rows
from typer.testing import CliRunner

from memtrace.cli.app import app


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    """Ray with 2 CPUs; the test skips with the reason when the extra is absent (at run time, not at
    collection, so a marker selection such as `-m locomo` does not list it)."""
    ray = pytest.importorskip(
        "ray", reason="Ray is not installed: pip install 'memtrace[ray]' to run the Ray tests"
    )
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def _cli(*args: str | Path) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def test_ray_gives_the_store_of_one_worker(ray_cluster: None, tmp_path: Path) -> None:
    for name, flags in (("local", ["--workers", "1"]), ("ray", ["--executor", "ray", "--workers", "2"])):
        _cli("run", tmp_path / name, "--system", "all", "--dataset", "sample", *flags)
        _cli("attribute", tmp_path / name, *flags)
        _cli("verify", tmp_path / name, *flags)
    assert store_rows(tmp_path / "ray") == store_rows(tmp_path / "local")


def test_ray_benchmarks_and_optimises_as_one_worker(ray_cluster: None, tmp_path: Path) -> None:
    ray = ("--executor", "ray", "--workers", 2)
    local = tmp_path / "local"
    labels = faults(local, "--workers", 1)
    assert faults(tmp_path / "ray", *ray) == labels
    layout = local / "out" / "memtracebench"
    assert scored(layout, tmp_path / "ray-scored", *ray) == scored(layout, local / "scored", "--workers", 1)
    assert optimized(tmp_path / "ray-opt", *ray) == optimized(local / "opt", "--workers", 1)


def test_ray_workers_share_one_concurrency_limit(ray_cluster: None, tmp_path: Path) -> None:
    """The limiter is a named actor: two Ray workers together keep to --concurrency 1."""
    import sys

    from scripted_replies import scripted_reply

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
    from llmhelpers import Reply, ScriptedOpenAIServer

    def slow_reply(body: dict) -> Reply:
        return Reply(scripted_reply(body), delay=0.01)

    model = ["--system", "rag,mem0", "--dataset", "sample", "--questions", "2", "--llm", "openai"]
    model += ["--model", "scripted", "--concurrency", "1"]
    for name, flags in (("local", ["--workers", "1"]), ("ray", ["--executor", "ray", "--workers", "2"])):
        with ScriptedOpenAIServer(default=slow_reply) as server:
            _cli("run", tmp_path / name, *model, "--base-url", server.url, *flags)
        assert server.max_in_flight == 1
    assert store_rows(tmp_path / "ray") == store_rows(tmp_path / "local")
