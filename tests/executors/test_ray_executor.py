"""`--executor ray`: the same tasks on Ray with 2 CPUs give the store of one local worker: run,
attribute and verify (its replay runs, ids and seq included)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
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
