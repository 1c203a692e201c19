"""`memtrace bench labels`: a method and the verifier scored against hand labels, readers' kappa, and
labels stored as annotations; a malformed labels file is one line naming the file and the field."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.model import load_attributions, settings_key
from memtrace.bench.labels import (
    cohen_kappa,
    read_labels,
    reader_agreement,
    save_labels,
    score_labels,
    wilson_interval,
)
from memtrace.errors import FormatError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "attribution"))
from attrhelpers import pets_run


def _labels(path: Path, rows: list[tuple[str, str, str | None]], run: str = "pets") -> Path:
    """A memtrace-labels/1 file: (case id, error type, op id) per label."""
    records = [
        {
            "run": run,
            "final_error_type": kind,
            "final_op_id": op,
            "memtrace": {"case_id": case, "label_id": f"L{n}", "system": "mem0", "note": f"why {n}"},
        }
        for n, (case, kind, op) in enumerate(rows, 1)
    ]
    path.write_text(json.dumps({"format": "memtrace-labels/1", "labels": records}))
    return path


def test_agreement_and_verdicts_are_counted_against_the_labels(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path / "ws", ["mem-2"])  # flow: a RetrievalError at the search
    with mt.open(tmp_path / "ws") as ws:
        case = ws.cases(run_id)[0]
        search = ws.graph(run_id).ops_by_category("retrieval")[0].id
        answer = ws.graph(run_id).ops_by_category("response")[0].id
    right = read_labels(_labels(tmp_path / "right.json", [(case.id, "RetrievalError", search)]))
    wrong = read_labels(_labels(tmp_path / "wrong.json", [(case.id, "ResponseError", answer)]))
    with mt.open(tmp_path / "ws") as ws:
        agreed = score_labels(ws, right, verify=True)
        disagreed = score_labels(ws, wrong)
    one_of_one, none_of_one = wilson_interval(1, 1), wilson_interval(0, 1)
    assert agreed["overall"] == {
        "labels": 1,
        "type": 1.0,
        "type_and_operation": 1.0,
        "type_interval": one_of_one,
        "type_and_operation_interval": one_of_one,
    }
    assert disagreed["overall"] == {
        "labels": 1,
        "type": 0.0,
        "type_and_operation": 0.0,
        "type_interval": none_of_one,
        "type_and_operation_interval": none_of_one,
    }
    verdicts = agreed["verification"]["claims_labels_call_right"]
    assert verdicts["claims"] == 1 and verdicts["not_verified"] == 0  # --verify verified it
    assert disagreed["verification"]["claims_labels_call_wrong"]["claims"] == 1
    # Each row carries the claim's confidence, and once verified its confidence after verification.
    (verified_row,) = agreed["cases"]
    assert verified_row["verdict"] is not None and 0.0 < verified_row["confidence_after_verify"] < 1.0
    assert verified_row["confidence_after_verify"] != verified_row["confidence"]
    # The verdict of a claim computed in the same call is stored under the claim's own settings.
    with mt.open(tmp_path / "ws") as ws:
        (stored,) = load_attributions(ws.store, run_id, "flow")
    assert stored.verified is not None and stored.settings_key == settings_key(FlowMethod().settings())


def test_an_agreement_rate_comes_with_its_wilson_interval() -> None:
    """8 of 10 pins the rate only to 49-94%; the interval narrows with the labels and stays in [0, 1]."""
    assert wilson_interval(8, 10) == (0.4902, 0.9433)
    low, high = wilson_interval(80, 100)
    assert 0.4902 < low < 0.8 < high < 0.9433
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    assert wilson_interval(0, 0) is None


def test_two_readers_agreement_is_cohens_kappa() -> None:
    assert cohen_kappa([("a", "a"), ("b", "b"), ("a", "b"), ("b", "b")]) == 0.5
    assert cohen_kappa([]) is None
    first = read_labels_from([("q1", "RetrievalError", "s#1"), ("q2", "ResponseError", "a#2")])
    second = read_labels_from([("q1", "RetrievalError", "s#1"), ("q2", "UpdateError", "u#1")])
    agreement = reader_agreement(first, second)
    assert agreement["cases"] == 2 and agreement["type"]["agreement"] == 0.5


def read_labels_from(rows: list[tuple[str, str, str | None]]) -> list:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return read_labels(_labels(Path(folder) / "labels.json", rows))


def test_labels_are_stored_as_annotations_once(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path / "ws", ["mem-2"])
    with mt.open(tmp_path / "ws") as ws:
        case = ws.cases(run_id)[0]
        search = ws.graph(run_id).ops_by_category("retrieval")[0].id
        labels = read_labels(_labels(tmp_path / "l.json", [(case.id, "RetrievalError", search)]))
        assert save_labels(ws, labels) == 1 and save_labels(ws, labels) == 0
        (stored,) = ws.store.annotations(run_id, case.id)
        assert (stored.error_type, stored.op_id, stored.note) == ("RetrievalError", search, "why 1")


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"labels": []}, "format"),
        ({"format": "memtrace-labels/1", "labels": "x"}, "labels"),
        (
            {
                "format": "memtrace-labels/1",
                "labels": [{"run": "r", "final_error_type": "Oops", "memtrace": {}}],
            },
            "Oops",
        ),
        (
            {
                "format": "memtrace-labels/1",
                "labels": [{"final_error_type": "ResponseError", "memtrace": {}}],
            },
            "run",
        ),
    ],
)
def test_a_malformed_labels_file_is_one_line_naming_it(tmp_path: Path, payload: dict, field: str) -> None:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(payload))
    with pytest.raises(FormatError) as caught:
        read_labels(path)
    message = str(caught.value)
    assert str(path) in message and field in message and "\n" not in message
