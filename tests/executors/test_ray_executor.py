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
